"""The fleet report against a generated fleet whose failures are known: every count must match."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pandas as pd
import pytest

from analyzer.report import fleet_tables, incidents_frame, restrict, summary
from analyzer.report.aggregate import per_day, root_cause_counts
from tests.fleet import FIRST_DAY, NEW_FROM, PATH_REGEX, write_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_fleet(tmp_path_factory.mktemp("fleet"), runs=240, seed=11)


@pytest.fixture(scope="module")
def df(fleet, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache") / "report.sqlite"
    return incidents_frame([str(fleet.root)], path_regex=PATH_REGEX, jobs=1, cache=cache)


def by_key(report):
    return {row[report.key]: row for row in report.table.to_dict("records")}


def signature_of(row) -> str:
    """The truth names unknown errors by exception type; the report by fingerprint."""
    return row["signature"] if not row["signature"].startswith(row["exception_type"] + "@") else row["exception_type"]


def test_every_run_is_counted_once(fleet, df):
    report = summary(df)
    assert report.runs_total == len(fleet.runs) == 240
    assert set(fleet_tables(df).runs["run"]) == {r.run for r in fleet.runs}
    assert report.runs_failed == sum(1 for r in fleet.runs if r.expected)
    assert set(report.clean_runs["run"]) == fleet.clean()
    assert isinstance(report.clean_runs, pd.DataFrame) and isinstance(report.bad_files, pd.DataFrame)
    # every run in exactly one bucket: with errors, without, bad
    assert report.runs_failed + len(report.clean_runs) + report.runs_bad == report.runs_total
    assert report.runs_bad == sum(1 for r in fleet.runs if r.status != "ok" and not r.expected)


def test_runs_affected_and_occurrences_per_signature_equal_the_truth(fleet, df):
    rows = {signature_of(row): row for row in summary(df).table.to_dict("records")}
    assert set(rows) == fleet.signatures()
    for signature, row in rows.items():
        assert row["runs"] == len(fleet.runs_with(signature)), signature
        assert row["occurrences"] == fleet.occurrences(signature), signature
        assert row["runs_pct"] == round(100 * row["runs"] / 240, 1)
        hosts = {r.host for r in fleet.runs if r.run in fleet.runs_with(signature)}
        assert row["hosts"] == sorted(hosts), signature
        first_day = min(r.day for r in fleet.runs if r.run in fleet.runs_with(signature))
        if signature == "python.argparse-invalid-choice":  # its logs carry no times: none is invented
            assert pd.isna(row["first_seen"]) and pd.isna(row["last_seen"])
        else:
            assert row["first_seen"].date() == first_day, signature


def test_each_incident_is_found_in_its_file_with_its_role_and_count(fleet, df):
    found = Counter((row.run, row.file.rsplit("/", 1)[-1], row.pattern_id if pd.notna(row.pattern_id) else None,
                     row.exception_type, row.role, row.count) for row in df.itertuples())
    expected = Counter((r.run, e.file, e.pattern_id, e.exception_type, e.role, e.count)
                       for r in fleet.runs for e in r.expected)
    assert found == expected


def test_root_cause_of_each_failed_run(fleet, df):
    report = summary(df)
    roots = dict(zip(report.root_causes["run"], report.root_causes["signature"]))
    known = {row.signature: row.exception_type for row in df.itertuples()}
    named = {run: known[sig] if sig.startswith(known[sig] + "@") else sig for run, sig in roots.items()}
    assert named == {r.run: r.signature for r in fleet.runs if r.expected}
    assert dict(root_cause_counts(report)) == {
        sig: n for sig, n in Counter(roots.values()).items()}
    assert by_key(report)["torch.nccl-watchdog-timeout"]["run_roots"] == 0  # an echo, never the root


def test_top_parameter_values_are_the_injected_ones(fleet, df):
    row = by_key(summary(df, top=5))["sglang.deepseek-v4-cp-a2a-backend"]
    truth = fleet.param_counts("sglang.deepseek-v4-cp-a2a-backend", "moe_a2a_backend")
    assert {value: count for value, count in row["top_params"]["moe_a2a_backend"]} == dict(truth)
    choices = by_key(summary(df, top=5))["python.argparse-invalid-choice"]["top_params"]["value"]
    assert dict(map(tuple, choices)) == dict(fleet.param_counts("python.argparse-invalid-choice", "value"))
    top1 = by_key(summary(df, top=1))["sglang.deepseek-v4-cp-a2a-backend"]["top_params"]["moe_a2a_backend"]
    assert top1 == [list(truth.most_common(1)[0])]


def test_bad_runs_are_listed_with_their_status_never_dropped(fleet, df):
    report = summary(df)
    assert dict(zip(report.bad_files["run"], report.bad_files["status"])) == fleet.bad()
    assert report.bad_files["run"].nunique() == len(fleet.bad())
    half = {r.run for r in fleet.runs if r.kind == "half_written_failure"}
    assert half and half <= set(df["run"])  # a half-written log's errors still count


def test_grouped_by_host_day_and_version(fleet, df):
    for by, attr in (("host", "host"), ("day", "day"), ("version", "version")):
        report = summary(df, by=by)
        rows = by_key(report)
        runs_of = Counter(str(getattr(r, attr) or "(unknown)") for r in fleet.runs)
        failed_of = Counter(str(getattr(r, attr) or "(unknown)") for r in fleet.runs if r.expected)
        assert {k: row["runs"] for k, row in rows.items()} == dict(failed_of), by
        assert {k: row["of_runs"] for k, row in rows.items()} == {k: runs_of[k] for k in failed_of}, by
    days = list(summary(df, by="day").table["day"])
    assert days == sorted(days)


def test_failed_runs_per_day_by_root_cause_for_the_chart(fleet, df):
    table = per_day(summary(df), top=10)
    truth = Counter((r.day.isoformat(), r.signature) for r in fleet.runs if r.expected)
    known = {row.signature: row.exception_type for row in df.itertuples()}
    got = Counter()
    for day, counts in table.iterrows():
        for sig, n in counts.items():
            if n:
                got[(day, known[sig] if sig.startswith(known[sig] + "@") else sig)] = n
    assert got == truth


def test_new_since_marks_only_what_began_after_the_date(df):
    since = FIRST_DAY + timedelta(days=NEW_FROM)
    rows = summary(df, since=since).table
    assert list(rows.loc[rows["new"], "exception_type"]) == ["KeyError"]
    assert summary(df).table["new"].isna().all()


def test_restrict_to_a_date_range_keeps_those_runs_only(fleet, df):
    start, end = FIRST_DAY + timedelta(days=2), FIRST_DAY + timedelta(days=3)
    window = restrict(df, start, end)
    inside = {r.run for r in fleet.runs if start <= r.day <= end}
    assert set(fleet_tables(window).runs["run"]) == inside
    assert set(window["run"]) == {r.run for r in fleet.runs if r.run in inside and r.expected}
    assert summary(window).runs_total == len(inside)


def test_columns_are_typed(df):
    assert str(df["timestamp"].dtype).startswith("datetime64")
    assert str(df["run_date"].dtype).startswith("datetime64")
    assert df["count"].dtype == "Int64" and df["rank_count"].dtype == "Int64"
    assert df["is_run_root"].dtype == "boolean"
    assert df["run"].dtype == "string" and df["signature"].dtype == "string"
    assert df["param.gpu"].dtype == "Int64"
    assert df["param.moe_a2a_backend"].dtype == "string"
    oom = df[df["pattern_id"] == "torch.cuda-out-of-memory"]
    assert oom["raise_site"].eq("sglang/srt/layers/logits_processor.py:517").all()
    assert oom["blame_site"].notna().all()
    nccl = df[df["pattern_id"] == "torch.nccl-watchdog-timeout"]
    assert (nccl["rank_count"] == nccl["count"]).all()


def test_frame_survives_pandas_operations_with_its_run_table(df):
    both = pd.concat([df, df])
    assert fleet_tables(both) is fleet_tables(df)
    assert fleet_tables(df.copy(deep=True)) is fleet_tables(df)
    assert fleet_tables(df[df["role"] == "root"]) is fleet_tables(df)


def test_a_frame_without_its_run_table_still_summarises(fleet, df):
    bare = df.copy()
    bare.attrs = {}
    report = summary(bare)
    failed = {r.run for r in fleet.runs if r.expected}
    assert report.runs_total == report.runs_failed == len(failed)
    assert report.clean_runs.empty and report.bad_files.empty
    assert list(report.table["runs"]) == list(summary(df).table["runs"])
