"""Parse the text of one printed traceback (already cut out of the log) into a chain of ErrorInfo.

The inverse of `traceback.format_exception`: chains joined by the cause/context separators, frames
with their source and caret lines, multi-line messages, and exception groups drawn in boxes.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from analyzer.core import grammar as g
from analyzer.core import ipython, lazyregex, richtb
from analyzer.core.records import ErrorInfo, Frame, Link

__all__ = ["SEPARATOR_LINKS", "box_column", "contradicts_statement", "in_box", "named_error", "note_end", "parse_chain",
           "pybind_stack", "raised_within", "told_within", "with_pybind_stack"]

SEPARATOR_LINKS = {g.CAUSE_SEPARATOR: Link.CAUSE, g.CONTEXT_SEPARATOR: Link.CONTEXT}
# CPython prints groups 10 levels deep (max_group_depth), each level a box in a box; deeper nesting
# comes from crafted input, and reading it would overflow the stack: boxes deeper than this are skipped.
MAX_BOX_DEPTH = 24


def parse_chain(lines: list[str], depth: int = 0) -> tuple[ErrorInfo, ...]:
    """Lines of one traceback block -> its exceptions in printed order (root cause first).
    `depth` counts the boxes of exception groups the lines are drawn in. The same block echoed by
    several ranks is read once (the result is immutable)."""
    if depth or sum(map(len, lines)) > _MAX_REMEMBERED:
        return _parse_chain(lines, depth)
    return _parse_block(tuple(lines))


_MAX_REMEMBERED = 1 << 14  # characters of a block kept for the next rank that prints it; longer ones are rare


@lru_cache(maxsize=256)
def _parse_block(lines: tuple[str, ...]) -> tuple[ErrorInfo, ...]:
    return _parse_chain(list(lines), 0)


def _parse_chain(lines: list[str], depth: int) -> tuple[ErrorInfo, ...]:
    if depth == 0:
        column, end = _orphan_box(lines)
        if column >= 0:  # an exception group's sub-exception pasted without the group (its own rules left out: those
            # that open its sub-exceptions, where it is a group itself, stay); the chain may go on below it
            boxed = tuple(_parse_box([line for line in lines[:end] if not _box_rule(line, column)
                                      or line[column:column + 3] == "+-+"], column, 1))
            return boxed + (_parse_chain(lines[end:], 0) if end < len(lines) else ())
        if ipython.is_ipython(lines):
            lines = ipython.to_standard(lines)
        elif richtb.is_rich(lines) or richtb.starts_cut(lines[0]):
            lines = richtb.to_standard(lines)
        lines = _mended_frames(lines)
    links: list[ErrorInfo] = []
    link = Link.FIRST
    i = 0
    while i < len(lines):
        text = lines[i]
        stripped = text.strip()
        if not stripped:
            i += 1
        elif stripped in SEPARATOR_LINKS:
            link = SEPARATOR_LINKS[stripped]
            i += 1
        elif g.GROUP_HEADER.match(text):
            column = box_column(lines[i + 1]) if i + 1 < len(lines) else 0
            end = _box_end(lines, i + 1, column)
            box = [" " * column + "+ Exception Group Traceback (most recent call last):", *lines[i + 1:end]]
            links.extend(_relink(_parse_box(box, column, depth + 1), link))
            link, i = Link.FIRST, end
        else:
            infos, i, inner = _parse_link(lines, i, link)
            links.extend(infos)
            if inner and links:  # a traceback in the exception's message: another process's, which failed first
                links = [*inner, _replace(links[0], link=Link.CAUSE), *links[1:]]
            link = Link.FIRST
    return tuple(links)


_BOX_RULE = lazyregex.compile(r"[\u2500-\u257f]{3,}.*[\u2500-\u257f]")  # a box's edge: its corners and rules (a title between)
_FUNCTION_AND_CODE = lazyregex.compile(rf"((?:{g.FUNCTION_PART}|<)*)\s*(.*)")
_TRAILING_CARETS = lazyregex.compile(r"\s+[~^]*\^[~^]*\s*$")
# Where the next frame begins in a line that holds several: a copy that dropped the line breaks.
_NEXT_FRAME = lazyregex.compile(r' (?=File "[^"]*", line \d+)')


def _dedented_below_source(text: str, above: str, frame: Frame) -> bool:
    """Whether `text`, under the source line `above` of a frame line that lost its indentation, is the exception line of
    a traceback indented as a whole (pip's output of a build, say), copied from that frame line on: blanks in front of
    it, fewer than in front of the source line, a class and a message (or an exception's class and the colon alone: a
    message that begins with a line break)."""
    indent = len(text) - len(text.lstrip(" "))
    return (frame.code is not None and above.strip() == frame.code and 0 < indent < len(above) - len(above.lstrip(" "))
            and (said := g.BARE_EXCEPTION_LINE.match(text[indent:])) is not None
            and (bool(said["message"]) or (text.endswith(":") and said["type"].endswith(g.EXCEPTION_SUFFIXES))))


def _mended_frames(lines: list[str]) -> list[str]:
    """Frame lines a terminal hard-wrapped inside their path or function put back together, frames a
    copy joined into one line (each with its source line) and an exception line joined to the line above it by a
    terminal's padding taken apart, a first frame line the paste
    began inside of given back its start, links taken out of frame lines, and IPython's frame lines
    (Plain mode) written as CPython's."""
    joined: list[str] = []
    for line in lines:
        if "](" in line and 'File "' in line:  # an editor's copy made a link of the path or the line number:
            # `File "[x.py", line 3](url)`, `File "x.py", [line 3](url)`
            line = ipython.unlinked(line)
        if line[:1] == " " and line.lstrip()[:5] in ("File ", "Cell ") and not g.FRAME.match(line):
            line = ipython.standard_frame(line) or line  # IPython's frame line in CPython's layout (Plain mode)
        if (pair := g.padded_exception(line)) is not None:  # (a source line and the exception line a terminal's
            joined.extend(pair)  # padding joined)
            continue
        for text in _NEXT_FRAME.split(line) if line.count('File "') > 1 and g.FRAME.match(line) else (line,):
            _mend(joined, text)
    return joined


def _mend(joined: list[str], text: str) -> None:
    if joined and (whole := g.rest_of_frame_line(joined[-1], text)) is not None:
        joined[-1] = whole
    elif (not joined or g.is_frame_detail(joined[-1])) and (whole := g.frame_cut_at_start(text)) is not None:
        joined.append(whole)  # a frame line that lost its start: the paste's first, or one trimmed as the first was
    else:
        joined.append(text)


def _relink(chain: list[ErrorInfo], link: Link) -> list[ErrorInfo]:
    if chain and link is not Link.FIRST:
        chain[0] = _replace(chain[0], link=link)
    return chain


def _replace(info: ErrorInfo, **changes) -> ErrorInfo:
    fields = {name: getattr(info, name) for name in info.__slots__}
    fields.update(changes)
    return ErrorInfo(**fields)


def _parse_link(lines: list[str], i: int, link: Link) -> tuple[list[ErrorInfo], int, list[ErrorInfo]]:
    """One exception: optional header and frames, its exception line, message continuation; and the
    chain of a traceback its message holds (that of another process, or its own as text), which goes
    before every link: its error came first. A wrapper whose remote frames follow it (Ray) yields the
    remote exception first: it is its cause."""
    frames: list[Frame] = []
    has_traceback = False
    header = g.HEADER.match(lines[i])
    if header is not None and g.BARE_EXCEPTION_LINE.match(header["context"].rstrip(": ")):
        header = None  # an exception whose message is a traceback (`RuntimeError: Traceback ...`): its line, below
    # (Ray names the remote task in place of the header of each link of a remote error's chain but the first, which
    # its wrapper's line names: `ray::Actor.f() (pid=12, ip=10.0.0.3)`)
    headed = header is not None or (link is not Link.FIRST and _remote_header(lines, i))
    if headed:
        has_traceback = True
        i += 1
    stripped = False  # the last frame line lost (some of) its indentation, and so did its source line
    after_frame = False  # the line before was a frame line
    frame_indent = -1  # the last frame line's
    framed = False  # the line before was a frame line
    dedented = False  # the exception line is less indented than the source line above it (see _dedented_below_source)
    while i < len(lines):
        text = lines[i]
        frame = g.frame_line(text)
        # (a blank line between a frame and its source line is a paste's doubled line break)
        right_after, after_frame = stripped and after_frame, frame is not None or (after_frame and not text.strip())
        source_lost = framed and text.strip() and not g.exception_line_at_source(text)  # (its indentation)
        if (not frame and not text.startswith("  ") and text.strip() and frames and not g.EXCEPTION_LINE.match(text.strip())
                and _source_below(lines, i)):
            i += 1  # another writer's line between a frame and its source line (stdout's, in a capture of both streams)
            continue
        framed = frame is not None
        if frame:
            has_traceback = True
            # a function's name holds no blank (but in `<cell line: 4>`): after one, a terminal's padding joined
            # the source line
            function, code = _FUNCTION_AND_CODE.match(frame.groupdict().get("function") or "").groups()
            code = _TRAILING_CARETS.sub("", code).strip()  # (and its caret line, where the copy joined that too)
            frames.append(Frame(frame["path"], int(frame["lineno"]), function or None, code or None))
            stripped = g.lost_indentation(text)
            frame_indent = len(text) - len(text.lstrip(" "))
        elif g.exception_line_at_indent(text, frame_indent):
            break  # the exception line, indented as the frames are: a paste indented all but the header
        elif stripped and _dedented_below_source(text, lines[i - 1], frames[-1]):
            dedented = True  # the exception line of a traceback indented as a whole, its first line's blanks lost
            break
        elif (g.is_frame_detail(text) or (frames and text.startswith("  ") and text.strip()) or source_lost
              or (stripped and text.strip() and not (g.exception_line_at_source(text) if right_after
                                                     else g.EXCEPTION_LINE.match(text)))):
            if frames and frames[-1].code is None and _is_source(text):
                frames[-1] = Frame(frames[-1].path, frames[-1].lineno, frames[-1].function, text.strip())
        elif (frames or has_traceback) and (g.frame_remnant(text) or g.FRAME_CUT.match(text)):
            pass  # what is left of a frame line: its start alone, or its function's name after an elision
        elif frames and g.CARETS.match(text):
            pass  # a caret line a copy put flush left
        elif not ((frames or has_traceback) and not text.strip() and (after_frame or _frame_or_exception_after(lines, i))):
            break  # (a blank line among frames, or after one, is a paste's doubled line break)
        i += 1
    # the exception line as far in as the source line above it, the last of a fragment a user cut from a log
    at_source = (i >= len(lines) and bool(frames) and lines[-1][:1] == " " and frames[-1].code != lines[-1].strip()
                 and (last := g.BARE_EXCEPTION_LINE.match(lines[-1].strip())) is not None and bool(last["message"]))
    if at_source:
        i = len(lines) - 1
    if i >= len(lines):
        if not has_traceback:
            return [], i, []
        return [ErrorInfo(*_cut_at_statement(frames, lines), tuple(frames), link, has_traceback)], i, []
    text = lines[i]
    exc = g.EXCEPTION_LINE.match(text.strip() if at_source or dedented else text[frame_indent:] if g.exception_line_at_indent(
        text, frame_indent) else text)
    if not headed and len(frames) > 1 and g.listed_newest_first([(f.function or "", f.code or "") for f in frames]):
        frames.reverse()  # a copy that listed the frames newest first: each one's source calls the one above it
    if exc is not None and frames and contradicts_statement(exc, frames[-1].code):  # (a copy's word under a stack cut
        # at its raise)
        return [ErrorInfo(*_cut_at_statement(frames, lines[:i]), tuple(frames), link, has_traceback)], i, []
    if exc is None:  # not an exception line: keep what we have, let the caller move on
        if has_traceback:
            return [ErrorInfo("", "", tuple(frames), link, has_traceback)], i, []
        return [], i + 1, []
    i += 1
    if (exc["message"] or "").rstrip().endswith(_HEADER_TEXT):  # RuntimeError(traceback.format_exc()), maybe
        inner = list(parse_chain([_HEADER_TEXT, *lines[i:]]))  # after words of its own ("... Error: Traceback")
        intro = (exc["message"] or "").rstrip()[:-len(_HEADER_TEXT)].strip()
        # (not where nothing but the header is said and no Python stack follows: TVM's native one, `[bt] (8) ...`, its text)
        if inner and (intro or any(info.exception_type or info.frames for info in inner)):
            return [ErrorInfo(exc["type"], intro or _final_line(inner[-1]), tuple(frames), link, has_traceback)], len(lines), inner
    carets = i
    remote = g.wraps_remote(exc)
    if not remote and carets < len(lines) and g.remote_task(lines[carets]):
        remote, carets = True, carets + 1  # (the remote task named on the line after the wrapper's)
    if remote and carets < len(lines) and g.remote_source_cut(lines[carets]):
        carets += 1
    while remote and carets < len(lines) and (g.CARETS.match(lines[carets]) or g.is_elision(lines[carets])):
        carets += 1  # of the remote's first frame, which Ray cut (or a user's mark of lines left out)
    if remote and carets < len(lines) and g.FRAME.match(lines[carets]):  # Ray: the remote stack follows
        inner, end, nested = _parse_link(lines, carets, link)
        while inner and inner[-1].exception_type and (chained := _remote_link_at(lines, end)) is not None:
            more, end, nested = _parse_link(lines, chained[1], chained[0])  # (the rest of the remote's chain)
            inner += more
        outer = ErrorInfo(exc["type"], exc["message"] or "", tuple(frames), Link.CAUSE, has_traceback)
        if inner and inner[-1].exception_type:
            return [*inner, outer], end, nested  # (the remote error's message a traceback: Ray Serve's replica's)
        if inner and inner[-1].frames and exc["inner"]:  # the remote's stack cut before its error, whose type the
            # wrapper names: that error, raised where the frames shown end
            return [_replace(inner[-1], exception_type=exc["inner"], message=outer.message), outer], end, nested
    if (len(frames) > 1 and frames[-1].function is None and frames[-1].path in _COMPILED_TEXT
            and exc["type"].endswith(_SYNTAX_ERRORS)):
        frames.pop()  # (a syntax error's place in text compiled from a string: raised where it was compiled)
    message = [exc["message"] or ""]
    # (an exception line indented with its traceback as a whole: its message's lines are too; a line further out ends it)
    indent = len(text) - len(text.lstrip(" ")) if at_source or dedented else 0
    while i < len(lines) and lines[i].strip() not in SEPARATOR_LINKS and lines[i].strip() != g.REMOTE_QUOTE:
        if _BOX_RULE.fullmatch(lines[i].strip()):
            break  # (the edge of a box a terminal UI drew around the log: no text of the message)
        if indent and lines[i].strip() and not lines[i].startswith(" " * indent):
            if not any(line.strip() in SEPARATOR_LINKS or g.HEADER.match(line.strip()) for line in lines[i:]):
                i = len(lines)  # (what follows is the output around the traceback: no link of its chain)
            break
        if g.TORCHSCRIPT_HEADER.match(lines[i]) and (found := _torchscript_error(lines, i)):
            outer = ErrorInfo(exc["type"], "\n".join(message).rstrip(), tuple(frames), link, has_traceback)
            inner = found[0]
            if not inner[-1].frames:  # (its stack empty: raised in the interpreter, where the Python frames end)
                inner[-1] = _replace(inner[-1], frames=tuple(frames))
            return [outer], found[1], inner  # the error TorchScript's interpreter failed with: the root
        header = g.HEADER.match(lines[i])
        if header and (end := note_end(lines, i, exc["type"], exc["message"] or "", frames)):
            message.extend(lines[i:end])  # err.add_note(traceback.format_exc()): text, not another error
            i = end
            continue
        introduces = bool(header) and (g.introduces_output("\n".join(message)) or (len(message) == 1 and (
            g.reraised_original(header) or g.holds_traceback(f"{exc['type']}: {message[0]}", header))))  # (torch's: the
        # worker's traceback follows; unittest's: the import's)
        if (header and (not header["context"] or introduces) and len(message) <= 1 + g.OUTPUT_LEAD
                and (introduces or len(message) == 1)
                and (inner := list(parse_chain(lines[i:])))
                and (introduces or _same_error(inner[-1], exc["type"], exc["message"] or "", frames))):
            # a child's output, or where it was first raised (the same error, its traceback below it): the root
            outer = ErrorInfo(exc["type"], "\n".join(message).rstrip(), tuple(frames), link, has_traceback)
            return [outer], len(lines), inner
        if header or g.GROUP_HEADER.match(lines[i]):
            break
        if not lines[i].strip():
            end = _paragraph_end(lines, i)
            if end == i and i + 1 < len(lines) and g.pybind_call_below(message[0], lines[i + 1]):
                end = i + 2  # (pybind11's message of arguments it could not take: the call's own after the signatures)
            if end == i and exc["message"] is not None and not message[0].strip():  # `Type: ` and a line break
                end = _introduction_end(lines, i)
                if end == i and len(message) == 1:
                    end = _message_below_end(lines, i)
            if end == i:
                break
            message.extend(lines[i:end])
            i = end
            continue
        message.append(lines[i][indent:])  # (its indentation the whole traceback's)
        i += 1
    outer = ErrorInfo(exc["type"], "\n".join(message).rstrip(), tuple(frames), link, has_traceback)
    if (stack := pybind_stack(lines, i)) is not None:
        return with_pybind_stack(outer, stack[0]), stack[1], []
    if len(unwrapped := raised_within(outer)) > 1 or len(unwrapped := validated_within(outer)) > 1:
        return list(unwrapped), i, []
    if link is Link.FIRST and (quoted := _NAMED_INSIDE.search(message[0]) or _named_whole(message[0], exc["type"])
                               or g.WRAPPED_DRIVER_ERROR.match(message[0])):
        # `Capture cuda graph failed: RuntimeError: ...`, or the whole message the error's line (torch's
        # `InductorError: ModuleNotFoundError: ...`) or the driver's error SQLAlchemy wraps; a later link that
        # quotes one is an earlier link told again
        raised = ErrorInfo(quoted["type"], quoted["message"].strip(), tuple(frames), link, has_traceback)
        return [raised, _replace(outer, link=Link.CAUSE)], i, []
    if (held := g.repr_said(outer.message)) is not None:  # the whole message another exception's repr: dask's
        return [_replace(outer, exception_type=held[0], message=held[1]), _replace(outer, link=Link.CAUSE)], i, []
    if link is Link.FIRST and (held := _repr_at_end(message[0])) is not None:  # vLLM's `MQEngineDeadError: ... the
        # original error: AssertionError('...').`: the error it wrapped, told where they share the frames
        return [ErrorInfo(held[0], held[1], tuple(frames), link, has_traceback), _replace(outer, link=Link.CAUSE)], i, []
    if exc["inner"]:  # Ray's `RayTaskError(SyntaxError): ...` without the remote's frames: an instance of both,
        # raised where these frames end (`raise value.as_instanceof_cause()`); the inner type is what failed
        return [_replace(outer, exception_type=exc["inner"]), _replace(outer, link=Link.CAUSE)], i, []
    return [outer], i, []


def _repr_at_end(said: str) -> tuple[str, str] | None:
    """The exception whose repr ends a message's first line after a colon (maybe with a full stop after it): its type
    and its message; else None. (Looked for after the last few colons only: a crafted line may hold thousands.)"""
    if not said.rstrip(". ").endswith(")"):
        return None
    at = len(said)
    for _ in range(_REPR_TRIES):
        if (at := said.rfind(": ", 0, at)) < 1:
            return None
        if (held := g.repr_said(said[at + 2:].rstrip().removesuffix("."))) is not None:
            return held
    return None


_REPR_TRIES = 4


def _torchscript_error(lines: list[str], i: int) -> tuple[list[ErrorInfo], int] | None:
    """The error under TorchScript's stack that begins at `lines[i]`, read from its last header (a serialized module's
    original code, after its serialized code) to the chain's next separator, and where that is; None if no exception
    line ends it."""
    end = next((k for k in range(i, len(lines)) if lines[k].strip() in SEPARATOR_LINKS), len(lines))
    last = max(k for k in range(i, end) if g.TORCHSCRIPT_HEADER.match(lines[k]))
    inner = list(parse_chain([_HEADER_TEXT, *(line for line in lines[last + 1:end] if line.strip())]))  # (its source
    # around each call as it is, blank lines too)
    return (inner, end) if inner and inner[-1].exception_type else None


_HEADER_TEXT = "Traceback (most recent call last):"
# A syntax error's place (`File "<unknown>", line 1`, no function) in text that `ast.parse`, `compile` or `exec` was
# given names no file: the frame above it, where that text was compiled, is where it was raised.
_COMPILED_TEXT = ("<unknown>", "<string>")
_SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def note_end(lines: list[str], i: int, exception_type: str, message: str, frames: list[Frame] | tuple[Frame, ...]
             ) -> int:
    """Where a traceback starting at `lines[i]` ends when it is a note of the exception just printed
    (`err.add_note(traceback.format_exc())` in an `except` that re-raises err): the same exception
    line, and its frames the innermost ones of the exception's own (the note was formatted in a frame
    the exception then left). 0 when it is not such a note."""
    if g.HEADER.match(lines[i])["context"]:
        return 0
    infos, end, inner = _parse_link(lines, i, Link.FIRST)
    if len(infos) != 1 or inner:
        return 0
    note = infos[0]
    first_line = message.split("\n", 1)[0]
    if (note.exception_type, note.message.split("\n", 1)[0]) != (exception_type, first_line):
        return 0
    tail = [(f.path, f.lineno, f.function) for f in frames[len(frames) - len(note.frames):]]
    own = [(f.path, f.lineno, f.function) for f in note.frames]
    return end if 0 < len(note.frames) < len(frames) and tail == own else 0


def _cut_at_statement(frames: list[Frame], lines: list[str]) -> tuple[str, str]:
    """The type and message of a traceback cut right after its innermost frame's source line, where that line
    says what it raised: an `assert` raises AssertionError; `raise Name(...)` (or `raise Name`) that class, and
    the message when its one argument is a plain string. Unless Python 3.11's carets under it point at a
    part of it that raised instead. Else unknown ("", "")."""
    code = frames[-1].code if frames else None
    raised = _RAISE.match(code) if code else None
    if not code or not (raised or code.startswith("assert ")):
        return "", ""
    shown = [text for text in lines if text.strip()]
    if len(shown) >= 2 and g.CARETS.match(shown[-1]) and not _underlines_statement(shown[-2], shown[-1], raised is None):
        return "", ""
    return (raised["type"], raised["message"] or "") if raised else ("AssertionError", "")


def contradicts_statement(exc: regex.Match, code: str | None) -> bool:
    """Whether an exception line (an EXCEPTION_LINE match) is a word alone (no message, no module, no exception's
    name) under a frame whose source line `code` raises another class: a word a copy put there (a web console's `Copy`
    button), not the error (Python prints a class of `__main__` as a word alone: `Abort`, where `raise Abort` said so)."""
    if exc["message"] is not None or "." in exc["type"] or g.BARE_EXCEPTION_LINE.match(exc["type"]):
        return False
    raised = _RAISE.match(code.strip()) if code else None
    return raised is not None and raised["type"].rsplit(".", 1)[-1] != exc["type"]


def _underlines_statement(source: str, carets: str, assertion: bool) -> bool:
    """Whether the carets under an `assert` line underline its whole test (from after `assert` to the line's
    end or the message's comma: the assertion failed), under a `raise` line the statement from its start."""
    start, end = len(carets) - len(carets.lstrip()), len(carets.rstrip())
    if not assertion:
        return start == source.find("raise ")
    return start == source.find("assert ") + len("assert ") and source[end:].lstrip()[:1] in ("", ",")


# `raise ValueError("...")`, `raise errors.ConfigError`, `raise KeyError(name) from err`: a class (its last name
# capitalised), maybe called with one plain string (its message), maybe a cause after it
_RAISE = lazyregex.compile(r"raise (?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*)"
                           r"(?:\((?:(?P<q>['\"])(?P<message>(?:(?!(?P=q))[^\\])*)(?P=q)\)|.*)?)?(?:\s+from\s+\S.*)?\s*(?:#.*)?$")


def _frame_or_exception_after(lines: list[str], i: int) -> bool:
    """Whether the next line with text goes on a traceback's frames: a frame, a frame's source or caret
    line (a paste that doubled every line break; one that lost its indentation too), or the exception line."""
    following = next((text for text in lines[i:] if text.strip()), "")
    return bool(g.frame_line(following) or g.is_frame_detail(following) or g.CARETS.match(following)
                or (g.EXCEPTION_LINE.match(following) and following.strip() not in SEPARATOR_LINKS))


def _final_line(info: ErrorInfo) -> str:
    return f"{info.exception_type}: {info.message}" if info.message else info.exception_type


def _paragraph_end(lines: list[str], i: int) -> int:
    """At a blank line inside a message: where the message's further paragraphs end, if a chain
    separator follows them (torch._dynamo's 'You can suppress this exception ...'); else `i`."""
    for j in range(i, len(lines)):
        text = lines[j]
        if text.strip() in SEPARATOR_LINKS:
            end = j
            while end > i and not lines[end - 1].strip():
                end -= 1
            return end if any(line.strip() for line in lines[i:end]) else i
        if g.HEADER.match(text) or g.GROUP_HEADER.match(text) or g.FRAME.match(text):
            return i
    return i


def _named_whole(message: str, own_type: str) -> regex.Match | None:
    """A message that is wholly another exception's line; not the error's own class named again first
    (litellm's `litellm.APIConnectionError: litellm.APIConnectionError: ...`)."""
    m = _NAMED_WHOLE.match(message)
    return m if m is not None and m["type"].rsplit(".", 1)[-1] != own_type.rsplit(".", 1)[-1] else None


def raised_within(outer: ErrorInfo) -> tuple[ErrorInfo, ...]:
    """`outer`; or, where the first line of its message introduces the error it raised and the second names
    it (`BackendCompilerFailed: backend='inductor' raised:` then `FileExistsError: ...`, or its repr: Hydra's
    `Error in call to target 'x':` then `TypeError("...")`), that error, sharing its frames, then `outer` (and
    the error that one's text names first, where it is a wrapper)."""
    first, _, rest = outer.message.partition("\n")
    named = named_error(rest.split("\n", 1)[0]) if rest and g.introduces_output(first) else None
    if named is None:
        return (outer,)
    raised = ErrorInfo(named[0], named[1], outer.frames, outer.link, outer.has_traceback)
    # (that error itself a wrapper whose text is its error's line: torch's `LoweringException: ImportError: ...`)
    if (inner := _named_whole(named[1], named[0])) is not None:
        innermost = ErrorInfo(inner["type"], inner["message"].strip(), outer.frames, outer.link, outer.has_traceback)
        return innermost, _replace(raised, link=Link.CAUSE), _replace(outer, link=Link.CAUSE)
    return raised, _replace(outer, link=Link.CAUSE)


# pydantic's report of one failed validation whose validator raised (`Value error, ...` for a ValueError, `Assertion
# failed, ...` for an assert): a pydantic dataclass's own checks, as vLLM's configs run them in __post_init__. The
# location line (a field's name) is there for a field's validator, not for the model's.
_VALIDATOR_RAISED = lazyregex.compile(
    r"\A1 validation error for [\w.]+[ \t]*\n(?:[^\s\n][^\n]*\n)?[ \t]+(?P<kind>Value error|Assertion failed), "
    r"(?P<text>.+?) \[type=(?:value|assertion)_error\b", regex.DOTALL)


def validated_within(outer: ErrorInfo) -> tuple[ErrorInfo, ...]:
    """`outer`; or, where it is pydantic's ValidationError for one check its model's own code raised (vLLM's
    `1 validation error for LoRAConfig` then `Value error, max_lora_rank (1) must be one of ...`), that error, raised
    within the call that built the model (pydantic's own frames, where the text was wrapped, left out), then `outer`."""
    if outer.short_type != "ValidationError" or (
            m := _VALIDATOR_RAISED.match(outer.message)) is None:
        return (outer,)
    frames = list(outer.frames)
    while frames and "/pydantic/" in frames[-1].path.replace("\\", "/"):
        frames.pop()
    raised = ErrorInfo("ValueError" if m["kind"] == "Value error" else "AssertionError", m["text"].strip(),
                       tuple(frames), outer.link, outer.has_traceback)
    return raised, _replace(outer, link=Link.CAUSE)


def told_within(outer: ErrorInfo) -> tuple[ErrorInfo, ...]:
    """`outer`; or, where its whole message is another error's line (a line alone, as pytest's summary or a logger
    gives torch's `InductorError: AssertionError: `), that error, then `outer` as its wrapper."""
    if (inner := _named_whole(outer.message, outer.exception_type)) is None:
        return (outer,)
    return (ErrorInfo(inner["type"], inner["message"].strip(), outer.frames, outer.link, outer.has_traceback),
            _replace(outer, link=Link.CAUSE))


def named_error(text: str) -> tuple[str, str] | None:
    """The error a wrapper's message names on its second line (`backend='inductor' raised:` then
    `OutOfResources: out of resource: ...`): an exception line whose type reads as a class, or the
    exception's repr. Its type and message."""
    m = g.BARE_EXCEPTION_LINE.match(text)
    if m is None:
        m = g.EXCEPTION_LINE.match(text)  # (a type without the usual suffix: with its message, named as a class)
        if m is None or m["message"] is None or not (m["type"][:1].isupper() or "." in m["type"]):
            return g.repr_said(text.strip())
    return m["type"], m["message"] or ""


def _same_error(info: ErrorInfo, exception_type: str, message: str, frames: list[Frame]) -> bool:
    """The same exception as this, raised from other frames: where it was first raised."""
    return info.exception_type == exception_type and info.message == message.strip() and info.frames != tuple(frames)


def _message_below_end(lines: list[str], i: int) -> int:
    """At a blank line right after an exception line with no message of its own (`Type: `) and no traceback
    after it: where the message that began with line breaks ends (`raise ReadTimeout("\\n\\nPattern not
    detected...")`), its last non-blank line; `i` where a traceback or a separator comes first."""
    if any(text.strip() in SEPARATOR_LINKS or g.HEADER.match(text) or g.GROUP_HEADER.match(text) for text in lines[i:]):
        return i
    end = len(lines)
    while end > i and not lines[end - 1].strip():
        end -= 1
    return end


def _introduction_end(lines: list[str], i: int) -> int:
    """At a blank line right after an exception line with no message of its own: where the traceback
    that its message's further lines introduce (see grammar.introduces_output) begins; else `i`."""
    for j in range(i, min(len(lines), i + 2 + g.OUTPUT_LEAD)):
        if lines[j].strip() in SEPARATOR_LINKS:
            return i
        header = g.HEADER.match(lines[j])
        if header:
            return j if not header["context"] and g.introduces_output("\n".join(lines[i:j])) else i
    return i


def pybind_stack(lines: list[str], i: int) -> tuple[tuple[Frame, ...], int] | None:
    """pybind11's stack under an exception's message from `lines[i]` on (a blank line, `At:`, its frames
    innermost first): the frames outermost first, and where they end; else None."""
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j == i or j >= len(lines) or lines[j].strip() != g.PYBIND_AT:
        return None
    frames = []
    end = j + 1
    while end < len(lines) and (frame := g.PYBIND_FRAME.match(lines[end])) is not None:
        frames.append(Frame(frame["path"], int(frame["lineno"]), frame["function"], None))
        end += 1
    return tuple(reversed(frames)), end


def with_pybind_stack(error: ErrorInfo, stack: tuple[Frame, ...]) -> list[ErrorInfo]:
    """An error and the pybind11 stack printed under it. The stack is the frames of the error the message
    names at its end (`... message: TypeError: ...`, the Python error a C++ caller reported), then the
    cause of the error printed; else the error's own, where it shows none."""
    named = _NAMED_AT_END.search(error.message.split("\n", 1)[0])
    if named is not None and (named["type"], named["message"]) != (error.exception_type, error.message):
        raised = ErrorInfo(named["type"], named["message"], stack, Link.FIRST, True)
        return [raised, _replace(error, link=Link.CAUSE if error.link is Link.FIRST else error.link)]
    return [error if error.frames else _replace(error, frames=stack, has_traceback=True)]


# An exception line that a wrapper's message quotes after its own words (`Capture cuda graph failed:
# RuntimeError: CUDA error: ...`): the error it wrapped, raised in the frames they share.
_NAMED_INSIDE = lazyregex.compile(rf"(?<=\S: )(?P<type>(?:[A-Za-z_]\w*+\.)*+{g.EXCEPTION_NAME}): (?P<message>\S.*)$")
# ... or that is the whole of a wrapper's message.
# (its message may be empty: torch's `InductorError: AssertionError: ` for a bare `assert`)
_NAMED_WHOLE = lazyregex.compile(rf"(?P<type>(?:[A-Za-z_]\w*+\.)*+{g.EXCEPTION_NAME}): ?(?P<message>(?<=: )\S.*|)$")
# An exception line at the end of a message: after its start or a colon (`..., message: TypeError: x`).
_NAMED_AT_END = lazyregex.compile(rf"(?:^|(?<=: ))(?P<type>(?:[A-Za-z_]\w*+\.)*+{g.EXCEPTION_NAME}): (?P<message>.*)$")


_INTERLEAVED_AT_MOST = 3  # lines of another writer's output between a frame line and its source line


def _remote_header(lines: list[str], i: int) -> bool:
    """Whether `lines[i]` is Ray's name of a remote task over the frames of a link of its chain."""
    return g.remote_task(lines[i].strip()) and i + 1 < len(lines) and g.FRAME.match(lines[i + 1]) is not None


def _remote_link_at(lines: list[str], i: int) -> tuple[Link, int] | None:
    """The link and the header's line of the next link of a remote error's chain, where a chain's separator and Ray's
    name of the remote task (in place of the header) come next, blank lines around the separator."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or (link := SEPARATOR_LINKS.get(lines[i].strip())) is None:
        return None
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return (link, i) if i < len(lines) and _remote_header(lines, i) else None


def _source_below(lines: list[str], i: int) -> bool:
    """Whether the line at `i` (not indented as Python indents a stack's lines) sits between a frame line above and
    that frame's source line a few lines below, with only such lines between."""
    above = next((k for k in range(i - 1, max(-1, i - _INTERLEAVED_AT_MOST - 1), -1) if lines[k].startswith("  ")), -1)
    if above < 0 or g.frame_line(lines[above]) is None:
        return False
    for k in range(i + 1, min(len(lines), above + _INTERLEAVED_AT_MOST + 2)):
        if lines[k].startswith("    ") and lines[k].strip() and g.frame_line(lines[k]) is None:
            return True
        if lines[k].startswith("  "):
            return False
    return False


def _is_source(text: str) -> bool:
    """A frame's source line, as opposed to a caret line (`~~~^^^`) or an elision marker."""
    body = text.strip()
    return bool(body) and not set(body) <= set("^~-+ ") and not g.is_elision(body) and not g.REPEATED.match(text)


def _box_end(lines: list[str], i: int, column: int) -> int:
    while i < len(lines) and in_box(lines[i], column) and not g.GROUP_HEADER.match(lines[i]):
        i += 1
    return i


def box_column(text: str) -> int:
    """The column of a box line's `|`/`+`; -1 when the line is not drawn in a box."""
    body = text.lstrip(" ")
    return len(text) - len(body) if body[:1] in ("|", "+") else -1


def _orphan_box(lines: list[str]) -> tuple[int, int]:
    """The column of the box an exception group draws a sub-exception in, where the lines begin with such a box without
    the group around it (a paste begun at `+-+---- 1 ----`, at the box's `| Traceback ...` or at a frame in it), and
    where the box ends: at the end, or at a chain's separator; (-1, 0) where they do not."""
    first = next((line for line in lines if line.strip() and not _box_rule(line, box_column(line))), "")
    column = box_column(first)
    if column < 0 or first[column] != "|" or not (g.HEADER.match(first[column + 2:]) or g.FRAME.match(first[column + 2:])):
        return -1, 0
    end = next((k for k, line in enumerate(lines) if line.strip() and not in_box(line, column)), len(lines))
    return (column, end) if end == len(lines) or lines[end].strip() in SEPARATOR_LINKS else (-1, 0)


def _box_rule(text: str, column: int) -> bool:
    """A box's rule at `column`: its top with the sub-exception's number (`+-+---- 1 ----`) or its bottom."""
    return column >= 0 and text[column:column + 1] == "+" and g.GROUP_SEPARATOR.match(text) is not None


def in_box(text: str, column: int) -> bool:
    """A line of an exception-group box drawn at `column` or nested deeper inside it."""
    body = text.lstrip(" ")
    return body[:1] in ("|", "+") and len(text) - len(body) >= column


def _parse_box(lines: list[str], column: int, depth: int) -> list[ErrorInfo]:
    """A boxed region whose own lines carry `|` at `column`; sub-exceptions sit 2 columns right."""
    if depth > MAX_BOX_DEPTH:
        return []
    chain: list[ErrorInfo] = []
    own: list[str] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        if text[column:column + 3] == "+-+":  # the group's own text ends, its sub-exceptions begin
            subs, i = _parse_subs(lines, i, column + 2, depth)
            parsed = list(parse_chain(own, depth))
            own = []
            if parsed:
                parsed[-1] = _replace(parsed[-1], sub_exceptions=subs)
            chain.extend(parsed)
            continue
        body = text[column + 2:] if len(text) > column + 2 else ""
        if text[column:column + 1] == "+" and "Exception Group Traceback" in text:
            body = "Traceback (most recent call last):"
        elif body.startswith("Exception Group Traceback"):
            body = body.replace("Exception Group Traceback", "Traceback", 1)
        own.append(body)
        i += 1
    chain.extend(parse_chain(own, depth))
    return chain


def _parse_subs(lines: list[str], i: int, column: int,
                depth: int) -> tuple[tuple[tuple[ErrorInfo, ...], ...], int]:
    """Sub-exception boxes starting at the `+-+---- 1 ----` line; returns them and where they end."""
    subs: list[list[str]] = [[]]
    i += 1
    while i < len(lines):
        text = lines[i]
        if len(text) <= column or text[:column].strip():
            break  # back at the parent's column: the group is over
        marker = text[column:column + 3]
        if marker.startswith("+-") and marker != "+-+":
            i += 1
            if g.GROUP_SEPARATOR.match(text) and any(ch.isdigit() for ch in text):
                subs.append([])
                continue
            if set(text.strip()) <= set("+-"):
                break  # the closing line of the whole group
            subs.append([])  # "+---- ... ----" before "and N more exceptions"
            continue
        subs[-1].append(text[column:])
        i += 1
    chains = tuple(tuple(_parse_box(sub, 0, depth + 1)) for sub in subs if sub)
    return tuple(chain for chain in chains if chain), i
