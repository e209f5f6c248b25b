"""An open block: what the assembler (`assemble.py`) holds of a record it is reading, the states its
reading goes through, and what the lines it took so far tell of the lines to come."""

from __future__ import annotations

import enum
from array import array
from dataclasses import dataclass, replace
from datetime import datetime

import regex

from analyzer.core import asyncio_report, ipython, lazyregex, native, pytest_report, richtb
from analyzer.core import grammar as g
from analyzer.core.records import ErrorInfo, EventKind, LogLine

__all__ = [
    "Block", "SOURCE_LINES", "State", "Step", "after_stripped_frame", "box_closed", "boxed_exception_line", "boxed_frame", "cut",
    "ends_in_source",
    "ends_stripped_frame", "exception_at_frames_indent", "frame_detail", "in_box", "in_open_statement", "indented_below",
    "introduces_output", "labels_traceback", "leads", "message_below", "nests_traceback", "new_block", "opens_something",
    "output_introduced", "parkable", "raised_below", "reads_as_exception_line", "rest_of_rest", "retold",
    "source_line", "tells_indent", "typeless_header", "wraps_remote", "wraps_remote_here",
]


class State(enum.Enum):
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
    QUIET = "quiet"  # a line at a lower level that names an error: one only where pybind11's stack follows it
    STREAMLIT = "streamlit"  # Streamlit's error box: the exception line, `Traceback:`, the frames (core/streamlit.py)
    FIELDS = "fields"  # a report that names the exception in fields: Django's page (core/fieldreport.py)
    CLEO = "cleo"  # a class's name alone, a blank line, then what may be a Cleo app's report (core/cleo.py)
    CLEO_PLACE = "cleo_place"  # ... which its place confirmed: the source lines around it follow
    PYTEST_STACK = "pytest_stack"  # frames in pytest's short style: a report if its `E` lines follow
    PYTEST_LINKED = "pytest_linked"  # after a report and a chain's separator: the next link's report, its `E` lines to come
    AIRFLOW = "airflow"  # an exception line, then frames as Airflow 3's task log renders them (core/airflow.py)
    SCONS = "scons"  # an exception line, then frames as SCons prints them (core/scons.py)
    SNAKEMAKE = "snakemake"  # an error as Snakemake reports it: its place in the workflow, message, frames (core/snakemake.py)
    CLASS_PAGE = "class_page"  # a class alone as `type()` prints it, its message a paragraph below (core/classpage.py)
    EXPECTED = "expected"  # what a failed doctest example was expected to print (core/doctest_report.py): no error
    AZURE = "azure"  # Azure Functions' report of a failure: the exception line, `Stack: ` and the frames (core/azure.py)
    LAMBDA = "lambda"  # the error object AWS Lambda's Python runtime returns, as JSON (core/awslambda.py)
    PRECOMMIT = "precommit"  # pre-commit's report of an error of its own, its command's output under it (core/precommit.py)
    HYDRA = "hydra"  # Hydra's short report of an error of its own: its text, then its closing line (core/hydra.py)
    DAGSTER = "dagster"  # an error's text as Dagster serialises it: `Stack Trace:`, its causes after it (core/dagster.py)
    FUTURE = "future"  # asyncio's repr of a future whose error nothing retrieved: its traceback may follow (core/asyncio_report.py)


class Step(enum.Enum):
    TAKE = "take"  # the line belongs to the block
    TAKE_AND_CLOSE = "take_and_close"  # it does, and completes it
    SKIP = "skip"  # it does, but is left out: a message past its line limit
    CLOSE = "close"  # the block is over; the line is looked at afresh
    DROP = "drop"  # the block was not an error after all; the line is looked at afresh


SOURCE_LINES = 2  # lines a frame prints under it: its source line and, since 3.11, a caret line


