"""The fleet report: per signature (or host, day, version), how often, on how many runs, since
when, where, with which values; the runs without errors; the runs that could not be read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pandas as pd

from analyzer.core.runconfig import RunConfig
from analyzer.report.choices import BY
from analyzer.report.frame import BAD_FILE_COLUMNS, PARAM_PREFIX, fleet_tables
from analyzer.report.rows import IncidentRow

__all__ = ["summary", "Summary", "Example", "BY", "KEY_COLUMN", "UNKNOWN", "per_day", "root_cause_counts"]

KEY_COLUMN = {"pattern": "signature", "fingerprint": "fingerprint", "host": "host", "day": "day",
              "version": "version"}
UNKNOWN = "(unknown)"
_RUN_KEY = {"host": "host", "version": "version", "day": "date"}  # the runs table's column for a key


@dataclass(frozen=True, slots=True)
class Example:
    """A group's earliest incident as the scan kept it, and the configuration of the run it came from:
    what an explanation of the group fills its values and fixes with."""

    file: str
    row: IncidentRow
    run: RunConfig | None


@dataclass(frozen=True, slots=True, eq=False)
class Summary:
    by: str
    table: pd.DataFrame  # one row per group, most runs first (by day: in date order)
    runs_total: int  # = runs_failed + len(clean_runs) + runs_bad: every run is in exactly one bucket
    runs_failed: int  # runs with an error (a half-written log's errors count)
    runs_bad: int  # runs with a bad file and no error found
    clean_runs: pd.DataFrame  # no error and no bad file: the run table's rows (run, host, version, date, ...)
    bad_files: pd.DataFrame  # run, file, status, detail: every bad file, its run failed or not
    root_causes: pd.DataFrame  # one row per failed run: run, day, signature, exception_type
    since: date | None = None  # signatures first seen on or after it are `new`
    scanned: int = 0
    cached: int = 0
    daily_rates: pd.DataFrame | None = None  # day -> `runs` that day, and per signature the share of them it hit
    examples: Mapping[str, Example] = field(default_factory=dict)  # group key -> its earliest incident, when known

    @property
    def key(self) -> str:
        return KEY_COLUMN[self.by]


def summary(df: pd.DataFrame, by: str = "pattern", since: date | None = None, top: int = 3) -> Summary:
    """Aggregate an `incidents_frame`. `top` is how many values of each parameter are kept."""
    if by not in BY:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(BY)}")
    tables = fleet_tables(df)
    runs = tables.runs if tables else _runs_seen(df)
    bad_files = tables.bad_files if tables else _empty(BAD_FILE_COLUMNS)
    keys = _keys(df, by)
    roots = _root_causes(df)
    root_counts = Counter(keys.loc[roots.index]) if len(roots) else Counter()
    runs_by_key: dict[str, set[str]] = {}
    for run, key in zip(runs["run"], _run_keys(runs, by)):
        runs_by_key.setdefault(key, set()).add(run)
    groups = _gather(df, keys)
    examples: dict[str, Example] = {}
    for key, group in groups.items():
        if tables is not None and group.earliest is not None and group.earliest[3] in tables.rows:
            file, incident = group.earliest[3]
            examples[key] = Example(file, tables.rows[file, incident], tables.configs.get(file))
    rows = []
    for key, group in groups.items():
        of_runs = len(runs) if by in ("pattern", "fingerprint") else len(group.runs | runs_by_key.get(key, set()))
        rows.append({
            KEY_COLUMN[by]: key,
            "exception_type": group.types.most_common(1)[0][0] if group.types else None,
            "message": group.earliest[1] if group.earliest else None,
            "signatures": len(group.signature_runs),
            "incidents": group.incidents,
            "occurrences": group.occurrences,
            "runs": len(group.runs),
            "of_runs": of_runs,
            "runs_pct": round(100.0 * len(group.runs) / of_runs, 1) if of_runs else 0.0,
            "run_roots": root_counts.get(key, 0),
            "first_seen": group.first,
            "last_seen": group.last,
            "hosts": sorted(group.hosts),
            "versions": sorted(group.versions),
            "top_signatures": [[sig, len(runs)] for sig, runs in sorted(
                group.signature_runs.items(), key=lambda item: (-len(item[1]), item[0]))[:top]],
            "top_params": {name: _most_frequent(counts, top) for name, counts in group.params.items()},
            "roots": group.roots,
            "consequences": group.consequences,
            "new": None if since is None else _on_or_after(_first_day(group), since),
            "raise_function": group.functions.most_common(1)[0][0] if group.functions else None,
            "example": group.earliest[2] if group.earliest else None,
            "_runs": group.runs,
        })
    table = pd.DataFrame(rows, columns=[*_table_columns(by), "_runs"])
    if len(table):
        table = _ordered(table, by, dict(zip(roots["run"], keys.loc[roots.index])) if len(roots) else {})
    rates = _daily_rates(table, runs) if by in ("pattern", "fingerprint") and len(table) else None
    table = table.drop(columns="_runs").reindex(columns=_table_columns(by))
    failed = runs["run"].isin(set(df["run"]))
    bad = runs["bad"].fillna(False).astype(bool)
    clean = runs[~failed & ~bad].reset_index(drop=True)
    return Summary(by=by, table=table, runs_total=len(runs), runs_failed=int(failed.sum()),
                   runs_bad=int((bad & ~failed).sum()), clean_runs=clean,
                   bad_files=bad_files.reset_index(drop=True), root_causes=roots[
                       ["run", "day", "signature", "exception_type"]].reset_index(drop=True),
                   since=since, scanned=tables.scanned if tables else 0, cached=tables.cached if tables else 0,
                   daily_rates=rates, examples=examples)


def _daily_rates(table: pd.DataFrame, runs: pd.DataFrame, top: int = 8) -> pd.DataFrame | None:
    """Per day: how many runs there were, and for the `top` signatures the share of those runs
    they hit (a busy day has more failures and more runs; the rate tells a real rise)."""
    days = runs["date"].dt.strftime("%Y-%m-%d")
    if days.isna().all():
        return None
    day_of = dict(zip(runs["run"], days))
    totals = days.value_counts().sort_index()
    rates = pd.DataFrame({"runs": totals})
    for key, hit in zip(table[table.columns[0]][:top], table["_runs"][:top]):
        counts = pd.Series([day_of.get(run) for run in hit], dtype="object").value_counts()
        rates[key] = (counts.reindex(totals.index).fillna(0) / totals).round(4)
    rates.index.name = "day"
    return rates


@dataclass(slots=True)
class _Group:
    """What one group has gathered, row by row (plain Python: pandas per group is slow with many)."""

    incidents: int = 0
    occurrences: int = 0
    roots: int = 0
    consequences: int = 0
    first: Any = None
    last: Any = None
    earliest: tuple | None = None  # (order, message, file:line, (file, incident id)) of the earliest incident
    functions: Counter = field(default_factory=Counter)  # the raise sites' functions
    first_day: Any = None  # the earliest run date, for `new` when the logs carry no times
    runs: set = field(default_factory=set)
    signature_runs: dict[str, set] = field(default_factory=dict)
    hosts: set = field(default_factory=set)
    versions: set = field(default_factory=set)
    types: Counter = field(default_factory=Counter)
    params: dict[str, Counter] = field(default_factory=dict)


def _ordered(table: pd.DataFrame, by: str, root_of_run: dict[str, str]) -> pd.DataFrame:
    """By day in date order; by signature the roots first (most runs first), each consequence right
    after the root cause it most often followed, as `scan` folds an echo under its root."""
    if by == "day":
        return table.sort_values(KEY_COLUMN[by], kind="stable").reset_index(drop=True)
    key = KEY_COLUMN[by]
    table = table.sort_values(["runs", "occurrences", key], ascending=[False, False, True], kind="stable")
    if by not in ("pattern", "fingerprint"):
        return table.reset_index(drop=True)
    follows = [None if roots else _most_common_root(runs, root_of_run, name)
               for name, roots, runs in zip(table[key], table["roots"], table["_runs"])]
    table = table.assign(follows=follows)
    leaders = [name for name, after in zip(table[key], follows) if after is None]
    place = {name: index for index, name in enumerate(leaders)}
    rank = [(place[name], 0) if after is None else (place.get(after, len(leaders)), 1)
            for name, after in zip(table[key], follows)]
    order = sorted(range(len(table)), key=lambda i: rank[i])
    return table.iloc[order].reset_index(drop=True)


def _most_common_root(runs: set[str], root_of_run: dict[str, str], itself: str) -> str | None:
    """The group that was the root cause of most of `runs` (not `itself`), or None."""
    counts = Counter(root_of_run[run] for run in runs if run in root_of_run and root_of_run[run] != itself)
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0] if counts else None


def _gather(df: pd.DataFrame, keys: pd.Series) -> dict[str, _Group]:
    # First and last seen come from the logs' own times: a run dated only by its path has none.
    seen = df["timestamp"]
    columns = {name: df[name].tolist() for name in (
        "run", "signature", "exception_type", "message", "count", "host", "version", "role", "file", "line_start",
        "raise_function", "incident")}
    seen_at, last_at = seen.tolist(), df["last_seen"].fillna(seen).tolist()
    run_days = df["run_date"].tolist()
    params = {c[len(PARAM_PREFIX):]: df[c].tolist() for c in df.columns if c.startswith(PARAM_PREFIX)}
    groups: dict[str, _Group] = {}
    for i, key in enumerate(keys.tolist()):
        group = groups.get(key) or groups.setdefault(key, _Group())
        row = {name: _value(values[i]) for name, values in columns.items()}
        group.incidents += 1
        group.occurrences += row["count"] or 1
        group.roots += row["role"] == "root"
        group.consequences += row["role"] == "consequence"
        group.runs.add(row["run"])
        group.signature_runs.setdefault(row["signature"], set()).add(row["run"])
        for target, value in ((group.hosts, row["host"]), (group.versions, row["version"])):
            if value is not None:
                target.add(value)
        if row["exception_type"] is not None:
            group.types[row["exception_type"]] += 1
        run_day = _value(run_days[i])
        if run_day is not None:
            group.first_day = run_day if group.first_day is None else min(group.first_day, run_day)
        when, until = _value(seen_at[i]), _value(last_at[i])
        if when is not None:
            group.first = when if group.first is None else min(group.first, when)
        if until is not None:
            group.last = until if group.last is None else max(group.last, until)
        order = (when is None, when or 0, row["file"] or "", row["line_start"] or 0)
        if row["message"] is not None and (group.earliest is None or order < group.earliest[0]):
            group.earliest = (order, row["message"], f"{row['file']}:{row['line_start']}" if row["file"] else None,
                              (row["file"], row["incident"]))
        if row["raise_function"] is not None:
            group.functions[row["raise_function"]] += 1
        for name, values in params.items():
            value = _value(values[i])
            if value is not None:
                group.params.setdefault(name, Counter())[value] += 1
    return groups


def _on_or_after(day: date | None, since: date) -> bool:
    return day is not None and day >= since


def _first_day(group: _Group) -> date | None:
    first = group.first if group.first is not None else group.first_day
    return None if first is None else pd.Timestamp(first).date()


def _value(value: Any) -> Any:
    """pandas' missing markers (NA, NaT, NaN) as None."""
    return None if value is None or value is pd.NA or value is pd.NaT or value != value else value


