"""Errors told by the frames they happen in rather than by their message alone.

A weight that a checkpoint has and the model does not fails as a bare `KeyError` at
`param = params_dict[name]` in a model's `load_weights`: the message is only the key, so no
message template can claim it, yet the line and the function say exactly what happened. And one
message can mean different things by where it happens: CUDA running out of memory while the
weights load asks for other fixes than during decoding. A pattern with a `site` names the frame:
the innermost frame's source line (`code`, with its `function`; a `{name}` in it stands for any
text, as model files name the key `name`, `n` or `name_mapped`), or a function anywhere in the
stack (`within`), each under a package path prefix (`path`). Its template must still accept the
message; it only needs words where the message has them (`{name!r}` for a `KeyError`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from analyzer.core.records import Frame, package_relative
from analyzer.core.schema import Pattern
from analyzer.core.template import CompiledTemplate, TemplateError, compile_template

__all__ = ["SiteIndex", "StackKey"]

StackKey = tuple[tuple[str, str, str], ...]  # (package-relative path, function, code) per frame, innermost last


class SiteIndex:
    def __init__(self, patterns) -> None:
        self._by_type: dict[str, list[Pattern]] = defaultdict(list)
        self._compiled: dict[str, CompiledTemplate | None] = {}
        for pattern in patterns:
            if pattern.site is not None:
                self._by_type[pattern.short_exception].append(pattern)

    def __bool__(self) -> bool:
        return bool(self._by_type)

    @staticmethod
    def stack(frames: tuple[Frame, ...]) -> StackKey:
        """What of a traceback's frames the sites look at, hashable (part of the matcher's cache key)."""
        return tuple((package_relative(f.path), (f.function or "").rsplit(".", 1)[-1], " ".join((f.code or "").split()))
                     for f in frames)

    def match(self, short_type: str | None, message: str, stack: StackKey) -> tuple[Pattern, dict[str, Any]] | None:
        """The first pattern whose site is in this stack and whose template accepts the message."""
        if not stack or not short_type:
            return None
        for pattern in self._by_type.get(short_type, ()):
            if not _at_site(pattern, stack):
                continue
            template = self._template(pattern)
            captured = template.match(message) if template is not None else None
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


def _at_site(pattern: Pattern, stack: StackKey) -> bool:
    site = pattern.site
    assert site is not None  # only patterns with a site are indexed
    prefix = site.path or ""
    if site.code:
        path, function, code = stack[-1]
        return (path.startswith(prefix) and (not site.function or function == site.function)
                and _code_fits(site.code, code))
    return any(function in site.within and path.startswith(prefix) for path, function, _ in stack)


def _code_fits(site_code: str, code: str) -> bool:
    if "{" not in site_code:
        return code == site_code
    try:
        return compile_template(site_code, "format").match(code) is not None
    except TemplateError:
        return False  # the schema reports it
