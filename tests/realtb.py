"""Real tracebacks for tests: raise real exceptions here, format them with `traceback`, and
describe what the parser must recover from the text, field by field."""

from __future__ import annotations

import traceback
from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    exception_type: str
    message: str
    frames: tuple[tuple[str, int, str, str | None], ...]  # path, line, function, code
    link: str  # first | cause | context
    subs: tuple[tuple[Expected, ...], ...] = ()


def capture(func) -> BaseException:
    try:
        func()
    except BaseException as err:  # tests raise on purpose
        return err
    raise AssertionError(f"{func} did not raise")


def raised(exc: BaseException) -> BaseException:
    """`exc`, an exception the test made whole, raised and caught: with its traceback."""
    def throw():
        raise exc

    return capture(throw)


def text_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def expected_chain(exc: BaseException) -> tuple[Expected, ...]:
    return _chain(traceback.TracebackException.from_exception(exc), "first")


def _chain(te: traceback.TracebackException, link: str) -> tuple[Expected, ...]:
    before: tuple[Expected, ...] = ()
    if te.__cause__ is not None:
        before = _chain(te.__cause__, "first")
        link_here = "cause"
    elif te.__context__ is not None and not te.__suppress_context__:
        before = _chain(te.__context__, "first")
        link_here = "context"
    else:
        link_here = link
    return before + (_one(te, link_here),)


def _one(te: traceback.TracebackException, link: str) -> Expected:
    name = te.exc_type.__qualname__
    module = te.exc_type.__module__
    type_name = name if module in ("builtins", "__main__") else f"{module}.{name}"
    frames = _as_printed(tuple((f.filename, f.lineno, f.name, (f.line or "").strip() or None) for f in te.stack))
    if issubclass(te.exc_type, SyntaxError):
        message = te.msg
        frames += ((te.filename, int(te.lineno), None, (te.text or "").strip() or None),)
    else:
        only = "".join(te.format_exception_only()).rstrip("\n")
        if only.startswith(type_name + ": "):
            message = only[len(type_name) + 2:]
        elif only.startswith(type_name + "\n"):  # no message, but notes: they follow an empty first line
            message = only[len(type_name):]
        else:
            message = "" if only == type_name else only
    subs = tuple(_chain(sub, "first") for sub in (te.exceptions or ()))
    return Expected(type_name, message, frames, link, subs)


def actual_chain(chain) -> tuple[Expected, ...]:
    """The parser's ErrorInfo chain in the same shape, for equality checks."""
    return tuple(
        Expected(info.exception_type, info.message,
                 tuple((f.path, f.lineno, f.function, f.code) for f in info.frames), info.link.value,
                 tuple(actual_chain(sub) for sub in info.sub_exceptions))
        for info in chain)


def _as_printed(frames):
    """CPython prints a frame repeated more than 3 times in a row only 3 times (_RECURSIVE_CUTOFF)."""
    kept, run = [], 0
    for index, frame in enumerate(frames):
        run = run + 1 if index and frames[index - 1][:3] == frame[:3] else 1
        if run <= 3:
            kept.append(frame)
    return tuple(kept)
