"""Which incidents the table shows and in what order: filters, search and sort keys.

Presentation only: the incidents, their roles and diagnoses come from the engine unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.core.incidents import Incident
from analyzer.sinks.text import ordered_for_people

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

__all__ = ["FILTERS", "SORTS", "ViewState", "visible", "search_text"]

FILTERS: dict[str, Callable[[Incident], bool]] = {
    "all": lambda incident: True,
    "known": lambda incident: incident.diagnosis.known,
    "unknown": lambda incident: not incident.diagnosis.known,
    "roots": lambda incident: incident.role == "root" or incident.is_run_root,  # (a run that shows only echoes: its first)
    "consequences": lambda incident: incident.role == "consequence",
}

_SEVERITY_RANK = {"critical": 0, "error": 1, "warning": 2, "info": 3}


def _severity(incident: Incident) -> int:
    pattern = incident.diagnosis.pattern
    return _SEVERITY_RANK.get(pattern.severity, 4) if pattern else 4


# Each sort is a key over incidents already in log order (the engine's order), so ties stay in it.
# "role" is the report's own order: the run's root cause, other roots, then consequences.
SORTS: dict[str, Callable[[Incident], SupportsRichComparison] | None] = {
    "role": None,
    "severity": _severity,
    "count": lambda incident: -incident.count,
    "ranks": lambda incident: -len(incident.ranks),
    "exception": lambda incident: incident.info.short_type.lower(),
    "pattern": lambda incident: (not incident.diagnosis.known,
                                 incident.diagnosis.pattern.id if incident.diagnosis.pattern else ""),
    "first_seen": lambda incident: (incident.first_seen is None,
                                    incident.first_seen.replace(tzinfo=None) if incident.first_seen else 0),
    "message": lambda incident: incident.info.message.lower(),
}


@dataclass(frozen=True, slots=True)
class ViewState:
    filter: str = "all"
    sort: str = "role"
    reverse: bool = False
    search: str = ""


def search_text(incident: Incident) -> str:
    """What `/` searches: every message of the chain, the logged context, the pattern id, the
    ranks and hosts it happened on (`TP3` finds rank 3's incidents) and its lines in the log."""
    event = incident.event
    parts = [f"{info.exception_type}: {info.message}" for info in event.chain]
    parts.append(event.context)
    if incident.diagnosis.pattern:
        parts.append(incident.diagnosis.pattern.id)
    parts += [*incident.ranks, event.host or "", *event.lines]
    return "\n".join(parts).lower()


def visible(incidents: list[Incident], state: ViewState) -> list[Incident]:
    keep = FILTERS[state.filter]
    needle = state.search.strip().lower()
    shown = [i for i in incidents if keep(i) and (not needle or needle in search_text(i))]
    key = SORTS[state.sort]
    shown = ordered_for_people(shown) if key is None else sorted(shown, key=key)
    return shown[::-1] if state.reverse else shown
