"""What the fast path's Hyperscan pass costs on each log shape, and which of its patterns cost most.

    python benchmarks/pass_cost.py                     # the pass's speed on each shape's first 40 MB
    python benchmarks/pass_cost.py --ablate 8          # ... and the 8 patterns whose removal saves most
    python benchmarks/pass_cost.py --only torchrun --mb 100

Most of a sparse log's time is this pass (`TriggerFinder.scan`, plus `heads` where lines carry channel
heads), and one pattern written a little differently can cost a fifth of it: a cost that end-to-end
timings hide in their noise. The database is the one a scan builds (the same finder, so the same form
for input with and without channel heads); a pattern's cost is the time the database saves without
it (best of `--repeat` passes each). Logs are the shapes of `styles.py` (generated on first use).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.styles import SHAPES, ensure  # noqa: E402

MB = 1e6
BUFFER = 4 << 20  # what the chunk scanner hands the finder at a time


def buffers(path: Path, limit: int) -> list[bytes]:
    """The log's first `limit` bytes as the chunk scanner cuts them: whole lines, about 4 MiB each."""
    with path.open("rb") as f:
        data = f.read(limit)
    data = data[:data.rfind(b"\n") + 1]
    cuts, start = [], 0
    while start < len(data):
        end = data.rfind(b"\n", start, start + BUFFER) + 1 or len(data)
        cuts.append(data[start:end])
        start = end
    return cuts


def timed(repeat: int, work) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def finder_pass(chunks: list[bytes], repeat: int) -> tuple[float, float, Any]:
    """Seconds of the finder's pass and of its look for channel heads, and the finder (warm: both
    database forms compiled, the heads named)."""
    from analyzer.core.triggers import TriggerFinder

    finder = TriggerFinder(headed=True)
    for chunk in chunks[:2]:
        finder.scan(chunk)
        finder.heads(chunk)
    scans = timed(repeat, lambda: [finder.scan(chunk) for chunk in chunks])
    heads = timed(repeat, lambda: [(finder.scan(chunk), finder.heads(chunk)) for chunk in chunks]) - scans
    return scans, max(heads, 1e-9), finder


def database_patterns(finder: Any) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    """The expressions and flags of the database form the finder used last."""
    from analyzer.core import triggers

    captured: list[tuple[tuple[bytes, ...], tuple[int, ...]]] = []

    def record(expressions: tuple[bytes, ...], flags: tuple[int, ...]) -> Any:
        captured.append((expressions, flags))
        return triggers.compile_database(expressions, flags)

    triggers._database(finder._keywords, finder._headed, not finder._headed_input, record)
    return captured[0]


def ablate(chunks: list[bytes], patterns: tuple[tuple[bytes, ...], tuple[int, ...]], repeat: int, top: int) -> list[str]:
    from analyzer.core.triggers import compile_database

    expressions, flags = patterns

    def cost(keep: list[int]) -> float:
        database = compile_database(tuple(expressions[i] for i in keep), tuple(flags[i] for i in keep))
        scratch = database.scratch.clone()

        def quiet(*_: object) -> None:
            return None

        return timed(repeat, lambda: [database.scan(chunk, match_event_handler=quiet, scratch=scratch) for chunk in chunks])

    everything = list(range(len(expressions)))
    whole = cost(everything)
    saved = sorted(((whole - cost([j for j in everything if j != i]), i) for i in everything), reverse=True)
    return [f"    {gain / whole:6.1%}  #{i:<3} {expressions[i][:100]!r}" for gain, i in saved[:top]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="200M", help="the generated logs to read from (default 200M)")
    parser.add_argument("--mb", type=float, default=40, help="MB of each log's start timed (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="passes per timing; the best counts")
    parser.add_argument("--ablate", type=int, default=0, metavar="N", help="name the N patterns that cost most")
    parser.add_argument("--only", action="append", default=[], metavar="STYLE", help="only shapes of this style")
    args = parser.parse_args(argv)
    seen: set[tuple[str, int]] = set()
    for shape in SHAPES:
        if (args.only and shape.style not in args.only) or (shape.style, shape.every) in seen:
            continue  # (stdin reads the same file)
        seen.add((shape.style, shape.every))
        chunks = buffers(ensure(args.size, shape), int(args.mb * MB))
        size = sum(map(len, chunks))
        scans, heads, finder = finder_pass(chunks, args.repeat)
        count = timed(args.repeat, lambda chunks=chunks: [chunk.count(b"\n") for chunk in chunks])
        heads_rate = f"looking for channel heads {size / MB / heads:,.0f} MB/s" if finder._headed_input else "no channel heads"
        print(f"{shape.name}: pass {size / MB / scans:,.0f} MB/s, {heads_rate}, counting lines {size / MB / count:,.0f} MB/s")
        if args.ablate:
            print("\n".join(ablate(chunks, database_patterns(finder), args.repeat, args.ablate)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
