"""Matching an exception against pattern signatures: exact, then by raise site, then fuzzy.

Built for packs of thousands of patterns: templates are indexed by exception type and by their
literal words, compiled only when first needed, and a message is tried only against the few
templates whose every literal word it contains.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import regex
from rapidfuzz import fuzz

from analyzer.core.records import ErrorEvent, ErrorInfo, package_relative
from analyzer.core.schema import Pattern
from analyzer.core.template import CompiledTemplate, TemplateError, compile_template

__all__ = ["MatchKind", "Diagnosis", "Matcher", "UNKNOWN"]

_WORD = regex.compile(r"[a-z0-9_][a-z0-9_-]{2,}")


class MatchKind(enum.Enum):
    EXACT = "exact"
    RAISE_SITE = "raise_site"
    FUZZY = "fuzzy"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    pattern: Pattern | None
    match_kind: MatchKind
    confidence: float
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    link: int = 0  # index in the event's chain of the exception that matched

    @property
    def known(self) -> bool:
        return self.pattern is not None


UNKNOWN = Diagnosis(None, MatchKind.UNKNOWN, 0.0)
_RANK = {MatchKind.EXACT: 3, MatchKind.RAISE_SITE: 2, MatchKind.FUZZY: 1, MatchKind.UNKNOWN: 0}


@dataclass(slots=True)
class _Entry:
    pattern: Pattern
    tokens: frozenset[str]
    literal: str
    short_type: str  # pattern.short_exception, looked up once
    compiled: CompiledTemplate | None = None
    broken: bool = False


class Matcher:
    def __init__(self, patterns: tuple[Pattern, ...] | list[Pattern], fuzzy_threshold: float = 82.0,
                 site_window: int = 20) -> None:
        self.patterns = tuple(patterns)
        self.fuzzy_threshold = fuzzy_threshold
        self.site_window = site_window
        self.broken: list[tuple[Pattern, str]] = []  # templates that failed to compile
        self._by_token: dict[str, list[_Entry]] = defaultdict(list)
        self._by_token_type: dict[tuple[str, str], list[_Entry]] = defaultdict(list)  # the same, by exception
        self._by_site: dict[tuple[str, str], list[_Entry]] = defaultdict(list)
        self._by_id: dict[str, _Entry] = {}
        for pattern in self.patterns:
            literal = _literal_text(pattern.template)
            tokens = frozenset(_WORD.findall(literal.lower()))
            entry = _Entry(pattern, tokens, literal, pattern.short_exception)
            self._by_id[pattern.id] = entry
            if tokens:  # the rarest-looking word (longest) is the index key
                key = max(tokens, key=lambda t: (len(t), t))
                self._by_token[key].append(entry)
                self._by_token_type[(key, entry.short_type)].append(entry)
            src = pattern.source
            if src.path and src.function:
                self._by_site[(_tail(src.path), _leaf(src.function))].append(entry)
        self._match_cached = lru_cache(maxsize=65536)(self._match_uncached)

    def pattern(self, pattern_id: str) -> Pattern | None:
        entry = self._by_id.get(pattern_id)
        return entry.pattern if entry else None

    def compiled(self, pattern_id: str) -> CompiledTemplate | None:
        entry = self._by_id.get(pattern_id)
        return self._compile(entry) if entry else None

    def match_event(self, event: ErrorEvent) -> Diagnosis:
        """Best diagnosis over the chain; on a tie the link nearest the root cause wins."""
        best = UNKNOWN
        for index, info in enumerate(event.chain):
            found = self.match(info)
            if _RANK[found.match_kind] > _RANK[best.match_kind] or (
                found.match_kind is best.match_kind and found.confidence > best.confidence + 1e-9
                and found.match_kind is not MatchKind.UNKNOWN
            ):
                best = Diagnosis(found.pattern, found.match_kind, found.confidence, found.params, index)
        return best

    def match(self, info: ErrorInfo) -> Diagnosis:
        site = info.raise_site
        key = (info.short_type, info.message,
               package_relative(site.path) if site else None,
               site.function if site else None, site.lineno if site else None)
        return self._match_cached(key)

    def match_message(self, message: str, exception_type: str | None = None) -> Diagnosis:
        """For `analyzer explain "<message>"`: an optional `Type: ` in front is understood."""
        if exception_type is None and ": " in message:
            head, _, rest = message.partition(": ")
            if regex.fullmatch(r"[A-Za-z_][\w.]*", head):
                exception_type, message = head.rsplit(".", 1)[-1], rest
        return self._match_cached((exception_type, message, None, None, None))

    def _match_uncached(self, key) -> Diagnosis:
        short_type, message, relpath, function, lineno = key
        words = set(_WORD.findall(message.lower()))
        exact = self._exact(short_type, message, words, relpath)
        if exact is not None:
            return exact
        if relpath and function:
            site = self._raise_site(short_type, message, relpath, function, lineno)
            if site is not None:
                return site
        return self._fuzzy(short_type, message, words) or UNKNOWN

    def _bucket(self, word: str, short_type: str | None) -> list[_Entry] | tuple[()]:
        """The entries indexed under `word`; only those of exception `short_type` when it is given."""
        if short_type:
            return self._by_token_type.get((word, short_type), ())
        return self._by_token.get(word, ())

    def _exact(self, short_type: str | None, message: str, words: set[str], relpath: str | None) -> Diagnosis | None:
        hits = []
        for entry in (e for word in words for e in self._bucket(word, short_type) if e.tokens <= words):
            compiled = self._compile(entry)
            params = compiled.match(message) if compiled else None
            if params is not None:
                hits.append((entry, params))
        if not hits:
            return None
        entry, params = max(hits, key=lambda hit: (
            bool(relpath and hit[0].pattern.source.path and _tail(hit[0].pattern.source.path) == _tail(relpath)),
            hit[0].pattern.curated, len(hit[0].literal), hit[0].pattern.id))
        return Diagnosis(entry.pattern, MatchKind.EXACT, 1.0, params)

    def _raise_site(self, short_type, message, relpath, function, lineno) -> Diagnosis | None:
        best, best_score = None, -1.0
        for entry in self._by_site.get((_tail(relpath), _leaf(function)), ()):
            pattern = entry.pattern
            if short_type and entry.short_type != short_type:
                continue
            distance = abs((pattern.source.line or 0) - lineno) if lineno and pattern.source.line else self.site_window
            if distance > self.site_window:
                continue
            similarity = fuzz.ratio(entry.literal, message) / 100 if message and entry.literal else 0.5
            score = 0.6 + 0.2 * (1 - distance / (self.site_window + 1)) + 0.15 * similarity
            if score > best_score:
                best, best_score = entry, score
        if best is None:
            return None
        compiled = self._compile(best)
        params = (compiled.match(message) if compiled else None) or {}
        return Diagnosis(best.pattern, MatchKind.RAISE_SITE, round(best_score, 3), params)

    def _fuzzy(self, short_type: str | None, message: str, words: set[str]) -> Diagnosis | None:
        if len(words) < 3:
            return None
        seen: set[str] = set()
        best, best_score = None, 0.0
        for word in words:
            for entry in self._bucket(word, short_type):
                if entry.pattern.id in seen or len(entry.literal) < 20:
                    continue
                seen.add(entry.pattern.id)
                if len(entry.tokens & words) * 2 < len(entry.tokens):
                    continue
                score = fuzz.token_sort_ratio(entry.literal, message, score_cutoff=self.fuzzy_threshold)
                if score > best_score:
                    best, best_score = entry, score
        if best is None:
            return None
        return Diagnosis(best.pattern, MatchKind.FUZZY, round(best_score / 100, 3), {})

    def _compile(self, entry: _Entry) -> CompiledTemplate | None:
        if entry.compiled is None and not entry.broken:
            try:
                entry.compiled = compile_template(*_as_written(entry.pattern))
            except (TemplateError, regex.error, RecursionError) as err:
                entry.broken = True
                self.broken.append((entry.pattern, str(err)))
        return entry.compiled


def _style(style: str) -> str:
    return "auto" if style in ("auto", "plain") else style


def _as_written(pattern: Pattern) -> tuple[str, str]:
    """A constant (`plain`) message is printed as written: no `{x}` or `%d` in it is a field."""
    if pattern.style == "plain":
        return pattern.template.replace("{", "{{").replace("}", "}}"), "fstring"
    return pattern.template, _style(pattern.style)


_FIELD = regex.compile(r"\{[^{}]*\}|%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]|%[-#0 +]*\d*(?:\.\d+)?[sdrifxXeEgGa]")


def _literal_text(template: str) -> str:
    """The template's fixed words, fields removed: what fuzzy matching and indexing look at."""
    text = _FIELD.sub(" ", template.replace("{{", "{").replace("}}", "}"))
    return " ".join(text.split())


def _tail(path: str) -> str:
    """The last two path parts: enough to tell raise sites apart, robust to install layouts."""
    parts = path.replace("\\", "/").rsplit("/", 2)
    return "/".join(parts[-2:])


def _leaf(function: str) -> str:
    return function.rsplit(".", 1)[-1]
