"""An error as Airflow 3 shows a task's structured log (its UI, copied from the page), rewritten into the
standard format so that `blocks.parse_chain` reads it like any other.

    [2025-07-07, 13:41:04] ERROR - Task failed with exception: source="task"
    AirflowRuntimeError: CONNECTION_NOT_FOUND: {'conn_id': 'my_conn'}
    File "/opt/airflow/task-sdk/src/airflow/sdk/execution_time/task_runner.py", line 875 in run

    File "/opt/airflow/task-sdk/src/airflow/sdk/definitions/connection.py", line 152 in get

The exception line comes first, then the frames oldest first, flush left, without their source lines and
without the comma CPython puts before `in`; a copy from the page leaves a blank line after each.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["frame", "goes_on", "to_standard"]

_FRAME = lazyregex.compile(r'^File "(?P<place>[^"]*", line \d+) in (?P<function>\S+)\s*$')


def frame(text: str) -> bool:
    """Whether `text` is a frame line as Airflow 3 renders one."""
    return _FRAME.match(text) is not None


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is the next line of the error `texts` began: a frame, or one blank line after one."""
    return frame(text) or (not text.strip() and frame(texts[-1]))


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's order and layout: header, frames, exception line."""
    at = next(k for k, text in enumerate(texts) if frame(text))  # (as the assembler tells it)
    frames = [f'  File "{m["place"]}, in {m["function"]}' for text in texts[at:] if (m := _FRAME.match(text))]
    return [g.HEADER_TEXT, *frames, *texts[:at]]
