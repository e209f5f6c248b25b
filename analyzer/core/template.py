"""Compile exception-message templates into anchored matchers.

A *template* is an exception message exactly as the source code spells it,
for example the f-string body
``DeepSeekV4 CP supports moe_a2a_backend in {supported}, got {cfg.backend!r}.``
or the percent-format string ``"expected %d ranks, got %r"``.
:func:`compile_template` turns such a template into an anchored ``regex``
pattern with one named capture per field and records what each field was
(:class:`Field`).  :meth:`CompiledTemplate.match` applies the pattern to a
message from a log and returns the typed field values.

The module is pure: no I/O, no printing, no global state besides caches.

Rules the implementation follows (beyond the obvious ones):

* **Styles.**  ``"fstring"`` and ``"format"`` parse ``{...}`` fields (with
  ``{{``/``}}`` escapes) and differ only in the ``style`` recorded on each
  field and in f-string-only ``{expr=}`` self-documenting fields.
  ``"percent"`` parses ``%``-directives.  ``"auto"`` tries, in order: brace
  fields (used when the template parses and has at least one field), then
  percent directives (lenient: an invalid ``%`` or a ``%`` with the space flag
  such as ``"50% done"`` stays literal), then plain literal text, which is
  taken verbatim (``{{`` and ``%%`` are *not* unescaped then).  The label of
  an auto-detected brace field is ``"format"`` when the template uses a
  positional field (``{}``/``{0}``), else ``"fstring"``.
* **Repeated names.**  Every field occurrence gets its own capture group, and
  a later name that is already taken gets ``_2``, ``_3``, ... -- also when it
  is the *same* expression used twice (``{x} ... {x}`` gives ``x`` and
  ``x_2``).  No backreference is used, so the two occurrences are not forced
  to be textually equal (they may legitimately differ, e.g. ``{x}`` and
  ``{x!r}``).
* **Empty values.**  Every capture is non-empty: an empty generic value would
  make adjacent fields and whitespace hopelessly ambiguous.  A message whose
  field rendered as an empty string therefore does not match.
* **Whitespace.**  Each whitespace run inside the template's literal text
  matches ``\\s+``; whitespace at the template's ends is dropped and the
  message may carry any leading/trailing whitespace.
* **Adjacent lazy fields** (``{a}{b}``) compile, but matching a hostile
  message may backtrack heavily; :meth:`CompiledTemplate.match` relies on the
  ``regex`` timeout and returns ``None`` when it fires.
* **Values.**  ``!r``/``!a``/``%r``/``%a`` fields go through
  :func:`parse_value` (``inf``/``nan`` become floats); numeric specs give
  ``int``/``float`` (``%`` type: the fraction, ``"12.5%"`` -> ``0.125``;
  ``x``/``o``/``b`` types: ``int`` in that base); generic fields give
  ``parse_value`` of a bracketed display or a plain decimal number and the
  captured ``str`` otherwise (quotes kept).
* **Tokens.**  ``literal_tokens`` are lowercased ``[a-z0-9_-]{3,}`` runs of the
  literal text that contain a letter or digit; a run glued to a field
  (``rank{r}``) is left out because in a message it is only part of a word.
  ``prefix`` is left-stripped but keeps one trailing space before a field.
* The compiled pattern also contains helper groups in a ``(?(DEFINE)...)``
  block (names start with ``_``) when a ``!r``-style field is present; use
  :meth:`CompiledTemplate.match` or the field names, not ``groupdict()``.
* **Cost.**  Parsing a template takes ~10 us; ``regex.compile`` (pure Python
  in the ``regex`` package) takes ~0.3 ms for a plain template and ~1-2 ms
  with a repr field, so compiling 10,000 templates costs seconds.
  :func:`compile_template` is memoised.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

import regex

__all__ = [
    "CompiledTemplate",
    "Field",
    "TemplateError",
    "compile_template",
    "parse_value",
]

_FLAGS = regex.DOTALL | regex.V0
_STYLES = ("auto", "fstring", "format", "percent")


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


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A compiled template; see :func:`compile_template`."""

    template: str
    pattern: "regex.Pattern[str]"
    fields: tuple[Field, ...]
    literal: str
    literal_tokens: tuple[str, ...]
    prefix: str

    def match(self, message: str, timeout: float = 0.05) -> dict[str, object] | None:
        """Match a whole message; return ``{field name: typed value}``.

        ``None`` when the message does not match or the regex times out after
        ``timeout`` seconds.  A template without fields gives ``{}``.
        """
        try:
            m = self.pattern.match(message, timeout=timeout)
        except TimeoutError:
            return None
        if m is None:
            return None
        return {f.name: _convert(f, m.group(f.name)) for f in self.fields}


