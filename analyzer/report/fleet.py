"""Scanning a fleet of run logs: find the files, reuse cached results, scan the rest on an engine."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from analyzer.options import Options
from analyzer.report.cache import ResultCache, default_cache_path, settings_key
from analyzer.report.engines import run_engine
from analyzer.report.filescan import FileResult
from analyzer.report.health import FileStatus
from analyzer.report.runs import LogFile, PathLayout, discover
from analyzer.sources.problems import OnProblem, Problem

__all__ = ["FleetOptions", "FleetScan", "scan_fleet", "collector_paused"]

_DEFAULTS = Options()
_NOT_CACHED = frozenset({FileStatus.UNREADABLE, FileStatus.FAILED})  # may be fixed without the file changing


@dataclass(frozen=True, slots=True)
class FleetOptions:
    path_regex: str | None = None  # named groups run, host, date, version (see runs.py)
    include: tuple[str, ...] = ()  # file-name globs; empty: every file
    engine: str = "local"  # local | dask
    jobs: int = 0  # workers; 0: one per core
    scheduler: str | None = None  # a Dask scheduler address; None: a local cluster
    cache: str | Path | bool = True  # True: the default cache file; False: none
    patterns: tuple[str, ...] = ()  # extra pattern pack directories ($ANALYZER_PATTERNS goes before them)
    builtin: bool = True
    window_seconds: float = _DEFAULTS.window_seconds
    run_gap_seconds: float = _DEFAULTS.run_gap_seconds
    app_packages: tuple[str, ...] = ()

    def analysis_options(self) -> Options:
        """The engine's options; $ANALYZER_PATTERNS is read here, once, so remote workers need not
        share the environment, and pack paths are made absolute for workers elsewhere."""
        return Options.resolve((os.path.abspath(d) for d in self.patterns), builtin=self.builtin,
                               window_seconds=self.window_seconds, run_gap_seconds=self.run_gap_seconds,
                               app_packages=tuple(self.app_packages))


@dataclass(frozen=True, slots=True, eq=False)
class FleetScan:
    files: tuple[LogFile, ...]
    results: tuple[FileResult, ...]  # one per file, same order
    problems: tuple[Problem, ...]  # inputs that were not there, broken pattern entries, cache trouble
    scanned: int
    cached: int


def scan_fleet(paths: list[str], options: FleetOptions = FleetOptions(),
               on_problem: OnProblem | None = None,
               on_progress: Callable[[int, int], None] | None = None) -> FleetScan:
    """Raises ValueError for a bad path regex and EngineError when the engine cannot start;
    anything wrong with a log file is that file's status instead."""
    problems: list[Problem] = []

    def problem(found: Problem) -> None:
        if found not in problems:
            problems.append(found)
            if on_problem is not None:
                on_problem(found)

    layout = PathLayout(options.path_regex)
    files, seen = [], set()
    for path, argument in discover(list(paths), options.include, problem):
        if path not in seen:  # the same file named twice is one file
            seen.add(path)
            files.append(layout.describe(path, argument))
    settings = options.analysis_options()
    stats = _stats(file.path for file in files)
    cache = _open_cache(options.cache, settings, problem)
    try:
        with collector_paused():
            results = cache.lookup(stats) if cache else {}
        cached = len(results)
        todo = [file.path for file in files if file.path not in results]
        if on_progress is not None:
            on_progress(len(results), len(files))
        if todo:
            jobs = options.jobs or os.cpu_count() or 1
            for batch in run_engine(options.engine, todo, settings, jobs, options.scheduler):
                for pack_problem in batch.pack_problems:
                    problem(pack_problem)
                if cache:
                    cache.store(r for r in batch.results if r.status not in _NOT_CACHED)
                results.update((r.path, r) for r in batch.results)
                if on_progress is not None:
                    on_progress(len(results), len(files))
    finally:
        if cache:
            cache.close()
    return FleetScan(tuple(files), tuple(results[file.path] for file in files), tuple(problems),
                     scanned=len(files) - cached, cached=cached)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while rows are decoded or aggregated: tens of thousands of
    objects, all kept and none in a cycle, which the collector would walk again and again (a fifth
    of a warm report). Never around a scan, which makes garbage of its own."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _stats(paths) -> dict[str, tuple[int, int]]:
    stats = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue  # the scan reports it
        stats[path] = (info.st_size, info.st_mtime_ns)
    return stats


def _open_cache(choice: str | Path | bool, settings: Options, problem: OnProblem) -> ResultCache | None:
    if choice is False or choice is None:
        return None
    path = default_cache_path() if choice is True else Path(choice)
    cache = ResultCache(path, settings_key(settings), problem)
    return cache if cache.usable else None
