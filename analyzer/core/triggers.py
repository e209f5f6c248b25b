"""The raw lines of a log that can matter, found in bulk with one Hyperscan pass over the bytes.

While no error record is open, a line changes nothing unless it can start one (what
`TracebackAssembler._start` looks for: a traceback header, a frame, an exception line, argparse's
usage, a notice keyword) or carries prefix state that the normaliser cannot rebuild from the
starts of lines alone (a per-line channel, a JSON record). `TriggerFinder.scan` reports such
lines in a buffer of whole lines, so that the stretches in between can be counted instead of
parsed. Of the lines skipped, later lines may inherit the stream and time of the last prefixed
ones: `first_setter` tells where in a buffer such lines begin (looked for when asked: most buffers
never are), and `may_set_stream` and `may_set_time` which lines may be such.

Every pattern is a superset of what it stands for: a line reported needlessly costs a little
time, a line missed would change the result. (Two, forms of the logged error, are confirmed in Python: their
exact forms would slow the whole pass down.) Keep them in step with `grammar.py`, `prefixes.py`,
`normalize.py`, `assemble.py` and `notices.py`; tests/test_fastpath.py compares both paths.
Digits in prefixes are taken to be ASCII.

Prefixes learned while reading (`infer_prefix.py`) are prefix state too: the finder is built again
with the learned families as `extra` patterns, so that every line holding one is read.

Without Hyperscan (a platform it has no wheel for) `available()` is False and callers read every
line the ordinary way.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from analyzer.core import hydra
from analyzer.core.cpython_messages import KEYWORDS as CPYTHON_KEYWORDS
from analyzer.core.grammar import (
    ERRORS_MODULE,
    EXCEPTION_SUFFIX,
    HEADER_TEXT,
    INTRODUCING_VERBS,
    SUFFIXLESS,
    UNRAISABLE,
)
from analyzer.core.prefixes import parse_timestamp
from analyzer.core.yearless import Calendar

hyperscan: Any  # (imported by name: a type checker that cannot find it, as where a wheel is compiled, sees no redefinition)
try:
    hyperscan = importlib.import_module("hyperscan")
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None

__all__ = ["HEAD_AT", "HEADS", "Compile", "Setter", "TriggerFinder", "available", "compile_database", "body_may_set_stream", "body_may_set_time",
           "head_group", "head_sets", "may_set_stream", "may_set_time"]

# Where the text of a line (after its prefixes) may begin: at a line start or after the end of a
# prefix, so not after a name character, nor after a letter and a space as in prose
# (`after ConnectionResetError: ...`, `token usage: `), though a container prefix ends in `F `,
# `P ` or `Z `.
_OPENS_TEXT = rb"(?:^|[^A-Za-z0-9_. ]|(?:^|[^A-EG-OQ-Ya-z]) )"
# How a paste wraps a line (the normaliser's PASTED: line numbers, a tab, a web viewer's cell, a markdown blockquote;
# and a code fence glued to the text, see normalize._unfenced) in
# front of what it begins with.
# (numbered: a superset; markdown's emphasis and a terminal UI's box, which the normaliser reads through too)
_NUMBERED_LEAD = rb"[ \d]{5}\d+\t|\d+(?:\.\d+)?s(?: \| \d+ \| |\t\d+\t)|\t|\xc2\xa0 \| |`+"
_MARKUP_LEAD = rb"\*\*|\*?_+|\xe2\x94\x82 "
_PASTE_LEAD = rb"(?:" + _NUMBERED_LEAD + rb"|" + _MARKUP_LEAD + rb")"
_PASTED = _PASTE_LEAD + rb"?(?:> )*"


def _pasted_apart(text: bytes) -> tuple[bytes, bytes]:
    """A line that begins (or is redrawn from a `\r`) with `text`, maybe behind a paste's lead: as two patterns, one for
    the numbered leads and one for markup's: as one, Hyperscan spent a fifth of its pass on it (`pass_cost.py`)."""
    return (rb"(?:^|\r)(?:" + _NUMBERED_LEAD + rb")?(?:> )*" + text,
            rb"(?:^|\r)(?:" + _MARKUP_LEAD + rb")(?:> )*" + text)
