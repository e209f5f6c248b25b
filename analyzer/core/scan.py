"""The core pipeline: raw lines -> events -> diagnoses -> incidents. Pure: callers bring the lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from analyzer.core.assemble import TracebackAssembler
from analyzer.core.incidents import Incident, IncidentGrouper, root_diagnosis
from analyzer.core.infer_prefix import PrefixLearner
from analyzer.core.matcher import Matcher
from analyzer.core.normalize import LineNormalizer
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent, LogLine

__all__ = ["Analysis", "FileScanner", "events_from_lines"]


class FileScanner:
    """One input's normaliser and assembler: push lines in, get completed events back."""

    def __init__(self, file: str, notices: NoticeDetector | None = None) -> None:
        self._normalizer = LineNormalizer(file)
        self._assembler = TracebackAssembler(notices=notices or None)  # an empty detector costs a call per line
        self.lines = 0
        self.first_timestamp: datetime | None = None  # when the input starts, by its prefixes
        self.host: str | None = None  # the first host its prefixes name

    def feed(self, raw: str) -> list[ErrorEvent]:
        self.lines += 1
        events: list[ErrorEvent] = []
        for line in self._normalize(raw):
            events.extend(self._assembler.feed(line))
        return events

    @property
    def learner(self) -> PrefixLearner:
        """The prefix families learned from this input so far."""
        return self._normalizer.learner

    @property
    def quiet(self) -> bool:
        """No record is open: a line that cannot start one changes nothing but the prefix state."""
        return not self._assembler.pending and not self._normalizer.holding

    def skip(self, count: int, setters: Iterable[str] = ()) -> None:
        """While quiet, let `count` lines that cannot start a record go by unparsed; `setters` are
        those of them (in order) whose prefixes the lines after them may inherit (the fast path)."""
        for raw in setters:
            self._normalize(raw)
        self.lines += count

    def _normalize(self, raw: str) -> list[LogLine]:
        lines = self._normalizer.normalize(raw, self.lines)
        for line in lines:
            self.first_timestamp = self.first_timestamp or line.timestamp
            self.host = self.host or line.host
        return lines

    def idle(self) -> list[ErrorEvent]:
        return self._assembler.flush_idle()

    def finish(self) -> list[ErrorEvent]:
        events = [event for line in self._normalizer.finish() for event in self._assembler.feed(line)]
        return events + self._assembler.finish()


def events_from_lines(lines: Iterable[str | None], file: str,
                      notices: NoticeDetector | None = None) -> Iterator[ErrorEvent]:
    """Events of one input as they complete. A `None` item means 'input is quiet now'."""
    scanner = FileScanner(file, notices)
    for raw in lines:
        yield from scanner.idle() if raw is None else scanner.feed(raw)
    yield from scanner.finish()


class Analysis:
    """Matches and groups events; `incidents()` is the report at any moment."""

    def __init__(self, matcher: Matcher, window_seconds: float = 600.0, app_packages: tuple[str, ...] = ()) -> None:
        self.matcher = matcher
        self.notices = NoticeDetector(matcher.patterns)  # give it to each FileScanner
        self._grouper = IncidentGrouper(window_seconds, app_packages)
        self.events = 0

    def add(self, event: ErrorEvent) -> tuple[str, bool]:
        """Returns the incident the event joined and whether the event opened it."""
        self.events += 1
        return self._grouper.add(event, root_diagnosis(event, self.matcher.match_event(event), self.matcher.match))

    def incidents(self) -> list[Incident]:
        return self._grouper.incidents()

    def snapshot(self, incident_id: str) -> Incident:
        return self._grouper.snapshot(incident_id)
