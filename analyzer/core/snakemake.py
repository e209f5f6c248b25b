"""An error as Snakemake reports it (its `format_error`), rewritten into the standard format so that
`blocks.parse_chain` reads it like any other.

    RuleException:
    CalledProcessError in line 165 of /x/generate-queries.smk:
    Command 'docker compose stop' returned non-zero exit status 125.
      File "/x/generate-queries.smk", line 165, in __rule_create_workload
      File "/usr/lib/python3.8/concurrent/futures/thread.py", line 57, in run

The error's class, where in the workflow it happened (`in line N of FILE:`, since 8 `in file FILE, line N:`),
its message on the lines below, then the frames oldest first without their source lines (none for an error
of Snakemake's own: its place is where it was raised, as far as the report tells). A wrapper of
Snakemake's own (`RuleException:`, `WorkflowError:`) names nothing but the error under it; an error of
Snakemake's own without a place (`MissingRuleException:`) has its message below its class. An input function's
error is the message of the one Snakemake wraps it in (`InputFunctionException in line 5 of x.smk:`, then
`KeyError: ...`): that error is the one told.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["goes_on", "opens", "to_standard"]

_MAX_LINES = 200
_PLACED = lazyregex.compile(rf"^(?P<type>(?:[A-Za-z_]\w*+\.)*+(?:{g.EXCEPTION_NAME}|Exception))"
                            r" (?:in line (?P<line>\d+) of (?P<path>\S.*?)|in file (?P<path>\S.*?), line (?P<line>\d+))[:.]\s*$")
# Snakemake's own classes that report an error with its message under them (snakemake/exceptions.py)
_OWN = lazyregex.compile(r"^(?P<type>(?:Rule|Workflow|MissingRule|MissingInput|MissingOutput|AmbiguousRule|CyclicGraph|"
                         r"IncompleteFiles|ChildIO|ProtectedOutput|ImproperOutput|Lock|CreateRule|UnknownRule|NoRules|"
                         r"IOFile|CreateCondaEnvironment|SpawnedJob)(?:Exception|Error)):\s*$")


def opens(text: str) -> bool:
    """Whether `text` begins such a report: an error's class and its place, or a class of Snakemake's own alone."""
    return (" in " in text and _PLACED.match(text) is not None) or (text[-1:] in (":", " ") and _OWN.match(text) is not None)


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is the next line of the report `texts` began: the error an own class wraps, a message's
    line, a frame; not a blank line, nor a line after the frames that is none."""
    if not text.strip() or len(texts) >= _MAX_LINES:
        return False
    if g.FRAME.match(text):
        return True
    return not g.FRAME.match(texts[-1])


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's layout: the innermost error's header, frames and exception line."""
    at = max((k for k, text in enumerate(texts) if _PLACED.match(text)), default=0)
    placed = _PLACED.match(texts[at])
    named = placed or _OWN.match(texts[at])
    assert named is not None  # (opens)
    frames = [text for text in texts[at + 1:] if g.FRAME.match(text)]
    if not frames and placed is not None:  # (no frames: the place in the workflow is where it was raised, as far as told)
        frames = [f'  File "{placed["path"]}", line {placed["line"]}']
    message = [text for text in texts[at + 1:] if not g.FRAME.match(text)]
    if message and g.BARE_EXCEPTION_LINE.match(message[0]):
        return [g.HEADER_TEXT, *frames, *message]  # (an input function's error, which its wrapper's message is)
    return [g.HEADER_TEXT, *frames, f"{named['type']}: {message[0].lstrip()}" if message else named["type"], *message[1:]]
