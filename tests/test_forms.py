"""Every form a failure is printed in (tests/failureforms.py) is read into one event with its type,
message and innermost Python frame; in a run the right one is the root cause."""

from __future__ import annotations

import ast
import json
import linecache
import logging
import multiprocessing
import os
import pickle
import re
import shutil
import subprocess
import sys
import traceback
from datetime import timedelta

import pytest

from analyzer.core import native
from analyzer.core.records import EventKind, Link
from analyzer.core.scan import events_from_lines
from analyzer.core.view import incident_view
from fixtures.generate import Frame, foreign_exception, formatted
from tests import failureforms as forms
from tests import logformats as fmt
from tests.realtb import actual_chain, capture, expected_chain, raised, text_of
from tests.support import builtin_engine
from tests.test_fastpath import assert_same


def events(lines: list[str]):
    return list(events_from_lines(lines, "server.log", builtin_engine().notices))


def only(lines: list[str]):
    (event,) = events(lines)
    return event


def incidents(lines: list[str]):
    analysis = builtin_engine().analysis()
    for event in events(lines):
        analysis.add(event)
    return analysis.incidents()


def run_root(lines: list[str]):
    (root,) = [incident for incident in incidents(lines) if incident.is_run_root]
    return root


# ----------------------------------------------------------------------------- native crashes


def test_faulthandlers_dump_glued_to_a_half_written_progress_bar_is_the_crash():
    lines = forms.segfault_child(bar=True)
    assert lines[0].startswith("Capturing batches") and lines[0].endswith("Fatal Python error: Segmentation fault")
    event = only(lines)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NATIVE, "Fatal Python error",
                                                                           "Segmentation fault")
    assert event.root.raise_site.function == "string_at"


def test_an_interpreter_that_cannot_start_names_the_exception_behind_its_fatal_error(tmp_path):
    """A real start-up failure (no standard library where PYTHONHOME points): `Fatal Python error:
    init_fs_encoding: ...`, then the exception that made it fail, which is the root cause."""
    run = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONHOME": str(tmp_path / "nowhere")})
    lines = run.stderr.splitlines()
    assert any(line.startswith("Fatal Python error: ") for line in lines) and "Python runtime state: " in run.stderr
    event = only(lines)
    assert event.kind is EventKind.NATIVE
    assert [(link.exception_type, link.message, link.link) for link in event.chain] == [
        ("ModuleNotFoundError", "No module named 'encodings'", Link.FIRST),
        ("Fatal Python error", "init_fs_encoding: failed to get the Python codec of the filesystem encoding", Link.CAUSE)]
    assert_same("\n".join(lines).encode())


@pytest.mark.parametrize("named", [False, True], ids=("unnamed", "thread-named"))
def test_a_fatal_errors_exception_is_raised_where_the_dump_of_its_thread_ends(named):
    """`Fatal Python error: _Py_CheckFunctionResult: ...` (a C function returned NULL), the SystemError it names below
    `Python runtime state:`, then, after a blank line, faulthandler's dump of the thread; newer interpreters name the
    thread after its number (`0x... [python] (most recent call first):`). One crash, whose root is the SystemError,
    raised at the dump's innermost frame."""
    thread = "Current thread 0x00007604707c3780" + (" [python]" if named else "") + " (most recent call first):"
    said = ("<built-in method utcoffset of zoneinfo.ZoneInfo object at 0x76046fd9f650> returned NULL without setting an"
            " exception")
    lines = ["$ python zi_hour.py", "Fatal Python error: _Py_CheckFunctionResult: a function returned NULL without setting an "
             "exception", "Python runtime state: initialized", f"SystemError: {said}", "", thread,
             '  File "/srv/zi_hour.py", line 14 in <module>', "Aborted (core dumped)"]
    event = next(e for e in events_from_lines(lines, "t.log", None) if e.kind is EventKind.NATIVE)
    assert [(link.exception_type, link.message) for link in event.chain][0] == ("SystemError", said)
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/srv/zi_hour.py", 14)
    assert event.span.line_end == 7
    assert_same("\n".join(lines).encode())


