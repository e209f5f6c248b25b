"""Suite-wide set-up: the tests never touch the real ~/.cache, nor read the user's $ANALYZER_PATTERNS.

The cache directory is set in `pytest_configure`, before any test module is imported, since some
load packs at collection time; there too the checkout's compiled index is brought up to date
once, so no test pays for compiling it.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_SAVED: dict[str, str | None] = {}
_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    for name in ("XDG_CACHE_HOME", "ANALYZER_PATTERNS"):
        _SAVED[name] = os.environ.pop(name, None)
    _CACHE.append(tempfile.mkdtemp(prefix="analyzer-test-cache-"))
    os.environ["XDG_CACHE_HOME"] = _CACHE[0]
    if not hasattr(config, "workerinput"):  # once, before xdist's workers start: they share it
        from analyzer.sources.packs import ensure_builtin_index

        ensure_builtin_index()


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, value in _SAVED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    for path in _CACHE:
        shutil.rmtree(path, ignore_errors=True)
