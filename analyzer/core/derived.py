"""A page derived from the source for one extracted signature (`analyzer patterns derive`).

Read off the code with no model and no network: the lines around the raise, a link pinned to the
release, the condition under which it fires (in words), sibling raises that test the same things,
a comment or docstring as a hint, and for launch arguments the flags, allowed values, a before and
after command line and the environment variables involved. `as_dict` gives the shape every front
end shares (`explain --format json` under `derived`, the knowledge-base site): empty parts left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DerivedPage", "Snippet", "RelatedError", "FlagInfo", "CommandChange"]


@dataclass(frozen=True, slots=True)
class Snippet:
    start: int  # the first line's number
    raise_line: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RelatedError:
    id: str
    message: str
    line: int
    why: str  # `same function, tests `tp_size``


@dataclass(frozen=True, slots=True)
class FlagInfo:
    flag: str  # `--moe-a2a-backend`
    attribute: str  # `moe_a2a_backend`
    help: str = ""
    choices: tuple[Any, ...] = ()
    default: Any = None


@dataclass(frozen=True, slots=True)
class CommandChange:
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class DerivedPage:
    snippet: Snippet | None = None
    link: str = ""
    condition: str = ""  # `fires when `--tp-size` is above 8 and `--enable-prefill-cp` is set`
    related: tuple[RelatedError, ...] = ()
    flags: tuple[FlagInfo, ...] = ()
    allowed_values: tuple[Any, ...] = ()
    before_after: tuple[CommandChange, ...] = ()
    env_vars: tuple[str, ...] = ()
    hint: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DerivedPage:
        snippet = data.get("snippet")
        return cls(
            snippet=Snippet(snippet["start"], snippet["raise_line"], tuple(snippet.get("lines", ())))
            if snippet else None,
            link=data.get("link", ""), condition=data.get("condition", ""),
            related=tuple(RelatedError(r["id"], r["message"], r["line"], r.get("why", ""))
                          for r in data.get("related", ())),
            flags=tuple(FlagInfo(f["flag"], f["attribute"], f.get("help", ""), tuple(f.get("choices", ())),
                                 f.get("default")) for f in data.get("flags", ())),
            allowed_values=tuple(data.get("allowed_values", ())),
            before_after=tuple(CommandChange(c["before"], c["after"]) for c in data.get("before_after", ())),
            env_vars=tuple(data.get("env_vars", ())), hint=data.get("hint", ""))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.snippet:
            out["snippet"] = {"start": self.snippet.start, "raise_line": self.snippet.raise_line,
                              "lines": list(self.snippet.lines)}
        for key in ("link", "condition"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.related:
            out["related"] = [{"id": r.id, "message": r.message, "line": r.line, "why": r.why} for r in self.related]
        if self.flags:
            out["flags"] = [{k: v for k, v in (("flag", f.flag), ("attribute", f.attribute), ("help", f.help),
                                               ("choices", list(f.choices)), ("default", f.default))
                             if v not in ("", [], None)} for f in self.flags]
        if self.allowed_values:
            out["allowed_values"] = list(self.allowed_values)
        if self.before_after:
            out["before_after"] = [{"before": c.before, "after": c.after} for c in self.before_after]
        if self.env_vars:
            out["env_vars"] = list(self.env_vars)
        if self.hint:
            out["hint"] = self.hint
        return out

    @property
    def fires_when(self) -> str:
        """The condition as a sentence: `Fires when ...`."""
        return self.condition[:1].upper() + self.condition[1:] if self.condition else ""
