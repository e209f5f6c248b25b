"""An error as AWS Lambda's Python runtime returns it to the caller (the console's test, `aws lambda invoke`,
`serverless invoke`, Step Functions' `cause`), rewritten into the standard format so that `blocks.parse_chain`
reads it like any other.

    {
      "errorMessage": "'Records'",
      "errorType": "KeyError",
      "stackTrace": [
        "  File \\"/var/task/app.py\\", line 94, in lambda_handler\\n    record = event['Records'][0]\\n"
      ]
    }

A JSON object, on one line or pretty-printed over many, its keys in any order. Each item of `stackTrace` is a
frame as Python formats it (runtimes since Python 3.8), or `[file, line, function, source]` (before); the
runtime's own errors (`Runtime.ImportModuleError`) have none. Users paste it as it came and mark it up: in a
quote, with backticks, blank lines between its keys, a comment after a line. Only its strings, numbers and
brackets are read, so what they add around them is passed over.
"""

from __future__ import annotations

import json

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["complete", "depth_after", "framed", "goes_on", "opens", "placed", "to_standard"]

_MAX_LINES = 5000
# One of the object's own keys: the block begins there (the `{` above it holds nothing of the error)
_KEY = lazyregex.compile(r'^[\s>`{\[]*(?P<key>"(?:errorMessage|errorType|stackTrace)"\s*:)')
_TOKEN = lazyregex.compile(r'"(?:[^"\\\n]|\\.)*+"|-?\d+|[\[\]{}:,]')
# Lines of the object: a string, a bracket, a number, a comma, after what a quote or a code span puts in front
_OBJECT_LINE = lazyregex.compile(r'^[\s>`]*["\[\]{},\d-]')
# A syntax error's place as the runtime gives it: `File "/var/task/x.py" Line 3`
_SYNTAX_PLACE = lazyregex.compile(r'^(?P<indent>\s*)File "(?P<path>[^"]+)" Line (?P<line>\d+)\s*$')
_Value = str | int | list["_Value"] | dict[str, "_Value"]


def opens(text: str) -> bool:
    """Whether `text` holds a key of the error's object (where a block that reads the object begins)."""
    return '"' in text and _KEY.match(text) is not None


def goes_on(texts: list[str], depth: int, text: str) -> bool:
    """Whether `text` is the next line of the object `texts` began, whose lines end `depth` deep in brackets
    (see `depth_after`): one of its lines, or a blank among them (not two), until the bracket that closes it."""
    if len(texts) >= _MAX_LINES or depth < 0:
        return False
    if not text.strip():
        return bool(texts[-1].strip())
    return _OBJECT_LINE.match(text) is not None


def depth_after(depth: int, text: str, first: bool = False) -> int:
    """How deep in brackets the object is after the line `text`, `depth` deep before it (the object's own depth
    being 0; below 0 it is closed). The first line counts from the object's first key on. (Kept line by line:
    counted again over all its lines for each line, a long stack cost quadratic time.)"""
    for token in _line_tokens(text, first):
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
            if depth < 0:
                return depth
    return depth


def complete(texts: list[str]) -> bool:
    """Whether the object names the error's class (else it was another object with such a key)."""
    kind = _fields(texts).get("errorType")
    return isinstance(kind, str) and bool(kind.strip())


def framed(texts: list[str]) -> bool:
    """Whether the object lists frames of the error's stack."""
    items = _fields(texts).get("stackTrace")
    return isinstance(items, list) and any(_frame_lines(item) for item in items)


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's layout: header and frames (where there are any), then the exception line."""
    fields = _fields(texts)
    kind, message = fields.get("errorType"), fields.get("errorMessage")
    exception_line = f"{kind}: {message}" if isinstance(message, str) and message else str(kind or "")
    items = fields.get("stackTrace")
    frames = [line for item in items for line in _frame_lines(item)] if isinstance(items, list) else []
    said = exception_line.splitlines() or [exception_line]
    return [g.HEADER_TEXT, *frames, *said] if frames else said


def _frame_lines(item: _Value) -> list[str]:
    """One item of `stackTrace` as the lines Python prints for its frame."""
    if isinstance(item, str):
        return [placed(line) for line in item.splitlines() if line.strip()]
    if isinstance(item, list) and len(item) >= 3:
        path, lineno, function, *source = item
        frame = f'  File "{path}", line {lineno}, in {function}'
        return [frame, f"    {source[0]}"] if source and isinstance(source[0], str) and source[0] else [frame]
    return []


def placed(line: str) -> str:
    """A syntax error's place made a frame's line (its module's top level raised it), in the returned object
    and in the runtime's log (CloudWatch's `[ERROR] Runtime.UserCodeSyntaxError: ...` and its traceback)."""
    m = _SYNTAX_PLACE.match(line)
    return f'{m["indent"]}File "{m["path"]}", line {m["line"]}, in <module>' if m else line


def _line_tokens(text: str, first: bool) -> list[str]:
    """A line's tokens (the object's first line's from its first key on)."""
    start = _KEY.match(text) if first else None
    return [m[0] for m in _TOKEN.finditer(text, start.start("key") if start else 0)]


def _tokens(texts: list[str]) -> list[str]:
    """The object's tokens, from its first key on."""
    return [token for k, text in enumerate(texts) for token in _line_tokens(text, k == 0)]


def _fields(texts: list[str]) -> dict[str, _Value]:
    """The object's keys and values, read from its first key to its closing bracket."""
    fields, _ = _members(_tokens(texts), 0)
    return fields


def _members(tokens: list[str], at: int) -> tuple[dict[str, _Value], int]:
    """An object's members from `at` to its closing `}` (or the end): the members and where it ended."""
    members: dict[str, _Value] = {}
    while at < len(tokens) and tokens[at] != "}":
        if tokens[at][:1] == '"' and at + 1 < len(tokens) and tokens[at + 1] == ":":
            key = _string(tokens[at])
            members[key], at = _value(tokens, at + 2)
        else:
            at += 1  # (a comma; anything a user added)
    return members, at + 1


def _items(tokens: list[str], at: int) -> tuple[list[_Value], int]:
    """An array's items from `at` to its closing `]` (or the end): the items and where it ended."""
    items: list[_Value] = []
    while at < len(tokens) and tokens[at] != "]":
        if tokens[at] in (",", ":", "}"):
            at += 1
            continue
        item, at = _value(tokens, at)
        items.append(item)
    return items, at + 1


def _value(tokens: list[str], at: int) -> tuple[_Value, int]:
    """The value that begins at `at`, and the token after it."""
    if at >= len(tokens):
        return "", at
    token = tokens[at]
    if token == "{":
        return _members(tokens, at + 1)
    if token == "[":
        return _items(tokens, at + 1)
    if token[:1] == '"':
        return _string(token), at + 1
    return (int(token), at + 1) if token.lstrip("-").isdigit() else ("", at + 1)


def _string(token: str) -> str:
    """A JSON string's text (as written, less its quotes, where its escapes are not JSON's)."""
    try:
        text = json.loads(token)
    except ValueError:
        return token[1:-1]
    return text if isinstance(text, str) else token[1:-1]
