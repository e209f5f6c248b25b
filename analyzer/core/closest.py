"""The allowed value closest to one that was refused: `did you mean 'deepep'?`."""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz, process

__all__ = ["closest"]

CLOSE_ENOUGH = 70  # rapidfuzz's 0-100 similarity: a typo or two in a short word, not another word


def closest(value: str, choices: Iterable[str]) -> str | None:
    """The choice most like `value` when it is close enough, else None (also when `value` is one)."""
    options = [choice for choice in choices if choice]
    if not value or value in options:
        return None
    best = process.extractOne(value, options, scorer=fuzz.ratio, score_cutoff=CLOSE_ENOUGH)
    return best[0] if best else None
