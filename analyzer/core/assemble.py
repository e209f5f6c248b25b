"""Traceback assembly: an incremental state machine over normalised lines.

Feed lines as they arrive, get ErrorEvents out as soon as they are complete. Lines are assembled
per stream (rank/process), so tracebacks printed at the same time by several ranks stay apart.
The machine only finds where a printed error begins and ends; `blocks.parse_chain` reads it.

What it holds is bounded, and every line costs O(1) whatever the number of streams: open blocks are
indexed by channel and kept in order of their last line, and hold each line as a reference to its
text, one copy of which serves every rank that printed it. Over the budget, the block idle longest
goes first: as it stands when it is complete, else with the middle of its stack left out (`elided`),
keeping its header and last frame. When every open block is down to that, the one idle longest is
parked: its lines are let go but its header, and its stream's next lines carry it on as the same
record. Thousands of ranks printing at once each keep their exception line; what cannot be parked
(a chain past its first link) is cut off.
"""

from __future__ import annotations

import enum
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from analyzer.core import airflow, cleo, dagster, fieldreport, ipython, native, pytest_report, richtb, streamlit, vscode
from analyzer.core import grammar as g
from analyzer.core.blocks import (
    box_column,
    in_box,
    named_error,
    note_end,
    parse_chain,
    pybind_stack,
    raised_within,
    with_pybind_stack,
)
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
    RICH = "rich"  # inside Rich's box of a traceback, or right after it
    BARE = "bare"  # an exception line alone, unless frames follow it (Ray, a newest-first export)
    REVERSED = "reversed"  # a traceback exported newest-first: exception line, then frames outwards
    NATIVE = "native"  # a native crash report (core/native.py)
    PYTEST = "pytest"  # pytest's report of a failing test (core/pytest_report.py)
    NOTE = "note"  # a traceback right after an exception line: maybe a note holding format_exc()
    VSCODE = "vscode"  # VS Code's debugger's copy of an exception (core/vscode.py)
    PYBIND = "pybind"  # pybind11's stack under an exception line (`At:`, innermost first)
    LOGGED = "logged"  # a logged error's line (notices.logged_error), unless pybind11's stack follows it
    STREAMLIT = "streamlit"  # Streamlit's error box: the exception line, `Traceback:`, the frames (core/streamlit.py)
    FIELDS = "fields"  # a report that names the exception in fields: Django's page (core/fieldreport.py)
    CLEO = "cleo"  # a class's name alone, a blank line, then what may be a Cleo app's report (core/cleo.py)
    CLEO_PLACE = "cleo_place"  # ... which its place confirmed: the source lines around it follow
    PYTEST_STACK = "pytest_stack"  # frames in pytest's short style: a report if its `E` lines follow
    AIRFLOW = "airflow"  # an exception line, then frames as Airflow 3's task log renders them (core/airflow.py)
    DAGSTER = "dagster"  # an error's text as Dagster serialises it: `Stack Trace:`, its causes after it (core/dagster.py)


class _Step(enum.Enum):
    TAKE = "take"  # the line belongs to the block
    TAKE_AND_CLOSE = "take_and_close"  # it does, and completes it
    SKIP = "skip"  # it does, but is left out: a message past its line limit
    CLOSE = "close"  # the block is over; the line is looked at afresh
    DROP = "drop"  # the block was not an error after all; the line is looked at afresh


_COMPLETE = (_State.MESSAGE, _State.AFTER_BLANK, _State.GROUP, _State.BARE, _State.REVERSED, _State.NATIVE,
             _State.PYTEST, _State.PYBIND, _State.LOGGED, _State.STREAMLIT, _State.CLEO, _State.CLEO_PLACE, _State.DAGSTER,
             _State.AIRFLOW)
_SEPARATORS = (g.CAUSE_SEPARATOR, g.CONTEXT_SEPARATOR)
_REREAD = (_State.BARE, _State.NOTE, _State.LOGGED, _State.CLEO)  # states whose last lines may have to be looked at afresh
_WRAPPED_STATES = (_State.FRAMES, _State.MESSAGE, _State.AFTER_BLANK, _State.SEPARATOR)  # where a rest joins its line
_WIDTH_VOTES = 2  # lines of one length that may have been wrapped before that length is the width (_vote)
_MAX_WIDTHS = 64  # lengths voted for, at most (input that wraps at no one width votes for many)
_QUOTES = {'"': '"', "'": "'", "[": "]"}  # what a line quoted whole may begin with -> what ends it
_SOURCE_LINES = 2  # lines a frame prints under it: its source line and, since 3.11, a caret line
_KEPT_FRAME_LINES = 100  # of a stack longer than the block limit: this many lines at its head and at its tail


@dataclass(slots=True)
class _Block:
    """An open record. Its lines are held as their text and line number only: a hundred thousand
    ranks printing the same traceback at once hold the same texts (see _SharedTexts), so each rank
    costs its record and two machine words a line, not a copy of every line and its metadata."""

    state: _State
    kind: EventKind
    first: LogLine  # the line that opened it (see _block): where it is and whose
    texts: list[str]
    linenos: array[int]
    # Its last lines whole, from where they may have to be looked at afresh (_trim): after a bare
    # exception line, or from a traceback that may be a note. None in every other state.
    reread: list[LogLine] | None = None
    timestamp: datetime | None = None  # its first line's that has one
    context: str = ""
    truncated: bool = False
    group_column: int = -1  # unknown until the first line inside the box
    message_lines: int = 0
    held: int = 0  # lines after a message's blank line, kept only if a chain separator follows
    note_start: int = 0  # where a traceback that may be a note of the exception began
    output: bool = False  # that traceback is in output the exception's message introduced (a child's)
    indent: int = 0  # blanks in front of each of its lines, its header's (pip indents a build's output)
    shown: int = 0  # how many of its lines a provisional event already showed
    frames_from: int = 0  # the line that began the stack now read: lines before it are never elided
    elided: int = 0  # lines left out: the middle of a long stack, the end of a long message
    skipped_to: int = 0  # the last line number left out at the end (of a message)
    logged: ErrorInfo | None = None  # the error a logged error's line reports
    # An exception line right above its header (see _leads): the traceback's own if it ends without one
    lead: _Block | None = None


def _block(state: _State, kind: EventKind, line: LogLine, text: str, **fields) -> _Block:
    """A block opened by `line`, whose text is held as `text`. It keeps the line as its first, less
    the copies of text a prefixed line brings (a rank's own copy of the shared text, its prefix)."""
    first = line if line.text is text and not line.prefix else replace(line, text="", prefix="")
    return _Block(state, kind, first, [text], array("q", (line.lineno,)), timestamp=line.timestamp, **fields)


# What holding costs, in bytes as CPython lays them out (tracemalloc, 20,000 ranks at once):
_BLOCK_COST = 768  # a block's record, its first line's metadata, its places in the indexes
_LINE_COST = 16  # a line of a block: a reference to its shared text and its line number
_TEXT_COST = 128  # a distinct text besides its characters: the string and its entry in _SharedTexts
_PARKED_COST = 512  # a parked traceback: its record, its first line's metadata, its index entry


def _reread_cost(line: LogLine) -> int:
    return len(line.text) + 512  # a line kept whole: its text, its record and its metadata's strings


def _held_cost(block: _Block) -> int:
    """What an open block costs, less the text of its lines (counted in _SharedTexts)."""
    return _BLOCK_COST + _LINE_COST * len(block.texts) + sum(map(_reread_cost, block.reread or ()))


class _SharedTexts:
    """The text of every line the open blocks hold, one copy of each distinct text however many
    blocks hold it. `size` is what the copies cost; a text no block holds any longer is let go."""

    def __init__(self) -> None:
        self._held: dict[str, _Shared] = {}
        self.size = 0

    def hold(self, text: str) -> str:
        """The shared copy of `text`, held once more."""
        shared = self._held.get(text)
        if shared is None:
            shared = self._held[text] = _Shared(text)
            self.size += len(text) + _TEXT_COST
        shared.holders += 1
        return shared.text

    def release(self, texts: Iterable[str]) -> None:
        for text in texts:
            shared = self._held[text]
            shared.holders -= 1
            if not shared.holders:
                del self._held[text]
                self.size -= len(text) + _TEXT_COST