def test_an_older_interpreters_fatal_error_then_the_traceback_behind_it():
    """Python 3.8 prints the exception behind `Fatal Python error: init_sys_streams: ...` right below it (no `Python
    runtime state:` line between): that exception is the root cause."""
    exc = capture(lambda: exec("from io import open_code_missing"))
    lines = ["% python3.8", "Fatal Python error: init_sys_streams: can't initialize sys standard streams",
             *text_of(exc).splitlines()]
    (root,) = [i for i in incidents(lines) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == (type(exc).__name__, str(exc))


LIBCXX_TERMINATE = ("libc++abi: terminating due to uncaught exception of type tvm::runtime::InternalError: "
                    "[12:42:06] /src/cpp/serve/model.cc:41: InternalError: Check failed: (config_istream) is false:")


def test_libcxxs_word_of_an_uncaught_exception_is_that_exception():
    """libc++ (clang, macOS) names the type and what() on one line; from its definition (libc++abi). TVM's what()
    begins with dmlc's log place and the class again: the message is what follows, the place its site."""
    event = only(["[2026-12-01 10:00:00] loading the model", LIBCXX_TERMINATE, "INFO next"])
    assert (event.kind, event.root.exception_type) == (EventKind.NATIVE, "tvm::runtime::InternalError")
    assert event.root.message == "Check failed: (config_istream) is false:"
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/src/cpp/serve/model.cc", 41)


def test_libcxxs_word_of_an_uncaught_exception_behind_a_progress_bars_redraw():
    """The abort written after a progress bar's last redraw, which ended in no line break (tqdm's `\r` lines): the
    exception still, from where libc++'s words begin."""
    said = "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate"
    (event,) = assert_same(f"100%|{'█' * 10}| 50/50 [00:09<00:00,  5.31it/s]{said}\nzsh: abort      python txt2image.py\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.NATIVE, "std::runtime_error", "[malloc_or_wait] Unable to allocate")


def _objc_uncaught(name: str, reason: str) -> list[str]:
    """CoreFoundation's handler of an NSException nobody caught, as NSLog writes it, then libc++'s word of the abort
    (from their definitions: the process name and pid:thread in brackets, the throw's stack in parentheses)."""
    frames = [("CoreFoundation", "0x00007ff80fc2f7b3", "__exceptionPreprocess + 242"),
              ("libobjc.A.dylib", "0x00007ff80f98fbc3", "objc_exception_throw + 48"),
              ("AppKit", "0x00007ff8126192f4", "-[NSWindow(NSWindow_Theme) _postWindowNeedsToResetDragMargins] + 321")]
    return [f"2023-08-16 17:00:00.267 python[15187:1027655] *** Terminating app due to uncaught exception '{name}', "
            f"reason: '{reason}'", "*** First throw call stack:", "(",
            *(f"\t{k}   {lib:<35} {address} {symbol}" for k, (lib, address, symbol) in enumerate(frames)), ")",
            "libc++abi: terminating due to uncaught exception of type NSException"]


def test_objective_cs_word_of_an_uncaught_nsexception_is_that_exception():
    """A macOS GUI call off the main thread (matplotlib's, Tk's): the NSException's name and reason, its throw's stack
    and libc++'s abort are one crash."""
    lines = ["Epoch 1: plotting", *_objc_uncaught("NSInternalInconsistencyException",
                                                 "NSWindow drag regions should only be invalidated on the Main Thread!"),
             "zsh: abort      python train.py"]
    (event, *_) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.NATIVE, "NSInternalInconsistencyException", "NSWindow drag regions should only be invalidated on the Main Thread!")
    assert (event.span.line_start, event.span.line_end) == (2, len(lines) - 1)


def test_a_terminate_whose_what_begins_with_dmlcs_place_and_another_class_keeps_it():
    """dmlc's place is taken off what() only where the class it names there is the exception's own."""
    lines = ["terminate called after throwing an instance of 'std::runtime_error'",
             "  what():  [00:33:55] /project/cpp/grammar_parser.cc:78: EBNF parse error at line 1"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert event.root.message == lines[1].split("what():  ")[1]


def test_a_terminate_whose_what_names_its_source_place_is_raised_there():
    """TensorRT-LLM's checks put the C++ file and line in what() (`TLLM_CHECK`'s `Assertion failed: %s (%s:%d)`; an
    MPI check's text holds it too): with no stack that places the error, that place is its site."""
    place = "/src/tensorrt_llm/cpp/tensorrt_llm/common/mpiUtils.cpp:211"
    lines = ["terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'",
             f"  what():  [TensorRT-LLM][ERROR] Assertion failed: Failed: MPI error {place} '6' ({place})",
             "1       0x7fb4aebbeb71 tensorrt_llm::common::throwRuntimeError(char const*, int, std::string const&) + 82"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == (place.rsplit(":", 1)[0], 211)
    assert not event.root.has_traceback
    (placed,) = assert_same("\n".join(forms.cxx_terminate()).encode())  # (where torch says where it was raised, there)
    assert (placed.root.raise_site.path, placed.root.raise_site.lineno) == ("/pytorch/c10/cuda/CUDAException.cpp", 43)


@pytest.mark.parametrize("level", ["", "WARNING: "])
def test_dmlcs_log_place_in_front_of_an_error_is_a_prefix(level):
    """dmlc's logging (TVM, MLC, XGBoost) begins a record with the clock and the place (`[10:38:03] C:\\x\\llm_chat.cc:526: `,
    a warning's level between): an error logged so is that error."""
    line = f"[10:38:03] {level}C:\\build\\cpp\\llm_chat.cc:526: InternalError: Check failed: (config) is false:"
    (event,) = assert_same(f"Loading model...\n{line}\nStack trace not available when DMLC_LOG_STACK_TRACE is disabled\n".encode())
    assert (event.root.exception_type, event.root.message.split("\n")[0]) == ("InternalError", "Check failed: (config) is false:")


def test_libcxxs_abort_and_faulthandlers_dump_of_it_are_one_crash_with_python_frames():
    event = only([LIBCXX_TERMINATE, *forms.dumped_stack("Fatal Python error: Aborted")])
    assert event.root.exception_type == "tvm::runtime::InternalError"
    assert event.root.raise_site is not None and event.root.raise_site.function == "deep_in_the_model"


def test_a_segfaulting_child_is_faulthandlers_fatal_error_with_its_python_frames():
    """Typed as faulthandler labels it (the signal is what it names: a shell's word for the same crash, SIGSEGV)."""
    event = only(forms.segfault_child())
    assert event.kind is EventKind.NATIVE and not event.truncated
    assert (event.root.exception_type, event.root.message) == ("Fatal Python error", "Segmentation fault")
    assert native.signal_of(event.root) == "SIGSEGV"
    assert [f.function for f in event.root.frames][-2:] == ["read_weights", "string_at"]


def _check_context(tokens: int) -> None:
    raise ValueError(f"Requested tokens ({tokens}) exceed context window of 2048")


def _create_completion() -> None:
    _check_context(2285)


@pytest.mark.parametrize("colour", [2, None], ids=("coloured", "colours lost"))
def test_a_servers_exception_label_above_its_traceback_behind_podman_compose(colour):
    """llama-cpp-python's server prints `Exception: <the error's text>` and then the traceback (the word Exception a
    label of any error), podman-compose `[service] | ` in front of each line: one error, the traceback's, from the
    label's line on; where the paste ends inside the stack, the label's, the stack cut."""
    exc = capture(_create_completion)
    lines = [f"Exception: {exc}", *text_of(exc).rstrip("\n").split("\n")]
    whole = fmt.podman_compose(["INFO:     127.0.0.1:51234 - POST /v1/completions", *lines], "llama-cpp", colour=colour)
    (event,) = assert_same("\n".join([*whole, ""]).encode())
    assert [(link.exception_type, link.message) for link in event.chain] == [("ValueError", str(exc))]
    assert (event.span.line_start, event.root.raise_site.function, event.truncated) == (2, "_check_context", False)
    (event,) = assert_same("\n".join([*whole[:-4], ""]).encode())  # (cut at _create_completion's frame)
    assert (event.root.exception_type, event.root.message, event.truncated) == ("Exception", str(exc), True)
    assert [frame.function for frame in event.root.frames][-1] == "_create_completion"


@pytest.mark.parametrize("wrap", [lambda lines: fmt.compose(lines, "vllm-server-1", 14),
                                  lambda lines: fmt.logging_each_line(lines, name="stderr", level="ERROR"),
                                  lambda lines: fmt.srun_label(lines), lambda lines: fmt.srun_label(lines, 3, 16),
                                  lambda lines: fmt.srun_label(lines, 3, 16, pack=1)],
                         ids=("compose", "a dated prefix", "srun's label", "srun's padded label", "a heterogeneous job's"))
def test_faulthandlers_dump_behind_a_prefix_nobody_listed_keeps_its_frames(wrap):
    """A dump behind docker compose's service (or another prefix the normaliser learns): its first line teaches the
    prefix, so its thread and frames are still the crash's; so does a C++ terminate's, its what() and its c10 site."""
    (event,) = assert_same("\n".join([*wrap(["INFO starting", *forms.segfault_child()]), ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("Fatal Python error", "Segmentation fault")
    assert [f.function for f in event.root.frames][-2:] == ["read_weights", "string_at"]
    (event,) = assert_same("\n".join([*wrap(["INFO starting", *forms.cxx_terminate()]), ""]).encode())
    assert event.root.message.splitlines()[1].startswith("CUDA kernel errors might be asynchronously reported")
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/pytorch/c10/cuda/CUDAException.cpp", 43)


def test_ucxs_report_of_a_signal_is_that_crash_named_as_it_names_it():
    """UCX's handler (under NIXL's and Mooncake's transfers) reports the signal, what it says and a native backtrace:
    one crash typed by the signal's name, its backtrace read to its rule; the shell's line after it is its echo."""
    lines = ["[2025-05-28 09:43:43] 127.0.0.1 \"GET /route?engine_rank=0 HTTP/1.1\" 200", *forms.ucx_signal(),
             "INFO: the router goes on", "Segmentation fault (core dumped)"]
    (event, shell) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.NATIVE, "Segmentation fault", "address not mapped to object at address 0x10")
    assert (event.span.line_start, event.span.line_end) == (2, len(lines) - 2)
    assert native.signal_of(event.root) == "SIGSEGV"
    assert [i.role.value for i in incidents(lines)] == ["root", "consequence"]
    # behind a prefix nobody listed (docker compose's), which the report's first line teaches: read whole the same
    composed = [f"sglang-1  | {line}" for line in lines]
    (event, _shell) = assert_same("\n".join([*composed, ""]).encode())
    assert (event.root.exception_type, event.span.line_start, event.span.line_end) == ("Segmentation fault", 2, len(lines) - 2)


def test_an_abort_reads_the_current_thread_not_the_others():
    event = only(forms.abort_child())
    assert (event.root.exception_type, event.root.message) == ("Fatal Python error", "Aborted")
    assert [f.function for f in event.root.frames] == ["<module>", "shutdown"]


def test_a_faulthandler_stack_dump_gives_the_innermost_frame():
    event = only(forms.dumped_stack("Fatal Python error: Bus error"))
    assert (event.root.exception_type, native.signal_of(event.root)) == ("Fatal Python error", "SIGBUS")
    assert event.root.raise_site.function == "deep_in_the_model"


@pytest.mark.parametrize("said", ["access violation", "stack overflow", "code 0xc0000409"])
def test_faulthandlers_dump_on_windows_names_the_exception_windows_raised(said):
    """On Windows faulthandler heads its dump `Windows fatal exception: access violation` (or the code it has no
    words for), in an interactive session too: the crash, typed as labelled, with its innermost frame."""
    kind = "Windows fatal exception"
    lines = [">>> torch.cuda.is_available()", *forms.dumped_stack(f"Windows fatal exception: {said}")]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NATIVE, kind, said)
    assert event.root.raise_site.function == "deep_in_the_model"


def test_a_faulthandler_timeout_dump_is_a_hang_report():
    lines = [*forms.dumped_stack("Timeout (0:05:00)!"), "Extension modules: numpy.core._multiarray_umath (total: 1)"]
    event = only(lines)
    assert (event.root.exception_type, event.root.message) == ("faulthandler.Timeout", "no progress for 0:05:00")
    assert event.root.raise_site.function == "deep_in_the_model" and event.span.line_end == len(lines)


@pytest.mark.parametrize("causes", [["Could not start backend: cannot find tensor encoder.layer.0.weight"],
                                    ["creating primary lease", "grpc request error: Connection refused (os error 111)"]],
                         ids=("one cause", "numbered causes"))
def test_a_rust_programs_error_with_its_causes_is_a_chain_innermost_first(causes):
    """text-embeddings-inference's and Dynamo's last words (anyhow's report of what `main` returned): one error,
    its innermost cause the root. `Error: ...` alone is any tool's word: no error; nor `Caused by:` far below it."""
    tracing = "2025-04-23T03:14:05.341111Z  INFO text_embeddings_router: router/src/lib.rs:230: Starting model backend"
    report = forms.rust_main_error("Could not create backend", causes)
    (event,) = assert_same("\n".join([tracing, *report, ""]).encode())
    assert [(info.exception_type, info.message, info.link) for info in event.chain] == [
        ("Error", cause, Link.FIRST if k == 0 else Link.CAUSE) for k, cause in enumerate(reversed(causes))] + [
        ("Error", "Could not create backend", Link.CAUSE)]
    assert (event.kind, event.span.line_start, event.span.line_end) == (EventKind.NATIVE, 2, 2 + len(report) - 1)
    assert assert_same(f"{tracing}\nError: could not read the config\n".encode()) == []
    far = [report[0], "", tracing, tracing, *report[2:]]
    assert assert_same("\n".join([*far, ""]).encode()) == []


def test_a_cxx_terminate_is_its_exception_with_the_whole_what_text_and_the_c10_site():
    first, second = events([*forms.cxx_terminate(), *forms.dumped_stack("Fatal Python error: Segmentation fault")])
    assert first.root.exception_type == "c10::Error"
    assert first.root.message.startswith("CUDA error: an illegal memory access was encountered\n"
                                         "CUDA kernel errors might be asynchronously reported")
    assert "frame #" not in first.root.message and "Exception raised" not in first.root.message
    site = first.root.raise_site
    assert (site.path, site.lineno, site.function) == ("/pytorch/c10/cuda/CUDAException.cpp", 43,
                                                       "c10_cuda_check_implementation")
    assert second.root.message == "Segmentation fault"  # another crash


@pytest.mark.parametrize(("mangled", "name"), [("N3c105ErrorE", "c10::Error"), ("N3c1016DistBackendErrorE", "c10::DistBackendError"),
                                              ("St13runtime_error", "std::runtime_error"), ("11MyException", "MyException")])
def test_a_cxx_exception_ray_logs_as_unhandled_is_that_exception_named_unmangled(mangled, name):
    """Ray's terminate handler logs `Unhandled exception: <typeid name>. what(): <text>`: the type as the compiler
    mangled it, which reads back to the C++ name; its text and the c10 site as under libstdc++'s handler."""
    (event,) = assert_same("\n".join(["loading", *forms.ray_unhandled(mangled), ""]).encode())
    assert (event.kind, event.root.exception_type) == (EventKind.NATIVE, name)
    assert event.root.message.startswith("CUDA error: an illegal memory access was encountered\nCUDA kernel errors")
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/pytorch/c10/cuda/CUDAException.cpp", 43)
    assert assert_same(b"Unhandled exception: in the handler, see the docs\n") == []


def test_a_cxx_terminate_after_half_a_line_or_copied_onto_one_line_is_still_the_crash():
    """The handler writes to stderr at once: after a progress bar's unfinished line; a copy that lost the
    line breaks holds what() and its text on the terminate's line, behind the watchdog's lines before it."""
    terminate, what, *_ = forms.cxx_terminate("std::runtime_error")
    event = only(["Loading: 100%|##########| 4/4 [00:02<00:00]" + terminate, what, ""])
    assert event.root.exception_type == "std::runtime_error"
    assert event.root.message == "CUDA error: an illegal memory access was encountered"
    flattened = ("[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down. "
                 f"{terminate} {what.strip()} ncclRemoteError: A call failed")
    event = only(["[2026-12-01 10:00:00] step 12", flattened, "", "[2026-12-01 10:00:09] restarting"])
    assert event.kind is EventKind.NATIVE and event.root.exception_type == "std::runtime_error"
    assert event.root.message == "CUDA error: an illegal memory access was encountered ncclRemoteError: A call failed"
    assert event.span.line_start == event.span.line_end == 2
    stamped = only([f"Oct 16 02:07:00 test_broadcast (__main__.NCCLTest) ... {terminate}", f"Oct 16 02:07:00 {what}"])
    assert stamped.root.message == "CUDA error: an illegal memory access was encountered"  # (what() behind the same stamp)


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_cxx_terminate_that_ranks_wrote_at_once_is_read_once(ranks):
    """Ranks that abort at once interleave the handler's pieces: the type written once per rank in a row, their
    closing quotes on lines of their own before what(). The type once, the message what() says."""
    lines = forms.cxx_terminate_of_ranks(ranks)
    assert lines[0].endswith("c10::Error" * ranks + "'") and lines[1] == "'"  # (the form read)
    event = only(lines)
    assert event.kind is EventKind.NATIVE and event.root.exception_type == "c10::Error"
    assert event.root.message.startswith("CUDA error: an illegal memory access was encountered\n")
    assert event.root.raise_site.function == "c10_cuda_check_implementation"
    (fast,) = assert_same("\n".join([*lines, ""]).encode())
    assert fast.chain == event.chain
    # another rank's type and quote between them, then the quotes of the rest
    pieces = [lines[0], "c10::Error'", "'", *lines[ranks:]]
    assert only(pieces).root.message == event.root.message


def test_the_abort_after_a_cxx_terminate_is_the_same_crash_and_gives_its_python_frames():
    event = only([*forms.cxx_terminate(), *forms.dumped_stack("Fatal Python error: Aborted")])
    assert event.root.exception_type == "c10::Error" and "Fatal Python" not in event.root.message
    assert event.root.raise_site.function == "deep_in_the_model"


def test_a_watchdog_abort_is_a_consequence_of_the_error_before_it():
    def step():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    watchdog = "[PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: "
    found = incidents([*text_of(capture(step)).splitlines(), *forms.cxx_terminate("c10::DistBackendError", watchdog)])
    root, abort = found
    assert root.is_run_root and root.info.exception_type == "RuntimeError"
    assert (abort.info.exception_type, abort.role, abort.caused_by) == ("c10::DistBackendError", "consequence", root.id)
    assert abort.diagnosis.pattern.id == "torch.nccl-watchdog-cuda-error"  # its own error, told again


def test_a_watchdog_abort_with_a_cuda_error_of_its_own_is_the_root_cause():
    """No Python code on the rank hit the error first: the GPU under it failed (here its memory)."""
    watchdog = "[PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: "
    lines = [line.replace("an illegal memory access was encountered", "uncorrectable ECC error encountered")
             for line in forms.cxx_terminate("c10::DistBackendError", watchdog)]
    root = run_root(["[2025-01-29 08:52:44 TP1] Capture cuda graph begin.", *lines])
    assert root.diagnosis.pattern.id == "torch.nccl-watchdog-cuda-error" and root.role == "root"
    (bare,) = incidents(["RuntimeError: CUDA error: uncorrectable ECC error encountered"])
    assert bare.diagnosis.pattern.id == "torch.cuda-uncorrectable-ecc"


def test_the_watchdogs_logged_line_is_the_root_cause_for_a_cuda_error_of_its_own_rank_and_an_echo_of_a_timeout():
    """The watchdog logs why it stops before it rethrows (`[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595]
    [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: ...`; a copy may hold that line
    alone): a CUDA error of the rank's own GPU is where the failure is, unless the rank's Python code hit it first; a
    collective that timed out echoes another rank's failure."""
    def step():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    said = "[PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: "
    logged = fmt.torch_glog([said + "CUDA error: an illegal memory access was encountered"], rank=0,
                            where="ProcessGroupNCCL.cpp:1595", trace="")
    root = run_root(["[2025-02-19 12:14:40 TP0] Decode batch. #running-req: 12", *logged])
    assert (root.diagnosis.pattern.id, root.role) == ("torch.nccl-watchdog-cuda-error-logged", "root")
    first, echo = incidents([*text_of(capture(step)).splitlines(), *logged])
    assert first.is_run_root and first.info.exception_type == "RuntimeError"
    assert (echo.diagnosis.pattern.id, echo.role, echo.caused_by) == ("torch.nccl-watchdog-cuda-error-logged",
                                                                      "consequence", first.id)
    timeout = said + ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER, "
                      "NumelIn=1, NumelOut=4, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.")
    (incident,) = incidents(fmt.torch_glog([timeout], rank=0, where="ProcessGroupNCCL.cpp:1595", trace=""))
    assert (incident.diagnosis.pattern.id, incident.role) == ("torch.nccl-watchdog-terminated", "consequence")


@pytest.mark.parametrize("error, pattern, role", [
    ("NCCL error: remote process exited or there was a network error, NCCL version 2.22.3",
     "torch.nccl-async-error-logged", "consequence"),
    ("CUDA error: an illegal memory access was encountered", "torch.nccl-async-cuda-error-logged", "root")],
    ids=("a peer gone", "its own GPU"))
def test_the_async_nccl_error_the_watchdog_logs_is_read_and_placed(error, pattern, role):
    """`[rank4]:[E1229 16:47:25.333820755 ProcessGroupNCCL.cpp:541] [Rank 4] found async exception when checking for
    NCCL errors: ...` under NCCL's WARN lines, the result code and the C++ stack after it: an error of the rank (was none);
    a peer that went away is an echo, a CUDA error of its own GPU the failure."""
    warn = ("50428e4af543:34610:36821 [4] ib_plugin.c:1673 NCCL WARN NET/IB: Got completion from peer 10.0.1.23<34696> "
            "with status=5 opcode=0 len=0 vendor err 249 (Recv) hca ibp152s0")
    logged = fmt.torch_glog([f"[Rank 4] found async exception when checking for NCCL errors: {error}"], rank=4,
                            where="ProcessGroupNCCL.cpp:541", trace="")
    (incident,) = incidents([warn, *logged, "ncclRemoteError: A call failed possibly due to a network error or a remote "
                             "process exiting prematurely.", "Last error:"])
    assert (incident.diagnosis.pattern.id, incident.role, incident.info.message) == (
        pattern, role, f"found async exception when checking for NCCL errors: {error}")


def _load_kernels() -> None:
    raise ImportError("libcuda.so.1: cannot open shared object file: No such file or directory")


def _crash_on_a_custom_op() -> None:
    raise AttributeError("'_OpNamespace' '_C' object has no attribute 'rms_norm'")


@pytest.mark.parametrize("module, file", [("_C", "_custom_ops.py"), ("_core_C", "_core_ext.py")])
def test_vllms_warning_that_its_kernels_did_not_load_is_the_root_cause_of_what_fails_after_it(module, file):
    """vLLM logs a failed import of its compiled ops as a warning (`Failed to import from vllm._C with ImportError(...)`;
    0.5's `vllm._core_C` too) and goes on; what fails later fails for it. Where the module is absent, as on a platform
    whose plugin brings its own kernels (Ascend's logs say `ModuleNotFoundError(...)` at each start), it is no error."""
    said = capture(_load_kernels)
    warned = fmt.vllm_record(f"Failed to import from vllm.{module} with {said!r}", level=logging.WARNING,
                             file=file, lineno=21)
    crash = fmt.vllm_record("Worker failed", capture(_crash_on_a_custom_op), file="worker_base.py", lineno=620)
    root = run_root([*warned, "INFO 11-28 03:12:41 [api_server.py:1024] vLLM API server version 0.8.1", *crash])
    assert root.info.exception_type == "ImportError" and root.diagnosis.pattern.id == (
        "vllm.compiled-ops-import-failed" if module == "_C" else "vllm.core-ops-import-failed")
    absent = capture(lambda: __import__("vllm_platform_without._C"))
    assert isinstance(absent, ModuleNotFoundError)
    assert incidents(fmt.vllm_record(f"Failed to import from vllm._C with {absent!r}", level=logging.WARNING,
                                     file="_custom_ops.py", lineno=21)) == []


def test_a_cuda_error_printed_without_a_type_gets_the_page_of_its_text():
    """torch's check printed on its own, or a kernel library's own check before it exits: no Python type,
    the CUDA error as torch words it, the check's file and line as its site."""
    check = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'an illegal memory access was encountered'"
    for lines in ([check], ["CUDA error: an illegal memory access was encountered",
                            "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                            "stacktrace below might be incorrect."]):
        (incident,) = incidents(["[2025-02-18 09:50:33 DP1 TP1] Capture cuda graph begin.", *lines])
        assert incident.info.exception_type == "CUDAError" and incident.event.kind is EventKind.NATIVE
        assert incident.info.message.startswith("CUDA error: an illegal memory access was encountered")
        assert incident.diagnosis.pattern.id == "torch.cuda-illegal-memory-access"
    site = only([check]).root.raise_site
    assert (site.path, site.lineno) == ("/workspace/csrc/custom_all_reduce.cuh", 368)


@pytest.mark.parametrize("rocm", [False, True], ids=("cuda", "rocm"))
def test_a_kernel_assertion_is_the_root_of_the_device_side_assert_that_follows(rocm):
    found = incidents(forms.device_assertion(threads=3, rocm=rocm))
    assertion = next(i for i in found if i.is_run_root)
    assert (assertion.info.exception_type, assertion.count) == ("CUDAError", 3)
    site = assertion.info.raise_site
    assert (site.path, site.lineno, site.function) == (f"/pytorch/aten/src/ATen/native/{'hip/Indexing.hip' if rocm else 'cuda/Indexing.cu'}",
                                                        1500, "indexSelectSmallIndex")
    assert assertion.diagnosis.pattern.id == ("torch.hip-kernel-assertion" if rocm else "torch.cuda-kernel-assertion")
    assert assertion.diagnosis.params["condition"] == "srcIndex < srcSelectDimSize"
    (raised,) = [i for i in found if i is not assertion]
    assert raised.diagnosis.pattern.id == "torch.cuda-device-side-assert"


def test_an_exception_line_alone_behind_a_ci_runner_time_and_a_logger_prefix():
    line = ("[2025-06-26T16:27:15Z] ERROR 06-26 09:27:15 [core.py:519] ValueError: To serve at least one request with "
            "the models's max seq len (8192), (2.63 GiB KV cache is needed, which is larger than the available KV cache "
            "memory (1.64 GiB).")
    (event,) = events([line])
    assert (event.kind, event.root.exception_type) == (EventKind.BARE, "ValueError")
    assert event.timestamp is not None and event.timestamp.year == 2025


def test_pip_logging_an_oserror_it_could_not_install_through():
    (root,) = incidents(["Installing build dependencies ... error", "  error: subprocess-exited-with-error",
                         "      ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"])
    assert (root.info.exception_type, root.info.message) == ("OSError", "[Errno 28] No space left on device")
    assert root.diagnosis.pattern.id == "python.disk-full-no-file"


@pytest.mark.parametrize("style", ["auto", "long", "short"])
def test_a_pytest_report_gives_each_failing_test_its_error(style):
    """pytest's own report, run for real: its `E` lines are the error; its long styles end in the place
    the error was raised (`test_engine.py:7: ValueError`)."""
    failed, raised = events(forms.pytest_report(style))
    assert (failed.root.exception_type, failed.root.message) == (
        "AssertionError", "assert not True\n+  where True = has_unfinished_requests()")
    assert (raised.root.exception_type, raised.root.message) == ("ValueError", "no weights named lm_head\nlooked in 3 shards")
    sites = [(e.root.raise_site.path, e.root.raise_site.lineno) if e.root.raise_site else None for e in (failed, raised)]
    assert sites == [("test_engine.py", 11), ("test_engine.py", 7)]  # (the short style's frames, the long's place)
    assert not failed.truncated and not raised.truncated


_COMPILE_SUITE = """
    def compile_graph():
        raise RuntimeError("TypeError: cannot pickle 'DispatchKeySet' object\\n\\nSet TORCHDYNAMO_VERBOSE=1 for the internal "
                           "stack trace (please do this especially if you're reporting a bug to PyTorch). For even more "
                           "developer context, set TORCH_LOGS=\\"+dynamo\\"")


    def test_compiles():
        compile_graph()
"""


def test_a_pytest_report_whose_long_e_line_a_terminal_wrapped():
    """Copied from a terminal 120 columns wide: the rest of the report's longest `E` line on a line of its own
    without the `E`, then the place the error was raised; the rest goes on with the message."""
    report = forms.pytest_report("long", _COMPILE_SUITE)
    (whole,) = events(report)
    (wrapped,) = events(forms.hard_wrapped(report, 120))
    assert max(map(len, report)) > 120 and whole.root.raise_site is not None
    assert (wrapped.root.exception_type, wrapped.root.message, wrapped.root.raise_site) == (
        whole.root.exception_type, whole.root.message, whole.root.raise_site)
    assert_same("\n".join(forms.hard_wrapped(report, 120)).encode())


_FAIL_SUITE = """
    import pytest


    def check_output(lines):
        if "10 passed" not in lines:
            pytest.fail(f"nomatch: '*10 passed*' in {len(lines)} lines")


    def test_central():
        check_output(["collected 0 items / 1 errors"])


    def test_raises():
        with pytest.raises(ValueError):
            int("12")
"""


@pytest.mark.parametrize("style", ["long", "short"])
def test_pytests_own_failed_outcome(style):
    """`pytest.fail(...)` and `pytest.raises` that saw nothing raised: pytest's `Failed` (no `Error` in its name) on
    the `E` line opens a report as an exception's line does, read with its place."""
    lines = forms.pytest_report(style, _FAIL_SUITE, 120)
    found = events(lines)
    assert [(e.kind, e.root.exception_type, e.root.message, e.root.raise_site.lineno) for e in found] == [
        (EventKind.TRACEBACK, "Failed", "nomatch: '*10 passed*' in 1 lines", 7),
        (EventKind.TRACEBACK, "Failed", "DID NOT RAISE <class 'ValueError'>", 15)]
    assert_same("\n".join(lines).encode())


@pytest.mark.parametrize("report", [lambda: forms.pytest_report("long"), lambda: forms.pytest_report("short"),
                                    forms.pytest_collection_error, forms.pytest_collection_typeerror],
                         ids=("long", "short", "collection", "collection-typeerror"))
def test_a_pytest_report_indented_as_a_whole(report):
    """pytest's report with every line indented the same (a tool that indents its child's output, a paste in a
    list item): read as without the margin, the frames' source lines told from the margin."""
    lines = report()
    indented = [f"  {line}" if line else line for line in lines]
    expected = [(e.root.exception_type, e.root.message, e.root.frames) for e in events(lines)]
    assert expected and [(e.root.exception_type, e.root.message, e.root.frames) for e in events(indented)] == expected
    assert_same("\n".join(indented).encode())


_FAILING_INSTALL = ('def install(name):\n    raise TypeError(f"entry_points() missing {name!r}")\n'
                    'print("creating virtual environment")\ninstall("name")')


@pytest.mark.parametrize("margin", ["", "    "], ids=("as printed", "in a code block"))
def test_pre_commits_report_of_a_command_whose_output_holds_the_error(margin):
    """pre-commit's `An unexpected error has occurred: CalledProcessError: command: ...`, the command run for real: the
    error its output holds (a traceback on its stderr) failed first, pre-commit's its consequence; the report is one
    event to its `Check the log at` line; a command that printed no error of Python's (git's `error: ...`) leaves the
    report's error alone."""
    lines = [f"{margin}{line}" if line else line for line in forms.precommit_report([sys.executable, "-c", _FAILING_INSTALL])]
    (event,) = assert_same("\n".join(["[INFO] Installing environment for https://github.com/x/y.", *lines]).encode())
    assert [(link.exception_type, link.link) for link in event.chain] == [("TypeError", Link.FIRST),
                                                                          ("CalledProcessError", Link.CAUSE)]
    assert event.root.message == "entry_points() missing 'name'"
    assert [(frame.lineno, frame.function) for frame in event.root.frames] == [(4, "<module>"), (2, "install")]
    assert event.chain[-1].message.startswith("command: (")
    assert event.span.line_end == len(lines) + 1
    quiet = forms.precommit_report([sys.executable, "-c", "import sys; sys.exit(\"error: pathspec 'v1' did not match any file(s)\")"])
    (event,) = events(quiet)
    assert [link.exception_type for link in event.chain] == ["CalledProcessError"]


def test_a_pytest_report_with_the_tests_locals():
    """`pytest -l`: under each report's `E` lines, a blank, the test's locals (`name       = 'lm_head'`) and a blank,
    then the place it was raised: the report goes on to that place, as without them."""
    plain = events(forms.pytest_report("long"))
    lines = forms.pytest_report("long", forms.PYTEST_SUITE, 80, "-l")
    assert "name       = 'lm_head'" in lines
    with_locals = events(lines)
    assert [(e.root.exception_type, e.root.message, e.root.raise_site) for e in with_locals] == \
        [(e.root.exception_type, e.root.message, e.root.raise_site) for e in plain]
    assert with_locals[-1].root.raise_site.lineno == 7
    assert_same("\n".join(lines).encode())


@pytest.mark.parametrize("style", ["long", "short"])
def test_a_pytest_report_behind_a_build_tools_prefix(style):
    """A Nix build's log of a package's test run: `pkg> ` in front of every line of pytest's report. Its
    `E` lines show where the text begins, as a frame or a header would."""
    plain = events(forms.pytest_report(style))
    lines = [f"python3.13-throttler> {line}".rstrip() for line in forms.pytest_report(style)]
    prefixed = events(lines)
    assert [(e.root.exception_type, e.root.message, e.root.raise_site) for e in prefixed] == \
        [(e.root.exception_type, e.root.message, e.root.raise_site) for e in plain]
    assert_same("\n".join(lines).encode())


def test_pytests_short_summary_alone_names_each_failure():
    """A CI log cut to pytest's summary lines: each failure from its line, the test as its context; where the
    full report came before them, they repeat it and add nothing (the test above: two events)."""
    summary = [line for line in forms.pytest_report("short") if line.startswith("FAILED ")]
    assert len(summary) == 2
    failed, raised = events(["=== short test summary info ===", *summary, "2 failed in 0.01s"])
    assert [(e.kind, e.root.exception_type, e.root.message) for e in (failed, raised)] == [
        (EventKind.NOTICE, "AssertionError", "assert not True"),
        (EventKind.NOTICE, "ValueError", "no weights named lm_head")]
    assert (raised.context, raised.root.raise_site) == ("FAILED test_engine.py::test_weights_load", None)
    again = [line.replace("::test_weights_load", "::test_other") for line in summary[1:]]
    assert [i.count for i in incidents([*summary[1:], *again])] == [2]  # the same failure in two tests
    assert events(["FAILED tests/x.py::test_a - oops, not an exception", "ERROR tests/x.py - nothing"]) == []
    # a test module that failed to import names the module alone
    (module,) = events(["ERROR tests/interop/test_crewai.py - AttributeError: type object 'Any' has no attribute 'x'"])
    assert (module.root.exception_type, module.context) == ("AttributeError", "ERROR tests/interop/test_crewai.py")
    # a paste that lost the word in front (and kept the blank after it)
    (cut,) = events([f" {summary[1][len('FAILED '):]}"])
    assert (cut.root.exception_type, cut.root.message) == ("ValueError", "no weights named lm_head")
    # a plugin's duration of the test after the word (a ROCm CI's `FAILED [0.0004s] tests/...`)
    timed = [line.replace("FAILED ", "FAILED [0.0004s] ", 1) for line in summary]
    assert [(e.root.exception_type, e.root.message) for e in events(timed)] == [
        ("AssertionError", "assert not True"), ("ValueError", "no weights named lm_head")]
    assert_same("\n".join(timed).encode())


_WRAPPER_SUITE = """
    class InductorError(Exception):
        '''A compiler's wrapper whose text is its error's line, as torch._inductor.exc.InductorError's is.'''

        def __init__(self, inner):
            super().__init__(f"{type(inner).__qualname__}: {inner}")


    def lower(node):
        try:
            if node == "max":
                raise AssertionError
            raise ValueError(f"unsupported reduction {node!r}")
        except Exception as error:
            raise InductorError(error) from error


    def test_lower_max():
        lower("max")


    def test_lower_argmin():
        lower("argmin")
"""
_WRAPPED = [[("AssertionError", "", Link.FIRST), ("test_engine.InductorError", "AssertionError:", Link.CAUSE)],
            [("ValueError", "unsupported reduction 'argmin'", Link.FIRST),
             ("test_engine.InductorError", "ValueError: unsupported reduction 'argmin'", Link.CAUSE)]]


def _chains(found) -> list[list[tuple]]:
    return [[(link.exception_type, link.message, link.link) for link in event.chain] for event in found]


def test_pytests_summary_of_a_wrapper_whose_text_is_its_errors_line():
    """torch's `InductorError: AssertionError: ` in pytest's summary (run for real, a CI's wide terminal): the error
    the wrapper's text names is what failed, an `assert` with no message too; the wrapper is its cause's link."""
    summary = [line for line in forms.pytest_report("long", _WRAPPER_SUITE, columns=160) if line.startswith("FAILED ")]
    assert summary[0].endswith("test_engine.InductorError: AssertionError:")
    found = events(summary)
    assert [event.kind for event in found] == [EventKind.NOTICE] * 2 and _chains(found) == _WRAPPED


def test_pytests_long_report_of_a_chain_is_one_event():
    """`--tb=long` of an error raised from another: the first link's report, its place, the chain's words, the test's
    source down to the next link's `E` lines and place: one event, the chain's links in order; cut right after the
    words, the first link alone, marked cut."""
    lines = forms.pytest_report("long", _WRAPPER_SUITE, 160)
    found = events(lines)
    assert _chains(found) == _WRAPPED and not any(event.truncated for event in found)
    assert [[frame.lineno for frame in link.frames] for link in found[0].chain] == [[12], [15]]
    assert_same("\n".join(lines).encode())
    words = lines.index("The above exception was the direct cause of the following exception:")
    (cut,) = events(lines[:words + 3])
    assert (_chains([cut]), cut.truncated) == ([[("AssertionError", "", Link.FIRST)]], True)


def test_pytests_native_tracebacks_end_at_the_next_tests_headline():
    """`--tb=native`: each test's traceback as Python prints it, its last line right above the next test's
    headline (`____ test_x ____`) or the summary's: the message ends there, each test is its own event, and the
    summary's lines repeat them (no event of their own)."""
    lines = forms.pytest_report("native", _WRAPPER_SUITE, columns=160)
    found = events(lines)
    assert [event.kind for event in found] == [EventKind.TRACEBACK] * 2 and _chains(found) == _WRAPPED
    assert [event.root.raise_site.function for event in found] == ["lower", "lower"]
    assert_same("\n".join(lines).encode())


def test_pytests_report_of_a_test_module_whose_import_raised():
    """`ERROR collecting test_x.py`, the stack in pytest's short style (run for real), its `E` lines: the
    frames are read, the innermost the raise site. A short-style stack with no `E` lines is no report."""
    lines = forms.pytest_collection_typeerror()
    event, *_ = events(lines)
    assert (event.root.exception_type, event.root.message) == ("TypeError", "issubclass() arg 1 must be a class")
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function, site.code) == ("engine_models.py", 2, "check", "return issubclass(kind, int)")
    assert_same("\n".join(lines).encode())
    stack = [line for line in lines if not line.startswith(("E ", "=", "_", "ERROR", "!", "1 error"))]
    assert events(stack) == []


def test_pytests_short_stack_whose_source_lines_a_paste_unindented():
    """The short style's frames copied from pytest's report (run for real) with each source line's indent lost:
    still the stack, the innermost frame the raise site; lines that are no frame's source end it."""
    lines = [line for line in forms.pytest_collection_typeerror() if not line.startswith(("=", "_", "ERROR", "!", "1 error"))]
    pasted = [line.lstrip(" ") for line in lines]
    assert pasted != lines
    event, *_ = events(pasted)
    assert (event.root.exception_type, event.root.message) == ("TypeError", "issubclass() arg 1 must be a class")
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function) == ("engine_models.py", 2, "check")
    assert_same("\n".join([*pasted, ""]).encode())
    stack = [line for line in pasted if not line.startswith("E ")]
    assert events(stack) == []


def test_pytests_report_of_a_test_module_that_failed_to_import():
    """`ImportError while importing test module ...`, `Traceback:`, the short stack, its `E` lines: the
    module's own import line is the raise site; the summary line after it repeats it."""
    lines = forms.pytest_collection_error()
    assert any(line.startswith("ImportError while importing test module '") for line in lines)
    event = only(lines)
    assert (event.kind, event.root.exception_type) == (EventKind.TRACEBACK, "ImportError")
    assert event.root.message.startswith("cannot import name 'load_weights' from 'engine_helpers'")
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function) == ("test_engine_import.py", 1, "<module>")
    assert site.code == "from engine_helpers import load_weights  # noqa: F401"
    assert_same("\n".join(lines).encode())
    start = next(k for k, line in enumerate(lines) if line.startswith("ImportError while"))
    cut = only([*lines[start:start + 5], "(the rest of the job's log)"])  # cut before its `E` lines
    assert (cut.root.exception_type, cut.root.message) == ("ImportError", "")


def test_a_pytest_report_copied_from_a_ci_web_page():
    failed, raised = events(forms.web_viewer(forms.pytest_report("long")))
    assert (failed.root.exception_type, raised.root.exception_type) == ("AssertionError", "ValueError")
    assert raised.root.raise_site.lineno == 7 and raised.timestamp is not None


class _InternalServerError(Exception):  # as the openai client names a 500 answer
    pass


_InternalServerError.__module__, _InternalServerError.__qualname__ = "openai", "InternalServerError"


def _request():
    """Raised from the client library's file, as openai raises it (`raise self._make_status_error_from_response(...)`)."""
    path = "/venv/lib/python3.11/site-packages/openai/_base_client.py"
    source = "def _request(error):\n    raise error\n"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    scope: dict = {}
    exec(compile(source, path, "exec"), scope)  # (the source line comes from linecache)
    scope["_request"](_InternalServerError("Internal Server Error"))


def test_a_clients_500_pasted_before_the_servers_traceback_is_its_echo():
    """A test client's `openai.InternalServerError` first, then the server's own traceback: the server's
    error is the root cause, the client's its consequence."""
    client = text_of(capture(_request)).splitlines()
    server = text_of(capture(_load_weights)).splitlines()
    roles = {i.info.exception_type: (i.role, i.is_run_root) for i in incidents([*client, "", "server log:", *server])}
    assert roles == {"openai.InternalServerError": ("consequence", False), "KeyError": ("root", True)}


def test_an_error_told_again_by_its_class_alone_is_its_echo():
    """A health check's record repeats the error by its class's name without the module: the same error."""
    exc = OutOfResources()
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    roles = [(i.info.exception_type, i.role) for i in incidents([said, "retrying", f"{type(exc).__name__}: {exc}"])]
    assert roles == [(f"{__name__}.OutOfResources", "root"), ("OutOfResources", "consequence")]


def _model_execution():
    try:
        ().__getitem__(0)
    except IndexError as err:
        raise type(err)(f"Error in model execution: {err}") from err  # as vLLM's model runner wraps it


def test_a_logged_repr_before_its_own_chain_is_that_error():
    """vLLM V0 logs `repr(e)` with the traceback below it: the chain's root link is the root cause, the
    repr line the same error told first, one record with the chain."""
    exc = capture(_model_execution)
    lines = fmt.vllm_record(repr(exc), exc, v0=True, file="engine.py", lineno=135)
    (found,) = incidents(lines)
    assert (found.info.message, found.is_run_root) == ("tuple index out of range", True)
    assert found.event.chain[-1].message == "Error in model execution: tuple index out of range"
    assert found.event.span.line_start == 1  # (from the repr's line)


def _worker_loads_extension():
    raise OSError("/root/.cache/torch_extensions/xgrammar/xgrammar.so: cannot open shared object file")


def _executor_reraises(worker_error: BaseException):
    raise type(worker_error)(*worker_error.args)  # as an executor raises a result a worker sent back


def test_the_same_error_from_other_frames_below_it_is_where_it_was_raised():
    """vLLM's executor re-raises a worker's error and prints the worker's traceback right below its own
    exception line: the worker's frames are the root link. The same traceback printed twice is two errors."""
    worker = capture(_worker_loads_extension)
    executor = capture(lambda: _executor_reraises(worker))
    lines = [*text_of(executor).splitlines(), *text_of(worker).splitlines()]
    event = only(lines)
    assert [(link.exception_type, link.frames[-1].function) for link in event.chain] == [
        ("OSError", "_worker_loads_extension"), ("OSError", "_executor_reraises")]
    assert event.root.raise_site.function == "_worker_loads_extension"
    printed = text_of(worker).splitlines()
    assert len(events(printed * 2)) == len(events([*printed[1:], *printed])) == 2  # (the first cut above its frames)


def test_shell_signal_lines():
    killed, segfault = events(["./entrypoint.sh: line 47:    28 Killed            python3 -m sglang.launch_server",
                               "Segmentation fault (core dumped)"])
    assert (killed.root.exception_type, segfault.root.exception_type) == ("SIGKILL", "SIGSEGV")
    roles = {i.info.exception_type: i.role for i in incidents(["Killed", "Segmentation fault (core dumped)"])}
    assert roles == {"SIGKILL": "consequence", "SIGSEGV": "root"}


# ----------------------------------------------------------------------------- wrapped exceptions


def test_a_process_pool_failure_keeps_the_worker_traceback_as_the_root():
    event = only(forms.pool_failure())
    remote, local = event.chain
    assert (remote.exception_type, remote.message) == ("ValueError", "shard model-00003 has 3 heads, expected 4")
    assert remote.raise_site.function == "_load_shard" and local.link is Link.CAUSE
    assert run_root(forms.pool_failure()).info == remote


def test_process_headers_end_the_message_before_them():
    first, second = events(forms.failing_processes())
    for event, shard in ((first, 1), (second, 2)):
        assert event.root.exception_type == "FileNotFoundError"
        assert event.root.message == f"[Errno 2] No such file or directory: '/nonexistent/weights-{shard}.bin'"
        assert event.root.raise_site.function == "load"


@pytest.mark.parametrize("after", ["srun: error: node-3: task 0: Exited with exit code 1",
                                   "root@2735c75a627e:/sgl-workspace# exit", "FATA[0295] exec failed with exit code 1"])
def test_a_message_ends_before_a_launcher_or_shell_line(after):
    def missing():
        import analyzer_no_such_module  # noqa: F401

    lines = [*text_of(capture(missing)).splitlines(), after, "exit"]
    assert only(lines).root.message == "No module named 'analyzer_no_such_module'"


def test_a_message_that_is_a_traceback_is_parsed_and_its_inner_error_is_the_root():
    event = only(forms.nested_traceback())
    inner, outer = event.chain
    assert (inner.exception_type, inner.raise_site.function) == ("ValueError", "_load_shard")
    assert (outer.exception_type, outer.link) == ("RuntimeError", Link.CAUSE)
    assert outer.message == "ValueError: shard model-00001 has 3 heads, expected 4"
    assert run_root(forms.nested_traceback()).info == inner


@pytest.mark.parametrize(("serialized", "frames", "alone"), [(False, True, False), (True, True, False),
                                                              (False, False, False), (False, True, True)],
                         ids=("its stack", "a serialized module's two", "no frames", "the exception line alone"))
def test_the_error_torchscripts_interpreter_failed_with_is_the_root(serialized, frames, alone):
    """`RuntimeError: The following operation failed in the TorchScript interpreter.` holds the error under
    TorchScript's own stack: that error is the root, raised where that stack ends, the interpreter's its effect."""
    said = "CUDA out of memory. Tried to allocate 2.37 GiB (GPU 0; 10.76 GiB total capacity)"
    lines = text_of(forms.torchscript_failure(said, serialized, frames)).rstrip("\n").split("\n")
    if alone:  # (a paste begun at the exception line)
        lines = lines[next(k for k, line in enumerate(lines) if line.startswith("RuntimeError: ")):]
    (event,) = assert_same("\n".join(["INFO step 3", *lines, "INFO shutting down", ""]).encode())
    inner, outer = event.chain
    assert (inner.exception_type, inner.message) == ("RuntimeError", said)
    assert (outer.message, outer.link) == ("The following operation failed in the TorchScript interpreter.", Link.CAUSE)
    if frames:  # (a serialized module's: where its original code's stack ends)
        assert (inner.raise_site.path, inner.raise_site.lineno) == (
            "/venv/lib/python3.10/site-packages/torch_scatter/composite/softmax.py", 16)
    else:  # (no stack of its own: raised in the interpreter, where the Python frames end)
        assert inner.raise_site == outer.raise_site and inner.raise_site.function == "_run_scripted"
    assert event.span.line_end == len(lines) + 1


def test_the_error_torchscripts_interpreter_failed_with_stays_the_root_of_a_chain_that_goes_on():
    """An error raised from the interpreter's RuntimeError: the chain goes on after the error under TorchScript's
    stack, which stays its root."""
    said = "shape '[-1, 56]' is invalid for input of size 21080"
    lines = text_of(forms.torchscript_failure(said, wrapped=True)).rstrip("\n").split("\n")
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert [(link.exception_type, link.message.split("\n")[0], link.link) for link in event.chain] == [
        ("RuntimeError", said, Link.FIRST),
        ("RuntimeError", "The following operation failed in the TorchScript interpreter.", Link.CAUSE),
        ("ValueError", "the training step failed", Link.CAUSE)]
    # (each line logged as a record of its own by a relay, the clock ticking: TorchScript's stack's head goes on too)
    relayed = fmt.logging_each_line(lines, name="launcher", level="ERROR", step=timedelta(milliseconds=1))
    (event,) = assert_same("\n".join([*relayed, ""]).encode())
    assert (event.root.message, event.root.raise_site.lineno) == (said, event.chain[0].raise_site.lineno)
    assert event.root.raise_site.path == "/venv/lib/python3.10/site-packages/torch_scatter/composite/softmax.py"


def _warmup():
    try:
        _load_weights()
    except KeyError:
        raise ValueError("Warmup failed - check the arguments. Error: " + traceback.format_exc()) from None


def test_a_message_that_ends_in_a_traceback_has_that_traceback_as_its_root():
    event = only(text_of(capture(_warmup)).splitlines())
    assert [(info.exception_type, info.link) for info in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("ValueError", Link.CAUSE)]
    assert event.chain[0].raise_site.function == "_load_weights"
    assert event.chain[1].message == "Warmup failed - check the arguments. Error:"


class TVMError(RuntimeError):
    """tvm._ffi.base's: its message is the C++ side's backtrace, `Traceback (most recent call last):` then `[bt]` lines."""


TVMError.__module__ = "tvm._ffi.base"


def _apply_passes():
    raise TVMError("Traceback (most recent call last):\n"
                   "  [bt] (1) /opt/tvm/build/libtvm.so(tvm::transform::Pass::operator()(tvm::IRModule) const+0x56) [0x7f52]\n"
                   "  [bt] (0) /opt/tvm/build/libtvm.so(tvm::runtime::Backtrace[abi:cxx11]()+0x2c) [0x7f5a]")


@pytest.mark.parametrize("stack", ["python", "native"])
def test_a_paste_begun_at_an_exception_line_whose_message_is_a_traceback(stack):
    """A copy begun at `RuntimeError: Traceback (most recent call last):` (Ray Serve's format_exc() re-raised, TVM's
    native backtrace as its text): the Python traceback below it is the error it wraps; a native one (`[bt] (1) ...`)
    is its text, the error that exception (it was a traceback cut off with no error at all)."""
    lines = text_of(capture(forms._replica_init if stack == "python" else _apply_passes)).splitlines()
    begun = lines[next(k for k, line in enumerate(lines) if line.endswith(": Traceback (most recent call last):")):]
    event = only(begun)
    if stack == "python":
        assert [(info.exception_type, info.link) for info in event.chain] == [("ValueError", Link.FIRST),
                                                                              ("RuntimeError", Link.CAUSE)]
        assert event.root.raise_site.function == "_load_shard"
    else:
        assert [info.exception_type for info in event.chain] == ["tvm._ffi.base.TVMError"]
        assert event.root.message.split("\n")[:2] == ["Traceback (most recent call last):", begun[1]]
    assert [e.chain for e in assert_same("\n".join([*begun, ""]).encode())] == [event.chain]


def test_a_child_traceback_in_the_message_is_the_root_of_the_chain():
    """The child's own error comes first, then the parent's CalledProcessError and the RuntimeError
    that carries the child's stderr; the message keeps only the text before the child's traceback."""
    lines = forms.child_output_in_message()
    expected = [("ModuleNotFoundError", Link.FIRST), ("subprocess.CalledProcessError", Link.CAUSE),
                ("RuntimeError", Link.CAUSE)]
    event = only(lines)
    assert [(info.exception_type, info.link) for info in event.chain] == expected and not event.truncated
    child, _, outer = event.chain
    assert child.message == "No module named 'a_module_the_child_lacks'"
    assert (child.raise_site.path, child.raise_site.function) == ("<string>", "load_model_cls")
    assert outer.message == "Error raised in subprocess:\n<string>:4: RuntimeWarning: the registry was imported twice"
    assert run_root(lines).info == child
    # vLLM logs it with its prefix on every line; a paste drops the space the blank lines end in
    logged = [line.rstrip() for line in fmt.vllm_record("Error in inspecting model architecture 'X'", capture(
        forms._inspect_in_subprocess), file="registry.py", lineno=354)]
    assert [(info.exception_type, info.link) for info in only(logged).chain] == expected


def test_output_a_message_does_not_introduce_is_not_read_into_it():
    """Without a colon to introduce more, a traceback right after an exception line is one of its own."""
    first = text_of(capture(_load_weights)).splitlines()
    second = [line.replace("input_scale", "weight_scale") for line in first]
    assert [e.root.message for e in events([*first, *second])] == [
        "'model.layers.78.mlp.gate_up_proj.input_scale'", "'model.layers.78.mlp.gate_up_proj.weight_scale'"]


class BackendCompilerFailed(Exception):
    """torch._dynamo.exc's: the backend's error named in its message, raised with that error's traceback."""

    def __init__(self, backend: str, inner: Exception) -> None:
        super().__init__(f"backend={backend!r} raised:\n{type(inner).__name__}: {inner}\n\n"
                         "While executing %wait : [num_users=1] = call_method[target=wait](args = (%out,), kwargs = {})")


BackendCompilerFailed.__module__ = "torch._dynamo.exc"  # (as torch names it: no Error suffix, a module of exceptions)


def _call_method(target):
    return getattr(target, "wait")()  # noqa: B009 (as torch.fx calls a method by its name)


def _compile_with_backend():
    try:
        _call_method(object())
    except AttributeError as err:
        raise BackendCompilerFailed("inductor", err).with_traceback(err.__traceback__) from None


class InstantiationException(Exception):
    pass


InstantiationException.__module__ = "hydra.errors"  # (as Hydra names it)


class _Step:
    def __init__(self, parsers):
        self.parsers = parsers


def _instantiate(target):
    """Hydra's instantiate: the target's own error, its repr on the line after the wrapper's words."""
    try:
        return target()
    except Exception as err:
        raise InstantiationException(f"Error in call to target '{target.__qualname__}':\n{err!r}") from err


class OutOfResources(Exception):  # as triton.runtime.errors names it: no Error suffix
    def __str__(self) -> str:
        return "out of resource: shared memory, Required: 196608, Hardware limit: 65536."


def _autotune():
    try:
        raise OutOfResources()
    except OutOfResources as err:
        raise BackendCompilerFailed("inductor", err).with_traceback(err.__traceback__) from None


class LoweringException(Exception):
    """torch._inductor.exc's: the lowering's error as its line, then the node it lowered."""

    def __init__(self, inner: Exception, target: str) -> None:
        super().__init__(f"{type(inner).__name__}: {inner}\n  target: {target}")


def _lower():
    try:
        raise ImportError("cannot import name 'triton_key' from 'triton.compiler.compiler'")  # (a triton without it)
    except ImportError as err:
        try:
            raise LoweringException(err, "aten.convolution.default") from err
        except LoweringException as lowering:
            raise BackendCompilerFailed("inductor", lowering).with_traceback(err.__traceback__) from None


def test_a_wrapper_that_names_a_wrapper_of_the_error_it_raised_has_that_error_as_its_root():
    """torch's `BackendCompilerFailed: backend='inductor' raised:`, then `LoweringException: ImportError: ...`: the
    ImportError is the root, the two wrappers after it."""
    exc = capture(_lower)
    event = only(text_of(exc).splitlines())
    assert [link.exception_type for link in event.chain] == ["ImportError", "LoweringException",
                                                             "torch._dynamo.exc.BackendCompilerFailed"]
    assert event.root.message == "cannot import name 'triton_key' from 'triton.compiler.compiler'"


def test_a_wrapper_that_names_the_error_it_raised_has_that_error_as_its_root():
    event = only(text_of(capture(_autotune)).splitlines())  # a type without the usual suffix too
    assert [(link.exception_type, link.message.split("\n")[0]) for link in event.chain][0] == (
        "OutOfResources", "out of resource: shared memory, Required: 196608, Hardware limit: 65536.")
    assert only(["ValueError: backend='inductor' raised:", "note: see below"]).chain[0].exception_type == "ValueError"
    event = only(text_of(capture(_compile_with_backend)).splitlines())
    inner, outer = event.chain
    assert (inner.exception_type, inner.message) == ("AttributeError", "'object' object has no attribute 'wait'")
    assert inner.raise_site.function == "_call_method" and inner.link is Link.FIRST
    assert outer.exception_type.endswith("BackendCompilerFailed") and outer.link is Link.CAUSE
    assert outer.message.startswith("backend='inductor' raised:\nAttributeError:")
    # Hydra's: the error's repr on the line after the wrapper's words, the exception line alone
    said = traceback.format_exception_only(capture(lambda: _instantiate(_Step)))
    (alone,) = events("".join(said).splitlines())
    assert [(link.exception_type, link.message) for link in alone.chain][0] == (
        "TypeError", "_Step.__init__() missing 1 required positional argument: 'parsers'")
    # its exception line alone (a paste of a traceback's last lines, the frames elided): still the error it raised
    said = traceback.format_exception_only(capture(_compile_with_backend))
    (alone,) = events(["......", *"".join(said).splitlines(), "", "You can suppress this exception and fall back to eager"])
    assert [(link.exception_type, link.message.split("\n")[0]) for link in alone.chain] == [
        ("AttributeError", "'object' object has no attribute 'wait'"), ("torch._dynamo.exc.BackendCompilerFailed",
                                                                       "backend='inductor' raised:")]
    assert_same("\n".join(said).encode())
    # ... also where the error it raised has a class's name without the usual suffix (triton's OutOfResources)
    said = traceback.format_exception_only(capture(_autotune))
    (alone,) = events("".join(said).splitlines())
    assert [link.exception_type for link in alone.chain] == ["OutOfResources", "torch._dynamo.exc.BackendCompilerFailed"]


@pytest.mark.parametrize("cut_frame, strip", [(False, False), (True, False), (True, True)],
                         ids=("whole", "carets-of-a-cut-frame", "that-lost-its-indentation"))
def test_a_ray_task_error_is_the_remote_error_wrapped(cut_frame, strip):
    lines = forms.ray_task_error(cut_frame)
    event = only(forms.stripped(lines) if strip else lines)
    remote, wrapper = event.chain
    assert (remote.exception_type, remote.raise_site.function) == ("ValueError", "_load_shard")
    assert wrapper.exception_type == "ray.exceptions.RayTaskError(ValueError)"
    assert wrapper.message.startswith("ray::Loader.load() (pid=4242") and wrapper.raise_site.function == "driver"
    assert run_root(forms.ray_task_error(cut_frame)).info == remote


@pytest.mark.parametrize("cut_frame", [False, True], ids=("whole", "carets-under-each-wrapper"))
def test_a_ray_task_error_from_a_task_the_remote_task_waited_for_is_one_chain_down_to_that_tasks_error(cut_frame):
    """Two wrapper lines, the second among the first's remote frames (verl's trainer waiting on a worker): one error,
    whose root is the innermost task's; the second wrapper's frames are not a second, headless traceback."""
    lines = forms.ray_task_error(cut_frame, nested=True)
    event = only(lines)
    assert [link.exception_type for link in event.chain] == ["ValueError", *["ray.exceptions.RayTaskError(ValueError)"] * 2]
    assert [link.message.split(" (")[0] for link in event.chain[1:]] == ["ray::Loader.read_shard()", "ray::Loader.load()"]
    assert (event.root.raise_site.function, event.chain[1].raise_site.function) == ("_load_shard", "_wait_for_shards")
    assert not event.truncated and run_root(lines).info == event.root
    assert [e.chain for e in assert_same("\n".join(lines).encode())] == [event.chain]


@pytest.mark.parametrize("first_frame", ["whole", "its source line left"])
def test_a_ray_task_error_whose_remote_stack_a_copy_cut_is_the_remote_error_raised_where_the_frames_shown_end(first_frame):
    """The copy ends inside the remote's frames (its innermost frame, which raised, and its error's line lost), maybe
    where Ray left only the source line of the remote's first frame under the wrapper's line: the error the wrapper
    names, raised at the innermost frame shown."""
    lines = forms.ray_task_error()
    at = next(k for k, line in enumerate(lines) if line.startswith("ray.exceptions.RayTaskError("))
    remote = lines[at + 1:max(k for k, line in enumerate(lines) if line.startswith("  File "))]
    if first_frame != "whole":
        remote = remote[1:]
    event = only([*lines[:at + 1], *remote])
    assert [link.exception_type for link in event.chain] == ["ValueError", "ray.exceptions.RayTaskError(ValueError)"]
    assert (event.root.raise_site.function, event.chain[-1].raise_site.function) == ("<lambda>", "driver")
    assert event.root.message.startswith("ray::Loader.load() (pid=4242") and event.truncated
    assert [e.chain for e in assert_same("\n".join([*lines[:at + 1], *remote]).encode())] == [event.chain]


@pytest.mark.parametrize("driver", [True, False], ids=("with-the-drivers-stack", "from-the-wrapper-line"))
def test_a_ray_task_error_whose_remote_task_and_first_frames_a_user_left_out(driver):
    """A paste that cut the remote task's name to `ray::...` and marked the frames left out with `...` lines,
    one right under the wrapper line: the remote error, raised at its innermost frame, is still the root."""
    lines = forms.ray_task_error()
    at = next(k for k, line in enumerate(lines) if line.startswith("ray.exceptions.RayTaskError("))
    wrapper = lines[at].split(": ray::")[0] + ": ray::..."
    pasted = [*(lines[:at] if driver else []), wrapper, "...", *lines[at + 1:at + 3], "...", *lines[at + 3:]]
    event = only(pasted)
    assert (event.root.exception_type, event.root.raise_site.function) == ("ValueError", "_load_shard")
    assert event.chain[-1].exception_type == "ray.exceptions.RayTaskError(ValueError)"
    assert [e.chain for e in assert_same("\n".join(pasted).encode())] == [event.chain]


@pytest.mark.parametrize("begun_at", ["header", "exception line"])
def test_an_error_whose_message_ends_with_a_ray_task_errors_text_wraps_the_remote_error(begun_at):
    """`RuntimeError: Job ... failed ...: ray::Loader.load() (pid=..., ip=...)`, the remote frames and error below it:
    the remote error is the root, as under Ray's own wrapper; so in a paste begun at that exception line."""
    lines = forms.job_error_over_ray_task_error()
    if begun_at != "header":
        lines = lines[next(k for k, line in enumerate(lines) if line.startswith("RuntimeError: Job")):]
    event = only(lines)
    assert [link.exception_type for link in event.chain] == ["ValueError", "RuntimeError"]
    assert event.root.raise_site.function == "_load_shard"
    assert [e.chain for e in assert_same("\n".join(lines).encode())] == [event.chain]


@pytest.mark.parametrize("told", ["wrapped", "in a system error's text"])
def test_a_remote_errors_chain_that_ray_heads_with_the_remote_task_is_one_chain(told):
    """A remote error raised `from` another: Ray names the remote task in place of each link's header (the first on its
    wrapper's line; its system error's text, `traceback: ` then the chain, as the driver's failed unpickling shows it).
    One error, the first link the root, not a second error begun at the task's name."""
    lines = forms.ray_task_error(chained=True)
    kinds = ["ValueError", "RuntimeError", "ray.exceptions.RayTaskError(RuntimeError)"]
    if told != "wrapped":
        at = next(k for k, line in enumerate(lines) if line.startswith("ray.exceptions.RayTaskError("))
        lines = [*lines[:at], "ray.exceptions.RaySystemError: System error: Failed to unpickle serialized exception",
                 "traceback: Traceback (most recent call last):", *lines[at + 1:]]
        kinds[-1] = "ray.exceptions.RaySystemError"
    event = only(lines)
    assert [(link.exception_type, link.link) for link in event.chain] == [
        (kinds[0], Link.FIRST), (kinds[1], Link.CAUSE), (kinds[2], Link.CAUSE)]
    assert (event.root.raise_site.function, run_root(lines).info) == ("_load_shard", event.root)
    assert [e.chain for e in assert_same("\n".join(lines).encode())] == [event.chain]


def test_a_ray_task_error_over_a_replica_whose_error_is_a_traceback_has_that_tracebacks_error_as_root():
    """Ray Serve's replica raises `RuntimeError(traceback.format_exc())`; the driver gets it wrapped in a RayTaskError
    with the remote frames: the error inside the traceback text is the root, raised where that traceback ends."""
    event = only(forms.ray_task_error(replica=True))
    assert [link.exception_type for link in event.chain] == [
        "ValueError", "RuntimeError", "ray.exceptions.RayTaskError(RuntimeError)"]
    assert (event.root.raise_site.function, event.root.message) == ("_load_shard", "shard model-00001 has 3 heads, expected 4")


def test_a_class_defined_in_a_function_is_an_exception_type():
    event = only(forms.locals_type())
    assert event.root.exception_type == "tests.failureforms._config_error.<locals>.ConfigError"
    assert not event.truncated and event.root.raise_site.function == "_config_error"


def test_a_message_paragraph_before_a_chain_separator_keeps_the_chain():
    event = only(forms.paragraph_message())
    assert [info.exception_type for info in event.chain] == ["TypeError", "RuntimeError", "Exception"]
    assert "You can suppress this exception" in event.chain[1].message
    assert "suppress_errors = True" in event.chain[1].message
    assert event.chain[2].link is Link.CONTEXT


def test_a_message_paragraph_without_a_separator_after_it_is_not_kept():
    lines = forms.paragraph_message()
    cut = lines[:lines.index("During handling of the above exception, another exception occurred:")]
    event, *_ = events([*cut, "INFO 12-01 10:00:00 [engine.py:12] engine restarted"])
    assert "You can suppress" not in event.chain[-1].message


def _read_timeout():
    raise TimeoutError("\n\nPattern not detected: 'show run' in output.\n\nThings you might try to fix this:\n"
                       "1. Adjust the regex pattern.\n2. Increase the read_timeout.")


def test_a_message_that_began_with_line_breaks_is_read_in_its_paragraphs():
    """`raise ReadTimeout("\\n\\nPattern not detected...")`: `TimeoutError: `, a blank, then the message's paragraphs
    (netmiko's); a log's next record after them is not the message's."""
    exc = capture(_read_timeout)
    lines = text_of(exc).rstrip("\n").split("\n")
    event = only([*lines, "", "INFO 12-01 10:00:00 [engine.py:12] engine restarted"])
    assert (event.root.message, event.span.line_end) == (str(exc), len(lines))


def test_a_bare_error_whose_message_began_with_a_line_break():
    """`raise ImportError("\\ncannot import name ...")` printed without its traceback: `ImportError: `, then the
    message's first line flush left. (A record's start is no message's line.)"""
    event = only(["Failed to import the rollout.", "", "ImportError: ", "cannot import name 'Fp8LinearOp'"])
    assert (event.root.exception_type, event.root.message, event.kind) == ("ImportError", "\ncannot import name 'Fp8LinearOp'",
                                                                           EventKind.BARE)
    event, *_ = events(["ImportError: ", "INFO 12-01 10:00:00 [engine.py:12] engine restarted"])
    assert event.root.message == ""


def test_python_2s_report_of_a_thread_at_interpreter_shutdown():
    """The exception line names the class as Python 2's `type()` printed a built-in one."""
    exc = capture(lambda: None.error)  # type: ignore[attr-defined]  # (paramiko's thread, its module torn down)
    event = only(forms.py2_shutdown_thread(exc))
    assert (event.root.exception_type, event.root.message, len(event.root.frames)) == ("AttributeError", str(exc), 2)


# ----------------------------------------------------------------------------- IPython


@pytest.mark.parametrize("lines, cell", [(forms.ipython_traceback(), "Cell In[1]"),
                                         (forms.IPYTHON_FROM_DEFINITION, "Cell In[1]"),
                                         (forms.IPYTHON7_FROM_DEFINITION, "<ipython-input-1-8e7f6a5b4c3d>")],
                         ids=("shell", "format", "ipython7"))
def test_an_ipython_traceback(lines, cell):
    event = only(lines)
    assert (event.root.exception_type, event.root.message) == ("ValueError", "6 shards, expected 8")
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function) == (cell, 3, "load")
    assert [frame.function for frame in event.root.frames] == ["<module>", "load"]
    assert site.code == "raise ValueError(f'{total} shards, expected 8')"
    assert not event.truncated


SERVER_ERROR_CELLS = ("import traceback\ndef server():\n    raise KeyError('raysubmit_1')\ndef get_logs():\n    try:\n"
                      "        server()\n    except KeyError:\n        text = traceback.format_exc()\n"
                      "    raise RuntimeError(f'Request failed with status code 500: {text}.')\n", "get_logs()\n")


@pytest.mark.skipif(forms.ipython_traceback() is forms.IPYTHON_FROM_DEFINITION, reason="IPython is not installed")
@pytest.mark.parametrize("cut", [False, True])
def test_a_notebooks_error_whose_message_is_a_servers_traceback(cut):
    """IPython's traceback of a client's error whose message holds the server's traceback (Ray's job client: `Request
    failed with status code 500: Traceback (most recent call last): ...`): the server's error is its cause; a paste cut
    right after the header in the message keeps the client's error with its frames, not a traceback of its own."""
    lines = forms.ipython_traceback(SERVER_ERROR_CELLS)
    said = next(i for i, line in enumerate(lines) if line.startswith("RuntimeError: Request failed"))
    event = only(lines[:said + 1] if cut else lines)
    client = event.chain[-1]
    assert (client.exception_type, client.message) == ("RuntimeError", "Request failed with status code 500:")
    assert (client.raise_site.path, client.raise_site.function) == ("Cell In[1]", "get_logs")
    assert event.truncated == cut
    if not cut:
        assert (event.root.exception_type, event.root.message, event.root.raise_site.function) == (
            "KeyError", "'raysubmit_1'\n.", "server")


@pytest.mark.skipif(forms.ipython_error_output() is None, reason="IPython is not installed")
@pytest.mark.parametrize("form", ["ipynb", "message", "object"])
def test_a_notebooks_error_kept_as_json(form):
    """A cell's error as Jupyter keeps it in JSON (a saved notebook's output, the kernel's message, a notebook
    view's error object) and a user pastes it: each string of the traceback, its colour codes escaped, holds the
    lines IPython printed; the JSON around them is no part of the message. Cut inside the traceback (the object's, one
    string: inside a colour code's escape), the header names the type and the members above it, on lines of their
    own, its text."""
    lines = forms.jupyter_json(form, forms.ipython_error_output())
    assert any("\\u001b[" in line for line in lines)
    event = only(lines)
    assert (event.root.exception_type, event.root.message) == ("ValueError", "6 shards, expected 8")
    assert [(frame.path, frame.lineno, frame.function) for frame in event.root.frames] == [
        ("Cell In[2]", 2, "<module>"), ("Cell In[1]", 3, "load")]
    assert not event.truncated
    assert_same("\n".join(lines).encode())
    if form != "message":  # (the kernel's message names the error after the traceback)
        at = next(i for i, line in enumerate(lines) if "In[1]" in line)
        cut = lines[at][:lines[at].index("\\u001b[", lines[at].index("In[1]")) + 4]
        event = only([*lines[:at], cut])  # (its text told by the members above the traceback: name and message)
        assert (event.root.exception_type, event.root.message, event.truncated) == ("ValueError", "6 shards, expected 8", True)
        assert event.root.raise_site.path == "Cell In[2]"
        assert_same("\n".join([*lines[:at], cut]).encode())


def _add_worker(address: str) -> None:
    raise ValueError(f"Worker already exists {address}")


def _handle_comm() -> None:
    _add_worker("tcp://10.0.0.3:40951")


def test_an_error_told_above_its_stack_cut_at_the_raise_statement_is_one_error():
    """The error's line, a logger's words, then its traceback cut at the raise statement (dask's scheduler, a copy that
    ended there): the class the statement raises is the line's, so the line tells its text: one error, raised there."""
    exc = capture(_handle_comm)
    stack = text_of(exc).rstrip("\n").split("\n")[:-1]
    event = only([f"ValueError: {exc}", f"distributed.core - ERROR - {exc}", *stack])
    assert (event.root.exception_type, event.root.message, event.truncated) == ("ValueError", str(exc), True)
    assert (event.span.line_start, event.root.raise_site.function) == (1, "_add_worker")


def test_a_traceback_kept_as_a_json_list_of_its_parts():
    """A JSON formatter that keeps `exc_info` as the list `traceback.format_exception` gives, each part stripped (a
    frame's source line after its frame line and a `\\n`), the record pretty-printed: the chain, read from the list's
    strings; the record's other members no part of it. Cut inside the list, the link the copy reached."""
    exc = capture(_wrapped_chain)
    record = {"asctime": "2026-01-21 08:28:33,853", "levelname": "CRITICAL", "name": "vllm.logger",
              "message": "Uncaught exception", "exc_info": [part.strip() for part in traceback.format_exception(exc)],
              "process": 412}
    lines = json.dumps(record, indent=2).split("\n")
    event = only(lines)
    assert [(link.exception_type, link.message, link.raise_site.function) for link in event.chain] == [
        ("KeyError", "'model.layers.78.mlp.gate_up_proj.input_scale'", "_load_weights"),
        ("RuntimeError", "Failed to load weights", "_wrapped_chain")]
    assert [frame.code for frame in event.root.frames] == [frame.code for frame in only(text_of(exc).splitlines()).root.frames]
    assert not event.truncated and assert_same("\n".join(lines).encode())
    cut = next(k for k, line in enumerate(lines) if "RuntimeError" in line)
    event = only(lines[:cut])
    assert (event.root.exception_type, event.final.exception_type, event.truncated) == ("KeyError", "", True)


@pytest.mark.parametrize("lines", [forms.IPYTHON7_FROM_DEFINITION, forms.ipython_traceback(), forms.IPYTHON_FROM_DEFINITION],
                         ids=("ipython7", "shell", "format"))
def test_a_notebook_copy_with_linked_frames(lines):
    """Colab and VS Code copy a frame's place as a markdown link: the frames read as before."""
    linked = forms.notebook_linked(lines, "https://localhost:8080/#")
    event = only(linked)
    assert (event.root.exception_type, event.root.message) == ("ValueError", "6 shards, expected 8")
    assert (event.root.raise_site.lineno, event.root.raise_site.function) == (3, "load")
    assert len(event.root.frames) == 2


@pytest.mark.parametrize("lines", [forms.IPYTHON7_FROM_DEFINITION, forms.ipython_traceback(), forms.ipython_library_frame()],
                         ids=("ipython7", "shell", "library-frame"))
def test_a_notebooks_traceback_that_lost_its_line_breaks(lines):
    """A notebook's output pasted on one line (inline code; a page that joined the lines): each line's
    blanks collapsed, the words before it kept apart."""
    original = only(lines)
    flat = " ".join(line.strip() for line in ["Num examples = 3,000 | Total steps = 60", *lines] if line.strip())
    event = only([f"```{flat}```"])
    assert (event.root.exception_type, event.root.message) == (original.root.exception_type, original.root.message)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    assert_same(flat.encode())
    assert events([f"the cell prints {lines[1].strip()} and more"]) == []  # (no exception line after it)


@pytest.mark.parametrize(("url", "current_linked"), [("file://", False), ("https://vscode-remote+wsl.vscode-cdn.net", True)],
                         ids=("local", "remote, the current line linked"))
def test_a_notebook_copy_begun_inside_a_frame_whose_lines_vs_code_linked(url, current_linked):
    """VS Code's notebook view links each numbered line to its place in the file; a copy begun inside the innermost
    frame's lines (its `File ...` line cut off) still names the file: the error, raised there (its function unknown)."""
    exc = capture(_load_weights)
    lines = forms.vscode_linked_tail(exc, url, current_linked)
    assert lines[0].lstrip().startswith("[")
    (event,) = [e for e in assert_same("\n".join([*lines, ""]).encode()) if e.root.exception_type]
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function) == (*expected.frames[-1][:2], None)
    # (with the frame's own line there, the links only name its file again: no frame is read twice)
    whole = forms.ipython_library_frame()
    path = "/usr/lib/python3.11/loader/shards.py"
    linked = [re.sub(r"^( +|-+> )(\d+)", lambda m: f"{m[1]}[{m[2]}](file://{path}:{m[2]})", line)
              if line.startswith(("     4", "---> 4")) else line for line in whole]
    assert linked != whole
    assert [(f.path, f.lineno, f.function) for f in only(linked).root.frames] == [
        (f.path, f.lineno, f.function) for f in only(whole).root.frames]


