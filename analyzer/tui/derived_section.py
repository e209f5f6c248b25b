"""The explain page's part derived from the source (`patterns derive`): code, condition, flags."""

from __future__ import annotations

from rich.text import Text

from analyzer.core.derived import DerivedPage

__all__ = ["derived_text"]


def _heading(text: Text, title: str, mark: str = "derived") -> None:
    """A section's title, with how it was learnt beside it in dim; the section's lines follow."""
    text.append(f"\n\n{title}", "bold")
    text.append(f"  {mark}\n" if mark else "\n", "dim")


def derived_text(derived: DerivedPage) -> Text:
    """Blocks that start with a blank line, so the page appends them after any section."""
    text = Text()
    snippet = derived.snippet
    if snippet:
        _heading(text, "Code around the raise", "derived from the source")
        width = len(str(snippet.start + len(snippet.lines)))
        for number, line in enumerate(snippet.lines, snippet.start):
            here = number == snippet.raise_line
            text.append(f"  {'>' if here else ' '} {number:>{width}}  {line}\n", "bold" if here else "dim")
        if derived.link:
            text.append(f"  {derived.link}", "cyan")
        text.rstrip()
    if derived.condition:
        _heading(text, "When it fires")
        text.append(f"  {derived.fires_when}")
    if derived.flags:
        _heading(text, "Launch flags in the condition")
        for number, flag in enumerate(derived.flags):
            text.append(f"{chr(10) if number else ''}  {flag.flag}", "bold")
            text.append(f"  {flag.help}" if flag.help else "")
            if flag.choices:
                text.append(f"  choices: {', '.join(map(str, flag.choices))}", "dim")
    if derived.allowed_values:
        _heading(text, "Allowed values", "")
        text.append("  " + ", ".join(map(repr, derived.allowed_values)))
    for change in derived.before_after:
        _heading(text, "Example fix")
        text.append(f"  before: {change.before}\n  after:  {change.after or '(leave it out)'}")
    if derived.env_vars:
        _heading(text, "Environment variables", "")
        text.append("  " + ", ".join(derived.env_vars))
    if derived.hint:
        _heading(text, "Hint from the source", "")
        text.append(f"  {derived.hint}")
    if derived.related:
        _heading(text, "Nearby raises")
        for number, related in enumerate(derived.related):
            text.append(f"{chr(10) if number else ''}  line {related.line}: {related.message}")
            text.append(f"  ({related.why})", "dim")
    return text
