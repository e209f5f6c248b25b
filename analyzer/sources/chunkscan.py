"""The fast path of `analyzer scan`: a file's bytes in, without parsing every line.

`FileScanner` takes one line at a time. `ChunkScanner` gives it only the lines that can matter:
those a `TriggerFinder` reports in each chunk, and every line while an error record is open (of
those, the ones it did not report are told to start no record: they are not looked at for one). The
lines in between are counted, and of them only the last to set the stream and the last to set the
time (by their prefixes) are handed over, because the lines after them inherit both; while the
input has shown no timestamp yet, so is the first to set one. A prefix family learned on the way
makes the finder look for its members too, from the line after the one that taught it. While a
traceback is open, a stretch of indented lines is handed over at once (`FileScanner.feed_stack`),
which takes it whole when its lines were seen before, as a traceback echoed by rank after rank is.
Events, line numbers and prefix state come out as if every line had been fed one by one
(tests/test_fastpath.py and tests/test_stack_reads.py hold it to that).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from analyzer.core.grammar import HEADER_TEXT
from analyzer.core.normalize import LineNormalizer, PeelMemo, may_continue
from analyzer.core.notices import NoticeDetector
from analyzer.core.prefixes import parse_timestamp
from analyzer.core.records import ErrorEvent, LogLine
from analyzer.core.scan import FileScanner
from analyzer.core.triggers import (
    HEAD_AT,
    Setter,
    TriggerFinder,
    available,
    body_may_set_time,
    head_group,
    head_sets,
    may_set_stream,
    may_set_time,
)
from analyzer.core.yearless import Calendar
from analyzer.sources.hyperscan_cache import compile_cached
from analyzer.sources.lines import MAX_LINE, cut_line

__all__ = ["ChunkScanner"]

_LONG_WAY_BACK = 64  # lines looked at before asking where setters can be (cheap when they are near)
_MAX_REBUILDS = 64  # finders built for learned prefixes; input that teaches more is read line by line
_HEADED_LINE = 2048  # lines cut shorter could cut a channel head (at most ~400 bytes): read those line by line
_BLANKS = frozenset(b" \t\r\x0b\x0c")
_COUNT_BLOCK = 1 << 18  # bytes whose lines numpy counts at once
_NUMPY_AFTER = 256 << 20  # bytes skipped before numpy counts their lines, in an input of unknown size
_MAX_GROUPS = 4096  # head groups with lines waiting; past that they are all handed over
_MAX_UNSETTLED = 16  # stretches whose channels' waiting lines are not looked for yet (each holds its buffer)
_ANCHOR_HEAD = 1 << 16  # bytes of an input's first chunk looked at for its first dated stamp (see Calendar.anchored)
_ANCHOR_TRIES = 64  # dates in it looked at
_DATE_TIME = re.compile(rb"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}")
_INDENTED = re.compile(rb"(?: +[^\s][^\n]*\n)+")  # lines indented, not blank
# What in a line read may name a channel (or teach a prefix family, or hide a prefix: colours, redraws).
_CHANNEL_MARKS = (b"]:", b"pid=", b"\r", b"\x1b", b'File "', b"Traceback (most recent call last)")


@dataclass(frozen=True, slots=True)
class _Stretch:
    """Lines skipped between two read ones, and what the scan knew then."""

    number: int
    buffer: bytes
    start: int
    end: int
    need_time: bool
    floors: tuple[int, ...]  # where lines behind a head that may set the time and the stream begin
    host_unknown: bool
    groups: dict[tuple, list[bytes]]  # the buffer's head groups


_UNHEADED_LOOK_BACK = 16  # lines of channel heads passed over, looking for the last line of none


class ChunkScanner:
    """Push the byte chunks of one input as `utf8_chunks` gives them, get completed events back."""

    def __init__(self, file: str, notices: NoticeDetector, max_line: int = MAX_LINE,
                 fast: bool = True, peels: PeelMemo | None = None, size: int = 0, calendar: Calendar | None = None,
                 anchored: bool = False) -> None:
        """`size`: the input's size in bytes where it is known (a file's), so that a large one has the lines it
        skips counted with numpy from its start (importing numpy costs what counting 250 MB the plain way does);
        `calendar`: see FileScanner; `anchored`: its years are those of the input's first dated stamp, where its
        first chunk holds one (see Calendar.anchored)."""
        self.scanner = FileScanner(file, notices, peels, calendar)
        self._calendar = calendar
        self._anchoring = anchored and calendar is not None  # (until the first chunk came)
        self._numpy_after = -1 if size > _NUMPY_AFTER else _NUMPY_AFTER  # bytes skipped before numpy counts lines
        self._file = file
        self._keywords = notices.keywords if notices else ()
        self._headed = max_line >= _HEADED_LINE
        self._finder = (TriggerFinder(self._keywords, headed=self._headed, compile=compile_cached)
                        if fast and available() else None)
        self._learned = 0  # the learner's version the finder knows
        self._rebuilds = 0
        self._max_line = max_line
        self._tail = b""  # the unfinished last line, at most max_line bytes of it
        self._dropped = 0  # bytes of that line dropped past max_line
        # Per channel head group (torchrun rank, worker pid and ip): the skipped lines whose state that
        # channel's next read line inherits, by what they set; handed over just before it.
        self._pending: dict[tuple, dict[str, tuple[tuple[int, int], str]]] = {}
        self._unsettled: list[_Stretch] = []  # skipped stretches not looked at for them yet (see _settle)
        self._settled: dict[tuple, int] = {}  # per head group, the last of those it was looked for in
        self._stretches = 0
        self._skipped = 0  # bytes
        self._keys_of: tuple[bytes | None, dict[tuple, list[bytes]]] = (None, {})  # the last buffer's channel heads
        self._hits_of: tuple[bytes | None, TriggerFinder | None, list[int]] = (None, None, [])  # and the finder's hits
        self._key_order: dict[tuple, list[bytes]] = {}  # each head group's heads, the one seen last first

    @property
    def lines(self) -> int:
        return self.scanner.lines

    @property
    def calendar(self) -> Calendar | None:
        return self._calendar

    def redate(self, calendar: Calendar) -> None:
        """See FileScanner.redate."""
        self._calendar = calendar
        self.scanner.redate(calendar)

    def feed(self, chunk: bytes) -> list[ErrorEvent]:
        if self._anchoring and self._calendar is not None:
            self._anchoring = False
            self.redate(self._calendar.anchored(self._first_dated(chunk[:_ANCHOR_HEAD])))
        events: list[ErrorEvent] = []
        end = chunk.rfind(b"\n") + 1
        if end and self._finder is not None and _ends_in_header(chunk, end - 1):
            # a header a terminal may have cut, its rest in the next chunk: read with it (the finder
            # looks for both parts at once), held with the unfinished line (not a line cut at max_line)
            before = chunk.rfind(b"\n", 0, end - 1) + 1
            if before or not self._dropped:
                end = before
        if not end:  # no line ends in this chunk
            self._keep(self._tail + chunk, 0, events)
            return events
        start = 0
        if self._tail or self._dropped:  # the line begun in earlier chunks ends here: on its own,
            start = chunk.find(b"\n") + 1  # so that the chunk itself is not copied
            line = self._tail + chunk[:start]
            if self._dropped:
                self._flush()
                events += self.scanner.feed(self._text(line, 0, len(line) - 1, self._dropped))
                self._dropped = 0
            else:
                if self._finder is not None and _ends_in_header(line, len(line) - 1):
                    if end == start:  # the line after it is not here yet: held with it
                        self._keep(self._tail + chunk, 0, events)
                        return events
                    line, start = line + chunk[start:end], end  # with the line after it (as below)
                self._scan(line, 0, len(line), events)
        if end > start:
            self._scan(chunk, start, end, events)
        self._keep(chunk, end, events)
        return events

    def finish(self) -> Iterator[ErrorEvent]:
        if (whole := self._tail.rfind(b"\n") + 1) and not self._dropped:  # a line held back (see feed)
            events: list[ErrorEvent] = []
            self._scan(self._tail, 0, whole, events)
            yield from events
            self._tail = self._tail[whole:]
        if self._tail or self._dropped:  # the last line has no newline
            self._flush()
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
        for hit in self._hits(buffer):
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
            self._flush()  # lines skipped before a family was learned are read as they were
            self._rebuilds += 1
            self._finder = (TriggerFinder(self._keywords, self.scanner.learner.triggers, self._headed, compile_cached)
                            if self._rebuilds <= _MAX_REBUILDS else None)
            self._learned = version
        return self._finder is not None

    def _hits(self, buffer: bytes) -> list[int]:
        """The finder's hits in the buffer (see TriggerFinder.scan), looked for once per buffer and finder."""
        assert self._finder is not None  # only the fast path reads hits
        if self._hits_of[0] is not buffer or self._hits_of[1] is not self._finder:
            self._hits_of = (buffer, self._finder, self._finder.scan(buffer))
        return self._hits_of[2]

    def _feed(self, buffer: bytes, pos: int, end: int, events: list[ErrorEvent], until_quiet: bool = True) -> int:
        """Feed lines from `pos` on, until no record is open; returns where the next line starts. A line the
        finder did not report is told to the scanner as one that can start no record (it is not looked at for
        one), unless a prefix family was learned since the finder was built."""
        stacked = pos  # where indented lines may begin that are not to be read one by one
        hits = self._hits(buffer) if self._finder is not None else []
        told = bisect.bisect_left(hits, pos)  # the first hit at or after the line read
        while pos < end:
            if pos >= stacked and buffer[pos] == 32 and not (self._pending or self._unsettled or self.scanner.quiet):
                # indented lines that may go on with an open traceback's stack: read at once if they
                # surely do (FileScanner.feed_stack), else one by one, not tried again
                run = _INDENTED.match(buffer, pos, min(end, pos + self._max_line))
                if run is not None:
                    stacked = run.end()
                    if self.scanner.feed_stack(buffer[pos:stacked - 1].decode("utf-8", "replace").split("\n")):
                        pos = stacked
                        continue
            newline = buffer.find(b"\n", pos)
            if self._pending or self._unsettled:
                self._flush_for(buffer, pos, newline)
            while told < len(hits) and hits[told] < pos:
                told += 1
            reported = told < len(hits) and hits[told] <= newline
            may_start = (reported or self._finder is None or self.scanner.learner.version != self._learned
                         or newline - pos > self._max_line)
            events += self.scanner.feed(self._text(buffer, pos, newline), may_start)
            pos = newline + 1
            if until_quiet and self.scanner.quiet:
                break
        return pos

    def _skip(self, buffer: bytes, start: int, end: int) -> None:
        if start < end:
            self._skipped += end - start
            count = _newlines(buffer, start, end) if self._skipped > self._numpy_after else buffer.count(b"\n", start, end)
            self.scanner.skip(count, self._setters(buffer, start, end))

    def _setters(self, buffer: bytes, start: int, end: int) -> list[str]:
        """The lines of `buffer[start:end]` whose prefix state outlives them and must be read now, in
        order. Those of channel heads wait in `_pending` unless the input's first timestamp or host
        is among them."""
        picked: dict[int, str] = {}
        need_time = True
        if self.scanner.first_timestamp is None:  # the input's first timestamp may be in here
            floor = min(self._floor(buffer, Setter.TIME), self._floor(buffer, Setter.HEAD_TIME))
            first = self._first_time_setter(buffer, max(start, floor), end)
            if first is not None:
                picked[first[0]] = first[1]
            need_time = first is not None
        keys: dict[tuple, list[bytes]] = {}
        if self._headed:
            self._stretches += 1
            keys = self._keys(buffer)
            now = bool(picked) or (self.scanner.host is None and any(group[2] for group in keys))
            if now:
                self._flush()  # the lines picked now come after those waiting
            if len(self._key_order) > _MAX_GROUPS:
                self._settle()  # with the heads known now
                self._key_order.clear()
            floors = (self._floor(buffer, Setter.HEAD_TIME), self._floor(buffer, Setter.HEAD_STREAM)) if keys else ()
            host_unknown = self.scanner.host is None
            for group, heads in keys.items():
                members = self._key_order.setdefault(group, [])
                members += [key for key in heads if key not in members]
                if now:
                    for at, text in self._group_setters(buffer, start, end, members, need_time, floors, host_unknown).values():
                        picked[at] = text
            if not now:  # each channel's lines are looked for when it is read next: most stretches never are
                self._unsettled.append(_Stretch(self._stretches, buffer, start, end, need_time, floors, host_unknown, keys))
                if len(self._unsettled) >= _MAX_UNSETTLED or len(keys) > _MAX_GROUPS:
                    self._settle()
            if len(self._pending) > _MAX_GROUPS:
                self._flush()
        need_stream, stretch_start = True, start
        stop, looked = end, _LONG_WAY_BACK - 1 if keys else 0  # the floors are known then
        while stop > start and (need_stream or need_time):
            looked += 1
            if looked == _LONG_WAY_BACK:  # where can such lines be in this buffer at all?
                time_floor, stream_floor = self._floor(buffer, Setter.TIME), self._floor(buffer, Setter.STREAM)
                start, need_time = max(start, stream_floor), need_time and time_floor < stop
                if stop <= start or not (need_stream or need_time):
                    break
            line_start = buffer.rfind(b"\n", start, stop - 1) + 1 or start
            if (need_stream and may_set_stream(buffer, line_start, stop - 1)) or (
                    need_time and may_set_time(buffer, line_start, stop - 1)):
                sets_stream, sets_time = self._line_sets(buffer, line_start, line_start, stop - 1)
                if (need_stream and sets_stream) or (need_time and sets_time):
                    picked[line_start] = text = self._text(buffer, line_start, stop - 1)
                    # (a line that may go on with the record before it keeps that one's stream: it is read too)
                    need_stream &= not (sets_stream and not (_may_go_on(buffer, line_start, stop - 1)
                                                             and may_continue(self._probe(text))))
                    need_time &= not sets_time
            stop = line_start
        for at in [*sorted(picked), end]:  # (the line of no channel head before each line fed, and before the
            # next line read, where no record's prefix begins it: a record's prefix repeated after it begins a record
            # of its own, not more of the one before: normalize._continues)
            before = self._unheaded_before(buffer, stretch_start, at)
            if before is not None and before[0] not in picked and not (
                    may_set_stream(buffer, *before) and self._line_sets(buffer, before[0], before[0], before[1])[0]):
                picked[before[0]] = self._text(buffer, *before)  # (one that sets the stream is the loop's above)
        return [picked[at] for at in sorted(picked)]

    def _unheaded_before(self, buffer: bytes, start: int, at: int) -> tuple[int, int] | None:
        """Where the last line before the one at `at` that begins with no channel head starts and ends, within
        `buffer[start:at]` and a few lines back; None where there is none."""
        stop = at
        for _ in range(_UNHEADED_LOOK_BACK):
            if stop <= start:
                return None
            line_start = buffer.rfind(b"\n", start, stop - 1) + 1 or start
            if not (self._headed and HEAD_AT.match(buffer, line_start, stop - 1)):
                return line_start, stop - 1  # (a blank one too)
            stop = line_start
        return None

    def _settle(self, groups: Iterable[tuple] | None = None) -> None:
        """Find the waiting lines of these head groups (all by default) in the stretches skipped since
        they were last looked for, as if each stretch had been looked at when it was skipped: the last
        stretch that has a line of a kind gives it, so they are looked at from the last back."""
        if not self._unsettled:
            return
        everything = groups is None
        timed = any(stretch.need_time for stretch in self._unsettled)
        for group in {group for stretch in self._unsettled for group in stretch.groups} if groups is None else groups:
            members = self._key_order.get(group, [])
            wanted = {"last", "stream", *(["time"] if timed else []),
                      *("spacing " + key.rstrip(b" ").decode() for key in members if key[:1] == b"[")}
            hosts = any(b", ip=" in key for key in members) and self._unsettled[0].host_unknown
            found: dict[str, tuple[tuple[int, int], str]] = {}
            for stretch in reversed(self._unsettled):
                if stretch.number <= self._settled.get(group, 0):
                    break
                if group in stretch.groups:
                    for kind, (at, text) in self._group_setters(stretch.buffer, stretch.start, stretch.end, members,
                                                                stretch.need_time, stretch.floors,
                                                                stretch.host_unknown).items():
                        found.setdefault(kind, ((stretch.number, at), text))
                    if not hosts and wanted <= found.keys():
                        break  # an older stretch has nothing that is not found already
            if found:
                self._pending.setdefault(group, {}).update(found)
            self._settled[group] = self._unsettled[-1].number
        if everything or len(self._settled) > _MAX_GROUPS:
            self._unsettled.clear()
            self._settled.clear()

    def _group_setters(self, buffer: bytes, start: int, end: int, keys: list[bytes], need_time: bool,
                       floors: tuple[int, ...], host_unknown: bool) -> dict[str, tuple[int, str]]:
        """The lines of one channel, those behind the heads `keys` in `buffer[start:end]`, whose state
        outlives them, by what they set: its last line (the channel's last message prefix), the last to
        set the stream, the time and (torchrun) whose the space after the colon is, and, while the input
        names no host, its first lines. Values: (where the line starts, its text)."""
        time_floor, stream_floor = floors
        need_stream, last = True, True
        spacing: set[bytes] = set()  # torchrun prefixes seen whose last line to tell the space is not found yet
        seen: set[bytes] = set()
        found: dict[str, tuple[int, str]] = {}
        if host_unknown:
            for key in keys:
                if b", ip=" in key:
                    at = buffer.find(b"\n" + key, max(start - 1, 0), end) + 1
                    first = at if at else start if buffer.startswith(key, start) else None
                    if first is not None:
                        found["host " + key.decode()] = (first, self._text(buffer, first, buffer.find(b"\n", first)))
        stop = end
        while last or spacing or (need_stream and stop > stream_floor) or (need_time and stop > time_floor):
            line_start = self._last_line(buffer, start, stop, keys)
            if line_start is None:
                break
            stop = line_start
            newline = buffer.find(b"\n", line_start)
            head = HEAD_AT.match(buffer, line_start, newline)
            if head is None or head.group() not in keys:
                continue  # another head that begins the same (torchrun's with its space)
            body = head.end()
            kinds = ["last"] if last else []
            prefix = head.group().rstrip(b" ")
            if prefix[:1] == b"[" and prefix not in seen:
                seen.add(prefix)
                spacing.add(prefix)
            if prefix in spacing and body < newline and buffer[body] not in _BLANKS:
                kinds.append("spacing " + prefix.decode())
                spacing.discard(prefix)
            if need_stream or need_time:
                sets_stream, sets_time = self._line_sets(buffer, line_start, body, newline)
                if need_stream and sets_stream:
                    kinds.append("stream")
                    need_stream = False
                if need_time and sets_time:
                    kinds.append("time")
                    need_time = False
            if kinds:
                text = self._text(buffer, line_start, newline)
                found.update((kind, (line_start, text)) for kind in kinds)
            last = False
        return found

    @staticmethod
    def _last_line(buffer: bytes, start: int, stop: int, keys: list[bytes]) -> int | None:
        """Where the last line before `stop` in the stretch from `start` that begins with one of `keys`
        starts; each key is looked for only after the best found so far."""
        best, winner = -1, 0
        low = max(start - 1, 0)
        for i, key in enumerate(keys):
            at = buffer.rfind(b"\n" + key, max(low, best), stop)
            if at >= 0:
                best, winner = at, i
        if winner:  # the head seen last is looked for first next time: the others only after it
            keys.insert(0, keys.pop(winner))
        if best >= 0:
            return best + 1
        if start == 0 < stop and any(buffer.startswith(key) for key in keys):
            return 0
        return None

    def _keys(self, buffer: bytes) -> dict[tuple, list[bytes]]:
        """The channel heads that begin lines of the buffer by their group, looked for once per buffer."""
        if self._keys_of[0] is not buffer:
            assert self._finder is not None  # only the fast path skips lines
            groups: dict[tuple, list[bytes]] = {}
            for key in set(self._finder.heads(buffer)):
                groups.setdefault(head_group(key), []).append(key)
            self._keys_of = (buffer, groups)
        return self._keys_of[1]

    def _flush(self, groups: list[tuple] | None = None) -> None:
        """Hand the waiting lines of these head groups (all by default) to the scanner, in order."""
        self._settle(groups)
        if groups is None:
            groups = list(self._pending)
        waiting = {at: text for group in groups for at, text in self._pending.pop(group, {}).values()}
        if waiting:
            self.scanner.inherit(waiting[at] for at in sorted(waiting))

    def _flush_for(self, buffer: bytes, start: int, end: int) -> None:
        """Before the line `buffer[start:end]` is read: the waiting lines of its channel. A line behind
        one channel head and holding no other prefix state has that head's channel; any line that may
        have another channel (another head, a JSON record's fields) or teach a prefix family gets them all."""
        head = HEAD_AT.match(buffer, start, end)
        rest = head.end() if head else start
        stateful = any(buffer.find(mark, rest, end) >= 0 for mark in _CHANNEL_MARKS)
        opens = buffer[rest:rest + 2]
        if head is not None and not stateful and opens[:1] not in (b"(", b"{") and not (opens[:1] == b"[" and not opens[1:].isdigit()):
            self._flush([head_group(head.group())])
        elif head is not None or stateful or buffer.startswith((b"{", b"\xef\xbb\xbf"), start):
            self._flush()

    def _floor(self, buffer: bytes, kind: Setter) -> int:
        """Where in the buffer the first line that may be a setter of this kind begins."""
        assert self._finder is not None  # only the fast path skips lines
        return self._finder.first_setter(buffer, kind)

    def _first_time_setter(self, buffer: bytes, start: int, end: int) -> tuple[int, str] | None:
        pos = start
        while pos < end:
            newline = buffer.find(b"\n", pos)
            head = HEAD_AT.match(buffer, pos, newline) if self._headed else None
            if may_set_time(buffer, pos, newline) or (head is not None and body_may_set_time(buffer, head.end(), newline)):
                text = self._text(buffer, pos, newline)
                if self._probe(text).timestamp is not None:
                    return pos, text
            pos = newline + 1
        return None

    def _line_sets(self, buffer: bytes, start: int, body: int, end: int) -> tuple[bool, bool]:
        """Whether the line `buffer[start:end]`, whose text after any channel head begins at `body`,
        sets its stream and its time: told by its prefix's bytes where they surely tell (an SGLang or
        vLLM prefix, no redraw or colour to hide it), else by a probe."""
        sets_stream, sets_time = head_sets(buffer, body, end, self._calendar)
        if sets_stream is None or sets_time is None or buffer.find(b"\r", start, end) >= 0 or buffer.find(b"\x1b", start, end) >= 0:
            line = self._probe(self._text(buffer, start, end))
            return line.starts_message, line.timestamp is not None
        return sets_stream, sets_time

    def _first_dated(self, head: bytes) -> datetime | None:
        """The first dated stamp that begins a line of `head` (maybe in a bracket: Ray's driver, SGLang's) or that its
        prefixes give (behind journald's stamp, say); not one in a message (a configuration's dump)."""
        for m in itertools.islice(_DATE_TIME.finditer(head), _ANCHOR_TRIES):
            start = head.rfind(b"\n", 0, m.start()) + 1
            if head[start:m.start()] in (b"", b"["):
                if (stamp := parse_timestamp(m.group().decode())) is not None:
                    return stamp
                continue  # (no day: month 13)
            end = head.find(b"\n", m.end())
            if (stamp := self._probe(self._text(head, start, len(head) if end < 0 else end), dated=True).timestamp) is not None:
                return stamp
        return None

    def _probe(self, text: str, dated: bool = False) -> LogLine:
        """What the line's own prefixes say (a fresh normaliser inherits nothing; a partial container
        record, which the finder reports anyway, says nothing; a time alone, its time). `dated`: only a
        stamp with a year is a time."""
        normalizer = LineNormalizer(self._file, calendar=None if dated else self._calendar)
        return next(iter(normalizer.normalize(text, 0)), None) or LogLine("", self._file, 0,
                                                                            timestamp=normalizer.time_alone)

    def _text(self, buffer: bytes, start: int, end: int, dropped: int = 0) -> str:
        """The text of the line `buffer[start:end]`, cut as `LineSplitter` cuts it."""
        kept = min(end, start + self._max_line)
        return cut_line(buffer[start:kept], dropped + end - kept)

    def _keep(self, buffer: bytes, end: int, events: list[ErrorEvent]) -> None:
        """Hold the unfinished line `buffer[end:]` for the next chunk, cut to max_line bytes. (Where it is a
        line held with the next one (see feed) and the two are longer than that, the first is read now.)"""
        rest = len(buffer) - end
        if rest > self._max_line and (whole := buffer.rfind(b"\n", end) + 1):
            self._feed(buffer, end, whole, events, until_quiet=False)
            end, rest = whole, len(buffer) - whole
        if rest > self._max_line:
            self._dropped += rest - self._max_line
        self._tail = buffer[end:end + self._max_line]


