"""Log sources at the edge: files (plain or compressed), directories, stdin, and followed files.

Each source yields text lines, and `None` when input has gone quiet for a moment (follow and stdin
mode), so the pipeline can emit records that are complete without waiting for EOF. Problems are
reported through `on_problem` with the file named, and never stop the other inputs.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import select
import sys
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from analyzer.sources.lines import MAX_LINE, LineSplitter, split_lines

__all__ = ["STDIN", "expand_paths", "read_lines", "stdin_lines", "follow_lines", "Problem"]

STDIN = "-"
CHUNK = 1 << 20
Problem = Callable[[str], None]

_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


def expand_paths(paths: list[str], on_problem: Problem) -> Iterator[str]:
    """Files as given, directories walked recursively (sorted, symlink loops skipped)."""
    for path in paths:
        if path == STDIN:
            yield path
        elif os.path.isfile(path):
            if os.access(path, os.R_OK):
                yield path
            else:
                on_problem(f"{path}: permission denied")
        elif os.path.isdir(path):
            yield from _walk(path, on_problem)
        elif os.path.lexists(path):
            on_problem(f"{path}: not a regular file or directory, skipped")
        else:
            on_problem(f"{path}: no such file or directory")


def _walk(root: str, on_problem: Problem) -> Iterator[str]:
    seen: set[str] = set()

    def onerror(err: OSError) -> None:
        on_problem(f"{err.filename}: {err.strerror or err}, skipped")

    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(dirpath)
        if real in seen:
            on_problem(f"{dirpath}: symlink loop, skipped")
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and os.access(path, os.R_OK):
                yield path
            elif os.path.isfile(path):
                on_problem(f"{path}: permission denied, skipped")
            else:
                on_problem(f"{path}: broken link or not a regular file, skipped")


def _chunks(stream: BinaryIO, path: str, on_problem: Problem) -> Iterator[bytes]:
    try:
        while chunk := stream.read(CHUNK):
            yield chunk
    except (EOFError, OSError, lzma.LZMAError) as err:  # a compressed file cut short, a bad disk
        on_problem(f"{path}: read stopped early: {err}")


def _open(path: str) -> BinaryIO:
    raw = open(path, "rb")  # noqa: SIM115 - closed by read_lines
    head = raw.read(6)
    raw.seek(0)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            raw.close()
            return opener(path, "rb")
    return raw


def read_lines(path: str, on_problem: Problem, max_line: int = MAX_LINE) -> Iterator[str]:
    """All lines of a file (compression detected by content) or of stdin, to EOF."""
    if path == STDIN:
        yield from split_lines(_chunks(sys.stdin.buffer, "<stdin>", on_problem), max_line)
        return
    try:
        stream = _open(path)
    except OSError as err:
        on_problem(f"{path}: {err.strerror or err}")
        return
    with stream:
        yield from split_lines(_chunks(stream, path, on_problem), max_line)


def stdin_lines(on_problem: Problem, idle: float = 0.1, max_line: int = MAX_LINE) -> Iterator[str | None]:
    """stdin as it arrives, with a `None` tick whenever it has been quiet for `idle` seconds."""
    fd = sys.stdin.fileno()
    splitter = LineSplitter(max_line)
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], idle)
        except (OSError, ValueError):
            ready = [fd]
        if not ready:
            yield None
            continue
        try:
            chunk = os.read(fd, CHUNK)
        except OSError as err:
            on_problem(f"<stdin>: {err.strerror or err}")
            break
        if not chunk:
            break
        yield from splitter.feed(chunk)
    last = splitter.finish()
    if last is not None:
        yield last


def follow_lines(path: str, on_problem: Problem, idle: float = 0.1, max_line: int = MAX_LINE,
                 stop: Callable[[], bool] = lambda: False) -> Iterator[str | None]:
    """Like `tail -F` from the start of the file: survives truncation, rotation and deletion."""
    splitter = LineSplitter(max_line)
    stream, identity = None, None
    missing_reported = False
    while not stop():
        if stream is None:
            try:
                stream = open(path, "rb")  # noqa: SIM115 - closed on rotation or exit
                identity = _identity(os.fstat(stream.fileno()))
                missing_reported = False
            except OSError as err:
                if not missing_reported:
                    on_problem(f"{path}: {err.strerror or err}; waiting for it to appear")
                    missing_reported = True
                yield None
                time.sleep(idle)
                continue
        chunk = stream.read(CHUNK)
        if chunk:
            yield from splitter.feed(chunk)
            continue
        yield None  # quiet: let the pipeline flush what is complete
        try:
            current = os.stat(path)
        except OSError:
            current = None
        if current is None or _identity(current) != identity:
            rest = stream.read()  # rotated or deleted: drain what the old file still holds
            if rest:
                yield from splitter.feed(rest)
            last = splitter.finish()
            if last is not None:
                yield last
            stream.close()
            stream = None
            if current is not None:
                on_problem(f"{path}: rotated, reading the new file")
            continue
        if current.st_size < stream.tell():
            on_problem(f"{path}: truncated, reading from the start")
            stream.seek(0)
            splitter = LineSplitter(max_line)
            continue
        time.sleep(idle)
    if stream is not None:
        stream.close()


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino
