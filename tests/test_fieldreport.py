"""Error reports that name the exception in labelled fields (core/fieldreport.py): Django's debug page as
copied from a browser, its copy-and-paste view, and ComfyUI's error report, built from real exceptions."""

from __future__ import annotations

import traceback

import pytest

from analyzer.core.records import EventKind
from tests.realtb import capture
from tests.test_fastpath import assert_same


class ProgrammingError(Exception):  # (named as Django's database errors are)
    pass


ProgrammingError.__module__ = "django.db.utils"


def _execute(sql):
    raise ProgrammingError('relation "blog_post" does not exist\nLINE 1: SELECT COUNT(*) FROM "blog_post"\n'
                           "                                    ^")


def _count_posts():
    return _execute('SELECT COUNT(*) FROM "blog_post"')


def _innermost(exc: BaseException) -> traceback.FrameSummary:
    return traceback.extract_tb(exc.__traceback__)[-1]


def _events(lines: list[str]):
    return assert_same("\n".join([*lines, ""]).encode())


@pytest.mark.parametrize("django", ["2.2.5", "5.0.9"])
def test_djangos_debug_page_copied_from_the_browser(django):
    """The page's summary table, copied: a tab after each field's name, the value under its field. (Its location
    names the function first before Django 3.2, the line first since.)"""
    exc = capture(_count_posts)
    where = _innermost(exc)
    location = (f"{where.filename} in {where.name}, line {where.lineno}" if django < "3.2"
                else f"{where.filename}, line {where.lineno}, in {where.name}")
    page = ["ProgrammingError at /admin/blog/post/", *str(exc).split("\n"), "Request Method:\tGET",
            "Request URL:\thttps://example.herokuapp.com/admin/blog/post/", f"Django Version:\t{django}",
            "Exception Type:\tProgrammingError", "Exception Value:\t", *str(exc).split("\n"),
            f"Exception Location:\t{location}",
            "Python Executable:\t/app/.heroku/python/bin/python", "Python Version:\t3.7.3", "Python Path:\t",
            "['/app/.heroku/python/bin',", " '/app']", "Server time:\tThu, 12 Sep 2019 18:34:34 +0000"]
    (event,) = _events(page)
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ProgrammingError",
                                                                           str(exc))
    assert [(f.path, f.lineno, f.function) for f in event.root.frames] == [(where.filename, where.lineno, "_execute")]


def test_djangos_copy_and_paste_view_names_the_url_after_the_type():
    exc = capture(_count_posts)
    (event,) = _events(["Exception Type: ProgrammingError at /admin/blog/post/",
                        f"Exception Value: {str(exc).splitlines()[0]}"])
    assert (event.root.exception_type, event.root.message) == ("ProgrammingError", str(exc).splitlines()[0])


def _multiply(a_cols, b_rows):
    raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (770x{a_cols} and {b_rows}x320)")


def _sample():
    return _multiply(2048, 768)


@pytest.mark.parametrize("said", ["str", "format_exception_only"])
def test_comfyuis_error_report_with_its_stack(said):
    """ComfyUI's report: the type and message as markdown fields (the message as str() gives it, or naming the type
    again as `format_exception_only` ends, in other releases), the stack as `traceback.format_tb` prints it (frames
    only) in a fenced block; the system information after it is no part of it."""
    exc = capture(_sample)
    stack = "".join(traceback.format_tb(exc.__traceback__)).rstrip("\n").split("\n")
    message = str(exc) if said == "str" else traceback.format_exception_only(exc)[-1].strip()
    report = ["# ComfyUI Error Report", "## Error Details", "- **Node ID:** 7", "- **Node Type:** KSampler",
              f"- **Exception Type:** {type(exc).__name__}", f"- **Exception Message:** {message}", "## Stack Trace",
              "```", *stack, "```", "## System Information", "- **ComfyUI Version:** 0.3.7", "## Logs", "```",
              "2024-12-04T14:12:42.123 Loading model", "```"]
    (event,) = _events(report)
    assert (event.root.exception_type, event.root.message) == ("RuntimeError", str(exc))
    assert [(f.lineno, f.function) for f in event.root.frames] == [
        (f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    (alone,) = _events(report[:6])  # a report copied without its stack
    assert (alone.root.exception_type, alone.root.message, alone.root.frames) == ("RuntimeError", str(exc), ())
    assert _events(["- **Node Type:** KSampler", "Exception Type: none given", "Exception Types: x"]) == []


def _rename_cache_file():
    raise FileExistsError(183, "Cannot create a file when that file already exists")


class BackendCompilerFailed(Exception):
    """torch._dynamo.exc's: the backend's error named on the second line of its message."""

    def __init__(self, inner: Exception) -> None:
        super().__init__(f"backend='inductor' raised:\n{type(inner).__name__}: {inner}\n\n"
                         "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information")


def _compile():
    try:
        _rename_cache_file()
    except FileExistsError as err:
        raise BackendCompilerFailed(err) from None


def test_comfyuis_error_report_of_a_wrapper_that_names_the_error_it_raised():
    """The report's message is a wrapper's that introduces the error it raised on its next line: that error
    is the root, as in a traceback."""
    exc = capture(_compile)
    message = str(exc).split("\n")
    report = ["# ComfyUI Error Report", "## Error Details", "- **Node ID:** 72", "- **Node Type:** SamplerCustom",
              "- **Exception Type:** torch._dynamo.exc.BackendCompilerFailed", f"- **Exception Message:** {message[0]}",
              *message[1:]]
    (event,) = _events(report)
    inner = exc.__context__
    assert [(link.exception_type, link.message.split("\n")[0]) for link in event.chain] == [
        ("FileExistsError", str(inner)), ("torch._dynamo.exc.BackendCompilerFailed", "backend='inductor' raised:")]
