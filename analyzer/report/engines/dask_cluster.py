"""The Dask engine: the same per-file scan as tasks on a `dask.distributed` cluster.

Without a scheduler address a local cluster of `jobs` worker processes is started and stopped
here; with one, the tasks go to that cluster, whose workers must see the log paths (a shared
file system) and have analyzer installed. Paths are sent absolute and given back as found.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import ExitStack

from analyzer.options import Options
from analyzer.report.engines import EngineError, lost_batch, split_batches
from analyzer.report.filescan import Batch, scan_batch

__all__ = ["scan_on_dask", "CONNECT_TIMEOUT"]

CONNECT_TIMEOUT = "20s"  # how long to keep trying a scheduler address


def scan_on_dask(paths: list[str], options: Options, jobs: int, scheduler: str | None) -> Iterator[Batch]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise EngineError("the dask engine needs dask.distributed: pip install 'analyzer[dask]'") from None
    as_found = {os.path.abspath(path): path for path in paths}
    with ExitStack() as stack:
        try:
            if scheduler:
                client = stack.enter_context(Client(scheduler, timeout=CONNECT_TIMEOUT))
            else:
                cluster = stack.enter_context(LocalCluster(
                    n_workers=max(jobs, 1), threads_per_worker=1, processes=True,
                    dashboard_address=None, silence_logs=logging.ERROR))
                client = stack.enter_context(Client(cluster))
        except (OSError, TimeoutError) as err:
            raise EngineError(f"cannot reach the Dask scheduler {scheduler or '(local)'}: {err}") from None
        batches = split_batches(list(as_found), jobs)
        futures = client.map(scan_batch, batches, options=options, pure=False)
        sent = {future.key: batch for future, batch in zip(futures, batches)}
        for future in as_completed(futures):
            batch = sent.pop(future.key)
            try:
                result: Batch = future.result()
            except Exception as err:
                result = lost_batch(batch, err)
            yield Batch(tuple(r.at(as_found[r.path]) for r in result.results), result.pack_problems)
