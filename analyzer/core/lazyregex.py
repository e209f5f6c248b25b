"""Module-level patterns compiled on first use, not on import.

The package's modules define some 340 patterns with `regex`, whose compiler is written in Python: compiled on import,
they took 0.1 s of every run's start-up (two fifths of a small log's scan). A log of one kind uses about a quarter of
them; the others (other formats' forms) cost nothing until a line needs them. A pattern's methods and attributes are
its compiled pattern's, bound onto the stand-in at its first use, so later calls cost what calls on the pattern cost.
"""

from __future__ import annotations

from typing import Any, AnyStr, cast

import regex

__all__ = ["compile"]


class _Deferred:
    """Stands in for `regex.compile(source, flags)` until one of its methods or attributes is asked for."""

    def __init__(self, source: str | bytes, flags: int) -> None:
        self.pattern = source  # (other patterns are built from it at import: it needs no compiling)
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # (copy, pickle and the like ask for these: the class answers them)
            raise AttributeError(name)
        compiled = regex.compile(self.pattern, self._flags)
        for public in dir(compiled):  # (its methods bound to it, and its attributes: each looked up here once)
            if not public.startswith("_"):
                setattr(self, public, getattr(compiled, public))
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[Any, tuple[str | bytes, int]]:
        return compile, (self.pattern, self._flags)

    def __repr__(self) -> str:
        return f"lazyregex.compile({self.pattern!r}, {self._flags})"


def compile(source: AnyStr, flags: int = 0) -> regex.Pattern[AnyStr]:
    """`regex.compile(source, flags)`, done when the pattern is first used."""
    return cast("regex.Pattern[AnyStr]", _Deferred(source, flags))
