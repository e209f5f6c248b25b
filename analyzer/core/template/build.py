"""Regex building: the capture pattern of each field kind, from its conversion and format spec."""

from __future__ import annotations

from functools import lru_cache

import regex

from analyzer.core import lazyregex
from analyzer.core.template.fields import Field

FLAGS = regex.DOTALL | regex.V0

# Python repr: quoted strings (with b/r/u prefixes and escapes), numbers,
# None/True/False, balanced (recursive) ( ) [ ] { } displays optionally
# preceded by a dotted name (``Foo(...)``, ``torch.Size([2])``), and
# ``<...>`` object reprs (two levels of nested ``<>``).  Anything else
# (``inf``, ``torch.float16``) is left to the lazy ``.+?`` fallback.  The
# block is kept small on purpose: ``regex.compile`` is pure Python and this
# block dominates the compile time of a template with a repr field.
REPR_DEFINE = (
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

_FORMAT_SPEC_RE = lazyregex.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?(?P<alt>\#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<prec>\d+))?(?P<type>[bcdeEfFgGnosxX%])?",
    FLAGS,
)
_PERCENT_SPEC_RE = lazyregex.compile(
    r"(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGc])?"
)

GENERIC = "generic"
REPR = "repr"
INT = "int"
_FLOAT = "float"
PERCENT = "percent"
HEX = "hex"
OCT = "oct"
BIN = "bin"
NUMBER = "number"

_BRACE_TYPE_KIND = {
    "d": INT, "n": NUMBER, "x": HEX, "X": HEX, "o": OCT, "b": BIN,
    "e": _FLOAT, "E": _FLOAT, "f": _FLOAT, "F": _FLOAT, "g": _FLOAT, "G": _FLOAT,
    "%": PERCENT, "c": GENERIC, "s": GENERIC,
}
_PERCENT_TYPE_KIND = {
    "d": INT, "i": INT, "u": INT, "x": HEX, "X": HEX, "o": OCT,
    "e": _FLOAT, "E": _FLOAT, "f": _FLOAT, "F": _FLOAT, "g": _FLOAT, "G": _FLOAT,
    "c": GENERIC,
}


def _digits(cls: str, grouping: str | None) -> str:
    if grouping:
        return f"[{cls}][{cls}{regex.escape(grouping)}]*"
    return f"[{cls}]+"


def _numeric_core(kind: str, grouping: str | None, space_sign: bool) -> str:
    sign = r"[-+ ]?" if space_sign else r"[-+]?"
    if kind == INT:
        return sign + _digits(r"\d", grouping)
    if kind in (_FLOAT, PERCENT, NUMBER):
        return (
            sign + r"(?:(?:" + _digits(r"\d", grouping) + r"(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:inf|nan))"
        )
    if kind == HEX:
        return sign + r"(?:0[xX])?" + _digits("0-9a-fA-F", grouping and "_")
    if kind == OCT:
        return sign + r"(?:0[oO])?" + _digits("0-7", grouping and "_")
    if kind == BIN:
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
def plan(f: Field) -> tuple[str, str, str, str, str]:
    """(kind, core regex, padding before, padding after, suffix) of a field."""
    if f.style == "percent":
        return _plan_percent(f)
    spec = f.format_spec
    conv = f.conversion
    kind = REPR if conv in ("r", "a") else GENERIC
    if spec is None:
        return kind, _REPR_CORE if kind == REPR else _GENERIC_CORE, "", "", ""
    m = _FORMAT_SPEC_RE.fullmatch(spec)
    if m is None:
        # nested replacement fields ({x:{width}}) may pad; custom __format__
        # specs (datetime "%Y-%m-%d", ...) are taken as opaque text.
        before, after = _padding(None, "both") if "{" in spec else ("", "")
        return kind, _REPR_CORE if kind == REPR else _GENERIC_CORE, before, after, ""
    before = after = ""
    if m["width"] or m["align"]:
        align = m["align"]
        side = {"<": "after", ">": "before", "=": "before", "^": "both"}.get(align or "", "both")
        before, after = _padding(m["fill"], side)
    typ = m["type"]
    if kind == GENERIC and conv is None:
        if typ is not None:
            kind = _BRACE_TYPE_KIND[typ]
        elif m["grouping"] or m["sign"] or m["alt"] or m["align"] == "=":
            # only numbers accept these without a type: "{n:,}", "{n:+}"
            kind = NUMBER
    if kind == REPR:
        return kind, _REPR_CORE, before, after, ""
    if kind == GENERIC:
        return kind, _GENERIC_CORE, before, after, ""
    core = _numeric_core(kind, m["grouping"], m["sign"] == " ")
    if kind == NUMBER and typ is None:
        core += "|.+?"  # the kind was guessed from the spec; stay tolerant
    return kind, core, before, after, "%" if kind == PERCENT else ""


def _plan_percent(f: Field) -> tuple[str, str, str, str, str]:
    m = _PERCENT_SPEC_RE.fullmatch(f.format_spec or "")
    flags = m["flags"] if m else ""
    width = m["width"] if m else None
    before = after = ""
    if width:
        side = "after" if "-" in flags else ("both" if width == "*" else "before")
        before, after = _padding(None, side)
    if f.conversion in ("r", "a"):
        return REPR, _REPR_CORE, before, after, ""
    typ = m["type"] if m else None
    kind = _PERCENT_TYPE_KIND.get(typ or "", GENERIC)
    if kind == GENERIC:
        return kind, _GENERIC_CORE, before, after, ""
    return kind, _numeric_core(kind, None, " " in flags), before, after, ""


_WS_RE = lazyregex.compile(r"\s+")


def literal_regex(s: str) -> str:
    """Any run of blanks for a run of blanks; a line break only for one that holds a line break (a
    message's lines stay lines: a blank in the middle of one is not where its next line begins)."""
    pieces = _WS_RE.split(s)
    breaks = [r"[^\S\n]*\n\s*" if "\n" in run else r"\s+" for run in _WS_RE.findall(s)]
    return "".join(regex.escape(piece) + (breaks[i] if i < len(breaks) else "") for i, piece in enumerate(pieces))


def collapse(s: str) -> str:
    return _WS_RE.sub(" ", s)
