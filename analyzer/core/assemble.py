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

from array import array
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from analyzer.core import (
    airflow,
    asyncio_report,
    awslambda,
    azure,
    classpage,
    cleo,
    dagster,
    doctest_report,
    excepthook,
    fieldreport,
    hydra,
    ipython,
    lazyregex,
    native,
    newest_first,
    oneline,
    precommit,
    pytest_report,
    richtb,
    scons,
    snakemake,
    streamlit,
    vscode,
)
from analyzer.core import grammar as g
from analyzer.core import open_block as ob
from analyzer.core.blocks import (
    box_column,
    contradicts_statement,
    in_box,
    named_error,
    note_end,
    parse_chain,
    pybind_stack,
    raised_within,
    told_within,
    with_pybind_stack,
)
from analyzer.core.cpython_messages import classless
from analyzer.core.normalize import may_continue
from analyzer.core.notices import exc_info_said, logged_error, retried, said_at_end
from analyzer.core.open_block import SOURCE_LINES, Block, State, Step, cut, new_block
from analyzer.core.records import ErrorEvent, ErrorInfo, EventKind, LogLine, SourceSpan
from analyzer.core.shredded import Rejoiner, loose_type

__all__ = ["TracebackAssembler"]


_COMPLETE = (State.MESSAGE, State.AFTER_BLANK, State.GROUP, State.BARE, State.REVERSED, State.NATIVE,
             State.PYTEST, State.PYBIND, State.LOGGED, State.QUIET, State.STREAMLIT, State.CLEO, State.CLEO_PLACE, State.DAGSTER,
             State.AIRFLOW, State.SCONS, State.SNAKEMAKE, State.AZURE)
_REREAD = (State.BARE, State.NOTE, State.LOGGED, State.QUIET, State.CLEO)  # states whose last lines may have to be looked at afresh
_WRAPPED_STATES = (State.FRAMES, State.MESSAGE, State.AFTER_BLANK, State.SEPARATOR)  # where a rest joins its line
_WIDTH_VOTES = 2  # lines of one length that may have been wrapped before that length is the width (_vote)
_GOES_ON = frozenset(")]}>,.;:!?%")  # what begins the rest of a cut line, and no word: no line a paste wrapped at blanks
_USUAL_WIDTH = 80  # a terminal's width where no two cut lines told it (see _at_width)
_MAX_WIDTHS = 64  # lengths voted for, at most (input that wraps at no one width votes for many)
_QUOTES = {'"': '"', "'": "'", "[": "]"}  # what a line quoted whole may begin with -> what ends it
_CURLY = "\u201c\u201d\u2018\u2019"  # an editor's quotes, which either way round may open or close
_KEPT_FRAME_LINES = 100  # of a stack longer than the block limit: this many lines at its head and at its tail
# A bare exception line waits for a traceback to begin at most this many lines below it (_Waiting): a logger's
# line or the words a handler prints before the stack may come between, double-spaced. This many wait at once.
_LEAD_WINDOW = 4
_MAX_WAITING = 16
_ASIDE_WINDOW = 16  # lines another writer may put between two lines of a traceback set aside (see _set_aside)
_MAX_ASIDE = 64  # channels with a traceback set aside at once
_PDB_ERROR = "*** "  # pdb: `*** ModuleNotFoundError: No module named 'x'` after a command that raised
_RUST_CAUSES_BELOW = 2  # lines from a Rust program's `Error: ...` to its `Caused by:` (a blank between)


# What holding costs, in bytes as CPython lays them out (tracemalloc, 20,000 ranks at once):
_BLOCK_COST = 768  # a block's record, its first line's metadata, its places in the indexes
_LINE_COST = 16  # a line of a block: a reference to its shared text and its line number
_TEXT_COST = 128  # a distinct text besides its characters: the string and its entry in _SharedTexts
_PARKED_COST = 512  # a parked traceback: its record, its first line's metadata, its index entry


def _quoted_whole(text: str) -> str | None:
    """The text of a line quoted whole, without its quotes: the closing ones maybe cut or on a later line, three of
    a docstring's (`grpc._channel._InactiveRpcError: ...` behind them), a blank inside them (`" ValueError: ... "`),
    an editor's curly ones; else None. (Words after a curly quote that closes are a sentence's: exception_in_words.)"""
    body = text.lstrip(" \t")
    quote = body[:1]
    if quote in _QUOTES:
        inner = body.lstrip(quote).removesuffix(_QUOTES[quote] * (len(body) - len(body.lstrip(quote)))).rstrip(" \t")
    elif quote and quote in _CURLY:
        inner = body[1:].rstrip(" \t" + _CURLY)
        if any(mark in inner for mark in _CURLY):
            return None
    else:
        return None
    return inner[1:] if inner[:1] == " " else inner  # (one blank after the quote: what the fast path looks for)


def _reread_cost(line: LogLine) -> int:
    return len(line.text) + 512  # a line kept whole: its text, its record and its metadata's strings


def _held_cost(block: Block) -> int:
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
class _Waiting:
    """A bare exception line, closed, that a traceback beginning a few lines below may end without: a paste
    that gives the error first and then its stack, cut before the exception line it told already."""

    block: Block
    event: ErrorEvent  # its own, which holds the place in the output it goes out at unless a traceback takes it
    shown: bool = False  # a provisional event showed it


@dataclass(slots=True)
class _Shared:
    text: str
    holders: int = 0