def per_day(report: Summary, top: int = 6) -> pd.DataFrame:
    """Failed runs per day (rows) by root-cause signature (columns); the rest as `other`."""
    roots = report.root_causes.dropna(subset=["day"])
    if roots.empty:
        return pd.DataFrame()
    leaders = list(roots["signature"].value_counts().index[:top])
    label = roots["signature"].where(roots["signature"].isin(leaders), "other")
    table = pd.crosstab(roots["day"], label)
    return table[[c for c in leaders + ["other"] if c in table.columns]]


def root_cause_counts(report: Summary, top: int = 10) -> list[tuple[str, int]]:
    """Signatures by how many runs they were the root cause of."""
    counts = report.root_causes["signature"].value_counts()
    return [(str(sig), int(n)) for sig, n in counts.iloc[:top].items()]


def _keys(df: pd.DataFrame, by: str) -> pd.Series:
    if by == "pattern":
        keys = df["signature"]
    elif by == "fingerprint":
        keys = df["fingerprint"]
    elif by == "day":
        keys = df["run_date"].fillna(df["timestamp"]).dt.strftime("%Y-%m-%d")
    else:
        keys = df[by]
    return keys.astype("object").where(keys.notna(), UNKNOWN).astype(str)


def _run_keys(runs: pd.DataFrame, by: str) -> pd.Series:
    if by not in _RUN_KEY:
        return pd.Series(UNKNOWN, index=runs.index)
    column = runs[_RUN_KEY[by]]
    keys = column.dt.strftime("%Y-%m-%d") if by == "day" else column
    return keys.astype("object").where(keys.notna(), UNKNOWN).astype(str)


