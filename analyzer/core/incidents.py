"""Incidents: the same error on many ranks, once; root causes and the consequences that followed.

An incident groups events with one fingerprint (the diagnosed exception's masked message, type and
raise function) that are close in time. Each gets a role: `consequence` when its pattern says so
(NCCL timeouts, watchdog aborts, a scheduler's death notice), else `root`. The earliest root is the
run's root cause; the consequences after it point to it with `caused_by`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from analyzer.core.fingerprint import fingerprint
from analyzer.core.matcher import Diagnosis
from analyzer.core.records import ErrorEvent, ErrorInfo, Frame, SourceSpan

__all__ = ["Incident", "IncidentGrouper", "blame_frame"]


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

    def __init__(self, window_seconds: float = 600.0, app_packages: tuple[str, ...] = ()) -> None:
        self.window_seconds = window_seconds
        self.app_packages = app_packages
        self._groups: list[_Group] = []
        self._open: dict[str, _Group] = {}

    def add(self, event: ErrorEvent, diagnosis: Diagnosis) -> tuple[str, bool]:
        """Returns the incident id and whether this event opened a new incident."""
        key = _group_key(event, diagnosis)
        group = self._open.get(key)
        stamp = event.timestamp
        if group is not None and stamp and group.last_seen and (
            abs((stamp - group.last_seen).total_seconds()) > self.window_seconds
        ):
            group = None  # the same error again much later: a new incident
        is_new = group is None
        if group is None:
            group = _Group(f"I{len(self._groups) + 1}", event, diagnosis, key, len(self._groups), first_seen=stamp)
            self._groups.append(group)
            self._open[key] = group
        group.spans.append(event.span)
        rank = event.rank or (event.stream if event.stream.strip("|#") else None)
        if rank and rank not in group.ranks:
            group.ranks.append(rank)
        if stamp:
            group.first_seen = min(group.first_seen or stamp, stamp)
            group.last_seen = max(group.last_seen or stamp, stamp)
        return group.id, is_new

    def incidents(self) -> list[Incident]:
        """Incidents in log order, with roles, causes and the run's root cause marked."""
        return _link_causes([self._freeze(group) for group in sorted(self._groups, key=_log_order)])

    def snapshot(self, incident_id: str) -> Incident:
        """One incident as it stands now (streaming output); roles across incidents come later."""
        return next(self._freeze(g) for g in self._groups if g.id == incident_id)

    def _freeze(self, group: _Group) -> Incident:
        diagnosis = group.diagnosis
        info = group.event.chain[diagnosis.link]
        return Incident(
            id=group.id, event=group.event, diagnosis=diagnosis, fingerprint=fingerprint(info),
            role=diagnosis.pattern.role if diagnosis.pattern else "root",
            ranks=tuple(sorted(group.ranks, key=_rank_order)), count=len(group.spans),
            first_seen=group.first_seen, last_seen=group.last_seen, occurrences=tuple(group.spans),
            blame=blame_frame(info, self._apps(diagnosis)),
        )

    def _apps(self, diagnosis: Diagnosis) -> tuple[str, ...]:
        project = diagnosis.pattern.source.project if diagnosis.pattern else None
        return self.app_packages or ((project,) if project else ())


def _link_causes(incidents: list[Incident]) -> list[Incident]:
    roots = [i for i in incidents if i.role == "root"]
    if not roots:
        return incidents
    run_root = min(roots, key=_time_order)
    linked = []
    for incident in incidents:
        if incident is run_root:
            incident = replace(incident, is_run_root=True)
        elif incident.role == "consequence" and _time_order(incident) >= _time_order(run_root):
            incident = replace(incident, caused_by=run_root.id)
        linked.append(incident)
    return linked


def _group_key(event: ErrorEvent, diagnosis: Diagnosis) -> str:
    info = event.chain[diagnosis.link]
    pattern = diagnosis.pattern.id if diagnosis.pattern else "-"
    return f"{pattern}\0{fingerprint(info)}"  # across files too: one log per node is common


def _log_order(group: _Group) -> tuple:
    return (group.event.span.file, group.event.span.line_start, group.order)


def _time_order(incident: Incident) -> tuple:
    # Timestamps decide across files; log position decides within one and when times are missing.
    stamp = incident.first_seen.replace(tzinfo=None).isoformat() if incident.first_seen else ""
    return (stamp, incident.event.span.file, incident.event.span.line_start)


def _rank_order(rank: str) -> tuple:
    digits = "".join(ch if ch.isdigit() else " " for ch in rank).split()
    return (rank.rstrip("0123456789 "), [int(d) for d in digits])


_STDLIB_MARKERS = ("/lib/python3", "\\lib\\python3", "<frozen ", "<string>", "<stdin>")
_THIRD_PARTY = ("/site-packages/", "/dist-packages/", "\\site-packages\\")


def blame_frame(info: ErrorInfo, app_packages: tuple[str, ...] = ()) -> Frame | None:
    """The innermost frame in the application's own code: not the stdlib, not third-party code.

    With `app_packages` (e.g. ("sglang",)), frames inside those packages count as the app even when
    installed under site-packages; frames elsewhere in site-packages do not.
    """
    for frame in reversed(info.frames):
        path = frame.path.replace("\\", "/")
        if any(f"/{package}/" in path or path.startswith(f"{package}/") for package in app_packages):
            return frame
        if any(marker in path for marker in _THIRD_PARTY):
            continue
        if any(marker in path for marker in _STDLIB_MARKERS) and "/site-packages/" not in path:
            continue
        if app_packages:
            continue  # with a named app, only its own frames are blamed
        return frame
    return None
