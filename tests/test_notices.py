"""Log-line notices (`match: line` patterns): found in prefixed lines, cheap to reject, events of
kind `notice` with role consequence, and validated by the schema."""

from __future__ import annotations

from functools import cache

import pytest

from analyzer.core.matcher import Matcher
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import EventKind
from analyzer.core.scan import events_from_lines
from analyzer.core.schema import build_pattern
from analyzer.sources.packs import load_packs
from benchmarks.generate import build_log
from tests.realtb import capture, text_of
from tests.support import builtin_engine


@cache
def builtin_packs():
    return load_packs(use_env=False)


@cache
def detector() -> NoticeDetector:
    return NoticeDetector(builtin_packs().line_patterns())


@cache
def matcher() -> Matcher:
    return Matcher(builtin_packs())


LINE_PATTERNS = list(builtin_packs().line_patterns())

# Prefixes the normaliser leaves on a line: c10's C++ log prefix, torch's Python logger, none.
UNSTRIPPED = ("", "[E914 08:25:03.412871314 ProcessGroupNCCL.cpp:616] ",
              "E0914 08:25:06.220000 140230 torch/distributed/elastic/multiprocessing/api.py:869] ")


@pytest.mark.parametrize("pattern", LINE_PATTERNS, ids=lambda p: p.id)
@pytest.mark.parametrize("prefix", UNSTRIPPED, ids=("bare", "c10", "torch-logger"))
def test_every_shipped_notice_example_is_found_behind_a_prefix(pattern, prefix):
    assert pattern.examples
    for example in pattern.examples:
        found = detector()(prefix + example)
        assert found is not None, example
        assert (found.exception_type, found.message) == (pattern.exception, example)
        assert matcher().match(found).pattern.id == pattern.id


def test_shipped_notices_are_consequences_except_failures_of_their_own():
    roles = {p.id: p.role for p in LINE_PATTERNS}
    assert roles.pop("torch.elastic-death-signal") == "root"  # someone stopped the job: that is the cause
    for crash in ("shell.segmentation-fault", "shell.segmentation-fault-alone", "shell.segmentation-fault-zsh",
                  "shell.segmentation-fault-macos", "uwsgi.segmentation-fault", "shell.bus-error", "shell.illegal-instruction"):
        assert roles.pop(crash) == "root"  # a native crash
    assert roles.pop("uvicorn.bind-address-in-use") == "root"  # the HTTP server never listened: nothing else ran
    assert roles.pop("torch.nccl-watchdog-cuda-error-logged") == "root"  # the rank's own GPU failed
    assert roles.pop("torch.nccl-async-cuda-error-logged") == "root"
    assert roles.pop("vllm.compiled-ops-import-failed") == "root"  # its kernels never loaded: what fails later, fails for it
    assert roles.pop("vllm.core-ops-import-failed") == "root"
    for heap in ("glibc.heap-corruption", "glibc.heap-corruption-detected", "glibc.double-free", "glibc.free-check-failed",
                 "glibc.malloc-check-failed"):
        assert roles.pop(heap) == "root"  # the allocator stopped the process: the abort after it is its consequence
    assert set(roles.values()) == {"consequence"}
    assert {"sglang.sigquit-from-child", "sglang.child-process-failed", "torch.nccl-watchdog-timeout-line",
            "torch.nccl-watchdog-terminated", "torch.elastic-worker-failed"} <= set(roles)


@pytest.mark.parametrize("line", [
    "[2026-08-28 10:02:00 TP0] Decode batch. #running-req: 42, #token: 83188, gen throughput (token/s): 2926.41",
    "Received 12 requests in the last minute",  # the keyword alone is not the notice
    "Child process unexpectedly failed",  # cut short: the template must run to the end of the line
    "",
])
def test_ordinary_lines_are_not_notices(line):
    assert detector()(line) is None


def test_glibcs_report_of_a_corrupted_heap_is_the_root_cause_of_the_abort_after_it():
    """`free(): double free detected in tcache 2`, then the shell's `Aborted (core dumped)`: the allocator's check is why
    the process aborted; the abort is its consequence. Before glibc 2.26 its line named the program and the chunk."""
    for said in ("free(): double free detected in tcache 2",
                 "*** Error in `python3': double free or corruption (fasttop): 0x00007f6f2c036910 ***"):
        lines = ["INFO 12-01 10:00:00 [engine.py:12] Added request 42.", said,
                 "run.sh: line 4:  2369 Aborted                 (core dumped) python serve.py"]
        engine = builtin_engine()
        analysis = engine.analysis()
        for event in events_from_lines(lines, "run.log", engine.notices):
            analysis.add(event)
        incidents = analysis.incidents()
        (root,) = [i for i in incidents if i.is_run_root]
        assert (root.info.exception_type, root.role) == ("SIGABRT", "root") and root.info.message.endswith(said[-20:])
        assert [i.caused_by for i in incidents if i is not root] == [root.id]


