"""A compiled pattern pack: one SQLite file, queried for the few candidates a message needs.

Why SQLite: it is in the standard library, opens in about a millisecond, reads only the pages a
query touches (the OS page cache keeps them warm between runs), and its B-tree indexes answer the
Matcher's three questions (word + exception type, raise site, id) without loading the pack.
Measured on the built-in packs (21,900 patterns, see benchmarks/RESULTS.md): unpickling them all
took 0.5 s and indexing them 0.55 s more; opening this file and looking up one message's
candidates takes a few milliseconds. Each row keeps the pattern as JSON beside the keys it is filed
under (`matcher.index_keys`, so the keys follow the Matcher's own rule), compressed by zstd with a
dictionary of the pack's own rows: 590 bytes a row become 150 (plain zlib: 330), written in about
20 us and read in about 10 (zlib with a dictionary: 90 us to write, 50 to read).

A file is written once (to a temporary name, then renamed) and never changed, so it is opened
read-only and `immutable`: no locks, works in a read-only site-packages.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from urllib.parse import quote

import zstandard

from analyzer.core.matcher import index_keys
from analyzer.core.schema import (
    Fix,
    MatchTarget,
    Pattern,
    PatternSite,
    PatternSource,
    Role,
    SchemaProblem,
    Severity,
    Style,
)
from analyzer.core.store import Site
from analyzer.sources.derived import Sidecar

__all__ = ["IndexStore", "write_index", "FORMAT"]

FORMAT = "3"  # the layout of the file; the digest below covers the code that fills it
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value NOT NULL);
CREATE TABLE patterns (
    seq        INTEGER PRIMARY KEY,  -- pack order
    id         TEXT NOT NULL,
    word       TEXT,                 -- the literal word it is filed under
    short_type TEXT NOT NULL,
    site       TEXT,                 -- path tail and function, joined by a NUL
    kind       INTEGER NOT NULL,     -- 1: a `match: line` notice; 2: told by its frames (`site:`)
    data       BLOB NOT NULL         -- the pattern but its id: JSON, zstd with the dictionary in meta
);
CREATE INDEX by_word ON patterns (word, short_type);
CREATE INDEX by_site ON patterns (site);
CREATE UNIQUE INDEX by_id ON patterns (id);
CREATE INDEX by_kind ON patterns (kind) WHERE kind != 0;
-- pages derived from the source (`patterns derive`): one row per signature, the snippet lines of its
-- file and the launch flags it names kept once; JSON, zstd with the dictionary in meta
CREATE TABLE derived (id TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE derived_files (path TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE derived_flags (key TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
"""
_LINE, _FRAMED = 1, 2  # the kind column
_ZDICT = 32768  # bytes of sample rows in the dictionary
_DEFAULTS = {f.name: f.default for f in fields(Pattern)}  # fields left at these are not stored
_FIELDS = tuple(name for name in _DEFAULTS if name != "id")  # the id has its own column
_SOURCE_FIELDS = tuple(f.name for f in fields(PatternSource))
_FIX_FIELDS = tuple(f.name for f in fields(Fix))
_SITE_FIELDS = tuple(f.name for f in fields(PatternSite))
_ENUMS = {"role": Role, "severity": Severity, "match": MatchTarget, "style": Style}


