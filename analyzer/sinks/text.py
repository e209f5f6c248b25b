"""Human output: one block per incident, the run's root cause first, consequences folded under it."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from analyzer.core.derived import DerivedPage
from analyzer.core.incidents import Incident
from analyzer.core.render import RenderedFix
from analyzer.core.runconfig import RunConfig
from analyzer.core.view import SUBS_SHOWN, echo_note, headline, incident_view

__all__ = ["render_report", "render_incident", "print_fixes", "ordered_for_people"]

_ROLE_STYLE = {"root": "bold red", "consequence": "yellow"}


def ordered_for_people(incidents: list[Incident]) -> list[Incident]:
    """The run's root cause, then other roots, then consequences, each in log order."""
    return sorted(incidents, key=lambda i: (not i.is_run_root, i.role != "root"))


def render_report(incidents: list[Incident], console: Console, show_all: bool = False,
                  summary: str | None = None, run_of: Callable[[str], RunConfig | None] = lambda file: None,
                  derived_of: Callable[[str], DerivedPage | None] = lambda pattern_id: None) -> None:
    """`run_of(file)` is the configuration of the run a log file belongs to, as its lines told it:
    fixes then use its values and its server's flags. `derived_of(pattern id)`: the page derived
    from the source (`Matcher.derived`), for a one-line condition under an extracted signature."""
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
        render_incident(incident, console, run_of(incident.event.span.file), derived_of)
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


def render_incident(incident: Incident, console: Console, run: RunConfig | None = None,
                    derived_of: Callable[[str], DerivedPage | None] = lambda pattern_id: None) -> None:
    """`run`: the configuration of the run the incident came from, for fixes with its values."""
    pattern = incident.diagnosis.pattern
    view = incident_view(incident, run, derived_of(pattern.id) if pattern is not None else None)
    when = f" first {view.first_seen:%Y-%m-%d %H:%M:%S}" if view.first_seen else ""
    console.print(f"[{_ROLE_STYLE.get(view.role, 'bold')}]● {view.role_label}[/] [bold]{view.id}[/] "
                  f"[bold]{escape(view.exception_type)}[/] ×{view.count}{_ranks(incident)}[dim]{when}[/]")
    if view.awaiting_root:
        console.print(f"  [yellow]{escape(echo_note(view))}[/]")
    if view.context:
        console.print(f"  [dim]{escape(view.context)}[/]")
    for line in view.message[:12] or ("(no message)",):
        console.print(f"  {escape(line)}", soft_wrap=True)
    for link in view.chain:
        if not link.diagnosed:
            console.print(f"  [dim]{link.relation}[/] {escape(_cut(link.headline))}", soft_wrap=True)
        for sub in link.subs[:SUBS_SHOWN]:
            console.print(f"  [dim]sub-exception {sub.number}[/] {escape(_cut(sub.headline))}", soft_wrap=True)
            if sub.raise_site is not None:
                console.print(f"      [dim]raised at[/] [cyan]{escape(sub.raise_site.place)}[/] "
                              f"[dim]in[/] {escape(sub.raise_site.function or '?')}")
            if sub.pattern_id is not None:
                console.print(f"      [green]known error[/] [bold]{escape(sub.pattern_id)}[/] "
                              f"[dim](analyzer explain {escape(sub.pattern_id)})[/]")
        if len(link.subs) > SUBS_SHOWN:
            console.print(f"  [dim]… and {len(link.subs) - SUBS_SHOWN} more sub-exception(s)[/]")
    for label, frame in (("raised at", view.raise_site), ("blame frame", view.blame)):
        if frame is not None:
            console.print(f"  [dim]{label}[/] [cyan]{escape(frame.place)}[/] "
                          f"[dim]in[/] {escape(frame.function or '?')}")
            if frame.code:
                console.print(f"      [dim]{escape(frame.code)}[/]")
    if view.truncated:
        console.print("  [yellow]traceback cut off in the log (rotation, EOF or interleaving)[/]")
    if view.inferred:
        console.print(f"  [yellow]the log printed no class: {escape(view.exception_type)} is what CPython's message names[/]")
    if incident.event.elided:
        console.print(f"  [dim]{incident.event.elided:,} line(s) of it left out: the middle of a very deep stack, "
                      "or the end of a very long message[/]")
    found = view.explanation
    if found is None:
        console.print(f"  [dim]unknown error · fingerprint {view.fingerprint}[/]")
    else:
        src = found.source
        console.print(f"  [green]known error[/] [bold]{escape(found.pattern_id)}[/] "
                      f"[dim]({found.match_kind}, {found.confidence:.0%})[/]")
        pinned = f" @ {src.pinned}" if src.pinned else ""
        console.print(f"  [dim]pattern source[/] {escape(src.location or '(no source location)')}"
                      + (f" in {escape(src.function)}" if src.function else "") + f"[dim]{escape(pinned)}[/]")
        if found.releases:
            console.print(f"  [bold]Releases:[/] {escape(found.releases)}", soft_wrap=True)
        if found.meaning:
            console.print(f"  [bold]What it means:[/] {escape(found.meaning)}", soft_wrap=True)
        if found.derived and found.derived.condition:
            console.print(f"  [bold]{escape(found.derived.fires_when)}[/] [dim](derived from the source)[/]",
                          soft_wrap=True)
        if found.values or found.hint:
            values = ", ".join(f"{value.name}={value.shown}" for value in found.values)
            hint = f"{'; ' if values else ''}[bold yellow]{escape(found.hint)}[/]" if found.hint else ""
            console.print(f"  [bold]Your values:[/] {escape(values)}{hint}", soft_wrap=True)
        print_fixes(found.fixes, console, label="[bold]Fix {number}:[/]")
    span = view.span
    more = f" (+{view.count - 1} more)" if view.count > 1 else ""
    console.print(f"  [dim]log {escape(span.file)}:{span.line_start}-{span.line_end}{more}[/]")


def print_fixes(fixes: tuple[RenderedFix, ...], console: Console, label: str) -> None:
    """Each rendered fix; `label` is a markup template with {number}."""
    for number, rendered in enumerate(fixes, 1):
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
    return _cut(headline(incident.info))


def _cut(text: str, width: int = 140) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ranks(incident: Incident) -> str:
    if not incident.ranks:
        return ""
    shown = ", ".join(incident.ranks[:8]) + (", …" if len(incident.ranks) > 8 else "")
    return f" on {escape(shown)}"  # a JSON log names its ranks freely: `[/x]` is text, not markup
