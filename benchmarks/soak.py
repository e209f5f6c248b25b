"""Soak: memory and time must not grow with repetition or with the number of ranks (issue 16).

Two workloads, each generated at two sizes under benchmarks/data/ (real tracebacks, raised here):

- `repeated`: one traceback between INFO lines, over and over (`--repeat-mb`, and twice that);
- `ranks`: ranks print the same traceback at once, interleaved line by line (`[rank0]: line 1`,
  `[rank1]: line 1`, ..., then line 2 of each), `--wave` ranks at a time, wave after wave, up to
  `--ranks` (and half that). A wave is what the assembler holds open at once: 100,000 of these
  tracebacks fit its budget whole; past it they lose the middle of their stacks, then are parked and
  carried on by their rank's next lines (README, bounds).

Each file is scanned by `analyzer scan --format jsonl` in a child process. Per run: CPU seconds
(user + system, which a busy machine does not inflate the way it does wall time), wall seconds,
peak RSS, the JSON output's size, and whether the result is exact: one incident whose count is
the number of tracebacks written (and, for `ranks`, every rank once, nothing truncated).
Time is linear when the larger size's CPU time per MB is within `--slack` of the smaller's.

    python benchmarks/soak.py --check                      # 200/400 MB, 50k/100k ranks in waves of 10k
    python benchmarks/soak.py --check --wave 100000        # 50k/100k ranks all at once
    python benchmarks/soak.py --check --repeat-mb 20 --ranks 10000   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
RSS_LIMIT_MB = 200


def _shard_traceback() -> list[str]:
    def read_index(number: int) -> None:
        raise ValueError(f"shard {number} is missing from /ckpt/model-{number:05d}.safetensors")

    def load_weights(number: int) -> None:
        read_index(number)

    try:
        load_weights(7)
    except ValueError as err:
        return "".join(traceback.format_exception(err)).splitlines()
    raise AssertionError("unreachable")


def write_repeated(path: Path, megabytes: int) -> int:
    """Returns how many tracebacks it wrote."""
    lines = ["INFO 12-01 10:00:00 [loader.py:12] loading shard", *_shard_traceback()]
    chunk = ("\n".join(lines) + "\n") * 1000
    count, written, target = 0, 0, megabytes << 20
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            out.write(chunk)
            written += len(chunk)
            count += 1000
    return count


def write_ranks(path: Path, ranks: int, wave: int) -> int:
    lines = _shard_traceback()
    with open(path, "w", encoding="utf-8") as out:
        for first in range(0, ranks, wave):
            for line in lines:
                out.write("".join(f"[rank{rank}]: {line}\n" for rank in range(first, min(first + wave, ranks))))
    return ranks


@dataclass(frozen=True)
class Run:
    workload: str
    size: str
    megabytes: float
    cpu_s: float
    wall_s: float
    peak_mb: float
    json_bytes: int
    exact: bool

    @property
    def cpu_per_mb(self) -> float:
        return self.cpu_s / self.megabytes


def scan(workload: str, size: str, path: Path, expected: int, ranks: int) -> Run:
    start = time.monotonic()
    with open(os.devnull, "wb") as sink, subprocess.Popen(
            [sys.executable, "-m", "analyzer", "scan", "--format", "jsonl", str(path)],
            stdout=subprocess.PIPE, stderr=sink, cwd=ROOT) as child:
        out = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    incidents = [json.loads(line) for line in out.splitlines()]
    exact = len(incidents) == 1 and incidents[0]["count"] == expected
    if exact and ranks:
        (incident,) = incidents
        exact = (len(incident["ranks"]) == ranks and set(incident["count_by_rank"].values()) == {1}
                 and not incident["truncated"])
    return Run(workload, size, path.stat().st_size / 1e6, usage.ru_utime + usage.ru_stime, wall,
               usage.ru_maxrss / 1024, len(out), exact)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat-mb", type=int, default=200, help="the smaller repeated log; the larger is twice it")
    parser.add_argument("--ranks", type=int, default=100_000, help="the larger rank count; the smaller is half")
    parser.add_argument("--wave", type=int, default=10_000, help="ranks printing at the same time")
    parser.add_argument("--slack", type=float, default=1.25, help="allowed growth of CPU time per MB")
    parser.add_argument("--check", action="store_true", help="exit 1 unless every run is exact, under "
                        f"{RSS_LIMIT_MB} MB, and time is linear")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    plans = [("repeated", f"{mb} MB", lambda p, mb=mb: write_repeated(p, mb), 0)
             for mb in (args.repeat_mb, 2 * args.repeat_mb)]
    plans += [("ranks", f"{n:,} ranks", lambda p, n=n: write_ranks(p, n, args.wave), n)
              for n in (args.ranks // 2, args.ranks)]
    runs: list[Run] = []
    print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
    for workload, size, write, ranks in plans:
        path = DATA / f"soak_{workload}_{size.split()[0].replace(',', '')}.log"
        expected = write(path)
        runs.append(scan(workload, size, path, expected, ranks))
        if not args.keep:
            path.unlink()
        run = runs[-1]
        print(f"{workload:9} {size:>14} {run.megabytes:8.1f} MB  cpu {run.cpu_s:7.1f} s  wall {run.wall_s:7.1f} s  "
              f"{run.cpu_per_mb:.3f} s/MB  peak {run.peak_mb:6.1f} MB  json {run.json_bytes:,} B  "
              f"{'exact' if run.exact else 'WRONG'}", flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    failures = [f"{r.workload} {r.size}: not exact" for r in runs if not r.exact]
    failures += [f"{r.workload} {r.size}: peak {r.peak_mb:.0f} MB" for r in runs if r.peak_mb >= RSS_LIMIT_MB]
    for small, large in (runs[0:2], runs[2:4]):
        growth = large.cpu_per_mb / small.cpu_per_mb
        print(f"{small.workload}: CPU time per MB grows {growth:.2f}x from {small.size} to {large.size}")
        if growth > args.slack:
            failures.append(f"{small.workload}: time grows {growth:.2f}x per MB")
    for failure in failures:
        print("FAIL", failure)
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
