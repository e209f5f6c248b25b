"""Pages derived from the source for every extracted signature (`analyzer patterns derive`).

For each entry of an extracted pack, its file is parsed again (never imported) and these are read
off the code: the lines around the raise, a link pinned to the release, the path condition in
words (an assert fires when its test is false), the sibling raises that share its condition, a
docstring or comment as a hint, and, for launch arguments, the flags behind the attributes the
condition tests, the values it allows, a before/after command line when the condition says which
flag to change, and the environment variables involved.

The result is a sidecar beside the pack, `patterns/<project>/derived.jsonl.zst`: a header line,
one line per file with the source lines the snippets need (each line stored once), then one line
per signature keyed by its id. The pattern index copies it (`sources/pack_index.py`), so a page
reads one row; `analyzer.sources.derived` reads the sidecar back.
"""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from analyzer.extract.flags import Flag, FlagTable, literal_values, read_flags
from analyzer.extract.walker import _Ctx, _Walker

__all__ = ["Project", "PROJECTS", "derive_rows", "write_sidecar", "SIDECAR"]

SIDECAR = "derived.jsonl.zst"  # the name analyzer.sources.derived looks for
_BEFORE, _AFTER = 8, 6  # lines of context around the raise statement
_RELATED = 4
_HINT_LIMIT = 300
_LONG_PHRASE = 100  # characters: a condition part longer than this is counted, not shown


@dataclass(frozen=True, slots=True)
class Project:
    """Where a project's source lives on GitHub and which files hold its launch arguments."""

    repo: str
    tag: str  # `v{version}`
    prefix: str  # the package's folder in the repository
    launch_files: tuple[str, ...]  # paths (or folders, ending in /) whose attributes are flags
    receivers: tuple[str, ...]  # objects that carry the flags in any other file

    def link(self, version: str, path: str, line: int) -> str:
        return f"https://github.com/{self.repo}/blob/{self.tag.format(version=version)}/{self.prefix}{path}#L{line}"

    def is_launch(self, path: str) -> bool:
        return any(path.startswith(f) if f.endswith("/") else path == f for f in self.launch_files)


PROJECTS = {
    "sglang": Project("sgl-project/sglang", "v{version}", "python/",
                      ("sglang/srt/server_args.py", "sglang/srt/arg_groups/"), ("server_args", "args")),
    "vllm": Project("vllm-project/vllm", "v{version}", "", ("vllm/engine/arg_utils.py", "vllm/config/"),
                    ("engine_args", "args", "vllm_config", "parallel_config", "model_config", "cache_config",
                     "scheduler_config")),
    "torch": Project("pytorch/pytorch", "v{version}", "", ("torch/distributed/run.py",), ("args",)),
    "launchpkg": Project("example/launchpkg", "v{version}", "src/", ("launchpkg/",), ()),  # the test fixture
}

_ENV_IN_CODE = re.compile(r"""\benvs\.([A-Z][A-Z0-9_]{2,})|(?:environ(?:\.get)?|getenv|_env_var|get_\w*env\w*)\s*[(\[]\s*["']([A-Z][A-Z0-9_]{2,})["']""")
_ENV_IN_TEXT = re.compile(r"\b((?:SGLANG|VLLM|CUDA|NCCL|TORCH|PYTORCH|HF|TRITON|TORCHINDUCTOR)_[A-Z0-9_]{2,})\b")
_SKIP_COMMENT = re.compile(r"^(noqa|type:|pragma|fmt:|pylint|isort|mypy)", re.I)
_NULLISH = {"none", "null", "auto", ""}


# --------------------------------------------------------------------------
# the walker, keeping each signature's path condition as nodes


class _PathWalker(_Walker):
    """The extractor's walker, recording each signature's statement and path condition (nodes)."""

    def _emit(self, node: ast.stmt, ctx: _Ctx, exception: str, msg: Any, **kwargs: Any) -> None:
        super()._emit(node, ctx, exception, msg, **kwargs)
        path = ctx.trigger + (((node.test, True),) if isinstance(node, ast.Assert) else ())
        self.out[-1].update(node=node, path=path)


@dataclass(slots=True)
class _Term:
    """One conjunct of a path condition: the test and whether the path needs it false."""

    test: ast.expr
    negated: bool