@pytest.mark.parametrize("trailing_line", [False, True])
def test_vs_codes_copy_of_an_exception(trailing_line):
    """VS Code's debugger lists the frames newest first under the type and message: read in Python's order."""
    exc = capture(_load_weights)
    lines = ["INFO loading", *forms.vscode_exception(exc, trailing_line), "next output"]
    event = only(lines)
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == [f[:3] for f in expected.frames]
    assert (event.span.line_start, event.span.line_end) == (2, len(lines) - 1)
    if trailing_line:  # (a copy cut inside its last line: the pane's words above are whole)
        cut = [*lines[:-2], lines[-2][:len(expected.exception_type) + 9]]
        assert only(cut).root.message == expected.message


def test_vs_codes_copy_of_an_exception_raised_from_another():
    """VS Code's debugger shows the exception an error was raised from between the message and the frames, with the
    chain's separator: that one is the root, the error it caused after it."""
    exc = capture(_wrapped_chain)
    event = only(["INFO loading", *forms.vscode_exception(exc), "next output"])
    cause, effect = expected_chain(exc)
    assert [(link.exception_type, link.message, link.link) for link in event.chain] == [
        (cause.exception_type, cause.message, Link.FIRST), (effect.exception_type, effect.message, Link.CAUSE)]
    assert [(f.path, f.lineno, f.function) for f in event.chain[-1].frames] == [f[:3] for f in effect.frames]
    assert event.root.exception_type == cause.exception_type


