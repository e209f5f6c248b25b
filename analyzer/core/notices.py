"""Log-line notices: failures that a process reports in one log line, without a traceback.

`Received sigquit from a child process`, a killed child, the NCCL watchdog's ERROR line: a pack
marks such patterns `match: line`. Their template is looked for in the line where its leading
literal text appears (after whatever prefix the normaliser left, such as glog's
`[E914 08:25:03.41 ProcessGroupNCCL.cpp:616] `) and must run to the end of the line.

The assembler asks about every line that opens nothing else, so the common case must be cheap:
a substring test per template, for the longest word of its leading literal text (which a matching
line holds verbatim), decides whether a line is looked at more closely. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import regex

from analyzer.core import lazyregex
from analyzer.core.grammar import LAMBDA_RUNTIME, SUFFIXLESS, TEXT, WRAPPED_DRIVER_ERROR, repr_said
from analyzer.core.literal import literal
from analyzer.core.native import source_place
from analyzer.core.records import ErrorInfo
from analyzer.core.schema import Pattern
from analyzer.core.template import CompiledTemplate, TemplateError, compile_template

__all__ = ["RETRYING", "NoticeDetector", "exc_info_said", "logged_error", "retried", "said_at_end"]


@dataclass(frozen=True, slots=True)
class _Notice:
    pattern: Pattern
    compiled: CompiledTemplate
    keyword: str  # the longest word of the leading literal text: every matching line contains it
    anchor: str  # the first word of the leading literal text, where a match may start

    def find(self, text: str) -> int:
        """Where in `text` the notice starts (it runs to the end of the line), or -1."""
        start = text.find(self.anchor)
        while start >= 0 and self.compiled.match(text[start:]) is None:
            start = text.find(self.anchor, start + 1)
        return start


class NoticeDetector:
    """Finds `match: line` patterns in log lines; call it with a line's text (prefixes stripped)."""

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self._notices: list[_Notice] = []
        for pattern in patterns:
            if pattern.match != "line":
                continue
            try:
                compiled = compile_template(pattern.template, "auto" if pattern.style == "plain" else pattern.style)
            except (TemplateError, regex.error, RecursionError):
                continue  # `patterns check` reports it
            words = compiled.prefix.split()
            if not words:
                continue  # the schema refuses these: nothing to look for
            self._notices.append(_Notice(pattern, compiled, max(words, key=len), words[0]))
        # A keyword that holds another is redundant: a line with it holds the shorter one too.
        keywords = {notice.keyword for notice in self._notices}
        self._keywords = tuple(sorted(k for k in keywords if not any(o != k and o in k for o in keywords)))

    def __bool__(self) -> bool:
        return bool(self._keywords)

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        return tuple(notice.pattern for notice in self._notices)

    @property
    def keywords(self) -> tuple[str, ...]:
        """Words one of which every line that reports a notice holds verbatim (for the fast path)."""
        return self._keywords

    def __call__(self, text: str) -> ErrorInfo | None:
        """The notice this line reports, as an exception-like record without frames; else None."""
        for keyword in self._keywords:  # a plain loop of `in` beats a combined regex here
            if keyword in text:
                break
        else:
            return None
        found = [(start, notice) for notice in self._notices
                 if notice.keyword in text and (start := notice.find(text)) >= 0]
        if not found:
            return None
        # A notice that quotes another ("watchdog terminated with exception: [Rank 0] Watchdog
        # caught ...") is about the outer statement: the earliest start wins, then the longer text.
        start, notice = min(found, key=lambda hit: (hit[0], -len(hit[1].compiled.literal)))
        return ErrorInfo(notice.pattern.exception, text[start:].strip(), has_traceback=False)


