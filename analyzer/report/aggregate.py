"""The fleet report: per signature (or host, day, version), how often, on how many runs, since
when, where, with which values; the runs without errors; the runs that could not be read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from analyzer.core.runconfig import RunConfig
from analyzer.report.choices import BY
from analyzer.report.fleetrows import BAD_FILE_COLUMNS, PARAM_PREFIX, RUN_COLUMNS, FleetRows
from analyzer.report.rows import IncidentRow

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["summary", "summarise", "Summary", "Example", "BY", "KEY_COLUMN", "UNKNOWN", "per_day", "root_cause_counts"]

KEY_COLUMN = {"pattern": "signature", "fingerprint": "fingerprint", "host": "host", "day": "day",
              "version": "version"}
UNKNOWN = "(unknown)"
_RUN_KEY = {"host": "host", "version": "version", "day": "date"}  # the runs table's column for a key
_ROOT_COLUMNS = ["run", "day", "signature", "exception_type"]


@dataclass(frozen=True, slots=True)
class Example:
    """A group's earliest incident as the scan kept it, and the configuration of the run it came from:
    what an explanation of the group fills its values and fixes with."""

    file: str
    row: IncidentRow
    run: RunConfig | None


@dataclass(frozen=True, slots=True, eq=False)
class Summary:
    """The report as plain records; the same tables as pandas frames (`table`, `clean_runs`,
    `bad_files`, `root_causes`, `daily_rates`) are built on first use, so that a report that
    writes JSON or text never imports pandas."""

    by: str
    groups: tuple[dict[str, Any], ...]  # one per group, most runs first (by day: in date order)
    runs_total: int  # = runs_failed + len(clean) + runs_bad: every run is in exactly one bucket
    runs_failed: int  # runs with an error (a half-written log's errors count)
    runs_bad: int  # runs with a bad file and no error found
    clean: tuple[dict[str, Any], ...]  # no error and no bad file: the run table's records (run, host, date, ...)
    bad: tuple[dict[str, Any], ...]  # run, file, status, detail: every bad file, its run failed or not
    roots: tuple[dict[str, Any], ...]  # one per failed run: run, day, signature, exception_type
    since: date | None = None  # signatures first seen on or after it are `new`
    scanned: int = 0
    cached: int = 0
    rates: tuple[dict[str, int], dict[str, dict[str, float]]] | None = None  # runs per day; key -> day -> share
    examples: Mapping[str, Example] = field(default_factory=dict)  # group key -> its earliest incident, when known
    _frames: dict[str, Any] = field(default_factory=dict, repr=False)  # the pandas views, once built

    @property
    def key(self) -> str:
        return KEY_COLUMN[self.by]

    # The frames import pandas (through report/frame.py) when first asked for, and are kept.
    @property
    def table(self) -> pd.DataFrame:
        from analyzer.report.frame import plain_frame

        return self._kept("table", lambda: plain_frame(self.groups, _table_columns(self.by)))

    @property
    def clean_runs(self) -> pd.DataFrame:
        from analyzer.report.frame import typed_frame

        return self._kept("clean_runs", lambda: typed_frame(self.clean, RUN_COLUMNS))

    @property
    def bad_files(self) -> pd.DataFrame:
        from analyzer.report.frame import typed_frame

        return self._kept("bad_files", lambda: typed_frame(self.bad, BAD_FILE_COLUMNS))

    @property
    def root_causes(self) -> pd.DataFrame:
        from analyzer.report.frame import plain_frame

        return self._kept("root_causes", lambda: plain_frame(self.roots, _ROOT_COLUMNS))

    @property
    def daily_rates(self) -> pd.DataFrame | None:
        """day -> `runs` that day, and per signature the share of them it hit."""
        from analyzer.report.frame import rates_frame

        rates = self.rates
        return None if rates is None else self._kept("daily_rates", lambda: rates_frame(*rates))

    def _kept(self, name: str, build: Callable[[], Any]) -> Any:
        if name not in self._frames:
            self._frames[name] = build()
        return self._frames[name]


def summary(df: pd.DataFrame, by: str = "pattern", since: date | None = None, top: int = 3) -> Summary:
    """Aggregate an `incidents_frame`. `top` is how many values of each parameter are kept."""
    from analyzer.report.frame import fleet_tables, frame_records

    tables = fleet_tables(df)
    incidents = frame_records(df)
    param_types = {c[len(PARAM_PREFIX):]: str(df[c].dtype) for c in df.columns if c.startswith(PARAM_PREFIX)}
    if tables is None:  # a frame from elsewhere: the runs are those with incidents
        runs: dict[str, dict[str, Any]] = {}
        for row in incidents:
            runs.setdefault(row["run"], {"run": row["run"], "host": row["host"], "version": row["version"],
                                         "date": row["run_date"], "failed": True, "bad": False})
        fleet = FleetRows(tuple(incidents), tuple(runs.values()), (), param_types)
    else:
        fleet = FleetRows(tuple(incidents), tuple(frame_records(tables.runs)), tuple(frame_records(tables.bad_files)),
                          param_types, scanned=tables.scanned, cached=tables.cached, problems=tables.problems,
                          rows=tables.rows, configs=tables.configs)
    return summarise(fleet, by, since, top)


def summarise(fleet: FleetRows, by: str = "pattern", since: date | None = None, top: int = 3) -> Summary:
    """Aggregate the fleet's rows (`summary` does the same for a frame)."""
    if by not in BY:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(BY)}")
    incidents, runs = fleet.incidents, fleet.runs
    keys = [_key(row, by) for row in incidents]
    roots = _root_causes(incidents)
    root_counts = Counter(keys[i] for i in roots)
    runs_by_key: dict[str, set[str]] = {}
    for run in runs:
        runs_by_key.setdefault(_run_key(run, by), set()).add(run["run"])
    groups = _gather(incidents, keys, fleet.param_types)
    examples: dict[str, Example] = {}
    for key, group in groups.items():
        if group.earliest is not None and group.earliest[3] in fleet.rows:
            file, incident = group.earliest[3]
            examples[key] = Example(file, fleet.rows[file, incident], fleet.configs.get(file))
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
            "follows": None,
            "new": None if since is None else _on_or_after(_first_day(group), since),
            "raise_function": group.functions.most_common(1)[0][0] if group.functions else None,
            "example": group.earliest[2] if group.earliest else None,
            "_runs": group.runs,
        })
    rows = _ordered(rows, by, {incidents[i]["run"]: keys[i] for i in roots})
    rates = _daily_rates(rows, runs, KEY_COLUMN[by]) if by in ("pattern", "fingerprint") and rows else None
    failed = {row["run"] for row in incidents}
    clean = tuple(run for run in runs if run["run"] not in failed and not run["bad"])
    return Summary(by=by, groups=tuple({k: v for k, v in row.items() if k != "_runs"} for row in rows),
                   runs_total=len(runs), runs_failed=sum(run["run"] in failed for run in runs),
                   runs_bad=sum(bool(run["bad"]) and run["run"] not in failed for run in runs), clean=clean,
                   bad=fleet.bad_files, roots=tuple(_root_record(incidents[i]) for i in roots), since=since,
                   scanned=fleet.scanned, cached=fleet.cached, rates=rates, examples=examples)


