"""Line normalising: strip the prefixes real server logs put on lines, keep them as metadata.

The prefixes the parser knows are in `prefixes.py`; those it learns on the way, in `infer_prefix.py`;
what JSON lines hold (a collector's envelope of one line, an app's whole record), in `jsonlog.py`.
Peeling goes layer by layer, outermost first, known and learned ones in any order. A line whose body
then holds a traceback header or frame behind more text teaches the parser that text's family.

Streams: the per-line prefixes form the line's channel, the per-message ones a tag that the unprefixed
lines after them inherit. A learned prefix joins the channel (see `_learned_channel` for the lines of a
traceback whose header alone had one).
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Hashable
from datetime import datetime
from functools import lru_cache
from typing import TypeVar

from analyzer.core import awslambda, azure, collapsed, csvexport, ipython, jsonlog, lazyregex, native
from analyzer.core import grammar as g
from analyzer.core import infer_prefix as infer
from analyzer.core.prefixes import (
    CONTAINER,
    KNOWN,
    PASTED,
    RICH_HANDLER,
    TORCHRUN,
    WORKER,
    KnownPrefix,
    PrefixMeta,
    known_at,
    parse_timestamp,
    read_known,
)
from analyzer.core.records import LogLine
from analyzer.core.yearless import Calendar

__all__ = ["LineNormalizer", "PeelMemo", "may_continue", "parse_timestamp", "strip_ansi"]

_ANSI = lazyregex.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_DOCKER_TAIL = lazyregex.compile(r'\\n","stream":"std(?:out|err)","time":"[^"]+"\}$')  # how Docker's json-file records end
_HTML_TAG = lazyregex.compile(r"</?(?:font|span|b|strong|pre|code)(?:\s[^<>]*)?>")  # the tags a terminal's colours become
# in HTML, and those of preformatted text
# (quotes and brackets: what a traceback's text holds; a line with another alone, `&amp;` in a URL, is kept as it is)
_HTML_ENTITY = lazyregex.compile(r"&(?:quot|apos|lt|gt|#39|#x27|#34|#x22);")
_TIME_ALONE = lazyregex.compile(r"(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)(?: UTC)?[ \t]*$")
_RAY_DEDUP = lazyregex.compile(r" \[repeated \d+x across cluster\]$")  # Ray folds repeated lines into one
# What a prefix a paste shifted by a blank or three may begin with: a bracket, or a date (`2026-01-21 05:28:16,894 - `);
# by four or more (a markdown code block, a list item's, a code block in a list item: up to `_MOST_SHIFT`), only a date,
# ISO or syslog's, or torchrun's rank: a traceback's source line begins with none of them.
_MAY_OPEN_A_PREFIX = lazyregex.compile(r"[(\[]|\d{4}-\d\d-\d\d[ T]")
# Rich's logging handler puts the record's place at the line's right edge (`...  api.py:672`): no part of the message
_RICH_PLACE = lazyregex.compile(r"[ \t]{2,}[\w.<>-]+:\d+[ \t]*$")
_SHIFTED_FOUR = lazyregex.compile(r"\d{4}-\d\d-\d\d[ T]|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d |\[(?:rank|default)\d+\]:")
_MOST_SHIFT = 16  # (the fast path's patterns allow as many: triggers._TIME_START, _STATE)

_MAX_JSON_LINE = 4 * 1024 * 1024
# GitHub Actions' log viewer numbers each line with a link to it (`[2622](https://github.com/o/r/actions/runs/1/job/2#step:19:2623)`),
# which a copy puts on a line of its own above the line
_STEP_LINE_LINK = lazyregex.compile(r"\[\d+\]\(https?://[^\s()]+#step:\d+:\d+\)\s*$")
_MEMBERS_BELOW = 3  # lines from the last string of an error's text (its list's end, a member) to its object's members
_MAX_CHANNELS = 4096  # channels remembered per file; crafted input can name a new one on every line
_ELISION_OPENS = frozenset("#/.[(\u2026-")  # how a mark of lines left out may begin (see grammar.is_elision)
_BARRED_GAP = 4  # lines a frame may be below the landmark before it (its source, carets)
_MAX_PER_CHANNEL = 16  # the streams of learned prefixes remembered in one channel's own tables
_MAX_PARTIAL = 4 * 1024 * 1024  # a container's partial records joined into one line, at most
_MAX_PEELED = 2048  # distinct raw lines whose peeled form is remembered (traceback lines repeat),
_MAX_PEELED_LINE = 1024  # each at most this long: together a few MB at most
# torchrun's prefixes (ranks) up to which its lines are remembered: each rank's lines come again where it fails again;
# past it, the many ranks' lines, each seen once, only churn the memo
_REMEMBERED_RANKS = 64


_NO_PREFIX = PrefixMeta()


# A colour code a viewer's copy shows in caret notation (`^[[31m`: ESC as `^[`, as `cat -v` and CI log pages
# print it); only colour codes, which no text writes so.
_CARET_ANSI = lazyregex.compile(r"\^\[\[[0-9;]*m")
# ... or as syslog daemons escape a control character, `#` and its octal code (rsyslog's `#033[1;36m`, which a
# CloudWatch agent and journald's forwarders pass on)
_OCTAL_ANSI = lazyregex.compile(r"#033\[[0-9;]*m")
# ... or with its ESC lost (an issue tracker drops the control character from a pasted log: `[36m(pid=12)[0m `):
# read so only on a line that resets the colour, as a coloured span ends; not where the ESC is written as an
# escape sequence (a JSON record's `\u001b[0m`, a shell's `\033[0m`), which what decodes the line reads.
_SPELLED_ESC = r"(?<!\\(?:u001[bB]|x1[bB]|033|e))"
_LOST_ESC_ANSI = lazyregex.compile(_SPELLED_ESC + r"\[[0-9]{1,3}(?:;[0-9]{1,3})*m")
_LOST_ESC_RESET = lazyregex.compile(_SPELLED_ESC + r"\[(?:0|39|0;0)m")  # (as triggers.py finds the lines, and more)


def strip_ansi(text: str) -> str:
    if "^[[" in text:
        text = _CARET_ANSI.sub("", text)
    if "#033[" in text:
        text = _OCTAL_ANSI.sub("", text)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if ("[0" in text or "[39m" in text) and _LOST_ESC_RESET.search(text):
        text = _LOST_ESC_ANSI.sub("", text)
    return text


@dataclasses.dataclass(frozen=True, slots=True)
class _Peeled:
    """A line's text with its prefixes off: what the text alone says, given the families learned."""

    body: str
    prefix: str
    meta: PrefixMeta  # never changed once peeled
    header: str | None  # the introduction of a traceback header the body is, else None
    plain: bool  # no prefix and no header: its line differs from the one before it only in text and number
    spacing: tuple[str, bool | None] | None = None  # a torchrun prefix's, and whose the space after it was then


