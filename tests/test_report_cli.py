"""`analyzer report` end to end: every output format, and bad arguments as one-line errors."""

from __future__ import annotations

import io
import json
import re
import sys
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from analyzer.cli import main
from analyzer.report import fleet as fleet_module
from tests.fleet import FIRST_DAY, PATH_REGEX, write_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_fleet(tmp_path_factory.mktemp("fleet"), runs=60, seed=9)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """The default report cache, moved out of the home directory (the pattern cache stays)."""
    path = tmp_path / "default-cache" / "report.sqlite"
    monkeypatch.setattr(fleet_module, "default_cache_path", lambda: path)
    return path


def report(capsys, fleet, *args):
    code = main(["report", str(fleet.root), "--path-regex", PATH_REGEX, "-j", "1", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_terminal_table_names_each_signature_with_its_runs(capsys, fleet):
    code, out, err = report(capsys, fleet)
    assert code == 0 and err == ""
    assert out.startswith("Fleet report by pattern: 60 run(s): ")
    a2a = fleet.runs_with("sglang.deepseek-v4-cp-a2a-backend")
    assert re.search(rf"^{len(a2a)}/60 \(.*  sglang\.deepseek-v4-cp-a2a-backend$", out, re.M)
    backends = fleet.param_counts("sglang.deepseek-v4-cp-a2a-backend", "moe_a2a_backend")
    value, count = sorted(backends.items(), key=lambda item: (-item[1], item[0]))[0]
    assert f"moe_a2a_backend={value} ({count})" in out
    assert f"{len(fleet.bad())} bad file(s) (" in out


def test_the_default_cache_is_used_on_the_second_run(capsys, fleet, private_cache):
    report(capsys, fleet)
    _, out, _ = report(capsys, fleet)
    assert "from cache" in out
    assert private_cache.is_file()


def test_csv_of_the_summary_and_of_every_run(capsys, fleet):
    _, out, _ = report(capsys, fleet, "--format", "csv")
    table = pd.read_csv(io.StringIO(out))
    row = table.set_index("signature").loc["python.argparse-invalid-choice"]
    assert row["runs"] == len(fleet.runs_with("python.argparse-invalid-choice"))
    assert dict(json.loads(row["top_params"])["value"]) == dict(fleet.param_counts("python.argparse-invalid-choice",
                                                                                  "value").most_common(3))
    assert json.loads(row["hosts"]) == sorted({r.host for r in fleet.runs
                                               if r.run in fleet.runs_with("python.argparse-invalid-choice")})
    _, out, _ = report(capsys, fleet, "--format", "csv", "--rows", "runs")
    runs = pd.read_csv(io.StringIO(out))
    assert len(runs) == 60 and set(runs["run"]) == {r.run for r in fleet.runs}


def test_parquet_keeps_the_column_types(capsys, fleet, tmp_path):
    target = tmp_path / "incidents.parquet"
    code, out, _ = report(capsys, fleet, "--rows", "incidents", "-o", str(target))
    assert code == 0 and out == ""
    df = pd.read_parquet(target)
    assert len(df) == sum(len(r.expected) for r in fleet.runs)
    assert str(df["timestamp"].dtype).startswith("datetime64") and str(df["count"].dtype) in ("Int64", "int64")
    summary_file = tmp_path / "summary.parquet"
    report(capsys, fleet, "-o", str(summary_file))
    assert set(pd.read_parquet(summary_file)["signature"]) >= {"sglang.deepseek-v4-cp-a2a-backend"}


def test_json_report_has_runs_groups_and_bad_files(capsys, fleet):
    _, out, _ = report(capsys, fleet, "--format", "json", "--by", "host")
    data = json.loads(out)
    assert data["by"] == "host"
    bad_only = {r.run for r in fleet.runs if r.status != "ok" and not r.expected}
    assert data["runs"]["total"] == 60 and data["runs"]["bad"] == len(bad_only)
    assert sum(data["runs"][bucket] for bucket in ("with_errors", "without_errors", "bad")) == 60
    assert set(data["clean_runs"]) == fleet.clean()
    assert {b["run"]: b["status"] for b in data["bad_files"]} == fleet.bad()
    assert sum(g["runs"] for g in data["groups"]) == sum(1 for r in fleet.runs if r.expected)


def test_markdown_report(capsys, fleet):
    _, out, _ = report(capsys, fleet, "--format", "md", "--new-since", (FIRST_DAY.replace(day=30)).isoformat())
    assert out.startswith("# Fleet report by pattern\n")
    assert "| signature | exception | runs |" in out
    assert "## New since 2026-08-30" in out
    assert f"## Bad files ({len(fleet.bad())})" in out


def test_html_report_is_self_contained_with_two_charts(capsys, fleet, tmp_path):
    target = tmp_path / "report.html"
    assert report(capsys, fleet, "-o", str(target))[0] == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page and not re.search(r"""src=["']?https?:""", page)
    # the only way out is a link a reader follows (a signature's source at its release), never a resource
    assert all(match.group(1) == "a" for match in re.finditer(r"""<(\w+)[^>]*\bhref=["']?https?:""", page))
    charts = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(charts) == 2
    for chart in charts:
        ET.fromstring(chart)  # well-formed SVG
    assert "Failed runs per day, by root cause" in page and "Top root causes" in page
    days = {r.day.isoformat()[5:] for r in fleet.runs if r.expected}
    assert all(f">{day}</text>" in charts[0] for day in days)


def test_date_range_limits_the_runs(capsys, fleet):
    day = FIRST_DAY.isoformat()
    _, out, _ = report(capsys, fleet, "--format", "json", "--from", day, "--to", day)
    assert json.loads(out)["runs"]["total"] == sum(1 for r in fleet.runs if r.day == FIRST_DAY)


def test_a_missing_path_is_reported_and_the_rest_still_is(capsys, fleet, tmp_path):
    code = main(["report", str(fleet.root), str(tmp_path / "nope"), "-j", "1", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert err == f"analyzer: warning: {tmp_path / 'nope'}: no such file or directory\n"
    assert json.loads(out)["runs"]["total"] == 60


def test_parquet_without_pyarrow_names_the_extra(capsys, fleet, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what `import pyarrow` meets when it is not installed
    code = main(["report", str(fleet.root), "--no-cache", "-o", str(tmp_path / "x.parquet")])
    assert code == 2 and not (tmp_path / "x.parquet").exists()
    assert capsys.readouterr().err == "analyzer: error: Parquet output needs pyarrow: pip install 'analyzer[parquet]'\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--path-regex", "(?P<rank>x)"], "analyzer: error: path regex group(s) rank not known"),
    (["--path-regex", "(unclosed"], "analyzer: error: invalid path regex '(unclosed'"),
    (["--format", "parquet"], "analyzer: error: --format parquet needs --output FILE"),
    (["--scheduler", "tcp://x:1"], "analyzer: error: --scheduler goes with --engine dask"),
    (["--from", "last week"], "analyzer: error: argument --from: not a date: 'last week'"),
])
def test_bad_arguments_are_one_line_and_exit_2(capsys, fleet, args, message):
    try:
        code = main(["report", str(fleet.root), "--no-cache", *args])
    except SystemExit as exit:  # argparse's own checks end this way
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1


def test_an_output_file_that_cannot_be_written_is_one_line(capsys, fleet, tmp_path):
    target = tmp_path / "missing-dir" / "report.html"
    code, out, err = report(capsys, fleet, "-o", str(target))
    assert code == 2 and out == ""
    assert err == f"analyzer: error: {target}: No such file or directory\n"
