"""Real logs as a collector would have stored them: does the diagnosis survive the wrapping?

    python benchmarks/rewrapped.py ../shared/reallogs/github               # every wrapper, a table
    python benchmarks/rewrapped.py DIR... --only compose --only cri --verbose  # some wrappers, each loss

Each case of a folder's `MANIFEST.tsv` (see reallogs.py) that passes as pasted is wrapped, line by line, the way a
transport or collector stores a program's output (docker compose, `kubectl logs --timestamps`, the CRI and json-file
formats, journald, Buildkite's and GitHub Actions' timestamps, Slurm's and Open MPI's labels, pdsh, `cat -n`, Heroku,
Windows line breaks, a markdown quote, a logger or a JSON record per line), with the faithful formatters of
tests/logformats.py, and scored again, leniently and strictly. A wrapper only adds what every line of the log gets, so
a case it loses is a form the tool cannot yet read behind that prefix: the cases lost are the measure. Four more do
what a paste does to a log (every line's indentation lost, a blank line after each, lines cut at 80 or 160 columns).
The logs are read in place: nothing is copied.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from analyzer.engine import Engine, Options  # noqa: E402
from analyzer.sinks.serialize import incident_dict  # noqa: E402
from benchmarks.reallogs import Case, read_manifest, score  # noqa: E402
from tests import logformats  # noqa: E402

Wrapper = Callable[[list[str], list[datetime]], list[str]]  # (the log's lines, the collector's clock at each) -> lines


def _each(format_one: Callable[[list[str], datetime], list[str]]) -> Wrapper:
    """A formatter that stamps lines with a clock, given each line's own time."""
    return lambda lines, clock: [out for line, when in zip(lines, clock) for out in format_one([line], when)]


WRAPPERS: dict[str, Wrapper] = {
    "compose": lambda lines, clock: logformats.compose(lines, "sglang-router-1"),
    "kubectl-timestamps": _each(logformats.kubectl_timestamps),
    "cri": _each(lambda lines, when: logformats.cri(lines, start=when)),
    "docker-json": _each(lambda lines, when: logformats.docker_json_file([("stderr", _valid(line)) for line in lines], when)),
    "journalctl": _each(lambda lines, when: logformats.journal(lines, start=when)),
    "ci-timestamps": _each(logformats.ci_timestamps),
    "github-actions": _each(logformats.github_actions),
    "srun-label": lambda lines, clock: logformats.srun_label(lines, task=3, tasks=16),
    "mpirun-tag": lambda lines, clock: logformats.mpi_tagged(lines),
    "pdsh": lambda lines, clock: logformats.pdsh(lines),
    "cat-n": lambda lines, clock: logformats.numbered(lines),
    "heroku": _each(lambda lines, when: logformats.heroku(lines, start=when)),
    "logging-each-line": _each(lambda lines, when: logformats.logging_each_line(lines, start=when)),
    "json-each-line": _each(lambda lines, when: logformats.json_each_line(lines, start=when)),
    "markdown-quote": lambda lines, clock: [f"> {line}" for line in lines],
    "crlf": lambda lines, clock: [f"{line}\r" for line in lines],
    # what a paste does to them (not a collector's, but the same measure)
    "unindented": lambda lines, clock: [line.lstrip(" \t") for line in lines],
    "double-spaced": lambda lines, clock: [out for line in lines for out in (line, "")],
    "wrapped-80": lambda lines, clock: _cut(lines, 80),
    "wrapped-160": lambda lines, clock: _cut(lines, 160),
}
def _cut(lines: list[str], width: int) -> list[str]:
    """The lines as a terminal `width` columns wide shows them, copied: each cut every `width` characters."""
    return [line[at:at + width] for line in lines for at in range(0, max(len(line), 1), width)]


def _valid(line: str) -> str:
    """The line as Go's JSON encoder writes it: bytes that are not UTF-8 as U+FFFD."""
    return line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


_DATE_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)")


