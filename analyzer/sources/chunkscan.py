"""The fast path of `analyzer scan`: a file's bytes in, without parsing every line.

`FileScanner` takes one line at a time. `ChunkScanner` gives it only the lines that can matter:
those a `TriggerFinder` reports in each chunk, and every line while an error record is open. The
lines in between are counted, and of them only the last to set the stream and the last to set the
time (by their prefixes) are handed over, because the lines after them inherit both; while the
input has shown no timestamp yet, so is the first to set one. A prefix family learned on the way
makes the finder look for its members too, from the line after the one that taught it. Events, line
numbers and prefix state come out as if every line had been fed (tests/test_fastpath.py holds it to that).
"""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.core.normalize import LineNormalizer
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent, LogLine
from analyzer.core.scan import FileScanner
from analyzer.core.triggers import (
    TriggerFinder,
    available,
    may_set_stream,
    may_set_time,
)
from analyzer.sources.lines import MAX_LINE, cut_line

__all__ = ["ChunkScanner"]

_LONG_WAY_BACK = 64  # lines looked at before asking where setters can be (cheap when they are near)
_MAX_REBUILDS = 64  # finders built for learned prefixes; input that teaches more is read line by line


class ChunkScanner:
    """Push the byte chunks of one input as `utf8_chunks` gives them, get completed events back."""

    def __init__(self, file: str, notices: NoticeDetector, max_line: int = MAX_LINE,
                 fast: bool = True) -> None:
        self.scanner = FileScanner(file, notices)
        self._file = file
        self._keywords = notices.keywords if notices else ()
        self._finder = TriggerFinder(self._keywords) if fast and available() else None
        self._learned = 0  # the learner's version the finder knows
        self._rebuilds = 0
        self._max_line = max_line
        self._tail = b""  # the unfinished last line, at most max_line bytes of it
        self._dropped = 0  # bytes of that line dropped past max_line
        self._floors_of: tuple[bytes | None, int, int] = (None, 0, 0)  # the last buffer's first setters

    @property
    def lines(self) -> int:
        return self.scanner.lines

    def feed(self, chunk: bytes) -> list[ErrorEvent]:
        events: list[ErrorEvent] = []
        end = chunk.rfind(b"\n") + 1
        if not end:  # no line ends in this chunk
            self._keep(self._tail + chunk, 0)
            return events
        start = 0
        if self._tail or self._dropped:  # the line begun in earlier chunks ends here: on its own,
            start = chunk.find(b"\n") + 1  # so that the chunk itself is not copied
            line = self._tail + chunk[:start]
            if self._dropped:
                events += self.scanner.feed(self._text(line, 0, len(line) - 1, self._dropped))
                self._dropped = 0
            else:
                self._scan(line, 0, len(line), events)
        if end > start:
            self._scan(chunk, start, end, events)
        self._keep(chunk, end)
        return events

    def finish(self) -> Iterator[ErrorEvent]:
        if self._tail or self._dropped:  # the last line has no newline
            yield from self.scanner.feed(self._text(self._tail, 0, len(self._tail), self._dropped))
            self._tail, self._dropped = b"", 0
        yield from self.scanner.finish()

    def _scan(self, buffer: bytes, start: int, end: int, events: list[ErrorEvent]) -> None:
        """The whole lines `buffer[start:end]`."""
        pos = start
        if self._finder is not None and not self.scanner.quiet:
            pos = self._feed(buffer, start, end, events)
        learned = True
        while learned and self._finder_current():
            pos, learned = self._read_hits(buffer, pos, end, events)
        if self._finder is None:
            self._feed(buffer, pos, end, events, until_quiet=False)
        else:
            self._skip(buffer, pos, end)

    def _read_hits(self, buffer: bytes, pos: int, end: int, events: list[ErrorEvent]) -> tuple[int, bool]:
        """Read the lines the finder reports from `pos` on; stops early (True) after a line that taught
        a new prefix family, so that the buffer is looked at again for it."""
        assert self._finder is not None  # only the fast path reads hits
        for hit in self._finder.scan(buffer):
            if hit < pos:
                continue  # in a line already read
            if hit >= end:
                break
            line_start = buffer.rfind(b"\n", pos, hit) + 1 or pos
            self._skip(buffer, pos, line_start)
            pos = self._feed(buffer, line_start, end, events)
            if self.scanner.learner.version != self._learned:
                return pos, True
        return pos, False

    def _finder_current(self) -> bool:
        """Rebuild the finder if prefixes were learned since it was built; False once it is given up."""
        version = self.scanner.learner.version
        if self._finder is not None and version != self._learned:
            self._rebuilds += 1
            self._finder = (TriggerFinder(self._keywords, self.scanner.learner.triggers)
                            if self._rebuilds <= _MAX_REBUILDS else None)
            self._learned = version
        return self._finder is not None

    def _feed(self, buffer: bytes, pos: int, end: int, events: list[ErrorEvent], until_quiet: bool = True) -> int:
        """Feed lines from `pos` on, until no record is open; returns where the next line starts."""
        while pos < end:
            newline = buffer.find(b"\n", pos)
            events += self.scanner.feed(self._text(buffer, pos, newline))
            pos = newline + 1
            if until_quiet and self.scanner.quiet:
                break
        return pos

    def _skip(self, buffer: bytes, start: int, end: int) -> None:
        if start < end:
            self.scanner.skip(_newlines(buffer, start, end), self._setters(buffer, start, end))

    def _setters(self, buffer: bytes, start: int, end: int) -> list[str]:
        """The lines of `buffer[start:end]` whose prefix state outlives them, in order."""
        picked: dict[int, str] = {}
        need_time = True
        if self.scanner.first_timestamp is None:  # the input's first timestamp may be in here
            first = self._first_time_setter(buffer, max(start, self._floors(buffer)[0]), end)
            if first is not None:
                picked[first[0]] = first[1]
            need_time = first is not None
        need_stream = True
        stop, looked = end, 0
        while stop > start and (need_stream or need_time):
            looked += 1
            if looked == _LONG_WAY_BACK:  # where can such lines be in this buffer at all?
                time_floor, stream_floor = self._floors(buffer)
                start, need_time = max(start, stream_floor), need_time and time_floor < stop
                if stop <= start or not (need_stream or need_time):
                    break
            line_start = buffer.rfind(b"\n", start, stop - 1) + 1 or start
            if (need_stream and may_set_stream(buffer, line_start, stop - 1)) or (
                    need_time and may_set_time(buffer, line_start, stop - 1)):
                text = self._text(buffer, line_start, stop - 1)
                line = self._probe(text)
                sets_stream, sets_time = line.starts_message, line.timestamp is not None
                if (need_stream and sets_stream) or (need_time and sets_time):
                    picked[line_start] = text
                    need_stream &= not sets_stream
                    need_time &= not sets_time
            stop = line_start
        return [picked[at] for at in sorted(picked)]

    def _floors(self, buffer: bytes) -> tuple[int, int]:
        """`TriggerFinder.first_setters` of the buffer, looked for once (it reads the whole buffer)."""
        if self._floors_of[0] is not buffer:
            assert self._finder is not None  # only the fast path skips lines
            self._floors_of = (buffer, *self._finder.first_setters(buffer))
        return self._floors_of[1], self._floors_of[2]

    def _first_time_setter(self, buffer: bytes, start: int, end: int) -> tuple[int, str] | None:
        pos = start
        while pos < end:
            newline = buffer.find(b"\n", pos)
            if may_set_time(buffer, pos, newline):
                text = self._text(buffer, pos, newline)
                if self._probe(text).timestamp is not None:
                    return pos, text
            pos = newline + 1
        return None

    def _probe(self, text: str) -> LogLine:
        """What the line's own prefixes say (a fresh normaliser inherits nothing; a partial container
        record, which the finder reports anyway, says nothing)."""
        normalizer = LineNormalizer(self._file)
        return next(iter(normalizer.normalize(text, 0)), None) or LogLine("", self._file, 0)

    def _text(self, buffer: bytes, start: int, end: int, dropped: int = 0) -> str:
        """The text of the line `buffer[start:end]`, cut as `LineSplitter` cuts it."""
        kept = min(end, start + self._max_line)
        return cut_line(buffer[start:kept], dropped + end - kept)

    def _keep(self, buffer: bytes, end: int) -> None:
        """Hold the unfinished line `buffer[end:]` for the next chunk, cut to max_line bytes."""
        rest = len(buffer) - end
        if rest > self._max_line:
            self._dropped += rest - self._max_line
        self._tail = buffer[end:end + self._max_line]


def _newlines(buffer: bytes, start: int, end: int) -> int:
    """How many lines end in `buffer[start:end]`. On long stretches numpy's vectorised compare is
    several times faster than `bytes.count`; numpy comes with pandas, and is imported only then."""
    if end - start < 1 << 16:
        return buffer.count(b"\n", start, end)
    import numpy

    return int(numpy.count_nonzero(numpy.frombuffer(buffer, numpy.uint8, end - start, start) == 10))
