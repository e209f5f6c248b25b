"""The exception VS Code's Python debugger shows where it stopped, as users copy it from the editor,
rewritten into the standard format so that `blocks.parse_chain` reads it like any other.

    Exception has occurred: ImportError       (note: full exception trace is shown but execution is paused at: main)
    cannot import name 'SFTConfig' from 'trl' (/venv/lib/python3.11/site-packages/trl/__init__.py)
      File "/work/train.py", line 2, in <module>
        from trl import SFTConfig
      File "/usr/lib/python3.11/runpy.py", line 88, in _run_code
        exec(code, run_globals)
      File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main (Current frame)
        return _run_code(code, main_globals, None,

The type is on the first line, the message below it, then the frames newest first (each with its
source and caret lines under it), the frame the debugger is paused in marked `(Current frame)`. An exception
raised from another shows that one's exception line and the chain's separator between its message and its frames.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["HEADER", "goes_on_chain", "to_standard"]

HEADER = lazyregex.compile(r"^\W{0,2}Exception has occurred: (?P<type>[A-Za-z_][\w.]*)(?:\s.*)?$")
_CURRENT = lazyregex.compile(r" \(Current frame\)\s*$")


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's order: header, frames oldest first with their source lines, exception line."""
    m = HEADER.match(texts[0])
    assert m is not None  # (the block began with it)
    frames: list[list[str]] = []
    message: list[str] = []
    for text in texts[1:]:
        if g.REVERSED_FRAME.match(text):
            frames.append([_CURRENT.sub("", text)])
        elif frames:
            frames[-1].append(text)
        else:
            message.append(text)
    message, earlier = _chain_apart(message)
    while message and not message[-1].strip():
        message.pop()  # (blank lines after an exception line that no separator followed)
    text = "\n".join(message)
    exception = f"{m['type']}: {text}" if message else m["type"]
    if frames and g.EXCEPTION_LINE.match(frames[-1][-1].strip()) and frames[-1][-1].startswith(m["type"]):
        ended = frames[-1].pop()  # the copy ended in the exception line itself (where a copy cut it short, the
        if not (message and exception.startswith(ended.rstrip()) and len(exception) > len(ended.rstrip())):  # pane's
            exception = ended  # own words above are whole)
    return [*earlier, g.HEADER_TEXT, *(line for frame in reversed(frames) for line in frame),
            *exception.split("\n")]


def goes_on_chain(texts: list[str], text: str) -> bool:
    """Whether `text`, after the message lines `texts` (the header first), goes on with the exceptions this one was
    raised from: an exception line after the message, a chain's separator, a blank line after either."""
    if text.strip() in g.SEPARATORS:
        return True
    if not text.strip():
        return texts[-1].strip() in g.SEPARATORS or (len(texts) > 2 and g.BARE_EXCEPTION_LINE.match(texts[-1]) is not None)
    return len(texts) > 1 and g.BARE_EXCEPTION_LINE.match(text) is not None


def _chain_apart(message: list[str]) -> tuple[list[str], list[str]]:
    """The exception's own message, and the exceptions it was raised from as CPython prints them before it (their
    exception lines, or tracebacks, each up to its separator), where the message lines hold a chain's separator."""
    last = max((k for k, line in enumerate(message) if line.strip() in g.SEPARATORS), default=None)
    if last is None:
        return message, []
    first = next((k for k in range(1, last) if g.HEADER.match(message[k]) or g.BARE_EXCEPTION_LINE.match(message[k])), None)
    if first is None:
        return message, []
    return message[:first], [*message[first:last + 1], ""]