def _terms(path: Iterable[tuple[ast.expr, bool]]) -> list[_Term]:
    """The conjuncts: `a and b` splits, `not (a or b)` splits by De Morgan, `not x` flips."""
    out: list[_Term] = []
    todo = [_Term(test, negated) for test, negated in path]
    while todo:
        term = todo.pop(0)
        test = term.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            todo.insert(0, _Term(test.operand, not term.negated))
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) != term.negated:
            todo[:0] = [_Term(value, term.negated) for value in test.values]
        else:
            out.append(term)
    return out


# --------------------------------------------------------------------------
# words


_WORDS = {ast.Eq: "is", ast.NotEq: "is not", ast.In: "is one of", ast.NotIn: "is not one of", ast.Is: "is",
          ast.IsNot: "is not", ast.Gt: "is above", ast.GtE: "is at least", ast.Lt: "is below", ast.LtE: "is at most"}
_NEGATE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
           ast.IsNot: ast.Is, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Lt: ast.GtE, ast.GtE: ast.Lt}


class _Context:
    """What one file's derivation knows: flags, literal names, whether attributes are flags here."""

    def __init__(self, flags: FlagTable, names: dict[str, tuple[Any, ...]], launch: bool,
                 receivers: tuple[str, ...]) -> None:
        self.flags, self.names, self.launch, self.receivers = flags, names, launch, receivers

    def flag_of(self, node: ast.AST) -> Flag | None:
        if not isinstance(node, ast.Attribute) or not self.flags:
            return None
        receiver = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
        if self.launch or receiver in self.receivers:
            return self.flags.get(node.attr)
        return None

    def name(self, node: ast.AST) -> str:
        found = self.flag_of(node)
        return f"`{found.flag}`" if found else f"`{_short(ast.unparse(node))}`"


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _value(node: ast.expr, context: _Context) -> str:
    if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Set)) and literal_values(
            node, {}) is not None or isinstance(node, ast.Constant):
        return ast.unparse(node)
    values = literal_values(node, context.names)
    if values is not None:
        return "(" + ", ".join(repr(v) for v in values) + ")"
    return f"`{_short(ast.unparse(node))}`"


def _phrase(term: _Term, context: _Context) -> str:
    test = term.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _phrase(_Term(test.operand, not term.negated), context)
    if isinstance(test, ast.Compare) and len(test.ops) == 2 and all(isinstance(o, (ast.Lt, ast.LtE)) for o in test.ops):
        low, high = test.left, test.comparators[1]
        between = f"between {_value(low, context)} and {_value(high, context)}"
        return f"{context.name(test.comparators[0])} is {'not ' if term.negated else ''}{between}"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op = type(test.ops[0])
        if term.negated:
            op = _NEGATE[op]
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            return f"{context.name(test.left)} {'is not set' if op is ast.Is else 'is set'}"
        words = _WORDS[op]
        if op in (ast.In, ast.NotIn) and literal_values(right, context.names) is None:
            words = "is in" if op is ast.In else "is not in"  # a container, not a list of values
        return f"{context.name(test.left)} {words} {_value(right, context)}"
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2:
        return f"{context.name(test.args[0])} {'is not' if term.negated else 'is'} a `{ast.unparse(test.args[1])}`"
    if isinstance(test, (ast.Attribute, ast.Name)):
        return f"{context.name(test)} {'is not set' if term.negated else 'is set'}"
    if isinstance(test, ast.BoolOp):  # what _terms could not split: `a or b`, `not (a and b)` (De Morgan)
        return "(" + " or ".join(_phrase(_Term(value, term.negated), context) for value in test.values) + ")"
    text = f"`{_short(ast.unparse(test))}`"
    return f"{text} is false" if term.negated else f"{text} is true"


def condition_words(terms: Sequence[_Term], context: _Context) -> str:
    if not terms:
        return ""
    phrases = [_phrase(term, context) for term in terms]
    # a long compound test (an early `return` of the function, mostly) is told as a count, not spelled out
    kept = [phrase for phrase in phrases[:-1] if len(phrase) <= _LONG_PHRASE] + phrases[-1:]
    joined = kept[0] if len(kept) == 1 else ", ".join(kept[:-1]) + " and " + kept[-1]
    dropped = len(phrases) - len(kept)
    return f"fires when {joined}" + (f" (past {dropped} more check{'s' if dropped > 1 else ''} on the way)"
                                     if dropped else "")


