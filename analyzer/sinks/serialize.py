"""Incidents as plain data: the stable JSON shape every machine-readable output shares."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from analyzer.core.incidents import Incident
from analyzer.core.records import ErrorInfo, Frame
from analyzer.core.render import RenderedFix, fill, render_fixes
from analyzer.core.runconfig import RunConfig
from analyzer.core.schema import Pattern

__all__ = ["incident_dict", "jsonable", "frame_dict", "fix_dict", "pattern_source"]


def jsonable(value: Any) -> Any:
    """Captured parameters as JSON: tuples and sets become lists, anything else odd a string."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def frame_dict(frame: Frame | None) -> dict[str, Any] | None:
    if frame is None:
        return None
    return {"path": frame.path, "relpath": frame.relpath, "line": frame.lineno,
            "function": frame.function, "code": frame.code}


def _time(stamp: datetime | None) -> str | None:
    return stamp.isoformat() if stamp else None


def _link(info: ErrorInfo) -> dict[str, Any]:
    data: dict[str, Any] = {"exception_type": info.exception_type, "message": info.message,
            "raise_site": frame_dict(info.raise_site), "link": info.link.value}
    if info.sub_exceptions:
        data["sub_exceptions"] = [[_link(sub) for sub in chain] for chain in info.sub_exceptions]
    return data


def incident_dict(incident: Incident, run: RunConfig | None = None) -> dict[str, Any]:
    """`run`, the configuration of the run the log came from, fills the fixes (core/render.py)."""
    event, diagnosis, info = incident.event, incident.diagnosis, incident.info
    pattern = diagnosis.pattern
    params = jsonable(diagnosis.params) if pattern else None
    return {
        "id": incident.id,
        "exception_type": info.exception_type,
        "message": info.message,
        "raise_site": frame_dict(info.raise_site),
        "chain": [_link(link) for link in event.chain],
        "kind": event.kind.value,
        "context": event.context or None,
        "ranks": list(incident.ranks),
        "count": incident.count,
        "first_seen": _time(incident.first_seen),
        "last_seen": _time(incident.last_seen),
        "host": event.host,
        "source": {"file": event.span.file, "line_start": event.span.line_start, "line_end": event.span.line_end},
        "occurrences": [{"file": s.file, "line_start": s.line_start, "line_end": s.line_end}
                        for s in incident.occurrences],
        "occurrences_sampled": incident.occurrences_sampled,
        "count_by_file": dict(incident.count_by_file),
        "count_by_rank": dict(incident.count_by_rank),
        "truncated": event.truncated,
        "elided": event.elided,
        "inferred": event.inferred,
        "pattern_id": pattern.id if pattern else None,
        # an exception group's: the page of each sub-exception, in the group's order (null where none knows it)
        "sub_exception_pattern_ids": [d.pattern.id if d.pattern else None for d in diagnosis.subs] or None,
        "match_kind": diagnosis.match_kind.value,
        "confidence": diagnosis.confidence if pattern else None,
        "evidence": diagnosis.evidence.names if pattern else None,
        "params": params,
        "meaning": fill(pattern.meaning, diagnosis.params) or None if pattern else None,
        "fixes": [fix_dict(fix) for fix in render_fixes(pattern.fixes, diagnosis.params, run)] if pattern else None,
        "pattern_source": pattern_source(pattern),
        "releases": diagnosis.releases or None,
        "severity": pattern.severity if pattern else None,
        "role": incident.role,
        "is_run_root": incident.is_run_root,
        "caused_by": incident.caused_by,
        "fingerprint": incident.fingerprint,
        "blame_site": frame_dict(incident.blame),
    }


def fix_dict(fix: RenderedFix) -> dict[str, Any]:
    return {"title": fix.title, "text": fix.text, "before": fix.before, "after": fix.after, "command": fix.command}


def pattern_source(pattern: Pattern | None) -> dict[str, Any] | None:
    if pattern is None:
        return None
    src = pattern.source
    return {"project": src.project, "path": src.path, "line": src.line, "function": src.function,
            "version": src.version, "commit": src.commit}
