"""The records that flow through the core: small, frozen, slotted dataclasses.

Modelled on CPython's traceback module: a `Frame` is a FrameSummary, an `ErrorInfo` is one
TracebackException without its chain, and an `ErrorEvent` is what a log holds: a chain of them
(root cause first) plus where in the log it was found.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["LogLine", "Frame", "Link", "ErrorInfo", "ErrorEvent", "SourceSpan", "EventKind", "short_type"]


def short_type(name: str) -> str:
    """`torch.OutOfMemoryError` -> `OutOfMemoryError`; C++ namespaces too: `c10::Error` -> `Error`."""
    return name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a log after its prefixes were stripped and kept as metadata."""

    text: str
    file: str
    lineno: int
    stream: str = ""  # key that separates interleaved processes/ranks within one file
    channel: str = ""  # the per-line part of the stream key (container, worker pid, torchrun rank)
    rank: str | None = None  # "TP3", "DP1 TP3", "rank3", "pid=1234"
    host: str | None = None
    timestamp: datetime | None = None
    prefix: str = ""  # the stripped prefix text, kept for display
    starts_message: bool = False  # the line carried its own per-message prefix (a new log record)


@dataclass(frozen=True, slots=True)
class Frame:
    path: str
    lineno: int | None
    function: str | None
    code: str | None = None

    @property
    def relpath(self) -> str:
        return package_relative(self.path)

    @property
    def place(self) -> str:
        """`relpath:lineno`, or the path alone where the line is not known (a test pytest names)."""
        return f"{self.relpath}:{self.lineno}" if self.lineno is not None else self.relpath


class Link(enum.Enum):
    """How an exception is printed relative to the one before it in a chain."""

    FIRST = "first"
    CAUSE = "cause"  # "The above exception was the direct cause of the following exception:"
    CONTEXT = "context"  # "During handling of the above exception, another exception occurred:"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One exception: its type, message and stack, and for exception groups its sub-exceptions."""

    exception_type: str
    message: str
    frames: tuple[Frame, ...] = ()
    link: Link = Link.FIRST
    has_traceback: bool = True
    sub_exceptions: tuple[tuple[ErrorInfo, ...], ...] = ()  # each a chain, root first

    @property
    def short_type(self) -> str:
        return short_type(self.exception_type)

    @property
    def raise_site(self) -> Frame | None:
        return self.frames[-1] if self.frames else None


class EventKind(enum.Enum):
    TRACEBACK = "traceback"
    BARE = "bare"  # an exception line without a traceback
    ARGPARSE = "argparse"  # usage: ... / prog: error: ...
    NOTICE = "notice"  # a log line that reports a failure without a traceback (see core/notices.py)
    NATIVE = "native"  # a crash report of the runtime: faulthandler, a C++ terminate (see core/native.py)


@dataclass(frozen=True, slots=True)
class SourceSpan:
    file: str
    line_start: int
    line_end: int


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """One error as printed once in a log: a chain of exceptions, root cause first."""

    chain: tuple[ErrorInfo, ...]
    span: SourceSpan
    kind: EventKind = EventKind.TRACEBACK
    stream: str = ""
    rank: str | None = None
    host: str | None = None
    timestamp: datetime | None = None
    context: str = ""  # text logged before the traceback, e.g. "Scheduler hit an exception:"
    truncated: bool = False
    lines: tuple[str, ...] = field(default=(), repr=False)  # the normalised lines, for display
    provisional: bool = False  # shown while its record may still grow (stdin, follow): revised later
    elided: int = 0  # lines of the record left out of `lines` (and of the chain): a huge stack's middle, a long message's end
    inferred: bool = False  # its class not printed but named by its message's form (core/cpython_messages.py)

    @property
    def root(self) -> ErrorInfo:
        return self.chain[0]

    @property
    def final(self) -> ErrorInfo:
        return self.chain[-1]


# Directories that installed or checked-out packages live under, most telling first (an egg's folder
# sits inside site-packages and holds the package; a paste's elided `/.../` leaves only the package).
_PACKAGE_ROOTS = (("/site-packages/", "/dist-packages/", ".egg/"), ("/python/", "/src/"), ("/.../", "/…/"),
                  ("/lib/",))


def package_relative(path: str) -> str:
    """`/usr/lib/python3/site-packages/sglang/srt/x.py` -> `sglang/srt/x.py`.

    Cuts after the last package root of the most telling kind; paths without one are returned
    unchanged (minus a leading `./`, or the `.../` of a paste that elided the start).
    """
    if "\\\\" in path[2:]:  # a Windows path escaped as in a string's repr (`C:\\app\\x.py`), past a UNC path's start
        path = path[:2] + path[2:].replace("\\\\", "\\")
    norm = path.replace("\\", "/")
    for roots in _PACKAGE_ROOTS:
        cut = max((norm.rfind(root) + len(root) for root in roots if root in norm), default=-1)
        if 0 <= cut < len(norm):
            return norm[cut:]
    for elided in ("./", ".../", "…/"):
        if norm.startswith(elided):
            return norm[len(elided):]
    return norm
