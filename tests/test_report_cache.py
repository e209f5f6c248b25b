"""The report cache: reuse per-file results, notice changes, survive being killed mid-write."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analyzer.report import fleet_tables, incidents_frame
from tests.fleet import PATH_REGEX, write_fleet

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return write_fleet(tmp_path_factory.mktemp("fleet"), runs=60, seed=3)


def scan(fleet, cache, **options):
    problems: list[str] = []
    df = incidents_frame([str(fleet.root)], path_regex=PATH_REGEX, jobs=1, cache=cache,
                         on_problem=lambda problem: problems.append(str(problem)), **options)
    return df, problems


def unreadable(fleet) -> int:
    return sum(1 for r in fleet.runs if r.status == "unreadable")


def files_in(fleet) -> int:
    return sum(len(r.files) for r in fleet.runs)


def test_second_report_reuses_every_readable_file(fleet, tmp_path):
    first, _ = scan(fleet, tmp_path / "c.sqlite")
    second, problems = scan(fleet, tmp_path / "c.sqlite")
    assert problems == []
    assert fleet_tables(first).cached == 0
    assert fleet_tables(second).cached == files_in(fleet) - unreadable(fleet)  # broken links are retried
    assert fleet_tables(second).scanned == unreadable(fleet)
    pd.testing.assert_frame_equal(first, second)
    pd.testing.assert_frame_equal(fleet_tables(first).runs, fleet_tables(second).runs)
    # the rows and run configurations behind the frame come back from the JSON as they were made
    assert fleet_tables(first).rows == fleet_tables(second).rows and fleet_tables(first).rows
    assert fleet_tables(first).configs == fleet_tables(second).configs and fleet_tables(first).configs


def test_a_result_of_an_older_format_is_scanned_again_not_misread(fleet, tmp_path):
    """Rows cached in the shape before IncidentRow (plain dicts, another key set) under today's
    settings key: each such file is scanned again and the frame is a fresh scan's."""
    cache = tmp_path / "c.sqlite"
    fresh, _ = scan(fleet, cache)
    db = sqlite3.connect(cache)
    with db:
        rows = db.execute("SELECT path, result FROM results").fetchall()
        for path, text in rows:
            data = json.loads(text)
            data["incidents"] = [{"incident": row["incident"], "pattern_id": row["pattern_id"],
                                  "message": row["message"]} for row in data["incidents"]]
            data.pop("run")
            db.execute("UPDATE results SET result = ? WHERE path = ?", (json.dumps(data), path))
    db.close()
    again, problems = scan(fleet, cache)
    assert problems == [] and fleet_tables(again).cached == 0
    pd.testing.assert_frame_equal(fresh, again)


def test_a_changed_log_is_scanned_again(fleet, tmp_path_factory, tmp_path):
    copy = write_fleet(tmp_path_factory.mktemp("changing"), runs=60, seed=3)
    cache = tmp_path / "c.sqlite"
    before, _ = scan(copy, cache)
    clean = next(r for r in copy.runs if r.kind == "clean")
    log = copy.root / clean.day.isoformat() / clean.host / clean.run / "server.log"
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("[2026-08-30 23:00:00] ValueError: max_total_tokens must be positive, got -1\n")
    after, _ = scan(copy, cache)
    assert fleet_tables(after).scanned == 1 + unreadable(copy)
    assert clean.run not in set(before["run"]) and clean.run in set(after["run"])


def test_other_settings_make_cached_results_stale(fleet, tmp_path):
    scan(fleet, tmp_path / "c.sqlite")
    other, _ = scan(fleet, tmp_path / "c.sqlite", window_seconds=5.0)
    assert fleet_tables(other).cached == 0


def test_a_cache_file_that_is_not_a_database_is_set_aside(fleet, tmp_path):
    cache = tmp_path / "c.sqlite"
    cache.write_bytes(b"this is not SQLite\n" * 500)
    df, problems = scan(fleet, cache)
    assert len(problems) == 1 and "moved to" in problems[0] and str(cache) in problems[0]
    assert (tmp_path / "c.sqlite.broken").read_bytes().startswith(b"this is not SQLite")
    again, _ = scan(fleet, cache)
    assert fleet_tables(again).cached == files_in(fleet) - unreadable(fleet)
    pd.testing.assert_frame_equal(df, again)


def test_an_unusable_cache_location_only_warns(fleet, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    df, problems = scan(fleet, blocker / "c.sqlite")
    assert len(problems) == 1 and "scanning without it" in problems[0]
    expected, _ = scan(fleet, False)
    pd.testing.assert_frame_equal(df, expected)


# A real process, killed with SIGKILL inside one file's transaction: the statement tracer sees
# BEGIN, then INSERT, then COMMIT for each file, and the kill lands just before the chosen one.
_KILLED_CHILD = """
import os, signal, sqlite3, sys
from analyzer.cli import main

statement, wanted = sys.argv[1], int(sys.argv[2])
seen = 0
connect = sqlite3.connect

def traced(*args, **kwargs):
    db = connect(*args, **kwargs)

    def trace(sql):
        global seen
        if sql.lstrip().upper().startswith(statement):
            seen += 1
            if seen == wanted:
                os.kill(os.getpid(), signal.SIGKILL)

    db.set_trace_callback(trace)
    return db

sqlite3.connect = traced
sys.exit(main(sys.argv[3:]))
"""


def killed_report(statement: str, wanted: int, *args: str) -> subprocess.CompletedProcess:
    """`analyzer report ARGS` in a child process that SIGKILLs itself at the chosen statement."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", _KILLED_CHILD, statement, str(wanted), "report", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def uncached(fleet):
    return scan(fleet, False)[0]


@pytest.mark.parametrize("statement", ["INSERT", "COMMIT"])
def test_killed_mid_write_the_next_report_recovers_everything(fleet, uncached, tmp_path, statement):
    cache = tmp_path / "c.sqlite"
    wanted = 17
    killed = killed_report(statement, wanted, str(fleet.root), "--path-regex", PATH_REGEX, "-j", "1",
                           "--cache", str(cache))
    assert killed.returncode == -9, killed.stderr

    with sqlite3.connect(cache) as db:  # opening recovers the write-ahead log
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute("SELECT path, result FROM results").fetchall()
    assert len(rows) == wanted - 1  # every committed file, and not the one in flight
    for _, text in rows:
        assert json.loads(text)["status"]

    resumed, problems = scan(fleet, cache)
    assert problems == []
    assert fleet_tables(resumed).cached == wanted - 1
    pd.testing.assert_frame_equal(resumed, uncached)
    assert len(resumed) == sum(len(r.expected) for r in fleet.runs)
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone() == (files_in(fleet) - unreadable(fleet),)
