"""One incident as the report keeps it: a flat, typed row built from the `Incident`, cached as JSON
between reports and laid out as one frame row beside its run's columns.

The values are those of `analyzer scan --format json` (sinks/serialize.py) for the same incident; a
site is `relpath:line`, and a message longer than a report cell is cut. The run's configuration
(core/runconfig.py) is kept per file, beside the rows, so that a report can fill fixes with the
values of the run an incident came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from analyzer.core.incidents import Incident
from analyzer.core.matcher import MatchKind
from analyzer.core.records import Frame
from analyzer.core.runconfig import LaunchCommand, RunConfig, Server
from analyzer.core.schema import Role, Severity
from analyzer.report.runs import parse_day
from analyzer.sinks.serialize import jsonable

__all__ = ["IncidentRow", "MAX_MESSAGE", "parse_time", "run_config_data", "run_config_from_data"]

MAX_MESSAGE = 2000  # a report cell, not a log: longer messages are cut


@dataclass(frozen=True, slots=True)
class IncidentRow:
    incident: str  # the incident's id within its log (I1, I2, ...)
    pattern_id: str | None
    match_kind: MatchKind
    confidence: float | None  # None for an unknown error, as in the JSON
    fingerprint: str
    exception_type: str | None
    message: str
    role: Role
    is_run_root: bool
    caused_by: str | None
    severity: Severity | None
    count: int
    ranks: tuple[str, ...]
    host: str | None
    first_seen: str | None  # ISO times, as the log gave them
    last_seen: str | None
    truncated: bool
    raise_site: str | None  # relpath:line
    raise_function: str | None
    blame_site: str | None
    blame_function: str | None
    line_start: int
    line_end: int
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)  # captured values, as JSON values

    @classmethod
    def of(cls, incident: Incident) -> IncidentRow:
        info, diagnosis, event = incident.info, incident.diagnosis, incident.event
        pattern = diagnosis.pattern
        message = info.message or ""
        return cls(
            incident=incident.id, pattern_id=pattern.id if pattern else None, match_kind=diagnosis.match_kind,
            confidence=diagnosis.confidence if pattern else None, fingerprint=incident.fingerprint,
            exception_type=info.exception_type,
            message=message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + " …",
            role=incident.role, is_run_root=incident.is_run_root, caused_by=incident.caused_by,
            severity=pattern.severity if pattern else None, count=incident.count, ranks=tuple(incident.ranks),
            host=event.host, first_seen=_time(incident.first_seen), last_seen=_time(incident.last_seen),
            truncated=event.truncated, raise_site=_site(info.raise_site),
            raise_function=info.raise_site.function if info.raise_site else None,
            blame_site=_site(incident.blame), blame_function=incident.blame.function if incident.blame else None,
            line_start=event.span.line_start, line_end=event.span.line_end,
            params=jsonable(diagnosis.params) if pattern else {})

    @property
    def signature(self) -> str:
        return self.pattern_id or self.fingerprint

    def data(self) -> dict[str, Any]:
        """As JSON values (the report cache)."""
        data = {name: getattr(self, name) for name in _NAMES}
        data.update(match_kind=self.match_kind.value, role=self.role.value, ranks=list(self.ranks),
                    severity=self.severity.value if self.severity else None, params=dict(self.params))
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> IncidentRow:
        """The inverse of `data`; KeyError, TypeError or ValueError for a row of another shape."""
        if data.keys() != _FIELDS:
            raise KeyError(f"not an incident row: {sorted(set(data) ^ _FIELDS)}")
        values = dict(data)
        # The enums by value through dicts: a warm report decodes thousands of rows, and Enum(value) is slow.
        values.update(match_kind=_MATCH_KINDS[data["match_kind"]], role=_ROLES[data["role"]],
                      severity=_SEVERITIES[data["severity"]] if data["severity"] else None,
                      ranks=tuple(data["ranks"]), params=dict(data["params"] or {}))
        return cls(**values)

    def frame_row(self, file: str, run: Mapping[str, Any], log_host: str | None) -> dict[str, Any]:
        """One row of the incidents frame: its run's columns (`run`: the run table's record), then
        the incident's own. The captured values become `param.` columns there, not here."""
        own = {name: getattr(self, name) for name in _FRAME_NAMES}
        own.update(match_kind=self.match_kind.value, role=self.role.value, ranks=list(self.ranks),
                   severity=self.severity.value if self.severity else None)
        return {"run": run["run"], "host": run["host"] or self.host or log_host, "version": run["version"],
                "run_date": run["date"], "file": file, "signature": self.signature,
                **own, "timestamp": parse_time(self.first_seen), "last_seen": parse_time(self.last_seen),
                "rank_count": len(self.ranks)}


_NAMES = tuple(f.name for f in fields(IncidentRow))
_FIELDS = frozenset(_NAMES)
_FRAME_NAMES = tuple(name for name in _NAMES if name not in ("params", "first_seen", "host"))  # in other columns
_MATCH_KINDS = {kind.value: kind for kind in MatchKind}
_ROLES = {role.value: role for role in Role}
_SEVERITIES = {severity.value: severity for severity in Severity}


def parse_time(text: str | None) -> datetime | None:
    """Log times as naive datetimes; those with a zone (container runtimes) in UTC."""
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        day = parse_day(text)
        return datetime.combine(day, datetime.min.time()) if day else None
    return stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp


def _time(stamp: datetime | None) -> str | None:
    return stamp.isoformat() if stamp else None


def _site(frame: Frame | None) -> str | None:
    if frame is None:
        return None
    return frame.place


def run_config_data(config: RunConfig) -> dict[str, Any] | None:
    """A run's configuration as JSON values, or None when the log showed none."""
    if not config.known:
        return None
    command = config.command
    return {"server": config.server.value if config.server else None, "version": config.version,
            "model": config.model, "settings": [[key, jsonable(value)] for key, value in config.settings],
            "command": {"server": command.server.value, "words": list(command.words), "flags_at": command.flags_at}
            if command else None}


def run_config_from_data(data: Mapping[str, Any] | None) -> RunConfig | None:
    if data is None:
        return None
    command = data["command"]
    return RunConfig(
        server=Server(data["server"]) if data["server"] else None, version=data["version"], model=data["model"],
        settings=tuple((str(key), value) for key, value in data["settings"]),
        command=LaunchCommand(Server(command["server"]), tuple(command["words"]), int(command["flags_at"]))
        if command else None)