def _root_causes(df: pd.DataFrame) -> pd.DataFrame:
    """Each failed run's root cause: its earliest run-root incident, else its earliest incident."""
    if df.empty:
        return df.assign(day=pd.Series(dtype="string"))
    ordered = df.assign(_not_root=~df["is_run_root"].fillna(False).astype(bool)).sort_values(
        ["_not_root", "timestamp", "file", "line_start"], na_position="last", kind="stable")
    picked = ordered.drop_duplicates("run")
    day = picked["run_date"].fillna(picked["timestamp"]).dt.strftime("%Y-%m-%d")
    return picked.drop(columns="_not_root").assign(day=day)


def _most_frequent(counts: Counter, top: int) -> list[list[Any]]:
    """[[value, count], ...], most frequent first, ties in text order (stable across runs)."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:top]
    return [[_plain(value), count] for value, count in ranked]


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _table_columns(by: str) -> list[str]:
    return [KEY_COLUMN[by], "exception_type", "message", "signatures", "incidents", "occurrences", "runs",
            "of_runs", "runs_pct", "run_roots", "first_seen", "last_seen", "hosts", "versions",
            "top_signatures", "top_params", "roots", "consequences", "follows", "new", "raise_function", "example"]


def _runs_seen(df: pd.DataFrame) -> pd.DataFrame:
    """Without the scan's run table (a frame from elsewhere), the runs are those with incidents."""
    first = df.drop_duplicates("run")
    return pd.DataFrame({"run": first["run"], "host": first["host"], "version": first["version"],
                         "date": first["run_date"], "failed": True, "bad": False}).reset_index(drop=True)


def _empty(columns: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})
