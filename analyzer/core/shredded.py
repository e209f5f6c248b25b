"""Exception lines that processes writing to one terminal at once shredded.

CPython's exception printer (3.12 and before, in C) writes an exception line in pieces: the type's name,
then `: ` and the message, then the line break. Ranks that fail together and share a terminal or a file
interleave those pieces: a type's name ends another process's line (`...format(name))ValueError`) or
stands alone, and its `: message` begins a line of its own a line or two below, maybe with the next
rank's type glued to its end (`: Undefined dataset x.ValueError`), or the colon alone with the message
on the line after it. `Rejoiner` puts such a type and its message back together as one exception line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from analyzer.core import lazyregex
from analyzer.core.records import LogLine

__all__ = ["Rejoiner", "loose_type"]

_BELOW = 3  # lines a type's message may begin below it
_TAIL = 256  # characters at a line's end a glued type is looked for in (a long line is not searched whole)
_SUFFIXES = ("Error", "Exception")
_BLANKS = (" ", "\t")
# A type's name ending the line: glued to what another process wrote (after no blank), or alone; its modules
# with it where they are glued too, else the class alone (`in dataset_info.json.ValueError`, `etc).RuntimeError`).
_LOOSE_TYPE = lazyregex.compile(r"(?:^[ \t]*|(?<=[^\s\w.]))((?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception))[ \t]*$")
_GLUED_CLASS = lazyregex.compile(r"(?<=\S)([A-Z]\w*(?:Error|Exception))[ \t]*$")
_COLON_FIRST = lazyregex.compile(r"[ \t]*:(?![:=])[ \t]?")
_GLUED_FIRST = lazyregex.compile(r"(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*(?:Error|Exception)(?=[^\s\w:.])")


@dataclass(frozen=True, slots=True)
class _Loose:
    stream: str
    lineno: int
    type: str
    told: bool  # its colon came, alone: the message is the next line with text
    at: int  # the type's line


def loose_type(text: str) -> tuple[str, str] | None:
    """(the text before it, the type's name) where a line ends in a type's name glued or alone."""
    if not text[-_TAIL:].rstrip(" \t").endswith(_SUFFIXES):
        return None
    end = text.rstrip(" \t")
    start = max(0, len(end) - _TAIL)
    found = _LOOSE_TYPE.search(end, start) or _GLUED_CLASS.search(end, start)
    return None if found is None else (end[:found.start(1)], found[1])


class Rejoiner:
    """Fed every line in order; gives it back, or the exception line it finishes and the number of its type's line."""

    def __init__(self) -> None:
        self._loose: _Loose | None = None

    @property
    def waiting(self) -> bool:
        """A type's message may still come: the lines below it must be read."""
        return self._loose is not None

    def rejoined(self, line: LogLine) -> tuple[LogLine, int]:
        loose, text = self._loose, line.text
        if loose is None and not text.endswith(_SUFFIXES) and text[-1:] not in _BLANKS:  # (most lines: at once)
            return line, 0
        if loose is not None and (line.lineno - loose.lineno > _BELOW or loose.stream != line.stream):
            loose = self._loose = None
        if loose is not None:
            if loose.told:
                if not text.strip():
                    return line, 0
                self._loose = None
                return replace(line, text=f"{loose.type}: {text.strip()}"), loose.at
            if (colon := _COLON_FIRST.match(text)) is not None:
                said = text[colon.end():]
                if not said.strip():
                    self._loose = replace(loose, lineno=line.lineno, told=True)
                    return line, 0
                self._loose = None
                if (first := _GLUED_FIRST.match(said)) is not None:  # another's type before it (its colon, later)
                    said = said[first.end():]
                if (glued := loose_type(said)) is not None and glued[0].strip():  # the next rank's type at its end
                    said = glued[0]
                    self._loose = _Loose(line.stream, line.lineno, glued[1], False, line.lineno)
                return replace(line, text=f"{loose.type}: {said.rstrip()}"), loose.at
        if (found := loose_type(text)) is not None:
            self._loose = _Loose(line.stream, line.lineno, found[1], False, line.lineno)
        return line, 0
