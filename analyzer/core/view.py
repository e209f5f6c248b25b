"""What people are shown about an incident, decided once: the renderers only lay it out.

`incident_view` turns an `Incident` into an `IncidentView` (headline, message, diagnosis, values,
fixes, where the pattern and the log say it was raised, the chain, the traceback with its frames
marked); `explanation` does the pattern part alone, for `analyzer explain`. The text output, the
explain page, the TUI and the HTML report render these records, so they cannot disagree.
"""

from __future__ import annotations

import enum
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from analyzer.core import lazyregex
from analyzer.core.closest import closest
from analyzer.core.derived import DerivedPage
from analyzer.core.incidents import Incident
from analyzer.core.matcher import Diagnosis
from analyzer.core.records import ErrorInfo, EventKind, Frame, Link, SourceSpan
from analyzer.core.render import RenderedFix, fill, render_fixes
from analyzer.core.runconfig import RunConfig
from analyzer.core.schema import Pattern

__all__ = ["IncidentView", "Explanation", "Value", "SourceView", "LinkView", "MarkedFrame", "Mark", "SubError", "SUBS_SHOWN",
           "incident_view", "explanation", "headline", "unknown_label", "role_label", "echo_note"]

_LONG_VALUE = 40  # characters: a captured value this long that the message already shows adds nothing
SUBS_SHOWN = 8  # an exception group's sub-exceptions listed; a group of hundreds (one per request) says the rest by number
_QUOTED = lazyregex.compile(r"""'([^'\n]*)'|"([^"\n]*)\"""")
# Pattern prose that points at an incident printed before it: not true while no root cause is known.
_ABOVE = lazyregex.compile(r"(ROOT CAUSE(?: incident)?) above")


class Mark(enum.Enum):
    NONE = "none"
    RAISE = "raise"  # where the diagnosed exception was raised: its innermost frame
    BLAME = "blame"  # the innermost frame in the application's own code


@dataclass(frozen=True, slots=True)
class MarkedFrame:
    frame: Frame
    mark: Mark = Mark.NONE


@dataclass(frozen=True, slots=True)
class SubError:
    """One sub-exception of an exception group: the error the group only carries."""

    number: int  # as the group's box numbers it, from 1
    headline: str  # its chain, last first: `RuntimeError: ... <- KeyError: ...`
    raise_site: Frame | None  # where its first exception (the chain's root) was raised
    pattern_id: str | None = None  # the page that knows it (told for the diagnosed exception's group only)


@dataclass(frozen=True, slots=True)
class LinkView:
    """One exception of the chain as printed, root cause first."""

    info: ErrorInfo
    headline: str  # `Type: first line that says something`
    diagnosed: bool  # the link the pattern (or fingerprint) is about
    relation: str  # to the diagnosed link: "caused by" (printed before it), "led to" (after it), "" (itself)
    frames: tuple[MarkedFrame, ...]
    subs: tuple[SubError, ...] = ()  # an exception group's sub-exceptions

    @property
    def link(self) -> Link:
        return self.info.link


@dataclass(frozen=True, slots=True)
class Value:
    name: str
    shown: str  # as Python would write it: 'deepep3', ('none', 'deepep'), 3


@dataclass(frozen=True, slots=True)
class SourceView:
    """Where the pattern says the error is raised."""

    location: str | None  # path:line, or the path alone
    function: str | None
    project: str | None
    version: str | None
    commit: str | None

    @property
    def pinned(self) -> str:
        """`sglang 0.5.23`: what the location was read from."""
        return " ".join(part for part in (self.project, self.version or (self.commit or "")[:12]) if part)


@dataclass(frozen=True, slots=True)
class Explanation:
    """What a pattern says about an error, with the user's values filled in."""

    pattern_id: str
    exception: str
    severity: str
    role: str
    match_kind: str | None  # None on a page shown without a match
    confidence: float | None
    meaning: str | None
    values: tuple[Value, ...]  # the captured values that add something to the message
    hint: str | None  # `did you mean 'deepep'?` for a refused value close to an allowed one
    fixes: tuple[RenderedFix, ...]
    source: SourceView
    releases: str = ""  # `raised in 0.4.7–0.4.10; upgrade to 0.5.1 fixes this`: empty without a history
    derived: DerivedPage | None = None  # read off the source by `patterns derive` (extracted signatures)


