"""Fill a pattern's prose (fixes, example commands) with the values captured from the user's message.

Placeholders use str.format syntax: `{moe_a2a_backend}` (the value as text), `{moe_a2a_backend!r}`
(its repr), and two specs for collections: `{supported:list}` -> `none, deepep, megamoe` and
`{supported:or}` -> `none, deepep or megamoe`. A placeholder with no captured value renders as
`<name>`, so a fix never shows a wrong value.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from analyzer.core.schema import Fix

__all__ = ["fill", "render_fix", "RenderedFix"]


@dataclass(frozen=True, slots=True)
class RenderedFix:
    title: str
    text: str
    before: str | None
    after: str | None


class _Missing:
    def __init__(self, name: str) -> None:
        self.name = name

    def __format__(self, spec: str) -> str:
        return f"<{self.name}>"

    def __repr__(self) -> str:
        return f"<{self.name}>"


class _Formatter(string.Formatter):
    def get_value(self, key, args, kwargs):
        if isinstance(key, int):
            key = f"arg{key}"
        return kwargs.get(key, _Missing(key))

    def get_field(self, field_name, args, kwargs):
        first, rest = string._string.formatter_field_name_split(field_name)  # noqa: SLF001
        if next(iter(rest), None) is not None:  # no attribute/index access on captured values
            return _Missing(field_name), first
        return self.get_value(first, args, kwargs), first

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in ("list", "or") and isinstance(value, (list, tuple, set, frozenset)):
            items = [str(v) for v in value]
            if format_spec == "or" and len(items) > 1:
                return ", ".join(items[:-1]) + " or " + items[-1]
            return ", ".join(items)
        if format_spec in ("list", "or"):
            return str(value)
        try:
            return super().format_field(value, format_spec)
        except (ValueError, TypeError):
            return str(value)


_FORMATTER = _Formatter()


def fill(text: str | None, params: dict[str, Any]) -> str | None:
    """Render `text` with `params`; text that is not a valid format string is returned as is."""
    if not text:
        return text
    try:
        return _FORMATTER.vformat(text, (), params)
    except (ValueError, IndexError, KeyError, AttributeError):
        return text


def render_fix(fix: Fix, params: dict[str, Any]) -> RenderedFix:
    return RenderedFix(fill(fix.title, params) or "", fill(fix.text, params) or "",
                       fill(fix.before, params), fill(fix.after, params))
