"""A traceback whose line breaks a copy lost: header, frames, source lines and exception line all on
one line, each part where the break was a blank (a forum that renders a paste as one paragraph):

    Traceback (most recent call last): File "x.py", line 3, in f g(1) File "y.py", line 7, in g
    return d[k] KeyError: 'k'

is read as the lines it was; so is one a string's escapes hold on one line (a client printing the
error body a server sent, `{'detail': 'Traceback (most recent call last):\\n  File "x.py", ...'}`).
Pure: text in, lines out.
"""

from __future__ import annotations

import regex

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["CUT_MARK", "ESCAPED", "FRAME_MARK", "MARK", "RAISE_MARK", "SPACED_MARK", "link_lines", "raise_glued", "unescaped",
           "uncollapsed"]

MARK = g.HEADER_TEXT + ' File "'  # (a line holds it only where its breaks were lost)
SPACED_MARK = g.HEADER_TEXT + "  "  # ... the header then more blanks than one, the first frame's indent kept
_SPACED_FRAME = lazyregex.compile(regex.escape(g.HEADER_TEXT) + r'\s+File "')
_BLANKS = lazyregex.compile(r"\s{2,}")
FRAME_MARK = 'File "'  # ... or begins with it, cut above its first frame, a second frame or the exception later on it
_FIXED = lazyregex.compile("(" + "|".join(map(regex.escape, g.FIXED_LINES)) + ")")
_FRAME_START = lazyregex.compile(r'(?<!\s)\s*+(?=File "[^"]*", line \d+)')  # (from a run's start: each blank of a long
# run tried to its end made a line of them cost the square of its length)
# A frame: its place, its function's name (a blank inside `<...>` only), then its source line, if any.
_FRAME = lazyregex.compile(rf'File "(?P<path>[^"]*)", line (?P<lineno>\d+)(?:, in (?P<function>{g.FUNCTION_PART}+))?\s*(?P<rest>.*)')
_CARETS = lazyregex.compile(r"(.*?)(?<!\s)\s++([~^]*\^[~^]*)$")
_FRAME_REST = lazyregex.compile(rf"line \d+, in {g.FUNCTION_PART}+ ")  # what a frame line has after its path
# Where the exception line begins after the last source line: a type that reads as an exception's (`Exception`
# itself too, not in an `except` clause).
_EXCEPTION_START = lazyregex.compile(
    rf"(?:^|(?<=\s))(?:[A-Za-z_]\w*+\.)*+(?:{g.EXCEPTION_NAME}|(?<!\bexcept\s)Exception)(?:\([\w.]+\))?(?=:\s|:?$)")


ESCAPED = "\\n"  # (a line holds a traceback's escaped line breaks only where a string was printed whole)
# (the first may begin the text: a copy begun there; in a list's repr, each begins a string of its own)
_ESCAPED_FRAME = lazyregex.compile(r'(?:^|\\n(?:[\'"], [\'"])?)\s*File \\?"')
_ESCAPE = lazyregex.compile(r'\\([n"\'\\t])')
_UNESCAPED = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}
_TWICE_ESCAPED = "\\\\n"  # (a line break escaped in a string that is itself escaped in another)
_WINDOWS_ESCAPED = "\\r\\n"
# pybind11's stack under the exception line, escaped (Triton's Python backend reports a model's error so:
# `message: ValueError: ...\n\nAt:\n  /x/model.py(60): execute\n`)
_ESCAPED_PYBIND_AT = ESCAPED * 2 + g.PYBIND_AT + ESCAPED
_STRING_BODY = {quote: lazyregex.compile(rf"(?:[^\\{quote}]|\\.)*+") for quote in "'\""}  # up to its closing quote


def unescaped(text: str) -> list[str] | None:
    """The lines of a traceback that `text` holds as a string's escapes (`\\n` between its lines, maybe
    `\\"` around its paths); None unless it holds one: a header, or two frame lines after a `\\n` (or at
    the start), or pybind11's `At:` and its stack. What follows the string's closing quote is a line apart: the
    quote right before the header closes it; without a header, a quote right after the last `\\n` does."""
    if ESCAPED not in text:
        return None
    if _WINDOWS_ESCAPED in text:  # (a host's terminal's line breaks: Ansible's `module_stdout`)
        text = text.replace(_WINDOWS_ESCAPED, ESCAPED)
    if g.HEADER_TEXT + _TWICE_ESCAPED in text:  # (a string's repr inside another string: a JSON body holding a dict's repr)
        text = _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], text)
    frames = len(_ESCAPED_FRAME.findall(text))
    header = text.find(g.HEADER_TEXT + ESCAPED)
    if frames < 2 and not (frames and header >= 0) and _ESCAPED_PYBIND_AT not in text:
        return None
    quote = text[header - 1] if header > 0 and text[header - 1] in "'\"" else None
    if quote and text[header - 2:header - 1] == "[" and (listed := _listed(text, header - 2)) is not None:
        text = f"{text[:header - 2]}{quote}{listed[0]}{quote}{text[listed[1]:]}"  # (its strings, one after another)
    end = _STRING_BODY[quote].match(text, header).end() if quote else len(text)
    last = text.rfind(ESCAPED) + len(ESCAPED)
    if quote is None and text[last:last + 1] in ("'", '"'):
        end = last  # (its last line break: then the string's end)
    lines = _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], text[:end]).split("\n")
    return [*lines, text[end:]] if text[end:].strip() else lines


