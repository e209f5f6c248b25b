"""Reading signature histories (`history.tsv` beside a pack, see `patterns build-history`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from analyzer.core.versions import History, parse_history
from analyzer.sources.packs import builtin_pack_dir

__all__ = ["HISTORY_FILE", "load_histories"]

HISTORY_FILE = "history.tsv"


def load_histories(dirs: Iterable[str | Path] = ()) -> dict[str, History]:
    """Every history under the built-in packs and `dirs`, by project; a later one replaces an earlier."""
    found: dict[str, History] = {}
    for directory in (builtin_pack_dir(), *dirs):
        root = Path(directory)
        if not root.is_dir():
            continue
        for path in sorted(root.rglob(HISTORY_FILE)):
            try:
                history = parse_history(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                continue  # an unreadable history only costs the version notes
            if history.project and history.versions:
                found[history.project] = history
    return found