def test_a_traceback_copied_with_linked_frames():
    """An editor's copy of a CPython traceback, each frame's place a markdown link: the frames read as before."""
    exc = capture(_wrapped_chain)
    linked = forms.editor_linked(text_of(exc).rstrip("\n").split("\n"))
    assert sum("](file:///" in line for line in linked) == sum(len(link.frames) for link in expected_chain(exc))
    assert actual_chain(only(linked).chain) == expected_chain(exc)


def test_notebook_tracebacks_copied_from_a_frame_or_exception_first():
    """A copy begun at a library frame of an IPython traceback, and Databricks' (its exception line first)."""
    headless, databricks = forms.ipython_copies(forms.notebook_linked(forms.ipython_library_frame()))
    event = only(headless)
    assert (event.root.exception_type, event.root.raise_site.path, event.root.raise_site.lineno) == (
        "ValueError", "/usr/lib/python3.11/loader/shards.py", 41)
    assert event.truncated  # (its top is not in the copy)
    event = only(databricks)
    assert [(f.path, f.lineno) for f in event.root.frames] == [
        ("<command-1108086693486187>", 2), ("<command-1108086693486187>", 3), ("/usr/lib/python3.11/loader/shards.py", 41)]
    assert (event.root.message, event.truncated, event.span.line_start) == ("6 shards, expected 8", False, 1)


@pytest.mark.parametrize("frame", ["C:\\lib\\loader\\shards.py in check(n)", "File /usr/lib/python3.11/loader/shards.py:41"],
                         ids=("IPython 7, a Windows path", "IPython 8, a module's own code"))
def test_a_notebook_traceback_copied_from_its_last_frame(frame):
    """A copy begun at the last frame of an IPython traceback: IPython 7's with an absolute Windows path, or
    IPython 8's frame of a module's own code, which names no function; a markdown quote on its first line."""
    lines = [f"> {frame}", *forms.ipython_library_frame()[-4:]]
    event = only(lines)
    assert (event.root.exception_type, event.root.message, event.root.raise_site.lineno) == ("ValueError", "6 shards, expected 8", 41)
    assert event.root.raise_site.path == frame.removeprefix("File ").split(" in ")[0].removesuffix(":41")
    assert [e.chain for e in assert_same("\n".join(lines).encode())] == [event.chain]  # (the fast path alike)


@pytest.mark.parametrize("marker", ["...", "[...]", "(...)", "\u2026", "----------", "... 12 frames left out ...",
                                    "# ... (\uc911\uac04 \ud2b8\ub808\uc774\uc2a4\ubc31 \uc0dd\ub7b5) ...", "// \u2026 snip \u2026"])
def test_lines_a_user_left_out_marked_among_the_frames(marker):
    exc = capture(_wrapped_chain)
    lines = text_of(exc).rstrip("\n").split("\n")
    event = only([*lines[:3], marker, *lines[3:]])
    assert actual_chain(event.chain) == expected_chain(exc)


@pytest.mark.parametrize("marker", ["...", "# ... (frames left out) ..."])
def test_lines_a_user_left_out_of_a_record_whose_every_line_a_logger_prefixed(marker):
    """vLLM's prefix on each line of its record, the user's mark of lines left out without it: the record goes on
    after the mark (a writer's line there would begin another), and a word the shell printed later is no exception
    line of it (`Killed`)."""
    exc = capture(_wrapped_chain)
    lines = fmt.vllm_record(f"EngineCore hit an exception: {text_of(exc.__cause__).rstrip()}", None)  # (v1's, in its text)
    pasted = [lines[0], marker, *lines[3:], "Killed"]
    found = [e for e in events(pasted) if e.kind is EventKind.TRACEBACK]
    assert [actual_chain(e.chain)[-1].exception_type for e in found] == [type(exc.__cause__).__name__]
    assert [e.chain for e in assert_same("\n".join(pasted).encode()) if e.kind is EventKind.TRACEBACK] == [found[0].chain]


def test_frames_a_user_cut_out_for_rules_of_dashes_between_a_frame_and_the_last_ones_source_line():
    """A paste of a headless traceback whose inner frames were replaced by rules of dashes, the innermost
    frame's source line kept: the error, raised at the last frame shown."""
    def load_model():
        return load_layer()

    def load_layer():
        return _load_weights()

    exc = capture(load_model)
    lines = text_of(exc).rstrip("\n").split("\n")
    frames = [k for k, line in enumerate(lines) if line.startswith('  File "')]
    pasted = [*lines[1:frames[1] + 1], *["----------"] * 3, lines[frames[-1] + 1], lines[-1]]
    event = only(pasted)
    assert (event.root.exception_type, event.root.message) == ("KeyError", str(exc))
    assert event.root.raise_site.lineno == int(lines[frames[1]].split(", line ")[1].split(",")[0])
    assert [e.chain for e in assert_same("\n".join(pasted).encode())] == [event.chain]


def test_each_line_of_a_traceback_in_a_code_span_of_its_own():
    """A paste that wrapped every line in backticks, the frames' indentation inside them; a fence indented
    under a list's item, glued to the error."""
    exc = capture(lambda: _call_method(object()))
    lines = [f"`{line}`" for line in text_of(exc).rstrip("\n").split("\n")]
    assert actual_chain(only(lines).chain) == expected_chain(exc)
    assert [e.chain for e in assert_same("\n".join(lines).encode())] == [only(lines).chain]
    event = only(["- error", f"  ```{text_of(exc).rstrip().splitlines()[-1]}```"])
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "AttributeError", str(exc))


def _frames(event) -> list[tuple[str, int | None, str | None]]:
    return [(f.path, f.lineno, f.function) for link in event.chain for f in link.frames]


