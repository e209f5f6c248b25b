"""The raw log around an incident, read back from its file: an edge concern of the TUI."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import takewhile

from analyzer.core.normalize import LineNormalizer
from analyzer.core.records import ErrorEvent
from analyzer.sources.files import read_chunks
from analyzer.sources.lines import utf8_chunks
from analyzer.sources.problems import Problem

__all__ = ["LogWindow", "read_window", "numbered_lines"]

_MAX_WIDTH = 2000  # characters of one line kept for display
_MAX_BYTES = 4 * _MAX_WIDTH  # enough bytes for them, whatever the encoding


@dataclass(frozen=True, slots=True)
class LogWindow:
    """Numbered raw lines around an event; a jump in numbers is a run of lines left out."""

    rows: tuple[tuple[int, str], ...]
    first: int  # the event's first and last line
    last: int
    note: str = ""  # why the raw lines are not shown, when they are not
    bodies: tuple[str, ...] = ()  # each row without its prefixes (timestamp, rank, container, ...)
    own: frozenset[int] = frozenset()  # the event's own lines: not another rank's, interleaved with them

    def body(self, index: int) -> str:
        return self.bodies[index] if index < len(self.bodies) else self.rows[index][1]


def numbered_lines(chunks: Iterable[bytes], low: int, high: int) -> Iterator[tuple[int, str]]:
    """Lines `low`..`high` (numbered from 1, as the scan numbers them) of UTF-8 chunks.

    Chunks wholly before `low` are only counted, so a window deep in a big file comes quickly.
    """
    number, head = 1, b""  # head: the start of the line that the next chunk continues
    for chunk in chunks:
        ends = chunk.count(b"\n")
        if number + ends < low:  # every line ending here lies before the window
            number += ends
            head = chunk[chunk.rfind(b"\n") + 1:][:_MAX_BYTES] if ends else (head + chunk)[:_MAX_BYTES]
            continue
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            if number >= low:
                yield number, _text(head + piece)
            head = b""
            number += 1
            if number > high:
                return
        head = (head + rest)[:_MAX_BYTES]
    if head and low <= number <= high:
        yield number, _text(head)


def _text(raw: bytes) -> str:
    return raw[:_MAX_BYTES].decode("utf-8", "replace")[:_MAX_WIDTH]


def read_window(event: ErrorEvent, before: int = 15, after: int = 15, max_event_lines: int = 300,
                cancelled: Callable[[], bool] = lambda: False) -> LogWindow:
    """Lines `before` and `after` the event; a very long event keeps its head and tail.

    Input that cannot be read again (stdin, a file since deleted) shows the event's own lines,
    as the engine assembled them, with a note saying so.
    """
    span = event.span
    half = max_event_lines // 2
    problems: list[Problem] = []
    rows: list[tuple[int, str]] = []
    if os.path.isfile(span.file):
        chunks = takewhile(lambda _: not cancelled(), utf8_chunks(read_chunks(span.file, problems.append)))
        for number, line in numbered_lines(chunks, max(1, span.line_start - before), span.line_end + after):
            if not span.line_start + half <= number <= span.line_end - half:
                rows.append((number, line))
    if rows:
        bodies, own = _read_prefixes(span.file, rows, event)
        return LogWindow(tuple(rows), span.line_start, span.line_end, bodies=bodies, own=own)
    why = str(problems[0]) if problems else f"{span.file}: cannot be read again"
    lines = tuple((span.line_start + offset, line[:_MAX_WIDTH]) for offset, line in enumerate(event.lines))
    return LogWindow(lines, span.line_start, span.line_end, f"{why}; showing the lines as assembled",
                     bodies=tuple(line for _, line in lines), own=frozenset(number for number, _ in lines))


def _read_prefixes(file: str, rows: list[tuple[int, str]], event: ErrorEvent) -> tuple[tuple[str, ...], frozenset[int]]:
    """Each row's text without prefixes, and which rows of the event's span are its own: those of
    its stream, read as the scan reads them (another rank's lines may be interleaved with them)."""
    normalizer = LineNormalizer(file)
    bodies: list[str] = []
    own: set[int] = set()
    span = event.span
    for number, raw in rows:
        lines = normalizer.normalize(raw, number)
        bodies.append("\n".join(line.text for line in lines))
        if span.line_start <= number <= span.line_end and any(line.stream == event.stream for line in lines):
            own.add(number)
    if not own:  # read from mid-file the prefixes may not tell: then the whole span is the event's
        own = {number for number, _ in rows if span.line_start <= number <= span.line_end}
    return tuple(bodies), frozenset(own)
