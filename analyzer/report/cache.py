"""The report's memory between runs: per-file results in SQLite, keyed by path, size and mtime.

A daily report over thousands of logs then scans only the new or changed ones. Each file's
result is written in a transaction of its own, in WAL mode, so a process killed at any moment
leaves every earlier result intact and no half-written row; the next run rescans what is missing.
A result also carries the key of the settings it was made with (analyzer version, pattern packs,
grouping window), so changing any of them makes older results stale rather than wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from analyzer import __version__
from analyzer.options import Options
from analyzer.report.filescan import FileResult
from analyzer.sources.packs import builtin_pack_dir, pack_files
from analyzer.sources.problems import OnProblem, Problem, ProblemKind

__all__ = ["ResultCache", "default_cache_path", "settings_key"]

FORMAT = 3  # bump when FileResult's shape or meaning changes (2: IncidentRow, the run configuration; 3: stamps without a year)
_LOOKUP_CHUNK = 500  # SQLite's limit on bound parameters is far above this

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    path     TEXT PRIMARY KEY,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    settings TEXT NOT NULL,
    result   TEXT NOT NULL
)"""


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "analyzer" / "report.sqlite"


def settings_key(options: Options) -> str:
    """Digest of what besides the file decides its result; pack files count by size and mtime."""
    packs = []
    for directory in ((builtin_pack_dir(),) if options.builtin else ()) + options.pattern_dirs:
        # The directory resolved once, not each of its hundreds of files (25 ms of a warm report).
        for file in pack_files(Path(directory).resolve()) if os.path.exists(directory) else ():
            try:
                info = file.stat()
            except OSError:
                continue
            packs.append((str(file), info.st_size, info.st_mtime_ns))
    blob = json.dumps([FORMAT, __version__, asdict(options), packs], sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()


class ResultCache:
    """Never fatal: a cache that cannot be opened or written is set aside with one warning."""

    def __init__(self, path: str | Path, settings: str, on_problem: OnProblem) -> None:
        self.path = Path(path)
        self.settings = settings
        self._warn = on_problem
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as err:
            self._set_aside(err)
        except OSError as err:
            self._warn(Problem(ProblemKind.CACHE, str(self.path), f"cannot use the report cache ({err.strerror or err}); scanning without it"))

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
            with db:
                db.execute(_SCHEMA)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _set_aside(self, err: sqlite3.DatabaseError) -> None:
        """A file that is not a usable database (overwritten, foreign) is moved away, not lost."""
        aside = self.path.with_name(self.path.name + ".broken")
        try:
            os.replace(self.path, aside)
            self._db = self._open()
            self._warn(Problem(ProblemKind.CACHE, str(self.path), f"report cache unreadable ({err}); moved to {aside}, starting afresh"))
        except (OSError, sqlite3.DatabaseError) as again:
            self._warn(Problem(ProblemKind.CACHE, str(self.path), f"cannot use the report cache ({again}); scanning without it"))

    @property
    def usable(self) -> bool:
        return self._db is not None

    def lookup(self, stats: dict[str, tuple[int, int]]) -> dict[str, FileResult]:
        """Results still valid for files of the given (size, mtime_ns), by the caller's path."""
        if self._db is None:
            return {}
        keyed = {os.path.abspath(path): path for path in stats}
        found: dict[str, FileResult] = {}
        keys = list(keyed)
        try:
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[start:start + _LOOKUP_CHUNK]
                rows = self._db.execute(
                    f"SELECT path, size, mtime_ns, result FROM results WHERE settings = ? "
                    f"AND path IN ({','.join('?' * len(chunk))})", [self.settings, *chunk])
                for key, size, mtime_ns, text in rows:
                    path = keyed[key]
                    if (size, mtime_ns) == stats[path]:
                        result = _decode(text)
                        if result is not None:
                            found[path] = result.at(path)
        except sqlite3.DatabaseError as err:
            self._give_up(err)
        return found

    def store(self, results: Iterable[FileResult]) -> None:
        """One transaction per file: a kill between two files loses at most the one in flight."""
        for result in results:
            if self._db is None:
                return
            try:
                with self._db:
                    self._db.execute(
                        "INSERT OR REPLACE INTO results (path, size, mtime_ns, settings, result) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (os.path.abspath(result.path), result.size, result.mtime_ns, self.settings,
                         result.to_json()))
            except sqlite3.DatabaseError as err:
                self._give_up(err)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _give_up(self, err: sqlite3.DatabaseError) -> None:
        self._warn(Problem(ProblemKind.CACHE, str(self.path), f"report cache failed ({err}); going on without it"))
        self.close()


def _decode(text: str) -> FileResult | None:
    try:
        return FileResult.from_json(text)
    except (KeyError, ValueError, TypeError):
        return None  # a row from an older format: scan the file again
