"""The grammar of a printed Python traceback, as named patterns.

Each constant cites what CPython prints (Lib/traceback.py, Python/traceback.c); the assembler
and the block parser only speak in these names.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

import regex

from analyzer.core import lazyregex
from analyzer.core.literal import literal

__all__ = [
    "HEADER",
    "TORCHSCRIPT_HEADER",
    "GROUP_HEADER",
    "CAUSE_SEPARATOR",
    "CONTEXT_SEPARATOR",
    "FRAME",
    "REPEATED",
    "REVERSED_FRAME",
    "FRAME_CUT",
    "PLACE_CUT",
    "NAMELESS_FRAME",
    "TEXT",
    "frame_line",
    "frame_cut_at_start",
    "joined_frame",
    "rest_of_frame_line",
    "goes_on_frame_line",
    "HEADER_TEXT",
    "UNRAISABLE",
    "FIXED_LINES",
    "SEPARATORS",
    "FUNCTION_PART",
    "rest_of_fixed_line",
    "begins_header",
    "begins_fixed_line",
    "lost_indentation",
    "EXCEPTION_LINE",
    "wraps_remote",
    "remote_source_cut",
    "remote_task",
    "runpy_error",
    "EXCEPTION_REPR",
    "WRAPPED_DRIVER_ERROR",
    "call_order",
    "listed_newest_first",
    "pybind_call_below",
    "reraised_original",
    "holds_traceback",
    "frame_after_words",
    "REMOTE_QUOTE",
    "PYBIND_AT",
    "PYBIND_FRAME",
    "PYBIND_SUPPORTED",
    "PIP_OUTPUT_END",
    "EXCEPTION_SUFFIX",
    "LAMBDA_RUNTIME",
    "EXCEPTION_NAME",
    "BARE_EXCEPTION_LINE",
    "exception_in_member",
    "exception_in_words",
    "in_step_copies",
    "dedented",
    "written_once",
    "MAX_IN_STEP",
    "unbracketed",
    "EXCEPTION_SUFFIXES",
    "CARETS",
    "LOG_RECORD_START",
    "ARGPARSE_USAGE",
    "ARGPARSE_ERROR",
    "GROUP_BOX",
    "IN_GROUP_BOX",
    "GROUP_SEPARATOR",
    "OUTPUT_LEAD",
    "exception_line_at_source",
    "exception_line_at_indent",
    "introduces_output",
    "frame_remnant",
    "repr_said",
    "unclosed",
    "is_frame_detail",
    "is_elision",
    "padded_exception",
]

# "Traceback (most recent call last):" -- StackSummary header; a log call such as
# logger.exception("Scheduler hit an exception") puts its own text in front of it.
# (the context ends before a blank: where it may end inside a long run of blanks, each was tried to the run's end)
HEADER = lazyregex.compile(r"^(?P<context>.*?)(?<!\s)\s*+Traceback \(most recent call last\):\s*$")

# TorchScript's interpreter raises a RuntimeError whose message is the error it failed with under its own stack:
# "The following operation failed in the TorchScript interpreter.", "Traceback of TorchScript (most recent call
# last):" (a serialized module's: one of its serialized code, then one of its original code), its frames, the error.
TORCHSCRIPT_HEADER = lazyregex.compile(r"^Traceback of TorchScript(?:, (?:serialized|original) code)? \(most recent call last\):\s*$")

# "  + Exception Group Traceback (most recent call last):" -- TracebackException for groups.
GROUP_HEADER = lazyregex.compile(
    r"^(?P<context>.*?)(?<!\s)(?P<indent>\s*+)\+ Exception Group Traceback \(most recent call last\):\s*$"
)

# traceback._cause_message and traceback._context_message.
CAUSE_SEPARATOR = "The above exception was the direct cause of the following exception:"
CONTEXT_SEPARATOR = "During handling of the above exception, another exception occurred:"

# '  File "x.py", line 3, in f' -- FrameSummary; SyntaxError prints frames without ", in f". A paste
# or an export may have stripped the indentation (of the source lines too). The function ends at the
# line's last non-blank (what a lazy `.+?` before `\s*$` finds, without trying every character). loguru marks
# the frame that caught the error with `> ` in place of its indentation (seen only where the whole stack is
# indented: at a line's start it reads as a quote's mark, which the normaliser strips).
FRAME = lazyregex.compile(
    r'^\s*(?:> )?File "(?P<path>[^"]*)", line (?P<lineno>\d+)(?:, in (?P<function>.*\S|.))?\s*$'
)

# A frame line as log viewers export it newest-first: indentation may be stripped.
REVERSED_FRAME = lazyregex.compile(r'^\s*File "[^"]*", line \d+')

# A frame line cut in its place, after its path and before its function: '  File "x.py", line 3, in' + 'f' (or
# inside its words: '  File "x.py", lin' + 'e 3, in f'; a pager's mark at the cut: below).
PLACE_CUT = lazyregex.compile(r'^\s*File "[^"]*", (?:l(?:i(?:ne?)?)?|line \d+,?(?: in?[>\u2026]?)?)\s*$')
# A frame line whose function a rendered page took for an HTML tag and dropped (`in <module>` -> `in`): a
# copy from an issue whose traceback was not in a code block; or that a pager chopped there, its mark at the
# cut (`less -S`'s `>`, systemd's `\u2026`). (Where the next line is its rest, that one was cut there instead:
# see rest_of_frame_line.)
NAMELESS_FRAME = lazyregex.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<lineno>\d+), in[>\u2026]?\s*$')


def frame_line(text: str) -> regex.Match | None:
    """A frame line, with its function or without it (NAMELESS_FRAME)."""
    return FRAME.match(text) or NAMELESS_FRAME.match(text)

# Text without the blanks around it, read in one pass: a lazy `.*?` before `\s*$` tries each blank of a long run inside
# the text to the line's end (30,000 tabs took 3 s a line, a megabyte's run hours).
TEXT = r"\S(?:\s*+\S)*+"
# A frame line a terminal hard-wrapped inside its path: '  File "/very/long/pa' + 'th/x.py", line 3, in f',
# or a paste broke after it: 'File "/very/long/path/x.py",' + 'line 3, in f'.
FRAME_CUT = lazyregex.compile(r'^\s*File "[^"]*+(?P<closed>",?)?\s*$')
_PATH_REST = lazyregex.compile(rf'^[^"\s][^"]*", line \d+(?:, in \s*+{TEXT})?\s*+$')
_LINE_REST = lazyregex.compile(rf"^,?\s*line \d+(?:, in \s*+{TEXT})?\s*+$")
# The first part of a frame line broken at a blank: its word File alone, or with its path begun; or the part after
# the word, its path first (the word's line already taken).
_BLANK_BROKEN = lazyregex.compile(r'^\s*(?:File\s*$|File "|")')
# ... or inside its function's name: '  File "x.py", line 389, in _run_speculative_decoding_' + 'step'
# at the line's start (where a source line, indented, never is; nor an exception's type, one lower-case word).
_FUNCTION_REST = lazyregex.compile(r"^(?:<?[a-z_]\w*)?>?$")
_FRAME_START = lazyregex.compile(r'^\s*File "')
_FILE_WORD = 'File "'
# A piece of a function's name as a frame line prints it: no blank but inside `<...>` (`<cell line: 4>`).
FUNCTION_PART = r"(?:[^\s<]|<[^<>]*>)"
_FUNCTION = lazyregex.compile(r"(?:[\w.]|<[^<>]*>)+")  # a qualified name (`Model.forward`, `f.<locals>.g`, `<cell line: 1>`)


def joined_frame(cut: str, rest: str) -> str | None:
    """The frame line that `cut` and `rest` were before a terminal or a paste broke it in two; else None."""
    after_path = _LINE_REST.match(rest) is not None  # (the rest first: most lines fail it at once)
    if not after_path and (rest[:1] in ("", " ", "\t") or _PATH_REST.match(rest) is None):
        return None
    m = FRAME_CUT.match(cut)
    if m is None or bool(m["closed"]) != after_path:
        return None
    return f"{cut[:m.start('closed') + 1]}, {rest.strip(', ')}" if after_path else cut + rest


def rest_of_frame_line(cut: str, rest: str) -> str | None:
    """The frame line that `cut` and `rest` were before a terminal or a paste broke it in two: inside its
    path or after it (see `joined_frame`), anywhere in `", line N, in ` (a terminal's cut keeps every
    character, a space the rest's first), inside the function's name of an indented frame line, or
    just before it; else None. A rest that begins two spaces in (a source line) or is empty is none."""
    if (whole := joined_frame(cut, rest)) is not None:
        return whole
    if (word := cut.lstrip()) and _FILE_WORD.startswith(word) and FRAME.match(whole := cut + rest):
        return whole  # cut before its path: inside or after its word File
    if (rest[:1] not in ("", " ", "\t") and _BLANK_BROKEN.match(cut) and frame_line(cut) is None
            and FRAME.match(cut + rest, partial=True) is None):
        # a console that wraps at blanks broke it at one and dropped it (where a terminal's cut, keeping every
        # character, makes no frame line): after its word File, its path, `line`...
        start = cut.strip()
        joined = ("File " + start if start[:1] == '"' else cut.rstrip()) + " " + rest.rstrip()
        m = FRAME.match(joined, partial=True)
        if m is not None and (m.partial or m["function"] is None or _FUNCTION.fullmatch(m["function"])):
            return joined
    if rest[:1] in ("", "\t") or rest[:2] == "  " or not _FRAME_START.match(cut):
        return None
    before = FRAME.match(cut)
    if before is None or (before["function"] is None and rest[:1] != " "):  # (a SyntaxError's frame: its source below)
        if (after := FRAME.match(cut + rest)) is not None and (
                _FUNCTION.fullmatch(after["function"]) if after["function"] else before is None):
            return cut + rest
        joined = f"{cut} {rest}"  # a paste's break (a page's soft wrap took the space it broke at)
        after = FRAME.match(joined) if PLACE_CUT.match(cut) else None
        return joined if after is not None and after["function"] and _FUNCTION.fullmatch(after["function"]) else None
    return cut + rest if cut[:1] == " " and before["function"] is not None and _FUNCTION_REST.match(rest) else None


def goes_on_frame_line(cut: str, rest: str) -> bool:
    """Whether `cut` and `rest` together are still only the first part of a frame line: a narrow terminal
    cut it more than once (`  File "/very/long` + `/path/x.py", line 3,` + ` in f`)."""
    m = FRAME.match(cut + rest, partial=True)
    return m is not None and (m.partial or m["function"] is None)  # (`, in f` may follow a line number)


HEADER_TEXT = "Traceback (most recent call last):"
# How CPython's hook for an exception it cannot raise begins its report, on the line above the traceback (`Exception
# ignored in: <function A.__del__ at 0x...>`; 3.14's `Exception ignored while calling deallocator ...:`): the program
# went on.
UNRAISABLE = "Exception ignored "


def reraised_original(header: regex.Match) -> bool:
    """Whether a traceback header (a HEADER match) is torch's `Original Traceback (most recent call last):`,
    which its ExceptionWrapper writes into the message of an error it raises again in the main process
    (`Caught KeyError in DataLoader worker process 0.`): the worker's error, the root cause, follows it."""
    return header["context"] == "Original"


# Messages that end with a traceback formatted into them, below their first line: unittest's loader reports a test
# module it failed to import, or whose `load_tests` failed, as an error whose message holds that traceback.
_HOLDING_TRACEBACK = lazyregex.compile(r"^(?:[\w.]*\.)?ImportError: Failed to import test module: \S+\s*$"
                                       r"|^[\w.]*Error: Failed to call load_tests:\s*$")


def holds_traceback(exception_line: str, header: regex.Match) -> bool:
    """Whether the error whose exception line this is holds, in its message, the traceback that follows it (see
    _HOLDING_TRACEBACK), or one its message's next line labels (`f"... specified.\\nError: {traceback.format_exc()}"`, as
    SGLang's bench_serving raises a failed warm-up request's): that traceback's error is the root cause."""
    context = header["context"]
    return _TRACEBACK_LABEL.match(context) is not None if context else _HOLDING_TRACEBACK.match(exception_line) is not None


_TRACEBACK_LABEL = lazyregex.compile(r"^(?i:error|exception|details?|cause|reason|traceback):$")


SEPARATORS = (CAUSE_SEPARATOR, CONTEXT_SEPARATOR)  # the lines between a chain's links
FIXED_LINES = (HEADER_TEXT, *SEPARATORS)  # the lines a traceback prints as they are


def rest_of_fixed_line(cut: str, rest: str) -> str | None:
    """The line that `cut` and `rest` were when a terminal broke a traceback's header or a chain
    separator in two inside its words (`... Traceback (most recen` + `t call last):`); else None."""
    joined = (cut + rest).rstrip()
    for fixed in FIXED_LINES:
        if joined.endswith(fixed) and len(joined) - len(fixed) < len(cut) < len(joined):
            return joined
    return None


def begins_header(text: str) -> bool:
    """Whether `text` is the first part of a traceback's header, as a wrap cuts it."""
    return 0 < len(text) < len(HEADER_TEXT) and HEADER_TEXT.startswith(text)


def begins_fixed_line(text: str) -> bool:
    """Whether `text` is the first part of a header or a chain separator, as a wrap cuts it (a narrow
    terminal cuts a separator twice)."""
    return any(0 < len(text) < len(fixed) and fixed.startswith(text) for fixed in FIXED_LINES)


def frame_cut_at_start(text: str) -> str | None:
    """A paste that begins inside a frame line (`site-packages/x/y.py", line 3, in f`, or just after its
    word File: ` "/x/y.py", line 3, in f`): that frame line, its path as far as it goes; else None."""
    if '", line ' not in text:
        return None
    if _PATH_REST.match(text):
        return f'File "{text}'
    quoted = text.lstrip(" \t")
    return f"File {quoted}" if quoted[:1] == '"' and _PATH_REST.match(quoted[1:]) else None


def lost_indentation(frame_line: str) -> bool:
    """Whether a frame line has less than the two spaces Python indents it by: a paste stripped or
    collapsed the indentation, so its source line is no further in than the frame (one space each,
    or none) and only its place, right after the frame, tells it apart."""
    return frame_line[:2] != "  "


# "  [Previous line repeated 996 more times]" -- StackSummary.format for recursion.
REPEATED = lazyregex.compile(r"^\s*\[Previous line repeated (?P<count>\d+) more times?\]\s*$")

# "pkg.mod.ErrorType: message" or a bare "AssertionError" -- TracebackException.format_exception_only.
# The type is the class's module and qualified name, so a class defined in a function reads
# "pkg.mod.func.<locals>.ConfigError". Ray wraps a remote error as "RayTaskError(ValueError)". A
# line pasted into markdown may be wrapped in bold: "**RuntimeError: message**", maybe indented as prose,
# or begin with the backtick of an inline code span ("`RuntimeError: message"). An application that prints
# the class itself before the message (`f"{type(e)}: {e}"`, FreeCAD's report view) gives "<class 'pkg.Error'>: message"
# (Python 2's `<type 'exceptions.AttributeError'>` for a built-in one: its threads' report at interpreter shutdown).
_TYPE_PART = r"[A-Za-z_]\w*+(?:\.(?:[A-Za-z_]\w*+|<locals>))*+"  # (possessive: linear on a line of `a.a.a.`)
_INNER = r"(?:\((?P<inner>[A-Za-z_][\w.]*)\))?"
# The message runs to the line's end, or to the closing `**` of a bold line. (Greedy where it can be:
# the same match, but a lazy `.*?` tries the end at every character, 10x slower on a long message.)
# Blanks after it are allowed: a terminal's copy pads every line to its width.
_MESSAGE = r"(?(bold).*?|(?(tick)(?:.*?[^\s`])?|(?:.*\S)?))"
_BOLD = r"[ \t]*\*\*"
EXCEPTION_LINE = lazyregex.compile(  # (`Traceback:` heads a report's stack, as Django's does: no class is named so)
    rf"^(?P<tick>`)?(?P<bold>{_BOLD})?(?P<klass><class '|<type '(?:exceptions\.)?)?(?!Traceback:)(?P<type>{_TYPE_PART}{_INNER})(?(klass)'>)"
    rf"(?::[ \t]?(?P<message>{_MESSAGE}))?(?(bold)\*\*)(?(tick)`?)\s*$"
)


def wraps_remote(exception_line: regex.Match) -> bool:
    """Whether an EXCEPTION_LINE match is a wrapper that Ray prints over the remote error's frames:
    `ray.exceptions.RayTaskError(ValueError): ...`, or, where the remote error is one of Ray's own,
    its type alone with the remote task's name (`RayTaskError: ray::f() (pid=538, ip=10.0.0.3)`); or an error whose
    message ends with such a wrapper's text (`RuntimeError: Job 12 failed: ray::f() (pid=538, ip=10.0.0.3)`)."""
    said = exception_line["message"] or ""
    return exception_line["inner"] is not None or remote_task(said) or (
        said.endswith(")") and (at := said.rfind(" ray::")) > 0 and _REMOTE_TASK.fullmatch(said, at + 1) is not None)


# (its actor's id and repr may follow the address: `..., ip=10.0.0.3, actor_id=4a2f..., repr=<Worker ...>)`)
_REMOTE_TASK = lazyregex.compile(r"ray::\S+ \(pid=\d+, ip=[^,\s)]+(?:, [^()]*(?:\([^()]*\)[^()]*)*)?\)")


def remote_source_cut(text: str) -> bool:
    """A source line right under a remote error's wrapper line, its frame's line cut with the remote's first frames."""
    return text.startswith("    ") and bool(text.strip()) and not FRAME.match(text) and not CARETS.match(text)


def remote_task(text: str) -> bool:
    """Ray's line that names the remote task an error was raised in (`ray::Actor.method() (pid=538, ...)`):
    on its wrapper's exception line, or (Ray's own errors, such as RuntimeEnvSetupError) the line after it."""
    return text.startswith("ray::") and " (pid=" in text


# An exception line seen outside a traceback: only names that read as exceptions, so that
# "Note: ..." or "Loading: 50%" lines are not taken for errors; `Exception` itself is one, but not
# `Error` (a command line tool's "Error: ..." is no Python exception); nor is a class of a module of
# exceptions, whatever its name (`torch._dynamo.exc.Unsupported`, `requests.exceptions.Timeout`), and a
# class of a module named in lower case as an extension's may be (`nixl._bindings.nixlNotFoundError`).
EXCEPTION_SUFFIX = "(?:Error|Exception|Interrupt|Exit|Failure|Fault)"  # (how a class's name that reads as one ends)
EXCEPTION_NAME = rf"_*[A-Z]\w*{EXCEPTION_SUFFIX}"  # (a private class too: grpc's `_InactiveRpcError`)
# Modules whose exception class is named `error` (OpenCV's `cv2.error`, pygame's, lgpio's, the C modules of the standard library;
# pywin32's, and its `pywintypes.com_error` too):
# a module's `error` is any other module's word.
_ERROR_MODULES = r"(?:cv2|pygame|lgpio|socket|struct|zlib|select|re|sre_constants|getopt|curses|dbm|termios|resource|audioop|mmap|pywintypes)"
# A module of exceptions, maybe of one kind (`aiohttp.http_exceptions`, `telegram.error`, `torch._dynamo.exc`).
ERRORS_MODULE = r"(?:[a-z]\w*_)?(?:exc|exceptions|errors?)"
_LEVELS = r"(?:CRITICAL|ERROR|WARNING|WARN|INFO|DEBUG|TRACE|NOTE|Note|Hint|HINT)\b"
# A class of any name under two modules or more in lower case, with a message (`pyarrow.lib.ArrowInvalid: ...`,
# `triton.runtime.autotuner.OutOfResources: ...`); not a logger's name before a level.
# (Told where the name begins, the modules read once: looked for behind the class, a line of `a.a.a. ... Error: x`
# had them read back to its start from each dot.)
_DEEP_MODULES = rf"(?:(?=(?:[a-z_]\w*+\.){{2,}}+[A-Z]\w*+: (?!{_LEVELS})\S)(?P<deep>))?"
_DEEP_CLASS = r"(?(deep)[A-Z]\w*|(?!))"
# Well-known classes whose names lack the usual suffix, printed without their module: the standard library's
# (`StopIteration`, concurrent.futures' `BrokenProcessPool`), Triton's `OutOfResources`, dask's `KilledWorker`.
SUFFIXLESS = r"(?:StopIteration|StopAsyncIteration|Broken(?:Process|Thread)Pool|OutOfResources|KilledWorker|ResolutionImpossible)\b"
# HTTP clients' timeouts, named without the suffix, printed under their package (`httpx.ReadTimeout`, `litellm.Timeout`,
# `requests.ConnectTimeout`; the standard library's `socket.timeout` before 3.10). (Another module's `Timeout` is a
# setting's name: `config.Timeout: 30`.)
TIMEOUT_CLASS = (r"(?:(?<=\b(?:httpx|httpcore|requests|litellm|aiohttp|urllib3)\.)(?:Read|Connect|Pool|Write)?Timeout"
                 r"|(?<=\bsocket\.)timeout)(?=: \S)")  # (with a message: alone, the name is a page's heading)
# AWS Lambda's Python runtime names its own errors under `Runtime.` (`Runtime.ImportModuleError`, `Runtime.HandlerNotFound`).
LAMBDA_RUNTIME = r"(?<=\bRuntime\.)[A-Z][A-Za-z]*\b"
# Classes named by a status code, their message of one form: botocore makes one of each error code an AWS service
# returns (`ResourceLimitExceeded: An error occurred (Code) when calling the Operation operation: ...`), onnxruntime
# one of each of its statuses (`InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ...`, `Fail: ...`).
CODED_CLASS = r"[A-Z]\w*(?=: (?:An error occurred \(|\[ONNXRuntimeError\] : ))"
BARE_EXCEPTION_LINE = lazyregex.compile(
    rf"^(?P<tick>`)?(?P<bold>{_BOLD})?(?P<type>{_DEEP_MODULES}(?:(?:[A-Za-z_]\w*+|<locals>)\.)*+(?:{EXCEPTION_NAME}"
    rf"|Exception|{SUFFIXLESS}|{TIMEOUT_CLASS}|{LAMBDA_RUNTIME}|(?<=\.{ERRORS_MODULE}\.)[A-Z]\w*|{_DEEP_CLASS}|(?<=\.)[a-z]\w*{EXCEPTION_SUFFIX}"
    rf"|(?<=\b{_ERROR_MODULES}\.)error|(?<=\bpywintypes\.)com_error|{CODED_CLASS})"
    rf"{_INNER})"
    rf"(?::[ \t]?(?P<message>{_MESSAGE}))?(?(bold)\*\*)(?(tick)`?)\s*$"
)


_BRACKETED = lazyregex.compile(r"^\[(?P<type>[A-Za-z_][\w.]*)\]: (?P<message>\S.*)$"  # (or without the colon where the class
                            r"|^\[(?P<type>[A-Za-z_][\w.]*(?:Error|Exception))\] (?P<message>\S.*)$")  # reads as one: SkyPilot's)


def unbracketed(text: str) -> str | None:
    """An exception line whose class is in brackets (pdm's `[FileNotFoundError]: [Errno 2] ...`, SkyPilot's
    `[AssertionError] ...`) as Python prints it; else None."""
    m = _BRACKETED.match(text)
    line = f"{m['type']}: {m['message']}" if m is not None else ""
    return line if m is not None and BARE_EXCEPTION_LINE.match(line) else None


EXCEPTION_SUFFIXES = ("Error", "Exception", "Interrupt", "Exit", "Failure", "Fault")  # EXCEPTION_SUFFIX's
_NAME_OPENS = lazyregex.compile(r"[\w.]*+(?=:|\s*$)")  # (a name alone, or before a colon: its suffixes counted in Python)
_IN_STEP = lazyregex.compile(r"^(?P<name>[\w.]+)(?P<colons>(?:: )*)(?P<message>.*)")
MAX_IN_STEP = 8  # ranks whose writes of one line are read back as one (more interleave past reading)
_MAX_IN_STEP_NAME = 1024  # a class's name printed by MAX_IN_STEP ranks at most (each split is tried: longer ones cost)


def dedented(texts: list[str]) -> list[str]:
    """Lines without the indentation they all share (pytest's after its `E`, a traceback quoted in a message)."""
    indent = min((len(text) - len(text.lstrip(" ")) for text in texts if text.strip()), default=0)
    return [text[indent:] for text in texts]


def in_step_copies(text: str) -> str | None:
    """An exception line that processes (ranks) printed at the same time, piece by piece in step:
    CPython writes an uncaught exception's module, `.`, class name, `: ` and message one by one, so two
    ranks make `AssertionErrorAssertionError: : msgmsg`. The line they each printed; else None."""
    if ": : " not in text and not (text.rstrip().endswith(EXCEPTION_SUFFIXES) and _twice_named(text)):
        return None  # (looked at on every line read: this much costs a tenth of a microsecond)
    if (m := _IN_STEP.match(text)) is None or len(m["name"]) > _MAX_IN_STEP_NAME:
        return None
    counted = m["colons"].count(":")
    for copies in (counted,) if counted > 1 else range(2, MAX_IN_STEP + 1) if not counted else ():
        name, said = _name_once(m["name"], copies), m["message"].rstrip()
        # (the message said once where the other copies' came after the line's end: `KeyErrorKeyError: : 'ids'`)
        if (message := written_once(said, copies)) is None and counted == copies:
            message = said
        line = f"{name}: {message}" if message else name
        if name is not None and message is not None and BARE_EXCEPTION_LINE.match(line):
            return line
    return None


def _twice_named(text: str) -> bool:
    """Whether the line opens with a name alone (or before a colon) that ends in an exception's suffix and holds another:
    `AssertionErrorAssertionError`."""
    m = _NAME_OPENS.match(text)
    return m is not None and sum(m.group().count(suffix) for suffix in EXCEPTION_SUFFIXES) > 1


def written_once(text: str, copies: int) -> str | None:
    """What `text` says once, where it is that said `copies` times; else None."""
    size = len(text) // copies
    return text[:size] if text == text[:size] * copies else None


def _name_once(name: str, copies: int) -> str | None:
    """A class name written in step: its module's copies, the dots, its name's copies (or the name's alone)."""
    if (alone := written_once(name, copies)) is not None:
        return alone
    dots = "." * copies
    at = name.find(dots)
    while at > 0:
        module, leaf = written_once(name[:at], copies), written_once(name[at + copies:], copies)
        if module and leaf:
            return f"{module}.{leaf}"
        at = name.find(dots, at + 1)
    return None


# SQLAlchemy's text of the database driver's error it wraps (its DBAPIError's): the driver's class with its
# module, in parentheses, then that error's message (`(psycopg2.errors.UndefinedTable) relation "t" does not exist`).
# (The class named as exceptions are, or one of a module of errors: psycopg2's `errors.UndefinedTable`.)
WRAPPED_DRIVER_ERROR = lazyregex.compile(r"^\((?P<type>(?:[A-Za-z_]\w*+\.)++(?:[A-Z]\w*(?:Error|Exception)"
                                         r"|(?<=\.(?:errors|exceptions|err|exc)\.)[A-Z]\w*+))\) (?P<message>\S.*)$")

# An exception's repr, maybe quoted: `KeyError('tmax')`, `"TypeError(\"f() missing ...\")"`.
EXCEPTION_REPR = lazyregex.compile(rf"^(?P<q>[\"']?)(?P<type>(?:[A-Za-z_]\w*+\.)*+{EXCEPTION_NAME})\((?P<args>.*)\)(?P=q)$")


# The value under an error tracker's title (Sentry's issue page: the class alone, its message on the next line):
# words that begin at the margin, not a source or caret line of a frame that may follow.
_TITLE_VALUE = lazyregex.compile(r"^[^\s^~]")
# Classes often raised with no message (`assert x`): their line alone ends what they say.
_NO_MESSAGE_EXPECTED = ("Interrupt", "Exit", "StopIteration", "StopAsyncIteration", "AssertionError",
                        "NotImplementedError")


def titled(name_line: str, value: str) -> bool:
    """Whether `name_line` is an exception's class alone and `value` the message an error tracker shows
    below it as its title's value."""
    m = BARE_EXCEPTION_LINE.match(name_line)
    return (m is not None and m["message"] is None and not m["type"].endswith(_NO_MESSAGE_EXPECTED)
            and _TITLE_VALUE.match(value) is not None and FRAME_CUT.match(value) is None)


def repr_said(text: str) -> tuple[str, str] | None:
    """The exception whose repr is the whole of `text` (dask's report of a failed task: `Exception:
    "KeyError('tmax')"`): its type and its message as `str()` gives it; else None."""
    if (m := EXCEPTION_REPR.match(text)) is None or (said := args_said(m["type"], m["args"])) is None:
        return None
    return m["type"], said


def args_said(type_name: str, args_text: str) -> str | None:
    """The message `str()` gives an exception of the class `type_name` made with the arguments `args_text` (as its
    repr spells them); None where they are no literals."""
    try:
        # (Python before 3.7 wrote a trailing comma after a lone argument: `ValueError('x',)`)
        args = literal(f"({args_text.rstrip().removesuffix(',')},)") if args_text.strip() else ()
    except ValueError:
        return None
    if not isinstance(args, tuple):
        return None
    said = "" if not args else repr(args[0]) if len(args) == 1 and type_name.endswith("KeyError") else (
        str(args[0]) if len(args) == 1 else str(args))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(builtin := getattr(builtins, type_name, None), type) \
            and issubclass(builtin, OSError):
        said = f"[Errno {args[0]}] {args[1]}"  # (as an OSError's str() puts its errno and text)
    return said


def exception_in_words(text: str) -> tuple[str, str] | None:
    """An exception line a user's words hold: glued to them by a fullwidth colon (`运行报如下错误：RuntimeError:
    ...`), or after CJK words by an ASCII one or nothing, quoted in them (an inline code span, curly
    quotes), or behind a one-word label (`7b-model: torch.cuda.OutOfMemoryError: ...`, `[worker]: `, `actual
    error: `, `Error when loading model: `, a status and its detail: `UNAVAILABLE: Internal: `; not a level:
    `INFO: retrying after ValueError: ...` is none); or as TensorFlow 1 words it, `(see above for
    traceback)` between its type and its message; or in a cell of a table's row. The words before it and the
    exception line; else None.
    Its type must read as an exception's."""
    if text[:1] == "|" and text.rstrip()[-1:] == "|":  # a row of a table: a cell may hold it (Triton's models'
        cells = [cell.strip() for cell in text.strip().strip("|").split(" | ")]  # status: `| m | 1 | UNAVAILABLE: ...: X: ... |`)
        for column, cell in enumerate(cells):  # (a cell is no table of its own: a row of bars alone is none)
            if (in_cell := ("", cell) if _said(cell) else _in_words(cell)) is not None:
                return " | ".join([*cells[:column], *filter(None, [in_cell[0]])]), in_cell[1]
        return None
    return _in_words(text)


def _in_words(text: str) -> tuple[str, str] | None:
    """exception_in_words, outside a table's row."""
    labels: list[str] = []
    rest = text.lstrip(" \t")  # (behind a paste's indentation of the whole log too)
    while len(labels) < _MAX_LABELS and (label := _LABEL.match(rest)) is not None:
        rest = rest[label.end():]
        labels.append(label["label"])
        if _said(rest):
            return ": ".join(labels), rest
        if rest[:1] == "[" and (bracketed := unbracketed(rest)) is not None:
            return ": ".join(labels), bracketed
    if (bullet := _BULLET.match(text)) is not None and _said(rest := text[bullet.end():]):
        return "", rest  # (an item of a list of errors: ROS 2's launch `Caught multiple exceptions ...:`)
    if (grepped := _GREP_MARGIN.match(text)) is not None and _said(rest := text[grepped.end():]):
        return "", rest  # (a line grep found, its number glued in front: `grep -n`'s `123:RuntimeError: ...`)
    if _SEE_ABOVE in text and _said(said := text.replace(_SEE_ABOVE, ":", 1)):
        return "", said  # TensorFlow 1's session: `ResourceExhaustedError (see above for traceback): OOM ...`
    words, colon, rest = text.partition("\uff1a")
    if colon and words.strip() and BARE_EXCEPTION_LINE.match(rest := rest.strip()):
        return words.strip(), rest
    if not text.isascii() and (cjk := _CJK_COLON.search(text)) is not None and _said(rest := text[cjk.end():].strip()):
        return text[:cjk.start() + 1].strip(), rest  # (or an ASCII colon after CJK words: `报错: TypeError: ...`)
    if not text.isascii() and (cjk := _CJK_GLUED.search(text)) is not None and _said(rest := text[cjk.end():]):
        return text[:cjk.end()].strip(), rest  # (or nothing between: `报错ValueError: ...`)
    for quoted in _QUOTED.finditer(text) if "`" in text or "**" in text or "\u201c" in text or "\u201d" in text else ():
        mark = 2 if quoted.group()[:2] == "**" else 1
        if _said(inner := quoted.group()[mark:-mark].strip()):
            return text[:quoted.start()].strip(), inner
        if (held := repr_said(inner)) is not None and held[1]:  # (or its repr: `ValueError("...")`)
            return text[:quoted.start()].strip(), f"{held[0]}: {held[1]}"
    if (at := _introduced_at(text)) is not None and _said(rest := text[at:]) and not _LEVEL_WORD.search(text, 0, at):
        if (quote := text[at - 1]) in "\"'" and quote in rest:
            rest = rest[:rest.rfind(quote)]  # (quoted: to its closing quote)
        if (opened := _SPAN_OPENED.search(text, max(0, at - 40), at)) is not None:  # (in a code span the words opened)
            return text[:opened.start()].strip(), rest.removesuffix("`").rstrip()
        return text[:at].rstrip(" \"'"), rest  # (`Service start failed. ValueError: ...`, `but I got ValueError: ...`)
    if "] " in text and (bracketed := _BRACKETED_SAID.search(text)) is not None and _said(
            said := f"{bracketed['type']}: {bracketed['message']}") and not _LEVEL_WORD.search(text, 0, bracketed.start()):
        return text[:bracketed.start()].rstrip(" :"), said  # (after words: `Failure reason: ...: [AssertionError] ...`)
    if "=" in text and (fields := _FIELDS_SAID.search(text)) is not None and _INTRODUCED.search(
            text, max(0, fields.start() - 40), fields.start()) is not None and not _LEVEL_WORD.search(text, 0, fields.start()):
        return text[:fields.start()].rstrip(), f"{fields['type']}: {text[fields.end():].rstrip()}"
    if "\uff1a" in text and (typed := _FULLWIDTH_TYPED.search(text)) is not None:  # (`RuntimeError：E19999: ...`, typed on a CJK keyboard)
        message = typed["message"].rstrip(" \"'")
        return text[:typed.start()].strip(" \t\"'"), f"{typed['type']}: {message}"
    if text[-1:] == ")" and (tail := _TRAILING_REPR.search(text, max(0, len(text) - _REPR_TAIL))) is not None and (
            held := repr_said(tail["repr"])) is not None and held[1] and not _LEVEL_WORD.search(text, 0, tail.start()):
        return text[:tail.start()].rstrip(" :"), f"{held[0]}: {held[1]}"  # (a log's `{exc!r}` after its words:
    return None  # `Run 0jbbwa4t errored: IndexError('list index out of range')`)


def exception_in_member(text: str) -> tuple[str, str, bool] | None:
    """An exception line that a JSON member's string holds (or a dict's, printed; or a logfmt pair's quoted value): an
    HTTP error's body (a proxy's after OpenAI's: `{"error": {"message": "litellm.BadRequestError: ..."}}`, FastAPI's `{"detail": "..."}`),
    compact or pretty-printed, its text to the string's closing quote (escapes as the body spells them); or the
    message of such a member after the class another member names. The text before the members, the exception line
    and whether the string closes on the line; else None."""
    for start, begins, quote in _members(text):
        end = _STRING_BODY[quote].match(text, begins).end()
        said, closed, before = text[begins:end], end < len(text), text[:start].rstrip(" {,")
        if _said(said) or (closed and said.endswith(": ") and BARE_EXCEPTION_LINE.match(said) is not None):
            return before, said, closed  # (or the whole string `Type: `: an error whose text is empty, as torchelastic's
            # error file formats it, `"message": "RendezvousTimeoutError: "`)
        words, named, rest = said.partition(_NAMED)  # (or after the words of a server's report: Triton's
        if named and _said(rest):  # `in ensemble 'x', Failed to process the request(s) ..., message: ValueError: ...`)
            return f"{before} {words}".strip(), rest, closed
    if (typed := _TYPE_MEMBER.search(text)) is not None:  # (or its class in a member of its own beside the message:
        for member in _MEMBER.finditer(text):  # `{"error": {"name": "RuntimeError", "message": "CUDA out of ..."}}`)
            end = _STRING_BODY[member["quote"]].match(text, member.end()).end()
            said = f"{typed['type']}: {text[member.end():end]}"
            if _said(said):
                return text[:min(typed.start(), member.start())].rstrip(" {,"), said, end < len(text)
    return None


# A member that may hold an error's text, in JSON or a Python dict's repr (a client printing `response.json()`):
# its key and the value's opening quote (in a repr, a double one where the text holds an apostrophe).
_MEMBER = lazyregex.compile(r"""(?P<key>["'])(?i:message|detail|error|msg|reason|description|error_message)(?P=key) ?: ?"""
                            r"""(?P<quote>["'])(?=[A-Za-z_])""")
# ... or a pair of logfmt, as Go's services and Python's key=value renderers write it (`error="..."`), or SageMaker's
# report of a failed job (`ErrorMessage "..."`): the key read back from each quoted value's opening
_PAIR_KEY = lazyregex.compile(r"""(?:(?<![\w.-])(?i:error|err|exception|exc|message|msg|reason|error_message)=|\bErrorMessage )\Z""")
_PAIR_OPENINGS = lazyregex.compile(r"""(?:=|ErrorMessage )(["'])(?=[A-Za-z_])""")


def _members(text: str) -> Iterator[tuple[int, int, str]]:
    """Where each string that may hold an error's text begins: (its member's start, its text's start, its quote)."""
    for member in _MEMBER.finditer(text):
        yield member.start(), member.end(), member["quote"]
    if "=" in text or "ErrorMessage" in text:
        for opening in _PAIR_OPENINGS.finditer(text):
            key = _PAIR_KEY.search(text, max(0, opening.start() - 16), opening.end() - 1)
            if key is not None:
                yield key.start(), opening.end(), opening[1]


_NAMED = ", message: "
_TYPE_MEMBER = lazyregex.compile(r"""(?P<quote>["'])(?i:name|type|error_?type|exc_?type|exception(?:_?type)?)(?P=quote) ?: ?"""
                                 r"(?P=quote)(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))(?P=quote)")
_STRING_BODY = {quote: lazyregex.compile(rf"(?:[^\\{quote}]|\\.)*+") for quote in "'\""}  # a string's text, to its closing quote

# A class in brackets and its message, after a colon that ends a user's words (SkyPilot's `[AssertionError] ...`)
_BRACKETED_SAID = lazyregex.compile(r"(?<=: )\[(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))\] (?P<message>\S.*)$")
# An exception's repr that ends a line, after a colon (`reason: ValueError('...')`), within the line's last characters
_TRAILING_REPR = lazyregex.compile(r"(?<=: )(?P<repr>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception)\((?:'|\"|-?\d).*\))\s*$")
_REPR_TAIL = 4096


def _introduced_at(text: str) -> int | None:
    """Where the first exception-like type with its colon (`...Error: `) in a user's sentence begins, if
    words before it introduce it (see _INTRODUCED), maybe through a code span they open, the line's channel head
    inside it (``it returns `[rank7]: torch.distributed.DistBackendError: ...``, the span closed lines below); else
    None. (Found by its colon: a regex that looks for the words at every character costs each line read.)"""
    colon = min((at for said in _NAMES_SAID if (at := text.find(said)) >= 0), default=-1)
    if colon < 0:
        return None
    start = colon
    while start and (text[start - 1].isalnum() or text[start - 1] in "_."):
        start -= 1
    opened = _SPAN_OPENED.search(text, max(0, start - 40), start)
    words = opened.start() + 1 if opened is not None else start
    return start if _INTRODUCED.search(text, max(0, words - 40), words) is not None else None


_SPAN_OPENED = lazyregex.compile(r" +`(?:\[[\w.:-]+\]: ?)?\Z", regex.REVERSE)  # (a code span opened after words, a channel's head in it;
# searched from where it ends backwards: forwards, a run of blanks is tried from each of them)


def _said(text: str) -> bool:
    """An exception line with a message: a type alone in words (`raises a \u201cKeyError\u201d`, `type: KeyError`)
    names the class, it reports no error."""
    m = BARE_EXCEPTION_LINE.match(text)
    return m is not None and bool(m["message"])


# (a word, or a bracketed one; or a few words that end in the word error: `actual error: `, `Full traceback: `, or in
# the class of an error whose text names its class again: `Caught a RateLimitError: litellm.RateLimitError: ...`;
# or say that one occurred: pre-commit's `An unexpected error has occurred: `; or a file and line: pytest's
# `--tb=line` (`/x/test_a.py:2: ValueError: ...`), a C++ check's place (`/src/llm_chat.cc:163: InternalError: ...`))
_LABEL = lazyregex.compile(rf"^(?:[-*+] )?(?P<label>(?!{_LEVELS})[\w.-]+|\[(?!{_LEVELS})[\w.-]+\]"
                           r"|(?:[A-Za-z]:)?(?:[^\s:]*[/\\])?[\w.-]+?\.[A-Za-z]\w{0,3}:\d+"  # (lazy: greedy, a long dotted name took minutes)
                           r"|(?:[A-Za-z]+ ){1,2}(?:[Ee]rror|[Ee]xception|[Tt]raceback|[A-Z]\w*(?:Error|Exception))"
                           r"|(?:Error|Failed) (?:[\w.-]+ ){0,3}[\w.-]+"
                           r"|(?i:(?:an? )?(?:unexpected |unhandled |internal )?(?:error|exception)(?: has| was)? occurred)): (?=\S)")
_MAX_LABELS = 3  # labels one behind another (a status and its detail: Triton's `UNAVAILABLE: Internal: `)
_SEE_ABOVE = " (see above for traceback):"
# (or a number, a heading's marks, an arrow: a chain of calls a user wrote out)
_BULLET = lazyregex.compile(r"[ \t]*(?:[-*+]|\d{1,2}[.)]|#{1,6}|->|\u2192) ")
_GREP_MARGIN = lazyregex.compile(r"(?:[^\s:]+:)?\d{1,9}[:-](?=[A-Za-z_])")  # grep's `-n` (and `-H`'s file) before a line it found
_CJK = r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]"  # CJK punctuation, kana, ideographs, hangul, fullwidth forms
# Verbs a user says an error with (`but I got ValueError: ...`, `I still get RuntimeError: ...`).
INTRODUCING_VERBS = r"(?:[Gg][eo]t|gets|getting|hit|encounter(?:ed)?|receive[ds]?|returns?|returned|throws?|threw|(?:[Uu]n)?caught|Caught|[Uu]nhandled)"
# What introduces an error in a user's sentence: the end of one before it (a word's last letter, then `.` or
# `!`), words that name it (`I am getting this error: `, `with the error message: `, `The error was: ` as Ansible
# reports a task's, `the following error "`; at a line's start, a few words ending in `error: ` are _LABEL's, and
# more words before `error: ` alone say nothing), a verb that says it (`got `, `got a `, `caught an `; an excepthook's `Uncaught `), or the word Exception alone before
# it; the first exception-like type after it.
# Not in a record of a lower level (`INFO: done. ValueError: ...` reports none).
_NAMES_SAID = tuple(f"{suffix}: " for suffix in EXCEPTION_SUFFIXES)  # (what such a type and its colon hold)
_INTRODUCED = lazyregex.compile(rf"(?:(?:[a-z)][.!]|\b(?i:error|exception) (?:message|was|is):"
                                rf"|\b(?i:this|that|the|same|following|an?) (?i:error|exception):|\b{INTRODUCING_VERBS}(?: an?)?|^Exception"
                                r"|\bwith (?:an? )?(?i:error|exception)) "
                                r"|\b(?i:error|exception):? [\"'])\Z", regex.REVERSE)  # (it ends where the words end: searched
