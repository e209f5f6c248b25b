"""The local engine: a pool of worker processes, each loading the pattern packs once."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from analyzer.report.engines import lost_batch, split_batches
from analyzer.report.filescan import Batch, ScanSettings, scan_batch

__all__ = ["scan_locally", "IN_PROCESS_BELOW"]

IN_PROCESS_BELOW = 48  # fewer files than this are scanned here: starting workers costs more


def scan_locally(paths: list[str], settings: ScanSettings, jobs: int) -> Iterator[Batch]:
    if jobs <= 1 or len(paths) < IN_PROCESS_BELOW:
        for batch in split_batches(paths, 1, most=8):
            yield scan_batch(batch, settings)
        return
    # spawn, not fork: the parent may run a progress thread, and fork copies held locks
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        pending: dict[Future, list[str]] = {
            pool.submit(scan_batch, batch, settings): batch for batch in split_batches(paths, jobs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                batch = pending.pop(future)
                try:
                    yield future.result()
                except Exception as err:  # noqa: BLE001 - a crashed worker fails its files, not the report
                    yield lost_batch(batch, err)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
