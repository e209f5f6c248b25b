"""Scan throughput on one log file: `analyzer scan` and what to compare it with.

Each measurement is the best of `repeat` runs (the machine may be shared; the best run is the one
least disturbed), on a file already in the page cache. Results are plain dicts for run.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANALYZER = [sys.executable, "-m", "analyzer"]


def run_process(command: list[str], stdin: int | None = subprocess.DEVNULL) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes and stdout of one command (rusage of that child only)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode not in (0, 1):  # grep -c says 1 when nothing matched
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}")
    return wall, usage.ru_maxrss * 1024, out.decode("utf-8", "replace")


def best(repeat: int, measure):
    runs = [measure() for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def warm(path: Path) -> tuple[int, int]:
    """Read the file once (page cache); returns its size and line count."""
    size = lines = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 24):
            size += len(chunk)
            lines += chunk.count(b"\n")
    return size, lines


def grep_count(path: Path, repeat: int) -> dict:
    wall, rss, out = best(repeat, lambda: run_process(["grep", "-c", "Traceback", str(path)]))
    return {"seconds": wall, "rss": rss, "matches": int(out.strip() or 0)}


def python_iteration(path: Path, repeat: int) -> dict:
    """`for line in file` over the bytes, in this process: the floor of any per-line Python work."""
    def once():
        start = time.perf_counter()
        count = 0
        with open(path, "rb") as stream:
            for _ in stream:
                count += 1
        return time.perf_counter() - start, count
    wall, count = best(repeat, once)
    return {"seconds": wall, "lines": count}


def analyzer_scan(path: Path, empty: Path, repeat: int) -> dict:
    """`analyzer scan --format jsonl` end to end, and the same on an empty file (its fixed cost:
    interpreter, imports, pattern packs)."""
    command = [*ANALYZER, "scan", "--format", "jsonl"]
    startup, startup_rss, _ = best(repeat, lambda: run_process([*command, str(empty)]))
    wall, rss, out = best(repeat, lambda: run_process([*command, str(path)]))
    incidents = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {"seconds": wall, "rss": rss, "startup_seconds": startup, "startup_rss": startup_rss,
            "incidents": incidents}


def core_paths(path: Path, line_path_bytes: int, repeat: int) -> dict:
    """In this process, without start-up or matching: the fast path over the whole file, and the
    line-by-line path (every line normalised and assembled) over its first `line_path_bytes`."""
    sys.path.insert(0, str(ROOT))
    from analyzer.core.notices import NoticeDetector
    from analyzer.core.scan import FileScanner
    from analyzer.core.triggers import TriggerFinder
    from analyzer.sources.chunkscan import ChunkScanner
    from analyzer.sources.files import read_chunks
    from analyzer.sources.lines import split_lines, utf8_chunks
    from analyzer.sources.packs import load_packs

    notices = NoticeDetector(load_packs().patterns)

    def fast():
        start = time.perf_counter()
        scanner = ChunkScanner(str(path), notices)
        events = 0
        for chunk in utf8_chunks(read_chunks(str(path), print)):
            events += len(scanner.feed(chunk))
        events += len(scanner.finish())
        return time.perf_counter() - start, events, scanner.lines

    def by_line():
        start = time.perf_counter()
        scanner = FileScanner(str(path), notices)
        lines = 0
        with open(path, "rb") as stream:
            for raw in split_lines([stream.read(line_path_bytes)]):
                scanner.feed(raw)
                lines += 1
        return time.perf_counter() - start, lines

    def parts():
        """The two passes over every byte the fast path cannot avoid, on chunks already read."""
        chunks = list(utf8_chunks(read_chunks(str(path), print)))
        finder = TriggerFinder(notices.keywords)
        start = time.perf_counter()
        for chunk in chunks:
            finder.scan(chunk)
        middle = time.perf_counter()
        for chunk in chunks:
            chunk.count(b"\n")
        return middle - start, time.perf_counter() - middle

    wall, events, lines = best(repeat, fast)
    line_wall, line_lines = best(1, by_line)
    triggers, newlines = best(repeat, parts)
    return {"fast_seconds": wall, "fast_events": events, "fast_lines": lines,
            "trigger_scan_seconds": triggers, "newline_count_seconds": newlines,
            "line_seconds": line_wall, "line_bytes": line_path_bytes, "line_lines": line_lines}


def drain3(path: Path, limit_bytes: int) -> dict | None:
    """Drain3 template mining over the first `limit_bytes` (it is far slower), with the usual
    masking of numbers and hex ids; None when drain3 is not installed."""
    try:
        from drain3 import TemplateMiner
        from drain3.masking import MaskingInstruction
        from drain3.template_miner_config import TemplateMinerConfig
    except ImportError:
        return None
    config = TemplateMinerConfig()
    config.masking_instructions = [MaskingInstruction(r"\b[0-9a-f]{16,}\b", "HEX"),
                                   MaskingInstruction(r"\d+(?:\.\d+)*", "NUM")]
    config.drain_max_clusters = 1000
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    with open(path, "rb") as stream:
        lines = stream.read(limit_bytes).decode("utf-8", "replace").splitlines()
    start = time.perf_counter()
    for line in lines:
        miner.add_log_message(line)
    wall = time.perf_counter() - start
    return {"seconds": wall, "bytes": limit_bytes, "lines": len(lines), "clusters": len(miner.drain.clusters)}


def check_truth(incidents: list[dict], truth: list[dict]) -> dict:
    """Whether every known error was reported, at its lines, and nothing else."""
    found = {(o["line_start"], o["line_end"]) for i in incidents for o in i["occurrences"]}
    expected = {(t["line_start"], t["line_end"]) for t in truth}
    return {"expected": len(expected), "found": len(found & expected),
            "missed": len(expected - found), "extra": len(found - expected)}