# --------------------------------------------------------------------------
# launch arguments: flags, allowed values, before/after


def _subject(term: _Term) -> ast.expr:
    test = term.test
    if isinstance(test, ast.Compare):
        return test.left
    if isinstance(test, ast.Call) and test.args:
        return test.args[0]
    return test


def _allowed(term: _Term, flag: Flag | None, context: _Context) -> tuple[Any, ...]:
    """What the last test of the condition lets through, when it says."""
    test = term.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op = type(test.ops[0])
        firing = _NEGATE[op] if term.negated else op
        right = test.comparators[0]
        if firing is ast.NotIn:
            values = literal_values(right, context.names)
            if values is not None:
                return values
        if firing is ast.NotEq and isinstance(right, ast.Constant) and right.value is not None:
            return (right.value,)
        if firing is ast.In and flag and flag.choices:
            refused = literal_values(right, context.names) or ()
            return tuple(c for c in flag.choices if c not in refused)
    return flag.choices if flag else ()


def _option(flag: Flag, value: Any) -> str:
    return f"{flag.flag} {value}"


def _context_option(term: _Term, context: _Context) -> str | None:
    """A condition term kept as it is on both command lines (`--enable-prefill-cp`, `--mode prefill`)."""
    flag = context.flag_of(_subject(term))
    if flag is None:
        return None
    test = term.test
    if isinstance(test, ast.Attribute) and not term.negated and flag.store_true:
        return flag.flag
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op = type(test.ops[0])
        if (_NEGATE[op] if term.negated else op) in (ast.Eq, ast.Is) and test.comparators[0].value is not None:
            value = test.comparators[0].value
            return flag.flag if value is True and flag.store_true else _option(flag, value)
    return None


def _change(term: _Term, flag: Flag, allowed: tuple[Any, ...]) -> tuple[str, str] | None:
    """(before, after) for the flag the last test names; None when the test does not say."""
    test = term.test
    if isinstance(test, ast.Attribute) and not term.negated and flag.store_true and flag.default is not True:
        return flag.flag, ""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op = type(test.ops[0])
    firing = _NEGATE[op] if term.negated else op
    right = test.comparators[0]
    bound = right.value if isinstance(right, ast.Constant) else None
    if isinstance(bound, int) and not isinstance(bound, bool):
        edges = {ast.Gt: (bound + 1, bound), ast.GtE: (bound, bound - 1), ast.Lt: (bound - 1, bound),
                 ast.LtE: (bound, bound + 1)}
        if firing in edges:
            bad, good = edges[firing]
            return _option(flag, bad), _option(flag, good)
    # never a switch to a `none`/`null`/`auto` value: that turns a feature off (`--disaggregation-mode null`)
    # rather than choosing what the check asks for
    preferred = [v for v in allowed if isinstance(v, (str, int, float)) and not isinstance(v, bool)
                 and str(v).lower() not in _NULLISH]
    if firing in (ast.NotIn, ast.NotEq) and preferred:
        return _option(flag, "<value>"), _option(flag, preferred[0])
    if firing in (ast.Eq, ast.In) and preferred:
        return _option(flag, bound if isinstance(bound, str) else "<value>"), _option(flag, preferred[0])
    return None


# --------------------------------------------------------------------------
# one file


def _identifiers(terms: Sequence[_Term]) -> set[str]:
    """What a condition tests: attribute names and plain names, not the objects attributes hang on."""
    found: set[str] = set()
    receivers: set[int] = set()
    for term in terms:
        for node in ast.walk(term.test):
            if isinstance(node, ast.Attribute):
                found.add(node.attr)
                receivers.add(id(node.value))
            elif isinstance(node, ast.Call):
                receivers.add(id(node.func))
        found.update(node.id for node in ast.walk(term.test) if isinstance(node, ast.Name) and id(node) not in receivers)
    return found


def _local_names(tree: ast.Module) -> dict[int, dict[str, tuple[Any, ...]]]:
    """Per function (by its first line, 0 for the module): names bound to literal collections."""
    scopes: dict[int, dict[str, tuple[Any, ...]]] = {0: {}}
    for node in tree.body:
        _bind(node, scopes[0], scopes[0])
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names: dict[str, tuple[Any, ...]] = {}
            for inner in ast.walk(function):
                _bind(inner, names, scopes[0])
            scopes[function.lineno] = names
    return scopes