class _ChannelIndex:
    """The streams open on each channel. A channel has one stream but for a logger's tags (SGLang's
    `TP3` on one process): that one is filed as it is, not in a dict of its own, which would cost
    100,000 ranks printing at once 18 MB."""

    def __init__(self) -> None:
        self._streams: dict[str, str | dict[str, None]] = {}

    def add(self, channel: str, stream: str) -> None:
        filed = self._streams.get(channel)
        if filed is None:
            self._streams[channel] = stream
        elif isinstance(filed, str):
            self._streams[channel] = {filed: None, stream: None}
        else:
            filed[stream] = None

    def remove(self, channel: str, stream: str) -> None:
        filed = self._streams[channel]
        if isinstance(filed, str):
            del self._streams[channel]
            return
        del filed[stream]
        if not filed:
            del self._streams[channel]

    def streams(self, channel: str) -> list[str]:
        filed = self._streams.get(channel)
        if filed is None:
            return []
        return [filed] if isinstance(filed, str) else list(filed)


@dataclass(slots=True)
class _Parked:
    """A traceback let go in the middle of its stack to stay within the budget: what its stream's next
    lines need to go on as the same record, the lines in between counted as left out."""

    first: LogLine
    header: str  # held in _SharedTexts
    context: str
    timestamp: datetime | None
    elided: int


@dataclass(slots=True)
class _Shared:
    text: str
    holders: int = 0


