"""Field scanning: a template split into literal text and replacement fields.

Brace fields (``{expr!r:spec}``, with ``{{``/``}}`` escapes and f-string
quoting) and percent directives (``%(key)5.2f``).  Cheap (~10 us, no regex
compiled), so the matcher indexes thousands of templates by their literal
words with it and never disagrees with the compiled pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from analyzer.core import lazyregex

__all__ = ["TemplateError", "Field", "segments", "has_fields", "literal_text", "literal_parts", "literal_tokens"]

STYLES = ("auto", "fstring", "format", "percent", "plain")
_TOKEN_RE = lazyregex.compile(r"[a-z0-9_-]{3,}")
_NO_WORD = lazyregex.compile(r"(?!)")


class TemplateError(ValueError):
    """A template cannot be parsed in the requested style.

    ``reason`` is the bare problem, ``column`` the 1-based column in the
    template where it was found (``None`` when not tied to a place).
    """

    def __init__(self, reason: str, template: str = "", column: int | None = None) -> None:
        text = reason
        if column is not None:
            text += f" at column {column}"
        if template:
            shown = template if len(template) <= 120 else template[:117] + "..."
            text += f" in template {shown!r}"
        super().__init__(text)
        self.reason = reason
        self.template = template
        self.column = column


@dataclass(frozen=True, slots=True)
class Field:
    """One replacement field of a template.

    ``name``: capture-group name; ``expr``: source expression text (``""``
    for ``{}`` and ``%s``, the digits for ``{0}``, the key for ``%(key)s``);
    ``conversion``: ``"r"``, ``"s"``, ``"a"`` or ``None`` (``%s``/``%r``/``%a``
    map to ``"s"``/``"r"``/``"a"``; an ``{x=}`` field without conversion and
    spec records the implicit ``"r"``); ``format_spec``: the text after ``:``
    (brace styles) or the flags/width/precision/type of a percent directive
    (``"d"``, ``".2f"``, ``"-10"`` for ``%-10s``), ``None`` when empty.
    """

    name: str
    expr: str
    conversion: str | None
    format_spec: str | None
    style: str




@dataclass(slots=True)
class _Raw:
    expr: str
    conversion: str | None
    format_spec: str | None
    position: int  # 0-based offset of the field in the template


_Segment = str | _Raw


def skip_string(t: str, i: int) -> int:
    """Index just past the string literal starting at ``t[i]``, or -1."""
    q = t[i]
    delim = q * 3 if t.startswith(q * 3, i) else q
    j = i + len(delim)
    n = len(t)
    while j < n:
        c = t[j]
        if c == "\\":
            j += 2
            continue
        if t.startswith(delim, j):
            return j + len(delim)
        if c == "\n" and len(delim) == 1:
            return -1
        j += 1
    return -1


_PAIR = {")": "(", "]": "["}


def _scan_field(t: str, start: int, fstring: bool) -> tuple[list[_Segment], int]:
    """Parse the field opening at ``t[start] == "{"``; return segments and end.

    With ``fstring`` the expression may hold string literals (skipped as a
    whole) and may be a self-documenting ``{expr=}``; str.format field names
    give quotes no meaning.
    """
    n = len(t)
    i = start + 1
    stack: list[str] = []
    while i < n:
        c = t[i]
        if fstring and c in "'\"":
            j = skip_string(t, i)
            if j < 0:
                raise TemplateError("unterminated string inside field", t, i + 1)
            i = j
            continue
        if c in "([{":
            stack.append(c)
        elif c in ")]":
            if not stack or stack[-1] != _PAIR[c]:
                raise TemplateError(f"unmatched {c!r} inside field", t, i + 1)
            stack.pop()
        elif c == "}":
            if not stack:
                break
            if stack[-1] != "{":
                raise TemplateError("unmatched '}' inside field", t, i + 1)
            stack.pop()
        elif not stack and (c == ":" or (c == "!" and t[i + 1 : i + 2] != "=")):
            break
        i += 1
    else:
        raise TemplateError("unterminated field: '{' is never closed", t, start + 1)
    expr_text = t[start + 1 : i]
    conversion: str | None = None
    spec: str | None = None
    if t[i] == "!":
        k = i + 1
        while k < n and t[k] not in ":}":
            k += 1
        if k >= n:
            raise TemplateError("unterminated field: '{' is never closed", t, start + 1)
        conversion = t[i + 1 : k]
        if conversion not in ("r", "s", "a"):
            raise TemplateError(f"invalid conversion '!{conversion}' (expected !r, !s or !a)", t, i + 1)
        i = k
    if t[i] == ":":
        depth = 0
        k = i + 1
        while k < n:
            c = t[k]
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    break
                depth -= 1
            k += 1
        else:
            raise TemplateError("unterminated format spec: '{' is never closed", t, start + 1)
        spec = t[i + 1 : k] or None
        i = k
    # t[i] == "}"
    segments: list[_Segment] = []
    stripped = expr_text.rstrip()
    if fstring and stripped.endswith("=") and len(stripped) > 1 and stripped[-2] not in "=!<>":
        # f-string self-documenting field: renders "expr=" then the value
        segments.append(expr_text)
        expr_text = stripped[:-1]
        if conversion is None and spec is None:
            conversion = "r"
    segments.append(_Raw(expr_text.strip(), conversion, spec, start))
    return segments, i + 1


def _parse_braces(t: str, fstring: bool) -> list[_Segment]:
    out: list[_Segment] = []
    buf: list[str] = []
    i = 0
    n = len(t)
    while i < n:
        c = t[i]
        if c == "{":
            if t.startswith("{{", i):
                buf.append("{")
                i += 2
                continue
            segs, i = _scan_field(t, i, fstring)
            if isinstance(segs[0], str):
                buf.append(segs[0])
            if buf:
                out.append("".join(buf))
                buf = []
            out.append(segs[-1])
        elif c == "}":
            if t.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise TemplateError("single '}' is not allowed (write '}}')", t, i + 1)
        else:
            j = i + 1
            while j < n and t[j] not in "{}":
                j += 1
            buf.append(t[i:j])
            i = j
    if buf:
        out.append("".join(buf))
    return out


_PERCENT_RE = lazyregex.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
    r"[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def _parse_percent(t: str, strict: bool) -> list[_Segment]:
    out: list[_Segment] = []
    buf: list[str] = []
    i = 0
    n = len(t)
    while i < n:
        j = t.find("%", i)
        if j < 0:
            buf.append(t[i:])
            break
        buf.append(t[i:j])
        m = _PERCENT_RE.match(t, j)
        if m is None or (not strict and " " in m["flags"]):
            if strict:
                raise TemplateError("incomplete or unsupported '%' directive (write '%%')", t, j + 1)
            buf.append("%")
            i = j + 1
            continue
        typ = m["type"]
        if typ == "%":
            buf.append("%")
            i = m.end()
            continue
        if buf:
            out.append("".join(buf))
            buf = []
        spec = (m["flags"] or "") + (m["width"] or "")
        if m["prec"] is not None:
            spec += "." + m["prec"]
        if typ in "rsa":
            conversion: str | None = typ
        else:
            conversion = None
            spec += typ
        out.append(_Raw(m["key"] if m["key"] is not None else "", conversion, spec or None, j))
        i = m.end()
    if buf and "".join(buf):
        out.append("".join(buf))
    return out



def _is_positional(expr: str) -> bool:
    return expr == "" or expr[0].isdigit()


def _segments_for(template: str, style: str) -> tuple[list[_Segment], str]:
    if style == "percent":
        return _parse_percent(template, strict=True), "percent"
    if style in ("fstring", "format"):
        return _parse_braces(template, fstring=style == "fstring"), style
    try:
        segs = _parse_braces(template, fstring=True)
    except TemplateError:
        segs = None
    if segs is not None and any(isinstance(s, _Raw) for s in segs):
        positional = any(isinstance(s, _Raw) and _is_positional(s.expr) for s in segs)
        return segs, "format" if positional else "fstring"
    segs = _parse_percent(template, strict=False)
    if any(isinstance(s, _Raw) for s in segs):
        return segs, "percent"
    return ([template] if template else []), "fstring"


def literal_tokens(pieces: list[_Segment]) -> tuple[str, ...]:
    """The ``CompiledTemplate.literal_tokens``: lower-cased runs of the literal text, none glued to a field."""
    seen: dict[str, None] = {}
    last = len(pieces) - 1
    for k, seg in enumerate(pieces):
        if not isinstance(seg, str):
            continue
        low = seg.lower()
        field_before = k > 0
        field_after = k < last
        for m in _TOKEN_RE.finditer(low):
            tok = m.group()
            if tok.strip("-_") == "":
                continue
            # a word glued to a field is only part of a message word
            if (field_before and m.start() == 0) or (field_after and m.end() == len(low)):
                continue
            seen.setdefault(tok, None)
    return tuple(seen)


def segments(template: str, style: str = "auto") -> tuple[list[_Segment], str]:
    """The template's literal pieces (``str``) and fields (``_Raw``) in order, and the style label.

    ``"plain"`` is literal text throughout: a message the source raises as a constant string has no
    fields, whatever ``{`` or ``%`` it contains (``chunked_prefill_size % index_kpool``).
    """
    if style == "plain":
        return ([template] if template else []), "fstring"
    return _segments_for(template, style)


def opening_text(template: str, style: str = "auto") -> str:
    """The fixed text a template opens with, up to its first field (all of it where it has none), whitespace
    collapsed; empty where it opens with a field or does not parse."""
    try:
        pieces = segments(template, style)[0]
    except TemplateError:
        return ""
    first = pieces[0] if pieces and isinstance(pieces[0], str) else ""
    return " ".join(first.split())


def literal_text(template: str, style: str = "auto") -> str:
    """The fixed text with each field replaced by one space, whitespace collapsed."""
    return literal_parts(template, _NO_WORD, style)[0]


def has_fields(template: str, style: str = "auto") -> bool:
    """Whether the template holds a value (a template that does not parse is taken as fixed text)."""
    try:
        return any(not isinstance(part, str) for part in segments(template, style)[0])
    except TemplateError:
        return False


def literal_parts(template: str, word: regex.Pattern[str], style: str = "auto") -> tuple[str, frozenset[str]]:
    """The literal text (as `literal_text`) and the lower-cased `word` runs of it that a message shows
    as whole words, from one parse: the matcher indexes thousands of templates by them. A run glued
    to a field (``{name}_block_cnt``, ``tensors{context}``, ``{len(x)}-tuple``) is only part of a
    message's word and is left out."""
    try:
        parts, _ = segments(template, style)
    except TemplateError:
        parts = [template]
    text = " ".join(" ".join(p if isinstance(p, str) else " " for p in parts).split())
    found: set[str] = set()
    last = len(parts) - 1
    for k, part in enumerate(parts):
        if not isinstance(part, str):
            continue
        low = part.lower()
        for m in word.finditer(low):
            # inside the literal a message shows the same words; at a field's edge the value continues
            # the word (a word run may also continue through the dashes before it: `{n}-tuple`)
            start, end = m.span()
            if (k > 0 and not low[:start].strip("-")) or (k < last and end == len(low)):
                continue
            found.add(m.group())
    return text, frozenset(found)
