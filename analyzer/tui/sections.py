"""The detail pane's sections as Rich text: what the engine found about one incident, laid out."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text

from analyzer.core.incidents import Incident
from analyzer.core.records import ErrorInfo, Frame, Link
from analyzer.core.render import RenderedFix, fill, render_fix

__all__ = ["summary", "diagnosis", "pattern_source", "raise_site", "traceback", "chain", "fixes", "headline"]

_MESSAGE_LINES = 20
_SEPARATORS = {Link.CAUSE: "The above exception was the direct cause of the following exception:",
               Link.CONTEXT: "During handling of the above exception, another exception occurred:"}
_PYTHON = Syntax("", "python", theme="monokai", background_color="default")


def headline(info: ErrorInfo) -> str:
    first = info.message.splitlines()[0] if info.message else ""
    return f"{info.exception_type}: {first}" if first else info.exception_type or "traceback cut off"


def fixes(incident: Incident) -> list[RenderedFix]:
    pattern = incident.diagnosis.pattern
    return [render_fix(fix, incident.diagnosis.params) for fix in pattern.fixes] if pattern else []


def summary(incident: Incident) -> Text:
    info, event = incident.info, incident.event
    role = "ROOT CAUSE" if incident.is_run_root else incident.role.upper()
    text = Text.assemble((f"{role} ", "bold red" if incident.role == "root" else "bold yellow"),
                         (f"{incident.id} ", "bold"), (info.exception_type or "traceback cut off", "bold"),
                         f"  ×{incident.count}")
    if incident.ranks:
        text.append(f" on {', '.join(incident.ranks)}")
    if incident.first_seen:
        text.append(f"  first {incident.first_seen:%Y-%m-%d %H:%M:%S}", "dim")
    if incident.last_seen and incident.last_seen != incident.first_seen:
        text.append(f", last {incident.last_seen:%H:%M:%S}", "dim")
    if incident.caused_by:
        text.append(f"\nfollows from {incident.caused_by}", "yellow")
    if event.context:
        text.append(f"\n{event.context}", "dim")
    lines = (info.message or "(no message)").splitlines()
    text.append("\n" + "\n".join(lines[:_MESSAGE_LINES]))
    if len(lines) > _MESSAGE_LINES:
        text.append(f"\n… {len(lines) - _MESSAGE_LINES} more message lines", "dim")
    if event.truncated:
        text.append("\ntraceback cut off in the log (rotation, end of file or interleaving)", "yellow")
    return text


def diagnosis(incident: Incident) -> Text:
    found = incident.diagnosis
    pattern = found.pattern
    if pattern is None:
        return Text.assemble(("Unknown error", "bold magenta"),
                             f": no pattern in the loaded packs matches it (fingerprint {incident.fingerprint}). "
                             "`analyzer patterns suggest` drafts one from the log.")
    text = Text.assemble(("Known error ", "bold green"), (pattern.id, "bold"),
                         (f"  {found.match_kind.value}, {found.confidence:.0%} · {pattern.severity}", "dim"))
    if pattern.meaning:
        text.append("\nWhat it means\n", "bold")
        text.append(fill(pattern.meaning, found.params) or "")
    if found.params:
        text.append("\nYour values\n", "bold")
        text.append(", ".join(f"{name}={value!r}" for name, value in found.params.items()))
    for number, fix in enumerate(fixes(incident), 1):
        text.append(f"\nFix {number}: ", "bold")
        text.append(fix.title)
        text.append(f"  (press {number} to copy)" if number < 10 else "", "dim")
        if fix.text:
            text.append(f"\n  {fix.text}")
        if fix.before:
            text.append("\n  before: ", "red")
            text.append(fix.before)
        if fix.after:
            text.append("\n  after:  ", "green")
            text.append(fix.after)
    return text


def pattern_source(incident: Incident) -> Text:
    text = Text("Pattern source\n", "bold")
    pattern = incident.diagnosis.pattern
    if pattern is None:
        return text.append("no pattern: unknown error", "dim")
    src = pattern.source
    if not src.path:
        return text.append("the pattern names no source location", "dim")
    text.append(f"{src.path}:{src.line}" if src.line else src.path, "cyan")
    if src.function:
        text.append(f"\nin {src.function}")
    pinned = " ".join(x for x in (src.project, src.version, src.commit and src.commit[:12]) if x)
    if pinned:
        text.append(f"\n@ {pinned}", "dim")
    return text


def raise_site(incident: Incident) -> Text:
    text = Text("Raised in the log at\n", "bold")
    site = incident.info.raise_site
    if site is None:
        return text.append("no frame printed", "dim")
    text.append(f"{site.relpath}:{site.lineno}", "cyan")
    text.append(f"\nin {site.function or '?'}")
    if site.code:
        text.append("\n").append_text(_code(site.code))
    blame = incident.blame
    if blame is not None and blame != site:
        text.append("\nblame frame ", "bold")
        text.append(f"{blame.relpath}:{blame.lineno}", "cyan")
        text.append(f" in {blame.function or '?'}")
    return text


def traceback(incident: Incident) -> Text:
    """Every link of the chain as printed, with the raise site and the blame frame marked."""
    text = Text()
    for info in incident.event.chain:
        diagnosed = info is incident.info
        if info.link in _SEPARATORS:
            text.append(f"\n{_SEPARATORS[info.link]}\n\n", "dim italic")
        if info.has_traceback:
            text.append("Traceback (most recent call last):\n", "dim")
        for frame in info.frames:
            text.append_text(_frame(frame, diagnosed and frame is info.raise_site,
                                    diagnosed and frame is incident.blame))
        text.append(info.exception_type or "traceback cut off", "bold red" if diagnosed else "bold")
        if info.message:
            text.append(": " + info.message.splitlines()[0])
        text.append("\n")
        for number, sub in enumerate(info.sub_exceptions, 1):
            text.append(f"  +-- sub-exception {number}: ", "dim")
            text.append(" <- ".join(headline(link) for link in reversed(sub)) + "\n")
    text.rstrip()
    return text if text.plain else Text("(no traceback)", "dim")


def _frame(frame: Frame, is_raise_site: bool, is_blame: bool) -> Text:
    marker = "▶ " if is_blame else ("● " if is_raise_site else "  ")
    line = Text(marker, "bold yellow" if is_blame else "bold red")
    line.append("File ", "dim")
    line.append(frame.relpath, "cyan bold" if is_blame or is_raise_site else "cyan")
    line.append(f":{frame.lineno}" if frame.lineno is not None else "", "cyan")
    line.append(f" in {frame.function}" if frame.function else "")
    if is_blame:
        line.append("  ← blame", "bold yellow")
    elif is_raise_site:
        line.append("  ← raised here", "bold red")
    line.append("\n")
    if frame.code:
        line.append("      ").append_text(_code(frame.code)).append("\n")
    return line


def _code(code: str) -> Text:
    text = _PYTHON.highlight(code)
    text.rstrip()
    return text


def chain(incident: Incident) -> Text:
    links = incident.event.chain
    text = Text("Chain", "bold")
    text.append(f"  {len(links)} exception(s), root cause first\n" if len(links) > 1 else "  a single exception\n", "dim")
    for number, info in enumerate(links, 1):
        how = {Link.FIRST: "", Link.CAUSE: "↳ caused ", Link.CONTEXT: "↳ while handling it, "}[info.link]
        text.append(f"{number}. {how}", "dim")
        text.append(headline(info), "bold" if info is incident.info else "")
        if info is incident.info:
            text.append("  ← diagnosed", "green" if incident.diagnosis.known else "magenta")
        text.append("\n")
    text.rstrip()
    return text