def _bind(node: ast.AST, names: dict[str, tuple[Any, ...]], outer: dict[str, tuple[Any, ...]]) -> None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        values = literal_values(node.value, {**outer, **names})
        if values is not None:
            names.setdefault(node.targets[0].id, values)


def _enclosing(tree: ast.Module) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Each line's innermost function."""
    owner: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                if line not in owner or owner[line].lineno < node.lineno:
                    owner[line] = node
    return owner


def _hint(lines: list[str], statement: ast.stmt, anchor: int, function: ast.AST | None) -> str:
    """A comment on or just above the raise (or the `if` it is under), else the function's docstring."""
    inline = lines[statement.lineno - 1].partition("#")[2].strip() if "#" in lines[statement.lineno - 1] else ""
    for start in (statement.lineno, anchor):
        found: list[str] = []
        line = start - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            found.insert(0, lines[line - 1].strip().lstrip("#").strip())
            line -= 1
        text = " ".join(f for f in found if f and not _SKIP_COMMENT.match(f))
        if text:
            return _short(text, _HINT_LIMIT)
    if inline and not _SKIP_COMMENT.match(inline) and not inline.startswith(("'", '"')):
        return _short(inline, _HINT_LIMIT)
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        doc = ast.get_docstring(function) or ""
        first = doc.strip().split("\n\n")[0]
        if first:
            return _short(first, _HINT_LIMIT)
    return ""


def _anchor(path: Sequence[tuple[ast.expr, bool]], statement: ast.stmt) -> int:
    """The line of the innermost `if` the statement is under (where a comment about it would sit)."""
    if path and not isinstance(statement, ast.Assert):
        return getattr(path[-1][0], "lineno", statement.lineno)
    return statement.lineno


