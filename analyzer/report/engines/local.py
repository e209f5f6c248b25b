"""The local engine: a pool of worker processes, each building the engine (its packs) once."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from analyzer.options import Options
from analyzer.report.engines import lost_batch, split_batches
from analyzer.report.filescan import Batch, scan_batch

__all__ = ["scan_locally", "IN_PROCESS_BELOW", "start_method"]

IN_PROCESS_BELOW = 48  # fewer files than this are scanned here: starting workers costs more


def start_method() -> str:
    """How to start workers so that any caller works.

    `spawn` re-imports the caller's main module in every worker: a script without an
    `if __name__ == "__main__":` guard would run again there and fail. `fork` needs no import, but
    copies locks other threads may hold. So: fork while this process runs a single thread (scripts,
    `python -`), spawn when it runs others (the CLI's progress bar; notebooks, whose main module
    spawn does not import)."""
    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods and threading.active_count() == 1 else "spawn"


def scan_locally(paths: list[str], options: Options, jobs: int) -> Iterator[Batch]:
    if jobs <= 1 or len(paths) < IN_PROCESS_BELOW:
        for batch in split_batches(paths, 1, most=8):
            yield scan_batch(batch, options)
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(start_method()))
    try:
        pending: dict[Future, list[str]] = {
            pool.submit(scan_batch, batch, options): batch for batch in split_batches(paths, jobs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                batch = pending.pop(future)
                try:
                    yield future.result()
                except Exception as err:
                    yield lost_batch(batch, err)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
