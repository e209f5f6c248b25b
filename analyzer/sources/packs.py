"""Pattern packs: YAML files under pack directories, compiled into indexes the Matcher queries.

The built-in packs are compiled into `analyzer/_data/patterns.sqlite` when the package is built
or installed (setup.py runs `compile_builtin`; `analyzer patterns build` does it by hand), so a run
reads only the candidates its messages need. The index is a build product, not in git: in a
checkout whose YAML or building code has moved on from it, the first run compiles it again in
place (one process at a time, under a lock), or, where the package folder cannot be written, into
the cache below. User packs (`--patterns`, $ANALYZER_PATTERNS) are compiled on the fly and kept
under the XDG cache dir, named by the hash of the pack's content and of that code, with a size
bound. A cache dir that cannot be written costs only the parse of the pack itself.

A broken file or entry becomes a SchemaProblem naming file:line; the rest of the pack loads.
Precedence: built-in packs, then $ANALYZER_PATTERNS, then --patterns DIR in order; a later
pattern replaces an earlier one with the same id.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path

import zstandard

from analyzer import __version__
from analyzer.core.matcher import index_keys
from analyzer.core.schema import Pattern, SchemaProblem, build_pattern
from analyzer.core.store import MemoryStore, PatternStore, Site
from analyzer.core.template.fields import literal_text
from analyzer.options import ENV_VAR
from analyzer.sources.cache import cache_root
from analyzer.sources.derived import Sidecar, read_sidecar, sidecar_files
from analyzer.sources.pack_index import IndexStore, write_index

__all__ = ["PackSet", "load_packs", "load_pack_files", "builtin_pack_dir", "builtin_index_path", "pack_files",
           "compile_builtin", "builtin_digest", "ensure_builtin_index", "CACHE_BOUND"]

CACHE_BOUND = 256 << 20  # bytes of compiled packs kept in the cache dir; the least recently used go first
_PACKAGE = Path(__file__).resolve().parent.parent
_LINE = "__line__"
_Sources = list[tuple[str, bytes | OSError]]  # a pack level's files: the name they are known by, their bytes
# The code that decides what an index holds: a change to any of it makes every compiled pack stale.
_BUILDERS = ("core/schema.py", "core/template/__init__.py", "core/template/fields.py", "core/template/build.py",
             "core/template/names.py", "core/template/values.py", "core/evidence.py", "core/matcher.py",
             "core/store.py", "core/sites.py", "sources/packs.py", "sources/pack_index.py", "sources/derived.py")


class PackSet:
    """The loaded packs, one store per level; a PatternStore itself, so `Matcher(packs)` reads lazily.
    A pattern of a later level hides every earlier one with its id."""

    def __init__(self, layers: Sequence[PatternStore], problems: Iterable[SchemaProblem], files: Iterable[str]) -> None:
        self.layers = tuple(layers)
        self.problems = tuple(problems)
        self.files = tuple(files)
        self._hidden: dict[int, frozenset[str]] = {}

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        """Every pattern: reads every level whole (for checks and tools; matching never needs it)."""
        return tuple(self)

    def get(self, pattern_id: str) -> Pattern | None:
        for layer in reversed(self.layers):
            found = layer.get(pattern_id)
            if found is not None:
                return found
        return None

    def by_word(self, word: str, short_type: str | None) -> Sequence[Pattern]:
        return self._merged(lambda layer: layer.by_word(word, short_type))

    def by_site(self, site: Site) -> Sequence[Pattern]:
        return self._merged(lambda layer: layer.by_site(site))

    def line_patterns(self) -> Sequence[Pattern]:
        return self._merged(lambda layer: layer.line_patterns())

    def frame_patterns(self) -> Sequence[Pattern]:
        return self._merged(lambda layer: layer.frame_patterns())

    def ids(self) -> frozenset[str]:
        return frozenset().union(*(layer.ids() for layer in self.layers))

    def derived(self, pattern_id: str) -> dict | None:
        """The page derived from the source for a built-in signature (`patterns derive`), or None."""
        for layer in reversed(self.layers):
            if isinstance(layer, IndexStore) and (found := layer.derived(pattern_id)) is not None:
                return found
        return None

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self._merged(iter))

    def _merged(self, query) -> list[Pattern]:
        found: list[Pattern] = []
        for level, layer in enumerate(self.layers):
            hidden = self._hidden_at(level)
            found.extend(p for p in query(layer) if p.id not in hidden)
        return found

    def _hidden_at(self, level: int) -> frozenset[str]:
        """Ids that later levels define (read once, and only when there are later levels)."""
        if level not in self._hidden:
            self._hidden[level] = frozenset().union(*(layer.ids() for layer in self.layers[level + 1:]))
        return self._hidden[level]


def builtin_pack_dir() -> Path:
    """`patterns/` of the checkout the package runs from (editable install), or shipped inside it."""
    return _checkout_packs() or _PACKAGE / "_patterns"


def _checkout_packs() -> Path | None:
    root = _PACKAGE.parent  # site-packages for an installed copy, where a `patterns` may be anyone's
    return root / "patterns" if (root / "pyproject.toml").is_file() and (root / "patterns").is_dir() else None


def builtin_index_path() -> Path:
    return _PACKAGE / "_data" / "patterns.sqlite"


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
        found, bad = _load_file(str(path), _read(path))
        patterns.extend(found)
        problems.extend(bad)
    return patterns, problems


def load_packs(extra_dirs: Iterable[str] = (), builtin: bool = True, use_env: bool = True) -> PackSet:
    layers: list[PatternStore] = []
    problems: list[SchemaProblem] = []
    files: list[Path] = []
    if builtin:
        store, bad = _builtin()
        layers.append(store)
        problems.extend(bad)
    dirs: list[str] = []
    if use_env and os.environ.get(ENV_VAR):
        dirs.extend(d for d in os.environ[ENV_VAR].split(os.pathsep) if d)
    dirs.extend(extra_dirs)
    for directory in dirs:
        if not Path(directory).exists():
            problems.append(SchemaProblem(str(directory), "pattern directory not found"))
            continue
        level_files = pack_files(directory)
        files.extend(level_files)
        store, bad = _compiled([(str(f), _read(f)) for f in level_files], curated_first=False)
        layers.append(store)
        problems.extend(bad)
    return PackSet(layers, problems, (str(f) for f in files))


def builtin_digest() -> str:
    """The hash an up-to-date built-in index records: of the YAML sources and the building code."""
    root = builtin_pack_dir()
    return _digest(_builtin_sources(root) + _sidecar_sources(root), curated_first=True)


def compile_builtin(target: Path | None = None) -> tuple[int, list[SchemaProblem]]:
    """`analyzer patterns build`: compile the built-in YAML packs into the shipped index."""
    root = builtin_pack_dir()
    sources = _builtin_sources(root)
    covered: dict[str, str] = {}
    patterns, problems = _parse(sources, curated_first=True, covered=covered)
    target = target or builtin_index_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = _digest(sources + _sidecar_sources(root), curated_first=True)
    return write_index(target, patterns, problems, digest, _sidecars(root), covered), problems


def ensure_builtin_index() -> IndexStore | None:
    """A checkout's index, compiled again first when its YAML or code moved on; None where the
    package folder cannot be written (then the caller compiles into the cache)."""
    target = builtin_index_path()
    root = builtin_pack_dir()
    stamp = _stamp(root)
    known = _stamped_digest(target, stamp)
    fresh = _index_if_current(target, known) if known else None
    if fresh is not None:  # no file changed size or time since the digest was last read: not read again
        return fresh
    sources = _builtin_sources(root)
    digest = _digest(sources + _sidecar_sources(root), curated_first=True)
    fresh = _index_if_current(target, digest)
    if fresh is not None:
        _write_stamp(target, stamp, digest)
        return fresh
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.with_name(".patterns.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be compiling it right now
            fresh = _index_if_current(target, digest)
            if fresh is None:
                print("analyzer: compiling the built-in patterns into "
                      f"{target} (once per change of the packs, about half a minute)", file=sys.stderr)
                covered: dict[str, str] = {}
                patterns, problems = _parse(sources, curated_first=True, covered=covered)
                write_index(target, patterns, problems, digest, _sidecars(root), covered)
                fresh = IndexStore(target)
            _write_stamp(target, stamp, digest)
    except OSError:
        return None
    return fresh


def _stamp(root: Path) -> str:
    """The pack files as seen from outside (names, sizes, modification times) and the building code:
    a checkout's every run compares this instead of hashing 40 MB of YAML."""
    stamp = hashlib.sha256(_code_digest())
    for path in [*pack_files(root), *sidecar_files(root)]:
        try:
            info = path.stat()
        except OSError:
            continue
        stamp.update(f"{path.relative_to(root).as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return stamp.hexdigest()


def _stamp_path(index: Path) -> Path:
    return index.with_name(index.stem + ".stamp")


def _stamped_digest(index: Path, stamp: str) -> str | None:
    """The digest the files had when they last looked like `stamp`."""
    try:
        seen, digest = _stamp_path(index).read_text().split()
    except (OSError, ValueError):
        return None
    return digest if seen == stamp else None


def _write_stamp(index: Path, stamp: str, digest: str) -> None:
    with contextlib.suppress(OSError):
        partial = _stamp_path(index).with_name(f".{index.stem}.{os.getpid()}.stamp")
        partial.write_text(f"{stamp} {digest}\n")
        os.replace(partial, _stamp_path(index))


def _index_if_current(path: Path, digest: str) -> IndexStore | None:
    try:
        store = IndexStore(path)
    except (OSError, sqlite3.Error, ValueError, KeyError):  # missing, half-written or foreign
        return None
    return store if store.digest == digest else None


def _builtin() -> tuple[PatternStore, list[SchemaProblem]]:
    """The installed index; in a checkout, its own index kept up to date with its YAML and code."""
    shipped = builtin_index_path()
    if _checkout_packs() is None:  # an installed copy: the index built with it is the pack
        if shipped.is_file():
            store = IndexStore(shipped)
            return store, list(store.problems)
        return _compiled(_builtin_sources(builtin_pack_dir()), curated_first=True)
    current = ensure_builtin_index()
    if current is not None:
        return current, list(current.problems)
    return _compiled(_builtin_sources(builtin_pack_dir()), curated_first=True)


def _builtin_sources(root: Path) -> _Sources:
    """The built-in files named as `patterns/<relative path>`, wherever the pack lies."""
    return [(f"patterns/{path.relative_to(root).as_posix()}", _read(path)) for path in pack_files(root)]


def _sidecar_sources(root: Path) -> _Sources:
    """The derived-page sidecars, for the digest: a new one compiles the index again."""
    return [(f"patterns/{path.relative_to(root).as_posix()}", _read(path)) for path in sidecar_files(root)]


def _sidecars(root: Path) -> Iterator[Sidecar]:
    for path in sidecar_files(root):
        try:
            yield read_sidecar(path)
        except (OSError, ValueError, zstandard.ZstdError) as err:  # a broken sidecar costs its pages only
            print(f"analyzer: {path}: derived pages left out ({err})", file=sys.stderr)


def _read(path: Path) -> bytes | OSError:
    try:
        return path.read_bytes()
    except OSError as err:
        return err


@cache
def _code_digest() -> bytes:
    digest = hashlib.sha256(__version__.encode())
    for name in _BUILDERS:
        try:
            digest.update((_PACKAGE / name).read_bytes())
        except OSError:  # installed without sources (bytecode only): the version has to do
            digest.update(name.encode())
    return digest.digest()


def _digest(sources: _Sources, curated_first: bool) -> str:
    digest = hashlib.sha256(_code_digest())
    digest.update(b"curated-first" if curated_first else b"as-written")
    for name, data in sources:
        blob = data if isinstance(data, bytes) else f"unreadable: {data}".encode()
        digest.update(b"%d:%s%d:" % (len(name.encode()), name.encode(), len(blob)))
        digest.update(blob)
    return digest.hexdigest()


def _compiled(sources: _Sources, curated_first: bool) -> tuple[PatternStore, list[SchemaProblem]]:
    """One pack level, from the cache when it has compiled this content with this code before."""
    digest = _digest(sources, curated_first)
    cached = _cache_dir() / f"{digest}.sqlite"
    try:
        store = IndexStore(cached)
        os.utime(cached)  # recently used: evicted last
        return store, list(store.problems)
    except (OSError, sqlite3.Error, ValueError, KeyError):
        pass  # not there yet, or unreadable: compile it
    patterns, problems = _parse(sources, curated_first)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_index(cached, patterns, problems, digest)
        _evict(cached.parent, keep=cached)
    except (OSError, sqlite3.Error):
        pass  # a read-only or missing cache dir: this run works from memory
    return MemoryStore(patterns, index_keys), problems


def _parse(sources: _Sources, curated_first: bool,
           covered: dict[str, str] | None = None) -> tuple[list[Pattern], list[SchemaProblem]]:
    """`covered`, when given, receives the id of each extracted signature a curated entry covers
    and that entry's id (its derived page is shown on the curated one)."""
    patterns: list[Pattern] = []
    problems: list[SchemaProblem] = []
    for name, data in sources:
        found, bad = _load_file(name, data)
        patterns.extend(found)
        problems.extend(bad)
    if curated_first:
        patterns = _prefer_curated(patterns, covered if covered is not None else {})
    by_id: dict[str, Pattern] = {}
    for pattern in patterns:
        by_id[pattern.id] = pattern  # a later file overrides by id
    return list(by_id.values()), problems


def _prefer_curated(patterns: list[Pattern], covered: dict[str, str]) -> list[Pattern]:
    """Within one pack, an extracted signature that a curated entry covers is left out (and
    recorded in `covered`, by its id, with the curated entry's)."""
    curated: dict[tuple[str, str, str | None], str] = {}
    for pattern in patterns:
        if pattern.curated:
            curated.setdefault(_signature(pattern), pattern.id)
    kept = []
    for pattern in patterns:
        owner = None if pattern.curated else curated.get(_signature(pattern))
        if owner is None:
            kept.append(pattern)
        else:
            covered.setdefault(pattern.id, owner)
    return kept


def _signature(pattern: Pattern) -> tuple[str, str, str | None]:
    """What makes two entries the same error: type, fixed text (fields may be named or formatted
    differently) and the file that raises it."""
    return pattern.short_exception, " ".join(literal_text(pattern.template, pattern.style).split()), pattern.source.path


def _cache_dir() -> Path:
    return cache_root() / "packs"


def _evict(directory: Path, keep: Path) -> None:
    """Keep the compiled packs under CACHE_BOUND bytes, dropping the least recently used first."""
    entries = []
    for path in directory.glob("*.sqlite"):
        try:
            info = path.stat()
        except OSError:
            continue
        entries.append((info.st_mtime_ns, info.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= CACHE_BOUND:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            total -= size


def _load_file(name: str, data: bytes | OSError) -> tuple[list[Pattern], list[SchemaProblem]]:
    """One file's patterns; `name` is what their origin and problems call the file."""
    if isinstance(data, OSError):
        return [], [SchemaProblem(name, f"cannot read: {data.strerror or data}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        bad_line = data.count(b"\n", 0, err.start) + 1
        return [], [SchemaProblem(f"{name}:{bad_line}", f"not UTF-8 text (byte 0x{data[err.start]:02x})")]
    import yaml  # only when a pack is compiled: a run on compiled packs never parses YAML

    try:
        document = yaml.load(text, Loader=_line_loader())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        position = getattr(err, "position", None)  # a reader error (a control character) has only this
        line: int | None = mark.line + 1 if mark else text.count("\n", 0, position) + 1 if position is not None else None
        where = f"{name}:{line}" if line else name
        reason = getattr(err, "problem", None) or str(err).partition("\n")[0]  # one line
        return [], [SchemaProblem(where, f"invalid YAML: {reason}")]
    except RecursionError:
        return [], [SchemaProblem(name, "invalid YAML: nested too deeply")]
    if document is None:
        return [], []
    if not isinstance(document, dict) or not isinstance(document.get("patterns"), list):
        return [], [SchemaProblem(f"{name}:1", "a pack file must be a mapping with a 'patterns' list")]
    defaults = {k: document.get(k) for k in ("project", "version", "commit") if document.get(k) is not None}
    patterns, problems = [], []
    for entry in document["patterns"]:
        line = entry.pop(_LINE, None) if isinstance(entry, dict) else None
        if isinstance(entry, dict):
            _drop_lines(entry)
        pattern, bad = build_pattern(entry, f"{name}:{line or '?'}", defaults)
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


@cache
def _line_loader():
    """Safe YAML loading that records, in each mapping, the line it starts on."""
    import yaml

    class LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        def construct_mapping(self, node, deep=False):
            mapping = super().construct_mapping(node, deep=deep)
            mapping[_LINE] = node.start_mark.line + 1
            return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, LineLoader.construct_mapping)
    return LineLoader
