"""The explain page's part derived from the source (`patterns derive`): code, condition, flags."""

from __future__ import annotations

from rich.text import Text

from analyzer.core.derived import DerivedPage

__all__ = ["derived_text"]


def derived_text(derived: DerivedPage) -> Text:
    """Blocks that start with a blank line, so the page appends them after any section."""
    text = Text()
    snippet = derived.snippet
    if snippet:
        text.append("\n\nCode around the raise", "bold")
        text.append("  derived from the source\n", "dim")
        width = len(str(snippet.start + len(snippet.lines)))
        for number, line in enumerate(snippet.lines, snippet.start):
            here = number == snippet.raise_line
            text.append(f"  {'>' if here else ' '} {number:>{width}}  {line}\n", "bold" if here else "dim")
        if derived.link:
            text.append(f"  {derived.link}", "cyan")
        text.rstrip()
    if derived.condition:
        text.append("\n\nWhen it fires", "bold")
        text.append("  derived\n", "dim")
        text.append(f"  {derived.fires_when}")
    if derived.flags:
        text.append("\n\nLaunch flags in the condition", "bold")
        text.append("  derived", "dim")
        for flag in derived.flags:
            text.append(f"\n  {flag.flag}", "bold")
            text.append(f"  {flag.help}" if flag.help else "")
            if flag.choices:
                text.append(f"  choices: {', '.join(map(str, flag.choices))}", "dim")
    if derived.allowed_values:
        text.append("\n\nAllowed values\n", "bold")
        text.append("  " + ", ".join(map(repr, derived.allowed_values)))
    for change in derived.before_after:
        text.append("\n\nExample fix", "bold")
        text.append("  derived\n", "dim")
        text.append(f"  before: {change.before}\n  after:  {change.after or '(leave it out)'}")
    if derived.env_vars:
        text.append("\n\nEnvironment variables\n", "bold")
        text.append("  " + ", ".join(derived.env_vars))
    if derived.hint:
        text.append("\n\nHint from the source\n", "bold")
        text.append(f"  {derived.hint}")
    if derived.related:
        text.append("\n\nNearby raises", "bold")
        text.append("  derived", "dim")
        for related in derived.related:
            text.append(f"\n  line {related.line}: {related.message}")
            text.append(f"  ({related.why})", "dim")
    return text
