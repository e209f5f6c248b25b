"""Locate sources (a tree, a file or an installed package) and scan them.

Nothing here imports the scanned code: packages are located with
``importlib.util.find_spec`` on the *top-level* name (which does not execute
the package) or by looking for ``NAME/`` on ``sys.path``; versions come
from ``importlib.metadata``, a ``*.dist-info`` next to the tree, or a
``__version__ = "..."`` literal read with ``ast``.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata
import importlib.util
import os
import re
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.extract.emit import build_entries
from analyzer.extract.walker import ParseFailure, extract_file

__all__ = [
    "ExtractResult",
    "find_package",
    "find_sources",
    "detect_version",
    "scan_files",
    "extract_tree",
]

# below this many files a process pool costs more than it saves
_POOL_MIN_FILES = 64
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".tox", ".venv", "venv",
              "node_modules", ".mypy_cache", ".pytest_cache"}


@dataclass
class ExtractResult:
    project: str
    version: str | None
    base: Path
    files: int = 0
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


# --------------------------------------------------------------------------
# locating sources


def _package_root(directory: Path) -> Path:
    """Topmost directory of the package chain containing *directory*."""
    top = directory
    while (top.parent / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    return top


def find_sources(path: str | os.PathLike,
                 exclude: Sequence[str] = ()) -> tuple[Path, list[tuple[Path, str]]]:
    """Return ``(base, [(file, relpath), ...])`` sorted by relpath.

    *relpath* is package-relative with forward slashes: for a package
    directory (or a file inside one) it starts with the top-level package
    name, e.g. ``sglang/srt/server_args.py``. *exclude* holds glob patterns
    matched against relpaths.
    """
    p = Path(path).resolve()
    if p.is_file():
        if p.parent.joinpath("__init__.py").is_file():
            base = _package_root(p.parent).parent
        else:
            base = p.parent
        files = [p]
    elif p.is_dir():
        base = _package_root(p).parent if (p / "__init__.py").is_file() else p
        files = []
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in _SKIP_DIRS and not d.startswith("."))
            for name in filenames:
                if name.endswith(".py"):
                    files.append(Path(dirpath) / name)
    else:
        raise FileNotFoundError(f"no such file or directory: {path}")
    out = []
    for f in files:
        rel = f.relative_to(base).as_posix()
        if any(fnmatch.fnmatch(rel, pat) for pat in exclude):
            continue
        out.append((f, rel))
    out.sort(key=lambda fr: fr[1])
    return base, out


def find_package(name: str) -> Path:
    """Directory (or module file) of an installed package, without importing it."""
    top, *rest = name.split(".")
    location: Path | None = None
    try:
        # find_spec on a top-level name locates it without executing it
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        if spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                if Path(loc).is_dir():
                    location = Path(loc)
                    break
        elif spec.origin and spec.origin.endswith(".py"):
            location = Path(spec.origin)
    if location is None:
        for entry in sys.path:
            cand = Path(entry or ".") / top
            if cand.is_dir():
                location = cand
                break
            if cand.with_suffix(".py").is_file():
                location = cand.with_suffix(".py")
                break
    if location is None:
        raise ModuleNotFoundError(f"package {top!r} not found on sys.path")
    for part in rest:
        nxt = location / part
        if nxt.is_dir():
            location = nxt
        elif nxt.with_suffix(".py").is_file():
            location = nxt.with_suffix(".py")
        else:
            raise ModuleNotFoundError(f"{name!r}: no {part!r} under {location}")
    return location


_VERSION_FILES = ("_version.py", "version.py", "__init__.py")


def _literal_version(pkg_dir: Path) -> str | None:
    for fname in _VERSION_FILES:
        f = pkg_dir / fname
        if not f.is_file():
            continue
        try:
            tree = ast.parse(f.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if not isinstance(node, ast.Assign):
                continue
            names = set()
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
            if names & {"__version__", "version"}:
                v = node.value
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    return v.value
    return None


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def detect_version(base: Path, top: str, installed: bool = False) -> str | None:
    """Best-effort version of package *top* whose parent directory is *base*."""
    if installed:
        try:
            return importlib.metadata.version(top)
        except importlib.metadata.PackageNotFoundError:
            pass
        try:
            for dist in importlib.metadata.packages_distributions().get(top, []):
                return importlib.metadata.version(dist)
        except Exception:  # pragma: no cover - odd metadata
            pass
    for info in sorted(base.glob("*.dist-info")):
        if _norm(info.name.split("-")[0]) != _norm(top):
            continue
        meta = info / "METADATA"
        if meta.is_file():
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    pkg = base / top
    if pkg.is_dir():
        return _literal_version(pkg)
    return None


# --------------------------------------------------------------------------
# scanning


def _scan_one(job: tuple[str, str]) -> tuple[str, list[dict[str, Any]] | None, str | None]:
    path, rel = job
    try:
        return rel, extract_file(path), None
    except ParseFailure as exc:
        return rel, None, f"{rel}:{exc.line}: skipped: {exc.reason}"
    except OSError as exc:
        return rel, None, f"{rel}:0: skipped: {type(exc).__name__}: {exc.strerror or exc}"
    except Exception as exc:  # an extractor bug must not sink the whole run
        return rel, None, f"{rel}:0: skipped: internal error: {type(exc).__name__}: {exc}"


def scan_files(files: Sequence[tuple[Path, str]], jobs: int | None = None):
    """Scan files, in a process pool when worthwhile; order is preserved.

    Returns ``(per_file, warnings)`` with ``per_file = [(relpath, sigs)]``.
    """
    work = [(str(f), rel) for f, rel in files]
    if jobs is None:
        jobs = min(2, os.cpu_count() or 1)
    if jobs > 1 and len(work) >= _POOL_MIN_FILES:
        chunk = max(1, min(32, len(work) // (jobs * 8)))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_scan_one, work, chunksize=chunk))
    else:
        results = [_scan_one(job) for job in work]
    per_file = []
    warnings = []
    for rel, sigs, warn in results:
        if warn is not None:
            warnings.append(warn.replace("\n", " "))
        else:
            per_file.append((rel, sigs))
    return per_file, warnings


def extract_tree(path: str | os.PathLike | None = None, *, package: str | None = None,
                 project: str | None = None, version: str | None = None,
                 jobs: int | None = None, exclude: Sequence[str] = ()) -> ExtractResult:
    """Scan a source tree / file / installed package into pack entries."""
    if (path is None) == (package is None):
        raise ValueError("give exactly one of path or package")
    started = time.perf_counter()
    installed = package is not None
    if package is not None:
        target = find_package(package)
    else:
        assert path is not None  # exactly one of the two was given
        target = Path(path)
    base, files = find_sources(target, exclude)
    if files:
        top = files[0][1].split("/")[0]
        top = top[:-3] if top.endswith(".py") else top
    else:
        top = Path(target).stem
    if package is not None:
        top = package.split(".")[0]
    if project is None:
        project = top
    if version is None:
        version = detect_version(base, top, installed=installed)
    per_file, warnings = scan_files(files, jobs)
    result = ExtractResult(project=project, version=version, base=base)
    result.files = len(files)
    result.skipped = len(warnings)
    result.warnings = warnings
    result.entries = build_entries(project, version, per_file)
    result.seconds = time.perf_counter() - started
    return result
