"""The fleet as plain rows: what the report aggregates and the pandas frame is built from.

One record per incident per log file (`IncidentRow.frame_row` plus its captured values as typed
`param.<name>` entries), one per run and one per bad file, all plain Python. The summary reads
these directly, so a report that writes only the summary never imports pandas.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any

from analyzer.core.runconfig import RunConfig
from analyzer.report.fleet import FleetScan
from analyzer.report.health import BAD
from analyzer.report.rows import IncidentRow, parse_time
from analyzer.sources.problems import Problem

__all__ = ["FleetRows", "fleet_rows", "restrict_rows", "PARAM_PREFIX", "INCIDENT_COLUMNS", "RUN_COLUMNS",
           "BAD_FILE_COLUMNS"]

PARAM_PREFIX = "param."

# Column -> pandas dtype; captured parameters follow as `param.<name>` columns.
INCIDENT_COLUMNS = {
    "run": "string", "host": "string", "version": "string", "run_date": "datetime64[us]",
    "file": "string", "incident": "string", "timestamp": "datetime64[us]", "last_seen": "datetime64[us]",
    "signature": "string", "pattern_id": "string", "fingerprint": "string", "match_kind": "string",
    "confidence": "Float64", "exception_type": "string", "message": "string", "role": "string",
    "is_run_root": "boolean", "caused_by": "string", "severity": "string", "count": "Int64",
    "ranks": "object", "rank_count": "Int64", "raise_site": "string", "raise_function": "string",
    "blame_site": "string", "blame_function": "string", "truncated": "boolean",
    "line_start": "Int64", "line_end": "Int64",
}
RUN_COLUMNS = {
    "run": "string", "host": "string", "version": "string", "date": "datetime64[us]", "files": "Int64",
    "lines": "Int64", "incidents": "Int64", "failed": "boolean", "bad": "boolean", "problem": "string",
}
BAD_FILE_COLUMNS = {"run": "string", "file": "string", "status": "string", "detail": "string"}


@dataclass(frozen=True, slots=True, eq=False)
class FleetRows:
    incidents: tuple[dict[str, Any], ...]  # the incidents frame's records, `param.` values included
    runs: tuple[dict[str, Any], ...]  # every run, with or without errors (the run table's records)
    bad_files: tuple[dict[str, Any], ...]  # run, file, status, detail
    param_types: Mapping[str, str] = field(default_factory=dict)  # name -> pandas dtype, over the whole scan
    scanned: int = 0
    cached: int = 0
    problems: tuple[Problem, ...] = ()
    rows: Mapping[tuple[str, str], IncidentRow] = field(default_factory=dict)  # (file, incident id) -> its row
    configs: Mapping[str, RunConfig] = field(default_factory=dict)  # file -> the run configuration it showed


def fleet_rows(scan: FleetScan) -> FleetRows:
    runs = _runs(scan)
    records: list[dict[str, Any]] = []
    rows: dict[tuple[str, str], IncidentRow] = {}
    configs: dict[str, RunConfig] = {}
    for file, result in zip(scan.files, scan.results):
        for row in result.incidents:
            records.append(row.frame_row(file.path, runs[file.run], result.host))
            rows[file.path, row.incident] = row
        if result.run is not None:
            configs[file.path] = result.run
    param_types: dict[str, str] = {}
    for name, (dtype, values) in _param_values(list(rows.values())).items():
        param_types[name] = dtype
        for record, value in zip(records, values):
            if value is not None:
                record[PARAM_PREFIX + name] = value
    bad = tuple({"run": file.run, "file": file.path, "status": result.status, "detail": result.detail}
                for file, result in zip(scan.files, scan.results) if result.status in BAD)
    return FleetRows(tuple(records), tuple(runs.values()), bad, param_types, scan.scanned, scan.cached,
                     scan.problems, rows, configs)


def restrict_rows(fleet: FleetRows, start: date | None = None, end: date | None = None) -> FleetRows:
    """Only the runs dated within [start, end] (undated runs drop out when a bound is set)."""
    if start is None and end is None:
        return fleet
    low = datetime.combine(start, datetime.min.time()) if start else None
    high = datetime.combine(end, datetime.min.time()) + timedelta(days=1) if end else None
    runs = tuple(run for run in fleet.runs if run["date"] is not None
                 and (low is None or run["date"] >= low) and (high is None or run["date"] < high))
    kept = {run["run"] for run in runs}
    return replace(fleet, runs=runs, incidents=tuple(r for r in fleet.incidents if r["run"] in kept),
                   bad_files=tuple(b for b in fleet.bad_files if b["run"] in kept))


def _runs(scan: FleetScan) -> dict[str, dict[str, Any]]:
    """One record per run: path facts first, then what its logs' prefixes and banners say."""
    runs: dict[str, dict[str, Any]] = {}
    for file, result in zip(scan.files, scan.results):
        run = runs.setdefault(file.run, {"run": file.run, "host": None, "version": None, "date": None,
                                         "files": 0, "lines": 0, "incidents": 0, "failed": False,
                                         "bad": False, "problem": None, "_started": None})
        run["host"] = run["host"] or file.host
        run["version"] = run["version"] or file.version
        run["date"] = run["date"] or file.date
        run["files"] += 1
        run["lines"] += result.lines
        run["incidents"] += len(result.incidents)
        run["failed"] = run["failed"] or bool(result.incidents)
        started = parse_time(result.started)
        if started and (run["_started"] is None or started < run["_started"]):
            run["_started"] = started
        if result.status in BAD and not run["bad"]:
            run["bad"] = True
            run["problem"] = f"{file.path}: {result.status}" + (f" ({result.detail})" if result.detail else "")
    for file, result in zip(scan.files, scan.results):  # second pass: logs fill what paths lack
        run = runs[file.run]
        run["host"] = run["host"] or result.host
        run["version"] = run["version"] or result.version
    for file in scan.files:  # last: a directory named like a machine
        runs[file.run]["host"] = runs[file.run]["host"] or file.host_hint
    for run in runs.values():
        started = run.pop("_started")
        if run["date"] is None and started is not None:
            run["date"] = started.date()
        run["date"] = datetime.combine(run["date"], datetime.min.time()) if run["date"] else None
    return runs


def _param_values(rows: list[IncidentRow]) -> dict[str, tuple[str, list[Any]]]:
    """Captured values typed per name over all rows: integers, numbers, flags, else text (lists as
    JSON), each with the pandas dtype its column gets."""
    names = sorted({name for row in rows for name in row.params})
    columns = {}
    for name in names:
        values = [row.params.get(name) for row in rows]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            dtype = "boolean"
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            dtype = "Int64"
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            dtype = "Float64"
            values = [None if v is None else float(v) for v in values]
        else:
            dtype = "string"
            values = [None if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                      for v in values]
        columns[name] = (dtype, values)
    return columns