class PeelMemo:
    """Raw lines' peeled forms, `_MAX_PEELED` at most (then all are forgotten). A normaliser keeps one of the lines of
    its input. An engine keeps one for all its inputs, of the lines whose peeling read nothing of their input but the
    lines themselves (no prefix family learned in it, no line before them, no place in it): every input peels them
    alike while it has learned no family, and the runs of a fleet log the same tracebacks."""

    def __init__(self) -> None:
        self._peeled: dict[str, _Peeled] = {}

    def __len__(self) -> int:
        return len(self._peeled)

    def __contains__(self, raw: str) -> bool:
        return raw in self._peeled

    def get(self, raw: str) -> _Peeled | None:
        return self._peeled.get(raw)

    def remember(self, raw: str, peeled: _Peeled) -> None:
        if len(self._peeled) >= _MAX_PEELED:
            self._peeled.clear()
        self._peeled[raw] = peeled

    def clear(self) -> None:
        self._peeled.clear()


class LineNormalizer:
    """Stateful per input file: remembers each channel's last message stream and timestamp, and the
    prefix families learned so far."""

    def __init__(self, file: str, shared: PeelMemo | None = None, calendar: Calendar | None = None) -> None:
        """`calendar`: the year of stamps printed without one (vLLM's, syslog's); without it they are no times."""
        self.file = file
        self.calendar = calendar
        self.learner = infer.PrefixLearner()
        self._last_tags: dict[tuple[str, ...], str] = {}
        self._last_rank: dict[tuple[str, ...], str | None] = {}
        self._last_time: dict[tuple[str, ...], datetime | None] = {}
        # The per-message prefix of each channel's last line. (Per channel, not per stream: a line read
        # while no record is open changes nothing else, so the fast path may skip it, see chunkscan.py.)
        self._last_message: dict[tuple[str, ...], str] = {}
        # Per channel of known prefixes: the stream of a header with a learned prefix, and whether the
        # traceback lines after it came without one (see _learned_channel).
        self._tentative: dict[tuple[str, ...], tuple[tuple[str, ...], bool]] = {}
        # Per channel of known prefixes, by stream: the text in front of `Traceback` on the stream's last
        # header that is not a known prefix (a learned prefix and the introduction).
        self._header_context: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}
        # Per channel, the learned prefixes a header took (in part) for its message: that header's stream.
        self._adopted: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}
        self._torchrun_spaced: dict[str, bool] = {}
        # A container's partial record per stream: its first line, the text so far, and for Docker's
        # json-file the envelope of its first piece.
        self._partial: dict[str, tuple[int, str, jsonlog.Envelope | None]] = {}
        # Raw lines whose peeling reads no state but the learned families (of the version kept) and a
        # torchrun prefix's spacing (kept with it: a line is peeled again where that changed), and says no
        # time: a traceback's lines, echoed by rank after rank.
        self._peeled = PeelMemo()
        self._peeled_version = self.learner.version
        self._shared = shared  # ... and those of other inputs, while this one has learned no family
        self._read_input = False  # the line being peeled read more of the input than itself (see PeelMemo)
        self._peel_spacing: tuple[str, bool | None] | None = None  # the torchrun spacing the last peel read
        self._frame_first = False  # the input's first line is a frame line without a prefix (see _peel)
        self._boxed_frame_at = -1  # the number of the last frame line read out of a terminal UI's box (see _unboxed)
        self._barred: tuple[int, int] | None = None  # the last landmark behind a number and a bar: its line, its number
        self.time_alone: datetime | None = None  # the time the last line read was, if it held nothing else
        self._previous = (-1, "")  # the last line read, and its number
        self._error_string_at = -_MEMBERS_BELOW - 1  # the number of the last line that was a string of an error's text

    @property
    def holding(self) -> bool:
        """A partial container record waits for its end: the next line must be read."""
        return bool(self._partial)

    def _unboxed(self, text: str, lineno: int) -> str | None:
        """A log line a terminal UI drew in a box (k9s's log view: `│ ERROR 09-27 06:46:46 engine.py:157] ... │`, padded
        to the box's width; or its left edge alone), its text where that is a log line's: it begins with a prefix the
        normaliser knows, or is a traceback's header, frame or exception line, or a source line under such a frame.
        None for any other line in a box: Rich draws its tracebacks in one (its own frames, `/x/y.py:12 in f`, and its
        source in a gutter, `│ ❱ 12 │ ...`, its lines wrapped under it), and `richtb` reads those."""
        inner = text[2:].rstrip()
        inner = inner[:-1].rstrip() if inner.endswith("\u2502") else inner
        if not inner.strip() or "\u2502" in inner:
            return None
        if lineno == self._boxed_frame_at + 1 and inner.startswith("    ") and not _NUMBERED_SOURCE.match(inner):
            return inner
        if g.FRAME.match(inner):
            self._boxed_frame_at = lineno
            return inner
        if g.HEADER.match(inner) or g.BARE_EXCEPTION_LINE.match(inner) or known_at(inner, KNOWN) is not None:
            return inner
        return None

    def normalize(self, raw: str, lineno: int) -> list[LogLine]:
        """One raw line -> one LogLine, none (a partial record, a time alone: `time_alone`), or several (a
        multi-line JSON record)."""
        previous, self._previous = self._previous, (lineno, raw)
        self.time_alone = None
        if self._peeled_version != self.learner.version:
            self._peeled.clear()
            self._peeled_version = self.learner.version
        known = self._known(raw, lineno)
        if known is not None and (known.spacing is None or self._torchrun_spaced.get(known.spacing[0]) == known.spacing[1]):
            return [self._line(known, lineno)]
        text = _shown(raw.rstrip("\n"))
        if text[:1] == "[" and "#step:" in text and _STEP_LINE_LINK.match(text):
            return []  # a CI viewer's link to the next line, on a line of its own in a copy: no line of the log
        if "&" in text or "</" in text or text.startswith(("<pre>", "<code>")):
            text = _unhtml(text)
        if text[:1] in ("[", "(") and (lines := _joined(text)) is not None:  # lines of one channel a paste joined
            return [line for piece in lines for line in self.normalize(piece, lineno)]
        if ("\\u001" in text or text.lstrip()[:1] == '"') and (said := jsonlog.error_string(text)) is not None:
            pieces = jsonlog.split_lines(said[0])  # an error's text kept as JSON (Jupyter's, a formatter's list of a
            # traceback's lines): each of its lines, uncoloured; after the last, the document's
            self._error_string_at = lineno
            return [line for piece in ([*pieces, ""] if said[1] else pieces) for line in self.normalize(piece, lineno)]
        self._read_input = text.lstrip()[:1] == '"'  # (the line before it may tell what it is; see PeelMemo)
        if self._read_input and previous[0] == lineno - 1 and lineno - self._error_string_at > _MEMBERS_BELOW and (
                told := jsonlog.member_error(previous[1], text)):  # (an object's members below its traceback told it)
            return [line for piece in [*jsonlog.split_lines(told), ""] for line in self.normalize(piece, lineno)]
        if "`" in text:
            text = _unfenced(text)
        if text[:1] == "_" or text[:2] in ("**", "*_"):
            text = _unemphasised(text)
        elif text[:2] == "\u2502 ":
            self._read_input = True  # (whether it is a log line in a box may hang on the frame line above it)
            if (inner := self._unboxed(text, lineno)) is not None:
                text = inner
        if "File \u201c" in text:  # a word processor's or a forum's curly quotes around a frame's path
            text = text.replace("\u201c", '"').replace("\u201d", '"')
        if (", line " in text or ", **line " in text) and "File " in text:
            text = _framed(text)
        elif '" Line ' in text:
            text = awslambda.placed(text)  # (AWS Lambda's runtime places a syntax error so)
        elif ", ln " in text and (knack := _KNACK_FRAME.fullmatch(text)) is not None:  # (Azure CLI's debug log: `path, ln N,
            text = f'  File "{knack["path"]}", line {knack["rest"]}'  # in f`, the path cut to its last parts)
        if text[:1] == ">" and text[1:2].isalpha() and g.BARE_EXCEPTION_LINE.match(text[1:]):
            text = text[1:]  # a markdown quote's `>` glued to an exception line
        elif text.startswith(">>> ") and g.BARE_EXCEPTION_LINE.match(text[4:]):
            text = text[4:]  # ... or three levels of it (which a REPL's prompt reads as: no output follows one)
        elif text[:1] == "#" and g.BARE_EXCEPTION_LINE.match(unheaded := _unheaded(text)):
            text = unheaded  # ... or a markdown heading's marks (a paste unfenced: `## ImportError: ...`)
        if "\\_\\_" in text:
            text = _ESCAPED_DUNDER.sub(r"__\1__", text)  # a dunder name as markdown's source escapes it: `\_\_init\_\_`
        joined = self._join_partial(text, lineno)
        if joined is None:
            return []
        text, lineno = joined
        if text[-1:] == "}" and text[:1] != "{" and len(text) < _MAX_JSON_LINE and _DOCKER_TAIL.search(text) and (
                isinstance(whole := jsonlog.read('{"log":"' + text), jsonlog.Envelope)):
            return self._unwrap(whole, lineno)  # a paste begun inside Docker's record of a line: its opening put back
        if text[:1].isdigit() and (',"' in text[:32] or text[13:14] == ",") and (exported := csvexport.row(text)) is not None:
            return self._unwrap(exported, lineno)  # a row of a log exported as a table
        if text.startswith("{") and text.endswith("}") and len(text) < _MAX_JSON_LINE:
            found = jsonlog.read(text)
            if isinstance(found, jsonlog.Envelope):
                return self._unwrap(found, lineno)
            if found is not None:
                return self._record_lines(found, lineno, PrefixMeta(), "")
        # (a line that begins with a digit may be a container's record: joining reads state)
        return self._lines(text, lineno, PrefixMeta(), key=None if text[:1].isdigit() else raw)

    def _known(self, raw: str, lineno: int) -> _Peeled | None:
        """The line's peeled form, if it was remembered here or, while this input has learned no family, by another
        (but for the second line after a frame without a prefix, which may be a source line: see _peel)."""
        known = self._peeled.get(raw)
        if known is None and self._shared is not None and not self.learner.version and not (lineno == 2 and self._frame_first):
            known = self._shared.get(raw)
        return known

    def plain_lines(self, raws: list[str], lineno: int) -> tuple[list[str], LogLine] | None:
        """Lines numbered from `lineno`, each peeled before and found to have no prefix (a traceback's
        frames, echoed): their texts, and the first as a LogLine, which the others are but for text
        and number; None, and nothing read, unless every one is such a line. Each would change the
        channel's state as the first does, so the state is read once."""
        if self._peeled_version != self.learner.version or not self._tentative.get((), (None, True))[1]:
            return None  # (a frame among them would change where the lines after them go: _learned_channel)
        peeled = [known for known in (self._known(raw, lineno + k) for k, raw in enumerate(raws))
                  if known is not None and known.plain]
        if len(peeled) < len(raws) or not peeled or (not peeled[0].body.strip() and any(p.body.strip() for p in peeled)):
            return None  # (a blank line changes less than the others: see _line)
        return [known.body for known in peeled], self._line(peeled[0], lineno)

    def finish(self) -> list[LogLine]:
        """End of input: a partial record that never got its end is a line of its own."""
        held, self._partial = sorted(self._partial.values(), key=lambda h: h[0]), {}
        return [line for lineno, text, envelope in held
                for line in (self._lines(text, lineno, PrefixMeta()) if envelope is None
                             else self._unwrap(dataclasses.replace(envelope, text=text, partial=False), lineno))]

    def _join_partial(self, text: str, lineno: int) -> tuple[str, int] | None:
        """Container runtimes split lines over 16 KiB into partial records (`stdout P`) ended by a full
        one (`stdout F`); joined, they are the line the program wrote. None while a record is partial."""
        m = CONTAINER.pattern.match(text) if text[:1].isdigit() else None
        if m is None or not m["std"]:
            return text, lineno
        held = self._partial.pop(m["std"], None)
        if held is not None:
            lineno, text = held[0], held[1] + text[m.end():]
        if m["tag"] == "P" and len(text) < _MAX_PARTIAL:
            self._partial[m["std"]] = (lineno, text, None)
            return None
        return text, lineno

    def _unwrap(self, envelope: jsonlog.Envelope, lineno: int) -> list[LogLine]:
        """The line a collector's JSON envelope holds, its pieces joined (Docker splits lines over
        16 KiB); the envelope is a per-line prefix naming the process."""
        key = "json " + envelope.channel
        held = self._partial.pop(key, None)
        if held is not None:
            lineno, envelope = held[0], dataclasses.replace(held[2] or envelope, text=held[1] + envelope.text,
                                                            partial=envelope.partial)
        if envelope.partial and len(envelope.text) < _MAX_PARTIAL:
            self._partial[key] = (lineno, envelope.text, envelope)
            return []
        meta = PrefixMeta(channel=(envelope.channel,), rank=envelope.rank, host=envelope.host,
                          timestamp=envelope.timestamp)
        first, *more = map(_shown, jsonlog.split_lines(envelope.text))  # journald's may hold several lines
        lines = self._lines(first, lineno, meta, "{json} ", enveloped=True)
        for text in more:
            lines += self._lines(text, lineno, PrefixMeta(channel=meta.channel, rank=meta.rank, host=meta.host,
                                                         timestamp=meta.timestamp), enveloped=True)
        return lines

    def _lines(self, text: str, lineno: int, meta: PrefixMeta, prefix: str = "",
               enveloped: bool = False, key: str | None = None) -> list[LogLine]:
        """The line without its prefixes; several when what is left is a JSON log record (behind
        prefixes or in an envelope: a bare one was read already). `key`: the raw line to remember the
        peeled form under, if peeling it read no state (the next time, only `_line` runs)."""
        version = self.learner.version
        if text.endswith("]"):
            text = _RAY_DEDUP.sub("", text)
        body, record = self._peel(text, meta, lineno, enveloped, source=lineno == 2 and self._frame_first)
        if body[:1].isdigit() and (alone := _TIME_ALONE.match(body)) is not None and (
                stamp := parse_timestamp(alone["ts"])) is not None:
            # a log console's copy that puts each record's time on a line of its own above it: the time of the
            # lines after it, which it does not part (a traceback's lines go on below it)
            _remember(self._last_time, meta.channel, meta.timestamp or stamp)
            self.time_alone = meta.timestamp or stamp
            return []
        prefix += text[:len(text) - len(body)]
        if record is not None:
            return self._record_lines(record, lineno, meta, prefix)
        if ": : " in body or body.endswith(g.EXCEPTION_SUFFIXES):  # (the call costs more than this test)
            body = g.in_step_copies(body) or body  # an exception line ranks printed at once
        opens_collapsed = (collapsed.MARK in body or collapsed.SPACED_MARK in body or body.startswith(collapsed.FRAME_MARK)
                           or (body.startswith(collapsed.CUT_MARK) and ' File "' in body))  # (else a line of words: below)
        pieces = (collapsed.uncollapsed(body) if opens_collapsed
                  else ipython.uncollapsed(body) if ipython.FLAT_MARK in body
                  else azure.unflattened(body) if azure.FLAT_MARK in body
                  else collapsed.raise_glued(body) if collapsed.RAISE_MARK in body[:32]
                  else collapsed.unescaped(body) if collapsed.ESCAPED in body and not awslambda.opens(body)
                  else None)  # a traceback that lost its breaks (maybe its header too; IPython's too), or holds them
        # escaped (not in the error object AWS Lambda returns, which holds its frames so: awslambda reads it whole)
        if pieces:
            first = self._line(_Peeled(pieces[0], prefix, meta, _header_context(pieces[0]), False), lineno)
            return [first, *(dataclasses.replace(first, text=piece, starts_message=False) for piece in pieces[1:])]
        header = _header_context(body)
        peeled = _Peeled(body, prefix, meta, header, not prefix and header is None and meta == _NO_PREFIX, self._peel_spacing)
        # A line with a time is seldom seen twice: not worth a place.
        if (key is not None and len(key) <= _MAX_PEELED_LINE and meta.timestamp is None
                and version == self.learner.version
                and (self._peel_spacing is None or len(self._torchrun_spaced) <= _REMEMBERED_RANKS)):
            self._remember_peeled(key, peeled)
            if self._shared is not None and version == 0 and peeled.spacing is None and not self._read_input:
                self._shared.remember(key, peeled)
        return [self._line(peeled, lineno)]

    def _remember_peeled(self, raw: str, peeled: _Peeled) -> None:
        self._peeled.remember(raw, peeled)

    def _line(self, peeled: _Peeled, lineno: int) -> LogLine:
        body, meta, prefix = peeled.body, peeled.meta, peeled.prefix
        if lineno == 1:
            self._frame_first = not prefix and bool(g.frame_line(body) or g.frame_cut_at_start(body))
        channel = self._learned_channel(meta, body, peeled.header)
        continued = meta.starts_message and self._continues(self._last_message.get(channel), meta, peeled)
        if meta.tags is not None and not continued:
            _remember(self._last_tags, channel, meta.tags)
            _remember(self._last_rank, channel, meta.rank)
        tags = self._last_tags.get(channel, "")
        if prefix or ((stripped := body.strip()) and not (stripped[0] in _ELISION_OPENS and g.is_elision(stripped))):
            # (a blank line alone between a record's lines is a paste's doubled line break; a mark of lines left out
            # is the paster's, and the record goes on after it)
            _remember(self._last_message, channel, meta.message_prefix)
        rank = meta.rank if (meta.tags is not None and not continued) or meta.rank else self._last_rank.get(channel)
        if meta.timestamp is not None:
            _remember(self._last_time, channel, meta.timestamp)
        name = "|".join(channel)
        # (positional: a frozen dataclass's keywords cost a third more, on every line)
        return LogLine(body, self.file, lineno, name + "#" + tags, name, rank, meta.host,
                       meta.timestamp or self._last_time.get(channel), prefix,
                       meta.starts_message and not continued)

    def _learned_channel(self, meta: PrefixMeta, body: str, header: str | None) -> tuple[str, ...]:
        """The channel with the learned prefixes' keys.

        A header and the lines after it may disagree on what the prefix is. Its introduction may read as
        a prefix (a progress bar glued to it, an odd message) while its frames have none: until a line
        with a learned prefix comes, the unprefixed traceback lines of the channel stay in the header's
        stream, and once a frame came so, every unprefixed line. Or its prefix reads as a message, in
        whole (`a b] `) or in part (`(App) 12:00:01.5 Server ERROR: `, of which only the time reads as a
        prefix), and only its frames teach it: the lines with that prefix then take the header's stream,
        and the lines of the header's stream without a learned prefix move aside.
        (Headers and frames are read on the fast path too: no line it skips changes this state.)
        `header`: the introduction of the traceback header the body is, if it is one."""
        if not meta.inferred:
            if header is not None:
                self._remember_header(meta.channel, meta.channel, header)
        else:
            family = " ".join(meta.inferred)
            adopted = self._adopted.get(meta.channel, {})
            own = (*meta.channel, family)
            if header is None and family not in adopted:
                introduced = next((stream for stream, pretext in reversed(self._header_context.get(meta.channel, {}).items())
                                       if stream != own and _introduced_by(pretext, meta.learned)), None)
                if introduced is not None:
                    _remember(self._adopted, meta.channel, adopted)
                    _bounded_set(adopted, family, introduced)
            stream = adopted.get(family, own)
            if header is not None:
                self._remember_header(meta.channel, stream, meta.learned + header)
            if header is not None or g.BARE_EXCEPTION_LINE.match(body):  # its traceback's lines may follow
                _remember(self._tentative, meta.channel, (stream, False))  # unprefixed (or pybind11's stack)
            else:
                self._tentative.pop(meta.channel, None)
            return stream
        tentative = self._tentative.get(meta.channel)
        if tentative is not None:
            stream, kept = tentative
            if not kept and g.FRAME.match(body):
                self._tentative[meta.channel] = (stream, True)
                kept = True
            if kept or _reads_as_traceback(body, header):
                return stream
        aside = meta.channel in self._adopted.get(meta.channel, {}).values()
        return (*meta.channel, "unprefixed") if aside else meta.channel

    def _remember_header(self, channel: tuple[str, ...], stream: tuple[str, ...], pretext: str) -> None:
        headers = self._header_context.get(channel)
        if headers is None:
            _remember(self._header_context, channel, headers := {})
        headers.pop(stream, None)  # the latest last
        _bounded_set(headers, stream, pretext)

    def _continues(self, last: str | None, meta: PrefixMeta, peeled: _Peeled) -> bool:
        """A per-message prefix repeated on the channel's next line continues its record: formatters such
        as vLLM's print a record's prefix on each of its lines. Where the clock ticked over between them
        (a collector that split the record), or the record's first line had one more inside (a launcher
        that logs each line its server prints, the server's own prefix on the first), the line must
        also read as more of a traceback."""
        if not last:
            return False
        if last == meta.message_prefix:
            return True
        return (_reads_as_traceback(peeled.body, peeled.header)
                and _stream_key(last).startswith(_stream_key(meta.message_prefix)))

    def _peel(self, text: str, meta: PrefixMeta, lineno: int, enveloped: bool = False,
              source: bool = False) -> tuple[str, jsonlog.AppRecord | None]:
        """Strip prefixes layer by layer, each kind and family at most once, outermost first; then learn
        the prefix in front of a traceback landmark, if the line holds one (with `source`, the input's second
        line after a frame line without a prefix: a source line too). Returns the body, and the JSON log
        record it is, if it is one (behind a container's or kubectl's time, say)."""
        self._peel_spacing = None  # (here, not in the caller: a type checker would hold it None there past this call)
        kinds = list(KNOWN)
        used: set[int] = set()
        start = len(text)
        if (text[:1] in ("\t", ">", "\xa0") or text[:1].isdigit() or text[5:6].isdigit()) and (
                pasted := PASTED.pattern.match(text)) is not None:
            text = text[pasted.end():]
        if text[:1] == " " and (shift := len(text) - len(shifted := text.lstrip(" "))) <= _MOST_SHIFT and (
                _SHIFTED_FOUR.match(shifted) if shift >= 4 else _MAY_OPEN_A_PREFIX.match(shifted)) and (
                rest := self._peel_one(shifted, kinds, used, meta)) is not None:
            text = rest  # a paste's blanks in front of a prefix (no traceback line begins with one)
        while text and (rest := self._peel_one(text, kinds, used, meta)) is not None:
            text = rest
        if (enveloped or len(text) < start) and text.startswith("{") and text.endswith("}") and len(text) < _MAX_JSON_LINE:
            record = jsonlog.read(text)
            if isinstance(record, jsonlog.AppRecord):
                return text, record
        found = infer.landmark_pretext(text, nested=len(text) < start)
        self._read_input |= source
        if found is None and source and (pretext := infer.source_pretext(text)) is not None:
            found = (pretext, False)  # (a paste begun inside the log's traceback: its first line's prefix cut off)
        if found is not None:
            text = self._learn(text, len(found[0]), found[1], kinds, used, meta, lineno, behind=len(text) < start)
        return text, None

    def _peel_one(self, text: str, kinds: list[KnownPrefix], used: set[int], meta: PrefixMeta) -> str | None:
        if (known := known_at(text, kinds)) is not None:
            kind, m = known
            read_known(kind, m, meta, self.calendar)
            kinds.remove(kind)
            end = m.end()
            if kind is TORCHRUN:
                key = m.group(0)[:-1] if m["space"] else m.group(0)
                spaced = self._torchrun_space(key, text[end - 1:] if m["space"] else text[end:])
                end -= bool(m["space"]) and not spaced
                self._peel_spacing = (key, self._torchrun_spaced.get(key))
            return _RICH_PLACE.sub("", text[end:], count=1) if kind is RICH_HANDLER else text[end:]
        found = self.learner.match(text, used)
        if found is None:
            return None
        index, end = found
        used.add(index)
        _read_learned(text[:end], meta, self.learner.family(index).margin, self.calendar)
        return text[end:]

    def _torchrun_space(self, prefix: str, rest: str) -> bool:
        """Whether the space after `[rank0]:` is the prefix's. A line whose text starts right after the
        colon (`[default0]:Traceback`) or after one space (`[rank0]: Traceback`) tells for that prefix;
        until one has, a traceback's indentation does: it is even (2 for frames, 4 for code)."""
        if rest[:1] == " " and rest[1:2].strip():
            _remember(self._torchrun_spaced, prefix, True)
        elif rest.strip() and not rest[0].isspace():
            _remember(self._torchrun_spaced, prefix, False)
        spaced = self._torchrun_spaced.get(prefix)
        return spaced if spaced is not None else (len(rest) - len(rest.lstrip(" "))) % 2 == 1

    def _learn(self, text: str, end: int, is_header: bool, kinds: list[KnownPrefix], used: set[int],
               meta: PrefixMeta, lineno: int, behind: bool) -> str:
        """`text[:end]` stands in front of a traceback landmark: peel what of it is prefixes, learning the
        families of those nobody listed. A known prefix inside it marks where an unknown one ends; a copy's margin
        (line numbers, grep's file) is outside them all. `behind`: the line's known prefixes were peeled before it."""
        margin = self._margin(text, end, kinds, lineno)
        if margin < 0:
            return text  # (the next landmark tells a copy's numbers from a process's)
        if margin > 0:
            self._take_learned(text[:margin], meta, used, margin=True)
            text, end = text[margin:], end - margin
            while text and (rest := self._peel_one(text, kinds, used, meta)) is not None:
                end, text = end - (len(text) - len(rest)), rest
            if end <= 0:
                return text
        while True:
            at = _known_inside(text[:min(end, infer.MAX_PREFIX)], kinds)
            if not at:
                break
            self._take_learned(text[:at], meta, used)
            text, end = text[at:], end - at
            while text and (rest := self._peel_one(text, kinds, used, meta)) is not None:
                end, text = end - (len(text) - len(rest)), rest
            if end <= 0:
                return text
        pretext = text[:end]
        piece = (_header_prefix_behind if behind else _header_prefix)(pretext) if is_header else pretext if infer.plausible(
            pretext, gutter=infer.gutter_before_frame(text, end), behind_prefix=behind) else ""
        if piece:
            self._take_learned(piece, meta, used)
            text = text[len(piece):]
            while text and (rest := self._peel_one(text, kinds, used, meta)) is not None:
                text = rest  # (a known prefix behind it: a collector's time in front of torchrun's rank)
        return text

    def _margin(self, text: str, end: int, kinds: list[KnownPrefix], lineno: int) -> int:
        """Where a copy's margin in front of the landmark that `end` is at ends (0: none): right in front of it (or of an
        exception group's box) or of a known prefix. A number and a bar only where the last landmark behind one had its number as many lines back (a
        process's id in front of its lines stays); -1 where no such landmark is near: the next one tells."""
        margin, alone = infer.margin_end(text, end)
        if not margin or not (alone or known_at(text[margin:], kinds) is not None):
            return 0
        if (number := infer.barred_number(text[:margin])) is None:
            return margin
        last, self._barred = self._barred, (lineno, number)
        self._read_input = True
        if last is None or not 0 < lineno - last[0] <= _BARRED_GAP:
            return -1
        return margin if number - last[1] == lineno - last[0] else 0

    def _take_learned(self, piece: str, meta: PrefixMeta, used: set[int], margin: bool = False) -> None:
        index = self.learner.learn(piece, margin)
        used.add(index)
        _read_learned(piece, meta, self.learner.family(index).margin, self.calendar)

    def _record_lines(self, record: jsonlog.AppRecord, lineno: int, meta: PrefixMeta, prefix: str) -> list[LogLine]:
        """A JSON log record's lines: the first starts a message, the rest continue it. Records of one
        line each with the same other fields are one stream's lines (see `_continues`)."""
        meta.channel += record.channel
        meta.host = record.host or meta.host
        meta.rank = record.rank or meta.rank
        meta.timestamp = record.timestamp or meta.timestamp
        meta.starts_message, meta.tags = True, ""
        if len(record.lines) == 1 and record.fields is not None:
            meta.message_prefix = "{json " + record.fields + "}"
        first, *more = map(_shown, record.lines)  # each with prefixes of its own, maybe
        lines = self._lines(first, lineno, meta, prefix + "{json} ")
        for text in more:
            lines += self._lines(text, lineno, PrefixMeta(channel=meta.channel, rank=meta.rank, host=meta.host,
                                                         timestamp=meta.timestamp))
        return lines


