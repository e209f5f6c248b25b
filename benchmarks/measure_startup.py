"""Start-up of the commands people run by hand: wall time of whole processes, warm and first-run.

    python benchmarks/measure_startup.py                     # this checkout, via `python -m analyzer`
    python benchmarks/measure_startup.py --exe venv/bin/analyzer   # an installed copy
    python benchmarks/measure_startup.py --check             # exit 1 when a command is over its budget

Warm: the same cache dir for every run (whatever the first run left there is used). First run: a
new, empty cache dir for each run, as on a fresh machine. Each figure is the median of --runs runs
(and the slowest). Also prints the imports that cost most, from `python -X importtime`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Warm CPU seconds (user+sys, median) a command may take: CPU, not wall, since this 2-core machine
# is shared and its load inflates wall times by a factor that changes from run to run.
BUDGET_S = {"`analyzer --version`": 0.1, "`analyzer --help`": 0.1,
            "`analyzer scan` of a one-line log": 0.25, "`analyzer explain \"<seed message>\"`": 0.25}
SEED = ("ValueError: DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), "
        "got 'flashinfer_tkv'.")


def _time(command: list[str], env: dict[str, str], fresh_cache: bool) -> tuple[float, float]:
    """Wall and CPU seconds (CPU is what a busy machine does not inflate)."""
    with tempfile.TemporaryDirectory() as cache:
        if fresh_cache:
            env = {**env, "XDG_CACHE_HOME": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _cell(samples: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return f"{statistics.median(walls):.3f} ({max(walls):.3f}) | {statistics.median(cpus):.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--exe", help="an installed `analyzer` (default: python -m analyzer in this checkout)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--check", action="store_true", help="exit 1 when a command's warm CPU time is over "
                                                              "its budget (BUDGET_S)")
    args = parser.parse_args()
    base = [args.exe] if args.exe else [sys.executable, "-m", "analyzer"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ANALYZER_PATTERNS")}
    if not args.exe:
        env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        one_line = Path(tmp) / "one.log"
        one_line.write_text("ValueError: x\n")
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        cases = {
            "`analyzer --version`": ["--version"],
            "`analyzer --help`": ["--help"],
            "`analyzer scan` of a one-line log": ["scan", str(one_line)],
            "`analyzer explain \"<seed message>\"`": ["explain", SEED],
            "`analyzer scan` (the bundled sample)": ["scan"],
        }
        # once first: bytecode written, files in the page cache
        subprocess.run(base + ["scan", str(one_line)], env=env, capture_output=True, check=False)
        print("| command | warm: wall median (max) s | warm: CPU s "
              "| first run: wall median (max) s | first run: CPU s |")
        print("| --- | --- | --- | --- | --- |")
        over = []
        for name, argv in cases.items():
            warm = [_time(base + argv, env, False) for _ in range(args.runs)]
            first = [_time(base + argv, env, True) for _ in range(args.runs)]
            print(f"| {name} | {_cell(warm)} | {_cell(first)} |")
            warm_cpu = statistics.median(cpu for _, cpu in warm)
            if name in BUDGET_S and warm_cpu > BUDGET_S[name]:
                over.append(f"{name}: {warm_cpu:.3f} s CPU warm, budget {BUDGET_S[name]} s")
        python = [args.exe.replace("analyzer", "python")] if args.exe else [sys.executable]
        report = subprocess.run(python + ["-X", "importtime", "-m", "analyzer", "scan", str(one_line)], env=env,
                                capture_output=True, text=True, check=False).stderr
    costs = []
    for line in report.splitlines()[1:]:
        parts = line.split("|")
        if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  "):
            costs.append((int(parts[1]), parts[2].strip()))
    print("\nTop-level imports of `analyzer scan`, cumulative microseconds:")
    for cost, name in sorted(costs, reverse=True)[:12]:
        print(f"  {cost:>8}  {name}")
    if args.check:
        print("\n" + ("\n".join(f"over budget: {line}" for line in over) or "every command within its budget"))
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
