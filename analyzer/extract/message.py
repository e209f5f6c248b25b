"""Turn a message-building expression (an ``ast`` node) into a template.

A template is the format string as it appears in the source:

* ``plain``   -- a literal string, used verbatim;
* ``fstring`` -- an f-string; each replacement field is rebuilt as
  ``{expr}``, ``{expr!r}`` or ``{expr:spec}`` from ``ast.unparse`` and
  literal braces are escaped back to ``{{`` / ``}}``;
* ``percent`` -- the left operand of ``"..." % args`` (or a logging call
  with extra arguments); ``%s``-style directives are kept;
* ``format``  -- the receiver of ``"...".format(...)``; ``{}`` fields kept.

Alongside each template we synthesize one example message by filling every
field with a plausible value, so a pack can self-test that each template
matches its own example.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "Msg",
    "to_msg",
    "percent_example",
    "format_example",
    "SAMPLE_WORD",
]

SAMPLE_WORD = "foo"
SAMPLE_REPR = repr(SAMPLE_WORD)  # "'foo'"
SAMPLE_INT = 42
SAMPLE_FLOAT = 1.5

_INT_TYPES = frozenset("bcdoxXn")
_FLOAT_TYPES = frozenset("eEfFgG%")


@dataclass(frozen=True)
class Msg:
    """A reconstructed message template."""

    template: str
    style: str  # plain | fstring | percent | format
    example: str | None  # None when no example could be synthesized


# --------------------------------------------------------------------------
# example synthesis helpers


def _sample_for_spec(spec: str, conversion: str | None):
    """Pick a sample value suited to a format spec / conversion."""
    if conversion in ("r", "a"):
        return SAMPLE_REPR
    kind = spec[-1:] if spec else ""
    if kind in _INT_TYPES:
        return SAMPLE_INT
    if kind in _FLOAT_TYPES:
        return SAMPLE_FLOAT
    return SAMPLE_WORD


def _render_field(spec: str | None, conversion: str | None) -> str:
    """Render one replacement field of an f-string or str.format template."""
    spec = spec or ""
    value = _sample_for_spec(spec, conversion)
    if spec and "{" not in spec:
        try:
            return format(value, spec)
        except (ValueError, TypeError):
            pass
    return str(value)


_PCT_RE = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?"
    r"(?P<flags>[#0\- +]*)"
    r"(?P<width>\*|\d+)?"
    r"(?:\.(?P<prec>\*|\d*))?"
    r"[hlL]?"
    r"(?P<type>[diouxXeEfFgGcrsa%])"
)


def percent_example(template: str) -> str:
    """Fill every ``%`` directive of *template* with a sample value."""

    def repl(m: re.Match) -> str:
        typ = m.group("type")
        if typ == "%":
            return "%"
        if typ in "diouxX":
            value: int | float | str = SAMPLE_INT
        elif typ in "eEfFgG":
            value = SAMPLE_FLOAT
        elif typ == "c":
            value = "x"
        else:  # s r a
            value = SAMPLE_WORD
        width = m.group("width")
        prec = m.group("prec")
        directive = "%" + m.group("flags")
        if width and width != "*":
            directive += width
        if prec is not None and prec != "*":
            directive += "." + prec
        directive += typ
        try:
            return directive % value
        except (ValueError, TypeError):
            return str(value)

    return _PCT_RE.sub(repl, template)


def format_example(template: str) -> str | None:
    """Fill every ``str.format`` field of *template*; None if malformed."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    out: list[str] = []
    for literal, field, spec, conv in parsed:
        out.append(literal)
        if field is not None:
            out.append(_render_field(spec, conv))
    return "".join(out)


# --------------------------------------------------------------------------
# ast -> template


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _field_expr(node: ast.AST) -> str:
    src = ast.unparse(node)
    # A replacement field that starts with a brace (dict/set display) needs
    # a space so it is not read as an escaped brace.
    if src.startswith("{"):
        src = " " + src
    return src


_CONVERSIONS = {-1: None, 115: "s", 114: "r", 97: "a"}