_T = TypeVar("_T")


def _memoised(function: Callable[[str], _T]) -> Callable[[str], _T]:
    """`function` remembered for texts up to MAX_PREFIX long (a longer one is computed afresh: it would
    hold memory, and is rare)."""
    remembered = lru_cache(maxsize=1024)(function)

    def call(text: str) -> _T:
        return remembered(text) if len(text) <= infer.MAX_PREFIX else function(text)

    return call


_header_prefix = _memoised(infer.header_prefix)  # a logger's introduction of a traceback repeats
_header_prefix_behind = _memoised(lambda pretext: infer.header_prefix(pretext, behind_prefix=True))  # (see plausible)
_stream_key = _memoised(infer.stream_key)  # each line's message prefix is the next one's `last`


def _shown(text: str) -> str:
    """The line as a terminal shows it: colours stripped first (a reset code may follow the \r of a
    CRLF), then of the redraws of a progress bar (`\r`) the last."""
    text = strip_ansi(text).rstrip("\r")
    if "\r" in text:
        text = next((part for part in reversed(text.split("\r")) if part), "")
    return text


def _unhtml(text: str) -> str:
    """A line copied from a page's HTML source (a log viewer's, a test report's): its colour tags and the tags
    of preformatted text around it dropped (`<pre>AssertionError: ...`), and its characters as the page shows them
    (`&quot;`, `&lt;module&gt;`)."""
    if "</" in text or text[:1] == "<":
        text = _HTML_TAG.sub("", text)
    return html.unescape(text) if "&" in text and _HTML_ENTITY.search(text) else text


def _joined(text: str) -> list[str] | None:
    """The lines of a line that begins with a channel's head (torchrun's `[rank0]:`, a worker's `(... pid=N)`)
    and holds it again after a blank: lines a paste joined (`[rank0]:     f( [rank0]:   File ...`); else None."""
    if text.count("]:") < 2 and text.count("pid=") < 2:  # (the head twice: most lines have it once)
        return None
    head = TORCHRUN.pattern.match(text) or WORKER.pattern.match(text)
    if head is None:
        return None
    mark = " " + head.group().rstrip()
    if mark not in text:
        return None
    first, *more = text.split(mark)
    return [first, *(mark[1:] + piece for piece in more)]


def _unfenced(text: str) -> str:
    """The line without a markdown code fence a paste glued to its text (```` ```ValueError: x ````, its
    closing ```` x``` ````): what the user put on the fence's line is the log's. So is an inline code
    span the paste opened at a line's start or closed at its end on another line (a backtick there
    that no other on the line pairs with: `` `[rank0]: RuntimeError: ... ``), where it opens or closes
    a span by its side (a span's backtick has its text on its inner side; the rest of a line a terminal
    wrapped may begin with one that closes a span, a space after it: `` ` is no smaller``; one before a
    prefix or an error's line opens a span, a blank between or not: Cleo's `` ` RuntimeError``; so does one before a
    frame's line, its indentation inside the span or before it: `` `File "x.py", ...``), or a span that is the whole line (maybe indented itself); the
    same for a span of two backticks (```` ``File "x.py", ... ````)."""
    if (opened := text.lstrip(" ")).startswith("```") and opened[3:].strip("`").strip():
        text = opened[3:].lstrip("`")  # (indented under a markdown list's item, maybe)
    if text.endswith("```") and text.rstrip("`").strip():
        text = text.rstrip("`")
    if text.count("``") == 1 and "```" not in text:  # (a span opened or closed with two backticks: ``File "...")
        if text.startswith("``") and text[2:3].strip():
            return text[2:]
        if text.endswith("``") and text[-3:-2].strip():
            return text[:-2]
    if text.count("`") % 2:
        if text.startswith("`") and (text[1:2].strip() or (opened := text[1:].lstrip(" "))[:1] in ("[", "(")
                                     or g.BARE_EXCEPTION_LINE.match(opened)):
            return text[1:].lstrip(" ")  # (a blank inside the span before a prefix, `` ` [rank0]: ... ``, or an error's line)
        if (opened := text.lstrip(" "))[:1] == "`" and (opened[1:2] == " " or text[:1] == " ") and g.FRAME.match(opened[1:]):
            return text[:len(text) - len(opened)] + opened[1:]  # (a frame's line, its indentation inside the span, or the
            # span opened after it)
        if text.endswith("`") and text[-2:-1].strip():
            return text[:-1]
    elif text.count("`") == 2 and (body := text.lstrip(" "))[:1] == body[-1:] == "`" and body[-2:-1].strip() and (
            body[1:2].strip() or body[1:5] == "    " or g.FRAME.match(body[1:-1])):
        return body[1:-1]  # the whole line one code span (a frame's or its source line's indentation inside it; the
        # span itself maybe indented)
    return text


_NUMBERED_SOURCE = lazyregex.compile(r"\s*(?:\u2771\s*)?\d+ ")  # Rich's source line, its number in front (`❱` at the raise)


def _unemphasised(text: str) -> str:
    """The line without the marks of markdown's emphasis a paste wrapped it in: an error's line one span,
    italic or bold italic (`_ValueError: ..._`, `**_ValueError: ..._**`, `***ValueError: ...***`), or its class
    and colon bold (`**ValueError:** ...`), or bold opened there and closed below. (A class's or module's name may begin with an underscore,
    `_InactiveRpcError: ...`; bold alone around an error's line is the grammar's, `**KeyError: 'x'**`, around any
    other line a user's mark, `**[E 220629 13:33:21 app:37] ...**`; a span that opens at a frame
    line, `_File "x.py", ...`, is _framed's.)"""
    span = _EMPHASIS.match(text)
    if span is not None and span["close"] == span["open"][::-1] and (
            g.EXCEPTION_LINE.match(inner := span["inner"]) or g.exception_in_words(inner)):
        return inner  # (only an error's line: the rest of a line a terminal wrapped may begin and end in `_`)
    if (bold := _BOLD_TYPE.match(text)) is not None and g.BARE_EXCEPTION_LINE.match(line := f"{bold['type']}: {bold['message']}"):
        return line  # (the class and its colon in bold, as a markdown copy of Streamlit's error box has it)
    if text[:2] == "**" and "**" not in text[2:] and (g.BARE_EXCEPTION_LINE.match(rest := _unheaded(text[2:]))
                                                      or known_at(rest, KNOWN)):
        return rest  # (bold opened at the line and closed lines below: after a chain's separator, before a prefix; a
        # heading's marks inside it, `**### ImportError: ...`)
    inner = text.rstrip()[2:-2]  # (a line a user set in bold as a whole: a logger's record, its prefix and all)
    if text.rstrip().endswith("**") and inner[:1].strip(" \t*") and inner[-1:].strip(" \t*") and "**" not in inner:
        return inner
    return text


