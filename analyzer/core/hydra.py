"""Hydra's short report of an error of its own (a `CompactHydraException`: a config it cannot compose, a target it
cannot instantiate): no traceback and no class, only the error's text, written to stderr before the line that
tells how to see the rest:

    Error executing job with overrides: ['model=resnet']
    Error locating target 'src.models.Net', set env var HYDRA_FULL_ERROR=1 to see chained exception.
    full_key: model

    Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.

The first line comes where the job ran (not for a config that failed before it); Hydra's other errors have their
traceback between the two lines instead, read as any. The class is told by the words the message opens with, as
Hydra's sources word them (hydra-core 1.3); where none is known, the base class all of them share. Pure: text in,
the error out.
"""

from __future__ import annotations

import regex

from analyzer.core import lazyregex
from analyzer.core.records import ErrorInfo

__all__ = ["CLOSING", "MAX_LINES", "OPENING", "complete", "opens", "parse", "trigger"]

OPENING = "Error executing job with overrides: "
CLOSING = "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."
MAX_LINES = 60  # a missing config's report lists the search path and a group's options
_BASE = "hydra.errors.CompactHydraException"
# (class, the words its messages open with); a default list's error names the config it was in first: `In 'x': ...`
_CLASSES = (
    ("hydra.errors.InstantiationException", ("Error locating target '", "Error in call to target '",
                                             "Error in collecting args and kwargs for '", "Error in creating partial(",
                                             "Expected a callable target, got '", "Error instantiating '")),
    ("hydra.errors.MissingConfigException", ("Cannot find primary config '", "Could not find '", "Could not load '")),
    ("hydra.errors.ConfigCompositionException", ("Could not override '", "Could not delete ", "Could not append to config.",
                                                 "Error merging ")),
)
_OPENINGS = tuple(words for _, openings in _CLASSES for words in openings)
_IN_CONFIG = lazyregex.compile(r"In '[^'\n]+': ")


def trigger() -> bytes:
    """A pattern of the words its messages open with, at a line's start (for the fast path's pass)."""
    return b"^(?:In '[^'\\n]+': )?(?:" + b"|".join(regex.escape(words).encode() for words in _OPENINGS) + b")"


def opens(text: str) -> bool:
    """Whether `text` begins Hydra's short report: the job's overrides, or a message in a form only Hydra words so."""
    return text.startswith(OPENING) or _said(text).startswith(_OPENINGS)


def complete(texts: list[str]) -> bool:
    """Whether the report ended with Hydra's closing line (else it was something else, and no error)."""
    return texts[-1].strip() == CLOSING


def parse(texts: list[str]) -> ErrorInfo:
    """The error the report tells: its text (blank lines in it too), its class told by its first words."""
    lines = texts[1:] if texts[0].startswith(OPENING) else list(texts)
    lines = lines[:-1]  # (the closing line, and the blank line Hydra writes before it)
    while lines and not lines[-1].strip():
        lines.pop()
    said = _said(lines[0]) if lines else ""
    cls = next((name for name, openings in _CLASSES if said.startswith(openings)), _BASE)
    return ErrorInfo(cls, "\n".join(lines), has_traceback=False)


def _said(text: str) -> str:
    """The message without the config it names first."""
    m = _IN_CONFIG.match(text)
    return text[m.end():] if m else text
