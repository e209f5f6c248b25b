"""Is an input text at all? Decided from its first bytes, for `scan` (a warning) and `report` (a status)."""

from __future__ import annotations

__all__ = ["TextSniffer"]

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
