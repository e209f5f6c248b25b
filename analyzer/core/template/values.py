"""Value parsing: captured text turned into typed Python values."""

from __future__ import annotations

from analyzer.core import lazyregex
from analyzer.core.literal import literal
from analyzer.core.template.build import BIN, GENERIC, HEX, INT, NUMBER, OCT, PERCENT, REPR, plan
from analyzer.core.template.fields import Field

__all__ = ["parse_value"]



_NUMBER_RE = lazyregex.compile(r"[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d+)?[jJ]?")
_STRING_START_RE = lazyregex.compile(r"(?i:[rbuf]|rb|br)?['\"]")
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_CONSTANTS = {"None": None, "True": True, "False": False}
_MAX_EVAL = 200_000


def _looks_literal(s: str) -> bool:
    if not s:
        return False
    first = s[0]
    if first in _CLOSER:
        return s[-1] == _CLOSER[first]
    if s in _CONSTANTS:
        return True
    if _STRING_START_RE.match(s):
        return s[-1] in "'\""
    return _NUMBER_RE.fullmatch(s) is not None


def parse_value(text: str) -> object:
    """Typed value of a captured text.

    Text that looks like a Python literal (quoted string, number,
    ``None``/``True``/``False``, tuple/list/dict/set display) is passed to
    :func:`~analyzer.core.literal.literal`; on failure, or for any other text, ``text`` is
    returned unchanged.  Surrounding whitespace is ignored for the evaluation.
    """
    s = text.strip()
    if s in _CONSTANTS:
        return _CONSTANTS[s]
    if len(s) > _MAX_EVAL or not _looks_literal(s):
        return text
    if s[0] in "fF" and s[1:2] in ("'", '"'):
        return text  # an f-string display is not a literal
    try:
        return literal(s)
    except ValueError:
        return text



_SPECIAL_FLOATS = {"inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf"),
                   "nan": float("nan"), "+nan": float("nan"), "-nan": float("nan")}
# numbers as str()/format() print them (no "_" grouping, no leading "+")
_PLAIN_NUMBER_RE = lazyregex.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def convert(f: Field, text: str) -> object:
    kind = plan(f)[0]
    if kind == GENERIC:
        s = text
        if s and ((s[0] in _CLOSER and s[-1] == _CLOSER[s[0]]) or _PLAIN_NUMBER_RE.fullmatch(s)):
            return parse_value(s)
        return text
    if kind == REPR:
        special = _SPECIAL_FLOATS.get(text)
        return special if special is not None else parse_value(text)
    t = text.replace(",", "").replace(" ", "")
    try:
        if kind == INT:
            return int(t)
        if kind == HEX:
            return int(t, 16)
        if kind == OCT:
            return int(t, 8)
        if kind == BIN:
            return int(t, 2)
        if kind == PERCENT:
            return float(t) / 100
        if kind == NUMBER:
            try:
                return int(t)
            except ValueError:
                return float(t)
        return float(t)
    except ValueError:
        return parse_value(text)