# Lines that can start an error record. (A JSON record is read whole anyway: see _STATE.)
_STARTS = (
    rb"Traceback \(most recent call last\)",  # HEADER, GROUP_HEADER and IPython's header
    rb"Exception has occurred: ",  # VS Code's debugger (vscode.HEADER)
    rb"Exception Type:",  # a report's field (fieldreport.opens)
    rb" \(see above for traceback\): ",  # TensorFlow 1's session (grammar.exception_in_words)
    rb"^File (?:[^\s\"\n][^\n]*:\d+\]?,? in |<command-\d+>, line )",  # an IPython frame a copy begins with (ipython.starts_cut)
    rb"\.py[cx]?:\d+, in ",  # ... where the copy lost the word File (a superset: anchored, it costs more)
    rb"File \[?[^\s\"\]]+\.py[cx]?:\d+\]?[ \t]*\r?$",  # ... IPython 8's frame of a module's own code (no function; its place in a link's brackets)
    rb"\.py[cx]? in (?:<|\(\)|[^\s(]+(?:\(|[ \t]*\r?$))", rb"<ipython-input-",  # IPython 7's frame (ipython.starts_cut)
    rb"\[\d+\]\([^)\s]*\.py[cx]?:\d+\)",  # a numbered line VS Code linked to its file (ipython.starts_cut; a superset:
    # its indent or arrow before it, anchored at the line's start, cost a container log's pass a quarter of its time)
    rb"\.py[cx]?\]\([^)\s]*\) in ",  # ... its path a link, as Colab shows it (`[/x/y.py](https://localhost:8080/#) in f`)
    rb"\.py[cx]?:\d+\]\([^)\s]*\),? in ",  # ... IPython 8's frame, its place a link, as JupyterLab shows it
    # Rich's box drawn in ASCII, a paste begun inside it (at a frame's current line or its place: richtb.starts_cut;
    # the place as any row's end, a bar after blanks: `.py:` is on every line of some logs, a costly factor)
    rb"^\| > +[0-9]", rb"[^\s|] +\|[ \t]*\r?$",
    rb'File "', rb"File \xe2\x80\x9c", rb"File [^\"\n]*, line \d", rb'", line \d',  # FRAME (with curly quotes or unquoted: normalize; also cut at its start, its first quote the path's end, or only its word File: grammar.frame_cut_at_start, behind any prefix or a redraw's `\r`)
    # BARE_EXCEPTION_LINE: a type name opens the text, which ends after it (maybe padded) or goes on after a colon.
    # (Blanks between a wrapped type's `)` and the line's end cost this pattern six times its time: not looked for.)
    _OPENS_TEXT + rb"(?:[A-Za-z_][^\s:]*)?" + EXCEPTION_SUFFIX.encode() + rb"[ \t]*[:\r\n]",
    _OPENS_TEXT + rb"[A-Za-z_][^\s:]*\([A-Za-z_][\w.]*\)[:\r\n]",  # a wrapped type: RayTaskError(ValueError)
    # ... and one quoted whole, without a message (`[RuntimeError]`, `" KeyError"`: assemble._quoted_whole)
    rb"[\"'\[] ?(?:[A-Za-z_][^\s:\"'\]]*)?" + EXCEPTION_SUFFIX.encode() + rb"[ \t]*[\"'\]]+[ \t]*\r?$",
    _OPENS_TEXT + rb"(?:[A-Za-z_][^\s:`*]*)?" + EXCEPTION_SUFFIX.encode() + rb"[`*]+[ \t]*\r?$",  # ... or closed by markup
    # ... and these three behind oslo.log's level and logger name (prefixes.OSLO): after a letter and a blank as in prose
    rb"(?:CRITICAL|ERROR|TRACE|WARNING|INFO|DEBUG|AUDIT) [a-z_][\w.-]* (?:(?:[A-Za-z_][^\s:]*)?" + EXCEPTION_SUFFIX.encode()
    + rb"[ \t]*[:\r\n]|[A-Za-z_][^\s:]*\([A-Za-z_][\w.]*\)[:\r\n]|usage: )",
    rb"raise [^\n]*(?:Error|Exception): ",  # an exception line glued to its raise statement (collapsed.raise_glued)
    # a type's name glued to the end of another process's text right after a name's character (`...rank 12ValueError`,
    # shredded.loose_type; after other characters the patterns above find it)
    rb"[A-Za-z0-9_][A-Z][A-Za-z0-9_]*(?:Error|Exception)[ \t]*\r?$",
    rb"(?:ERROR|CRITICAL|FATAL) (?:[A-Za-z_][\w.:]*)?(?:Error|Exception|Runtime\.[A-Z]\w*)(?:\([\w.]+\))?: ",  # a level word
    # and one blank before an error (notices.logged_error), which the patterns above do not take after a letter
    rb"(?:Error|Exception) in (?:line \d+ of |file )",  # Snakemake's error and its place (snakemake.opens)
    rb"(?:" + INTRODUCING_VERBS.encode() + rb"|[Ee]xception|[Ee]rror) (?:an? )?[A-Za-z_][\w.]*(?:Error|Exception): ",  # ... to a user's words (grammar.exception_in_words)
    rb"\.(?:(?:com_)?error|timeout)[ \t]*[:\r\n]",  # a module's `error` class (grammar._ERROR_MODULES: a superset), socket.timeout
    rb"\." + ERRORS_MODULE.encode() + rb"\.[A-Z]\w*[ \t]*[:\r\n]",  # a class of a module of exceptions: torch._dynamo.exc.Unsupported
    SUFFIXLESS.encode() + rb"[ \t]*[:\r\n]",  # a well-known class without the usual suffix
    rb"Runtime\.[A-Z][A-Za-z]*[ \t]*[:\r\n]", rb'"(?:errorMessage|errorType|stackTrace)"',  # AWS Lambda's (grammar, awslambda.opens)
    rb"[a-z0-9_]\.[A-Z]",  # a class under modules in lower case (grammar._DEEP_CLASS: a superset; its colon after a
    # name of any length would cost Hyperscan more than all the other patterns)
    rb"(?:Error|Exception)\((?:['\"\d]|\)\s*$)", rb"<(?:class|type) '[\w.]*(?:Error|Exception)'>",
    rb"(?:Error|Exception)\): ",  # ... a type in parentheses (notices._PARENTHESISED)
    rb"(?:Error|Exception)\(\w+=",  # ... a type with its fields, in a user's words (grammar._FIELDS_SAID)
    rb"(?:Error|Exception)[\"']",  # ... a member naming it (grammar._TYPE_MEMBER: a superset; from its key on, a tenth of the pass)
    rb"^\[[A-Za-z_][\w.]*(?:Error|Exception)\]: ", rb"(?:Error|Exception)\] \S",  # a class in brackets (grammar.unbracketed)
    rb"(?:Error|Exception|\.(?:errors|exceptions|err|exc)\.[A-Z]\w*)\) \S",  # grammar.WRAPPED_DRIVER_ERROR (SQLAlchemy's words)
    _OPENS_TEXT + rb"usage: ",  # ARGPARSE_USAGE
    rb"Fatal Python error: |Windows fatal exception: |Timeout \(\d+:\d\d:\d\d|terminate called after throwing|Unhandled exception: \w+\. what\(\)|libc\+\+abi: terminating|\*\*\* Terminating app due to uncaught exception|CUDA error: |Failed: Cuda error |\] Assertion `|: Device-side assertion `|Caught signal [0-9]+ \(",  # native.starts
    rb"(?:^|\s)E {2,}(?:assert |(?:_pytest\.outcomes\.)?Failed: )",  # pytest_report.starts: a failed assert as pytest
    # explains it, pytest.fail()'s outcome
    rb"(?:^|\s)E[ \t]+(?:[A-Za-z_][^\s:]*)?" + EXCEPTION_SUFFIX.encode() + rb"[ \t]*[:\r\n]",  # ... an exception line
    # after its E and one blank (the pattern above with a letter and a blank before the type does not take it)
    rb"[^\s:]+\.py::\S+ - ", rb"ERROR [^\s:]+\.py - ",  # pytest_report.summary
    rb"\.py[cx]?:\d+: in \S",  # pytest_report.starts_stack (anywhere: behind a prefix it may teach, infer_prefix)
    rb"^<class '[\w.]+'>[ \t]*\r?$",  # a class alone (classpage.opens)
    rb"error: <class '", rb"\|\d+\]\)[ \t]*\r?$",  # supervisorctl's fault, asyncore's compact traceback (oneline)
    rb" seconds as it raised ", rb"\(\.\.\.\) (?:for [0-9.]+s|after [0-9]+ tries) \(",  # a retrying library's report (notices.retried)
    rb"<traceback object at 0x", rb"\)=<class '",  # an exc_info triple printed, or `{err=}, {type(err)=}` (notices.exc_info_said)
    rb"future: <(?:Task|Future) ",  # asyncio's repr of a future whose error nothing retrieved (asyncio_report.opens)
    rb"Error in sys\.excepthook:",  # CPython's report of a failing hook (excepthook.HOOK)
    re.escape(UNRAISABLE.encode()),  # ... and its words that the exception below was ignored (assemble._unraisable)
    rb": An error occurred \(", rb": \[ONNXRuntimeError\] : ",  # botocore's and onnxruntime's, whatever the class (grammar.CODED_CLASS)
    rb"Result: Failure Exception: ",  # Azure Functions' report on one line (azure.unflattened), whatever its error
    rb"Expected:[ \t]*\r?$",  # doctest's expected output, which is no error (doctest_report)
    rb'^[ \t]*"(?:message|evalue)": ?"',  # an error object's text below its class (jsonlog.member_error)
    rb" while importing test module '",  # pytest_report.starts: a test module that failed to import
    re.escape(hydra.OPENING.encode()), hydra.trigger(),  # Hydra's short report of an error of its own (hydra.opens)
    rb"x across cluster\]",  # Ray's mark of a line it folded, which the normaliser strips: any of the above may end before it
    # (its end alone: ` [repeated ` cost a vLLM log's pass 4%)
    rb"\x1b", rb"\^\[\[",  # an ANSI escape (or one in caret notation), which the normaliser strips, could split any of the above
    rb"&(?:quot|apos|lt|gt|#39|#x27|#34|#x22);", rb"</(?:font|span|b|strong|pre|code)>", rb"^<(?:pre|code)>",  # ... as
    # could HTML's escapes of quotes and brackets, its colour tags and preformatted text's, which it drops or turns back
    # (normalize._unhtml, normalize._HTML_ENTITY)
    rb"\[(?:0|39|0;0)m",  # ... or a line of colour codes whose ESC was lost, which it strips where one resets (normalize)
    rb"above exception", rb"following exception",  # a chain's separator: a bare line above it waits for no traceback (assemble)
    _OPENS_TEXT + rb"Error: ", rb"Caused by:[ \t]*\r?$",  # a Rust program's error and its causes (native.rust_error)
    # The run's configuration (core/runconfig.py): not error starts, but lines its collector must see.
    rb"server_args=ServerArgs\(", rb"Initializing (?:a V1 LLM engine|an LLM engine) ", rb"non-default args: ",
    rb"vLLM API server version", rb"(?:sglang|vllm)(?:\[[\w,]+\]|-openai)?(?:==|:v)\d", rb"/(?:sglang|vllm)-\d",
    rb"(?:sglang\.launch_server|vllm\.entrypoints\.openai\.api_server|(?:vllm|sglang) serve)\b",
    rb"\\\r?$", rb"^" + _PASTED + rb"[ \t]*--[A-Za-z]",  # a launch command continued over lines ending in `\`
    *(re.escape(keyword.encode()) for keyword in CPYTHON_KEYWORDS),  # an error named by CPython's message (cpython_messages)
)
# A header a terminal wrapped at its width, its rest on the next line without the line's prefix (see
# TracebackAssembler._unwrapped): each cut, its line break maybe Windows', reported in both lines.
_CUT_HEADERS = tuple((HEADER_TEXT[:k], HEADER_TEXT[k:]) for k in range(1, len(HEADER_TEXT)))
# Stamps without a year: vLLM's time, and syslog's month (only a name `yearless.Calendar` reads is a time).
_MONTH_DAY = rb"\d\d-\d\d \d\d:\d\d:\d\d"
_MONTHS = tuple(first + name[1:] for name in (b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct",
                                                b"Nov", b"Dec") for first in (name[:1], name[:1].lower()))
