"""The one pipeline under every front end: options resolved once, packs loaded once, inputs to incidents.

`scan`, `tui`, `report` and `patterns suggest` are thin callers of an `Engine`: it owns the matcher
and the notice detector (so no caller can forget one), reads inputs through the fast path where it
can, and reports what went wrong at the edges as typed `Problem`s instead of printing them.
"""

from __future__ import annotations

import contextlib
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from analyzer.core.incidents import Incident
from analyzer.core.matcher import Matcher
from analyzer.core.normalize import PeelMemo
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent
from analyzer.core.runconfig import RunConfig
from analyzer.core.scan import Analysis, Diagnoses
from analyzer.core.schema import Pattern
from analyzer.core.versions import Project, RunMatchers, TieredMatcher, version_note
from analyzer.core.yearless import Calendar
from analyzer.options import Options, run_of
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.files import (
    RESTART,
    STDIN,
    expand_paths,
    follow_chunks,
    is_stream,
    read_chunks,
    stream_chunks,
    walk_files,
)
from analyzer.sources.histories import Histories
from analyzer.sources.lines import Utf8Decoder, utf8_chunks
from analyzer.sources.packs import load_packs
from analyzer.sources.problems import OnProblem, Problem, ProblemKind
from analyzer.sources.sniff import TextSniffer

__all__ = ["Options", "Engine", "Result", "Progress", "STDIN", "run_of"]

Progress = Callable[[str, int, "int | None"], None]  # (input, lines read, byte position or None)
_WATCH_SECONDS = 1.0  # how often a followed directory is looked at for new files
_TICK_SECONDS = 0.1  # a stream quiet this long lets out what looks complete; output is coalesced per tick


@dataclass(frozen=True, slots=True)
class Result:
    """One finished scan: what was read, what was found, what went wrong."""

    files: tuple[str, ...]
    incidents: tuple[Incident, ...]
    events: int
    problems: tuple[Problem, ...] = field(default=())

    @property
    def input_lost(self) -> bool:
        return any(problem.kind.input_lost for problem in self.problems)


