"""Errors no `raise` statement names, told by the frame they surface in.

A weight that a checkpoint has and the model does not fails as a bare `KeyError` at
`param = params_dict[name]` in a model's `load_weights`: the message is only the key, so no
message template can claim it, yet the line and the function say exactly what happened. A pattern
with a `site` (the innermost frame's source line, its function, a package path prefix) is found
here by that frame; its template then only has to accept the message (`{name!r}`) and capture it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from analyzer.core.schema import Pattern
from analyzer.core.template import CompiledTemplate, TemplateError, compile_template

__all__ = ["SiteIndex"]


class SiteIndex:
    def __init__(self, patterns) -> None:
        self._by_code: dict[tuple[str, str], list[Pattern]] = defaultdict(list)
        self._compiled: dict[str, CompiledTemplate | None] = {}
        for pattern in patterns:
            if pattern.site is not None:
                self._by_code[(pattern.short_exception, pattern.site.code)].append(pattern)

    def __bool__(self) -> bool:
        return bool(self._by_code)

    def match(self, short_type: str | None, message: str, relpath: str | None, function: str | None,
              code: str | None) -> tuple[Pattern, dict[str, Any]] | None:
        """The pattern whose site is this innermost frame, with what its template captured."""
        if not code or not short_type:
            return None
        for pattern in self._by_code.get((short_type, " ".join(code.split())), ()):
            site = pattern.site
            if site.function and (function or "").rsplit(".", 1)[-1] != site.function:
                continue
            if site.path and not (relpath or "").startswith(site.path):
                continue
            params = self._template(pattern)
            captured = params.match(message) if params is not None else None
            if captured is not None:
                return pattern, captured
        return None

    def _template(self, pattern: Pattern) -> CompiledTemplate | None:
        if pattern.id not in self._compiled:
            style = "auto" if pattern.style in ("auto", "plain") else pattern.style
            try:
                self._compiled[pattern.id] = compile_template(pattern.template, style)
            except TemplateError:
                self._compiled[pattern.id] = None  # `patterns check` reports it
        return self._compiled[pattern.id]
