"""pytest's report of a failing test, read into one ErrorInfo (a chain where its `E` lines hold another
error's frames, as a Ray wrapper's do).

Under the failing source line (marked `>`) pytest prints the exception as `E` lines, `E   ` and the
exception line, then its message's further lines, or for a failed `assert` the assertion as pytest
explains it (`E   assert not True`, `E    +  where ...`). In its long style a blank line and the
place the exception was raised follow: `v1/engine/test_async_llm.py:178: AssertionError`, whose
file and line are the raise site. The frames above the `E` lines are pytest's own rendering of the
stack and are not read.

A module that failed to import while pytest collected it is reported otherwise: `ImportError while
importing test module '/x/test_y.py'.`, a hint, `Traceback:` and the stack in pytest's short style
(`test_y.py:1: in <module>`, each with its source line under it, `???` for a compiled one), then the `E`
lines: the frames are read. So are those of a stack in the short style above the `E` lines (`--tb=short`,
`ERROR collecting`).
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.blocks import SEPARATOR_LINKS, parse_chain
from analyzer.core.records import ErrorInfo, Frame

__all__ = ["continues", "headline", "links", "links_to", "parse", "stack_goes_on", "starts", "starts_stack", "summary"]

_E_LINE = lazyregex.compile(rf"^[ \t]*+E(?:\s++(?P<text>{g.TEXT}))?\s*+$")  # `E` alone on a blank line of the message
_LOCATION = lazyregex.compile(r"^[ \t]*+(?P<path>[^\s:]+):(?P<lineno>\d+): (?P<type>[A-Za-z_][\w.]*)\s*$")
_ASSERTION = "assert "  # how pytest explains a failed assert in place of the exception line
_FAILED = lazyregex.compile(r"(?:_pytest\.outcomes\.)?Failed: \S")  # pytest.fail()'s, pytest.raises' `DID NOT RAISE`
_COLLECTING = lazyregex.compile(r"^[ \t]*+[A-Za-z_][\w.]* while importing test module '.*'\.\s*$")
_SHORT_FRAME = lazyregex.compile(rf"^[ \t]*+(?P<path>\S.*?):(?P<lineno>\d+): in (?P<function>{g.TEXT})\s*+$")
_STACK_START = lazyregex.compile(r"^[ \t]*+\S*\.py[cx]?:\d+: in \S")  # (a stack's first frame in the short style)
_RULES = ("_ _", "==", "--")  # (the rules of pytest's report between its parts)
_LOCAL = lazyregex.compile(r"^[A-Za-z_]\w* *+= ")  # a local's value under the `E` lines (`-l`: `name   = repr`), a blank above
_CARETS = lazyregex.compile(r"^\s*[~^]*\^[~^]*\s*$")
_COLLECTION_LINES = 500  # held at most: a deep import's stack
_LINKED_LINES = 2000  # skipped at most between a chain's separator and its next link's `E` lines (the test's source)
_NARROWEST = 80  # columns of the narrowest terminal a report is copied from
_NO_SOURCE = "???"  # under a frame whose source pytest cannot show (a compiled module's)
# A headline of pytest's report between its parts: a test's (`____ test_x[p] ____`), a section's (`=== FAILURES ===`,
# `=== short test summary info ===`, `=== 2 failed in 0.10s ===`), the output it captured (`--- Captured log call ---`).
# No message goes on past one: under `--tb=native` a test's traceback ends right above the next test's headline.
_SECTIONS = lazyregex.compile(r"FAILURES|ERRORS|PASSES|short test summary info|warnings summary|test session starts"
                              r"|slowest (?:\d+ )?durations")
_COUNTED = lazyregex.compile(r"\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)\b")
_CAPTURED = lazyregex.compile(r"Captured (?:std(?:out|err)|log) (?:setup|call|teardown)")
# A line of its short test summary (`-r`): `FAILED tests/x.py::test_y[p] - ValueError: bad`, `ERROR ...`
# for an error outside the test; the exception's first line, cut to the terminal's width. (A paste may
# have lost the word in front; a plugin may put the test's duration after it: `FAILED [0.0004s] tests/...`.)
_SUMMARY = lazyregex.compile(r"^[ \t]*(?:(?:(?:FAILED|ERROR) (?:\[[\d.]+m?s\] )?)?[^\s:]+\.py::(?P<test>\S+)|ERROR (?P<test>[^\s:]+\.py))"
                             rf" - \s*+(?P<what>{g.TEXT})\s*+$")  # (or a module that failed to import: `ERROR tests/x.py - ...`)


def headline(text: str) -> bool:
    """A headline of pytest's report (a test's, a section's, its captured output's): no part of a message."""
    line = text.strip(" \t")
    rule = line[:3]
    if rule not in ("___", "---", "===") or not line.endswith(rule):
        return False
    padded = line.strip(rule[0])  # (one blank each side of the title)
    title = padded[1:-1]
    if padded[:1] != " " or padded[-1:] != " " or not title or title != title.strip():
        return False
    if rule == "___":
        return True
    if rule == "---":
        return _CAPTURED.fullmatch(title) is not None
    return _SECTIONS.fullmatch(title) is not None or _COUNTED.search(title) is not None


def starts(text: str) -> bool:
    """The first `E` line of a report (an exception line, or a failed assert's explanation), or the
    first line of a report that a test module failed to import."""
    m = _E_LINE.match(text)
    if m is None:
        return " while importing test module '" in text and _COLLECTING.match(text) is not None
    return bool(m["text"]) and (g.BARE_EXCEPTION_LINE.match(m["text"]) is not None or m["text"].startswith(_ASSERTION)
                                or _FAILED.match(m["text"]) is not None)


def starts_stack(text: str) -> bool:
    """A frame line of pytest's short style (`--tb=short`, a module's collection error): maybe the first of a
    stack whose `E` lines follow (see `stack_goes_on`)."""
    return _STACK_START.match(text) is not None


def stack_goes_on(lines: list[str], text: str) -> bool:
    """Whether `text` goes on with a short-style stack begun by `lines`: another frame, or a line under a
    frame (its source, `???` for a compiled one, since 3.11 carets; right under it, its source and carets whose
    indent a paste stripped). Its first `E` line makes the stack a report (`starts`)."""
    return len(lines) < _COLLECTION_LINES and (_SHORT_FRAME.match(text) is not None or (
        text[:1] == " " and bool(text.strip()) and any(_SHORT_FRAME.match(line) for line in lines[-2:])) or (
        text.strip() != "" and not _E_LINE.match(text) and not text.startswith(_RULES)
        and _SHORT_FRAME.match(lines[-1]) is not None) or (
        _CARETS.match(text) is not None and len(lines) > 1 and _SHORT_FRAME.match(lines[-2]) is not None))


def links(lines: list[str], text: str) -> bool:
    """Whether `text` is the separator of a chain after the report `lines` ended (its place, a blank): the next link's
    report follows, its source lines first (`links_to`)."""
    return text.strip() in g.SEPARATORS and len(lines) > 1 and not lines[-1].strip() and _LOCATION.match(lines[-2]) is not None


def links_to(skipped: int, text: str) -> bool:
    """Whether `text`, `skipped` lines after a chain's separator, may still come before the next link's `E` lines (its
    source lines, `>` marks, places, rules, locals, blanks): not a headline of pytest's, and not too far."""
    return skipped < _LINKED_LINES and not headline(text) and _SUMMARY.match(text) is None


