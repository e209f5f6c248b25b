"""The fleet as pandas: one typed row per incident per log file, and a table of every run.

`incidents_frame(paths)` scans and returns the incidents; what a frame of incidents cannot hold
(runs without errors, bad files, how many files came from the cache) rides along in
`df.attrs["fleet"]`, which `summary(df)` reads.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pandas as pd

from analyzer.core.runconfig import RunConfig
from analyzer.report.fleet import FleetOptions, FleetScan, scan_fleet
from analyzer.report.fleetrows import (
    BAD_FILE_COLUMNS,
    INCIDENT_COLUMNS,
    PARAM_PREFIX,
    RUN_COLUMNS,
    FleetRows,
    fleet_rows,
)
from analyzer.report.health import FileStatus
from analyzer.report.rows import IncidentRow
from analyzer.sources.problems import OnProblem, Problem

__all__ = ["incidents_frame", "frame_from_scan", "frame_from_rows", "FleetTables", "fleet_tables", "restrict",
           "INCIDENT_COLUMNS", "PARAM_PREFIX", "typed_frame", "plain_frame", "frame_records", "rates_frame"]


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
    return frame_from_rows(fleet_rows(scan))


def frame_from_rows(fleet: FleetRows) -> pd.DataFrame:
    """The incidents as typed columns, a `param.<name>` column per captured value, the rest in attrs."""
    df = typed_frame(fleet.incidents, INCIDENT_COLUMNS)
    for name, dtype in fleet.param_types.items():
        df[PARAM_PREFIX + name] = pd.Series([row.get(PARAM_PREFIX + name) for row in fleet.incidents], dtype=dtype)
    runs, bad = typed_frame(fleet.runs, RUN_COLUMNS), typed_frame(fleet.bad_files, BAD_FILE_COLUMNS)
    df.attrs["fleet"] = FleetTables(runs, bad, fleet.scanned, fleet.cached, fleet.problems, fleet.rows, fleet.configs)
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


def typed_frame(rows: Sequence[Mapping[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series([row.get(name) for row in rows], dtype=dtype)
                         for name, dtype in columns.items()})


def plain_frame(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> pd.DataFrame:
    """Records as a frame whose column types pandas infers."""
    return pd.DataFrame(list(rows), columns=columns)


def frame_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as plain records, its missing values (NA, NaT, NaN) as None."""
    columns = {name: [None if _missing(v) else v for v in df[name].tolist()] for name in df.columns}
    return [dict(zip(columns, values)) for values in zip(*columns.values())]


def rates_frame(totals: Mapping[str, int], shares: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    rates = pd.DataFrame({"runs": pd.Series(totals, dtype="int64")})
    for key, share in shares.items():
        rates[key] = pd.Series(share, dtype="float64")
    rates.index.name = "day"
    return rates


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)