_MONTH = rb"(?:" + b"|".join(_MONTHS) + rb")"
# Prefix state that is not rebuilt from the lines around: JSON records, a container's partial records,
# pdsh's host address, Open MPI's tag and BuildKit's step (channels of their own: each of their lines is read; the address
# by the end of it, which costs a fifth of the whole pass less than the whole of it from a line's start).
_STATE = (*_pasted_apart(rb"\{"), rb"std(?:out|err) P", rb"\.[0-9]{1,3}: ", rb"\]<std(?:out|err|diag)>:",
          rb"^#[0-9]+ [0-9]+\.[0-9]+ ",
          # (channels whose lines set their own time, not that of the lines around: syslog's of a program that logs no
          # pid, its time and host in front (`_CHANNELS` reads those with one), and a TorchServe or DJL Serving worker's)
          # (a pattern per month and case: as one, the months cost Hyperscan a sixth of its pass)
          *(rb"^ {0,16}" + month + rb" [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [A-Za-z0-9][\w.-]* [\w./@-]+: " for month in _MONTHS),
          rb"\] (?:PyProcess - )?W-[0-9]+-[\w.-]+-std(?:out|err)[: ]")
# Lines whose exact pattern would slow the whole pass down: Hyperscan looks for a loose form of each, and
# `TriggerFinder.scan` keeps a line it reports only if the exact pattern is in it.
_CONFIRMED = (
    # notices.logged_error (`... failed: ValueError: ...`): its `: ` would make Hyperscan try the rest at every colon
    # (half the time of the whole database); the loose form is the type and its colon (or its str in angle brackets:
    # notices._ANGLED)
    (rb"[A-Za-z_][\w.]*(?:Error|Exception)(?:\([\w.]+\))?: ", rb"(?:: | - |<)[A-Za-z_][\w.]*(?:Error|Exception)(?:\([\w.]+\))?: "),
    # ... and its other form, an OSError's text at an error level (the level first, in the prefix or the text; a
    # superset: an `[Errno N]` in a sentence at no level, a retry's words, is no error and need not be read). Each level
    # word would hold Hyperscan to the rest of its line (a sixth of the pass); the loose form is the errno.
    (rb"\[Errno -?[0-9]", rb"(?:ERROR|CRITICAL|FATAL|[EF][0-9]{4} |^\[[EC] [0-9])[^\n]*\[Errno -?[0-9]"),
)
_CONFIRMING = tuple(re.compile(exact, re.MULTILINE) for _, exact in _CONFIRMED)
# Per-line channels: torchrun `[rank3]:`, syslog `proc[12]: `, workers `(... pid=12)`. Without `headed`
# every line that may hold one is read.
_CHANNELS = (rb"\]:", rb"pid=")
# With `headed`, a line that begins with one channel head (torchrun's or a worker's, the normaliser's
# TORCHRUN and WORKER in bytes) and holds no other is skipped like any other line: the lines
# of one head are one channel, and the state each head's skipped lines leave is rebuilt from its last
# lines (`ChunkScanner._head_setters`). Every other line that may hold a channel prefix is read:
# (A head longer than the line cut, `_HEADED_LINE` bytes, would be read as a head here and not there.)
_TORCHRUN_HEAD = rb"\[(?:rank|default)[0-9]+\]: ?"
_WORKER_HEAD = (rb"\((?:[\w.:-]+(?: rank=[0-9]+| [A-Z]{2}[0-9]+(?: [A-Z]{2}[0-9]+)*)? )?"
                rb"pid=[0-9]+(?:, ip=[^)\s\x80-\xff]+)?\)[ \t\x0b\x0c]")