# from there backwards, one place is tried where a forward search tries forty)
# An exception whose text names its class and fields before its reason (SGLang's `KVTransferError(bootstrap_room=12):
# Failed to send kv chunk ...`): the class and the reason are read.
_FIELDS_SAID = lazyregex.compile(rf"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*+\.)*+{EXCEPTION_NAME})\(\w+=[^()\n]*\): (?=\S)")
# An exception's type with a fullwidth colon after it, then its message.
_FULLWIDTH_TYPED = lazyregex.compile(rf"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*+\.)*+{EXCEPTION_NAME})\uff1a *(?P<message>\S.*)$")
_LEVEL_WORD = lazyregex.compile(r"\b(?:INFO|DEBUG|WARNING|WARN|TRACE|NOTE|Note|Hint|HINT)\b")
_CJK_COLON = lazyregex.compile(_CJK + ": ")
_CJK_END = lazyregex.compile(_CJK + r"\Z")
_CJK_GLUED = lazyregex.compile(_CJK + r"(?=[A-Za-z_][\w.]*: )")
_QUOTED = lazyregex.compile(r"`[^`\n]+`|[\u201c\u201d][^\u201c\u201d\n]+[\u201c\u201d]"  # (curly quotes either way round)
                            r"|\*\*[^*\n]+\*\*")  # (or markdown's bold: `occur **ModuleNotFoundError: ...**`)