@dataclass(frozen=True, slots=True)
class IncidentView:
    id: str
    role: str  # root | consequence
    role_label: str  # ROOT CAUSE | ROOT | CONSEQUENCE
    is_run_root: bool
    exception_type: str
    label: str  # the pattern id, or for an unknown error its type and function (`KeyError in load_weights`)
    message: tuple[str, ...]  # its lines, the error itself first (argparse's usage, printed before it, after)
    count: int
    ranks: tuple[str, ...]
    first_seen: datetime | None
    last_seen: datetime | None
    caused_by: str | None
    awaiting_root: bool  # a consequence while no root cause has been seen (yet: a stream, another log)
    context: str
    truncated: bool
    inferred: bool  # the log printed no class: the one shown is named by CPython's message (core/cpython_messages.py)
    raise_site: Frame | None
    blame: Frame | None  # None when it is the raise site itself
    fingerprint: str
    explanation: Explanation | None  # None: no pattern knows the error
    chain: tuple[LinkView, ...]
    span: SourceSpan  # the first occurrence in the log

    @property
    def known(self) -> bool:
        return self.explanation is not None

    @property
    def headline(self) -> str:
        return next((link.headline for link in self.chain if link.diagnosed), self.exception_type)


def role_label(role: str, is_run_root: bool) -> str:
    return "ROOT CAUSE" if is_run_root else role.upper()


def echo_note(view: IncidentView) -> str:
    """What a consequence no root cause was seen for says of where that cause is."""
    if view.is_run_root:
        return "the first failure these logs show, itself an echo of one they do not (it may come later, or be in another log)"
    return "an echo of a failure elsewhere; no root cause seen yet (it may come later, or be in another log)"


def headline(info: ErrorInfo) -> str:
    """`Type: first line that says something` (torchrun's summary opens with a row of '=')."""
    first = next((line.strip() for line in info.message.splitlines() if any(c.isalnum() for c in line)), "")
    return f"{info.exception_type}: {first}" if first else info.exception_type or "traceback cut off"


def unknown_label(exception_type: str | None, function: str | None) -> str:
    """A readable name for an error no pattern knows: `KeyError in load_weights`."""
    short = (exception_type or "error").rsplit(".", 1)[-1]
    return f"{short} in {function}" if function and function != "<module>" else short


def incident_view(incident: Incident, run: RunConfig | None = None, derived: DerivedPage | None = None) -> IncidentView:
    """`run`: the configuration of the run the incident came from, for fixes with its values;
    `derived`: the page derived from the source for its pattern."""
    info, event, diagnosis = incident.info, incident.event, incident.diagnosis
    awaiting = incident.role == "consequence" and incident.caused_by is None
    found = None
    if diagnosis.pattern is not None:
        found = explanation(diagnosis.pattern, diagnosis.params, diagnosis.match_kind.value, diagnosis.confidence,
                            message=info.message, awaiting_root=awaiting, run=run, releases=diagnosis.releases,
                            derived=derived)
    site = info.raise_site
    function = site.function if site else None
    argparse = event.kind is EventKind.ARGPARSE
    return IncidentView(
        id=incident.id, role=incident.role, role_label=role_label(incident.role, incident.is_run_root),
        is_run_root=incident.is_run_root, exception_type=info.exception_type or "traceback cut off",
        label=found.pattern_id if found else unknown_label(info.exception_type, function),
        # argparse prints its usage before the error: the error leads here, the usage follows it
        message=_shown_lines(info.message) + (tuple(event.context.splitlines()) if argparse else ()),
        count=incident.count, ranks=incident.ranks, first_seen=incident.first_seen, last_seen=incident.last_seen,
        caused_by=incident.caused_by, awaiting_root=awaiting, context="" if argparse else event.context,
        truncated=event.truncated, inferred=event.inferred,
        raise_site=site, blame=incident.blame if incident.blame != site else None, fingerprint=incident.fingerprint,
        explanation=found, chain=_chain(incident), span=event.span)


