"""Log lines that are JSON objects: what they hold, in two shapes.

- An envelope is a collector's record of one line a process wrote: Docker's json-file driver
  (`{"log": "text\\n", "stream": "stderr", "time": "...Z"}`, a `log` without its newline being a
  piece of a longer line) and `journalctl -o json` (`MESSAGE`, `_PID`, `_HOSTNAME`,
  `__REALTIME_TIMESTAMP`; a `MESSAGE` that is not printable UTF-8 comes as an array of its bytes).
  A runner that relays its children's output as events names the stream under another key
  (milabench: `{"event": "line", "data": "text\\n", "pipe": "stderr"}`).
  Its text is a log line like any other, with prefixes of its own, and the envelope is a per-line
  prefix: it names the process.
- An app record is a whole log record a JSON formatter wrote (python-json-logger, structlog, ECS,
  ...): a message field and maybe a formatted exception field, which together are the text a plain
  formatter would have printed over several lines. A program that logs each line of its stderr as
  a record of its own (FastChat's StreamToLogger behind a JSON formatter) writes records with the
  same other fields, times aside: those are lines of one stream.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.infer_prefix import stream_key
from analyzer.core.prefixes import parse_timestamp

__all__ = ["AppRecord", "Envelope", "error_string", "member_error", "read", "split_lines"]

_MESSAGE_KEYS = ("message", "msg", "log", "text", "event")
_TRACE_KEYS = ("exc_info", "exc_text", "exception", "stack_trace", "traceback", "stack", "stack_info")
_LINE_KEYS = ("data", "line", "output", "log")  # where a relayed line is
_RECORD_KEYS = ("message", "msg", "levelname", "level")  # a logger's record, which may name its stream too
_TIME_KEYS = ("time", "timestamp", "ts", "@timestamp", "asctime")
_MAX_MESSAGE_LINES = 5000  # as many as one traceback block holds; a crafted record may hold millions
_SURROGATE = lazyregex.compile("[\ud800-\udfff]")  # what is left of them after json.loads joined the pairs
_DOCKER_STREAMS = ("stdout", "stderr")
# Docker's copier cuts a line that fills its 16 KiB buffer; a collector that drops the newline of every
# line (Fluent Bit's CRI parser) says which records are partial in `logtag` instead.
_DOCKER_PIECE = 16 * 1024
_EPOCH = datetime(1970, 1, 1)
_ERROR_TYPE = lazyregex.compile(r"[A-Z]\w*(?:Error|Exception)")  # a server's error type named as an exception class


@dataclass(frozen=True, slots=True)
class Envelope:
    """One line a process wrote, as a collector recorded it."""

    text: str  # without its newline; journald's may hold several lines
    channel: str  # the process (and stream) that wrote it
    rank: str | None
    host: str | None
    timestamp: datetime | None
    partial: bool = False  # a piece of a longer line: the next piece on the same channel goes on


@dataclass(frozen=True, slots=True)
class AppRecord:
    """A log record: its message and formatted exception, as lines; who logged it and when."""

    lines: tuple[str, ...]
    channel: tuple[str, ...]
    rank: str | None
    host: str | None
    timestamp: datetime | None
    fields: str | None  # a digest of the other fields, times masked: the same on each record one logger writes


def read(text: str) -> Envelope | AppRecord | None:
    """What the JSON line `text` holds; None for a line that is no JSON object or neither shape. (A body a client
    printed as bytes has its single quotes escaped, as their repr writes them: `model\\'s`, no JSON escape.)"""
    value = _loaded(text)
    if value is None and "\\'" in text:
        value = _loaded(text.replace("\\'", "'"))
    if not isinstance(value, dict):
        return None
    return _docker(value) or _journal(value) or _piped(value) or _error_response(value) or _app_record(value)


def _loaded(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the decoder goes
        return None


_ESCAPED_ESC = "\\u001b["  # a colour code's ESC as JSON writes it
# A line of a pretty-printed JSON document that is one string: alone (an item of a list) or a member's value, maybe
# with the comma after it; or cut before its closing quote (maybe inside an escape).
_STRING_LINE = lazyregex.compile(r'\s*+(?P<key>"(?:[^"\\]|\\.)*+"\s*+:\s*+)?"(?P<body>(?:[^"\\]|\\.)*+\\?+)'
                                 r'(?:(?P<closed>")\s*+(?P<comma>,?)\s*+)?')
_CUT_ESCAPE = lazyregex.compile(r'(?<!\\)(?:\\\\)*+\K\\(?:u[0-9A-Fa-f]{0,3})?$')  # (a backslash itself escaped is whole)
_TRACEBACK_ITEMS = (g.HEADER_TEXT, 'File "', g.CAUSE_SEPARATOR, g.CONTEXT_SEPARATOR)


def error_string(text: str) -> tuple[str, bool] | None:
    """The text of a JSON document's line that is one string of an error's text, and whether it is the last of its
    list or object (no comma after it: what follows is the document's); else None. Such a string holds colour codes
    (what Jupyter keeps of an error: an .ipynb's `traceback` list, a kernel's error message, a copied error object's
    `stack`), or is an item of a list of a traceback's lines (a JSON formatter's `exc_info`, its frames' lines
    stripped, each source line after its frame's: `"File \\"x.py\\", line 3, in f\\n    g()",`)."""
    lowered = text.lower()
    if (_ESCAPED_ESC not in lowered and text.lstrip()[:1] != '"') or (m := _STRING_LINE.fullmatch(text)) is None:
        return None
    try:
        value = json.loads(f'"{m["body"] if m["closed"] else _CUT_ESCAPE.sub("", m["body"])}"')
    except ValueError:  # (an escape JSON has not: `\x1b`)
        return None
    if _ESCAPED_ESC not in lowered and (m["key"] or not (value.startswith(_TRACEBACK_ITEMS) or (
            (said := g.BARE_EXCEPTION_LINE.match(value)) is not None and said["message"]))):
        return None  # (a class's name alone is a list's item of names: `__all__`'s)
    return value, bool(m["closed"]) and not m["comma"]


# A pretty-printed error object's class and text, each on a line of its own (VS Code's copy of a notebook's error:
# `"name": ...,` then `"message": ...,` above its `"stack"`; an .ipynb output's `"ename"` and `"evalue"`).
_TYPE_ALONE = lazyregex.compile(r'[ \t]*"e?name": ?"(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))",[ \t]*')
_TEXT_ALONE = lazyregex.compile(r'[ \t]*"(?:message|evalue)": ?"(?P<body>(?:[^"\\]|\\.)*+)",?[ \t]*')


def member_error(previous: str, text: str) -> str | None:
    """The error an error object's members tell, where `text` is its text's line and `previous`, the line above it,
    its class's (what a copy cut inside the object's traceback keeps of its message); else None."""
    if (told := _TEXT_ALONE.fullmatch(text)) is None or (typed := _TYPE_ALONE.fullmatch(previous)) is None:
        return None
    try:
        message = json.loads(f'"{told["body"]}"')
    except ValueError:
        return None
    return f"{typed['type']}: {message}" if message.strip() else None  # (without a message, the header names it)


def split_lines(text: str) -> list[str]:
    """A message's lines, at most as many as one traceback block holds (a crafted one may hold millions)."""
    return text.split("\n", _MAX_MESSAGE_LINES)[:_MAX_MESSAGE_LINES]


def _docker(value: dict) -> Envelope | None:
    log, stream = value.get("log"), value.get("stream")
    if not isinstance(log, str) or stream not in _DOCKER_STREAMS or "time" not in value:
        return None
    time = value["time"]
    partial = not log.endswith("\n") and (
        value["logtag"] == "P" if "logtag" in value else len(log.encode("utf-8", "replace")) >= _DOCKER_PIECE)
    return Envelope(_encodable(log.removesuffix("\n")), stream, None, None,
                    parse_timestamp(time) if isinstance(time, str) else None, partial)


def _piped(value: dict) -> Envelope | None:
    """A line relayed with the standard stream it came from named (`pipe` or `stream`) and no message of a
    record: the line under a key of its own."""
    stream = value.get("pipe", value.get("stream"))
    if stream not in _DOCKER_STREAMS or any(key in value for key in _RECORD_KEYS):
        return None
    line = next((value[k] for k in _LINE_KEYS if isinstance(value.get(k), str)), None)
    return None if line is None else Envelope(_encodable(line.removesuffix("\n")), stream, None, None, None)


def _journal(value: dict) -> Envelope | None:
    message = value.get("MESSAGE")
    if "__REALTIME_TIMESTAMP" not in value and "_PID" not in value:
        return None
    if isinstance(message, list) and all(isinstance(b, int) and 0 <= b < 256 for b in message):
        message = bytes(message).decode("utf-8", errors="replace")
    if not isinstance(message, str):  # journalctl prints null for a field over 4 KiB unless --all
        return None
    host, pid = _first_str(value, ("_HOSTNAME",)), _first_str(value, ("_PID",))
    ident = _first_str(value, ("SYSLOG_IDENTIFIER", "_COMM")) or ""
    return Envelope(_encodable(message.removesuffix("\n")), f"{host or ''} {ident}[{pid or ''}]",
                    pid and f"pid={pid}", host, _microseconds(value.get("__REALTIME_TIMESTAMP")))


def _error_response(value: dict) -> AppRecord | None:
    """An OpenAI-compatible server's error body as a client prints it (vLLM's and SGLang's `{"object": "error",
    "message": "...", "type": "BadRequestError", "code": 400}`, or those fields under `error`): the error it names,
    as an exception line. (OpenAI's own types, `invalid_request_error`, name no class: not one.)"""
    inner = value.get("error")
    if value.get("object") == "error":
        error = value
    elif isinstance(inner, dict) and "stack_trace" not in inner and not any(key in value for key in _MESSAGE_KEYS):
        error = inner  # (not a log record: Elastic's ECS keeps a logged exception there, see _ecs_traceback)
    else:
        return None
    kind, message = error.get("type"), error.get("message")
    if not isinstance(kind, str) or not isinstance(message, str) or not _ERROR_TYPE.fullmatch(kind):
        return None
    said = message if message.startswith(f"{kind}: ") else f"{kind}: {message}"
    return AppRecord(tuple(split_lines(_encodable(said).rstrip("\n"))), (), None, None, None, None)


def _app_record(value: dict) -> AppRecord | None:
    message = next((value[k] for k in _MESSAGE_KEYS if isinstance(value.get(k), str)), None)
    if message is None:
        return None
    for extra in ([value.get(key) for key in _TRACE_KEYS] + [_ecs_traceback(value.get("error"))]
                  + [_dict_traceback(value.get(key)) for key in _DICT_TRACE_KEYS]):
        if isinstance(extra, str) and extra.strip() and extra not in message:
            message = message.rstrip("\n") + "\n" + extra
    host = _first_str(value, ("host", "hostname", "node"))
    rank = _first_str(value, ("rank", "tp_rank", "worker"))
    pid = _first_str(value, ("pid", "process"))
    rank = f"rank{rank}" if rank and rank.isdigit() else rank or (pid and f"pid={pid}")
    lines = split_lines(_encodable(message).rstrip("\n"))
    others = {key: item for key, item in value.items() if key not in _MESSAGE_KEYS and key not in _TRACE_KEYS}
    return AppRecord(tuple(lines), tuple(part for part in (host, rank) if part), rank, host,
                     parse_timestamp(_first_str(value, _TIME_KEYS)), _digest(others))


def _digest(fields: dict) -> str | None:
    """Kept per channel, so small whatever the record holds."""
    try:
        text = stream_key(json.dumps(fields, sort_keys=True))
    except (ValueError, RecursionError):  # nested as deep as the decoder went: no digest, no stream
        return None
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _ecs_traceback(error: object) -> str | None:
    """Elastic's ECS formatters keep an exception as `error.type` (the class's name), `error.message`
    and `error.stack_trace` (its frames as `traceback.format_tb` prints them): put back together, the
    traceback Python would print (without the exceptions chained to it, which ECS drops)."""
    if not isinstance(error, dict):
        return None
    kind, text, frames = error.get("type"), error.get("message"), error.get("stack_trace")
    if not isinstance(kind, str) or not isinstance(frames, str) or not frames.startswith("  File "):
        return None
    line = f"{kind}: {text}" if isinstance(text, str) and text else kind
    return "Traceback (most recent call last):\n" + frames.rstrip("\n") + "\n" + line


_DICT_TRACE_KEYS = ("exception", "error_detail")  # (structlog's own; Airflow 3's)
_CHAINED = {True: g.CAUSE_SEPARATOR, False: g.CONTEXT_SEPARATOR}


def _dict_traceback(stacks: object) -> str | None:
    """structlog's `dict_tracebacks` (Airflow 3 keeps it as `error_detail`): a list of the exceptions of a chain, the
    one raised first and each cause or context after it (`is_cause`), with its class, text, notes and frames (places
    without their source lines). Put back together: the traceback Python would print, the innermost first."""
    if not isinstance(stacks, list) or not stacks or not all(
            isinstance(stack, dict) and isinstance(stack.get("exc_type"), str) for stack in stacks):
        return None
    told: list[str] = []
    for stack in reversed(stacks):
        frames = [frame for frame in stack.get("frames") or () if isinstance(frame, dict)]
        if frames:
            told.append(g.HEADER_TEXT)
        for frame in frames:
            told.append(f'  File "{frame.get("filename")}", line {frame.get("lineno")}, in {frame.get("name")}')
            if isinstance(line := frame.get("line"), str) and line.strip():
                told.append(f"    {line.strip()}")
        value = stack.get("exc_value")
        told.append(f"{stack['exc_type']}: {value}" if isinstance(value, str) and value else stack["exc_type"])
        told += [note for note in stack.get("exc_notes") or () if isinstance(note, str)]
        told += ["", _CHAINED[bool(stack.get("is_cause"))], ""]
    return "\n".join(told[:-3])


def _microseconds(value: object) -> datetime | None:
    """journald's times: microseconds since the epoch, as a string; the UTC wall clock."""
    if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
        return None
    try:
        return _EPOCH + timedelta(microseconds=int(value))
    except OverflowError:
        return None


def _first_str(record: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return _encodable(str(value))
    return None


def _encodable(text: str) -> str:
    """JSON may escape half a surrogate pair (`"\\ud800"`); such a string cannot be printed or written
    as UTF-8, so each one becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text