# `python -m module` when the module's spec cannot be found (CPython's runpy, through sys.exit): the
# interpreter, then the error that finding it raised in parentheses, maybe a hint after it.
_RUNPY_ERROR = lazyregex.compile(
    r"^(?P<words>.*?: Error while finding module specification for (?:'[^']*'|\"[^\"]*\")) "
    r"\((?P<error>[A-Za-z_][\w.]*: .*)\)(?:\. Try using .*)?\s*$")


def runpy_error(text: str) -> tuple[str, str] | None:
    """runpy's report that `python -m` found no module to run: (its words, the exception line of the
    error it names); else None."""
    m = _RUNPY_ERROR.match(text)
    return (m["words"], m["error"]) if m is not None and EXCEPTION_LINE.match(m["error"]) else None


def call_order(calls: list[tuple[str, str]]) -> tuple[bool, bool]:
    """Of frames listed as (function, source line): whether some frame's source calls the function of the
    frame listed after it (Python's order, outermost first), and whether some calls the one listed
    before it (newest first)."""
    told = _told_calls(calls)
    return any(_calls_inwards(told)), any(_calls_outwards(told))


def listed_newest_first(calls: list[tuple[str, str]]) -> bool:
    """Whether frames a copy lists without their header, as (function, source line), are newest first: no source
    calls the function listed after it, and most call the one listed before it (one such call alone may be a
    wrapper's of a function it was given, `return func(*args, **kwargs)`, which reads the same either way)."""
    told = _told_calls(calls)
    return not any(_calls_inwards(told)) and sum(_calls_outwards(told)) * 2 > len(calls) - 1


