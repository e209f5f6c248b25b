"""The one pipeline under every front end: options resolved once, packs loaded once, inputs to incidents.

`scan`, `tui`, `report` and `patterns suggest` are thin callers of an `Engine`: it owns the matcher
and the notice detector (so no caller can forget one), reads inputs through the fast path where it
can, and reports what went wrong at the edges as typed `Problem`s instead of printing them.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from analyzer.core.incidents import Incident
from analyzer.core.matcher import Matcher
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent
from analyzer.core.scan import Analysis, FileScanner
from analyzer.core.schema import Pattern
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.files import (
    RESTART,
    STDIN,
    expand_paths,
    follow_lines,
    read_chunks,
    read_lines,
    stdin_lines,
    walk_files,
)
from analyzer.sources.lines import utf8_chunks
from analyzer.sources.packs import ENV_VAR, load_packs
from analyzer.sources.problems import OnProblem, Problem, ProblemKind
from analyzer.sources.sniff import TextSniffer

__all__ = ["Options", "Engine", "Result", "Progress", "STDIN"]

_WATCH_SECONDS = 1.0  # how often a followed directory is looked at for new files
Progress = Callable[[str, int, "int | None"], None]  # (input, lines read, byte position or None)


@dataclass(frozen=True, slots=True)
class Options:
    """Everything besides the logs that decides a scan's result; every default lives here."""

    pattern_dirs: tuple[str, ...] = ()  # user packs in precedence order, $ANALYZER_PATTERNS already in front
    builtin: bool = True  # load the packs shipped with analyzer
    window_seconds: float = 600.0  # the same error further apart than this is a new incident
    run_gap_seconds: float = 3600.0  # a quiet gap longer than this starts a new run
    app_packages: tuple[str, ...] = ()  # whose frames are the application's own (blame frame)

    @classmethod
    def resolve(cls, pattern_dirs: Iterable[str] = (), environ: dict[str, str] | None = None, **values) -> Options:
        """Options with $ANALYZER_PATTERNS read once, here: its packs come before `pattern_dirs`."""
        env = (os.environ if environ is None else environ).get(ENV_VAR, "")
        dirs = tuple(d for d in env.split(os.pathsep) if d) + tuple(pattern_dirs)
        return cls(pattern_dirs=dirs, **values)


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
        problems: list[Problem] = []
        if patterns is None:
            packs = load_packs(options.pattern_dirs, builtin=options.builtin, use_env=False)
            patterns = packs.patterns
            problems = [Problem(ProblemKind.PATTERN, p.where, p.message) for p in packs.problems]
        self.problems: tuple[Problem, ...] = tuple(problems)  # broken pack files and entries, skipped
        self.matcher = Matcher(tuple(patterns))
        self.notices = NoticeDetector(self.matcher.patterns)

    def analysis(self) -> Analysis:
        """An empty incident grouping with this engine's matcher and options."""
        options = self.options
        return Analysis(self.matcher, options.window_seconds, options.app_packages, options.run_gap_seconds)

    def expand(self, paths: Iterable[str], on_problem: OnProblem, follow: bool = False) -> list[str]:
        """The files to read: directories walked, each file once however often it was named.

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
        return files

    def chunk_scanner(self, path: str) -> ChunkScanner:
        """The fast path over one input's bytes (a caller that reads the chunks itself)."""
        return ChunkScanner(path, self.notices)

    def events(self, files: list[str], on_problem: OnProblem, follow: bool = False,
               progress: Progress | None = None, stopped: Callable[[], bool] = lambda: False) -> Iterator[ErrorEvent]:
        """Events from every input. Plain files are read one after another through the fast path;
        followed files and stdin are read by threads and interleave as their lines arrive.

        `progress(path, lines, offset)` reports the lines read from an input and, for a file read
        once to its end, the byte position reached (None otherwise); `stopped` ends the scan early.
        """
        if not follow and STDIN not in files:
            for path in files:
                yield from self._file_events(path, on_problem, progress, stopped)
                if stopped():
                    return
            return
        yield from self._stream_events(files, on_problem, follow, progress, stopped)

    def analyse(self, paths: Iterable[str], on_problem: OnProblem | None = None, follow: bool = False) -> Result:
        """Scan `paths` to their end (or Ctrl-C, which the caller sees after the result is kept)."""
        problems: list[Problem] = []

        def problem(found: Problem) -> None:
            problems.append(found)
            if on_problem is not None:
                on_problem(found)

        files = self.expand(paths, problem)
        analysis = self.analysis()
        for event in self.events(files, problem, follow):
            analysis.add(event)
        return Result(tuple(files), tuple(analysis.incidents()), analysis.events, tuple(problems))

    def _file_events(self, path: str, on_problem: OnProblem, progress: Progress | None,
                     stopped: Callable[[], bool]) -> Iterator[ErrorEvent]:
        scanner = self.chunk_scanner(path)
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
                yield from scanner.feed(piece)
            held = []
            if stopped():
                return
        if sniffer.binary:
            on_problem(Problem(ProblemKind.BINARY, path, "binary, not a log: skipped"))
            return
        for piece in held:
            yield from scanner.feed(piece)
        if held and progress is not None:
            progress(path, scanner.lines, reached[0])
        yield from scanner.finish()

    def _stream_events(self, files: list[str], on_problem: OnProblem, follow: bool, progress: Progress | None,
                       stopped: Callable[[], bool]) -> Iterator[ErrorEvent]:
        lines: queue.Queue = queue.Queue(maxsize=10000)
        stop = threading.Event()
        done = object()

        def pump(path: str) -> None:
            source = stdin_lines(on_problem) if path == STDIN else (
                follow_lines(path, on_problem, stop=stop.is_set) if follow else read_lines(path, on_problem))
            try:
                for raw in source:
                    lines.put((path, raw))
                    if stop.is_set():
                        break
            finally:
                lines.put((path, done))

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
                        lines.put((path, started))
                        threading.Thread(target=pump, args=(path,), daemon=True).start()
                stop.wait(_WATCH_SECONDS)

        started = object()  # a watched directory's new file: one more input that will end with `done`
        scanners = {path: FileScanner("<stdin>" if path == STDIN else path, self.notices)
                    for path in files if not (follow and os.path.isdir(path))}
        for path in files:
            target = watch if follow and os.path.isdir(path) else pump
            threading.Thread(target=target, args=(path,), daemon=True).start()
        running = len(files)
        try:
            while running and not stopped():
                try:
                    path, raw = lines.get(timeout=0.1)
                except queue.Empty:
                    for scanner in scanners.values():
                        yield from scanner.idle()
                    continue
                if raw is started:
                    running += 1
                    scanners[path] = FileScanner(path, self.notices)
                elif raw is done:
                    running -= 1
                    yield from scanners[path].finish()
                elif raw is None:
                    yield from scanners[path].idle()
                elif raw is RESTART:  # a followed file was replaced or cut: its text so far has ended
                    yield from scanners[path].finish()
                    scanners[path] = FileScanner(path, self.notices)
                else:
                    yield from scanners[path].feed(raw)
                    if progress is not None:
                        progress(path, scanners[path].lines, None)
        finally:
            stop.set()
            if running:  # interrupted: what was assembled so far is still reported
                for scanner in scanners.values():
                    yield from scanner.finish()
