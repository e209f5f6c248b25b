"""Errors a log line reports by CPython's message alone, the class left out (`logger.error(f"...: {exc}")`):
the message's form names the class, where the line says it failed; not at a lower level, nor in words that
say nothing failed. The messages are CPython's own, raised for real."""

from __future__ import annotations

import logging
import traceback

import pytest

from analyzer.core.records import EventKind
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.test_fastpath import assert_same


class _Store:
    def __init__(self, host: str) -> None:
        self.host = host


def _missing_module():
    __import__("absent_module_6b1e")


def _unbound():
    if False:
        paths = []
    return paths


ERRORS = {
    "no attribute": lambda: _Store("a").setup_lmcache,
    "module attribute": lambda: logging.get_user_directory,
    "unexpected keyword": lambda: _Store("a", config={}),
    "missing arguments": lambda: _Store(),
    "too many positional": lambda: _Store("a", "b"),
    "operand types": lambda: "a" + 1,
    "not subscriptable": lambda: (lambda value: value[0])(None),
    "modulo by zero": lambda: 1 % 0,
    "no module": _missing_module,
    "name not defined": lambda: undefined_name_4c2a,  # noqa: F821
    "unbound local": _unbound,
    "index": lambda: (1, 2)[5],
    "int literal": lambda: int("<|im_end|>"),
    "unpack": lambda: [(a, b) for a, b in [(1, 2, 3)]],
}


@pytest.mark.parametrize("raise_it", ERRORS.values(), ids=ERRORS.keys())
def test_an_error_logged_by_its_message_alone_is_its_class(raise_it):
    exc = capture(raise_it)
    for level, said in ((logging.ERROR, f"Failed to start model server: {exc}"),
                        (logging.WARNING, f"Failed to initialize remote connection: {exc}"),
                        (logging.ERROR, f"Error loading config file / {exc}")):
        lines = fmt.logging_nameless(said, level=level)
        (event,) = assert_same("\n".join([*fmt.logging_nameless("serving", level=logging.INFO), *lines, ""]).encode())
        assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, type(exc).__name__, str(exc))
        assert event.context.endswith(said[:said.index(str(exc))].rstrip(" :/"))


@pytest.mark.parametrize("raise_it", [ERRORS["no attribute"], ERRORS["modulo by zero"]], ids=("attribute", "zero"))
def test_a_message_alone_says_nothing_failed_at_a_lower_level_or_without_such_words(raise_it):
    exc = capture(raise_it)
    quiet = [*fmt.logging_nameless(f"Failed to start, retrying: {exc}", level=logging.INFO),
             *fmt.logging_nameless(f"the cache says: {exc}", level=logging.WARNING),
             *fmt.glog([f"Failed to process the request(s): {exc}"], level="INFO"),
             f"WARN [router] Failed to process: {type(exc).__name__}: {exc}",  # (its class printed: others' to read)
             f"note: {exc}", str(exc)]
    assert assert_same("\n".join([*quiet, ""]).encode()) == []


def test_a_message_that_only_begins_in_cpythons_form_is_none():
    """The form must run to the line's end: more text after it is another message's."""
    assert assert_same(b"ERROR: Failed: 'Store' object has no attribute 'x' and the next step failed too\n") == []


def test_an_error_named_by_its_message_is_the_root_cause_only_where_no_other_is(tmp_path):
    """A failed optional import logged first (`Warning: Failed to import HTTP modules: No module named 'x'`) is not
    the run's root cause when an error with its class printed follows; alone it is. The incident says its class
    was inferred."""
    from analyzer.engine import Engine, Options
    from analyzer.sinks.serialize import incident_dict

    optional, fatal = capture(_missing_module), capture(ERRORS["index"])
    log = tmp_path / "server.log"
    log.write_text("\n".join([*fmt.logging_nameless(f"Failed to import HTTP modules: {optional}", level=logging.WARNING),
                              *text_of(fatal).splitlines(), ""]))
    incidents = [incident_dict(i) for i in Engine(Options()).analyse([str(log)]).incidents]
    assert [(i["exception_type"], i["inferred"], i["is_run_root"]) for i in incidents] == [
        ("ModuleNotFoundError", True, False), ("IndexError", False, True)]
    log.write_text("\n".join([*fmt.logging_nameless(f"Failed to import HTTP modules: {optional}"), ""]))
    (alone,) = [incident_dict(i) for i in Engine(Options()).analyse([str(log)]).incidents]
    assert (alone["exception_type"], alone["inferred"], alone["is_run_root"]) == ("ModuleNotFoundError", True, True)


def _node():
    return _encode([[1, 2]])


def _encode(image: list) -> float:
    return 224 / min(image[0][2], image[0][3])


@pytest.mark.parametrize("flush", [False, True], ids=("as printed", "indentation lost"))
def test_a_message_alone_above_a_stack_is_that_error_raised_where_the_stack_ends(flush):
    """ComfyUI's report (`Error occurred when executing X:`, the exception's str() alone, then the frames), and a
    paste that begins with `str(exc)`: one error, its class named by the message, raised at the innermost frame
    (frames flush left read in Python's order, as their source lines call the frames after them)."""
    exc = capture(_node)
    frames = "".join(traceback.format_tb(exc.__traceback__)).rstrip("\n").split("\n")
    frames = [line.strip() for line in frames] if flush else frames
    report = ["Error occurred when executing IPAdapterAdvanced:", "", str(exc), "", *frames]
    (event,) = assert_same("\n".join([*report, ""]).encode())
    innermost = traceback.extract_tb(exc.__traceback__)[-1]
    assert (event.root.exception_type, event.root.message, event.inferred) == ("IndexError", str(exc), True)
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == (innermost.filename, innermost.lineno)
    assert event.span.line_start == 3


