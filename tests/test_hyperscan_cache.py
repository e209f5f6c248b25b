"""The fast path's Hyperscan databases are compiled once and loaded from the cache after."""

from __future__ import annotations

import pytest

from analyzer.core import triggers
from analyzer.sources import hyperscan_cache
from analyzer.sources.hyperscan_cache import compile_cached

pytestmark = pytest.mark.skipif(not triggers.available(), reason="Hyperscan is not installed")
EXPRESSIONS = (rb"Traceback \(most recent", rb"^\s+File \"")
FLAGS = (triggers.hyperscan.HS_FLAG_MULTILINE,) * 2 if triggers.available() else ()
TEXT = b'INFO start\nTraceback (most recent call last):\n  File "a.py", line 1, in f\nValueError: x\n'


def _hits(database) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    database.scan(TEXT, match_event_handler=lambda i, s, e, f, c: found.append((i, e)),
                  scratch=database.scratch.clone())
    return found


def _kept(cache) -> list:
    return sorted((cache / "analyzer" / "hyperscan").glob("*.db"))


def test_a_database_is_compiled_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = compile_cached(EXPRESSIONS, FLAGS)
    assert len(_kept(tmp_path)) == 1

    def no_compiling(*args):
        raise AssertionError("compiled again")

    monkeypatch.setattr(hyperscan_cache, "compile_database", no_compiling)
    again = compile_cached(EXPRESSIONS, FLAGS)
    assert _hits(again) == _hits(first) == [(0, 33), (1, 54)]


def test_a_damaged_file_is_compiled_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    compile_cached(EXPRESSIONS, FLAGS)
    [kept] = _kept(tmp_path)
    kept.write_bytes(b"not a database")
    assert _hits(compile_cached(EXPRESSIONS, FLAGS)) == [(0, 33), (1, 54)]
    assert kept.read_bytes() != b"not a database"


def test_a_cache_that_cannot_be_written_still_gives_a_database(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert _hits(compile_cached(EXPRESSIONS, FLAGS)) == [(0, 33), (1, 54)]


def test_other_expressions_are_another_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    compile_cached(EXPRESSIONS, FLAGS)
    compile_cached(EXPRESSIONS[:1], FLAGS[:1])
    assert len(_kept(tmp_path)) == 2