def _calls_inwards(calls: list[tuple[str, str]]) -> Iterator[bool]:
    """For each frame and the one listed after it: whether the first's source calls the second's function."""
    return (f"{inner}(" in source for (_, source), (inner, _) in zip(calls, calls[1:]) if inner)


def _calls_outwards(calls: list[tuple[str, str]]) -> Iterator[bool]:
    """For each frame and the one listed after it: whether the second's source calls the first's function."""
    return (f"{inner}(" in source for (inner, _), (_, source) in zip(calls, calls[1:]) if inner)


def _told_calls(calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls with a lambda's source left out: its frame shows the line the lambda is written on, inside the
    call it is handed to (`return self._apply(lambda t: t.cuda(device))` under `_apply`), which reads either way."""
    return [(function, "" if function == "<lambda>" else source) for function, source in calls]


def frame_after_words(text: str) -> tuple[str, str] | None:
    """A frame line glued to a user's words by a colon (`the error log is:File "x.py", line 3, in f`; and a quote the
    user opened around the paste, `i got an error:'File "x.py", ...`, or that quote alone after a blank, `here I get
    "  File "x.py", ...`), by
    a markdown code fence (`not related```File "x.py", ...`) or by nothing after CJK words (`一直出现File
    "x.py", ...`): the words (without the glue) and the frame line; else None."""
    at = text.find('File "')
    words = text[:at].rstrip()
    glue = 3 if words.endswith("```") else 1 if words[-1:] in (":", "\uff1a") or (
        words[-2:] in (" '", ' "') and words[-3:-2].isalpha()) else 2 if (  # (a word's, not a list's `, '`)
        words[-2:] in (":'", ':"')) else 0 if _CJK_END.search(words) else None
    if at <= 0 or glue is None or not words[:len(words) - glue].strip() or FRAME.match(text[at:]) is None:
        return None
    return words[:len(words) - glue].rstrip(), text[at:]