HEAD = rb"(?:" + _TORCHRUN_HEAD + rb"|" + _WORKER_HEAD + rb")"
_HEAD_END = rb"(?:\]: ?|\)[ \t\x0b\x0c])"  # how each ends
_HEADED = (
    # one more after the head or no head (a body that starts like a head is not one: `[2026-` is a date)
    rb"^(?:" + HEAD + rb")?(?:[^\[(\n]|\[[0-9])[^\n]*(?:\]:|pid=)",
    # a head followed by what may be another, or a JSON record (from where each head ends: cheaper than from the line start;
    # a worker's by its end alone: a superset, which costs a vLLM log's pass a fifth less than the whole head, whose pid
    # on every line held Hyperscan to each)
    rb"\]: ?(?:\(|\[[^0-9\n]|\{)", rb"\)[ \t\x0b\x0c](?:\(|\[[^0-9\n]|\{)",
    rb"\r[^\r\n]",  # a redrawn line: the text shown last decides
)
# What the normaliser's Unicode classes take and the byte patterns above do not; scanned for only in a
# buffer that holds a byte over 127 (`bytes.isascii` tells at memory speed), as they cost the others time.
_NON_ASCII = (rb"^\[(?:rank|default)[0-9]*[\x80-\xff]", rb"^\([^)\n]*\)?[\x80-\xff]",
              "│ ❱".encode(), ".py:[0-9]* +│".encode(), ":[0-9]+ in(?: [^ \n]+)? +│".encode(),  # (a paste begun inside Rich's box of a
              # traceback, at a frame's current line or its place: richtb.starts_cut)
              "Error：".encode(), "Exception：".encode(),  # (a type and a fullwidth colon: grammar.exception_in_words)
              # (a class quoted whole in curly quotes: assemble._quoted_whole)
              rb"\xe2\x80[\x98\x9c] ?(?:[A-Za-z_][^\s:\"'\]]*)?" + EXCEPTION_SUFFIX.encode()
              + rb"[ \t]*\xe2\x80[\x99\x9d][ \t]*\r?$")