def _unheaded(text: str) -> str:
    """The text without the marks of a markdown heading it begins with, if any."""
    return text[heading.end():] if text[:1] == "#" and (heading := _HEADING.match(text)) is not None else text


_BOLD_TYPE = lazyregex.compile(r"^\*\*(?P<type>[A-Za-z_][\w.]*):\*\* (?P<message>\S.*)$")
_EMPHASIS = lazyregex.compile(r"^(?P<open>_|\*\*_|_\*\*|\*_|\*\*\*)(?=[^\s*_])(?P<inner>.*[^\s*_])(?P<close>_|_\*\*|\*\*_|_\*|\*\*\*)\s*$")


def _framed(text: str) -> str:
    """A frame line as Python prints it where a paste or a tool changed it (TensorFlow's `  *` after a frame of the
    user's code): its path without its quotes (`File
    /x/y.py, line 3, in f`), markdown emphasis glued to its start (`_File "x.py", line 3, in f`) or around its
    line or its function (`File "x.py", **line 3**, in f`, `line 3, **in f**`: a user's mark), the blank after its comma lost (`line 3,in f`) or
    a run of a terminal's padding put in (`x.py      ", line 3`, `line 3,      in f`: a line it wrapped, joined again), a dunder
    name markdown rendered bold (`File "/x/**init**.py", line 3, in **init**`), or its quotes escaped (`File \\"x.py\\"`)."""
    if ", **line " in text:
        text = _BOLD_LINE.sub(lambda m: f", line {m[1]}{m[2] or m[3]}", text, count=1)
    if ",in " in text:
        text = _UNSPACED_IN.sub(", in ", text, count=1)
    if '  ", line ' in text or ",  " in text:  # (a terminal's padding a copy joined into it: `x.py      ", line 3`,
        text = _PADDED_IN.sub(r"\1 ", _PADDED_PATH.sub(r"\1", text, count=1), count=1)  # `line 3,      in f`)
    if text[-1:] == "*" and (marked := _MARKED_FRAME.search(text)) is not None:
        text = text[:marked.start()]  # (TensorFlow's `in user code:` report marks the frames it calls the user's so)
    if "**" in text:
        text = _BOLD_DUNDER.sub(r"__\1__", text)  # (markdown made a dunder name bold: `/IMP/core/**init**.py`)
        text = _BOLD_IN.sub(r", in \1", text, count=1)  # (or a user bolded the function: `line 377, **in f**`)
    if 'File \\"' in text:
        text = _ESCAPED_QUOTES_FRAME.sub(r'\1File "\2", line', text, count=1)  # (copied out of a string: `File \"x.py\"`)
    if 'File "' in text:
        return _EMPHASIZED_FRAME.sub("", text, count=1) if text.lstrip()[:1] in ("_", "*") else text
    return _UNQUOTED_FRAME.sub(r'\1File "\2", line', text, count=1)


