"""A message longer than the assembler holds (a tensor's repr printed in the error) is cut, and the
event says so; one that fits exactly, ended by the next record, is whole."""

from __future__ import annotations

from analyzer.core.scan import events_from_lines
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES


def _mismatch(rows: int):
    def raises():
        raise RuntimeError("logits differ:\n" + "\n".join(f"tensor([{row}.0000, 0.5000])" for row in range(rows)))

    return raises


def _events(rows: int):
    lines = text_of(capture(_mismatch(rows))).rstrip("\n").split("\n")
    return list(events_from_lines([*lines, "INFO 12-01 10:00:00 [core.py:1] next step"], "t.log", NO_NOTICES))


def test_a_message_over_the_limit_is_marked_cut():
    [event] = _events(400)
    assert event.chain[-1].exception_type == "RuntimeError" and event.truncated


def test_a_message_at_the_limit_is_whole():
    [event] = _events(199)  # with its first line, 200
    assert event.chain[-1].message.count("\n") == 199 and not event.truncated
