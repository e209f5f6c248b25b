"""The detail pane's sections as Rich text, laid out from one `IncidentView` (and the explain page
from an `Explanation`): the facts are decided in analyzer/core/view.py, only the styling is here."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text

from analyzer.core import grammar as g
from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.core.records import Frame, Link
from analyzer.core.runconfig import RunConfig
from analyzer.core.view import SUBS_SHOWN, Explanation, IncidentView, Mark, echo_note, explanation
from analyzer.tui.derived_section import derived_text

__all__ = ["summary", "diagnosis", "pattern_source", "raise_site", "traceback", "chain", "page", "fit_path"]

_MESSAGE_LINES = 20
_SEPARATORS = {Link.CAUSE: g.CAUSE_SEPARATOR, Link.CONTEXT: g.CONTEXT_SEPARATOR}
_PYTHON = Syntax("", "python", theme="monokai", background_color="default")
_MARKERS = {Mark.BLAME: ("▶ ", "bold yellow", "  ← blame"), Mark.RAISE: ("● ", "bold red", "  ← raised here"),
            Mark.NONE: ("  ", "", "")}


def summary(view: IncidentView) -> Text:
    text = Text.assemble((f"{view.role_label} ", "bold red" if view.role == "root" else "bold yellow"),
                         (f"{view.id} ", "bold"), (view.exception_type, "bold"), f"  ×{view.count}")
    if view.ranks:
        text.append(f" on {', '.join(view.ranks)}")
    if view.first_seen:
        text.append(f"  first {view.first_seen:%Y-%m-%d %H:%M:%S}", "dim")
    if view.last_seen and view.last_seen != view.first_seen:
        text.append(f", last {view.last_seen:%H:%M:%S}", "dim")
    if view.caused_by:
        text.append(f"\nfollows from {view.caused_by} (press r to go to it)", "yellow")
    elif view.awaiting_root:
        text.append(f"\n{echo_note(view)}", "yellow")
    if view.context:
        text.append(f"\n{view.context}", "dim")
    lines = view.message or ("(no message)",)
    text.append("\n" + "\n".join(lines[:_MESSAGE_LINES]))
    if len(lines) > _MESSAGE_LINES:
        text.append(f"\n… {len(lines) - _MESSAGE_LINES} more message lines", "dim")
    for link in view.chain:
        for sub in link.subs[:SUBS_SHOWN]:
            text.append(f"\nsub-exception {sub.number} ", "dim")
            text.append(sub.headline)
            if sub.raise_site is not None:
                text.append(f"  raised at {sub.raise_site.place} in {sub.raise_site.function or '?'}", "dim")
            if sub.pattern_id is not None:
                text.append(f"  known error {sub.pattern_id}", "green")
        if len(link.subs) > SUBS_SHOWN:
            text.append(f"\n… and {len(link.subs) - SUBS_SHOWN} more sub-exception(s)", "dim")
    if view.truncated:
        text.append("\ntraceback cut off in the log (rotation, end of file or interleaving)", "yellow")
    if view.inferred:
        text.append(f"\nthe log printed no class: {view.exception_type} is what CPython's message names", "yellow")
    return text


def diagnosis(view: IncidentView) -> Text:
    found = view.explanation
    if found is None:
        return Text.assemble(("Unknown error", "bold magenta"),
                             f" {view.label}: no pattern in the loaded packs matches it (fingerprint "
                             f"{view.fingerprint}). `analyzer patterns suggest` drafts one from the log.")
    text = Text.assemble(("Known error ", "bold green"), (found.pattern_id, "bold"),
                         (f"  {found.match_kind}, {found.confidence:.0%} · {found.severity}", "dim"))
    _explained(text, found)
    _fixes(text, found, copy_keys=True)
    return text


def _explained(text: Text, found: Explanation, gap: str = "\n") -> None:
    if found.meaning:
        text.append(f"{gap}What it means\n", "bold")
        text.append(found.meaning)
    if found.values or found.hint:
        text.append(f"{gap}Your values\n", "bold")
        text.append(", ".join(f"{value.name}={value.shown}" for value in found.values))
        if found.hint:
            text.append(("; " if found.values else "") + found.hint, "bold yellow")


def _fixes(text: Text, found: Explanation, copy_keys: bool) -> None:
    for number, fix in enumerate(found.fixes, 1):
        text.append(f"\nFix {number}: ", "bold")
        text.append(fix.title)
        what = " your command with it" if fix.command else ""
        text.append(f"  (press {number} to copy{what})" if copy_keys and number < 10 else "", "dim")
        if fix.text:
            text.append(f"\n  {fix.text}")
        if fix.before:
            text.append("\n  before: ", "red")
            text.append(fix.before)
        if fix.after:
            text.append("\n  after:  ", "green")
            text.append(fix.after)
        if fix.command:
            text.append("\n  your command, fixed: ", "bold")
            text.append(fix.command)


def fit_path(location: str, width: int | None) -> str:
    """`path:line` in `width` columns, leading directories left out (`…/c10d/ProcessGroupNCCL.cpp:1234`),
    so that it never folds and a line number never breaks in two."""
    if width is None or len(location) <= width:
        return location
    parts = location.split("/")
    while len(parts) > 1 and len("…/" + "/".join(parts)) > width:
        parts.pop(0)
    return "…/" + "/".join(parts)


def pattern_source(view: IncidentView, width: int | None = None) -> Text:
    text = Text("Pattern source\n", "bold")
    if view.explanation is None:
        return text.append("no pattern: unknown error", "dim")
    src = view.explanation.source
    if not src.location:
        return text.append("the pattern names no source location", "dim")
    text.append(fit_path(src.location, width), "cyan")
    if src.function:
        text.append(f"\nin {src.function}")
    if src.pinned:
        text.append(f"\n@ {src.pinned}", "dim")
    if view.explanation.releases:
        text.append(f"\n{view.explanation.releases}", "yellow")
    return text


def raise_site(view: IncidentView, width: int | None = None) -> Text:
    text = Text("Raised in the log at\n", "bold")
    site = view.raise_site
    if site is None:
        return text.append("no frame printed", "dim")
    text.append(fit_path(site.place, width), "cyan")
    text.append(f"\nin {site.function or '?'}")
    if site.code:
        text.append("\n").append_text(_code(site.code))
    if view.blame is not None:
        text.append("\nblame frame\n", "bold")
        text.append(fit_path(view.blame.place, width), "cyan")
        text.append(f" in {view.blame.function or '?'}")
    return text


def traceback(view: IncidentView) -> Text:
    """Every link of the chain as printed, with the raise site and the blame frame marked."""
    text = Text()
    for link in view.chain:
        info = link.info
        if info.link in _SEPARATORS:
            text.append(f"\n{_SEPARATORS[info.link]}\n\n", "dim italic")
        if info.has_traceback:
            text.append("Traceback (most recent call last):\n", "dim")
        for marked in link.frames:
            text.append_text(_frame(marked.frame, marked.mark))
        text.append(info.exception_type or "traceback cut off", "bold red" if link.diagnosed else "bold")
        if info.message:
            text.append(": " + info.message.splitlines()[0])
        text.append("\n")
        for sub in link.subs:
            text.append(f"  +-- sub-exception {sub.number}: ", "dim")
            text.append(sub.headline + "\n")
    text.rstrip()
    return text if text.plain else Text("(no traceback)", "dim")


def _frame(frame: Frame, mark: Mark) -> Text:
    marker, style, note = _MARKERS[mark]
    line = Text(marker, style or "bold red")
    line.append("File ", "dim")
    line.append(frame.relpath, "cyan bold" if mark is not Mark.NONE else "cyan")
    line.append(f":{frame.lineno}" if frame.lineno is not None else "", "cyan")
    line.append(f" in {frame.function}" if frame.function else "")
    line.append(note, style)
    line.append("\n")
    if frame.code:
        line.append("      ").append_text(_code(frame.code)).append("\n")
    return line


def _code(code: str) -> Text:
    text = _PYTHON.highlight(code)
    text.rstrip()
    return text


def chain(view: IncidentView) -> Text:
    links = view.chain
    text = Text("Chain", "bold")
    text.append(f"  {len(links)} exception(s), root cause first\n" if len(links) > 1 else "  a single exception\n", "dim")
    for number, link in enumerate(links, 1):
        text.append(f"{number}. {_HOW[link.link]}", "dim")
        text.append(link.headline, "bold" if link.diagnosed else "")
        if link.diagnosed:
            text.append("  ← diagnosed", "green" if view.known else "magenta")
        text.append("\n")
    text.rstrip()
    return text


_HOW = {Link.FIRST: "", Link.CAUSE: "↳ caused ", Link.CONTEXT: "↳ while handling it, "}


def page(diagnosis: Diagnosis, matcher: Matcher, run: RunConfig | None = None) -> Text:
    """The matched pattern's page, as `analyzer explain` lays it out, from the same `Explanation`;
    `run`'s configuration fills the fixes, as `analyzer explain --config-from LOG` does."""
    pattern = diagnosis.pattern
    if pattern is None:
        return Text("No known pattern for this incident.", "dim")
    found = explanation(pattern, diagnosis.params, diagnosis.match_kind.value, diagnosis.confidence, run=run,
                        derived=matcher.derived(pattern.id))
    src = found.source
    text = Text.assemble((found.pattern_id, "bold"),
                         (f"  {src.project or ''} · {found.severity} · {found.exception} · {found.role}", "dim"),
                         (f"\nmatched {found.match_kind} ({found.confidence:.0%})\n", "dim"))
    text.append("\nError message\n", "bold")
    text.append(f"  {pattern.exception}: {pattern.template}")
    _explained(text, found, gap="\n\n")
    if src.location or src.function:
        text.append("\n\nSource\n", "bold")
        text.append(f"  {src.location or ''}" + (f" in {src.function}" if src.function else ""), "cyan")
        if src.pinned:
            text.append(f"  @ {src.pinned}", "dim")
    if diagnosis.releases:
        text.append("\n\nReleases\n", "bold")
        text.append(f"  {diagnosis.releases}")
    if found.derived:
        text.append_text(derived_text(found.derived))
    for title, body in (("Trigger", pattern.trigger), ("Common situations", pattern.situations)):
        if body:
            text.append(f"\n\n{title}\n", "bold")
            text.append(f"  {body}")
    if found.fixes:
        text.append("\n\nFixes", "bold")
        _fixes(text, found, copy_keys=False)
    if pattern.examples:
        text.append("\n\nExamples\n", "bold")
        text.append("\n".join(f"  {pattern.exception}: {example}" for example in pattern.examples))
    if pattern.related:
        text.append("\n\nRelated errors\n", "bold")
        for related in pattern.related:
            other = matcher.pattern(related)
            text.append(f"  {related}: {other.template[:90]}\n" if other else f"  {related} (not in the loaded packs)\n")
        text.rstrip()
    if pattern.origin:
        text.append(f"\n\ndefined at {pattern.origin}", "dim")
    return text
