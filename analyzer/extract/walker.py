"""Walk a module's ``ast`` and collect error-message signatures.

The source is parsed, never imported or executed. Only statements are
visited (expressions are left alone except for the ones that build a
message), which keeps a full SGLang tree fast to scan.

Each signature is a plain ``dict`` (picklable, so files can be scanned in a
process pool) with these keys:

``exception``  raised name as written (last dotted component) or a pseudo
               type (``log.error``, ``log.critical``, ``log.exception``,
               ``ArgumentError``, ``SystemExit``, ``AssertionError``)
``template``   reconstructed format string ("" when there is no message)
``style``      plain | fstring | percent | format
``example``    one synthesized message or None
``line``/``col`` position of the statement
``function``   qualified name (``Class.method``, ``outer.inner``,
               ``<module>``)
``trigger``    the path condition under which the statement runs: every
               enclosing ``if`` test (negated in the ``else`` branch) and the
               negated test of each earlier ``if`` in the same block that
               returns or raises, joined with ``and``; for an assert, its
               test negated (the error fires when the assertion is false)
``kind``       only for message-less entries: ``no-args``,
               ``non-string-arg`` or ``bare-assert``
``assert_expr`` / ``message_expr`` extra source text for those entries
``severity``   error | critical
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections.abc import Iterable
from typing import Any, TypeGuard

from analyzer.extract.message import Msg, percent_example, to_msg

__all__ = ["extract_source", "extract_file", "last_name", "ParseFailure"]

_LOG_METHODS = {
    "error": ("log.error", "error"),
    "exception": ("log.exception", "error"),
    "critical": ("log.critical", "critical"),
    "fatal": ("log.critical", "critical"),
}

_LOG_RECEIVERS = frozenset({"logging", "log", "_log", "getlogger"})

# keyword arguments that carry the message when there is no positional one
# (e.g. ``HTTPException(status_code=400, detail="...")``)
_MESSAGE_KEYWORDS = ("msg", "message", "detail")


class ParseFailure(Exception):
    """A file could not be parsed; ``line`` is best-effort (0 if unknown)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def last_name(node: ast.AST) -> str | None:
    """``a.b.C`` -> ``C``; ``C`` -> ``C``; anything else -> None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _receiver_name(node: ast.AST) -> str | None:
    """Name of the object a method is called on: ``self.logger`` -> logger,
    ``logging.getLogger(__name__)`` -> getLogger."""
    if isinstance(node, ast.Call):
        return last_name(node.func)
    return last_name(node)


def _looks_like_class(name: str | None) -> TypeGuard[str]:
    if not name:
        return False
    stripped = name.lstrip("_")
    return bool(stripped) and stripped[0].isupper()


class _Ctx:
    """Per-block walking context (immutable-ish; copied when descending)."""

    __slots__ = ("qual", "trigger", "env")

    def __init__(self, qual: tuple[str, ...], trigger: tuple[tuple[ast.expr, bool], ...], env: dict[str, Msg]):
        self.qual = qual
        # the path condition, outermost first: (test node, negated) pairs, unparsed lazily
        self.trigger = trigger
        self.env = env

    def under(self, test: ast.expr, negated: bool, env: dict[str, Msg] | None = None) -> _Ctx:
        return _Ctx(self.qual, self.trigger + ((test, negated),), self.env if env is None else env)


_PAREN_FOR_NOT = (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr,
                  ast.BinOp, ast.UnaryOp, ast.Await)
_PAREN_FOR_AND = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)
# Comparisons whose negation is another operator; `<`/`<=` are not inverted because sets (and NaN)
# are only partly ordered: `not (a <= b)` is not `a > b` for them.
_INVERSE = {ast.Eq: "!=", ast.NotEq: "==", ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class _Walker:
    def __init__(self, lines: list[bytes] | None = None) -> None:
        self.out: list[dict[str, Any]] = []
        self.lines = lines

    def _src(self, node: ast.expr) -> str:
        """Source text of a single-line expression; ``ast.unparse`` otherwise.

        Offsets from ``ast`` are UTF-8 byte offsets, hence the bytes lines.
        """
        lines = self.lines
        lineno = getattr(node, "lineno", None)
        if lines is not None and lineno is not None and lineno == node.end_lineno:
            try:
                return lines[lineno - 1][node.col_offset:node.end_col_offset].decode("utf-8")
            except (IndexError, UnicodeDecodeError, TypeError):
                pass
        return ast.unparse(node)

    # -- helpers ---------------------------------------------------------

    @staticmethod
    def _function(ctx: _Ctx) -> str:
        return ".".join(ctx.qual) if ctx.qual else "<module>"

    def _trigger_text(self, ctx: _Ctx, last: tuple[ast.expr, bool] | None = None) -> str | None:
        path = ctx.trigger + ((last,) if last else ())
        texts = [self._condition(test, negated, parenthesize=len(path) > 1) for test, negated in path]
        return " and ".join(texts) if texts else None

    def _condition(self, test: ast.expr, negated: bool, parenthesize: bool) -> str:
        if not negated:
            text = self._src(test)
            return f"({text})" if parenthesize and isinstance(test, _PAREN_FOR_AND) else text
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._condition(test.operand, False, parenthesize)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _INVERSE:
            return f"{self._src(test.left)} {_INVERSE[type(test.ops[0])]} {self._src(test.comparators[0])}"
        if isinstance(test, _PAREN_FOR_NOT):
            return f"not ({self._src(test)})"
        return f"not {self._src(test)}"

    def _emit(
        self,
        node: ast.stmt,
        ctx: _Ctx,
        exception: str,
        msg: Msg | None,
        *,
        trigger: str | None | bool = False,
        kind: str | None = None,
        severity: str = "error",
        **extra: Any,
    ) -> None:
        rec: dict[str, Any] = {
            "exception": exception,
            "template": msg.template if msg else "",
            "style": msg.style if msg else "plain",
            "example": msg.example if msg and msg.template else None,
            "line": node.lineno,
            "col": node.col_offset,
            "function": self._function(ctx),
            "trigger": self._trigger_text(ctx) if trigger is False else trigger,
            "severity": severity,
        }
        if kind:
            rec["kind"] = kind
        rec.update(extra)
        self.out.append(rec)

    # -- statement handlers ----------------------------------------------

    def _raise(self, node: ast.Raise, ctx: _Ctx) -> None:
        exc = node.exc
        if exc is None:  # bare re-raise
            return
        if isinstance(exc, ast.Call):
            name = last_name(exc.func)
            if not _looks_like_class(name):
                return  # factory call / variable: type unknown
            arg = None
            if exc.args and not isinstance(exc.args[0], ast.Starred):
                arg = exc.args[0]
            elif not exc.args:
                for kw in exc.keywords:
                    if kw.arg in _MESSAGE_KEYWORDS:
                        arg = kw.value
                        break
            if arg is None:
                if exc.args:  # raise X(*args)
                    self._emit(node, ctx, name, None, kind="non-string-arg",
                               message_expr=self._src(exc.args[0]))
                else:
                    self._emit(node, ctx, name, None, kind="no-args")
                return
            msg = to_msg(arg, ctx.env)
            if msg is None:
                self._emit(node, ctx, name, None, kind="non-string-arg",
                           message_expr=self._src(arg))
            else:
                self._emit(node, ctx, name, msg)
            return
        name = last_name(exc)
        if _looks_like_class(name):
            self._emit(node, ctx, name, None, kind="no-args")
        # lower-case names are re-raised instances (``raise e``): skip

    def _assert(self, node: ast.Assert, ctx: _Ctx) -> None:
        test_src = self._src(node.test)
        fires = self._trigger_text(ctx, (node.test, True))  # the error is raised when the test is false
        if node.msg is None:
            self._emit(node, ctx, "AssertionError", None, trigger=fires,
                       kind="bare-assert", assert_expr=test_src)
            return
        msg = to_msg(node.msg, ctx.env)
        if msg is None:
            self._emit(node, ctx, "AssertionError", None, trigger=fires,
                       kind="non-string-arg", message_expr=self._src(node.msg))
        else:
            self._emit(node, ctx, "AssertionError", msg, trigger=fires)

    def _call(self, call: ast.Call, node: ast.stmt, ctx: _Ctx) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        attr = func.attr
        receiver = _receiver_name(func.value)
        if receiver is None:
            return
        low = receiver.lower()
        if attr == "exit" and receiver == "sys":
            if call.args:
                msg = to_msg(call.args[0], ctx.env)
                if msg is not None and msg.template:
                    self._emit(node, ctx, "SystemExit", msg)
            return
        if attr == "error" and "parser" in low:
            if call.args:
                msg = to_msg(call.args[0], ctx.env)
                if msg is not None and msg.template:
                    self._emit(node, ctx, "ArgumentError", msg)
            return
        spec = _LOG_METHODS.get(attr)
        if spec is None or not (low.endswith("logger") or low in _LOG_RECEIVERS):
            return
        if not call.args or isinstance(call.args[0], ast.Starred):
            return
        msg = to_msg(call.args[0], ctx.env)
        if msg is None or not msg.template:
            return
        if len(call.args) > 1 and msg.style == "plain":
            msg = Msg(msg.template, "percent", percent_example(msg.template))
        self._emit(node, ctx, spec[0], msg, severity=spec[1])

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, ctx: _Ctx) -> None:
        env = ctx.env
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if not names:
                return
            msg = to_msg(node.value, env)
            for n in names:
                if msg is None:
                    env.pop(n, None)
                else:
                    env[n] = msg
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name):
                msg = to_msg(node.value, env) if node.value is not None else None
                if msg is None:
                    env.pop(node.target.id, None)
                else:
                    env[node.target.id] = msg
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if name in env and isinstance(node.op, ast.Add):
                combined = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()),
                                     op=ast.Add(), right=node.value)
                msg = to_msg(combined, env)
                if msg is not None:
                    env[name] = msg
                    return
            env.pop(name, None)

    # -- traversal ---------------------------------------------------------

    def block(self, stmts: Iterable[ast.stmt], ctx: _Ctx) -> None:
        for node in stmts:
            if isinstance(node, ast.Raise):
                self._raise(node, ctx)
            elif isinstance(node, ast.Assert):
                self._assert(node, ctx)
            elif isinstance(node, ast.Expr):
                if isinstance(node.value, ast.Call):
                    self._call(node.value, node, ctx)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self._assign(node, ctx)
            elif isinstance(node, ast.If):
                self.block(node.body, ctx.under(node.test, False, dict(ctx.env)))
                if node.orelse:
                    self.block(node.orelse, ctx.under(node.test, True, dict(ctx.env)))
                body_exits, else_exits = _exits(node.body), bool(node.orelse) and _exits(node.orelse)
                if body_exits != else_exits:  # an early return: what follows runs only on the other branch
                    ctx = ctx.under(node.test, body_exits)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.block(node.body, _Ctx(ctx.qual + (node.name,), (), {}))
            elif isinstance(node, ast.Try) or (sys.version_info >= (3, 11) and isinstance(node, ast.TryStar)):
                inner = _Ctx(ctx.qual, ctx.trigger, dict(ctx.env))
                self.block(node.body, inner)
                for handler in node.handlers:
                    self.block(handler.body, _Ctx(ctx.qual, ctx.trigger, dict(ctx.env)))
                if node.orelse:
                    self.block(node.orelse, inner)
                if node.finalbody:
                    self.block(node.finalbody, _Ctx(ctx.qual, ctx.trigger, dict(ctx.env)))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                self.block(node.body, _Ctx(ctx.qual, ctx.trigger, dict(ctx.env)))
                if node.orelse:
                    self.block(node.orelse, _Ctx(ctx.qual, ctx.trigger, dict(ctx.env)))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                # a with-block runs unconditionally: share the env
                self.block(node.body, ctx)
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    self.block(case.body, _Ctx(ctx.qual, ctx.trigger, dict(ctx.env)))


def _exits(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], _EXITS)


def _utf8_lines(source: bytes) -> list[bytes] | None:
    """Lines of *source* as UTF-8 bytes (what ``ast`` offsets count in)."""
    if source.startswith(b"\xef\xbb\xbf") or b"coding" in source[:400]:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
            source = source.decode(encoding).encode("utf-8")
            if source.startswith(b"\xef\xbb\xbf"):
                source = source[3:]
        except (SyntaxError, LookupError, UnicodeError):
            return None
    # bytes.splitlines splits on \r, \n and \r\n only, like the tokenizer
    return source.splitlines()


def extract_source(source: str | bytes, filename: str = "<unknown>") -> list[dict[str, Any]]:
    """Parse *source* and return its signatures in source order.

    Raises :class:`ParseFailure` when the source cannot be parsed.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        reason = f"{type(exc).__name__}: {exc.msg}"
        raise ParseFailure(exc.lineno or 0, reason) from None
    except (ValueError, UnicodeDecodeError) as exc:  # null bytes, bad encoding
        line = 0
        if isinstance(exc, UnicodeDecodeError) and isinstance(source, bytes):
            line = source.count(b"\n", 0, exc.start) + 1
        raise ParseFailure(line, f"{type(exc).__name__}: {exc}") from None
    except RecursionError:
        raise ParseFailure(0, "RecursionError: source nests too deeply") from None
    lines = None
    if isinstance(source, bytes):
        lines = _utf8_lines(source)
    walker = _Walker(lines)
    try:
        walker.block(tree.body, _Ctx((), (), {}))
    except RecursionError:
        raise ParseFailure(0, "RecursionError: source nests too deeply") from None
    walker.out.sort(key=lambda r: (r["line"], r["col"]))
    return walker.out


def extract_file(path: str) -> list[dict[str, Any]]:
    """Read and scan one file (bytes, so PEP 263 coding cookies apply)."""
    with open(path, "rb") as fh:
        data = fh.read()
    return extract_source(data, filename=path)