# A record logged at error level (by its prefix, or uvicorn's "ERROR:    " in its text) that holds an
# exception's text: `logger.error(exc)` gives "[Errno 98] ..." (an OSError's str), and
# `logger.error(f"Saving failed: {exc!r}")`-like lines end in "...: OSError: [Errno 28] ...". A C++
# exception's type is named with `::` (`[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: ...`).
# glog's prefix (C++ servers such as Triton, absl, torch._logging) names the level by its first letter:
# `E1204 10:00:05.456789  1234 python_be.cc:1233] `, torch's with a trace id after it (` [14/1]`).
_GLOG_ERROR = r"[EF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [^\s\]]+:\d+\](?: \[[\d/]+\])?"
_LEVEL_WORDS = ("ERROR", "CRITICAL", "FATAL")
_LEVEL_IN_PREFIX = lazyregex.compile(rf"\b(?:ERROR|CRITICAL|FATAL)\b|(?:^|[\s:\]]){_GLOG_ERROR}|^\[[EC] \d")  # (Tornado's letter too)
# (pip indents a child's output; C++ loggers tag a line `[TensorRT-LLM][ERROR] `; markdown makes it bold;
# Airflow's task log names the place first: `{taskinstance.py:1150} ERROR - `; a time may come first, alone or
# dated, a padded level after it: `19:37:45 [ERROR  ] `, `2025/07/06 20:34:01 ERROR `)
# or the logger's name, its level padded to eight after it (`%(name)s %(levelname)-8s`: `sagemaker-containers ERROR    `)
_LEVEL_IN_TEXT = lazyregex.compile(r"^\s*(?:\{[^{}\s]+:\d+\}\s+|(?:\d{4}([-/])\d\d\1\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d+)? +"
                                   r"|[\w.-]+ (?=ERROR {4}\S|CRITICAL \S))?"
                                   r"(?:(?:\*\*)?(?:ERROR|CRITICAL|FATAL)(?::\*\*\s*|\*\*:\s*|:\s*|\s+-\s+|\s+)"
                                   r"|(?:\[[^\]\s]+\] ?)*\[(?:ERROR|FATAL|CRITICAL) *\]\s*"
                                   rf"|{_GLOG_ERROR}\s*)")
_ERRNO = lazyregex.compile(r"^\[Errno -?\d+\] \S.*$")
# The type opens the text or follows a colon or a dash (`Exception occured - litellm.APIError: ...`); an OSError with its
# errno may also end a sentence (pip's "Could not install packages due to an OSError: [Errno 28] ...").
_TYPE = rf"(?P<type>(?:[A-Za-z_]\w*+(?:\.|::))*+(?:[A-Z]\w*(?:Error|Exception)|{LAMBDA_RUNTIME}|{SUFFIXLESS}))(?:\([\w.]+\))?"
_EMBEDDED = lazyregex.compile(rf"(?:^|(?<=: +| - )|(?<=\s)(?=\S+: \[Errno -?\d))(?:{_TYPE}): (?P<message>\S.*)$")
# ... or it is all the record's line says, its message on the lines below (SageMaker's `ExecuteUserScriptError:`)
_TYPE_ALONE = lazyregex.compile(rf"^{_TYPE}:\s*$")

# ... or in parentheses after words, then its message (gcloud's `ERROR: gcloud crashed (ValueError): ...`).
_PARENTHESISED = lazyregex.compile(r"(?<=\s)\((?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))\): (?P<message>\S.*)$")


# ... or its str in angle brackets, as pymilvus's errors write theirs (`RPC error: [batch_insert], <MilvusException: (code=1100,
# message=...)>, <Time:{...}>`)
_ANGLED = lazyregex.compile(r"<(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception)): (?P<message>[^<>\n]+)>")


# `logger.error(f"{type(exc)}: {exc}")`: the class as `type()` prints it, then the message (maybe after the
# place the logger names: `<class 'RuntimeError'> at trainer.py:101 - CUDA error: ...`, or the word exception:
# `raised <class 'AssertionError'> exception: ...`, KServe's `exception type <class 'X'>, exception msg: ...`, TensorFlow 1's
# coordinator: `Error reported to Coordinator: <class 'X'>, ...`; not a list of classes: `(<class 'A'>, <class 'B'>)`;
# Python 2's `type()` printed `<type 'exceptions.KeyError'>`: Elasticsearch Curator's `Failed to complete action: ...  <type ...>: ...`).
# The level may be anywhere before it on the line (a format the normaliser has no prefix for).
# ... or at no level, after words that say it failed (a Rust router relaying a model server's error: `Request failed
# during generation: Server error: Unexpected <class 'RuntimeError'>: CUDA error: ...`)
_SAYS_FAILED = lazyregex.compile(r"(?i:error|failed|unexpected)")
_LOWER_LEVEL = lazyregex.compile(r"\b(?:INFO|DEBUG|WARNING|WARN|TRACE)\b")
_CLASS_SAID = lazyregex.compile(r"<(?:class|type) '(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))'>(?: at \S+:\d+)?(?: exception| error)?(?::| -|, exception msg:|,) "
                                r"(?P<message>[^\s<].*)$")

