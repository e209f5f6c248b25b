"""asyncio's report of a task's or a future's error that nothing awaited. The loop's default handler logs

    Task exception was never retrieved
    future: <Task finished name='Task-2' coro=<main() done, defined at /app/main.py:3> exception=ValueError('x')>
    Traceback (most recent call last):
      ...
    ValueError: x

Where the traceback follows, it tells the error. Where it does not (a formatter that leaves the traceback out, a copy
of the first lines only), the future's repr names it: `exception=` and the exception's repr. A copy may wrap that repr
over several lines.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.records import ErrorInfo

__all__ = ["MAX_LINES", "complete", "error", "opens", "reports", "words"]

_OPENINGS = ("future: <Task ", "future: <Future ")
_WORDS = ("Task exception was never retrieved", "Future exception was never retrieved")
MAX_LINES = 8  # lines a copy may have wrapped the repr over
# (a class that wraps its cause's, Ray's `RayTaskError(RuntimeError)`, made from the cause: `...(RuntimeError('x'))`)
_RAISED = lazyregex.compile(r"exception=(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Za-z_]\w*(?:\((?P<inner>[\w.]+)\))?)\((?P<args>.*)\)>\s*$")
_CAUSE = lazyregex.compile(r"(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Za-z_]\w*)\((?P<args>.*)\)\s*")
_CLASS_NAME = lazyregex.compile(r"(?:[A-Za-z_]\w*+\.)*+_*[A-Z]\w*(?:\([\w.]+\))?")


def opens(text: str) -> bool:
    """Whether `text` begins the repr of a future whose error nothing retrieved."""
    return text.startswith(_OPENINGS)


def reports(text: str) -> bool:
    """Whether `text` is asyncio's words or the repr under them (no part of a message above them)."""
    return opens(text) or text.rstrip().endswith(_WORDS)


def words(text: str) -> str:
    """The handler's words above the repr `text` begins."""
    return _WORDS[0] if text.startswith(_OPENINGS[0]) else _WORDS[1]


def complete(texts: list[str]) -> bool:
    """Whether the repr begun on the first of `texts` ends on the last: its angle brackets, outside quotes, closed."""
    depth, quote = 0, ""
    for char in _joined(texts):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return True
    return False


def error(texts: list[str]) -> ErrorInfo | None:
    """The error the whole repr in `texts` names; None where it names none (a task that ended well, one cancelled)."""
    joined = _joined(texts)
    at = joined.find(" exception=")  # (the first: a message may quote the words; each try would read to the end)
    m = _RAISED.match(joined, at + 1) if at >= 0 else None
    if m is None or _CLASS_NAME.fullmatch(m["type"]) is None:  # (what `exception=` holds is an exception, whatever its
        return None  # class is called: aiogram's `MessageNotModified`; a name in lower case is no class)
    made_of, args = m["type"], m["args"]
    if m["inner"] and (cause := _CAUSE.fullmatch(args)) is not None and cause["type"] == m["inner"]:
        made_of, args = cause["type"], cause["args"]  # (a wrapper tells no more than its cause: the cause's words)
    said = g.args_said(made_of, args)  # (its message as str() gives it, where the arguments are literals)
    return ErrorInfo(m["type"], said if said is not None else args.strip(), has_traceback=False)


def _joined(texts: list[str]) -> str:
    """The repr's lines as one: a copy that wrapped it dropped the blank it broke the line at."""
    return " ".join(text.strip() for text in texts)
