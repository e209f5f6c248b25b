"""The error report of a command-line app built on Cleo (Poetry, its plugins), which prints no
`Traceback` but the exception's class name, its message and where it was raised with the source around:

      ChefBuildError

      Backend 'setuptools.build_meta:__legacy__' is not available.

      at ~/.local/lib/python3.11/site-packages/poetry/installation/chef.py:147 in _prepare
          143│
        → 147│                 raise error from None
          148│

Each line is indented by two blanks, the message's lines too; a blank line comes between the name,
the message and the place; the source lines are numbered, the raising one marked (`>` and `|` where the
terminal has no UTF-8). The assembler reads the name as a bare exception line and takes the lines after
it as such a report only when its place comes.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.blocks import parse_chain
from analyzer.core.records import ErrorInfo, Frame, Link

__all__ = ["goes_on", "names_class", "parse", "place", "source"]

_NAME = lazyregex.compile(r"[A-Za-z_]\w*")
_MESSAGE = lazyregex.compile(r"  \s*\S")  # a message's line as the report indents it (its own indents kept)
_PLACE = lazyregex.compile(r"  at (?P<path>\S.*?):(?P<lineno>\d+) in (?P<function>\S+)[ \t]*$")
_SOURCE = lazyregex.compile(r"    (?:[\u2192>] |  ) *(?P<lineno>\d+)[\u2502|] ?(?P<code>.*)$")
_MARKED = lazyregex.compile(r"    [\u2192>] ")
_MAX_MESSAGE_LINES = 200  # of a report not confirmed by its place yet


def names_class(text: str) -> bool:
    """Whether a bare exception line (unindented) is a class's name alone, as such a report begins."""
    return _NAME.fullmatch(text.strip()) is not None


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text`, after the report's name and the blank line under it, is its message's or a blank."""
    return len(texts) < _MAX_MESSAGE_LINES and (not text.strip() or _MESSAGE.match(text) is not None)


def place(text: str) -> bool:
    """Whether `text` is the report's `at path:line in function`, which confirms it."""
    return _PLACE.match(text) is not None


def source(text: str) -> bool:
    return _SOURCE.match(text) is not None


def parse(texts: list[str]) -> tuple[ErrorInfo, ...]:
    """The report's lines, from its name to the last source line after its place. Where its message holds a
    traceback (Poetry's ChefBuildError quotes its build backend's output), that error failed first: the chain's root."""
    at = next(k for k, text in enumerate(texts) if _PLACE.match(text))
    where = _PLACE.match(texts[at])
    assert where is not None
    marked = next((m["code"].strip() for text in texts[at + 1:] if _MARKED.match(text) and (m := _SOURCE.match(text))), None)
    lines = [text[2:] for text in texts[1:at]]
    message = "\n".join(lines).strip("\n")
    frame = Frame(where["path"], int(where["lineno"]), where["function"], marked or None)
    report = ErrorInfo(texts[0].strip(), message, (frame,))
    header = next((k for k, line in enumerate(lines) if g.HEADER.match(line.strip())), None)
    inner = parse_chain(g.dedented(lines[header:])) if header is not None else ()
    if inner and inner[-1].exception_type:
        return (*inner, replace(report, link=Link.CAUSE))
    return (report,)