def test_a_code_fence_glued_to_a_log_line():
    """A paste that typed the log's first line on the fence's line, and its last before the closing one."""
    exc = capture(_wrapped_chain)
    lines = text_of(exc).rstrip("\n").split("\n")
    event = only([f"```{lines[0]}", *lines[1:-1], f"{lines[-1]}```"])
    assert actual_chain(event.chain) == expected_chain(exc) and not event.truncated
    # an inline code span around the whole paste, prefixes and all
    prefixed = [f"[rank0]: {line}" for line in lines]
    event = only([f"`{prefixed[0]}", *prefixed[1:-1], f"{prefixed[-1]}`"])
    assert actual_chain(event.chain) == expected_chain(exc) and event.rank == "rank0"
    # ... a blank inside it before the prefix, the copy begun at a frame
    event = only([f"` {prefixed[1]}", *prefixed[2:-1], f"{prefixed[-1]}`"])
    assert event.truncated and _frames(event) == _frames(only(lines)) and event.rank == "rank0"
    assert only(["`[rank0]: RuntimeError: expected `x` here"]).root.message == "expected `x` here"  # (a pair is the line's)


@pytest.mark.parametrize("base, frame", [
    (forms.IPYTHON7_FROM_DEFINITION, "/usr/local/lib/python3.11/dist-packages/loader/shards.py in check(n)"),
    (forms.IPYTHON_FROM_DEFINITION, "File /usr/local/lib/python3.11/dist-packages/loader/shards.py:41, in check(n)"),
], ids=("ipython7", "ipython8"))
def test_a_notebook_copy_of_a_library_frame(base, frame):
    """A frame in a library file, its place linked: the path inside the link, the line from it or the marker."""
    lines = forms.notebook_linked([*base[:-1], frame, "     40     if n != 8:",
                                   "---> 41         raise ValueError(f'{n} shards, expected 8')",
                                   "", "ValueError: 6 shards, expected 8"])
    assert any("](" in line and "shards.py" in line for line in lines)
    site = only(lines).root.raise_site
    assert (site.path, site.lineno, site.function) == ("/usr/local/lib/python3.11/dist-packages/loader/shards.py", 41, "check")


@pytest.mark.parametrize("linked", [False, True])
def test_an_ipython7_copy_begun_at_a_frame(linked):
    """Old Colab's IPython 7: the copy begins at a cell's or a library file's frame, the header left out
    (and IPython 8's library frame that lost its word `File` alike); a frame of a package's file named from its
    folder (`loader/shards.pyc in check(n)`) too."""
    library = [*forms.IPYTHON7_FROM_DEFINITION[2:-1], "/usr/local/lib/python3.7/dist-packages/loader/shards.py in check(n)",
               "     40     if n != 8:", "---> 41         raise ValueError(f'{n} shards, expected 8')", "",
               "ValueError: 6 shards, expected 8"]
    lost_file = [line.removeprefix("File ") for line in forms.ipython_library_frame()[-5:]]  # (IPython 8's, lost `File`)
    package = [line.replace("/usr/local/lib/python3.7/dist-packages/", "") for line in library[9:]]  # (a package's .pyc)
    package[0] = package[0].replace(".py ", ".pyc ")
    for lines in (forms.IPYTHON7_FROM_DEFINITION[6:], library[9:], lost_file, package):
        assert lines[0].endswith((" in load(shards)", " in check(n)"))
        event = only(["Mounting the drive", *(forms.notebook_linked(lines) if linked else lines)])
        assert (event.root.exception_type, event.root.message, event.truncated) == ("ValueError", "6 shards, expected 8",
                                                                                     True)
        assert event.root.raise_site.lineno in (3, 41) and len(event.root.frames) == 1, lines
        assert assert_same("\n".join(["Mounting the drive", *lines]).encode())
    assert events(["see utils.py in my project", "/x/notes.py in the repo", "src/app.py in the repo"]) == []
    assert events(["/app/sqlalchemy/pool/impl.py in AsyncAdaptedQueuePool._do_get", "at line 168"]) == []  # (Sentry's)


@pytest.mark.parametrize("linked", [False, True])
def test_an_ipython7_module_frame_whose_function_a_rendered_page_dropped(linked):
    """IPython 7 (old Colab) names a module's own code `<module>()`; copied from a page that took `<module>` for a tag,
    the frame reads `x.py in ()` (its place maybe a link): still a frame, its function unknown, the error raised there."""
    exc = capture(lambda: __import__("torchtext_legacy_nowhere"))
    said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    library = "/usr/local/lib/python3.7/dist-packages/pytorch_lightning/utilities/apply_func.py"
    lines = ["ModuleNotFoundError" + " " * 23 + "Traceback (most recent call last)", "<ipython-input-2-5b1c0d2e9f3a> in <module>()",
             "----> 1 import pytorch_lightning", "", "17 frames", f"{library} in <module>()", "     28 if _TORCHTEXT_AVAILABLE:",
             "---> 29     import torchtext_legacy_nowhere", "", said]
    lines = forms.html_rendered(forms.notebook_linked(lines) if linked else lines)
    assert lines[5].endswith(" in ()")
    (event,) = assert_same("\n".join(["Mounting the drive", *lines, ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("ModuleNotFoundError", str(exc))
    site = event.root.raise_site
    assert (site.path, site.lineno, site.function) == (library, 29, None)


@pytest.mark.parametrize("bracketed", [False, True])
def test_an_ipython8_copy_begun_at_a_modules_own_frame(bracketed):
    """IPython 8 names no function for a module's own code (`File /x/cr2/__init__.py:1`); a copy begun there, its
    place maybe in the brackets of a link whose target the copy lost (`File [/x/cr2/__init__.py:1]`): the error is
    raised there, on both paths (a long log before it: only the lines the fast path's finder reports are read)."""
    place = "/srv/cr2/src/cr2/__init__.py:1"
    try:
        __import__("cr2_utils_nowhere")
    except ModuleNotFoundError as exc:
        said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    lines = [f"File [{place}]" if bracketed else f"File {place}", "----> 1 import cr2_utils_nowhere",
             "      3 __all__ = ['running_in_notebook']", "", said]
    before = [f"epoch {k}: loss 0.{k:03d}" for k in range(400)]
    (event,) = assert_same("\n".join([*before, *lines, ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("ModuleNotFoundError", "No module named 'cr2_utils_nowhere'")
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/srv/cr2/src/cr2/__init__.py", 1)


def test_an_ipython_chain():
    pytest.importorskip("IPython")
    event = only(forms.ipython_traceback((forms.IPYTHON_CHAIN_CELL,)))
    (key, wrapper) = event.chain
    assert (key.exception_type, key.message, key.raise_site.function) == ("KeyError", "'lm_head.weight'", "load")
    assert (wrapper.exception_type, wrapper.link, wrapper.raise_site.lineno) == ("RuntimeError", Link.CAUSE, 5)


# ----------------------------------------------------------------------------- Rich


# Rich's box: its side, its bottom corner and the current line's marker (drawn in ASCII on a legacy Windows console)
BOXES = {"box": ("\u2502", "\u2570", "\u2771"), "ascii": ("|", "+", ">")}


@pytest.mark.parametrize("box", sorted(BOXES))
@pytest.mark.parametrize("deep", [False, True], ids=("places-whole", "places-wrapped"))
def test_a_rich_traceback_reads_as_the_chain_it_draws(deep, box):
    side = BOXES[box][0]
    lines = forms.rich_traceback(100, deep, ascii_box=box == "ascii")
    assert lines[0].startswith(BOXES[box][1].replace("\u2570", "\u256d")) and "Traceback (most recent call last)" in lines[0]
    assert deep == any(line.startswith(f"{side} /") and "py:" not in line for line in lines)  # (a place cut in its path)
    event = only(["INFO loading", *lines, "INFO next"])
    key, wrapper = event.chain
    assert (key.exception_type, key.message, key.link) == ("KeyError", "'lm_head.weight'", Link.FIRST)
    assert (wrapper.exception_type, wrapper.message, wrapper.link) == ("RuntimeError", "weights incomplete", Link.CAUSE)
    site = key.raise_site
    assert site.path.endswith("weights_loader_package/sharded_checkpoint_loading.py")
    assert (site.lineno, site.function, site.code) == (2, "load_shard", "return {}[name]")
    assert [frame.function for frame in wrapper.frames][-1] == "load_weights" and not event.truncated


@pytest.mark.parametrize("begun", ["at its header", "at the place"])
def test_a_rich_box_that_wrapped_a_frames_place_before_its_function(begun):
    """`│ /x/.../sharded_checkpoint_loading.py:2 │` then `│ in load_shard │`: Rich wrapped the place at the blank before
    its function, the path and line number filling the row; so in a paste begun at that row (DeepSpeed's logs)."""
    lines = forms.rich_traceback_wrapped_before_function()
    if begun != "at its header":
        lines = lines[next(k for k, line in enumerate(lines) if ".py:2" in line and lines[k + 1].startswith("\u2502 in ")):]
    events = [e for e in assert_same("\n".join(["INFO loading", *lines, ""]).encode()) if e.kind is EventKind.TRACEBACK]
    assert events and (events[0].root.exception_type, events[0].root.message) == ("KeyError", "'lm_head.weight'")
    assert (events[0].root.raise_site.lineno, events[0].root.raise_site.function) == (2, "load_shard")


@pytest.mark.parametrize("box", sorted(BOXES))
def test_a_paste_begun_inside_a_rich_box_keeps_the_frames_after_its_cut(box):
    side, corner, mark = BOXES[box]
    lines = forms.rich_traceback(100, ascii_box=box == "ascii")
    first_close = next(i for i, line in enumerate(lines) if line.startswith(corner) and i)
    marker = next(i for i, line in enumerate(lines) if line.startswith(f"{side} {mark} "))
    event = only(["some text", *lines[marker:first_close + 2]])
    assert event.truncated and event.root.exception_type == "KeyError"
    assert (event.root.raise_site.lineno, event.root.raise_site.function) == (2, "load_shard")
    assert assert_same("\n".join(["some text", *lines[marker:first_close + 2], ""]).encode())


@pytest.mark.parametrize("box", sorted(BOXES))
@pytest.mark.parametrize("cut", ["before its function", "after its colon"])
def test_a_paste_begun_inside_a_rich_box_at_a_frames_place(cut, box):
    """A paste that begins at the place of the frame that raised (above its current line's marker), which the box
    wrapped before the function (Rich's own wrap) or after the path's colon (DeepSpeed's training logs): that frame is
    the raise site."""
    side, corner, _ = BOXES[box]
    lines = forms.rich_traceback(100, ascii_box=box == "ascii")
    first_close = next(i for i, line in enumerate(lines) if line.startswith(corner) and i)
    place = next(i for i in range(first_close) if lines[i].rstrip(f"{side} ").endswith(".py:2 in"))  # (the raising frame's)
    paste = lines[place:first_close + 2]
    if cut == "after its colon":
        row = len(paste[0]) - 2  # the text between the box's sides
        path = paste[0][2:paste[0].index(":2 in") + 1]
        paste[:2] = [f"{side} {path}".ljust(row) + f" {side}", f"{side} 2 in load_shard".ljust(row) + f" {side}"]
    event = only(["some text", *paste])
    assert event.truncated and event.root.exception_type == "KeyError"
    assert (event.root.raise_site.lineno, event.root.raise_site.function) == (2, "load_shard")
    assert assert_same("\n".join(["some text", *paste, ""]).encode())


def test_rich_logging_handlers_traceback_under_the_messages_column():
    """`RichHandler(rich_tracebacks=True)` draws the box of a logged exception under its record's message, right of
    the time and level columns, each line padded to the console's width: the chain reads as drawn."""
    lines = forms.rich_logged_traceback(120)
    assert lines[1].startswith(" " * 20) and "Traceback (most recent call last)" in lines[1]
    event = only(["INFO loading", *lines])
    key, wrapper = event.chain
    assert (key.exception_type, key.message, wrapper.exception_type, wrapper.link) == (
        "KeyError", "'lm_head.weight'", "RuntimeError", Link.CAUSE)
    site = key.raise_site
    assert site.path.endswith("weights_loader_package/sharded_checkpoint_loading.py")
    assert (site.lineno, site.function) == (2, "load_shard") and not event.truncated
    assert assert_same("\n".join(["INFO loading", *lines, ""]).encode())


def test_a_rich_box_a_paste_cut_short_at_its_top_and_bottom_with_a_row_of_its_own():
    """A paste of Rich's box whose top and bottom lines were cut short (the last character's bytes with them), and
    a row a user typed in with bars for its sides (`| [traceback snipped] |`): read as drawn."""
    lines = forms.rich_traceback(100)
    first_close = next(i for i, line in enumerate(lines) if line.startswith("╰"))
    width = len(lines[1])
    pasted = [lines[0][:width * 3 // 4], lines[1], "| [traceback snipped for brevity]".ljust(width - 1) + "|",
              *lines[2:first_close], lines[first_close][:width // 2] + "\ufffd", *lines[first_close + 1:first_close + 2]]
    event = only(["INFO loading", *pasted])
    assert event.root.exception_type == "KeyError" and not event.truncated
    assert (event.root.raise_site.lineno, event.root.raise_site.function) == (2, "load_shard")


# ----------------------------------------------------------------------------- pasted and exported


def _load_weights():
    params = {"model.layers.0.mlp.gate_up_proj.weight": 0}
    return params["model.layers.78.mlp.gate_up_proj.input_scale"]


@pytest.mark.parametrize("strip", [True, False], ids=("stripped", "indented"))
def test_a_newest_first_export_is_put_back_in_order(strip):
    original = only(text_of(capture(_load_weights)).splitlines())
    reversed_lines = ["[2026-04-04 06:24:51] Received sigquit from a child process. It usually means the child failed.",
                      *forms.newest_first(text_of(capture(_load_weights)).splitlines(), strip)]
    notice, event = events(reversed_lines)
    assert notice.kind is EventKind.NOTICE
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames if f.code is not None]


class _Args:
    encoder_seq_length = None
    model = None
    ready = True


def test_a_traceback_cut_right_after_its_assert_line():
    """An assert statement raises AssertionError: a traceback cut right after the innermost frame's
    `assert` line (another rank's bare `AssertionError` above it) is that, not a fragment. Where carets
    point at a part of its test, that part raised: no type is guessed."""
    lines = text_of(capture(lambda: forms.check_seq_length(_Args()))).splitlines()
    assert lines[-3].strip().startswith("assert ") and lines[-1] == "AssertionError"  # (3.11: carets under its test)
    (event,) = events(lines[:-1])
    assert (event.root.exception_type, event.root.message, event.truncated) == ("AssertionError", "", True)
    said = text_of(capture(lambda: forms.check_seq_length_said(_Args()))).splitlines()
    assert said[-1] == "AssertionError: --seq-length is required"
    assert [e.root.exception_type for e in events(said[:-1])] == ["AssertionError"]  # (carets up to its comma)
    (root,) = [i for i in incidents(["AssertionError", *lines[:-1]]) if i.is_run_root]
    assert root.info.frames and root.info.frames[-1].code.startswith("assert ")
    other = text_of(capture(lambda: forms.check_seq_length_of(_Args()))).splitlines()
    assert other[-1].startswith("AttributeError") and other[-2].strip().startswith("^")
    (cut,) = events(other[:-1])
    assert cut.root.exception_type == "" and cut.truncated


def _check_closed():
    raise RuntimeError('Event loop is closed')


def _check_port(port):
    raise ValueError(f"port {port} is out of range")


def _check_width(width):
    raise ValueError(int(width))


def test_a_traceback_cut_right_after_its_raise_line():
    """A `raise Name(...)` line in the innermost frame raised that class: a traceback cut right after it is that
    error, its message the plain string it was given (none where the text is built). Where carets point at a
    part of the line (the argument raised), or the line raises a name, no type is guessed."""
    lines = text_of(capture(_check_closed)).splitlines()
    assert lines[-1] == "RuntimeError: Event loop is closed"
    (event,) = events(lines[:-1])
    assert (event.root.exception_type, event.root.message, event.truncated) == ("RuntimeError", "Event loop is closed", True)
    assert event.root.raise_site.function == "_check_closed"
    built = text_of(capture(lambda: _check_port(70000))).splitlines()
    assert [(e.root.exception_type, e.root.message) for e in events(built[:-1])] == [("ValueError", "")]
    inside = text_of(capture(lambda: _check_width("wide"))).splitlines()
    assert inside[-1].startswith("ValueError: invalid literal") and inside[-2].strip().startswith("^")
    assert [e.root.exception_type for e in events(inside[:-1])] == [""]
    named = [*lines[:-2], "    raise error", "    "]
    assert [e.root.exception_type for e in events(named)] == [""]


@pytest.mark.parametrize("cut", [False, True], ids=("whole", "from-its-exception-line"))
def test_an_error_torch_raised_again_with_the_workers_traceback_in_its_message(cut):
    """A DataLoader worker's error raised again in the main process: `Caught KeyError in DataLoader worker
    process 0.`, then `Original Traceback (most recent call last):` and the worker's traceback. The worker's
    error is the chain's root, where the worker raised it."""
    lines = text_of(forms.dataloader_worker_error()).splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("KeyError: Caught"))
    assert lines[start + 1] == "Original Traceback (most recent call last):"
    event = only(lines[start:] if cut else lines)
    root, outer = event.chain
    assert (root.exception_type, root.message, root.raise_site.function) == ("KeyError", "0", "__getitem__")
    assert (outer.exception_type, outer.message.split("\n")[0]) == ("KeyError", "Caught KeyError in DataLoader worker process 0.")
    assert_same("\n".join(lines).encode())


@pytest.mark.parametrize("mark", ["...", "......", "\u2026", "\u2026\u2026", "[...]"])
def test_frames_a_paste_left_out_of_the_workers_traceback_torch_raised_again(mark):
    """The user left frames out (dots, one ellipsis or Chinese text's two) in the outer traceback and in the worker's
    one: the worker's error is still the root, where the worker raised it."""
    lines = text_of(forms.dataloader_worker_error()).splitlines()
    original = lines.index("Original Traceback (most recent call last):")
    elided = [*lines[:2], mark, *lines[4:original + 1], mark, *lines[original + 3:]]
    root, outer = only(elided).chain
    assert (root.exception_type, root.message, root.raise_site.function) == ("KeyError", "0", "__getitem__")
    assert outer.message.split("\n")[0] == "Caught KeyError in DataLoader worker process 0."


def test_a_type_alone_over_its_traceback_is_that_error():
    """marimo's banner: the exception's type alone, its repr and a note, then the cell's traceback a few
    lines below: the run's root is the traceback (the banner names no more than its type and its text). A type
    alone far above a traceback of that type is an error of its own, the first."""
    exc = capture(lambda: _call_method(object()))
    lines = text_of(exc).splitlines()
    banner = [type(exc).__name__, f"This cell raised an exception: {exc!r}", "", "See the console area for a traceback.", ""]
    root = run_root([*banner, *lines])
    assert (root.info.exception_type, root.info.message, bool(root.info.frames)) == ("AttributeError", str(exc), True)
    far = run_root([type(exc).__name__, *[f"INFO step {k}" for k in range(12)], *lines])
    assert (far.info.exception_type, far.info.message, far.info.frames) == ("AttributeError", "", ())
    # (the type with words that quote the error: the exception line in a user's fullwidth parentheses)
    quoted = run_root([f"\uff08{lines[-1]}\uff09", *lines])
    assert (quoted.info.exception_type, quoted.info.message, bool(quoted.info.frames)) == ("AttributeError", str(exc), True)


def _stage_weights():
    return _run_stage(True)


def test_an_exception_line_moved_above_its_frames():
    """A copy trimmed by hand: the exception line first, then the frames in Python's order (each source
    line under its frame), the header gone; not a newest-first export, whose source lines come first,
    nor Sentry's frames newest first (a frame's source line calls the frame listed before it)."""
    lines = text_of(capture(_stage_weights)).splitlines()
    original = only(lines)
    event = only(["the error:", lines[-1], *lines[1:-1], "", "any idea?"])
    assert (event.root.exception_type, event.root.message, event.truncated) == ("KeyError", original.root.message, True)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    assert_same("\n".join([lines[-1], *lines[1:-1]]).encode())
    # ... as PythonAnywhere's error log writes it: each line behind logging's `%(asctime)s: ` (taught by the exception line)
    logged = fmt.asctime_colon(["Error running WSGI application", lines[-1], *lines[1:-1]])
    (event,) = [e for e in assert_same("\n".join([*logged, ""]).encode()) if e.root.frames]
    assert (event.root.exception_type, event.root.message, event.span.line_start) == ("KeyError", original.root.message, 2)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    # ... and Sentry's order: the frames newest first, each with its source line still under it
    groups: list[list[str]] = []
    for line in lines[1:-1]:
        groups += [[line]] if line.startswith("  File ") else []
        groups[-1] += [] if line.startswith("  File ") else [line]
    event = only([lines[-1], *(line for group in reversed(groups) for line in group)])
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]


def test_an_exception_line_moved_above_frames_begun_at_a_source_line():
    """The same copy begun at the source line of a frame above the first it shows (that frame's line cut off): a
    source line right under the exception line, as a newest-first export has; its frames' calls tell the copy's
    order (each source calls the frame listed after it), and the raise site is the innermost frame."""
    lines = text_of(capture(_stage_weights)).splitlines()
    original = only(lines)
    first = next(k for k, line in enumerate(lines) if line.startswith("  File "))
    event = only([lines[-1], *lines[first + 1:-1]])  # (from the first frame's source line on)
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function) for f in original.root.frames[1:]]
    reversed_export = only(forms.newest_first(lines, strip=False))  # (an export newest first is still read so)
    assert reversed_export.root.raise_site == original.root.raise_site


def test_a_copy_of_frames_newest_first_above_the_exception_line():
    """A hand-made copy: the header gone, the frames listed newest first (each with its source line under
    it), the exception line last. Each frame's source calls the frame listed before it: read in Python's order."""
    lines = text_of(capture(_stage_weights)).splitlines()
    original = only(lines)
    groups: list[list[str]] = []
    for line in lines[1:-1]:
        groups += [[line]] if line.startswith("  File ") else []
        groups[-1] += [] if line.startswith("  File ") else [line]
    copy = [*(line for group in reversed(groups) for line in group), lines[-1]]
    event = only(copy)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    assert only(lines[1:]).root.frames == original.root.frames  # (in Python's order, it stays so)


def _max_rank_checked(rank: int) -> ValueError:
    try:
        if rank not in (8, 16, 32, 64):
            raise ValueError(f"max_lora_rank ({rank}) must be one of (8, 16, 32, 64).")
    except ValueError as error:
        return error
    raise AssertionError("the check passed")


_BUILT_BY_PYDANTIC = [Frame("vllm/engine/arg_utils.py", 1187, "create_engine_config", "        lora_config = LoRAConfig("),
                      Frame("pydantic/_internal/_dataclasses.py", 120, "__init__",
                            "        s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)")]


@pytest.mark.parametrize("field", ["", "max_lora_rank"])
def test_pydantics_report_of_a_check_its_model_raised_is_that_error(field):
    """A pydantic dataclass (vLLM's configs) runs its own checks; pydantic reports what one raised inside its
    ValidationError (`Value error, ...`). That error is the root, raised within the call that built the model;
    the report is what it led to."""
    validation_error = foreign_exception("pydantic_core._pydantic_core", "ValidationError", ValueError)
    report = forms.pydantic_report("LoRAConfig", _max_rank_checked(1), field)
    lines = formatted(_BUILT_BY_PYDANTIC, validation_error(report)).splitlines()
    event = only([f"(APIServer pid=2994) {line}" for line in lines])
    raised, wrapper = event.chain
    assert (raised.exception_type, raised.message) == ("ValueError", "max_lora_rank (1) must be one of (8, 16, 32, 64).")
    assert raised.raise_site.function == "create_engine_config"  # (pydantic's own frames are where it was wrapped)
    assert (wrapper.exception_type, wrapper.link) == ("pydantic_core._pydantic_core.ValidationError", Link.CAUSE)
    assert wrapper.message.startswith("1 validation error for LoRAConfig")


def test_pydantics_report_of_a_failed_type_check_stays_one_error():
    validation_error = foreign_exception("pydantic_core._pydantic_core", "ValidationError", ValueError)
    report = forms.pydantic_report("LoRAConfig", None, "max_lora_rank", literal="Input should be 8, 16, 32 or 64")
    (alone,) = only(formatted(_BUILT_BY_PYDANTIC, validation_error(report)).splitlines()).chain
    assert alone.exception_type.endswith("ValidationError")


class _Module:
    def _apply(self, fn):
        for param in (1, 2):
            fn(param)

    def cuda(self):
        return self._apply(lambda t: _to_device(t))


def _to_device(value):
    raise RuntimeError(f"CUDA out of memory. Tried to allocate {value}.00 MiB.")


def test_a_cut_stack_through_a_lambda_keeps_python_order():
    """A paste begun inside the stack, at a frame that calls the function it was handed, a lambda: the lambda's
    frame shows the line it is written on, which also calls the frame above (`self._apply(lambda t: ...)`). That
    line says nothing of the order, so the frames are read as Python printed them."""
    lines = text_of(capture(_Module().cuda)).splitlines()
    at = next(k for k, line in enumerate(lines) if line.endswith("in _apply"))
    event = only(lines[at:])
    assert [f.function for f in event.root.frames] == ["_apply", "<lambda>", "_to_device"]
    inner = next(k for k, line in enumerate(lines) if line.endswith("in _to_device"))
    paste = [*lines[at:inner], lines[-1]]
    event = only(paste)  # (the innermost frame a library's, not shown: the lambda's line is the last)
    assert [f.function for f in event.root.frames] == ["_apply", "<lambda>"]


def _forwarding(func):
    def inner(*args, **kwargs):
        return func(*args, **kwargs)
    return inner


class _ShardingManager:
    def __enter__(self):
        raise NotImplementedError("load_format hf not implemented")

    def __exit__(self, *exc):
        return False


@_forwarding
def _generate_sequences():
    with _ShardingManager():
        return []


def func():  # (a framework's name for the method it calls on a worker)
    return _generate_sequences()


def test_frames_in_pythons_order_whose_one_call_backwards_is_a_wrapper_forwarding_its_func():
    """A copy begun at a frame named `func`, a decorator's `return func(*args, **kwargs)` below it: that call reads
    as one to the frame above, but no other does; the frames stay in Python's order, the raise site innermost."""
    lines = text_of(capture(func)).splitlines()
    original = only(lines)
    start = next(k for k, line in enumerate(lines) if line.endswith(", in func"))
    event = only(lines[start:])
    assert event.root.raise_site == original.root.raise_site and event.root.raise_site.function == "__enter__"
    assert [e.chain for e in assert_same("\n".join(lines[start:]).encode())] == [event.chain]


@pytest.mark.parametrize("blank", [False, True], ids=("next", "after-a-blank"))
def test_a_pages_exception_line_above_its_frames_flush_left(blank):
    """Streamlit Cloud's page: the exception line first, maybe a blank line, then the frames in Python's
    order, flush left, each source line under its frame. Frames indented as Python indents them after a
    blank are no such page but a stack copied from its first frame, cut before its exception line: the line
    above leads it (see test_an_exception_line_pasted_above_its_stack_copied_from_its_first_frame)."""
    lines = text_of(capture(_stage_weights)).splitlines()
    original = only(lines)
    frames = [line[2:] if line.startswith("  File ") else line for line in lines[1:-1]]
    page = [lines[-1], *[""] * blank, *frames]
    event = only(page)
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    assert_same("\n".join(page).encode())
    led = only([lines[-1], "", *lines[1:-1]])
    assert (led.kind, led.root.exception_type, led.truncated) == (EventKind.TRACEBACK, "KeyError", True)


@pytest.mark.parametrize("form", ["plain", "blank-before-exception", "collapsed-to-one-space", "broken-after-path",
                                  "broken-after-path-headless", "frames-on-one-line-headless",
                                  "begun-inside-a-frame-headless", "paths-unquoted", "paths-unquoted-indented", "quotes-escaped"])
def test_a_paste_that_lost_its_indentation(form):
    lines = text_of(capture(_load_weights)).splitlines()
    original = only(lines)
    pasted = {"plain": lambda: forms.stripped(lines), "blank-before-exception": lambda: forms.stripped(lines, gap=True),
              "collapsed-to-one-space": lambda: forms.collapsed(lines),
              "broken-after-path": lambda: forms.broken_after_path(lines),
              "broken-after-path-headless": lambda: forms.broken_after_path(lines)[1:],
              "frames-on-one-line-headless": lambda: forms.frames_on_one_line(lines),
              "begun-inside-a-frame-headless": lambda: [lines[1].split("/")[-1], *forms.stripped(lines[2:])],
              "paths-unquoted": lambda: forms.unquoted_paths(forms.stripped(lines)),
              "paths-unquoted-indented": lambda: forms.unquoted_paths(lines),
              # (copied out of a string whose quotes were escaped, two blanks out as a paste put them; a source line's
              # quotes, escaped too, are the code as the copy shows it: not compared here)
              "quotes-escaped": lambda: [line[2:].replace('"', '\\"') if line.startswith("  File") else line[2:]
                                         if line.startswith("  ") else line for line in lines]}[form]()
    event = only(pasted)
    assert_same("\n".join(pasted).encode())  # (the fast path alike)
    assert event.truncated == form.endswith("headless") and event.root.message == original.root.message
    assert [(f.path.rsplit("/", 1)[-1], f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path.rsplit("/", 1)[-1], f.lineno, f.function, f.code) for f in original.root.frames]  # (a cut path's file)


@pytest.mark.parametrize("wrap", ["log", "code-span", "timestamped"])
def test_an_exception_line_above_a_stack_that_ends_without_one(wrap):
    """AWS Lambda's runtime logs the exception line first, then the stack alone: one traceback. Where the
    stack ends in its own exception line, the same error's, it is one traceback too, from the line above; where that
    line says another error, the line is an error of its own."""
    exc = capture(_load_weights)
    original = only(text_of(exc).splitlines())
    lines = {"log": lambda: fmt.aws_lambda(exc),
             "code-span": lambda: [f"`{line}" if k == 0 else f"{line}`" if k == len(fmt.aws_lambda(exc)) - 1 else line
                                   for k, line in enumerate(fmt.aws_lambda(exc))],
             "timestamped": lambda: fmt.ci_timestamps(fmt.aws_lambda(exc))}[wrap]()
    event = only(lines)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.TRACEBACK, "KeyError",
                                                                           original.root.message)
    assert not event.truncated and (event.span.line_start, event.span.line_end) == (1, len(lines))
    assert [(f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.lineno, f.function, f.code) for f in original.root.frames]
    assert_same("\n".join(lines).encode())
    (whole,) = events([fmt.aws_lambda(exc)[0], *text_of(exc).splitlines()])
    assert (whole.kind, whole.root.exception_type, whole.span.line_start) == (EventKind.TRACEBACK, "KeyError", 1)
    other = capture(lambda: int("x"))
    said, whole = events([fmt.aws_lambda(other)[0], *text_of(exc).splitlines()])
    assert (said.kind, said.root.short_type, whole.kind, whole.span.line_start) == (
        EventKind.NOTICE, other.__class__.__name__, EventKind.TRACEBACK, 2)


def test_aws_lambdas_report_of_a_handler_that_does_not_compile():
    """`Runtime.UserCodeSyntaxError`, then its place as the runtime gives it (`File "path" Line N`): the place is
    the error's frame."""
    try:
        compile("def handler(event, context):\n    return {'a': 1 'b': 2}\n", "/var/task/handler.py", "exec")
    except SyntaxError as err:
        exc = err
    lines = fmt.aws_lambda_syntax_error(exc, "handler")
    event = only(lines)
    assert event.root.exception_type == "Runtime.UserCodeSyntaxError" and event.root.message.startswith("Syntax error")
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/var/task/handler.py", 2)
    assert_same("\n".join(lines).encode())


AROUND_LINES = ["INFO 12-04 10:00:00 loading weights", "INFO 12-04 10:00:09 shutting down"]


def test_an_exception_line_above_a_stack_whose_prefix_only_the_stack_teaches():
    """mpiexec's host in front of each line (no prefix anyone listed): the error's line comes first, read with the
    host as its label, and the stack below it, which teaches the prefix, ends without the line: one traceback."""
    exc = capture(_parse_port)
    (expected,) = expected_chain(exc)
    stack = text_of(exc).rstrip("\n").split("\n")[:-1]
    lines = ["x4502c1s3b0n0:  > padded vocab (size: 50257)", f"x4502c1s3b0n0: {type(exc).__name__}: {exc}",
             *(f"x4502c1s3b0n0: {line}" for line in stack)]
    event = only(lines)
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)
    assert [(f.lineno, f.function) for f in event.root.frames] == [(f[1], f[2]) for f in expected.frames]
    assert_same("\n".join(lines).encode())


def _user_code_report(exc: BaseException) -> list[str]:
    """TensorFlow's report of an error raised inside a `tf.function` (autograph's): `Type: in user code:`, a blank,
    the frames four blanks in with their source lines four further, the user's marked `  *` and the framework's
    `  **`, a blank, and the error's own line four in."""
    frames = traceback.extract_tb(exc.__traceback__)
    lines = [f"{type(exc).__name__}: in user code:", ""]
    for k, frame in enumerate(frames):
        mark = "  *" if k == 0 else "  **" if k < len(frames) - 1 else ""
        lines += [f'    File "{frame.filename}", line {frame.lineno}, in {frame.name}{mark}', f"        {frame.line}"]
    return [*lines, "", f"    {type(exc).__name__}: {exc}", ""]


def test_tensorflows_report_of_an_error_in_a_tf_function():
    """The error is the one the report's last line names, raised at its innermost frame; its first line only says
    where it happened."""
    exc = capture(_parse_port)
    (expected,) = expected_chain(exc)
    event = only([AROUND_LINES[0], *_user_code_report(exc), AROUND_LINES[1]])
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)
    assert [(f.lineno, f.function) for f in event.root.frames] == [(f[1], f[2]) for f in expected.frames]
    assert_same("\n".join([AROUND_LINES[0], *_user_code_report(exc), AROUND_LINES[1]]).encode())


def _parse_port():
    return int("80a")


_BETWEEN = {"adjacent": [], "handler's words": ["Got unrecognized error from task. ignoring:"],
            "double-spaced log record": ["", "2024-10-23 09:47:29,025:INFO:<module>\tLogging Level: INFO", ""]}


@pytest.mark.parametrize("between", _BETWEEN.values(), ids=_BETWEEN.keys())
def test_an_exception_line_pasted_above_its_stack_cut_before_its_own(between):
    """A paste that gives the error first, then its stack cut before the exception line it told already (a
    handler that prints the error and then the stack, a launcher's first lines): one error, of the line's class
    and message, raised where the stack ends; still cut off. Not where the stack ends in an exception line of
    its own, nor where it begins further below or after a chain's separator (the next link's), nor on another rank."""
    exc = capture(_load_weights)
    said, *stack = text_of(exc).splitlines()[-1:] + text_of(exc).splitlines()[:-1]
    original = only(text_of(exc).splitlines())
    lines = [said, *between, *stack]
    event = only(lines)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.TRACEBACK, "KeyError",
                                                                           original.root.message)
    assert event.root.frames == original.root.frames
    assert event.truncated and (event.span.line_start, event.span.line_end) == (1, len(lines))
    assert_same("\n".join(lines).encode())
    whole = events([said, *between, *text_of(capture(_parse_port)).splitlines()])
    assert [(e.kind, e.root.exception_type) for e in whole] == [(EventKind.BARE, "KeyError"),
                                                               (EventKind.TRACEBACK, "ValueError")]
    far = events([said, *between, *["INFO serving"] * (5 - len(between)), *stack])
    assert [(e.kind, e.root.exception_type) for e in far] == [(EventKind.BARE, "KeyError"), (EventKind.TRACEBACK, "")]
    chained = [said, "", "During handling of the above exception, another exception occurred:", "", *stack]
    assert [(e.kind, e.root.exception_type) for e in events(chained)] == [(EventKind.BARE, "KeyError"),
                                                                          (EventKind.TRACEBACK, "")]
    assert_same("\n".join(chained).encode())
    ranks = events([f"[rank1]: {said}", *between, *(f"[rank0]: {line}" for line in stack)])
    assert [(e.kind, e.rank) for e in ranks] == [(EventKind.BARE, "rank1"), (EventKind.TRACEBACK, "rank0")]


