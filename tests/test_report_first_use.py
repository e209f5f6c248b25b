"""`analyzer report` as a first-time user met it (issue 21): totals, order, outputs, hosts."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pandas as pd
import pytest

from analyzer.cli import main
from analyzer.report import incidents_frame, summary
from analyzer.sinks.kb.paths import kb_href
from tests.fleet import FIRST_DAY, NEW_FROM, write_fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_fleet(tmp_path_factory.mktemp("fleet"), runs=60, seed=9)


def report(capsys, fleet, *args):
    code = main(["report", str(fleet.root), "--no-cache", "-j", "1", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_headline_buckets_add_up_to_the_runs(capsys, fleet):
    _, out, _ = report(capsys, fleet)
    found = re.search(r"(\d+) run\(s\): (\d+) with errors \([\d.]+%\), (\d+) without, (\d+) bad", out)
    total, failed, clean, bad = map(int, found.groups())
    assert total == 60 and failed + clean + bad == total
    assert failed == sum(1 for r in fleet.runs if r.expected)


def test_roots_come_first_and_a_consequence_folds_under_its_root(capsys, fleet):
    _, out, _ = report(capsys, fleet)
    names = re.findall(r"^\S.*?  (↳ )?(\S+)(?: NEW)?$", out, re.M)[1:]  # the header line names no signature
    signatures = [name for _, name in names]
    nccl = signatures.index("torch.nccl-watchdog-timeout")
    assert names[nccl][0] == "↳ "
    assert all(not fold for fold, _ in names[:nccl])  # nothing but roots above it
    table = summary(incidents_frame([str(fleet.root)], jobs=1, cache=False)).table.set_index("signature")
    assert table.loc["torch.nccl-watchdog-timeout", "follows"] == signatures[nccl - 1]  # right under its root
    assert table.loc["torch.nccl-watchdog-timeout", "run_roots"] == 0


def test_hosts_come_from_directories_named_like_machines_without_a_path_regex(capsys, fleet):
    _, out, _ = report(capsys, fleet, "--by", "host", "--format", "json")
    hosts = {group["host"] for group in json.loads(out)["groups"]}
    assert hosts == {r.host for r in fleet.runs if r.expected}
    assert "(unknown)" not in hosts


def test_report_says_what_it_wrote(capsys, fleet, tmp_path):
    target = tmp_path / "report.html"
    code, out, err = report(capsys, fleet, "-o", str(target))
    assert code == 0 and out == ""
    assert err == f"analyzer: wrote the summary (html) to {target}\n"


def test_xlsx_is_a_real_excel_workbook(capsys, fleet, tmp_path):
    pytest.importorskip("openpyxl")
    target = tmp_path / "summary.xlsx"
    code, _, err = report(capsys, fleet, "-o", str(target))
    assert code == 0 and "wrote" in err
    assert target.read_bytes()[:2] == b"PK"  # a zip container, as every .xlsx is
    sheet = pd.read_excel(target, engine="openpyxl")
    assert "torch.nccl-watchdog-timeout" in set(sheet["signature"])
    runs = tmp_path / "runs.xlsx"
    assert report(capsys, fleet, "-o", str(runs), "--rows", "runs")[0] == 0
    assert len(pd.read_excel(runs, engine="openpyxl")) == 60


def test_an_unknown_output_extension_is_refused(capsys, fleet, tmp_path):
    target = tmp_path / "report.docx"
    code, _, err = report(capsys, fleet, "-o", str(target))
    assert code == 2 and not target.exists()
    assert err.startswith(f"analyzer: error: cannot tell the format of {target}") and err.count("\n") == 1


def test_excel_without_openpyxl_says_which_extra_to_install(capsys, fleet, tmp_path, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openpyxl" else real(name, *a))
    code, _, err = report(capsys, fleet, "-o", str(tmp_path / "x.xlsx"))
    assert code == 2 and "pip install 'analyzer[excel]'" in err


def test_pandas_columns_are_lists_and_tables_are_frames(fleet):
    df = incidents_frame([str(fleet.root)], jobs=1, cache=False)
    assert all(isinstance(ranks, list) for ranks in df["ranks"])
    assert any(len(ranks) > 1 for ranks in df["ranks"])
    report = summary(df)
    assert isinstance(report.clean_runs, pd.DataFrame) and isinstance(report.bad_files, pd.DataFrame)
    assert {"run", "host", "date"} <= set(report.clean_runs.columns)


def test_html_report_has_rates_labels_new_marks_and_links(capsys, fleet, tmp_path):
    target = tmp_path / "report.html"
    since = FIRST_DAY + timedelta(days=NEW_FROM)  # when the fleet's new failure first appears
    assert report(capsys, fleet, "-o", str(target), "--new-since", since.isoformat())[0] == 0
    page = target.read_text(encoding="utf-8")
    # the same totals as the terminal
    _, out, _ = report(capsys, fleet)
    assert out.splitlines()[0].split(": ", 1)[1] in page
    # dates and host names never break inside; nothing breaks words apart that fit
    assert "td.nowrap { white-space: nowrap; }" in page and "break-all" not in page
    # a time folds between its date and its hour only, never inside the date
    assert re.search(r'<td><span class="unbroken">\d{4}-\d\d-\d\d</span> <span class="unbroken">\d\d:\d\d</span></td>', page)
    assert ".unbroken { white-space: nowrap; }" in page
    # every known signature links to its page and to one example log line
    df = incidents_frame([str(fleet.root)], jobs=1, cache=False)
    for pattern_id in set(df["pattern_id"].dropna()):
        assert f'<a href="{kb_href(pattern_id)}"><code>{pattern_id}</code></a>' in page
    examples = re.findall(r'e\.g\. <a href="file://([^"]+)">([^<]+):(\d+)</a>', page)
    assert examples and all(href == path and int(line) >= 1 for href, path, line in examples)
    assert '<span class="new">NEW</span>' in page
    assert "<h2>Failure rate per day</h2>" in page
    # an unknown error reads as its type and function, the fingerprint beside it (no packs: all unknown)
    bare = tmp_path / "bare.html"
    assert report(capsys, fleet, "-o", str(bare), "--no-builtin")[0] == 0
    assert re.search(r"<b>KeyError in load_weights</b> <code class=\"fp\">KeyError@load_weights:\w+</code>",
                     bare.read_text(encoding="utf-8"))


def test_daily_failure_rates_are_runs_hit_over_runs_that_day(fleet):
    report = summary(incidents_frame([str(fleet.root)], jobs=1, cache=False))
    rates = report.daily_rates
    for day, row in rates.iterrows():
        that_day = [r for r in fleet.runs if r.day.isoformat() == day]
        assert row["runs"] == len(that_day)
        hit = fleet.runs_with("sglang.deepseek-v4-cp-a2a-backend")
        assert row["sglang.deepseek-v4-cp-a2a-backend"] == round(sum(r.run in hit for r in that_day) / len(that_day), 4)


def test_html_report_explains_each_signature_as_scan_does(capsys, fleet, tmp_path):
    """One view (core/view.py) for the group's earliest incident, with its run's configuration: the
    fix computed from the logged --mem-fraction-static 0.88, and the logged command with it applied."""
    from html import escape

    from analyzer.core.view import explanation
    from tests.support import builtin_engine

    target = tmp_path / "report.html"
    assert report(capsys, fleet, "-o", str(target))[0] == 0
    page = target.read_text(encoding="utf-8")
    example = summary(incidents_frame([str(fleet.root)], jobs=1, cache=False)).examples["torch.cuda-out-of-memory"]
    row = example.row
    found = explanation(builtin_engine().matcher.pattern("torch.cuda-out-of-memory"), row.params,
                        row.match_kind.value, row.confidence, message=row.message, run=example.run)
    assert found.meaning and f'<div class="meaning">{escape(found.meaning)}</div>' in page
    assert "&lt;gpu&gt;" not in page.split("torch.cuda-out-of-memory</code>")[1].split("</td>")[0]
    lower = next(fix for fix in found.fixes if fix.command)
    assert (lower.before, lower.after) == ("--mem-fraction-static 0.88", "--mem-fraction-static 0.83")
    assert f"<code>{escape(lower.command)}</code>" in page and f"Raised in the log at</span> <code>{row.raise_site}" in page
    main(["scan", example.file])  # the same incident, as `scan` words it
    assert f"your command, fixed: {lower.command}" in " ".join(capsys.readouterr().out.split())


def test_html_report_says_when_a_signature_fires_from_its_derived_page(capsys, fleet, tmp_path):
    """The page derived from the source (`patterns derive`) reaches the report too: for each known
    signature that has one, the condition in words and the source linked at its release."""
    from html import escape

    from tests.support import builtin_engine

    target = tmp_path / "report.html"
    assert report(capsys, fleet, "-o", str(target))[0] == 0
    page = target.read_text(encoding="utf-8")
    matcher = builtin_engine().matcher
    shown = set(re.findall(r'<code>([\w.-]+)</code></a>', page))
    derived = {pattern_id: matcher.derived(pattern_id) for pattern_id in shown}
    with_condition = {i: d for i, d in derived.items() if d is not None and d.condition}
    assert with_condition, f"no signature of the fleet has a derived page: {sorted(shown)}"
    for found in with_condition.values():
        assert escape(found.fires_when) in page
        assert not found.link or f'href="{escape(found.link)}"' in page
