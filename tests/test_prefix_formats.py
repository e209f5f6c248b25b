"""Tracebacks behind the prefixes of real formatters (tests/logformats.py), alone, stacked and with
several processes interleaved, come out whole: prefixes nobody listed are learned from the lines."""

from __future__ import annotations

import logging
import sys
import traceback
from datetime import datetime, timedelta

import pytest

from analyzer.core.normalize import LineNormalizer
from analyzer.core.records import EventKind
from analyzer.core.scan import events_from_lines
from tests import failureforms as forms
from tests import logformats as fmt
from tests.realtb import actual_chain, capture, expected_chain, raised, text_of
from tests.support import NO_NOTICES
from tests.test_fastpath import assert_same, fast_path


def _chained():
    try:
        {}["missing"]
    except KeyError as err:
        raise RuntimeError("could not load\nsecond line | of the [message]") from err


def _pipes_and_brackets():
    table = {"k": [1]}
    return table["k"][0] | {}["absent"]  # a source line holding `] ` and ` | `


def _caret():
    values = {"a": [1, 2]}
    return values["a"][5] + values["a"][0]


def _group():
    raise ExceptionGroup("two failed", [ValueError("v"), TypeError("t")])  # Python 3.11+


ERRORS = [_chained, _pipes_and_brackets, _caret] + ([_group] if sys.version_info >= (3, 11) else [])


def _tb(func) -> tuple[BaseException, list[str]]:
    exc = capture(func)
    return exc, text_of(exc).rstrip("\n").split("\n")


def _events(lines: list[str]):
    return list(events_from_lines(lines, "t.log", NO_NOTICES))


def _only(lines: list[str], exc: BaseException):
    events = [e for e in _events(lines) if e.kind is EventKind.TRACEBACK]
    assert len(events) == 1, [(e.chain, e.span) for e in events]
    assert actual_chain(events[0].chain) == expected_chain(exc)
    assert not events[0].truncated
    return events[0]


def _odd_message():
    raise ValueError("first\n[note] 3 | 4 ] x\nsvc  | ERROR - y")


# name -> the log lines a server writes for (exception, its traceback's lines)
FORMATS = {
    "vllm_v1": lambda tb: fmt.vllm_record("EngineCore failed to start.", tb[0]),
    "vllm_v0": lambda tb: fmt.vllm_record("Exception in worker", tb[0], v0=True, file="engine.py", lineno=158),
    "vllm_worker_v1": lambda tb: fmt.vllm_worker(fmt.vllm_record("Worker failed", tb[0]), rank=1),
    "vllm_worker_tp": lambda tb: fmt.vllm_worker(fmt.vllm_record("Worker failed", tb[0]), tp=1, pid=4301),
    "vllm_workerprocess_v0": lambda tb: fmt.vllm_worker(
        fmt.vllm_record("Exception in worker", tb[0], v0=True, file="multiproc_worker_utils.py", lineno=233),
        name="VllmWorkerProcess", pid=214),
    "vllm_enginecore": lambda tb: fmt.vllm_worker(fmt.vllm_record("EngineCore hit an exception:", tb[0]),
                                                  name="EngineCore_DP0", pid=4300),
    "sglang_each_line": lambda tb: fmt.sglang_each_line(tb[1]),
    "sglang_compose": lambda tb: fmt.compose(fmt.sglang_record("Scheduler hit an exception: ", tb[1]), "sglang"),
    "compose": lambda tb: fmt.compose(tb[1], "inference_engine"),
    "pm2": lambda tb: fmt.pm2(tb[1], 2, "comfyui"),
    "srun_label": lambda tb: fmt.srun_label(tb[1], 3, 16),
    "srun_torchrun": lambda tb: fmt.srun_label([f"[rank0]: {line}" for line in tb[1]], 3, 16),
    "torchserve": lambda tb: fmt.torchserve_worker(tb[1], stream="stderr", iso=True),
    "djl_serving": lambda tb: fmt.djl_serving_worker(tb[1]),
    "fastchat": lambda tb: fmt.fastchat_stderr(tb[1]),
    "logging_each_line": lambda tb: fmt.logging_each_line(tb[1]),
    "logging_placed": lambda tb: fmt.logging_placed("Failed to load the model", tb[0]),
    # a launcher logging each line its server prints: the server's prefix inside on the first line only
    "launcher_relays_sglang": lambda tb: fmt.logging_each_line(
        fmt.sglang_record("Scheduler hit an exception: ", tb[1]), name="__main__"),
    "container_logging": lambda tb: fmt.cri(fmt.logging_each_line(tb[1]), stream="stdout"),
    "cloud": lambda tb: fmt.cloud_export(tb[1]),
    "cloud_default": lambda tb: fmt.cloud_export(tb[1], severity="DEFAULT"),
    "buildkite": lambda tb: fmt.ci_timestamps(fmt.vllm_record("EngineCore failed to start.", tb[0])),
    "github_actions": lambda tb: fmt.github_actions(tb[1]),
    "torch_glog": lambda tb: fmt.torch_glog(tb[1]),
    "torch_logging_old": lambda tb: fmt.torch_logging(tb[1]),
    "torch_glog_no_rank": lambda tb: fmt.torch_glog(tb[1], rank=None),
    "stacked": lambda tb: fmt.cri(fmt.compose(fmt.vllm_worker(fmt.vllm_record("Worker failed", tb[0]), rank=3),
                                              "vllm-1")),
    "torchrun_tee": lambda tb: fmt.torchrun_tee(tb[1]),
    "pdsh": lambda tb: fmt.pdsh(tb[1]),
    "mpi": lambda tb: fmt.mpi_tagged(tb[1]),
    "horovod_gloo": lambda tb: fmt.mpi_tagged(tb[1], rank=1, job=None),
    "heroku": lambda tb: fmt.heroku(tb[1]),
    "journal": lambda tb: fmt.journal(tb[1]),
    "journal_no_host": lambda tb: fmt.journal(tb[1], host=None),
    "journal_no_pid": lambda tb: fmt.journal(tb[1], ident="jupyterhub", pid=None),
    "kernel_console": lambda tb: fmt.kernel_console(tb[1]),
    "kernel_console_commented": lambda tb: [f"# {line}" for line in fmt.kernel_console(tb[1], since_boot=695.180435)],  # (in a script)
    "pdsh_torchrun": lambda tb: fmt.pdsh([f"[rank0]: {line}" for line in tb[1]]),
    "ray_dedup": lambda tb: fmt.ray_dedup(tb[1]),
    "numbered": lambda tb: fmt.numbered(fmt.sglang_record("Scheduler hit an exception: ", tb[1]), first=995),
    "notebook_viewer": lambda tb: fmt.notebook_viewer(tb[1]),
    "notebook_viewer_tabs": lambda tb: fmt.notebook_viewer(tb[1], first=1290, seconds=704.7, cells="\t"),
    # a copy's margin: a viewer's line numbers, grep's marks and file names (and a Ray worker's prefix behind them)
    "viewer_numbers": lambda tb: fmt.viewer_numbers(["INFO loading", *tb[1]], first=10168),
    "viewer_numbers_tab": lambda tb: fmt.viewer_numbers(tb[1], first=88, separator="\t"),
    "viewer_numbers_padded": lambda tb: fmt.viewer_numbers(tb[1], first=7, width=7),
    "build_log_numbers": lambda tb: fmt.viewer_numbers(tb[1], first=2319, separator=" | "),
    "grep_numbers": lambda tb: fmt.grep_context(tb[1], "Error", first=412),
    "grep_files": lambda tb: fmt.grep_context(tb[1], "Traceback", file="logs/worker-3.log"),
    "grep_files_unnumbered": lambda tb: fmt.grep_context(tb[1], "Traceback", file="airflow-scheduler.log", first=None),
    "ray_numbers_escapes_lost": lambda tb: fmt.viewer_numbers(fmt.ray_worker(["Worker exits.", *tb[1]], escapes=False),
                                                              first=10168, separator=""),
    "celery_task": lambda tb: fmt.celery("Ingest failed", tb[0], task=("tasks.ingest", "4c3e1f7a-9b2d-4e1c-8a55-0d6b2c7e9f10")),
    "oslo": lambda tb: fmt.oslo("Error updating resources for node compute-1.", tb[1]),
    "oslo_trace": lambda tb: fmt.oslo("Failed to load notifier.", tb[1], trace="TRACE", name="nova.openstack.common.notifier.api"),
}
NOISE_BEFORE = "INFO 11-28 03:12:39 [engine.py:12] Starting engine"
NOISE_AFTER = "INFO 11-28 03:12:41 [engine.py:80] Shutting down"


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("func", ERRORS, ids=lambda f: f.__name__)
def test_each_format_gives_one_whole_traceback(name, func):
    exc, lines = _tb(func)
    body = FORMATS[name]((exc, lines))
    _only([NOISE_BEFORE, *body, NOISE_AFTER], exc)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_lines_come_back_exactly_as_python_printed_them(name):
    exc, lines = _tb(_pipes_and_brackets)
    event = _only(FORMATS[name]((exc, lines)), exc)
    assert [t for t in event.lines[1:] if t.strip()] == [t for t in lines[1:] if t.strip()]
    assert event.lines[0].endswith(lines[0])


MARGINS = {
    "viewer": lambda lines: fmt.viewer_numbers(lines, first=10168),
    "build_log": lambda lines: fmt.viewer_numbers(lines, first=2319, separator=" | "),
    "grep": lambda lines: fmt.grep_context(lines, "Error", first=412),
    "grep_files": lambda lines: fmt.grep_context(lines, "Traceback", file="logs/worker-3.log"),
    "ray_escapes_lost": lambda lines: fmt.viewer_numbers(fmt.ray_worker(lines, escapes=False), separator=""),
    "search_finds": lambda lines: fmt.search_finds(fmt.vllm_worker(lines), list(range(116, 116 + 2 * len(lines), 2))),
    "search_finds_blanks": lambda lines: fmt.search_finds(lines, list(range(7, 7 + len(lines))), indent="  "),
    "notebook_viewer_tabs": lambda lines: fmt.notebook_viewer(lines, cells="\t"),
}


