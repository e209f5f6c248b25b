"""The terminal console every command prints through."""

from __future__ import annotations

from typing import Any

from rich.console import Console

__all__ = ["output_console"]


class _PipeAwareConsole(Console):
    def on_broken_pipe(self) -> None:
        # Rich exits with status 1 here; a reader that leaves early (`| head`) is not an error, so
        # hand the BrokenPipeError to analyzer.cli.main, which ends quietly with status 0.
        raise BrokenPipeError


def output_console(**options: Any) -> Console:
    """Plain text when piped (no colour codes), soft-wrapped so long messages stay on one line."""
    return _PipeAwareConsole(**{"highlight": False, "soft_wrap": True, **options})