# How the text of a line that may set prefix state begins, after a line start or a `\r`: with a
# dated prefix (container, SGLang, logging's asctime; maybe after levelled ones) it may set the
# time and the stream, with a levelled one (logging's basic format, vLLM) the stream.
_LEVELLED = (rb"(?:CRITICAL|ERROR|WARNING|INFO|DEBUG)(?::[^:\r\n]*:| " + _MONTH_DAY + rb"(?:\.\d+)? "
             rb"(?:\[[^\]\r\n]+:\d+\] |[^\s\]]+:\d+\] )?)")
# (Cloud Logging's severity in front of the date too, where another prefix is before it: prefixes.CLOUD_LOGGING)
# (or a paste's blank or three in front of a date, bracketed or not, up to sixteen before one that is not: the normaliser's
# LineNormalizer._peel, _MOST_SHIFT; Tornado's level letter)
# Or a stamp without a year (`yearless.Calendar` dates it): vLLM's, after its level, or syslog's, maybe after a paste's blanks.
_TIME_START = (rb"(?:(?: {1,3}\[| {1,16}|\[[DIWEC] |(?:" + _LEVELLED + rb"){0,2}(?:(?:DEFAULT|NOTICE|ALERT|EMERGENCY|CRITICAL|ERROR|WARNING|INFO|DEBUG) )?"
               rb"\[?)\d{4}-\d\d-\d\d|(?:" + _LEVELLED + rb")?(?:CRITICAL|ERROR|WARNING|INFO|DEBUG) " + _MONTH_DAY
               + rb"| {0,16}" + _MONTH + rb" [ \d]\d \d\d:\d\d:\d\d)")
# (a levelled line may set the stream: Cloud Logging's severities too, whose lines may hold any prefix after them)
_STREAM_START = rb"(?:" + _TIME_START + rb"|(?:CRITICAL|ERROR|WARNING|INFO|DEBUG|DEFAULT|NOTICE|ALERT|EMERGENCY)[ :])"
# Cloud Logging's severity and time (prefixes.CLOUD_LOGGING), outermost on a line: it sets the time too.
_CLOUD_TIME = rb"(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) \d{4}-\d\d-\d\dT"
_TIME_LINE = re.compile(rb"(?:[^\r\n]*\r)*" + _PASTED + rb"(?:" + _CLOUD_TIME + rb"|" + _TIME_START + rb")")
_STREAM_LINE = re.compile(rb"(?:[^\r\n]*\r)*" + _PASTED + _STREAM_START)
# The same after a channel head: its body (`HEAD_AT` tells where it begins).
HEAD_AT = re.compile(HEAD)
HEADS = re.compile(rb"\n(" + HEAD + rb")")  # the heads of the lines after the first
_GROUP = re.compile(rb"\[(?:rank|default)([0-9]+)\]|pid=([0-9]+)(?:, ip=([^)]+))?")
# Per-message prefixes after a head that surely set the stream (and SGLang's the time, if it reads as one).
_SGLANG_BODY = re.compile(rb"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?: [A-Za-z_]*[A-Za-z]\d+)*\] ")
_VLLM_BODY = re.compile(rb"(?:CRITICAL|ERROR|WARNING|INFO|DEBUG) (" + _MONTH_DAY + rb"(?:\.\d+)?) ")
_BODY_TIME = re.compile(rb" ?" + _PASTED + _TIME_START)  # (also a line with no head: see ChunkScanner._line_sets)
_BODY_STREAM = re.compile(rb" ?" + _PASTED + _STREAM_START)


def available() -> bool:
    return hyperscan is not None


def may_set_stream(buffer: bytes, start: int, end: int) -> bool:
    """Whether the line `buffer[start:end]`, if no pattern reported it, may set its stream."""
    return _STREAM_LINE.match(buffer, start, end) is not None


def may_set_time(buffer: bytes, start: int, end: int) -> bool:
    """Whether the line `buffer[start:end]`, if no pattern reported it, may set the time."""
    return _TIME_LINE.match(buffer, start, end) is not None


def body_may_set_stream(buffer: bytes, start: int, end: int) -> bool:
    """The same for a line whose channel head ends at `start`."""
    return _BODY_STREAM.match(buffer, start, end) is not None


def body_may_set_time(buffer: bytes, start: int, end: int) -> bool:
    return _BODY_TIME.match(buffer, start, end) is not None