def test_a_message_alone_is_no_error_without_a_stack_below_it():
    """Alone, far above a stack, or above a stack that ends in its own exception line (whose error it was)."""
    exc = capture(_node)
    assert assert_same(f"step 3\n{exc}\nstep 4\n".encode()) == []
    stack = text_of(exc).rstrip("\n").split("\n")
    far = assert_same("\n".join([str(exc), *["step"] * 5, *stack[1:-1], ""]).encode())
    assert [(e.root.exception_type, e.inferred) for e in far] == [("", False)]
    (own,) = assert_same("\n".join([str(exc), *stack, ""]).encode())
    assert (own.root.exception_type, own.inferred, own.span.line_start) == ("IndexError", False, 2)


def test_an_incident_shows_the_error_printed_with_its_class_not_the_message_that_echoed_it(tmp_path):
    """`Process Failed. Error Message - 'Engine' object has no attribute 'execute'`, then the error with its class:
    one incident, shown by the line that printed the class (an echo named by its message is no better evidence)."""
    from analyzer.engine import Engine, Options

    exc = capture(ERRORS["no attribute"])
    log = tmp_path / "job.log"
    log.write_text(f"Process Failed. Error Message - {exc}\n{type(exc).__name__}: {exc}\n")
    (incident,) = Engine(Options()).analyse([str(log)]).incidents
    assert (incident.count, incident.event.inferred, incident.event.span.line_start) == (2, False, 2)


def test_the_text_output_and_the_tui_say_the_class_was_named_by_the_message(tmp_path, capsys):
    """The reader is told the log printed no class, in the plain output and in the TUI's summary."""
    from analyzer.cli import main
    from analyzer.core.view import incident_view
    from analyzer.engine import Engine, Options
    from analyzer.tui.sections import summary

    exc = capture(ERRORS["modulo by zero"])
    log = tmp_path / "server.log"
    log.write_text("\n".join([*fmt.logging_nameless(f"Failed to start model server: {exc}"), ""]))
    said = "the log printed no class: ZeroDivisionError is what CPython's message names"
    main(["scan", str(log)])
    assert said in capsys.readouterr().out
    (incident,) = Engine(Options()).analyse([str(log)]).incidents
    assert said in summary(incident_view(incident)).plain
    printed = tmp_path / "printed.log"
    printed.write_text(f"{type(exc).__name__}: {exc}\n")
    (incident,) = Engine(Options()).analyse([str(printed)]).incidents
    assert "printed no class" not in summary(incident_view(incident)).plain


def _status_error(name: str, status: int, body: object | None) -> BaseException:
    """An OpenAI-compatible client's status error (openai's, anthropic's `_make_status_error_from_response`): the
    class its status names, its text `Error code: N`, then ` - ` and the reply's body where it had one."""
    error = type(name, (Exception,), {})(f"Error code: {status}" + (f" - {body}" if body is not None else ""))
    return capture(lambda: (_ for _ in ()).throw(error))


@pytest.mark.parametrize(("status", "name"), [(400, "BadRequestError"), (401, "AuthenticationError"), (404, "NotFoundError"),
                                              (422, "UnprocessableEntityError"), (429, "RateLimitError"),
                                              (503, "InternalServerError"), (418, "APIStatusError")])
def test_a_client_status_error_logged_by_its_text_alone_is_the_class_its_status_names(status, name):
    body = {"error": {"message": "Provider returned error", "code": status}}
    exc = _status_error(name, status, body if status != 503 else None)
    said = f"openrouter call failed after 3 attempts: {exc}"
    lines = [*fmt.logging_nameless("serving", level=logging.INFO), *fmt.logging_nameless(said, level=logging.ERROR)]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, name, str(exc))
    assert event.inferred
    quiet = fmt.logging_nameless(f"retrying the request: {exc}", level=logging.INFO)
    assert assert_same("\n".join([*quiet, "Error code: 429 is what the server answers when you ask too often", ""]).encode()) == []


def _task_group_failed():
    raise ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionError("stdio closed")])  # (as anyio's words it)


def test_a_task_groups_error_logged_by_its_text_alone_is_an_exception_group():
    """An MCP server's `logger.error(f"Fatal error running MCP server: {e}")` of its task group's error (anyio's,
    asyncio's), the sub-exception never shown: the group is the error, told twice."""
    exc = capture(_task_group_failed)
    lines = [*fmt.logging_nameless("Server initialized", level=logging.INFO),
             *fmt.logging_nameless(str(exc), level=logging.ERROR),
             *fmt.logging_nameless(f"Fatal error running MCP server: {exc}", level=logging.ERROR)]
    (event, again) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("ExceptionGroup", str(exc)) == (
        again.root.exception_type, again.root.message)
