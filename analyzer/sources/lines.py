"""Turn a stream of byte chunks into bounded, decoded text lines.

Memory stays bounded by `max_line`, whatever the input: a 1 GB file without a newline yields one
cut line, not a 1 GB string. Invalid UTF-8 is replaced, NUL bytes are dropped, UTF-16 files (BOM)
are decoded as such.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

__all__ = ["MAX_LINE", "LineSplitter", "decode_line", "split_lines"]

MAX_LINE = 1 << 20  # bytes kept of one line; the rest is dropped with a visible marker


def decode_line(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return text.replace("\x00", "") if "\x00" in text else text


class LineSplitter:
    """Feed byte chunks, get complete lines (without their newline) as they become complete."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._max_line = max_line
        self._buffer = bytearray()
        self._dropped = 0  # bytes of the current line dropped past max_line

    def feed(self, chunk: bytes) -> list[str]:
        lines = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:])
                return lines
            self._keep(chunk[start:end])
            lines.append(self._take())
            start = end + 1

    def finish(self) -> str | None:
        """The last line when the input does not end with a newline."""
        if self._buffer or self._dropped:
            return self._take()
        return None

    def _keep(self, piece: bytes) -> None:
        room = self._max_line - len(self._buffer)
        if len(piece) <= room:
            self._buffer += piece
        else:
            self._buffer += piece[:max(room, 0)]
            self._dropped += len(piece) - max(room, 0)

    def _take(self) -> str:
        text = decode_line(bytes(self._buffer))
        if self._dropped:
            text += f" [analyzer: line cut, {self._dropped} more bytes dropped]"
        self._buffer.clear()
        self._dropped = 0
        return text


def split_lines(chunks: Iterable[bytes], max_line: int = MAX_LINE) -> Iterator[str]:
    """Whole-input helper: chunks in, lines out, UTF-16 recognised by its byte-order mark."""
    splitter = LineSplitter(max_line)
    recode = None
    first = True
    for chunk in chunks:
        if first:
            first = False
            if chunk[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                recode = codecs.getincrementaldecoder("utf-16")("replace")
            elif chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[len(codecs.BOM_UTF8):]
        if recode is not None:
            chunk = recode.decode(chunk).encode("utf-8", "replace")
        yield from splitter.feed(chunk)
    last = splitter.finish()
    if last is not None:
        yield last
