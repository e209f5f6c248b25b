"""Engines for tests: the built-in packs loaded once per test session, and one with no patterns."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

import pytest

from analyzer.core import scan
from analyzer.core.notices import NoticeDetector
from analyzer.core.yearless import Calendar
from analyzer.engine import Engine, Options

__all__ = ["builtin_engine", "bare_engine", "NO_NOTICES", "engine_incidents", "PURE_ONLY"]

NO_NOTICES = NoticeDetector(())  # for tests of assembly alone: no log line is a notice
# What the engine dates stamps without a year by (a file's modification time), fixed: a test's answer is the same any day
CALENDAR = Calendar(datetime(2026, 12, 7, 12, 0))


# For a test that patches or subclasses the core's internals: where the core is compiled (an installed wheel's,
# setup.py) neither takes, and the same source is tested uncompiled.
PURE_ONLY = pytest.mark.skipif(not (scan.__file__ or "").endswith(".py"),
                               reason="patches or subclasses a module that is compiled here")


@lru_cache(maxsize=1)
def builtin_engine() -> Engine:
    return Engine(Options())


@lru_cache(maxsize=1)
def bare_engine() -> Engine:
    return Engine(Options(builtin=False), patterns=())


def engine_incidents(engine: Engine, *paths) -> list:
    """What `analyzer scan` finds in the files, in its order."""
    return list(engine.analyse([str(path) for path in paths]).incidents)
