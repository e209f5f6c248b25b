"""The fleet as pandas: one typed row per incident per log file, and a table of every run.

`incidents_frame(paths)` scans and returns the incidents; what a frame of incidents cannot hold
(runs without errors, bad files, how many files came from the cache) rides along in
`df.attrs["fleet"]`, which `summary(df)` reads.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import pandas as pd

from analyzer.core.runconfig import RunConfig
from analyzer.report.fleet import FleetOptions, FleetScan, scan_fleet
from analyzer.report.health import BAD, FileStatus
from analyzer.report.rows import IncidentRow, parse_time
from analyzer.sources.problems import OnProblem, Problem

__all__ = ["incidents_frame", "frame_from_scan", "FleetTables", "fleet_tables", "restrict",
           "INCIDENT_COLUMNS", "PARAM_PREFIX"]

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
class FleetTables:
    """Every run (with or without errors), the files that could not be reported on, and how the
    scan went. Read-only: pandas deep-copies attrs on each operation, so copying returns self."""

    runs: pd.DataFrame
    bad_files: pd.DataFrame
    scanned: int = 0
    cached: int = 0
    problems: tuple[Problem, ...] = ()
    rows: Mapping[tuple[str, str], IncidentRow] = field(default_factory=dict)  # (file, incident id) -> its row
    configs: Mapping[str, RunConfig] = field(default_factory=dict)  # file -> the run configuration it showed

    def __deepcopy__(self, memo) -> FleetTables:
        return self


def incidents_frame(paths: Iterable[str] | str, *, on_problem: OnProblem | None = None,
                    on_progress: Callable[[int, int], None] | None = None, **options: Any) -> pd.DataFrame:
    """Scan files and directories of run logs; keyword options are FleetOptions' fields
    (path_regex, include, engine, jobs, scheduler, cache, patterns, builtin, window_seconds,
    run_gap_seconds, app_packages).

    Files the scan itself could not read are never dropped silently: when workers failed, a
    RuntimeWarning says how many files are missing from the frame (their rows are in
    `fleet_tables(df).bad_files` with status `failed`); when every file failed, RuntimeError."""
    arguments = [paths] if isinstance(paths, str) else [str(p) for p in paths]
    scan = scan_fleet(arguments, FleetOptions(**options), on_problem, on_progress)
    failed = [result for result in scan.results if result.status is FileStatus.FAILED]
    if failed and len(failed) == len(scan.results):
        raise RuntimeError(f"none of the {len(failed)} file(s) could be scanned: {failed[0].detail}")
    if failed:
        warnings.warn(f"{len(failed)} of {len(scan.results)} file(s) could not be scanned "
                      f"(first: {failed[0].path}: {failed[0].detail})", RuntimeWarning, stacklevel=2)
    return frame_from_scan(scan)


def fleet_tables(df: pd.DataFrame) -> FleetTables | None:
    tables = df.attrs.get("fleet")
    return tables if isinstance(tables, FleetTables) else None


def frame_from_scan(scan: FleetScan) -> pd.DataFrame:
    runs = _runs(scan)
    frame_rows: list[dict[str, Any]] = []
    rows: dict[tuple[str, str], IncidentRow] = {}
    configs: dict[str, RunConfig] = {}
    for file, result in zip(scan.files, scan.results):
        for row in result.incidents:
            frame_rows.append(row.frame_row(file.path, runs[file.run], result.host))
            rows[file.path, row.incident] = row
        if result.run is not None:
            configs[file.path] = result.run
    df = _typed(frame_rows, INCIDENT_COLUMNS)
    for name, column in _param_columns(list(rows.values())).items():
        df[PARAM_PREFIX + name] = column
    bad = [{"run": file.run, "file": file.path, "status": result.status, "detail": result.detail}
           for file, result in zip(scan.files, scan.results) if result.status in BAD]
    df.attrs["fleet"] = FleetTables(_typed(list(runs.values()), RUN_COLUMNS), _typed(bad, BAD_FILE_COLUMNS),
                                    scan.scanned, scan.cached, scan.problems, rows, configs)
    return df


def restrict(df: pd.DataFrame, start: date | None = None, end: date | None = None) -> pd.DataFrame:
    """Only the runs dated within [start, end] (undated runs drop out when a bound is set)."""
    tables = fleet_tables(df)
    if (start is None and end is None) or tables is None:
        return df

    def keep(days: pd.Series) -> pd.Series:
        inside = days.notna()
        if start is not None:
            inside &= days >= pd.Timestamp(start)
        if end is not None:
            inside &= days < pd.Timestamp(end) + pd.Timedelta(days=1)
        return inside.fillna(False).astype(bool)

    runs = tables.runs[keep(tables.runs["date"])]
    kept = set(runs["run"])
    out = df[df["run"].isin(kept)].copy()
    bad = tables.bad_files[tables.bad_files["run"].isin(kept)]
    out.attrs["fleet"] = FleetTables(runs.reset_index(drop=True), bad.reset_index(drop=True),
                                     tables.scanned, tables.cached, tables.problems, tables.rows, tables.configs)
    return out.reset_index(drop=True)


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


def _typed(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series([row.get(name) for row in rows], dtype=dtype)
                         for name, dtype in columns.items()})


def _param_columns(rows: list[IncidentRow]) -> dict[str, pd.Series]:
    """Captured values as typed columns: integers, numbers, flags, else text (lists as JSON)."""
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
        else:
            dtype = "string"
            values = [None if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                      for v in values]
        columns[name] = pd.Series(values, dtype=dtype)
    return columns