class TracebackAssembler:
    """Pure core: no I/O. One instance per input file."""

    def __init__(self, max_block_lines: int = 5000, max_message_lines: int = 200,
                 notices: Callable[[str], ErrorInfo | None] | None = None,
                 max_held: int = 96 << 20) -> None:
        self._open: dict[str, _Block] = {}  # by stream, in the order they opened
        self._last: LogLine | None = None  # the line fed last
        self._after_rest = False  # ... was the rest of a wrapped line (see _unwrapped, _takes_rest)
        self._physical_lineno = self._physical_length = 0  # the line fed last as it came: its number, length
        self._width = 0  # a terminal's width the input was wrapped at, once two wraps agree (see _vote)
        self._width_votes: dict[int, int] = {}
        self._longest = 0  # the longest line a record took so far
        # Prefixed lines in a row that one record took (rests aside): a rest follows two or more. (After
        # one, a line without the prefix is what a prefix on a record's first line only looks like.)
        self._run = 0
        self._pytest_reports = False  # pytest reported a failure in full: its short summary repeats it
        self._by_channel = _ChannelIndex()  # the streams of the open blocks, per channel
        # The open blocks' streams, the one idle longest first: those that can give memory back, and
        # those that are down to their header (what is left to give is the whole block). Ordered
        # dicts: a plain dict finds its first key past every key deleted before it, which made
        # shedding quadratic in the number of ranks.
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._shrunk: OrderedDict[str, None] = OrderedDict()
        self._parked: OrderedDict[str, _Parked] = OrderedDict()  # by stream, the one parked longest ago first
        self._notices = notices  # tells whether a line that opens nothing else reports a failure
        self._max_block_lines = max_block_lines
        self._max_message_lines = max_message_lines
        # A memory bound over all streams together: crafted input can open a block on every line, each
        # on a stream of its own, or fill blocks with lines of a megabyte.
        self._max_held = max_held  # total cost of the open and parked records, in bytes
        self._held = 0  # what they cost, less the text of their lines
        self._texts = _SharedTexts()  # the text of their lines

    @property
    def pending(self) -> int:
        """Records not reported yet, parked ones included."""
        return len(self._open) + len(self._parked)

    def feed(self, line: LogLine) -> list[ErrorEvent]:
        lineno, prefix = line.lineno, line.prefix
        length = len(prefix) + len(line.text)
        last = self._last
        if not prefix and last is not None:
            if (self._run > 1 and lineno == self._physical_lineno + 1 and line.text.strip()
                    and self._took(last.stream, self._physical_lineno)):
                self._vote(self._physical_length)  # a record's prefixed lines, and the next one without: maybe a rest
            if (last.prefix or self._width or self._physical_length >= self._longest) and self._takes_rest(line):
                self._last, self._after_rest = replace(last, text=line.text, lineno=lineno), True
                self._physical_lineno, self._physical_length = lineno, length
                return self._within_budget([])
        line, rest = self._unwrapped(line)
        out = self._first_line_unprefixed(line) + self._feed(line)
        if line.prefix:
            took = self._took(line.stream, lineno)
            if not rest:  # (the rest of a line leaves the run as it was)
                same = self._run and last is not None and last.stream == line.stream
                self._run = (self._run + 1 if same else 1) if took else 0
        else:
            took = length > self._longest and self._took(line.stream, lineno)
            if self._run and not rest:
                self._run = 0
        if took and length > self._longest:
            self._longest = length  # no line is longer than the width a terminal wrapped at
            self._width = 0 if length > self._width else self._width
        self._last, self._after_rest = line, rest
        self._physical_lineno, self._physical_length = lineno, length
        if self._held + self._texts.size > self._max_held:
            return self._within_budget(out)
        return out

    def _within_budget(self, out: list[ErrorEvent]) -> list[ErrorEvent]:
        while self._held + self._texts.size > self._max_held:
            out.extend(self._shed())
        return out

    def _unwrapped(self, line: LogLine) -> tuple[LogLine, bool]:
        """A terminal's copy wraps a long line that has a prefix on every line (vLLM's, torchrun's) at
        its width, and the rest comes without the prefix: where the line before is a frame line of an
        open traceback cut inside its path or function and this line is its rest, the rest joins it
        (in that traceback's stream, where the missing prefix made it another's), and the record goes
        on after it (its next line is no new record for repeating the prefix). Also whether `line` is
        such a rest."""
        last = self._last
        if last is None:
            return line, False
        if (self._after_rest and line.starts_message and last.prefix and line.stream == last.stream
                and line.prefix == last.prefix):
            return replace(line, starts_message=False), False
        if line.prefix or line.lineno != self._physical_lineno + 1:
            return line, False
        block = self._open.get(last.stream)
        if ((block is None or _typeless_header(block)) and (whole := g.rest_of_fixed_line(last.text, line.text))
                and g.HEADER.match(whole)):
            if block is not None:  # not IPython's header copied without its type: CPython's, cut before its colon
                self._forget(last.stream)
            return replace(last, text=whole), True  # a header cut in two: the traceback begins at its first part
        if not last.prefix or (line.stream != last.stream and line.stream in self._open):
            return line, False
        if block is None or block.state is not _State.FRAMES or g.rest_of_frame_line(block.texts[-1], line.text) is None:
            return line, False
        return replace(line, stream=last.stream, channel=last.channel, rank=last.rank, host=last.host,
                       timestamp=last.timestamp, prefix=last.prefix, starts_message=False), True

    def _first_line_unprefixed(self, line: LogLine) -> list[ErrorEvent]:
        """A paste begun inside a prefixed line, a frame line's path, cut the prefix off its first line: where
        that line opened a traceback and the second has a prefix (and goes on with it), the first is read
        again as the second's stream's; else nothing."""
        last = self._last
        if not (line.lineno == 2 and line.prefix and last is not None and last.lineno == 1 and not last.prefix
                and line.stream != last.stream and line.stream not in self._open
                and (_frame_detail(line.text) or g.EXCEPTION_LINE.match(line.text))):
            return []
        block = self._open.get(last.stream)
        if block is None or len(block.texts) != 1 or block.state is not _State.FRAMES or not block.truncated:
            return []
        self._forget(last.stream)
        return self._feed(replace(line, text=last.text, lineno=last.lineno, starts_message=False))

    def _takes_rest(self, line: LogLine) -> bool:
        """Whether `line` (no prefix) is the rest of the line before it, which an open record took and a
        terminal wrapped at its width; if so it is joined to that line's text (no line break between).
        So the rest of a message's line, a source line, or a chain separator or header cut inside its
        words goes on with its record, where the prefix it lacks would have made it another stream's
        line. A line is taken as cut where the join makes a separator or a header, or where it was as
        long as the input's width (`_vote`), or, for a frame's source line, as the longest line so far;
        frame lines are mended apart (`_unwrapped`). A log without prefixes: `_unprefixed_rest`."""
        last = self._last
        assert last is not None  # (see feed)
        if not line.text.strip() or line.lineno != self._physical_lineno + 1 or (
                line.stream != last.stream and line.stream in self._open):
            return False
        block = self._open.get(last.stream)
        if block is None or block.linenos[-1] != self._physical_lineno or block.state not in _WRAPPED_STATES:
            return False
        cut = block.texts[-1]
        if block.state is _State.FRAMES and g.rest_of_frame_line(cut, line.text) is not None:
            return False  # read as a line of its own (see _unwrapped)
        whole = g.rest_of_fixed_line(cut, line.text) or _rest_of_rest(block, line.text)
        if whole is None and ((g.begins_fixed_line(cut.strip()) and g.begins_fixed_line((cut + line.text).strip()))
                              or (block.state is _State.FRAMES and len(line.text) == self._physical_length
                                  and g.goes_on_frame_line(cut, line.text))):
            whole = cut + line.text  # the middle of a separator or a frame line cut more than once
        if whole is None and not last.prefix:  # a log without prefixes: a line as long as the width, and more
            whole = self._unprefixed_rest(block, line.text)
        elif whole is None and self._run > 1 and (self._physical_length == self._width or (
                block.state is _State.FRAMES and self._physical_length >= self._longest and _ends_in_source(block)
                and not self._starts_record(line.text))):
            whole = cut + line.text  # (a source line as long as the longest is cut, width or not: only shown)
        if whole is None:
            return False
        self._texts.release((cut,))
        block.texts[-1], block.linenos[-1] = self._texts.hold(whole), line.lineno
        stripped = whole.strip()
        if stripped in _SEPARATORS and block.state in (_State.MESSAGE, _State.AFTER_BLANK):
            block.message_lines -= block.state is _State.MESSAGE  # (it was counted as the message's line)
            block.state, block.held = _State.SEPARATOR, 0
        elif block.state is _State.SEPARATOR and g.HEADER.match(whole):
            block.state, block.frames_from = _State.FRAMES, len(block.texts) - 1
        self._touch(last.stream)
        return True

    def _unprefixed_rest(self, block: _Block, rest: str) -> str | None:
        """In a log without prefixes, the line `rest` goes on: after a message's line as long as the width
        (or as another line cut before, none longer), or a source line as long as the longest so far
        (which also tells the width) where `rest` reads as no line of its own (nor as an indented one:
        a space it begins with, if any, is a word's)."""
        cut, length = block.texts[-1], self._physical_length
        if self._starts_record(rest):
            return None
        if length == self._width and (block.state is _State.MESSAGE or (block.state is _State.FRAMES and _ends_in_source(block))):
            return cut + rest
        if block.state is _State.MESSAGE and length >= self._longest and self._width_votes.get(length) and rest[:2].strip():
            self._vote(length)  # the second line cut at one length, none longer: the width
            return cut + rest
        if (block.state is _State.FRAMES and length >= self._longest and _ends_in_source(block) and rest[:2].strip()
                and not g.EXCEPTION_LINE.match(rest) and not g.REVERSED_FRAME.match(rest) and not g.FRAME_CUT.match(rest)
                and g.frame_cut_at_start(rest) is None):
            self._vote(length)
            return cut + rest
        return None

    def _took(self, stream: str, lineno: int) -> bool:
        """Whether the open record of `stream` took line `lineno` last. (Records' lines alone tell the
        width: the fast path reads them all, and only them for sure.)"""
        block = self._open.get(stream)
        return block is not None and block.linenos[-1] == lineno

    def _vote(self, width: int) -> None:
        """One more record's line of this length that a terminal may have wrapped: a prefixed line the next
        line goes on from without the prefix. Two at one length make it the input's width, if no record's
        line so far is longer."""
        if len(self._width_votes) >= _MAX_WIDTHS:
            self._width_votes.clear()
        votes = self._width_votes[width] = self._width_votes.get(width, 0) + 1
        if votes >= _WIDTH_VOTES and width >= self._longest:
            self._width = width

    def _frame_rest(self, block: _Block, text: str) -> bool:
        """Whether `text` is the rest of the frame line `block` took last; if so the cut line's length is a
        vote for the terminal's width."""
        if g.rest_of_frame_line(block.texts[-1], text) is None:
            return False
        self._vote(self._physical_length)
        return True

    def _feed(self, line: LogLine) -> list[ErrorEvent]:
        out: list[ErrorEvent] = []
        if self._parked and line.stream in self._parked:
            self._resume(line.stream)
        if line.starts_message:
            # A log record is written whole: a new one on this channel ends the records before it.
            for key in self._by_channel.streams(line.channel):
                earlier = self._open.get(key)  # (closing one may have closed another)
                if earlier is not None and (key == line.stream or earlier.state in _COMPLETE):
                    out.extend(self._close(key))
        block = self._open.get(line.stream)
        if block is not None and block.indent and len(block.texts) == 1 and g.FRAME.match(line.text):
            # a header further in than its first frame is: a paste's stray spaces before it, not a traceback
            # indented as a whole (whose frames are two further in than its header)
            block.indent = min(block.indent, max(0, len(line.text) - len(line.text.lstrip(" ")) - 2))
        if block is not None and block.indent:
            if line.text.startswith(" " * block.indent):
                line = replace(line, text=line.text[block.indent:])
                if (block.state is _State.FRAMES and line.text[:1] == " " and line.text[1:2] != " "
                        and g.EXCEPTION_LINE.match(line.text[1:])):  # one blank in: no line Python prints, but
                    line = replace(line, text=line.text[1:])  # the exception line where a frame one blank out set the indent
            elif block.state is _State.MESSAGE and line.text.strip():  # out of the indented traceback: its end
                out.extend(self._close(line.stream))
                return out + self._feed(line)
        if block is not None:
            step = self._advance(block, line)
            self._touch(line.stream)
            if step is _Step.SKIP:
                block.elided, block.skipped_to = block.elided + 1, line.lineno
                return out
            if step in (_Step.TAKE, _Step.TAKE_AND_CLOSE):
                self._append(block, line)
                if step is _Step.TAKE and len(block.texts) >= self._max_block_lines and self._elide(
                        block, block.frames_from + _KEPT_FRAME_LINES, _KEPT_FRAME_LINES):
                    return out  # a stack deeper than the limit (RecursionError): its head and tail stay
                if step is _Step.TAKE_AND_CLOSE or len(block.texts) >= self._max_block_lines:
                    block.truncated |= step is _Step.TAKE
                    out.extend(self._close(line.stream))
                return out
            if step is _Step.DROP:
                self._forget(line.stream)
            elif _leads(block, line):
                self._forget(line.stream)
                out.extend(self._start(line))
                self._open[line.stream].lead = block  # its event waits for the traceback's end
                return out
            else:
                out.extend(self._close(line.stream))
                if line.stream in self._open:  # a line held back by the closed block opened one
                    return out + self._feed(line)
        out.extend(self._start(line))
        return out

    def extend(self, line: LogLine, texts: list[str]) -> bool:
        """Lines of `line`'s stream numbered from its number on, which differ from it only in text:
        taken as `feed` would take them one by one, when that is sure to be as more lines of the
        stack the stream's record is reading (each indented as Python indents and not blank; no limit
        near: a line one space in may be the rest of a line a terminal cut before a space). False,
        and nothing taken, otherwise."""
        stream = line.stream
        block = self._open.get(stream)
        if (block is None or block.state is not _State.FRAMES or block.reread or line.starts_message or block.indent
                or stream in self._parked or len(block.texts) + len(texts) >= self._max_block_lines
                or self._held + self._texts.size + sum(map(len, texts)) + len(texts) * (_LINE_COST + _TEXT_COST)
                > self._max_held
                or not all(text[:2] == "  " and not text.isspace() for text in texts)  # (one space in: maybe a rest)
                or any(text[2:3] != " " and text[2:7] != "File " and g.exception_line_at_indent(text, 2) for text in texts)
                or (len(block.texts) == 1 and _tells_indent(texts[0]))):  # (see _advance: read it one by one)
            return False
        block.texts += map(self._texts.hold, texts)
        block.linenos.extend(range(line.lineno, line.lineno + len(texts)))
        self._last, self._after_rest = line, False
        self._physical_lineno, self._physical_length = line.lineno + len(texts) - 1, len(texts[-1])
        self._held += _LINE_COST * len(texts)
        block.held = 0
        if block.timestamp is None:
            block.timestamp = line.timestamp
        self._touch(stream)
        return True

    def provisional(self) -> list[ErrorEvent]:
        """Input went quiet (follow, stdin): the records that are complete as they stand, as events
        marked `provisional`, each once per state it reaches. They stay open, since a writer that
        pauses may go on: a chain link, a note or a sub-exception may follow. The event that closes a
        record replaces its provisional ones (core/scan.py, Analysis)."""
        out: list[ErrorEvent] = []
        for block in self._open.values():
            if block.state not in _COMPLETE or block.shown == len(block.texts):
                continue
            block.shown = len(block.texts)
            copy = replace(block, texts=list(block.texts), linenos=array("q", block.linenos))
            self._trim(copy)
            if copy.texts:
                out.append(replace(self._event(copy), provisional=True))
        return out

    def finish(self) -> Iterator[ErrorEvent]:
        """End of input: emit everything, marking records cut off mid-way as truncated. One by one:
        a hundred thousand ranks may each have a record open."""
        while self._open or self._parked:
            for key in list(self._open):
                if key in self._open:  # (closing one may have closed another, or given back lines that open one)
                    yield from self._close(key)
            if self._parked:
                self._resume(key := next(iter(self._parked)))
                yield from self._close(key)

    def _shed(self) -> list[ErrorEvent]:
        """Over the budget: the block idle longest is closed as it stands when it is complete (nothing
        is lost), else its stack's middle is left out (down to its header and last frame). When every
        open block is down to that, the one idle longest is parked: a traceback its stream's next lines
        carry on, the lines in between counted as left out. Only what cannot be parked, or a parked
        one when nothing else is left, is closed cut off."""
        if not self._open:
            self._resume(key := next(iter(self._parked)))
            return self._close(key)
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
        if _parkable(block):
            self._park(key)
            return []
        block.truncated = True
        return self._close(key)

    def _park(self, key: str) -> None:
        """Let an open traceback's lines go but its header (a chain's earlier links are never parked)."""
        block = self._open[key]
        header = self._texts.hold(block.texts[0])
        self._forget(key)
        self._parked[key] = _Parked(block.first, header, block.context, block.timestamp,
                                    block.elided + len(block.texts) - 1)
        self._held += _PARKED_COST

    def _resume(self, key: str) -> None:
        """A parked traceback open again, down to its header, for its stream's next line."""
        parked = self._parked.pop(key)
        self._held -= _PARKED_COST
        first = parked.first
        self._open[key] = _Block(_State.FRAMES, EventKind.TRACEBACK, first, [parked.header],
                                 array("q", (first.lineno,)), timestamp=parked.timestamp, context=parked.context,
                                 elided=parked.elided)
        self._register(first)

    def _touch(self, key: str) -> None:
        if key in self._recent:
            self._recent.move_to_end(key)
        else:
            self._shrunk.pop(key, None)
            self._recent[key] = None

    def _elide(self, block: _Block, head: int, tail: int) -> bool:
        """Leave out a stack's middle: keep `head` lines and the last `tail` ones, from a frame line on
        (a source line stays with its frame). False when there is no such middle."""
        if block.state is not _State.FRAMES or block.held:
            return False
        start = len(block.texts) - tail
        while start > head and not g.FRAME.match(block.texts[start]):
            start -= 1
        if start <= head:
            return False
        block.elided += start - head
        self._texts.release(block.texts[head:start])
        del block.texts[head:start], block.linenos[head:start]
        self._held -= (start - head) * _LINE_COST
        return True

    def _forget(self, key: str) -> _Block:
        block = self._open.pop(key)
        self._recent.pop(key, None)
        self._shrunk.pop(key, None)
        self._by_channel.remove(block.first.channel, key)
        self._held -= _held_cost(block)
        self._texts.release(block.texts)
        return block

    def _append(self, block: _Block, line: LogLine) -> None:
        block.texts.append(self._texts.hold(line.text))
        block.linenos.append(line.lineno)
        self._held += _LINE_COST
        if block.state in _REREAD:
            block.reread = block.reread or []
            block.reread.append(line)
            self._held += _reread_cost(line)
        elif block.reread:  # it went on as a record: what it held whole is part of it
            self._held -= sum(map(_reread_cost, block.reread))
            block.reread = None
        if block.timestamp is None:
            block.timestamp = line.timestamp

    def _start(self, line: LogLine) -> list[ErrorEvent]:
        """A line no block took: it may open one, or be an error on its own."""
        out = self._begin(line)
        if line.stream in self._open:
            self._register(line)
        return out

    def _register(self, line: LogLine) -> None:
        """File the block `line` opened."""
        self._held += _BLOCK_COST + _LINE_COST
        self._recent[line.stream] = None
        self._by_channel.add(line.channel, line.stream)

    def _opened(self, line: LogLine, state: _State, kind: EventKind, **fields) -> None:
        self._open[line.stream] = _block(state, kind, line, self._texts.hold(line.text), **fields)

    def _begin(self, line: LogLine) -> list[ErrorEvent]:
        text = line.text
        if (m := g.GROUP_HEADER.match(text)) is not None:
            self._opened(line, _State.GROUP, EventKind.TRACEBACK, context=m["context"].strip(), group_column=-1)
        elif (m := g.HEADER.match(text)) is not None:
            indent = len(text) - len(text.lstrip(" ")) if not m["context"].strip() else 0
            self._opened(replace(line, text=text[indent:]) if indent else line, _State.FRAMES, EventKind.TRACEBACK,
                         context=m["context"].strip(), indent=indent)
        elif ipython.HEADER.match(text):
            self._opened(line, _State.IPYTHON, EventKind.TRACEBACK)
        elif ipython.starts_cut(text):  # a copy begun inside a notebook's traceback
            self._opened(line, _State.IPYTHON, EventKind.TRACEBACK, truncated=True)
        elif vscode.HEADER.match(text):
            self._opened(line, _State.VSCODE, EventKind.TRACEBACK)
        elif (rich := richtb.HEADER.match(text)) or richtb.starts_cut(text):
            self._opened(line, _State.RICH, EventKind.TRACEBACK, truncated=rich is None)
        elif ((frame := g.FRAME.match(text)) or g.FRAME_CUT.match(text) or g.frame_cut_at_start(text)
              or g.PLACE_CUT.match(text) or ("](" in text and g.FRAME.match(ipython.unlinked(text)))):
            # frames without their header: the log was cut above them (maybe inside the first, or in its
            # place; an editor's copy may have made its path or line number a markdown link); further in than
            # Python puts a frame, the traceback is indented as a whole (pip's output of a build)
            indent = max(0, len(text) - len(text.lstrip(" ")) - 2) if frame else 0
            self._opened(replace(line, text=text[indent:]) if indent else line, _State.FRAMES, EventKind.TRACEBACK,
                         truncated=True, indent=indent)
        elif native.starts(text):
            self._opened(line, _State.NATIVE, EventKind.NATIVE)
        elif fieldreport.opens(text):
            self._opened(line, _State.FIELDS, EventKind.BARE)
        elif pytest_report.starts(text):
            self._opened(line, _State.PYTEST, EventKind.TRACEBACK)
            self._pytest_reports = True
        elif pytest_report.starts_stack(text):
            self._opened(line, _State.PYTEST_STACK, EventKind.TRACEBACK)
        elif not self._pytest_reports and (failed := pytest_report.summary(text)) is not None:
            # pytest's summary line for a failure, where no report of it came before (its own echo there)
            return [self._event(_block(_State.MESSAGE, EventKind.NOTICE, line, text, context=failed[1]), failed[0])]
        elif g.ARGPARSE_USAGE.match(text):
            self._opened(line, _State.USAGE, EventKind.ARGPARSE)
        elif g.BARE_EXCEPTION_LINE.match(text):  # held a line: frames may follow it
            self._opened(line, _State.BARE, EventKind.BARE)
        elif text[:1] in (" ", "\t") and g.BARE_EXCEPTION_LINE.match(unindented := text.lstrip(" \t")):
            self._opened(replace(line, text=unindented), _State.BARE, EventKind.BARE)  # quoted alone, indented
        elif (quote := (body := text.lstrip(" \t"))[:1]) in _QUOTES and g.BARE_EXCEPTION_LINE.match(
                unquoted := body[1:].removesuffix(_QUOTES[quote])):
            self._opened(replace(line, text=unquoted), _State.BARE, EventKind.BARE)  # in quotes (the closing one maybe cut)
        elif (words := g.exception_in_words(text)) is not None:
            self._opened(replace(line, text=words[1]), _State.BARE, EventKind.BARE, context=words[0])
        elif "module specification" in text and (runpy := g.runpy_error(text)) is not None:
            self._opened(replace(line, text=runpy[1]), _State.BARE, EventKind.BARE, context=runpy[0])
        elif 'File "' in text and (glued := g.frame_after_words(text)) is not None:  # (cut above: no header)
            self._opened(replace(line, text=glued[1]), _State.FRAMES, EventKind.TRACEBACK, truncated=True,
                         context=glued[0])
        elif self._notices is not None and (notice := self._notices(text)) is not None:
            return [self._event(_block(_State.MESSAGE, EventKind.NOTICE, line, text), notice)]
        elif (logged := logged_error(text, line.prefix)) is not None:
            self._opened(line, _State.LOGGED, EventKind.NOTICE, logged=logged)
        elif text[-1:] == ")" and (held := g.repr_said(text.strip())) is not None and held[1]:
            self._opened(replace(line, text=f"{held[0]}: {held[1]}"), _State.BARE, EventKind.BARE)  # its repr alone
        return []

    def _advance(self, block: _Block, line: LogLine) -> _Step:
        text = line.text
        stripped = text.strip()
        state = block.state
        if state is _State.FRAMES:
            if text[:1] == " " and self._frame_rest(block, text):
                return _Step.TAKE  # the rest of a frame line the terminal wrapped before a space
            if _exception_at_frames_indent(block, text):
                block.state, block.held = _State.MESSAGE, 0  # (a traceback re-indented by hand: blocks reads it)
                return _Step.TAKE
            if (g.frame_line(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped)
                    or g.FRAME_CUT.match(text) or (g.is_frame_detail(block.texts[-1]) and g.frame_cut_at_start(text))):
                if len(block.texts) == 1 and not block.indent and _tells_indent(text):
                    block.indent = len(text) - len(text.lstrip(" ")) - 2  # how far a traceback after words is indented
                block.held = 0
                return _Step.TAKE
            if not stripped and block.held < _SOURCE_LINES and (block.held or _frame_detail(block.texts[-1])
                                                               or _after_stripped_frame(block, 1) or g.HEADER.match(block.texts[-1])):
                block.held += 1  # a blank line among frames (a paste's doubled line breaks), kept if they go on
                return _Step.TAKE
            if (stripped and (_after_stripped_frame(block, 0) or _in_open_statement(block.texts))
                    and not _reads_as_exception_line(text, block) and not self._starts_record(text)):
                return _Step.TAKE  # the source line of a frame whose indentation was stripped (3.13+: maybe several)
            if self._frame_rest(block, text):
                return _Step.TAKE  # the rest of a frame line the terminal wrapped
            if (stripped and g.frame_line(block.texts[-1]) and not g.exception_line_at_source(text)
                    and not self._starts_record(text)):
                return _Step.TAKE  # the source line of the frame above, which alone lost its indentation
            if _nests_traceback(text):
                block.frames_from = len(block.texts)
                return _Step.TAKE  # RuntimeError(traceback.format_exc()): the inner traceback follows
            if g.frame_remnant(text):
                return _Step.TAKE
            if not stripped or g.HEADER.match(text) or not g.EXCEPTION_LINE.match(text):
                block.truncated = True
                return _Step.CLOSE
            block.state, block.held = _State.MESSAGE, 0
            return _Step.TAKE
        if state is _State.MESSAGE:
            if not stripped or stripped == g.REMOTE_QUOTE:  # a _RemoteTraceback's quote ends its message
                block.state, block.held = _State.AFTER_BLANK, 1
                return _Step.TAKE
            if stripped == g.PIP_OUTPUT_END:
                return _Step.CLOSE
            if stripped in _SEPARATORS:
                block.state = _State.SEPARATOR
                return _Step.TAKE
            if (header := g.HEADER.match(text)) and block.message_lines == 0 and g.reraised_original(header):
                block.state, block.note_start, block.output = _State.NOTE, len(block.texts), True
                block.kind = EventKind.TRACEBACK  # (a bare exception line's, now)
                return _Step.TAKE  # torch's error raised again with the worker's traceback in its message
            if block.kind is EventKind.TRACEBACK and header and not header["context"]:
                block.state, block.note_start = _State.NOTE, len(block.texts)
                block.output = block.message_lines <= g.OUTPUT_LEAD and _introduces_output(
                    block.texts[-1 - block.message_lines])
                return _Step.TAKE
            if g.FRAME.match(text) and _wraps_remote_here(block):
                block.state, block.frames_from = _State.FRAMES, len(block.texts) - 1 - block.message_lines
                return _Step.TAKE  # Ray: the remote error's frames follow the wrapper's line
            if (block.kind is not EventKind.TRACEBACK and not (block.kind is EventKind.BARE and text[:1] in (" ", "\t"))
                    or _opens_something(text)):
                return _Step.CLOSE
            if block.message_lines >= self._max_message_lines:  # a tensor's repr: its head is kept
                return _Step.CLOSE if self._starts_record(text) else _Step.SKIP
            block.message_lines += 1
            return _Step.TAKE
        if state is _State.AFTER_BLANK:
            if stripped == g.PYBIND_AT and block.held == 1:
                block.state, block.held = _State.PYBIND, 0
                return _Step.TAKE  # pybind11's stack of the error (see grammar)
            if stripped in _SEPARATORS:
                block.state, block.held = _State.SEPARATOR, 0
                return _Step.TAKE
            if ((header := g.HEADER.match(text)) and not header["context"]
                    and block.message_lines + block.held <= g.OUTPUT_LEAD and _output_introduced(block)):
                block.state, block.note_start, block.output = _State.NOTE, len(block.texts), True
                block.kind = EventKind.TRACEBACK  # (a bare exception line's, now)
                return _Step.TAKE  # a message that began with a line break, its text introducing a child's traceback
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
                block.state, block.frames_from = _State.FRAMES, len(block.texts)
                return _Step.TAKE
            if g.begins_header(stripped):  # (before IPython's: one that lost its type reads as such a cut)
                return _Step.TAKE  # a header a terminal wrapped: its rest joins it (see _takes_rest)
            if ipython.RULE.match(text) or ipython.HEADER.match(text):
                block.state = _State.IPYTHON
                return _Step.TAKE
            if richtb.HEADER.match(text):
                block.state = _State.RICH
                return _Step.TAKE
            if g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = _State.MESSAGE, 0
                return _Step.TAKE
            block.truncated = True
            return _Step.CLOSE
        if state is _State.BARE:
            if len(block.texts) == 1 and _message_below(block.texts[0]) and text[:1] in ("", " ", "\t"):
                block.state, block.message_lines = _State.MESSAGE, 0  # `Type: `, its message below it
                return self._advance(block, line)
            if len(block.texts) == 2 and not block.texts[1].strip():  # a blank line after the exception line:
                if stripped and cleo.names_class(block.texts[0]) and cleo.goes_on(block.texts, text):
                    block.state = _State.CLEO  # maybe a Cleo app's report: its message, then its place
                    return _Step.TAKE
                if stripped == dagster.STACK:
                    block.state, block.kind = _State.DAGSTER, EventKind.TRACEBACK
                    return _Step.TAKE
                if text.startswith('File "') and g.REVERSED_FRAME.match(text):
                    _cut(block, 1)  # a log viewer's frames, unindented, after a blank (Streamlit Cloud's page)
                    block.state, block.kind = _State.REVERSED, EventKind.TRACEBACK
                    return _Step.TAKE
                if stripped != g.PYBIND_AT:  # the error ends there, unless pybind11's stack follows
                    return _Step.CLOSE
                block.state, block.kind = _State.PYBIND, EventKind.TRACEBACK
                return _Step.TAKE
            if len(block.texts) == 1 and not stripped:
                return _Step.TAKE  # (looked at again if no `At:` follows it)
            if len(block.texts) == 1 and dagster.link(text):
                block.state = _State.DAGSTER  # the error's cause follows, as Dagster words it
                return _Step.TAKE
            if len(block.texts) == 1 and stripped == streamlit.HEADER:
                block.state, block.kind = _State.STREAMLIT, EventKind.TRACEBACK
                return _Step.TAKE
            if g.FRAME.match(text) and (_wraps_remote(block.texts[0])
                                        or (len(block.texts) == 2 and g.remote_task(block.texts[1]))):
                block.state, block.kind = _State.FRAMES, EventKind.TRACEBACK  # Ray: the remote frames follow
                block.frames_from = len(block.texts) - 1
                return _Step.TAKE
            if len(block.texts) == 1 and airflow.frame(text):
                block.state, block.kind = _State.AIRFLOW, EventKind.TRACEBACK
                return _Step.TAKE
            if g.REVERSED_FRAME.match(text):
                block.state, block.kind = _State.REVERSED, EventKind.TRACEBACK
                return _Step.TAKE
            if len(block.texts) == 1 and ipython.starts_cut(text):
                block.state, block.kind = _State.IPYTHON, EventKind.TRACEBACK  # Databricks: the exception first
                return _Step.TAKE
            if len(block.texts) == 1 and (header := g.HEADER.match(text)) and g.reraised_original(header):
                block.state, block.note_start, block.output = _State.NOTE, 1, True
                block.kind = EventKind.TRACEBACK  # torch's error raised again, the worker's traceback below it
                return _Step.TAKE
            if len(block.texts) == 1 and _raised_below(block.texts[0]) and named_error(text) is not None:
                block.state, block.message_lines = _State.MESSAGE, 1  # `BackendCompilerFailed: backend='inductor'
                return _Step.TAKE  # raised:`, then the error it raised (blocks.parse_chain: that one failed)
            if len(block.texts) <= _SOURCE_LINES and stripped and not self._starts_record(text):
                return _Step.TAKE  # the innermost frame's caret and source lines, if a frame follows
            if stripped and _indented_below(block.texts[0], [*block.texts[1:], text]):
                block.state, block.message_lines = _State.MESSAGE, len(block.texts) - 1
                return _Step.TAKE  # more indented lines than a frame prints: its message's (torch._dynamo's hints)
            return _Step.CLOSE
        if state is _State.CLEO:
            if cleo.place(text):
                block.state, block.kind = _State.CLEO_PLACE, EventKind.TRACEBACK
                return _Step.TAKE
            return _Step.TAKE if cleo.goes_on(block.texts, text) else _Step.CLOSE
        if state is _State.CLEO_PLACE:
            return _Step.TAKE if cleo.source(text) else _Step.CLOSE
        if state is _State.REVERSED:
            if g.REVERSED_FRAME.match(text):
                return _Step.TAKE
            if g.HEADER.match(text):
                return _Step.TAKE_AND_CLOSE  # the top of the traceback, printed last
            recent = block.texts[-_SOURCE_LINES:]
            if stripped and any(g.REVERSED_FRAME.match(held) for held in recent) and not self._starts_record(text):
                return _Step.TAKE  # the source (and caret) line of the next frame out
            return _Step.CLOSE
        if state is _State.NOTE:
            if g.FRAME.match(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped):
                return _Step.TAKE
            if g.EXCEPTION_LINE.match(text) and (block.output or _retold(block, text)
                                                 or self._is_note(block.texts, block.note_start, text)):
                block.state, block.message_lines = _State.MESSAGE, 0  # the note's or the child's exception
                return _Step.TAKE  # line; its message may go on
            return _Step.CLOSE  # not a note: the block ends where it began (see _close)
        if state is _State.VSCODE:  # its message, then frames newest first
            if g.REVERSED_FRAME.match(text) or (text[:1] == " " and stripped and block.message_lines < len(block.texts) - 1):
                return _Step.TAKE
            if block.message_lines == len(block.texts) - 1 and stripped and not self._starts_record(text):
                block.message_lines += 1
                return _Step.TAKE
            if g.EXCEPTION_LINE.match(text) and text.startswith(vscode.HEADER.match(block.texts[0])["type"] + ":"):
                return _Step.TAKE_AND_CLOSE  # a copy that ends in the exception line itself
            return _Step.CLOSE
        if state is _State.NATIVE:
            if native.continues(block.texts, text):
                return _Step.TAKE
            return _Step.CLOSE
        if state is _State.PYTEST:
            return _Step.TAKE if pytest_report.continues(block.texts, text) else _Step.CLOSE
        if state is _State.PYTEST_STACK:
            if pytest_report.starts(text):
                block.state = _State.PYTEST
                self._pytest_reports = True
                return _Step.TAKE
            return _Step.TAKE if pytest_report.stack_goes_on(block.texts, text) else _Step.DROP  # (no report)
        if state is _State.FIELDS:
            goes_on = fieldreport.goes_on(block.texts, text)
            return _Step.TAKE_AND_CLOSE if goes_on is None else _Step.TAKE if goes_on else _Step.CLOSE
        if state is _State.AIRFLOW:
            if not airflow.goes_on(block.texts, text):
                return _Step.CLOSE
            block.held = 0 if stripped else 1
            return _Step.TAKE
        if state is _State.DAGSTER:
            if not dagster.goes_on(block.texts, text):
                return _Step.CLOSE
            block.held = 0 if stripped else 1  # (a blank line is kept only if the text goes on after it)
            if stripped == dagster.STACK:
                block.kind = EventKind.TRACEBACK
            return _Step.TAKE
        if state is _State.STREAMLIT:  # frame lines, each with its source line under it
            if g.FRAME.match(text) or (text[:1] == " " and stripped and len(block.texts) > 2):
                return _Step.TAKE
            return _Step.CLOSE
        if state is _State.PYBIND:
            return _Step.TAKE if g.PYBIND_FRAME.match(text) else _Step.CLOSE
        if state is _State.LOGGED:  # one blank line, then pybind11's stack, or the error ends on its line
            if len(block.texts) == 1 and not stripped:
                return _Step.TAKE
            if len(block.texts) == 2 and stripped == g.PYBIND_AT:
                block.state, block.kind = _State.PYBIND, EventKind.TRACEBACK
                return _Step.TAKE
            return _Step.CLOSE
        if state is _State.RICH:
            if richtb.continues(text):
                return _Step.TAKE
            if stripped and richtb.CLOSE.match(block.texts[-1]) and g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = _State.MESSAGE, 0
                return _Step.TAKE
            block.truncated = True
            return _Step.CLOSE
        if state is _State.IPYTHON:
            if len(block.texts) == 1 and ipython.old_frame_alone(block.texts[0], text):
                return _Step.DROP
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
                    or native.starts(text) or ipython.HEADER.match(text) or vscode.HEADER.match(text)
                    or pytest_report.summary(text) is not None or (self._notices is not None and self._notices(text) is not None))

    def _close(self, key: str) -> list[ErrorEvent]:
        block = self._forget(key)
        held = self._trim(block)
        if held:
            out = self._led(block)
            for line in held:
                out.extend(self._feed(line))
            return out
        if (block.kind is EventKind.ARGPARSE and not g.ARGPARSE_ERROR.match(block.texts[-1])) or (
                block.state is _State.PYTEST_STACK):
            return []  # a usage text printed on its own (--help, a warning), a stack with no `E` lines: no error
        return self._led(block)

    def _led(self, block: _Block) -> list[ErrorEvent]:
        """The block's event; where an exception line came right above its header, that line's event
        first, or, when the traceback ended without an exception line of its own, one event of both."""
        event = self._event(block)
        if block.lead is None:
            return [event]
        said = self._event(block.lead)
        last = event.chain[-1]
        if last.exception_type or event.kind is not EventKind.TRACEBACK:
            return [said, event]
        own = replace(last, exception_type=said.final.exception_type, message=said.final.message)
        return [replace(event, chain=(*event.chain[:-1], own), span=replace(event.span, line_start=said.span.line_start),
                        truncated=False, lines=(*said.lines, *event.lines), timestamp=said.timestamp or event.timestamp)]

    @staticmethod
    def _trim(block: _Block) -> list[LogLine]:
        """Cut a block that ends here to the record it holds; returns the lines after the record,
        which are to be looked at afresh."""
        if block.reread:  # no frame came after a bare line, or a traceback was no note:
            held, block.reread = block.reread, None
            if block.state is _State.BARE and _indented_below(block.texts[0], [line.text for line in held]):
                block.state, block.message_lines = _State.MESSAGE, len(held)  # its message's indented lines
                return []
            if block.state is _State.BARE and not held[0].prefix and g.titled(block.texts[0], held[0].text):
                _cut(block, len(block.texts) - len(held) + 1)  # an error tracker's title: the class, its value below
                block.state, block.message_lines = _State.MESSAGE, 1
                return held[1:]
            _cut(block, len(block.texts) - len(held))  # the block ends before them
            block.state = _State.MESSAGE
            return held
        while block.state in (_State.NATIVE, _State.PYTEST) and not block.texts[-1].strip():
            _cut(block, len(block.texts) - 1)
        if block.state is _State.REVERSED and _moved_up(block.texts):
            block.truncated = True  # (its header is not there: the copy may have cut frames above them)
        while (block.state is _State.REVERSED and not g.REVERSED_FRAME.match(block.texts[-1])
               and not _sources_below(block.texts)):
            _cut(block, len(block.texts) - 1)  # source lines with no frame after them
        if block.state in (_State.AFTER_BLANK, _State.FRAMES, _State.DAGSTER, _State.AIRFLOW) and block.held:
            _cut(block, len(block.texts) - block.held)
        if block.state in (_State.FRAMES, _State.SEPARATOR, _State.IPYTHON, _State.RICH) and not (
                block.state is _State.IPYTHON and g.EXCEPTION_LINE.match(block.texts[0])):  # (its exception came first)
            block.truncated = True
        return []

    def _event(self, block: _Block, notice: ErrorInfo | None = None) -> ErrorEvent:
        texts = block.texts
        chain: tuple[ErrorInfo, ...]
        if block.kind is EventKind.ARGPARSE:
            error = g.ARGPARSE_ERROR.match(texts[-1])
            chain = (ErrorInfo("ArgumentError", error["message"], has_traceback=False),)
            context = " ".join(t.strip() for t in texts[:-1])
        elif notice is not None:
            chain, context = (notice,), block.context
        elif block.logged is not None:
            stack = pybind_stack(texts, 1)
            chain, context = tuple(with_pybind_stack(block.logged, stack[0]) if stack else (block.logged,)), block.context
        elif block.kind is EventKind.NATIVE:
            chain, context = native.parse_chain(texts), ""
        elif block.state is _State.PYTEST:
            chain, context = pytest_report.parse(texts), ""
        elif block.state is _State.FIELDS:
            chain, context = raised_within(fieldreport.parse(texts)), ""
        elif block.state is _State.CLEO_PLACE:
            chain, context = (cleo.parse(texts),), ""
        else:
            standard = _TO_STANDARD.get(block.state)
            chain = parse_chain(standard(texts) if standard is not None else texts)
            chain = chain or (ErrorInfo("", ""),)
            context = block.context
        first = block.first
        return ErrorEvent(
            chain=chain,
            span=SourceSpan(first.file, first.lineno, max(block.linenos[-1], block.skipped_to)),
            kind=block.kind,
            stream=first.stream,
            rank=first.rank,
            host=first.host,
            timestamp=block.timestamp,
            context=context,
            truncated=block.truncated or not chain[-1].exception_type,
            lines=tuple(texts),
            elided=block.elided,
        )