def _env_vars(texts: Iterable[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for match in _ENV_IN_CODE.finditer(text):
            name = match.group(1) or match.group(2)
            if name not in found:
                found.append(name)
        for match in _ENV_IN_TEXT.finditer(text):
            if match.group(1) not in found:
                found.append(match.group(1))
    return found


def derive_file(project: Project, version: str, path: str, source: bytes, entries: Sequence[dict[str, Any]],
                flags: FlagTable) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One file: its record of snippet lines, and a row per entry found at its line."""
    tree = ast.parse(source)
    text_lines = source.decode("utf-8", "replace").splitlines()
    walker = _PathWalker(source.splitlines())
    walker.block(tree.body, _Ctx((), (), {}))
    found = {(rec["line"], rec["exception"]): rec for rec in walker.out}
    scopes = _local_names(tree)
    owners = _enclosing(tree)
    launch = project.is_launch(path)
    facts = []
    for entry in entries:
        rec = found.get((entry["source"]["line"], entry["exception"]))
        if rec is None:
            continue
        statement = rec["node"]
        function = owners.get(statement.lineno)
        names = {**scopes[0], **(scopes.get(function.lineno, {}) if function else {})}
        context = _Context(flags, names, launch, project.receivers)
        facts.append((entry, rec, _terms(rec["path"]), function, context))
    rows, covered = [], []
    for entry, rec, terms, function, context in facts:
        statement = rec["node"]
        start = max(1, statement.lineno - _BEFORE)
        end = min(len(text_lines), (statement.end_lineno or statement.lineno) + _AFTER)
        covered.append((start, end))
        row: dict[str, Any] = {"id": entry["id"], "path": path,
                               "snippet": {"start": start, "raise_line": statement.lineno, "end": end},
                               "link": project.link(version, path, statement.lineno)}
        row["condition"] = condition_words(terms, context)
        row["related"] = _related(entry, terms, function, facts)
        _launch_parts(row, terms, context)
        row["env_vars"] = _env_vars([ast.unparse(t.test) for t in terms] + [entry.get("template") or "",
                                    ast.unparse(statement)])
        row["hint"] = _hint(text_lines, statement, _anchor(rec["path"], statement), function)
        rows.append({k: v for k, v in row.items() if v not in ("", [], None)})
    return {"file": path, "segments": _segments(text_lines, covered)}, rows


def _launch_parts(row: dict[str, Any], terms: Sequence[_Term], context: _Context) -> None:
    flags: list[Flag] = []
    for term in terms:
        for node in ast.walk(term.test):
            flag = context.flag_of(node)
            if flag is not None and flag not in flags:
                flags.append(flag)
    row["flags"] = [flag.attribute for flag in flags]  # the sidecar's header holds each flag once
    if not terms:
        return
    last = terms[-1]
    subject = _subject(last)
    target = context.flag_of(subject)
    allowed = _allowed(last, target, context) if isinstance(subject, (ast.Name, ast.Attribute)) else ()
    row["allowed_values"] = [v for v in allowed if isinstance(v, (str, int, float, bool))]
    others = {f.attribute for term in terms[:-1] for node in ast.walk(term.test) if (f := context.flag_of(node))}
    if target is None or target.attribute in others or _env_vars(ast.unparse(t.test) for t in terms):
        return  # no command line for a test not tied to one flag, a flag tested twice, or under an env var
    change = _change(last, target, allowed)
    if change is None:
        return
    kept = [option for term in terms[:-1] if (option := _context_option(term, context))]
    before = " ".join(kept + [change[0]]).strip()
    after = " ".join(kept + [change[1]] if change[1] else kept).strip()
    row["before_after"] = [{"before": before, "after": after}]


def _related(entry: dict[str, Any], terms: Sequence[_Term], function: ast.AST | None,
             facts: Sequence[tuple[dict[str, Any], dict[str, Any], list[_Term], Any, _Context]]) -> list[dict]:
    mine = _identifiers(terms)
    line = entry["source"]["line"]
    siblings = [f for f in facts if f[0]["id"] != entry["id"] and f[3] is function and function is not None]
    scope = "same function"
    if not siblings:
        siblings = [f for f in facts if f[0]["id"] != entry["id"] and _identifiers(f[2]) & mine]
        scope = "same file"
    ranked = sorted(siblings, key=lambda f: (-len(_identifiers(f[2]) & mine), abs(f[0]["source"]["line"] - line),
                                             f[0]["source"]["line"]))
    out = []
    for other, _, other_terms, _, _ in ranked[:_RELATED]:
        shared = sorted(_identifiers(other_terms) & mine)
        why = scope + (", tests " + ", ".join(f"`{s}`" for s in shared[:3]) if shared else "")
        out.append({"id": other["id"], "why": why})  # the index fills in its message and line from the pack
    return out


def _segments(lines: list[str], spans: list[tuple[int, int]]) -> list[list[Any]]:
    """The covered lines as [first line, [texts]] runs (overlapping snippets share their lines)."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [[start, lines[start - 1:end]] for start, end in merged]


# --------------------------------------------------------------------------
# a whole pack


def derive_rows(project_name: str, version: str, root: Path, entries: Sequence[dict[str, Any]]) -> Iterator[dict]:
    """Files' records and entries' rows, in path order, for entries of `project_name` under `root`."""
    project = PROJECTS.get(project_name) or Project(f"{project_name}/{project_name}", "v{version}", "", (), ())
    flags = _flag_table(project, root)
    by_path: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        source = entry.get("source") or {}
        if source.get("path") and source.get("line"):
            by_path[source["path"]].append(entry)
    used: set[str] = set()
    for path in sorted(by_path):
        try:
            data = (root / path).read_bytes()
            record, rows = derive_file(project, version, path, data, by_path[path], flags)
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        if rows:
            used.update(attribute for row in rows for attribute in row.get("flags", ()))
            yield record
            yield from rows
    yield {"flags": {attribute: flags.by_attribute[attribute].as_dict() for attribute in sorted(used)}}


def _flag_table(project: Project, root: Path) -> FlagTable:
    modules = []
    for entry in project.launch_files:
        paths = sorted((root / entry).rglob("*.py")) if entry.endswith("/") else [root / entry]
        for path in paths:
            try:
                modules.append((str(path), ast.parse(path.read_bytes())))
            except (OSError, SyntaxError, ValueError):
                continue
    return read_flags(modules)


def write_sidecar(target: Path, header: dict[str, Any], rows: Iterable[dict[str, Any]]) -> int:
    """Write the sidecar (deterministic bytes); returns how many signature rows."""
    count = 0
    lines = [json.dumps(header, ensure_ascii=False, sort_keys=True)]
    for row in rows:
        count += "id" in row
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    data = ("\n".join(lines) + "\n").encode()
    params = zstandard.ZstdCompressionParameters.from_level(19, window_log=27, enable_ldm=True, write_checksum=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(zstandard.ZstdCompressor(compression_params=params).compress(data))
    return count
