"""Python literals read from log text, from several threads at once (analyzer.core.literal and its callers)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from analyzer.core.grammar import repr_said
from analyzer.core.literal import literal
from analyzer.core.runconfig import typed
from analyzer.core.template import parse_value


def test_a_literal_is_read_as_its_value() -> None:
    assert literal("('x', [1, 2.5], {'a': None})") == ("x", [1, 2.5], {"a": None})


@pytest.mark.parametrize("text", ["call(1)", "'cut", "[" * 100_000, "f'{x}'", "a + "])
def test_what_is_no_literal_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="no literal"):
        literal(text)


class _Finalized:
    """Garbage whose finalizer runs Python code: the collector may run it in the middle of `ast`'s conversion,
    and the interpreter may switch threads there."""

    def __del__(self) -> None:
        sum(range(20))


@pytest.fixture
def threads_switch_often() -> Iterator[None]:
    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(20, 1, 1)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*threshold)


NESTED = "[" * 12 + "(1, {2: 3})" + "]" * 12
VALUE: object = (1, {2: 3})
for _ in range(12):
    VALUE = [VALUE]


@pytest.mark.usefixtures("threads_switch_often")
@pytest.mark.parametrize(("read", "text", "value"), [
    (literal, f"({NESTED}, 2)", (VALUE, 2)),
    (parse_value, f"({NESTED}, 'x')", (VALUE, "x")),
    (repr_said, f"KeyError({NESTED})", ("KeyError", str(VALUE))),
    (typed, NESTED, VALUE),
], ids=["literal", "parse_value", "repr_said", "runconfig.typed"])
def test_literals_read_on_two_threads_at_once_all_come_out(read: Callable[[str], object], text: str,
                                                            value: object) -> None:
    # CPython 3.11 failed one such read in a few milliseconds (`SystemError: AST constructor recursion depth
    # mismatch`): a report on Dask's threads lost a whole file to it.
    errors: list[BaseException] = []
    wrong: list[object] = []

    def read_many() -> None:
        for _ in range(1000):
            _Finalized().cycle = None  # type: ignore[attr-defined]
            garbage = _Finalized()
            garbage.cycle = garbage  # type: ignore[attr-defined]
            del garbage
            try:
                if (got := read(text)) != value:
                    wrong.append(got)
            except Exception as error:  # any failure is the finding
                errors.append(error)
                return

    threads = [threading.Thread(target=read_many) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and wrong == []
