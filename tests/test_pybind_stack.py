"""pybind11's text of a Python error that reached C++ (`error_already_set::what()`): the exception line, a
blank line, `At:` and the stack innermost first. Triton's Python backend reports a model's errors so: in
its server log (glog), and to the client, whose own exception's message then holds it."""

from __future__ import annotations

import json
import traceback

import pytest

from analyzer.core.records import EventKind
from analyzer.core.scan import events_from_lines
from tests import logformats as fmt
from tests.failureforms import pybind_what
from tests.realtb import capture
from tests.support import NO_NOTICES
from tests.test_fastpath import assert_same


def _postprocess(scores: list) -> int:
    return scores[0] + None


def _execute(requests: list) -> int:
    return _postprocess(requests)


class InferenceServerException(Exception):
    """tritonclient's error: the server's message, pybind11's text included."""


def _infer(message: str) -> None:
    raise InferenceServerException(message)


def _expected_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    return [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)]


def _events(lines: list[str]):
    return assert_same("\n".join([*lines, ""]).encode())  # (the fast path alike)


@pytest.mark.parametrize("level", ["ERROR", ""], ids=("error line", "level letter lost"))
def test_a_bare_error_in_a_glog_line_with_pybinds_stack(level):
    exc = capture(lambda: _execute([1]))
    what = pybind_what(exc)
    lines = [*fmt.glog(["Preinit finished."], level="INFO"), *fmt.glog(what[:1], level=level or "ERROR"), *what[1:],
             *fmt.glog(["Finalizing"], level="INFO")]
    if not level:
        lines[1] = lines[1][1:]
    (event,) = _events(lines)
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)
    assert (event.span.line_start, event.span.line_end) == (2, 2 + len(what) - 1)


def test_a_logged_error_naming_a_python_error_with_pybinds_stack():
    """Triton: `Failed to process the request(s) ..., message: TypeError: ...`, the stack under it."""
    exc = capture(lambda: _execute([1]))
    what = pybind_what(exc)
    said = f"Failed to process the request(s) for model instance 'llm_0_0', message: {what[0]}"
    (event,) = _events([*fmt.glog([said]), *what[1:], *fmt.glog(["Waiting for in-flight requests"], level="INFO")])
    assert event.kind is EventKind.TRACEBACK
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)


def test_a_clients_exception_holding_the_servers_pybind_text():
    """The client's traceback: its exception's message ends in the server's error, whose stack follows it:
    that error, raised in the model's code, is the root cause, the client's its consequence."""
    server = capture(lambda: _execute([1]))
    what = pybind_what(server)
    client = capture(lambda: _infer("[StatusCode.INTERNAL] Failed to process the request(s) for model instance "
                                    "'llm_0_0', message: " + "\n".join(what)))
    (event,) = _events(["INFO sending the request", *"".join(traceback.format_exception(client)).rstrip("\n").split("\n")])
    root, outer = event.chain
    assert (root.exception_type, root.message) == ("TypeError", str(server))
    assert [(f.path, f.lineno, f.function) for f in root.frames] == _expected_frames(server)
    assert outer.exception_type.endswith("InferenceServerException") and outer.message.endswith(what[0])
    assert [f.function for f in outer.frames][-1] == "_infer"


def test_a_blank_line_after_a_bare_error_without_pybinds_stack_ends_it():
    exc = capture(lambda: _execute([1]))
    lines = [f"{type(exc).__name__}: {exc}", "", "At the end of the run: 3 requests failed", "ValueError: bad config"]
    events = _events(lines)
    assert [(e.kind, e.root.exception_type, e.span.line_start, e.span.line_end) for e in events] == [
        (EventKind.BARE, "TypeError", 1, 1), (EventKind.BARE, "ValueError", 4, 4)]


@pytest.mark.parametrize("form", ["glog", "json body"])
def test_pybinds_text_escaped_on_one_line_is_read_as_its_lines(form):
    """Triton writes the model's error whole on one glog line, its line breaks escaped (`message: TypeError:
    ...\\n\\nAt:\\n  /x/model.py(60): execute\\n`), and the HTTP client prints the same in the error body: the
    error, raised where its stack's first frame says."""
    exc = capture(lambda: _execute([1]))
    said = ("Failed to process the request(s) for model instance 'llm_0_0', message: "
            + "\n".join(pybind_what(exc)) + "\n")
    if form == "glog":
        lines = [*fmt.glog(["Preinit finished."], level="INFO"), *fmt.glog([json.dumps(said)])]
    else:
        lines = ["$ curl -s localhost:8000/v2/models/ensemble/generate -d @req.json",
                 json.dumps({"error": f"in ensemble 'ensemble', {said}"})]
    assert len(lines) == 2
    (event,) = _events(lines)
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)


