"""Incidents: the same error on many ranks, once; root causes and the consequences that followed.

An incident groups events with one pattern and fingerprint (core/fingerprint.py) that are close
in time. Each gets a role: `consequence` when its pattern says so (NCCL timeouts, watchdog aborts,
SIGQUIT notices, killed children, broken pipes), else `root`. Incidents fall into runs: a quiet
gap longer than `run_gap_seconds` starts a new one (it must outlast collective timeouts, which
are 10 to 30 minutes). The earliest root of a run is the run's root cause, and the run's
consequences point to it with `caused_by`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from analyzer.core.fingerprint import fingerprint
from analyzer.core.matcher import Diagnosis
from analyzer.core.records import ErrorEvent, ErrorInfo, Frame, Link, SourceSpan, package_relative

__all__ = ["Incident", "IncidentGrouper", "blame_frame", "root_diagnosis"]


@dataclass(frozen=True, slots=True)
class Incident:
    id: str
    event: ErrorEvent  # the first occurrence
    diagnosis: Diagnosis
    fingerprint: str
    role: str  # "root" | "consequence"
    ranks: tuple[str, ...]
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    occurrences: tuple[SourceSpan, ...]
    blame: Frame | None = None
    caused_by: str | None = None
    is_run_root: bool = False

    @property
    def info(self) -> ErrorInfo:
        """The exception the incident is about: the diagnosed link of the chain."""
        return self.event.chain[self.diagnosis.link]

    @property
    def known(self) -> bool:
        return self.diagnosis.pattern is not None


@dataclass(slots=True)
class _Group:
    id: str
    event: ErrorEvent
    diagnosis: Diagnosis
    fingerprint: str
    order: int
    ranks: list[str] = field(default_factory=list)
    spans: list[SourceSpan] = field(default_factory=list)
    first_seen: datetime | None = None
    last_seen: datetime | None = None


class IncidentGrouper:
    """Pure and incremental: `add` events as they come, read `incidents()` at any time."""

    def __init__(self, window_seconds: float = 600.0, app_packages: tuple[str, ...] = (),
                 run_gap_seconds: float = 3600.0) -> None:
        self.window_seconds = window_seconds
        self.app_packages = app_packages
        self.run_gap_seconds = run_gap_seconds
        self._groups: list[_Group] = []
        self._open: dict[tuple[str, str], _Group] = {}

    def add(self, event: ErrorEvent, diagnosis: Diagnosis) -> tuple[str, bool]:
        """Returns the incident id and whether this event opened a new incident."""
        info = event.chain[diagnosis.link]
        key = (diagnosis.pattern.id if diagnosis.pattern else "", fingerprint(info))
        group = self._open.get(key)
        stamp = event.timestamp
        if group is not None and stamp and group.last_seen and _seconds(stamp, group.last_seen) > self.window_seconds:
            group = None  # the same error again much later: a new incident
        is_new = group is None
        if group is None:
            group = _Group(f"I{len(self._groups) + 1}", event, diagnosis, key[1], len(self._groups), first_seen=stamp)
            self._groups.append(group)
            self._open[key] = group
        group.spans.append(event.span)
        rank = event.rank or (event.stream if event.stream.strip("|#") else None)
        if rank and rank not in group.ranks:
            group.ranks.append(rank)
        if stamp:
            group.first_seen = min(group.first_seen or stamp, stamp, key=_naive)
            group.last_seen = max(group.last_seen or stamp, stamp, key=_naive)
        return group.id, is_new

    def incidents(self) -> list[Incident]:
        """Incidents in log order, with roles, causes and each run's root cause marked."""
        frozen = [self._freeze(group) for group in sorted(self._groups, key=_log_order)]
        return link_causes(frozen, self.run_gap_seconds)

    def snapshot(self, incident_id: str) -> Incident:
        """One incident as it stands now (streaming output); roles across incidents come later."""
        return next(self._freeze(g) for g in self._groups if g.id == incident_id)

    def _freeze(self, group: _Group) -> Incident:
        diagnosis = group.diagnosis
        info = group.event.chain[diagnosis.link]
        return Incident(
            id=group.id, event=group.event, diagnosis=diagnosis, fingerprint=group.fingerprint,
            role=_role(diagnosis), ranks=tuple(sorted(group.ranks, key=_rank_order)), count=len(group.spans),
            first_seen=group.first_seen, last_seen=group.last_seen, occurrences=tuple(group.spans),
            blame=blame_frame(info, self._apps(diagnosis, info)),
        )

    def _apps(self, diagnosis: Diagnosis, info: ErrorInfo) -> tuple[str, ...]:
        """--app-package, else the pattern's project when the stack runs through it."""
        if self.app_packages:
            return self.app_packages
        project = diagnosis.pattern.source.project if diagnosis.pattern else None
        if project and any(_package(frame) == project for frame in info.frames):
            return (project,)
        return ()


def root_diagnosis(event: ErrorEvent, best: Diagnosis, match: Callable[[ErrorInfo], Diagnosis]) -> Diagnosis:
    """The diagnosis an incident is about, honouring where a chain's root cause is.

    The first exception printed is the root cause. Only a `During handling ...` link can take
    that place from it: when the first one is a known consequence (a broken pipe while a real
    error was being handled), the next one is the root. A later link that a root pattern knows
    (`raise RuntimeError(...) from err`) still explains the incident, as `best` found.
    """
    chain = event.chain
    if len(chain) == 1:
        return best
    root, found = 0, match(chain[0])
    while _role(found) == "consequence" and root + 1 < len(chain) and chain[root + 1].link is Link.CONTEXT:
        root += 1
        found = match(chain[root])
    if _role(found) != "consequence" and best.pattern is not None and _role(best) == "root" and best.link >= root:
        return best
    return replace(found, link=root)


