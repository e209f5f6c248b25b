"""Where the files are scanned: a local process pool, or a Dask cluster. Both yield the same
batches of per-file results, in completion order, for the caller to cache and aggregate."""

from __future__ import annotations

import math
from collections.abc import Iterator

from analyzer.options import Options
from analyzer.report.choices import ENGINES
from analyzer.report.filescan import Batch, FileResult
from analyzer.report.health import FileStatus

__all__ = ["ENGINES", "run_engine", "split_batches", "lost_batch", "EngineError"]



class EngineError(Exception):
    """The engine cannot start (a missing extra, an unreachable scheduler): one line for the user."""


def run_engine(engine: str, paths: list[str], options: Options, jobs: int,
               scheduler: str | None = None) -> Iterator[Batch]:
    if engine == "dask":
        from analyzer.report.engines.dask_cluster import scan_on_dask

        return scan_on_dask(paths, options, jobs, scheduler)
    from analyzer.report.engines.local import scan_locally

    return scan_locally(paths, options, jobs)


def split_batches(paths: list[str], jobs: int, most: int = 32) -> list[list[str]]:
    """Batches small enough to keep every worker busy to the end, big enough to amortise a task."""
    size = max(1, min(most, math.ceil(len(paths) / (max(jobs, 1) * 4))))
    return [paths[i:i + size] for i in range(0, len(paths), size)]


def lost_batch(paths: list[str], err: BaseException) -> Batch:
    """A batch whose worker died: its files are reported as failed and are not cached."""
    reason = f"worker failed: {type(err).__name__}: {err}"
    return Batch(tuple(FileResult(path, 0, 0, FileStatus.FAILED, reason) for path in paths))