@dataclass(slots=True)
class Block:
    """An open record. Its lines are held as their text and line number only: a hundred thousand ranks
    printing the same traceback at once hold the same texts (see assemble._SharedTexts), so each rank costs
    its record and two machine words a line, not a copy of every line and its metadata."""

    state: State
    kind: EventKind
    first: LogLine  # the line that opened it (see new_block): where it is and whose
    texts: list[str]
    linenos: array[int]
    # Its last lines whole, from where they may have to be looked at afresh (TracebackAssembler._trim): after
    # a bare exception line, or from a traceback that may be a note. None in every other state.
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
    depth: int = 0  # how deep in brackets an AWS Lambda error object's lines end (core/awslambda.py)
    logged: ErrorInfo | None = None  # the error a logged error's line reports
    # An exception line right above its header (see leads): the traceback's own if it ends without one
    lead: Block | None = None
    inferred: bool = False  # a bare line that is CPython's message alone, its class named by it (cpython_messages)
    marks: native.Marks | None = None  # what a native report's lines hold (native.continues)
    prefixed: bool = False  # its first line came behind a prefix (`first` keeps none: see new_block)
    repeats_prefix: bool = False  # a line after its first came behind a prefix too: each of its lines does


def new_block(state: State, kind: EventKind, line: LogLine, text: str, **fields) -> Block:
    """A block opened by `line`, whose text is held as `text`. It keeps the line as its first, less
    the copies of text a prefixed line brings (a rank's own copy of the shared text, its prefix)."""
    first = line if line.text is text and not line.prefix else replace(line, text="", prefix="")
    return Block(state, kind, first, [text], array("q", (line.lineno,)), timestamp=line.timestamp,
                 prefixed=bool(line.prefix), **fields)


def leads(block: Block, line: LogLine) -> bool:
    """Whether `block` is an exception line logged as an error right above `line`, a traceback's header:
    AWS Lambda's Python runtime logs `[ERROR] KeyError: 'x'`, then the stack without it. (A bare exception
    line above a traceback cut short, by a rotation say, is no sign that the two are one; one after words, a logger's
    record of the error, is.) Or a logger's label of the traceback (see labels_traceback). Or asyncio's repr of a
    future whose error nothing retrieved, maybe wrapped over lines (core/asyncio_report.py)."""
    if block.state is State.FUTURE:
        return block.logged is not None and block.linenos[-1] + 1 == line.lineno and (
            (m := g.HEADER.match(line.text)) is not None and not m["context"].strip())
    return ((block.state is State.LOGGED or (block.state is State.BARE and (
        bool(block.context) or labels_traceback(block.texts[0], line.text))))
            and len(block.texts) == 1 and block.linenos[0] + 1 == line.lineno and (m := g.HEADER.match(line.text)) is not None
            and not m["context"].strip())


def labels_traceback(exception_line: str, text: str) -> bool:
    """Whether `exception_line`, a class's name and a colon with nothing after it, is a logger's label of the
    traceback whose header `text` is (pip's `logger.exception("Exception:")`): Python prints an exception
    without a message as its name alone, no colon after it."""
    return (exception_line.rstrip().endswith(":") and (m := g.HEADER.match(text)) is not None and not m["context"].strip()
            and (said := g.BARE_EXCEPTION_LINE.match(exception_line)) is not None and not said["message"])


def reports_user_code(exception_line: str) -> bool:
    """Whether `exception_line` heads TensorFlow's report of an error in a `tf.function` (`ValueError: in user
    code:`): the frames under it, indented, and the error's own line, indented too, tell the error."""
    said = g.BARE_EXCEPTION_LINE.match(exception_line)
    return said is not None and (said["message"] or "").strip() == "in user code:"


def rest_of_rest(block: Block, rest: str) -> str | None:
    """The last two lines of `block` and `rest` as one, where they are the three parts of a frame line
    wrapped twice (its last part in the function's name)."""
    if block.state is not State.FRAMES or len(block.texts) < 2:
        return None
    frame = g.rest_of_frame_line(block.texts[-2], block.texts[-1])
    return block.texts[-1] + rest if frame is not None and g.rest_of_frame_line(frame, rest) is not None else None


def retold(block: Block, exception_line: str) -> bool:
    """Whether the traceback a note state reads ends in the very exception line its block's traceback
    ended in (right before the note's header), from other frames: where the error was first raised, in
    another process (vLLM's executor re-raising a worker's error with the worker's traceback below it).
    (From the same frames it is the same error printed again.)"""
    start = block.note_start
    if block.message_lines or block.texts[start - 1].strip() != exception_line.strip():
        return False
    below_header = [text for text in block.texts[block.frames_from:start] if not g.HEADER.match(text)]
    return [*block.texts[start + 1:], exception_line] != below_header


