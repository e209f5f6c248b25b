"""The pattern-pack schema: what one known error carries, and its validation.

Pure: takes already-parsed YAML data (mappings that remember their line) and returns Pattern
records or a list of problems, each naming file:line. Reading files lives in sources/packs.py.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from analyzer.core.records import short_type
from analyzer.core.template import TemplateError, compile_template

__all__ = ["Pattern", "PatternSource", "PatternSite", "Fix", "SERVERS", "SchemaProblem", "build_pattern", "Role",
           "Severity", "MatchTarget", "Style", "ROLES", "SEVERITIES", "MATCH_KINDS"]

class Role(enum.StrEnum):
    ROOT = "root"  # a failure of its own
    CONSEQUENCE = "consequence"  # an echo of a failure elsewhere: NCCL timeouts, SIGQUIT notices, broken pipes


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class MatchTarget(enum.StrEnum):
    """What a template is matched against."""

    EXCEPTION = "exception"  # an exception's message
    LINE = "line"  # a log line: a notice (core/notices.py)


class Style(enum.StrEnum):
    """How the source formats the message (core/template)."""

    AUTO = "auto"
    FSTRING = "fstring"
    FORMAT = "format"
    PERCENT = "percent"
    PLAIN = "plain"  # constant text


ROLES = tuple(Role)
MATCH_KINDS = tuple(MatchTarget)
SEVERITIES = tuple(Severity)
_STYLES = tuple(Style)
SERVERS = ("sglang", "vllm")  # a fix for one server's flags is only offered on that server's logs


@dataclass(frozen=True, slots=True)
class PatternSource:
    project: str | None = None
    path: str | None = None  # package-relative, e.g. sglang/srt/server_args.py
    line: int | None = None
    function: str | None = None  # qualified, e.g. ServerArgs._handle_a2a_moe
    version: str | None = None
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class PatternSite:
    """Where an error happens, for errors a message cannot tell apart (see core/sites.py): the
    innermost frame's source line and function (a failed `params_dict[name]`), or functions
    anywhere in the stack (`load_model`), under a package path prefix."""

    code: str | None = None
    function: str | None = None
    path: str | None = None  # a package-relative prefix, e.g. sglang/srt/models/
    within: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    text: str = ""
    before: str | None = None  # example command line before the fix
    after: str | None = None
    server: str | None = None  # the server whose flags it uses; None: any


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    exception: str
    template: str
    source: PatternSource = PatternSource()
    style: Style = Style.AUTO
    meaning: str = ""
    trigger: str = ""
    situations: str = ""
    fixes: tuple[Fix, ...] = ()
    related: tuple[str, ...] = ()
    role: Role = Role.ROOT
    severity: Severity = Severity.ERROR
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    origin: str = field(default="", compare=False)  # file:line the pattern was read from
    match: MatchTarget = MatchTarget.EXCEPTION  # LINE: a notice found in a log line, not an exception
    assert_expr: str = ""  # a bare assert's condition: the traceback shows `assert <it>` as the raise site's line
    site: PatternSite | None = None

    @property
    def curated(self) -> bool:
        """Hand-written knowledge on top of the bare signature."""
        return bool(self.meaning or self.fixes)

    @property
    def short_exception(self) -> str:
        return short_type(self.exception)


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    where: str  # file:line
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


_FIELDS = {
    "id": str, "exception": str, "template": str, "style": str, "source": dict, "meaning": str,
    "trigger": str, "situations": str, "fixes": list, "related": list, "role": str, "severity": str,
    "tags": list, "examples": list, "template_locked": bool, "assert_expr": str, "match": str,
    "site": dict,
}
_SOURCE_FIELDS = {"project": str, "path": str, "line": int, "function": str, "version": str, "commit": str}
_FIX_FIELDS = {"title": str, "text": str, "before": str, "after": str, "server": str}
_SITE_FIELDS = {"code": str, "function": str, "path": str, "within": list}


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
    if data.get("match", "exception") not in MATCH_KINDS:
        problem(f"'match' must be one of {', '.join(MATCH_KINDS)}, got {data.get('match')!r}")
    if data.get("style", "auto") not in _STYLES:
        problem(f"'style' must be one of {', '.join(_STYLES)}, got {data.get('style')!r}")
    elif data.get("match") == "line" and isinstance(data.get("template"), str) and not _starts_literal(data):
        problem("a 'match: line' template must begin with literal text: lines are only looked at "
                "where that text appears")
    source_data = data.get("source") or {}
    if isinstance(source_data, dict):
        _check_fields(source_data, _SOURCE_FIELDS, "source", problem)
    fixes = []
    fix_list = data.get("fixes")  # any other type is reported by _check_fields
    for index, fix in enumerate(fix_list if isinstance(fix_list, list) else []):
        if not isinstance(fix, dict) or not isinstance(fix.get("title"), str):
            problem(f"fixes[{index}] needs at least a 'title' string")
            continue
        _check_fields(fix, _FIX_FIELDS, f"fixes[{index}]", problem)
        if fix.get("server") is not None and fix["server"] not in SERVERS:
            problem(f"fixes[{index}]: 'server' must be one of {', '.join(SERVERS)}, got {fix['server']!r}")
        if "{run." in fix["title"]:
            problem(f"fixes[{index}]: the title may not use run values (a run without them would lose it)")
        fixes.append(Fix(fix["title"], _str(fix.get("text")), _opt(fix.get("before")), _opt(fix.get("after")),
                         _opt(fix.get("server"))))
    site_data = data.get("site")
    if isinstance(site_data, dict):
        _check_fields(site_data, _SITE_FIELDS, "site", problem)
        within = site_data.get("within")
        if within is not None and (not isinstance(within, list) or not all(isinstance(f, str) for f in within)):
            problem("'within' in site must be a list of function names")
        if not (isinstance(site_data.get("code"), str) and site_data["code"].strip()) and not within:
            problem("'site' needs the frame's source line as 'code', or function names as 'within'")
        elif isinstance(site_data.get("code"), str) and "{" in site_data["code"]:
            try:
                compile_template(site_data["code"], "format")
            except TemplateError as error:
                problem(f"'code' in site: {error} (a brace of the source line is written {{{{ or }}}})")
    for name in ("related", "tags", "examples"):
        if isinstance(data.get(name), list) and any(not isinstance(item, str) for item in data[name]):
            problem(f"'{name}' must be a list of strings")
    if problems:
        return None, problems
    source = source_data if isinstance(source_data, dict) else {}
    pattern = Pattern(
        id=str(data["id"]).strip(),  # a number passes _check_fields: `id: 404` is the text "404"
        exception=str(data["exception"]).strip(),
        template=str(data["template"]),
        source=PatternSource(
            project=_opt(source.get("project", defaults.get("project"))),
            path=_opt(source.get("path")),
            line=source.get("line"),
            function=_opt(source.get("function")),
            version=_opt(source.get("version", defaults.get("version"))),
            commit=_opt(source.get("commit", defaults.get("commit"))),
        ),
        style=Style(data.get("style", "auto")),
        meaning=_str(data.get("meaning")).strip(),
        trigger=_str(data.get("trigger")).strip(),
        situations=_str(data.get("situations")).strip(),
        fixes=tuple(fixes),
        related=tuple(data.get("related") or ()),
        role=Role(data.get("role", "root")),
        severity=Severity(data.get("severity", "error")),
        tags=tuple(data.get("tags") or ()),
        examples=tuple(data.get("examples") or ()),
        origin=where,
        match=MatchTarget(data.get("match", "exception")),
        assert_expr=_str(data.get("assert_expr")).strip(),
        site=PatternSite(" ".join(site_data["code"].split()) if site_data.get("code") else None,
                         _opt(site_data.get("function")), _opt(site_data.get("path")),
                         tuple(site_data.get("within") or ())) if isinstance(site_data, dict) else None,
    )
    return pattern, []


def _check_fields(data: dict, spec: Mapping[str, type], what: str, problem) -> None:
    for key, value in data.items():
        if key not in spec:
            problem(f"unknown field '{key}' in {what} (allowed: {', '.join(spec)})")
        elif value is not None and not isinstance(value, spec[key]) and not (spec[key] is str and isinstance(value, (int, float))):
            problem(f"'{key}' in {what} must be {spec[key].__name__}, got {type(value).__name__}")


def _starts_literal(data: dict) -> bool:
    style = data.get("style", "auto")
    try:
        return bool(compile_template(data["template"], "auto" if style == "plain" else style).prefix.strip())
    except TemplateError:
        return True  # reported by `patterns check` as a template that does not compile


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)