def test_an_error_a_line_at_info_level_names_is_one_where_pybinds_stack_follows():
    """Triton's Python backend logs a stub it could not start at INFO (`Failed to initialize Python stub for
    auto-complete: ModuleNotFoundError: ...`), the stack under it: that is the error. The same words at INFO with no
    stack under them, a blank line and other text after them, or a traceback's header right below them, are none."""
    exc = capture(lambda: _execute([1]))
    what = pybind_what(exc)
    said = f" Failed to initialize Python stub for auto-complete: {what[0]}"
    loading = fmt.glog(['"loading: Power:1"'], level="INFO", where="model_lifecycle.cc:473")
    (event,) = _events([*loading, *fmt.glog([said], level="INFO", where="pb_stub.cc:320"), *what[1:]])
    assert event.kind is EventKind.TRACEBACK
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)
    quiet = fmt.glog([said], level="INFO", where="pb_stub.cc:320")
    assert _events([*loading, *quiet, "", "Give Feedback / Get Help: https://example.com/issues", "", *quiet]) == []
    assert list(events_from_lines([*quiet, None, "", None, "loading: Power:1"], "t.log", NO_NOTICES)) == []  # (pauses
    # after it, as `tail -f` has them, show nothing: no stack that makes it an error has come)
    raised = "".join(traceback.format_exception(exc)).rstrip("\n").split("\n")
    (event,) = _events([*quiet, *raised])  # (the traceback's own error, not the quiet line led into it)
    assert (event.span.line_start, event.root.exception_type) == (2, "TypeError")


@pytest.mark.parametrize("stack", [True, False], ids=("pybind11 2.10+", "older: what() alone"))
def test_a_python_error_pybind11_threw_into_cs_terminate_is_that_error(stack):
    """A Python error raised in a callback that C++ called, never caught there: libstdc++'s terminate handler prints
    pybind11's exception and its what(), the Python error's line and (since pybind11 2.10) its stack under `At:`;
    the error is the Python one, the C++ abort follows from it."""
    exc = capture(lambda: _execute([1]))
    what = pybind_what(exc) if stack else pybind_what(exc)[:1]
    lines = ["Loading the graph", "terminate called after throwing an instance of 'pybind11::error_already_set'",
             f"  what():  {what[0]}", *what[1:], "Aborted (core dumped)"]
    (event, aborted) = _events(lines)
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [info.exception_type for info in event.chain] == ["TypeError", "pybind11::error_already_set"]
    assert event.chain[1].message == what[0]
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == (_expected_frames(exc) if stack else [])
    assert (event.span.line_start, event.span.line_end) == (2, 2 + len(what))
    assert aborted.root.exception_type == "SIGABRT"


def test_a_python_error_omniverse_kits_scripting_plugin_logged_with_pybinds_stack():
    """Isaac Sim's log: `2025-04-29 08:19:34 [6,447ms] [Error] [carb.scripting-python.plugin] AttributeError: ...`,
    pybind11's stack under it: the error, raised where the stack's first frame says."""
    exc = capture(lambda: _execute([1]))
    startup = ["[6.438s] [ext: isaacsim.core.prims-0.3.7] startup", "[6.495s] [ext: omni.warp-1.5.0] startup"]
    (event,) = _events([*startup, *fmt.omni_kit(pybind_what(exc)), *fmt.omni_kit(["[ext: omni.kit.browser] startup"],
                                                                                   level="Info", channel="omni.ext")])
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)


class _Response:
    """Stands for a pybind11 class whose constructor could not take the arguments it was called with."""


def _incompatible(**kwargs) -> None:
    """pybind11's TypeError for a call none of a function's signatures takes: the signatures, a blank line, then the
    call's own arguments (its text as pybind11 writes it)."""
    raise TypeError("__init__(): incompatible constructor arguments. The following argument types are supported:\n"
                    "    1. c_python_backend_utils.InferenceResponse(output_tensors: List[c_python_backend_utils.Tensor], "
                    "error: c_python_backend_utils.TritonError = None)\n    2. c_python_backend_utils.InferenceResponse()\n\n"
                    f"Invoked with: kwargs: {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}")


@pytest.mark.parametrize("form", ["traceback", "pybind's stack"])
def test_pybinds_message_of_arguments_it_could_not_take_keeps_the_calls_own_paragraph(form):
    """`incompatible constructor arguments. The following argument types are supported:`, the signatures, a blank
    line, `Invoked with: ...`: one message, in a traceback and in pybind11's own text (Triton's report)."""
    exc = capture(lambda: _incompatible(error=_Response()))
    lines = "".join(traceback.format_exception(exc)).rstrip("\n").split("\n") if form == "traceback" else pybind_what(exc)
    (event,) = _events(["I1130 starting", *lines, "", "I1130 next request"])
    assert (event.root.exception_type, event.root.message) == ("TypeError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == _expected_frames(exc)
