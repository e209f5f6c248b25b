"""Prefixes nobody listed, learned from the lines that show where a traceback's own text begins.

Python prints two landmarks in a fixed form: the header `Traceback (most recent call last):` ends
its line and a frame reads `  File "...", line N, in f`. Text in front of a frame was put there by
something else (a logger, a collector, a container runtime, docker compose); text in front of a
header may also be a message that introduces the traceback (`Scheduler hit an exception: `), so there
only its leading part that reads like a prefix counts.

A prefix is remembered as a *family*: its punctuation kept, its words and numbers masked, inner runs
of blanks stretchable (compose pads service names). Later lines that begin with a member of a known
family lose it as well, so their traceback assembles as if it had no prefix, though the seconds tick
over or the pid differs. What the prefix says is kept: a dated timestamp, a rank, TPn or pid token,
and its text with the times masked (`stream_key`), which tells processes apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.prefixes import KNOWN, known_at, parse_timestamp

__all__ = [
    "MAX_PREFIX",
    "PrefixLearner",
    "barred_number",
    "channel_key",
    "dated",
    "gutter_before_frame",
    "header_prefix",
    "landmark_pretext",
    "margin_end",
    "plausible",
    "rank_token",
    "source_pretext",
    "stream_key",
]

_HEADER_AT = lazyregex.compile(r"(?:  \+ Exception Group )?Traceback \(most recent call last\):\s*$")
# (or flush left behind a prefix that ends in a bracket, a parenthesis or a bar: a relay that strips each line it logs,
# as absl's `I0517 16:48:59.615169 1402 run_docker.py:255] File "..."`; or srun's label, a paste's first frame unindented)
_FRAME_AT = lazyregex.compile(rf'(?:  |(?<=[\])|] |^ *(?:P\d+ +)?\d{{1,7}}: ))File "[^"]*", line \d+(?:,? in \s*+{g.TEXT})?\s*+$')  # (faulthandler's: no comma)
# A third, for prefixes that read as nothing else, right before an exception line, so that an error printed
# without a traceback behind it is read too: docker compose's `service  | ` (pm2's `0|app  | `, podman-compose's `[service] | `); a time, alone (a CI runner's
# `Nov 20 16:03:25 `, `2026-01-26 17:25:37 `; a colon after it: logging's `%(asctime)s: `, PythonAnywhere's error log, pm2's `--time`
# to the minute with its offset, `2025-11-22 11:19 +00:00: `) or with a level (between bars: FastChat's stderr records
# `2023-05-30 17:19:25 | ERROR | stderr | `, loguru's `2024-01-05 10:00:00.123 | ERROR    | app:main:12 - `; or a stream:
# a container UI's table export, `2022-02-08 10:17:26 | stdout | `, `2018-10-14 10:08:47<TAB>stdout<TAB>`; a log viewer's
# table of events copied, the time in epoch milliseconds and in ISO 8601 (`1759859767296<TAB>2025-10-07T17:56:07.296Z<TAB>`);
# an app's `[16:10:33] stdout/INFO  `, or its time alone: `[02:20:30.958] `); glog's (C++ servers such as Triton: `E0614 14:43:50.807869 370
# pb_stub.cc:598] `, its level letter sometimes lost in a paste); and a logger's place tag left of a cut
# vLLM prefix (`[serving_chat.py:1001] `); Docker BuildKit's seconds into a step (`25.44 `, `#8 1.737 `: its
# summary of a failed step's last lines, its plain progress); Slurm's `srun --label`, each task's number padded to the
# widest (` 3: `, `P1 3: ` in a heterogeneous job); a launcher's host and rank in brackets (`[gpu187:2]:`). The exception's
# type reads as one by its name or its module's (or is `Exception` itself; a C++ class's scopes too:
# `tensorrt_llm::common::TllmException`).
_EXCEPTION_AHEAD = (r"(?=(?:[A-Za-z_](?:[\w.]|::)*" + g.EXCEPTION_SUFFIX + r"|Exception)(?:\([\w.]+\))?: "
                    r"|[A-Za-z_][\w.]*+(?<=\w\." + g.ERRORS_MODULE + r"\.[A-Z]\w*): )")  # (its module's name looked at from
# the end: a repeated group over a long dotted name backtracks a step at a time)
_LEVEL = r"(?:CRITICAL|ERROR|WARNING|INFO|DEBUG|SUCCESS|TRACE)"
_SRUN_LABEL = r" *(?:P\d+ +)?\d{1,7}: "
_PREFIX_SHAPES = (
    r"^(?:(?:(?:\d+\|)?[A-Za-z0-9][\w.-]*|\[[A-Za-z0-9][\w.-]*\]) +\| "
    r"|(?:\d{10,13}\t)?\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z| ?[+-]\d\d:?\d\d)?(?:\tstd(?:out|err)\t|\t|: | +"
    rf"(?:\| +(?:{_LEVEL}|std(?:out|err)) *\|(?: +(?!{_EXCEPTION_AHEAD})[\w.:<>-]+ +[|-])*+ )?)"
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? +"
    rf"|\[\d\d:\d\d:\d\d(?:[.,]\d+)?\]:? +(?:(?:[\w.-]+/)?{_LEVEL} +)?"
    r"|[IWEF]?\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w./-]+:\d+\] |[ \t]*\[[\w.-]+\.py:\d+\] "
    r"|(?:#\d+ )?\d+\.\d{1,3} |\[[\w.-]+:\d{1,7}\]: ?|std(?:out|err): |" + _SRUN_LABEL
    # (a level in brackets not in capitals, which a logged error's reader does not take for one, and what it names
    # after it: an app's `[Error] (Process) ` relaying a server's lines, `[error] ` before a C++ terminate's report;
    # padded inside its brackets, as structlog's console renderer writes it: `[info     ] `)
    + r"|\[(?:[Ee]rror|[Ww]arn(?:ing)?|[Ii]nfo|[Dd]ebug|[Tt]race|[Cc]ritical|[Ff]atal) *\] +(?:\([\w.:-]+\) +)?"
    + r"|[A-Za-z][\w.-]*/\d{1,5} (?=\[[a-z]*\d+\]:)"  # (TorchX's `role/replica `, NeMo-Run's, before torchrun's label)
    rf"|\| +(?:{_LEVEL}|std(?:out|err)) *\| )")  # (a table export's stream behind a collector's time, peeled first)
_PREFIX_SHAPE = lazyregex.compile(_PREFIX_SHAPES)
_LEVELS = frozenset(("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"))  # (a level's name and colon: uvicorn's)
# (and a native crash report's first line, so that the report behind such a prefix reads whole: `svc  | Fatal Python
# error: ...`, a C++ terminate's, UCX's signal report; see native.starts; and an error's repr a logger printed, vLLM's
# `RuntimeError('...')`; and a class alone, an error without a message, as a newest-first export puts it above its frames)
_AT_EXCEPTION = lazyregex.compile(_EXCEPTION_AHEAD + r"|(?=[A-Za-z_][\w.]*" + g.EXCEPTION_SUFFIX + r"\(['\"]"
                                  r"|(?:[A-Za-z_]\w*+\.)*+_*[A-Z]\w*?" + g.EXCEPTION_SUFFIX + r":?[ \t]*+$"  # (or alone: `KeyboardInterrupt`)
                                  r"|Fatal Python error: |Windows fatal exception: "
                                  r"|terminate called after throwing an instance of '|libc\+\+abi: terminating "
                                  r"|\[[^\]\s]+:\d+:\d+:\d+\] Caught signal \d+ \()")
# ... or the same in front of a source line (four blanks in, then code), where the line before was a frame
# line: read so only on a paste's second line, whose first lost its prefix (see source_pretext).
_PREFIX_BEFORE_SOURCE = lazyregex.compile(_PREFIX_SHAPES + r"(?= {4,}\S)")
# pytest's line of the exception or the failed assert in its report of a failed test (`E       RuntimeError:
# ...`, `E       assert x == 1`) and a frame of its short style (`tests/x.py:12: in test_y`), behind a blank:
# fixed forms too (a Nix build's `pkg> ` in front of each line of a package's test run).
_PYTEST_AT = lazyregex.compile(r"(?<=[ \t])(?:E {2,}(?:(?=assert )|" + _EXCEPTION_AHEAD + r")|[^\s:]*\.py[cx]?:\d+: in \S)")
_FOUND_LINE = lazyregex.compile(r"[ \t]+Line \d{1,7}: ")  # an editor's list of a search's finds: a margin (see _MARGIN_NUMBER)
_PADDED_LABEL = lazyregex.compile(r"(?= )" + _SRUN_LABEL)  # srun's label right-aligned (see _PREFIX_SHAPES), maybe before other prefixes: no indentation
MAX_PREFIX = 512  # longer text in front of a landmark is a message
_MAX_FAMILIES = 32  # per input; the oldest is forgotten first

# A prefix holds some punctuation (words and numbers alone would make a family that any text matches);
# one that starts like an exception line is the message's.
_PUNCT = lazyregex.compile(r"[^\w\s]")
# It ends in a blank or a delimiter (`x] `, `[1,3]<stderr>:`): glued text such as `a 0:` would make a
# family that takes `bad C:` from a message line.
_ENDS = lazyregex.compile(r"(?:[ \t]|[\])|>}]:?)$")
_EXCEPTION_START = lazyregex.compile(r"^[A-Za-z_][\w.]*:(?: |$)")
# A tag in brackets behind a prefix's shape, whatever it holds (Metaflow's task behind its time: `2021-09-16 14:53:03.305
# [1631793181811816/end/5 (pid 71519)] `): only after one, since a bracketed word alone may be a user's (`[Bug] `)
_TAGGED = lazyregex.compile(r"\[[^\[\]\n]{1,120}\] +")
# What the writer behind a prefix may draw left of its exception line: an exception group's box (`    | `), the blanks of
# a column it writes its records' lines under (Rich's logging handler)
_MARGIN_OF_OUTPUT = lazyregex.compile(r"(?:[ \t]*\|(?= ))*[ \t]*")
_BOX_ONLY = lazyregex.compile(r"^[ \t]*(?:(?<=[ \t])[|+][\s|+-]*)?$")  # an exception group's indented box, or nothing
# Tokens of a header's pretext that end a prefix; words of prose (an upper-case one is a level).
_CLOSES = frozenset("])|>}")
# A closing bracket or bar (and a colon after it) ends a token: `[default0]:Scheduler` is two.
_HEADER_TOKEN = lazyregex.compile(r"[^\s\])|>}]*[\])|>}]+:?|\S+?(?=[\s\])|>}]|$)|\S+")
_SEVERITIES = r"info|notice|warn(?:ing)?|err(?:or)?|crit(?:ical)?|fatal|alert|emerg|debug|trace"
_LEVEL_WORD = lazyregex.compile(rf"(?i:{_SEVERITIES})")
_PROGRAM = lazyregex.compile(r"[a-z][a-z0-9_-]*")
# Words in lower case that are no program's name in front of a line: an exception's (the socket module's, old modules'
# `error`), or a label of the text after it (Ray's `System error: ...` over `traceback: Traceback (most recent ...`)
_NO_PROGRAM = frozenset(("error", "timeout", "herror", "gaierror", "traceback", "tb", "exception", "exc", "err", "e", "msg",
                         "message", "detail", "details", "reason", "cause", "trace", "stack", "stacktrace", "output"))
_PROSE = lazyregex.compile(r"^(?![A-Z]{2,}\W*$)[A-Za-z][A-Za-z'-]*[.,:;!?]*$")

_TIMES = lazyregex.compile(  # (and BuildKit's seconds into a step, which begin its prefix: `31.59 `, `#8 1.737 `; and the
    # kernel's since boot, on a console or in dmesg: `[  113.255576] `)
    r"(?<=^(?:#\d+ )?)\d+\.\d{1,3}(?= |$)|(?<=\[ *)\d+\.\d{6}(?=\])"
    r"|\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?"
    r"|\b[IWEF]?\d{4}(?= \d\d:\d\d)|\b\d\d-\d\d(?= \d\d:\d\d)|\d+(?::\d+)+(?:[.,]\d+)?|\d{9,}")
_DATED = lazyregex.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?")
# What a channel's key leaves out: times, bars, and a severity in lower case, which a log drain gives each line it carries
# by its words (`info` over a traceback's frames, `error` on its exception line): it says nothing of who wrote the line.
# (A logger's level in capitals is its record's: a new one ends the message of the one before.)
_KEY_NOISE = lazyregex.compile(rf"<t>|\||(?<!\S)(?:{_SEVERITIES})(?!\S)")
_PID = lazyregex.compile(r"\bpid=(\d+)")
_IDENTITY = lazyregex.compile(r"\brank[= ]?(?P<rank>\d+)|\b(?P<tags>(?:[TDPE]P\d+)(?: [TDPE]P\d+)*)\b|\bpid=(?P<pid>\d+)"
                              r"|^\[[\w.-]+:(?P<rank>\d+)\]:")  # (a launcher's `[gpu187:2]:`, its host and rank)

_TOKEN = lazyregex.compile(r"(?P<word>\w+)|(?P<blank>[ \t]+)|(?P<other>.)", regex.S)
# Hyperscan reads bytes: a word is any run of ASCII word characters or non-ASCII bytes, so that the
# byte pattern finds every line the text pattern does (a superset: see triggers.py).
_HS_WORD = rb"[0-9A-Za-z_\x80-\xff]+"


_HEADER_WORDS = g.HEADER_TEXT[:-1]  # (a header's, with or without its colon)


def landmark_pretext(body: str, nested: bool = False) -> tuple[str, bool] | None:
    """The text in front of a traceback header or frame on this line (or a prefix that reads as nothing
    else in front of an exception line, or any in front of pytest's), and whether it was a header.
    None when the line holds neither, or holds it at its start or behind blanks only. A line's own
    text may start with blanks (indentation) only `nested` behind prefixes peeled already, and then
    not when it is drawn in an exception group's box."""
    m = _FRAME_AT.search(body) if 'File "' in body else None
    is_header = False
    if m is None:
        m = _HEADER_AT.search(body) if _HEADER_WORDS in body else None
        is_header = True
    if m is None and (": " in body or "terminate called" in body or "Error(" in body or "Exception(" in body
                      or body.rstrip().rstrip(":").endswith(g.EXCEPTION_SUFFIXES)) and (body[:1].isalnum() or (first := body.lstrip(" \t")[:1]) in ("[", "#", "|") or first.isdigit()) and (
            prefix := _PREFIX_SHAPE.match(body[:2 * MAX_PREFIX])) is not None and (end := _shapes_end(body, prefix.end())):
        return body[:end], False
    if m is None and ("E  " in body or ": in " in body):
        m, is_header = _PYTEST_AT.search(body, 0, MAX_PREFIX + 64), False
    if m is None or not body[:m.start()].strip() or 'File "' in body[:m.start()]:  # (frames a paste put on one line)
        return None
    if body[0].isspace() and (is_header or not gutter_before_frame(body, m.start())) and (
            _BOX_ONLY.match(body[:m.start()]) or not (nested or _indented_whole(body, m.start(), is_header))) \
            and not _PADDED_LABEL.match(body, 0, m.start()) and not _FOUND_LINE.match(body, 0, m.start()):
        return None
    # (a bar is followed by its blank: compose's `svc |  File ...` is a frame a paste indented by one)
    end = m.start() + (body[m.start() - 1] == "|" and not is_header)
    return body[:end], is_header


def gutter_before_frame(body: str, at: int) -> bool:
    """Whether the frame's line at `at` begins right behind a bar and its blank (`  | File ...`): a log viewer's gutter
    in front of lines it stripped, where an exception group's box indents a frame inside it (`  |   File ...`)."""
    return body.startswith("| ", at - 2) and body.startswith("File", at)


def _indented_whole(body: str, at: int, is_header: bool) -> bool:
    """Whether the blanks a landmark's pretext begins with are a paste's indentation of the whole log, in front of a
    prefix of one word (a markdown list's eight blanks, then mpiexec's `host: `), read in front of a frame or a header
    (a source line that a console drew a frame over has words and blanks in front of it)."""
    pretext = body[:at].lstrip(" \t")
    return pretext[:1].isalnum() and " " not in pretext.rstrip() and (is_header or body.startswith("  File", at))


def _shapes_end(body: str, at: int) -> int:
    """Where the prefix shapes that end at `at` end, with one more behind them (compose's service in front of the app's
    time, `svc  | 2024-11-20 14:37:16 [rank3]: `), where an exception line follows them behind any known prefixes; 0
    where none does."""
    behind = _behind_known(body, at)
    if _AT_EXCEPTION.match(body, (m.end() if (m := _MARGIN_OF_OUTPUT.match(body, behind)) else behind)):
        return at
    more = _PREFIX_SHAPE.match(body[behind:behind + 2 * MAX_PREFIX]) or _TAGGED.match(body[behind:behind + MAX_PREFIX])
    if more is None or not more.end():
        return 0
    end = behind + more.end()
    return end if _AT_EXCEPTION.match(body, _behind_known(body, end)) else 0


def _behind_known(body: str, at: int) -> int:
    """Where the text after `at` begins behind the known prefixes there (a collector's time, compose's service in front
    of torchrun's `[rank3]: ` or a vLLM worker's and logger's prefixes): the normaliser peels them once this is learned."""
    kinds = list(KNOWN)
    twice = {"torchrun"}  # (a launcher's label, then the rank's: `[default2]:[rank2]: `)
    while True:
        found = known_at(body[at:], kinds)  # (the patterns are anchored at the text's start)
        if found is None:
            return at
        if found[0].name in twice:
            twice.remove(found[0].name)
        else:
            kinds.remove(found[0])
        at += found[1].end()


def source_pretext(body: str) -> str | None:
    """The prefix in front of a frame's source line (`2024-02-09 17:32:34     raise ...`), of the shapes read
    in front of an exception line; None if there is none. For the line after a frame line that has no prefix:
    a paste begun inside the log's traceback cut its first line's prefix off (the assembler joins the two)."""
    m = _PREFIX_BEFORE_SOURCE.match(body[:2 * MAX_PREFIX]) if body[:1].isalnum() else None
    return m.group() if m is not None else None


def plausible(piece: str, gutter: bool = False, behind_prefix: bool = False) -> bool:
    """Whether text in front of a landmark can be a prefix rather than a message. A name and a colon is one
    only where the name reads as a host's or a level's, not an exception's type (pdsh's `gpu004: `, uvicorn's
    `ERROR:    ` on each line of a traceback an app logged line by line; a comment's `#` alone, a traceback pasted
    into code as comments). A bar alone is an exception group's box, unless it is a `gutter` (gutter_before_frame).
    Text that begins with a colon goes on with a message, unless it is `behind_prefix`: a known one's, on its line."""
    text = piece.lstrip(" \t")
    return (0 < len(piece) <= MAX_PREFIX and _PUNCT.search(text) is not None and (_ENDS.search(piece) is not None
                                                                                 or piece == "#")  # (a comment's mark)
            and (behind_prefix or text[:1] != ":")  # (the rest of a message the line above began: Java's `: org.x.SparkException: ...`)
            and (_EXCEPTION_START.match(text) is None or _names_no_type(text))
            and (gutter or _BOX_ONLY.match(piece) is None)
            and _HEADER_WORDS not in piece)  # (a header's breaks lost: the frame after it is on its line)


def _names_no_type(text: str) -> bool:
    """Whether the name before the colon text begins with reads as a host's, a level's or a program's: one word in
    lower case that names no exception and labels nothing (the shell's `bash: ` in front of every line a wrapper relays)."""
    name = text[:text.find(":")]
    return name in _LEVELS or _names_host(text) or (_PROGRAM.fullmatch(name) is not None and name not in _NO_PROGRAM)


def _names_host(text: str) -> bool:
    """Whether the name before the colon text begins with reads as a host's: a digit in it, no exception's type."""
    name = text[:text.find(":")]
    return any(c.isdigit() for c in name) and g.BARE_EXCEPTION_LINE.match(name) is None


def header_prefix(pretext: str, behind_prefix: bool = False) -> str:
    """The leading part of a header's pretext that is a prefix; the rest introduces the traceback.
    Prefixes hold anything but words of prose (times, numbers, brackets, pipes, upper-case levels)
    and at most one word of prose right before a token that closes them (`svc | `, `[x] `, `- `): two
    in a row read as a message (`second line | of it, Traceback ...`), unless that token is the last.
    (Taking a message for a prefix here costs the context only; see `LineNormalizer._learned_channel`.)
    `behind_prefix`: see plausible."""
    if _EXCEPTION_START.fullmatch(pretext) and _names_no_type(pretext):
        return pretext  # (a program's name alone: `bash: `)
    end = 0
    leading = True  # no word of prose since the end of the prefix found so far
    words = 0  # words of prose in a row
    last = len(pretext) <= MAX_PREFIX  # the token found last is the pretext's last
    tokens = list(_HEADER_TOKEN.finditer(pretext[:MAX_PREFIX]))
    for index, token in enumerate(tokens):
        text = token.group()
        prose = _PROSE.match(text) is not None
        leading = leading and not prose
        closes = text.rstrip(":")[-1:] in _CLOSES or text == "-" or (
            last and index == len(tokens) - 1 and any(c.isdigit() for c in text))
        if leading or (closes and (words <= 1 or index == len(tokens) - 1)) or (
                end and _LEVEL_WORD.fullmatch(text) and not pretext[end:token.start()].strip()):
            end, leading = token.end(), True  # (or a level's word in lower case right after it: a log drain's
            # `Nov 22 11:28:18 host app[worker] info `, `error` on the exception's line)
        words = words + 1 if prose else 0
    if not end:
        return ""
    while end < len(pretext) and pretext[end] in " \t":
        end += 1
    piece = pretext[:end]
    return piece if plausible(piece, behind_prefix=behind_prefix) else ""


def stream_key(piece: str) -> str:
    """The prefix with its times masked: the same for every line one process prints."""
    return _TIMES.sub("<t>", piece).strip()


def channel_key(piece: str) -> str:
    """What tells the process that printed the prefix apart: its pid or rank, spelled as the known
    per-line prefixes spell them (a damaged `VllmWorker pid=5) ` joins the `(VllmWorker pid=5) ` lines),
    else the prefix without its times, bars and severity (`svc  | ` -> `svc`)."""
    m = _IDENTITY.search(piece)
    if m is None:
        key = stream_key(piece)
        return " ".join(_KEY_NOISE.sub(" ", key).split()).rstrip(":") or key  # shown as the process when there is no rank
    pid = _PID.search(piece)
    return f"pid={pid[1]}@" if pid else f"rank{m['rank']}" if m["rank"] else m["tags"]


def rank_token(piece: str) -> str | None:
    m = _IDENTITY.search(piece)
    if m is None:
        return None
    return f"rank{m['rank']}" if m["rank"] else m["tags"] or f"pid={m['pid']}"


def dated(piece: str):
    m = _DATED.search(piece)
    return parse_timestamp(m.group()) if m else None


@dataclass(frozen=True, slots=True)
class Family:
    pattern: regex.Pattern  # matches a member at the start of a text
    trigger: bytes  # a Hyperscan pattern that finds every line holding a member
    margin: str | None = None  # a copy's margin: the channel it names ("" for line numbers), None for a prefix


# A copy's margin in front of a landmark: a viewer's line numbers (an editor's, a CI page's, a build log's `2319 | `,
# glued to a worker's `(pid=...)`), or grep's (`-n`: `123:` on a matching line, `124-` on its context; several files:
# each line's file first, `worker.log-`, `worker.log:12:`; an editor's list of a search's finds, `  Line 116: `). Not a
# date or a time; not srun's label (`3: `): after grep's mark comes the landmark's own indentation, none or two blanks,
# after srun's one more. (The normaliser takes one only right in front of the landmark or of a known prefix: a number
# inside a prefix names a process.)
_MARGIN_NUMBER = lazyregex.compile(r"[ \t]*(?:Line \d{1,7}: |(?!\d{4}-\d\d-\d\d|\d\d?:\d\d)\d{1,7}(?:[ \t]+\|(?: |$)|\| |[ \t]|[:-](?=(?:  )?\S)|(?=[(\[])))")
# (a file's name has an extension; a path in a margin is short: unbounded, a line of `a.a.a. ...` was tried at each dot)
_GREP_FILE = r"(?P<file>[\w./-]{0,256}\w\.[A-Za-z]\w{0,7})[:-]"
_MARGIN_FILE = lazyregex.compile(_GREP_FILE + r"(?:\d{1,7}[:-](?=(?:  )?\S)|(?=(?:  )?[^\s\d]))")
_MARGIN_FILE_PIECE = lazyregex.compile(_GREP_FILE + r"(?:\d{1,7}[:-])?")
_BARRED = lazyregex.compile(r"[ \t]*(\d{1,7})[ \t]*\|")
_FOUND_AT = "Line "  # (Notepad++'s list of a search's finds)
_NUMBERS = r"[ \t]*\d{1,7}"


def margin_end(text: str, end: int) -> tuple[int, bool]:
    """Where a copy's margin at the start of `text` ends, if it ends at or before `end` (where the text in front of a
    landmark ends), 0 if there is none; and whether only the landmark follows it (or an exception group's box)."""
    m = _MARGIN_NUMBER.match(text) if text.lstrip(" \t")[:1].isdigit() or _FOUND_AT in text[:16] else _MARGIN_FILE.match(text)
    if m is None or m.end() > end:
        return 0, False
    return m.end(), m.end() == end or _BOX_ONLY.match(text[m.end():end]) is not None


def barred_number(piece: str) -> int | None:
    """The number of a margin that a bar ends (a build log's `2319 | `), which a process's id could be too."""
    m = _BARRED.match(piece)
    return int(m[1]) if m is not None else None


def _margin_family(piece: str) -> Family:
    """The family of a margin `margin_end` cut (a line's own text follows it)."""
    if (file := _MARGIN_FILE_PIECE.fullmatch(piece)) is not None:
        name = file["file"]
        return Family(regex.compile(regex.escape(name) + r"[:-](?:\d{1,7}[:-])?"), _hs_literal(name) + rb"[:-]", name)
    if piece.lstrip(" \t").startswith(_FOUND_AT):
        return Family(regex.compile(r"[ \t]*Line \d{1,7}: "), rb"^[ \t]*Line [0-9]{1,7}: ", "")
    mark = piece.lstrip(" \t").lstrip("0123456789")
    if not mark:  # (glued to a worker's prefix)
        return Family(regex.compile(_NUMBERS + r"(?=[(\[])"), rb"^[ \t]*[0-9]{1,7}[(\[]", "")
    if "|" in mark:
        return Family(regex.compile(_NUMBERS + r"[ \t]*\|(?: |$)"), rb"^[ \t]*[0-9]{1,7}[ \t]*\|", "")
    if mark in (":", "-"):
        return Family(regex.compile(_NUMBERS + r"[:-]"), rb"^[ \t]*[0-9]{1,7}[:-]", "")
    return Family(regex.compile(_NUMBERS + r"[ \t]"), rb"^[ \t]*[0-9]{1,7}[ \t]", "")


def family_of(piece: str, margin: bool = False) -> Family:
    if margin:
        return _margin_family(piece)
    if _EXCEPTION_START.fullmatch(piece) and _PROGRAM.fullmatch(piece[:piece.find(":")]):  # (a program's name: kept,
        return Family(regex.compile(regex.escape(piece)), _hs_literal(piece))  # any other word would read as a type)
    text, hs = [], []
    for m in _TOKEN.finditer(piece):
        if m["word"]:
            text.append(r"\w+")
            hs.append(_HS_WORD)
        elif m["blank"] and m.end() < len(piece):
            text.append(r"[ \t]+")
            hs.append(rb"[ \t]+")
        else:  # the blank that ends the prefix is exact: what follows it is the line's own indentation
            literal = m.group()
            text.append(regex.escape(literal))
            hs.append(rb"[\x80-\xff]+" if not literal.isascii() else _hs_literal(literal))
    return Family(regex.compile("".join(text)), b"".join(hs))


def _hs_literal(text: str) -> bytes:
    return b"".join(b"\\x%02x" % byte for byte in text.encode())


class PrefixLearner:
    """The prefix families learned so far in one input; `version` changes with every new one."""

    def __init__(self) -> None:
        self._families: list[Family] = []
        self.version = 0

    @property
    def triggers(self) -> tuple[bytes, ...]:
        return tuple(family.trigger for family in self._families)

    def family(self, index: int) -> Family:
        return self._families[index]

    def match(self, text: str, used: set[int]) -> tuple[int, int] | None:
        """(family index, length) of a learned prefix at the start of `text`, skipping the `used` ones."""
        exception = _EXCEPTION_START.match(text)
        least = exception.end() + 1 if exception and not _names_no_type(text) else 1  # a family never takes an exception's type
        for index, family in enumerate(self._families):
            if index not in used and (m := family.pattern.match(text)) is not None and m.end() >= least:
                return index, m.end()
        return None

    def learn(self, piece: str, margin: bool = False) -> int:
        """Remember the family of `piece` (if no known one holds it), a copy's margin's if `margin`; returns its index."""
        for index, family in enumerate(self._families):
            if family.pattern.fullmatch(piece) and (family.margin is not None) == margin:
                return index
        new = family_of(piece, margin)
        for index, family in enumerate(self._families):
            if family.pattern.pattern == new.pattern.pattern:  # (a margin glued to what follows: its pattern looks there)
                return index
        if len(self._families) >= _MAX_FAMILIES:
            del self._families[0]
        self._families.append(new)
        self.version += 1
        return len(self._families) - 1
