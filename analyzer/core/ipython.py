"""IPython's traceback format (IPython.core.ultratb, as Jupyter and the IPython shell print it),
rewritten into the standard one so that `blocks.parse_chain` reads it like any other.

    ---------------------------------------------------------------------------
    ValueError                                Traceback (most recent call last)
    Cell In[2], line 2
          1 import json
    ----> 2 f(2)

    File /srv/app/x.py:3, in f(a)
    ----> 3     raise ValueError('bad %d' % a)

    ValueError: bad 2

A frame names its cell or file, line and function with its arguments (IPython 7 and older:
`<ipython-input-2-9c2ca8a9> in load(shards)`, the line number only on the marker); numbered
context lines surround the current one, marked `---->`. Chained exceptions are joined by the standard
separators, each link with its own `Type   Traceback (most recent call last)` header. A notebook's copy
(Colab, VS Code) turns the place a frame names into a markdown link, which reads as the text it shows:
`[/usr/lib/x.py](https://localhost:8080/#) in f(a)`, `File [~/x.py:3](vscode-file://...), in f(a)`.
"""

from __future__ import annotations

import regex

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["FLAT_MARK", "HEADER", "RULE", "is_ipython", "old_frame_alone", "standard_frame", "starts_cut", "to_standard",
           "uncollapsed", "unlinked"]

RULE = lazyregex.compile(r"^-{20,}\s*$")  # the dashed line above the first header
HEADER = lazyregex.compile(  # (its type may be lost: a copy begun at the word; CPython's header ends in a colon)
    r"^(?:(?P<type>[A-Za-z_][\w.]*(?:\([\w.]+\))?)\s+)?Traceback \(most recent call last\)\s*$")
# (Plain mode, as Spyder's console prints it, has no comma before `in`; a notebook viewer's copy, which made
# the place a link, may have lost the word `File` before a file's path)
_FRAME = lazyregex.compile(
    r"^(?:File (?P<bracket>\[)?(?P<path>[^\s\"\[].*?):(?P<lineno>\d+)(?(bracket)\])|(?P<path>[^\s\"(\[][^\s\"]*\.py[cx]?):(?P<lineno>\d+)(?=, in )"
    r"|Cell (?P<cell>In\s?\[\d+\]), line (?P<cell_line>\d+)"
    rf"|File (?P<command><command-\d+>), line (?P<command_line>\d+))(?:,? in \s*+(?P<function>{g.TEXT}))?\s*+$")  # (Databricks' cell)
# Where a copy begins with a library frame (`File /x/y.py:12, in f(a)`) or a Databricks cell: the header
# is not in it, or (Databricks) the exception line comes first.
_OPENING_FRAME = lazyregex.compile(
    r"^(?:File (?:[^\s\"][^\n]*?:\d+\]?,? in \S|<command-\d+>, line \d+|\[?[^\s\"]\S*\.py[cx]?:\d+\]?\s*$)"
    r"|[^\s\"(\[][^\s\"]*\.py[cx]?:\d+, in \S)")  # (IPython 8 names no function for a module's own code)
# IPython 7 and older: "<ipython-input-2-9c2ca8a9> in <module>", "~/x.py in f(a)"; the line number
# is only on the current line's marker. (A page that rendered the copy took `<module>` for a tag and dropped it:
# `x.py in ()`, its function then unknown.)
_OLD_FRAME = lazyregex.compile(r"^(?P<path><ipython-input-[^>]+>|\S.*?\.py[cx]?) in (?:(?P<function><cell line: \d+>|[^\s(]+)"
                               r"(?:\(.*\))?|\(\))\s*$")
_OLD_OPENING_FRAME = lazyregex.compile(r"^(?:<ipython-input-[^>]+>|(?:[~/]|[A-Za-z]:\\|[\w.-]+/)\S*\.py[cx]?) in (?:<cell line: \d+>|[^\s(]+"
                                       r"|(?=\(\)))(?:\(.*\))?\s*$")  # (an absolute path, on Windows too, or one under a package's folder)
