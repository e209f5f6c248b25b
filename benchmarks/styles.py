"""`analyzer scan` against grep on every log shape users pipe in, with targets that can fail.

    python benchmarks/styles.py                    # 1 GB per shape (generated on first use, ~2 min each)
    python benchmarks/styles.py --size 200M        # quicker, same shapes
    python benchmarks/styles.py --check            # exit 1 when a target is missed
    python benchmarks/styles.py --only sglang-every --only vllm-every   # some shapes (by style)

Shapes: the SGLang prefix on a record's first line, on every line, torchrun's `[rankN]:`, a container
runtime's prefix and vLLM's per-line prefix, each with one error per 10,000 lines; the first shape
dense (one per 100 lines); and the first shape piped through stdin. Every log comes with its ground
truth (benchmarks/generate.py): each error must be reported at its lines.

Targets (issue #20): end to end at least 1/3 of `grep -c Traceback`'s speed on each shape, 0.1 of it
on the dense log, stdin within 1.5x of the same file's time, and peak RSS under 200 MB everywhere.
Speeds are per CPU second (user + system) of the best of `--repeat` runs; grep and ripgrep run
interleaved with the scans, on the same warm page cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import generate  # noqa: E402
from benchmarks.measure_scan import analyzer_command, best, check_truth, run_process, warm  # noqa: E402

MB, MIB = 1e6, 1 << 20
RSS_LIMIT = 200 * MIB


@dataclass(frozen=True)
class Shape:
    name: str
    style: str
    every: int
    target: float  # the least share of grep's speed
    stdin: bool = False


SHAPES = (
    Shape("SGLang prefix, first line", "first", 10_000, 1 / 3),
    Shape("SGLang prefix, every line", "sglang-every", 10_000, 1 / 3),
    Shape("torchrun [rankN]:, every line", "torchrun", 10_000, 1 / 3),
    Shape("container prefix, every line", "container", 10_000, 1 / 3),
    Shape("vLLM prefix, every line", "vllm-every", 10_000, 1 / 3),
    Shape("dense: 1 error / 100 lines", "first", 100, 0.1),
    Shape("stdin (cat | analyzer scan -)", "first", 10_000, 1 / 3, stdin=True),
)


def ensure(size: str, shape: Shape) -> Path:
    path = generate.data_path(size, shape.every, shape.style)
    if not path.exists() or not generate.truth_path(path).exists():
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        generate.write_log(path, generate.parse_size(size), shape.every, style=shape.style)
    return path


def scan(path: Path, stdin: bool, repeat: int, analyzer: list[str]) -> tuple[float, float, int, list[dict]]:
    command = [*analyzer, "scan", "--format", "jsonl", "-" if stdin else str(path)]
    if stdin:  # the shell's cat is the writer; its CPU is not the scan's
        command = ["sh", "-c", f"cat {path} | {' '.join(command)}"]
    cpu, wall, rss, out = best(repeat, lambda: run_process(command))
    latest: dict[str, dict] = {}
    for line in out.splitlines():  # streamed output: the last object with an id is current
        if line.strip():
            incident = json.loads(line)
            latest[incident["id"]] = incident
    return cpu, wall, rss, list(latest.values())


def measure(size: str, repeat: int, styles: tuple[str, ...] = (), installed: str | None = None) -> list[dict]:
    rows = []
    analyzer = analyzer_command(installed)
    for shape in SHAPES:
        if styles and shape.style not in styles:
            continue
        path = ensure(size, shape)
        bytes_, _ = warm(path)
        grep = best(repeat, lambda path=path: run_process(["grep", "-c", "Traceback", str(path)]))
        rg = (best(repeat, lambda path=path: run_process(["rg", "-c", "Traceback", str(path)]))
              if shutil.which("rg") else None)
        cpu, wall, rss, incidents = scan(path, shape.stdin, repeat, analyzer)
        truth = check_truth(path, incidents, json.loads(generate.truth_path(path).read_text()))
        share = grep[0] / cpu if cpu else 0.0
        rows.append({"shape": shape.name, "bytes": bytes_, "grep_cpu": grep[0], "rg_cpu": rg[0] if rg else None,
                     "cpu": cpu, "seconds": wall, "rss": rss, "share": share, "target": shape.target,
                     "truth": truth, "stdin": shape.stdin})
        print(f"{shape.name}: {bytes_ / MB / cpu:.0f} MB/s, {share:.2f} of grep (target {shape.target:.2f}), "
              f"RSS {rss / MIB:.0f} MiB, {truth}", file=sys.stderr, flush=True)
    return rows


def verdicts(rows: list[dict]) -> list[str]:
    """What missed its target, one line each."""
    missed = []
    file_cpu = next((r["cpu"] for r in rows if r["shape"].startswith("SGLang prefix, first") and not r["stdin"]), None)
    for row in rows:
        if row["share"] < row["target"]:
            missed.append(f"{row['shape']}: {row['share']:.2f} of grep's speed, target {row['target']:.2f}")
        if row["rss"] >= RSS_LIMIT:
            missed.append(f"{row['shape']}: peak RSS {row['rss'] / MIB:.0f} MiB, limit {RSS_LIMIT / MIB:.0f}")
        truth = row["truth"]
        if truth["missed"] or truth["extra"]:
            missed.append(f"{row['shape']}: {truth['missed']} error(s) missed, {truth['extra']} extra")
        if row["stdin"] and file_cpu and row["cpu"] > 1.5 * file_cpu:
            missed.append(f"{row['shape']}: {row['cpu'] / file_cpu:.2f}x the file's CPU time, target 1.5x")
    return missed


def render(rows: list[dict]) -> str:
    lines = ["| log | MB/s | share of grep | target | grep MB/s | rg MB/s | peak RSS MiB | errors found |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        mb = r["bytes"] / MB
        rg = f"{mb / r['rg_cpu']:,.0f}" if r["rg_cpu"] else "-"
        t = r["truth"]
        lines.append(f"| {r['shape']} | {mb / r['cpu']:,.0f} | {r['share']:.2f} | {r['target']:.2f} | "
                     f"{mb / r['grep_cpu']:,.0f} | {rg} | {r['rss'] / MIB:.0f} | "
                     f"{t['found']}/{t['expected']} (+{t['extra']}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1G", help="log size per shape (default 1G)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the best counts")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--only", action="append", default=[], metavar="STYLE",
                        help="only the shapes of this style (first, sglang-every, torchrun, container, vllm-every)")
    parser.add_argument("--analyzer", metavar="EXE", help="time this installed `analyzer` (default: the checkout's code)")
    args = parser.parse_args(argv)
    rows = measure(args.size, args.repeat, tuple(args.only), args.analyzer)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {args.size} per shape\n")
    print(render(rows))
    missed = verdicts(rows)
    for line in missed:
        print(f"MISSED {line}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
