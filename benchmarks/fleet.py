"""`analyzer report` over a fleet of runs against `grep -l -r`, cold and warm, with targets that can fail.

    python benchmarks/fleet.py                   # 200 runs of ~1 MB (generated on first use)
    python benchmarks/fleet.py --runs 2000       # issue #20's fleet
    python benchmarks/fleet.py --check           # exit 1 when a target is missed

Each run is a folder holding one ~1 MB SGLang log with errors (benchmarks/generate.py; a few distinct
logs, copied round the fleet). Cold: a new, empty report cache; warm: the same command again, every
file already in the cache. Targets (issue #20): cold within 3x of `grep -l -r Traceback`'s wall time
on the same folder, warm under 1 s. Wall times of the run with the least CPU time of --repeat runs,
page cache warm; `grep -c -r` (which reads every byte, as a report must) is shown beside.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import generate  # noqa: E402
from benchmarks.measure_scan import analyzer_command, best, run_process  # noqa: E402

DISTINCT = 8  # different logs the fleet is made of
COLD_SHARE, WARM_SECONDS = 3.0, 1.0


def ensure_fleet(runs: int, size: int) -> Path:
    root = HERE / "data" / f"fleet_{runs}"
    marker = root.with_name(root.name + ".complete")  # beside the fleet: inside, it would be a run of its own
    if marker.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    print(f"generating {runs} runs of {size / 1e6:.1f} MB in {root} ...", file=sys.stderr, flush=True)
    logs = [generate.build_log(size, every=2_000, seed=seed)[0].encode() for seed in range(DISTINCT)]
    for i in range(runs):
        run = root / f"2026-12-{1 + i % 28:02d}" / f"run-{i:05d}"
        run.mkdir(parents=True)
        (run / "server.log").write_bytes(logs[i % DISTINCT])
    marker.touch()
    return root


def measure(root: Path, repeat: int, installed: str | None = None) -> dict:
    analyzer = analyzer_command(installed)
    grep = best(repeat, lambda: run_process(["grep", "-l", "-r", "Traceback", str(root)]))
    # grep -l stops at a file's first match; -c reads every byte, as a report must
    grep_all = best(repeat, lambda: run_process(["grep", "-c", "-r", "Traceback", str(root)]))
    with tempfile.TemporaryDirectory() as tmp:
        cache, out = Path(tmp) / "cache.sqlite", Path(tmp) / "report.json"
        command = [*analyzer, "report", str(root), "--no-progress", "--cache", str(cache),
                   "--format", "json", "-o", str(out)]

        def cold():
            cache.unlink(missing_ok=True)
            return run_process(command)

        cold_run = best(repeat, cold)
        warm_run = best(repeat, lambda: run_process(command))
    return {"grep_wall": grep[1], "grep_all_wall": grep_all[1],
            "cold_wall": cold_run[1], "cold_cpu": cold_run[0], "cold_rss": cold_run[2],
            "warm_wall": warm_run[1], "warm_cpu": warm_run[0]}


def verdicts(r: dict) -> list[str]:
    missed = []
    if r["cold_wall"] > COLD_SHARE * r["grep_wall"]:
        missed.append(f"cold report {r['cold_wall']:.2f} s is {r['cold_wall'] / r['grep_wall']:.1f}x grep's "
                      f"{r['grep_wall']:.2f} s, target {COLD_SHARE:.0f}x")
    if r["warm_wall"] >= WARM_SECONDS:
        missed.append(f"warm report {r['warm_wall']:.2f} s, target under {WARM_SECONDS:.0f} s")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in the fleet (issue #20: 2000)")
    parser.add_argument("--run-size", default="1M", help="log size per run")
    parser.add_argument("--repeat", type=int, default=2, help="runs per timing; the best counts")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--analyzer", metavar="EXE", help="time this installed `analyzer` (default: the checkout's code)")
    args = parser.parse_args(argv)
    root = ensure_fleet(args.runs, generate.parse_size(args.run_size))
    r = measure(root, args.repeat, args.analyzer)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {args.runs} runs of {args.run_size}")
    print(f"grep -l -r: {r['grep_wall']:.2f} s wall (grep -c -r: {r['grep_all_wall']:.2f} s); "
          f"report cold: {r['cold_wall']:.2f} s wall "
          f"({r['cold_cpu']:.2f} s CPU, peak RSS {r['cold_rss'] / 2**20:.0f} MiB); "
          f"warm: {r['warm_wall']:.2f} s wall ({r['warm_cpu']:.2f} s CPU)")
    missed = verdicts(r)
    for line in missed:
        print(f"MISSED {line}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