# ---------------------------------------------------------------------------
# parse_value


_NUMBER_RE = regex.compile(r"[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d+)?[jJ]?")
_STRING_START_RE = regex.compile(r"(?i:[rbuf]|rb|br)?['\"]")
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
    :func:`ast.literal_eval`; on failure, or for any other text, ``text`` is
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
        return ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


# ---------------------------------------------------------------------------
# field kinds: capture regex and value conversion

# Python repr: quoted strings (with b/r/u prefixes and escapes), numbers,
# None/True/False, balanced (recursive) ( ) [ ] { } displays optionally
# preceded by a dotted name (``Foo(...)``, ``torch.Size([2])``), and
# ``<...>`` object reprs (two levels of nested ``<>``).  Anything else
# (``inf``, ``torch.float16``) is left to the lazy ``.+?`` fallback.  The
# block is kept small on purpose: ``regex.compile`` is pure Python and this
# block dominates the compile time of a template with a repr field.
_REPR_DEFINE = (
    r"(?(DEFINE)"
    r"(?<_rs>[bBrRuU]{0,2}(?:'(?:[^'\\\n]|\\.)*+'|\"(?:[^\"\\\n]|\\.)*+\"))"
    r"(?<_ri>(?:[^()\[\]{}'\"]++|(?&_rs)|(?&_rb)|['\"])*+)"
    r"(?<_rb>\((?&_ri)\)|\[(?&_ri)\]|\{(?&_ri)\})"
    r"(?<_r>(?&_rs)|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?j?|None|True|False"
    r"|[\w.]*(?&_rb)|<[^<>]*+(?:<[^<>]*+>[^<>]*+)*+>)"
    r")"
)
_REPR_CORE = r"(?&_r)|.+?"
_GENERIC_CORE = r".+?"

_FORMAT_SPEC_RE = regex.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?(?P<alt>\#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<prec>\d+))?(?P<type>[bcdeEfFgGnosxX%])?",
    _FLAGS,
)
_PERCENT_SPEC_RE = regex.compile(
    r"(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGc])?"
)

_GENERIC = "generic"
_REPR = "repr"
_INT = "int"
_FLOAT = "float"
_PERCENT = "percent"
_HEX = "hex"
_OCT = "oct"
_BIN = "bin"
_NUMBER = "number"

_BRACE_TYPE_KIND = {
    "d": _INT, "n": _NUMBER, "x": _HEX, "X": _HEX, "o": _OCT, "b": _BIN,
    "e": _FLOAT, "E": _FLOAT, "f": _FLOAT, "F": _FLOAT, "g": _FLOAT, "G": _FLOAT,
    "%": _PERCENT, "c": _GENERIC, "s": _GENERIC,
}
_PERCENT_TYPE_KIND = {
    "d": _INT, "i": _INT, "u": _INT, "x": _HEX, "X": _HEX, "o": _OCT,
    "e": _FLOAT, "E": _FLOAT, "f": _FLOAT, "F": _FLOAT, "g": _FLOAT, "G": _FLOAT,
    "c": _GENERIC,
}


def _digits(cls: str, grouping: str | None) -> str:
    if grouping:
        return f"[{cls}][{cls}{regex.escape(grouping)}]*"
    return f"[{cls}]+"


def _numeric_core(kind: str, grouping: str | None, space_sign: bool) -> str:
    sign = r"[-+ ]?" if space_sign else r"[-+]?"
    if kind == _INT:
        return sign + _digits(r"\d", grouping)
    if kind in (_FLOAT, _PERCENT, _NUMBER):
        return (
            sign + r"(?:(?:" + _digits(r"\d", grouping) + r"(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:inf|nan))"
        )
    if kind == _HEX:
        return sign + r"(?:0[xX])?" + _digits("0-9a-fA-F", grouping and "_")
    if kind == _OCT:
        return sign + r"(?:0[oO])?" + _digits("0-7", grouping and "_")
    if kind == _BIN:
        return sign + r"(?:0[bB])?" + _digits("01", grouping and "_")
    raise AssertionError(kind)  # pragma: no cover


def _padding(fill: str | None, side: str) -> tuple[str, str]:
    pad = regex.escape(fill or " ") + "*"
    if side == "after":
        return "", pad
    if side == "before":
        return pad, ""
    return pad, pad