def indented_below(exception_line: str, texts: list[str]) -> bool:
    """Whether `texts` are all indented under an exception line that is not: its message's further lines."""
    return exception_line[:1] not in (" ", "\t") and all(text[:1] in (" ", "\t") for text in texts)


def exception_at_frames_indent(block: Block, text: str) -> bool:
    """Whether `text` is an exception line two blanks in, as the frame line above it (after its source
    lines) is: a traceback re-indented by hand. (Only two in: `TracebackAssembler.extend` refuses such a
    line cheaply.)"""
    if text[:2] != "  " or text[2:3] in (" ", "\t", "") or text[2:7] == "File ":
        return False
    frame = next((held for held in reversed(block.texts[-1 - SOURCE_LINES:]) if g.frame_line(held)), None)
    return frame is not None and frame[2:3] != " " and g.exception_line_at_indent(text, 2)


# A line of a box an exception group draws a sub-exception in, begun with its header or a frame line.
_BOXED = lazyregex.compile(r'^(?P<box> *\| )(?:' + regex.escape(g.HEADER_TEXT) + r'\s*$|  File ")')


def boxed_frame(text: str) -> bool:
    """Whether `text` is a frame line in an exception group's box (`    |   File "..."`): a paste begun there."""
    return (m := _BOXED.match(text)) is not None and g.FRAME.match(text[m.end("box"):]) is not None


def boxed_group_rule(block: Block, text: str) -> int:
    """Where a paste began inside an exception group's box (its first line a frame or a header in the box): the
    column of that box where `text` opens its sub-exceptions (`+-+---- 1 ----` under the box's exception line: the
    error read is a group), else -1."""
    m = _BOXED.match(block.texts[0])
    if m is None:
        return -1
    column = len(m["box"]) - 2
    return column if text[column:column + 3] == "+-+" and not text[:column].strip() and g.GROUP_SEPARATOR.match(text) else -1


def box_closed(block: Block) -> bool:
    """Whether the block's last line of text is the bottom rule of an exception group's box (`    +-------`)."""
    last = next((text for text in reversed(block.texts) if text.strip()), "")
    return _BOX_BOTTOM.fullmatch(last) is not None


_BOX_BOTTOM = lazyregex.compile(r" *\+-{8,}\s*")


def boxed_exception_line(block: Block, text: str) -> bool:
    """Whether `text` is the exception line of a box a paste began without its exception group (at `    | Traceback
    ...` or a frame line): behind the first line's box, at its column."""
    m = _BOXED.match(block.texts[0])
    if m is None:
        return False
    box = m["box"]
    return text.startswith(box) and text[len(box):len(box) + 1] not in (" ", "\t", "") and bool(
        g.EXCEPTION_LINE.match(text[len(box):]))


def typeless_header(block: Block) -> bool:
    """Whether `block` holds an IPython header without its type and nothing else."""
    return block.state is State.IPYTHON and len(block.texts) == 1 and block.texts[0].lstrip().startswith("Traceback")


def ends_in_source(block: Block) -> bool:
    """Whether the last line `block` took is a frame's source line (not the rest of a frame line a
    terminal cut before a space)."""
    texts = block.texts
    return source_line(texts[-1]) and not (len(texts) > 1 and g.rest_of_frame_line(texts[-2], texts[-1]))


def source_line(text: str) -> bool:
    return text[:1] == " " and not g.FRAME.match(text) and not g.FRAME_CUT.match(text) and not ipython.linked_frame(text)


def frame_detail(text: str) -> bool:
    return bool(g.frame_line(text) or g.is_frame_detail(text) or text[:1] == " ")


def innermost_code(block: Block) -> str | None:
    """The source line under the last frame line among the block's last lines (blank lines between them a paste's);
    None where that frame shows none."""
    texts = block.texts
    for k in range(len(texts) - 1, max(-1, len(texts) - 2 - SOURCE_LINES - block.held), -1):
        if g.frame_line(texts[k]):
            return next((text.strip() for text in texts[k + 1:] if text.strip()), None)
    return None