_HEADER_PARTS = tuple(HEADER_TEXT.encode()[:k] for k in range(1, len(HEADER_TEXT)))


def _ends_in_header(buffer: bytes, end: int) -> bool:
    """Whether the line that ends at `end` ends with the first part of a traceback's header."""
    if end and buffer[end - 1] == 13:  # (a Windows line break; no slice from end - 1: compiled, one from -1 fails)
        end -= 1
    return buffer.endswith(_HEADER_PARTS, max(0, end - len(HEADER_TEXT)), end)


def _may_go_on(buffer: bytes, start: int, end: int) -> bool:
    """Whether the line `buffer[start:end]`, which the finder did not report (no header, no exception line), may
    read as more of a traceback after its prefix (normalize.may_continue): nothing after it, or text indented
    (two blanks or a tab in the line), or a chain's separator. (Most lines are none: no second look at them.)"""
    return (buffer[end - 1:end] in (b"", b" ", b"]", b":", b"\r") or buffer.find(b"  ", start, end) >= 0
            or buffer.find(b"\t", start, end) >= 0 or buffer.find(b" exception", start, end) >= 0)


def _newlines(buffer: bytes, start: int, end: int) -> int:
    """How many lines end in `buffer[start:end]`. On long stretches numpy's vectorised compare is
    several times faster than `bytes.count`, compared a block at a time: the compare's result for a whole
    chunk would not stay in the CPU's cache (counting took 1.7x the time). numpy comes with pandas."""
    if end - start < 1 << 16:
        return buffer.count(b"\n", start, end)
    import numpy

    octets = numpy.frombuffer(buffer, numpy.uint8, end - start, start)
    return sum(int(numpy.count_nonzero(octets[at:at + _COUNT_BLOCK] == 10)) for at in range(0, end - start, _COUNT_BLOCK))