def introduces_output(message: str) -> bool:
    """Whether an exception's message, by its first line, introduces text that follows it, such as the
    output of a child process (`Error raised in subprocess:` then the child's stderr), which may hold
    the child's own traceback: the error behind this one. A message that begins with a line break
    introduces it by its first line of text (torch's `ProcessRaisedException: ` then a blank line and
    `-- Process 0 terminated with the following error:` over the child's traceback)."""
    return next((line for line in message.split("\n") if line.strip()), "").rstrip().endswith(":")


# How many lines of such output (warnings, say) may come before the traceback it holds.
OUTPUT_LEAD = 8


def exception_line_at_source(text: str) -> bool:
    """Whether `text`, on the line right after a frame line that lost its indentation (where its source
    line goes, which lost its indentation too), is rather the exception's line: a name that reads as
    an exception's, or a class's name and a message. A call such as `run(config)` has the form of a
    wrapped type with no message, an annotated assignment (`self.comm: Comm = ...`) of a type and one."""
    m = EXCEPTION_LINE.match(text)
    if m is None:
        return False
    named_class = m["type"].split("(", 1)[0].rsplit(".", 1)[-1][:1].isupper()
    return (m["message"] is not None and named_class) or BARE_EXCEPTION_LINE.match(text) is not None


def exception_line_at_indent(text: str, indent: int) -> bool:
    """Whether `text` is an exception line `indent` (> 0) blanks in, named as exceptions are named (a
    source line such as `raise` or `x: int = 1` at that indentation is none): a traceback re-indented
    by hand puts it as far in as its frames."""
    return (indent > 0 and text[:indent].isspace() and text[indent:indent + 1] not in ("", " ", "\t")
            and BARE_EXCEPTION_LINE.match(text[indent:]) is not None)


