"""Capture naming: a readable, unique group name from a field's source expression."""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.core import lazyregex
from analyzer.core.template.fields import skip_string

_NAME_RE = lazyregex.compile(r"[A-Za-z_]\w*|\d+")
_INVALID_RE = lazyregex.compile(r"[^0-9A-Za-z_]+")
_MAX_NAME = 60


def _sanitize(s: str) -> str:
    s = _INVALID_RE.sub("_", s)
    s = s.lstrip("_").rstrip("_")
    if s and s[0].isdigit():
        s = "v" + s
    s = s[:_MAX_NAME].rstrip("_")
    return s or "value"


def _outside_strings(e: str, i: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) for each character of ``e[i:]`` outside string
    literals; an unpaired quote is just a character."""
    depth = 0
    n = len(e)
    while i < n:
        c = e[i]
        if c in "'\"":
            j = skip_string(e, i)
            i = j if j > 0 else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        yield i, c, depth
        i += 1


def _close_index(e: str, i: int) -> int:
    """Index of the bracket closing ``e[i]``, string-aware; -1 if none."""
    return next((k for k, c, depth in _outside_strings(e, i) if c in ")]}" and depth == 0), -1)


def _split_top(e: str) -> list[str]:
    """Split call arguments on top-level commas."""
    parts: list[str] = []
    last = 0
    for i, c, depth in _outside_strings(e):
        if c == "," and depth == 0:
            parts.append(e[last:i])
            last = i + 1
    parts.append(e[last:])
    return [p.strip() for p in parts if p.strip()]


def _chain(e: str) -> list[tuple[str, str]] | None:
    """Split ``a.b(c)[d]`` into components, or ``None`` if not such a chain."""
    m = _NAME_RE.match(e)
    if m is None:
        return None
    comps = [("name", m.group())]
    i = m.end()
    n = len(e)
    while i < n:
        c = e[i]
        if c.isspace():
            i += 1
            continue
        if c == ".":
            m = _NAME_RE.match(e, i + 1)
            if m is None or m.group()[0].isdigit():
                return None
            comps.append(("name", m.group()))
            i = m.end()
        elif c in "([":
            j = _close_index(e, i)
            if j < 0:
                return None
            comps.append(("call" if c == "(" else "sub", e[i + 1 : j]))
            i = j + 1
        else:
            return None
    return comps


def _chain_name(comps: list[tuple[str, str]]) -> str:
    while len(comps) > 1 and comps[-1][0] == "sub":
        comps = comps[:-1]
    kind, text = comps[-1]
    if kind == "name":
        return "arg" + text if text.isdigit() else _sanitize(text)
    base = _chain_name(comps[:-1])
    args = [a if a.isdigit() else expr_name(a) for a in _split_top(text)]
    return _sanitize("_".join([base, *args]))


def expr_name(expr: str) -> str:
    e = expr.strip()
    comps = _chain(e)
    if comps is not None:
        return _chain_name(comps)
    return _sanitize(e)
