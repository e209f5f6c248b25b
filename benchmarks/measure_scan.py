"""Scan throughput on one log file: `analyzer scan` and what to compare it with.

Each measurement is the best of `repeat` runs on a file already in the page cache, and counts
CPU seconds (user and system) besides wall seconds: on a shared machine the CPU time of a run is
what its own work cost, the wall time also holds the waits for other jobs. Results are plain
dicts for run.py.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANALYZER = [sys.executable, "-m", "analyzer"]


# Runs a command and reports its rusage on stderr. The command is started from this small process
# rather than from the benchmark's: a child's peak RSS counts the pages of the process it was
# forked from until it execs, and the benchmark holds a whole log in memory at times.
_RUSAGE = """
import json, os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, time.perf_counter() - start,
           usage.ru_maxrss * 1024], sys.stderr)
"""


def run_process(command: list[str]) -> tuple[float, float, int, str]:
    """CPU seconds, wall seconds, peak RSS in bytes and stdout of one command."""
    done = subprocess.run([sys.executable, "-c", _RUSAGE, *command], capture_output=True, cwd=ROOT, check=True)
    code, cpu, wall, rss = json.loads(done.stderr)
    if code not in (0, 1):  # grep -c says 1 when nothing matched
        raise RuntimeError(f"{' '.join(command)} exited {code}")
    return cpu, wall, rss, done.stdout.decode("utf-8", "replace")


def compile_as_installed() -> None:
    """Write the package's bytecode, as installing it does: this environment may not write it
    (PYTHONDONTWRITEBYTECODE), and compiling every module again would cost each run 0.1 s."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "analyzer")], check=True)


def analyzer_command(installed: str | None) -> list[str]:
    """How to start analyzer: an installed one's executable (such as a wheel's, whose core is compiled: what
    `pip install .` gives), or else the checkout's code, its bytecode written first as installing it would be."""
    if installed:
        return [str(Path(installed).resolve())]
    compile_as_installed()
    return ANALYZER


def best(repeat: int, measure):
    """The run that took the least CPU time (each measure returns it first)."""
    runs = [measure() for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def clocked(work) -> tuple[float, float, object]:
    """CPU and wall seconds of `work()` in this process, and its result."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def warm(path: Path) -> tuple[int, int]:
    """Read the file once (page cache); returns its size and line count."""
    size = lines = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 24):
            size += len(chunk)
            lines += chunk.count(b"\n")
    return size, lines


def grep_count(path: Path, repeat: int) -> dict:
    cpu, wall, rss, out = best(repeat, lambda: run_process(["grep", "-c", "Traceback", str(path)]))
    return {"cpu": cpu, "seconds": wall, "rss": rss, "matches": int(out.strip() or 0)}


def python_iteration(path: Path, repeat: int) -> dict:
    """`for line in file` over the bytes, in this process: the floor of any per-line Python work."""
    def lines():
        with open(path, "rb") as stream:
            return sum(1 for _ in stream)
    cpu, wall, count = best(repeat, lambda: clocked(lines))
    return {"cpu": cpu, "seconds": wall, "lines": count}


def analyzer_scan(path: Path, empty: Path, repeat: int) -> dict:
    """`analyzer scan --format jsonl` end to end, and the same on an empty file (its fixed cost:
    interpreter, imports, pattern packs). The runs alternate, and the cost of the log itself is the
    median of the differences of neighbouring runs: the best of each alone may come from different
    moments of a busy machine."""
    command = [*analyzer_command(None), "scan", "--format", "jsonl"]
    pairs = [(run_process([*command, str(empty)]), run_process([*command, str(path)])) for _ in range(repeat)]
    startup_cpu, startup, startup_rss, _ = min((pair[0] for pair in pairs), key=lambda run: run[0])
    cpu, wall, rss, out = min((pair[1] for pair in pairs), key=lambda run: run[0])
    incidents = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {"cpu": cpu, "seconds": wall, "rss": rss, "startup_cpu": startup_cpu, "startup_seconds": startup,
            "startup_rss": startup_rss, "incidents": incidents,
            "net_cpu": statistics.median(full[0] - bare[0] for bare, full in pairs),
            "net_seconds": statistics.median(full[1] - bare[1] for bare, full in pairs)}


def core_paths(path: Path, line_path_bytes: int, repeat: int) -> dict:
    """In this process, without start-up or matching: the fast path over the whole file, and the
    line-by-line path (every line normalised and assembled) over its first `line_path_bytes`."""
    sys.path.insert(0, str(ROOT))
    from analyzer.core.notices import NoticeDetector
    from analyzer.core.scan import FileScanner
    from analyzer.core.triggers import TriggerFinder
    from analyzer.sources.chunkscan import ChunkScanner, _newlines  # timed on its own
    from analyzer.sources.files import read_chunks
    from analyzer.sources.lines import split_lines, utf8_chunks
    from analyzer.sources.packs import load_packs

    notices = NoticeDetector(load_packs().patterns)

    def fast():
        scanner = ChunkScanner(str(path), notices)
        events = 0
        for chunk in utf8_chunks(read_chunks(str(path), print)):
            events += len(scanner.feed(chunk))
        return events + len(scanner.finish()), scanner.lines

    def by_line():
        scanner = FileScanner(str(path), notices)
        with open(path, "rb") as stream:
            for raw in split_lines([stream.read(line_path_bytes)]):
                scanner.feed(raw)
        return scanner.lines

    chunks = list(utf8_chunks(read_chunks(str(path), print)))  # the two passes over every byte,
    finder = TriggerFinder(notices.keywords)  # on chunks already read
    cpu, wall, (events, lines) = best(repeat, lambda: clocked(fast))
    line_cpu, line_wall, line_lines = clocked(by_line)
    trigger_cpu, _, _ = best(repeat, lambda: clocked(lambda: [finder.scan(chunk) for chunk in chunks]))
    newline_cpu, _, _ = best(repeat, lambda: clocked(lambda: [_newlines(chunk, 0, len(chunk)) for chunk in chunks]))
    return {"fast_cpu": cpu, "fast_seconds": wall, "fast_events": events, "fast_lines": lines,
            "trigger_scan_cpu": trigger_cpu, "newline_count_cpu": newline_cpu,
            "line_cpu": line_cpu, "line_seconds": line_wall, "line_bytes": line_path_bytes, "line_lines": line_lines}


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
    cpu, wall, _ = clocked(lambda: [miner.add_log_message(line) for line in lines])
    return {"cpu": cpu, "seconds": wall, "bytes": limit_bytes, "lines": len(lines),
            "clusters": len(miner.drain.clusters)}


def check_truth(path: Path, incidents: list[dict], truth: list[dict]) -> dict:
    """Whether every known error was read at its lines, nothing else was, and the scan counted them all.
    An incident keeps only a sample of its occurrences, so the lines are checked on the engine's
    events (the same reading, in this process) and the scan's incidents by their counts."""
    from analyzer.engine import Engine, Options

    events = [e for e in Engine(Options()).events([str(path)], lambda problem: None) if not e.provisional]
    found = {(e.span.line_start, e.span.line_end) for e in events}
    expected = {(t["line_start"], t["line_end"]) for t in truth}
    counted = sum(i["count"] for i in incidents)
    return {"expected": len(expected), "found": len(found & expected), "missed": len(expected - found),
            "extra": len(found - expected) + abs(counted - len(events))}