def _formatted_value(node: ast.FormattedValue) -> tuple[str, str]:
    """Return (template text, example text) for one f-string field."""
    conv = _CONVERSIONS.get(node.conversion)
    text = "{" + _field_expr(node.value)
    if conv:
        text += "!" + conv
    spec_text = None
    if node.format_spec is not None:
        parts: list[str] = []
        for piece in getattr(node.format_spec, "values", [node.format_spec]):
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                parts.append(piece.value)
            elif isinstance(piece, ast.FormattedValue):
                inner, _ = _formatted_value(piece)
                parts.append(inner)
            else:  # pragma: no cover - defensive
                parts.append("{" + ast.unparse(piece) + "}")
        spec_text = "".join(parts)
        text += ":" + spec_text
    text += "}"
    return text, _render_field(spec_text, conv)


def _joined(node: ast.JoinedStr) -> Msg:
    tpl: list[str] = []
    ex: list[str] = []
    for piece in node.values:
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            tpl.append(_escape_braces(piece.value))
            ex.append(piece.value)
        elif isinstance(piece, ast.FormattedValue):
            t, e = _formatted_value(piece)
            tpl.append(t)
            ex.append(e)
    return Msg("".join(tpl), "fstring", "".join(ex))


def _as_fstring_piece(node: ast.AST, env: Mapping[str, Msg]) -> tuple[str, str, bool]:
    """One operand of a ``+`` chain as (fstring text, example, is_literal)."""
    msg = to_msg(node, env)
    if msg is not None and msg.style == "plain":
        return _escape_braces(msg.template), msg.template, True
    if msg is not None and msg.style == "fstring":
        return msg.template, msg.example or "", False
    # str(x) / repr(x) around a value become {x} / {x!r}
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("str", "repr")
        and len(node.args) == 1
        and not node.keywords
    ):
        inner = _field_expr(node.args[0])
        if node.func.id == "repr":
            return "{" + inner + "!r}", SAMPLE_REPR, False
        return "{" + inner + "}", SAMPLE_WORD, False
    return "{" + _field_expr(node) + "}", SAMPLE_WORD, False


def _flatten_add(node: ast.AST, out: list[ast.AST]) -> None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        _flatten_add(node.left, out)
        _flatten_add(node.right, out)
    else:
        out.append(node)


def _is_stringish(node: ast.AST, env: Mapping[str, Msg]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Name):
        return node.id in env
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _is_stringish(node.left, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _is_stringish(node.func.value, env)
    return False


def _concat(node: ast.BinOp, env: Mapping[str, Msg]) -> Msg | None:
    operands: list[ast.AST] = []
    _flatten_add(node, operands)
    # Only treat it as a message when at least one operand is a string
    # literal; ``a + b`` of unknowns is not a message.
    if not any(_is_stringish(op, env) for op in operands):
        return None
    tpl: list[str] = []
    ex: list[str] = []
    all_literal = True
    for op in operands:
        t, e, literal = _as_fstring_piece(op, env)
        tpl.append(t)
        ex.append(e)
        all_literal = all_literal and literal
    if all_literal:
        text = "".join(ex)
        return Msg(text, "plain", text)
    return Msg("".join(tpl), "fstring", "".join(ex))


def to_msg(node: ast.AST | None, env: Mapping[str, Msg] | None = None) -> Msg | None:
    """Reconstruct the template of a message expression, or None.

    *env* maps local variable names to templates assigned earlier in the
    enclosing block(s), so ``msg = f"..."; raise X(msg)`` resolves.
    """
    if node is None:
        return None
    env = env or {}
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return Msg(node.value, "plain", node.value)
        return None
    if isinstance(node, ast.JoinedStr):
        return _joined(node)
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mod):
            left = to_msg(node.left, env)
            if left is None:
                return None
            if left.style == "plain":
                return Msg(left.template, "percent", percent_example(left.template))
            return left
        if isinstance(node.op, ast.Add):
            return _concat(node, env)
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "format":
            base = to_msg(node.func.value, env)
            if base is not None and base.style == "plain":
                return Msg(base.template, "format", format_example(base.template))
            return base
        return None
    return None
