"""Human output: one block per incident, the run's root cause first, consequences folded under it."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from analyzer.core.incidents import Incident
from analyzer.core.render import fill
from analyzer.core.render import render_fixes as rendered_fixes
from analyzer.core.runconfig import RunConfig

__all__ = ["ordered_for_people", "render_fixes", "render_incident", "render_report"]

_ROLE_STYLE = {"root": "bold red", "consequence": "yellow"}


def ordered_for_people(incidents: list[Incident]) -> list[Incident]:
    """The run's root cause, then other roots, then consequences, each in log order."""
    return sorted(incidents, key=lambda i: (not i.is_run_root, i.role != "root"))


def render_report(incidents: list[Incident], console: Console, show_all: bool = False,
                  summary: str | None = None, run: RunConfig | None = None) -> None:
    """`run` is the run's configuration from its log: fixes then use its values and its server's flags."""
    if not incidents:
        console.print("[green]No errors found.[/]" + (f" ({escape(summary)})" if summary else ""))
        return
    if not any(incident.is_run_root for incident in incidents):
        console.print("[yellow]No root cause in these logs: every incident is an echo of a failure "
                      "elsewhere (another node's or process's log?).[/]\n")
    followers: dict[str, list[Incident]] = {}
    for incident in incidents:
        if incident.caused_by:
            followers.setdefault(incident.caused_by, []).append(incident)
    for incident in ordered_for_people(incidents):
        if incident.caused_by and not show_all:
            continue
        render_incident(incident, console, run)
        folded = followers.get(incident.id, [])
        if folded and not show_all:
            console.print(f"  [dim]followed by {len(folded)} consequence incident(s):[/]")
            for follower in folded:
                console.print(f"    [yellow]{follower.id}[/] {escape(_headline(follower))} "
                              f"[dim]×{follower.count}{_ranks(follower)}[/]")
        console.print()
    _render_unknown_fingerprints(incidents, console)
    if summary:
        console.print(f"[dim]{escape(summary)}[/]")


def _render_unknown_fingerprints(incidents: list[Incident], console: Console) -> None:
    """Errors no pattern knows, grouped by fingerprint: the same bug in several runs or files."""
    groups: dict[str, list[Incident]] = {}
    for incident in incidents:
        if not incident.known:
            groups.setdefault(incident.fingerprint, []).append(incident)
    if not groups:
        return
    console.print("[bold]Unknown errors by fingerprint[/] [dim](analyzer patterns suggest LOG... -o DIR "
                  "writes pattern stubs for them)[/]")
    for fingerprint_id, same in groups.items():
        ids = ", ".join(incident.id for incident in same)
        console.print(f"  {escape(fingerprint_id)}  ×{sum(i.count for i in same)} in {ids}  "
                      f"[dim]{escape(_headline(same[0])[:100])}[/]")
    console.print()


def render_incident(incident: Incident, console: Console, run: RunConfig | None = None) -> None:
    info, diagnosis, event = incident.info, incident.diagnosis, incident.event
    role = "ROOT CAUSE" if incident.is_run_root else incident.role.upper()
    when = f" first {incident.first_seen:%Y-%m-%d %H:%M:%S}" if incident.first_seen else ""
    console.print(f"[{_ROLE_STYLE.get(incident.role, 'bold')}]● {role}[/] [bold]{incident.id}[/] "
                  f"[bold]{escape(info.exception_type or 'traceback cut off')}[/] "
                  f"×{incident.count}{_ranks(incident)}[dim]{when}[/]")
    if event.context:
        console.print(f"  [dim]{escape(event.context)}[/]")
    for line in (info.message or "(no message)").splitlines()[:12]:
        console.print(f"  {escape(line)}", soft_wrap=True)
    for link in event.chain:
        if link is not info:
            arrow = "caused by" if event.chain.index(link) < event.chain.index(info) else "led to"
            console.print(f"  [dim]{arrow}[/] {escape(_link_line(link))}", soft_wrap=True)
    site = info.raise_site
    if site:
        console.print(f"  [dim]raised at[/] [cyan]{escape(site.relpath)}:{site.lineno}[/] "
                      f"[dim]in[/] {escape(site.function or '?')}")
        if site.code:
            console.print(f"      [dim]{escape(site.code)}[/]")
    if incident.blame and incident.blame is not site:
        blame = incident.blame
        console.print(f"  [dim]blame frame[/] [cyan]{escape(blame.relpath)}:{blame.lineno}[/] "
                      f"[dim]in[/] {escape(blame.function or '?')}")
        if blame.code:
            console.print(f"      [dim]{escape(blame.code)}[/]")
    if event.truncated:
        console.print("  [yellow]traceback cut off in the log (rotation, EOF or interleaving)[/]")
    pattern = diagnosis.pattern
    if pattern is None:
        console.print(f"  [dim]unknown error · fingerprint {incident.fingerprint}[/]")
    else:
        src = pattern.source
        where = (f"{src.path}:{src.line}" if src.line else src.path) if src.path else "(no source location)"
        pinned = (f" @ {src.project or ''} {src.version or src.commit or ''}".rstrip()
                  if src.project or src.version or src.commit else "")
        console.print(f"  [green]known error[/] [bold]{escape(pattern.id)}[/] "
                      f"[dim]({diagnosis.match_kind.value}, {diagnosis.confidence:.0%})[/]")
        console.print(f"  [dim]pattern source[/] {escape(where)}"
                      + (f" in {escape(src.function)}" if src.function else "") + f"[dim]{escape(pinned)}[/]")
        if pattern.meaning:
            console.print(f"  [bold]What it means:[/] {escape(fill(pattern.meaning, diagnosis.params))}", soft_wrap=True)
        if diagnosis.params:
            values = ", ".join(f"{k}={v!r}" for k, v in diagnosis.params.items())
            console.print(f"  [bold]Your values:[/] {escape(values)}", soft_wrap=True)
        render_fixes(pattern.fixes, diagnosis.params, console, label="[bold]Fix {number}:[/]", run=run)
    span = event.span
    more = f" (+{incident.count - 1} more)" if incident.count > 1 else ""
    console.print(f"  [dim]log {escape(span.file)}:{span.line_start}-{span.line_end}{more}[/]")


def render_fixes(fixes, params, console: Console, label: str, run: RunConfig | None = None) -> None:
    """Each fix for the run's server with the user's values filled in; `label` is a markup template
    with {number}."""
    for number, rendered in enumerate(rendered_fixes(fixes, params, run), 1):
        console.print(f"  {label.format(number=number)} {escape(rendered.title)}")
        if rendered.text:
            console.print(f"     {escape(rendered.text)}", soft_wrap=True)
        if rendered.before:
            console.print(f"     [red]before:[/] {escape(rendered.before)}")
        if rendered.after:
            console.print(f"     [green]after:[/]  {escape(rendered.after)}")
        if rendered.command:
            console.print(f"     [bold]your command, fixed:[/] {escape(rendered.command)}", soft_wrap=True)


def _headline(incident: Incident) -> str:
    return _link_line(incident.info)


def _link_line(info) -> str:
    # The first line that says something: torchrun's summary opens with a row of '='.
    message = next((line.strip() for line in (info.message or "").splitlines() if any(c.isalnum() for c in line)), "")
    return f"{info.exception_type}: {message[:120]}" if message else info.exception_type or "traceback cut off"


def _ranks(incident: Incident) -> str:
    if not incident.ranks:
        return ""
    shown = ", ".join(incident.ranks[:8]) + (", …" if len(incident.ranks) > 8 else "")
    return f" on {escape(shown)}"  # a JSON log names its ranks freely: `[/x]` is text, not markup