def continues(lines: list[str], text: str) -> bool:
    """Whether `text` is the next line of the report begun by `lines` (its `E` lines, a blank, with `-l` the
    test's locals and a blank, then the location line, which ends it; a blank after it, where a chain's separator may
    follow)."""
    if _stacked(lines):  # the short stack, then its `E` lines
        if _E_LINE.match(lines[-1]):
            return bool(_E_LINE.match(text))
        return len(lines) < _COLLECTION_LINES and bool(
            _E_LINE.match(text) or _SHORT_FRAME.match(text) or text.startswith((" ", "Hint: ", "Traceback:")))
    if _LOCATION.match(lines[-1]):
        return not text.strip()
    if not lines[-1].strip() and _LOCATION.match(lines[-2]):
        return False
    return bool(_E_LINE.match(text) or not text.strip() or _LOCATION.match(text) or _wrapped_rest(lines, text)
                or (_LOCAL.match(text) is not None and (not lines[-1].strip() or _LOCAL.match(lines[-1]) is not None)))


def _wrapped_rest(lines: list[str], text: str) -> bool:
    """Whether `text` is the rest of the `E` line above it, which a terminal wrapped at its width: that line is
    the report's longest so far, at least as long as a terminal is narrow, and `text` reads as no line of the
    report."""
    last = lines[-1]
    return (len(last) >= _NARROWEST and _E_LINE.match(last) is not None and len(last) >= max(map(len, lines))
            and bool(text.strip()) and not text[:1].isspace() and not text.startswith(_RULES))


