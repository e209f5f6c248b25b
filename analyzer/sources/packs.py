"""Reading pattern packs from disk: YAML files under pack directories, with line numbers kept.

A broken file or entry becomes a SchemaProblem naming file:line; the rest of the pack loads.
Precedence: built-in packs, then $ANALYZER_PATTERNS, then --patterns DIR in order; a later
pattern replaces an earlier one with the same id.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from analyzer import __version__
from analyzer.core.schema import Fix, Pattern, PatternSite, PatternSource, SchemaProblem, build_pattern

__all__ = ["PackSet", "load_packs", "load_pack_files", "builtin_pack_dir", "ENV_VAR"]

ENV_VAR = "ANALYZER_PATTERNS"
_LINE = "__line__"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_Loader):  # type: ignore[misc, valid-type]
    """Safe YAML loading that records, in each mapping, the line it starts on."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping[_LINE] = node.start_mark.line + 1
        return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping)


@dataclass(frozen=True, slots=True)
class PackSet:
    patterns: tuple[Pattern, ...]
    problems: tuple[SchemaProblem, ...]
    files: tuple[str, ...]


def builtin_pack_dir() -> Path:
    """`patterns/` beside the package (a checkout or editable install) or shipped inside it."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "patterns", here / "_patterns"):
        if candidate.is_dir():
            return candidate
    return here.parent / "patterns"


def pack_files(directory: str | Path) -> list[Path]:
    root = Path(directory)
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def load_pack_files(files: Iterable[Path]) -> tuple[list[Pattern], list[SchemaProblem]]:
    """Every pattern of every file in order, duplicates kept (callers decide precedence)."""
    patterns: list[Pattern] = []
    problems: list[SchemaProblem] = []
    for path in files:
        found, bad = _load_cached(path)
        patterns.extend(found)
        problems.extend(bad)
    return patterns, problems


def load_packs(extra_dirs: Iterable[str] = (), builtin: bool = True, use_env: bool = True) -> PackSet:
    dirs: list[str | Path] = [builtin_pack_dir()] if builtin else []
    if use_env and os.environ.get(ENV_VAR):
        dirs.extend(d for d in os.environ[ENV_VAR].split(os.pathsep) if d)
    dirs.extend(extra_dirs)
    problems: list[SchemaProblem] = []
    files: list[Path] = []
    by_id: dict[str, Pattern] = {}
    for index, directory in enumerate(dirs):
        if not Path(directory).exists():
            problems.append(SchemaProblem(str(directory), "pattern directory not found"))
            continue
        level_files = pack_files(directory)
        files.extend(level_files)
        found, bad = load_pack_files(level_files)
        problems.extend(bad)
        found = _prefer_curated(found) if index == 0 and builtin else found
        for pattern in found:
            by_id[pattern.id] = pattern  # a later pack overrides by id
    return PackSet(tuple(by_id.values()), tuple(problems), tuple(str(f) for f in files))


def _prefer_curated(patterns: list[Pattern]) -> list[Pattern]:
    """Within one pack, an extracted signature that a curated entry covers is left out."""
    curated = {_signature(p) for p in patterns if p.curated}
    return [p for p in patterns if p.curated or _signature(p) not in curated]


def _signature(pattern: Pattern) -> tuple[str, str, str | None]:
    return pattern.short_exception, " ".join(pattern.template.split()), pattern.source.path


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "analyzer" / "packs"


def _load_cached(path: Path) -> tuple[list[Pattern], list[SchemaProblem]]:
    """Parsing YAML is the slow part of start-up (the extracted SGLang pack is ~20k entries): keep
    each file's parsed patterns in a pickle keyed by its path, size, mtime and our version."""
    try:
        stat = path.stat()
    except OSError as err:
        return [], [SchemaProblem(str(path), f"cannot read: {err}")]
    # The records' field names are part of the key: a pickle of an older record would load without error.
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, __version__,
           tuple(tuple(record.__dataclass_fields__) for record in (Pattern, PatternSource, PatternSite, Fix)))
    cache = _cache_dir() / (hashlib.sha1(key[0].encode()).hexdigest() + ".pickle")
    try:
        with open(cache, "rb") as handle:
            stored_key, result = pickle.load(handle)  # noqa: S301 - our own cache file
        if stored_key == key:
            return result
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        pass  # missing, stale or torn: parse again
    result = _load_file(path)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.tmp")
        with open(partial, "wb") as handle:
            pickle.dump((key, result), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, cache)  # atomic: a killed run never leaves a torn cache entry
    except OSError:
        pass  # a read-only home: work without the cache
    return result


def _load_file(path: Path) -> tuple[list[Pattern], list[SchemaProblem]]:
    try:
        data = path.read_bytes()
    except OSError as err:
        return [], [SchemaProblem(str(path), f"cannot read: {err.strerror or err}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return [], [SchemaProblem(f"{path}:{line}", f"not UTF-8 text (byte 0x{data[err.start]:02x})")]
    try:
        document = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a safe loader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        position = getattr(err, "position", None)  # a reader error (a control character) has only this
        line = mark.line + 1 if mark else text.count("\n", 0, position) + 1 if position is not None else None
        where = f"{path}:{line}" if line else str(path)
        reason = getattr(err, "problem", None) or str(err).partition("\n")[0]  # one line
        return [], [SchemaProblem(where, f"invalid YAML: {reason}")]
    except RecursionError:
        return [], [SchemaProblem(str(path), "invalid YAML: nested too deeply")]
    if document is None:
        return [], []
    if not isinstance(document, dict) or not isinstance(document.get("patterns"), list):
        return [], [SchemaProblem(f"{path}:1", "a pack file must be a mapping with a 'patterns' list")]
    defaults = {k: document.get(k) for k in ("project", "version", "commit") if document.get(k) is not None}
    patterns, problems = [], []
    for entry in document["patterns"]:
        line = entry.pop(_LINE, None) if isinstance(entry, dict) else None
        if isinstance(entry, dict):
            _drop_lines(entry)
        pattern, bad = build_pattern(entry, f"{path}:{line or '?'}", defaults)
        problems.extend(bad)
        if pattern is not None:
            patterns.append(pattern)
    return patterns, problems


def _drop_lines(value) -> None:
    """Remove the line marks below `value`. Aliases make a document a graph in which a few nodes
    can stand for billions of paths, so each mapping and list is visited once."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            item.pop(_LINE, None)
            todo.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            todo.extend(v for v in item if isinstance(v, (dict, list)))
