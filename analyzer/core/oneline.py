"""Errors reported on one line with their place, as tools built on asyncore and XML-RPC print them (supervisor's):

    error: <class 'FileNotFoundError'>, [Errno 2] No such file or directory: file: /x/supervisor/xmlrpc.py line: 560
    CRIT uncaptured python exception, closing channel <...> (<class 'OSError'>:[Errno 14] Bad address
        [/x/supervisord.py|runforever|221] [/x/dispatchers.py|handle_read_event|230] [/x/options.py|readfd|1511])

supervisorctl's report of a fault the server answered with (the class, the message, the file and line it names),
and asyncore's compact traceback (`asyncore.compact_traceback`: the class, the message, then each frame as
`[file|function|line]`, the innermost last). The class is written as `type()` prints it, or as its name.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.records import ErrorInfo, Frame

__all__ = ["COMPACT_END", "SUPERVISORCTL", "read"]

SUPERVISORCTL = "error: <class '"
COMPACT_END = "])"
_CLASS = r"(?:<(?:class|type) '(?:exceptions\.)?(?P<type>[A-Za-z_][\w.]*)'>|(?P<type>[A-Za-z_][\w.]*))"
_FAULT = lazyregex.compile(rf"^\s*error: {_CLASS}, (?P<message>.*?): file: (?P<path>\S.*?) line: (?P<line>\d+)\s*$")
_COMPACT = lazyregex.compile(rf"\({_CLASS}:(?P<message>.*?) (?P<frames>(?:\[[^\[\]|]+\|[^\[\]|]*\|\d+\] ?)+)\)\s*$")
_TAIL = 4096  # of a line, where a compact traceback may begin (the search is quadratic in what it looks at)
_FRAME = lazyregex.compile(r"\[(?P<path>[^\[\]|]+)\|(?P<function>[^\[\]|]*)\|(?P<line>\d+)\]")


def read(text: str) -> ErrorInfo | None:
    """The error such a line reports, with its place; None where it is none (or its class reads as no exception's)."""
    if SUPERVISORCTL in text and (fault := _FAULT.match(text)) is not None:
        frames: tuple[Frame, ...] = (Frame(fault["path"], int(fault["line"]), "", None),)
        named, message = fault["type"], fault["message"]
    elif text.rstrip().endswith(COMPACT_END) and (compact := _COMPACT.search(text, max(0, len(text) - _TAIL))) is not None:
        frames = tuple(Frame(m["path"], int(m["line"]), m["function"], None) for m in _FRAME.finditer(compact["frames"]))
        named, message = compact["type"], compact["message"]
    else:
        return None
    if g.BARE_EXCEPTION_LINE.match(named) is None:
        return None
    return ErrorInfo(named, message.strip(), frames, has_traceback=False)
