"""Matching an exception against pattern signatures: exact, then by raise site, then fuzzy.

Built for packs of thousands of patterns: templates are filed by exception type and by their
literal words (`index_keys`) in a PatternStore, which may keep them on disk; the Matcher reads and
compiles only the candidates a message asks for, and a message is tried only against the few
templates whose every literal word it contains. Every step weighs the traceback's own evidence
(core/evidence.py): which package, file, function and line the error ran through.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import regex
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from analyzer.core import lazyregex
from analyzer.core.derived import DerivedPage
from analyzer.core.evidence import (
    Evidence,
    SiteFrame,
    Specificity,
    assert_agrees,
    confidence,
    content_words,
    leaf,
    message_words,
    missing_content,
    package_root,
    raised_in,
    site_evidence,
    site_frames,
    specificity,
)
from analyzer.core.native import UNTYPED_CUDA
from analyzer.core.records import ErrorEvent, ErrorInfo
from analyzer.core.schema import Pattern
from analyzer.core.sites import SiteIndex, StackKey
from analyzer.core.store import MemoryStore, PatternStore, Site
from analyzer.core.template import RETRY_FACTOR, TIMEOUT, CompiledTemplate, TemplateError, compile_template
from analyzer.core.template.fields import has_fields, literal_parts, literal_text, opening_text

__all__ = ["MatchKind", "Diagnosis", "Matcher", "UNKNOWN", "Evidence", "index_keys", "site_key"]

_WORD = lazyregex.compile(r"[a-z0-9_][a-z0-9_-]{2,}")
_MIN_RESEMBLANCE = 0.5  # below this a raise-site candidate's text is not the message's
_FUZZY_MIN_CONTENT = 2  # content words a template needs before a reworded message is recognised
_OPENING_AT_LEAST = 24  # characters of a template's opening words that say whose a message cut short after them is
# An OS error's whole text where it names no file (`[Errno 2] No such file or directory`): never a longer text cut short.
_WHOLE_OS_ERROR = lazyregex.compile(r"\[(?:Errno|WinError) -?\d+\] [^:'\"]+")
# Classes that carry another class's text: a page written for that class fits them. A library raises one now where
# it raised its base class before (torch.AcceleratorError, a RuntimeError since torch 2.8, for `CUDA error: ...` and
# its HIP and XPU kin; `c10::AcceleratorError` in a C++ abort); an OpenAI-compatible server (vLLM, SGLang) names a
# request's ValueError `BadRequestError` in the body of its 400 response. And the other way: an older release raised
# as the base class what a subclass raises now (torch's RuntimeError before torch.cuda.OutOfMemoryError, 1.13, and
# before torch.distributed.DistBackendError and DistNetworkError, 2.1; jaxlib's before XlaRuntimeError), and
# torch.multiprocessing.spawn's exits as a plain Exception before ProcessExitedException; json's errors as ValueError
# before JSONDecodeError (simplejson, Python 2), and c10d's watchdog as std::runtime_error before c10::DistBackendError.
_SAME_TEXT_AS = {"AcceleratorError": ("RuntimeError",), "BadRequestError": ("ValueError",),
                 "RuntimeError": ("OutOfMemoryError", "DistBackendError", "DistNetworkError", "XlaRuntimeError"),
                 "Exception": ("ProcessExitedException",), "ValueError": ("JSONDecodeError",),
                 "runtime_error": ("DistBackendError",)}


class MatchKind(enum.Enum):
    EXACT = "exact"
    RAISE_SITE = "raise_site"
    FUZZY = "fuzzy"
    POSSIBLE = "possible"  # a generic template fits, and no traceback says where the error was raised (see _Entry)
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    pattern: Pattern | None
    match_kind: MatchKind
    confidence: float
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    link: int = 0  # index in the event's chain of the exception that matched
    evidence: Evidence = Evidence.NONE  # what agreed: message, text, package, file, function, line, assert
    releases: str = ""  # which releases raise the pattern, for the run's own (core/versions.py)
    subs: tuple[Diagnosis, ...] = ()  # an exception group's: each sub-exception's, in the group's order

    @property
    def known(self) -> bool:
        return self.pattern is not None


UNKNOWN = Diagnosis(None, MatchKind.UNKNOWN, 0.0)
_RANK = {MatchKind.EXACT: 4, MatchKind.RAISE_SITE: 3, MatchKind.FUZZY: 2, MatchKind.POSSIBLE: 1, MatchKind.UNKNOWN: 0}
# (what the message alone is worth, the most the site can raise it to), by kind of match
_SCALE = {MatchKind.EXACT: (0.9, 1.0), MatchKind.RAISE_SITE: (0.7, 0.95), MatchKind.FUZZY: (0.8, 0.95),
          MatchKind.POSSIBLE: (0.5, 0.5)}
_GENERIC_CEILING = 0.9  # a generic text confirmed by its site is still a short text


@dataclass(slots=True)
class _Entry:
    pattern: Pattern
    tokens: frozenset[str]
    literal: str
    short_type: str  # pattern.short_exception, looked up once
    spec: Specificity
    content: frozenset[str]  # the literal words that say what the error is about (not filler)
    root: str | None  # the package the pattern's raise site is in
    generic: bool  # a short text raised at a site in a package: anyone's text until the site agrees
    # ... and one with values, not a curated page: a log's message alone never names it (`'{}' object has no
    # attribute '{}'` is also the interpreter's own text); only `explain` offers it as "possible"
    needs_site: bool
    compiled: CompiledTemplate | None = None
    broken: bool = False


def index_keys(pattern: Pattern) -> tuple[str | None, Site | None]:
    """Where a pattern is filed: its rarest-looking literal word (the longest, a content word if it
    has any) and its raise site. A template that opens with words enough to say whose it is is filed
    under one of those, so that a message cut short after them still finds it (`Matcher._cut`). A
    signature extracted from a logger call is filed under no word: it is no exception, never a
    traceback's diagnosis (`explain ID` still finds it); nor is a pattern told by its frames (`site:`),
    which the Matcher asks for by the stack."""
    _, tokens = literal_parts(pattern.template, _WORD, pattern.style)
    logged = pattern.exception.startswith("log.") and pattern.match != "line"
    unfiled = logged or pattern.site is not None  # a frame pattern is found by its frames (core/sites.py)
    opening = opening_text(pattern.template, pattern.style)
    opens = tokens & set(_WORD.findall(opening.lower())) if len(opening) >= _OPENING_AT_LEAST else frozenset()
    words = content_words(frozenset(opens)) or content_words(tokens) or tokens
    word = max(words, key=lambda t: (len(t), t)) if tokens and not unfiled else None
    src = pattern.source
    return word, site_key(src.path, src.function) if src.path and src.function else None


def site_key(path: str, function: str) -> Site:
    """Raise sites are keyed by the package-relative path and the function's leaf name (what a
    traceback prints); a frame is looked up under each whole-part suffix of its path."""
    return path.replace("\\", "/").strip("/"), leaf(function)


class Matcher:
    def __init__(self, patterns: Iterable[Pattern] | PatternStore, fuzzy_threshold: float = 82.0,
                 site_window: int = 20) -> None:
        """`patterns`: a list (indexed here, in memory) or a store (read lazily, e.g. from disk)."""
        self.store = patterns if isinstance(patterns, PatternStore) else MemoryStore(patterns, index_keys)
        self.fuzzy_threshold = fuzzy_threshold
        self.site_window = site_window
        self.broken: list[tuple[Pattern, str]] = []  # templates that failed to compile
        self.disabled: list[tuple[Pattern, str]] = []  # templates given up on for timing out (see _fit)
        self._entries: dict[str, _Entry] = {}  # the candidates read so far, by id
        self._buckets: dict[tuple[str, str | None], list[_Entry]] = {}
        self._sites: dict[Site, list[_Entry]] = {}
        self._framed = SiteIndex(self.store.frame_patterns())  # errors told by where they happen
        self._match_cached = lru_cache(maxsize=65536)(self._match_uncached)

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        """Every pattern: reads the whole store (for pack checks and tools, not for matching)."""
        return tuple(self.store)

    def line_patterns(self) -> tuple[Pattern, ...]:
        """The `match: line` patterns, for the notice detector."""
        return tuple(self.store.line_patterns())

    def pattern(self, pattern_id: str) -> Pattern | None:
        return self.store.get(pattern_id)

    def derived(self, pattern_id: str) -> DerivedPage | None:
        """The page derived from the source for an extracted signature, where the store keeps one."""
        lookup = getattr(self.store, "derived", None)
        found = lookup(pattern_id) if lookup is not None else None
        return DerivedPage.from_dict(found) if found else None

    def compiled(self, pattern_id: str) -> CompiledTemplate | None:
        pattern = self.store.get(pattern_id)
        return self._compile(self._entry(pattern)) if pattern else None

    def _entry(self, pattern: Pattern) -> _Entry:
        entry = self._entries.get(pattern.id)
        if entry is None:  # a store gives each id one pattern
            literal, tokens = literal_parts(pattern.template, _WORD, pattern.style)
            spec, root = specificity(literal, tokens), package_root(pattern)
            generic = spec.generic and root is not None
            needs_site = generic and not pattern.curated and has_fields(pattern.template, pattern.style)
            entry = _Entry(pattern, tokens, literal, pattern.short_exception, spec, content_words(tokens), root,
                           generic, needs_site)
            self._entries[pattern.id] = entry
        return entry

    def match_event(self, event: ErrorEvent) -> Diagnosis:
        """Best diagnosis over the chain; on a tie the link nearest the root cause wins."""
        best = UNKNOWN
        for index, info in enumerate(event.chain):
            found = self.match(info)
            if _RANK[found.match_kind] > _RANK[best.match_kind] or (
                found.match_kind is best.match_kind and found.confidence > best.confidence + 1e-9
                and found.match_kind is not MatchKind.UNKNOWN
            ):
                best = dataclasses.replace(found, link=index)
        return best

    def match(self, info: ErrorInfo) -> Diagnosis:
        stack = self._framed.stack(info.frames) if self._framed else ()
        short_type = None if info.exception_type == UNTYPED_CUDA else info.short_type  # any type's text fits
        return self._as_printed_or_kin(short_type, info.message, site_frames(info.frames), stack, False)

    def match_message(self, message: str, exception_type: str | None = None) -> Diagnosis:
        """For `analyzer explain "<message>"`: an optional `Type: ` in front is understood."""
        if exception_type is None and ": " in message:
            head, _, rest = message.partition(": ")
            if regex.fullmatch(r"[A-Za-z_][\w.]*", head):
                exception_type, message = head.rsplit(".", 1)[-1], rest
        return self._as_printed_or_kin(exception_type, message, (), (), True)

    def _as_printed_or_kin(self, short_type: str | None, message: str, frames: tuple[SiteFrame, ...], stack: StackKey,
                           asked: bool) -> Diagnosis:
        """The match for the class as printed, else for a class that carries its text (`_SAME_TEXT_AS`)."""
        found = self._match_cached((short_type, message, frames, stack, asked))
        for kin in _SAME_TEXT_AS.get(short_type or "", ()) if found.pattern is None else ():
            if (found := self._match_cached((kin, message, frames, stack, asked))).pattern:
                break
        return found

    def _match_uncached(self, key: tuple[str | None, str, tuple[SiteFrame, ...], StackKey, bool]) -> Diagnosis:
        """`key[-1]`: a generic text with values may be offered as "possible" (asked about, not read in a log)."""
        short_type, message, frames, stack, asked = key
        words = message_words(message)
        exact = self._exact(short_type, message, words, frames, asked)
        exact_pattern = exact.pattern if exact is not None else None
        framed = self._framed.match(short_type, message, stack) if stack else None
        if framed is not None and (exact_pattern is None or len(self._entry(framed[0]).literal)
                                   >= len(self._entry(exact_pattern).literal)):
            return self._by_frame(*framed)  # the frames say more than a message another pattern shares
        if exact is not None and exact.match_kind is MatchKind.EXACT and (
                not frames or Evidence.FUNCTION in exact.evidence):
            return exact
        site = self._raise_site(short_type, message, words, frames) if frames else None
        if exact is not None and exact.match_kind is MatchKind.EXACT:
            # a text raised elsewhere fits, but the traceback stops at a known raise whose text resembles it
            return site if site is not None and (Evidence.TEXT | Evidence.ASSERT) & site.evidence else exact
        if exact is not None and not frames:
            return exact  # a text that fits exactly, if only "possibly", says more than a near one
        return site or self._fuzzy(short_type, message, words, frames) or exact or self._cut(short_type, message, words,
                                                                                             frames) or UNKNOWN

    def _by_frame(self, pattern: Pattern, params: dict[str, Any]) -> Diagnosis:
        """A frame pattern's diagnosis: exact when its template has words to match, else by its frame."""
        evidence = Evidence.FUNCTION | Evidence.PACKAGE
        if self._entry(pattern).literal:
            return Diagnosis(pattern, MatchKind.EXACT, 1.0, params, 0, evidence | Evidence.MESSAGE)
        return Diagnosis(pattern, MatchKind.RAISE_SITE, 0.95, params, 0, evidence)

    def _bucket(self, word: str, short_type: str | None) -> list[_Entry]:
        """The entries indexed under `word`; only those of exception `short_type` when it is given."""
        key = (word, short_type or None)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [self._entry(p) for p in self.store.by_word(word, short_type or None)]
        return bucket

    def _belongs(self, entry: _Entry, frames: tuple[SiteFrame, ...]) -> bool:
        """An error raised outside the pattern's package is not that pattern's error."""
        return not frames or entry.root is None or raised_in(frames, entry.root)

    def _exact(self, short_type: str | None, message: str, words: set[str],
               frames: tuple[SiteFrame, ...], asked: bool) -> Diagnosis | None:
        hits = []
        for entry in (e for word in words for e in self._bucket(word, short_type) if e.tokens <= words):
            if not self._belongs(entry, frames) or (entry.needs_site and not frames and not asked):
                continue
            evidence, distance = site_evidence(entry.pattern, frames, self.site_window)
            if frames and entry.generic and Evidence.FUNCTION not in evidence:
                continue  # a generic text is anyone's: only the site can tell it is this one
            params = self._fit(entry, message)
            if params is not None:
                hits.append((entry, params, evidence, distance))
        if not hits:
            return None
        # the site first (file, then function); at one site a curated page before a bare signature (both
        # fit the message: the page explains it); then the most specific text, then the nearest line
        def rank(hit: tuple) -> tuple:
            return (Evidence.FILE in hit[2], Evidence.FUNCTION in hit[2], hit[0].pattern.curated, len(hit[0].literal),
                    -(hit[3] if hit[3] is not None else 1 << 30))

        entry, params, evidence, _ = max(hits, key=lambda hit: (*rank(hit), hit[0].pattern.id))
        evidence |= Evidence.MESSAGE | self._package(entry, frames)
        kind = MatchKind.POSSIBLE if (entry.generic and not frames) or _elsewhere_too(entry, hits, rank) else MatchKind.EXACT
        base, ceiling = _SCALE[kind]
        ceiling = min(ceiling, _GENERIC_CEILING) if entry.generic else ceiling
        return Diagnosis(entry.pattern, kind, confidence(base, ceiling, entry.spec, evidence), params, 0, evidence)

    def _raise_site(self, short_type: str | None, message: str, words: set[str],
                    frames: tuple[SiteFrame, ...]) -> Diagnosis | None:
        """Candidates raised in the innermost frame's function: the one whose text resembles the message
        most, then the nearest line; a bare assert is recognised by its expression wherever it moved."""
        frame = frames[-1]
        best, best_key, best_similarity = None, None, 0.0
        for entry in self._site_candidates(frame):
            pattern = entry.pattern
            if short_type and entry.short_type != short_type:
                continue
            asserted = assert_agrees(pattern, frame)
            distance = abs(pattern.source.line - frame.lineno) if pattern.source.line and frame.lineno else None
            if not asserted and (distance is None or distance > self.site_window):
                continue
            similarity = _resemblance(entry, message)
            if similarity is None:
                continue
            missing = len(missing_content(entry.content, words))
            shared = len(entry.tokens & words)  # a subset of the message reads 100%: the fuller one is closer
            key = (asserted, -missing, round(similarity, 2), shared, -(distance if distance is not None else 1 << 30))
            if best_key is None or key > best_key:
                best, best_key, best_similarity = entry, key, similarity
        if best is None:
            return None
        evidence, _ = site_evidence(best.pattern, (frame,), self.site_window)
        evidence |= self._package(best, frames)
        if best_key and best_key[0]:
            evidence |= Evidence.ASSERT
        if best.literal and message:
            evidence |= Evidence.TEXT
        params = self._fit(best, message) or {}
        value = confidence(*_SCALE[MatchKind.RAISE_SITE], best.spec, evidence, max(best_similarity, 0.6))
        return Diagnosis(best.pattern, MatchKind.RAISE_SITE, value, params, 0, evidence)

    def _site_candidates(self, frame: SiteFrame) -> list[_Entry]:
        """Entries whose package-relative path is a whole-part suffix of the frame's path."""
        parts = frame.path.strip("/").split("/")
        found: list[_Entry] = []
        for start in range(len(parts)):
            site = ("/".join(parts[start:]), frame.function)
            entries = self._sites.get(site)
            if entries is None:
                entries = self._sites[site] = [self._entry(p) for p in self.store.by_site(site)]
            found.extend(entries)
        return found

    def _fuzzy(self, short_type: str | None, message: str, words: set[str],
               frames: tuple[SiteFrame, ...]) -> Diagnosis | None:
        """A reworded or extended message: every content word of the template is still there (a changed
        content word is a different error), and the texts are close."""
        if len(words) < 3:
            return None
        seen: set[str] = set()
        best, best_key, best_score, best_evidence = None, None, 0.0, Evidence.NONE
        for word in words:
            for entry in self._bucket(word, short_type):
                if entry.pattern.id in seen:
                    continue
                seen.add(entry.pattern.id)
                if entry.spec.generic or len(entry.content) < _FUZZY_MIN_CONTENT:
                    continue
                if missing_content(entry.content, words):
                    continue
                if not self._belongs(entry, frames):
                    continue
                score = fuzz.token_set_ratio(entry.literal, message, processor=default_process,
                                             score_cutoff=self.fuzzy_threshold)
                if not score:
                    continue
                evidence, distance = site_evidence(entry.pattern, frames, self.site_window)
                key = (Evidence.FUNCTION in evidence, Evidence.FILE in evidence, score, len(entry.content),
                       -(distance if distance is not None else 1 << 30), entry.pattern.id)
                if best_key is None or key > best_key:
                    best, best_key, best_score, best_evidence = entry, key, score, evidence
        if best is None:
            return None
        evidence = best_evidence | Evidence.TEXT | self._package(best, frames)
        # a like text with nothing to say whose it is (no frame, no curated page) may be another project's
        # (verl's `Model architecture qwen3 is not supported for now` is no vLLM error): only possibly this one
        kind = MatchKind.FUZZY if frames or best.pattern.curated else MatchKind.POSSIBLE
        value = confidence(*_SCALE[kind], best.spec, evidence, best_score / 100)
        return Diagnosis(best.pattern, kind, value, {}, 0, evidence)

    def _cut(self, short_type: str | None, message: str, words: set[str],
             frames: tuple[SiteFrame, ...]) -> Diagnosis | None:
        """A message cut short (by a paste, a terminal, a wrapped line not read with it: `CUDA out of memory. Tried to
        allocate 330.00 MiB.`) that keeps a template's opening words, enough of them to say whose they are, and could
        go on as that template does: a fuzzy match, without values (those it holds may be cut too). Where templates
        open alike, the current wording before one a release alone had."""
        said = " ".join(message.split())
        if short_type is None or len(said) < _OPENING_AT_LEAST or _WHOLE_OS_ERROR.fullmatch(said):
            return None
        best, best_key = None, None
        for entry in {e.pattern.id: e for word in words for e in self._bucket(word, short_type)}.values():
            compiled = self._compile(entry)
            if (entry.generic or compiled is None or len(compiled.prefix) < _OPENING_AT_LEAST
                    or not said.startswith(compiled.prefix[:len(said)]) or not self._belongs(entry, frames)
                    or not compiled.begins(message)):
                continue
            evidence, distance = site_evidence(entry.pattern, frames, self.site_window)
            key = (Evidence.FUNCTION in evidence, Evidence.FILE in evidence, not entry.pattern.source.version,
                   len(entry.literal), -(distance if distance is not None else 1 << 30), entry.pattern.id)
            if best_key is None or key > best_key:
                best, best_key = (entry, evidence), key
        if best is None:
            return None
        entry, evidence = best
        evidence |= Evidence.TEXT | self._package(entry, frames)
        covered = min(1.0, len(said) / max(len(entry.literal), 1))
        return Diagnosis(entry.pattern, MatchKind.FUZZY, confidence(*_SCALE[MatchKind.FUZZY], entry.spec, evidence, covered),
                         {}, 0, evidence)

    @staticmethod
    def _package(entry: _Entry, frames: tuple[SiteFrame, ...]) -> Evidence:
        return Evidence.PACKAGE if entry.root and raised_in(frames, entry.root) else Evidence.NONE

    def _fit(self, entry: _Entry, message: str) -> dict[str, Any] | None:
        """The values `message` gives the entry's template, or None. A template that takes longer
        than its time limit on a message, and again on a second try with ten times the limit (it
        backtracks catastrophically), is used no more: each matching line would pay the limit
        again, so it costs one such try per run."""
        compiled = self._compile(entry)
        if compiled is None or entry.broken:
            return None
        try:
            return compiled.match(message, raise_timeout=True)
        except TimeoutError:
            pass
        try:  # the limit is wall-clock time: a busy machine may have stalled a sound template
            return compiled.match(message, timeout=TIMEOUT * RETRY_FACTOR, raise_timeout=True)
        except TimeoutError:
            entry.broken = True
            self.disabled.append((entry.pattern, f"its template took too long on a message of {len(message)} "
                                                 "characters; not used for the rest of this run"))
            return None

    def _compile(self, entry: _Entry) -> CompiledTemplate | None:
        if entry.compiled is None and not entry.broken:
            try:
                entry.compiled = compile_template(entry.pattern.template, entry.pattern.style)
            except (TemplateError, regex.error, RecursionError) as err:
                entry.broken = True
                self.broken.append((entry.pattern, str(err)))
        return entry.compiled


