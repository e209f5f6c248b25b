"""Is a log file fit to report on? Empty, binary and half-written files are told apart here.

Each file gets a status: `ok`, `partial` (half-written: it stops mid-line, or a compressed
stream is cut short; its errors still count), `empty`, `binary`, `unreadable`, or `failed` (the
scan itself broke on it). Anything but `ok` makes its run a bad run, listed in the report.
"""

from __future__ import annotations

__all__ = ["STATUSES", "BAD", "TextSniffer", "tail_state"]

STATUSES = ("ok", "partial", "empty", "binary", "unreadable", "failed")
BAD = frozenset(STATUSES) - {"ok"}

_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")  # gzip, bzip2, xz: their ends say nothing
_LINE_ENDS = {b"\xff\xfe": (b"\n\x00", b"\r\x00"), b"\xfe\xff": (b"\x00\n", b"\x00\r")}  # UTF-16 by its BOM
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")  # tabs, form feeds and ANSI escapes occur in logs
_BLANK = b" \t\r\n\f\v\x00"


class TextSniffer:
    """Decides binary or text from the first decoded characters, and notices an all-blank input.

    Fed the UTF-8 chunks the scan reads: invalid bytes decode to U+FFFD and NULs are ignored (the
    reader drops them), so a binary file shows as a run of U+FFFD and control characters; a log
    has almost none.
    """

    SAMPLE = 65536  # bytes
    MAX_ODD_SHARE = 0.10

    def __init__(self) -> None:
        self.sampled = 0
        self.chars = 0
        self.odd = 0
        self.blank = True
        self.head = ""  # the sampled text, for whoever wants to read the start of the input

    @property
    def decided(self) -> bool:
        return self.sampled >= self.SAMPLE

    def feed(self, chunk: bytes) -> None:
        if self.blank and chunk.strip(_BLANK):
            self.blank = False
        if self.decided:
            return
        piece = chunk[: self.SAMPLE - self.sampled]
        self.sampled += len(piece)
        text = piece.decode("utf-8", "replace").replace("\x00", "")
        self.head += text
        self.chars += len(text)
        self.odd += sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in _TEXT_CONTROLS))

    @property
    def binary(self) -> bool:
        return self.chars > 0 and self.odd > self.MAX_ODD_SHARE * self.chars


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