_ESCAPED_QUOTES_FRAME = lazyregex.compile(r'^(\s*)File \\"([^"\n]*?)\\", line')
_KNACK_FRAME = lazyregex.compile(r"(?P<path>[^\s,][^,]*\.pyw?), ln (?P<rest>\d+, in \S+)\s*")
_EMPHASIZED_FRAME = lazyregex.compile(r'^\s*\K(?:\*{1,2}|_{1,2})(?=File ")')
_HEADING = lazyregex.compile(r"#{2,6} +")  # (one alone, `# `, comments a line out: a learned prefix)
_BOLD_DUNDER = lazyregex.compile(r"(?<=[/\\]|, in )\*\*(\w+)\*\*(?=\.py\b|\s*$)")
_ESCAPED_DUNDER = lazyregex.compile(r"\\_\\_(\w+?)\\_\\_")
_BOLD_LINE = lazyregex.compile(r", \*\*line (\d+)(,?)\*\*(,?)")
_BOLD_IN = lazyregex.compile(r"(?<=line \d+), \*\*in ([^*\s]+)\*\*(?=\s*$)")
_MARKED_FRAME = lazyregex.compile(r"(?<=, in \S+)[ \t]+\*{1,2}$")
_UNSPACED_IN = lazyregex.compile(r'(?<=File "[^"]*", line \d+),in ')
_PADDED_PATH = lazyregex.compile(r'(File "[^"]{0,1024}?\S)[ \t]{2,}(?=", line \d)')  # (a path is shorter than that)
_PADDED_IN = lazyregex.compile(r'(File "[^"]*+", line \d+,)[ \t]{2,}(?=in \S)')
# (a path that ends in a name's extension, blanks allowed as in Windows paths; IPython's `File <command-3>, line 5`
# is its own: ipython.starts_cut)
_UNQUOTED_FRAME = lazyregex.compile(r'(^|\s)File ([^\s"<,][^",\n]{0,512}\.\w+), line(?= \d)')