@pytest.mark.parametrize("name", sorted(MARGINS))
def test_a_copys_margin_on_every_line_is_read_on_the_fast_path_too(name):
    """Line numbers or grep's marks in front of every line of a copy, a long stretch of other lines between two
    tracebacks: both read whole, the fast path as the line path."""
    exc, lines = _tb(_chained)
    log = MARGINS[name]([NOISE_BEFORE, *lines, *[NOISE_AFTER] * 300, *lines, NOISE_AFTER])
    events = [e for e in assert_same(("\n".join(log) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert [actual_chain(e.chain) for e in events] == [expected_chain(exc)] * 2
    assert [e.span.line_start for e in events] == [2, len(lines) + 302]


def test_a_build_logs_numbers_in_front_of_lines_that_lost_their_indentation():
    """A build log's viewer copied (`2319 | File "..."`): numbered, every line trimmed, frames and source alike."""
    exc, lines = _tb(_chained)
    event = _only(fmt.viewer_numbers([line.strip() for line in [NOISE_BEFORE, *lines, NOISE_AFTER]], first=2318,
                                     separator=" | "), exc)
    assert event.span.line_start == 2


def test_a_process_id_and_a_bar_in_front_of_its_lines_is_no_margin():
    """`4321 | ` on every line a process prints (its id stays, where a copy's numbers move with the lines): two processes
    interleaved line by line stay apart, each traceback whole. (The first header behind such a prefix is read before the
    next landmark tells a copy's numbers from a process's id: that process's traceback keeps the header's unnamed stream.)"""
    exc, lines = _tb(_chained)
    first, second = [f"4321 | {line}" for line in lines], [f"5120 | {line}" for line in lines]
    events = [e for e in _events([NOISE_BEFORE, *(line for pair in zip(first, second) for line in pair), NOISE_AFTER])
              if e.kind is EventKind.TRACEBACK]
    assert [actual_chain(e.chain) for e in events] == [expected_chain(exc)] * 2
    assert len({e.stream for e in events}) == 2 and "5120#" in {e.stream for e in events}


def test_srun_labels_are_no_margin():
    """srun's label (`3: `, the blank after its colon odd where grep's is even) is the task's, not a copy's margin:
    the traceback's stream is task 3's (a margin names none)."""
    exc, lines = _tb(_chained)
    events = _events(["12 workers started", *fmt.srun_label(lines, 3, 16), "3 tasks failed"])
    (event,) = [e for e in events if e.kind is EventKind.TRACEBACK]
    assert event.stream.split("#")[0] == "3"
    assert actual_chain(event.chain) == expected_chain(exc)


def test_an_exception_line_logged_behind_the_place_of_the_call():
    """`logger.error(f"{type(e).__name__}: {e}")` behind `... - ERROR - utils.py:411 - `: a bare error."""
    exc = capture(_odd_message)
    (line,) = fmt.logging_placed(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
    (event,) = events_from_lines([NOISE_BEFORE, line, NOISE_AFTER], "x.log", NO_NOTICES)
    assert (event.chain[-1].exception_type, event.chain[-1].message) == ("ValueError", "first")
    assert event.timestamp is not None and event.timestamp.year == 2026


def test_mpi_ranks_tagged_lines_interleaved_and_a_bare_error():
    """`mpirun --tag-output`: two ranks' tracebacks line by line, and an error line alone; each its rank's."""
    exc, lines = _tb(_register_worker)
    events = _events(_interleave([fmt.mpi_tagged(lines, rank=0), fmt.mpi_tagged(lines, rank=1)]))
    assert sorted(e.rank for e in events) == ["rank0", "rank1"]
    assert all(actual_chain(e.chain) == expected_chain(exc) for e in events)
    (bare,) = _events(["loading the model", *fmt.mpi_tagged([lines[-1]]), *fmt.mpi_tagged(["done"], stream="stdout")])
    assert (bare.root.exception_type, bare.root.message, bare.rank) == (type(exc).__name__, str(exc), "rank2")
    (bare,) = _events(["loading the model", *fmt.mpi_tagged(lines[-2:], rank=1, job=None)])  # (horovodrun's own: no job)
    assert (bare.root.exception_type, bare.root.message, bare.rank) == (type(exc).__name__, str(exc), "rank1")


@pytest.mark.parametrize("role", ["trainer", "B-nemo-ft3", "i.pretrain"])
def test_an_error_line_alone_behind_torchxs_replica_and_torchruns_labels(role):
    """TorchX's (and NeMo-Run's) `role/0 ` in front of torchrun's `[default2]:` and the rank's `[rank2]: `: an error
    logged without its traceback, the only line of the log that tells the prefix, is that rank's error."""
    exc = capture(_odd_message)
    said = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    (line,) = fmt.torchx_local(fmt.torchrun_tee([f"[rank2]: {said}"], local_rank=2), role)
    for lines in ([line], [NOISE_BEFORE, line, NOISE_AFTER]):
        (event,) = events_from_lines(lines, "x.log", NO_NOTICES)
        assert (event.root.exception_type, event.root.message, event.rank) == ("ValueError", "first", "rank2")
        assert assert_same("\n".join([*lines, ""]).encode())


def test_sagemakers_mpi_tags_name_the_rank_and_the_host():
    """SageMaker's distributed jobs tag each line `[1,mpirank:7,algo-1]<stderr>:`: a rank's error line alone, and
    two hosts' tracebacks interleaved, each its rank's and host's."""
    exc, lines = _tb(_register_worker)
    data = "\n".join(["loading the model", *fmt.mpi_tagged([lines[-1]], rank=7, host="algo-1"), "done", ""])
    (bare,) = assert_same(data.encode())
    assert (bare.root.exception_type, bare.root.message, bare.rank, bare.host) == (type(exc).__name__, str(exc), "rank7",
                                                                                    "algo-1")
    events = _events(_interleave([fmt.mpi_tagged(lines, rank=0, host="algo-1"), fmt.mpi_tagged(lines, rank=0, host="algo-2")]))
    assert sorted((e.rank, e.host) for e in events) == [("rank0", "algo-1"), ("rank0", "algo-2")]
    assert all(actual_chain(e.chain) == expected_chain(exc) for e in events)


def test_a_blank_a_paste_put_in_front_of_a_workers_prefix():
    """` (Worker_TP0 pid=60352) ERROR ... ValueError("...")`: the blank is the paste's, the prefix the log's."""
    exc = capture(_register_worker)
    (line,) = fmt.vllm_worker(fmt.vllm_record(repr(exc), file="multiproc_executor.py"), name="Worker_TP0", pid=60352)
    (event,) = assert_same(f"error occurred on v100:\n {line}\n".encode())
    assert (event.root.exception_type, event.root.message, event.rank) == (type(exc).__name__, str(exc), "pid=60352")


@pytest.mark.parametrize("name", ["EngineCore_0", "VllmWorker rank=2", ""])
def test_a_paste_begun_inside_a_workers_prefix(name):
    """Copied from inside `(EngineCore_0 pid=1248800) ` (as torchrun's `rank3]: ` already was): the rest of the
    head is still the worker's prefix, on its first line and on a traceback's after it."""
    exc, lines = _tb(_register_worker)
    head = f"{name} pid=1248800) " if name else "pid=1248800, ip=10.0.0.2) "
    (event,) = assert_same(f"{head}{lines[-1]}\n".encode())
    rank = "rank2" if "rank" in name else "pid=1248800"
    assert (event.root.exception_type, event.root.message, event.rank) == (type(exc).__name__, str(exc), rank)
    pasted = [head + lines[0], *(f"({head}{line}" for line in lines[1:])]
    (event,) = assert_same("\n".join([*pasted, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert assert_same(b"the server pid=1248800) stopped, see ValueError: x above\n") == []


def test_pdsh_hosts_in_front_of_a_cut_traceback():
    """The tail of a rank's traceback behind pdsh's host and torchrun's rank, its frame lines cut: the
    exception line is read, on its host's channel."""
    exc, lines = _tb(_register_worker)
    (event,) = _events(fmt.pdsh([f"[rank0]: {line}" for line in lines[-3:]]))
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert (event.host, event.rank) == ("10.29.253.123", "rank0")


def test_a_level_in_brackets_an_app_spells_its_own_way_in_front_of_an_error_line_alone():
    """A desktop server's `[Error] (Process) ` in front of the error line of the vLLM worker it runs (behind the worker's
    own prefix), and `[error] ` in front of a C++ terminate's report: both read as prefixes, the errors behind them."""
    exc, lines = _tb(_register_worker)
    relayed = fmt.level_in_brackets(["(EngineCore pid=2651) " + lines[-1], "..."])
    (event,) = assert_same("\n".join([*relayed, ""]).encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    said = "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer failed"
    (event,) = assert_same(f"[error] {said}\n".encode())
    assert (event.kind, event.root.exception_type) == (EventKind.NATIVE, "std::runtime_error")


def test_jupyterhubs_record_after_a_spawned_servers_error_behind_syslogs_prefix_is_no_part_of_its_message():
    """A spawned server's error relayed through syslog with no pid (`Jun 20 11:51:00 host jupyterhub: `), its stack's
    indentation lost, then JupyterHub's own record (`[W 2018-06-20 11:51:10.549 JupyterHub web:1618] 500 GET ...`): the
    error's message ends before it."""
    exc, lines = _tb(_register_worker)
    said = fmt.tornado("500 GET /hub/user/x/ (::ffff:10.0.0.1): Spawner failed to start [status=1].", level=logging.WARNING,
                       hub=True)
    pasted = fmt.journal([*(line.lstrip() for line in lines[-3:]), *said], ident="jupyterhub", pid=None)
    (event,) = assert_same("\n".join([*pasted, ""]).encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))


@pytest.mark.parametrize("indent", [0, 4, 8])
def test_a_paste_indented_as_a_whole_in_front_of_hosts_names(indent):
    """A launcher's `host: ` in front of each line (mpiexec's label, pdsh's with names), the whole paste indented as
    markdown's code or list items indent it: the prefix behind the blanks is learned from the traceback; the error
    line a process printed right above its header, and a header and frame the paste cut off after it, are one error."""
    exc, lines = _tb(_register_worker)
    noise = ["2024:01:23-06:12:16:(153241) |CCL_WARN| could not get local_idx/count from environment variables"]
    pasted = [" " * indent + line for line in fmt.pdsh([*noise, *lines], "x4502c1s3b0n0")]
    (event,) = assert_same("\n".join([*pasted, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    above = [" " * indent + line for line in fmt.pdsh([*noise, lines[-1], *lines[:3]], "x4502c1s3b0n0")]
    (event,) = assert_same("\n".join([*above, ""]).encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))


def test_a_notebook_viewers_rows_copied_with_tabs_keep_the_time_of_the_lines_between_errors():
    """Kaggle's viewer copied as a table's rows (`704.7s<TAB>1290<TAB>`): a logger's dated line far above a traceback
    without a time of its own still dates it on the fast path, which skips the lines between."""
    exc, lines = _tb(_chained)
    dated = "2025-05-01 10:00:00,123 - trainer - INFO - saving checkpoint"
    log = fmt.notebook_viewer([NOISE_BEFORE, *lines, dated, *["training step done"] * 300, *lines], cells="\t")
    events = [e for e in assert_same(("\n".join(log) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert [e.timestamp for e in events][1:] == [datetime(2025, 5, 1, 10, 0, 0, 123000)]


@pytest.mark.parametrize("indent", [4, 6, 8, 12])
@pytest.mark.parametrize("wrap", [lambda lines: fmt.journal(lines, ident="/usr/lib/gdm3/gdm-x-session", pid=961),
                                  lambda lines: fmt.journal(lines, ident="jupyterhub", pid=None),
                                  lambda lines: [f"2025-03-23 21:54:{k % 60:02d},013 - app - ERROR - {line}" for k, line in enumerate(lines)],
                                  lambda lines: [f"[rank3]: {line}" for line in lines]],
                         ids=["journal", "journal_no_pid", "python_logger", "torchrun"])
def test_dated_or_ranked_lines_of_a_paste_indented_as_a_list_items_code_block(wrap, indent):
    """syslog's, a logger's or torchrun's lines pasted inside a markdown list (the code block a list item holds: six,
    eight, twelve blanks in front of each): the prefix behind the blanks is peeled as at four, on the fast path too."""
    exc, lines = _tb(_register_worker)
    noise = ["blueman-applet version 2.0.8 starting"]
    pasted = [" " * indent + line for line in wrap([*noise, *lines])]
    events = [e for e in assert_same("\n".join([*pasted, ""]).encode()) if e.kind is EventKind.TRACEBACK]
    assert [actual_chain(e.chain) for e in events] == [expected_chain(exc)]
    assert [t for t in events[0].lines[1:] if t.strip()] == [t for t in lines[1:] if t.strip()]


@pytest.mark.parametrize("wrap", [lambda lines: fmt.pm2(lines, 2, "comfyui"), lambda lines: fmt.pm2(lines, 2, "backend_v2", when=fmt.T0),
                                  lambda lines: fmt.srun_label(lines, 3, 16)], ids=["pm2", "pm2_time", "srun"])
def test_a_paste_begun_at_the_last_source_line_behind_a_prefix_nobody_listed(wrap):
    """pm2's `2|comfyui  | ` (with `--time`, `2|backend_v2  | 2025-11-22 11:19 +00:00: `) or srun's ` 3: ` in front of a
    traceback's last lines, its header and frames not copied: the exception line teaches the prefix, so its message is
    read without it."""
    exc, lines = _tb(_register_worker)
    pasted = ["[INFO] queue ready", *wrap([lines[-2], lines[-1], "", "Prompt executed in 11.52 seconds"])]
    (event,) = _events(pasted)
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert [e.chain for e in assert_same("\n".join([*pasted, ""]).encode())] == [event.chain]


def test_torchserves_relay_of_a_workers_lines_keeps_its_error_when_its_traceback_was_left_out():
    """TorchServe logs the worker's stdout at INFO: its error line alone (a paste left the traceback out) is an error
    on the worker's channel, not an INFO record; two workers' tracebacks line by line stay apart."""
    exc, lines = _tb(_register_worker)
    (bare,) = _events(["Meaningful logs are below.", *fmt.torchserve_worker(["Backend worker process died.", lines[-1]])])
    assert (bare.root.exception_type, bare.root.message, bare.rank) == (type(exc).__name__, str(exc), None)
    assert bare.timestamp is not None
    both = _events(_interleave([fmt.torchserve_worker(lines, port=9000), fmt.torchserve_worker(lines, port=9001)]))
    assert len(both) == 2 and all(actual_chain(e.chain) == expected_chain(exc) for e in both)


def test_a_servers_coloured_lines_in_a_cloudwatch_export_of_two_columns_through_syslog():
    """A SageMaker endpoint's vLLM server: its colour codes escaped by rsyslog (`#033[1;36m(APIServer pid=1)#033[0;0m`),
    exported as rows of the time and the message alone, quoted only where the message holds a comma or a quote."""
    exc, lines = _tb(_register_worker)
    coloured = [fmt.syslog_escaped(f"\x1b[1;36m(APIServer pid=1)\x1b[0;0m {line}") for line in lines]
    rows = fmt.cloudwatch_csv(coloured, stream=None)
    assert any(not row.split(",", 1)[1].startswith('"') for row in rows) and "#033[" in rows[0]
    (event,) = assert_same("\n".join([*rows, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)


@pytest.mark.parametrize("logger", ["MODEL_LOG", "org.pytorch.serve.wlm.WorkerLifeCycle"])
def test_a_workers_traceback_in_a_cloudwatch_export_as_a_table(logger):
    """SageMaker's TorchServe endpoint: the worker's lines relayed by TorchServe (an older release names the class
    that reads them), then exported from CloudWatch as CSV rows, `epoch ms,"message",stream`, the frames' quotes doubled:
    the traceback whole, at the event's time. The error line alone (the paste began there) is the worker's error."""
    exc, lines = _tb(_chained)
    rows = fmt.cloudwatch_csv(fmt.torchserve_worker(lines, logger=logger))
    assert all(row.count('""') >= 2 for row in rows if 'File "' in row.replace('""', '"'))
    started = fmt.cloudwatch_csv(["2021-02-25 16:56:46,001 [INFO ] main org.pytorch.serve.ModelServer - up"])
    (event,) = assert_same("\n".join([*started, *rows, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert event.timestamp is not None
    if logger == "MODEL_LOG":  # (the reader's own words on the worker's thread are not the worker's: not its message)
        stopped = fmt.torchserve_worker(["Stopped Scanner - W-9000-model_1-stdout"], logger="org.pytorch.serve.wlm.WorkerLifeCycle")
        (last,) = assert_same("\n".join([*fmt.torchserve_worker(lines, logger=logger), *stopped, ""]).encode())
        assert actual_chain(last.chain) == expected_chain(exc)
    (bare,) = assert_same("\n".join([*fmt.cloudwatch_csv(fmt.torchserve_worker(lines[-2:], logger=logger)), ""]).encode())
    assert (bare.root.exception_type, bare.root.message.split("\n")[0]) == (type(exc).__name__, str(exc).split("\n")[0])


def test_djl_servings_relay_of_a_workers_lines_is_read_as_torchserves():
    """DJL Serving (SageMaker's LMI) relays a worker's stderr at WARN: its error line alone is an error on the worker's
    channel; two workers' tracebacks line by line stay apart."""
    exc, lines = _tb(_register_worker)
    (bare,) = assert_same("\n".join(["[INFO ] ModelServer - Initialize BOTH server with: EpollServerSocketChannel.",
                                     *fmt.djl_serving_worker(["Loading shards", lines[-1]]), ""]).encode())
    assert (bare.root.exception_type, bare.root.message, bare.stream) == (type(exc).__name__, str(exc), "W-133-model-stderr#")
    both = _events(_interleave([fmt.djl_serving_worker(lines, worker=133), fmt.djl_serving_worker(lines, worker=134)]))
    assert len(both) == 2 and all(actual_chain(e.chain) == expected_chain(exc) for e in both)


def test_a_journal_without_its_host_after_a_frame_copied_without_it():
    """A copy of `journalctl` lost the host (and the first line its prefix and indentation): the
    frame, its source line and the exception line are still one traceback's tail."""
    exc, lines = _tb(_register_worker)
    frame, code, said = lines[-3:]
    (event,) = _events([frame.lstrip(), *fmt.journal([code, said], host=None)])
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert event.root.frames[-1].code == code.strip()


@pytest.mark.parametrize("wrap", [fmt.journal, fmt.kubectl_timestamps, lambda lines: fmt.logging_each_line(lines),
                                  lambda lines: [f"[rank1]: {line}" for line in lines]],
                         ids=["journal", "kubectl", "logging", "torchrun"])
def test_a_markdown_code_block_in_front_of_dated_prefixes(wrap):
    """A paste indented four blanks to make it a markdown code block (or a list item's), its header cut off: the
    blanks are the paste's, the dated prefix or torchrun's rank behind them the log's (no traceback line begins with
    a date or a rank)."""
    exc, lines = _tb(_register_worker)
    pasted = "".join(f"    {line}\n" for line in wrap(lines[1:]))
    (event,) = assert_same(f"the service will not start:\n\n{pasted}\nany idea?\n".encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert event.root.frames[-1].code == lines[-2].strip()


def test_a_markdown_code_block_of_dated_records_and_a_traceback_without_prefixes():
    """The records' time, behind the code block's four blanks, is the time of the traceback printed after them."""
    exc, lines = _tb(_register_worker)
    records = fmt.logging_each_line([f"step {i}" for i in range(40)], step=timedelta(seconds=1))
    pasted = "".join(f"    {line}\n" for line in [*records, *lines])
    (event,) = assert_same(f"the log:\n\n{pasted}".encode(), chunks=(64, 4096))
    last = fmt.T0 + timedelta(seconds=39)
    assert (event.root.exception_type, event.timestamp) == (type(exc).__name__, last.replace(microsecond=last.microsecond // 1000 * 1000))


def test_heroku_dynos_lines_copied_without_their_indentation():
    """`heroku logs --tail` copied from a page that dropped each line's indentation, from mid-traceback."""
    exc, lines = _tb(_register_worker)
    (event,) = _events(fmt.heroku([line.strip() for line in lines[2:]]))
    assert (event.root.exception_type, event.root.message, event.rank) == (type(exc).__name__, str(exc), "web.1")
    assert event.root.frames[-1].code == lines[-2].strip()


def test_the_prefix_metadata_of_learned_prefixes():
    exc, lines = _tb(_chained)
    event = _only(fmt.cloud_export(lines), exc)
    assert event.timestamp is not None and event.timestamp.year == 2026
    event = _only(fmt.torch_glog(lines, rank=4), exc)
    assert event.rank == "rank4"
    event = _only(fmt.compose(fmt.vllm_worker(fmt.vllm_record("failed", exc), tp=2, pid=7), "vllm"), exc)
    assert event.rank == "TP2"


def _interleave(streams: list[list[str]]) -> list[str]:
    """Line by line, round robin: the worst case for telling processes apart."""
    out = []
    for i in range(max(map(len, streams))):
        out += [s[i] for s in streams if i < len(s)]
    return out


INTERLEAVED = {
    "vllm_workers": lambda r, exc, lines: fmt.vllm_worker(fmt.vllm_record("Worker failed", exc), rank=r, pid=4300 + r),
    "vllm_workers_tp": lambda r, exc, lines: fmt.vllm_worker(fmt.vllm_record("Worker failed", exc), tp=r, pid=4300 + r),
    "compose_services": lambda r, exc, lines: fmt.compose(lines, f"worker-{'abc'[r]}", width=8),
    "compose_replicas": lambda r, exc, lines: fmt.compose(lines, f"worker-{r + 1}", width=8),
    "pm2_instances": lambda r, exc, lines: fmt.pm2(lines, r, "api", padding=7),
    "srun_tasks": lambda r, exc, lines: fmt.srun_label(lines, r, 3),
    "torch_glog": lambda r, exc, lines: fmt.torch_glog(lines, rank=r, pid=2265 + r),
    "glog_pids": lambda r, exc, lines: fmt.torch_glog(lines, rank=None, pid=2265 + r),
    "app_loggers": lambda r, exc, lines: fmt.app_logger(lines, name=f"SGLangServer{r}", level="ERROR"),
    "stacked": lambda r, exc, lines: fmt.cri(fmt.compose(fmt.vllm_worker(fmt.vllm_record("failed", exc), rank=r,
                                                                         pid=10 + r), "vllm")),
}


@pytest.mark.parametrize("name", sorted(INTERLEAVED))
def test_interleaved_processes_stay_apart(name):
    errors = [capture(f) for f in (_chained, _pipes_and_brackets, _caret)]
    streams = [INTERLEAVED[name](r, exc, text_of(exc).rstrip("\n").split("\n")) for r, exc in enumerate(errors)]
    events = [e for e in _events(_interleave(streams)) if e.kind is EventKind.TRACEBACK]
    assert sorted(map(repr, (actual_chain(e.chain) for e in events))) == sorted(
        map(repr, (expected_chain(exc) for exc in errors)))
    assert not any(e.truncated for e in events)


def test_sglang_records_repeated_on_each_line_interleave_record_by_record():
    """One process writes each record whole, so ranks interleave a record at a time."""
    errors = [capture(f) for f in (_chained, _pipes_and_brackets, _caret)]
    log = []
    for rank, exc in enumerate(errors):
        lines = text_of(exc).rstrip("\n").split("\n")
        log += fmt.sglang_each_line(["Scheduler hit an exception: " + lines[0], *lines[1:]], tags=f" TP{rank}")
        log += fmt.sglang_each_line(["Decode batch. #running-req: 3"], tags=f" TP{(rank + 1) % 3}")
    events = sorted(_events(log), key=lambda e: e.rank)
    assert [e.rank for e in events] == ["TP0", "TP1", "TP2"]
    assert [actual_chain(e.chain) for e in events] == [expected_chain(exc) for exc in errors]


def test_a_prefix_whose_seconds_tick_over_still_matches():
    """Each line a record of its own: a continuation of the message could as well be a new record, so
    only the traceback's own lines are held to continue (here: a one-line message)."""
    exc, lines = _tb(_caret)
    _only(fmt.fastchat_stderr(lines, step=timedelta(seconds=1)), exc)
    _only(fmt.logging_each_line(lines, step=timedelta(milliseconds=700)), exc)


def test_a_relayed_record_keeps_its_rank_while_the_launcher_clock_ticks():
    """The launcher's own prefix on each line, the server's inside it on the first: the traceback's lines
    continue the record (and its rank) though the launcher's clock ticks between them."""
    exc, lines = _tb(_caret)
    relayed = fmt.sglang_record("Scheduler hit an exception: ", lines, tags=" TP3")
    for log in (fmt.logging_each_line(relayed, name="__main__", step=timedelta(milliseconds=1)),
                fmt.app_logger(relayed, step=timedelta(milliseconds=30))):
        event = _only(["launcher ready", *log, *fmt.logging_each_line(["Attempt 14: waiting for the server"])], exc)
        assert event.rank == "TP3" and event.context == "Scheduler hit an exception:"


@pytest.mark.parametrize("func", [_chained, _pipes_and_brackets, _caret], ids=lambda f: f.__name__)
def test_a_prefix_read_in_part_as_an_introduction_is_taught_by_the_frames(func):
    """On the header line only the time of `(AReaL) 20261128-03:12:40.123 SGLangServer ERROR: ` reads as
    a prefix (a logger's name and level read as the traceback's introduction); the frames show it is all
    prefix, though the milliseconds tick between the lines. (An exception group in such a prefix is not
    handled: its box, drawn after the prefix, reads as part of it on the frame lines.)"""
    exc, lines = _tb(func)
    _only(fmt.app_logger(lines, level="ERROR"), exc)
    _only(fmt.app_logger(["(the server starts)"], level="INFO") + fmt.app_logger(lines, level="ERROR"), exc)


@pytest.mark.parametrize("name", ["vllm_v1", "vllm_v0", "logging_each_line", "vllm_worker_v1", "buildkite"])
def test_a_blank_line_whose_prefix_lost_its_last_space_is_blank(name):
    """A paste (or an editor) drops the space a blank line's prefix ends in: `... [core.py:396]`."""
    exc, lines = _tb(_chained)
    _only([line.rstrip() for line in FORMATS[name]((exc, lines))], exc)


def test_a_prefix_that_ends_in_a_quote_mark_is_learned_whole():
    """`[app]> ` is one prefix: a markdown quote's `> ` is only ever the outermost, so it does not end
    a learned `[app]` that would then take `[app]] ` lines of another writer too."""
    exc, lines = _tb(_caret)
    log = [f"[app]> {line}" for line in lines]
    log.insert(3, "[app]] W1201 10:00:00.123000 140 torch/distributed/run.py:793] Setting OMP_NUM_THREADS to 1")
    _only(log, exc)
    _only([f"> {line}" for line in log], exc)


def test_a_message_line_of_the_exception_is_not_taken_for_a_prefix():
    exc = capture(_odd_message)
    lines = text_of(exc).rstrip("\n").split("\n")
    for wrapped in (fmt.compose(lines, "svc"), fmt.vllm_record("failed", exc), fmt.cloud_export(lines)):
        event = _only(wrapped, exc)
        assert event.final.message == "first\n[note] 3 | 4 ] x\nsvc  | ERROR - y"


def test_a_new_record_after_the_traceback_ends_its_message():
    exc = capture(_caret)
    log = fmt.vllm_record("failed", exc) + fmt.vllm_record("Engine shut down", None, file="engine.py", lineno=9,
                                                           level=logging.INFO)
    event = _only(log, exc)
    assert "shut down" not in event.final.message


@pytest.mark.parametrize("time_format", ["[%x %X]", "[%X]"])
@pytest.mark.parametrize("same_second", [False, True])
def test_rich_logging_handlers_records_after_a_traceback_end_its_message(time_format, same_second):
    """A child's traceback printed as it is, then the launcher's records through Rich's logging handler (a time in
    brackets or blanks for it, the padded level, the place at the right edge, a long message wrapped in its
    column): the error's message is its own, and a logged error's text reads without the place."""
    exc, lines = _tb(_chained)
    records = fmt.rich_logging([(logging.ERROR, "failed (exitcode: 1) local_rank: 0 (pid: 13852) of binary: "
                                 + "/srv/venv/bin/python3 " * 6),
                                (logging.ERROR, "ValueError: the launcher gave up")],
                               time_format, step=timedelta(0) if same_second else timedelta(seconds=1))
    assert records[-1].startswith(" " * 10) == same_second and records[-1].rstrip().endswith("api.py:672")
    log = [*lines, *records]
    event = _only(log, exc)
    assert event.final.message == "could not load\nsecond line | of the [message]"
    said = [e for e in _events(log) if e.kind is not EventKind.TRACEBACK]
    assert [(e.final.exception_type, e.final.message) for e in said] == [("ValueError", "the launcher gave up")]
    assert assert_same("\n".join([*log, ""]).encode())


def test_introductions_before_a_header_stay_the_context():
    exc, lines = _tb(_chained)
    for intro in ("Scheduler hit an exception: ", "Worker 3 failed: ", "Initialization failed. warmup error: "):
        event = _only([intro + lines[0], *lines[1:]], exc)
        assert event.context == intro.strip()
    event = _only(fmt.compose([f"Scheduler hit an exception: {lines[0]}", *lines[1:]], "sglang"), exc)
    assert event.context == "Scheduler hit an exception:"


def test_a_progress_bar_glued_to_the_header_is_not_a_prefix_of_the_frames():
    exc, lines = _tb(_chained)
    bar = "Processed prompts:   0%|          | 0/128 [00:00<?, ?it/s]"
    _only([bar + lines[0], *lines[1:]], exc)


def test_torchrun_tee_keeps_the_lines_own_first_space():
    exc, lines = _tb(_caret)
    event = _only(fmt.torchrun_tee(lines), exc)
    assert list(event.lines) == lines


@pytest.mark.parametrize("whole", [False, True], ids=("exception line", "traceback"))
def test_a_copy_begun_inside_the_first_lines_rank_prefix(whole):
    """`rank1]: ValueError: ...`: the copy began after the bracket; still the rank's prefix (PyTorch's `[rank1]: `)."""
    exc, lines = _tb(_caret)
    pasted = [f"[rank1]: {line}" for line in (lines if whole else lines[-1:])]
    pasted[0] = pasted[0][1:]
    (event,) = assert_same("\n".join([*pasted, ""]).encode())
    assert (event.root.exception_type, event.root.message, event.rank) == (type(exc).__name__, str(exc), "rank1")
    if whole:
        assert actual_chain(event.chain) == expected_chain(exc)


def test_cri_partial_records_are_joined_and_a_stripped_blank_keeps_the_chain():
    exc = capture(lambda: _long_message(40_000))
    lines = text_of(exc).rstrip("\n").split("\n")
    log = [line.rstrip() for line in fmt.cri(lines)]  # a tool stripped the blank record's last space
    assert any(" stderr P " in line for line in log) and any(line.endswith("stderr F") for line in log)
    event = _only(log, exc)
    assert event.final.message == "x" * 40_000


def _long_message(size: int):
    try:
        {}["k"]
    except KeyError as err:
        raise ValueError("x" * size) from err


def test_rays_dedup_count_does_not_hide_a_header():
    exc, lines = _tb(_chained)
    event = _only(fmt.ray_dedup([f"(RayWorker pid=12, ip=10.0.0.2) {line}" for line in lines]), exc)
    assert event.rank == "pid=12"


def test_plain_unprefixed_traceback_is_untouched():
    exc, lines = _tb(_pipes_and_brackets)
    event = _only(lines, exc)
    assert list(event.lines) == lines and event.stream == "#"


def test_a_damaged_worker_prefix_still_names_its_process():
    """A paste lost the first line's `(`: the learned prefix's pid puts it with its worker's lines. (vLLM V0
    logs `Exception in worker %s while processing method %s: %s, %s` with the error and its traceback.)"""
    exc = capture(_caret)
    message = f"Exception in worker VllmWorkerProcess while processing method load: {exc}, {text_of(exc)}"
    log = fmt.vllm_worker(fmt.vllm_record(message.rstrip("\n"), v0=True), name="VllmWorkerProcess", pid=214)
    log[0] = log[0][1:]
    event = _only(log, exc)
    assert event.rank == "pid=214" and event.context.startswith("Exception in worker")


def test_a_message_line_with_a_bar_before_an_embedded_traceback_is_no_prefix():
    exc = capture(_chained)
    message = f"Exception in worker VllmWorkerProcess while processing method load: {exc}, {text_of(exc)}"
    event = _only(fmt.vllm_record(message.rstrip("\n"), v0=True), exc)
    assert event.context == "second line | of the [message],"


def test_a_prefix_that_reads_as_a_phrase_is_taught_by_the_frames():
    """`my own app] ` before an introduction reads as a message; the frames show it is a prefix."""
    exc, lines = _tb(_chained)
    mine = [f"my own app] {line}" for line in ["Scheduler hit an exception: " + lines[0], *lines[1:]]]
    event, = _events(mine)
    assert actual_chain(event.chain) == expected_chain(exc) and not event.truncated
    events = _events(_interleave([mine, [f"other] {line}" for line in lines]]))
    assert sorted(map(repr, (actual_chain(e.chain) for e in events))) == [repr(expected_chain(exc))] * 2
    launcher = ["Loading safetensors checkpoint shards:  50% Completed | 1/2"] * (len(mine) - 2)
    event, = _events(mine[:2] + _interleave([mine[2:], launcher]))  # the launcher's lines move aside
    assert actual_chain(event.chain) == expected_chain(exc) and not event.truncated


def test_a_learned_prefix_ends_where_a_known_one_begins():
    """Text that cannot be a prefix on its own (`a `) does not end one: the learned prefix takes it in,
    and stops before vLLM's logger prefix, which keeps its meaning (the next record ends the message)."""
    exc = capture(_caret)
    log = [f"a (w pid=0) c] {line}" for line in fmt.vllm_record("failed", exc)
           + fmt.vllm_record("Avg prompt throughput: 0.0 tokens/s", None, file="metrics.py", level=logging.INFO)]
    event = _only(log, exc)
    assert "throughput" not in event.final.message


def test_words_and_numbers_alone_are_never_learned():
    """`a 0 ` in front of a known prefix would make a family that strips the first two words of any line."""
    normalizer = LineNormalizer("t.log")
    _, lines = _tb(_caret)
    for number, line in enumerate(lines):
        normalizer.normalize(f"a 0 (w pid=1) x] {line}", number)
    (plain,) = normalizer.normalize("Setting OMP_NUM_THREADS to 1", 99)
    assert plain.text == "Setting OMP_NUM_THREADS to 1"


def test_text_glued_to_a_known_prefix_is_not_learned_alone():
    """In `x:(w pid=0) y] ` the `x:` before the worker tag would be a family that takes `ValueError:`."""
    first, second = capture(_caret), capture(_chained)
    log = _interleave([[f"x:(w pid=0) y] {line}" for line in text_of(first).rstrip("\n").split("\n")],
                       [f"z] {line}" for line in text_of(second).rstrip("\n").split("\n")]])
    events = _events(log)
    assert sorted(map(repr, (actual_chain(e.chain) for e in events))) == sorted(
        map(repr, (expected_chain(first), expected_chain(second))))


def test_compose_prefix_in_front_of_an_error_without_traceback():
    """docker compose's `service  | ` is learned from an exception line too, where no traceback shows it."""
    exc = capture(lambda: {}["k"])
    lines = [*fmt.compose(["Loading the model", "RuntimeError: Failed to import transformers.generation.utils"
                           " because of the", "following error (look up to see its traceback):"], "text-generation-webui"),
             "text-generation-webui exited with code 1", *fmt.compose(["| table | cell |", "Done"], "web", 21)]
    events = _events(lines)
    assert [(e.kind, e.root.exception_type, e.root.message, e.rank) for e in events] == [
        (EventKind.BARE, "RuntimeError", "Failed to import transformers.generation.utils because of the",
         None)]
    assert events[0].stream.startswith("text-generation-webui")
    traceback = [*fmt.compose(["INFO starting"], "app"), *fmt.compose(text_of(exc).rstrip("\n").split("\n"), "app")]
    assert _only(traceback, exc).span.line_start == 2  # (a traceback behind it reads as before)


def test_compose_prefix_in_front_of_an_error_written_under_a_loggers_column():
    """Rich's logging handler writes a record's lines under its message's column, the time and level left of it: behind
    compose's `service  | `, the blanks between the prefix and an exception line are the app's, so the prefix is
    learned there too, and the error's message, begun on the line below its class, read under the column."""
    column = " " * 29
    said = ["RuntimeError:", "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc:121 CUDA failure 100:",
            "no CUDA-capable device is detected"]
    lines = fmt.compose(["[12/04/24 10:01:02] INFO     Loading visual model 'ViT-B-32__openai'",
                         *(column + line for line in said), "[12/04/24 10:01:03] INFO     Shutting down"],
                        "immich_machine_learning")
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type) == (EventKind.BARE, "RuntimeError")
    assert event.stream.startswith("immich_machine_learning")
    assert event.root.message.split() == " ".join(said[1:]).split()
    assert (event.span.line_start, event.span.line_end) == (2, 4)


class PlayListFlow:
    """A workflow's class, asked for an artifact no step stored."""


def test_a_dated_prefix_and_a_bracketed_tag_in_front_of_an_error_without_traceback():
    """Metaflow's log of a task's output: the time, then the task in brackets (`[run/step/task (pid N)]`), in front of
    each line; a step's error printed as its line alone is read behind both (a tag in brackets alone is no prefix)."""
    exc = capture(lambda: PlayListFlow().best_actor)  # type: ignore[attr-defined]
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    lines = ["2021-09-16 14:53:01.100 [1631793181811816/start/1 (pid 71500)] Task is starting.",
             f"2021-09-16 14:53:03.305 [1631793181811816/end/5 (pid 71519)] {said}",
             "2021-09-16 14:53:03.306 [1631793181811816/end/5 (pid 71519)] Task failed.", "2021-09-16 14:53:03.306 Workflow failed."]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "AttributeError", str(exc))
    assert _events(["[Bug] the model does not load", "[Bug] see the log below"]) == []


def _register_worker():
    raise ConnectionError("HTTPConnectionPool(host='localhost', port=21001): Max retries exceeded with url: /register_worker")


@pytest.mark.parametrize("form", ["fastchat", "loguru"])
def test_a_dated_levelled_prefix_in_front_of_an_error_without_traceback(form):
    """A prefix that names its time and level between bars is learned from an exception line too (FastChat
    logs stderr line by line, loguru each record), where no traceback shows it."""
    exc = capture(_register_worker)
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    write = fmt.fastchat_stderr if form == "fastchat" else fmt.loguru
    lines = [*write(["registering with the controller"]), *write([said]), *write(["retrying in 5 s"])]
    (event,) = assert_same("\n".join([*lines, ""]).encode())  # (the fast path alike)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ConnectionError", str(exc))
    assert (event.span.line_start, event.span.line_end) == (2, 2)
    assert _events(write(["| table | cell |", "Error: not a Python exception", "ValueError in a sentence"])) == []


@pytest.mark.parametrize("indent", ["", " " * 9], ids=("alone", "in-a-rich-column"))
def test_logurus_own_print_of_a_traceback_with_the_frame_that_caught_it_marked(indent):
    """loguru prints a traceback with blank lines between its frames and `> ` in place of the indentation of
    the frame that caught the error; a Rich handler prints it in its message column, indented."""
    exc, lines = _tb(_caret)
    printed = ["[12/01/26 10:00:00]", f"ERROR    Exception:{' ' * 40}richuru.py:102",
               *fmt.loguru_backtrace(lines, caught=1, indent=indent)]
    assert sum(line.lstrip().startswith("> File") for line in printed) == 1
    (event,) = assert_same("\n".join([*printed, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)


def test_a_record_whose_time_has_no_date_ends_the_message_above_it():
    """A traceback printed to the console, then a log record whose formatter prints the time alone
    (`datefmt="%H:%M:%S"`, GraphRAG's): the record is not a line of the exception's message. A line that
    only begins with a time is."""
    exc, lines = _tb(_caret)
    formatter = logging.Formatter("%(asctime)s,%(msecs)d %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    record = logging.makeLogRecord({"name": "graphrag.index.run", "levelname": "INFO", "levelno": logging.INFO,
                                    "msg": "Error running pipeline! details=None"})
    event = _only([*lines, formatter.format(record)], exc)
    assert event.span.line_end == len(lines)
    assert_same("\n".join([*lines, formatter.format(record), ""]).encode())  # (the fast path alike)
    (other,) = _events([*lines, "19:57:08 the scheduler woke up"])
    assert other.root.message.endswith("\n19:57:08 the scheduler woke up")


def _check_closed():
    raise RuntimeError('Event loop is closed')


@pytest.mark.parametrize("cut", [False, True], ids=("whole", "cut-after-the-raise-line"))
def test_github_actions_mark_on_the_raise_line_its_problem_matcher_took(cut):
    """GitHub Actions' web log shows `Error: ` before a line a problem matcher took; setup-python's takes the
    `raise X('...')` under a frame line. The line is the frame's source line; a stack cut after it raised X."""
    exc, lines = _tb(_check_closed)
    marked = [f"Error: {line}" if line.strip().startswith("raise ") else line for line in lines]
    assert sum(line.startswith("Error: ") for line in marked) == 1
    shown = marked[:-1] if cut else marked
    (event,) = assert_same("\n".join([*shown, ""]).encode())
    assert (event.root.exception_type, event.root.message, event.truncated) == ("RuntimeError", str(exc), cut)
    assert event.root.raise_site.code == "raise RuntimeError('Event loop is closed')"
    assert _events(["Error: the deploy step failed", "Error:     return value"]) == []


def test_a_loggers_place_tag_left_of_a_cut_vllm_prefix():
    """A paste cut vLLM's prefix before its place tag (`[serving_chat.py:1001] `), or just before the blank
    in front of it: learned from the exception line behind it."""
    exc = capture(_register_worker)
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    for cut in ("", " "):
        (event,) = assert_same(f"...\n{cut}[serving_chat.py:1001] {said}\n{cut}[serving_chat.py:1001] done\n".encode())
        assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ConnectionError",
                                                                               str(exc))
    assert _events(["[serving_chat.py:1001] Error: not a Python exception", "[x.py:3] waiting for ValueError: x"]) == []


def test_vllms_prefix_without_its_time():
    """vLLM's logger with a time format that prints none (`ERROR [serving.py:830] `): a known prefix on each line
    of a record it logged, and in front of an error's line alone, behind a worker's head or not."""
    exc = capture(_chained)
    lines = [line.rstrip("\r") for line in fmt.vllm_record("EngineCore failed", exc, timeless=True)]
    for head in ("", "(APIServer pid=1) "):
        (event,) = assert_same("\n".join(f"{head}{line}" for line in ["INFO [api_server.py:12] started", *lines, ""]).encode())
        assert (actual_chain(event.chain), event.span.line_start) == (expected_chain(exc), 3)  # (its header's line)
        said = traceback.format_exception_only(err := capture(_register_worker))[0].rstrip("\n")
        (event,) = assert_same(f"{head}INFO [api_server.py:12] started\n{head}ERROR [serving.py:830] {said}\n".encode())
        assert (event.kind, event.root.exception_type, event.root.message, event.span.line_start) == (
            EventKind.BARE, "ConnectionError", str(err), 2)


def test_a_record_that_repeats_its_prefix_takes_no_line_without_it_after_another_writers():
    """vLLM's logger puts its prefix on each line of a record: a line without it that comes after other processes'
    lines is no part of the record's message (an Ascend runtime's own report, a progress bar), whichever path reads it."""
    exc = capture(lambda: {}["model.layers.23.mlp.experts.w2_weight_offset"])
    record = [line.rstrip("\r") for line in fmt.vllm_record("Error executing method 'load_model'.", exc)]
    worker = fmt.vllm_worker(["INFO 11-28 03:12:41 [model_runner.py:943] Starting to load model"] * 3, pid=1949)
    others = ["[ERROR] 2025-05-28-03:53:39 (PID:23386, Device:0, RankID:-1) ERR99999 UNKNOWN application exception",
              "Loading safetensors checkpoint shards:   1% Completed | 2/157 [00:04<05:31,  2.14s/it]"]
    (event,) = assert_same("\n".join(["INFO 11-28 03:12:40 [core.py:12] start", *record, *worker, *others, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert event.span.line_end == 1 + len(record)
    # (right below it, where no width is known, such a line may be the rest of one a terminal wrapped: still its own)
    (event,) = assert_same("\n".join([*record, " wrapped on", ""]).encode())
    assert event.root.message.endswith("\n wrapped on")


def test_a_vllm_records_line_a_terminal_wrapped_by_columns_keeps_its_rest():
    """A terminal wraps by columns, and a CJK character takes two: the rest of such a line, right below it without
    the prefix, is still the message's, where the input's width is known (from two frame lines wrapped before) and
    the line's characters fall short of it."""
    width, prefix = 100, "ERROR 05-28 03:53:36 [core.py:12] "

    def wrapped(text: str) -> list[str]:
        out, line, columns = [], prefix, len(prefix)
        for char in text:
            wide = 2 if ord(char) > 0x2E80 else 1
            if columns + wide > width:
                out.append(line)
                line, columns = "", 0
            line, columns = line + char, columns + wide
        return [*out, line]

    exc = capture(lambda: {}["模型权重文件缺失：model.layers.23.mlp.experts.w2_weight_offset 在检查点中不存在，请检查路径"])
    deep = "/usr/local/lib/python3.10/site-packages/vllm/model_executor/model_loader/a/much/longer/path/loader_file.py"
    lines = [*wrapped("Traceback (most recent call last):"), *wrapped(f'  File "{deep}", line 456, in load_weights'),
             *wrapped("    weights = params_dict[name]"), *wrapped(f'  File "{deep}", line 457, in load_weights'),
             *wrapped("    weights = params_dict[name]"), *wrapped(traceback.format_exception_only(exc)[0].rstrip("\n"))]
    (event,) = assert_same("\n".join(["INFO 05-28 03:53:30 [x.py:1] start", *lines, "INFO 05-28 03:53:40 [x.py:1] next", ""]).encode())
    assert event.root.message.replace("\n", "") == str(exc) and event.span.line_end == 1 + len(lines)


@pytest.mark.parametrize("prefix", ["(A pid=0) :: A | A] ", "A (A pid=0) :: A] "])
def test_a_prefix_nobody_listed_around_a_known_one_that_begins_with_a_colon(prefix):
    """A worker's prefix with text of another's after it that begins with a colon (a message's rest reads so only where
    no known prefix is before it on its line), or inside such text (part of the unknown one): peeled, on every line."""
    exc, lines = _tb(_chained)
    event = _only([f"{prefix}{line}" for line in lines], exc)
    assert (event.context, event.span.line_start, event.span.line_end) == ("", 1, len(lines))


def test_a_loggers_line_whose_time_a_copy_cut_off():
    """logging's `%(asctime)s - %(name)s - %(levelname)s - ...` whose first line a copy began after the time
    (`lmdeploy - ERROR - base.py:55 - AttributeError: ...`): the rest is still a known prefix."""
    exc = capture(_register_worker)
    first, *rest = fmt.logging_placed(traceback.format_exception_only(exc)[0].rstrip("\n"))
    for line in (first, first.split(" - ", 1)[1]):
        (event,) = assert_same("\n".join([line, *rest, fmt.logging_placed("next")[0], ""]).encode())
        assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ConnectionError", str(exc))
    assert _events(["some - ERROR - words", "two words - ERROR - ValueError in prose"]) == []


@pytest.mark.parametrize("fields", [False, True], ids=("time and level", "more fields"))
@pytest.mark.parametrize("blanks", ["", " "])
def test_a_loggers_line_with_the_time_and_level_but_no_name(blanks, fields):
    """`%(asctime)s - %(levelname)s - %(message)s` (no logger name), or more fields before the level and a colon
    after it (crewAI's `... - 14344 - llm.py-llm:161 - ERROR: `): a logged error's class and a logged traceback are
    read, on every line a paste shifted by a blank too, and the log's first time on both paths (the fast path
    skips the line that tells it)."""
    exc = capture(_register_worker)
    logged = fmt.logging_nameless(f"verifier 0: request failed after 0.46s: {type(exc).__name__}: {exc}", fields=fields)
    logged_tb = fmt.logging_nameless("Exception in step", exc, fields=fields)
    for lines, kind in ((logged, EventKind.NOTICE), (logged_tb, EventKind.TRACEBACK)):
        started = fmt.T0 - timedelta(seconds=5)
        info = fmt.logging_nameless("step 3 done", when=started, level=logging.INFO, fields=fields)
        data = "\n".join(blanks + line for line in [*info, *lines, ""]).encode()
        (event,) = assert_same(data)
        assert (event.kind, event.root.exception_type, event.root.message) == (kind, "ConnectionError", str(exc))
        assert fast_path(data, 1 << 20)[2] == started.replace(microsecond=started.microsecond // 1000 * 1000)
    assert _events(fmt.logging_nameless(f"retrying after {type(exc).__name__}: {exc}", level=logging.INFO)) == []


class OutOfResources(Exception):
    """A class of a module of exceptions, named without an Error suffix (as triton.runtime.errors')."""


OutOfResources.__module__ = "triton.runtime.errors"


@pytest.mark.parametrize("form", ["ci_clock", "iso", "app_stream_level", "bracketed_clock", "bracketed_clock_colon", "buildkit",
                                  "buildkit_plain"])
def test_a_time_prefix_in_front_of_an_error_without_traceback(form):
    """A time alone (a CI runner's clock, an ISO time, an app's in brackets, a relay's with a colon after them, Docker
    BuildKit's seconds into a step in its summary of a failed step or its plain progress) or with a stream and level, in
    front of an exception line with no traceback, is learned from it; its type reads as one by its module's name too."""
    for exc in (capture(_register_worker), OutOfResources("out of resource: shared memory, Required: 98304")):
        said = traceback.format_exception_only(exc)[0].rstrip("\n")
        lines = ["starting", said, "done"]
        wrapped = (fmt.ci_clock(lines) if form == "ci_clock" else fmt.app_stream_level(lines) if form == "app_stream_level"
                   else [f"[02:20:3{i}.958] {line}" for i, line in enumerate(lines)] if form == "bracketed_clock"
                   else [f"[02:20:3{i}.958]: {line}" for i, line in enumerate(lines)] if form == "bracketed_clock_colon"
                   else [f"{25.4 + i / 100:.2f} {line}" for i, line in enumerate(lines)] if form == "buildkit"
                   else [f"#8 {1.737 + i:.3f} {line}" for i, line in enumerate(lines)] if form == "buildkit_plain"
                   else [f"2026-01-26 17:25:3{i} {line}" for i, line in enumerate(lines)])
        (event,) = assert_same("\n".join([*wrapped, ""]).encode())
        assert (event.kind, event.root.exception_type, event.root.message, event.span.line_start) == (
            EventKind.BARE, traceback.format_exception_only(exc)[0].split(":")[0], str(exc), 2)
    assert _events(fmt.ci_clock(["Error: not a Python exception", "waiting for ValueError: x"])) == []


@pytest.mark.parametrize("jupyter", [False, True], ids=("tornado", "jupyter"))
def test_tornados_log_format(jupyter):
    """Tornado's `[E 211213 04:25:33 __main__:37] ` (KServe) and Jupyter's dated form: a logged traceback, an
    exception line logged at E, KServe's `exception type <class 'X'>, exception msg: ...`; not at I."""
    exc = capture(_register_worker)
    copied = fmt.T0 - timedelta(seconds=5)
    info = fmt.tornado("Copying contents of /mnt/models to local", when=copied, level=logging.INFO, jupyter=jupyter)
    logged = [fmt.tornado("Uncaught exception in model load", exc, jupyter=jupyter),
              fmt.tornado(traceback.format_exception_only(exc)[0].rstrip("\n"), jupyter=jupyter),
              fmt.tornado(f"fail to load model from dir /mnt/models. exception type {type(exc)}, exception msg: {exc}",
                          jupyter=jupyter)]
    for lines, kind in zip(logged, (EventKind.TRACEBACK, EventKind.BARE, EventKind.NOTICE)):
        (event,) = assert_same("\n".join([*info, *lines, ""]).encode())
        assert (event.kind, event.root.exception_type, event.root.message) == (kind, "ConnectionError", str(exc))
        assert "[E " not in event.context
    assert _events(fmt.tornado(f"retrying: exception type {type(exc)}, exception msg: {exc}", level=logging.INFO,
                               jupyter=jupyter)) == []
    started = copied.replace(microsecond=copied.microsecond // 1000 * 1000)  # (the fast path skips its line)
    assert fast_path("\n".join([*info, *logged[0], ""]).encode(), 1 << 20)[2] == (started if jupyter else None)


class _ResourceLimitExceeded(Exception):
    """A class botocore makes for an error code an AWS service returned (`botocore.errorfactory`)."""


_ResourceLimitExceeded.__module__, _ResourceLimitExceeded.__qualname__ = "botocore.errorfactory", "ResourceLimitExceeded"


class _InvalidArgument(Exception):
    """A class onnxruntime makes for one of its statuses (`onnxruntime.capi.onnxruntime_pybind11_state`)."""


_InvalidArgument.__module__, _InvalidArgument.__qualname__ = "onnxruntime.capi.onnxruntime_pybind11_state", "InvalidArgument"


@pytest.mark.parametrize("exc", [
    _ResourceLimitExceeded("An error occurred (ResourceLimitExceeded) when calling the CreateTrainingJob operation: "
                           "The account-level service limit 'ml.p3.2xlarge for training job usage' is 0 Instances"),
    _InvalidArgument("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: image for the "
                     "following indices index: 2 Got: 1600 Expected: 640")], ids=("botocore", "onnxruntime"))
def test_an_error_whose_class_is_its_code_printed_without_its_module(exc):
    """`print(f"{type(e).__name__}: {e}")` of a botocore or onnxruntime error: a class named after the status, no
    suffix, read by its library's message (`An error occurred (Code) when calling the X operation: ...`,
    `[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ...`)."""
    for said in (f"{type(exc).__qualname__}: {exc}", traceback.format_exception_only(exc)[0].rstrip("\n")):
        (event,) = assert_same(f"{NOISE_BEFORE}\n{said}\n{NOISE_AFTER}\n".encode())
        assert (event.kind, event.root.short_type, event.root.message) == (EventKind.BARE, type(exc).__qualname__, str(exc))
    assert not _events([NOISE_BEFORE, "Status: An error occurred while training", NOISE_AFTER])


def test_an_exception_line_behind_a_coloured_prefix_whose_escapes_were_lost():
    """Ray colours a worker's prefix; an issue tracker drops the ESC of each code from a pasted log, leaving
    `[36m(pid=12, ip=...)[0m ValueError: ...`: the codes go as the escapes would, the prefix is Ray's."""
    said = traceback.format_exception_only(capture(_register_worker))[0].rstrip("\n")
    (event,) = assert_same(f"{NOISE_BEFORE}\n[36m(run_inference pid=2816485)[0m {said}\n{NOISE_AFTER}\n".encode())
    assert (event.kind, event.root.exception_type, f"{event.root.exception_type}: {event.root.message}") == (
        EventKind.BARE, said.split(":")[0], said)
    assert "pid=2816485" in event.stream
    # a code alone, with no reset after it, is text (an index, a duration): left as it is
    (event,) = assert_same(f"{NOISE_BEFORE}\nValueError: took [5m to fail\n{NOISE_AFTER}\n".encode())
    assert event.root.message == "took [5m to fail"


def test_an_error_logged_behind_a_time_alone_and_its_level_padded_in_brackets():
    """`%(asctime)s [%(levelname)-7s] %(name)s: %(message)s` with a time-only date format (a desktop app's
    worker: `19:37:45 [ERROR  ] ui.workers.gpu_job_worker: Unexpected error: RuntimeError: ...`); at a lower
    level, no error."""
    exc = RuntimeError("Compiler: cl is not found.")
    form, said = "%(asctime)s [%(levelname)-7s] %(name)s: %(message)s", "Unexpected error: {cls.__name__}: {exc}"
    (line,) = forms.logged_class(exc, form, said, datefmt="%H:%M:%S")
    (event,) = assert_same(f"{NOISE_BEFORE}\n{line}\n{NOISE_AFTER}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "RuntimeError", str(exc))
    (line,) = forms.logged_class(exc, form, said, level=logging.WARNING, datefmt="%H:%M:%S")
    assert not assert_same(f"{NOISE_BEFORE}\n{line}\n{NOISE_AFTER}\n".encode())
    # dated, the level unbracketed (`2025/07/06 20:34:01 ERROR dspy.teleprompt.simba: ...`)
    (line,) = forms.logged_class(exc, "%(asctime)s %(levelname)s %(name)s: %(message)s", said, datefmt="%Y/%m/%d %H:%M:%S")
    (event,) = assert_same(f"{NOISE_BEFORE}\n{line}\n{NOISE_AFTER}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "RuntimeError", str(exc))


def test_one_cloud_logging_entry_alone_is_read_through_its_prefix():
    """A single entry copied from Cloud Logging (its severity and time before it): nothing to learn the
    prefix from, but a known one."""
    exc = capture(_odd_message)
    said = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    for severity in ("DEFAULT", "ERROR"):
        (line,) = fmt.cloud_export([said], severity=severity)
        (event,) = events_from_lines([NOISE_BEFORE, line, NOISE_AFTER], "x.log", NO_NOTICES)
        assert (event.chain[-1].exception_type, event.chain[-1].message) == ("ValueError", "first")
        assert event.timestamp is not None and event.timestamp.year == fmt.T0.year


def test_an_exception_line_torch_logged_at_warning_level_alone():
    """dynamo's fallback to eager logs the error it met, at WARNING, behind torch's old logging prefix."""
    exc = capture(_odd_message)
    (line,) = fmt.torch_logging([f"{type(exc).__name__}: {str(exc).splitlines()[0]}"])
    (event,) = events_from_lines([NOISE_BEFORE, line, NOISE_AFTER], "x.log", NO_NOTICES)
    assert (event.chain[-1].exception_type, event.chain[-1].message, event.timestamp) == (
        "ValueError", "first", fmt.T0.replace(microsecond=fmt.T0.microsecond // 1000 * 1000))


def test_an_oslo_log_error_alone_is_read_through_its_prefix():
    """OpenStack's services log an error's line alone behind oslo.log's prefix: the time, the pid and a logger
    named in lower case before the exception's type (no traceback to learn the prefix from); a copy may keep
    only the level and the logger. The pid names the process."""
    exc = capture(_odd_message)
    said = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    stamped = fmt.oslo("unused", [said], name="neutron")[1]
    for line in (stamped, f"ERROR nova.compute.manager {said}"):
        (event,) = assert_same(f"{NOISE_BEFORE}\n{line}\n{NOISE_AFTER}\n".encode())
        assert (event.chain[-1].exception_type, event.chain[-1].message, event.span.line_start) == ("ValueError", "first", 2)
    assert LineNormalizer("x.log").normalize(stamped, 1)[0].rank == "pid=2711"
    # (a level and a word in prose stay prose: the logger's name has no dot, and no time is before it)
    assert _events([f"ERROR retrying after {said}"]) == []


@pytest.mark.parametrize("host", ["gpu004", "node-17", "worker_3"])
@pytest.mark.parametrize("cut", [0, 1], ids=("whole", "from-a-frame"))
def test_pdsh_host_names_in_front_of_a_traceback(host, cut):
    """pdsh puts a host's name, not only its address, in front of each line (`gpu004: `): learned from the
    traceback's landmarks like any prefix, though a name and a colon open an exception line too; the traceback is
    read whole on the host's channel. A name that reads as an exception's type or a word is not one."""
    exc, lines = _tb(_chained)
    if not cut:
        event = _only(fmt.pdsh(lines, host=host), exc)
    else:  # (cut at its start: the paste's)
        (event,) = _events(fmt.pdsh(lines[cut:], host=host))
        assert [(link.exception_type, link.message) for link in event.chain] == [
            ("KeyError", "'missing'"), ("RuntimeError", str(exc))]
    assert event.stream.startswith(host) and event.root.raise_site.function == "_chained"
    assert assert_same("\n".join([*fmt.pdsh(lines, host=host), ""]).encode())[0].chain == event.chain
    (said,) = _events(fmt.pdsh([lines[-1]], host="ValueError"))  # (not a host: the line's own exception line)
    assert said.root.exception_type == "ValueError"


@pytest.mark.parametrize("header", [True, False], ids=("whole", "from-a-frame"))
def test_a_relay_that_logs_each_line_flush_left_behind_absls_prefix(header):
    """AlphaFold's `run_docker.py` logs each line its container prints through absl, stripped: glog's prefix at
    INFO in front of every line, no indentation left. From its header or from a frame, the traceback is read with
    its frames."""
    exc, lines = _tb(_register_worker)
    relayed = fmt.glog([line.strip() for line in lines[0 if header else 1:]], level="INFO", thread=139862869276480,
                       where="run_docker.py:222")
    assert relayed[int(header)].split("] ", 1)[1].startswith('File "')  # (flush left)
    (event,) = assert_same("\n".join([*relayed, ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("ConnectionError", str(exc))
    assert event.root.raise_site.function == "_register_worker"


def test_known_prefixes_behind_a_learned_one_in_front_of_an_exception_line():
    """A log collector's time in front of each line, torchrun's `[rank3]: ` behind it on the ranks' lines; docker
    compose's service in front of a vLLM worker's and logger's prefixes: an exception line printed there without
    its traceback is read, on its rank."""
    exc = capture(_register_worker)
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    lines = [f"2024-11-20 14:37:16 [rank3]: {said}", "2024-11-20 14:37:16 DEBUG:filelock:Lock 1403 released on /x.lock"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.exception_type, event.root.message, event.rank) == ("ConnectionError", str(exc), "rank3")
    (line,) = fmt.compose(fmt.vllm_worker(fmt.vllm_record(said, file="core.py", lineno=1349), name="EngineCore", pid=133),
                          service="vllm-1 ")
    (event,) = assert_same(f"{line}\n".encode())
    assert (event.root.exception_type, event.root.message, event.rank) == ("ConnectionError", str(exc), "pid=133")


def test_uvicorns_level_on_each_line_of_a_relayed_traceback():
    """An app that relays its child's stderr through uvicorn's logger, line by line: `ERROR:    ` in front of each
    line (a level and a colon, as an exception line begins). The traceback is read whole; the level is no class."""
    exc, lines = _tb(_chained)
    event = _only(fmt.uvicorn(lines), exc)
    assert event.root.exception_type == "KeyError"
    (cut,) = assert_same("\n".join([*fmt.uvicorn(lines[1:]), ""]).encode())  # (copied from its first frame)
    assert [link.exception_type for link in cut.chain] == ["KeyError", "RuntimeError"]


@pytest.mark.parametrize(("wrap", "indent"), [(lambda lines: fmt.srun_label(lines, 3, 16), ""),
                                              (lambda lines: fmt.compose(lines, "sglang-1"), ""),
                                              (lambda lines: fmt.compose(lines, "sglang-1"), " ")],
                         ids=["srun", "compose", "compose-one-blank"])
def test_a_paste_begun_at_a_frame_that_lost_its_indentation_behind_a_prefix(wrap, indent):
    """A copy begun at a frame line whose indentation it cut (to none, or one blank), behind srun's label or compose's
    service: that frame teaches the prefix (a bar's blank with it), so the lines below lose it as they should."""
    exc, lines = _tb(_register_worker)
    cut = [indent + lines[3].lstrip(), *lines[4:]]
    (event,) = assert_same(("\n".join(wrap(cut)) + "\n").encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert event.root.raise_site.function == "_register_worker"


def _interrupted():
    raise KeyboardInterrupt


@pytest.mark.parametrize("separator, nanoseconds", [(" | ", False), ("\t", False), (" | ", True)],
                         ids=["table", "tab-separated", "engine-time"])
def test_a_container_uis_export_newest_line_first(separator, nanoseconds):
    """Synology's or Portainer's log table copied as text, the newest row first: the exception line's prefix (a time and
    the stream) is learned above the frames it follows, and the traceback is read in Python's order. (The engine's
    RFC 3339 time is a collector's prefix of its own: the stream's bars behind it are learned from the exception line.)"""
    exc, lines = _tb(_caret)
    rows = fmt.container_ui_export(["booting", *lines, "restarting"], separator=separator, nanoseconds=nanoseconds)
    (event,) = [e for e in assert_same(("\n".join(rows) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert event.root.raise_site.function == "_caret"
    # (an error without a message, its class alone on the exception line, teaches the prefix too: Ctrl-C's)
    interrupted, lines = _tb(_interrupted)
    rows = fmt.container_ui_export(["booting", *lines], separator=separator, nanoseconds=nanoseconds)
    (event,) = [e for e in assert_same(("\n".join(rows) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert (event.root.exception_type, event.root.message, event.root.raise_site.function) == (
        "KeyboardInterrupt", "", "_interrupted")


@pytest.mark.parametrize("level", ["info", "error"])
def test_a_childs_error_line_relayed_through_structlogs_console_renderer(level):
    """A runner relaying its child's stderr line by line through structlog's console renderer (Meltano's), the level
    padded inside its brackets (`[info     ] `), the runner's pairs after the line: the child's error is read."""
    exc = raised(ValueError("duplicate key value violates unique constraint"))
    said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    lines = [fmt.structlog_console("Extracting rows", level="info", name="tap-github"),
             fmt.structlog_console(said, level=level, name="target-postgres", stdio="stderr")]
    (event,) = assert_same(("\n".join(lines) + "\n").encode())
    assert event.root.exception_type == "ValueError" and event.root.message.startswith(str(exc))


@pytest.mark.parametrize("step", [16, None], ids=["progress", "failed-step-summary"])
def test_buildkits_seconds_ticking_within_a_traceback_keep_it_one(step):
    """BuildKit's seconds into a step tick over within one traceback: they are its time, not whose the line is."""
    exc, lines = _tb(_caret)
    logged = fmt.buildkit(["Collecting torch", *lines, "ERROR: failed to build"], step=step, start=31.5)
    at = 1 if step else 0
    assert logged[1].split(" ")[at] != logged[-2].split(" ")[at]  # (the seconds change within it)
    (event,) = [e for e in assert_same(("\n".join(logged) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert (event.root.exception_type, event.root.message, event.truncated) == (type(exc).__name__, str(exc), False)
    assert event.root.raise_site.function == "_caret"


def test_a_servers_log_copied_from_a_terminal_uis_log_pane():
    """k9s's log pane copied with its borders, each line padded to the pane's width between them: the vLLM records
    inside are read as from the plain log (a box around any other text is Rich's, read as its traceback)."""
    exc = raised(RuntimeError("CUDA error: an illegal memory access was encountered"))
    records = [*fmt.vllm_record("Added request chatcmpl-1.", None, level=logging.INFO),
               *fmt.vllm_record("Engine background task failed", exc)]
    (plain,) = assert_same(("\n".join(records) + "\n").encode())
    boxed = fmt.tui_log_box(records)
    assert boxed[2].startswith("\u2502 ") and boxed[2].endswith(" \u2502")
    (event,) = assert_same(("\n".join(boxed) + "\n").encode())
    assert event.chain == plain.chain and (event.root.exception_type, event.root.message) == ("RuntimeError", str(exc))
    bare, lines = _tb(_caret)  # (a traceback printed without a prefix: its header, frames, sources and exception line)
    (event,) = assert_same(("\n".join(fmt.tui_log_box(["Loading weights", *lines])) + "\n").encode())
    assert actual_chain(event.chain) == expected_chain(bare)


def test_a_viewers_table_of_events_copied_newest_first():
    """A log viewer's events copied as a table, newest first, each row's time in epoch milliseconds and in ISO 8601
    before the line: the prefix is learned from the exception line, which comes first, and the traceback read in
    Python's order."""
    exc, lines = _tb(_caret)
    rows = fmt.events_table_copy(["[INFO] Booting worker with pid: 7", *lines, "[ERROR] Worker failed to boot."])
    (event,) = [e for e in assert_same(("\n".join(rows) + "\n").encode()) if e.kind is EventKind.TRACEBACK]
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))
    assert event.root.raise_site.function == "_caret"


def test_an_error_behind_a_prefix_nobody_listed_that_names_exception_itself_or_is_a_repr():
    """`raise Exception(...)` printed behind compose's service (SGLang's CUDA graph capture), and an error's repr that
    vLLM's client logs behind compose: each teaches the prefix, so the error is read."""
    exc = raised(Exception("Capture cuda graph failed: CUDA out of memory."))
    (event,) = assert_same(("\n".join(fmt.compose(["starting", *text_of(exc).splitlines()[-1:]], "sglang-1")) + "\n").encode())
    assert (event.root.exception_type, event.root.message) == ("Exception", str(exc))
    died = RuntimeError("Engine process (pid 3607156) died.")
    logged = fmt.compose([*fmt.vllm_record("Added request chatcmpl-1.", None, level=logging.INFO),
                          *fmt.vllm_record(repr(died), None)], "vllm-1")
    (event,) = assert_same(("\n".join(logged) + "\n").encode())
    assert (event.root.exception_type, event.root.message) == ("RuntimeError", str(died))


def test_an_error_behind_a_collectors_prefix_and_the_apps_time():
    """docker compose's service, then the app's own time, then torchrun's rank, in front of an exception line and no
    traceback (a paste's first line): both prefixes nobody listed are learned, the rank is read."""
    exc, lines = _tb(_register_worker)
    logged = fmt.compose([f"2024-11-20 14:37:16 [rank3]: {lines[-1]}", "2024-11-20 14:37:16 DEBUG:filelock:lock"], "trainer")
    (event,) = assert_same(("\n".join(logged) + "\n").encode())
    assert (event.root.exception_type, event.root.message, event.rank) == (type(exc).__name__, str(exc), "rank3")


def test_frames_flush_left_behind_a_workers_prefix_behind_a_prefix_nobody_listed():
    """A Ray actor's lines (`(LLMRayActor pid=7) `) whose frames a copy left flush left, behind compose's service: a
    frame right after the worker's parenthesis teaches the service's prefix, and the stack is read."""
    exc, lines = _tb(_register_worker)
    flush = [line.lstrip() for line in lines[1:]]
    logged = fmt.compose([f"(LLMRayActor pid=700386) {line}" for line in flush], "trainer")
    (event,) = [e for e in assert_same(("\n".join(logged) + "\n").encode()) if e.root.exception_type]
    assert (event.root.exception_type, event.root.raise_site.function) == (type(exc).__name__, "_register_worker")


def test_a_launchers_host_and_rank_in_brackets():
    """`[gpu187:2]:` glued to each line a rank prints (a cluster launcher's label): learned from an exception line
    printed first, alone; each rank its own channel, so two ranks' tracebacks line by line stay apart."""
    exc, lines = _tb(_register_worker)
    (bare,) = assert_same(f"[gpu187:2]:{lines[-1]}\n[gpu187:0]:  6%|5         | 7/127\n".encode())
    assert (bare.root.exception_type, bare.root.message, bare.rank) == (type(exc).__name__, str(exc), "rank2")
    both = _events(_interleave([[f"[gpu187:{rank}]:{line}" for line in lines] for rank in (0, 2)]))
    assert [e.rank for e in both] == ["rank0", "rank2"]
    assert all(actual_chain(e.chain) == expected_chain(exc) for e in both)


@pytest.mark.parametrize("name", ["vllm_v1", "sglang_each_line", "container_logging"])
def test_a_record_a_paste_double_spaced_stays_one_record(name):
    """A copy that put a blank line after every line (a web console's): the blank lines, which have no prefix, do not
    end the record whose prefix every line repeats, so its traceback is read whole. (A message's lines would be read
    apart: a blank line ends a message.)"""
    exc, lines = _tb(_caret)
    spaced = [out for line in FORMATS[name]((exc, lines)) for out in (line, "")]
    event = _only([NOISE_BEFORE, "", *spaced, NOISE_AFTER], exc)
    assert event.root.raise_site is not None
    assert_same("\n".join([NOISE_BEFORE, "", *spaced, NOISE_AFTER, ""]).encode())


@pytest.mark.parametrize("prefix", ["", "[rank3]: "])
def test_a_caret_line_a_copy_put_flush_left_stays_under_its_source_line(prefix):
    """A caret line (3.11+) that lost its indentation (`[rank3]: ^^^^` under a frame's source line): the traceback goes
    on past it to its exception line, whose frames are all there."""
    exc, lines = _tb(_caret)
    flush = [line.lstrip() if set(line.strip()) <= {"^", "~"} and line.strip() else line for line in lines]
    assert flush != lines  # (a caret line was there)
    (event,) = _events([NOISE_BEFORE, *(prefix + line for line in flush), NOISE_AFTER])
    assert [(link.exception_type, link.message, [f.lineno for f in link.frames]) for link in event.chain] == [
        (link.exception_type, link.message, [frame[1] for frame in link.frames]) for link in expected_chain(exc)]


def test_a_log_drains_severity_in_lower_case_that_changes_on_the_exception_line():
    """A drain's viewer gives each line a severity by its words: `info` in front of a traceback's frames, `error` in
    front of its exception line (and its header, which names none). The severity is part of the prefix, and says
    nothing of who wrote the line: one traceback, whole."""
    exc, lines = _tb(_chained)
    logged = fmt.log_drain(lines)
    assert {line.split()[5] for line in logged} == {"info", "error"}
    event = _only([*fmt.log_drain([NOISE_BEFORE]), *logged, *fmt.log_drain([NOISE_AFTER])], exc)
    assert actual_chain(event.chain) == expected_chain(exc)


def test_a_programs_name_in_front_of_every_line_a_shell_loop_relayed_flush_left():
    """A service's wrapper that echoes `bash: ` in front of each line its program wrote, every line's indentation
    stripped by `read`: the name is a prefix (one word in lower case, which no exception is called), and the stack
    under it is read."""
    exc, lines = _tb(_chained)
    relayed = fmt.shell_relayed(["[2020-03-11 20:36:05,588: INFO/MainProcess] beat: Starting...", *lines])
    (event,) = [e for e in _events(relayed) if e.root.exception_type]
    assert [(link.exception_type, link.message, [f.lineno for f in link.frames]) for link in event.chain] == [
        (link.exception_type, link.message, [frame[1] for frame in link.frames]) for link in expected_chain(exc)]
    said = fmt.shell_relayed(["ValueError: bad config"])
    assert [(e.root.exception_type, e.root.message) for e in _events(said)] == [("ValueError", "bad config")]
    # (a word that labels the text after it is none: Ray's `System error: ...` over `traceback: Traceback (most ...`)
    caret, told = _tb(_caret)
    labelled = [f"ray.exceptions.RaySystemError: System error: {caret}", f"traceback: {told[0]}", *told[1:]]
    (event,) = _events(labelled)
    assert [link.exception_type for link in event.chain] == ["IndexError", "ray.exceptions.RaySystemError"]


def test_azure_clis_frames_as_path_ln_n():
    """Azure CLI's `--debug` log prints a command's traceback with each frame as `cli/core/commands/__init__.py, ln 603,
    in execute`: the stack is read, raised where its last frame says."""
    exc = capture(_register_worker)
    lines = forms.knack_traceback(exc)
    (event,) = assert_same("\n".join(["cli.knack.cli: Event: CommandInvoker.OnTransformResult", *lines, ""]).encode())
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)
    assert [(f.path.rsplit("/", 1)[-1], f.lineno, f.function) for f in event.root.frames] == [
        (f[0].rsplit("/", 1)[-1], f[1], f[2]) for f in expected.frames]
    assert _events(["see tests/x.py, ln 3, in main for the details"]) == []
