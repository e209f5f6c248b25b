"""The text of an error Dagster serialises (a run's failure in its UI, its event log, `dagster` CLI output),
rewritten into the standard format so that `blocks.parse_chain` reads it like any other.

    dagster._core.errors.DagsterExecutionStepExecutionError: Error occurred while executing op "load":

    Stack Trace:
      File "/venv/site-packages/dagster/_core/execution/plan/utils.py", line 54, in op_execution_error_boundary
        yield

    The above exception was caused by the following exception:
    KeyError: 'rows'

    Stack Trace:
      File "/app/ops.py", line 12, in load
        return data["rows"]

Each error is its exception line(s), a blank line, `Stack Trace:` and its frames oldest first (either may be
missing); an error's cause (or the error it was handled in) follows it, after a line that says so: the
outermost error comes first, the first raised last, the other way round from CPython. Some releases
joined the frame lines with a comma, so a frame line after the first may begin with `,`.
"""

from __future__ import annotations

from analyzer.core import grammar as g

__all__ = ["STACK", "goes_on", "link", "to_standard"]

STACK = "Stack Trace:"  # the line above an error's frames
_LINKS = {  # the line that introduces an error's cause or context -> CPython's line between the two
    "The above exception was caused by the following exception:": g.CAUSE_SEPARATOR,
    "The above exception occurred during handling of the following exception:": g.CONTEXT_SEPARATOR,
}


def link(text: str) -> bool:
    """Whether `text` introduces the cause (or the context) of the error above it."""
    return text.strip() in _LINKS


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is the next line of the error text `texts` began (one blank line at a time)."""
    last = texts[-1]
    if not text.strip():
        return bool(last.strip())
    if link(text) or text.strip() == STACK:
        return True
    if link(last) or (not last.strip() and len(texts) > 1 and link(texts[-2])):
        return g.EXCEPTION_LINE.match(text) is not None  # the cause's exception line (its UI puts a blank line above it)
    in_stack = last.strip() == STACK or _frame(last) or last[:1] == " "
    return in_stack and (_frame(text) or text[:1] == " ")  # (a frame's source line, further in)


def _frame(text: str) -> bool:
    return g.FRAME.match(text.removeprefix(",")) is not None


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's order: each error's header, frames and exception line, the first raised first,
    the chain's separators between them."""
    errors: list[list[str]] = [[]]
    separators: list[str] = []
    for text in texts:
        if link(text):
            separators.append(_LINKS[text.strip()])
            errors.append([])
        else:
            errors[-1].append(text)
    standard: list[str] = []
    for k in range(len(errors) - 1, -1, -1):
        standard.extend(_error(errors[k]))
        if k:
            standard.extend(("", separators[k - 1], ""))
    return standard


def _error(texts: list[str]) -> list[str]:
    """One error's lines: the exception line(s), then its frames if `Stack Trace:` is there."""
    at = next((k for k, text in enumerate(texts) if text.strip() == STACK), len(texts))
    exception = texts[:at]
    while exception and not exception[-1].strip():
        exception.pop()
    if at == len(texts):
        return exception
    frames = [text.removeprefix(",") for text in texts[at + 1:] if text.strip()]
    return [g.HEADER_TEXT, *frames, *exception]
