"""What a traceback says for or against a pattern: the evidence every match step weighs.

A message that fits a template is one piece of evidence; where the traceback says the error was
raised is the other. A template with few literal words fits many libraries' messages, so it counts
only where the site agrees; a pattern extracted from a package's source belongs to that package, so
an error raised outside it (the innermost frame elsewhere) is not that error.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from analyzer.core import lazyregex
from analyzer.core.records import Frame, package_relative
from analyzer.core.schema import Pattern
from analyzer.core.template.fields import literal_parts

__all__ = ["Evidence", "SiteFrame", "site_frames", "leaf", "Specificity", "specificity", "is_generic", "package_root",
           "raised_in", "site_evidence", "in_file", "assert_agrees", "content_words", "missing_content",
           "message_words", "confidence"]

# A template is generic below either bound: measured over the shipped packs (21k exception templates),
# 3 words or fewer is 14% of them and holds `Unsupported dtype: {x}`, `Invalid {name}` and the like,
# which every library raises; under 25 letters and digits adds the short ones with long words.
GENERIC_MAX_WORDS = 3
GENERIC_MIN_LETTERS = 25
_SPECIFIC_LETTERS = 60  # a literal this long is as specific as a message gets
_WORD_TEXT = lazyregex.compile(r"[a-z0-9_][a-z0-9_-]{2,}")  # the matcher's word: what a message is indexed by
_NOT_ALNUM = lazyregex.compile(r"[\W_]+")


class Evidence(enum.Flag):
    """What agreed between the traceback and the pattern; the JSON lists the names in lower case."""

    NONE = 0
    MESSAGE = enum.auto()  # the whole message fits the template
    TEXT = enum.auto()  # the message resembles the template's text (reworded, extended)
    ASSERT = enum.auto()  # the raise site's source line is the pattern's asserted expression
    PACKAGE = enum.auto()  # the error was raised inside the package the pattern's raise site is in
    FILE = enum.auto()  # a frame is in the pattern's source file
    FUNCTION = enum.auto()  # ... in the pattern's function
    LINE = enum.auto()  # ... within the line window of the pattern's line

    @property
    def names(self) -> list[str]:
        return [str(member.name).lower() for member in Evidence if member and member in self]


@dataclass(frozen=True, slots=True)
class SiteFrame:
    """One frame reduced to what site evidence compares."""

    path: str  # "/"-separated, with a leading "/" so that a suffix test works on whole parts
    function: str  # the leaf name: tracebacks print `in method`, patterns spell `Class.method`
    lineno: int | None
    code: str  # the source line the traceback shows, whitespace collapsed


def site_frames(frames: tuple[Frame, ...]) -> tuple[SiteFrame, ...]:
    return tuple(SiteFrame("/" + package_relative(f.path).lstrip("/"), leaf(f.function or ""), f.lineno,
                           " ".join((f.code or "").split())) for f in frames)


def leaf(function: str) -> str:
    return function.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class Specificity:
    words: int  # literal words a message shows whole
    letters: int  # letters and digits of the literal text

    @property
    def generic(self) -> bool:
        return self.words <= GENERIC_MAX_WORDS or self.letters < GENERIC_MIN_LETTERS

    @property
    def score(self) -> float:
        """0 for a template that is only fields, 1 for a long literal sentence."""
        return min(1.0, self.letters / _SPECIFIC_LETTERS)


def specificity(literal: str, words: frozenset[str]) -> Specificity:
    return Specificity(len(words), len(_NOT_ALNUM.sub("", literal)))


def is_generic(pattern: Pattern) -> bool:
    """A short text raised at a site in a package: matched only where a frame is at that site."""
    return package_root(pattern) is not None and specificity(
        *literal_parts(pattern.template, _WORD_TEXT, pattern.style)).generic


def package_root(pattern: Pattern) -> str | None:
    """The top-level package a Python raise site lives in (`sglang` for `sglang/srt/x.py`); None for
    a site outside Python (C++ sources, a bare module like `argparse.py`) or without a path."""
    path = pattern.source.path or ""
    return path.split("/", 1)[0] if "/" in path and path.endswith(".py") else None


def raised_in(frames: tuple[SiteFrame, ...], root: str) -> bool:
    """The innermost frame, where a Python `raise` runs, is in package `root`: an error another
    library raised, even when called from that package, is not one of its signatures."""
    return bool(frames) and f"/{root}/" in frames[-1].path


def in_file(frame: SiteFrame, path: str) -> bool:
    """The frame's path ends with the whole parts of `path` (package-relative, never a partial name)."""
    return bool(path) and frame.path.endswith("/" + path.strip("/"))


