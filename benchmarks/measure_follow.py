"""Streaming latency: from a traceback's last line being written to its incident being printed.

`analyzer scan --follow FILE --format jsonl` (or `analyzer scan - --format jsonl`, with `--stdin`)
runs as a child process; each round appends a real traceback (one write) to FILE (or the child's
stdin pipe) after a quiet moment and times the wait until a JSON line shows it (the incidents'
counts add up to the tracebacks written so far). Issue #20's budget: under 150 ms.

    python benchmarks/measure_follow.py [--stdin] [--rounds 20]
"""

from __future__ import annotations

import json
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _traceback_text(round_no: int) -> str:
    try:
        {}[f"shard-{round_no}"]
    except KeyError as err:
        text = "".join(traceback.format_exception(err))
    head, rest = text.split("\n", 1)
    return f"[2026-08-28 10:00:{round_no % 60:02d} TP{round_no % 8}] Scheduler hit an exception: {head}\n{rest}"


def follow_latency(rounds: int = 20, quiet: float = 0.3, timeout: float = 60.0, seed: int = 0,
                   stdin: bool = False) -> dict:
    """The pause before each write varies by up to 0.1 s (the follower's polling period), so that
    the writes fall at every phase of its polling rather than always at the same one."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        first_line = "[2026-08-28 10:00:00] server_args=ServerArgs(tp_size=8, ...)\n"
        log.write_text(first_line, encoding="utf-8")
        source = ["-"] if stdin else ["--follow", str(log)]
        child = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", *source, "--format", "jsonl"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                 cwd=ROOT, text=True, bufsize=1)

        def write(text: str) -> float:
            """In one write; returns when it was written."""
            if not stdin:
                return _append(log, text)
            assert child.stdin is not None
            child.stdin.write(text)
            child.stdin.flush()
            return time.perf_counter()

        if stdin:
            write(first_line)
        printed: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [printed.put((time.perf_counter(), line)) for line in child.stdout],
                         daemon=True).start()
        counts: dict[str, int] = {}

        def shown(total: int) -> float:
            """When the incidents printed first add up to `total` occurrences."""
            while True:
                at, line = printed.get(timeout=timeout)
                incident = json.loads(line)
                counts[incident["id"]] = incident["count"]
                if sum(counts.values()) >= total:
                    return at

        try:
            started = time.perf_counter()
            write(_traceback_text(0))
            first = shown(1) - started  # the first one also waits for start-up and the packs
            latencies = []
            for round_no in range(1, rounds + 1):
                time.sleep(quiet + rng.uniform(0, 0.1))
                written = write(_traceback_text(round_no))
                latencies.append(shown(round_no + 1) - written)
        finally:
            child.terminate()
            child.wait(timeout=10)
    ordered = sorted(latencies)
    return {"rounds": rounds, "first_seconds": first, "median_ms": statistics.median(ordered) * 1000,
            "p95_ms": ordered[max(0, round(len(ordered) * 0.95) - 1)] * 1000, "max_ms": ordered[-1] * 1000}


def _append(path: Path, text: str) -> float:
    """Append in one write; returns when it was written."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(text)
    return time.perf_counter()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Latency of `analyzer scan --follow` or of a pipe into `analyzer scan -`.")
    parser.add_argument("--stdin", action="store_true", help="write into the scan's stdin instead of a followed file")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(follow_latency(args.rounds, stdin=args.stdin), indent=1))