def head_group(head: bytes) -> tuple[bytes | None, ...]:
    """The channel a head names: torchrun's rank (`[rank0]:`, `[rank0]: ` and `[default0]:` alike), or
    a worker's pid and ip."""
    m = _GROUP.search(head)
    assert m is not None  # every head holds one
    return m.groups()


def head_sets(buffer: bytes, start: int, end: int, calendar: Calendar | None) -> tuple[bool | None, bool | None]:
    """Whether the line whose body (after its head) is `buffer[start:end]`, if no pattern reported it,
    sets its stream and its time (dated by `calendar`, which a normaliser of the same has); None where only
    the normaliser can tell."""
    m = _SGLANG_BODY.match(buffer, start, end)
    if m is not None:
        return True, True if parse_timestamp(m[1].decode()) else None
    if (m := _VLLM_BODY.match(buffer, start, end)) is not None:
        return True, calendar is not None and calendar.read(m[1].decode()) is not None
    return (None if body_may_set_stream(buffer, start, end) else False), None if body_may_set_time(buffer, start, end) else False


class TriggerFinder:
    """Scans buffers of whole lines; `keywords` are the notice keywords (`NoticeDetector.keywords`),
    `extra` more Hyperscan patterns (the learned prefix families); `headed`: lines behind one channel
    head are left to the caller (see _HEADED)."""

    def __init__(self, keywords: tuple[str, ...] = (), extra: tuple[bytes, ...] = (), headed: bool = False,
                 compile: Compile | None = None) -> None:
        """`compile` builds the fixed databases (a caller may keep them compiled between runs:
        compiling is most of a small scan's start-up); the learned families are always compiled here."""
        compile = compile or compile_database
        # The database in two forms, each built when first needed with its scratch (scans may run in
        # threads): one that also tells whether a line begins with a channel head, the cheapest where
        # none does, and one that does not, for input whose lines have heads: there `_heads_database`
        # tells at their first.
        self._keywords, self._headed, self._compile = tuple(sorted(set(keywords))), headed, compile
        self._forms: dict[bool, tuple[Any, Any]] = {}
        self._headed_input = False  # the last buffer looked at had lines behind channel heads
        self._non_ascii = _non_ascii_database(compile)
        self._non_ascii_scratch = self._non_ascii.scratch.clone()
        self._extra = _extra_database(extra) if extra else None  # small: built again as prefixes are learned
        self._extra_scratch = self._extra.scratch.clone() if self._extra is not None else None
        self._heads = _heads_database(compile)
        self._heads_scratch = self._heads.scratch.clone()
        self._named: tuple[bytes, ...] = ()  # the heads seen so far, each looked for by name (see heads)
        # the last buffer scanned, whether it has lines behind a channel head (where the database told), and where
        # its first setters of each kind are, those found so far
        self._scanned: tuple[bytes | None, bool | None, dict[Setter, int]] = (None, None, {})
        self._dated_of: tuple[bytes | None, bool] = (None, False)
        self._setter_forms: dict[Setter | None, tuple[Any, Any]] = {}  # their databases, each with its scratch

    def scan(self, buffer: bytes) -> list[int]:
        """Offsets inside the lines to read, in order (a line may be reported more than once)."""
        told = not self._headed_input
        hits: list[int] = []
        loose: list[tuple[int, int]] = []  # (which of _CONFIRMED, where)
        setters: dict[Setter, int] = {}
        headed = False
        cut = False  # a cut header was reported: the hits are out of order

        def on_match(pattern: int, start: int, end: int, flags: int, context: object) -> None:
            nonlocal cut, headed
            if pattern == _ANY_HEAD:  # reported once
                headed = True
            elif pattern <= len(_SCANNED_SETTERS):  # reported once each
                setters[_SCANNED_SETTERS[pattern - 1]] = buffer.rfind(b"\n", 0, end) + 1
            elif _CUT_FROM <= pattern < _LOOSE_FROM:  # the rest's line and the cut one's
                hits.extend((end - 1, end - len(HEADER_TEXT) + pattern - _CUT_FROM - 1))
                cut = True
            elif _LOOSE_FROM <= pattern < _LOOSE_FROM + len(_CONFIRMED):
                loose.append((pattern - _LOOSE_FROM, end - 1))
            else:
                hits.append(end - 1)

        def on_hit(pattern: int, start: int, end: int, flags: int, context: object) -> None:
            hits.append(end - 1)

        if told not in self._forms:
            database = _database(self._keywords, self._headed, told, self._compile)
            self._forms[told] = (database, database.scratch.clone())
        database, scratch = self._forms[told]
        database.scan(buffer, match_event_handler=on_match, scratch=scratch)
        self._scanned = (buffer, headed if told else None, setters)
        merged = cut
        if not buffer.isascii():
            self._non_ascii.scan(buffer, match_event_handler=on_hit, scratch=self._non_ascii_scratch)
            merged = True
        if self._extra is not None:
            self._extra.scan(buffer, match_event_handler=on_hit, scratch=self._extra_scratch)
            merged = True
        line_start = line_end = 0
        confirmed: dict[int, bool] = {}  # of the line looked at last, by kind
        for kind, hit in loose:  # (in order: each line is found once, and looked through once per kind, however
            if not line_start <= hit < line_end:  # many hits it holds)
                end = buffer.find(b"\n", hit)
                line_start, line_end = buffer.rfind(b"\n", 0, hit) + 1, len(buffer) if end < 0 else end
                confirmed = {}
            if kind not in confirmed:
                confirmed[kind] = _CONFIRMING[kind].search(buffer, line_start, line_end) is not None
            if confirmed[kind]:
                hits.append(hit)
                merged = True
        if merged:
            hits.sort()
        return hits

    def first_setter(self, buffer: bytes, kind: Setter) -> int:
        """Where the first line of the buffer that may be a setter of this kind starts; len(buffer) if
        none. (Before it no line needs a second look.) Those without a channel head are found by `scan`,
        which the buffer has been through; those behind one are looked for when asked, in the buffer's
        first lines, and where none of them is one, in the whole buffer, once (in the pass of `scan`
        they would cost it up to a third of its time on every buffer, asked or not)."""
        if self._scanned[0] is not buffer:
            self.scan(buffer)
        found = self._scanned[2]
        if kind in _SCANNED_SETTERS:
            return found.get(kind, len(buffer))
        if kind not in found:
            window = 0
            for _ in range(_SETTER_WINDOW):
                window = buffer.find(b"\n", window) + 1
                if not window:
                    window = len(buffer)
                    break
            m = _SETTER_RES[kind].search(buffer, 0, window)
            if m is not None:
                found[kind] = buffer.rfind(b"\n", 0, m.start()) + 1
            elif window == len(buffer) or (kind in _DATED_SETTERS and not self._dated(buffer)):
                found[kind] = len(buffer)
            else:
                found[kind] = self._first_line(buffer, kind)
        return found[kind]

    def _dated(self, buffer: bytes) -> bool:
        """Whether the buffer (the one scanned last) holds a date."""
        if self._dated_of[0] is not buffer:
            self._dated_of = (buffer, self._first_line(buffer, None) < len(buffer))
        return self._dated_of[1]

    def _first_line(self, buffer: bytes, kind: Setter | None) -> int:
        """Where the first line holding a setter of this kind (None: a date) starts; len(buffer) if none."""
        if kind not in self._setter_forms:
            database = _setter_database(kind, self._compile)
            self._setter_forms[kind] = (database, database.scratch.clone())
        end = _first_match(*self._setter_forms[kind], buffer)
        return len(buffer) if end is None else buffer.rfind(b"\n", 0, end) + 1

    def heads(self, buffer: bytes) -> list[bytes]:
        """The channel heads that begin lines of the buffer."""
        if self._scanned[0] is not buffer:
            self.scan(buffer)
        found = self._scanned[1]
        if found is None:
            found = _first_match(self._heads, self._heads_scratch, buffer) is not None
        self._headed_input = found
        if not found:  # much faster to tell than to find them all
            return []
        heads = self._named_heads(buffer)
        if (head := HEAD_AT.match(buffer, 0, buffer.find(b"\n"))) is not None:
            heads.append(head.group())
        return heads

    def _named_heads(self, buffer: bytes) -> list[bytes]:
        """The heads of the lines after the first. Those seen before are looked for by name in the buffer's first
        lines (where a few ranks' heads all show), and only lines that begin with any other are read whole (each
        line's head read: three times the time where they are few). Past `_NAMED_HEADS` heads, every line's is read."""
        if len(self._named) > _NAMED_HEADS:
            return HEADS.findall(buffer)
        present = tuple(head for head in self._named if _begins_a_line(buffer, head, _NAMED_WINDOW))
        heads = [*present, *_others_pattern(present).findall(buffer)]
        if new := {head for head in heads if len(head) <= _NAMED_LONGEST} - set(self._named):
            self._named = tuple(sorted({*self._named, *new}))
        return heads