class Engine:
    """Loads the packs of `options` once; then any number of scans, from any thread."""

    def __init__(self, options: Options = Options(), patterns: Iterable[Pattern] | None = None) -> None:
        """`patterns`, when given, are used instead of loading packs (tests, embedding)."""
        self.options = options
        if patterns is None:
            packs = load_packs(options.pattern_dirs, builtin=options.builtin, use_env=False)
            self.matcher = Matcher(packs)  # reads only the candidates each message needs
            problems = [Problem(ProblemKind.PATTERN, p.where, p.message) for p in packs.problems]
        else:
            self.matcher, problems = Matcher(tuple(patterns)), []
        self.problems: tuple[Problem, ...] = tuple(problems)  # broken pack files and entries, skipped
        self.notices = NoticeDetector(self.matcher.line_patterns())
        self._run_matchers = RunMatchers(self.matcher, Histories(options.pattern_dirs))  # histories read lazily
        self._runs: dict[str, str] = {}  # file -> the run it belongs to, as `expand` found it
        self._configs: dict[str, RunConfig] = {}  # file -> its run's configuration, as its lines told it
        self._diagnosed: Diagnoses = {}  # shared by its analyses: a report's files repeat their errors
        self._peels = PeelMemo()  # ... as do their lines

    def analysis(self) -> Analysis:
        """An empty incident grouping with this engine's matcher and options."""
        options = self.options
        runs = self._runs
        return Analysis(self.matcher, options.window_seconds, options.app_packages, options.run_gap_seconds,
                        run_of=lambda file: runs.get(file, file), matcher_for=self.matcher_for,
                        diagnosed=self._diagnosed)

    def matcher_for(self, file: str) -> TieredMatcher:
        """The matcher of the run `file` belongs to, as far as its lines have told its server and
        release: only that server's patterns, that release's lines first (core/versions.py)."""
        config = self._configs.get(file)
        if (config is None or not config.known) and self._runs.get(file, file) != file:
            config = self.run_config(file)  # another log of its run may have told it
        server = Project(config.server.value) if config is not None and config.server is not None else None
        version = config.version if config is not None and server is not None else None
        return self._run_matchers.for_run(server, {server.value: version} if server and version else {})

    def releases(self, pattern: Pattern, run: RunConfig | None = None) -> str:
        """The releases line of a pattern's page (`raised in 0.4.7–0.4.10; ...`), for `run`'s release."""
        versions = {run.server.value: run.version} if run is not None and run.server and run.version else {}
        return version_note(pattern, self._run_matchers.histories, versions)

    def expand(self, paths: Iterable[str], on_problem: OnProblem, follow: bool = False) -> list[str]:
        """The files to read: directories walked, each file once however often it was named. Each
        file's run is noted (`run_of`) for the analyses made after.

        To be followed, a missing file is kept (it is waited for, as `tail -F` does) and a directory
        is kept whole (its files are followed, and so is each file created in it later)."""
        files: list[str] = []
        seen: set[str] = set()
        for argument in paths:
            if follow and argument != STDIN and (os.path.isdir(argument) or not os.path.lexists(argument)):
                if os.path.realpath(argument) not in seen:
                    seen.add(os.path.realpath(argument))
                    files.append(argument)
                continue
            found = list(expand_paths([argument], on_problem))
            if not found and os.path.isdir(argument):
                on_problem(Problem(ProblemKind.NO_LOGS, argument, "a directory with no files to read"))
            for path in found:
                key = path if path == STDIN else os.path.realpath(path)
                if key not in seen:
                    seen.add(key)
                    files.append(path)
                    self._runs["<stdin>" if path == STDIN else path] = run_of(path, argument)
        return files

    def run_config(self, file: str) -> RunConfig | None:
        """The configuration the log `file` showed (settings, launch command), once it was read."""
        found = self._configs.get(file)
        run = self._runs.get(file)  # (None: a file read without `expand`, a run of its own)
        if (found is None or not found.known) and run is not None:  # another file of the same run may have shown it
            # a copy: reader threads of other inputs may add configurations while this looks
            found = next((config for other, config in list(self._configs.items())
                          if config.known and self._runs.get(other) == run), found)
        return found

    def chunk_scanner(self, path: str, live: bool = False, status: os.stat_result | None = None) -> ChunkScanner:
        """The fast path over one input's bytes (a caller that reads the chunks itself); `live`: the input is being
        written while it is read (stdin, a followed file), so that a stamp printed without a year is dated by today,
        not by when the file was last written; `status`: the input's `os.stat`, where the caller took it (else it is
        taken here: its size, see ChunkScanner, and when it was written)."""
        if status is None and not live:
            with contextlib.suppress(OSError):
                status = os.stat(path)
        size, written = 0, datetime.now()
        if status is not None and stat.S_ISREG(status.st_mode):
            size = status.st_size
            if not live:
                written = datetime.fromtimestamp(status.st_mtime)
        return ChunkScanner(path, self.notices, peels=self._peels, size=size, calendar=Calendar(written), anchored=True)

    def events(self, files: list[str], on_problem: OnProblem, follow: bool = False,
               progress: Progress | None = None, stopped: Callable[[], bool] = lambda: False,
               on_tick: Callable[[], None] | None = None) -> Iterator[ErrorEvent]:
        """Events from every input. Plain files are read one after another; followed files, stdin
        and pipes are read by threads and interleave as their chunks arrive. All go through the
        fast path.

        `progress(path, lines, offset)` reports the lines read from an input and, for a file read
        once to its end, the byte position reached (None otherwise); `stopped` ends the scan early;
        `on_tick()` is called on streams when they are quiet and at least every tick while they are
        busy, after the events before it were taken (an output coalesced per tick prints then).
        """
        if not follow and not any(is_stream(path) for path in files):
            for path in files:
                yield from self._file_events(path, on_problem, progress, stopped)
                if stopped():
                    return
            return
        yield from self._stream_events(files, on_problem, follow, progress, stopped, on_tick or (lambda: None))

    def analyse(self, paths: Iterable[str], on_problem: OnProblem | None = None, follow: bool = False) -> Result:
        """Scan `paths` to their end (or Ctrl-C, which the caller sees after the result is kept)."""
        problems: list[Problem] = []

        def problem(found: Problem) -> None:
            problems.append(found)
            if on_problem is not None:
                on_problem(found)

        files = self.expand(paths, problem, follow)
        analysis = self.analysis()
        for event in self.events(files, problem, follow):
            analysis.add(event)
        return Result(tuple(files), tuple(analysis.incidents()), analysis.events, tuple(problems))

    def _file_events(self, path: str, on_problem: OnProblem, progress: Progress | None,
                     stopped: Callable[[], bool]) -> Iterator[ErrorEvent]:
        scanner = self.chunk_scanner(path)
        try:
            yield from self._read_file(path, scanner, on_problem, progress, stopped)
        except Exception as error:  # (a bug met on one input costs the rest of it, not the other inputs)
            on_problem(_broke(path, scanner.lines, error))

    def _read_file(self, path: str, scanner: ChunkScanner, on_problem: OnProblem, progress: Progress | None,
                   stopped: Callable[[], bool]) -> Iterator[ErrorEvent]:
        reached = [0]  # the byte position of the last chunk read, told again once held chunks are scanned

        def on_read(offset: int) -> None:
            reached[0] = offset
            if progress is not None:
                progress(path, scanner.lines, offset)

        sniffer = TextSniffer()
        held: list[bytes] = []  # the first chunks, until the sniffer has seen enough to tell text from binary
        for chunk in utf8_chunks(read_chunks(path, on_problem, on_read=on_read)):
            if not sniffer.decided:
                sniffer.feed(chunk)
                held.append(chunk)
                if not sniffer.decided:
                    continue
                if sniffer.binary:
                    break
            for piece in held or (chunk,):
                yield from self._configured(path, scanner, scanner.feed(piece))
            held = []
            if stopped():
                return
        if sniffer.binary:
            on_problem(Problem(ProblemKind.BINARY, path, "binary, not a log: skipped"))
            return
        for piece in held:
            yield from self._configured(path, scanner, scanner.feed(piece))
        if held and progress is not None:
            progress(path, scanner.lines, reached[0])
        yield from scanner.finish()
        self._configs[path] = scanner.scanner.run_config

    def _configured(self, path: str, scanner: ChunkScanner, events: list[ErrorEvent]) -> list[ErrorEvent]:
        """`events`, after noting what the input showed of its run so far: their matcher depends on it."""
        if events:
            self._configs[path] = scanner.scanner.run_config
        return events

    def _stream_events(self, files: list[str], on_problem: OnProblem, follow: bool, progress: Progress | None,
                       stopped: Callable[[], bool], on_tick: Callable[[], None]) -> Iterator[ErrorEvent]:
        """Inputs read by one thread each, their chunks through the fast path as they arrive; when
        all are quiet for a moment, the records that are complete are let out (for latency)."""
        chunks: queue.Queue = queue.Queue(maxsize=8)  # chunks of up to 1 MiB: what waits stays a few MB
        stop = threading.Event()
        done = object()

        def pump(path: str) -> None:
            if is_stream(path):
                source: Iterator = stream_chunks(path, on_problem)
            elif follow:
                source = follow_chunks(path, on_problem, stop=stop.is_set)
            else:
                source = read_chunks(path, on_problem)
            try:
                for chunk in source:
                    chunks.put((path, chunk))
                    if stop.is_set():
                        break
            finally:
                chunks.put((path, done))

        def watch(directory: str) -> None:
            """Follow every file in `directory`, those there now and those created later; never ends
            by itself (a followed directory may be empty until the server starts writing)."""
            pumped: set[str] = set()
            said: set[str] = set()

            def once(problem: Problem) -> None:  # looked at every second: each problem is told once
                if str(problem) not in said:
                    said.add(str(problem))
                    on_problem(problem)

            while not stop.is_set():
                for path in walk_files(directory, once):
                    if path not in pumped:
                        pumped.add(path)
                        chunks.put((path, started))
                        threading.Thread(target=pump, args=(path,), daemon=True).start()
                stop.wait(_WATCH_SECONDS)

        started = object()  # a watched directory's new file: one more input that will end with `done`
        watched = [path for path in files if follow and os.path.isdir(path)]
        readers = {path: _StreamReader(self, path, on_problem, follow) for path in files if path not in watched}
        for path in files:
            threading.Thread(target=watch if path in watched else pump, args=(path,), daemon=True).start()
        running, closed = len(files), False
        ticked = time.monotonic()
        try:
            while running and not stopped():
                if time.monotonic() - ticked >= _TICK_SECONDS:  # busy: the tick comes all the same
                    on_tick()
                    ticked = time.monotonic()
                try:
                    path, chunk = chunks.get(timeout=_TICK_SECONDS)
                except queue.Empty:
                    for reader in readers.values():
                        yield from reader.idle()
                    on_tick()
                    ticked = time.monotonic()
                    continue
                if chunk is started:
                    running += 1
                    readers[path] = _StreamReader(self, path, on_problem, follow)
                    continue
                reader = readers[path]
                if chunk is done:
                    running -= 1
                    yield from reader.finish()
                elif chunk is None:
                    yield from reader.idle()
                elif chunk is RESTART:  # a followed file was replaced or cut: its text so far has ended
                    yield from reader.finish()
                    readers[path] = _StreamReader(self, path, on_problem, follow)
                else:
                    yield from reader.feed(chunk)
                    if progress is not None:
                        progress(path, reader.lines, None)
        except GeneratorExit:  # the consumer is gone: nothing is left to report to
            closed = True
            raise
        finally:
            stop.set()
            if running and not closed:  # interrupted (Ctrl-C): what was assembled so far is still reported
                for reader in readers.values():
                    yield from reader.finish()