def _leads(block: _Block, line: LogLine) -> bool:
    """Whether `block` is an exception line logged as an error right above `line`, a traceback's header:
    AWS Lambda's Python runtime logs `[ERROR] KeyError: 'x'`, then the stack without it. (A bare exception
    line above a traceback cut short, by a rotation say, is no sign that the two are one.)"""
    return (block.state is _State.LOGGED and len(block.texts) == 1
            and block.linenos[0] + 1 == line.lineno and (m := g.HEADER.match(line.text)) is not None
            and not m["context"].strip())


def _rest_of_rest(block: _Block, rest: str) -> str | None:
    """The last two lines of `block` and `rest` as one, where they are the three parts of a frame line
    wrapped twice (its last part in the function's name)."""
    if block.state is not _State.FRAMES or len(block.texts) < 2:
        return None
    frame = g.rest_of_frame_line(block.texts[-2], block.texts[-1])
    return block.texts[-1] + rest if frame is not None and g.rest_of_frame_line(frame, rest) is not None else None


def _retold(block: _Block, exception_line: str) -> bool:
    """Whether the traceback a note state reads ends in the very exception line its block's traceback
    ended in (right before the note's header), from other frames: where the error was first raised, in
    another process (vLLM's executor re-raising a worker's error with the worker's traceback below it).
    (From the same frames it is the same error printed again.)"""
    start = block.note_start
    if block.message_lines or block.texts[start - 1].strip() != exception_line.strip():
        return False
    below_header = [text for text in block.texts[block.frames_from:start] if not g.HEADER.match(text)]
    return [*block.texts[start + 1:], exception_line] != below_header