# concurrent.futures.process._RemoteTraceback quotes the worker's traceback between '"""' lines.
REMOTE_QUOTE = '"""'

# pybind11's text of a Python error that reached C++ (`error_already_set::what()`, which Triton's Python
# backend reports): the exception line, a blank line, `At:`, then the stack innermost first, from the
# frame that raised out to the outermost caller, one `  path(line): function` line a frame.
PYBIND_AT = "At:"
# pybind11's message of arguments a function could not take: its signatures, then a paragraph of the call's own
# (`f(): incompatible function arguments. The following argument types are supported:`, `    1. f(x: int)`, a blank,
# `Invoked with: 'a'`).
PYBIND_SUPPORTED = "argument types are supported:"
_PYBIND_INVOKED = "Invoked with:"


def pybind_call_below(said: str, below: str) -> bool:
    """Whether `below`, after a blank line under the error `said` (its exception line), is the call's own paragraph
    of pybind11's message of arguments it could not take."""
    return below.startswith(_PYBIND_INVOKED) and PYBIND_SUPPORTED in said
PYBIND_FRAME = lazyregex.compile(r"^\s+(?P<path>\S[^\n]*?)\((?P<lineno>\d+)\): (?P<function>[\w<>.]+)\s*$")

# pip's line under a build backend's output, which it indents (its traceback's message ends there).
PIP_OUTPUT_END = "[end of output]"