def _daily_rates(rows: list[dict[str, Any]], runs: tuple[dict[str, Any], ...], key: str, top: int = 8
                 ) -> tuple[dict[str, int], dict[str, dict[str, float]]] | None:
    """Per day: how many runs there were, and for the `top` signatures the share of those runs
    they hit (a busy day has more failures and more runs; the rate tells a real rise)."""
    day_of = {run["run"]: _day(run["date"]) for run in runs}
    totals = dict(sorted(Counter(day for day in day_of.values() if day is not None).items()))
    if not totals:
        return None
    shares = {}
    for row in rows[:top]:
        hits = Counter(day_of.get(run) for run in row["_runs"])
        shares[row[key]] = {day: round(hits.get(day, 0) / total, 4) for day, total in totals.items()}
    return totals, shares


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


def _ordered(rows: list[dict[str, Any]], by: str, root_of_run: dict[str, str]) -> list[dict[str, Any]]:
    """By day in date order; by signature the roots first (most runs first), each consequence right
    after the root cause it most often followed, as `scan` folds an echo under its root."""
    key = KEY_COLUMN[by]
    if by == "day":
        return sorted(rows, key=lambda row: row[key])
    rows = sorted(rows, key=lambda row: (-row["runs"], -row["occurrences"], row[key]))
    if by not in ("pattern", "fingerprint"):
        return rows
    for row in rows:
        row["follows"] = None if row["roots"] else _most_common_root(row["_runs"], root_of_run, row[key])
    leaders = [row[key] for row in rows if row["follows"] is None]
    place = {name: index for index, name in enumerate(leaders)}
    return sorted(rows, key=lambda row: (place[row[key]], 0) if row["follows"] is None
                  else (place.get(row["follows"], len(leaders)), 1))


