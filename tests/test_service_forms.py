"""Errors as services print them for their users: Dagster's serialised error (the outermost first, its cause
after it), Airflow 3's task log page (the exception line above frames without source), the database
driver's error SQLAlchemy wraps (its class in parentheses), bare, logged, or at the end of a chain, and an
error tracker's title (the class alone, the message below it)."""

from __future__ import annotations

import sqlite3
import subprocess
import traceback

import pytest

from analyzer.core.records import EventKind, Link
from tests import failureforms as forms
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.test_copied_forms import AROUND, _tracebacks
from tests.test_fastpath import assert_same
from tests.test_forms import run_root


def _fetch(batch: dict) -> list:
    return batch["rows"]


def _run_op() -> None:
    try:
        _fetch({})
    except KeyError as err:
        raise RuntimeError('Error occurred while executing op "load":') from err


@pytest.mark.parametrize("ui", [False, True], ids=("text", "its UI's page"))
@pytest.mark.parametrize("comma", [False, True], ids=("frames", "frames joined by a comma"))
def test_dagsters_error_with_its_cause_below_it(comma, ui):
    exc = capture(_run_op)
    (event,) = _tracebacks([AROUND[0], *forms.dagster_error(exc, comma, ui), AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    assert (event.root.exception_type, event.chain[-1].link) == ("KeyError", Link.CAUSE)
    assert not event.truncated


def test_dagsters_error_of_2020_its_frames_without_their_label():
    exc = capture(lambda: _fetch({}))
    (event,) = _tracebacks([AROUND[0], "", *forms.dagster_error(exc, label=False), "", AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def test_dagsters_error_alone_and_its_cause_alone():
    """The page shows one error, or the user copied only the cause's part."""
    cause = capture(lambda: _fetch({}))
    (event,) = _tracebacks([AROUND[0], *forms.dagster_error(cause), AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(cause)
    wrapper = forms.dagster_error(capture(_run_op))
    at = next(k for k, line in enumerate(wrapper) if line.startswith("KeyError"))
    (event,) = _tracebacks([AROUND[0], *wrapper[at:], AROUND[1]])
    assert (event.root.exception_type, event.root.frames[-1].function) == ("KeyError", "_fetch")
    events = assert_same(f"{AROUND[0]}\nKeyError: 'rows'\n\nStack Trace: none kept\nINFO next\n".encode())
    assert [(e.kind, e.span.line_start, e.span.line_end) for e in events] == [(EventKind.BARE, 2, 2)]


def test_airflow_3s_task_log_copied_from_its_page():
    exc = capture(lambda: _fetch({}))
    lines = ['[2025-07-07, 13:41:04] ERROR - Task failed with exception: source="task"', *forms.airflow3_page(exc)]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames]
    assert (event.span.line_start, event.span.line_end) == (3, len(lines))  # (its last frame: not the blank after it)


def _missing_table() -> sqlite3.OperationalError:
    error = capture(lambda: sqlite3.connect(":memory:").execute("SELECT * FROM users"))
    assert isinstance(error, sqlite3.OperationalError)
    return error


class OperationalError(Exception):
    """SQLAlchemy's wrapper of a driver's error, as its DBAPIError words it."""

    __module__ = "sqlalchemy.exc"

    def __init__(self, orig: BaseException) -> None:
        super().__init__(f"({type(orig).__module__}.{type(orig).__name__}) {orig}\n"
                         "(Background on this error at: https://sqlalche.me/e/20/e3q8)")


def _query() -> None:
    try:
        sqlite3.connect(":memory:").execute("SELECT * FROM users")
    except sqlite3.OperationalError as err:
        raise OperationalError(err) from err


def test_a_drivers_error_that_sqlalchemy_wraps():
    driver = _missing_table()
    exc = capture(_query)
    (event,) = _tracebacks([AROUND[0], *text_of(exc).rstrip("\n").split("\n"), AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)  # (the chain says it: nothing added)
    bare = text_of(exc).rstrip("\n").split("\n")[-2:]
    (event,) = assert_same("\n".join([AROUND[0], *bare, AROUND[1]]).encode())
    assert [(link.exception_type, link.message.split("\n")[0], link.link) for link in event.chain] == [
        ("sqlite3.OperationalError", str(driver), Link.FIRST), ("sqlalchemy.exc.OperationalError", bare[0].split(": ", 1)[1], Link.CAUSE)]
    logged = f"[2022-09-06 10:27:49,217] {{taskinstance.py:1150}} ERROR - (sqlite3.OperationalError) {driver}"
    (event,) = assert_same(f"{AROUND[0]}\n{logged}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "sqlite3.OperationalError", str(driver))
    assert assert_same(f"[2022-09-06 10:27:49,217] {{dag.py:10}} INFO - (sqlite3.OperationalError) {driver}\n"
                       "ValueError: (torch.Size([2])) shapes differ\n".encode())[0].root.exception_type == "ValueError"
    # (behind the logger's name, as MLflow's server logs it: `%(asctime)s %(levelname)s %(name)s: %(message)s`)
    named = f"2019/09/09 13:34:26 ERROR mlflow.cli: (sqlite3.OperationalError) {driver}"
    (event,) = assert_same(f"{AROUND[0]}\n{named}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.NOTICE, "sqlite3.OperationalError", str(driver))
    assert assert_same(f"{named.replace('ERROR', 'INFO')}\n".encode()) == []


def _checkout() -> None:
    raise TimeoutError("QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00")


def test_an_error_trackers_title_the_class_alone_its_message_below():
    exc = capture(_checkout)
    events = assert_same("\n".join([*forms.tracker_title(exc), ""]).encode())
    assert [(event.kind, event.root.exception_type, event.root.message.strip()) for event in events] == [
        (EventKind.BARE, "TimeoutError", str(exc))]


def test_a_class_raised_with_no_message_keeps_its_line_alone():
    """`assert x` and Ctrl-C print their class alone: the line after it is not their message, nor is the
    line after a class alone behind a prefix (a log's record)."""
    events = assert_same(b"AssertionError\nProcess SpawnProcess-1:\nKeyboardInterrupt\nshutting down\n"
                         b"[rank0]: RuntimeError\n[rank0]: shutting down\n")
    assert [(event.root.exception_type, event.root.message) for event in events] == [
        ("AssertionError", ""), ("KeyboardInterrupt", ""), ("RuntimeError", "")]


def _import_module_utils():
    import module_utils  # noqa: F401  (not installed, as on the host an Ansible task ran on)


def test_errors_command_line_tools_name_in_their_own_words():
    """Ansible names a task's error in a sentence (`... use -vvv. The error was: ModuleNotFoundError: ...`);
    gcloud's crash handler puts the class in parentheses (`ERROR: gcloud crashed (ValueError): ...`)."""
    missing, bad = capture(_import_module_utils), capture(lambda: int("0 (must be > 0)"))
    ansible = ("An exception occurred during task execution. To see the full traceback, use -vvv. The error was: "
               + traceback.format_exception_only(missing)[0].rstrip("\n"))
    gcloud = f"ERROR: gcloud crashed ({type(bad).__name__}): {bad}"
    events = assert_same(f"{ansible}\nfatal: [host]: FAILED! => {{}}\n{gcloud}\n".encode())
    assert [(e.root.exception_type, e.root.message, e.span.line_start) for e in events] == [
        ("ModuleNotFoundError", str(missing), 1), ("ValueError", str(bad), 3)]
    # (not at a lower level, nor without one)
    assert assert_same(f"INFO: the error was: ValueError: {bad}\ngcloud crashed (ValueError): {bad}\n".encode()) == []


def _build_script():
    config = None
    return config.sections()  # (as a PlatformIO build script reads a board's settings it did not get)


def test_an_error_scons_reports_for_a_build_script():
    """PlatformIO's builds run on SCons, which reports an error in a build script with its exception line
    first, then the frames oldest first; the source lines under them."""
    exc = capture(_build_script)
    lines = ["Processing esp32dev (platform: espressif32)", *forms.scons_error(exc), "[FAILED] Took 1.21 seconds"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [(path, line, code) for path, line, _, code in actual.frames] == [  # (SCons names no function)
        (path, line, code) for path, line, _, code in expected.frames]
    assert (event.kind, event.span.line_start, event.span.line_end) == (EventKind.TRACEBACK, 2, len(lines) - 1)


def test_errors_users_name_in_their_words_and_modules_whose_class_is_error():
    """`I am getting this error: TypeError: ...` in a sentence; pygame's and lgpio's class named `error`, pywin32's
    `com_error`; an error's repr ending a tool's line."""
    bad = capture(lambda: len(5))  # type: ignore[arg-type]
    events = assert_same(f"I am getting this error: {type(bad).__name__}: {bad}.. Any ideas?\n"
                         "pygame.error: Couldn't open res/bg.png\nlgpio.error: 'GPIO busy'\n"
                         "pywintypes.com_error: (-2147221005, 'Invalid class string', None, None)\n".encode())
    assert [(e.root.exception_type, e.root.message) for e in events] == [
        ("TypeError", f"{bad}.. Any ideas?"), ("pygame.error", "Couldn't open res/bg.png"), ("lgpio.error", "'GPIO busy'"),
        ("pywintypes.com_error", "(-2147221005, 'Invalid class string', None, None)")]
    assert assert_same(b"INFO: retrying after error: TypeError: x\nthe game.error: not a class\n") == []
    # its repr at the end of a tool's line (`{exc!r}`), not at a lower level
    events = assert_same(f"Run 0jbbwa4t errored: {bad!r}\nCOMET ERROR: Failed to create experiment, reason: {bad!r}\n"
                         f"WARNING retrying after: {bad!r}\n".encode())
    assert [(e.root.exception_type, e.root.message, e.context) for e in events] == [
        ("TypeError", str(bad), "Run 0jbbwa4t errored"), ("TypeError", str(bad), "COMET ERROR: Failed to create experiment, reason")]


def _rule_shell():
    subprocess.run(["false"], check=True)  # (a rule's shell command that failed)


@pytest.mark.parametrize("new", [False, True], ids=("snakemake 7", "snakemake 8"))
def test_an_error_snakemake_reports_for_a_rule(new):
    """Snakemake's report: its wrapper's class alone, the error's class and its place in the workflow, the
    message under it, the frames without source lines: the error is the wrapped one, its frames read."""
    exc = capture(_rule_shell)
    lines = ["Error in rule create_workload:", "    jobid: 3", "",
             *forms.snakemake_error(exc, "/w/rules/queries.smk", 165, new), "Shutting down, this might take some time.",
             "Exiting because a job execution failed. Look above for error message"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == ("CalledProcessError", str(exc))
    assert [frame[:3] for frame in actual_chain(event.chain)[0].frames] == [frame[:3] for frame in expected.frames]
    assert (event.span.line_start, event.span.line_end) == (4, len(lines) - 2)


def test_snakemakes_own_errors_and_an_input_functions_error():
    """Snakemake's own error names its message under its class; an input function's error is the message of
    the class Snakemake wraps it in (the error is that one)."""
    missing = ["MissingRuleException:", "No rule to produce reads (if you use input functions make sure that they don't "
               "raise unexpected exceptions)."]
    key = capture(lambda: {}["sample1"])
    wrapped = ["InputFunctionException in line 5 of /rules/map.smk:", traceback.format_exception_only(key)[0].rstrip("\n"),
               "Wildcards:", "sample=sample1"]
    events = assert_same("\n".join(["Building DAG of jobs...", *missing, "", *wrapped, ""]).encode())
    assert [(e.root.exception_type, e.root.message.split("\n")[0]) for e in events] == [
        ("MissingRuleException", missing[1]), ("KeyError", "'sample1'")]
    # (its class's message indented below it, as any bare exception line's; a class and words that name no place)
    events = assert_same(b"RuleException:\n  indented words\n\nValueError in the code: not a place\n")
    assert [(e.root.exception_type, e.root.message) for e in events] == [("RuleException", "indented words")]


@pytest.mark.parametrize("new", [False, True], ids=("snakemake 7", "snakemake 8"))
def test_snakemakes_own_error_placed_in_the_workflow_is_raised_there(new):
    """Snakemake's own error with its place and no frames (a rule's input missing): raised at that line of the
    Snakefile, as far as the report tells."""
    place = "in file /w/Snakefile, line 167" if new else "in line 167 of /w/Snakefile"
    lines = ["Building DAG of jobs...", f"MissingInputException {place}:", "Missing input files for rule fix_query:",
             "    output: intermediate/fixed_queries/q.fa", "    affected files:", "        queries/q.fa", ""]
    (event,) = assert_same("\n".join(lines).encode())
    assert (event.root.exception_type, event.root.message.split("\n")[0]) == ("MissingInputException", lines[2])
    assert (event.root.raise_site.path, event.root.raise_site.lineno) == ("/w/Snakefile", 167)


def _insert_one(collection: dict):
    return _check_write_response({"writeErrors": [{"errmsg": "E11000 duplicate key error collection: history"}]}, collection)


def _check_write_response(result: dict, collection: dict):
    raise KeyError(result["writeErrors"][0]["errmsg"]) if "history" in collection else None


def test_sentrys_raw_stack_with_frames_left_out():
    """Sentry's raw stack: the exception line first, how many frames it left out, then the innermost frames in
    Python's order: the last one listed is where the error was raised."""
    exc = capture(lambda: _insert_one({"history": []}))
    lines = forms.sentry_raw(exc, shown=2)
    assert lines[1] == "(2 additional frame(s) were not displayed)"  # (capture and the lambda)
    (event,) = assert_same("\n".join([*lines, "", "Error handling request"]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message,
                                                                      expected.frames[-2:])
    assert event.truncated  # (frames left out)


def _lambda_handler(event: dict) -> str:
    return event["Records"][0]["s3"]["bucket"]["name"]  # (a handler given a test event without the S3 record)


@pytest.mark.parametrize("legacy, indent", [(False, 2), (False, None), (True, 4), (True, None)],
                         ids=("console", "invoke's file", "python 3.6 console", "python 3.6 file"))
def test_the_error_aws_lambda_returns(legacy, indent):
    """AWS Lambda's runtime returns the error as JSON (its keys in any order, indented or on one line): its class,
    its message and its stack, the frames as Python formats them or as lists; the runtime's own errors have none."""
    exc = capture(lambda: _lambda_handler({"Records": [{}]}))
    lines = ["Response", *forms.lambda_response(exc, legacy, indent), "", "Function Logs", "START RequestId: 8da27dae"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message, expected.frames)
    assert (event.kind, event.span.line_start, event.span.line_end) == (EventKind.TRACEBACK, 2 + bool(indent), len(lines) - 3)
    own = ['{"errorMessage": "Handler \'foo\' missing on module \'lambda_function\'", "errorType": "Runtime.HandlerNotFound", '
           '"stackTrace": []}', "[ERROR] Runtime.HandlerNotFound: Handler 'foo' missing on module 'lambda_function'"]
    assert [(e.root.exception_type, e.root.message, e.kind) for e in assert_same("\n".join(own).encode())] == [
        ("Runtime.HandlerNotFound", "Handler 'foo' missing on module 'lambda_function'", kind) for kind in (EventKind.BARE, EventKind.NOTICE)]
    # (an object with such a key that names no error; Step Functions' `cause` holding the object)
    assert assert_same(b'{\n  "stackTrace": "none",\n  "status": 200\n}\n') == []
    assert assert_same(b'    "errorType": "Ktransformers\'\n') == []  # (its string never closed: no class named; found by fuzzing)
    nested = ['{', '  "error": "KeyError",', '  "cause": {', *(f"    {line}" for line in forms.lambda_response(exc)), '  }', '}']
    assert [e.root.exception_type for e in assert_same("\n".join(nested).encode())] == ["KeyError"]


@pytest.mark.parametrize("flat", [False, True], ids=("core tools", "portal, on one line"))
def test_azure_functions_reporting_a_python_functions_failure(flat):
    """Azure Functions' host wraps the worker's error: `Result: Failure`, `Exception: ` and the exception line, then
    `Stack: ` and the frames (on one line in the portal). The error is the worker's, raised where its stack ends."""
    exc = capture(lambda: _lambda_handler({}))
    lines = ["[2024-05-01T10:00:00.000Z] Executing 'Functions.HttpTrigger'", *forms.azure_failure(exc, flat),
             "[2024-05-01T10:00:00.010Z] Executed 'Functions.HttpTrigger' (Failed, Id=1f2e, Duration=10ms)"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames]
    assert (event.span.line_start, event.span.line_end) == (2 + (not flat), len(lines) - 1)  # (from the worker's line)
    # a function that failed to load: the wrapper a .NET exception, no stack
    unloaded = ["Microsoft.Azure.WebJobs.Script.Workers.Rpc.RpcException: Result: Failure",
                "Exception: ModuleNotFoundError: No module named 'pandas'. Cannot find module.", "Please check the requirements."]
    (event,) = assert_same("\n".join(unloaded).encode())
    assert (event.root.exception_type, event.root.message.split("\n")[0], event.kind) == (
        "ModuleNotFoundError", "No module named 'pandas'. Cannot find module.", EventKind.BARE)


@pytest.mark.parametrize("console", [False, True], ids=("listed", "its console's copy"))
def test_google_error_reportings_stack_newest_first(console):
    """Error Reporting lists the frames newest first as `at function (path:line)` under the exception line (its
    console's copy: a blank line under it, `at .function ( path:line )`)."""
    exc = capture(lambda: _lambda_handler({}))
    lines = forms.error_reporting(exc, console)
    (event,) = assert_same("\n".join([*lines, "", "Showing 1 of 1 events"]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames]
    assert assert_same(b"ValueError: x\nat Object.<anonymous> (/app/index.js:3:9)\n")[0].chain[-1].frames == ()


def test_rs_reticulate_reporting_a_python_error():
    """reticulate: the exception line, a blank, `Detailed traceback:` and the frames in Python's order."""
    exc = capture(lambda: _lambda_handler({}))
    lines = ["ee_Initialize()", *forms.reticulate_error(exc), "Calls: ee_Initialize -> py_call_impl"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert (event.span.line_start, event.span.line_end) == (3, len(lines) - 1)


def test_streamlits_error_box_copied_as_markdown():
    """The box's class and colon in bold (`**KeyError:** 'Records'`), then `Traceback:` and the frames."""
    exc = capture(lambda: _lambda_handler({}))
    box = forms.streamlit_error_box(exc)
    kind, message = box[0].split(": ", 1)
    (event,) = assert_same("\n".join([f"**{kind}:** {message}", *box[1:], ""]).encode())
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message, len(event.root.frames)) == (
        expected.exception_type, expected.message, len(expected.frames))


def test_werkzeugs_debugger_page_copied_as_text():
    """Flask's debugger page: its heading has no colon, its frames are flush left; the error is the traceback's (an
    exception line above it that says the same is its echo)."""
    exc = capture(lambda: _lambda_handler({}))
    lines = forms.werkzeug_debugger_page(exc)
    events = assert_same("\n".join([*lines, ""]).encode())
    (traceback_event,) = [event for event in events if event.kind is EventKind.TRACEBACK]
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(traceback_event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames]
    assert (traceback_event.span.line_start, traceback_event.span.line_end) == (4, len(lines) - 2)
    root = run_root(lines)
    assert (root.event.kind, root.info.frames[-1].function) == (EventKind.TRACEBACK, "_lambda_handler")


def _insert_tag():
    raise sqlite3.IntegrityError('duplicate key value violates unique constraint "taggit_tag_name_uniq"\n'
                                 "DETAIL:  Key (name)=(massachusetts) already exists.")


@pytest.mark.parametrize("shown", [2, 3], ids=("frames left out", "every frame"))
def test_sentrys_raw_stack_under_a_message_of_two_lines(shown):
    """The database's `DETAIL:` line under the exception line, a blank before Sentry's mark; or, every frame shown,
    no mark: the frames in Python's order right under the message."""
    exc = capture(lambda: _insert_tag())
    lines = forms.sentry_raw(exc, shown)
    if shown == 2:
        lines.insert(2, "")
    else:
        lines = [line for line in lines if not line.startswith("(") and line != "..."]
    (event,) = assert_same("\n".join([*lines, "", "Error handling request"]).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message,
                                                                      expected.frames[-shown:])


def test_netboxs_server_error_page():
    """NetBox's (and Nautobot's) page: the class as `type()` prints it, alone, then the message as a paragraph of
    its own, then the versions. A class of a module of exceptions reads as one whatever its name."""
    exc = capture(lambda: _insert_tag())
    lines = ["Server Error", "", "There was a problem with your request. Please contact an administrator.", "",
             "The complete exception is provided below:", "", str(type(exc)), "", *str(exc).split("\n"), "",
             "Python version: 3.9.2", "NetBox version: 3.6.4", "Plugins: ", "  netbox_bgp: 0.11.0"]
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.exception_type, event.root.message, event.kind) == ("sqlite3.IntegrityError", str(exc), EventKind.BARE)
    assert (event.span.line_start, event.span.line_end) == (7, 10)
    (event,) = assert_same(b"<class 'django.core.exceptions.ImproperlyConfigured'>\n\nstatuses are not defined\n")
    assert (event.root.exception_type, event.root.message) == ("django.core.exceptions.ImproperlyConfigured", "statuses are not defined")
    assert assert_same(b"<class 'int'>\n\n3\n") == []


def _rollover(path: str):
    return open(path)


def test_supervisors_one_line_reports_with_the_place():
    """supervisorctl's fault (`error: <class 'X'>, msg: file: F line: N`) and supervisord's log of an exception a
    channel raised, with asyncore's compact traceback (`(<class 'X'>:msg [file|function|line] ...)`)."""
    exc = capture(lambda: _rollover("/nonexistent/router0.log"))
    inner = traceback.extract_tb(exc.__traceback__)
    lines = ["root@host:~# supervisorctl update all", *forms.supervisorctl_fault(exc), *forms.asyncore_compact(exc)]
    fault, compact = assert_same("\n".join([*lines, ""]).encode())
    assert (fault.root.exception_type, fault.root.message, fault.kind) == ("FileNotFoundError", str(exc), EventKind.BARE)
    assert [(f.path, f.lineno) for f in fault.root.frames] == [(inner[-1].filename, inner[-1].lineno)]
    assert (compact.root.exception_type, compact.root.message) == ("FileNotFoundError", str(exc))
    assert [(f.path, f.lineno, f.function) for f in compact.root.frames] == [(f.filename, f.lineno, f.name) for f in inner]
    assert assert_same(b"error: <class 'int'>, 3: file: x.py line: 1\nlist (a:b [x|y|1])\n") == []
