"""Line normalising: strip the prefixes real server logs put on lines, keep them as metadata.

Two kinds of prefix matter (see shared/notes/log-formats.md):
- per-line prefixes (container runtimes, journald, Ray/vLLM workers, torchrun `[rank3]:`) are on
  every line a process prints, so they tell interleaved processes apart line by line: the channel;
- per-message prefixes (SGLang's `[time TP3] `, Python logging formats) are on the first line of a
  log record only; the unprefixed lines after them continue that record, so they inherit its stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import regex

from analyzer.core.records import LogLine

__all__ = ["LineNormalizer", "strip_ansi", "parse_timestamp"]

_ANSI = regex.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")

# Per-line prefixes, outermost first.
_CONTAINER = regex.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r"(?: (?P<std>stdout|stderr) (?P<tag>[FP]))? "
)
_SYSLOG = regex.compile(
    r"^(?:(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) )?"
    r"(?P<host>[A-Za-z0-9][\w.-]*) (?P<proc>[\w./@-]+)\[(?P<pid>\d+)\]: "
)
_WORKER = regex.compile(
    r"^\((?:(?P<name>[\w.:-]+)(?: rank=(?P<rank>\d+))? )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^)\s]+))?\)\s"
)
_TORCHRUN = regex.compile(r"^\[(?:rank|default)(?P<rank>\d+)\]:\s?")

# Per-message prefixes.
_SGLANG = regex.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<tags>(?: [A-Za-z_]*[A-Za-z]\d+)*)\] "
)
_LOGGING_ASCTIME = regex.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?) - (?P<name>\S+) - "
    r"(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG) - "
)
_LOGGING_BASIC = regex.compile(r"^(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG):(?P<name>[\w.-]*):")
_VLLM = regex.compile(
    r"^(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"(?:\[[\w./-]+:\d+\] )?"
)

_JSON_MESSAGE_KEYS = ("message", "msg", "log", "text", "event")
_JSON_TRACE_KEYS = ("exc_info", "exc_text", "exception", "stack_trace", "traceback", "stack")
_JSON_TIME_KEYS = ("time", "timestamp", "ts", "@timestamp", "asctime")
_MAX_JSON_LINE = 4 * 1024 * 1024
_MAX_JSON_MESSAGE_LINES = 5000  # as many as one traceback block holds; a crafted record may hold millions
_SURROGATE = regex.compile("[\ud800-\udfff]")  # what is left of them after json.loads joined the pairs
_MAX_CHANNELS = 4096  # channels remembered per file; crafted input can name a new one on every line


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def parse_timestamp(text: str | None) -> datetime | None:
    """ISO-like timestamps with a year; nanosecond fractions are cut to microseconds.

    The wall clock is kept as printed and a UTC offset dropped: a container runtime's stamp
    (`...Z`) and the server's own naive one on the same line must compare with each other.
    """
    if not text:
        return None
    text = text.replace(",", ".").replace("Z", "+00:00")
    head, dot, rest = text.partition(".")
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[:min(digits, 6)] + rest[digits:]
        text = f"{head}.{rest}"
    try:
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        return None


@dataclass(slots=True)
class _Meta:
    """What the prefixes of one line said, gathered while peeling them off."""

    channel: tuple[str, ...] = ()
    tags: str | None = None  # per-message stream tag; None when the line has no such prefix
    rank: str | None = None
    host: str | None = None
    timestamp: datetime | None = None
    starts_message: bool = False


class LineNormalizer:
    """Stateful per input file: remembers each channel's last message stream and timestamp."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._last_tags: dict[tuple[str, ...], str] = {}
        self._last_rank: dict[tuple[str, ...], str | None] = {}
        self._last_time: dict[tuple[str, ...], datetime | None] = {}

    def normalize(self, raw: str, lineno: int) -> list[LogLine]:
        """One raw line -> one LogLine, or several when a JSON record holds a multi-line message."""
        text = strip_ansi(raw).rstrip("\r\n")  # colours first: a reset code may follow the \r of a CRLF
        if "\r" in text:  # progress bars redraw with \r: keep what the terminal would show last
            text = next((part for part in reversed(text.split("\r")) if part), "")
        if text.startswith("{") and text.endswith("}") and len(text) < _MAX_JSON_LINE:
            lines = self._from_json(text, lineno)
            if lines is not None:
                return lines
        return [self._line(text, lineno, _Meta())]

    def _line(self, text: str, lineno: int, meta: _Meta, prefix: str = "") -> LogLine:
        body, peeled = self._peel(text, meta)
        prefix += peeled
        channel = meta.channel
        if meta.tags is not None:
            _remember(self._last_tags, channel, meta.tags)
            _remember(self._last_rank, channel, meta.rank)
        tags = self._last_tags.get(channel, "")
        rank = meta.rank if meta.tags is not None or meta.rank else self._last_rank.get(channel)
        if meta.timestamp is not None:
            _remember(self._last_time, channel, meta.timestamp)
        return LogLine(
            text=body,
            file=self.file,
            lineno=lineno,
            stream="|".join(channel) + "#" + tags,
            channel="|".join(channel),
            rank=rank,
            host=meta.host,
            timestamp=meta.timestamp or self._last_time.get(channel),
            prefix=prefix,
            starts_message=meta.starts_message,
        )

    def _peel(self, text: str, meta: _Meta) -> tuple[str, str]:
        """Strip prefixes layer by layer, each kind at most once, outermost first."""
        peeled = []
        kinds = [_CONTAINER, _SYSLOG, _WORKER, _TORCHRUN, _SGLANG, _LOGGING_ASCTIME, _LOGGING_BASIC, _VLLM]
        progress = True
        while progress and text:
            progress = False
            for kind in kinds:
                m = kind.match(text)
                if m is None:
                    continue
                self._record(kind, m, meta)
                peeled.append(m.group(0))
                text = text[m.end():]
                kinds.remove(kind)
                progress = True
                break
        return text, "".join(peeled)

    @staticmethod
    def _record(kind: regex.Pattern, m: regex.Match, meta: _Meta) -> None:
        groups = m.groupdict()
        if groups.get("ts"):
            meta.timestamp = parse_timestamp(groups["ts"]) or meta.timestamp
        if kind is _SYSLOG:
            meta.host = groups["host"]
            meta.channel += (f"{groups['host']} {groups['proc']}[{groups['pid']}]",)
            meta.rank = meta.rank or f"pid={groups['pid']}"
        elif kind is _WORKER:
            meta.host = groups["ip"] or meta.host
            meta.channel += (f"pid={groups['pid']}@{groups['ip'] or ''}",)
            meta.rank = f"rank{groups['rank']}" if groups["rank"] else f"pid={groups['pid']}"
        elif kind is _TORCHRUN:
            meta.channel += (f"rank{groups['rank']}",)
            meta.rank = f"rank{groups['rank']}"
        elif kind is _SGLANG:
            tags = groups["tags"].strip()
            meta.tags = tags
            meta.rank = tags or meta.rank
            meta.starts_message = True
        elif kind in (_LOGGING_ASCTIME, _LOGGING_BASIC, _VLLM):
            meta.tags = ""
            meta.starts_message = True

    def _from_json(self, text: str, lineno: int) -> list[LogLine] | None:
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the decoder goes
            return None
        if not isinstance(record, dict):
            return None
        message = next((record[k] for k in _JSON_MESSAGE_KEYS if isinstance(record.get(k), str)), None)
        if message is None:
            return None
        for key in _JSON_TRACE_KEYS:
            extra = record.get(key)
            if isinstance(extra, str) and extra.strip() and extra not in message:
                message = message.rstrip("\n") + "\n" + extra
        message = _encodable(message)
        meta = _Meta(starts_message=True, tags="")
        meta.host = _first_str(record, ("host", "hostname", "node"))
        rank = _first_str(record, ("rank", "tp_rank", "worker"))
        pid = _first_str(record, ("pid", "process"))
        meta.rank = f"rank{rank}" if rank and rank.isdigit() else rank or (pid and f"pid={pid}")
        meta.channel = tuple(part for part in (meta.host, meta.rank) if part)
        meta.timestamp = parse_timestamp(_first_str(record, _JSON_TIME_KEYS))
        lines = []
        parts = message.rstrip("\n").split("\n", _MAX_JSON_MESSAGE_LINES)[:_MAX_JSON_MESSAGE_LINES]
        for i, part in enumerate(parts):
            line_meta = meta if i == 0 else _Meta(channel=meta.channel, host=meta.host, timestamp=meta.timestamp)
            lines.append(self._line(strip_ansi(part.rstrip("\r")), lineno, line_meta, prefix="{json} " if i == 0 else ""))
        return lines


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


def _remember(table: dict, key: tuple[str, ...], value) -> None:
    """Set `table[key]`, forgetting the channel seen first once there are too many."""
    if key not in table and len(table) >= _MAX_CHANNELS:
        del table[next(iter(table))]
    table[key] = value