# `logger.error(f"{what}: {type(exc).__name__}")`, or `{exc!r}` of an error that has no message: the class ends the line
# after a colon (SD.Next's `... | ERROR | errors | executing callback: x.py f: AttributeError`)
_CLASS_ENDS = lazyregex.compile(r"(?<=: )(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))\s*$")

# SQLAlchemy's text of a driver's error behind the logger's name (`mlflow.cli: (sqlite3.OperationalError) ...`).
_DRIVER_NAMED = lazyregex.compile(r"^[\w.-]+: " + WRAPPED_DRIVER_ERROR.pattern[1:])
# `logger.exception(repr(exc))` where no exception is being handled: "RuntimeError('Engine died.')" (and
# logging's "NoneType: None" on the next line, for the traceback it had none of).
_REPR = lazyregex.compile(r"^(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))\((?P<message>(?P<q>['\"]).*(?P=q))?\)\s*$")


def logged_error(text: str, prefix: str) -> ErrorInfo | None:
    """The exception a log record at error level reports in its text, without a traceback; else None. A C++
    exception's place is the source file and line its text ends with, where it names one (TensorRT-LLM's checks)."""
    info = _logged_error(text, prefix)
    if info is not None and "::" in info.exception_type and (placed := source_place(info.message)):
        return replace(info, frames=placed)
    return info


def _logged_error(text: str, prefix: str) -> ErrorInfo | None:
    if ("<class '" in text or "<type '" in text) and (said := _CLASS_SAID.search(text)) is not None and (
            _LEVEL_IN_PREFIX.search(prefix) or _LEVEL_IN_PREFIX.search(text, 0, said.start())
            or (_SAYS_FAILED.search(text, 0, said.start()) and not _LOWER_LEVEL.search(prefix + text, 0, len(prefix) + said.start()))):
        return ErrorInfo(said["type"], said["message"].strip(), has_traceback=False)
    if text.rstrip().endswith(("Error", "Exception")) and (alone := _CLASS_ENDS.search(text)) is not None and (
            _LEVEL_IN_PREFIX.search(prefix) or _LEVEL_IN_PREFIX.search(text, 0, alone.start())):
        return ErrorInfo(alone["type"], "", has_traceback=False)  # (an error whose str() is empty, after words)
    level = _LEVEL_IN_TEXT.match(text)
    if level is None and not _LEVEL_IN_PREFIX.search(prefix):
        # (a format nobody listed, its level inside it: `01:49:22 - Proxy:ERROR: server.py:87 - ... - X.Error: ...`;
        # the words looked for first: most lines hold none, and the pattern would try every place in them)
        if not any(word in text for word in _LEVEL_WORDS) or (said := _EMBEDDED.search(text)) is None or not (
                _LEVEL_IN_PREFIX.search(text, 0, said.start())) or _LOWER_LEVEL.search(text, 0, said.start()):
            return None
        return ErrorInfo(said["type"], said["message"].strip(), has_traceback=False)
    body = text[level.end():] if level else text
    if _ERRNO.match(body):
        return ErrorInfo("OSError", body.strip(), has_traceback=False)
    if (repr_ := _REPR.match(body)) is not None:
        return ErrorInfo(repr_["type"], _unquoted(repr_["message"]), has_traceback=False)
    if (driver := WRAPPED_DRIVER_ERROR.match(body) or _DRIVER_NAMED.match(body)) is not None:  # (SQLAlchemy's error
        # logged as its text, maybe after the logger's name: `ERROR mlflow.cli: (sqlite3.OperationalError) ...`)
        return ErrorInfo(driver["type"], driver["message"].strip(), has_traceback=False)
    embedded = _EMBEDDED.search(body) or _PARENTHESISED.search(body) or (_ANGLED.search(body) if "<" in body else None)
    if embedded is None:
        alone = _TYPE_ALONE.match(body) if level is not None else None
        return None if alone is None else ErrorInfo(alone["type"], "", has_traceback=False)
    return ErrorInfo(embedded["type"], embedded["message"].strip(), has_traceback=False)


def said_at_end(text: str) -> ErrorInfo | None:
    """The exception a line names at its end at whatever level (`... Failed to initialize Python stub: X: ...`, which
    Triton logs at INFO): an error only where a stack below it says so."""
    if ("Error: " not in text and "Exception: " not in text) or (said := _EMBEDDED.search(text)) is None:
        return None
    return ErrorInfo(said["type"], said["message"].strip(), has_traceback=False)