def _header_context(body: str) -> str | None:
    if g.HEADER_TEXT not in body:  # (what both headers hold: most lines are not one)
        return None
    return _matched_header(body)


@_memoised  # a logger introduces every traceback alike: behind a timed prefix, the same body
def _matched_header(body: str) -> str | None:
    header = g.HEADER.match(body) or g.GROUP_HEADER.match(body)
    return None if header is None else header["context"]


def _introduced_by(pretext: str, learned: str) -> bool:
    """Whether a header's text in front of `Traceback` begins with the learned prefix of a later line,
    its times aside (they tick between the lines)."""
    learned = learned.rstrip()
    return bool(learned) and (pretext.startswith(learned) or _stream_key(pretext).startswith(_stream_key(learned)))


def may_continue(line: LogLine) -> bool:
    """Whether `line`, begun by a record's prefix, may go on with the record before it (its text can only go on
    with a traceback, or is blank: see LineNormalizer._continues) and so keep that record's stream."""
    return bool(line.prefix) and _reads_as_traceback(line.text, _header_context(line.text))


def _reads_as_traceback(body: str, header: str | None) -> bool:
    """A line that can only continue a traceback (or is blank): indented, a separator (or pybind11's `At:`),
    a header, an exception line (one whose type reads as an exception's: `name.py:3] text` has the form too), the
    head of a thread's stack in faulthandler's dump or TorchScript's stack's. `header`: the body's `_header_context`."""
    stripped = body.strip()
    return (not stripped or body[:1].isspace() or stripped in (g.CAUSE_SEPARATOR, g.CONTEXT_SEPARATOR, g.PYBIND_AT)
            or header is not None or g.BARE_EXCEPTION_LINE.match(body) is not None
            or (stripped[-1:] == ":" and (native.thread_head(stripped) or g.TORCHSCRIPT_HEADER.match(stripped) is not None)))


def _known_inside(pretext: str, kinds: list[KnownPrefix]) -> int:
    """The first place after a blank or a delimiter in `pretext` where a known prefix begins behind
    text that can be a prefix, and before nothing or more of one; 0 if none."""
    return _known_inside_of(pretext, tuple(kinds))


@lru_cache(maxsize=1024)  # a logger's introduction of a traceback repeats
def _known_inside_of(pretext: str, kinds: tuple[KnownPrefix, ...]) -> int:
    for at in range(1, len(pretext)):
        if pretext[at - 1] not in " \t])|>:}" or pretext[at] in " \t":
            continue  # not a boundary
        if (known := known_at(pretext[at:], kinds)) is not None and infer.plausible(pretext[:at]) and (
                not (rest := pretext[at + known[1].end():]).strip() or infer.plausible(rest) or known_at(rest, kinds)):
            return at  # (else the known one is part of an unknown's: `A (A pid=0) :: A] `)
    return 0


def _read_learned(piece: str, meta: PrefixMeta, margin: str | None, calendar: Calendar | None) -> None:
    if margin == "":
        return  # (a copy's line numbers: no prefix of the log's)
    meta.learned = meta.learned or piece
    meta.inferred += (margin or infer.channel_key(piece),)
    meta.rank = meta.rank or infer.rank_token(piece)
    meta.timestamp = infer.dated(piece) or meta.timestamp or (calendar.find(piece) if calendar is not None else None)


def _bounded_set(table: dict, key: Hashable, value) -> None:
    """Set `table[key]` in a channel's own table, forgetting the oldest entry past a few."""
    if key not in table and len(table) >= _MAX_PER_CHANNEL:
        del table[next(iter(table))]
    table[key] = value


def _remember(table: dict, key: Hashable, value) -> None:
    """Set `table[key]`, forgetting the channel seen first once there are too many."""
    if key not in table and len(table) >= _MAX_CHANNELS:
        del table[next(iter(table))]
    table[key] = value
