"""The pattern-pack schema: what one known error carries, and its validation.

Pure: takes already-parsed YAML data (mappings that remember their line) and returns Pattern
records or a list of problems, each naming file:line. Reading files lives in sources/packs.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pattern", "PatternSource", "Fix", "SchemaProblem", "build_pattern", "ROLES", "SEVERITIES"]

ROLES = ("root", "consequence")
SEVERITIES = ("critical", "error", "warning", "info")
_STYLES = ("auto", "fstring", "format", "percent", "plain")


@dataclass(frozen=True, slots=True)
class PatternSource:
    project: str | None = None
    path: str | None = None  # package-relative, e.g. sglang/srt/server_args.py
    line: int | None = None
    function: str | None = None  # qualified, e.g. ServerArgs._handle_a2a_moe
    version: str | None = None
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    text: str = ""
    before: str | None = None  # example command line before the fix
    after: str | None = None


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    exception: str
    template: str
    source: PatternSource = PatternSource()
    style: str = "auto"
    meaning: str = ""
    trigger: str = ""
    situations: str = ""
    fixes: tuple[Fix, ...] = ()
    related: tuple[str, ...] = ()
    role: str = "root"
    severity: str = "error"
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    origin: str = field(default="", compare=False)  # file:line the pattern was read from

    @property
    def curated(self) -> bool:
        """Hand-written knowledge on top of the bare signature."""
        return bool(self.meaning or self.fixes)

    @property
    def short_exception(self) -> str:
        return self.exception.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    where: str  # file:line
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


_FIELDS = {
    "id": str, "exception": str, "template": str, "style": str, "source": dict, "meaning": str,
    "trigger": str, "situations": str, "fixes": list, "related": list, "role": str, "severity": str,
    "tags": list, "examples": list, "template_locked": bool, "assert_expr": str,
}
_SOURCE_FIELDS = {"project": str, "path": str, "line": int, "function": str, "version": str, "commit": str}
_FIX_FIELDS = {"title": str, "text": str, "before": str, "after": str}


def build_pattern(data: Any, where: str, defaults: dict[str, Any]) -> tuple[Pattern | None, list[SchemaProblem]]:
    """Validate one `patterns:` entry; `defaults` are the pack-level project/version/commit."""
    problems: list[SchemaProblem] = []

    def problem(message: str) -> None:
        problems.append(SchemaProblem(where, message))

    if not isinstance(data, dict):
        problem(f"a pattern must be a mapping, got {type(data).__name__}")
        return None, problems
    _check_fields(data, _FIELDS, "pattern", problem)
    for required in ("id", "exception", "template"):
        if required not in data or data[required] is None:
            problem(f"missing required field '{required}'")
    if isinstance(data.get("id"), str) and not data["id"].strip():
        problem("'id' is empty")
    if data.get("role", "root") not in ROLES:
        problem(f"'role' must be one of {', '.join(ROLES)}, got {data.get('role')!r}")
    if data.get("severity", "error") not in SEVERITIES:
        problem(f"'severity' must be one of {', '.join(SEVERITIES)}, got {data.get('severity')!r}")
    if data.get("style", "auto") not in _STYLES:
        problem(f"'style' must be one of {', '.join(_STYLES)}, got {data.get('style')!r}")
    source_data = data.get("source") or {}
    if isinstance(source_data, dict):
        _check_fields(source_data, _SOURCE_FIELDS, "source", problem)
    fixes = []
    for index, fix in enumerate(data.get("fixes") or []):
        if not isinstance(fix, dict) or not isinstance(fix.get("title"), str):
            problem(f"fixes[{index}] needs at least a 'title' string")
            continue
        _check_fields(fix, _FIX_FIELDS, f"fixes[{index}]", problem)
        fixes.append(Fix(fix["title"], _str(fix.get("text")), _opt(fix.get("before")), _opt(fix.get("after"))))
    for name in ("related", "tags", "examples"):
        if any(not isinstance(item, str) for item in data.get(name) or []):
            problem(f"'{name}' must be a list of strings")
    if problems:
        return None, problems
    source = source_data if isinstance(source_data, dict) else {}
    pattern = Pattern(
        id=data["id"].strip(),
        exception=data["exception"].strip(),
        template=data["template"],
        source=PatternSource(
            project=_opt(source.get("project", defaults.get("project"))),
            path=_opt(source.get("path")),
            line=source.get("line"),
            function=_opt(source.get("function")),
            version=_opt(source.get("version", defaults.get("version"))),
            commit=_opt(source.get("commit", defaults.get("commit"))),
        ),
        style=data.get("style", "auto"),
        meaning=_str(data.get("meaning")).strip(),
        trigger=_str(data.get("trigger")).strip(),
        situations=_str(data.get("situations")).strip(),
        fixes=tuple(fixes),
        related=tuple(data.get("related") or ()),
        role=data.get("role", "root"),
        severity=data.get("severity", "error"),
        tags=tuple(data.get("tags") or ()),
        examples=tuple(data.get("examples") or ()),
        origin=where,
    )
    return pattern, []


def _check_fields(data: dict, spec: dict[str, type], what: str, problem) -> None:
    for key, value in data.items():
        if key not in spec:
            problem(f"unknown field '{key}' in {what} (allowed: {', '.join(spec)})")
        elif value is not None and not isinstance(value, spec[key]) and not (spec[key] is str and isinstance(value, (int, float))):
            problem(f"'{key}' in {what} must be {spec[key].__name__}, got {type(value).__name__}")


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)
