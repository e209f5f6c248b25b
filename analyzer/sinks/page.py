"""One pattern's page, as `analyzer explain` prints it: the seed pages, generated from the pack."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.core.render import fill, render_fixes
from analyzer.core.runconfig import RunConfig
from analyzer.core.schema import Pattern
from analyzer.sinks.serialize import fix_dict, jsonable, pattern_source
from analyzer.sinks.text import render_fixes as print_fixes

__all__ = ["render_page", "page_dict"]


def render_page(pattern: Pattern, matcher: Matcher, console: Console, diagnosis: Diagnosis | None = None,
                run: RunConfig | None = None) -> None:
    """`run`, the configuration of the run the error came from, fills the fixes with its values."""
    params = diagnosis.params if diagnosis else {}
    src = pattern.source
    console.print(f"[bold]{escape(pattern.id)}[/]  [dim]{escape(src.project or '')} · {pattern.severity} · "
                  f"{escape(pattern.exception)} · {pattern.role}[/]")
    if diagnosis is not None:
        console.print(f"[dim]matched {diagnosis.match_kind.value} ({diagnosis.confidence:.0%})[/]")
    _section(console, "Error message", f"{pattern.exception}: {pattern.template}")
    if params:
        _section(console, "Your values", ", ".join(f"{k}={v!r}" for k, v in params.items()))
    if pattern.meaning:
        _section(console, "What it means", fill(pattern.meaning, params))
    if src.path or src.function:
        where = f"{src.path}:{src.line}" if src.path and src.line else (src.path or "")
        pinned = " ".join(x for x in (src.version and f"version {src.version}", src.commit and f"commit {src.commit}") if x)
        text = where + (f" in {src.function}" if src.function else "") + (f" ({pinned})" if pinned else "")
        _section(console, "Source", text)
    if pattern.trigger or pattern.situations:
        _section(console, "When it happens", "\n".join(
            x for x in (pattern.trigger and f"Trigger: {pattern.trigger}",
                        pattern.situations and f"Common situations: {pattern.situations}") if x))
    if pattern.fixes:
        console.print("[bold]Fixes[/]")
        print_fixes(pattern.fixes, params, console, label="{number}.", run=run)
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


def page_dict(pattern: Pattern, diagnosis: Diagnosis | None = None, run: RunConfig | None = None) -> dict[str, Any]:
    params = diagnosis.params if diagnosis else {}
    return {
        "id": pattern.id, "exception": pattern.exception, "template": pattern.template,
        "source": pattern_source(pattern), "meaning": fill(pattern.meaning, params) or None,
        "trigger": pattern.trigger or None, "situations": pattern.situations or None,
        "fixes": [fix_dict(fix) for fix in render_fixes(pattern.fixes, params, run)],
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
