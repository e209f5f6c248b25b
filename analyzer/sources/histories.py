"""Reading signature histories (`history.tsv` beside a pack, see `patterns build-history`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from analyzer.core.versions import History, parse_history
from analyzer.sources.packs import builtin_pack_dir

__all__ = ["HISTORY_FILE", "Histories", "load_histories"]

HISTORY_FILE = "history.tsv"


class Histories(Mapping[str, History]):
    """The histories by project, each read when it is first asked for: start-up reads none, and a
    run reads only the projects its errors are raised in. A project is named by its folder."""

    def __init__(self, dirs: Iterable[str | Path] = ()) -> None:
        self._files: dict[str, Path] = {}
        for directory in (builtin_pack_dir(), *dirs):
            root = Path(directory)
            if root.is_dir():
                for path in sorted(root.glob(f"*/{HISTORY_FILE}")):
                    self._files[path.parent.name] = path  # a later one replaces an earlier
        self._read: dict[str, History | None] = {}

    def _load(self, project: str) -> History | None:
        if project not in self._read:
            try:
                history: History | None = parse_history(self._files[project].read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                history = None  # an unreadable history only costs the version notes
            self._read[project] = history if history and history.project == project and history.versions else None
        return self._read[project]

    def __getitem__(self, project: str) -> History:
        found = self._load(project) if project in self._files else None
        if found is None:
            raise KeyError(project)
        return found

    def __contains__(self, project: object) -> bool:
        return project in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def load_histories(dirs: Iterable[str | Path] = ()) -> dict[str, History]:
    """Every history under the built-in packs and `dirs`, by project, read now; a later one replaces an earlier."""
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
