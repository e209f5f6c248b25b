"""The fast path of `analyzer scan`: a file's bytes in, without parsing every line.

`FileScanner` takes one line at a time. `ChunkScanner` gives it only the lines that can matter:
those a `TriggerFinder` reports in each chunk, and every line while an error record is open. The
lines in between are counted, and of them only the last to set the stream and the last to set the
time (by their prefixes) are handed over, because the lines after them inherit both; while the
input has shown no timestamp yet, so is the first to set one. Events, line numbers and prefix
state come out as if every line had been fed (tests/test_fastpath.py holds it to that).
"""

from __future__ import annotations

from analyzer.core.normalize import LineNormalizer
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent, LogLine
from analyzer.core.scan import FileScanner
from analyzer.core.triggers import TriggerFinder, available, may_set_stream, may_set_time
from analyzer.sources.lines import MAX_LINE, cut_line

__all__ = ["ChunkScanner"]


class ChunkScanner:
    """Push the byte chunks of one input as `utf8_chunks` gives them, get completed events back."""

    def __init__(self, file: str, notices: NoticeDetector | None = None, max_line: int = MAX_LINE,
                 fast: bool = True) -> None:
        self.scanner = FileScanner(file, notices)
        self._file = file
        self._finder = TriggerFinder(notices.keywords if notices else ()) if fast and available() else None
        self._max_line = max_line
        self._tail = b""  # the unfinished last line, at most max_line bytes of it
        self._dropped = 0  # bytes of that line dropped past max_line
        self._floors: tuple[bytes | None, int, int] = (None, 0, 0)  # a buffer's TriggerFinder.first_setters

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

    def finish(self) -> list[ErrorEvent]:
        events: list[ErrorEvent] = []
        if self._tail or self._dropped:  # the last line has no newline
            events += self.scanner.feed(self._text(self._tail, 0, len(self._tail), self._dropped))
            self._tail, self._dropped = b"", 0
        return events + self.scanner.finish()

    def _scan(self, buffer: bytes, start: int, end: int, events: list[ErrorEvent]) -> None:
        """The whole lines `buffer[start:end]`."""
        if self._finder is None:
            self._feed(buffer, start, end, events, until_quiet=False)
            return
        pos = start if self.scanner.quiet else self._feed(buffer, start, end, events)
        for hit in self._finder.scan(buffer):
            if hit < pos:
                continue  # in a line already read
            if hit >= end:
                break
            line_start = buffer.rfind(b"\n", pos, hit) + 1 or pos
            self._skip(buffer, pos, line_start)
            pos = self._feed(buffer, line_start, end, events)
        self._skip(buffer, pos, end)

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
            self.scanner.skip(buffer.count(b"\n", start, end), self._setters(buffer, start, end))

    def _setters(self, buffer: bytes, start: int, end: int) -> list[str]:
        """The lines of `buffer[start:end]` whose prefix state outlives them, in order."""
        if self._floors[0] is not buffer:
            self._floors = (buffer, *self._finder.first_setters(buffer))
        _, time_floor, stream_floor = self._floors
        picked: dict[int, str] = {}
        need_time = time_floor < end
        if need_time and self.scanner.first_timestamp is None:  # the input's first timestamp may be here
            first = self._first_time_setter(buffer, max(start, time_floor), end)
            if first is not None:
                picked[first[0]] = first[1]
            need_time = first is not None
        need_stream = True
        stop = end
        start = max(start, stream_floor)  # no line before it may set anything
        while stop > start and (need_stream or need_time):
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
        """What the line's own prefixes say (a fresh normaliser inherits nothing)."""
        return LineNormalizer(self._file).normalize(text, 0)[0]

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
