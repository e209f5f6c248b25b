"""The exit codes of every command (README, "Exit codes")."""

from __future__ import annotations

import enum

__all__ = ["Exit"]


class Exit(enum.IntEnum):
    OK = 0  # nothing that --fail-on asked about was found
    FOUND = 1  # --fail-on triggered, or `patterns check` found problems
    USAGE = 2  # bad arguments, or an input that could not be read at all
    INTERRUPTED = 130  # Ctrl-C