class TracebackAssembler:
    """Pure core: no I/O. One instance per input file."""

    def __init__(self, max_block_lines: int = 5000, max_message_lines: int = 200,
                 notices: Callable[[str], ErrorInfo | None] | None = None,
                 max_held: int = 96 << 20) -> None:
        self._open: dict[str, Block] = {}  # by stream, in the order they opened
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
        self._waiting: OrderedDict[str, _Waiting] = OrderedDict()  # by stream, the one waiting longest first
        # By channel: a traceback another writer's lines came into, and where its last line was (see _set_aside)
        self._aside: OrderedDict[str, tuple[Block, int]] = OrderedDict()
        # Events in the order they complete, held from the first that waits: a bare line's event goes out in its
        # place, or none where a traceback took it, and the events after it wait with it (see _in_order).
        self._queue: deque[ErrorEvent] = deque()
        self._taken: set[int] = set()  # the ids of the queued events a traceback took, left out
        self._rust_errors: dict[str, LogLine] = {}  # by stream, a Rust program's `Error: ...` that opened nothing
        self._unraisable: LogLine | None = None  # CPython's line above a traceback it reports as ignored (g.UNRAISABLE)
        self._rejoiner = Rejoiner()  # exception lines whose pieces other processes' writes came between
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
        """Records whose lines may go on, parked ones included. (Not a bare line that waits for a traceback:
        lines that can start none may go by unread, and the next line read lets it go if it is too far below.)"""
        return len(self._open) + len(self._parked) + len(self._aside) + self._rejoiner.waiting

    def feed(self, line: LogLine, may_start: bool = True) -> list[ErrorEvent]:
        """`may_start`: False where the line, as it is, can start no record (the fast path's finder did not report it:
        its patterns are a superset of what `_begin` looks for), so that it is not looked at for one."""
        lineno, prefix = line.lineno, line.prefix
        length = len(prefix) + len(line.text)
        last = self._last
        rejoined, typed_at = self._rejoiner.rejoined(line)
        if not prefix and last is not None and not typed_at:
            if (self._run > 1 and lineno == self._physical_lineno + 1 and line.text.strip()
                    and self._took(last.stream, self._physical_lineno)):
                self._vote(self._physical_length)  # a record's prefixed lines, and the next one without: maybe a rest
            if (last.prefix or self._width or self._physical_length >= self._longest) and self._takes_rest(line):
                self._last, self._after_rest = replace(last, text=line.text, lineno=lineno), True
                self._physical_lineno, self._physical_length = lineno, length
                return self._in_order(self._within_budget([]))
        text = line.text
        line, rest = (rejoined, False) if typed_at else self._unwrapped(line)
        may_start = may_start or line.text != text
        if typed_at and (alone := self._rejoined_alone(line, typed_at)) is not None:
            out = alone
        elif (first := self._first_line_unprefixed(line)) is not None:
            out = first + self._feed(replace(line, starts_message=False), may_start)  # (the record the first line began goes on)
        else:
            out = self._feed(line, may_start)
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
        if self._waiting:
            self._expire(line)
        if self._held + self._texts.size > self._max_held:
            out = self._within_budget(out)
        return self._in_order(out) if self._queue or self._waiting or self._taken else out

    def _rejoined_alone(self, line: LogLine, typed_at: int) -> list[ErrorEvent] | None:
        """A type and its message rejoined (see shredded.Rejoiner): an error of one line, not the message of the error
        before it nor the end of a stack whose frames, among other processes' writes, may be any rank's (what follows
        it is as likely another's); None where a stack took the type as the end of its last source line (`raise
        ValueError(...)ValueError`): it ends with the line, as with any exception line."""
        block = self._open.get(line.stream)
        if block is not None and block.state is State.FRAMES and block.linenos[-1] == typed_at:
            return None
        typed = g.BARE_EXCEPTION_LINE.match(line.text)
        if typed is None:  # (a type no exception line has: the line as it came)
            return None
        if (block is not None and block.state is State.MESSAGE and block.linenos[-1] == typed_at and not block.message_lines
                and block.texts[-1].strip() == typed["type"]):
            self._retext(block, line.text, line.lineno)  # the stack's exception line was the type alone, taken from the end of its last
            return self._close(line.stream)  # source line: its message is this one's, and it ends there (as before)
        if block is not None and block.linenos[-1] == typed_at:
            self._unglue(block)
        closed = self._close(line.stream) if block is not None else []
        error = ErrorInfo(typed["type"], typed["message"] or "", has_traceback=False)
        return [*closed, self._event(new_block(State.MESSAGE, EventKind.BARE, line, line.text), error)]

    def _retext(self, block: Block, text: str, lineno: int) -> None:
        """Its last line as `text`, numbered `lineno`."""
        was = block.texts[-1]
        block.texts[-1] = self._texts.hold(text)
        self._texts.release([was])
        if block.reread and block.reread[-1].lineno == block.linenos[-1]:
            self._held += len(text) - len(was)
            block.reread[-1] = replace(block.reread[-1], text=text, lineno=lineno)
        block.linenos[-1] = lineno

    def _unglue(self, block: Block) -> None:
        """Its last line without the type another process glued to its end (`...in dataset_info.json.ValueError`)."""
        if (glued := loose_type(block.texts[-1])) is not None and glued[0].strip():
            self._retext(block, glued[0].rstrip(), block.linenos[-1])

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
        if line.starts_message and last.prefix and line.stream == last.stream and (
                (self._after_rest and (line.prefix == last.prefix or may_continue(line))) or self._cut_first_part(line)):
            # (the normaliser saw a line without the prefix between them: the rest, which ends no record;
            # a logger's prefix whose clock ticked goes on as it would have right after the cut line)
            return replace(line, starts_message=False), False
        if line.prefix or line.lineno != self._physical_lineno + 1:
            return line, False
        block = self._open.get(last.stream)
        if ((block is None or ob.typeless_header(block)) and (whole := g.rest_of_fixed_line(last.text, line.text))
                and g.HEADER.match(whole)):
            if block is not None:  # not IPython's header copied without its type: CPython's, cut before its colon
                self._forget(last.stream)
            return replace(last, text=whole), True  # a header cut in two: the traceback begins at its first part
        if not last.prefix or (line.stream != last.stream and self._may_take(line)):
            return line, False
        if block is None or block.state is not State.FRAMES or g.rest_of_frame_line(block.texts[-1], line.text) is None:
            return line, False
        return replace(line, stream=last.stream, channel=last.channel, rank=last.rank, host=last.host,
                       timestamp=last.timestamp, prefix=last.prefix, starts_message=False), True

    def _cut_first_part(self, line: LogLine) -> bool:
        """Whether `line`, prefixed and as long as the input's width, may be the first part of a line of the open record
        of its stream that a terminal cut, its rest next without the prefix: an exception line cut inside its type's
        name after a stack's frames (`IndexEr`, then `ror: ...`), a chain's separator or a header cut inside its words."""
        block = self._open.get(line.stream)
        if block is None:
            return False
        if block.state is State.FRAMES:
            return self._cut_name(line)
        return (block.state in (State.MESSAGE, State.AFTER_BLANK, State.SEPARATOR) and self._as_wide(len(line.prefix) + len(line.text))
                and any(whole.startswith(line.text) for whole in (*g.SEPARATORS, g.HEADER_TEXT)))

    def _cut_name(self, line: LogLine) -> bool:
        """Whether `line`, after a stack's frames, may be its exception line cut inside its type's name by a terminal:
        a name alone, as long as the input's width (`Ru`, then `ntimeError: ...`)."""
        return self._as_wide(len(line.prefix) + len(line.text)) and line.text.replace(".", "_").isidentifier()

    def _first_line_unprefixed(self, line: LogLine) -> list[ErrorEvent] | None:
        """A paste begun inside a prefixed line, a frame line's path, cut the prefix off its first line: where
        that line opened a traceback and the second has a prefix (and goes on with it), the first is read
        again as the second's stream's (what that gives); else None."""
        last = self._last
        if not (line.lineno == 2 and line.prefix and last is not None and last.lineno == 1 and not last.prefix
                and line.stream != last.stream and line.stream not in self._open
                and (ob.frame_detail(line.text) or g.EXCEPTION_LINE.match(line.text))):
            return None
        block = self._open.get(last.stream)
        if block is None or len(block.texts) != 1 or block.state is not State.FRAMES or not block.truncated:
            return None
        self._forget(last.stream)
        return self._feed(replace(line, text=last.text, lineno=last.lineno, starts_message=False))

    def _may_take(self, line: LogLine) -> bool:
        """Whether a record open on the line's stream may take it."""
        block = self._open.get(line.stream)
        return block is not None and not self._refuses(block, line)

    @staticmethod
    def _refuses(block: Block, line: LogLine) -> bool:
        """Whether the message `block` reads is sure not to go on with `line`: its writer puts its prefix on each line of a
        record (vLLM's logger), and this line has none and came after another writer's lines. Another writer wrote it,
        into the same stream. (Right below, it may be the rest of a line a terminal wrapped, by columns: a rest
        `_takes_rest` does not tell, its characters wider than one, is still the message's.)"""
        return (block.state is State.MESSAGE and block.repeats_prefix and not line.prefix and bool(line.text.strip())
                and line.lineno != block.linenos[-1] + 1)

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
                line.stream != last.stream and self._may_take(line)):
            return False
        block = self._open.get(last.stream)
        if block is None or block.linenos[-1] != self._physical_lineno or (
                block.state not in _WRAPPED_STATES and not (block.state is State.BARE and self._as_wide(self._physical_length))):
            return False
        cut = block.texts[-1]
        if block.state is State.FRAMES and (g.rest_of_frame_line(cut, line.text) is not None
                                            or g.FRAME.match(line.text) or ipython.linked_frame(line.text)):
            return False  # read as a line of its own (see _unwrapped), or a whole frame line: no line's rest
        whole = g.rest_of_fixed_line(cut, line.text) or ob.rest_of_rest(block, line.text)
        if whole is None and block.state is State.MESSAGE and block.message_lines == 0 and self._cut_name(last) and (
                g.EXCEPTION_LINE.match(cut + line.text)):
            whole = cut + line.text  # an exception line cut inside its type's name (see _cut_name)
        if whole is None and ((g.begins_fixed_line(cut.strip()) and g.begins_fixed_line((cut + line.text).strip()))
                              or (block.state is State.FRAMES and len(line.text) == self._physical_length
                                  and g.goes_on_frame_line(cut, line.text))):
            whole = cut + line.text  # the middle of a separator or a frame line cut more than once
        if whole is None and not last.prefix:  # a log without prefixes: a line as long as the width, and more
            whole = self._unprefixed_rest(block, line.text)
        elif whole is None and (self._run > 1 or block.state in (State.MESSAGE, State.BARE)) and (self._at_width(cut, line.text) or (
                block.state is State.FRAMES and self._physical_length >= self._longest and ob.ends_in_source(block)
                and not self._starts_record(line.text))):
            whole = cut + line.text  # (a source line as long as the longest is cut, width or not: only shown)
        if whole is None:
            return False
        self._texts.release((cut,))
        block.texts[-1], block.linenos[-1] = self._texts.hold(whole), line.lineno
        stripped = whole.strip()
        if stripped in g.SEPARATORS and block.state in (State.MESSAGE, State.AFTER_BLANK):
            block.message_lines -= block.state is State.MESSAGE  # (it was counted as the message's line)
            block.state, block.held = State.SEPARATOR, 0
        elif block.state is State.SEPARATOR and g.HEADER.match(whole):
            block.state, block.frames_from = State.FRAMES, len(block.texts) - 1
        self._touch(last.stream)
        return True

    def _unprefixed_rest(self, block: Block, rest: str) -> str | None:
        """In a log without prefixes, the line `rest` goes on: after a message's line as long as the width
        (or as another line cut before, none longer), or a source line as long as the longest so far
        (which also tells the width) where `rest` reads as no line of its own (nor as an indented one:
        a space it begins with, if any, is a word's), in a traceback indented as a whole too."""
        cut, length = block.texts[-1], self._physical_length
        own = rest[block.indent:] if block.indent and rest.startswith(" " * block.indent) else rest
        if self._starts_record(rest) or (own != rest and self._starts_record(own)):
            return None
        if (block.state in (State.MESSAGE, State.BARE) or (block.state is State.FRAMES and ob.ends_in_source(block))) and (
                self._at_width(cut, rest)):
            return cut + rest
        if block.state is State.MESSAGE and length >= self._longest and self._width_votes.get(length) and rest[:2].strip():
            self._vote(length)  # the second line cut at one length, none longer: the width
            return cut + rest
        if (block.state is State.FRAMES and length >= self._longest and ob.ends_in_source(block) and rest[:2].strip()
                and not g.EXCEPTION_LINE.match(own) and not g.REVERSED_FRAME.match(own) and not g.FRAME_CUT.match(own)
                and g.frame_cut_at_start(own) is None):
            self._vote(length)
            return cut + rest
        return None

    def _at_width(self, cut: str, rest: str) -> bool:
        """Whether the line fed last, `cut`, is as long as the input's width (`_as_wide`) and `rest`, the line after it,
        its rest. At a width no two cut lines told, the two must read as a terminal's cut, not as a paste's wrap at
        blanks (which drops the blank, each line at most as long): the rest as long again, or the cut at a blank kept,
        or the rest beginning as no word does (`), ...`); in a word, once another line was cut there. Such a cut is
        a vote for the width. (A message's own lines may be 80 long: torch's CUDA mismatch breaks after `compile`.)"""
        if self._physical_length == self._width:
            return True
        if not self._as_wide(self._physical_length):
            return False
        cut_here = (len(rest) == _USUAL_WIDTH or cut[-1:] == " " or (rest[:1] == " " and rest[1:2] != " ")
                    or rest[:1] in _GOES_ON or (rest[:1].isalnum() and bool(self._width_votes.get(_USUAL_WIDTH))))
        if cut_here:
            self._vote(_USUAL_WIDTH)
        return cut_here

    def _as_wide(self, length: int) -> bool:
        """Whether a line this long may have been cut by a terminal: as long as the width two cut lines told (`_vote`; none
        told, the width is 0, which no cut line is), else as a terminal's usual 80 columns, where no record's line so
        far was longer."""
        return 0 < length == self._width or (length == _USUAL_WIDTH and self._longest <= _USUAL_WIDTH)

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

    def _frame_rest(self, block: Block, text: str) -> bool:
        """Whether `text` is the rest of the frame line `block` took last; if so the cut line's length is a
        vote for the terminal's width."""
        if g.rest_of_frame_line(block.texts[-1], text) is None:
            return False
        self._vote(self._physical_length)
        return True

    def _feed(self, line: LogLine, may_start: bool = True) -> list[ErrorEvent]:
        out: list[ErrorEvent] = []
        if self._parked and line.stream in self._parked:
            self._resume(line.stream)
        if self._aside:
            out.extend(self._back_from_aside(line))
        if line.starts_message:
            # A log record is written whole: a new one on this channel ends the records before it.
            for key in self._by_channel.streams(line.channel):
                earlier = self._open.get(key)  # (closing one may have closed another)
                if earlier is not None and ob.may_set_aside(earlier, line):  # (the lines after `line` take its
                    out.extend(self._set_aside(key, line))  # tags, and so another stream: it is looked for by channel)
                elif earlier is not None and (key == line.stream or earlier.state in _COMPLETE):
                    out.extend(self._close(key))
        block = self._open.get(line.stream)
        if block is not None and block.indent and len(block.texts) == 1 and g.FRAME.match(line.text):
            # a header further in than its first frame is: a paste's stray spaces before it, not a traceback
            # indented as a whole (whose frames are two further in than its header)
            block.indent = min(block.indent, max(0, len(line.text) - len(line.text.lstrip(" ")) - 2))
        if block is not None and block.indent:
            if line.text.startswith(" " * block.indent):
                line, may_start = replace(line, text=line.text[block.indent:]), True
                if (block.state is State.FRAMES and line.text[:1] == " " and line.text[1:2] != " "
                        and g.EXCEPTION_LINE.match(line.text[1:])):  # one blank in: no line Python prints, but
                    line = replace(line, text=line.text[1:])  # the exception line where a frame one blank out set the indent
            elif block.state is State.MESSAGE and line.text.strip():  # out of the indented traceback: its end
                out.extend(self._close(line.stream))
                return out + self._feed(line, may_start)
        if block is not None:
            step = self._advance(block, line)
            self._touch(line.stream)
            if step is Step.SKIP:
                block.elided, block.skipped_to = block.elided + 1, line.lineno
                return out
            if step in (Step.TAKE, Step.TAKE_AND_CLOSE):
                self._append(block, line)
                if step is Step.TAKE and len(block.texts) >= self._max_block_lines and self._elide(
                        block, block.frames_from + _KEPT_FRAME_LINES, _KEPT_FRAME_LINES):
                    return out  # a stack deeper than the limit (RecursionError): its head and tail stay
                if step is Step.TAKE_AND_CLOSE or len(block.texts) >= self._max_block_lines:
                    block.truncated |= step is Step.TAKE
                    out.extend(self._close(line.stream))
                return out
            if step is Step.DROP:
                self._forget(line.stream)
            elif ob.leads(block, line):
                self._forget(line.stream)
                self._release(line.stream)  # (a bare line further up is not the traceback's)
                out.extend(self._start(line))
                self._open[line.stream].lead = block  # its event waits for the traceback's end
                return out
            elif ob.may_set_aside(block, line):
                out.extend(self._set_aside(line.stream, line))
            else:
                out.extend(self._close(line.stream))
                if line.stream in self._open:  # a line held back by the closed block opened one
                    return out + self._feed(line, may_start)
        out.extend(self._start(line, may_start))
        return out

    def _set_aside(self, key: str, line: LogLine) -> list[ErrorEvent]:
        """A traceback into whose stack `line` came, another writer's (a logger's record, a native library's line,
        stdout's): set aside for the lines of its stack that may follow within a few lines (a thread's traceback on
        stderr while other threads log; see _back_from_aside). The one set aside on the channel before is closed."""
        block = self._open.pop(key)
        self._recent.pop(key, None)
        self._shrunk.pop(key, None)
        self._by_channel.remove(block.first.channel, key)
        block.truncated = False  # (as the line that did not go on with it left it: its stack may go on yet)
        out = self._close_aside(block.first.channel) if block.first.channel in self._aside else []
        if len(self._aside) >= _MAX_ASIDE:
            out.extend(self._close_aside(next(iter(self._aside))))
        self._aside[block.first.channel] = (block, line.lineno)
        return out

    def _back_from_aside(self, line: LogLine) -> list[ErrorEvent]:
        """The traceback set aside on `line`'s channel takes it back where `line` goes on with its stack (behind a
        prefix only where its own lines were, and then indented as Python indents a stack), and none is open on its
        stream; it is closed as it stands where no such line came within the window. So are those of other channels
        past it."""
        out: list[ErrorEvent] = []
        found = self._aside.get(line.channel)
        if (found is not None and (not line.prefix or found[0].prefixed and line.text[:2] == "  ")
                and line.stream not in self._open and ob.goes_on_stack(found[0], line.text)):
            del self._aside[line.channel]
            self._open[line.stream] = found[0]
            self._recent[line.stream] = None
            self._by_channel.add(line.channel, line.stream)
        for channel, (_, since) in list(self._aside.items()):
            if line.lineno - since > _ASIDE_WINDOW:
                out.extend(self._close_aside(channel))
        return out

    def _close_aside(self, channel: str) -> list[ErrorEvent]:
        block, _ = self._aside.pop(channel)
        key = block.first.stream
        while key in self._open:  # (its stream has another record open now: closed under a key of its own)
            key += "\x00"
        self._open[key] = block
        self._by_channel.add(block.first.channel, key)
        block.truncated = True
        return self._close(key)

    def extend(self, line: LogLine, texts: list[str]) -> bool:
        """Lines of `line`'s stream numbered from its number on, which differ from it only in text:
        taken as `feed` would take them one by one, when that is sure to be as more lines of the
        stack the stream's record is reading (each indented as Python indents and not blank; no limit
        near: a line one space in may be the rest of a line a terminal cut before a space). False,
        and nothing taken, otherwise."""
        stream = line.stream
        block = self._open.get(stream)
        last = self._last
        if (block is None or block.state is not State.FRAMES or block.reread or line.starts_message or block.indent
                or self._waiting or self._aside  # (feeding lets out what waits, line by line)
                or self._width or (last is not None and last.prefix and self._run > 1)  # (see feed: maybe a rest)
                or stream in self._parked or len(block.texts) + len(texts) >= self._max_block_lines
                or self._held + self._texts.size + sum(map(len, texts)) + len(texts) * (_LINE_COST + _TEXT_COST)
                > self._max_held
                or not all(text[:2] == "  " and not text.isspace() for text in texts)  # (one space in: maybe a rest)
                or any(text[2:3] != " " and text[2:7] != "File " and g.exception_line_at_indent(text, 2) for text in texts)
                or (len(block.texts) == 1 and ob.tells_indent(texts[0]))):  # (see _advance: read it one by one)
            return False
        block.texts += map(self._texts.hold, texts)
        block.linenos.extend(range(line.lineno, line.lineno + len(texts)))
        block.repeats_prefix = block.repeats_prefix or bool(line.prefix)
        self._last, self._after_rest = line, False
        self._physical_lineno, self._physical_length = line.lineno + len(texts) - 1, len(texts[-1])
        self._run = 0  # (as feed leaves them after lines without a prefix that the record took)
        if (longest := max(map(len, texts))) > self._longest:
            self._longest, self._width = longest, 0 if longest > self._width else self._width
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
        # what completed below a bare line that waits goes out now, not after the next line (latency)
        held = self._waiting_events()
        out = [event for event in self._queue if id(event) not in held and id(event) not in self._taken]
        self._queue = deque(event for event in self._queue if id(event) in held)
        self._taken.clear()
        for waiting in self._waiting.values():
            if not waiting.shown and not waiting.block.inferred:
                waiting.shown = True
                out.append(replace(waiting.event, provisional=True))
        for block in self._open.values():
            if block.state not in _COMPLETE or block.shown == len(block.texts) or block.inferred or block.state is State.QUIET:
                continue  # (a quiet line's error is one only where a stack comes below it)
            block.shown = len(block.texts)
            copy = replace(block, texts=list(block.texts), linenos=array("q", block.linenos), marks=None)
            self._trim(copy)
            if copy.texts:  # (as its lead's event, or with it, where it has one: the lead may have been shown)
                out.extend(replace(event, provisional=True) for event in self._led(copy))
        return out

    def finish(self) -> Iterator[ErrorEvent]:
        """End of input: emit everything, marking records cut off mid-way as truncated. One by one:
        a hundred thousand ranks may each have a record open."""
        while self._aside:
            yield from self._in_order(self._close_aside(next(iter(self._aside))))
        while self._open or self._parked:
            for key in list(self._open):
                if key in self._open:  # (closing one may have closed another, or given back lines that open one)
                    yield from self._in_order(self._close(key))
            if self._parked:
                self._resume(key := next(iter(self._parked)))
                yield from self._in_order(self._close(key))
        while self._waiting:
            self._release(next(iter(self._waiting)))
        yield from self._in_order([])

    def _shed(self) -> list[ErrorEvent]:
        """Over the budget: the block idle longest is closed as it stands when it is complete (nothing
        is lost), else its stack's middle is left out (down to its header and last frame). When every
        open block is down to that, the one idle longest is parked: a traceback its stream's next lines
        carry on, the lines in between counted as left out. Only what cannot be parked, or a parked
        one when nothing else is left, is closed cut off."""
        if self._aside:
            return self._close_aside(next(iter(self._aside)))
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
        if ob.parkable(block):
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
        self._open[key] = Block(State.FRAMES, EventKind.TRACEBACK, first, [parked.header],
                                 array("q", (first.lineno,)), timestamp=parked.timestamp, context=parked.context,
                                 elided=parked.elided)
        self._register(first)

    def _let_go_held(self, block: Block) -> None:
        """The blank lines the block holds back, in case what follows them goes on with it: let go."""
        if block.held:
            self._texts.release(block.texts[-block.held:])
            self._held -= _LINE_COST * block.held
            cut(block, len(block.texts) - block.held)
            block.held = 0

    def _touch(self, key: str) -> None:
        if key in self._recent:
            self._recent.move_to_end(key)
        else:
            self._shrunk.pop(key, None)
            self._recent[key] = None

    def _elide(self, block: Block, head: int, tail: int) -> bool:
        """Leave out a stack's middle: keep `head` lines and the last `tail` ones, from a frame line on
        (a source line stays with its frame). False when there is no such middle."""
        if block.state is not State.FRAMES or block.held:
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

    def _forget(self, key: str) -> Block:
        block = self._open.pop(key)
        self._recent.pop(key, None)
        self._shrunk.pop(key, None)
        self._by_channel.remove(block.first.channel, key)
        self._held -= _held_cost(block)
        self._texts.release(block.texts)
        return block

    def _append(self, block: Block, line: LogLine) -> None:
        block.texts.append(self._texts.hold(line.text))
        block.linenos.append(line.lineno)
        block.repeats_prefix = block.repeats_prefix or bool(line.prefix)
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

    def _start(self, line: LogLine, may_start: bool = True) -> list[ErrorEvent]:
        """A line no block took: it may open one, or be an error on its own."""
        out = self._begin(line) if may_start else []
        if line.stream in self._open:
            self._register(line)
            waits = line.stream if line.stream in self._waiting else None
            if waits is None and line.prefix and (labelled := self._labelled_by(line)) is not None:
                if labelled in self._open:
                    out.extend(self._close(labelled))  # (it waits for a traceback now)
                waits = labelled if labelled in self._waiting else None
            if waits is not None:
                self._follow(line.stream, waits)
        return out

    def _unraisable_above(self, line: LogLine) -> str:
        """CPython's words that the exception whose header `line` is was ignored, where they are right above it on its
        stream (or a blank line above, where a paste doubled the line breaks); else nothing."""
        above = self._unraisable
        if above is None or above.stream != line.stream or not 0 < line.lineno - above.lineno <= 2:
            return ""
        self._unraisable = None
        return above.text.strip()

    def _labelled_by(self, line: LogLine) -> str | None:
        """The stream of a bare exception line, open or waiting, that was read with `line`'s prefix as its label
        (`x3c1: RuntimeError: ...`: the prefix is learned only from the traceback below it), if there is one."""
        label = line.prefix.strip().rstrip(":").rstrip()
        if not label:
            return None
        last = self._last  # (open, it is the line right above: the others' streams are not looked through)
        above = [(last.stream, self._open[last.stream])] if last is not None and last.stream in self._open else []
        for key, block in [*((key, waiting.block) for key, waiting in self._waiting.items()), *above]:
            if key != line.stream and block.kind is EventKind.BARE and len(block.texts) == 1 and block.context == label:
                return key
        return None

    def _follow(self, key: str, waits: str) -> None:
        """The block just opened on stream `key` where a bare exception line waits on stream `waits`: a traceback's
        header (not one a chain or a message's words introduce; IPython's, which names the line's class), or its first
        frame where the copy began at one, takes it as its lead."""
        block, waiting = self._open[key], self._waiting[waits]
        header = g.HEADER.match(block.texts[0]) if not block.truncated else None
        if block.lead is None and block.linenos[0] - waiting.block.linenos[-1] <= _LEAD_WINDOW and (
                (block.state is State.FRAMES and ((header is not None and (not header["context"].strip()
                                                                           or _JSON_KEY.fullmatch(header["context"])))
                                                  or (block.truncated and g.FRAME.match(block.texts[0]) is not None)))
                or (block.state is State.IPYTHON and (named := ipython.HEADER.match(block.texts[0])) is not None
                    and named["type"] == _said_type(waiting.block))):
            del self._waiting[waits]
            self._taken.add(id(waiting.event))
            block.lead = waiting.block

    def _wait(self, key: str, block: Block) -> list[ErrorEvent]:
        """A bare exception line closed: its event, which waits (see _Waiting) for a traceback below."""
        self._release(key)
        if len(self._waiting) >= _MAX_WAITING:
            self._release(next(iter(self._waiting)))
        event = self._event(block)
        self._waiting[key] = _Waiting(block, event)
        return [event]

    def _expire(self, line: LogLine) -> None:
        """Bare exception lines too far above `line` for a traceback still to begin, or above a chain's separator
        on their stream (the traceback below is the next link's, the error it was raised in handling): their
        events go."""
        separator = "above exception" in line.text or "following exception" in line.text
        for key, waiting in list(self._waiting.items()):
            if line.lineno - waiting.block.linenos[-1] > _LEAD_WINDOW or (separator and key == line.stream):
                self._release(key)

    def _release(self, key: str) -> None:
        waiting = self._waiting.pop(key, None)  # (its event, queued, may go out)
        if waiting is not None and waiting.block.inferred:
            self._taken.add(id(waiting.event))  # (CPython's message alone, no stack took it: no error)

    def _waiting_events(self) -> set[int]:
        return {id(waiting.event) for waiting in self._waiting.values()}

    def _in_order(self, out: list[ErrorEvent]) -> list[ErrorEvent]:
        """The events that can go out, in the order they completed: none after an event that waits."""
        self._queue.extend(out)
        ready: list[ErrorEvent] = []
        waiting = self._waiting_events()
        while self._queue and id(self._queue[0]) not in waiting:
            event = self._queue.popleft()
            if id(event) in self._taken:
                self._taken.discard(id(event))
            else:
                ready.append(event)
        return ready

    def _register(self, line: LogLine) -> None:
        """File the block `line` opened."""
        self._held += _BLOCK_COST + _LINE_COST
        self._recent[line.stream] = None
        self._by_channel.add(line.channel, line.stream)

    def _opened(self, line: LogLine, state: State, kind: EventKind, **fields) -> None:
        self._open[line.stream] = new_block(state, kind, line, self._texts.hold(line.text), **fields)

    def _begin(self, line: LogLine) -> list[ErrorEvent]:
        text = line.text
        if (m := g.GROUP_HEADER.match(text)) is not None:
            self._opened(line, State.GROUP, EventKind.TRACEBACK, context=m["context"].strip(), group_column=-1)
        elif (m := g.HEADER.match(text)) is not None:
            indent = len(text) - len(text.lstrip(" ")) if not m["context"].strip() else 0
            self._opened(replace(line, text=text[indent:]) if indent else line, State.FRAMES, EventKind.TRACEBACK,
                         context=m["context"].strip() or self._unraisable_above(line), indent=indent)
        elif text.startswith(g.UNRAISABLE):
            self._unraisable = line  # (it says the traceback below it was ignored)
        elif ipython.HEADER.match(text):
            self._opened(line, State.IPYTHON, EventKind.TRACEBACK)
        elif ipython.starts_cut(text):  # a copy begun inside a notebook's traceback
            self._opened(line, State.IPYTHON, EventKind.TRACEBACK, truncated=True)
        elif vscode.HEADER.match(text):
            self._opened(line, State.VSCODE, EventKind.TRACEBACK)
        elif (rich := richtb.HEADER.match(unindented := text.lstrip(" "))) or richtb.starts_cut(text):
            # (indented as a whole: Rich's logging handler draws it under the message's column, right of the time's)
            indent = len(text) - len(unindented) if rich else 0
            self._opened(replace(line, text=unindented) if indent else line, State.RICH, EventKind.TRACEBACK,
                         truncated=rich is None, indent=indent)
        elif ((frame := g.FRAME.match(text)) or g.FRAME_CUT.match(text) or g.frame_cut_at_start(text)
              or g.PLACE_CUT.match(text) or ipython.linked_frame(text)):
            # frames without their header: the log was cut above them (maybe inside the first, or in its
            # place; an editor's copy may have made its path or line number a markdown link); further in than
            # Python puts a frame, the traceback is indented as a whole (pip's output of a build)
            indent = max(0, len(text) - len(text.lstrip(" ")) - 2) if frame else 0
            self._opened(replace(line, text=text[indent:]) if indent else line, State.FRAMES, EventKind.TRACEBACK,
                         truncated=True, indent=indent)
        elif text[:1] == " " and ob.boxed_frame(text):  # an exception group's sub-exception, its box's header cut off
            self._opened(line, State.FRAMES, EventKind.TRACEBACK, truncated=True)
        elif native.starts(text):
            self._opened(line, State.NATIVE, EventKind.NATIVE)
        elif text.rstrip() == native.RUST_CAUSES and (told := self._rust_errors.pop(line.stream, None)) is not None \
                and line.lineno - told.lineno <= _RUST_CAUSES_BELOW:  # a Rust program's error, told by its causes
            self._opened(told, State.NATIVE, EventKind.NATIVE)
            self._append(self._open[line.stream], line)
        elif (oneline.SUPERVISORCTL in text or oneline.COMPACT_END in text[-4:]) and (reported := oneline.read(text)) is not None:
            return [self._event(new_block(State.MESSAGE, EventKind.BARE, line, text), reported)]
        elif classpage.opens(text):
            self._opened(line, State.CLASS_PAGE, EventKind.BARE)
        elif asyncio_report.opens(text):
            self._opened(line, State.FUTURE, EventKind.NOTICE, context=asyncio_report.words(text))
        elif precommit.opens(text):
            self._opened(line, State.PRECOMMIT, EventKind.BARE, context=precommit.SAYS)
        elif hydra.opens(text):  # (an error only where Hydra's closing line ends it: see _close)
            self._opened(line, State.HYDRA, EventKind.BARE, context=text.strip() if text.startswith(hydra.OPENING) else "")
        elif text.rstrip() == excepthook.HOOK:
            self._opened(line, State.SEPARATOR, EventKind.TRACEBACK)  # (its traceback follows, as after a chain's separator)
        elif text.rstrip() == doctest_report.EXPECTED:
            self._opened(line, State.EXPECTED, EventKind.TRACEBACK)
        elif fieldreport.opens(text):
            self._opened(line, State.FIELDS, EventKind.BARE)
        elif pytest_report.starts(text):
            self._opened(line, State.PYTEST, EventKind.TRACEBACK)
            self._pytest_reports = True
        elif pytest_report.starts_stack(text):
            self._opened(line, State.PYTEST_STACK, EventKind.TRACEBACK)
        elif not self._pytest_reports and (failed := pytest_report.summary(text)) is not None:
            # pytest's summary line for a failure, where no report of it came before (its own echo there)
            return [self._event(new_block(State.MESSAGE, EventKind.NOTICE, line, text, context=failed[1]), failed[0])]
        elif g.ARGPARSE_USAGE.match(text):
            self._opened(line, State.USAGE, EventKind.ARGPARSE)
        elif snakemake.opens(text):
            self._opened(line, State.SNAKEMAKE, EventKind.TRACEBACK)
        elif awslambda.opens(text):
            self._opened(line, State.LAMBDA, EventKind.TRACEBACK, depth=awslambda.depth_after(0, text, first=True))
        elif g.BARE_EXCEPTION_LINE.match(text):  # held a line: frames may follow it
            self._opened(line, State.BARE, EventKind.BARE)
        elif text[:1] in (" ", "\t") and g.BARE_EXCEPTION_LINE.match(unindented := text.lstrip(" \t")):
            self._opened(replace(line, text=unindented), State.BARE, EventKind.BARE)  # quoted alone, indented
        elif text[:1] == " " and (boxed := g.IN_GROUP_BOX.match(text)) and (
                typed := g.BARE_EXCEPTION_LINE.match(text[boxed.end():])) is not None:  # (a paste begun at the last line
            error = ErrorInfo(typed["type"], typed["message"] or "", has_traceback=False)  # of a group's sub-exception)
            return [self._event(new_block(State.MESSAGE, EventKind.BARE, line, text), error)]
        elif text.startswith(_PDB_ERROR) and g.BARE_EXCEPTION_LINE.match(said := text[len(_PDB_ERROR):]):
            self._opened(replace(line, text=said), State.BARE, EventKind.BARE)  # pdb's report of a command's error
        elif (unquoted := _quoted_whole(text)) is not None and g.BARE_EXCEPTION_LINE.match(unquoted):
            self._opened(replace(line, text=unquoted), State.BARE, EventKind.BARE)
        elif text[:1] == "[" and (unbracketed := g.unbracketed(text)) is not None:
            self._opened(replace(line, text=unbracketed), State.BARE, EventKind.BARE)  # its class in brackets (pdm's)
        elif ('"' in text or "'" in text) and (member := g.exception_in_member(text)) is not None:
            before, said, closed = member
            if not closed:  # (a string whose escapes held line breaks: its lines go on, see collapsed.unescaped)
                self._opened(replace(line, text=said), State.BARE, EventKind.BARE, context=before)
                return []
            # (closed by its quote: nothing below goes on with it; a traceback in a member below, the record's, may
            # take it, as torchelastic's error file holds the error and its `py_callstack`: see _follow)
            return self._wait(line.stream, new_block(State.MESSAGE, EventKind.BARE, replace(line, text=said), said,
                                                     context=before))
        elif (retry := retried(text)) is not None:  # (before a user's words: `as it raised X: ...` would read as such)
            return [self._event(new_block(State.MESSAGE, EventKind.NOTICE, line, text, context=retry[0]), retry[1])]
        elif (printed := exc_info_said(text)) is not None:
            return [self._event(new_block(State.MESSAGE, EventKind.BARE, line, text, context=printed[0]), printed[1])]
        elif (words := g.exception_in_words(text)) is not None:
            if "\n" in words[1]:  # (a repr whose message holds line breaks: no line to read on with, a logged error)
                self._opened(line, State.LOGGED, EventKind.NOTICE, logged=_multiline_said(words[1]), context=words[0])
            else:
                self._opened(replace(line, text=words[1]), State.BARE, EventKind.BARE, context=words[0])
        elif "module specification" in text and (runpy := g.runpy_error(text)) is not None:
            self._opened(replace(line, text=runpy[1]), State.BARE, EventKind.BARE, context=runpy[0])
        elif 'File "' in text and (glued := g.frame_after_words(text)) is not None:  # (cut above: no header)
            self._opened(replace(line, text=glued[1]), State.FRAMES, EventKind.TRACEBACK, truncated=True,
                         context=glued[0])
        elif self._notices is not None and (notice := self._notices(text)) is not None:
            return [self._event(new_block(State.MESSAGE, EventKind.NOTICE, line, text), notice)]
        elif (logged := logged_error(text, line.prefix)) is not None:
            self._opened(line, State.LOGGED, EventKind.NOTICE, logged=logged)
        elif (named := classless(text, line.prefix)) is not None:  # (its class left out)
            if not named.alone:
                block = new_block(State.MESSAGE, EventKind.NOTICE, line, text, context=named.words)
                return [replace(self._event(block, named.error), inferred=True)]
            said = f"{named.error.exception_type}: {named.error.message}"  # (an error only if a stack below takes it: _follow)
            self._opened(replace(line, text=said), State.BARE, EventKind.BARE, inferred=True)
        elif text[-1:] == ")" and (held := g.repr_said(text.strip())) is not None and held[1]:
            self._opened(replace(line, text=f"{held[0]}: {held[1]}"), State.BARE, EventKind.BARE)  # its repr alone
        elif native.rust_error(text):  # (kept to be told by a `Caused by:` below it)
            if len(self._rust_errors) >= _MAX_WAITING:
                self._rust_errors.clear()
            self._rust_errors[line.stream] = line
        elif (at_end := said_at_end(text)) is not None:  # (at a lower level: an error where pybind11's stack follows)
            self._opened(line, State.QUIET, EventKind.NOTICE, logged=at_end)
        return []

    def _advance(self, block: Block, line: LogLine) -> Step:
        text = line.text
        stripped = text.strip()
        state = block.state
        if block.inferred:
            return Step.CLOSE  # (CPython's message alone: it waits for a stack below it, which reads on its own)
        if state is State.FRAMES:
            if len(block.texts) == 1 and block.truncated and text.rstrip() == doctest_report.FAILED:
                return Step.DROP  # no traceback cut above: the place of a doctest example that failed
            if text[:1] == " " and self._frame_rest(block, text):
                return Step.TAKE  # the rest of a frame line the terminal wrapped before a space
            if text[:1] in (" ", "\t") and g.padded_exception(text):
                block.state, block.message_lines = State.MESSAGE, 0  # the last source line and the exception line, joined by a terminal's
                return Step.TAKE  # padding (blocks takes them apart)
            if ob.boxed_exception_line(block, text):
                block.state, block.message_lines = State.MESSAGE, 0  # (a group's sub-exception pasted without the group: blocks unboxes it)
                return Step.TAKE
            if ob.exception_at_frames_indent(block, text):
                self._let_go_held(block)  # (a blank line above it: TensorFlow's `in user code:` report puts one)
                block.state, block.message_lines = State.MESSAGE, 0  # (a traceback re-indented by hand: blocks reads it)
                return Step.TAKE
            if (g.frame_line(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped)
                    or g.FRAME_CUT.match(text) or (g.is_frame_detail(block.texts[-1]) and g.frame_cut_at_start(text))):
                if not block.indent and ob.tells_indent(text) and all(map(g.is_elision, block.texts[1:])):  # (an elision
                    # of the first frames between the header and it)
                    block.indent = len(text) - len(text.lstrip(" ")) - 2  # how far a traceback after words is indented
                block.held = 0
                return Step.TAKE
            if not stripped and block.held < SOURCE_LINES and (block.held or ob.frame_detail(block.texts[-1])
                                                               or ob.after_stripped_frame(block, 1) or g.HEADER.match(block.texts[-1])):
                block.held += 1  # a blank line among frames (a paste's doubled line breaks), kept if they go on
                return Step.TAKE
            if (stripped and (ob.after_stripped_frame(block, 0) or ob.in_open_statement(block.texts))
                    and not ob.reads_as_exception_line(text, block) and not self._starts_record(text)):
                block.held = 0  # (the blank lines above it were a doubled paste's: inside the traceback now)
                return Step.TAKE  # the source line of a frame whose indentation was stripped (3.13+: maybe several)
            if self._frame_rest(block, text):
                return Step.TAKE  # the rest of a frame line the terminal wrapped
            if (stripped and g.frame_line(block.texts[-1]) and not g.exception_line_at_source(text)
                    and not self._starts_record(text)):
                return Step.TAKE  # the source line of the frame above, which alone lost its indentation
            if ob.nests_traceback(text):
                block.frames_from = len(block.texts)
                return Step.TAKE  # RuntimeError(traceback.format_exc()): the inner traceback follows
            if g.frame_remnant(text):
                return Step.TAKE
            if g.CARETS.match(text) and g.is_frame_detail(block.texts[-1]):
                return Step.TAKE  # the caret line under a source line, flush left (a copy lost its indentation)
            if stripped in g.SEPARATORS and ob.box_closed(block):  # (a group's box a paste began in, read as frames:
                block.state, block.held = State.SEPARATOR, 0  # the chain goes on below it)
                return Step.TAKE
            if self._cut_name(line):  # (its rest, next, is joined to it: _takes_rest)
                block.state, block.held, block.message_lines = State.MESSAGE, 0, 0
                return Step.TAKE
            if not stripped or g.HEADER.match(text) or not (exc := g.EXCEPTION_LINE.match(text)) or (
                    exc["message"] is None and contradicts_statement(exc, ob.innermost_code(block))):  # (a copy's word
                # under a stack cut at its raise statement)
                block.truncated = True
                return Step.CLOSE
            block.state, block.held, block.message_lines = State.MESSAGE, 0, 0  # (a link's: not one's above, a remote
            return Step.TAKE  # error's wrapper whose frames followed)
        if state is State.MESSAGE:
            if self._refuses(block, line):
                return Step.CLOSE
            if not block.message_lines and stripped == block.texts[-1].strip():
                return Step.CLOSE  # the same exception line again: another process's, right below (ranks shredded it)
            if block.truncated and (column := ob.boxed_group_rule(block, text)) >= 0:
                block.state, block.group_column = State.GROUP, column  # (a paste begun in a group's box: its subs)
                return Step.TAKE
            if not stripped or stripped == g.REMOTE_QUOTE:  # a _RemoteTraceback's quote ends its message
                block.state, block.held = State.AFTER_BLANK, 1
                return Step.TAKE
            if stripped == g.PIP_OUTPUT_END:
                return Step.CLOSE
            if stripped in g.SEPARATORS:
                block.state = State.SEPARATOR
                return Step.TAKE
            if (header := g.HEADER.match(text)) and block.message_lines == 0 and (g.reraised_original(header) or (
                    header["context"] and g.holds_traceback(block.texts[-1], header))):
                block.state, block.note_start, block.output = State.NOTE, len(block.texts), True
                block.kind = EventKind.TRACEBACK  # (a bare exception line's, now)
                return Step.TAKE  # torch's error raised again with the worker's traceback in its message (or a
                # traceback the message's next line labels)
            if block.kind is EventKind.TRACEBACK and g.TORCHSCRIPT_HEADER.match(text):
                block.state, block.note_start, block.output = State.NOTE, len(block.texts), True
                return Step.TAKE  # the error TorchScript's interpreter failed with, under its own stack
            if block.kind is EventKind.TRACEBACK and header and not header["context"]:
                block.state, block.note_start = State.NOTE, len(block.texts)
                block.output = block.message_lines <= g.OUTPUT_LEAD and ob.introduces_output(
                    block.texts[-1 - block.message_lines])
                return Step.TAKE
            if g.FRAME.match(text) and ob.wraps_remote_here(block):
                block.state, block.frames_from = State.FRAMES, len(block.texts) - 1 - block.message_lines
                return Step.TAKE  # Ray: the remote error's frames follow the wrapper's line
            if pytest_report.headline(text):  # (the next test's, under `--tb=native`: the summary will repeat this one)
                self._pytest_reports = True
                return Step.CLOSE
            if (block.kind is not EventKind.TRACEBACK and not (block.kind is EventKind.BARE and (text[:1] in (" ", "\t")
                                                                                            or ob.in_box(block.texts, text)))
                    or ob.opens_something(text) or text.startswith(g.UNRAISABLE)):
                return Step.CLOSE  # (CPython's report of an exception it ignored begins a record of its own)
            if block.message_lines >= self._max_message_lines:  # a tensor's repr: its head is kept
                return Step.CLOSE if self._starts_record(text) else Step.SKIP
            block.message_lines += 1
            return Step.TAKE
        if state is State.AFTER_BLANK:
            if stripped == g.PYBIND_AT and block.held == 1:
                block.state, block.held = State.PYBIND, 0
                return Step.TAKE  # pybind11's stack of the error (see grammar)
            if block.held == 1 and g.pybind_call_below(block.texts[-2 - block.message_lines], text):
                block.state, block.held, block.message_lines = State.MESSAGE, 0, block.message_lines + 2
                return Step.TAKE  # pybind11's message of arguments it could not take goes on: the call's own
            if stripped in g.SEPARATORS or (stripped == excepthook.ORIGINAL and excepthook.hooked(block.texts)):
                block.state, block.held = State.SEPARATOR, 0
                return Step.TAKE
            if ((header := g.HEADER.match(text)) and not header["context"]
                    and block.message_lines + block.held <= g.OUTPUT_LEAD and ob.output_introduced(block)):
                block.state, block.note_start, block.output = State.NOTE, len(block.texts), True
                block.kind = EventKind.TRACEBACK  # (a bare exception line's, now)
                return Step.TAKE  # a message that began with a line break, its text introducing a child's traceback
            if not stripped or (block.held < self._max_message_lines and not self._starts_record(text)):
                block.held += 1  # maybe a further paragraph of the message (torch._dynamo's hints)
                return Step.TAKE
            return Step.CLOSE
        if state is State.SEPARATOR:
            if not stripped:
                return Step.TAKE
            if excepthook.hooked(block.texts) and not g.HEADER.match(text) and not any(map(g.HEADER.match, block.texts)):
                return Step.CLOSE  # (words that read as the hook's failure, no traceback after them: see _close)
            if g.GROUP_HEADER.match(text):
                block.state, block.group_column = State.GROUP, -1
                return Step.TAKE
            # (Ray's name of a remote task: a remote chain's header; or a frame: a copy cut the header out)
            if g.HEADER.match(text) or g.remote_task(stripped) or g.FRAME.match(text):
                block.state, block.frames_from = State.FRAMES, len(block.texts)
                return Step.TAKE
            if g.begins_header(stripped):  # (before IPython's: one that lost its type reads as such a cut)
                return Step.TAKE  # a header a terminal wrapped: its rest joins it (see _takes_rest)
            if ipython.RULE.match(text) or ipython.HEADER.match(text):
                block.state = State.IPYTHON
                return Step.TAKE
            if richtb.HEADER.match(text):
                block.state = State.RICH
                return Step.TAKE
            if g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = State.MESSAGE, 0
                return Step.TAKE
            block.truncated = True
            return Step.CLOSE
        if state is State.BARE:
            if len(block.texts) == 1 and azure.opens(block.texts[0], text):
                block.state = State.AZURE
                block.kind = EventKind.TRACEBACK if azure.stack(text) else block.kind
                return Step.TAKE
            if len(block.texts) <= newest_first.LINES_BEFORE_HIDDEN and newest_first.hidden(text):
                block.state, block.kind = State.REVERSED, EventKind.TRACEBACK  # Sentry's raw stack: frames follow
                return Step.TAKE
            if len(block.texts) == 1 and text[:1] == " " and g.PYBIND_SUPPORTED in block.texts[0]:
                block.state, block.message_lines = State.MESSAGE, 0  # pybind11's signatures under its message, and
                return self._advance(block, line)  # the call's own after them (see AFTER_BLANK)
            if len(block.texts) == 2 and not stripped and block.texts[1].strip():
                return Step.TAKE  # (Sentry's mark may come after a blank under the message's line; else it ends)
            if len(block.texts) == 3 and not block.texts[2].strip():
                return Step.CLOSE
            if (len(block.texts) == 1 and text[:2] == "  " and text[2:3].strip() and not g.FRAME.match(text)
                    and cleo.names_class(block.texts[0])):
                block.state = State.CLEO  # (a copy that lost the blank lines of a Cleo app's report)
                return Step.TAKE
            if len(block.texts) == 1 and ob.message_below(block.texts[0]) and (
                    text[:1] in ("", " ", "\t") or ob.in_box(block.texts, text)):
                block.state, block.message_lines = State.MESSAGE, 0  # `Type: `, its message below it (maybe boxed)
                return self._advance(block, line)
            if len(block.texts) == 2 and not block.texts[1].strip():  # a blank line after the exception line:
                if stripped and cleo.names_class(block.texts[0]) and cleo.goes_on(block.texts, text):
                    block.state = State.CLEO  # maybe a Cleo app's report: its message, then its place
                    return Step.TAKE
                if stripped == streamlit.RETICULATE_HEADER:
                    block.state, block.kind = State.STREAMLIT, EventKind.TRACEBACK  # R's reticulate: the frames follow
                    return Step.TAKE
                if stripped == dagster.STACK or dagster.link(text):  # (its frames; or its cause, as its UI spaces it)
                    block.state, block.kind = State.DAGSTER, EventKind.TRACEBACK
                    return Step.TAKE
                if text.startswith('File "') and g.REVERSED_FRAME.match(text) or newest_first.at_frame(text):
                    cut(block, 1)  # a log viewer's frames, unindented, after a blank (Streamlit Cloud's page, Error Reporting's)
                    block.state, block.kind = State.REVERSED, EventKind.TRACEBACK
                    return Step.TAKE
                if stripped != g.PYBIND_AT:  # the error ends there, unless pybind11's stack follows
                    return Step.CLOSE
                block.state, block.kind = State.PYBIND, EventKind.TRACEBACK
                return Step.TAKE
            if len(block.texts) == 1 and not stripped:
                return Step.TAKE  # (looked at again if no `At:` follows it)
            if len(block.texts) == 1 and dagster.link(text):
                block.state = State.DAGSTER  # the error's cause follows, as Dagster words it
                return Step.TAKE
            if len(block.texts) == 1 and stripped == streamlit.HEADER:
                block.state, block.kind = State.STREAMLIT, EventKind.TRACEBACK
                return Step.TAKE
            if g.FRAME.match(text) and (ob.wraps_remote(block.texts[0])
                                        or (len(block.texts) == 2 and g.remote_task(block.texts[1]))):
                block.state, block.kind = State.FRAMES, EventKind.TRACEBACK  # Ray: the remote frames follow
                block.frames_from = len(block.texts) - 1
                return Step.TAKE
            if len(block.texts) == 1 and airflow.frame(text):
                block.state, block.kind = State.AIRFLOW, EventKind.TRACEBACK
                return Step.TAKE
            if len(block.texts) == 1 and scons.opens(block.texts[0], text):
                block.state, block.kind = State.SCONS, EventKind.TRACEBACK
                return Step.TAKE
            if g.REVERSED_FRAME.match(text) or (len(block.texts) == 1 and newest_first.at_frame(text)):
                block.state, block.kind = State.REVERSED, EventKind.TRACEBACK
                return Step.TAKE
            if len(block.texts) == 1 and ipython.starts_cut(text):
                block.state, block.kind = State.IPYTHON, EventKind.TRACEBACK  # Databricks: the exception first
                return Step.TAKE
            if len(block.texts) == 1 and g.TORCHSCRIPT_HEADER.match(text):
                block.state, block.note_start, block.output = State.NOTE, 1, True
                block.kind = EventKind.TRACEBACK  # the error TorchScript's interpreter failed with, under its stack
                return Step.TAKE
            if len(block.texts) == 1 and (header := g.HEADER.match(text)) and (
                    g.reraised_original(header) or g.holds_traceback(block.texts[0], header)):
                block.state, block.note_start, block.output = State.NOTE, 1, True
                block.kind = EventKind.TRACEBACK  # torch's error raised again, the worker's traceback below it
                return Step.TAKE
            if len(block.texts) == 1 and ob.raised_below(block.texts[0]) and named_error(text) is not None:
                block.state, block.message_lines = State.MESSAGE, 1  # `BackendCompilerFailed: backend='inductor'
                return Step.TAKE  # raised:`, then the error it raised (blocks.parse_chain: that one failed)
            if len(block.texts) == 1 and ob.message_below(block.texts[0]) and not self._starts_record(text):
                block.state, block.message_lines = State.MESSAGE, 1  # `Type: `, its message flush left, as Python
                return Step.TAKE  # prints one that begins with a line break (`raise ImportError("\\ncannot ...")`)
            if len(block.texts) <= SOURCE_LINES and stripped and not self._starts_record(text):
                return Step.TAKE  # the innermost frame's caret and source lines, if a frame follows
            if stripped and ob.indented_below(block.texts[0], [*block.texts[1:], text]):
                block.state, block.message_lines = State.MESSAGE, len(block.texts) - 1
                return Step.TAKE  # more indented lines than a frame prints: its message's (torch._dynamo's hints)
            return Step.CLOSE
        if state is State.CLEO:
            if cleo.place(text):
                block.state, block.kind = State.CLEO_PLACE, EventKind.TRACEBACK
                return Step.TAKE
            return Step.TAKE if cleo.goes_on(block.texts, text) else Step.CLOSE
        if state is State.CLEO_PLACE:
            return Step.TAKE if cleo.source(text) else Step.CLOSE
        if state is State.REVERSED:
            if newest_first.frame(text) or (stripped == "..." and newest_first.hidden(block.texts[-1])):
                return Step.TAKE
            if g.HEADER.match(text):
                return Step.TAKE_AND_CLOSE  # the top of the traceback, printed last
            recent = block.texts[-SOURCE_LINES:]
            if stripped and any(g.REVERSED_FRAME.match(held) for held in recent) and not self._starts_record(text):
                return Step.TAKE  # the source (and caret) line of the next frame out
            return Step.CLOSE
        if state is State.NOTE:
            if g.FRAME.match(text) or g.is_frame_detail(text) or (text[:1] == " " and stripped) or g.TORCHSCRIPT_HEADER.match(text):
                return Step.TAKE
            if not stripped and g.TORCHSCRIPT_HEADER.match(block.texts[block.note_start]):
                return Step.TAKE  # (TorchScript shows the source around each call as it is, blank lines too)
            if g.EXCEPTION_LINE.match(text) and (block.output or ob.retold(block, text)
                                                 or self._is_note(block.texts, block.note_start, text)):
                block.state, block.message_lines = State.MESSAGE, 0  # the note's or the child's exception
                return Step.TAKE  # line; its message may go on
            return Step.CLOSE  # not a note: the block ends where it began (see _close)
        if state is State.VSCODE:  # its message, then frames newest first
            if g.REVERSED_FRAME.match(text) or (text[:1] == " " and stripped and block.message_lines < len(block.texts) - 1):
                return Step.TAKE
            if block.message_lines == len(block.texts) - 1 and (
                    (stripped and not self._starts_record(text)) or vscode.goes_on_chain(block.texts, text)):
                block.message_lines += 1
                return Step.TAKE
            if g.EXCEPTION_LINE.match(text) and text.startswith(vscode.HEADER.match(block.texts[0])["type"] + ":"):
                return Step.TAKE_AND_CLOSE  # a copy that ends in the exception line itself
            return Step.CLOSE
        if state is State.NATIVE:
            block.marks = block.marks or native.Marks()
            if native.continues(block.texts, text, block.marks):
                return Step.TAKE
            return Step.CLOSE
        if state is State.PYTEST:
            if pytest_report.links(block.texts, text):
                block.state, block.held = State.PYTEST_LINKED, 0
                return Step.TAKE
            return Step.TAKE if pytest_report.continues(block.texts, text) else Step.CLOSE
        if state is State.PYTEST_LINKED:  # the next link's report: its source lines left out, then its `E` lines
            if pytest_report.starts(text):
                block.state = State.PYTEST
                return Step.TAKE
            block.held += 1
            return Step.SKIP if pytest_report.links_to(block.held, text) else Step.CLOSE
        if state is State.PYTEST_STACK:
            if pytest_report.starts(text):
                block.state = State.PYTEST
                self._pytest_reports = True
                return Step.TAKE
            return Step.TAKE if pytest_report.stack_goes_on(block.texts, text) else Step.DROP  # (no report)
        if state is State.FIELDS:
            goes_on = fieldreport.goes_on(block.texts, text)
            return Step.TAKE_AND_CLOSE if goes_on is None else Step.TAKE if goes_on else Step.CLOSE
        if state is State.AIRFLOW:
            if not airflow.goes_on(block.texts, text):
                return Step.CLOSE
            block.held = 0 if stripped else 1
            return Step.TAKE
        if state is State.SCONS:
            return Step.TAKE if scons.goes_on(block.texts, text) else Step.CLOSE
        if state is State.SNAKEMAKE:
            return Step.TAKE if snakemake.goes_on(block.texts, text) else Step.CLOSE
        if state is State.CLASS_PAGE:
            return Step.TAKE if classpage.goes_on(block.texts, text) else Step.CLOSE
        if state is State.EXPECTED:
            return Step.TAKE if doctest_report.goes_on(text) else Step.CLOSE
        if state is State.AZURE:  # (a traceback once its stack began)
            if not azure.goes_on(block.texts, block.kind is EventKind.TRACEBACK, text):
                return Step.CLOSE
            block.kind = EventKind.TRACEBACK if azure.stack(text) else block.kind
            return Step.TAKE
        if state is State.LAMBDA:
            if not awslambda.goes_on(block.texts, block.depth, text):
                return Step.CLOSE
            block.depth = awslambda.depth_after(block.depth, text)
            return Step.TAKE
        if state is State.PRECOMMIT:
            if precommit.closes(text):
                return Step.TAKE_AND_CLOSE
            return Step.TAKE if precommit.goes_on(block.texts, text) else Step.CLOSE
        if state is State.HYDRA:
            if stripped == hydra.CLOSING:
                block.inferred = True  # (its class is told by its words)
                return Step.TAKE_AND_CLOSE
            if self._starts_record(text) or len(block.texts) >= hydra.MAX_LINES:
                return Step.CLOSE  # (its traceback follows, an error Hydra reports whole; or no report of Hydra's)
            return Step.TAKE
        if state is State.DAGSTER:
            if not dagster.goes_on(block.texts, text):
                return Step.CLOSE
            block.held = 0 if stripped else 1  # (a blank line is kept only if the text goes on after it)
            if stripped == dagster.STACK:
                block.kind = EventKind.TRACEBACK
            return Step.TAKE
        if state is State.STREAMLIT:  # frame lines, each with its source line under it (a blank line above them)
            if g.FRAME.match(text) or (text[:1] == " " and stripped and len(block.texts) > 2) or (
                    len(block.texts) == 2 and not stripped):
                return Step.TAKE
            if stripped and not self._starts_record(text) and (g.FRAME.match(block.texts[-1]) or (
                    g.CARETS.match(text) and g.FRAME.match(block.texts[-2]))):
                return Step.TAKE  # its source line flush left too, carets under it (Streamlit Cloud's redacted error)
            return Step.CLOSE
        if state is State.PYBIND:
            return Step.TAKE if g.PYBIND_FRAME.match(text) else Step.CLOSE
        if state is State.FUTURE:
            return self._future_goes_on(block, text)
        if state is State.LOGGED and block.message_lines < self._max_message_lines and ob.logged_message_below(block, line) \
                and not self._starts_record(text):
            assert block.logged is not None  # (logged_message_below: a logged error's)
            block.logged = replace(block.logged, message="\n".join(filter(None, (block.logged.message, stripped))))
            block.message_lines += 1
            return Step.TAKE
        if state in (State.LOGGED, State.QUIET):  # one blank line, then pybind11's stack, or the error ends on its line
            if len(block.texts) == 1 and not stripped:
                return Step.TAKE
            if len(block.texts) == 2 and stripped == g.PYBIND_AT:
                block.state, block.kind = State.PYBIND, EventKind.TRACEBACK
                return Step.TAKE
            return Step.CLOSE
        if state is State.RICH:
            if richtb.continues(text):
                return Step.TAKE
            if stripped and richtb.CLOSE.match(block.texts[-1]) and g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = State.MESSAGE, 0
                return Step.TAKE
            block.truncated = True
            return Step.CLOSE
        if state is State.IPYTHON:
            if len(block.texts) == 1 and ipython.old_frame_alone(block.texts[0], text):
                return Step.DROP
            if len(block.texts) == 1 and g.FRAME.match(text) and block.texts[0].strip() == g.HEADER_TEXT[:-1]:
                self._texts.release(block.texts[:1])  # CPython's header without its colon (Werkzeug's debugger page
                block.texts[0] = self._texts.hold(g.HEADER_TEXT)  # as a copy gives its heading), then its frames
                block.state, block.frames_from = State.FRAMES, 0
                return Step.TAKE
            if text[:1] not in (" ", "-") and ob.nests_traceback(text):
                block.state, block.frames_from = State.FRAMES, len(block.texts)
                return Step.TAKE  # an exception line whose message is a traceback (a server's, in its response)
            if ipython.RULE.match(text) or ipython.HEADER.match(text) or ob.opens_something(text):
                block.truncated = True
                return Step.CLOSE
            if text[:1] not in (" ", "-") and stripped and g.EXCEPTION_LINE.match(text):
                block.state, block.message_lines = State.MESSAGE, 0
            return Step.TAKE
        if state is State.GROUP:
            if block.group_column < 0:  # the first box line tells the column; a logger's text may shift the header
                block.group_column = box_column(text)
            if in_box(text, block.group_column) and not g.GROUP_HEADER.match(text):
                return Step.TAKE  # a "+ Exception Group" header is only ever a group's first line
            if not stripped:
                block.state, block.held = State.AFTER_BLANK, 1
                return Step.TAKE
            return Step.CLOSE
        # State.USAGE
        if g.ARGPARSE_ERROR.match(text):
            return Step.TAKE_AND_CLOSE
        if text[:1] == " " and stripped:
            return Step.TAKE
        return Step.DROP

    def _future_goes_on(self, block: Block, text: str) -> Step:
        """The lines of a future's repr (a copy's wrap), then a blank line at most: where its traceback follows, the
        repr leads it; where its exception line does, the repr is no event of its own."""
        if not asyncio_report.complete(block.texts[:len(block.texts) - block.held]):
            if text.strip() and len(block.texts) < asyncio_report.MAX_LINES and not self._starts_record(text):
                return Step.TAKE
            return Step.DROP  # (cut: no telling the error)
        if g.HEADER.match(text):  # its traceback: the repr leads it (ob.leads), and tells its error if it is cut
            block.logged = asyncio_report.error(block.texts)
            return Step.CLOSE if block.logged is not None else Step.DROP
        if g.BARE_EXCEPTION_LINE.match(text):
            return Step.DROP  # (an error never raised has no stack: logging prints its exception line alone)
        if not text.strip() and not block.held:
            block.held = 1
            return Step.TAKE
        return Step.CLOSE

    @staticmethod
    def _is_note(texts: list[str], start: int, exception_line: str) -> bool:
        own = parse_chain(texts[:start])
        if not own:
            return False
        last = own[-1]
        return bool(note_end([*texts[start:], exception_line], 0, last.exception_type, last.message, last.frames))

    def _starts_record(self, text: str) -> bool:
        """A line that opens a record of its own, or reports one (what `_begin` looks for)."""
        return bool(ob.opens_something(text) or g.ARGPARSE_USAGE.match(text) or g.BARE_EXCEPTION_LINE.match(text)
                    or text.startswith(g.UNRAISABLE)
                    or native.starts(text) or ipython.HEADER.match(text) or vscode.HEADER.match(text)
                    or pytest_report.summary(text) is not None or (self._notices is not None and self._notices(text) is not None))

    def _close(self, key: str) -> list[ErrorEvent]:
        block = self._forget(key)
        quiet = block.state is State.QUIET  # (its error: none, no stack followed it)
        held = self._trim(block)
        if held:
            out = [] if quiet else self._closed(key, block)
            for line in held:
                out.extend(self._feed(line))
            return out
        if block.state is State.FUTURE:
            block.logged = asyncio_report.error(block.texts)
        if (block.kind is EventKind.ARGPARSE and not g.ARGPARSE_ERROR.match(block.texts[-1])) or (
                block.state in (State.PYTEST_STACK, State.EXPECTED)) or (
                block.state is State.HYDRA and not hydra.complete(block.texts)) or (
                block.state is State.LAMBDA and not awslambda.complete(block.texts)) or quiet or (
                block.state is State.SEPARATOR and excepthook.hooked(block.texts) and not any(map(g.HEADER.match, block.texts))) or (
                block.state is State.FUTURE and block.logged is None):
            return []  # a usage text printed on its own (--help, a warning), a stack with no `E` lines, what a doctest
            # expected, an object with such a key that names no error, a quiet line's error no stack followed, the hook's
            # words without its traceback, a future's repr cut or naming no error: no error
        if block.state is State.LAMBDA and not awslambda.framed(block.texts):
            block.kind = EventKind.BARE  # (the runtime's own errors come without frames)
        return self._closed(key, block)

    def _closed(self, key: str, block: Block) -> list[ErrorEvent]:
        """A block that ended: its events, or none yet where it is a bare exception line that waits (one named
        by its message alone is an error only if a stack takes it: see _release)."""
        if (block.kind is EventKind.BARE and block.state in (State.BARE, State.MESSAGE) and len(block.texts) == 1
                and block.lead is None):
            return self._wait(key, block)
        return self._led(block)

    def _led(self, block: Block) -> list[ErrorEvent]:
        """The block's event; where an exception line came right above its header, that line's event
        first, or, when the traceback ended without an exception line of its own, one event of both."""
        event = self._event(block)
        if block.lead is None:
            return [event]
        said = self._event(block.lead)
        last = event.chain[-1]
        if last.exception_type and (block.lead.inferred or ob.labels_traceback(block.lead.texts[0], block.texts[0])
                                    or ob.reports_user_code(block.lead.texts[0])):
            return [event]  # (the label of a traceback that tells its error itself, or its message alone above it)
        if last.exception_type and _same_error(said.final, last):  # a logger's record of the error, then its traceback
            return [_from_lead(said, event, context=event.context or said.context)]  # (`logger.exception(f"...: {e!r}")`)
        # (a traceback cut above its exception line whose header named its class, IPython's: the line tells its text)
        named_only = event.truncated and not last.message and last.short_type == said.final.short_type
        if (last.exception_type and not named_only) or event.kind is not EventKind.TRACEBACK:
            return [said, event]
        own = replace(last, exception_type=said.final.exception_type, message=said.final.message)
        # (a logged error's stack is whole without it; a bare line's may have been cut anywhere, and asyncio's report
        # prints the whole traceback after the repr)
        truncated = event.truncated and (said.kind is EventKind.BARE or block.lead.state is State.FUTURE)
        chain = (*event.chain[:-1], *said.chain[:-1], own)  # (with the errors the line names inside its own)
        return [_from_lead(said, event, chain=chain, truncated=truncated, inferred=said.inferred)]

    @staticmethod
    def _trim(block: Block) -> list[LogLine]:
        """Cut a block that ends here to the record it holds; returns the lines after the record,
        which are to be looked at afresh."""
        if block.reread:  # no frame came after a bare line, or a traceback was no note:
            held, block.reread = block.reread, None
            if block.state is State.BARE and ob.indented_below(block.texts[0], [line.text for line in held]):
                block.state, block.message_lines = State.MESSAGE, len(held)  # its message's indented lines
                return []
            if block.state is State.BARE and not held[0].prefix and g.titled(block.texts[0], held[0].text):
                cut(block, len(block.texts) - len(held) + 1)  # an error tracker's title: the class, its value below
                block.state, block.message_lines = State.MESSAGE, 1
                return held[1:]
            cut(block, len(block.texts) - len(held))  # the block ends before them
            block.state = State.MESSAGE
            return held
        if block.state is State.PYTEST_LINKED:  # the next link's report never came: the chain was cut after its words
            cut(block, len(block.texts) - 1)
            block.state, block.truncated = State.PYTEST, True
        while block.state in (State.NATIVE, State.PYTEST, State.LAMBDA, State.CLASS_PAGE, State.FUTURE) and not block.texts[-1].strip():
            cut(block, len(block.texts) - 1)
        if block.state is State.REVERSED and (newest_first.moved_up(block.texts) or newest_first.sentry_raw(block.texts)):
            block.truncated = True  # (its header is not there: the copy may have cut frames above them; Sentry hid some)
        while (block.state is State.REVERSED and not newest_first.frame(block.texts[-1])
               and not newest_first.sources_below(block.texts) and not newest_first.sentry_raw(block.texts)):
            cut(block, len(block.texts) - 1)  # source lines with no frame after them
        if block.state in (State.AFTER_BLANK, State.FRAMES, State.DAGSTER, State.AIRFLOW) and block.held:
            if block.state is State.AFTER_BLANK and ob.message_below(block.texts[-1 - block.message_lines - block.held]):
                while not block.texts[-1].strip():  # (kept: the message of `Type: `, which began with line breaks)
                    cut(block, len(block.texts) - 1)
            else:
                cut(block, len(block.texts) - block.held)
        if block.state in (State.FRAMES, State.SEPARATOR, State.IPYTHON, State.RICH) and not (
                block.state is State.IPYTHON and g.EXCEPTION_LINE.match(block.texts[0])):  # (its exception came first)
            block.truncated = True
        return []

    def _event(self, block: Block, notice: ErrorInfo | None = None) -> ErrorEvent:
        texts = block.texts
        chain: tuple[ErrorInfo, ...]
        if block.kind is EventKind.ARGPARSE:
            error = g.ARGPARSE_ERROR.match(texts[-1])
            chain = (ErrorInfo("ArgumentError", error["message"], has_traceback=False),)
            context = " ".join(t.strip() for t in texts[:-1])
        elif notice is not None:
            chain, context = told_within(notice), block.context
        elif block.logged is not None:
            stack = pybind_stack(texts, 1)
            chain, context = tuple(with_pybind_stack(block.logged, stack[0]) if stack else (block.logged,)), block.context
        elif block.kind is EventKind.NATIVE:
            chain, context = native.parse_chain(texts), ""
        elif block.state is State.PYTEST:
            chain, context = pytest_report.parse(texts), ""
        elif block.state is State.FIELDS:
            chain, context = raised_within(fieldreport.parse(texts)), ""
        elif block.state is State.CLEO_PLACE:
            chain, context = cleo.parse(texts), ""
        elif block.state is State.HYDRA:
            chain, context = (hydra.parse(texts),), block.context
        elif block.state is State.PRECOMMIT:
            chain, context = precommit.parse(texts), block.context
        else:
            standard = _TO_STANDARD.get(block.state) or (excepthook.to_standard if excepthook.hooked(texts) else None)
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
            inferred=block.inferred,
        )


