"""Is an input text at all? Decided from its first bytes, for `scan` (a warning) and `report` (a status)."""

from __future__ import annotations

__all__ = ["TextSniffer"]

# Replacement characters and control characters other than those logs hold (tabs, line and form feeds,
# ANSI escapes; NULs, which the reader drops). The control characters are counted in the bytes (decoding
# keeps each as it is): deleting every other byte is a tenth of the time of a pattern over the text.
_ODD_BYTES = frozenset(range(0x01, 0x09)) | frozenset(range(0x0e, 0x1b)) | frozenset(range(0x1c, 0x20))
_NOT_ODD = bytes(byte for byte in range(256) if byte not in _ODD_BYTES)
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
        self.odd += text.count("\ufffd") + len(piece.translate(None, _NOT_ODD))

    @property
    def binary(self) -> bool:
        return self.chars > 0 and self.odd > self.MAX_ODD_SHARE * self.chars