@pytest.mark.parametrize("indent", ["  ", ""], ids=("as printed", "unindented"))
def test_an_exception_line_pasted_above_its_stack_copied_from_its_first_frame(indent):
    """The same paste without the stack's header: the copy began at its first frame (a web app's error page,
    its frame lines maybe unindented), after a blank. One error of the line's class, raised where the stack ends; a
    stack that ends in its own exception line stays an error of its own."""
    exc = capture(_load_weights)
    said, header, *frames = text_of(exc).splitlines()[-1:] + text_of(exc).splitlines()[:-1]
    frames = [indent + line.removeprefix("  ") if line.startswith("  File") else line for line in frames]
    original = only(text_of(exc).splitlines())
    event = only([said, "", *frames])
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.TRACEBACK, "KeyError",
                                                                           original.root.message)
    assert [(f.path, f.lineno) for f in event.root.frames] == [(f.path, f.lineno) for f in original.root.frames]
    assert event.truncated and event.span.line_start == 1
    assert_same("\n".join([said, "", *frames, ""]).encode())
    other = text_of(capture(_parse_port)).splitlines()[1:]
    assert [(e.kind, e.root.exception_type) for e in events([said, "", *other])] == [
        (EventKind.BARE, "KeyError"), (EventKind.TRACEBACK, "ValueError")]


def test_a_wrappers_line_naming_the_error_it_wraps_above_its_user_code_frames():
    """torch._dynamo's message as a user pastes it without the traceback: `InternalTorchDynamoError: AttributeError:
    ...`, a blank, `from user code:`, the frames it traced (indented a blank further than Python's): one error, the
    wrapped one its root, the frames the wrapper's."""
    inner = raised(AttributeError("'str' object has no attribute 'IF_NEEDED'"))
    user = traceback.format_list(traceback.extract_tb(capture(_load_weights).__traceback__))
    wrapper = type("InternalTorchDynamoError", (RuntimeError,), {"__module__": "torch._dynamo.exc"})
    message = f"{type(inner).__name__}: {inner}\n\nfrom user code:\n" + "".join(f" {line}" for line in user).rstrip("\n")
    lines = traceback.format_exception_only(wrapper(message))[0].rstrip("\n").split("\n")
    event = only(lines)
    assert [(info.exception_type, info.message) for info in event.chain] == [
        ("AttributeError", str(inner)), ("torch._dynamo.exc.InternalTorchDynamoError", f"AttributeError: {inner}")]
    assert event.chain[-1].raise_site.function == "_load_weights" and event.span.line_start == 1


def test_an_exception_line_that_waits_for_a_stack_below_it_is_shown_while_the_input_pauses():
    """Read as a stream: the exception line shows when the input pauses, and the stack below it that takes it
    replaces what was shown, one incident; what completed below it meanwhile is not held back."""
    exc = capture(_load_weights)
    lines = text_of(exc).splitlines()
    shown = list(events_from_lines([lines[-1], "Segmentation fault (core dumped)", None], "server.log",
                                   builtin_engine().notices))
    assert [(e.provisional, e.root.exception_type) for e in shown] == [(False, "SIGSEGV"), (True, "KeyError"),
                                                                        (False, "KeyError")]  # (the last at the end)
    analysis = builtin_engine().analysis()
    for event in events_from_lines([lines[-1], None, "", *lines[:-1]], "server.log", builtin_engine().notices):
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert (incident.info.exception_type, incident.count, incident.event.span.line_end) == ("KeyError", 1, len(lines) + 1)
    assert incident.info.frames and incident.info.frames[-1].function == "_load_weights"


def test_an_exception_line_behind_the_file_and_line_it_was_raised_at():
    """pytest's `--tb=line` (each failure as its crash's place and exception line: `path:lineno: exconly`) and
    a C++ check's place before the error it raises. A warning at its place (the warnings module's own
    form) and a type checker's `error:` are not errors of the program."""
    exc = capture(_load_weights)
    crash = traceback.extract_tb(exc.__traceback__)[-1]
    exconly = "".join(traceback.format_exception_only(exc)).strip()
    event = only(["=== FAILURES ===", f"{crash.filename}:{crash.lineno}: {exconly}", "=== short test summary info ==="])
    assert (event.root.exception_type, event.root.message, event.context) == (
        "KeyError", only(text_of(exc).splitlines()).root.message, f"{crash.filename}:{crash.lineno}")
    check = only(["/src/cpp/llm_chat.cc:163: InternalError: Check failed: (fload_exec.defined()) is false: no vm"])
    assert (check.root.exception_type, check.root.message) == ("InternalError", "Check failed: (fload_exec.defined()) "
                                                                                 "is false: no vm")
    assert only([r"C:\work\tests\test_a.py:7: ValueError: bad value"]).root.exception_type == "ValueError"
    for other in ("/srv/app/model.py:12: DeprecationWarning: the old API", "app/model.py:12: error: Incompatible types"):
        assert events([other]) == []


def _run_stage(config):
    return _load_weights() if config else None


def _call_with_an_argument():
    config = {"tp": 2}
    _run_stage(config)  # this source line has the form of a wrapped type, `name(Inner)`


@pytest.mark.parametrize("gap", [False, True], ids=("plain", "blank-before-exception"))
def test_a_stripped_source_line_that_reads_like_a_wrapped_type_stays_a_source_line(gap):
    lines = [line.split("  # this source line")[0] for line in text_of(capture(_call_with_an_argument)).splitlines()]
    original = only(lines)
    event = only(forms.stripped(lines, gap))
    assert not event.truncated and len(event.chain) == 1
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.function, f.code) for f in event.root.frames] == \
        [(f.path, f.lineno, f.function, f.code) for f in original.root.frames]
    assert "_run_stage(config)" in [f.code for f in event.root.frames]


def test_a_bare_cuda_error_line_gets_the_page_of_its_own_text():
    """Its hint lines did not come with it: the page for this text, not the generic one with `error='no'`."""
    (incident,) = incidents(["RuntimeError: CUDA error: no kernel image is available for execution on the device"])
    assert incident.diagnosis.pattern.id == "torch.cuda-no-kernel-image"


def _launch_kernel():
    raise RuntimeError("CUDA error: no kernel image is available for execution on the device\n"
                       "CUDA kernel errors might be asynchronously reported at some other API call.")


def test_the_root_cause_is_the_copy_with_frames_of_an_error_first_seen_without():
    """The paste begins at the end of a cut copy: its exception line, then the same error whole."""
    whole = text_of(capture(_launch_kernel)).splitlines()
    cut = whole[-2:]  # the exception line and its hint: no frames
    root = run_root([*cut, "INFO 12-01 10:00:02 [engine.py:80] restarting the worker", *whole])
    assert root.info.raise_site is not None and root.info.raise_site.function == "_launch_kernel"
    assert run_root([*cut, "unrelated", *text_of(capture(_load_weights)).splitlines()]).info.raise_site is None


def test_a_log_viewers_gutter_over_stripped_lines_is_learned_at_the_first_frame_behind_it():
    """A console's gutter (`  | `, OpenShift's, Buildkite's) in front of lines whose indentation it stripped, the paste
    begun at a frame: the frame flush behind the bar is no exception group's (whose box indents its frames), so the
    gutter is a prefix, and the error under it is read from that first line on, then the traceback after it."""
    loaded = text_of(capture(_load_weights)).splitlines()
    called = text_of(capture(_call_with_an_argument)).splitlines()
    lines = [f"  | {line.strip()}" for line in [*loaded[1:], *called]]
    first, second = assert_same("\n".join([*lines, ""]).encode())
    assert (first.root.exception_type, first.root.message) == ("KeyError", only(loaded).root.message)
    assert (first.span.line_start, first.truncated, first.root.raise_site.function) == (1, True, "_load_weights")
    assert (second.root.exception_type, second.span.line_start) == ("KeyError", len(loaded))


def test_a_stripped_annotated_assignment_stays_a_source_line():
    """`self.comm: Comm = init_rank(...)` has the form of `type: message`; its name is no class's."""
    source = "def init(rank):\n    comm: int = init_rank(rank)\n    return comm\n"
    linecache.cache["/srv/app/pynccl.py"] = (len(source), None, source.splitlines(True), "/srv/app/pynccl.py")
    scope: dict = {"init_rank": lambda rank: {}[rank]}
    exec(compile(source, "/srv/app/pynccl.py", "exec"), scope)  # (the source lines come from linecache)
    lines = text_of(capture(lambda: scope["init"](3))).splitlines()
    event = only(forms.stripped(lines))
    assert [(info.exception_type, info.message) for info in event.chain] == [("KeyError", "3")]
    assert "comm: int = init_rank(rank)" in [f.code for f in event.root.frames]