# [shown](url); neither holds a bracket of the other kind's opening (each try then ends at the next one: a hostile line
# of `[1](x` pieces is read once, not once a piece)
_LINK = lazyregex.compile(r"\[(?P<text>[^\[\]\n]+)\]\((?:[a-z][\w+.-]*:|#)[^()\[\s]*\)")
_CURRENT = lazyregex.compile(r"^-+> ?\s*(?P<lineno>\d+) ?(?P<code>.*)$")  # "----> 3     raise ValueError(...)"
# VS Code's notebook view makes each numbered line a link to its place in the file (`[225](file:///C:/x/y.py:225)`,
# a remote's `https://vscode-remote+.../y.py:185`): a copy begun inside a frame's lines still names the file
_LINKED_LINE = lazyregex.compile(r"^(?:\s+|-+> ?)\[(?P<lineno>\d+)\]\((?:file://|[a-z][\w+.-]*://[^/)\s]*)(?P<path>/[^)\s]*?\.py[cx]?):(?P=lineno)\)")
_CONTEXT = lazyregex.compile(r"^\s+\d+(?: .*)?$")  # the numbered lines around it
_DRIVE = lazyregex.compile(r"/[A-Za-z]:/")  # (a URL's path to a Windows file: `file:///C:/x/y.py`)


FLAT_MARK = " Traceback (most recent call last) "  # a header with more after it: the breaks were lost (see uncollapsed)
_FLAT_HEADER = lazyregex.compile(r"(?:^|(?<=\s))(?P<type>[A-Za-z_][\w.]*(?:\([\w.]+\))?) +Traceback \(most recent call last\) ")
# What begins a line of such a traceback: a frame (any of the forms above), Colab's `23 frames`, a marker.
_FLAT_PART = lazyregex.compile(
    r"(?<=\s)(?:(?P<frame>Cell In ?\[\d+\], line \d+(?:, in [^\s(]+(?:\([^)]*\))?)?"
    r"|File \S+?:\d+, in [^\s(]+(?:\([^)]*\))?"
    r"|(?:<ipython-input-[^>]+>|[~/]\S*\.py[cx]?) in (?:<cell line: \d+>|[^\s(]+)(?:\([^)]*\))?)"
    r"|\d+ frames(?= )|(?P<marker>-+> ?(?P<lineno>\d+)) )")


def uncollapsed(text: str) -> list[str] | None:
    """The lines of an IPython traceback that lost its line breaks (a notebook's output pasted on one line):
    the header, frames, each marker line with its code (the numbered lines after it begin at its number
    plus one), the numbered lines around it and the exception line (the header's type again, last); None
    unless `text` holds one."""
    header = _FLAT_HEADER.search(text)
    if header is None:
        return None
    kind, body = header["type"], text[header.end() - 1:]
    end = max(body.rfind(f" {kind}: "), len(body) - len(kind) - 1 if body.endswith(f" {kind}") else -1)
    if end < 0:
        return None
    before = text[:header.start()].rstrip(" -")
    lines = [*([before] if before else []), f"{kind} Traceback (most recent call last)"]
    parts = list(_FLAT_PART.finditer(body, 0, end))
    for k, part in enumerate(parts):
        run = body[part.end():parts[k + 1].start() if k + 1 < len(parts) else end].strip()
        if part["marker"] is None:
            lines += [part.group().strip(), *([f"      {run}"] if run[:1].isdigit() else [])]
            continue
        after = regex.search(rf"(?:^| ){int(part['lineno']) + 1}(?: |$)", run)  # where the numbered lines go on
        code, context = (run[:after.start()], run[after.start():]) if after else (run, "")
        lines += [f"{part['marker']} {code.strip()}", *([f"      {context.strip()}"] if context.strip() else [])]
    return [*lines, "", body[end + 1:].strip()]


def unlinked(text: str) -> str:
    """`text` with each markdown link `[shown](url)` in it as the text it shows."""
    return _LINK.sub(r"\g<text>", text)


def linked_frame(text: str) -> bool:
    """A CPython frame line whose path or line number an editor's copy made a markdown link
    (`File "[x.py", line 3](file:///x.py#line=2), in f`)."""
    return "](" in text and bool(g.FRAME.match(unlinked(text)))


def is_ipython(lines: list[str]) -> bool:
    return any(HEADER.match(text) for text in lines) or starts_cut(lines[0]) or _exception_first(lines)


def _exception_first(lines: list[str]) -> bool:
    """Databricks' copy: the exception line, then the frames."""
    return len(lines) > 1 and starts_cut(lines[1]) and bool(g.EXCEPTION_LINE.match(lines[0]))


