"""A warm report: every file from the cache, no log opened, the summary aggregated from plain rows
without pandas, and the same report as the pandas frame gives."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.report import summary
from analyzer.report.aggregate import summarise
from analyzer.report.engines.local import IN_PROCESS_BELOW
from analyzer.report.fleet import FleetOptions, scan_fleet
from analyzer.report.fleetrows import fleet_rows, restrict_rows
from analyzer.report.frame import frame_from_scan, restrict
from analyzer.report.markdown import render_markdown
from analyzer.report.tables import records, report_json
from tests.fleet import FIRST_DAY, PATH_REGEX, write_fleet

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_fleet(tmp_path_factory.mktemp("fleet"), runs=60, seed=11)


@pytest.fixture(scope="module")
def scan(fleet):
    return scan_fleet([str(fleet.root)], FleetOptions(path_regex=PATH_REGEX, jobs=1, cache=False))


@pytest.mark.parametrize("by", ["pattern", "fingerprint", "host", "day", "version"])
def test_plain_rows_and_the_frame_give_the_same_report(scan, by):
    """The command line aggregates the plain rows; the library, the frame: one summary either way."""
    since, start, end = FIRST_DAY, FIRST_DAY, date.fromordinal(FIRST_DAY.toordinal() + 4)
    plain = summarise(restrict_rows(fleet_rows(scan), start, end), by=by, since=since)
    framed = summary(restrict(frame_from_scan(scan), start, end), by=by, since=since)
    assert plain.groups and report_json(plain) == report_json(framed)
    assert render_markdown(plain) == render_markdown(framed)
    assert plain.examples == framed.examples


def test_the_plain_json_is_what_pandas_writes_for_the_same_tables(scan):
    report = summarise(fleet_rows(scan), since=FIRST_DAY)
    data = report_json(report)
    assert report.bad and any(group["first_seen"] for group in data["groups"])
    assert data["groups"] == records(report.table)
    assert data["root_causes"] == records(report.root_causes)
    assert data["bad_files"] == records(report.bad_files)
    assert data["clean_runs"] == report.clean_runs["run"].tolist()


def test_a_warm_report_reads_every_file_from_the_cache_and_opens_no_log(fleet, tmp_path, monkeypatch, capsys):
    args = ["report", str(fleet.root), "--path-regex", PATH_REGEX, "--no-progress", "-j", "1",
            "--cache", str(tmp_path / "c.sqlite"), "--format", "json"]
    main(args)
    cold = json.loads(capsys.readouterr().out)
    logs = str(fleet.root)
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def guarded(opener):
        def open_unless_a_log(file, *rest, **options):
            if isinstance(file, (str, os.PathLike)) and os.fspath(file).startswith(logs):
                opened.append(os.fspath(file))
                raise PermissionError(13, "a warm report opened a log", os.fspath(file))
            return opener(file, *rest, **options)
        return open_unless_a_log

    monkeypatch.setattr(builtins, "open", guarded(real_open))
    monkeypatch.setattr(os, "open", guarded(real_os_open))
    main(args)
    warm = json.loads(capsys.readouterr().out)
    unreadable = sum(1 for run in fleet.runs if run.status == "unreadable")  # never cached: tried again
    assert len(opened) <= unreadable
    assert warm["files"] == {"scanned": unreadable, "from_cache": cold["files"]["scanned"] - unreadable}
    assert {k: v for k, v in warm.items() if k != "files"} == {k: v for k, v in cold.items() if k != "files"}


def test_a_parallel_cold_report_and_the_warm_one_after_it_equal_a_serial_scan(fleet, tmp_path, capsys):
    """Workers' results stream into the cache in completion order; the report is in file order."""
    assert sum(len(run.files) for run in fleet.runs) >= IN_PROCESS_BELOW  # enough files for the pool to start
    args = ["report", str(fleet.root), "--path-regex", PATH_REGEX, "--no-progress", "--format", "json"]
    outputs = []
    for extra in (["-j", "1", "--no-cache"], ["-j", "2", "--cache", str(tmp_path / "c.sqlite")],
                  ["-j", "2", "--cache", str(tmp_path / "c.sqlite")]):
        main([*args, *extra])
        report = json.loads(capsys.readouterr().out)
        outputs.append((report.pop("files"), report))
    (serial_files, serial), (cold_files, cold), (warm_files, warm) = outputs
    assert serial == cold == warm
    assert serial_files == cold_files and warm_files["from_cache"] > 0


def test_a_summary_in_json_or_text_does_not_import_pandas(fleet, tmp_path):
    check = ("import sys\nfrom analyzer.cli import main\n"
             "for fmt in ('json', 'table', 'md'):\n"
             "    main(['report', sys.argv[1], '--no-progress', '-j', '1', '--cache', sys.argv[2], '--format', fmt,"
             " '-o', sys.argv[2] + '.' + fmt])\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'pyarrow', 'numpy')))\n")
    done = subprocess.run([sys.executable, "-c", check, str(fleet.root), str(tmp_path / "c.sqlite")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"