def test_a_blank_line_after_a_cut_traceback_does_not_join_unrelated_text():
    lines = text_of(capture(_load_weights)).splitlines()[:3]
    first, second = events([*lines, "", "loading shard 3", "KeyError: 'lm_head.weight'"])
    assert first.truncated and not first.root.exception_type
    assert second.kind is EventKind.BARE


def _thread_failure_lines() -> tuple[BaseException, list[str]]:
    """What `threading.excepthook` writes to stderr for a thread whose target raised: `Exception in thread
    NAME:`, then the traceback."""
    exc = capture(_load_weights)
    return exc, ["Exception in thread Thread-5 (transfer_thread):", *text_of(exc).rstrip("\n").split("\n")]


_OTHER_WRITERS = ["[2025-05-28 06:32:54 TP0] Mooncake Transfer Engine Return Error.",
                  "E0528 06:32:54.254595 735017 tcp_transport.cpp:136] Session::writeBody failed. Error: Bad address"]


@pytest.mark.parametrize("every", [1, 2, 3])
def test_a_threads_traceback_other_writers_lines_came_between(every):
    """A thread's traceback on stderr while other threads log (a logger's records, a native library's lines):
    their lines come between its lines, up to a few at a time; its stack is read whole, theirs apart."""
    exc, lines = _thread_failure_lines()
    assert lines[0] == "Exception in thread Thread-5 (transfer_thread):"
    mixed = [part for k, line in enumerate(lines) for part in (
        [line, *_OTHER_WRITERS[:1 + k % 2]] if k % every == 0 and 0 < k < len(lines) - 1 else [line])]
    (event,) = assert_same("\n".join(mixed).encode() + b"\n")
    assert actual_chain(event.chain) == expected_chain(exc)
    assert not event.truncated


def test_a_cut_traceback_and_frames_far_below_it_are_not_one():
    """A traceback cut after a frame, many lines of others, then frames without a header: two records."""
    lines = text_of(capture(_load_weights)).splitlines()
    first, second = sorted(events([_OTHER_WRITERS[0], *lines[:3], *_OTHER_WRITERS * 9, *lines[1:3], *_OTHER_WRITERS]),
                           key=lambda event: event.span.line_start)
    assert first.truncated and second.truncated and (first.span.line_start, first.span.line_end) == (2, 4)
    near, = events([_OTHER_WRITERS[0], *lines[:3], *_OTHER_WRITERS * 2, *lines[3:]])  # (a few lines between: one)
    assert not near.truncated and near.root.exception_type


def test_a_bare_exception_line_followed_by_text_stays_bare_and_the_text_is_read():
    first, second = events(["ValueError: expected 4 heads, got 3", "loading shard 3", "KeyError: 'lm_head.weight'"])
    assert (first.kind, first.root.exception_type) == (EventKind.BARE, "ValueError")
    assert (second.kind, second.root.exception_type) == (EventKind.BARE, "KeyError")


def _wrapped_chain():
    try:
        _load_weights()
    except KeyError as err:
        raise RuntimeError("Failed to load weights") from err


def test_the_childs_traceback_in_torchruns_root_cause_table_is_read():
    """`  traceback : Traceback (most recent call last):`, its frames four spaces in: the first frame
    tells how far the traceback is indented, so its exception line is not taken for a source line."""
    lines = text_of(capture(_load_weights)).splitlines()
    event = only(forms.elastic_root_cause(lines))
    original = only(lines)
    assert (event.root.exception_type, event.root.message) == ("KeyError", original.root.message)
    assert [(f.path, f.lineno, f.code) for f in event.root.frames] == [(f.path, f.lineno, f.code) for f in original.root.frames]
    assert not event.truncated


@pytest.mark.parametrize("cut", [0, 5], ids=("whole", "pasted-from-the-exception-line"))
def test_a_spawned_childs_failure_is_the_root_of_the_parents(cut):
    """torch.multiprocessing.spawn: `ProcessRaisedException: `, a blank line, `-- Process 0 terminated
    with the following error:` and the child's traceback, all the parent's message."""
    event = only(forms.spawn_failure()[cut:])
    child, parent = event.chain
    assert (child.exception_type, child.message) == ("RuntimeError", "Distributed package doesn't have NCCL built in")
    assert child.raise_site.function == "_child_init_process_group"
    assert parent.exception_type.endswith("ProcessRaisedException") and parent.link is Link.CAUSE
    assert parent.message == "\n\n-- Process 0 terminated with the following error:"  # as str() of it begins


def _raise_bare_chain():
    try:
        raise ValueError
    except ValueError as err:
        raise RuntimeError from err


def test_an_exception_without_a_message_before_a_chain_separator_stays_the_chains_first_link():
    """`ValueError` alone, a blank line, `The above exception ...:`: the separator introduces the next
    link, not a child's output."""
    event = only(text_of(capture(_raise_bare_chain)).splitlines())
    assert [(info.exception_type, info.link) for info in event.chain] == [("ValueError", Link.FIRST),
                                                                          ("RuntimeError", Link.CAUSE)]


@pytest.mark.parametrize("separator", ["cause", "context"])
def test_a_chain_whose_later_links_header_a_copy_left_out_is_one_chain(separator):
    """A chain's separator, then the next link's frames without its header (a copy that cut it out): that link, not a
    traceback cut off after the separator and a second error."""
    lines = text_of(capture(_raise_bare_chain if separator == "cause" else _handling_fails)).splitlines()
    at = max(k for k, line in enumerate(lines) if line.startswith("Traceback "))
    copied = [*lines[:at], *lines[at + 1:]]
    event = only(copied)
    assert [info.exception_type for info in event.chain] == (
        ["ValueError", "RuntimeError"] if separator == "cause" else ["KeyError", "OSError"])
    assert not event.truncated and event.chain[1].raise_site is not None
    assert [e.chain for e in assert_same("\n".join(copied).encode())] == [event.chain]


def _handling_fails():
    try:
        {}["model"]
    except KeyError:
        raise OSError("cannot open /srv/model")  # noqa: B904 - the chain being tested


def test_a_message_that_begins_with_a_line_break_and_introduces_nothing_is_read_as_before():
    lines = ["KeyError: ", "", "some text", "Traceback (most recent call last):", '  File "x.py", line 1, in f',
             "ValueError: other"]
    assert [[info.exception_type for info in event.chain] for event in events(lines)] == [["KeyError"], ["ValueError"]]


def test_markdown_bold_exception_lines_keep_the_chain():
    event = only(forms.markdown_bold(text_of(capture(_wrapped_chain)).splitlines()))
    assert [(info.exception_type, info.link) for info in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("RuntimeError", Link.CAUSE)]
    assert event.chain[1].message == "Failed to load weights"


@pytest.mark.parametrize("shell, script", [("bash", True), ("bash", False), ("dash", False)])
def test_a_shells_word_that_its_command_died_of_a_segmentation_fault(shell, script):
    """bash from a script (`run.sh: line 1: 4242 Segmentation fault      python3 -c ...`), `bash -c`
    (`bash: line 1: ...`), dash (`Segmentation fault`); `(core dumped)` where core dumps are on."""
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell} here")
    report = forms.shell_signal_report(shell, "SIGSEGV", script)
    assert any("Segmentation fault" in line for line in report)
    (incident,) = incidents(["INFO 12-01 10:00:01 [engine.py:80] generating", *report])
    assert (incident.info.exception_type, incident.is_run_root) == ("SIGSEGV", True)
    assert incident.diagnosis.pattern.id in ("shell.segmentation-fault", "shell.segmentation-fault-alone")


@pytest.mark.parametrize("line, signal, page", [
    ("zsh: segmentation fault (core dumped)  python serve.py --tp 8", "SIGSEGV", "shell.segmentation-fault-zsh"),
    ("[1]+  Aborted                 (core dumped) python serve.py", "SIGABRT", "shell.aborted-command"),
    ("bash: 19442 Segmentation fault      python3 serve.py", "SIGSEGV", "shell.segmentation-fault"),
    ("Bus error (core dumped)", "SIGBUS", "shell.bus-error"),
    ("Illegal instruction (core dumped)", "SIGILL", "shell.illegal-instruction"),
])
def test_zsh_and_job_control_words_of_a_signal(line, signal, page):
    """zsh's names for the signals (its signames), bash's job table: from their definitions."""
    (incident,) = incidents([line])
    assert (incident.info.exception_type, incident.diagnosis.pattern.id) == (signal, page)


def test_a_signals_name_in_ordinary_text_is_no_crash():
    assert events(["Aborted request 12 after 30 s", "Bus error counters: 0", "[2026-12-01 10:00:00] Aborted (by the client)",
                   "zsh: command not found: sglang"]) == []


def test_the_shells_word_after_faulthandlers_dump_is_the_same_crash_told_again():
    """faulthandler's `Fatal Python error: Segmentation fault` and bash's `Segmentation fault (core dumped)` (SIGSEGV):
    one crash, the dump its root."""
    dump, told = incidents([*forms.segfault_child(), *forms.shell_signal_report("bash", "SIGSEGV")])
    assert dump.is_run_root and dump.info.frames and dump.info.exception_type == "Fatal Python error"
    assert (told.info.exception_type, told.role, told.caused_by) == ("SIGSEGV", "consequence", dump.id)


def test_a_shells_segfault_then_faulthandlers_dump_of_a_rerun_is_the_dump():
    """The shell's `Segmentation fault` of a first run, then the run again with PYTHONFAULTHANDLER=1: one crash, told
    best by the dump (its frames)."""
    lines = ["$ python fail.py", *forms.shell_signal_report("dash", "SIGSEGV"), "$ PYTHONFAULTHANDLER=1 python fail.py",
             *forms.segfault_child()]
    (root,) = [i for i in incidents(lines) if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == ("Fatal Python error", "Segmentation fault") and root.info.frames


def _start_a_local_target():
    def target():  # (a nested function: the spawn method cannot pickle it)
        pass

    multiprocessing.get_context("spawn").Process(target=target).start()


def test_a_spawned_childs_empty_pipe_follows_from_its_parents_pickling_error():
    """Windows starts a spawned child before the parent pickles the process: where pickling fails, the child's
    `EOFError: Ran out of input` (printed first) echoes the parent's error, which is the root cause. An EOFError with
    that text elsewhere (an empty pickle file) is no such echo."""
    parent = capture(_start_a_local_target)
    found = incidents([*forms.spawn_child_left_empty(), *text_of(parent).splitlines()])
    (root,) = [i for i in found if i.is_run_root]
    assert (root.info.exception_type, root.info.message) == (type(parent).__name__, str(parent))
    (child,) = [i for i in found if i is not root]
    assert (child.info.exception_type, child.role, child.diagnosis.pattern.id) == (
        "EOFError", "consequence", "python.spawn-child-ran-out-of-input")
    empty = capture(lambda: pickle.loads(b""))
    (alone,) = incidents(text_of(empty).splitlines())
    assert alone.is_run_root and getattr(alone.diagnosis.pattern, "id", None) != "python.spawn-child-ran-out-of-input"


def _capture_failed():
    raise Exception("Capture cuda graph failed: CUDA out of memory.")


@pytest.mark.parametrize("wrap", ["`{}`", "`{}"], ids=("code-span", "opening-tick-only"))
def test_an_exception_line_in_an_inline_code_span(wrap):
    """A paste that quotes the exception line as markdown inline code, or begins with a fence's backtick."""
    line = traceback.format_exception_only(RuntimeError, RuntimeError("Expected all tensors to be on the same device"))[0]
    event = only(["I get this:", wrap.format(line.rstrip()), "any idea?"])
    assert (event.root.exception_type, event.root.message) == ("RuntimeError", "Expected all tensors to be on the same device")


def test_an_exception_line_alone_in_bold_inside_indented_prose():
    """Markdown prose that quotes only the exception line, in bold and indented as the paragraph is."""
    line = traceback.format_exception_only(KeyError, KeyError("model.norm.weight"))[0].rstrip()
    event = only(["I tried loading the checkpoint and got", f"  **{line}**", "  any idea what is wrong?"])
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "KeyError", "'model.norm.weight'")


def test_a_bare_exception_of_the_base_class_is_an_error_but_a_tools_error_line_is_not():
    """`raise Exception(...)` prints `Exception: ...`; a command line tool's `Error: ...` is not Python's."""
    line = text_of(capture(_capture_failed)).splitlines()[-1]
    assert line.startswith("Exception: ")
    event = only(["[2026-04-26 14:38:09] Capturing batches (bs=256)", line, "Tried to allocate 672.00 MiB."])
    assert (event.kind, event.root.exception_type) == (EventKind.BARE, "Exception")
    assert event.root.message.startswith("Capture cuda graph failed: CUDA out of memory.")
    assert events(["Error: no such option: --tp-szie", "Usage: tool [OPTIONS]"]) == []


@pytest.mark.parametrize("depth", [1, 2])
def test_a_log_quoted_in_markdown_reads_as_the_log(depth):
    header, *rest = text_of(capture(_wrapped_chain)).splitlines()
    lines = [f"[2026-12-01 10:00:00 TP2] Scheduler hit an exception: {header}", *rest]
    event = only(forms.blockquoted(lines, depth))
    assert [(info.exception_type, info.link) for info in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("RuntimeError", Link.CAUSE)]
    assert event.rank == "TP2" and event.timestamp is not None and not event.truncated
    for ipython in (forms.ipython_traceback(), forms.IPYTHON_FROM_DEFINITION):
        event = only(forms.blockquoted(ipython, depth))
        assert (event.root.exception_type, event.root.message) == ("ValueError", "6 shards, expected 8")
        assert event.root.raise_site.lineno == 3
    glued = only([">" + rest[-1]])  # (the quote's `>` glued to an exception line alone)
    assert (glued.kind, glued.root.exception_type) == (EventKind.BARE, rest[-1].split(":")[0])
    assert events([">see the output above"]) == []


def test_a_traceback_indented_as_a_whole_reads_from_its_header_column():
    lines = forms.build_backend_output(text_of(capture(_wrapped_chain)).splitlines())
    event = only(lines)
    assert [(info.exception_type, info.link) for info in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("RuntimeError", Link.CAUSE)]
    assert event.chain[0].raise_site.function == "_load_weights" and not event.truncated
    assert event.chain[1].message.startswith("Failed to load weights")


def _long_raise():
    raise ConnectionError("HTTPConnectionPool(host='localhost', port=21001): Max retries exceeded with url: /register_worker_and_the_model")


@pytest.mark.parametrize("indent", [1, 2, 3])
def test_a_traceback_a_paste_indented_by_a_blank_or_more_keeps_its_exception_line(indent):
    """Every line one blank further in (a paste in a list item, a quoted block): a source line as long as the header
    is no terminal's cut line whose rest is the exception line."""
    lines = [" " * indent + line for line in text_of(capture(_long_raise)).splitlines()]
    assert max(map(len, lines)) == len(lines[-2])  # (the source line above it the longest: the form found)
    event = only(["step 3 done", *lines])
    assert actual_chain(event.chain) == expected_chain(capture(_long_raise)) and not event.truncated
    assert_same("\n".join(["step 3 done", *lines, ""]).encode())


