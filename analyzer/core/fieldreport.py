"""An error report that names the exception in labelled fields rather than printing it, as users copy it
from a page: Django's debug page and ComfyUI's error report.

    Exception Type:	ProgrammingError                       - **Exception Type:** RuntimeError
    Exception Value:	                                       - **Exception Message:** mat1 and mat2 ...
    relation "blog_post" does not exist                    ## Stack Trace
    Exception Location:	/x/django/db/backends/utils.py     ```
      in _execute, line 84                                   File "/x/execution.py", line 328, in execute
                                                           ...
                                                           ```

The type's field opens the report (Django's copy-and-paste view adds ` at /url`); the value may start on
its field's line or below it and runs to the next field. The raise site is the location's, or the
innermost frame of the stack ComfyUI prints under `## Stack Trace` (frames only: `traceback.format_tb`).
"""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.blocks import parse_chain
from analyzer.core.records import ErrorInfo, Frame, short_type

__all__ = ["goes_on", "opens", "parse"]

_MAX_FIELDS = 40  # lines of fields held at most: those between a report's type and its location are few
_MAX_LINES = 1000  # with a stack

_LABEL = r"^[-*\s]*(?:\*\*)?{}:(?:\*\*)?[ \t]*"
_TYPE = lazyregex.compile(_LABEL.format("Exception Type") + r"(?P<type>[A-Za-z_][\w.]*)(?: at \S*)?[ \t]*$")
_VALUE = lazyregex.compile(_LABEL.format("Exception (?:Value|Message)") + rf"(?P<value>(?:{g.TEXT})?)\s*+$")
_LOCATION = lazyregex.compile(_LABEL.format("Exception Location")  # (Django 3.2 on: `path, line N, in function`)
                              + r"(?:(?P<path>\S.*?) in (?P<function>[\w<>.]+), line (?P<lineno>\d+)"
                              + r"|(?P<path>\S.*?), line (?P<lineno>\d+), in (?P<function>[\w<>.]+))[ \t]*$")
_FIELD = lazyregex.compile(_LABEL.format(r"[A-Z][\w ]{0,40}") + r"(?:\t|$|(?<=\*\* ?))")  # another field
_STACK = "## Stack Trace"


def opens(text: str) -> bool:
    return "Exception Type:" in text[:24] and bool(_TYPE.match(text))


def goes_on(texts: list[str], text: str) -> bool | None:
    """Whether `text` belongs to the report whose lines are `texts`: True, None when it ends it (its
    location, its stack's closing fence), False when it does not."""
    if _STACK in texts:
        return _in_stack(texts, text)
    if _LOCATION.match(text):
        return None
    if text.strip() == _STACK:
        return True
    if _VALUE.match(text) or _FIELD.match(text):
        return len(texts) < _MAX_FIELDS
    return len(texts) < _MAX_FIELDS and _in_value(texts)  # the value's further lines


def _in_stack(texts: list[str], text: str) -> bool | None:
    if len(texts) >= _MAX_LINES or text.startswith("## "):
        return False
    if _fence(text):
        return True if texts[-1].strip() == _STACK else None
    return bool(g.frame_line(text) or g.is_frame_detail(text) or not text.strip())


def _in_value(texts: list[str]) -> bool:
    """Whether the last field above is the value's."""
    for text in reversed(texts):
        if _VALUE.match(text):
            return True
        if _FIELD.match(text) or _TYPE.match(text):
            return False
    return False


def parse(texts: list[str]) -> ErrorInfo:
    found = _TYPE.match(texts[0])
    assert found is not None  # (opens)
    value: list[str] = []
    frames: tuple[Frame, ...] = ()
    for k, text in enumerate(texts[1:], 1):
        if (said := _VALUE.match(text)) is not None:
            value = [said["value"], *_value_lines(texts[k + 1:])]
        elif (where := _LOCATION.match(text)) is not None:
            frames = (Frame(where["path"], int(where["lineno"]), where["function"], None),)
        elif text.strip() == _STACK:
            stack = [t for t in texts[k + 1:] if not _fence(t)]
            frames = next((info.frames for info in parse_chain([g.HEADER_TEXT, *stack])), frames)
            break
    message = "\n".join(value).strip()
    named = next((f"{name}: " for name in (found["type"], short_type(found["type"])) if message.startswith(f"{name}: ")), "")
    return ErrorInfo(found["type"], message.removeprefix(named), frames, has_traceback=False)  # (a value that names the
    # type again, as `format_exception_only` ends: ComfyUI's report in some releases)


def _fence(text: str) -> bool:
    """A markdown code fence (the normaliser may have taken a backtick of it for a code span's)."""
    return bool(text.strip()) and not text.strip().strip("`")


def _value_lines(texts: list[str]) -> Iterator[str]:
    for text in texts:
        if _FIELD.match(text) or _LOCATION.match(text) or _TYPE.match(text) or text.strip() == _STACK:
            return
        yield text
