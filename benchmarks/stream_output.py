"""Stream output: bytes printed when many ranks fail the same way on stdin (issue 16).

N ranks print the same traceback at once, interleaved line by line (benchmarks/soak.py's `ranks`
workload, one wave), written into `analyzer scan -` through a real pipe in 64 KiB writes. Per run:
the bytes and lines printed, the largest line, the objects (JSON) printed for the one incident, and
wall seconds. `--code DIR` runs another checkout (a copy of main, for the figures before a change).

    python benchmarks/stream_output.py --ranks 2000 20000
    python benchmarks/stream_output.py --ranks 2000 --code /tmp/main-copy --timeout 300
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import DATA, ROOT, write_ranks


def _feed(pipe, path: Path) -> None:
    try:
        with open(path, "rb") as log:
            while chunk := log.read(1 << 16):
                pipe.write(chunk)
        pipe.close()
    except BrokenPipeError:  # the scan was stopped (--timeout)
        pass


def measure(path: Path, fmt: str, code: Path, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "--format", fmt, "-"], cwd=code, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    threading.Thread(target=_feed, args=(proc.stdin, path), daemon=True).start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    printed = lines = longest = 0
    for line in proc.stdout:  # type: ignore[union-attr]
        printed += len(line)
        lines += 1
        longest = max(longest, len(line))
    proc.wait()
    timer.cancel()
    return {"format": fmt, "bytes": printed, "lines": lines, "longest": longest,
            "seconds": round(time.monotonic() - started, 1), "finished": proc.returncode == 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a scan is stopped")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    print(f"{'ranks':>7} {'format':>6} {'bytes':>14} {'lines':>7} {'longest':>10} {'seconds':>8} finished")
    for ranks in args.ranks:
        path = DATA / f"stream_ranks_{ranks}.log"
        if not path.exists():
            write_ranks(path, ranks, ranks)
        for fmt in ("jsonl", "text"):
            run = measure(path, fmt, args.code.resolve(), args.timeout)
            print(f"{ranks:>7} {fmt:>6} {run['bytes']:>14,} {run['lines']:>7,} {run['longest']:>10,} "
                  f"{run['seconds']:>8} {run['finished']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
