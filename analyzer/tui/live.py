"""The engine as the TUI runs it: its events feeding an `Analysis` on a worker thread, while the
UI thread reads incidents, line counts and progress at its own pace."""

from __future__ import annotations

import os
import threading

from analyzer.core.incidents import Incident
from analyzer.core.matcher import Matcher
from analyzer.core.runconfig import RunConfig
from analyzer.engine import STDIN, Engine
from analyzer.sources.problems import Problem, ProblemKind

__all__ = ["LiveScan"]


class LiveScan:
    """One scan of some inputs. `run` on a worker thread; everything else from the UI thread."""

    def __init__(self, engine: Engine, files: list[str], follow: bool = False,
                 problems: list[Problem] | None = None) -> None:
        self.engine = engine
        self.files = list(files)
        self.follow = follow
        self.problems: list[Problem] = list(problems or ())  # appended by the worker
        self.version = 0  # grows with every event, so the UI knows when to look again
        self.done = False
        self._analysis = engine.analysis()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # Keys are fixed here: the worker only replaces values, so the UI can read them safely.
        self._lines = dict.fromkeys(self.files, 0)
        self._offsets = dict.fromkeys(self.files, 0)
        self._total_bytes = sum(_size(path) for path in self.files if path != STDIN)
        self._configs: dict[str, RunConfig | None] = {}  # a log -> its run's configuration, noted by the worker

    @property
    def streaming(self) -> bool:
        """Input that never ends on its own: followed files or stdin."""
        return self.follow or STDIN in self.files

    def run(self) -> None:
        """Scan until the inputs end or `stop` is called."""
        try:
            for event in self.engine.events(self.files, self.problems.append, self.follow, progress=self._progress,
                                            stopped=self._stop.is_set):
                config = self.engine.run_config(event.span.file)
                with self._lock:
                    self._analysis.add(event)
                    self._configs[event.span.file] = config
                    self.version += 1
        except Exception as err:
            self.problems.append(Problem(ProblemKind.INTERNAL, "scan", f"stopped by an internal error: "
                                                                       f"{type(err).__name__}: {err}"))
        finally:
            # a file read to its end tells its configuration once its last event is out
            configs = {file: self.engine.run_config(file) for file in list(self._configs)}
            with self._lock:
                if configs != self._configs:  # the UI looks again (version) only when something is new
                    self._configs.update(configs)
                    self.version += 1
            self.done = True

    @property
    def matcher(self) -> Matcher:
        return self.engine.matcher

    def stop(self) -> None:
        self._stop.set()

    def run_config(self, incident: Incident) -> RunConfig | None:
        """The configuration of the run the incident's log came from, as far as it was read."""
        with self._lock:
            return self._configs.get(incident.event.span.file)

    def incidents(self) -> list[Incident]:
        with self._lock:
            return self._analysis.incidents()

    @property
    def lines_read(self) -> int:
        return sum(self._lines.values())

    @property
    def fraction(self) -> float | None:
        """Share of the inputs' bytes read so far; None when the input has no known end."""
        if self.streaming or not self._total_bytes:
            return None
        if self.done:
            return 1.0
        return min(1.0, sum(self._offsets.values()) / self._total_bytes)

    def _progress(self, path: str, lines: int, offset: int | None) -> None:
        self._lines[path] = lines
        if offset is not None:
            self._offsets[path] = offset


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