def _indented_below(exception_line: str, texts: list[str]) -> bool:
    """Whether `texts` are all indented under an exception line that is not: its message's further lines."""
    return exception_line[:1] not in (" ", "\t") and all(text[:1] in (" ", "\t") for text in texts)


def _exception_at_frames_indent(block: _Block, text: str) -> bool:
    """Whether `text` is an exception line two blanks in, as the frame line above it (after its source
    lines) is: a traceback re-indented by hand. (Only two in: `extend` refuses such a line cheaply.)"""
    if text[:2] != "  " or text[2:3] in (" ", "\t", "") or text[2:7] == "File ":
        return False
    frame = next((held for held in reversed(block.texts[-1 - _SOURCE_LINES:]) if g.frame_line(held)), None)
    return frame is not None and frame[2:3] != " " and g.exception_line_at_indent(text, 2)


def _typeless_header(block: _Block) -> bool:
    """Whether `block` holds an IPython header without its type and nothing else."""
    return block.state is _State.IPYTHON and len(block.texts) == 1 and block.texts[0].lstrip().startswith("Traceback")


def _ends_in_source(block: _Block) -> bool:
    """Whether the last line `block` took is a frame's source line (not the rest of a frame line a
    terminal cut before a space)."""
    texts = block.texts
    return _source_line(texts[-1]) and not (len(texts) > 1 and g.rest_of_frame_line(texts[-2], texts[-1]))


