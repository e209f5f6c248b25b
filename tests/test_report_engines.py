"""The engines agree: in-process, a local process pool, and Dask give the very same report."""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.cli import main
from analyzer.report import fleet_tables, incidents_frame, summary
from analyzer.report.engines import dask_cluster
from analyzer.report.engines.local import IN_PROCESS_BELOW
from analyzer.report.tables import report_json
from tests.fleet import PATH_REGEX, write_fleet

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    truth = write_fleet(tmp_path_factory.mktemp("fleet"), runs=80, seed=5)
    assert sum(len(r.files) for r in truth.runs) >= IN_PROCESS_BELOW  # big enough for the pool to start
    return truth


@pytest.fixture(scope="module")
def in_process(fleet):
    return frame(fleet, jobs=1)


def frame(fleet, **options) -> pd.DataFrame:
    return incidents_frame([str(fleet.root)], path_regex=PATH_REGEX, cache=False, **options)


def assert_same_report(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(fleet_tables(got).runs, fleet_tables(expected).runs)
    pd.testing.assert_frame_equal(fleet_tables(got).bad_files, fleet_tables(expected).bad_files)
    for by in ("pattern", "host", "day"):
        assert report_json(summary(got, by=by)) == report_json(summary(expected, by=by))


def test_process_pool_gives_the_in_process_result(fleet, in_process):
    assert_same_report(frame(fleet, jobs=2), in_process)


def test_dask_on_an_existing_cluster_gives_the_local_result(fleet, in_process):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        got = frame(fleet, engine="dask", jobs=2, scheduler=cluster.scheduler_address)
    assert_same_report(got, in_process)


def test_dask_starts_its_own_local_cluster_from_the_command_line(fleet, capsys):
    args = ["report", str(fleet.root), "--path-regex", PATH_REGEX, "--no-cache", "--format", "json"]
    assert main([*args, "--engine", "dask", "-j", "1"]) == 0  # one worker process: the path, not the speed
    on_dask = capsys.readouterr().out
    assert main([*args, "-j", "1"]) == 0
    assert on_dask == capsys.readouterr().out


def test_an_unreachable_scheduler_is_one_line_and_exit_2(fleet, capsys, monkeypatch):
    monkeypatch.setattr(dask_cluster, "CONNECT_TIMEOUT", "1s")
    code = main(["report", str(fleet.root), "--no-cache", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("analyzer: error: cannot reach the Dask scheduler tcp://127.0.0.1:9")
    assert err.count("\n") == 1