def _elsewhere_too(entry: _Entry, hits: list[tuple], rank: Callable[[tuple], tuple]) -> bool:
    """Whether the text is raised as it is by another function in another file, which nothing tells apart
    from the chosen one (no frame, no curated page: the quantisation methods that share `The input size is
    not aligned ...`, a text two projects share): then the chosen one is only one of them, a possible
    diagnosis. (A function moved to another file, or renamed in its file, in a later release is the same error.)"""
    if entry.pattern.curated or Evidence.FILE in next(hit[2] for hit in hits if hit[0] is entry):
        return False
    best, source = rank(next(hit for hit in hits if hit[0] is entry)), entry.pattern.source
    return any(hit[0].pattern.source.function != source.function and hit[0].pattern.source.path != source.path
               and rank(hit) == best for hit in hits)


def _resemblance(entry: _Entry, message: str) -> float | None:
    """How much the message reads like the template's text, 0..1; None when it does not at all.
    A template that is only fields says nothing either way (0.5); no message against a text is None."""
    if not entry.literal:
        return 1.0 if not message.strip() else 0.5
    if not message.strip():
        return None
    similarity = fuzz.token_set_ratio(entry.literal, message, processor=default_process) / 100
    return similarity if similarity >= _MIN_RESEMBLANCE else None


def _literal_text(template: str, style: str = "auto") -> str:
    """The template's fixed words, fields removed: what fuzzy matching and indexing look at."""
    return literal_text(template, style)
