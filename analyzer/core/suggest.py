"""Pattern stubs for errors no pack knows, inferred from their occurrences. Pure: no I/O.

Unknown errors are grouped by fingerprint. For each group the messages are split into tokens
and aligned: tokens every occurrence shares stay literal, the rest become fields, and so do the
values the fingerprint masks (numbers, paths, addresses, ...) even when they happen not to vary,
so that the stub matches every message with that fingerprint. The raise site comes from the
traceback. A person then adds the meaning and the fixes.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import Any

import regex

from analyzer.core import lazyregex
from analyzer.core.fingerprint import MASKS, fingerprint
from analyzer.core.records import ErrorInfo, Frame, SourceSpan
from analyzer.core.template import TemplateError, compile_template

__all__ = ["Stub", "StubCollector", "infer_template"]

_MAX_MESSAGES = 50  # aligning more distinct messages than this tells nothing new
_MAX_EXAMPLES = 5
_TEXT_TOKEN = lazyregex.compile(r"\s+|\w+|[^\w\s]")
# (searched from the end: searched forwards, each place tried reads a run of words to its end)
_KEY_BEFORE = lazyregex.compile(r"(?r)([A-Za-z_][\w.-]*)\s*[=:]\s*$")
_KIND_NAMES = {"time": "time", "uuid": "uuid", "hex": "address", "url": "url", "str": "quoted", "path": "path",
               "addr": "endpoint", "device": "device", "shape": "shape", "rank": "rank", "id": "id"}


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    kind: str  # "" for plain text, else the mask that covers it ("num", "path", ...)

    @property
    def key(self) -> str:
        """What alignment compares: whitespace is loose in templates, so all of it is alike."""
        return " " if self.text.isspace() else self.text


def _tokens(message: str) -> list[_Token]:
    """Masked values as single tokens (first mask wins, as in the fingerprint); words,
    punctuation and whitespace runs between them."""
    taken: list[tuple[int, int, str]] = []
    for kind, pattern in MASKS:
        for m in pattern.finditer(message):
            if m.end() > m.start() and not any(m.start() < end and start < m.end() for start, end, _ in taken):
                taken.append((m.start(), m.end(), kind))
    tokens: list[_Token] = []
    position = 0
    for start, end, kind in sorted(taken):
        tokens.extend(_Token(t, "") for t in _TEXT_TOKEN.findall(message, position, start))
        tokens.append(_Token(message[start:end], kind))
        position = end
    tokens.extend(_Token(t, "") for t in _TEXT_TOKEN.findall(message, position))
    return tokens


def infer_template(messages: list[str]) -> str:
    """A `format`-style template that every message matches: shared text literal, the rest fields."""
    token_lists = [_tokens(message) for message in messages]
    base = token_lists[0]
    keys = [token.key for token in base]
    # Where each of the others has each base token: only tokens all of them share can stay literal.
    positions: list[dict[int, int]] = []
    for other in token_lists[1:]:
        matcher = difflib.SequenceMatcher(None, keys, [token.key for token in other], autojunk=False)
        positions.append({a + i: b + i for a, b, size in matcher.get_matching_blocks() for i in range(size)})
    constant = [i for i, token in enumerate(base) if not token.kind and all(i in p for p in positions)]
    constant = _without_empty_gaps(constant, base, token_lists[1:], positions)
    return _render(base, set(constant))


def _without_empty_gaps(constant: list[int], base: list[_Token], others: list[list[_Token]],
                        positions: list[dict[int, int]]) -> list[int]:
    """A field cannot match nothing: where a gap between literal tokens is empty in one message and
    not in another, the literal token before it (or after, at the start) joins the field."""
    while True:
        bounds = [-1, *constant, len(base)]
        for gap in range(len(bounds) - 1):
            lengths = [bounds[gap + 1] - bounds[gap] - 1]
            for other, where in zip(others, positions):
                left = where[bounds[gap]] if bounds[gap] >= 0 else -1
                right = where[bounds[gap + 1]] if bounds[gap + 1] < len(base) else len(other)
                lengths.append(right - left - 1)
            if 0 in lengths and any(lengths):
                drop = bounds[gap] if bounds[gap] >= 0 else bounds[gap + 1]
                constant = [i for i in constant if i != drop]
                break
        else:
            return constant


def _render(base: list[_Token], constant: set[int]) -> str:
    parts: list[str] = []
    used: set[str] = set()
    numbered = 0
    run: list[_Token] = []

    def close_run() -> None:
        nonlocal numbered
        if not run:
            return
        literal = "".join(parts)
        key = _KEY_BEFORE.search(literal)
        if key:
            name = regex.sub(r"\W", "_", key.group(1).lower()).strip("_") or "value"
        elif len(run) == 1 and run[0].kind in _KIND_NAMES:
            name = _KIND_NAMES[run[0].kind]
        else:
            numbered += 1
            name = f"value{numbered}"
        if name[0].isdigit():
            name = f"value_{name}"
        unique, n = name, 2
        while unique in used:
            unique, n = f"{name}_{n}", n + 1
        used.add(unique)
        parts.append("{" + unique + "}")
        run.clear()

    for index, token in enumerate(base):
        if index in constant:
            close_run()
            parts.append(token.text.replace("{", "{{").replace("}", "}}"))
        else:
            run.append(token)
    close_run()
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Stub:
    """One pattern stub in the pack schema, with what it was inferred from."""

    id: str
    exception: str
    template: str
    raise_site: Frame | None
    fingerprint: str
    examples: tuple[str, ...]
    count: int
    seen_at: tuple[SourceSpan, ...]

    def pack_entry(self) -> dict[str, Any]:
        """The mapping to write under `patterns:`; meaning and fixes are left for a person."""
        entry: dict[str, Any] = {"id": self.id, "exception": self.exception, "template": self.template,
                                 "style": "format"}
        site = self.raise_site
        if site is not None:
            relpath = site.relpath
            source: dict[str, Any] = {}
            if relpath != site.path.replace("\\", "/") and "/" in relpath:
                source["project"] = relpath.split("/", 1)[0]
            source.update(path=relpath, line=site.lineno, function=site.function)
            entry["source"] = {k: v for k, v in source.items() if v is not None}
        entry.update(meaning="", fixes=[], role="root", severity="error", tags=["suggested"],
                     examples=list(self.examples))
        return entry


@dataclass(slots=True)
class _Group:
    info: ErrorInfo  # the first occurrence
    messages: dict[str, None] = field(default_factory=dict)  # distinct, in order
    spans: list[SourceSpan] = field(default_factory=list)


class StubCollector:
    """Add the unknown errors of any number of logs; `stubs()` infers one stub per fingerprint."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}

    def add(self, info: ErrorInfo, span: SourceSpan) -> None:
        if not info.exception_type:
            return  # a traceback cut off before its exception line: nothing to name a pattern after
        group = self._groups.setdefault(fingerprint(info), _Group(info))
        if len(group.messages) < _MAX_MESSAGES:
            group.messages.setdefault(info.message, None)
        group.spans.append(span)

    def stubs(self) -> list[Stub]:
        return [_stub(fingerprint_id, group) for fingerprint_id, group in self._groups.items()]


