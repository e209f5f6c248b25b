"""Exception lines that ranks failing at once shredded: CPython's printer in C writes a type's name, `: ` and the
message apart, and processes sharing a terminal interleave the pieces (core/shredded.py). Through the line path
and the fast path alike."""

from __future__ import annotations

import pytest

from analyzer.core.records import short_type
from analyzer.core.scan import events_from_lines
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES
from tests.test_fastpath import assert_same


class ZeroParamError(Exception):
    """A library's own error, printed under its module's name."""


ZeroParamError.__module__ = "deepspeed.runtime.zero"


def _load_dataset():
    return _dataset_list()


def _dataset_list():
    raise ValueError("Undefined dataset alpaca_demo.json in dataset_info.json.")


def _gather_params():
    raise ZeroParamError("{'id': 853, 'status': 'NOT_AVAILABLE', 'numel': 0}")


def _errors(lines: list[str]) -> set[tuple[str, str]]:
    events = list(events_from_lines(lines, "t.log", NO_NOTICES))
    fast = assert_same("\n".join([*lines, ""]).encode())
    assert [e.chain for e in fast] == [e.chain for e in events]
    return {(short_type(e.root.exception_type), e.root.message) for e in events if e.root and e.root.exception_type}


@pytest.mark.parametrize("turns", [(1, 3), (2, 3), (4, 3)])
def test_two_ranks_taking_turns_at_their_writes_each_give_their_error(turns):
    """The second rank's type ends a line of the first's writes, its message on the next line after the colon.
    (Where the type, its modules with it, ends the first's exception line, as with (4, 3), the first's message ends
    with a full stop and the modules' names follow it: where one ends and the other begins is not told.)"""
    first, second = capture(_load_dataset), capture(_gather_params)
    lines = fmt.interleaved_writes(fmt.c_printer_writes(first), fmt.c_printer_writes(second), turns=turns)
    assert any(line.startswith(": ") for line in lines)  # (the form: a message apart from its type)
    errors = _errors(lines)
    assert ("ZeroParamError", str(second)) in errors
    said = {message for kind, message in errors if kind == "ValueError"}
    assert said == {str(first)} if turns != (4, 3) else said == {f"{first}deepspeed.runtime.zero."}


def test_a_message_line_ending_in_the_next_ranks_type():
    """Three ranks raising the same error: the second's type glued to the first's message, the third's to a
    source line; each message is the error's, without the type glued to it."""
    exc = capture(_load_dataset)
    said = str(exc)
    lines = ['  File "/app/data/loader.py", line 48, in load', 'raise ValueError("Undefined dataset")ValueError',
             f": {said}ValueError", f": {said}", "    dataset = load_dataset(args)"]
    assert _errors(lines) == {("ValueError", said)}


def test_a_colon_alone_and_the_message_on_the_next_line():
    exc = capture(_gather_params)
    lines = ["    pred = model(imgs)  # forward)deepspeed.runtime.zero.ZeroParamError", ": ", str(exc),
             "INFO 12-01 10:00:01 still running"]
    assert ("ZeroParamError", str(exc)) in _errors(lines)


@pytest.mark.parametrize("lines", [
    ["model.load())ValueError", "INFO step 1", "INFO step 2", "INFO step 3", ": not its message"],
    ["the loader raised ValueError", ": not its message"],
    ["ValueErrorHandler", ": not its message"],
], ids=["too far below", "a word before it", "no type at the end"])
def test_a_colon_line_is_no_message_of_a_type_not_glued_or_too_far_above(lines):
    assert not any(message == "not its message" for _, message in _errors(lines))


def test_a_type_glued_right_after_a_name_character_of_another_line():
    """A rank's type written into another process's line right after a digit or a letter of it (`[2` of a date, then
    `AssertionError`; `: ` and the message below): the fast path reads that line too (the fuzzer found it did not)."""
    exc = capture(_load_dataset)
    lines = ["[2AssertionError", f": {exc}", "025-05-01 10:00:00 TP0] Load weight end."]
    assert _errors(lines) == {("AssertionError", str(exc))}


def _unmatched_modules():
    raise ValueError(
        "Target modules {'query', 'value'} not found in the base model.")


@pytest.mark.parametrize("raises", [_load_dataset, _unmatched_modules], ids=["call-closed", "call-open"])
def test_a_type_a_stack_took_from_the_end_of_its_last_source_line_gets_the_message_on_the_line_below(raises):
    """Two ranks' stacks one after the other, the first rank's type glued to the second's last source line
    (`raise ValueError(...)ValueError`, or `raise ValueError(ValueError` where the call goes on below) and its `: message`
    on the next line, the second's own exception line below it: the stack ends with the error and its message (it had
    none, or the second's line as the message's next), and the second's line is an error of its own."""
    said = str(capture(raises))
    first, second = (text_of(capture(raises)).rstrip("\n").split("\n") for _ in range(2))
    lines = [*first[:-1], *second[:-2], second[-2] + "ValueError", f": {said}", second[-1], "INFO 12-01 10:00:01 stopping"]
    events = list(events_from_lines(lines, "t.log", NO_NOTICES))
    assert [e.chain for e in assert_same("\n".join([*lines, ""]).encode())] == [e.chain for e in events]
    assert {e.root.message for e in events if e.root and e.root.exception_type == "ValueError"} <= {said, ""}  # (the
    # first stack, cut at its raise statement, raised what it names: its message is the one glued below)
    stacked = [e for e in events if e.root and e.root.raise_site is not None and e.span.line_end >= len(first)]
    innermost = "_dataset_list" if raises is _load_dataset else raises.__name__
    assert [(e.root.message, e.root.raise_site.function) for e in stacked] == [(said, innermost)]