def _source_line(text: str) -> bool:
    return text[:1] == " " and not g.FRAME.match(text) and not g.FRAME_CUT.match(text)


def _frame_detail(text: str) -> bool:
    return bool(g.FRAME.match(text) or g.is_frame_detail(text) or text[:1] == " ")


def _after_stripped_frame(block: _Block, extra: int) -> bool:
    """A frame line that lost its indentation is among the last lines: up to its source and caret
    lines (which lost theirs too), and `extra` lines more, came after it."""
    texts = block.texts
    return any(_ends_stripped_frame(texts, i) for i in range(max(0, len(texts) - _SOURCE_LINES - extra), len(texts)))


_STATEMENT_LINES = 12  # how far back a statement that spans lines is looked for (3.13+ shows it whole)


def _in_open_statement(texts: list[str]) -> bool:
    """Whether the last lines, after a frame line that lost its indentation, are a statement whose
    brackets are still open: Python 3.13+ shows a statement that spans lines whole, or its first and last
    lines around `...<2 lines>...`, and a stripped paste leaves no indentation to tell them apart."""
    if texts[-1][:1] in (" ", "\t"):
        return False  # (the frames kept their indentation: the usual case, told at once)
    for i in range(len(texts) - 1, max(0, len(texts) - _STATEMENT_LINES) - 1, -1):
        if _ends_stripped_frame(texts, i):
            return i + 1 < len(texts) and bool(texts[i + 1].strip()) and g.unclosed("".join(texts[i + 1:]))
        if g.frame_line(texts[i]):
            return False
    return False


