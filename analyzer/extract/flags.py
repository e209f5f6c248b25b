"""The command-line flags of a server's launch arguments, read from its source with ``ast``.

Three forms are read, so that a condition's ``cfg.moe_a2a_backend`` can be shown as
``--moe-a2a-backend`` with its help text, choices and default:

* ``parser.add_argument("--tp-size", "--tensor-parallel-size", help=..., choices=[...], default=...)``;
* SGLang's annotated fields, ``tp_size: A[int, "help"] = 1`` or ``A[Literal["a", "b"], Arg(help=...,
  choices=NAMES, cli_name=...)]``, registered as flags by its ``arg_utils``;
* vLLM's config dataclass fields, ``tensor_parallel_size: int = 1`` followed by a docstring, which
  its ``EngineArgs.add_cli_args`` turns into ``--tensor-parallel-size`` with that docstring as help.

Names of literal collections (``choices=LOAD_FORMAT_CHOICES``, ``Literal`` aliases) are resolved
across the scanned files. Nothing is imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from analyzer.extract.walker import last_name

__all__ = ["Flag", "FlagTable", "read_flags", "literal_values"]

_HELP_LIMIT = 400  # characters of help text kept


@dataclass(slots=True)
class Flag:
    flag: str  # the first long option, `--tp-size`
    attribute: str  # where argparse stores it, `tp_size`
    help: str = ""
    choices: tuple[Any, ...] = ()
    default: Any = None
    store_true: bool = False

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"flag": self.flag, "attribute": self.attribute}
        if self.help:
            out["help"] = self.help
        if self.choices:
            out["choices"] = list(self.choices)
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(slots=True)
class FlagTable:
    by_attribute: dict[str, Flag] = field(default_factory=dict)

    def get(self, attribute: str) -> Flag | None:
        return self.by_attribute.get(attribute)

    def __len__(self) -> int:
        return len(self.by_attribute)


def literal_values(node: ast.AST | None, names: dict[str, tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """The constants of a literal list/tuple/set, a name bound to one, `Literal[...]`, or `A + B` of them."""
    if node is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = []
        for element in node.elts:
            if not isinstance(element, ast.Constant):
                return None
            values.append(element.value)
        return tuple(values)
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        return names.get(node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "set", "frozenset", "list", "tuple") and len(node.args) == 1:
        return literal_values(node.args[0], names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
        left, right = literal_values(node.left, names), literal_values(node.right, names)
        return left + tuple(v for v in right if v not in left) if left is not None and right is not None else None
    if isinstance(node, ast.Subscript) and last_name(node.value) == "Literal":
        inner = node.slice
        elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if all(isinstance(e, ast.Constant) for e in elements):
            return tuple(e.value for e in elements)  # type: ignore[attr-defined]
    return None


def read_flags(modules: list[tuple[str, ast.Module]]) -> FlagTable:
    """The flags defined in `modules` (path, parsed tree), first definition of an attribute wins."""
    names: dict[str, tuple[Any, ...]] = {}
    for _, tree in modules:
        for node in tree.body:
            target, value = _assignment(node)
            if target and (values := literal_values(value, names)) is not None:
                names.setdefault(target, values)
    table = FlagTable()
    for _, tree in modules:
        for found in ast.walk(tree):
            if isinstance(found, ast.Call) and isinstance(found.func, ast.Attribute) and found.func.attr == "add_argument":
                _add(table, _from_add_argument(found, names))
            elif isinstance(found, ast.ClassDef):
                for flag in _from_class(found, names):
                    _add(table, flag)
    return table


def _add(table: FlagTable, found: Flag | None) -> None:
    """The first definition names the flag; a later one fills what it left out (vLLM's
    `add_argument("--model", **kwargs["model"])` takes help and choices from the config field)."""
    if found is None:
        return
    known = table.by_attribute.setdefault(found.attribute, found)
    if known is not found:
        known.help = known.help or found.help
        known.choices = known.choices or found.choices
        known.default = found.default if known.default is None else known.default
        known.store_true = known.store_true or found.store_true


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None, None


def _text(node: ast.AST | None) -> str:
    """A help string: constants joined, f-string fields kept as `{...}`, whitespace folded."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"  # type: ignore[attr-defined]
                       for v in node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        text = _text(node.left) + _text(node.right)
    else:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _HELP_LIMIT else text[:_HELP_LIMIT - 1].rstrip() + "…"


def _constant(node: ast.AST | None) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    return None


def _from_add_argument(call: ast.Call, names: dict[str, tuple[Any, ...]]) -> Flag | None:
    options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [o for o in options if o.startswith("--")]
    if not longs:
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    dest = _constant(keywords.get("dest")) or longs[0][2:].replace("-", "_")
    action = _constant(keywords.get("action"))
    return Flag(longs[0], dest, _text(keywords.get("help")), literal_values(keywords.get("choices"), names) or (),
                _constant(keywords.get("default")), action == "store_true")


def _from_class(node: ast.ClassDef, names: dict[str, tuple[Any, ...]]) -> list[Flag]:
    found = []
    body = node.body
    for index, statement in enumerate(body):
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        attribute = statement.target.id
        if attribute.startswith("_"):
            continue
        kind, meta = _annotation(statement.annotation)
        docstring = body[index + 1] if index + 1 < len(body) else None
        help_text = _text(docstring.value) if isinstance(docstring, ast.Expr) else ""
        cli_name = None
        choices = literal_values(kind, names) if kind is not None else None
        store_true = isinstance(kind, ast.Name) and kind.id == "bool"
        if meta is not None:  # SGLang's A[type, "help" | Arg(...)]
            if isinstance(meta, ast.Call):
                keywords = {k.arg: k.value for k in meta.keywords if k.arg}
                if _constant(keywords.get("no_cli")) is True:
                    continue
                help_text = _text(keywords.get("help")) or (_text(meta.args[0]) if meta.args else "")
                choices = literal_values(keywords.get("choices"), names) or choices
                cli_name = _constant(keywords.get("cli_name"))
                if keywords.get("action") is not None:
                    store_true = _constant(keywords.get("action")) == "store_true"
            else:
                help_text = _text(meta)
        elif not help_text:
            continue  # a field with neither metadata nor a docstring is no documented flag
        flag = cli_name if isinstance(cli_name, str) else "--" + attribute.replace("_", "-")
        found.append(Flag(flag, attribute, help_text, choices or (), _default(statement.value), store_true))
    return found


def _default(node: ast.expr | None) -> Any:
    """`= 1`, or a dataclass's `= Field(default=1, ...)` / `field(default=1)`."""
    if isinstance(node, ast.Call):
        return next((_constant(k.value) for k in node.keywords if k.arg == "default"), None)
    return _constant(node)


def _annotation(node: ast.expr) -> tuple[ast.expr | None, ast.expr | None]:
    """(the value type, with Optional removed; the CLI metadata of `A[...]`/`Annotated[...]`, if any)."""
    meta = None
    if isinstance(node, ast.Subscript) and last_name(node.value) in ("A", "Annotated") and isinstance(node.slice, ast.Tuple):
        elements = node.slice.elts
        node, meta = elements[0], elements[1] if len(elements) > 1 else None
    if isinstance(node, ast.Subscript) and last_name(node.value) == "Optional":
        node = node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # `X | None`
        node = node.left if isinstance(node.right, ast.Constant) else node
    return node, meta