def test_a_notice_quoting_another_is_the_outer_one():
    inner = ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER, "
             "NumelIn=1, NumelOut=4, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.")
    found = detector()(f"[PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated "
                       f"with exception: {inner}")
    assert found.message.startswith("Process group watchdog thread terminated")
    assert matcher().match(found).pattern.id == "torch.nccl-watchdog-terminated"


def test_keywords_cover_every_notice():
    """The contract a byte-level prefilter relies on: each notice line holds a keyword verbatim."""
    keywords = detector().keywords
    for pattern in LINE_PATTERNS:
        for example in pattern.examples:
            assert any(keyword in example for keyword in keywords), example


# Words of any server's healthy lines: a notice whose keyword is one makes the fast path read each line holding it.
_COMMON_WORDS = ("Error", "error", "Exception", "process", "Process", "request", "server", "model", "worker", "failed",
                 "Failed", "Warning", "WARNING", "INFO")


def test_no_notice_keyword_is_common_in_healthy_lines():
    """The fast path reads every line that holds a notice's keyword (`keywords`): a common word there (`Error`, from a
    template begun at glibc's `Error in ...`) made it read thousands of healthy lines (torchrun's log 3.8 times slower).
    No keyword is such a word, nor in more than one line in a thousand of a generated server log with no error."""
    keywords = detector().keywords
    assert not set(keywords) & set(_COMMON_WORDS)
    text, truth = build_log(400_000, every=10**9, seed=1)
    lines = text.splitlines()
    assert not truth and len(lines) > 1000
    assert [k for k in keywords if sum(k in line for line in lines) > len(lines) // 1000] == []


def _events(lines, notices):
    return list(events_from_lines(lines, "run.log", notices))


def test_assembler_turns_notice_lines_into_events_only_with_a_detector():
    lines = [
        "[2026-08-28 10:10:00] Received sigquit from a child process. It usually means the child failed.",
        "[2026-08-28 10:10:01] INFO: shutting down",
        "[rank3]:[E914 08:25:03.410000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600041 milliseconds before timing out.",
    ]
    assert _events(lines, None) == []
    sigquit, watchdog = _events(lines, detector())
    assert sigquit.kind is EventKind.NOTICE and sigquit.span.line_start == 1 and not sigquit.truncated
    assert sigquit.root.message == "Received sigquit from a child process. It usually means the child failed."
    assert watchdog.rank == "rank3" and watchdog.root.message.startswith("[Rank 3] Watchdog caught")


def test_notice_text_inside_a_traceback_is_part_of_it_not_a_second_event():
    def fail():
        raise RuntimeError("Received sigquit from a child process. It usually means the child failed.")

    lines = text_of(capture(fail)).splitlines()
    (event,) = _events(lines, detector())
    assert event.kind is EventKind.TRACEBACK and event.root.exception_type == "RuntimeError"


def test_notice_incidents_are_consequences_of_the_root_cause():
    def fail():
        raise ValueError("tensor parallel size 3 does not divide 64 attention heads")

    lines = ("[2026-08-28 10:00:01 TP0] Scheduler hit an exception: " + text_of(capture(fail))).splitlines()
    lines += ["[2026-08-28 10:00:02] Received sigquit from a child process. It usually means the child failed.",
              "[2026-08-28 10:00:02] Child process unexpectedly failed with exitcode=9. pid=18830"]
    engine = builtin_engine()
    analysis = engine.analysis()
    for event in events_from_lines(lines, "run.log", engine.notices):
        analysis.add(event)
    root, sigquit, child = analysis.incidents()
    assert root.is_run_root and root.role == "root" and root.info.exception_type == "ValueError"
    assert (sigquit.role, sigquit.caused_by, sigquit.event.kind) == ("consequence", root.id, EventKind.NOTICE)
    assert child.diagnosis.pattern.id == "sglang.child-process-failed"
    assert child.diagnosis.params == {"exitcode": 9, "pid": 18830}


@pytest.mark.parametrize(("entry", "problem"), [
    ({"match": "lines"}, "'match' must be one of exception, line"),
    ({"match": "line", "template": "{name} exited early"}, "must begin with literal text"),
])
def test_schema_rejects_bad_line_patterns(entry, problem):
    data = {"id": "demo.notice", "exception": "log.error", "template": "worker {name} exited early", **entry}
    pattern, problems = build_pattern(data, "demo.yaml:3", {})
    assert pattern is None and any(problem in str(p) and str(p).startswith("demo.yaml:3: ") for p in problems)


def test_schema_defaults_to_exception_matching():
    pattern, problems = build_pattern({"id": "demo.e", "exception": "E", "template": "t"}, "x:1", {})
    assert not problems and pattern.match == "exception"
    notice, _ = build_pattern({"id": "demo.n", "exception": "log.error", "template": "worker {n} died",
                               "match": "line"}, "x:2", {})
    assert notice.match == "line" and NoticeDetector([pattern, notice]).keywords == ("worker",)