def link_causes(incidents: list[Incident], run_gap_seconds: float) -> list[Incident]:
    """Mark each run's root cause and point the run's consequences at it."""
    marks: dict[str, dict] = {}
    for run in _runs(incidents, run_gap_seconds):
        roots = [i for i in run if i.role == "root"]
        if not roots:
            continue  # only echoes: the failure itself is in a log we were not given
        root = roots[0]
        marks[root.id] = {"is_run_root": True}
        for incident in run:
            if incident.role == "consequence" and not _before(incident, root):
                marks[incident.id] = {"caused_by": root.id}
    return [replace(i, **marks[i.id]) if i.id in marks else i for i in incidents]


def _runs(incidents: list[Incident], run_gap_seconds: float) -> list[list[Incident]]:
    """Incidents in time order, cut where no incident happened for longer than the gap."""
    runs: list[list[Incident]] = []
    end: datetime | None = None
    for incident in sorted(incidents, key=_time_order):
        start = incident.first_seen
        if not runs or (end is not None and start is not None and _seconds(start, end) > run_gap_seconds
                        and _naive(start) > _naive(end)):
            runs.append([])
        runs[-1].append(incident)
        last = incident.last_seen or start
        if last is not None:
            end = last if end is None else max(end, last, key=_naive)
    return runs


def _before(incident: Incident, root: Incident) -> bool:
    """Known to have begun before the root (without timestamps, order says nothing across files)."""
    if incident.first_seen and root.first_seen:
        return _naive(incident.first_seen) < _naive(root.first_seen)
    span, root_span = incident.event.span, root.event.span
    return span.file == root_span.file and span.line_start < root_span.line_start


def _role(diagnosis: Diagnosis) -> str:
    return diagnosis.pattern.role if diagnosis.pattern else "root"


def _naive(stamp: datetime) -> datetime:
    return stamp.replace(tzinfo=None)


def _seconds(a: datetime, b: datetime) -> float:
    return abs((_naive(a) - _naive(b)).total_seconds())


def _log_order(group: _Group) -> tuple:
    return (group.event.span.file, group.event.span.line_start, group.order)


def _time_order(incident: Incident) -> tuple:
    # Timestamps decide across files; log position decides within one and when times are missing.
    stamp = _naive(incident.first_seen).isoformat() if incident.first_seen else ""
    return (stamp, incident.event.span.file, incident.event.span.line_start)


def _rank_order(rank: str) -> tuple:
    digits = "".join(ch if ch.isdigit() else " " for ch in rank).split()
    return (rank.rstrip("0123456789 "), [int(d) for d in digits])


_STDLIB_MARKERS = ("/lib/python3", "<frozen ", "<string>", "<stdin>")
_THIRD_PARTY = ("/site-packages/", "/dist-packages/")
_LAUNCHERS = ("/bin/",)  # console-script wrappers such as /usr/local/bin/torchrun


def blame_frame(info: ErrorInfo, app_packages: tuple[str, ...] = ()) -> Frame | None:
    """The innermost frame in the application's own code: not the stdlib, not third-party code.

    With `app_packages` (e.g. ("sglang",)) the application is those packages, wherever they are
    installed. Without, it is code outside any site-packages (your script); when the whole stack
    is installed code, it is the package the stack enters first (`sglang` for a server started
    with `python -m sglang.launch_server`, whatever library the error was raised in).
    """
    frames = info.frames
    if app_packages:
        return _innermost(frames, lambda frame: _package(frame) in app_packages
                          or any(f"/{package}/" in _path(frame) for package in app_packages))
    own = _innermost(frames, lambda frame: not (_is_stdlib(frame) or _is_third_party(frame) or _is_launcher(frame)))
    if own is not None:
        return own
    entry = next((package for frame in frames if not _is_stdlib(frame) and (package := _package(frame))), None)
    return _innermost(frames, lambda frame: _package(frame) == entry) if entry else None


def _innermost(frames: tuple[Frame, ...], wanted: Callable[[Frame], bool]) -> Frame | None:
    return next((frame for frame in reversed(frames) if wanted(frame)), None)


def _path(frame: Frame) -> str:
    return frame.path.replace("\\", "/")


def _is_third_party(frame: Frame) -> bool:
    return any(marker in _path(frame) for marker in _THIRD_PARTY)


def _is_launcher(frame: Frame) -> bool:
    return any(marker in _path(frame) for marker in _LAUNCHERS)


def _is_stdlib(frame: Frame) -> bool:
    path = _path(frame)
    return any(marker in path for marker in _STDLIB_MARKERS) and not _is_third_party(frame)


def _package(frame: Frame) -> str:
    """The top-level package a frame's file belongs to (`sglang` for .../sglang/srt/x.py)."""
    relative = package_relative(frame.path)
    head = relative.split("/", 1)[0]
    return head if "/" in relative and head.isidentifier() else ""  # not /abs/script.py, python3.11/, C:
