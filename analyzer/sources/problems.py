"""Problems met at the edges (inputs, pattern packs), as typed records.

Callers decide from `kind` (an exit code, a report's file status); the text is for people only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ProblemKind", "Problem", "OnProblem"]


class ProblemKind(enum.Enum):
    MISSING = "missing"  # the path does not exist
    UNREADABLE = "unreadable"  # it exists but cannot be read: permission, not a file, a symlink loop
    NO_LOGS = "no_logs"  # a directory with nothing to read in it
    BINARY = "binary"  # not text: skipped with a warning, as `report` lists such a file as bad
    PARTIAL = "partial"  # read in part: a compressed file cut short, a read error mid-file
    FOLLOW = "follow"  # what a followed file went through: rotated, truncated, waiting for it to appear
    PATTERN = "pattern"  # a broken pattern file or entry, skipped
    CACHE = "cache"  # a cache that cannot be used: the work is done without it
    INTERNAL = "internal"  # the scan itself broke

    @property
    def input_lost(self) -> bool:
        """An input that could not be read at all: the run's result is incomplete (exit 2)."""
        return self in (ProblemKind.MISSING, ProblemKind.UNREADABLE, ProblemKind.NO_LOGS, ProblemKind.INTERNAL)

    @property
    def lead(self) -> str:
        """What a one-line message about such a problem starts with."""
        return "pattern skipped: " if self is ProblemKind.PATTERN else ""


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    where: str  # a path, `<stdin>`, or file:line
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.lead}{self.where}: {self.detail}"


OnProblem = Callable[[Problem], None]
