"""Scanning one log file for the fleet report: the same pipeline as `analyzer scan`, kept as rows.

This is what runs in worker processes (local pool or Dask), so everything here is picklable and
the engine (its pattern packs) is built once per process and options, not once per file.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from analyzer.core.runconfig import RunConfig
from analyzer.options import Options
from analyzer.report.health import FileStatus, tail_state
from analyzer.report.rows import IncidentRow, run_config_data, run_config_from_data
from analyzer.sources.files import read_chunks
from analyzer.sources.lines import utf8_chunks
from analyzer.sources.problems import Problem
from analyzer.sources.sniff import TextSniffer

if TYPE_CHECKING:
    from analyzer.engine import Engine

__all__ = ["FileResult", "Batch", "scan_file", "scan_batch"]


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    size: int
    mtime_ns: int
    status: FileStatus
    detail: str | None = None  # why the status is not ok
    lines: int = 0
    started: str | None = None  # ISO time of the first prefixed line
    host: str | None = None  # first host named by the log's prefixes
    version: str | None = None  # e.g. "sglang 0.5.23", from the log's banner
    incidents: tuple[IncidentRow, ...] = field(default=())
    run: RunConfig | None = None  # the configuration the log showed (settings, launch command)

    def to_json(self) -> str:
        data = {name: getattr(self, name) for name in _SCALARS}
        data.update(status=self.status.value, incidents=[row.data() for row in self.incidents],
                    run=run_config_data(self.run) if self.run else None)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> FileResult:
        """KeyError, TypeError or ValueError for text of another shape."""
        data = json.loads(text)
        return cls(**{name: data[name] for name in _SCALARS}, status=_STATUSES[data["status"]],
                   incidents=tuple(IncidentRow.from_data(row) for row in data["incidents"]),
                   run=run_config_from_data(data["run"]))

    def at(self, path: str) -> FileResult:
        return self if path == self.path else replace(self, path=path)


_SCALARS = ("path", "size", "mtime_ns", "detail", "lines", "started", "host", "version")
_STATUSES = {status.value: status for status in FileStatus}


@dataclass(frozen=True, slots=True)
class Batch:
    results: tuple[FileResult, ...]
    pack_problems: tuple[Problem, ...] = ()


_engines: dict[Options, Engine] = {}
_engines_lock = threading.Lock()


def _engine(options: Options) -> Engine:
    """One engine per process and options (Dask may run tasks on threads of one process)."""
    from analyzer.engine import Engine  # only a cold scan needs it: a warm report reads the cache alone

    with _engines_lock:
        if options not in _engines:
            _engines[options] = Engine(options)
        return _engines[options]


def scan_batch(paths: list[str], options: Options) -> Batch:
    engine = _engine(options)
    return Batch(tuple(scan_file(path, engine) for path in paths), engine.problems)


def scan_file(path: str, engine: Engine) -> FileResult:
    """Never raises: whatever is wrong with the file becomes its status."""
    try:
        info = os.stat(path)
    except OSError as err:
        reason = "broken link" if os.path.islink(path) else (err.strerror or str(err))
        return FileResult(path, 0, 0, FileStatus.UNREADABLE, reason)
    if not stat.S_ISREG(info.st_mode):
        return FileResult(path, 0, info.st_mtime_ns, FileStatus.UNREADABLE, "not a regular file")
    bare = FileResult(path, info.st_size, info.st_mtime_ns, FileStatus.EMPTY, "0 bytes")
    if info.st_size == 0:
        return bare
    try:
        return _scan(bare, info, engine)
    except OSError as err:
        return replace(bare, status=FileStatus.UNREADABLE, detail=err.strerror or str(err))
    except Exception as err:
        return replace(bare, status=FileStatus.FAILED, detail=f"{type(err).__name__}: {err}")


def _scan(bare: FileResult, info: os.stat_result, engine: Engine) -> FileResult:
    """The fast path of `analyzer scan` (whole chunks, only lines that can matter parsed), with
    the first chunk looked at before: binary files stop there."""
    from analyzer.core import versions  # with the engine, which a warm report does not load

    path = bare.path
    half_written = tail_state(path)  # also proves the file opens: a read problem later is a cut
    read_problems: list[Problem] = []
    analysis = engine.analysis()
    chunks = engine.chunk_scanner(path, status=info)
    sniffer = TextSniffer()
    for chunk in utf8_chunks(read_chunks(path, read_problems.append)):
        sniffer.feed(chunk)
        if sniffer.decided and sniffer.binary:
            break
        for event in chunks.feed(chunk):
            analysis.add(event)
    if sniffer.binary:
        return replace(bare, status=FileStatus.BINARY, detail="not text")
    if read_problems:  # a compressed stream cut short, a disk error mid-file
        half_written = read_problems[0].detail
    elif sniffer.blank:
        return replace(bare, detail="only blank lines or NUL bytes", lines=chunks.lines)
    for event in chunks.finish():
        analysis.add(event)
    started = chunks.scanner.first_timestamp
    run = chunks.scanner.run_config
    return replace(
        bare, status=FileStatus.PARTIAL if half_written else FileStatus.OK, detail=half_written, lines=chunks.lines,
        started=started.isoformat() if started else None, host=chunks.scanner.host,
        version=versions.detect_version(sniffer.head), incidents=tuple(IncidentRow.of(i) for i in analysis.incidents()),
        run=run if run.known else None)