def _stub(fingerprint_id: str, group: _Group) -> Stub:
    messages = list(group.messages)
    template = infer_template(messages)
    matching = _matching(template, messages)
    if not matching:  # the alignment produced something odd: the first message alone, then verbatim
        template = infer_template(messages[:1])
        matching = _matching(template, messages)
    if not matching:
        template, matching = messages[0].replace("{", "{{").replace("}", "}}"), messages[:1]
    info = group.info
    site = info.raise_site
    words = (info.short_type, site.function.rsplit(".", 1)[-1] if site and site.function else "")
    slug = ".".join(regex.sub(r"[^a-z0-9_-]+", "-", word.lower()).strip("-") or "x" for word in words)
    digest = hashlib.blake2b(fingerprint_id.encode(), digest_size=4).hexdigest()
    return Stub(id=f"local.{slug}.{digest}", exception=info.exception_type, template=template, raise_site=site,
                fingerprint=fingerprint_id, examples=tuple(matching[:_MAX_EXAMPLES]), count=len(group.spans),
                seen_at=tuple(group.spans))


def _matching(template: str, messages: list[str]) -> list[str]:
    try:
        compiled = compile_template(template, "format")
    except TemplateError:
        return []
    return [message for message in messages if compiled.match(message, timeout=1.0) is not None]
