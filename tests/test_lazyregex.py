"""Module-level patterns are compiled on first use (`analyzer/core/lazyregex.py`): importing compiles none, every
one of them compiles, and a deferred pattern behaves as the compiled one."""

from __future__ import annotations

import copy
import gc
import importlib
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import regex

import analyzer
from analyzer.core import lazyregex

ROOT = Path(__file__).resolve().parent.parent
_COUNT_COMPILES = """
import regex
compiled = []
real = regex.compile
regex.compile = lambda *args, **kwargs: compiled.append(args[0]) or real(*args, **kwargs)
import analyzer.cli, analyzer.commands.scan, analyzer.engine, analyzer.commands.report, analyzer.report.fleet
print(len(compiled))
for source in compiled[:5]:
    print(repr(source)[:200])
"""


def _deferred() -> list[object]:
    for module in pkgutil.walk_packages(analyzer.__path__, "analyzer."):
        if not module.name.endswith("__main__"):  # (it runs the command line)
            importlib.import_module(module.name)
    return [obj for obj in gc.get_objects() if type(obj) is lazyregex._Deferred]


def test_importing_the_scanner_and_the_report_compiles_no_pattern():
    result = subprocess.run([sys.executable, "-c", _COUNT_COMPILES], cwd=ROOT, capture_output=True, text=True,
                            check=True)
    assert result.stdout.splitlines()[0] == "0", result.stdout


def test_every_deferred_pattern_compiles():
    deferred = _deferred()
    assert len(deferred) > 300  # (the core's; a test of its own patterns would not see a typo until a line used it)
    failures = []
    for pattern in deferred:
        try:
            _ = pattern.groups  # type: ignore[attr-defined]  # (asking compiles it)
        except regex.error as error:
            failures.append(f"{pattern!r}: {error}")
    assert not failures


def test_a_deferred_pattern_is_compiled_once_on_first_use(monkeypatch):
    compiled = []
    real = regex.compile
    monkeypatch.setattr(regex, "compile", lambda *args: compiled.append(args) or real(*args))
    pattern = lazyregex.compile(r"(?P<type>\w+Error): (?P<message>.*)", regex.I)
    assert pattern.pattern == r"(?P<type>\w+Error): (?P<message>.*)" and not compiled  # (its source needs no compiling)
    assert pattern.match("valueerror: bad")["message"] == "bad"
    assert pattern.search("x KeyError: 'k'").group("type") == "KeyError"
    assert pattern.sub(r"\g<type>", "OSError: gone") == "OSError"
    assert pattern.groupindex == {"type": 1, "message": 2} and pattern.flags & regex.I
    assert [m["type"] for m in pattern.finditer("AError: a\nBError: b")] == ["AError", "BError"]
    assert pattern.subf("{type}", "OSError: gone") == pattern.subf("{type}", "OSError: gone") == "OSError"
    assert compiled == [(r"(?P<type>\w+Error): (?P<message>.*)", regex.I)]  # (whatever was asked for)


def test_a_deferred_pattern_survives_pickle_and_copy():
    pattern = lazyregex.compile(rb"\[rank(\d+)\]:")
    for twin in (pickle.loads(pickle.dumps(pattern)), copy.deepcopy(pattern), copy.copy(pattern)):
        assert twin.match(b"[rank3]: x").group(1) == b"3"
    pattern.match(b"")  # (and once compiled)
    assert pickle.loads(pickle.dumps(pattern)).match(b"[rank7]:").group(1) == b"7"