# Lines that open a new log record: they end a multi-line exception message. Besides dated and
# levelled records: multiprocessing's "Process Process-7:" before a child's traceback, a launcher's
# "srun: error: ..." line, a shell prompt ("root@host:/dir# ") and logrus levels ("FATA[0295] "); a time without
# its date before a level, maybe a logger's name between (`19:57:08,567 graphrag.index INFO `: `datefmt="%H:%M:%S"`).
LOG_RECORD_START = lazyregex.compile(
    r"^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d{4}-\d\d-\d\d|\d\d-\d\d \d\d:\d\d:\d\d"
    r"|\d\d:\d\d:\d\d(?:[.,]\d+)? (?:[A-Za-z_][\w.-]* )?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b"
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b[ :]|\[?[IWEF]\d{3,4} \d\d:\d\d"  # c10 logs: [W914 08:15:03
    r"|Process [\w-]+:$|[\w.-]+: error: |[\w.-]+@[\w.-]+:\S*[#$] |(?:INFO|WARN|ERRO|FATA|DEBU)\[\d+\] )"
)

# argparse: ArgumentParser.print_usage then ArgumentParser.error -> "prog: error: message".
ARGPARSE_USAGE = lazyregex.compile(r"^usage: \S+")
ARGPARSE_ERROR = lazyregex.compile(r"^(?P<prog>\S+(?: \S+)?): error: (?P<message>.*)$")  # prog may be "sglang serve"

# Exception-group box drawing: every line of a group starts with "|" or "+" after its indent.
GROUP_BOX = lazyregex.compile(r"^\s*[|+]")
# The bars of a group's box in front of a line of one of its exceptions (`    | `), not a markdown table's row
IN_GROUP_BOX = lazyregex.compile(r"(?: {4})+\| (?=.*[^|\s]\s*$)")
GROUP_SEPARATOR = lazyregex.compile(r"^\s*\+?-?\+-+ (?:(?P<index>\d+)|\.\.\.) -+\s*$|^\s*\+-+\s*$")


# A caret line alone (3.11+): under a remote error's first frame, where Ray cut that frame's own lines.
CARETS = lazyregex.compile(r"^\s*[~^]+\s*$")  # (at the line start in a paste that lost its indentation)


# A lone lower-case name among frames: what a paste's elision left of a frame line (`  ...`, then
# `get_return_value`), never an exception's line, whose class name is capitalised.
_FRAME_REMNANT = lazyregex.compile(r"^[a-z_][a-z0-9_]*+\s*$")


def frame_remnant(text: str) -> bool:
    """Whether `text` is a function's name alone where frames are (see _FRAME_REMNANT)."""
    return _FRAME_REMNANT.match(text) is not None


_STRING = lazyregex.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_BRACKETS = str.maketrans("", "", "()[]{}")


def unclosed(code: str) -> bool:
    """Whether source code opens more brackets than it closes (strings' own aside): a statement that goes on."""
    code = _STRING.sub("", code)
    closed = sum(map(code.count, ")]}"))
    return len(code) - len(code.translate(_BRACKETS)) > 2 * closed


# A terminal's copy pads each line to its width; where the copy lost a line break, the exception line is joined to the
# source line above it after the blanks (`    return table[key]` + blanks + `KeyError: ...`).
# (the source read in one pass: up to the first run of eight blanks or more, as a lazy `.*?` found it trying each)
_PADDED_JOIN = lazyregex.compile(r"^(?P<source>[ \t]+\S(?:[^ \t]|[ \t]{1,7}+(?=\S))*+)[ \t]{8,}+(?P<said>\S.*)$")


def padded_exception(text: str) -> tuple[str, str] | None:
    """The source line and the exception line a terminal's padding joined; None where the text is no such pair."""
    m = _PADDED_JOIN.match(text) if "        " in text.lstrip() else None
    return (m["source"], m["said"]) if m is not None and BARE_EXCEPTION_LINE.match(m["said"]) else None


# What a user puts for lines left out: dots or ellipses (Chinese text's is two: `……`), maybe in brackets; or a
# rule of dashes (no traceback prints one between its frames).
# (a user's note between two of them, maybe as a comment: `# ... (20 frames left out) ...`)
_ELISION = lazyregex.compile(r"(?:(?:#+|//) ?)?(?:[\[(]?(?:\.{3,}|\u2026+)[\])]?(?: .*? (?:\.{3,}|\u2026+))?|-{3,})")


def is_elision(text: str) -> bool:
    return _ELISION.fullmatch(text.strip()) is not None


def is_frame_detail(text: str) -> bool:
    """Source lines, caret lines (3.11+), `...` elisions and recursion notes under frames."""
    return text.startswith("    ") or bool(REPEATED.match(text)) or is_elision(text)
