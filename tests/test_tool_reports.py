"""Errors as test runners and developer tools report them: unittest's test module that failed to import, doctest's
expected and actual output, pip's label over a traceback, pdm's class in brackets, a Cleo report whose message has
lines of its own indented, and CPython's report of a `sys.excepthook` that failed."""

from __future__ import annotations

import pytest

from analyzer.core.records import EventKind, Link
from tests import failureforms as forms
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.test_fastpath import assert_same


def _lines(lines: list[str]) -> bytes:
    return "\n".join([*lines, ""]).encode()


def test_a_test_module_unittest_failed_to_import_is_the_import_error():
    """unittest's loader raises an ImportError whose message holds the import's traceback: that error is the root."""
    lines = forms.unittest_import_failure("test_user_entity", "pyvaru_not_installed")
    (event,) = assert_same(_lines(lines))
    assert (event.root.exception_type, event.root.message) == ("ModuleNotFoundError", "No module named 'pyvaru_not_installed'")
    assert event.root.frames[-1].path.endswith("test_user_entity.py")
    assert (event.root.frames[-1].lineno, event.root.frames[-1].function) == (1, "<module>")
    assert event.chain[-1].exception_type == "ImportError"  # (the loader's, raised because of it)


def test_doctests_expected_output_is_no_error_its_actual_output_is():
    """A failed example: what it was expected to print (a traceback too) is no error; what it printed is."""
    lines = forms.doctest_failure(">>> [][10]\nTraceback (most recent call last):\n  ...\nKeyError: 10\n")
    assert "Expected:" in lines and "Got:" in lines
    (event,) = assert_same(_lines(lines))
    assert (event.root.exception_type, event.root.message) == ("IndexError", "list index out of range")
    assert [frame.function for frame in event.root.frames] == ["__run", "<module>"]
    assert event.span.line_start == lines.index("Got:") + 2
    # an example that raised where it was expected to print something: doctest says so, with the traceback
    (event,) = assert_same(_lines(forms.doctest_failure(">>> int('x')\n1\n")))
    assert (event.root.exception_type, event.kind) == ("ValueError", EventKind.TRACEBACK)


def _build():
    assert not "building is possible"


def _parse():
    return int("not a number")


@pytest.mark.parametrize("label", ["Exception:", "ERROR: Exception:"])
def test_pips_label_over_its_traceback_is_not_an_error_of_its_own(label):
    """pip logs `Exception:` over the traceback of an error it did not expect: that traceback tells the error."""
    exc = capture(_build)
    lines = ["Collecting wheel", label, *text_of(exc).rstrip("\n").split("\n"), "", "Storing debug log for failure"]
    (event,) = assert_same(_lines(lines))
    assert actual_chain(event.chain) == expected_chain(exc)
    # a class and a colon over a traceback that ends without its exception line: that class is its error
    cut = ["Collecting wheel", "ValueError:", *text_of(capture(_parse)).rstrip("\n").split("\n")[:-1], "Storing debug log"]
    (event,) = assert_same(_lines(cut))
    assert (event.root.exception_type, event.root.frames[-1].function) == ("ValueError", "_parse")


def test_pdms_class_in_brackets():
    exc = capture(lambda: open(""))  # noqa: SIM115 - (as pdm's lock fails on an empty path)
    lines = ["See /home/runner/.local/state/pdm/log/pdm-lock-7dfrdqfy.log for detailed debug log.",
             f"[{type(exc).__name__}]: {exc}", "WARNING: Add '-v' to see the detailed traceback"]
    (event,) = assert_same(_lines(lines))
    assert (event.root.exception_type, event.root.message, event.kind) == ("FileNotFoundError", str(exc), EventKind.BARE)
    assert assert_same(b"[INFO]: starting\n[main]: ValueError is a class\n") == []


def _validate_config():
    raise RuntimeError("The Poetry configuration is invalid:\n  - Additional properties are not allowed ('group' was unexpected)")


def test_a_cleo_report_whose_message_has_indented_lines():
    """Poetry's report of an invalid configuration: the message's list is indented further than its first line."""
    exc = capture(_validate_config)
    lines = ["Run poetry install", *forms.cleo_report(exc), "Error: Process completed with exit code 1."]
    (event,) = assert_same(_lines(lines))
    assert (event.root.exception_type, event.root.message) == ("RuntimeError", str(exc))
    assert (event.root.frames[-1].lineno, event.root.frames[-1].function) == (expected_chain(exc)[0].frames[-1][1], "_validate_config")


def test_a_failing_excepthook_reports_the_original_exception_as_the_root():
    """CPython prints the hook's error first, then `Original exception was:` and the exception it was given: the
    hook failed while handling that one, which is the root cause."""
    lines = forms.excepthook_failure()
    (event,) = assert_same(_lines(["Starting app", *lines, "", "Exiting"]))
    assert [(info.exception_type, info.link) for info in event.chain] == [("RuntimeError", Link.FIRST), ("AttributeError", Link.CONTEXT)]
    assert event.root.frames[-1].function == "on_close"
    assert (event.span.line_start, event.span.line_end) == (2, len(lines) + 1)
    # the hook's words with no traceback after them; the original exception printed without its frames
    assert assert_same(b"Error in sys.excepthook:\nnothing\n") == []
    bare = [*lines[:lines.index("Original exception was:") + 1], "TypeError: 'NoneType' object is not callable"]
    (event,) = assert_same(_lines(bare))
    assert [info.exception_type for info in event.chain] == ["TypeError", "AttributeError"]