def _ends_stripped_frame(texts: list[str], i: int) -> bool:
    """Whether `texts[i]` ends a frame line that lost its indentation: the whole line, the rest of one
    broken in two, or (first) one the paste began inside of."""
    text = texts[i]
    if g.frame_line(text):
        return g.lost_indentation(text)
    if i:
        return g.lost_indentation(texts[i - 1]) and g.joined_frame(texts[i - 1], text) is not None
    return g.frame_cut_at_start(text) is not None  # (`File "` and the rest: at no indentation)


def _tells_indent(first: str) -> bool:
    """Whether the first line after a traceback's header is a frame further in than Python puts one:
    the traceback is indented as a whole, its header behind words (torchrun's `  traceback : `)."""
    return first[:3] == "   " and g.FRAME.match(first) is not None


def _message_below(text: str) -> bool:
    """An exception line whose message began with a line break: `Type: ` and nothing else."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and m["message"] is not None and not m["message"].strip()


def _raised_below(text: str) -> bool:
    """An exception line whose message introduces what follows it (`backend='inductor' raised:`)."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and bool(m["message"]) and g.introduces_output(m["message"])


def _output_introduced(block: _Block) -> bool:
    """Whether the message that began with a line break and ends in the block's last lines introduces
    output (see grammar), so that the traceback after it is a child's."""
    start = len(block.texts) - 1 - block.message_lines - block.held  # the exception line
    return _message_below(block.texts[start]) and g.introduces_output("\n".join(block.texts[start + 1:]))


