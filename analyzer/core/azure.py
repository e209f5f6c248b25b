"""An error as Azure Functions' host reports a Python function's failure, rewritten into the standard format so
that `blocks.parse_chain` reads it like any other.

    System.Private.CoreLib: Exception while executing function: Functions.HttpTrigger. System.Private.CoreLib: Result: Failure
    Exception: ValueError: bad value
    Stack:   File "/azure-functions-host/workers/python/3.9/LINUX/X64/azure_functions_worker/dispatcher.py", line 402, in _handle__invocation_request
        call_result = await self._loop.run_in_executor(
      File "/home/site/wwwroot/HttpTrigger/__init__.py", line 12, in main
        raise ValueError('bad value')

The host's wrapper (`Result: Failure`, maybe after a .NET exception's name), the worker's exception line behind the
word `Exception: `, its message's further lines, then `Stack: ` and the frames in Python's order (none where the
function failed to load before it ran). The portal shows it all on one line, each break a blank: `unflattened`
gives the lines back.
"""

from __future__ import annotations

from analyzer.core import collapsed, lazyregex
from analyzer.core import grammar as g

__all__ = ["FLAT_MARK", "goes_on", "opens", "stack", "to_standard", "unflattened"]

_RESULT = "Result: Failure"
_EXCEPTION = "Exception: "
_STACK = "Stack: "
FLAT_MARK = f"{_RESULT} {_EXCEPTION}"  # (a line holds it only where the breaks were lost)
_FLAT = lazyregex.compile(rf"^(?P<lead>.*?{_RESULT}) {_EXCEPTION}(?P<error>.*?)(?: {_STACK}\s*(?P<stack>File \".*))?$")
_MAX_MESSAGE_LINES = 50


def opens(first: str, text: str) -> bool:
    """Whether `text`, the line after `first` (which opened a block as an exception line), goes on such a
    report: the worker's exception after the host's wrapper, or the stack after the worker's exception."""
    return (first.rstrip().endswith(_RESULT) and text.startswith(_EXCEPTION)) or (
        first.startswith(_EXCEPTION) and stack(text))


def stack(text: str) -> bool:
    """Whether `text` begins the report's stack: its word, then the first frame."""
    return text.startswith(_STACK) and g.FRAME.match(text[len(_STACK):]) is not None


def goes_on(texts: list[str], stacked: bool, text: str) -> bool:
    """Whether `text` is the next line of the report `texts` began (`stacked`: its stack's first line among
    them): a line of the exception's message, the stack's first line, or a frame or the source line under one
    after it."""
    if not text.strip():
        return False
    if stacked:
        return g.FRAME.match(text) is not None or text[:4] == "    "
    return stack(text) or len(texts) < _MAX_MESSAGE_LINES


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's layout: header and frames (where there are any), then the exception line and
    its message's further lines."""
    at = next((k for k, text in enumerate(texts) if text.startswith(_EXCEPTION)), 0)
    end = next((k for k, text in enumerate(texts) if stack(text)), len(texts))
    error = [texts[at].removeprefix(_EXCEPTION), *texts[at + 1:end]]
    if end == len(texts):
        return error
    return [g.HEADER_TEXT, f"  {texts[end][len(_STACK):].lstrip()}", *texts[end + 1:], *error]


def unflattened(text: str) -> list[str] | None:
    """The lines of such a report that `text` holds on one line; None unless it holds one."""
    m = _FLAT.match(text)
    if m is None:
        return None
    lines = [m["lead"], f"{_EXCEPTION}{m['error']}"]
    if m["stack"]:
        first, *rest = (line for line in collapsed.link_lines(m["stack"]) if line)
        lines += [f"{_STACK}{first}", *rest]
    return lines
