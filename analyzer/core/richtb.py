"""Rich's traceback format (rich.traceback, as `rich.traceback.install()` and Typer apps print it),
rewritten into the standard one so that `blocks.parse_chain` reads it like any other.

    ╭──────────── Traceback (most recent call last) ─────────────╮
    │ /srv/app/loader.py:7 in outer                              │
    │                                                            │
    │    6 │   try:                                              │
    │ ❱  7 │   │   inner(1)                                      │
    │                                                            │
    │ in <module>:12                                             │
    ╰────────────────────────────────────────────────────────────╯
    KeyError: 'lm_head.weight'

Each frame is its place (`path:line in function`, or `in function:line` where the source could not
be read), which the box's width may wrap (`.../loader_m` then `odule.py:7 in outer`), then the
source around the line with `❱` on the current one. Links of a chain are boxes of their own,
joined by the standard separators. A paste may begin inside a box, its header cut away.
"""

from __future__ import annotations

import regex

from analyzer.core import lazyregex

__all__ = ["CLOSE", "HEADER", "continues", "is_rich", "starts_cut", "to_standard"]

# (its top and bottom lines maybe cut short by a paste, the last character's bytes with them)
# (or drawn in ASCII, as Rich draws it where the terminal's encoding has no box characters: a legacy Windows console's,
# `+--- Traceback (most recent call last) ---+`, `| > 20 ...`, `+------+`)
HEADER = lazyregex.compile(r"^(?:╭─+ Traceback \(most recent call last\)(?: ─+╮?)?|\+-+ Traceback \(most recent call last\)(?: -+\+?)?)\s*$")
CLOSE = lazyregex.compile(r"^(?:╰─+[╯\ufffd]?|\+-+\+?)\s*$")
_ROW = lazyregex.compile(r"^[│|] (?P<text>.*)[│|]\s*$")  # a line inside the box, padded to its width (its sides typed as bars
# where a user put a line of their own in: `| [traceback snipped] |`)
_PLACE = lazyregex.compile(r"^(?:(?P<path>\S.*?):(?P<lineno>\d+) in (?P<function>\S+)|in (?P<name>\S+?):(?P<at>\d+))$")
_CODE = lazyregex.compile(r"^(?P<current>❱|>)?\s*(?P<lineno>\d+)(?: (?P<code>.*))?$")
# (whole, or cut where the box wraps it: before its function, or after its path's colon or line number)
_PLACE_BEGUN = lazyregex.compile(r"^(?:\S+?:\d+ in(?: \S+)?|in \S+?:\d+|\S+\.py:\d*)$")
_AT_LINE = lazyregex.compile(r":\d+$")  # a place's line number: where the box wrapped it, before `in f`
_GUIDES = lazyregex.compile(r"^(?:│\s*)*")  # the indent guides in front of a source line
_SIDES = ("│", "|")


def _row(text: str) -> regex.Match | None:
    """A line inside a box: looked for only where the line ends in a side (a long line of bars and other text, tried
    from its end back to each bar, took seconds)."""
    return _ROW.match(text) if text[:1] in _SIDES and text.rstrip()[-1:] in _SIDES else None


def is_rich(lines: list[str]) -> bool:
    return any(HEADER.match(text) for text in lines)


def starts_cut(text: str) -> bool:
    """A line from inside a box, with the current line's marker or a frame's place (maybe cut after its path, the rest
    on the next row): a paste that began inside one."""
    row = _row(text)
    if row is None:
        return False
    if (code := _CODE.match(row["text"])) is not None:
        return code["current"] is not None
    return _PLACE_BEGUN.match(row["text"].strip()) is not None


def continues(text: str) -> bool:
    """Whether `text` is a line of the box being read (its closing line included)."""
    return _row(text) is not None or CLOSE.match(text) is not None


def to_standard(lines: list[str]) -> list[str]:
    """The lines in CPython's format: a header, `  File "...", line N, in f` frames with their
    current source line, and every line outside the boxes (exception lines, separators) unchanged."""
    out: list[str] = []
    place = ""  # a frame's place, as far as the rows read so far hold it
    for text in lines:
        if HEADER.match(text):
            out.append("Traceback (most recent call last):")
            continue
        if CLOSE.match(text):
            continue
        row = _row(text)
        if row is None:
            out.append(text)
            continue
        body = row["text"].strip()
        code = _CODE.match(body)
        if code is not None and not place:
            if code["current"] and out and out[-1].startswith("  File "):
                out.append("    " + _GUIDES.sub("", code["code"] or "").strip())
            continue
        if not body:
            place = ""
            continue
        # A row the place filled was cut inside a word (a long path); one padded out ended at a blank (not one that
        # ends at the path's colon: its line number follows).
        if place and body.startswith("in ") and _AT_LINE.search(place):
            place += " "  # (wrapped at the blank before its function: the place up to its line number filled the row)
        place += body + " " if row["text"].endswith("  ") and body[-1:] != ":" else body
        if frame := _PLACE.match(place.rstrip()):
            path = frame["path"] or "<unknown>"
            out.append(f'  File "{path}", line {frame["lineno"] or frame["at"]}, in {frame["function"] or frame["name"]}')
            place = ""
    return out
