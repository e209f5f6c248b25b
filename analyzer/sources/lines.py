"""Turn a stream of byte chunks into bounded, decoded text lines.

Memory stays bounded by `max_line`, whatever the input: a 1 GB file without a newline yields one
cut line, not a 1 GB string. A byte-order mark is recognised however the chunks fall (UTF-16 is
decoded as such, a UTF-8 mark dropped), invalid UTF-8 is replaced, and NUL bytes are dropped before
they count against the line cap: the hole that `copytruncate` leaves in a log is all NULs, and the
text written after it must not be cut away.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator

__all__ = ["MAX_LINE", "Utf8Decoder", "LineSplitter", "cut_line", "split_lines", "utf8_chunks"]

MAX_LINE = 1 << 20  # bytes kept of one line; the rest is dropped with a visible marker

_UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_MARKS = (codecs.BOM_UTF8, *_UTF16_MARKS)
_MARK_LEN = max(len(mark) for mark in _MARKS)


class Utf8Decoder:
    """The bytes of one input, chunk by chunk, as NUL-free UTF-8 bytes (invalid sequences kept)."""

    def __init__(self) -> None:
        self._head: bytes | None = b""  # the first bytes, held until they tell whether a mark starts the input
        self._utf16: codecs.IncrementalDecoder | None = None

    def feed(self, chunk: bytes) -> bytes:
        if self._head is not None:
            chunk = self._sniff(self._head + chunk, final=False)
        if self._utf16 is not None:
            chunk = self._utf16.decode(chunk).encode("utf-8", "replace")
        return chunk.translate(None, b"\x00") if b"\x00" in chunk else chunk  # translate: 20x replace

    def finish(self) -> bytes:
        """What is left at the end of the input: an input shorter than a mark, half a UTF-16 unit."""
        rest = self._sniff(self._head, final=True) if self._head is not None else b""
        if self._utf16 is not None:
            rest = self._utf16.decode(rest, final=True).encode("utf-8", "replace")
        return rest.translate(None, b"\x00")

    def _sniff(self, head: bytes, final: bool) -> bytes:
        if not final and len(head) < _MARK_LEN and any(mark.startswith(head) for mark in _MARKS):
            self._head = head  # too short to tell yet
            return b""
        self._head = None
        if head.startswith(codecs.BOM_UTF8):
            return head[len(codecs.BOM_UTF8):]
        if head.startswith(_UTF16_MARKS):
            self._utf16 = codecs.getincrementaldecoder("utf-16")("replace")  # it reads the mark itself
        return head


def utf8_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks of one input through a `Utf8Decoder`."""
    decoder = Utf8Decoder()
    for chunk in chunks:
        if out := decoder.feed(chunk):
            yield out
    if rest := decoder.finish():
        yield rest


def cut_line(kept: bytes, dropped: int) -> str:
    """The text of a line of which `kept` bytes were kept and `dropped` more were not."""
    text = kept.decode("utf-8", "replace")
    return f"{text} [analyzer: line cut, {dropped} more bytes dropped]" if dropped else text


class LineSplitter:
    """Feed the raw byte chunks of one input, get complete lines (without their newline) as they complete."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._max_line = max_line
        self._decoder = Utf8Decoder()
        self._buffer = bytearray()
        self._dropped = 0  # bytes of the current line dropped past max_line

    def feed(self, chunk: bytes) -> list[str]:
        chunk = self._decoder.feed(chunk)
        lines: list[str] = []
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
        self._keep(self._decoder.finish())  # holds no newline: what is left is less than one character
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
        text = cut_line(bytes(self._buffer), self._dropped)
        self._buffer.clear()
        self._dropped = 0
        return text


def split_lines(chunks: Iterable[bytes], max_line: int = MAX_LINE) -> Iterator[str]:
    """Whole-input helper: chunks in, lines out."""
    splitter = LineSplitter(max_line)
    for chunk in chunks:
        yield from splitter.feed(chunk)
    last = splitter.finish()
    if last is not None:
        yield last
