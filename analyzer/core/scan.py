"""The core pipeline: raw lines -> events -> diagnoses -> incidents. Pure: callers bring the lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from analyzer.core.assemble import TracebackAssembler
from analyzer.core.incidents import Incident, IncidentGrouper
from analyzer.core.matcher import Matcher
from analyzer.core.normalize import LineNormalizer
from analyzer.core.records import ErrorEvent

__all__ = ["FileScanner", "events_from_lines", "Analysis"]


class FileScanner:
    """One input's normaliser and assembler: push lines in, get completed events back."""

    def __init__(self, file: str) -> None:
        self._normalizer = LineNormalizer(file)
        self._assembler = TracebackAssembler()
        self.lines = 0

    def feed(self, raw: str) -> list[ErrorEvent]:
        self.lines += 1
        events: list[ErrorEvent] = []
        for line in self._normalizer.normalize(raw, self.lines):
            events.extend(self._assembler.feed(line))
        return events

    def idle(self) -> list[ErrorEvent]:
        return self._assembler.flush_idle()

    def finish(self) -> list[ErrorEvent]:
        return self._assembler.finish()


def events_from_lines(lines: Iterable[str | None], file: str) -> Iterator[ErrorEvent]:
    """Events of one input as they complete. A `None` item means 'input is quiet now'."""
    scanner = FileScanner(file)
    for raw in lines:
        yield from scanner.idle() if raw is None else scanner.feed(raw)
    yield from scanner.finish()


class Analysis:
    """Matches and groups events; `incidents()` is the report at any moment."""

    def __init__(self, matcher: Matcher, window_seconds: float = 600.0, app_packages: tuple[str, ...] = ()) -> None:
        self.matcher = matcher
        self._grouper = IncidentGrouper(window_seconds, app_packages)
        self.events = 0

    def add(self, event: ErrorEvent) -> tuple[str, bool]:
        """Returns the incident the event joined and whether the event opened it."""
        self.events += 1
        return self._grouper.add(event, self.matcher.match_event(event))

    def incidents(self) -> list[Incident]:
        return self._grouper.incidents()

    def snapshot(self, incident_id: str) -> Incident:
        return self._grouper.snapshot(incident_id)
