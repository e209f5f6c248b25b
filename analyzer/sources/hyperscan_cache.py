"""The fast path's fixed Hyperscan databases, kept compiled between runs.

Compiling them takes about 50 ms on an idle machine (several times that under load), most of a
small scan's start-up; loading a serialized one takes microseconds. A file is named by the hash of
the Hyperscan install (version and place) and the expressions, so a change of either compiles anew; one that Hyperscan
refuses (written on another CPU or build) is compiled again and replaced. Without a writable cache
dir every run compiles, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

from analyzer.core.triggers import compile_database
from analyzer.sources.cache import cache_root

__all__ = ["compile_cached"]

_KEPT = 20  # databases kept: one per set of notice keywords in use (user packs add some), two kinds, and the
# setters' three (triggers.TriggerFinder.first_setter)


def compile_cached(expressions: tuple[bytes, ...], flags: tuple[int, ...]) -> Any:
    import hyperscan  # the caller checked `triggers.available()`

    version = getattr(hyperscan, "__version__", "")
    key = hashlib.sha256(repr((version, hyperscan.__file__, expressions, flags)).encode()).hexdigest()[:32]
    path = cache_root() / "hyperscan" / f"{key}.db"
    try:
        database = hyperscan.loadb(path.read_bytes(), mode=hyperscan.HS_MODE_BLOCK)
        database.scratch = hyperscan.Scratch(database)
        return database
    except (OSError, hyperscan.error):
        pass  # not kept yet, or refused: compile it
    database = compile_database(expressions, flags)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(hyperscan.dumpb(database))
        os.replace(partial, path)
        _evict(path.parent)
    return database


def _evict(folder: Path) -> None:
    kept = sorted(folder.glob("*.db"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in kept[_KEPT:]:
        old.unlink(missing_ok=True)
