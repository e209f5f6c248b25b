"""`did you mean 'json'?` for a value close to one of argparse's allowed choices."""

from __future__ import annotations

from analyzer.core import lazyregex
from analyzer.core.closest import closest
from analyzer.core.literal import literal

__all__ = ["suggestion"]

# argparse: "invalid choice: 'jsn' (choose from 'text', 'jsonl', 'json')" (3.12+ may leave the quotes off)
_INVALID_CHOICE = lazyregex.compile(r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)$")


def suggestion(message: str) -> str | None:
    """The allowed choice closest to the rejected value in an argparse error `message`, if close."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return None
    return closest(_unquoted(found["value"]), [_unquoted(choice.strip()) for choice in found["choices"].split(",")])


def _unquoted(text: str) -> str:
    try:
        value = literal(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text