def _from_lead(said: ErrorEvent, event: ErrorEvent, **fields) -> ErrorEvent:
    """The traceback's event as one with the line that led it: from that line on, its time first."""
    return replace(event, span=replace(event.span, line_start=said.span.line_start), lines=(*said.lines, *event.lines),
                   timestamp=said.timestamp or event.timestamp, **fields)


_JSON_KEY = lazyregex.compile(r'\s*"\w+": ?"')  # a JSON member's key and its string's opening quote, before its text


def _said_type(block: Block) -> str:
    """The class a bare exception line's block names."""
    said = g.BARE_EXCEPTION_LINE.match(block.texts[0])
    return said["type"] if said is not None else ""


def _same_error(said: ErrorInfo, raised: ErrorInfo) -> bool:
    """Whether a line's error is the traceback's: its class (by its last name) and its message's words, or none (the
    repr of an error whose str() is not its arguments': `RayActorError()`); or the word Exception as a label of any
    error, its message the traceback's (`print(f"Exception: {exc}")`, llama-cpp-python's server)."""
    if said.short_type == "Exception" and said.message:
        return said.message.split() == raised.message.split()
    return said.short_type == raised.short_type and (not said.message or said.message.split() == raised.message.split())


def _multiline_said(said: str) -> ErrorInfo:
    """The error an exception line whose message goes on over line breaks (`exception_in_words` of a repr) says."""
    first, _, rest = said.partition("\n")
    typed = g.BARE_EXCEPTION_LINE.match(first)
    assert typed is not None  # (exception_in_words gives exception lines only)
    return ErrorInfo(typed["type"], f"{typed['message'] or ''}\n{rest}", has_traceback=False)


# States whose lines are another program's layout of a traceback -> that layout rewritten in CPython's
_TO_STANDARD: dict[State, Callable[[list[str]], list[str]]] = {
    State.REVERSED: newest_first.to_standard, State.VSCODE: vscode.to_standard, State.STREAMLIT: streamlit.to_standard,
    State.DAGSTER: dagster.to_standard, State.AIRFLOW: airflow.to_standard, State.SCONS: scons.to_standard,
    State.SNAKEMAKE: snakemake.to_standard, State.LAMBDA: awslambda.to_standard, State.AZURE: azure.to_standard,
    State.CLASS_PAGE: classpage.to_standard,
}


