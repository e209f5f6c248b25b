"""Reading a log from a pipe while the keyboard drives the UI: both want stdin.

The pipe is moved to a new descriptor (and `sys.stdin` with it, where the scan reads it), and
descriptor 0 is pointed at the terminal, where Textual reads keys.
"""

from __future__ import annotations

import io
import os
import sys

__all__ = ["free_stdin_for_keys"]


def free_stdin_for_keys() -> str | None:
    """Returns a one-line problem when there is no terminal to read keys from."""
    if sys.__stdin__ is not None and sys.__stdin__.isatty():
        return "stdin is the terminal: pipe a log into 'analyzer tui -' (e.g. tail -f server.log | analyzer tui -)"
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError as err:
        return f"reading the log from stdin needs a terminal for the keys, and /dev/tty cannot be opened: {err.strerror}"
    pipe = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(pipe, "rb")), errors="replace")
    return None
