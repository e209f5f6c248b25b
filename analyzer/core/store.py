"""Where the Matcher finds candidate patterns: by literal word, by raise site, by id.

A store answers only the questions matching asks, so a pack of 20,000 signatures can stay on disk
(sources/pack_index.py) and only the few candidates for a message are ever read. `MemoryStore`
indexes a list of patterns in memory the same way. Which word and which site a pattern is filed
under is the Matcher's rule (`matcher.index_keys`), handed in, never restated here. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from analyzer.core.schema import Pattern

__all__ = ["PatternStore", "MemoryStore", "IndexKeys", "Site"]

Site = tuple[str, str]  # (package-relative path, function leaf name)
IndexKeys = Callable[[Pattern], tuple[str | None, Site | None]]  # the word and the site a pattern is filed under


@runtime_checkable
class PatternStore(Protocol):
    def get(self, pattern_id: str) -> Pattern | None: ...

    def by_word(self, word: str, short_type: str | None) -> Sequence[Pattern]:
        """Patterns filed under `word`; only those of exception `short_type` when it is given."""

    def by_site(self, site: Site) -> Sequence[Pattern]: ...

    def line_patterns(self) -> Sequence[Pattern]:
        """The `match: line` patterns (log-line notices)."""

    def frame_patterns(self) -> Sequence[Pattern]:
        """The patterns told by the frames they happen in (`site:`, core/sites.py)."""

    def ids(self) -> frozenset[str]: ...

    def __iter__(self) -> Iterator[Pattern]:
        """Every pattern, in pack order: reads the whole store."""


class MemoryStore:
    """Patterns held in memory; a later pattern with an id already seen replaces it in place."""

    def __init__(self, patterns: Iterable[Pattern], keys: IndexKeys) -> None:
        self._by_id: dict[str, Pattern] = {}
        for pattern in patterns:
            self._by_id[pattern.id] = pattern
        self._by_word: dict[tuple[str, str | None], list[Pattern]] = defaultdict(list)
        self._by_site: dict[Site, list[Pattern]] = defaultdict(list)
        for pattern in self._by_id.values():
            word, site = keys(pattern)
            if word:
                self._by_word[(word, None)].append(pattern)
                self._by_word[(word, pattern.short_exception)].append(pattern)
            if site:
                self._by_site[site].append(pattern)
        self._lines = tuple(p for p in self._by_id.values() if p.match == "line")
        self._framed = tuple(p for p in self._by_id.values() if p.site is not None)

    def get(self, pattern_id: str) -> Pattern | None:
        return self._by_id.get(pattern_id)

    def by_word(self, word: str, short_type: str | None) -> Sequence[Pattern]:
        return self._by_word.get((word, short_type), ())

    def by_site(self, site: Site) -> Sequence[Pattern]:
        return self._by_site.get(site, ())

    def line_patterns(self) -> Sequence[Pattern]:
        return self._lines

    def frame_patterns(self) -> Sequence[Pattern]:
        return self._framed

    def ids(self) -> frozenset[str]:
        return frozenset(self._by_id)

    def __iter__(self) -> Iterator[Pattern]:
        return iter(tuple(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)
