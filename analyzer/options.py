"""What decides a scan's result besides the logs, and which run a log belongs to: light, so that a
front end can parse its arguments and read a report's cache without loading the engine."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ENV_VAR", "Options", "run_of"]

ENV_VAR = "ANALYZER_PATTERNS"  # more pattern packs, os.pathsep-separated


@dataclass(frozen=True, slots=True)
class Options:
    """Everything besides the logs that decides a scan's result; every default lives here."""

    pattern_dirs: tuple[str, ...] = ()  # user packs in precedence order, $ANALYZER_PATTERNS already in front
    builtin: bool = True  # load the packs shipped with analyzer
    window_seconds: float = 600.0  # the same error further apart than this is a new incident
    run_gap_seconds: float = 3600.0  # a quiet gap longer than this starts a new run
    app_packages: tuple[str, ...] = ()  # whose frames are the application's own (blame frame)

    @classmethod
    def resolve(cls, pattern_dirs: Iterable[str] = (), environ: dict[str, str] | None = None, **values) -> Options:
        """Options with $ANALYZER_PATTERNS read once, here: its packs come before `pattern_dirs`."""
        env = (os.environ if environ is None else environ).get(ENV_VAR, "")
        dirs = tuple(d for d in env.split(os.pathsep) if d) + tuple(pattern_dirs)
        return cls(pattern_dirs=dirs, **values)


def run_of(path: str, argument: str) -> str:
    """The run a log belongs to, without other clues: a file inside a run directory belongs to that
    directory's run; a file given directly, or lying directly in a directory given, is a run of its own."""
    parent = os.path.dirname(path)
    if path == argument or os.path.normpath(parent) == os.path.normpath(argument):
        return path
    return parent
