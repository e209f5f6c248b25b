"""A drift corpus: SGLang's own errors as a release prints them, and as the next release might.

From the shipped extracted pack, a seeded sample of signatures, each raised for real through SGLang
launcher frames at its own file, line and function, in four forms:

- `released`: the message as the pack's example fills it, at its line;
- `moved`: the same, the raise 3 to 12 lines up or down (code was added above it);
- `extended`: a hint sentence appended to the message;
- `reworded`: one filler word changed (`must` -> `should`, `got` -> `received`, ...);
- `extended+moved`, `reworded+moved`: both at once, what a release that touched the function does.

A bare assert prints no message: its forms are `released` and `moved`, the frame's source line
showing `assert <expression>`. The truth of every case is the signature it was made from.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import regex

from analyzer.core.schema import Pattern
from fixtures.generate import Frame, foreign_exception, formatted

FORMS = ("released", "moved", "extended", "reworded", "extended+moved", "reworded+moved")
LAUNCH = [
    Frame("<frozen runpy>", 198, "_run_module_as_main"),
    Frame("sglang/launch_server.py", 81, "<module>", "    server_args = prepare_server_args(sys.argv[1:])"),
]
HINT = " Please check the documentation of this option and try again."
# Filler a release rewords; a content word (a name, a flag, a noun) changed would be a different error.
_REWORDINGS = [(r"\bmust\b", "should"), (r"\bgot\b", "received"), (r"\bis not supported\b", "isn't supported"),
               (r"\bcannot\b", "can not"), (r"\bPlease\b", "Kindly"), (r"\bonly\b", "just"),
               (r"\bexpected\b", "expecting"), (r"\bcurrently\b", "right now"), (r"\bnot\b", "never")]


@dataclass(frozen=True)
class DriftCase:
    pattern_id: str
    form: str
    text: str


def usable(pattern: Pattern) -> bool:
    if pattern.source.project != "sglang" or not pattern.source.path or not pattern.source.line:
        return False
    if pattern.exception.startswith(("log.", "Argument")) or pattern.exception == "SystemExit":
        return False
    if pattern.assert_expr and not pattern.template:
        return "\n" not in pattern.assert_expr
    return bool(pattern.examples and pattern.template)


def reword(message: str) -> str | None:
    for pattern, replacement in _REWORDINGS:
        changed, count = regex.subn(pattern, replacement, message, count=1)
        if count:
            return changed
    return None


def cases(patterns: list[Pattern], sample: int, seed: int = 17) -> list[DriftCase]:
    rng = random.Random(seed)
    pool = sorted((p for p in patterns if usable(p)), key=lambda p: p.id)
    out = []
    for pattern in rng.sample(pool, min(sample, len(pool))):
        shift = rng.choice((-1, 1)) * rng.randint(3, 12)
        message = pattern.examples[0] if pattern.examples else ""
        forms = {"released": (message, 0), "moved": (message, shift)}
        if message:
            forms["extended"] = (message.rstrip() + HINT, 0)
            forms["extended+moved"] = (message.rstrip() + HINT, shift)
            reworded = reword(message)
            if reworded:
                forms["reworded"] = (reworded, 0)
                forms["reworded+moved"] = (reworded, shift)
        for form, (text, moved_by) in forms.items():
            out.append(DriftCase(pattern.id, form, _raise(pattern, text, moved_by)))
    return out


def _raise(pattern: Pattern, message: str, moved_by: int) -> str:
    src = pattern.source
    function = (src.function or "run").rsplit(".", 1)[-1]
    function = function if function.isidentifier() or function == "<module>" else "run"
    line = max(2, (src.line or 2) + moved_by)
    if pattern.assert_expr and not pattern.template:
        code = f"        assert {pattern.assert_expr}"
    else:
        code = f"        raise {pattern.short_exception}("
    name = pattern.short_exception
    builtin = __builtins__.get(name) if isinstance(__builtins__, dict) else getattr(__builtins__, name, None)
    cls = builtin if isinstance(builtin, type) and issubclass(builtin, BaseException) else \
        foreign_exception("sglang.srt.errors", name, Exception)
    frames = [*LAUNCH, Frame(src.path, line, function, code)]
    return formatted(frames, cls(message) if message else cls())
