"""One pattern's page, as `analyzer explain` prints it: the seed pages, generated from the pack."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.core.derived import DerivedPage
from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.core.runconfig import RunConfig
from analyzer.core.schema import Pattern
from analyzer.core.view import explanation
from analyzer.sinks.serialize import fix_dict, jsonable, pattern_source
from analyzer.sinks.text import print_fixes

__all__ = ["render_page", "page_dict"]


def render_page(pattern: Pattern, matcher: Matcher, console: Console, diagnosis: Diagnosis | None = None,
                run: RunConfig | None = None, releases: str = "") -> None:
    """`run`, the configuration of the run the error came from, fills the fixes with its values;
    `releases` says which releases raise the error (core/versions.py)."""
    params = diagnosis.params if diagnosis else {}
    view = explanation(pattern, params, diagnosis.match_kind.value if diagnosis else None,
                       diagnosis.confidence if diagnosis else None, run=run, releases=releases,
                       derived=matcher.derived(pattern.id))
    derived = view.derived
    src = view.source
    console.print(f"[bold]{escape(view.pattern_id)}[/]  [dim]{escape(src.project or '')} · {view.severity} · "
                  f"{escape(view.exception)} · {view.role}[/]")
    if view.match_kind is not None:
        console.print(f"[dim]matched {view.match_kind} ({view.confidence:.0%})[/]")
    _section(console, "Error message", f"{pattern.exception}: {pattern.template}")
    if view.values or view.hint:
        _section(console, "Your values", ", ".join(f"{value.name}={value.shown}" for value in view.values)
                 + (f" ({view.hint})" if view.hint else ""))
    if view.meaning:
        _section(console, "What it means", view.meaning)
    if src.location or src.function:
        pinned = " ".join(x for x in (src.version and f"version {src.version}", src.commit and f"commit {src.commit}") if x)
        text = (src.location or "") + (f" in {src.function}" if src.function else "") + (f" ({pinned})" if pinned else "")
        _section(console, "Source", text)
    if view.releases:
        _section(console, "Releases", view.releases)
    if derived and derived.snippet:
        _derived_source(console, derived)
    # an extracted signature's trigger is raw code; its derived condition says it in words
    trigger = pattern.trigger if pattern.curated or not (derived and derived.condition) else None
    if trigger or pattern.situations or (derived and derived.condition):
        _section(console, "When it happens", "\n".join(
            x for x in (trigger and f"Trigger: {trigger}",
                        derived and derived.condition and f"{derived.fires_when} (derived from the source)",
                        pattern.situations and f"Common situations: {pattern.situations}") if x))
    if derived:
        _derived_launch(console, derived)
    if view.fixes:
        console.print("[bold]Fixes[/]")
        print_fixes(view.fixes, console, label="{number}.")
        console.print()
    if pattern.examples:
        _section(console, "Examples", "\n".join(f"{pattern.exception}: {e}" for e in pattern.examples))
    if pattern.related:
        lines = []
        for related in pattern.related:
            other = matcher.pattern(related)
            lines.append(f"{related}: {other.template[:90]}" if other else f"{related} (not in the loaded packs)")
        _section(console, "Related errors", "\n".join(lines))
    if derived and derived.related:
        _section(console, "Related errors (derived: nearby raises)", "\n".join(
            f"{r.id} (line {r.line}, {r.why}): {r.message}" for r in derived.related))
    if pattern.origin:
        console.print(f"[dim]defined at {escape(pattern.origin)}[/]")


def page_dict(pattern: Pattern, diagnosis: Diagnosis | None = None, run: RunConfig | None = None,
              releases: str = "", derived: DerivedPage | None = None) -> dict[str, Any]:
    """`derived`: the page derived from the source (`Matcher.derived`), under the key `derived`."""
    params = diagnosis.params if diagnosis else {}
    view = explanation(pattern, params, run=run, releases=releases, derived=derived)
    return {
        "id": pattern.id, "exception": pattern.exception, "template": pattern.template,
        "source": pattern_source(pattern), "releases": view.releases or None, "meaning": view.meaning,
        "trigger": pattern.trigger or None, "situations": pattern.situations or None,
        "fixes": [fix_dict(fix) for fix in view.fixes],
        "related": list(pattern.related), "role": pattern.role, "severity": pattern.severity,
        "tags": list(pattern.tags), "examples": list(pattern.examples),
        "match_kind": diagnosis.match_kind.value if diagnosis else None,
        "confidence": diagnosis.confidence if diagnosis else None,
        "params": jsonable(params) if diagnosis else None,
        **({"derived": derived.as_dict()} if derived else {}),
    }


def _derived_source(console: Console, derived: DerivedPage) -> None:
    snippet = derived.snippet
    assert snippet is not None
    width = len(str(snippet.start + len(snippet.lines)))
    console.print("[bold]Code around the raise[/] [dim](derived from the source)[/]")
    for number, line in enumerate(snippet.lines, snippet.start):
        mark = ">" if number == snippet.raise_line else " "
        style = "bold" if number == snippet.raise_line else "dim"
        console.print(f"  [{style}]{mark} {number:>{width}}  {escape(line)}[/]", soft_wrap=True, highlight=False)
    if derived.link:
        console.print(f"  {escape(derived.link)}", soft_wrap=True)
    console.print()


def _derived_launch(console: Console, derived: DerivedPage) -> None:
    if derived.flags:
        lines = []
        for flag in derived.flags:
            extra = "".join(x for x in (flag.choices and f" [choices: {', '.join(map(str, flag.choices))}]",
                                        flag.default is not None and f" (default {flag.default})") if x)
            lines.append(f"{flag.flag}: {flag.help or '(no help text)'}{extra}")
        _section(console, "Launch flags in the condition (derived)", "\n".join(lines))
    if derived.allowed_values:
        _section(console, "Allowed values (derived)", ", ".join(map(repr, derived.allowed_values)))
    for change in derived.before_after:
        _section(console, "Example fix (derived)", f"# before\n{change.before}\n# after\n{change.after or '(leave it out)'}")
    if derived.env_vars:
        _section(console, "Environment variables involved (derived)", ", ".join(derived.env_vars))
    if derived.hint:
        _section(console, "Hint (derived from a comment or docstring)", derived.hint)


def _section(console: Console, title: str, body: str) -> None:
    console.print(f"[bold]{title}[/]")
    for line in body.splitlines():
        console.print(f"  {escape(line)}", soft_wrap=True)
    console.print()
