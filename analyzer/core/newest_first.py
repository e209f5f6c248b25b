"""A traceback whose exception line comes first: a newest-first export (each frame's source line above it,
the header last), Sentry's frames newest first (each source line under its frame), Sentry's raw stack (the
exception line and its message, `(31 additional frame(s) were not displayed)`, `...`, then the frames in
Python's order), Google Cloud's Error Reporting (`at function (path:line)`, newest first), or a copy trimmed
by hand that moved the exception line above frames in Python's order; rewritten in CPython's order so that
`blocks.parse_chain` reads it like any other."""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["LINES_BEFORE_HIDDEN", "at_frame", "frame", "hidden", "moved_up", "sentry_raw", "sources_below",
           "to_standard"]

_HIDDEN = lazyregex.compile(r"^\(\d+ additional frame\(s\) were not displayed\)\s*$")
LINES_BEFORE_HIDDEN = 3  # above Sentry's mark at most: the exception line, a line of its message, a blank


# A frame as Google Cloud's Error Reporting lists a Python stack, newest first: `at create_app (/x/app.py:259)`; its
# console's copy puts a dot before the function (no class) and blanks inside the brackets: `at ._execute ( /x/u.py:105 )`
_AT_FRAME = lazyregex.compile(r"^\s*at \.?(?P<function>[^\s()]+) \( ?(?P<path>[^()]*\.py[cx]?):(?P<lineno>\d+) ?\)\s*$")


def at_frame(text: str) -> bool:
    """Whether `text` is a frame as Error Reporting lists it."""
    return _AT_FRAME.match(text) is not None


def frame(text: str) -> bool:
    """Whether `text` is a frame of a newest-first stack: as Python prints it (maybe unindented), or as Error
    Reporting lists it."""
    return g.REVERSED_FRAME.match(text) is not None or _AT_FRAME.match(text) is not None


def hidden(text: str) -> bool:
    """Whether `text` is Sentry's mark of the frames its raw stack leaves out."""
    return text[:1] == "(" and _HIDDEN.match(text) is not None


def sentry_raw(texts: list[str]) -> bool:
    """Whether the lines under an exception line are Sentry's raw stack: its mark comes right below the exception's."""
    return any(hidden(text) for text in texts[1:1 + LINES_BEFORE_HIDDEN])


def to_standard(texts: list[str]) -> list[str]:
    """A traceback whose exception line came first, in the order Python prints it: moved down from above
    frames in Python's order (with the lines of its message, where Sentry's mark follows them); or with its
    frames turned round, each group of a frame and the lines under it (Sentry's newest-first frames) or each
    line (a newest-first export's, Error Reporting's)."""
    texts = [f'  File "{m["path"]}", line {m["lineno"]}, in {m["function"]}' if (m := _AT_FRAME.match(text)) else text
             for text in texts]
    if sentry_raw(texts):
        at = next(k for k, text in enumerate(texts) if hidden(text))
        frames = [text for text in texts[at + 1:] if text.strip() != "..."]
        return [g.HEADER_TEXT, *frames, *(text for text in texts[:at] if text.strip())]
    if moved_up(texts):
        at = _first_frame(texts)
        return [*texts[at:], *texts[:at]]  # (the exception line, and its message's lines, last)
    if sources_below(texts):
        groups: list[list[str]] = []
        for text in texts[1:]:
            if g.REVERSED_FRAME.match(text) or not groups:
                groups.append([])
            groups[-1].append(text)
        return [g.HEADER_TEXT, *(text for group in reversed(groups) for text in group), texts[0]]
    return _newest_last(texts)


def sources_below(texts: list[str]) -> bool:
    """Whether the frames under an exception line (and its message's lines) have their source lines under them,
    as Python prints (or flush left, where a paste lost the indentation: then the source lines call the frames
    listed after them, as in Python's order)."""
    at = _first_frame(texts)
    orphan = (at + 1 < len(texts) and texts[at][:4] == "    " and g.REVERSED_FRAME.match(texts[at]) is None
              and g.REVERSED_FRAME.match(texts[at + 1]) is not None)
    if orphan:  # (a source line right under the exception line: a newest-first export's, above its frame, or a copy in
        # Python's order begun at the source line of a frame above the first it shows; the calls tell them apart)
        inwards, outwards = g.call_order(_calls(texts, indented=True))
        return inwards and not outwards and len(texts) > at + 2 and texts[at + 2][:4] == "    "
    if len(texts) <= at + 1 or g.REVERSED_FRAME.match(texts[at]) is None:
        return False
    under = texts[at + 1]
    if under.startswith("    "):
        return True
    if not under.strip() or g.REVERSED_FRAME.match(under):
        return False
    inwards, outwards = g.call_order(_calls(texts, indented=False))
    return inwards and not outwards


def _first_frame(texts: list[str]) -> int:
    """Where the frames begin under an exception line: right under it, or under its message's further lines
    (unindented, as Sentry shows a database's `DETAIL:`); 1 where none does so."""
    for k, text in enumerate(texts[1:1 + LINES_BEFORE_HIDDEN], 1):
        if g.REVERSED_FRAME.match(text):
            return k
        if not text.strip() or text[:1].isspace() or text.strip() in ("...", "\u2026"):
            return 1  # (a blank, a source line, a cut's mark: no message's line)
    return 1


def moved_up(texts: list[str]) -> bool:
    """Whether an exception line above frames is a traceback in Python's order with its exception line
    moved up (a copy trimmed by hand): its first frame has its source line under it, no header under
    them all (a newest-first export has each source line above its frame), and no frame's source line
    calls the frame listed before it (Sentry lists frames newest first, each source line under its frame)."""
    if not sources_below(texts) or any(g.HEADER.match(text) for text in texts):
        return False
    inwards, outwards = g.call_order(_calls(texts, indented=True))
    return inwards or not outwards


def _calls(texts: list[str], indented: bool) -> list[tuple[str, str]]:
    """Each frame as (its function, the line under it: its source, or "" where `indented` and that line is not
    indented as Python indents a source line)."""
    return [(frame["function"] or "", texts[k + 1].strip() if k + 1 < len(texts) and (
        not indented or texts[k + 1][:4] == "    ") else "") for k, text in enumerate(texts) if (frame := g.FRAME.match(text))]


def _newest_last(texts: list[str]) -> list[str]:
    """A newest-first export (exception line, then each frame's source line above the frame, the
    header last) back in the order Python printed it, indented as Python indents it."""
    exception, *rest = texts
    body = [text.strip() for text in reversed(rest) if not g.HEADER.match(text)]
    framed = [f"  {text}" if g.REVERSED_FRAME.match(text) else f"    {text}" for text in body]
    return ["Traceback (most recent call last):", *framed, exception]