def after_stripped_frame(block: Block, extra: int) -> bool:
    """A frame line that lost its indentation is among the last lines: up to its source and caret
    lines (which lost theirs too), and `extra` lines more, came after it; blank lines between them
    (a paste that doubled its line breaks) are not counted."""
    texts = block.texts
    start = len(texts)
    for _ in range(SOURCE_LINES + extra):
        start -= 1
        while start > 0 and not texts[start].strip():
            start -= 1
        if start <= 0:
            break
    return any(ends_stripped_frame(texts, i) for i in range(max(0, start), len(texts)))


_STATEMENT_LINES = 12  # how far back a statement that spans lines is looked for (3.13+ shows it whole)


def in_open_statement(texts: list[str]) -> bool:
    """Whether the last lines, after a frame line that lost its indentation, are a statement whose
    brackets are still open: Python 3.13+ shows a statement that spans lines whole, or its first and last
    lines around `...<2 lines>...`, and a stripped paste leaves no indentation to tell them apart."""
    if texts[-1][:1] in (" ", "\t"):
        return False  # (the frames kept their indentation: the usual case, told at once)
    for i in range(len(texts) - 1, max(0, len(texts) - _STATEMENT_LINES) - 1, -1):
        if ends_stripped_frame(texts, i):
            return i + 1 < len(texts) and bool(texts[i + 1].strip()) and g.unclosed("".join(texts[i + 1:]))
        if g.frame_line(texts[i]):
            return False
    return False


def ends_stripped_frame(texts: list[str], i: int) -> bool:
    """Whether `texts[i]` ends a frame line that lost its indentation: the whole line, the rest of one
    broken in two, or (first) one the paste began inside of."""
    text = texts[i]
    if g.frame_line(text):
        return g.lost_indentation(text)
    if i:
        return g.lost_indentation(texts[i - 1]) and g.joined_frame(texts[i - 1], text) is not None
    return g.frame_cut_at_start(text) is not None  # (`File "` and the rest: at no indentation)


def tells_indent(first: str) -> bool:
    """Whether the first line after a traceback's header is a frame further in than Python puts one:
    the traceback is indented as a whole, its header behind words (torchrun's `  traceback : `)."""
    return first[:3] == "   " and g.FRAME.match(first) is not None


_DATED = lazyregex.compile(r"\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d")


def logged_message_below(block: Block, line: LogLine) -> bool:
    """Whether `line` goes on with the message of a logged error whose record said only its type (SageMaker's
    `sagemaker-containers ERROR    ExecuteUserScriptError:`, then `Command "..."`): the lines below it are its
    message, to a blank line, a record of its own, or a line that begins with a date."""
    logged = block.logged
    return (logged is not None and (not logged.message or block.message_lines > 0) and bool(line.text.strip())
            and not line.starts_message and _DATED.match(line.text) is None)


