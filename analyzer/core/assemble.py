"""Traceback assembly: an incremental state machine over normalised lines.

Feed lines as they arrive, get ErrorEvents out as soon as they are complete. Lines are assembled
per stream (rank/process), so tracebacks printed at the same time by several ranks stay apart.
The machine only finds where a printed error begins and ends; `blocks.parse_chain` reads it.

What it holds is bounded, and every line costs O(1) whatever the number of streams: open blocks are
indexed by channel and kept in order of their last line. Over the budget, the block idle longest
goes first: as it stands when it is complete, else with the middle of its stack left out (`elided`),
keeping its header and last frame: thousands of ranks printing at once each keep their exception
line and raise site. Only when every open block is down to that is one cut off.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from analyzer.core import grammar as g
from analyzer.core import ipython, native
from analyzer.core.blocks import box_column, in_box, note_end, parse_chain
from analyzer.core.notices import logged_error
from analyzer.core.records import ErrorEvent, ErrorInfo, EventKind, LogLine, SourceSpan

__all__ = ["TracebackAssembler"]


class _State(enum.Enum):
    FRAMES = "frames"  # after a header: frames, source and caret lines
    MESSAGE = "message"  # after the exception line: the message may go on
    AFTER_BLANK = "after_blank"  # a blank line: a chain separator may follow
    SEPARATOR = "separator"  # after "The above exception ..." / "During handling ..."
    GROUP = "group"  # inside an exception-group box
    USAGE = "usage"  # argparse usage, waiting for "prog: error: ..."
    IPYTHON = "ipython"  # inside an IPython traceback, before its exception line
    BARE = "bare"  # an exception line alone, unless frames follow it (Ray, a newest-first export)
    REVERSED = "reversed"  # a traceback exported newest-first: exception line, then frames outwards
    NATIVE = "native"  # a native crash report (core/native.py)
    NOTE = "note"  # a traceback right after an exception line: maybe a note holding format_exc()


class _Step(enum.Enum):
    TAKE = "take"  # the line belongs to the block
    TAKE_AND_CLOSE = "take_and_close"  # it does, and completes it
    SKIP = "skip"  # it does, but is left out: a message past its line limit
    CLOSE = "close"  # the block is over; the line is looked at afresh
    DROP = "drop"  # the block was not an error after all; the line is looked at afresh


_COMPLETE = (_State.MESSAGE, _State.AFTER_BLANK, _State.GROUP, _State.BARE, _State.REVERSED, _State.NATIVE)
_SEPARATORS = (g.CAUSE_SEPARATOR, g.CONTEXT_SEPARATOR)
_SOURCE_LINES = 2  # lines a frame prints under it: its source line and, since 3.11, a caret line
_KEPT_FRAME_LINES = 100  # of a stack longer than the block limit: this many lines at its head and at its tail


@dataclass(slots=True)
class _Block:
    state: _State
    kind: EventKind
    lines: list[LogLine] = field(default_factory=list)
    context: str = ""
    truncated: bool = False
    group_column: int = -1  # unknown until the first line inside the box
    message_lines: int = 0
    held: int = 0  # lines after a message's blank line, kept only if a chain separator follows
    note_start: int = 0  # where a traceback that may be a note of the exception began
    size: int = 0  # what its lines cost to hold, see _cost
    shown: int = 0  # how many of its lines a provisional event already showed
    channel: str = ""  # its first line's, where the channel index files it
    frames_from: int = 0  # the line that began the stack now read: lines before it are never elided
    elided: int = 0  # lines left out: the middle of a long stack, the end of a long message
    skipped_to: int = 0  # the last line number left out at the end (of a message)


def _cost(line: LogLine) -> int:
    return len(line.text) + 256  # the text, and the record around it


_BLOCK_COST = 512  # a block's own record and its place in the indexes


class TracebackAssembler:
    """Pure core: no I/O. One instance per input file."""

    def __init__(self, max_block_lines: int = 5000, max_message_lines: int = 200,
                 notices: Callable[[str], ErrorInfo | None] | None = None,
                 max_held: int = 32 << 20) -> None:
        self._open: dict[str, _Block] = {}  # by stream, in the order they opened
        self._by_channel: dict[str, dict[str, None]] = {}  # the streams of the open blocks, per channel
        # The open blocks' streams, the one idle longest first: those that can give memory back, and
        # those that are down to their header (what is left to give is the whole block).
        self._recent: dict[str, None] = {}
        self._shrunk: dict[str, None] = {}
        self._notices = notices  # tells whether a line that opens nothing else reports a failure
        self._max_block_lines = max_block_lines
        self._max_message_lines = max_message_lines
        # A memory bound over all streams together: crafted input can open a block on every line, each
        # on a stream of its own, or fill blocks with lines of a megabyte.
        self._max_held = max_held  # total cost of the open blocks and their lines
        self._held = 0

    @property
    def pending(self) -> int:
        return len(self._open)

    def feed(self, line: LogLine) -> list[ErrorEvent]:
        out = self._feed(line)
        while self._held > self._max_held:
            out.extend(self._shed())
        return out

    def _feed(self, line: LogLine) -> list[ErrorEvent]:
        out: list[ErrorEvent] = []
        if line.starts_message:
            # A log record is written whole: a new one on this channel ends the records before it.
            for key in list(self._by_channel.get(line.channel, ())):
                earlier = self._open.get(key)  # (closing one may have closed another)
                if earlier is not None and (key == line.stream or earlier.state in _COMPLETE):
                    out.extend(self._close(key))
        block = self._open.get(line.stream)
        if block is not None:
            step = self._advance(block, line)
            self._touch(line.stream)
            if step is _Step.SKIP:
                block.elided, block.skipped_to = block.elided + 1, line.lineno
                return out
            if step in (_Step.TAKE, _Step.TAKE_AND_CLOSE):
                self._append(block, line)
                if step is _Step.TAKE and len(block.lines) >= self._max_block_lines and self._elide(
                        block, block.frames_from + _KEPT_FRAME_LINES, _KEPT_FRAME_LINES):
                    return out  # a stack deeper than the limit (RecursionError): its head and tail stay
                if step is _Step.TAKE_AND_CLOSE or len(block.lines) >= self._max_block_lines:
                    block.truncated |= step is _Step.TAKE
                    out.extend(self._close(line.stream))
                return out
            if step is _Step.DROP:
                self._forget(line.stream)
            else:
                out.extend(self._close(line.stream))
                if line.stream in self._open:  # a line held back by the closed block opened one
                    return out + self._feed(line)
        out.extend(self._start(line))
        return out

    def provisional(self) -> list[ErrorEvent]:
        """Input went quiet (follow, stdin): the records that are complete as they stand, as events
        marked `provisional`, each once per state it reaches. They stay open, since a writer that
        pauses may go on: a chain link, a note or a sub-exception may follow. The event that closes a
        record replaces its provisional ones (core/scan.py, Analysis)."""
        out: list[ErrorEvent] = []
        for block in self._open.values():
            if block.state not in _COMPLETE or block.shown == len(block.lines):
                continue
            block.shown = len(block.lines)
            copy = replace(block, lines=list(block.lines))
            self._trim(copy)
            if copy.lines:
                out.append(replace(self._event(copy), provisional=True))
        return out

    def finish(self) -> Iterator[ErrorEvent]:
        """End of input: emit everything, marking records cut off mid-way as truncated. One by one:
        a hundred thousand ranks may each have a record open."""
        while self._open:  # closing a block may give back lines that open another
            yield from self._close(next(iter(self._open)))

    def _shed(self) -> list[ErrorEvent]:
        """Over the budget: the block idle longest is closed as it stands when it is complete (nothing
        is lost), else its stack's middle is left out (down to its header and last frame). Only when
        every open block is down to that is one closed cut off."""
        key = next(iter(self._recent or self._shrunk))
        block = self._open[key]
        if block.state in _COMPLETE:
            return self._close(key)
        if key in self._recent:
            if not self._elide(block, block.frames_from + 1, 1):
                del self._recent[key]  # nothing left to give but the whole block: that comes last
                self._shrunk[key] = None
            else:
                self._touch(key)
            return []
        block.truncated = True
        return self._close(key)

    def _touch(self, key: str) -> None:
        self._recent.pop(key, None)
        self._shrunk.pop(key, None)
        self._recent[key] = None

    def _elide(self, block: _Block, head: int, tail: int) -> bool:
        """Leave out a stack's middle: keep `head` lines and the last `tail` ones, from a frame line on
        (a source line stays with its frame). False when there is no such middle."""
        if block.state is not _State.FRAMES or block.held:
            return False
        start = len(block.lines) - tail
        while start > head and not g.FRAME.match(block.lines[start].text):
            start -= 1
        if start <= head:
            return False
        cost = sum(_cost(line) for line in block.lines[head:start])
        block.elided += start - head
        del block.lines[head:start]
        block.size -= cost
        self._held -= cost
        return True

    def _forget(self, key: str) -> _Block:
        block = self._open.pop(key)
        self._recent.pop(key, None)
        self._shrunk.pop(key, None)
        streams = self._by_channel[block.channel]
        del streams[key]
        if not streams:
            del self._by_channel[block.channel]
        self._held -= block.size
        return block

    def _append(self, block: _Block, line: LogLine) -> None:
        block.lines.append(line)
        block.size += _cost(line)
        self._held += _cost(line)

    def _start(self, line: LogLine) -> list[ErrorEvent]:
        """A line no block took: it may open one, or be an error on its own."""
        out = self._begin(line)
        if line.stream in self._open:
            block = self._open[line.stream]
            block.size, block.channel = _BLOCK_COST + _cost(line), line.channel
            self._held += block.size
            self._recent[line.stream] = None
            self._by_channel.setdefault(line.channel, {})[line.stream] = None
        return out

    def _begin(self, line: LogLine) -> list[ErrorEvent]:
        text = line.text
        if (m := g.GROUP_HEADER.match(text)) is not None:
            self._open[line.stream] = _Block(_State.GROUP, EventKind.TRACEBACK, [line],
                                             context=m["context"].strip(), group_column=-1)
        elif (m := g.HEADER.match(text)) is not None:
            self._open[line.stream] = _Block(_State.FRAMES, EventKind.TRACEBACK, [line],
                                             context=m["context"].strip())
        elif ipython.HEADER.match(text):
            self._open[line.stream] = _Block(_State.IPYTHON, EventKind.TRACEBACK, [line])
        elif g.FRAME.match(text):  # frames without their header: the log was cut above them
            self._open[line.stream] = _Block(_State.FRAMES, EventKind.TRACEBACK, [line], truncated=True)
        elif native.starts(text):
            self._open[line.stream] = _Block(_State.NATIVE, EventKind.NATIVE, [line])
        elif g.ARGPARSE_USAGE.match(text):
            self._open[line.stream] = _Block(_State.USAGE, EventKind.ARGPARSE, [line])
        elif g.BARE_EXCEPTION_LINE.match(text):  # held a line: frames may follow it
            self._open[line.stream] = _Block(_State.BARE, EventKind.BARE, [line])
        elif self._notices is not None and (notice := self._notices(text)) is not None:
            return [self._event(_Block(_State.MESSAGE, EventKind.NOTICE, [line]), notice)]
        elif (logged := logged_error(text, line.prefix)) is not None:
            return [self._event(_Block(_State.MESSAGE, EventKind.NOTICE, [line]), logged)]
        return []

    def _advance(self, block: _Block, line: LogLine) -> _Step:
        text = line.text
        stripped = text.strip()
        state = block.state
        if state is _State.FRAMES:
            if g.FRAME.match(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped):
                block.held = 0
                return _Step.TAKE
            if not stripped and block.held < _SOURCE_LINES and (
                    block.held or _frame_detail(block.lines[-1].text) or _after_stripped_frame(block, 1)):
                block.held += 1  # a blank line among frames (a paste's doubled line breaks), kept if they go on
                return _Step.TAKE
            if (stripped and _after_stripped_frame(block, 0) and not g.EXCEPTION_LINE.match(text)
                    and not self._starts_record(text)):
                return _Step.TAKE  # the source line of a frame whose indentation was stripped
            if g.FRAME_REST.match(text) and g.FRAME_CUT.match(block.lines[-1].text):
                return _Step.TAKE  # the rest of a frame line the terminal wrapped
            if _nests_traceback(text):
                block.frames_from = len(block.lines)
                return _Step.TAKE  # RuntimeError(traceback.format_exc()): the inner traceback follows
            if not stripped or g.HEADER.match(text) or not g.EXCEPTION_LINE.match(text):
                block.truncated = True
                return _Step.CLOSE
            block.state, block.held = _State.MESSAGE, 0
            return _Step.TAKE
        if state is _State.MESSAGE:
            if not stripped or stripped == g.REMOTE_QUOTE:  # a _RemoteTraceback's quote ends its message
                block.state, block.held = _State.AFTER_BLANK, 1
                return _Step.TAKE
            if stripped in _SEPARATORS:
                block.state = _State.SEPARATOR
                return _Step.TAKE
            if block.kind is EventKind.TRACEBACK and (header := g.HEADER.match(text)) and not header["context"]:
                block.state, block.note_start = _State.NOTE, len(block.lines)
                return _Step.TAKE
            if block.message_lines == 0 and g.FRAME.match(text) and _wraps_remote(block.lines[-1].text):
                block.state, block.frames_from = _State.FRAMES, len(block.lines) - 1  # Ray: the remote
                return _Step.TAKE  # error's frames follow the wrapper's line
            if block.kind is not EventKind.TRACEBACK or _opens_something(text):
                return _Step.CLOSE
            if block.message_lines >= self._max_message_lines:  # a tensor's repr: its head is kept
                return _Step.CLOSE if self._starts_record(text) else _Step.SKIP
            block.message_lines += 1
            return _Step.TAKE
        if state is _State.AFTER_BLANK:
            if stripped in _SEPARATORS:
                block.state, block.held = _State.SEPARATOR, 0
                return _Step.TAKE
            if not stripped or (block.held < self._max_message_lines and not self._starts_record(text)):
                block.held += 1  # maybe a further paragraph of the message (torch._dynamo's hints)
                return _Step.TAKE
            return _Step.CLOSE
        if state is _State.SEPARATOR:
            if not stripped:
                return _Step.TAKE
            if g.GROUP_HEADER.match(text):
                block.state, block.group_column = _State.GROUP, -1
                return _Step.TAKE
            if g.HEADER.match(text):
                block.state, block.frames_from = _State.FRAMES, len(block.lines)
                return _Step.TAKE
            if ipython.RULE.match(text) or ipython.HEADER.match(text):
                block.state = _State.IPYTHON
                return _Step.TAKE
            if g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = _State.MESSAGE, 0
                return _Step.TAKE
            block.truncated = True
            return _Step.CLOSE
        if state is _State.BARE:
            if g.FRAME.match(text) and _wraps_remote(block.lines[0].text):
                block.state, block.kind = _State.FRAMES, EventKind.TRACEBACK  # Ray: the remote frames follow
                block.frames_from = len(block.lines) - 1
                return _Step.TAKE
            if g.REVERSED_FRAME.match(text):
                block.state, block.kind = _State.REVERSED, EventKind.TRACEBACK
                return _Step.TAKE
            if len(block.lines) <= _SOURCE_LINES and stripped and not self._starts_record(text):
                return _Step.TAKE  # the innermost frame's caret and source lines, if a frame follows
            return _Step.CLOSE
        if state is _State.REVERSED:
            if g.REVERSED_FRAME.match(text):
                return _Step.TAKE
            if g.HEADER.match(text):
                return _Step.TAKE_AND_CLOSE  # the top of the traceback, printed last
            recent = block.lines[-_SOURCE_LINES:]
            if stripped and any(g.REVERSED_FRAME.match(held.text) for held in recent) and not self._starts_record(text):
                return _Step.TAKE  # the source (and caret) line of the next frame out
            return _Step.CLOSE
        if state is _State.NOTE:
            if g.FRAME.match(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped):
                return _Step.TAKE
            texts = [held.text for held in block.lines]
            if g.EXCEPTION_LINE.match(text) and self._is_note(texts, block.note_start, text):
                block.state = _State.MESSAGE  # the note's exception line; its message may go on
                return _Step.TAKE
            return _Step.CLOSE  # not a note: the block ends where it began (see _close)
        if state is _State.NATIVE:
            texts = [held.text for held in block.lines]
            if native.continues(texts, text):
                return _Step.TAKE
            return _Step.CLOSE
        if state is _State.IPYTHON:
            if ipython.RULE.match(text) or ipython.HEADER.match(text) or _opens_something(text):
                block.truncated = True
                return _Step.CLOSE
            if text[:1] not in (" ", "-") and stripped and g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = _State.MESSAGE, 0
            return _Step.TAKE
        if state is _State.GROUP:
            if block.group_column < 0:  # the first box line tells the column; a logger's text may shift the header
                block.group_column = box_column(text)
            if in_box(text, block.group_column) and not g.GROUP_HEADER.match(text):
                return _Step.TAKE  # a "+ Exception Group" header is only ever a group's first line
            if not stripped:
                block.state, block.held = _State.AFTER_BLANK, 1
                return _Step.TAKE
            return _Step.CLOSE
        # _State.USAGE
        if g.ARGPARSE_ERROR.match(text):
            return _Step.TAKE_AND_CLOSE
        if text[:1] == " " and stripped:
            return _Step.TAKE
        return _Step.DROP

    @staticmethod
    def _is_note(texts: list[str], start: int, exception_line: str) -> bool:
        own = parse_chain(texts[:start])
        if not own:
            return False
        last = own[-1]
        return bool(note_end([*texts[start:], exception_line], 0, last.exception_type, last.message, last.frames))

    def _starts_record(self, text: str) -> bool:
        """A line that opens a record of its own, or reports one (what `_begin` looks for)."""
        return bool(_opens_something(text) or g.ARGPARSE_USAGE.match(text) or g.BARE_EXCEPTION_LINE.match(text)
                    or native.starts(text) or ipython.HEADER.match(text)
                    or (self._notices is not None and self._notices(text) is not None))

    def _close(self, key: str) -> list[ErrorEvent]:
        block = self._forget(key)
        held = self._trim(block)
        if held:
            out = [self._event(block)]
            for line in held:
                out.extend(self._feed(line))
            return out
        if block.kind is EventKind.ARGPARSE and not g.ARGPARSE_ERROR.match(block.lines[-1].text):
            return []  # a usage text printed on its own (--help, a warning): not an error
        return [self._event(block)]

    @staticmethod
    def _trim(block: _Block) -> list[LogLine]:
        """Cut a block that ends here to the record it holds; returns the lines after the record,
        which are to be looked at afresh."""
        held_from = {_State.BARE: 1, _State.NOTE: block.note_start}.get(block.state, len(block.lines))
        if held_from < len(block.lines):  # no frame came after a bare line, or a traceback was no note:
            held = block.lines[held_from:]  # the block ends before them
            del block.lines[held_from:]
            block.state = _State.MESSAGE
            return held
        while block.state is _State.NATIVE and not block.lines[-1].text.strip():
            block.lines.pop()
        while block.state is _State.REVERSED and not g.REVERSED_FRAME.match(block.lines[-1].text):
            block.lines.pop()  # source lines with no frame after them
        if block.state in (_State.AFTER_BLANK, _State.FRAMES) and block.held:
            del block.lines[-block.held:]
        if block.state in (_State.FRAMES, _State.SEPARATOR, _State.IPYTHON):
            block.truncated = True
        return []

    def _event(self, block: _Block, notice: ErrorInfo | None = None) -> ErrorEvent:
        texts = [line.text for line in block.lines]
        chain: tuple[ErrorInfo, ...]
        if block.kind is EventKind.ARGPARSE:
            error = g.ARGPARSE_ERROR.match(texts[-1])
            chain = (ErrorInfo("ArgumentError", error["message"], has_traceback=False),)
            context = " ".join(t.strip() for t in texts[:-1])
        elif notice is not None:
            chain, context = (notice,), ""
        elif block.kind is EventKind.NATIVE:
            chain, context = (native.parse(texts),), ""
        else:
            chain = parse_chain(_newest_last(texts) if block.state is _State.REVERSED else texts)
            chain = chain or (ErrorInfo("", ""),)
            context = block.context
        first = block.lines[0]
        stamped = next((line for line in block.lines if line.timestamp is not None), first)
        return ErrorEvent(
            chain=chain,
            span=SourceSpan(first.file, first.lineno, max(block.lines[-1].lineno, block.skipped_to)),
            kind=block.kind,
            stream=first.stream,
            rank=first.rank,
            host=first.host,
            timestamp=stamped.timestamp,
            context=context,
            truncated=block.truncated or not chain[-1].exception_type,
            lines=tuple(texts),
            elided=block.elided,
        )


def _frame_detail(text: str) -> bool:
    return bool(g.FRAME.match(text) or g.is_frame_detail(text) or text[:1] == " ")


def _after_stripped_frame(block: _Block, extra: int) -> bool:
    """A frame line that lost its indentation is among the last lines: up to its source and caret
    lines (which lost theirs too), and `extra` lines more, came after it."""
    recent = block.lines[-(_SOURCE_LINES + extra):]
    return any(g.FRAME.match(held.text) and held.text[:1] != " " for held in recent)


def _newest_last(texts: list[str]) -> list[str]:
    """A newest-first export (exception line, then each frame's source line above the frame, the
    header last) back in the order Python printed it, indented as Python indents it."""
    exception, *rest = texts
    body = [text.strip() for text in reversed(rest) if not g.HEADER.match(text)]
    framed = [f"  {text}" if g.REVERSED_FRAME.match(text) else f"    {text}" for text in body]
    return ["Traceback (most recent call last):", *framed, exception]


def _nests_traceback(text: str) -> bool:
    """`RuntimeError: Traceback (most recent call last):`: an exception whose message is a traceback."""
    header = g.HEADER.match(text)
    return header is not None and bool(g.BARE_EXCEPTION_LINE.match(header["context"].rstrip(":")))


def _wraps_remote(text: str) -> bool:
    """An exception line like `ray.exceptions.RayTaskError(ValueError): ...`."""
    exc = g.EXCEPTION_LINE.match(text)
    return exc is not None and exc["inner"] is not None


def _opens_something(text: str) -> bool:
    """A line that cannot continue an exception message: it starts a new record or traceback."""
    return bool(g.HEADER.match(text) or g.GROUP_HEADER.match(text) or g.LOG_RECORD_START.match(text)
                or g.FRAME.match(text) or native.interrupts(text))
