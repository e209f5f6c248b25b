"""Is a log file fit to report on? Empty, binary (analyzer.sources.sniff) and half-written files are told apart here.

Each file gets a status: `ok`, `partial` (half-written: it stops mid-line, or a compressed
stream is cut short; its errors still count), `empty`, `binary`, `unreadable`, or `failed` (the
scan itself broke on it). Anything but `ok` makes its run a bad run, listed in the report.
"""

from __future__ import annotations

import enum

__all__ = ["FileStatus", "STATUSES", "BAD", "tail_state"]


class FileStatus(enum.StrEnum):
    OK = "ok"
    PARTIAL = "partial"  # half-written or cut short: its errors still count
    EMPTY = "empty"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    FAILED = "failed"  # the scan itself broke on it


STATUSES = tuple(FileStatus)
BAD = frozenset(STATUSES) - {FileStatus.OK}

_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")  # gzip, bzip2, xz: their ends say nothing
_LINE_ENDS = {b"\xff\xfe": (b"\n\x00", b"\r\x00"), b"\xfe\xff": (b"\x00\n", b"\x00\r")}  # UTF-16 by its BOM


def tail_state(path: str) -> str | None:
    """Why a plain file looks half-written (it does not end with a newline), or None."""
    with open(path, "rb") as handle:
        head = handle.read(6)
        if not head or head.startswith(_COMPRESSED):
            return None
        endings = _LINE_ENDS.get(head[:2], (b"\n", b"\r"))
        handle.seek(-len(endings[0]), 2)
        last = handle.read()
    return None if last in endings else "ends mid-line (still being written, or cut off)"
