"""Incidents across ranks, chains and cascades: the 8-rank torchrun fixture (one rank fails, seven
time out ten minutes later, torchrun tears the job down), chains of real raised exceptions, runs,
and the blame frame."""

from __future__ import annotations

import gc
import io
import json
import os
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from functools import cache
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.core.matcher import Matcher
from analyzer.core.records import Link
from analyzer.core.scan import Analysis, events_from_lines
from analyzer.core.schema import Pattern, PatternSource
from analyzer.sinks.serialize import incident_dict
from analyzer.sources.packs import load_packs
from tests import failureforms as forms
from tests import logformats as fmt
from tests.realtb import capture, raised, text_of
from tests.support import NO_NOTICES, builtin_engine
from tests.test_fastpath import assert_same

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
RUN_A = str(LOGS / "torchrun_8rank_cascade.log")
RUN_B = str(LOGS / "torchrun_8rank_cascade_rerun.log")
OTHER_RANKS = ["rank0", "rank1", "rank2", "rank4", "rank5", "rank6", "rank7"]


@cache
def _scanned(args: tuple[str, ...]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["scan", "--format", "jsonl", *args]) == 0
    return out.getvalue()


def scan_json(*args) -> list[dict]:
    """The JSON lines of one scan; each distinct scan runs once per session."""
    return [json.loads(line) for line in _scanned(args).splitlines()]


def by_pattern(incidents: list[dict]) -> dict:
    return {i["pattern_id"]: i for i in incidents}


# ----------------------------------------------------------------------------- the 8-rank cascade


def test_first_real_failure_once_with_its_rank_and_everything_else_follows_from_it():
    incidents = scan_json(RUN_A)
    (root,) = [i for i in incidents if i["role"] == "root"]
    assert root["is_run_root"] and root["caused_by"] is None
    assert (root["exception_type"], root["ranks"], root["count"]) == ("kvlink.errors.TransferError", ["rank3"], 1)
    assert root["first_seen"] == root["last_seen"] == "2026-09-14T08:15:02.184000"
    assert root["pattern_id"] is None and root["fingerprint"].startswith("TransferError@transfer_sync:")
    consequences = [i for i in incidents if i is not root]
    assert {i["pattern_id"] for i in consequences} == {
        "torch.nccl-watchdog-timeout-line", "torch.nccl-watchdog-timeout", "torch.elastic-closing-signal",
        "torch.elastic-worker-failed", "torch.elastic-child-failed"}
    assert all(i["role"] == "consequence" and i["caused_by"] == root["id"] and not i["is_run_root"]
               for i in consequences)


def test_echoes_on_seven_ranks_are_one_incident_each():
    found = by_pattern(scan_json(RUN_A))
    line = found["torch.nccl-watchdog-timeout-line"]  # the watchdog's ERROR log line
    traceback = found["torch.nccl-watchdog-timeout"]  # each rank's main thread raising from wait()
    for incident in (line, traceback):
        assert incident["ranks"] == OTHER_RANKS and incident["count"] == 7 and len(incident["occurrences"]) == 7
    assert line["kind"] == "notice" and traceback["kind"] == "traceback"
    assert (line["first_seen"], line["last_seen"]) == ("2026-09-14T08:25:03.410000", "2026-09-14T08:25:03.428000")
    assert line["raise_site"] is None and line["blame_site"] is None
    sigterm = found["torch.elastic-closing-signal"]
    assert sigterm["count"] == 7 and sigterm["ranks"] == [] and sigterm["params"] == {"pid": 5124, "signal": "SIGTERM"}
    assert found["torch.elastic-worker-failed"]["params"]["local_rank"] == 0  # torchrun's idea of the first failure


def test_json_carries_role_cause_fingerprint_blame_and_last_seen():
    for incident in scan_json(RUN_A):
        assert {"role", "caused_by", "fingerprint", "blame_site", "last_seen", "is_run_root"} <= set(incident)
        assert incident["fingerprint"] and incident["last_seen"] >= incident["first_seen"]
    root = scan_json(RUN_A)[0]
    assert root["blame_site"] == {"path": "/workspace/serve.py", "relpath": "/workspace/serve.py", "line": 118,
                                  "function": "main", "code": "engine.run_forever()"}


def test_human_output_leads_with_the_root_cause_and_folds_the_consequences(capsys):
    assert main(["scan", RUN_A]) == 0
    out = capsys.readouterr().out
    assert out.startswith("● ROOT CAUSE I1 kvlink.errors.TransferError ×1 on rank3 first 2026-09-14 08:15:02\n")
    assert "followed by 5 consequence incident(s):" in out
    assert "● CONSEQUENCE" not in out
    folded = out.split("followed by 5 consequence incident(s):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in folded] == ["I2", "I5", "I3", "I4", "I6"]
    assert "ChildFailedError: serve.py FAILED ×1" in folded[-1]
    assert "×7 on rank0, rank1, rank2, rank4, rank5, rank6, rank7" in folded[0]


def test_all_shows_every_incident_in_full(capsys):
    assert main(["scan", "--all", RUN_A]) == 0
    out = capsys.readouterr().out
    assert out.startswith("● ROOT CAUSE I1 ")
    assert out.count("● CONSEQUENCE ") == 5 and "followed by" not in out
    assert "torchrun's summary after the job ended: serve.py failed." in out


def test_two_runs_each_get_their_root_and_unknowns_are_grouped_by_fingerprint(capsys):
    incidents = scan_json(RUN_A, RUN_B)
    roots = [i for i in incidents if i["is_run_root"]]
    assert [(r["ranks"], r["first_seen"][:10]) for r in roots] == [(["rank3"], "2026-09-14"), (["rank5"], "2026-09-15")]
    assert roots[0]["fingerprint"] == roots[1]["fingerprint"]
    for incident in incidents:
        if incident["role"] == "consequence":
            day = incident["first_seen"][:10]
            assert incident["caused_by"] == next(r["id"] for r in roots if r["first_seen"][:10] == day)
    assert main(["scan", RUN_A, RUN_B]) == 0
    out = capsys.readouterr().out
    assert out.count("● ROOT CAUSE ") == 2
    summary = out.split("Unknown errors by fingerprint", 1)[1]
    assert f"{roots[0]['fingerprint']}  ×2 in {roots[0]['id']}, {roots[1]['id']}" in summary


def test_a_log_with_only_echoes_leads_with_the_first_and_says_its_cause_is_elsewhere(capsys, tmp_path):
    """A node whose log shows only the watchdog's timeouts: the first is the first failure the log shows (a run in a fleet
    report counts under it), still an echo, and said to be one."""
    log = tmp_path / "node1.log"
    lines = Path(RUN_A).read_text().splitlines(keepends=True)
    log.write_text("".join(line for line in lines if "Watchdog caught" in line and "ProcessGroupNCCL" in line))
    (incident,) = scan_json(str(log))
    assert incident["role"] == "consequence" and incident["is_run_root"] and incident["caused_by"] is None
    assert main(["scan", str(log)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("● ROOT CAUSE I1 ") and "No root cause" not in out
    assert "the first failure these logs show, itself an echo of one they do not" in out


def test_the_same_error_far_apart_is_two_incidents():
    assert len(scan_json("--window", "0", RUN_A)) > len(scan_json(RUN_A))


# ----------------------------------------------------------------------------- the blame frame


def test_blame_frame_is_the_innermost_frame_of_your_own_code():
    default = scan_json(RUN_A)[0]["blame_site"]
    assert (default["relpath"], default["line"], default["function"]) == ("/workspace/serve.py", 118, "main")
    app = scan_json("--app-package", "minillm", RUN_A)[0]["blame_site"]
    assert (app["relpath"], app["line"], app["function"]) == ("minillm/kv_transfer.py", 96, "send")


def test_blame_frame_from_the_pattern_project_is_shown_with_its_source_line(capsys, tmp_path):
    (tmp_path / "minillm.yaml").write_text(
        "schema: 1\nproject: minillm\npatterns:\n"
        "  - id: minillm.kv-transfer-rejected\n    exception: TransferError\n"
        "    template: 'transfer of request {request} to {peer} failed after {retries:d} retries: {details}'\n"
        "    meaning: The peer refused the KV blocks.\n")
    (root, *_) = scan_json("--patterns", str(tmp_path), RUN_A)
    assert root["pattern_id"] == "minillm.kv-transfer-rejected"
    assert (root["blame_site"]["relpath"], root["blame_site"]["line"]) == ("minillm/kv_transfer.py", 96)
    assert main(["scan", "--patterns", str(tmp_path), RUN_A]) == 0
    out = capsys.readouterr().out
    assert ("  raised at kvlink/transfer.py:58 in transfer_sync\n      raise TransferError(\n"
            "  blame frame minillm/kv_transfer.py:96 in send\n"
            "      self._engine.transfer_sync(session, src, dst, length)\n") in out


def test_installed_server_blames_the_package_the_stack_enters():
    """SGLang started with `python -m sglang.launch_server`: every frame is installed code, and the
    NCCL timeout is raised inside torch; the blame goes to SGLang's call into torch."""
    timeout = by_pattern(scan_json(str(LOGS / "sglang_8rank_scheduler_crash.log")))["torch.nccl-watchdog-timeout"]
    assert timeout["raise_site"]["relpath"] == "torch/distributed/distributed_c10d.py"
    assert (timeout["blame_site"]["relpath"], timeout["blame_site"]["function"]) == (
        "sglang/srt/distributed/parallel_state.py", "all_reduce")


# ----------------------------------------------------------------------------- chains


def _pattern(pattern_id: str, exception: str, template: str, role: str) -> Pattern:
    return Pattern(pattern_id, exception, template, source=PatternSource(project="demo"), role=role)


@cache
def chain_matcher() -> Matcher:
    packs = load_packs(use_env=False)
    builtin = [packs.get("python.broken-pipe"), packs.get("python.connection-reset")]
    return Matcher(builtin + [_pattern("demo.weights", "RuntimeError", "Failed to load weights: {detail}", "root")])


def incident_of(func):
    analysis = Analysis(chain_matcher())
    for event in events_from_lines(text_of(capture(func)).splitlines(), "run.log", NO_NOTICES):
        analysis.add(event)
    (incident,) = analysis.incidents()
    return incident


def broken_pipe_then_real_error():
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError:
        raise ValueError("scheduler state is inconsistent at step 1873")  # noqa: B904 - printed as 'During handling'


def real_error_then_broken_pipe():
    try:
        raise ValueError("scheduler state is inconsistent at step 1873")
    except ValueError:
        raise BrokenPipeError(32, "Broken pipe")  # noqa: B904


def reset_wrapped():
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError as err:
        raise RuntimeError("lost the detokenizer") from err


def key_error_wrapped():
    try:
        {}["model.layers.47.mlp.experts.w13_weight_scale_inv"]
    except KeyError as err:
        raise RuntimeError("Failed to load weights: unexpected parameter") from err


def two_unknowns():
    try:
        raise OSError("disk quota exceeded")
    except OSError:
        raise ValueError("cannot write the checkpoint")  # noqa: B904


def broken_pipe_only():
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError as err:
        raise ConnectionResetError(104, "Connection reset by peer") from err


@pytest.mark.parametrize("func, about, role, pattern", [
    # The headline is the first exception printed, whatever the link ...
    (real_error_then_broken_pipe, "ValueError", "root", None),
    (two_unknowns, "OSError", "root", None),
    (key_error_wrapped, "KeyError", "root", None),  # though a pattern knows the wrapper
    # ... unless a pattern calls it a consequence: then the next link, 'During handling' or 'direct cause'.
    (broken_pipe_then_real_error, "ValueError", "root", None),
    (reset_wrapped, "RuntimeError", "root", None),
    # Echoes all the way: the first one printed.
    (broken_pipe_only, "BrokenPipeError", "consequence", "python.broken-pipe"),
], ids=lambda value: getattr(value, "__name__", None))
def test_chain_root_and_role(func, about, role, pattern):
    incident = incident_of(func)
    assert incident.info.exception_type == about and incident.role == role
    assert (incident.diagnosis.pattern.id if incident.diagnosis.pattern else None) == pattern
    data = incident_dict(incident)
    assert len(data["chain"]) == 2  # the whole chain is kept
    assert data["exception_type"] == about and data["role"] == role
    cause = func in (reset_wrapped, key_error_wrapped, broken_pipe_only)
    assert data["chain"][1]["link"] == (Link.CAUSE if cause else Link.CONTEXT).value


def test_the_headline_is_the_same_with_and_without_a_pattern_match():
    analysis = Analysis(Matcher([]))
    for event in events_from_lines(text_of(capture(key_error_wrapped)).splitlines(), "run.log", NO_NOTICES):
        analysis.add(event)
    (bare,) = analysis.incidents()
    known = incident_of(key_error_wrapped)
    assert bare.info == known.info and bare.info.exception_type == "KeyError"


# ----------------------------------------------------------------------------- runs


def _disk_full():
    raise OSError(28, "No space left on device")


def _refused():
    raise ConnectionRefusedError(111, "Connection refused")


def _logged(stamp: str, text: str) -> list[str]:
    """An SGLang-style record: the prefix on the record's first line only."""
    first, *rest = text.splitlines()
    return [f"[2026-09-14 {stamp}] {first}", *rest]


def analysed(files: dict[str, list[str]], **options) -> list:
    analysis = Analysis(Matcher([]), **options)
    for name, lines in files.items():
        for event in events_from_lines(lines, name, NO_NOTICES):
            analysis.add(event)
    return analysis.incidents()


_NBCLIENT = """
class CellExecutionError(Exception):
    pass


CellExecutionError.__module__ = "nbclient.exceptions"


def check_raise_for_error(message):
    raise CellExecutionError(message)
"""


def test_a_notebook_runners_report_is_an_echo_of_the_cells_own_error(tmp_path):
    """nbclient (nbconvert --execute, Jupyter Book) raises CellExecutionError with the cell's source between two rules,
    then what the kernel printed of the cell's error: the cell's error is the root cause, the report its echo."""
    scope = _installed(tmp_path, "nbclient/client.py", _NBCLIENT)
    kernel = forms.IPYTHON_FROM_DEFINITION
    message = "\n".join(["An error occurred while executing the following cell:", "-" * 18, "import math",
                         "load([1, 2, 3])", "-" * 18, "", *kernel, ""])
    log = tmp_path / "build.log"
    log.write_text(text_of(capture(lambda: scope["check_raise_for_error"](message))))
    incidents = builtin_engine().analyse([str(log)]).incidents
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("ValueError", "6 shards, expected 8")
    (report,) = [i for i in incidents if i.info.short_type == "CellExecutionError"]
    assert (report.diagnosis.pattern.id, report.role) == ("nbclient.cell-execution-error", "consequence")


def _interrupted():
    raise KeyboardInterrupt


def test_an_interrupt_is_the_root_cause_only_where_no_other_error_is():
    """Ctrl-C, often pressed once a run has failed or hung (the failure printed after it, by a worker): the other
    error leads the run; alone, the interrupt is the run's root cause (a hang the user stopped)."""
    interrupted = text_of(capture(_interrupted)).splitlines()
    incidents = analysed({"run.log": [*interrupted, "", *text_of(capture(_refused)).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert root.info.exception_type == "ConnectionRefusedError"
    (alone,) = analysed({"run.log": interrupted})
    assert alone.info.exception_type == "KeyboardInterrupt" and alone.is_run_root


def test_a_fragment_is_never_the_root_cause_while_a_complete_incident_exists():
    cut = text_of(capture(_disk_full)).splitlines()[:3]  # header and one frame: the paste stops there
    incidents = analysed({"run.log": [*cut, "", *text_of(capture(_refused)).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert root.info.exception_type == "ConnectionRefusedError"
    assert incidents[-1].is_fragment and not incidents[-1].is_run_root  # fragments sort last
    (alone,) = analysed({"cut.log": cut})
    assert alone.is_fragment and alone.is_run_root  # with nothing else, the fragment is all there is


_ENGINE_UTILS = """
def wait_for_engine_startup(failed):
    raise RuntimeError("Engine core initialization failed. "
                       "See root cause above. "
                       f"Failed core proc(s): {failed}")
"""


def _installed(folder: Path, module: str, source: str) -> dict:
    """`source` run as the installed file `site-packages/<module>` under `folder` (its frames name that path, and the
    file holds the source lines a traceback shows): the names it defines."""
    path = folder / "site-packages" / module
    path.parent.mkdir(parents=True)
    path.write_text(source)
    scope: dict = {}
    exec(compile(source, str(path), "exec"), scope)
    return scope


def _engine_startup_failed(folder: Path) -> str:
    """vLLM's API server's error where vllm/v1/engine/utils.py raises it: the engine core died while starting."""
    scope = _installed(folder, "vllm/v1/engine/utils.py", _ENGINE_UTILS)
    return text_of(capture(lambda: scope["wait_for_engine_startup"]({})))


def test_an_echo_alone_or_over_a_traceback_cut_before_its_error_leads_the_run_and_stays_an_echo(tmp_path):
    """vLLM's API server saying the engine core failed to start, its cause in the engine's own log, or cut: what the log
    shows of the failure. A traceback cut before its exception line said where, not with what: it follows the echo
    (neither is told to follow from the other)."""
    echo = _engine_startup_failed(tmp_path).splitlines()
    cut = text_of(capture(_disk_full)).splitlines()[:3]
    for k, lines in enumerate((echo, [*echo, "", *cut], [*cut, "", *echo])):
        log = tmp_path / f"api{k}.log"
        log.write_text("\n".join(lines) + "\n")
        incidents = builtin_engine().analyse([str(log)]).incidents
        assert len(incidents) == (1 if k == 0 else 2)
        (root,) = [i for i in incidents if i.is_run_root]
        assert (root.info.exception_type, root.role) == ("RuntimeError", "consequence")
        assert root.diagnosis.pattern.id == "vllm.engine-core-init-failed-procs"
        assert all(i.caused_by is None for i in incidents)
    told = tmp_path / "driver.log"  # (a driver printed the error's line first, then the actor its traceback)
    told.write_text("\n".join([echo[-1], *(f"(EngineActor pid=8916) {line}" for line in echo)]) + "\n")
    first, raised = builtin_engine().analyse([str(told)]).incidents
    assert raised.is_run_root and raised.info.raise_site.function == "wait_for_engine_startup"
    assert first.caused_by == raised.id and not first.info.frames


def test_of_the_echoes_an_error_raised_leads_over_a_line_logged_about_it(tmp_path):
    """torchrun logs a worker's exit (`failed (exitcode: 1) ...`), then raises ChildFailedError with its summary:
    with no other error in the log, the error raised leads the run."""
    notice = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 5123) of "
              "binary: /usr/bin/python3")
    log = tmp_path / "launch.log"
    log.write_text(notice + "\n" + _elastic_summary(1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/"
                                                    "errors.html", tmp_path))
    first, raised = builtin_engine().analyse([str(log)]).incidents
    assert first.event.kind.value == "notice" and first.role == raised.role == "consequence"
    assert raised.is_run_root and not first.is_run_root
    assert raised.diagnosis.pattern.id == "torch.elastic-child-failed"


@pytest.mark.parametrize(("prefix", "ranks"), [("[02:20:30.958] ", ()), ("[02:20:30]: ", ()), ("web-1  | ", ("web-1",))])
def test_a_stream_is_shown_as_where_an_error_happened_only_where_it_names_something(prefix, ranks, tmp_path):
    """A learned prefix tells its stream apart; one of a time alone names nothing to show."""
    log = tmp_path / "app.log"
    said = traceback.format_exception_only(capture(_disk_full))[0]
    log.write_text("".join(f"{prefix}{line}\n" for line in ("starting", said.rstrip("\n"), "done")))
    (incident,) = builtin_engine().analyse([str(log)]).incidents
    assert (incident.info.exception_type, incident.ranks) == ("OSError", ranks)


def test_files_given_together_are_runs_of_their_own():
    failure = text_of(capture(_disk_full)).splitlines()
    incidents = analysed({"a/server.log": failure, "b/server.log": failure})
    assert len(incidents) == 2 and all(i.is_run_root and i.count == 1 for i in incidents)
    assert {i.run for i in incidents} == {"a/server.log", "b/server.log"}
    shared = analysed({"run/a.log": failure, "run/b.log": failure}, run_of=lambda file: file.rsplit("/", 1)[0])
    (merged,) = shared
    assert merged.count == 2 and merged.run == "run"


def test_incidents_without_a_timestamp_keep_their_place_in_the_log():
    refused = [f"[rank1]: {line}" for line in text_of(capture(_refused)).splitlines()]  # torchrun: no time
    disk = text_of(capture(_disk_full)).splitlines()
    incidents = analysed({"run.log": [*_logged("10:00:00", "\n".join(disk)), *refused]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert root.info.exception_type == "OSError" and root.first_seen is not None
    assert [i.first_seen for i in incidents if i.info.exception_type == "ConnectionRefusedError"] == [None]


def test_the_same_error_recurring_through_a_long_log_is_one_incident():
    disk = "\n".join(text_of(capture(_disk_full)).splitlines())
    lines = [line for minute in range(0, 50, 12) for line in _logged(f"10:{minute:02}:00", disk)]
    (incident,) = analysed({"run.log": lines})
    assert incident.count == 5 and incident.is_run_root
    assert (incident.first_seen.minute, incident.last_seen.minute) == (0, 48)
    split = analysed({"run.log": lines}, run_gap_seconds=600)  # a shorter run gap: each its own run
    assert len(split) == 5 and all(i.is_run_root for i in split)


def _unpack_args(args: tuple) -> None:
    first, second = args  # raises ValueError: too many values to unpack


def _worker_step(results: list) -> None:
    try:
        _unpack_args((1, 2, 3))
    except ValueError as err:
        results.append(err)


def _collective_rpc(results: list) -> None:
    for result in results:
        if isinstance(result, BaseException):
            raise result  # the worker's exception, received and raised again


def test_an_error_raised_again_where_it_was_received_is_a_consequence_of_where_it_was_raised():
    """vLLM's engine re-raises the exception a worker sent back (`raise result`); the worker prints its
    own traceback too. Printed first or not, the engine's is the echo; the worker's is the root cause."""
    results: list = []
    _worker_step(results)
    worker = text_of(results[0]).splitlines()
    sent = type(results[0])(*results[0].args)  # (as another process receives it: its traceback stays behind)
    engine = text_of(capture(lambda: _collective_rpc([sent]))).splitlines()
    incidents = analysed({"run.log": [*(f"ERROR 04-07 10:56:15 [core.py:390] {line}" for line in engine),
                                      *(f"(VllmWorker rank=1 pid=9198) {line}" for line in worker)]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert root.info.frames[-1].function == "_unpack_args" and root.event.rank == "rank1"
    (echo,) = [i for i in incidents if not i.is_run_root]
    assert echo.info.frames[-1].code == "raise result  # the worker's exception, received and raised again"
    assert echo.caused_by == root.id


class _APIConnectionError(Exception):  # (named as litellm's is)
    pass


_APIConnectionError.__module__, _APIConnectionError.__qualname__ = "litellm", "APIConnectionError"


def _count_tokens(arguments):
    text = "tokens: "
    return text + arguments


def test_a_wrappers_line_on_the_errors_text_is_that_error_told_again():
    """litellm prints its own type on the error's text, then the traceback of the error itself: the
    traceback's error is the root cause, the line above it its echo. A short text proves that only where the
    traceback begins on the next line (litellm's proxy: `litellm.APIConnectionError: 'name'` over the KeyError)."""
    error = capture(lambda: _count_tokens({"name": "f"}))
    wrapper = f"{_APIConnectionError.__module__}.{_APIConnectionError.__qualname__}: {error}"
    incidents = analysed({"run.log": [wrapper, *text_of(error).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("TypeError", "_count_tokens")
    (echo,) = [i for i in incidents if not i.is_run_root]
    assert (echo.info.exception_type, echo.caused_by) == ("litellm.APIConnectionError", root.id)
    short = analysed({"run.log": ["litellm.APIConnectionError: boom", "retrying", *text_of(capture(_boom)).splitlines()]})
    assert [i.info.exception_type for i in short if i.is_run_root] == ["litellm.APIConnectionError"]
    short = analysed({"run.log": ["litellm.APIConnectionError: boom", *text_of(capture(_boom)).splitlines()]})
    assert [i.info.exception_type for i in short if i.is_run_root] == ["TypeError"]


class _UnsupportedParamsError(Exception):  # (its module named as litellm's; its text names the class the way litellm's does)
    pass


_UnsupportedParamsError.__module__, _UnsupportedParamsError.__qualname__ = "litellm.exceptions", "UnsupportedParamsError"


def _check_params(params: dict):
    raise _UnsupportedParamsError(f"litellm.UnsupportedParamsError: ollama does not support parameters: {params}. To drop "
                                  "these, set `drop_params` or for proxy:\n\n`litellm_settings:\n drop_params: true`\n")


def test_an_error_logged_over_several_lines_then_its_traceback_is_that_error():
    """`logger.exception(f"Exception occured - {e}")` through a format of its own: the error's lines (its text names
    its class), then its traceback. The traceback is the root cause, the record its echo."""
    error = capture(lambda: _check_params({"presence_penalty": 0}))
    record = f"13:18:35 - Proxy:ERROR: proxy_server.py:3714 - chat_completion(): Exception occured - {error}"
    incidents = analysed({"run.log": [*record.splitlines(), *text_of(error).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.short_type, root.info.frames[-1].function) == ("UnsupportedParamsError", "_check_params")
    assert [i.caused_by for i in incidents if i is not root] == [root.id] * (len(incidents) - 1)


class _SerialException(OSError):  # (named as pyserial's is)
    pass


_SerialException.__module__, _SerialException.__qualname__ = "serial.serialutil", "SerialException"


def _open_port(port: str):
    try:
        os.open(port, os.O_RDWR)
    except FileNotFoundError as err:  # (chained implicitly, as pyserial's is)
        raise _SerialException(err.errno, f"could not open port {port}: {err}")  # noqa: B904


def test_a_logged_error_named_by_its_class_alone_then_its_chain_is_that_chain():
    """OctoPrint logs `...: SerialException: '<its text>' @ comm.py:_open_serial:3670` (the class without its module,
    the text quoted, a place after it), then `logger.exception`'s traceback: the chain is the root cause, its cause
    first; the record is its echo."""
    error = capture(lambda: _open_port("/tmp/no-such-printer"))
    record = (f"2021-03-10 18:49:16,607 - octoprint.util.comm - ERROR - Unexpected error while connecting to serial port: "
              f"SerialException: '{error}' @ comm.py:_open_serial:3670")
    incidents = analysed({"run.log": [record, *text_of(error).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert [link.exception_type for link in root.event.chain] == ["FileNotFoundError", "serial.serialutil.SerialException"]


class _DataChainError(Exception):  # (named as datachain's is)
    pass


def _process_safe(inner: BaseException):
    raise _DataChainError(f"Error in user code in class 'Mapper': {inner}")


def _path_len():
    raise ValueError("This is an error")


def test_a_wrapper_whose_text_ends_in_the_message_of_the_error_printed_below_it_follows_from_that_error():
    """datachain prints its wrapper's traceback (`DataChainError: Error in user code in class 'Mapper': This is an
    error`), a banner, then the user's traceback: the user's error is the root cause. Not one whose text it does not
    end in."""
    inner = capture(_path_len)
    wrapper = capture(lambda: _process_safe(inner))
    banner = "============== Error in user code: 'Mapper' =============="
    incidents = analysed({"run.log": [*text_of(wrapper).splitlines(), banner, *text_of(inner).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("ValueError", "_path_len")
    other = [*text_of(wrapper).splitlines(), banner, *text_of(capture(_boom)).splitlines()]
    assert [i.info.short_type for i in analysed({"run.log": other}) if i.is_run_root] == ["_DataChainError"]


class _BackendCompilerFailed(Exception):
    pass


_BackendCompilerFailed.__module__, _BackendCompilerFailed.__qualname__ = "torch._dynamo.exc", "BackendCompilerFailed"
_COMPILE_HINT = ["", "Set torch._dynamo.config.verbose=True for more information", ""]


def _call_user_compiler(inner: BaseException):
    raise _BackendCompilerFailed(f"compile_fn raised {type(inner).__name__}: {inner}")


def test_a_wrapper_that_names_the_error_printed_with_its_stack_below_it_follows_from_that_error():
    """torch 2.0's dynamo prints its wrapper (with its own stack) first, a hint, then the stack of the
    error it wraps: that error is the root cause. Not an error below it the wrapper does not name."""
    inner = capture(lambda: _count_tokens({"name": "f"}))
    wrapper = capture(lambda: _call_user_compiler(inner))
    incidents = analysed({"run.log": [*text_of(wrapper).splitlines(), *_COMPILE_HINT, *text_of(inner).splitlines()]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("TypeError", "_count_tokens")
    (echo,) = [i for i in incidents if not i.is_run_root]
    assert (echo.info.short_type, echo.caused_by) == ("BackendCompilerFailed", root.id)
    other = [*text_of(wrapper).splitlines(), *_COMPILE_HINT, *text_of(capture(_boom)).splitlines()]
    assert [i.info.short_type for i in analysed({"run.log": other}) if i.is_run_root] == ["BackendCompilerFailed"]
    steps = [line for n in range(20) for line in _logged(f"10:00:{n:02}", f"INFO step {n}")]
    far = [*text_of(wrapper).splitlines(), *steps, *text_of(inner).splitlines()]
    assert [i.info.short_type for i in analysed({"run.log": far}) if i.is_run_root] == ["BackendCompilerFailed"]


def test_a_wrappers_summary_that_ends_where_the_error_it_wraps_begins_below_follows_from_that_error():
    """pytest's short summary prints a failure's whole message: torch's `BackendCompilerFailed: backend='inductor'
    raised:` on the test's line, the error it wraps on the next. That error is the root cause; not an error
    further below, nor below words that do not end in a colon, nor below a message of several lines."""
    inner = RuntimeError("Compiler: cl is not found.")
    wrapper = _BackendCompilerFailed(f"backend='inductor' raised:\n{type(inner).__name__}: {inner}")
    test = "FAILED thunder/tests/test_torch_compile_executor.py::test_torch_compile_litgpt"
    lines = f"{test} - {_BackendCompilerFailed.__module__}.{_BackendCompilerFailed.__qualname__}: {wrapper}".splitlines()
    incidents = analysed({"run.log": lines})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("RuntimeError", str(inner))
    (echo,) = [i for i in incidents if not i.is_run_root]
    assert (echo.info.short_type, echo.caused_by) == ("BackendCompilerFailed", root.id)
    apart = analysed({"run.log": [lines[0], "collected 12 items", lines[1]]})
    assert [i.info.short_type for i in apart if i.is_run_root] == ["BackendCompilerFailed"]
    said = analysed({"run.log": [f"{test} - ValueError: bad shape", lines[1]]})
    assert [i.info.short_type for i in said if i.is_run_root] == ["ValueError"]
    lines_of_its_own = analysed({"run.log": ["triton.compiler.errors.CompilationError: at 81:12:", "    a = tl.load(", "        ^",
                                             "AttributeError(\"module 'triton.language' has no attribute 'load2'\")"]})
    assert [i.info.short_type for i in lines_of_its_own if i.is_run_root] == ["CompilationError"]


def _boom():
    raise TypeError("boom")


class _OperationalError(Exception):  # (named as psycopg2's is)
    pass


_OperationalError.__module__, _OperationalError.__qualname__ = "psycopg2", "OperationalError"


def test_a_type_alone_over_the_same_types_exception_line_is_its_title():
    """Werkzeug's debugger page copied as text: the class alone as the page's title, then its exception line (its
    message's next lines indented by a tab), no traceback. The exception line is the root cause, the title its echo."""
    error = _OperationalError("could not connect to server: No such file or directory\n\tIs the server running locally?")
    said = traceback.format_exception_only(error)[-1].rstrip("\n").splitlines()
    incidents = analysed({"page.log": ["psycopg2.OperationalError", *said]})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.message.split("\n")[0]) == (
        "psycopg2.OperationalError", "could not connect to server: No such file or directory")
    assert [i.caused_by for i in incidents if i is not root] == [root.id]
    # (a line between: no title, but still the same error's type told alone a few lines from its text; far from it, the
    # type alone is an error of its own, the first)
    apart = analysed({"page.log": ["psycopg2.OperationalError", "retrying", *said]})
    assert [i.info.message.split("\n")[0] for i in apart if i.is_run_root] == [said[0].split(": ", 1)[1]]
    far = analysed({"page.log": ["psycopg2.OperationalError", *["retrying"] * 12, *said]})
    assert [i.info.message.split("\n")[0] for i in far if i.is_run_root] == [""]


class _Py4JJavaError(Exception):  # (named as py4j's is)
    pass


_Py4JJavaError.__module__, _Py4JJavaError.__qualname__ = "py4j.protocol", "Py4JJavaError"


def _python_worker(line: str):
    return line.split(",")[3]


def _run_job(worker_error: BaseException, lost: str = "(TID 1, localhost, executor driver)"):
    """py4j's error for a failed Spark job: its text is the Java exception's, which holds the Python worker's
    traceback behind `org.apache.spark.api.python.PythonException: `, then the Java stack (`lost`: where the task was
    lost, as Spark 2 words it; Spark 3's is `(TID 3) (host executor driver)`)."""
    java = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 1 times, most "
            f"recent failure: Lost task 0.0 in stage 1.0 {lost}: "
            f"org.apache.spark.api.python.PythonException: {text_of(worker_error)}"
            "\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:452)")
    raise _Py4JJavaError(f"An error occurred while calling z:org.apache.spark.api.python.PythonRDD.runJob.\n: {java}")


def test_a_wrappers_text_that_introduces_a_traceback_below_it_has_that_error_as_its_cause():
    """PySpark: the Py4JJavaError's Java text ends in the Python worker's `PythonException: Traceback (most recent call
    last):`, its traceback on the next lines (or PySpark 3's `... Please see the stack trace below.`): the worker's
    error is the root cause, the wrapper its consequence."""
    worker = capture(lambda: _python_worker("a,b"))
    job = capture(lambda: _run_job(worker))
    incidents = analysed({"driver.log": text_of(job).splitlines()})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("IndexError", "_python_worker")
    assert [i.caused_by for i in incidents if i is not root] == [root.id]
    # (a paste begun at the wrapper's exception line, Spark 3's words: the colon the Java text begins with is no prefix's)
    lines = text_of(capture(lambda: _run_job(worker, "(TID 3) (Andrew-PC.lan executor driver)"))).splitlines()
    pasted = lines[next(k for k, line in enumerate(lines) if line.startswith("py4j.protocol.Py4JJavaError")):]
    (root,) = [i for i in analysed({"driver.log": pasted}) if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("IndexError", "_python_worker")
    captured = ["pyspark.errors.exceptions.captured.PythonException: ",
                "  An exception was thrown from the Python worker. Please see the stack trace below.",
                *text_of(worker).splitlines()]
    (root,) = [i for i in analysed({"driver.log": captured}) if i.is_run_root]
    assert root.info.exception_type == "IndexError"
    told = analysed({"driver.log": ["RuntimeError: the job failed.", *text_of(worker).splitlines()]})  # (no words that
    assert [i.info.exception_type for i in told if i.is_run_root] == ["RuntimeError"]  # introduce it: two errors)
    # CPython's words for the next thread's traceback, glued to a progress bar under the first: a series, the first root
    first, second = capture(lambda: _python_worker("a")), capture(lambda: _python_worker("a,b,c"))
    for words in ("syncing:  6.9%|#5   | 12/173, clonException in thread Thread-29:", " Error in sys.exitfunc:"):
        series = [*text_of(first).splitlines(), words, *text_of(second).splitlines()]
        (root,) = [i for i in analysed({"sync.log": series}) if i.is_run_root]
        assert root.event.span.line_start == 1, words


def _sample(gpu: int):
    raise RuntimeError(f"CUDA out of memory. Tried to allocate 40.00 MiB. GPU {gpu} has a total capacity of 23.50 GiB "
                       f"of which 31.19 MiB is free. Process {1620724 + gpu} has 23.46 GiB memory in use.")


def test_another_ranks_line_of_the_same_error_numbers_aside_is_told_by_the_traceback_below_it():
    """A paste begun at one rank's exception line (GPU 0), the next rank's whole traceback of the same error (GPU 3, its
    own pid) a few lines below: the traceback is the root cause, the line its echo. Other words are another error."""
    line = text_of(capture(lambda: _sample(0))).splitlines()[-1]
    below = text_of(capture(lambda: _sample(3))).splitlines()
    (root,) = [i for i in analysed({"run.log": [line, "", "WorkerProc hit an exception.", *below]}) if i.is_run_root]
    assert (root.info.frames[-1].function, root.event.span.line_start) == ("_sample", 4)
    other = line.replace("Tried to allocate", "Failed to free")
    (root,) = [i for i in analysed({"run.log": [other, "", "WorkerProc hit an exception.", *below]}) if i.is_run_root]
    assert root.event.span.line_start == 1


def _all_reduce():
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def test_an_abort_that_names_no_cause_follows_from_the_python_error_of_its_run():
    """`Fatal Python error: Aborted` (an NCCL watchdog's abort, a Ray worker's) printed before the exception it aborted
    over: that exception, with its frames, is the root cause. An abort alone, or beside another crash, stays the root."""
    abort = forms.dumped_stack("Fatal Python error: Aborted")
    raised = text_of(capture(_all_reduce)).splitlines()
    (root,) = [i for i in analysed({"run.log": [*abort, "", *raised]}) if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("RuntimeError", "_all_reduce")
    (root,) = [i for i in analysed({"run.log": [*abort, "", *forms.dumped_stack("Fatal Python error: Segmentation fault")]})
               if i.is_run_root]
    assert root.info.message == "Aborted"


class _ActorDiedError(Exception):  # (named as Ray's is)
    pass


_ActorDiedError.__module__, _ActorDiedError.__qualname__ = "ray.exceptions", "ActorDiedError"


def _creation_task():
    import a_module_the_replica_lacks  # noqa: F401


def _get_objects():
    raise _ActorDiedError("The actor died unexpectedly before finishing this task.\n\tclass_name: RayWorkerWrapper\n"
                          "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR")


class _SimplifiedTraceback(Exception):  # (JAX's note, named as JAX prints it)
    def __str__(self) -> str:
        return ("For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
                "Set JAX_TRACEBACK_FILTERING=off to include these.")


_SimplifiedTraceback.__module__, _SimplifiedTraceback.__qualname__ = "jax.errors", "SimplifiedTraceback"


class _XlaRuntimeError(RuntimeError):
    pass


_XlaRuntimeError.__module__, _XlaRuntimeError.__qualname__ = "jaxlib.xla_extension", "XlaRuntimeError"


def _train_step():
    raise _XlaRuntimeError("INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
                           "'xla.gpu.conv.backward.filter' failed: CUDNN_STATUS_NOT_SUPPORTED") from _SimplifiedTraceback()


@pytest.mark.parametrize("cut", [False, True], ids=("whole", "the note's traceback cut off above it"))
def test_jaxs_note_that_it_filtered_a_traceback_is_not_the_error(cut, tmp_path):
    """JAX prints `jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames...` as the cause
    of the error it filtered: that error is the root cause and the chain's headline, whole or where a paste began at
    the note's line."""
    lines = text_of(capture(_train_step)).rstrip("\n").split("\n")
    if cut:
        lines = lines[next(k for k, line in enumerate(lines) if line.startswith("jax.errors.")):]
    log = tmp_path / "train.log"
    log.write_text("\n".join(["I0623 20:04:16.294819 139756573373632 octo_module.py:219] repeating task tokens", *lines, ""]))
    (root,) = [i for i in builtin_engine().analyse([str(log)]).incidents if i.is_run_root]
    assert root.info.exception_type == "jaxlib.xla_extension.XlaRuntimeError"


_LAUNCHER = """
class ChildFailedError(Exception):
    pass


ChildFailedError.__module__ = "torch.distributed.elastic.multiprocessing.errors"


def launch_agent(summary):
    raise ChildFailedError(
        summary,
    )
"""


def _elastic_summary(exitcode: int, told: str, folder: Path) -> str:
    """A ChildFailedError raised where torchrun raises it (torch/distributed/launcher/api.py's launch_agent), its text
    the summary torch.distributed.elastic formats: the worker that exited first, its exit code and `traceback` field."""
    scope = _installed(folder, "torch/distributed/launcher/api.py", _LAUNCHER)
    summary = "\n".join([
        "", "=" * 60, "train.py FAILED", "-" * 60, "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60,
        "Root Cause (first observed failure):", "[0]:", "  time      : 2026-09-14_08:25:04", "  host      : gpu-node-17",
        "  rank      : 3 (local_rank: 3)", f"  exitcode  : {exitcode} (pid: 5123)", "  error_file: <N/A>",
        f"  traceback : {told}", "=" * 60])
    return text_of(capture(lambda: scope["launch_agent"](summary)))


@pytest.mark.parametrize("exitcode", [-9, 1])
def test_torchruns_summary_of_a_worker_a_signal_ended_is_the_root_cause_and_of_one_that_failed_an_echo(exitcode, tmp_path):
    """A worker killed (`exitcode: -9`, `Signal 9 (SIGKILL) received by PID ...`: the OOM killer, most often) printed no
    error of its own: torchrun's summary is all there is of the failure, its root cause. A worker that exited with 1
    printed its traceback elsewhere: the summary echoes it."""
    told = ("Signal 9 (SIGKILL) received by PID 5123" if exitcode < 0
            else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    log = tmp_path / "launch.log"
    log.write_text(_elastic_summary(exitcode, told, tmp_path))
    (incident,) = builtin_engine().analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == ("torch.elastic-child-killed" if exitcode < 0 else "torch.elastic-child-failed")
    assert incident.role == ("root" if exitcode < 0 else "consequence") and incident.is_run_root  # (all there is)
    if exitcode < 0:
        assert (incident.diagnosis.params["signal"], incident.diagnosis.params["rank"]) == (9, 3)


@pytest.mark.parametrize("pasted", [False, True])
def test_torchruns_summary_a_test_harness_relayed_line_by_line_reads_behind_its_label(pasted, tmp_path):
    """accelerate's test harness prints each line its subprocess wrote to stderr behind `stderr: ` (its `tee`'s label
    and print's blank); a paste that starts at the exception line: ChildFailedError's class and colon alone on the
    first line (its text begins on the next; a paste drops the blank after the colon) teach the label, so its summary
    below reads as its message."""
    said = _elastic_summary(1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html", tmp_path)
    lines = [line.rstrip() if pasted else line for line in said.rstrip("\n").split("\n")]
    lines = lines[next(k for k, line in enumerate(lines) if line.startswith("torch.distributed.")):]
    assert lines[0].endswith("ChildFailedError:" if pasted else "ChildFailedError: ")
    log = tmp_path / "test.log"
    log.write_text("".join(f"stderr: {line}\n" for line in lines))
    (incident,) = builtin_engine().analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == "torch.elastic-child-failed" and incident.is_run_root
    assert (incident.event.span.line_start, incident.event.span.line_end) == (1, len(lines))
    assert assert_same(log.read_bytes())


def _map_shard():
    raise ValueError("bad shard 3")


def test_a_remote_traceback_ipython_shows_under_its_own_header_is_not_the_error():
    """multiprocessing's RemoteTraceback, whose text is the worker's traceback in triple quotes, as IPython shows it:
    its own header and `RemoteTraceback: `, then the quote: the worker's error is the root cause (where CPython
    prints the same, the quote's line opens nothing)."""
    worker = capture(_map_shard)
    quoted = f'\n"""\n{text_of(worker)}"""'.split("\n")  # (multiprocessing.pool.RemoteTraceback's str)
    lines = ["-" * 75, "RemoteTraceback" + " " * 27 + "Traceback (most recent call last)", f"RemoteTraceback: {quoted[0]}",
             *quoted[1:], "", "The above exception was the direct cause of the following exception:", "",
             "ValueError" + " " * 32 + "Traceback (most recent call last)", "Cell In[2], line 1",
             "----> 1 pool.map(load_shard, [3])", "", "File /usr/lib/python3.11/multiprocessing/pool.py:774, in "
             "ApplyResult.get(self, timeout)", "    773 else:", "--> 774     raise self._value", "", f"ValueError: {worker}"]
    (root,) = [i for i in analysed({"run.log": lines}) if i.is_run_root]
    assert (root.info.exception_type, [f.function for f in root.info.frames][-1:]) == ("ValueError", ["_map_shard"])


def _decode_none():
    return None.decode()  # type: ignore[attr-defined]


def test_an_errors_type_told_alone_a_few_lines_from_its_text_is_that_error():
    """SD.Next logs an error's text (`Exception: 'NoneType' object has no attribute 'decode'`, CPython's words: the
    class inferred), its arguments, then its type alone (`gradio call: AttributeError`): the root is the error with
    its text; the type alone told it again."""
    exc = capture(_decode_none)
    lines = fmt.rich_handler_lines([("INFO", "Base: class=StableDiffusionXLPipeline"), ("ERROR", f"Exception: {exc}"),
                                    ("ERROR", "Arguments: args=('task(47etinif0dk9we5)', 'plant medicine', 30) kwargs={}"),
                                    ("ERROR", f"gradio call: {type(exc).__name__}")])
    (root,) = [i for i in analysed({"run.log": lines}) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("AttributeError", str(exc))


def test_an_abort_is_not_over_the_error_that_tells_its_process_died():
    """A Ray worker's `Fatal Python error: Aborted` (a double free in NCCL's init), then the driver's ActorDiedError with
    its frames: that error tells of the worker's death, so it is not what the worker aborted over; the abort is the root."""
    abort = forms.dumped_stack("Fatal Python error: Aborted")
    died = text_of(capture(_get_objects)).splitlines()
    (root,) = [i for i in analysed({"run.log": ["free(): double free detected in tcache 2", *abort, "", *died]})
               if i.is_run_root]
    assert root.info.message == "Aborted"


def test_an_actors_death_whose_text_names_its_remote_task_follows_from_the_error_told_below_it():
    """Ray's `ActorDiedError: ... error raised in its creation task, ray::Replica.__init__() (pid=2712, ip=...)`, then the
    remote error's frames (no header) and its exception line: that error is the root cause."""
    remote = text_of(capture(_creation_task)).splitlines()[1:]
    died = _ActorDiedError("The actor died because of an error raised in its creation task, ray::Replica.__init__() "
                           "(pid=2712, ip=10.42.5.206, actor_id=cfc0984b7cc4904e0f1e32e105000000)")
    (root,) = [i for i in analysed({"run.log": [*text_of(raised(died)).splitlines(), *remote]})
               if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("ModuleNotFoundError", "_creation_task")


def _pool_result():
    from concurrent.futures.process import BrokenProcessPool
    raise BrokenProcessPool("A process in the process pool was terminated abruptly while the future was running or pending.")


def _worker_start():
    import a_module_the_worker_lacks  # noqa: F401


def test_an_error_that_tells_a_worker_died_yields_to_the_workers_own_error_printed_after_it():
    """A process pool's BrokenProcessPool, then what its worker wrote to stderr before it died (pytest prints the
    stderr it captured under the test's report; a log may hold the worker's lines later): the worker's error is the root
    cause. Alone, the pool's error is."""
    broken = text_of(capture(_pool_result)).splitlines()
    worker = text_of(capture(_worker_start)).splitlines()
    report = [*broken, "----------------------------- Captured stderr call -----------------------------", *worker]
    (root,) = [i for i in analysed({"run.log": report}) if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("ModuleNotFoundError", "_worker_start")
    (root,) = [i for i in analysed({"run.log": broken}) if i.is_run_root]
    assert root.info.exception_type == "concurrent.futures.process.BrokenProcessPool"


class _EngineDeadError(RuntimeError):
    pass


def _process_request(output: BaseException):
    raise output


def _merge_embeddings():
    raise ValueError("Attempted to assign 119 = 119 multimodal tokens to 120 placeholders")


@pytest.mark.parametrize("stack", ["whole", "cut"])
def test_an_error_raised_again_whose_text_ends_with_another_errors_repr_follows_from_that_error_told_below(stack):
    """vLLM's client raises the engine's death (`raise request_output`) with the original error's repr at the end of its
    text, and the engine logs that error right below (its repr, then its traceback, which a copy may cut at its
    header): the original error is the root cause, one incident with the record below; alone, the death's text still
    names it (raised where the death was)."""
    original = capture(_merge_embeddings)
    dead = _EngineDeadError(f"Engine loop is not running. Inspect the stacktrace to find the original error: {original!r}.")
    wrapper = fmt.vllm_record("Error in chat completion stream generator.", capture(lambda: _process_request(dead)),
                              file="serving_chat.py", lineno=885)
    record = fmt.vllm_record(repr(original), original, file="engine.py", lineno=160)
    record = record if stack == "whole" else record[:2]
    found = analysed({"run.log": [*wrapper, *record]})
    (root,) = [i for i in found if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("ValueError", str(original))
    assert all(i.caused_by == root.id for i in found if i is not root)
    (root,) = analysed({"run.log": wrapper})
    assert [link.exception_type.rsplit(".", 1)[-1] for link in root.event.chain] == ["ValueError", "_EngineDeadError"]
    assert root.info.raise_site.function == "_process_request"


def _rebuild(name):
    raise TypeError(f"{name}.__init__() missing 2 required keyword-only arguments: 'response' and 'body'")


def _deserialize():
    try:
        _rebuild("APIStatusError")
    except TypeError as err:
        raise RuntimeError("Failed to unpickle serialized exception") from err


def _elsewhere():
    raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")


def test_an_error_raised_from_one_a_copy_cut_above_it_follows_from_that_error_printed_later():
    """A copy begun inside the wrapper's link (`raise RuntimeError(...) from err`: the caught error's link above it cut),
    then a record that tells the caught error with its stack (Ray's `Unhandled error ...: System error: ...` and
    `traceback: `): that error, whose stack begins in the wrapper's function above its raise, is the root cause; another
    error later, or none, leaves the wrapper the root."""
    err = capture(_deserialize)
    wrapper = text_of(err).splitlines()
    wrapper = wrapper[wrapper.index("The above exception was the direct cause of the following exception:") + 3:]
    record = ["2024-01-09 16:14:52,936\tERROR worker.py:406 -- Unhandled error (suppress with "
              "'RAY_IGNORE_UNHANDLED_ERRORS=1'): System error: Failed to unpickle serialized exception",
              "traceback: " + text_of(err.__cause__).splitlines()[0], *text_of(err.__cause__).splitlines()[1:]]
    (root,) = [i for i in analysed({"run.log": [*wrapper, *record]}) if i.is_run_root]
    assert (root.info.exception_type, root.info.frames[-1].function) == ("TypeError", "_rebuild")
    other = text_of(capture(_elsewhere)).splitlines()
    for after in ([], other):
        (root,) = [i for i in analysed({"run.log": [*wrapper, *after]}) if i.is_run_root]
        assert root.info.exception_type == "RuntimeError"


@pytest.mark.parametrize("doubled", [False, True], ids=["as printed", "double-spaced"])
def test_a_remote_tasks_error_follows_from_the_error_below_it_in_a_double_spaced_paste(doubled):
    """Ray's `RayTaskError(ValueError): ray::Loader.load() (pid=..., ip=...)` over the remote frames and error: that
    error is the root cause, also where the paste doubled every line break (a blank between the wrapper's line and the
    remote frames below it)."""
    lines = forms.ray_task_error()
    if doubled:
        lines = [out for line in lines for out in (line, "")]
    (root,) = [i for i in analysed({"run.log": lines}) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("ValueError", "shard model-00002 has 3 heads, expected 4")


class _Holder:
    def __del__(self):
        self.handle.close()  # (never set: the finaliser fails, and CPython reports it as ignored)


def _unraisable_report() -> list[str]:
    """CPython's own report of an exception a finaliser raised (`Exception ignored in: ...` over its traceback), as the
    default `sys.unraisablehook` writes it to stderr."""
    err, hook = io.StringIO(), sys.unraisablehook
    sys.unraisablehook = sys.__unraisablehook__  # (CPython's own, not pytest's)
    try:
        with redirect_stderr(err):
            holder = _Holder()
            del holder
            gc.collect()
    finally:
        sys.unraisablehook = hook
    assert err.getvalue().startswith("Exception ignored"), sys.version
    return err.getvalue().rstrip("\n").split("\n")


@pytest.mark.parametrize("doubled", [False, True], ids=["as printed", "double-spaced"])
def test_an_exception_cpython_reported_as_ignored_is_no_root_cause_where_a_real_one_follows(doubled):
    """A finaliser's error, ignored (the program went on), then the error the run failed with: that one is the root
    cause; the report's words stay with the ignored one as its context, and do not join the message above them."""
    ignored = _unraisable_report()
    fatal = text_of(capture(lambda: forms._load_shard("model-00003"))).rstrip("\n").split("\n")
    lines = [*ignored, *ignored, *fatal]
    if doubled:
        lines = [out for line in lines for out in (line, "")]
    incidents = analysed({"run.log": lines})
    (root,) = [i for i in incidents if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("ValueError", "shard model-00003 has 3 heads, expected 4")
    (held,) = [i for i in incidents if i.info.exception_type == "AttributeError"]
    assert held.count == 2 and held.info.message == "'_Holder' object has no attribute 'handle'"
    assert held.event.context.startswith("Exception ignored")
    assert assert_same("\n".join([*lines, ""]).encode())  # (the fast path reads the report's words too)
    (alone,) = [i for i in analysed({"run.log": ignored}) if i.is_run_root]  # (the only error: the root all the same)
    assert alone.info.exception_type == "AttributeError"


def _task_group_failure(*errors: Exception) -> BaseException:
    """A real asyncio TaskGroup whose tasks raise `errors`: the ExceptionGroup it raises."""
    import asyncio

    async def fail(error: Exception) -> None:
        raise error

    async def run() -> None:
        async with asyncio.TaskGroup() as group:
            for error in errors:
                group.create_task(fail(error))

    return capture(lambda: asyncio.run(run()))


def test_a_groups_sub_exceptions_are_shown_with_where_each_was_raised(capsys, tmp_path):
    """The group only carries its errors: the text output names each sub-exception and the line that raised it,
    at most eight, and says how many more there are."""
    one = tmp_path / "one.log"
    one.write_text(text_of(_task_group_failure(ValueError("max_lora_rank (1) must be one of (8, 16, 32, 64)"))))
    many = tmp_path / "many.log"
    many.write_text(text_of(_task_group_failure(*(KeyError(f"request-{n}") for n in range(10)))))
    assert main(["scan", str(one)]) == 0
    out = capsys.readouterr().out
    assert ("  sub-exception 1 ValueError: max_lora_rank (1) must be one of (8, 16, 32, 64)\n"
            f"      raised at {__file__}:") in out
    assert main(["scan", str(many)]) == 0
    out = capsys.readouterr().out
    assert "  sub-exception 8 KeyError: 'request-7'\n" in out and "sub-exception 9" not in out
    assert "  … and 2 more sub-exception(s)\n" in out


def test_the_tuis_traceback_lists_a_groups_sub_exceptions(tmp_path):
    """The TUI names each sub-exception under its group's message (with where it was raised) and under the group's
    line in the traceback, from the same view."""
    from analyzer.core.view import incident_view
    from analyzer.tui import sections

    log = tmp_path / "group.log"
    log.write_text(text_of(_task_group_failure(KeyError("lm_head.weight"), ValueError("rank must be positive"))))
    (incident,) = builtin_engine().analyse([str(log)]).incidents
    view = incident_view(incident)
    shown = sections.traceback(view).plain
    assert "ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)\n" in shown
    assert "  +-- sub-exception 1: KeyError: 'lm_head.weight'\n" in shown
    assert shown.endswith("  +-- sub-exception 2: ValueError: rank must be positive")
    summary = sections.summary(view).plain  # (and under the message, with where each was raised)
    assert f"\nsub-exception 1 KeyError: 'lm_head.weight'  raised at {__file__}:" in summary
    assert "\nsub-exception 2 ValueError: rank must be positive  raised at " in summary


def test_a_groups_sub_exceptions_are_matched_each_to_its_own_page(capsys, tmp_path):
    """The incident stays the group's, and each sub-exception is told as an error of its own: a JSON error the task
    raised gets the JSON page (text, JSON and the TUI say so); one no page knows, none."""
    import json as json_module

    from analyzer.core.view import incident_view
    from analyzer.tui import sections

    async_json_error = capture(lambda: json_module.loads(""))
    log = tmp_path / "group.log"
    log.write_text(text_of(_task_group_failure(async_json_error, KeyError("lm_head.weight"))))
    assert main(["scan", str(log)]) == 0
    out = capsys.readouterr().out
    assert "      known error python.json-no-value (analyzer explain python.json-no-value)\n" in out
    assert out.count("known error python.json-no-value") == 1
    (incident,) = scan_json(str(log))
    assert (incident["exception_type"], incident["sub_exception_pattern_ids"]) == ("ExceptionGroup",
                                                                                   ["python.json-no-value", None])
    (found,) = builtin_engine().analyse([str(log)]).incidents
    assert "  known error python.json-no-value" in sections.summary(incident_view(found)).plain