def _broke(where: str, lines: int, error: Exception) -> Problem:
    """A bug in the scan, met on an input: what was found before it is kept, the rest of that input is not read."""
    return Problem(ProblemKind.INTERNAL, f"{where}:{lines}", f"the scan broke after this line and read no more of this "
                   f"input ({type(error).__name__}: {error}); what it found before is kept (a bug: please report it)")


class _StreamReader:
    """One streamed input's decoder and fast-path scanner. Before it lets events out, it notes what
    the input showed of its run's configuration (the fixes of those events use it)."""

    def __init__(self, engine: Engine, path: str, on_problem: OnProblem, follow: bool) -> None:
        """`follow`: the input is followed; it, or a stream (stdin, a pipe), is being written while it is read
        (see Engine.chunk_scanner)."""
        self.file = "<stdin>" if path == STDIN else path
        self._decoder = Utf8Decoder()
        self._live = follow or is_stream(path)
        self._scanner = engine.chunk_scanner(self.file, live=self._live)
        self._day = date.today()
        self._configs = engine._configs
        self._on_problem = on_problem
        self._broken = False  # the scan broke on this input (see _guarded)

    def _out(self, events: list[ErrorEvent]) -> list[ErrorEvent]:
        if events:
            self._configs[self.file] = self._scanner.scanner.run_config
        return events

    @property
    def lines(self) -> int:
        return self._scanner.lines

    def feed(self, chunk: bytes) -> list[ErrorEvent]:
        if self._live and date.today() != self._day:  # (a stream read over New Year: its January is this year's)
            self._day = date.today()
            if (calendar := self._scanner.calendar) is not None:
                self._scanner.redate(replace(calendar, written=datetime.now()))
        text = self._decoder.feed(chunk)
        return self._guarded(lambda: self._scanner.feed(text) if text else [])

    def idle(self) -> list[ErrorEvent]:
        return self._guarded(self._scanner.scanner.idle)

    def finish(self) -> list[ErrorEvent]:
        rest = self._decoder.finish()
        return self._guarded(lambda: (self._scanner.feed(rest) if rest else []) + list(self._scanner.finish()))

    def _guarded(self, scan: Callable[[], list[ErrorEvent]]) -> list[ErrorEvent]:
        """What `scan` found; where the scan broke (a bug), nothing more from this input, told once (see _broke)."""
        if self._broken:
            return []
        try:
            return self._out(scan())
        except Exception as error:
            self._broken = True
            self._on_problem(_broke(self.file, self.lines, error))
            return []