def site_evidence(pattern: Pattern, frames: tuple[SiteFrame, ...], window: int) -> tuple[Evidence, int | None]:
    """The best agreement of any frame with the pattern's file, function and line, and that
    frame's line distance (None when no frame is in the file or a line is missing)."""
    src = pattern.source
    if not src.path:
        return Evidence.NONE, None
    best, best_key, best_distance = Evidence.NONE, (-1, 0), None
    for frame in frames:
        if not in_file(frame, src.path):
            continue
        found = Evidence.FILE
        if src.function and frame.function == leaf(src.function):
            found |= Evidence.FUNCTION
        distance = abs(frame.lineno - src.line) if frame.lineno and src.line else None
        if distance is not None and distance <= window and Evidence.FUNCTION in found:
            found |= Evidence.LINE
        key = (bin(found.value).count("1"), -(distance if distance is not None else window + 1))
        if key > best_key:
            best, best_key, best_distance = found, key, distance
    return best, best_distance


def assert_agrees(pattern: Pattern, frame: SiteFrame) -> bool:
    """A bare assert prints no message; the traceback's source line shows the asserted expression."""
    expr = " ".join(pattern.assert_expr.split())
    if not expr or not frame.code.startswith("assert "):
        return False
    shown = frame.code[len("assert "):].rstrip(",( \\")
    return shown == expr or (len(shown) >= 12 and expr.startswith(shown))


# Words a release rewords freely; any other word of a template names what the error is about.
_FILLER = frozenset(["the", "and", "are", "was", "were", "been", "being", "must", "should", "shall", "will", "would", "can", "could", "cannot", "not", "none", "for", "from", "with", "without", "into", "onto", "this", "that", "these", "those", "its", "then", "than", "when", "while", "where", "which", "what", "does", "did", "has", "have", "had", "any", "all", "some", "such", "only", "also", "either", "neither", "nor", "but", "yet", "please", "got", "get", "gets", "given", "found", "expected", "expect", "expects", "received", "receive", "instead", "use", "using", "used", "make", "sure", "set", "specify", "specified", "provide", "provided", "require", "required", "requires", "requirement", "supported", "support", "supports", "unsupported", "currently", "valid", "invalid", "value", "values", "error", "failed", "fail", "fails", "failure", "unable", "allowed", "allow", "one", "two", "may", "might", "need", "needs", "there", "here", "now", "just", "same", "different", "more", "less", "least", "most", "other", "others", "our", "your", "you", "they", "their", "ensure", "check", "checked", "via", "per", "too", "very", "isn", "doesn", "aren", "wasn", "won", "didn", "shouldn"])  # contractions as the word pattern reads them: "isn't" is "isn"


def content_words(words: frozenset[str]) -> frozenset[str]:
    return frozenset(word for word in words if word not in _FILLER)


def missing_content(content: frozenset[str], words: set[str]) -> frozenset[str]:
    """The template's content words the message lacks; a word with its letters swapped (a typo fixed
    between releases: `recieve`) is still there, a different word (`image`, `audio`) is not."""
    missing = content - words
    if not missing:
        return missing
    shapes = {_shape(word) for word in words if len(word) >= 4}
    return frozenset(word for word in missing if len(word) < 4 or _shape(word) not in shapes)


def _shape(word: str) -> tuple[str, str]:
    return word[0], "".join(sorted(word))


def message_words(message: str) -> set[str]:
    return set(_WORD_TEXT.findall(message.lower()))


# How much of the remaining doubt each agreeing site fact takes away; the README documents the scale.
_SITE_SHARE = {Evidence.FILE: 0.4, Evidence.FUNCTION: 0.3, Evidence.LINE: 0.3}


def confidence(base: float, ceiling: float, spec: Specificity, evidence: Evidence, similarity: float = 1.0) -> float:
    """`base` is what the message alone is worth for a fully specific template (specificity takes up to
    a fifth off, a resemblance below 1 scales it down); the file, function and line that agree close
    their share of the gap up to `ceiling` (1 only for an exact message)."""
    value = base * (0.8 + 0.2 * spec.score) * similarity
    share = sum(weight for flag, weight in _SITE_SHARE.items() if flag in evidence)
    return round(min(ceiling, value + (ceiling - value) * share), 3)