def starts_cut(text: str) -> bool:
    """An IPython frame line such as a copy begins with, above its first frame or after its exception
    line (Databricks prints that first); IPython 7's too, where it names a cell, an absolute path or one under a
    package's folder; or a numbered line VS Code linked to its file (see _linked_path)."""
    if "](" in text:
        if _linked_path(text) is not None:
            return True
        text = unlinked(text)
    if " in " in text and (".py" in text or text[:1] == "<") and _OLD_OPENING_FRAME.match(text) is not None:
        return True
    return (text[:5] == "File " or (".py" in text and ", in " in text)) and _OPENING_FRAME.match(text) is not None


def _linked_path(text: str) -> str | None:
    """The file a numbered line VS Code linked names, or None: a Windows drive's path without its leading slash."""
    m = _LINKED_LINE.match(text)
    if m is None:
        return None
    path = m["path"]
    return path[1:] if _DRIVE.match(path) else path


def old_frame_alone(first: str, text: str) -> bool:
    """Whether `first`, read as IPython 7's frame line, has no numbered source line under it (`text`):
    then it was something else (Sentry's `path in Class.f` with `at line 168` under it)."""
    return _OLD_OPENING_FRAME.match(unlinked(first) if "](" in first else first) is not None and not (
        _CURRENT.match(text) or _CONTEXT.match(text))


def standard_frame(text: str) -> str | None:
    """An IPython frame line, indented or not (in Plain mode IPython prints its frames in CPython's
    layout otherwise), as CPython prints a frame line; else None."""
    frame = _FRAME.match(text.strip())
    if frame is None:
        return None
    path = frame["path"] or frame["command"] or f"Cell {frame['cell']}"
    function = regex.sub(r"\(.*\)$", "", frame["function"] or "<module>")
    return f'  File "{path}", line {frame["lineno"] or frame["cell_line"] or frame["command_line"]}, in {function}'


def to_standard(lines: list[str]) -> list[str]:
    """The lines in CPython's format: header, `  File "...", line N, in f` frames with their current
    source line, the exception line and what follows it unchanged; where a copy was cut before the exception
    line, the type its header named (alone: its message was lost)."""
    out: list[str] = []
    named = ""  # the type the last header named
    inside = False  # between a header and its exception line
    unnumbered: tuple[str, str] | None = None  # an IPython 7 frame waiting for its marker's number
    linked: str | None = None  # the file the numbered lines since the last frame line linked to (a copy cut its frame)
    framed = False  # a frame line came since the last current line
    first = lines[:1] if _exception_first(lines) else []
    if first or starts_cut(lines[0]):  # a copy begun at a frame, or its exception line first (Databricks)
        out.append("Traceback (most recent call last):")
        inside = True
    for text in lines[len(first):]:
        if not inside:
            if header := HEADER.match(text):
                out.append("Traceback (most recent call last):")
                inside, named = True, header["type"] or ""
            elif not RULE.match(text):
                out.append(text)
            continue
        if "](" in text and (path := _linked_path(text)) is not None:
            linked, text = path, unlinked(text)
        if "](" in text and not _CURRENT.match(text) and (_FRAME.match(plain := unlinked(text)) or _OLD_FRAME.match(plain)):
            text = plain  # (a frame's place; an exception's message keeps what it printed)
        if (frame := standard_frame(text)) is not None:
            out.append(frame)
            framed = True
        elif old := _OLD_FRAME.match(text):
            unnumbered = (old["path"], old["function"])
            framed = True
        elif current := _CURRENT.match(text):
            if unnumbered is not None:
                function = f", in {unnumbered[1]}" if unnumbered[1] else ""
                out.append(f'  File "{unnumbered[0]}", line {current["lineno"]}{function}')
                unnumbered = None
            elif linked is not None and not framed:  # (its function is not known: the frame's line was cut off)
                out.append(f'  File "{linked}", line {current["lineno"]}')
            linked, framed = None, False
            out.append(f"    {current['code'].strip()}")
        elif text.strip() and not _CONTEXT.match(text) and g.EXCEPTION_LINE.match(text):
            out.append(text)
            inside = False
    if inside and first:
        return [*out, *first]
    return [*out, named] if inside and named else out