def test_pdbs_report_of_a_commands_error():
    """pdb prints the error a command raised behind `*** `: that error, where the session shows it."""
    exc = capture(lambda: __import__("absent_module_pdb_4e"))
    said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    session = ["(Pdb) from modelscope.msdatasets import MsDataset", f"*** {said}", "(Pdb) import modelscope", "(Pdb) c"]
    (event,) = assert_same("\n".join([*session, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message, event.span.line_start) == (
        EventKind.BARE, "ModuleNotFoundError", str(exc), 2)
    assert assert_same(b"*** Breakpoint 1 at /x.py:3\n*** Blank or comment\n") == []


def _parse_config():
    return ast.parse("Config:\n    lr = 0.1\n")


def _exec_extension():
    exec("def setup(:\n    pass\n")


@pytest.mark.parametrize("compile_it", [_parse_config, _exec_extension], ids=("ast.parse", "exec"))
def test_a_syntax_error_in_text_compiled_from_a_string_is_raised_where_it_was_compiled(compile_it):
    """Its place (`File "<unknown>", line 1` or `File "<string>", line 1`, the caret under the text) names no
    file: the raise site is the frame above it; a syntax error in a file keeps the file's line as its place."""
    exc = capture(compile_it)
    event = only(text_of(exc).splitlines())
    innermost = traceback.extract_tb(exc.__traceback__)[-1]
    assert event.root.exception_type == "SyntaxError"
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == (innermost.filename, innermost.lineno)


def test_a_syntax_error_in_a_file_keeps_its_place(tmp_path):
    broken = tmp_path / "broken_config_7d.py"
    broken.write_text("lr = (0.1\n")
    exc = capture(lambda: compile(broken.read_text(), str(broken), "exec"))
    event = only(text_of(exc).splitlines())
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == (str(broken), 1)


def test_a_terminal_copy_padded_to_its_width_reads_as_the_log():
    lines = text_of(capture(_wrapped_chain)).splitlines()
    event = only([line.ljust(120) for line in lines])
    assert [(info.exception_type, info.message) for info in event.chain] == [
        ("KeyError", "'model.layers.78.mlp.gate_up_proj.input_scale'"), ("RuntimeError", "Failed to load weights")]
    assert only([line.ljust(120) for line in text_of(capture(_bare_assert)).splitlines()]).root.exception_type == \
        "AssertionError"


def test_an_exception_line_a_terminal_copy_joined_to_the_line_above_by_its_padding():
    """A terminal's copy pads each line to its width; one that lost the line break before the exception line joins it
    to the source (or caret) line above it after the blanks: the two lines are read apart, on both paths."""
    exc = capture(_load_weights)  # (its last line of code a lookup, its caret line under it: no raise statement)
    lines = text_of(exc).splitlines()
    joined = [*(line.ljust(120) for line in lines[:-2]), lines[-2].ljust(120) + lines[-1]]
    (event,) = assert_same("\n".join([*joined, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc) and not event.truncated
    assert events([f"    x = 'a{' ' * 12}b'"]) == []  # (blanks inside a source line alone say nothing)


def _bare_assert():
    shapes = ((4, 8), (8, 4))
    if shapes[0] != shapes[1]:
        raise AssertionError  # as a bare `assert` prints it (pytest rewrites the asserts of this module)


def test_a_log_copied_with_a_tab_before_every_line_reads_as_the_log():
    """unittest's report as a CI viewer copies it: the exception line and its message's lines too."""
    header, *rest = text_of(capture(_wrapped_chain)).splitlines()
    report = ["E", "=" * 70, "ERROR: test_load (test_models.TestLoad.test_load)", "-" * 70, header, *rest]
    event = only(forms.tabbed(report))
    assert [(info.exception_type, info.link) for info in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("RuntimeError", Link.CAUSE)]
    assert not event.truncated and event.chain[1].message == "Failed to load weights"


def test_a_frame_path_hard_wrapped_by_the_terminal():
    path = "/home/user/" + "very-long-directory-name/" * 6 + "model_loader.py"
    code = compile("def load():\n    raise KeyError('lm_head.weight')\n", path, "exec")
    scope: dict = {}
    exec(code, scope)  # a function whose file has a long path
    lines = text_of(capture(scope["load"])).splitlines()
    wrapped = forms.hard_wrapped(lines, 100)
    assert len(wrapped) > len(lines)
    event = only(wrapped)
    assert event.root.raise_site.path == path and event.root.raise_site.lineno == 2 and not event.truncated


def _raised_under_a_long_path() -> tuple[KeyError, str]:
    path = "/opt/conda/lib/python3.12/site-packages/" + "inference_engine/" * 5 + "weights_loader.py"
    scope: dict = {}
    exec(compile("def load():\n    raise KeyError('lm_head.weight')\n", path, "exec"), scope)
    try:
        scope["load"]()
    except KeyError as err:
        return err, path
    raise AssertionError("load did not raise")


@pytest.mark.parametrize("prefix", ["vllm", "torchrun"])
def test_a_prefixed_traceback_a_terminal_wrapped_inside_its_frames_paths(prefix):
    """The rest of a frame line the terminal wrapped has no prefix: it joins its line all the same, and
    the record goes on after it."""
    err, path = _raised_under_a_long_path()
    lines = (fmt.vllm_record("EngineCore failed to start.", err) if prefix == "vllm"
             else [f"[rank0]: {line}" for line in "".join(traceback.format_exception(err)).splitlines()])
    width = max(map(len, lines)) - 20  # only the frame lines in the long file are cut
    wrapped = forms.hard_wrapped(lines, width)
    assert sum(len(line) == width for line in wrapped) == 1 and len(wrapped) == len(lines) + 1
    event = only(["INFO 11-28 03:12:39 [core.py:80] starting", *wrapped, "INFO 11-28 03:12:41 [core.py:90] bye"])
    assert (event.root.exception_type, event.root.raise_site.path, event.root.raise_site.lineno) == ("KeyError", path, 2)
    assert not event.truncated


def _run_speculative_decoding_step():
    raise ValueError("could not broadcast input array from shape (513,) into shape (512,)")


def test_a_frame_line_wrapped_in_its_function_name_or_joined_to_its_source_line():
    """A terminal wraps inside the function's name (`..._decoding_` + `step`), or its padding joins a
    frame line and its source line into one."""
    lines = text_of(capture(_run_speculative_decoding_step)).splitlines()
    original = only(lines)
    at = next(i for i, line in enumerate(lines) if line.endswith("in _run_speculative_decoding_step"))
    wrapped = [*lines[:at], lines[at][:-4], lines[at][-4:], *lines[at + 1:]]
    joined = [*lines[:at], lines[at].ljust(150) + lines[at + 1].strip(), *lines[at + 2:]]
    for paste in (wrapped, joined):
        event = only(paste)
        assert len(event.chain) == 1 and not event.truncated
        assert [(f.function, f.code) for f in event.root.frames] == [(f.function, f.code) for f in original.root.frames]
    # a paste that lost its indentation: a one-word source line under a frame line stays the source line
    scope: dict = {}
    source = "def load():\n    undefined_weights\n"
    linecache.cache["/srv/app/loader.py"] = (len(source), None, source.splitlines(True), "/srv/app/loader.py")
    exec(compile(source, "/srv/app/loader.py", "exec"), scope)  # (the source line comes from linecache)
    event = only(forms.stripped(text_of(capture(scope["load"])).splitlines()))
    assert (event.root.exception_type, event.root.frames[-1].code) == ("NameError", "undefined_weights")


# ----------------------------------------------------------------------------- logged error lines


def test_a_logged_bind_error_is_the_root_cause_of_the_refused_connections_after_it():
    def warmup():
        raise ConnectionRefusedError(111, "Connection refused")

    lines = [*forms.uvicorn_bind_error(), "waiting for the server to start", *text_of(capture(warmup)).splitlines()]
    root = run_root(lines)
    assert root.event.kind is EventKind.NOTICE and root.info.exception_type == "OSError"
    assert root.info.message.startswith("[Errno 98] error while attempting to bind on address ('127.0.0.1', ")
    assert root.diagnosis.pattern.id == "uvicorn.bind-address-in-use"


def test_an_exception_in_a_logged_error_line_is_a_notice():
    event = only(forms.logged_oserror())
    assert event.kind is EventKind.NOTICE
    assert (event.root.exception_type, event.root.message) == ("OSError", "[Errno 28] No space left on device")


@pytest.mark.parametrize("fmt, said", [("%(asctime)s [%(levelname)s] %(name)s - %(message)s", "{cls} at trainer.py:101 - {exc}"),
                                       ("%(levelname)s:%(name)s:%(message)s", "{cls}: {exc}"),
                                       ("%(asctime)s %(levelname)s %(name)s: %(message)s", "timestep raised {cls} exception: {exc}")],
                         ids=("placed", "basic", "the word exception"))
def test_an_exception_class_printed_by_type_in_a_logged_error_line(fmt, said):
    """`logger.error(f"{type(e)}: {e}")`: the class as `<class 'RuntimeError'>`, then its message, also
    behind a logging format the normaliser has no prefix for. At info level it is no error."""
    exc = capture(lambda: _call_method(object()))
    (event,) = events(forms.logged_class(exc, fmt, said))
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "AttributeError", str(exc))
    assert events(forms.logged_class(exc, fmt, said, logging.INFO)) == []
    assert_same("\n".join(forms.logged_class(exc, fmt, said)).encode())


def test_tensorflows_coordinator_reports_an_error_by_its_class_and_text():
    """TensorFlow 1's `Coordinator.request_stop` logs `Error reported to Coordinator: %s, %s` with the error's
    type and the error, through absl (glog's prefix): that error. A tuple of classes is no error's text."""
    exc = capture(lambda: _call_method(object()))
    (line,) = fmt.glog([f"Error reported to Coordinator: {type(exc)}, {exc}"], level="INFO", where="coordinator.py:224")
    (event,) = assert_same(f"{line}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "AttributeError", str(exc))
    assert assert_same(f"ERROR: expected one of ({type(exc)}, {KeyError})\n".encode()) == []


@pytest.mark.parametrize("name", ["httpx.ReadTimeout", "litellm.Timeout", "requests.ConnectTimeout", "socket.timeout"])
def test_an_http_clients_timeout_named_without_the_suffix_is_an_error(name):
    """The class printed under its package, alone and at a traceback's end; another module's `Timeout` is a
    setting's name."""
    module, _, cls = name.rpartition(".")
    timeout = type(cls, (Exception,), {"__module__": module})
    exc = raised(timeout("The read operation timed out"))
    lines = text_of(exc).splitlines()
    assert lines[-1] == f"{name}: The read operation timed out"
    (bare,) = assert_same(f"{lines[-1]}\n".encode())
    assert (bare.kind, bare.root.exception_type, bare.root.message) == (EventKind.BARE, name, str(exc))
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert assert_same(b"config.Timeout: 30\nself.timeout: 30 seconds\n### socket.timeout\nhttpx.ReadTimeout\n") == []


@pytest.mark.parametrize("head", ["2024-03-01T10:00:00.000000Z ERROR ", ""], ids=("as written", "time and level cut"))
def test_a_routers_relay_of_a_model_servers_error_class(head):
    """A Rust router's tracing line relaying the Python shard's error as the shard words it (`Unexpected
    <class 'RuntimeError'>: ...`): that error, with or without the line's level; not at a lower level."""
    exc = raised(RuntimeError("CUDA error: device-side assert triggered"))
    said = (f"infer:send_error: text_generation_router::infer: router/src/infer.rs:665: Request failed during generation: "
            f"Server error: Unexpected {type(exc)}: {exc}")
    (event,) = assert_same(f"{head}{said}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "RuntimeError", str(exc))
    assert assert_same(f"2024-03-01T10:00:00.000000Z  INFO {said}\n".encode()) == []


@pytest.mark.parametrize("module", ["cv2", "socket", "struct"])
def test_a_modules_class_named_error_alone_is_an_error(module):
    """OpenCV's `cv2.error` and the standard library's C modules name their exception class `error`: an
    exception line alone with it is an error; another module's `error` is a logger's name or a word."""
    said = f"{module}.error: OpenCV(4.10.0) color.cpp:196: error: (-215:Assertion failed) !_src.empty() in function"
    (event,) = assert_same(f"{said}\n".encode())
    assert (event.kind, event.root.exception_type) == (EventKind.BARE, f"{module}.error")
    assert assert_same(b"gunicorn.error: Booting worker with pid: 123\nuvicorn.error: Started server process\n") == []


@pytest.mark.parametrize("place", ["/app/plugins/gptAttentionCommon.cpp:320", "/src/cpp/runtime/tllmBuffers.h:131", ""])
def test_a_cxx_exception_in_a_logged_error_line_is_a_notice_raised_where_its_text_says(place):
    """TensorRT-LLM's logger (`[TensorRT-LLM][ERROR] ` before what()), the C++ type named with `::`; its checks end
    what() with the C++ file and line they failed at (a header's too), which is then its site, as in a terminate's."""
    what = "[TensorRT-LLM][ERROR] Assertion failed: d == a + length" + (f" ({place})" if place else "")
    event = only(["[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB",
                  f"[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: {what}",
                  "1       0x7f6ce803be0b /opt/tritonserver/backends/tensorrtllm/libnvinfer_plugin_tensorrt_llm.so.9(+0x35e0b)"])
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.NOTICE, "tensorrt_llm::common::TllmException", what)
    site = event.root.raise_site
    assert (site and f"{site.path}:{site.lineno}") == (place or None)
    assert events(["[TensorRT-LLM][INFO] retrying after tensorrt_llm::common::TllmException: busy"]) == []


def _postprocess(scores: list) -> int:
    return scores[0] + None


@pytest.mark.parametrize("form", ["glog", "torch_glog"])
def test_an_exception_in_a_glog_error_line_is_a_notice(form):
    """glog names the level by a letter (`E1204 ...`): Triton's Python backend reports a model's error so."""
    exc = capture(lambda: _postprocess([1]))
    said = f"Failed to process the request(s) for model instance 'llm_0_0', message: {traceback.format_exception_only(exc)[0].strip()}"
    write = fmt.glog if form == "glog" else fmt.torch_glog
    lines = [*write(["successfully loaded 'llm'"], level="INFO"), *write([said])]
    (event,) = assert_same("\n".join([*lines, ""]).encode())  # (the fast path alike)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "TypeError", str(exc))
    assert events(write([said], level="INFO")) == events(write([said], level="WARNING")) == []


def _bitsandbytes_setup():
    raise RuntimeError("""
        CUDA Setup failed despite GPU being available. Please run the following command to get more information:

        python -m bitsandbytes
        """)


@pytest.mark.parametrize("cut", [0, -5], ids=("traceback", "exception-line-on"))
def test_a_message_that_begins_with_a_line_break_is_read_from_its_first_line_of_text(cut):
    """A triple-quoted message: `RuntimeError: ` alone, its text indented on the lines below."""
    lines = text_of(capture(_bitsandbytes_setup)).splitlines()
    assert "RuntimeError: " in lines
    event = only(["INFO loading", *lines[cut:], "INFO next"])
    assert event.root.exception_type == "RuntimeError"
    assert event.root.message.startswith("\n        CUDA Setup failed despite GPU being available. Please run the")
    (incident,) = incidents(["INFO loading", *lines[cut:]])
    shown = incident_view(incident).message  # from its first line of text, dedented
    assert shown[0] == "CUDA Setup failed despite GPU being available. Please run the following command to get more information:"


def test_an_exception_named_in_an_info_line_is_not_an_error():
    assert events(["2026-12-03 07:28:06,675 - trainer - INFO - retrying after OSError: [Errno 28] No space"]) == []


def test_a_note_holding_a_traceback_is_not_a_second_error():
    lines = forms.traceback_in_a_note()
    assert sum(line.startswith("Traceback") for line in lines) == 2
    event = only(lines)
    assert event.root.exception_type == "ValueError" and event.root.raise_site.function == "_load_shard"
    assert "_worker_step" in event.root.message  # the note is text of the message


def test_two_tracebacks_back_to_back_are_two_errors():
    lines = forms.traceback_in_a_note()
    first = lines[:lines.index("Traceback (most recent call last):", 1)]  # the error without its note
    assert len(events(first + first)) == 2  # the same error printed twice
    note = lines[len(first):]
    other = [*note[:-2], "KeyError: 'model.layers.0.mlp.gate_up_proj.input_scale'"]  # inner frames, another error
    assert [e.root.exception_type for e in events(first + other)] == ["ValueError", "KeyError"]


def _add_dll_directory():
    try:
        raise OSError(22, "[WinError 123] The filename, directory name, or volume label syntax is incorrect")
    except OSError as err:
        raise SystemError(" returned a result with an error set") from err  # (as a C function's wrapper words it)


def test_an_error_named_above_its_chain_with_its_message_spaced_otherwise_is_its_echo():
    """QGIS's dialog names the chain's last error above the traceback; the chain prints that message after
    one blank more (`SystemError:  returned ...`): the same error told first, one record with the chain, whose root
    is the root cause."""
    exc = capture(_add_dll_directory)
    lines = ["An error has occurred while executing Python code: ", "", "SystemError: returned a result with an error set ",
             *text_of(exc).splitlines(), "", "Python version: 3.7.0"]
    (found,) = incidents(lines)
    assert (found.info.exception_type, found.is_run_root, found.event.chain[-1].short_type) == ("OSError", True, "SystemError")


def _check_infinite_loop():
    raise Exception("Possible infinite loop.")


def _run_screen():
    _check_infinite_loop()


def test_an_error_told_with_its_games_frames_then_its_whole_stack_is_the_whole_one():
    """Ren'Py reports the frames of the game's own code first, then the full traceback: the same error, whose
    raise site is the full one's."""
    exc = capture(_run_screen)
    lines = forms.renpy_report(exc, game_frames=2)
    (root,) = [i for i in incidents(lines) if i.is_run_root]
    assert root.info.frames[-1].function == "_check_infinite_loop" and len(root.info.frames) == 3
    # (the same error far below is another time it failed: the first stays the root)
    cut = lines.index("", lines.index("While running game code:"))
    apart = [*lines[:cut], *(f"INFO 12-04 10:00:0{k} [game.py:1] step {k}" for k in range(9)), *lines[cut:]]
    assert [i.info.frames[-1].function for i in incidents(apart) if i.is_run_root] == ["_run_screen"]


def _warm_up():
    try:
        {"object": "error"}["choices"]
    except KeyError:
        detail = traceback.format_exc()
    raise ValueError(f"Warmup failed - Please make sure benchmark arguments are correctly specified.\nError: {detail}")


@pytest.mark.parametrize("label", ["Error", "Details"])
def test_a_message_whose_next_line_labels_a_traceback_holds_its_cause(label):
    """An error whose message's next line labels a traceback formatted into it (SGLang's bench_serving raises a failed
    warm-up request's so: `...specified.\\nError: Traceback ...`): that traceback's error is the cause, the root;
    alone or at the end of the wrapper's own traceback."""
    exc = capture(_warm_up)
    said = traceback.format_exception_only(exc)[0].replace("\nError: ", f"\n{label}: ").rstrip("\n").split("\n")
    for lines in (said, [*text_of(exc).rstrip("\n").split("\n")[:-len(said)], *said]):
        (event,) = assert_same("\n".join([*lines, ""]).encode())
        assert [(link.exception_type, link.message.split("\n")[0]) for link in event.chain] == [
            ("KeyError", "'choices'"), ("ValueError", str(exc).split("\n")[0])]
        assert event.root.raise_site.function == "_warm_up"


def test_torchs_accelerator_error_gets_the_page_written_for_the_runtime_error_it_was():
    """torch 2.8 raises CUDA's errors as `torch.AcceleratorError`, a RuntimeError with the same text: the page for
    that text; the C++ class in an abort too. Another class with the text gets none."""
    accelerator = type("AcceleratorError", (RuntimeError,), {"__module__": "torch"})
    said = "CUDA error: an illegal memory access was encountered"
    exc = raised(accelerator(said))
    root = run_root(text_of(exc).splitlines())
    assert (root.info.exception_type, root.diagnosis.pattern.id) == ("torch.AcceleratorError", "torch.cuda-illegal-memory-access")
    aborted = run_root(forms.cxx_terminate("c10::AcceleratorError"))
    assert aborted.diagnosis.pattern.id == "torch.cuda-illegal-memory-access"
    other = type("DeviceError", (Exception,), {"__module__": "mylib"})
    assert run_root(text_of(raised(other(said))).splitlines()).diagnosis.pattern is None


@pytest.mark.parametrize(("base", "said", "page"), [
    (RuntimeError, "CUDA out of memory. Tried to allocate 24.00 MiB (GPU 0; 10.76 GiB total capacity; 9.49 GiB already "
     "allocated; 13.44 MiB free; 9.63 GiB reserved in total by PyTorch)", "torch.cuda-out-of-memory-legacy"),
    (RuntimeError, "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, "
     "NCCL version 2.14.3", "torch.nccl-unhandled-system-error"),
    (RuntimeError, "The client socket has timed out after 1800s while trying to connect to (10.0.0.1, 29500).",
     "torch.store-client-connect-timeout"),
    (RuntimeError, "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 9.08G of 7.48G hbm. Exceeded hbm "
     "capacity by 1.60G.", "xla.hbm-exhausted-at-compile"),
    (Exception, "process 0 terminated with signal SIGKILL", "torch.spawned-process-killed-by-signal")])
def test_a_runtime_error_an_older_torch_raised_gets_the_page_of_the_subclass_it_raises_now(base, said, page):
    """torch before 1.13 raised its allocator's failure as a RuntimeError, before 2.1 NCCL's and the store's errors too
    (jaxlib XLA's before XlaRuntimeError, and torch.multiprocessing.spawn a plain Exception before ProcessExitedException):
    the pages written for the subclasses fit them; not another class."""
    path = "/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py"  # (raised in torch, as the old releases did)
    source = "def join(error):\n    raise error\n"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    scope: dict = {}
    exec(compile(source, path, "exec"), scope)  # (the source lines come from linecache)
    assert run_root(text_of(capture(lambda: scope["join"](base(said)))).splitlines()).diagnosis.pattern.id == page
    assert builtin_engine().matcher.match_message(f"{base.__name__}: {said}").pattern.id == page  # (analyzer explain)
    other = type("DeviceError", (Exception,), {"__module__": "mylib"})
    assert run_root(text_of(raised(other(said))).splitlines()).diagnosis.pattern is None


@pytest.mark.parametrize(("said", "page"), [("an illegal memory access was encountered", "torch.hip-illegal-memory-access"),
                                            ("invalid device function", "torch.hip-invalid-device-function"),
                                            ("invalid device ordinal", "torch.hip-invalid-device-ordinal")])
def test_rocms_runtime_errors_get_pages_in_rocms_words(said, page):
    """ROCm's torch says `HIP error: ...` with its own hint lines: its page, whose fixes are ROCm's (not CUDA's
    CUDA_LAUNCH_BLOCKING); as a RuntimeError or torch 2.8's AcceleratorError."""
    hints = ("HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
             "be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\nCompile with `TORCH_USE_HIP_DSA` to "
             "enable device-side assertions.")
    accelerator = type("AcceleratorError", (RuntimeError,), {"__module__": "torch"})
    for kind in (RuntimeError, accelerator):
        root = run_root(text_of(raised(kind(f"HIP error: {said}\n{hints}"))).splitlines())
        assert root.diagnosis.pattern.id == page
        assert "CUDA_LAUNCH_BLOCKING" not in " ".join(fix.text for fix in root.diagnosis.pattern.fixes)


def test_ascends_out_of_memory_gets_its_page():
    """torch_npu words its allocator's failure as PyTorch before 2.1 worded CUDA's, with NPU for GPU: the NPU's page,
    its values read; its fixes name torch_npu's allocator settings, not CUDA's."""
    said = ("NPU out of memory. Tried to allocate 11.50 GiB (NPU 5; 60.97 GiB total capacity; 55.28 GiB already "
            "allocated; 55.28 GiB current active; 4.65 GiB free; 55.44 GiB reserved in total by PyTorch) If reserved "
            "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    root = run_root(text_of(raised(RuntimeError(said))).splitlines())
    assert root.diagnosis.pattern.id == "torch.npu-out-of-memory"
    assert (root.diagnosis.params["npu"], root.diagnosis.params["size"]) == (5, "11.50 GiB")
    assert any("PYTORCH_NPU_ALLOC_CONF" in (fix.after or "") for fix in root.diagnosis.pattern.fixes)


def test_a_traceback_indented_by_a_blank_but_its_header_behind_an_elision():
    """A page's copy (vLLM's troubleshooting page): the header at the margin, `...` where the first frames were left out,
    then every frame one blank further in and the exception line one blank in: its exception line is read."""
    exc = capture(_long_raise)
    lines = text_of(exc).splitlines()
    pasted = ["Error executing method 'init_device'.", lines[0], "...", *(" " + line for line in lines[3:]), "..."]
    event = only(pasted)
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc)) and not event.truncated
    assert event.root.raise_site.function == "_long_raise"
    assert_same("\n".join([*pasted, ""]).encode())


def test_a_faulthandler_dump_whose_lines_a_relay_logged_each_as_a_record():
    """A launcher that logs each line its child prints as a record of its own (the clock ticking between them): the
    dump's thread head goes on with the report as its frames do, so the crash keeps its innermost frame."""
    lines = fmt.logging_each_line(forms.dumped_stack("Fatal Python error: Segmentation fault"), name="launcher",
                                  level="ERROR", step=timedelta(milliseconds=1))
    event = only(lines)
    assert (event.root.exception_type, event.root.raise_site.function) == ("Fatal Python error", "deep_in_the_model")
    assert_same("\n".join([*lines, ""]).encode())


@pytest.mark.parametrize(("inputs", "page"), [(3, "torch.compiled-graph-more-inputs"), (1, "torch.compiled-graph-fewer-inputs")])
def test_a_compiled_graph_called_with_another_number_of_inputs_gets_the_compile_cache_page(inputs, page):
    """TorchInductor's generated module unpacks its inputs on the first line of `call(args)`: called with more or
    fewer (a stale compile cache), the ValueError at that line gets the page; the same unpacking in a function of
    another name (a user's) does not."""
    path = "/root/.cache/vllm/torch_compile_cache/ea2d23402a/rank_0_0/inductor_cache/7a/c7anr47kmmdiy3q.py"
    for function, expected in (("call", page), ("collate", None)):
        source = f"def {function}(args):\n    arg0_1, arg1_1 = args\n    args.clear()\n"
        linecache.cache[path] = (len(source), None, source.splitlines(True), path)
        scope: dict = {}
        exec(compile(source, path, "exec"), scope)  # (the source lines come from linecache)
        called = scope[function]
        root = run_root(text_of(capture(lambda: called([0] * inputs))).splitlines())  # noqa: B023 (called at once)
        assert (root.diagnosis.pattern.id if root.diagnosis.pattern else None) == expected


def test_a_json_error_printed_as_its_base_class_and_an_older_watchdogs_abort_get_their_pages():
    """simplejson and Python 2 raised json's errors as ValueError, and torch before 2.2 aborted on the NCCL watchdog's
    error as a std::runtime_error: the pages written for JSONDecodeError and c10::DistBackendError (the watchdog's
    abort or the timeout it carries) fit them."""
    import json as json_module

    said = str(capture(lambda: json_module.loads("")))
    assert run_root(text_of(raised(ValueError(said))).splitlines()).diagnosis.pattern.id == "python.json-no-value"
    watchdog = ("[Rank 0] NCCL watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
                "1800085 milliseconds before timing out.")
    aborted = run_root(["terminate called after throwing an instance of 'std::runtime_error'", f"  what():  {watchdog}",
                        "Fatal Python error: Aborted", ""])
    assert aborted.info.exception_type == "std::runtime_error"
    assert aborted.diagnosis.pattern is not None and aborted.diagnosis.pattern.id.startswith("torch.nccl-watchdog-")


def test_a_program_subprocess_cannot_find_gets_its_page_and_a_bare_errno_2_does_not(tmp_path):
    """`No such file or directory: 'ninja'` raised by subprocess (a JIT build without ninja) gets the ninja page; the
    bare `[Errno 2] No such file or directory` of any other failure is not that text cut short."""
    missing = capture(lambda: subprocess.run(["ninja", "--version"], env={"PATH": str(tmp_path)}, check=False))
    assert str(missing) == "[Errno 2] No such file or directory: 'ninja'"
    assert run_root(text_of(missing).splitlines()).diagnosis.pattern.id == "deps.ninja-missing"
    bare = run_root(text_of(raised(FileNotFoundError(2, "No such file or directory"))).splitlines())
    assert bare.diagnosis.pattern is None or bare.diagnosis.pattern.id != "deps.ninja-missing"


@pytest.mark.parametrize("said", ["CUDA error:out of memory", "CUDA out of memory. T",
                                  "Worker failed with error 'CUDA out of memory. Tried to allocate 80.00 MiB.'"])
def test_ctranslate2s_out_of_memory_is_told_by_its_callers_frames_not_claimed_by_torchs_words(said):
    """CTranslate2's `CUDA failed with error out of memory`, raised into faster-whisper's frames, gets its page; torch's
    out-of-memory texts raised elsewhere (retyped, cut, wrapped) share its words and do not."""
    path = "/usr/lib/python3/site-packages/faster_whisper/transcribe.py"
    source = "def __init__(error):\n    raise error\n"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    scope: dict = {}
    exec(compile(source, path, "exec"), scope)  # (the source lines come from linecache)
    ours = run_root(text_of(capture(lambda: scope["__init__"](RuntimeError("CUDA failed with error out of memory"))))
                    .splitlines())
    assert ours.diagnosis.pattern.id == "ctranslate2.cuda-out-of-memory"
    other = run_root(text_of(raised(RuntimeError(said))).splitlines())
    assert other.diagnosis.pattern is None or other.diagnosis.pattern.id != "ctranslate2.cuda-out-of-memory"
