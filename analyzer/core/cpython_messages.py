"""An error a log line reports by its message alone, its class left out (`logger.error(f"...: {exc}")`):
CPython words many of its errors in a form no other error has, so the message names the class. The
forms are CPython's own format strings (`Objects/object.c`'s "'%.100s' object has no attribute '%U'",
`Python/ceval.c`'s "%U() got an unexpected keyword argument '%S'", ...), each to the line's end; and the
status errors of the OpenAI-compatible clients (openai's, anthropic's: `Error code: 429 - {...}`), whose class
their status code names.

Read only where the line says it failed: its level is an error's, or words before the message say so
(`Failed to initialize remote connection: X.__init__() got an unexpected keyword argument 'config'`),
and no lower level is named; or where the message alone is a line and a stack below it tells where it was
raised (the assembler's lead: ComfyUI's report, a paste that begins with `str(exc)`). Pure: text in,
ErrorInfo out.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from analyzer.core import lazyregex
from analyzer.core.records import ErrorInfo

__all__ = ["KEYWORDS", "Classless", "classless"]

_NAME = r"'[^'\n]+'"
_CALLABLE = r"[\w.<>]+\(\)"
# (class, the message's form as CPython formats it)
_FORMS = (
    ("AttributeError", rf"{_NAME} object has no attribute {_NAME}"),
    ("AttributeError", rf"(?:module|type object) {_NAME} has no attribute {_NAME}"),
    ("TypeError", rf"{_CALLABLE} missing \d+ required (?:positional|keyword-only) arguments?: .+"),
    ("TypeError", rf"{_CALLABLE} got an unexpected keyword argument {_NAME}"),
    ("TypeError", rf"{_CALLABLE} got multiple values for argument {_NAME}"),
    ("TypeError", rf"{_CALLABLE} takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given"),
    ("TypeError", rf"unsupported operand type\(s\) for \S+: {_NAME} and {_NAME}"),
    ("TypeError", rf"{_NAME} object is not (?:subscriptable|callable|iterable)"),
    ("TypeError", rf"{_NAME} object does not support item assignment"),
    ("TypeError", r'can only concatenate str \(not "[^"\n]+"\) to str'),
    ("ZeroDivisionError", r"(?:integer |float )?(?:division(?: or modulo)?|modulo|floor division|divmod\(\)) by zero"),
    ("ModuleNotFoundError", rf"No module named {_NAME}"),
    ("ImportError", rf"cannot import name {_NAME} from {_NAME}(?: \(.*\))?"),
    ("ImportError", r"\S+\.so(?:\.[\w.]+)?: (?:undefined symbol: \S+|cannot open shared object file: No such file or directory)"),
    ("NameError", rf"name {_NAME} is not defined"),
    ("UnboundLocalError", rf"local variable {_NAME} referenced before assignment"),
    ("UnboundLocalError", rf"cannot access local variable {_NAME} where it is not associated with a value"),
    ("IndexError", r"(?:list|tuple|string) index out of range"),
    ("ValueError", r"invalid literal for int\(\) with base \d+: .+"),
    ("ValueError", r"not enough values to unpack \(expected \d+, got \d+\)"),
    ("ValueError", r"too many values to unpack \(expected \d+\)"),
    ("ValueError", r"could not convert string to float: .+"),
    ("RecursionError", r"maximum recursion depth exceeded.*"),
    ("RuntimeError", r"dictionary changed size during iteration"),
    # (a task group's error as asyncio's and anyio's word it, with the count CPython's group str() adds)
    ("ExceptionGroup", r"unhandled errors in a TaskGroup \(\d+ sub-exceptions?\)"),
    # the clients' `_make_status_error`: `f"Error code: {status}"`, ` - {body}` after it where the reply had one
    *((name, rf"Error code: {status}(?: - .+)?") for name, status in (
        ("BadRequestError", "400"), ("AuthenticationError", "401"), ("PermissionDeniedError", "403"),
        ("NotFoundError", "404"), ("ConflictError", "409"), ("UnprocessableEntityError", "422"),
        ("RateLimitError", "429"), ("InternalServerError", r"5\d\d"), ("APIStatusError", r"[1-4]\d\d"))),
)
# Where a message may begin: the line's start (after a level), or after words and a separator.
_FORM = lazyregex.compile(r"(?:^|(?<=: |: \[|\] | - | / ))(?:" + "|".join(f"(?P<f{k}>{form})" for k, (_, form) in enumerate(_FORMS))
                          + r")\s*$")
# Literal words every such line holds (for the fast path's triggers).
KEYWORDS = ("has no attribute '", " required positional argument", " required keyword-only argument",
            "got an unexpected keyword argument '", "got multiple values for argument '", " positional argument",
            "unsupported operand type(s) for ", "' object is not ", "' object does not support item assignment",
            "can only concatenate str (not ", "division by zero", "modulo by zero", "No module named '",
            "cannot import name '", ": undefined symbol: ", ": cannot open shared object file", "' is not defined",
            "referenced before assignment", "where it is not associated with a value", " index out of range",
            "invalid literal for int() with base ", " values to unpack (expected ", "could not convert string to float: ",
            "maximum recursion depth exceeded", "dictionary changed size during iteration", "Error code: ",
            "unhandled errors in a TaskGroup (")
_ERROR_LEVEL = lazyregex.compile(r"\b(?:ERROR|CRITICAL|FATAL)\b")
# (a level's word, or its letter as glog and Tornado write it: `I1204 10:00:05.456789 ...`, `[I 211213 04:25:33 ...`)
_QUIET_LEVEL = lazyregex.compile(r"\b(?:INFO|DEBUG|TRACE)\b|^\s*(?:[IW]\d{4} \d\d:\d\d|\[[DIW] \d)")
# (printed: other readers' line; looked for from the end, where a forward search read a long dotted name from each dot)
_CLASS_BEFORE = lazyregex.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Warning)[:\s]*$", regex.REVERSE)
_FAILURE_WORDS = lazyregex.compile(r"(?i:\berror|\bfail|\bcannot\b|\bcould not\b|\bunable to\b|\bexception\b|\bunexpected\b)")


@dataclass(frozen=True, slots=True)
class Classless:
    """An error a line names by CPython's message alone."""

    words: str  # what the line says before the message
    error: ErrorInfo
    alone: bool  # the message is the whole line, which says nothing of a failure: an error only as a stack's lead


def classless(text: str, prefix: str) -> Classless | None:
    """The error the line `text` (behind `prefix`) names by CPython's message alone: where the line says it failed
    (and the words before the message), or where the message is the whole line; else None."""
    if not any(keyword in text for keyword in KEYWORDS):
        return None
    found = _FORM.search(text)
    if found is not None:
        words = text[:found.start()]
        if not (_QUIET_LEVEL.search(prefix) or _QUIET_LEVEL.search(words) or _CLASS_BEFORE.search(words)) and (
                _ERROR_LEVEL.search(prefix) or _FAILURE_WORDS.search(words)):
            return Classless(words.rstrip(" :/-").strip(), _named(found), alone=False)
    alone = _FORM.match(text.strip())
    return None if alone is None else Classless("", _named(alone), alone=True)


def _named(found: regex.Match) -> ErrorInfo:
    return ErrorInfo(_FORMS[int(found.lastgroup[1:])][0], found.group().strip(), has_traceback=False)