def _introduces_output(text: str) -> bool:
    """Whether the exception line `text` introduces output that follows it (see grammar)."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and m["message"] is not None and g.introduces_output(m["message"])


def _reads_as_exception_line(text: str, block: _Block) -> bool:
    """Whether a line among the stripped frame's last lines is the exception's."""
    last = len(block.texts) - 1
    while last > 0 and not block.texts[last].strip():
        last -= 1  # (a paste's doubled line breaks)
    if _ends_stripped_frame(block.texts, last):
        return g.exception_line_at_source(text)
    return g.EXCEPTION_LINE.match(text) is not None


def _parkable(block: _Block) -> bool:
    """A traceback still in its first stack, opened by its header, holding back no blank line: its
    stream's next lines can carry it on from its header."""
    return (block.state is _State.FRAMES and not block.frames_from and not block.held and not block.truncated
            and g.HEADER.match(block.texts[0]) is not None)


def _cut(block: _Block, end: int) -> None:
    """Let the block's lines from `end` on go."""
    del block.texts[end:], block.linenos[end:]


def _in_order(texts: list[str]) -> list[str]:
    """A traceback whose exception line came first, in the order Python prints it: moved down from above
    frames in Python's order; or with its frames turned round, each group of a frame and the lines under
    it (Sentry's newest-first frames) or each line (a newest-first export's)."""
    if _moved_up(texts):
        return [*texts[1:], texts[0]]
    if _sources_below(texts):
        groups: list[list[str]] = []
        for text in texts[1:]:
            if g.REVERSED_FRAME.match(text) or not groups:
                groups.append([])
            groups[-1].append(text)
        return [g.HEADER_TEXT, *(text for group in reversed(groups) for text in group), texts[0]]
    return _newest_last(texts)


# States whose lines are another program's layout of a traceback -> that layout rewritten in CPython's
_TO_STANDARD: dict[_State, Callable[[list[str]], list[str]]] = {
    _State.REVERSED: _in_order, _State.VSCODE: vscode.to_standard, _State.STREAMLIT: streamlit.to_standard,
    _State.DAGSTER: dagster.to_standard, _State.AIRFLOW: airflow.to_standard,
}


def _sources_below(texts: list[str]) -> bool:
    """Whether the frames under an exception line have their source lines under them, as Python prints."""
    return len(texts) > 2 and g.REVERSED_FRAME.match(texts[1]) is not None and texts[2].startswith("    ")


def _moved_up(texts: list[str]) -> bool:
    """Whether an exception line above frames is a traceback in Python's order with its exception line
    moved up (a copy trimmed by hand): its first frame has its source line under it, no header under
    them all (a newest-first export has each source line above its frame), and no frame's source line
    calls the frame listed before it (Sentry lists frames newest first, each source line under its frame)."""
    if not _sources_below(texts) or any(g.HEADER.match(text) for text in texts):
        return False
    calls = [(frame["function"] or "", texts[k + 1].strip() if k + 1 < len(texts) and texts[k + 1][:4] == "    " else "")
             for k, text in enumerate(texts) if (frame := g.FRAME.match(text)) is not None]
    inwards, outwards = g.call_order(calls)
    return inwards or not outwards


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


def _wraps_remote_here(block: _Block) -> bool:
    """The message read so far is a remote error's wrapper line (its remote task named on it or on the next
    line), maybe with caret lines of a frame cut off under it."""
    texts = block.texts[len(block.texts) - 1 - block.message_lines:]
    told = 1 if _wraps_remote(texts[0]) else 2 if len(texts) > 1 and g.remote_task(texts[1]) else 0
    return bool(told) and len(texts) - told <= _SOURCE_LINES and all(map(g.CARETS.match, texts[told:]))


def _wraps_remote(text: str) -> bool:
    """An exception line like `ray.exceptions.RayTaskError(ValueError): ...` (see grammar.wraps_remote)."""
    exc = g.EXCEPTION_LINE.match(text)
    return exc is not None and g.wraps_remote(exc)


def _opens_something(text: str) -> bool:
    """A line that cannot continue an exception message: it starts a new record or traceback."""
    return bool(g.HEADER.match(text) or g.GROUP_HEADER.match(text) or g.LOG_RECORD_START.match(text)
                or g.FRAME.match(text) or native.interrupts(text) or richtb.HEADER.match(text))