def _most_common_root(runs: set[str], root_of_run: dict[str, str], itself: str) -> str | None:
    """The group that was the root cause of most of `runs` (not `itself`), or None."""
    counts = Counter(root_of_run[run] for run in runs if run in root_of_run and root_of_run[run] != itself)
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0] if counts else None


def _gather(incidents: tuple[dict[str, Any], ...], keys: list[str], names: Iterable[str]) -> dict[str, _Group]:
    # First and last seen come from the logs' own times: a run dated only by its path has none.
    params = [(PARAM_PREFIX + name, name) for name in names]
    groups: dict[str, _Group] = {}
    for row, key in zip(incidents, keys):
        group = groups.get(key) or groups.setdefault(key, _Group())
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
        run_day = row["run_date"]
        if run_day is not None:
            group.first_day = run_day if group.first_day is None else min(group.first_day, run_day)
        when = row["timestamp"]
        until = row["last_seen"] if row["last_seen"] is not None else when
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
        for column, name in params:
            value = row.get(column)
            if value is not None:
                group.params.setdefault(name, Counter())[value] += 1
    return groups


def _on_or_after(day: date | None, since: date) -> bool:
    return day is not None and day >= since


def _first_day(group: _Group) -> date | None:
    first = group.first if group.first is not None else group.first_day
    return None if first is None else first.date()


def per_day(report: Summary, top: int = 6) -> pd.DataFrame:
    """Failed runs per day (rows) by root-cause signature (columns); the rest as `other`."""
    import pandas as pd

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


def _key(row: dict[str, Any], by: str) -> str:
    if by == "pattern":
        key = row["signature"]
    elif by == "fingerprint":
        key = row["fingerprint"]
    elif by == "day":
        key = _day(row["run_date"] if row["run_date"] is not None else row["timestamp"])
    else:
        key = row[by]
    return UNKNOWN if key is None else str(key)


def _run_key(run: dict[str, Any], by: str) -> str:
    if by not in _RUN_KEY:
        return UNKNOWN
    key = _day(run["date"]) if by == "day" else run[_RUN_KEY[by]]
    return UNKNOWN if key is None else str(key)


def _day(stamp: datetime | None) -> str | None:
    return None if stamp is None else stamp.strftime("%Y-%m-%d")


def _root_causes(incidents: tuple[dict[str, Any], ...]) -> list[int]:
    """Each failed run's root cause (by index): its earliest run-root incident, else its earliest
    incident; in that order, missing times, files and lines last."""
    def order(i: int) -> tuple:
        row = incidents[i]
        return (not row["is_run_root"], *((value is None, value) for value in (
            row["timestamp"], row["file"], row["line_start"])))

    picked: dict[str, int] = {}
    for i in sorted(range(len(incidents)), key=order):
        picked.setdefault(incidents[i]["run"], i)
    return list(picked.values())


def _root_record(row: dict[str, Any]) -> dict[str, Any]:
    return {"run": row["run"], "day": _day(row["run_date"] if row["run_date"] is not None else row["timestamp"]),
            "signature": row["signature"], "exception_type": row["exception_type"]}


def _most_frequent(counts: Counter, top: int) -> list[list[Any]]:
    """[[value, count], ...], most frequent first, ties in text order (stable across runs)."""
    return [[value, count] for value, count in sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:top]]


def _table_columns(by: str) -> list[str]:
    return [KEY_COLUMN[by], "exception_type", "message", "signatures", "incidents", "occurrences", "runs",
            "of_runs", "runs_pct", "run_roots", "first_seen", "last_seen", "hosts", "versions",
            "top_signatures", "top_params", "roots", "consequences", "follows", "new", "raise_function", "example"]