def _listed(text: str, start: int) -> tuple[str, int] | None:
    """The strings of the list whose repr begins at `start`, joined as the body of a string in the quotes of its
    first (each escaped for them), and where the list ends: the lines of a traceback logged as the list
    `traceback.format_exception` gives (`['Traceback (most recent call last):\\n', '  File ...']`, SpiderFoot's
    log); None where the text is no such list (or the line cut it)."""
    outer, pos, pieces = text[start + 1], start + 1, []
    while text[pos:pos + 1] in ("'", '"'):
        quote = text[pos]
        close = _STRING_BODY[quote].match(text, pos + 1).end()
        if text[close:close + 1] != quote:
            return None
        piece = text[pos + 1:close]
        pieces.append(piece if quote == outer else piece.replace(outer, "\\" + outer))
        pos = close + 1
        if text[pos:pos + 1] == "]":
            return "".join(pieces), pos + 1
        if not text.startswith(", ", pos):
            return None
        pos += 2
    return None


CUT_MARK = "line "  # ... or cut inside its first frame line, after its path: from the next frame on


def uncollapsed(text: str) -> list[str] | None:
    """The lines of a traceback that `text` holds on one line (see the module), or of one cut above its
    first frame (that frame first, another or the exception line after it) or inside it (from the frame
    after it); None unless it holds one."""
    if text.startswith(CUT_MARK) and _FRAME_REST.match(text) is not None and (at := text.find(' File "')) > 0:
        return uncollapsed(text[at + 1:])
    if text.startswith(FRAME_MARK):
        frame = _FRAME.match(text)
        if frame is None or (' File "' not in text and _EXCEPTION_START.search(frame["rest"]) is None):
            return None
        return uncollapsed(f"{g.HEADER_TEXT} {text}")[1:]  # type: ignore[index]
    if MARK not in text and SPACED_MARK in text and _SPACED_FRAME.search(text) is not None:
        text = _BLANKS.sub(" ", text)  # (the breaks lost, the indents kept: `...last):   File "x.py", ...     g(1)`)
    if MARK not in text:
        return None
    before, *parts = _FIXED.split(text)
    lines: list[str] = []
    for fixed, body in zip(parts[::2], parts[1::2]):
        if fixed == g.HEADER_TEXT:  # (words before the first: its context, as a logger writes it)
            lines += [fixed if lines else f"{before.strip()} {fixed}".lstrip(), *link_lines(body)]
        else:
            lines += [fixed, "", *([body.strip()] if body.strip() else [])]
    return lines


RAISE_MARK = "raise "


def raise_glued(text: str) -> list[str] | None:
    """A `raise` statement (a traceback's last source line) with the exception line glued after it, the
    break between them lost: the two lines; None unless the statement is whole (its brackets and quotes
    closed) where a type that reads as an exception's begins, or is the first line of a call over several
    (`raise OfflineModelsEnabled(`, as Python shows it), glued to one that names that class."""
    body = text.lstrip()
    if not body.startswith(RAISE_MARK):
        return None
    if (opened := _RAISE_OPENED.match(body)) is not None and (said := g.BARE_EXCEPTION_LINE.match(
            rest := body[opened.end():])) is not None and said["type"].rsplit(".", 1)[-1] == opened["name"]:
        return [f"    {body[:opened.end()].rstrip()}", rest]
    depth, quote, read = 0, "", len(RAISE_MARK)  # the brackets and quote open up to `read`, read once
    raised = len(body) - len(body[read:].lstrip())  # where what is raised begins
    for start in _EXCEPTION_START.finditer(body, len(RAISE_MARK)):
        for char in body[read:start.start()]:
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
        read = start.start()
        if raised < read and depth == 0 and not quote and body.startswith(":", start.end()):  # (with its message:
            return [f"    {body[:read].rstrip()}", body[read:]]  # `raise X from KeyError` is a statement whole)
    return None


_RAISE_OPENED = lazyregex.compile(r"raise (?:[\w.]+\.)?(?P<name>\w+)\(\s*")


def link_lines(body: str) -> list[str]:
    """Frames, their source lines and the exception line of one link, from its run of text."""
    frames = [piece for piece in _FRAME_START.split(body) if piece.strip()]
    lines: list[str] = []
    for i, piece in enumerate(frames):
        frame = _FRAME.match(piece)
        if frame is None:  # (words before the first frame)
            lines.append(piece.strip())
            continue
        function = f", in {frame['function']}" if frame["function"] else ""
        lines.append(f'  File "{frame["path"]}", line {frame["lineno"]}{function}')
        rest, exception = frame["rest"].strip(), None
        if i == len(frames) - 1 and (start := _EXCEPTION_START.search(rest)) is not None:
            rest, exception = rest[:start.start()].strip(), rest[start.start():]
        source = _CARETS.match(rest)  # (Python 3.11's carets under the source, on its line now)
        lines += [f"    {part}" for part in (source.groups() if source else (rest,)) if part]
        lines += [exception] if exception is not None else []
    return [*lines, ""]  # (the blank line before a chain's separator)
