"""One pattern's page, as `analyzer explain` prints it: the seed pages, generated from the pack."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

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
                       diagnosis.confidence if diagnosis else None, run=run, releases=releases)
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
    if pattern.trigger or pattern.situations:
        _section(console, "When it happens", "\n".join(
            x for x in (pattern.trigger and f"Trigger: {pattern.trigger}",
                        pattern.situations and f"Common situations: {pattern.situations}") if x))
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
    if pattern.origin:
        console.print(f"[dim]defined at {escape(pattern.origin)}[/]")


def page_dict(pattern: Pattern, diagnosis: Diagnosis | None = None, run: RunConfig | None = None,
              releases: str = "") -> dict[str, Any]:
    params = diagnosis.params if diagnosis else {}
    view = explanation(pattern, params, run=run, releases=releases)
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
    }


def _section(console: Console, title: str, body: str) -> None:
    console.print(f"[bold]{title}[/]")
    for line in body.splitlines():
        console.print(f"  {escape(line)}", soft_wrap=True)
    console.print()