def _unquoted(quoted: str | None) -> str:
    """The text of a string's repr; as printed where it is no literal (a repr cut by the logger)."""
    if quoted is None:
        return ""
    try:
        value = literal(quoted)
    except ValueError:
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted[1:-1]


# A retrying library's report of a call's error: tenacity's `before_sleep_log` (`Retrying f in 4.0 seconds as it raised
# APIError: ...`, a period after it) and backoff's handlers (`Backing off f(...) for 0.5s (requests.exceptions.
# ConnectionError: ...)`, `Giving up f(...) after 5 tries (...)`). The class may be any: the library says it was raised.
_RETRIED = lazyregex.compile(r"(?P<words>\bRetrying \S+ in \d+(?:\.\d+)? seconds as it raised) (?P<type>[A-Za-z_][\w.]*): "
                             rf"\s*+(?P<message>(?:{TEXT})?)\s*+$"  # (tenacity's full stop after it: see retried)
                             r"|(?P<words>\b(?:Backing off|Giving up) \S+\(\.\.\.\) (?:for \d+(?:\.\d+)?s|after \d+ tries)) "
                             r"\((?P<type>[A-Za-z_][\w.]*): (?P<message>.*)\)\s*$")
RETRYING = ("Retrying ", "Backing off ")  # how the words of a report that the call is tried again begin
_RETRY_WORDS = (*RETRYING, "Giving up ")


def retried(text: str) -> tuple[str, ErrorInfo] | None:
    """The error a retrying library reports a call raised: the words that say so, and the error; else None. (Tried
    again, it may have passed: such an error is a run's root cause only where no other is.)"""
    if not any(words in text for words in _RETRY_WORDS) or (m := _RETRIED.search(text)) is None:
        return None
    said = m["message"].removesuffix(".") if m["words"].startswith(RETRYING[0]) else m["message"]
    return m["words"], ErrorInfo(m["type"], said.strip(), has_traceback=False)


# `print(sys.exc_info())`, or a logger's `%s` of it: the class, the exception's repr and its traceback object; and the
# tutorial's `print(f"Unexpected {err=}, {type(err)=}")`: the repr, then the class. Each is read back from where it ends
# (its traceback object, its class) over at most `_REPR_WINDOW` characters of repr: a line of many `(<class '` or `x=Y(`
# would make a search from each of them read to its end.
_EXC_INFO = lazyregex.compile(r"\(<class '(?P<type>[A-Za-z_][\w.]*)'>, (?P<repr>[A-Za-z_][\w.]*\(.*\)), "
                              r"<traceback object at 0x[0-9a-fA-F]+>\)")
_SELF_DOCUMENTED = lazyregex.compile(r"(?P<name>[A-Za-z_]\w*)=(?P<repr>[A-Za-z_][\w.]*\(.*\)), type\((?P=name)\)=<class '"
                                     r"(?P<type>[A-Za-z_][\w.]*)'>")
_REPR_WINDOW = 4096
_TRACEBACK_OBJECT, _TYPE_SAID = "<traceback object at 0x", ")=<class '"


def exc_info_said(text: str) -> tuple[str, ErrorInfo] | None:
    """The exception a program printed as an `exc_info` triple, or by the tutorial's f-string, in the line: the words
    before it, and the error; else None."""
    m = None
    if (at := text.find(_TRACEBACK_OBJECT)) >= 0:
        start = text.rfind("(<class '", max(0, at - _REPR_WINDOW), at)
        m = _EXC_INFO.match(text, start, at + 64) if start >= 0 else None
    elif (at := text.find(_TYPE_SAID)) >= 0 and (typed := text.rfind(", type(", max(0, at - 256), at)) >= 0:
        name = text[typed + len(", type("):at]
        start = text.rfind(f"{name}=", max(0, typed - _REPR_WINDOW), typed) if name.isidentifier() else -1
        m = _SELF_DOCUMENTED.match(text, start, at + 256) if start >= 0 else None
    if m is None:
        return None
    held = repr_said(m["repr"])
    message = held[1] if held is not None else m["repr"]
    return text[:m.start()].strip().rstrip(":").rstrip(), ErrorInfo(m["type"], message, has_traceback=False)
