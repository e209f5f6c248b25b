"""Where analyzer keeps what it can compute again but would rather not on every run."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/analyzer` (`~/.cache/analyzer` by default); callers cope when it cannot be written."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "analyzer"