def write_index(path: Path, patterns: Iterable[Pattern], problems: Iterable[SchemaProblem], digest: str,
                derived: Iterable[Sidecar] = (), covered: Mapping[str, str] | None = None) -> int:
    """Write `patterns` (ids unique, in pack order) and the `derived` pages of the built-in packs to
    `path` atomically; returns how many patterns. `covered`: extracted id -> the curated entry that
    covers it, which shows its derived page."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.unlink(missing_ok=True)
    try:
        db = sqlite3.connect(partial)
        try:
            db.executescript(_SCHEMA)
            rows = [(_keys(pattern), _json(pattern)) for pattern in patterns]
            step = max(1, len(rows) // 200)
            zdict = b"".join(data for _, data in rows[::step])[-_ZDICT:]  # rows from all over the pack
            packer = zstandard.ZstdCompressor(level=3, dict_data=_dictionary(zdict), write_checksum=False,
                                              write_dict_id=False)
            db.executemany("INSERT INTO patterns (id, word, short_type, site, kind, data) VALUES (?, ?, ?, ?, ?, ?)",
                           (keys + (packer.compress(data),) for keys, data in rows))
            meta = {"format": FORMAT, "digest": digest, "count": str(len(rows)), "zdict": zdict,
                    "problems": json.dumps([[p.where, p.message] for p in problems], ensure_ascii=False)}
            meta["zdict_derived"] = _write_derived(db, list(derived), covered or {})
            db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            db.commit()
        finally:
            db.close()
        os.replace(partial, path)  # a killed run never leaves a torn index under the real name
    finally:
        partial.unlink(missing_ok=True)
    return len(rows)


def _write_derived(db: sqlite3.Connection, sidecars: list[Sidecar], covered: Mapping[str, str]) -> bytes:
    """The derived tables, compressed with a dictionary of their own rows (a fifth smaller than with
    the patterns' one); returns that dictionary."""
    def encoded(value) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    rows = [(row["id"], encoded({**row, "project": car.header.get("project", "")})) for car in sidecars
            for row in car.rows]
    zdict = b"".join(data for _, data in rows[::max(1, len(rows) // 400)])[-2 * _ZDICT:]
    packer = zstandard.ZstdCompressor(level=3, dict_data=_dictionary(zdict), write_checksum=False, write_dict_id=False)
    for car in sidecars:
        project = car.header.get("project", "")
        db.executemany("INSERT OR REPLACE INTO derived_flags VALUES (?, ?)",
                       ((f"{project}:{name}", packer.compress(encoded(flag))) for name, flag in car.flags.items()))
        db.executemany("INSERT OR REPLACE INTO derived_files VALUES (?, ?)",
                       ((f"{project}:{record['file']}", packer.compress(encoded(record["segments"])))
                        for record in car.files))
    packed = [(pattern_id, packer.compress(data)) for pattern_id, data in rows]
    db.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?)", packed)
    db.executemany("INSERT OR IGNORE INTO derived VALUES (?, ?)",  # a curated page shows what it covers
                   ((covered[pattern_id], data) for pattern_id, data in packed if pattern_id in covered))
    return zdict


class IndexStore:
    """A PatternStore over one index file. Safe to share between threads (the TUI scans in one)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._meta = dict(self._query("SELECT key, value FROM meta"))
        if self._meta.get("format") != FORMAT:
            raise ValueError(f"{self.path}: not a pattern index of format {FORMAT}")
        self._unpacker = zstandard.ZstdDecompressor(dict_data=_dictionary(self._meta["zdict"]))
        self._derived_unpacker = zstandard.ZstdDecompressor(dict_data=_dictionary(self._meta.get("zdict_derived", b"")))

    @property
    def digest(self) -> str:
        return self._meta["digest"]

    @property
    def problems(self) -> tuple[SchemaProblem, ...]:
        return tuple(SchemaProblem(where, message) for where, message in json.loads(self._meta["problems"]))

    def __len__(self) -> int:
        return int(self._meta["count"])

    def get(self, pattern_id: str) -> Pattern | None:
        found = self._patterns("WHERE id = ?", (pattern_id,))
        return found[0] if found else None

    def by_word(self, word: str, short_type: str | None) -> Sequence[Pattern]:
        if short_type:
            return self._patterns("WHERE word = ? AND short_type = ? ORDER BY seq", (word, short_type))
        return self._patterns("WHERE word = ? ORDER BY seq", (word,))

    def by_site(self, site: Site) -> Sequence[Pattern]:
        return self._patterns("WHERE site = ? ORDER BY seq", ("\0".join(site),))

    def line_patterns(self) -> Sequence[Pattern]:
        return self._patterns(f"WHERE kind = {_LINE} ORDER BY seq", ())

    def frame_patterns(self) -> Sequence[Pattern]:
        return self._patterns(f"WHERE kind = {_FRAMED} ORDER BY seq", ())

    def ids(self) -> frozenset[str]:
        return frozenset(row[0] for row in self._query("SELECT id FROM patterns"))

    def derived(self, pattern_id: str) -> dict | None:
        """The page derived from the source for `pattern_id` (`patterns derive`), snippet lines and
        flags filled in; None when its pack has none."""
        found = self._query("SELECT data FROM derived WHERE id = ?", (pattern_id,))
        if not found:
            return None
        row = self._unpack(found[0][0])
        project = row.pop("project", "")
        snippet = row.get("snippet")
        if snippet:
            segments = self._query("SELECT data FROM derived_files WHERE path = ?", (f"{project}:{row['path']}",))
            runs = self._unpack(segments[0][0]) if segments else []
            first, lines = next(((f, t) for f, t in runs if f <= snippet["start"] < f + len(t)), (0, []))
            snippet["lines"] = lines[snippet["start"] - first:snippet.pop("end") - first + 1] if first else []
        if row.get("flags"):
            keys = [f"{project}:{attribute}" for attribute in row["flags"]]
            flags = dict(self._query(f"SELECT key, data FROM derived_flags WHERE key IN ({','.join('?' * len(keys))})",
                                     tuple(keys)))
            row["flags"] = [self._unpack(flags[key]) for key in keys if key in flags]
        related = []
        for other in row.get("related", ()):
            pattern = self.get(other["id"])  # None: a curated page covers it, under its own id
            if pattern is not None:
                message = pattern.template or (f"assert {pattern.assert_expr}" if pattern.assert_expr else "")
                related.append({"id": pattern.id, "message": _cut(message or pattern.exception),
                                "line": pattern.source.line, "why": other["why"]})
        if related:
            row["related"] = related
        else:
            row.pop("related", None)
        return row

    def _unpack(self, blob: bytes):
        with self._lock:
            return json.loads(self._derived_unpacker.decompress(blob))

    def content_digest(self) -> str:
        """A hash of every row: two builds from the same sources and code give the same."""
        digest = hashlib.sha256()
        for row in self._query("SELECT id, word, short_type, site, kind, data FROM patterns ORDER BY seq"):
            with self._lock:
                digest.update(repr(row[:5]).encode() + self._unpacker.decompress(row[5]))
        return digest.hexdigest()

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self._patterns("ORDER BY seq", ()))

    def _patterns(self, where: str, args: tuple) -> list[Pattern]:
        rows = self._query(f"SELECT id, data FROM patterns {where}", args)
        with self._lock:  # a decompressor serves one thread at a time
            return [_pattern(pattern_id, self._unpacker.decompress(data)) for pattern_id, data in rows]

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            if self._db is None or self._pid != os.getpid():  # a forked worker opens its own
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro&immutable=1"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
                self._pid = os.getpid()
            return self._db.execute(sql, args).fetchall()


def _cut(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _keys(pattern: Pattern) -> tuple:
    word, site = index_keys(pattern)
    kind = _LINE if pattern.match == "line" else _FRAMED if pattern.site is not None else 0
    return pattern.id, word, pattern.short_exception, "\0".join(site) if site else None, kind


def _json(pattern: Pattern) -> bytes:
    data = {}
    for name in _FIELDS:
        value = getattr(pattern, name)
        if name == "source":
            value = {k: getattr(value, k) for k in _SOURCE_FIELDS if getattr(value, k) is not None}
        elif name == "fixes":
            value = [{k: getattr(fix, k) for k in _FIX_FIELDS if getattr(fix, k) is not None} for fix in value]
        elif name == "site" and value is not None:
            value = {k: getattr(value, k) for k in _SITE_FIELDS if getattr(value, k)}
        if name in ("exception", "template") or value != _DEFAULTS[name] and value not in ({}, []):
            data[name] = value
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _dictionary(zdict: bytes) -> zstandard.ZstdCompressionDict | None:
    return zstandard.ZstdCompressionDict(zdict, dict_type=zstandard.DICT_TYPE_RAWCONTENT) if zdict else None


def _pattern(pattern_id: str, blob: bytes) -> Pattern:
    data = json.loads(blob)
    data["id"] = pattern_id
    if "source" in data:
        data["source"] = PatternSource(**data["source"])
    if "fixes" in data:
        data["fixes"] = tuple(Fix(**fix) for fix in data["fixes"])
    if "site" in data:
        data["site"] = PatternSite(**{**data["site"], "within": tuple(data["site"].get("within", ()))})
    for name in ("related", "tags", "examples"):
        if name in data:
            data[name] = tuple(data[name])
    for name, kind in _ENUMS.items():
        if name in data:
            data[name] = kind(data[name])
    return Pattern(**data)
