"""Where a traceback logged under a per-message prefix on every line ends.

The same prefix on the next line may continue the record (vLLM prints every line of a multi-line
message under it) or start the next record of the same rank in the same second. A line that reads as
a log record itself (a level word first) ends the traceback; other text under an identical prefix stays
ambiguous and is read as more of the message (benchmarks/RESULTS.md counts how often).
"""

from __future__ import annotations

from analyzer.core.notices import NoticeDetector
from analyzer.core.scan import events_from_lines
from tests import logformats as fmt
from tests.realtb import capture, text_of


def _multi_line():
    raise RuntimeError("could not load\nsecond line of the message")


def _value_error():
    raise ValueError("bad value 42")


def _events(lines: list[str]):
    return list(events_from_lines(lines, "t.log", NoticeDetector([])))


def test_a_level_word_under_the_same_prefix_starts_the_next_record():
    tb = text_of(capture(_value_error)).splitlines()
    access = 'INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK'
    lines = fmt.sglang_each_line([*tb, access, "WARNING: slow step"], tags=" TP1")
    [event] = _events(lines)
    assert (event.span.line_start, event.span.line_end) == (1, len(tb))
    assert event.chain[-1].message == "bad value 42"


def test_a_multi_line_message_under_the_same_prefix_stays_whole():
    exc = capture(_multi_line)
    lines = fmt.vllm_record("EngineCore failed", exc)
    [event] = _events(lines)
    assert event.span.line_end == len(lines)
    assert event.chain[-1].message == "could not load\nsecond line of the message"
