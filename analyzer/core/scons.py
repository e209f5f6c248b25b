"""An error as SCons reports an exception a build script raised (PlatformIO's builds among them), rewritten
into the standard format so that `blocks.parse_chain` reads it like any other.

    NameError: name 'config' is not defined:
      File "/x/platformio/builder/main.py", line 173:
        env.SConscript("$BUILD_SCRIPT")
      File "/x/platforms/espressif32/builder/main.py", line 306:
        for section in config.sections():

The exception line comes first with a colon after its message, then the frames oldest first, each with the
line's number and a colon where CPython names the function, its source line under it.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["goes_on", "opens", "to_standard"]

_FRAME = lazyregex.compile(r'^  File "(?P<place>[^"]*", line \d+):\s*$')


def _frame(text: str) -> bool:
    """Whether `text` is a frame line as SCons prints one."""
    return _FRAME.match(text) is not None


def opens(exception_line: str, text: str) -> bool:
    """Whether `text`, the line after `exception_line`, begins such a report's frames."""
    return exception_line.rstrip().endswith(":") and _frame(text)


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is the next line of the report `texts` began: a frame, or the source line under one."""
    return _frame(text) or (_frame(texts[-1]) and text[:4] == "    " and bool(text.strip()))


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's layout: header, frames with their source lines, exception line."""
    exception_line = texts[0].rstrip()[:-1]  # (without the colon SCons puts after the message)
    frames = [f'  File "{m["place"]}' if (m := _FRAME.match(text)) else text for text in texts[1:]]
    return [g.HEADER_TEXT, *frames, exception_line]