@lru_cache(maxsize=65536)
def _plan(f: Field) -> tuple[str, str, str, str, str]:
    """(kind, core regex, padding before, padding after, suffix) of a field."""
    if f.style == "percent":
        return _plan_percent(f)
    spec = f.format_spec
    conv = f.conversion
    kind = _REPR if conv in ("r", "a") else _GENERIC
    if spec is None:
        return kind, _REPR_CORE if kind == _REPR else _GENERIC_CORE, "", "", ""
    m = _FORMAT_SPEC_RE.fullmatch(spec)
    if m is None:
        # nested replacement fields ({x:{width}}) may pad; custom __format__
        # specs (datetime "%Y-%m-%d", ...) are taken as opaque text.
        before, after = _padding(None, "both") if "{" in spec else ("", "")
        return kind, _REPR_CORE if kind == _REPR else _GENERIC_CORE, before, after, ""
    before = after = ""
    if m["width"] or m["align"]:
        align = m["align"]
        side = {"<": "after", ">": "before", "=": "before", "^": "both"}.get(align or "", "both")
        before, after = _padding(m["fill"], side)
    typ = m["type"]
    if kind == _GENERIC and conv is None:
        if typ is not None:
            kind = _BRACE_TYPE_KIND[typ]
        elif m["grouping"] or m["sign"] or m["alt"] or m["align"] == "=":
            # only numbers accept these without a type: "{n:,}", "{n:+}"
            kind = _NUMBER
    if kind == _REPR:
        return kind, _REPR_CORE, before, after, ""
    if kind == _GENERIC:
        return kind, _GENERIC_CORE, before, after, ""
    core = _numeric_core(kind, m["grouping"], m["sign"] == " ")
    if kind == _NUMBER and typ is None:
        core += "|.+?"  # the kind was guessed from the spec; stay tolerant
    return kind, core, before, after, "%" if kind == _PERCENT else ""


def _plan_percent(f: Field) -> tuple[str, str, str, str, str]:
    m = _PERCENT_SPEC_RE.fullmatch(f.format_spec or "")
    flags = m["flags"] if m else ""
    width = m["width"] if m else None
    before = after = ""
    if width:
        side = "after" if "-" in flags else ("both" if width == "*" else "before")
        before, after = _padding(None, side)
    if f.conversion in ("r", "a"):
        return _REPR, _REPR_CORE, before, after, ""
    typ = m["type"] if m else None
    kind = _PERCENT_TYPE_KIND.get(typ or "", _GENERIC)
    if kind == _GENERIC:
        return kind, _GENERIC_CORE, before, after, ""
    return kind, _numeric_core(kind, None, " " in flags), before, after, ""


_SPECIAL_FLOATS = {"inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf"),
                   "nan": float("nan"), "+nan": float("nan"), "-nan": float("nan")}
# numbers as str()/format() print them (no "_" grouping, no leading "+")
_PLAIN_NUMBER_RE = regex.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _convert(f: Field, text: str) -> object:
    kind = _plan(f)[0]
    if kind == _GENERIC:
        s = text
        if s and ((s[0] in _CLOSER and s[-1] == _CLOSER[s[0]]) or _PLAIN_NUMBER_RE.fullmatch(s)):
            return parse_value(s)
        return text
    if kind == _REPR:
        special = _SPECIAL_FLOATS.get(text)
        return special if special is not None else parse_value(text)
    t = text.replace(",", "").replace(" ", "")
    try:
        if kind == _INT:
            return int(t)
        if kind == _HEX:
            return int(t, 16)
        if kind == _OCT:
            return int(t, 8)
        if kind == _BIN:
            return int(t, 2)
        if kind == _PERCENT:
            return float(t) / 100
        if kind == _NUMBER:
            try:
                return int(t)
            except ValueError:
                return float(t)
        return float(t)
    except ValueError:
        return parse_value(text)


# ---------------------------------------------------------------------------
# parsing templates into segments


@dataclass(slots=True)
class _Raw:
    expr: str
    conversion: str | None
    format_spec: str | None
    position: int  # 0-based offset of the field in the template


_Segment = Union[str, _Raw]


def _skip_string(t: str, i: int) -> int:
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
            j = _skip_string(t, i)
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


