"""pytest's report of a failing test, read into one ErrorInfo (a chain where its `E` lines hold another
error's frames, as a Ray wrapper's do).

Under the failing source line (marked `>`) pytest prints the exception as `E` lines, `E   ` and the
exception line, then its message's further lines, or for a failed `assert` the assertion as pytest
explains it (`E   assert not True`, `E    +  where ...`). In its long style a blank line and the
place the exception was raised follow: `v1/engine/test_async_llm.py:178: AssertionError`, whose
file and line are the raise site. The frames above the `E` lines are pytest's own rendering of the
stack and are not read.
"""

from __future__ import annotations

import regex

from analyzer.core import grammar as g
from analyzer.core.blocks import parse_chain
from analyzer.core.records import ErrorInfo, Frame

__all__ = ["continues", "parse", "starts", "summary"]

_E_LINE = regex.compile(r"^E(?:\s+(?P<text>.*?))?\s*$")  # `E` alone on a blank line of the message
_LOCATION = regex.compile(r"^(?P<path>[^\s:]+):(?P<lineno>\d+): (?P<type>[A-Za-z_][\w.]*)\s*$")
_ASSERTION = "assert "  # how pytest explains a failed assert in place of the exception line
# A line of its short test summary (`-r`): `FAILED tests/x.py::test_y[p] - ValueError: bad`, `ERROR ...`
# for an error outside the test; the exception's first line, cut to the terminal's width. (A paste may
# have lost the word in front.)
_SUMMARY = regex.compile(r"^[ \t]*(?:(?:FAILED|ERROR) )?[^\s:]+\.py::(?P<test>\S+) - (?P<what>.+?)\s*$")


def starts(text: str) -> bool:
    """The first `E` line of a report: an exception line, or a failed assert's explanation."""
    m = _E_LINE.match(text)
    return m is not None and bool(m["text"]) and (
        g.BARE_EXCEPTION_LINE.match(m["text"]) is not None or m["text"].startswith(_ASSERTION))


def continues(lines: list[str], text: str) -> bool:
    """Whether `text` is the next line of the report begun by `lines` (its `E` lines, a blank, then the
    location line, which ends it)."""
    if _LOCATION.match(lines[-1]):
        return False
    return bool(_E_LINE.match(text) or not text.strip() or _LOCATION.match(text))


def parse(lines: list[str]) -> tuple[ErrorInfo, ...]:
    """The report's error; where its `E` lines hold another error's frames (Ray's wrapper over a remote
    task's), the chain they make, that error first."""
    texts = [m["text"] or "" for m in map(_E_LINE.match, lines) if m is not None]
    location = next((m for m in map(_LOCATION.match, lines) if m is not None), None)
    frames = (Frame(location["path"], int(location["lineno"]), None),) if location else ()
    first = texts[0]
    exc = g.EXCEPTION_LINE.match(first) if not first.startswith(_ASSERTION) else None
    if exc is not None and any(g.FRAME.match(text) for text in texts[1:]):
        chain = parse_chain(_dedented([line[1:] for line in lines if _E_LINE.match(line)]))
        if len(chain) > 1 and chain[0].exception_type:
            *inner, outer = chain
            return (*inner, ErrorInfo(outer.exception_type, outer.message, outer.frames + frames, outer.link, True))
    if exc is not None:
        exception_type, message = exc["type"], "\n".join([exc["message"] or "", *texts[1:]])
    else:
        exception_type, message = location["type"] if location else "AssertionError", "\n".join(texts)
    return (ErrorInfo(exception_type, message.strip(), frames, has_traceback=bool(frames)),)


def _dedented(texts: list[str]) -> list[str]:
    """Lines without the indentation they all share (pytest's, after its `E`)."""
    indent = min((len(text) - len(text.lstrip(" ")) for text in texts if text.strip()), default=0)
    return [text[indent:] for text in texts]


def summary(text: str) -> tuple[ErrorInfo, str] | None:
    """The failure a line of pytest's short test summary names, and the test (`FAILED tests/x.py::test_y`);
    else None."""
    m = _SUMMARY.match(text) if ".py::" in text else None
    if m is None:
        return None
    test = text[:m.end("test")]
    if m["what"].startswith(_ASSERTION):
        return ErrorInfo("AssertionError", m["what"], has_traceback=False), test
    exc = g.EXCEPTION_LINE.match(m["what"])
    if exc is None:
        return None
    return ErrorInfo(exc["type"], (exc["message"] or "").strip(), has_traceback=False), test