def _begins_a_line(buffer: bytes, head: bytes, window: int) -> bool:
    """Whether a line after the first within the buffer's first `window` bytes begins with this head (exactly:
    torchrun's `[rank0]:` is `[rank0]: ` where a blank follows it)."""
    needle = b"\n" + head
    at = buffer.find(needle, 0, window)
    while at >= 0 and head.endswith(b":") and buffer[at + len(needle):at + len(needle) + 1] == b" ":
        at = buffer.find(needle, at + 1, window)
    return at >= 0


# (expressions, flags) -> a block-mode database whose ids are the expressions' positions
Compile = Callable[[tuple[bytes, ...], tuple[int, ...]], Any]


def compile_database(expressions: tuple[bytes, ...], flags: tuple[int, ...]) -> Any:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=list(expressions), ids=list(range(len(expressions))), elements=len(expressions),
                     flags=list(flags))
    return database


class Setter(enum.IntEnum):
    """Lines whose prefix state the lines after them inherit, looked for by `TriggerFinder.first_setter`."""

    TIME = 0
    STREAM = 1
    HEAD_TIME = 2  # behind a channel head
    HEAD_STREAM = 3


# Each kind's pattern, where its lines may begin. (Cloud Logging's time: with and without what a paste puts
# before it apart, which Hyperscan runs faster)
_SETTERS = (rb"(?:^|\r)(?:" + _CLOUD_TIME + rb"|(?:" + _PASTE_LEAD + rb"(?:> )*|(?:> )+)" + _CLOUD_TIME + rb"|" + _PASTED
            + _TIME_START + rb")", rb"(?:^|\r)" + _PASTED + _STREAM_START,
            _HEAD_END + rb" ?" + _TIME_START, _HEAD_END + rb" ?" + _STREAM_START)  # (behind a head: a superset, cheaper)