_PERCENT_RE = regex.compile(
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


# ---------------------------------------------------------------------------
# capture names

_NAME_RE = regex.compile(r"[A-Za-z_]\w*|\d+")
_INVALID_RE = regex.compile(r"[^0-9A-Za-z_]+")
_MAX_NAME = 60


def _sanitize(s: str) -> str:
    s = _INVALID_RE.sub("_", s)
    s = s.lstrip("_").rstrip("_")
    if s and s[0].isdigit():
        s = "v" + s
    s = s[:_MAX_NAME].rstrip("_")
    return s or "value"


def _close_index(e: str, i: int) -> int:
    """Index of the bracket closing ``e[i]``, string-aware; -1 if none."""
    depth = 0
    n = len(e)
    while i < n:
        c = e[i]
        if c in "'\"":
            j = _skip_string(e, i)
            i = j if j > 0 else i + 1  # an unpaired quote is just a character
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_top(e: str) -> list[str]:
    """Split call arguments on top-level commas."""
    parts: list[str] = []
    depth = 0
    last = 0
    i = 0
    n = len(e)
    while i < n:
        c = e[i]
        if c in "'\"":
            j = _skip_string(e, i)
            i = j if j > 0 else i + 1  # an unpaired quote is just a character
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(e[last:i])
            last = i + 1
        i += 1
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
    args = [a if a.isdigit() else _expr_name(a) for a in _split_top(text)]
    return _sanitize("_".join([base, *args]))


def _expr_name(expr: str) -> str:
    e = expr.strip()
    comps = _chain(e)
    if comps is not None:
        return _chain_name(comps)
    return _sanitize(e)


# ---------------------------------------------------------------------------
# assembling


_WS_RE = regex.compile(r"\s+")
_TOKEN_RE = regex.compile(r"[a-z0-9_-]{3,}")


def _literal_regex(s: str) -> str:
    return r"\s+".join(regex.escape(p) for p in _WS_RE.split(s))


def _collapse(s: str) -> str:
    return _WS_RE.sub(" ", s)


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


def _tokens(segments: list[_Segment]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    last = len(segments) - 1
    for k, seg in enumerate(segments):
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


@lru_cache(maxsize=32768)
def compile_template(template: str, style: str = "auto") -> CompiledTemplate:
    """Compile ``template`` (an exception message as the source formats it).

    ``style`` is ``"auto"``, ``"fstring"``, ``"format"`` or ``"percent"``.
    Raises :class:`TemplateError` when a forced style cannot parse the
    template.  Results are cached (the returned object is immutable).
    """
    if not isinstance(template, str):
        raise TypeError(f"template must be str, not {type(template).__name__}")
    if style not in _STYLES:
        raise ValueError(f"style must be one of {_STYLES}, not {style!r}")
    segments, label = _segments_for(template, style)

    # drop template-edge whitespace (the pattern tolerates any at the ends)
    if segments and isinstance(segments[0], str):
        segments[0] = segments[0].lstrip()
    if segments and isinstance(segments[-1], str):
        segments[-1] = segments[-1].rstrip()

    fields: list[Field] = []
    used: set[str] = set()
    auto_index = 0
    parts: list[str] = [r"\A\s*"]
    has_repr = False
    for seg in segments:
        if isinstance(seg, str):
            if seg:
                parts.append(_literal_regex(seg))
            continue
        if seg.expr == "":
            base = f"arg{auto_index}"
            auto_index += 1
        elif seg.expr.isdigit():
            base = f"arg{int(seg.expr)}"
        else:
            base = _expr_name(seg.expr)
        name = base
        k = 2
        while name in used:
            name = f"{base}_{k}"
            k += 1
        used.add(name)
        field = Field(name, seg.expr, seg.conversion, seg.format_spec, label)
        fields.append(field)
        kind, core, before, after, suffix = _plan(field)
        has_repr = has_repr or kind == _REPR
        parts.append(f"{before}(?P<{name}>{core}){suffix}{after}")
    parts.append(r"\s*\Z")
    if has_repr:
        parts.append(_REPR_DEFINE)
    try:
        pattern = regex.compile("".join(parts), _FLAGS)
    except regex.error as exc:  # pragma: no cover - defensive
        raise TemplateError(f"internal pattern error: {exc}", template) from None

    literal = _collapse("".join(s for s in segments if isinstance(s, str))).strip()
    if fields and segments and isinstance(segments[0], str):
        prefix = _collapse(segments[0]).lstrip()
    elif fields:
        prefix = ""
    else:
        prefix = literal
    return CompiledTemplate(
        template=template,
        pattern=pattern,
        fields=tuple(fields),
        literal=literal,
        literal_tokens=_tokens(segments),
        prefix=prefix,
    )