def message_below(text: str) -> bool:
    """An exception line whose message began with a line break: `Type: ` and nothing else."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and m["message"] is not None and not m["message"].strip()


_RULE = lazyregex.compile(r"([=*#_-])\1{19,}\s*$")


def _rule(text: str) -> bool:
    """A line of one mark drawn across, as a message boxed in rules begins (torchelastic's summary of failed workers)."""
    return _RULE.match(text) is not None


def in_box(texts: list[str], text: str) -> bool:
    """Whether `text`, after an exception line whose message began with a line break and the lines below it, is in
    a message boxed in rules: its opening rule, or a line after it before the same rule closed the box."""
    if not message_below(texts[0]):
        return False
    if len(texts) == 1:
        return _rule(text)
    return _rule(texts[1]) and (len(texts) == 2 or texts[-1].strip() != texts[1].strip())


def raised_below(text: str) -> bool:
    """An exception line whose message introduces what follows it (`backend='inductor' raised:`)."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and bool(m["message"]) and g.introduces_output(m["message"])


def output_introduced(block: Block) -> bool:
    """Whether the message that began with a line break and ends in the block's last lines introduces
    output (see grammar), so that the traceback after it is a child's."""
    start = len(block.texts) - 1 - block.message_lines - block.held  # the exception line
    return message_below(block.texts[start]) and g.introduces_output("\n".join(block.texts[start + 1:]))


def introduces_output(text: str) -> bool:
    """Whether the exception line `text` introduces output that follows it (see grammar)."""
    m = g.EXCEPTION_LINE.match(text)
    return m is not None and m["message"] is not None and g.introduces_output(m["message"])


def reads_as_exception_line(text: str, block: Block) -> bool:
    """Whether a line among the stripped frame's last lines is the exception's."""
    last = len(block.texts) - 1
    while last > 0 and not block.texts[last].strip():
        last -= 1  # (a paste's doubled line breaks)
    if ends_stripped_frame(block.texts, last):
        return g.exception_line_at_source(text)
    return g.EXCEPTION_LINE.match(text) is not None


def parkable(block: Block) -> bool:
    """A traceback still in its first stack, opened by its header, holding back no blank line: its
    stream's next lines can carry it on from its header."""
    return (block.state is State.FRAMES and not block.frames_from and not block.held and not block.truncated
            and g.HEADER.match(block.texts[0]) is not None)


def may_set_aside(block: Block, line: LogLine) -> bool:
    """Whether `line`, which does not go on with the traceback `block` is reading, may have come into its stack from
    another writer on its channel (a thread's traceback on stderr while others log, stdout's lines in a container's
    log of both streams), it began at its header, no blank line came after its last (the stack's end, likely), and
    `line` is no blank line nor a traceback's header (which end a stack)."""
    return (block.state is State.FRAMES and not block.held
            and g.HEADER.match(block.texts[0]) is not None and bool(line.text.strip()) and not g.HEADER.match(line.text)
            and not block.indent)


def goes_on_stack(block: Block, text: str) -> bool:
    """Whether `text` goes on with the stack of `block`: a frame, the exception line, or the source line (and its
    carets) of the frame it took last."""
    if g.FRAME.match(text) or (text[:1] != " " and g.EXCEPTION_LINE.match(text)):
        return True
    last = block.texts[-1]
    return text[:2] == "  " and bool(text.strip()) and (g.FRAME.match(last) is not None or (
        len(block.texts) > 1 and g.FRAME.match(block.texts[-2]) is not None and g.is_frame_detail(text)))


def cut(block: Block, end: int) -> None:
    """Let the block's lines from `end` on go."""
    del block.texts[end:], block.linenos[end:]


def nests_traceback(text: str) -> bool:
    """`RuntimeError: Traceback (most recent call last):`: an exception whose message is a traceback."""
    header = g.HEADER.match(text)
    return header is not None and bool(g.BARE_EXCEPTION_LINE.match(header["context"].rstrip(":")))


def wraps_remote_here(block: Block) -> bool:
    """The message read so far is a remote error's wrapper line (its remote task named on it or on the next
    line), maybe with the source line or caret lines of a frame cut off under it, or a user's mark of lines left out."""
    texts = block.texts[len(block.texts) - 1 - block.message_lines:]
    told = 1 if wraps_remote(texts[0]) else 2 if len(texts) > 1 and g.remote_task(texts[1]) else 0
    if not told:
        return False
    told += told < len(texts) and g.remote_source_cut(texts[told])  # (with the source line of a frame cut)
    return len(texts) - told <= SOURCE_LINES and all(
        g.CARETS.match(text) or g.is_elision(text) for text in texts[told:])


def wraps_remote(text: str) -> bool:
    """An exception line like `ray.exceptions.RayTaskError(ValueError): ...` (see grammar.wraps_remote)."""
    exc = g.EXCEPTION_LINE.match(text)
    return exc is not None and g.wraps_remote(exc)


def opens_something(text: str) -> bool:
    """A line that cannot continue an exception message: it starts a new record or traceback."""
    return bool(g.HEADER.match(text) or g.GROUP_HEADER.match(text) or g.LOG_RECORD_START.match(text)
                or g.FRAME.match(text) or native.interrupts(text) or richtb.HEADER.match(text) or pytest_report.headline(text)
                or asyncio_report.reports(text))
