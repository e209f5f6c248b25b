"""Pack-wide lint: every problem in a set of patterns, collected, reported once (Sigma-style)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from analyzer.core.evidence import is_generic
from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.schema import Pattern, SchemaProblem

__all__ = ["check_patterns", "PackNotes", "pack_notes"]


@dataclass(frozen=True, slots=True)
class PackNotes:
    """Facts about a pack that are not errors but limit what a message alone can tell."""

    generic: tuple[Pattern, ...]  # short texts: matched only where the traceback is at their site
    twins: tuple[tuple[Pattern, ...], ...]  # the same text raised at several places of one file


def pack_notes(patterns: list[Pattern]) -> PackNotes:
    exceptions = [p for p in patterns if p.match == "exception" and not p.exception.startswith("log.")]
    generic = tuple(p for p in exceptions if p.template and is_generic(p))
    same: dict[tuple[str, str, str], list[Pattern]] = defaultdict(list)
    for pattern in exceptions:
        if pattern.template and pattern.source.path:
            same[(pattern.short_exception, " ".join(pattern.template.split()), pattern.source.path)].append(pattern)
    return PackNotes(generic, tuple(tuple(group) for group in same.values() if len(group) > 1))


def check_patterns(patterns: list[Pattern]) -> list[SchemaProblem]:
    """Duplicate ids, templates that do not compile, examples that do not match their own pattern
    (or that another, different template claims first), and `related` ids that lead nowhere."""
    problems: list[SchemaProblem] = []
    by_id: dict[str, list[Pattern]] = defaultdict(list)
    for pattern in patterns:
        by_id[pattern.id].append(pattern)
    for pattern_id, same in by_id.items():
        for duplicate in same[1:]:
            problems.append(SchemaProblem(duplicate.origin, f"duplicate id '{pattern_id}' (first at {same[0].origin})"))
    matcher = Matcher([same[0] for same in by_id.values()])
    for pattern_id in by_id:
        matcher.compiled(pattern_id)  # records templates that do not compile in matcher.broken
    for pattern in patterns:
        for example in pattern.examples:
            problems.extend(_check_example(matcher, pattern, example))
        for related in pattern.related:
            if related not in by_id:
                problems.append(SchemaProblem(pattern.origin, f"'{pattern.id}': related id '{related}' does not exist"))
    for pattern, error in matcher.broken:
        problems.append(SchemaProblem(pattern.origin, f"'{pattern.id}': template does not compile: {error}"))
    return sorted(problems, key=lambda p: _origin_order(p.where))


def _check_example(matcher: Matcher, pattern: Pattern, example: str) -> list[SchemaProblem]:
    found = matcher.match_message(example, pattern.short_exception)
    if found.pattern is not None and found.pattern.id == pattern.id and found.match_kind is MatchKind.EXACT:
        return []
    own = matcher.compiled(pattern.id)
    if own is None:
        return []  # reported once as a template that does not compile
    if own.match(example) is None:
        return [SchemaProblem(pattern.origin, f"'{pattern.id}': example does not match its template: {example!r}")]
    if found.match_kind is MatchKind.POSSIBLE:
        return []  # a generic text only "possibly" fits without a traceback: at its own site this one wins
    other = found.pattern
    if other is not None and other.curated and _generated(pattern):
        return []  # a page written for the same message explains this extracted signature too
    theirs = matcher.compiled(other.id) if other is not None else None
    if other is not None and theirs is not None and theirs.literal != own.literal and not (_generated(pattern) and _generated(other)):
        return [SchemaProblem(pattern.origin, f"'{pattern.id}': example is claimed by '{other.id}' "
                                              f"({other.origin}) first: {example!r}")]
    return []  # the same message raised at several sites: the raise site tells them apart


def _generated(pattern: Pattern) -> bool:
    """Extracted signatures carry synthesized examples (fields filled with 'foo'); two of them
    overlapping is a fact of the source, told apart at match time by the raise site."""
    return "extracted" in pattern.tags and not pattern.curated


def _origin_order(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else (where, 0)
