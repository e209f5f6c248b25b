"""Measure `analyzer` the way its users feel it, all in one run, and say how it fares against the targets.

    python benchmarks/run.py                 # 100 MB log (generated on first use), prints the results
    python benchmarks/run.py --write         # ... and writes benchmarks/RESULTS.md
    python benchmarks/run.py --size 1G       # the same on a 1 GB log
    python benchmarks/run.py --memory-1g     # also peak memory on a 1 GB log (generated on first use)

Timings are the best of --repeat runs on files in the page cache. Nothing here is asserted: the
test suite stays free of timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import generate  # noqa: E402
from benchmarks.measure_follow import follow_latency  # noqa: E402
from benchmarks.measure_matcher import KINDS, matcher_speed  # noqa: E402
from benchmarks.measure_scan import (  # noqa: E402
    analyzer_scan, check_truth, core_paths, drain3, grep_count, python_iteration, run_process, warm)

MB = 1e6
TARGETS = {"grep_share": 1 / 3, "rss_1g": 200 * 2**20, "follow_ms": 300, "matcher_us": 100}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark analyzer against grep, Python and Drain3.")
    parser.add_argument("--size", default="100M", help="log size to measure on (100M, 1G)")
    parser.add_argument("--every", type=int, default=10_000, help="one error per this many lines")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the best counts")
    parser.add_argument("--memory-1g", action="store_true", help="also peak memory on a 1 GB log")
    parser.add_argument("--drain-mb", type=float, default=20, help="MB of the log Drain3 mines (it is slow)")
    parser.add_argument("--line-path-mb", type=float, default=10, help="MB read by the line-by-line path")
    parser.add_argument("--skip", action="append", default=[], choices=("drain3", "matcher", "follow"))
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)

    results: dict = {"machine": machine(), "started": time.strftime("%Y-%m-%d %H:%M")}
    log = ensure_log(args.size, args.every)
    size, lines = warm(log)
    truth = json.loads(generate.truth_path(log).read_text())
    results["log"] = {"path": str(log.relative_to(HERE.parent)), "bytes": size, "lines": lines, "errors": len(truth),
                      "every": args.every}
    empty = HERE / "data" / "empty.log"
    empty.write_bytes(b"")
    say(f"log: {log.name}, {size / MB:.0f} MB, {lines} lines, {len(truth)} errors")

    results["grep"] = grep_count(log, args.repeat)
    say(f"grep -c Traceback: {rate(size, results['grep']['seconds'])}")
    results["python"] = python_iteration(log, args.repeat)
    say(f"python line iteration: {rate(size, results['python']['seconds'])}")
    scan = analyzer_scan(log, empty, args.repeat)
    results["truth"] = check_truth(scan.pop("incidents"), truth)
    results["scan"] = scan
    say(f"analyzer scan: {rate(size, scan['seconds'])} end to end; start-up {scan['startup_seconds']:.2f} s; "
        f"peak RSS {scan['rss'] / 2**20:.0f} MiB; ground truth {results['truth']}")
    results["core"] = core_paths(log, int(args.line_path_mb * MB), args.repeat)
    core = results["core"]
    say(f"fast path in-process: {rate(size, core['fast_seconds'])}; line-by-line path: "
        f"{rate(core['line_bytes'], core['line_seconds'])}")
    if "drain3" not in args.skip:
        results["drain3"] = drain3(log, int(args.drain_mb * MB))
        if results["drain3"]:
            say(f"drain3: {rate(results['drain3']['bytes'], results['drain3']['seconds'])} "
                f"({results['drain3']['lines'] / results['drain3']['seconds']:,.0f} lines/s)")
        else:
            say("drain3: skipped (pip install drain3 to compare)")
    if args.memory_1g:
        big = ensure_log("1G", args.every)
        big_size, _ = warm(big)
        wall, rss, _ = run_process([sys.executable, "-m", "analyzer", "scan", "--format", "jsonl", str(big)])
        results["memory_1g"] = {"bytes": big_size, "seconds": wall, "rss": rss, "grep": grep_count(big, args.repeat)}
        say(f"1 GB log: {rate(big_size, wall)} end to end, peak RSS {rss / 2**20:.0f} MiB; "
            f"grep -c {rate(big_size, results['memory_1g']['grep']['seconds'])}")
    if "matcher" not in args.skip:
        results["matcher"] = matcher_speed()
        for kind, row in results["matcher"]["kinds"].items():
            say(f"matcher {kind}: median {row['warm']['median_us']:.0f} µs warm, {row['cold']['median_us']:.0f} µs cold")
    if "follow" not in args.skip:
        results["follow"] = follow_latency()
        say(f"follow latency: median {results['follow']['median_ms']:.0f} ms, p95 {results['follow']['p95_ms']:.0f} ms")
    results["load_after"] = os.getloadavg()
    (HERE / "data" / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    report = render(results)
    print("\n" + report)
    if args.write:
        (HERE / "RESULTS.md").write_text(report, encoding="utf-8")
    return 0


def ensure_log(size: str, every: int) -> Path:
    path = HERE / "data" / f"sglang_{size.upper().removesuffix('B')}.log"
    truth = generate.truth_path(path)
    if not path.exists() or not truth.exists():
        say(f"generating {path.name} ...")
        generate.write_log(path, generate.parse_size(size), every)
    return path


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    memory = next((int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0) if Path("/proc/meminfo").exists() else 0
    try:
        from importlib.metadata import version
        hyperscan = version("hyperscan")
    except Exception:  # noqa: BLE001 - only for the description
        hyperscan = "not installed"
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": memory, "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}", "hyperscan": hyperscan, "load_before": os.getloadavg()}


def say(text: str) -> None:
    print(text, flush=True)


def rate(size: int, seconds: float) -> str:
    return f"{size / MB / seconds:,.0f} MB/s"


def render(r: dict) -> str:
    m, log, grep, scan, core = r["machine"], r["log"], r["grep"], r["scan"], r["core"]
    size = log["bytes"]
    net = scan["seconds"] - scan["startup_seconds"]
    grep_rate = size / grep["seconds"]
    rows = [
        ("`grep -c Traceback` (the floor)", grep["seconds"], size, log["lines"]),
        ("`analyzer scan --format jsonl`, end to end", scan["seconds"], size, log["lines"]),
        ("`analyzer scan`, less its start-up (empty file)", net, size, log["lines"]),
        ("fast path in-process (ChunkScanner, no start-up, no matching)", core["fast_seconds"], size, core["fast_lines"]),
        ("pure-Python line iteration (`for line in file`)", r["python"]["seconds"], size, r["python"]["lines"]),
        (f"line-by-line path (every line normalised), first {core['line_bytes'] / MB:.0f} MB",
         core["line_seconds"], core["line_bytes"], core["line_lines"]),
    ]
    if r.get("drain3"):
        d = r["drain3"]
        rows.append((f"Drain3 template mining (numbers masked), first {d['bytes'] / MB:.0f} MB",
                     d["seconds"], d["bytes"], d["lines"]))
    out = [
        "# Benchmark results",
        "",
        "Written by `python benchmarks/run.py --write`; see benchmarks/README.md for what each number means.",
        "",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory'] / 2**30:.0f} GiB; {m['system']}; "
        f"Python {m['python']}; hyperscan {m['hyperscan']}.",
        f"- Load average before/after: {_load(m['load_before'])} / {_load(r['load_after'])} "
        "(other jobs shared the machine when it is above 0.5; best of several runs counts).",
        f"- Run: {r['started']}. Log: `{log['path']}`, {size / MB:.0f} MB, {log['lines']:,} lines, "
        f"{log['errors']} errors (one burst per {log['every']:,} lines on average), made by benchmarks/generate.py.",
        f"- Ground truth: {r['truth']['found']} of {r['truth']['expected']} errors reported at their exact lines, "
        f"{r['truth']['missed']} missed, {r['truth']['extra']} extra.",
        "",
        "## Scan throughput",
        "",
        "| what | seconds | MB/s | lines/s | share of grep's speed |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, seconds, nbytes, nlines in rows:
        speed = nbytes / seconds
        out.append(f"| {name} | {seconds:.2f} | {speed / MB:,.0f} | {nlines / seconds:,.0f} | {speed / grep_rate:.2f} |")
    if r.get("memory_1g"):
        big = r["memory_1g"]
        out.append(f"| `analyzer scan --format jsonl` on a {big['bytes'] / MB:,.0f} MB log, end to end | "
                   f"{big['seconds']:.2f} | {big['bytes'] / big['seconds'] / MB:,.0f} | | "
                   f"{big['grep']['seconds'] / big['seconds']:.2f} (grep: {big['grep']['seconds']:.2f} s) |")
    out += ["", f"Start-up (interpreter, imports, the built-in pattern packs): {scan['startup_seconds']:.2f} s, "
            f"{scan['startup_rss'] / 2**20:.0f} MiB.", ""]
    out += _verdicts(r, net, grep_rate)
    out += _where_the_time_goes(r, net, grep_rate)
    if r.get("matcher"):
        mt = r["matcher"]
        out += ["", f"## Matcher ({mt['patterns']:,} patterns, index built in {mt['build_seconds']:.2f} s)", "",
                "| messages | count | median µs (warm) | p99 µs (warm) | median µs (cold) | p99 µs (cold) | matched as |",
                "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for kind in KINDS:
            row = mt["kinds"][kind]
            got = ", ".join(f"{k} {v}" for k, v in row["got"].items())
            out.append(f"| {kind} | {row['messages']} | {row['warm']['median_us']:.0f} | {row['warm']['p99_us']:.0f} | "
                       f"{row['cold']['median_us']:.0f} | {row['cold']['p99_us']:.0f} | {got} |")
        out += ["", "Cold: the first time each message is seen by a fresh matcher, so the templates it is tried "
                "against are compiled then (each template once per process). Warm: the same messages again "
                "with the result cache cleared."]
    if r.get("follow"):
        f = r["follow"]
        out += ["", "## Follow mode", "",
                f"`analyzer scan --follow FILE --format jsonl`, {f['rounds']} tracebacks appended one at a time: "
                f"median {f['median_ms']:.0f} ms, p95 {f['p95_ms']:.0f} ms, max {f['max_ms']:.0f} ms from the "
                f"write to the JSON line (the first, with start-up: {f['first_seconds']:.1f} s)."]
    return "\n".join(out) + "\n"


def _verdicts(r: dict, net: float, grep_rate: float) -> list[str]:
    size = r["log"]["bytes"]
    scan_share, net_share = size / r["scan"]["seconds"] / grep_rate, size / net / grep_rate
    fast_share = size / r["core"]["fast_seconds"] / grep_rate
    out = ["## Targets", "", "| target | measured | verdict |", "| --- | --- | --- |",
           f"| scan ≥ 1/3 of `grep -c` | end to end {scan_share:.2f}; less start-up {net_share:.2f}; fast path "
           f"{fast_share:.2f} | {_met(net_share >= TARGETS['grep_share'])} |"]
    rss = r.get("memory_1g", {}).get("rss")
    if rss:
        out.append(f"| memory < 200 MB on a 1 GB log | {rss / 2**20:.0f} MiB peak RSS | {_met(rss < TARGETS['rss_1g'])} |")
    else:
        out.append(f"| memory < 200 MB on a 1 GB log | {r['scan']['rss'] / 2**20:.0f} MiB on "
                   f"{size / MB:.0f} MB (run with --memory-1g) | not measured at 1 GB |")
    if r.get("follow"):
        out.append(f"| follow latency < 300 ms | median {r['follow']['median_ms']:.0f} ms, p95 "
                   f"{r['follow']['p95_ms']:.0f} ms | {_met(r['follow']['p95_ms'] < TARGETS['follow_ms'])} |")
    if r.get("matcher"):
        worst = max(r["matcher"]["kinds"].values(), key=lambda row: row["warm"]["median_us"])["warm"]["median_us"]
        out.append(f"| matcher < 100 µs per message (median) | worst kind {worst:.0f} µs warm | "
                   f"{_met(worst < TARGETS['matcher_us'])} |")
    return out


def _where_the_time_goes(r: dict, net: float, grep_rate: float) -> list[str]:
    size, scan, core = r["log"]["bytes"], r["scan"], r["core"]
    passes = core["trigger_scan_seconds"] + core["newline_count_seconds"]
    line_rate = core["line_bytes"] / core["line_seconds"]
    return [
        "", "## Where the time goes", "",
        f"- Start-up is {scan['startup_seconds']:.2f} s of the {scan['seconds']:.2f} s end-to-end run: the "
        "interpreter, the imports (the CLI imports every command's module, and the `report` command's brings in "
        "pandas and pyarrow), unpickling the built-in pattern packs and indexing them for the matcher. It is "
        "the same for any log, so its share shrinks as logs grow (see the 1 GB row), but on this log it alone "
        "keeps `analyzer scan` far from grep's speed.",
        f"- The fast path reads every byte twice in C: one Hyperscan pass for all trigger patterns "
        f"({size / MB / core['trigger_scan_seconds']:,.0f} MB/s) and one newline count for exact line numbers "
        f"({size / MB / core['newline_count_seconds']:,.0f} MB/s), {passes:.2f} s of its {core['fast_seconds']:.2f} s; "
        f"grep searches one literal at {grep_rate / MB:,.0f} MB/s. The Hyperscan of the PyPI wheel is a portable "
        "build (no AVX2 here), and a dozen patterns, some with short literals (`]:`, `{` at a line start), cost "
        "more than one long literal. The remaining "
        f"{max(core['fast_seconds'] - passes, 0):.2f} s is Python: the lines of the errors themselves, parsed as "
        "before, and for each skipped stretch a newline count and the re-reading of its last prefixed lines.",
        f"- After the fast path, `analyzer scan` matches and groups the events and writes JSON: "
        f"{max(net - core['fast_seconds'], 0):.2f} s here.",
        f"- Before the fast path every line went through the normaliser and the assembler: "
        f"{line_rate / MB:,.1f} MB/s ({core['line_lines'] / core['line_seconds']:,.0f} lines/s), "
        f"{size / core['fast_seconds'] / line_rate:,.0f}× slower than the fast path on this log.",
    ]


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def _load(load) -> str:
    return "/".join(f"{x:.1f}" for x in load)


if __name__ == "__main__":
    sys.exit(main())
