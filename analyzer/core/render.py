"""Fill a pattern's prose (fixes, example commands) with the values captured from the user's message
and with the run's own configuration.

Placeholders use str.format syntax: `{moe_a2a_backend}` (the value as text), `{moe_a2a_backend!r}`
(its repr), and two specs for collections: `{supported:list}` -> `none, deepep, megamoe` and
`{supported:or}` -> `none, deepep or megamoe`. A placeholder with no captured value renders as
`<name>`, so a fix never shows a wrong value.

The run's configuration (core/runconfig.py) is `run`: `{run.mem_fraction_static}` is the value the
log shows for that setting, `{run.server}`, `{run.version}`, `{run.model}` what they say; a spec of an
operator and a number computes from it: `{run.mem_fraction_static:-0.05}`, `{run.chunked_prefill_size:/2}`
(also `+`, `*`; an integer stays an integer, a fraction keeps the precision of its operands). A fix
line (text, before/after) that needs a run value the log does not show is left out rather than
guessed, as is one whose computation would cross zero; fixes marked for the other server are not
offered; and when the log holds the launch command, the fix's before/after change is applied to it
(core/copyfix.py).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

from analyzer.core.copyfix import apply_change
from analyzer.core.runconfig import RunConfig
from analyzer.core.schema import Fix

__all__ = ["RenderedFix", "fill", "render_fix", "render_fixes"]

_COMPUTE = re.compile(r"(?P<op>[-+*/])(?P<operand>\d+(?:\.\d+)?)")


@dataclass(frozen=True, slots=True)
class RenderedFix:
    title: str
    text: str
    before: str | None
    after: str | None
    command: str | None = None  # the run's own launch command with this fix applied ("copy fix")


class _Missing:
    def __init__(self, name: str) -> None:
        self.name = name

    def __format__(self, spec: str) -> str:
        return f"<{self.name}>"

    def __repr__(self) -> str:
        return f"<{self.name}>"


class _RunValue:
    """A value from the run's configuration: formatted as text, or computed by a spec like `-0.05`."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _Formatter(string.Formatter):
    def __init__(self, run: RunConfig | None) -> None:
        self.run = run
        self.run_missing = False  # a run value was needed and the log did not show it

    def get_value(self, key, args, kwargs):
        if isinstance(key, int):
            key = f"arg{key}"
        return kwargs.get(key, _Missing(key))

    def get_field(self, field_name, args, kwargs):
        first, rest = string._string.formatter_field_name_split(field_name)
        rest = list(rest)
        if first == "run" and len(rest) == 1 and rest[0][0]:
            return self._run_value(rest[0][1]), first
        if rest:  # no attribute/index access on captured values
            return _Missing(field_name), first
        return self.get_value(first, args, kwargs), first

    def _run_value(self, name: str) -> Any:
        run = self.run
        if run is not None:
            if name in ("server", "version", "model"):
                value = run.server.value if name == "server" and run.server else getattr(run, name)
                if value is not None:
                    return _RunValue(value)
            elif run.has(name):
                return _RunValue(run.get(name))
        self.run_missing = True
        return _Missing(f"run.{name}")

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if isinstance(value, _RunValue) and conversion:
            return _RunValue(super().convert_field(value.value, conversion))
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, _RunValue):
            return self._format_run(value.value, format_spec)
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

    def _format_run(self, value: Any, spec: str) -> str:
        compute = _COMPUTE.fullmatch(spec)
        if compute is None:
            return self.format_field(value, spec) if spec else str(value)
        result = _compute(value, compute["op"], compute["operand"])
        if result is None:
            self.run_missing = True
            return f"<run value {value!r}{spec}>"
        return str(result)


def _compute(value: Any, op: str, operand_text: str) -> int | float | None:
    """`value op operand`, in the value's kind; None when it is no number or the result would not
    stay on the value's side of zero, or a fraction would reach 1 (a memory fraction of -0.02 or 1.03
    is no suggestion)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    operand = float(operand_text)
    if op == "/" and operand == 0:
        return None
    result = {"-": value - operand, "+": value + operand, "*": value * operand, "/": value / operand}[op]
    if isinstance(value, int) and (op in "*/" or "." not in operand_text):
        result = int(result)  # a size or a count stays whole
    elif op in "+-":
        result = round(result, max(_decimals(repr(value)), _decimals(operand_text)))
    else:
        result = round(result, max(_decimals(repr(value)), 2))
    if (value > 0 and result <= 0) or (value < 0 and result >= 0) or (0 < value < 1 <= result):
        return None
    return result


def _decimals(number: str) -> int:
    return len(number.partition(".")[2]) if "e" not in number.lower() else 6


def _fill(text: str | None, params: dict[str, Any], run: RunConfig | None) -> tuple[str | None, bool]:
    """The text rendered, and whether it needed a run value it did not get."""
    if not text:
        return text, False
    formatter = _Formatter(run)
    try:
        return formatter.vformat(text, (), params), formatter.run_missing
    except (ValueError, IndexError, KeyError, AttributeError):
        return text, False


def fill(text: str | None, params: dict[str, Any], run: RunConfig | None = None) -> str | None:
    """Render `text` with `params`; text that is not a valid format string is returned as is."""
    return _fill(text, params, run)[0]


def render_fix(fix: Fix, params: dict[str, Any], run: RunConfig | None = None) -> RenderedFix:
    title = fill(fix.title, params, run) or ""
    text, text_missing = _fill(fix.text, params, run)
    before, before_missing = _fill(fix.before, params, run)
    after, after_missing = _fill(fix.after, params, run)
    if before_missing or after_missing:  # half an example is no example
        before = after = None
    command = None
    if run is not None and run.command is not None and (after or before) and (
            fix.server is None or fix.server == run.command.server.value):
        command = apply_change(run.command, before or "", after or "")
    return RenderedFix(title, "" if text_missing else text or "", before, after, command)


def render_fixes(fixes, params: dict[str, Any], run: RunConfig | None = None) -> tuple[RenderedFix, ...]:
    """The fixes that apply to the run's server (all of them when it is not known), rendered."""
    server = run.server.value if run is not None and run.server is not None else None
    return tuple(render_fix(fix, params, run) for fix in fixes
                 if fix.server is None or server is None or fix.server == server)