_SETTER_RES = tuple(re.compile(setter, re.MULTILINE) for setter in _SETTERS)
_SETTER_WINDOW = 16  # a buffer's first lines, looked at in Python for a kind before the buffer is scanned for it
_DATED_SETTERS = (Setter.TIME, Setter.HEAD_TIME)  # (each holds a date: a buffer without one has none of them)
_DATE = rb"\d{4}-\d\d-\d\d|" + _MONTH_DAY + rb"|" + _MONTH + rb" [ \d]\d \d\d:\d\d:\d\d"  # (a date, or a stamp without a year)
# The first in the database of `scan`: a line that begins with a channel head (in one form of the database;
# a pattern that matches no line in the other), then the setters found in its pass (cheap there).
_ANY_HEAD = 0
_SCANNED_SETTERS = (Setter.TIME, Setter.STREAM)


@lru_cache(maxsize=2)
def _heads_database(compile: Compile):
    return compile((rb"^" + HEAD,), (hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_SINGLEMATCH,))


_NAMED_HEADS = 64  # channel heads looked for by name at most (past it, thousands of ranks: every line's is read)
_NAMED_WINDOW = 16384  # bytes of a buffer's first lines they are looked for in
_NAMED_LONGEST = 256  # bytes of a head named at most (a crafted longer one is read on each line: a pattern of it, deep)


def _exactly(head: bytes) -> list[bytes]:
    """A head's bytes as pattern atoms, then what tells it from a longer head: torchrun's `[rank0]:` is
    `[rank0]: ` where a blank follows it (HEAD_END)."""
    return [re.escape(head[k:k + 1]) for k in range(len(head))] + ([rb"(?! )"] if head.endswith(b":") else [])


def _trie(atoms: list[list[bytes]]) -> bytes:
    """One alternation of these sequences of atoms, their common starts written once (`re` tries the
    alternatives in turn: unshared, each head's first bytes would be compared again for every head)."""
    branches: dict[bytes, list[list[bytes]]] = {}
    for sequence in atoms:
        branches.setdefault(sequence[0] if sequence else b"", []).append(sequence[1:])
    alternatives = [first + _trie(rests) if first and any(rests) else first for first, rests in branches.items()]
    return alternatives[0] if len(alternatives) == 1 else b"(?:" + b"|".join(alternatives) + b")"


@lru_cache(maxsize=64)  # (the heads a buffer's first lines show vary little from buffer to buffer)
def _others_pattern(named: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """The heads of lines (after the first) that begin with a head other than these."""
    return re.compile(rb"\n(?!" + _trie([_exactly(head) for head in named]) + rb")(" + HEAD + rb")") if named else HEADS


@lru_cache(maxsize=32)  # the same families are learned again in each file of a kind (and each test)
def _extra_database(expressions: tuple[bytes, ...]):
    return compile_database(expressions, (hyperscan.HS_FLAG_MULTILINE,) * len(expressions))


@lru_cache(maxsize=16)
def _database(keywords: tuple[str, ...], headed: bool, heads: bool, compile: Compile):
    """Ids: a line that begins with a channel head and `_SCANNED_SETTERS` (one match each), the starts, the loose
    forms of _CONFIRMED, the state, the channels, the keywords. Without `heads`, the look for a channel head is a pattern
    that matches no line: the ids stay."""
    cut_headers = (_literal(cut) + rb"\r?\n" + _literal(rest) for cut, rest in _CUT_HEADERS)
    expressions = (*_STARTS, *cut_headers, *(loose for loose, _ in _CONFIRMED), *_STATE, *(_HEADED if headed else _CHANNELS),
                   *(_literal(k) for k in keywords))
    setters = (rb"^" + HEAD if heads else rb"\A\z", _SETTERS[Setter.TIME], _SETTERS[Setter.STREAM])
    flags = (hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_SINGLEMATCH,) * len(setters) + (hyperscan.HS_FLAG_MULTILINE,) * len(expressions)
    return compile((*setters, *expressions), flags)


@lru_cache(maxsize=10)
def _setter_database(kind: Setter | None, compile: Compile):
    """One kind's pattern (None: a date, which the setters of the time hold), one match."""
    return compile((_DATE if kind is None else _SETTERS[kind],),
                   (hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_SINGLEMATCH,))


_CUT_FROM = 1 + len(_SCANNED_SETTERS) + len(_STARTS)  # the first of _CUT_HEADERS
_LOOSE_FROM = _CUT_FROM + len(_CUT_HEADERS)  # the first of _CONFIRMED: its hits are confirmed


@lru_cache(maxsize=2)
def _non_ascii_database(compile: Compile):
    return compile(_NON_ASCII, (hyperscan.HS_FLAG_MULTILINE,) * len(_NON_ASCII))


def _first_match(database: Any, scratch: Any, buffer: bytes) -> int | None:
    """Where the first match of the database in the buffer ends (the scan stops there); None if there is none."""
    found: int | None = None

    def on_match(pattern: int, start: int, end: int, flags: int, context: object) -> bool:
        nonlocal found
        found = end
        return True  # the first is enough: stop

    with contextlib.suppress(hyperscan.ScanTerminated):
        database.scan(buffer, match_event_handler=on_match, scratch=scratch)
    return found


def _literal(text: str) -> bytes:
    return b"".join(b"\\x%02x" % byte for byte in text.encode("utf-8"))
