"""Every regular expression of the package against long hostile lines: the ones that backtrack past linear time.

A log line can be 100 MB (the reader cuts it at its limit, by default far longer than any real line), and a
pattern that backtracks quadratically over it stalls the scan. This tries each module-level pattern of
`analyzer` the way its module uses it (`match`, `fullmatch`, or a search: `search`, `finditer`, `findall`,
`sub`, `split`, as its module's source calls it) on lines of `--size` characters built to make patterns
backtrack (runs of names and dots, of exception names, of colons, of blanks, of digits, ...), each under a
time limit, and lists those that took longer than `--limit` seconds.

    python benchmarks/hostile_regex.py                 # 20,000-character lines, report what is slow
    python benchmarks/hostile_regex.py --check         # ... and exit 1 when any is

A pattern listed is not always a stall in practice (its callers may bound the text first): look at where
it is used. Nothing here is a test: timings stay out of the test suite.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import signal
import sys
import time
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_PACKAGES = ("analyzer", "analyzer.core", "analyzer.core.template", "analyzer.extract", "analyzer.report",
             "analyzer.sources", "analyzer.sinks")
_SEARCHING = ("search", "finditer", "findall", "sub", "subn", "split")


class _TimedOut(Exception):
    pass


def hostile_lines(size: int) -> dict[str, str]:
    """Lines that make patterns backtrack: long runs of what names, paths, prefixes and messages are made of."""
    pieces = {"names and dots": "a.", "words": "a ", "capitals": "A", "open brackets": "(", "colons": "a:",
              "exception names": "aError.", "capitalised dots": "A.", "keys": "a: ", "quotes": '"a', "brackets": "[a",
              "tabs": "\t", "digits": "1", "frame lines": '  File "', "bars": " |", "dashes": "-",
              "exception lines": "AError: "}
    lines = {name: piece * (size // len(piece)) for name, piece in pieces.items()}
    lines["blanks, then a word"] = " " * size + "x"
    lines["exception names, then a word"] = "aError." * (size // 7) + " Error"
    return lines


def _patterns() -> list[tuple[str, object, str]]:
    """(module.name, pattern, how the package calls it) of every module-level pattern: a search where any call of its
    name is one (or none is seen), else `match`, or `fullmatch` where that is all."""
    modules = []
    for package in _PACKAGES:
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            if info.name != "__main__":  # (importing it runs the command line)
                modules.append(importlib.import_module(f"{package}.{info.name}"))
    source = "\n".join(Path(module.__file__).read_text(encoding="utf-8") for module in modules if module.__file__)
    found: list[tuple[str, object, str]] = []
    seen: set[int] = set()
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, (regex.Pattern, re.Pattern)) and id(value) not in seen:
                seen.add(id(value))
                calls = set(re.findall(rf"\b{re.escape(name)}\.(\w+)\(", source))
                how = "search" if calls & set(_SEARCHING) or not calls else "fullmatch" if calls == {"fullmatch"} else "match"
                found.append((f"{module.__name__}.{name}", value, how))
    return found


def _timed(call, limit: float) -> float:
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        call()
    except _TimedOut:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time every pattern of the package on long hostile lines.")
    parser.add_argument("--size", type=int, default=20_000, help="characters per hostile line")
    parser.add_argument("--limit", type=float, default=0.05, help="seconds a pattern may take on one line")
    parser.add_argument("--stop", type=float, default=2.0, help="seconds after which a call is given up")
    parser.add_argument("--check", action="store_true", help="exit 1 when any pattern is slower than --limit")
    args = parser.parse_args(argv)

    def give_up(*_: object) -> None:
        raise _TimedOut

    signal.signal(signal.SIGALRM, give_up)
    lines = hostile_lines(args.size)
    patterns = _patterns()
    slow: list[tuple[float, str, str, str]] = []
    for name, pattern, how in patterns:
        call = getattr(pattern, how)
        for kind, line in lines.items():
            text = line.encode() if isinstance(pattern.pattern, bytes) else line  # type: ignore[attr-defined]
            seconds = _timed(lambda: call(text), args.stop)  # noqa: B023 - called at once
            if seconds > args.limit:
                slow.append((seconds, name, how, kind))
    for seconds, name, how, kind in sorted(slow, reverse=True):
        print(f"{seconds:7.3f} s  {name}.{how}  on {kind}")
    print(f"{len(patterns)} patterns, {len(lines)} lines of {args.size:,} characters: {len(slow)} slower than {args.limit} s")
    return 1 if args.check and slow else 0


if __name__ == "__main__":
    sys.exit(main())
