"""Records longer than the assembler holds. A message (a tensor's repr printed in the error) is cut,
and the event says how many lines were left out; one that fits exactly, ended by the next record, is whole. A traceback of
more lines than a block holds (recursion through two functions, which the interpreter does not
fold, under a raised recursion limit) is one event: its head, the frames that lead to the
exception, the exception line."""

from __future__ import annotations

import sys

from analyzer.core.scan import events_from_lines
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.support import NO_NOTICES


def _mismatch(rows: int):
    def raises():
        raise RuntimeError("logits differ:\n" + "\n".join(f"tensor([{row}.0000, 0.5000])" for row in range(rows)))

    return raises


def _events(rows: int):
    lines = text_of(capture(_mismatch(rows))).rstrip("\n").split("\n")
    return list(events_from_lines([*lines, "INFO 12-01 10:00:00 [core.py:1] next step"], "t.log", NO_NOTICES))


def test_a_message_over_the_limit_is_cut_and_says_how_much():
    [event] = _events(400)
    kept = event.chain[-1].message.count("\n") + 1
    assert event.chain[-1].exception_type == "RuntimeError" and event.elided > 0
    assert kept + event.elided == 1 + 400  # its head kept, every other line counted


def test_a_message_at_the_limit_is_whole():
    [event] = _events(199)  # with its first line, 200
    assert event.chain[-1].message.count("\n") == 199 and not event.truncated


def test_a_chains_second_message_at_the_limit_is_whole_after_a_long_first_one():
    """Each link's message is counted from its own exception line: the first's lines do not shorten the second's."""
    def raises():
        try:
            _mismatch(150)()
        except RuntimeError as err:
            raise ValueError("checkpoint differs:\n" + "\n".join(f"layer {row}: max diff 0.5" for row in range(199))) from err

    lines = text_of(capture(raises)).rstrip("\n").split("\n")
    [event] = events_from_lines([*lines, "INFO 12-01 10:00:00 [core.py:1] next step"], "t.log", NO_NOTICES)
    assert [link.message.count("\n") for link in event.chain] == [150, 199] and not event.elided


def _down(depth: int) -> None:
    if depth == 0:
        raise RecursionError("maximum recursion depth exceeded while resolving the config")
    _across(depth - 1)


def _across(depth: int) -> None:
    _down(depth)


def test_a_traceback_longer_than_a_block_is_one_event_with_its_ends():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        exc = capture(lambda: _down(2500))
    finally:
        sys.setrecursionlimit(limit)
    lines = text_of(exc).rstrip("\n").split("\n")
    assert len(lines) > 10_000  # twice what a block holds
    [event] = list(events_from_lines([*lines, "INFO 12-01 10:00:00 [core.py:1] next step"], "t.log", NO_NOTICES))
    [got], [expected] = actual_chain(event.chain), expected_chain(exc)
    assert (got.exception_type, got.message) == (expected.exception_type, expected.message)
    assert got.frames[:100] == expected.frames[:100] and got.frames[-100:] == expected.frames[-100:]
    assert len(got.frames) < len(expected.frames)