def parse(lines: list[str]) -> tuple[ErrorInfo, ...]:
    """The report's error; where its `E` lines hold another error's frames (Ray's wrapper over a remote
    task's), the chain they make, that error first; where reports of a chain's links follow it, each separated from
    the one before it by the chain's words, the chain of them all."""
    at = next((k for k, line in enumerate(lines) if line.strip() in SEPARATOR_LINKS), None)
    if at is None:
        return _parse_report(lines)
    link = SEPARATOR_LINKS[lines[at].strip()]
    first, rest = _parse_report(lines[:at]), parse(lines[at + 1:])
    return (*first, ErrorInfo(rest[0].exception_type, rest[0].message, rest[0].frames, link, rest[0].has_traceback),
            *rest[1:])


def _parse_report(lines: list[str]) -> tuple[ErrorInfo, ...]:
    texts: list[str] = []
    for at, line in enumerate(lines):
        if (m := _E_LINE.match(line)) is not None:
            texts.append(m["text"] or "")
        elif texts and _E_LINE.match(lines[at - 1]) and _wrapped_rest(lines[:at], line):
            texts[-1] += line
    location = next((m for m in map(_LOCATION.match, lines) if m is not None), None)
    frames = (Frame(location["path"], int(location["lineno"]), None),) if location else _short_frames(lines)
    if not texts:  # a module's import report cut before its `E` lines: its first word is the type
        return (ErrorInfo(lines[0].split(None, 1)[0], "", frames, has_traceback=bool(frames)),)
    first = texts[0]
    exc = g.EXCEPTION_LINE.match(first) if not first.startswith(_ASSERTION) else None
    if exc is not None and any(g.FRAME.match(text) for text in texts[1:]):
        chain = parse_chain(g.dedented([line.lstrip(" \t")[1:] for line in lines if _E_LINE.match(line)]))
        if len(chain) > 1 and chain[0].exception_type:
            *inner, outer = chain
            return (*inner, ErrorInfo(outer.exception_type, outer.message, outer.frames + frames, outer.link, True))
    if exc is not None:
        exception_type, message = exc["type"], "\n".join([exc["message"] or "", *texts[1:]])
    else:
        exception_type, message = location["type"] if location else "AssertionError", "\n".join(texts)
    return (ErrorInfo(exception_type, message.strip(), frames, has_traceback=bool(frames)),)


def _stacked(lines: list[str]) -> bool:
    """Whether the report shows its stack in the short style: a module's import report, or a stack alone."""
    return _COLLECTING.match(lines[0]) is not None or _SHORT_FRAME.match(lines[0]) is not None


def _short_frames(lines: list[str]) -> tuple[Frame, ...]:
    """The frames of a stack in pytest's short style (a module's import that failed), each with the
    first line under it as its source."""
    if not _stacked(lines):
        return ()
    frames: list[Frame] = []
    for k, text in enumerate(lines):
        if (frame := _SHORT_FRAME.match(text)) is not None:
            below = lines[k + 1] if k + 1 < len(lines) else ""
            code = below.strip() if _indent(below) > _indent(text) and not _E_LINE.match(below) else None
            frames.append(Frame(frame["path"], int(frame["lineno"]), frame["function"],
                                None if code == _NO_SOURCE else code or None))
    return tuple(frames)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def summary(text: str) -> tuple[ErrorInfo, str] | None:
    """The failure a line of pytest's short test summary names, and the test (`FAILED tests/x.py::test_y`);
    else None."""
    m = _SUMMARY.match(text) if ".py::" in text or text.lstrip()[:6] == "ERROR " else None
    if m is None:
        return None
    test = text[:m.end("test")]
    if m["what"].startswith(_ASSERTION):
        return ErrorInfo("AssertionError", m["what"], has_traceback=False), test
    bare = g.BARE_EXCEPTION_LINE.match(m["what"])
    exc = bare or g.EXCEPTION_LINE.match(m["what"])
    if exc is None or (bare is None and exc["message"] is None):  # (a word alone names no class)
        return None
    return ErrorInfo(exc["type"], (exc["message"] or "").strip(), has_traceback=False), test
