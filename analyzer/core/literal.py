"""Python literals read from log text (`'x'`, `(1, 2)`, `{'a': None}`), safe from several threads at once.

CPython 3.11 keeps the depth of the tree it converts for `ast` in the interpreter, not the thread: a switch to another
thread that converts one too (a finalizer run by the garbage collector gives it the chance) fails one of them with
`SystemError: AST constructor recursion depth mismatch`. A report on Dask's threads lost a whole file to it, so every
literal is read here, one at a time.
"""

from __future__ import annotations

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()
_NO_LITERAL = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def literal(text: str) -> object:
    """The value `text` writes as a Python literal; ValueError where it is none (or too deep to read)."""
    with _ONE_AT_A_TIME:
        try:
            return _read(text)
        except SystemError:  # the same mismatch caused by code outside this lock (a library's own `ast.parse`)
            try:
                return _read(text)
            except SystemError as error:
                raise ValueError(f"no literal read: {text[:80]!r}") from error


def _read(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except _NO_LITERAL as error:
        raise ValueError(f"no literal: {text[:80]!r}") from error
