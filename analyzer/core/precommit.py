"""pre-commit's report of an error of its own, and what the command it ran printed:

    An unexpected error has occurred: CalledProcessError: command: ('/x/bin/python', '-mvirtualenv', '/x/py_env')
    return code: 1
    expected return code: 0
    stdout:
        TypeError: entry_points() missing 1 required positional argument: 'name'

    stderr: (none)
    Check the log at /home/u/.cache/pre-commit/pre-commit.log

The command's output comes four blanks in under `stdout:` and `stderr:` (` (none)` where there was none; pre-commit 1
said `Output:` and `Errors:`, and wrapped a long command over lines of its own). Where that output holds an error (a
traceback, an exception's line), the command failed with it first: the chain's root, the report's error its
consequence. Pure: text in, the chain out.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.blocks import parse_chain
from analyzer.core.records import ErrorInfo, Link

__all__ = ["SAYS", "closes", "goes_on", "opens", "parse"]

SAYS = "An unexpected error has occurred"  # (the error's context, as where another tool's words put it)
_OPENING = f"{SAYS}: "
_CLOSING = "Check the log at "
_MAX_LINES = 500  # a command's output, as much as one traceback block holds
_COMMAND_LINES = 20  # a command wrapped over lines of its own, at the report's start
_FIELD = lazyregex.compile(r"(?:[Cc]ommand|[Rr]eturn code|[Ee]xpected return code|stdout|stderr|Output|Errors):")
_OUTPUT = lazyregex.compile(r"(?:stdout|stderr|Output|Errors):")
_INDENT = "    "  # of the command's output
_CLASS = lazyregex.compile(rf"(?:[A-Za-z_]\w*+\.)*+{g.EXCEPTION_NAME}")


def opens(text: str) -> bool:
    """The report's first line (maybe indented as a whole, a paste's code block)."""
    said = text.lstrip(" ")
    return said.startswith(_OPENING) and g.BARE_EXCEPTION_LINE.match(said[len(_OPENING):]) is not None


def closes(text: str) -> bool:
    return text.lstrip(" ").startswith(_CLOSING)


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is more of the report begun by `texts` (up to its closing line, which the caller takes): a
    field, the command's output, a blank, or the rest of a command a line's end left open."""
    if len(texts) >= _MAX_LINES:
        return False
    return (not text.strip() or text[:1] in (" ", "\t") or _FIELD.match(text) is not None
            or (len(texts) <= _COMMAND_LINES and sum(t.count("(") - t.count(")") for t in texts) > 0))


def parse(texts: list[str]) -> tuple[ErrorInfo, ...]:
    """The report's error; where the command's output holds an error, that one first, the report's its cause's link."""
    margin = " " * (len(texts[0]) - len(texts[0].lstrip(" ")))
    texts = [text.removeprefix(margin) for text in texts]
    said = g.BARE_EXCEPTION_LINE.match(texts[0][len(_OPENING):])
    assert said is not None  # (opens)
    report = ErrorInfo(said["type"], (said["message"] or "").strip(), has_traceback=False)
    output: list[str] = []
    inside = False
    for text in texts[1:]:
        if _OUTPUT.match(text):
            inside = True
        elif inside and (text.startswith(_INDENT) or not text.strip()):
            output.append(text.removeprefix(_INDENT))
        else:
            inside = False
    failed = parse_chain(output) if output else ()
    if not failed or not (failed[-1].has_traceback or _CLASS.fullmatch(failed[-1].exception_type)):
        return (report,)  # (a tool's own words are no error of Python's: git's `error: pathspec ...`)
    return (*failed, ErrorInfo(report.exception_type, report.message, link=Link.CAUSE, has_traceback=False))