def collector_clock(lines: list[str]) -> list[datetime]:
    """The time a collector would stamp on each line: the line's own where it shows one (the two clocks agree, as on
    one machine), else the last one's a millisecond on (the log's first time, or the formatters' own, before it)."""
    first = next((m for line in lines if (m := _DATE_TIME.search(line))), None)
    when = _parsed(first) or logformats.T0
    clock = []
    for line in lines:
        when = _parsed(_DATE_TIME.search(line)) or when + timedelta(milliseconds=1)
        clock.append(when)
    return clock


def _parsed(m: re.Match[str] | None) -> datetime | None:
    try:
        return datetime.fromisoformat(f"{m[1]}T{m[2]}") if m else None
    except ValueError:  # a date that is none (month 13)
        return None


def wrapped_text(path: Path, wrapper: Wrapper) -> bytes:
    """The log's lines through the wrapper (bytes that are not UTF-8 kept as they were)."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    ends_in_newline = lines[-1] == ""
    if ends_in_newline:
        lines.pop()
    out = "\n".join(wrapper(lines, collector_clock(lines))) + ("\n" if ends_in_newline else "")
    return out.encode("utf-8", "surrogateescape")


def _scores(engine: Engine, case: Case, path: Path) -> tuple[str | None, str | None]:
    incidents = [incident_dict(i) for i in engine.analyse([str(path)], lambda _problem: None).incidents]
    return score(case, incidents, False), score(case, incidents, True)


def _folder_results(folder: Path, wrappers: tuple[str, ...]) -> list[tuple[str, str, str | None, str | None]]:
    """(folder/case file, wrapper or "" for the log as pasted, lenient, strict) for each case and each wrapper."""
    engine = Engine(Options())
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in read_manifest(folder):
            path = folder / case.file
            plain = _scores(engine, case, path)
            name_of = f"{folder.name}/{case.file}"
            results.append((name_of, "", *plain))
            if plain[0] is not None:
                continue  # lost as pasted: a wrapper has nothing to lose
            for name in wrappers:
                wrapped = Path(tmp) / f"{name}.log"
                wrapped.write_bytes(wrapped_text(path, WRAPPERS[name]))
                results.append((name_of, name, *_scores(engine, case, wrapped)))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--only", action="append", choices=sorted(WRAPPERS), help="this wrapper (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="folders scored at once")
    parser.add_argument("--verbose", action="store_true", help="print every case a wrapper loses")
    args = parser.parse_args(argv)
    for folder in args.folders:
        if not (folder / "MANIFEST.tsv").is_file():
            parser.error(f"no MANIFEST.tsv in {folder}")
    wrappers = tuple(args.only or WRAPPERS)
    with ProcessPoolExecutor(args.jobs) as pool:
        results = [row for rows in pool.map(_folder_results, args.folders, [wrappers] * len(args.folders))
                   for row in rows]
    plain = {file: (lenient, strict) for file, name, lenient, strict in results if not name}
    print(f"{len(plain)} cases; as pasted {sum(v[0] is None for v in plain.values())} lenient, "
          f"{sum(v[1] is None for v in plain.values())} strict\n")
    print("| wrapper | lenient kept | strict kept |\n|---|---:|---:|")
    lost_any = 0
    for name in wrappers:
        rows = [(file, lenient, strict) for file, wrapper, lenient, strict in results if wrapper == name]
        kept_lenient = sum(lenient is None for _, lenient, _ in rows)
        strict_base = [row for row in rows if plain[row[0]][1] is None]
        kept_strict = sum(strict is None for _, _, strict in strict_base)
        lost_any += len(rows) - kept_lenient
        print(f"| {name} | {kept_lenient} / {len(rows)} | {kept_strict} / {len(strict_base)} |")
        if args.verbose:
            for file, lenient, strict in rows:
                if lenient is not None or (plain[file][1] is None and strict is not None):
                    print(f"    {name} {file}: {lenient or 'strict: ' + str(strict)}")
    return 1 if lost_any else 0


if __name__ == "__main__":
    sys.exit(main())