def explanation(pattern: Pattern, params: Mapping[str, Any], match_kind: str | None = None,
                confidence: float | None = None, message: str = "", awaiting_root: bool = False,
                run: RunConfig | None = None, releases: str = "", derived: DerivedPage | None = None) -> Explanation:
    """The pattern's prose with `params` filled in; `message` is the error's own text (values it
    already shows at length are left out); `awaiting_root` words away pointers to a ROOT CAUSE
    printed above, while none has been; `run`'s configuration fills the fixes (core/render.py);
    `releases` is the releases line of the diagnosis (core/versions.py)."""
    values = dict(params)
    fixes = render_fixes(pattern.fixes, values, run)
    if awaiting_root:
        fixes = tuple(replace(fix, text=_ABOVE.sub(r"\1 (none seen yet)", fix.text)) for fix in fixes)
    src = pattern.source
    where = (f"{src.path}:{src.line}" if src.line else src.path) if src.path else None
    return Explanation(
        pattern_id=pattern.id, exception=pattern.exception, severity=pattern.severity, role=pattern.role,
        match_kind=match_kind, confidence=confidence, meaning=fill(pattern.meaning, values, run) or None,
        values=tuple(Value(name, repr(value)) for name, value in values.items() if _informative(value, message)),
        hint=_hint(values), fixes=fixes,
        source=SourceView(where, src.function, src.project, src.version, src.commit), releases=releases,
        derived=derived)


def _informative(value: Any, message: str) -> bool:
    """A value adds something unless it is a long stretch of the message quoted again."""
    if not isinstance(value, str):
        return True
    return "\n" not in value and not (len(value) >= _LONG_VALUE and value in message)


def _hint(values: Mapping[str, Any]) -> str | None:
    """`did you mean 'deepep'?` when a captured value is a near miss of a captured list of choices."""
    lists = [_choices(value) for value in values.values()]
    for value in values.values():
        if isinstance(value, str) and len(value) < _LONG_VALUE:
            for choices in lists:
                if choices and value not in choices and (near := closest(value, choices)):
                    return f"did you mean {near!r}?"
    return None


def _choices(value: Any) -> tuple[str, ...]:
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        quoted = tuple(a or b for a, b in _QUOTED.findall(value))
        return quoted if len(quoted) > 1 else ()
    return ()


def _chain(incident: Incident) -> tuple[LinkView, ...]:
    chain = incident.event.chain
    diagnosed = incident.info
    at = next(index for index, info in enumerate(chain) if info is diagnosed)
    views = []
    for index, info in enumerate(chain):
        mine = info is diagnosed
        frames = tuple(MarkedFrame(frame, _mark(frame, info, incident) if mine else Mark.NONE)
                       for frame in info.frames)
        relation = "" if mine else ("caused by" if index < at else "led to")
        views.append(LinkView(info, headline(info), mine, relation, frames,
                              sub_errors(info, incident.diagnosis.subs if mine else ())))
    return tuple(views)


def sub_errors(info: ErrorInfo, diagnoses: tuple[Diagnosis, ...]) -> tuple[SubError, ...]:
    """An exception group's sub-exceptions as shown, with the pages `diagnoses` (in the group's order) name; none
    for any other exception."""
    pages = [d.pattern.id if d.pattern else None for d in diagnoses] if len(diagnoses) == len(info.sub_exceptions) else []
    return tuple(SubError(number, " <- ".join(headline(exc) for exc in reversed(chain)), chain[0].raise_site,
                          pages[number - 1] if pages else None)
                 for number, chain in enumerate(info.sub_exceptions, 1) if chain)


def _mark(frame: Frame, info: ErrorInfo, incident: Incident) -> Mark:
    if frame is incident.blame:
        return Mark.BLAME
    return Mark.RAISE if frame is info.raise_site else Mark.NONE


def _shown_lines(message: str) -> tuple[str, ...]:
    """A message's lines as shown: one that begins with a line break (a triple-quoted string, indented
    in its source) from its first line of text, dedented."""
    return tuple(textwrap.dedent(message.strip("\n")).splitlines() if message[:1] == "\n" else message.splitlines())
