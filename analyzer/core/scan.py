"""The core pipeline: raw lines -> events -> diagnoses -> incidents. Pure: callers bring the lines."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from analyzer.core.assemble import TracebackAssembler
from analyzer.core.incidents import Incident, IncidentGrouper, root_diagnosis
from analyzer.core.infer_prefix import PrefixLearner
from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.core.normalize import LineNormalizer, PeelMemo
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent, ErrorInfo, LogLine
from analyzer.core.runconfig import RunConfig, RunConfigCollector
from analyzer.core.yearless import Calendar

__all__ = ["FileScanner", "events_from_lines", "Analysis", "Change", "Diagnoses"]


class FileScanner:
    """One input's normaliser and assembler: push lines in, get completed events back."""

    def __init__(self, file: str, notices: NoticeDetector | None, peels: PeelMemo | None = None,
                 calendar: Calendar | None = None) -> None:
        """`notices`: the log lines that report a failure without a traceback (Engine.notices;
        an empty detector where none are wanted); `peels`: lines peeled by other inputs' scanners;
        `calendar`: the year of stamps printed without one (without it they are no times)."""
        self._normalizer = LineNormalizer(file, peels, calendar)
        self._assembler = TracebackAssembler(notices=notices or None)  # an empty detector costs a call per line
        self.lines = 0
        self.first_timestamp: datetime | None = None  # when the input starts, by its prefixes
        self.host: str | None = None  # the first host its prefixes name
        self._config = RunConfigCollector()  # the server's settings and launch command, as logged

    def redate(self, calendar: Calendar) -> None:
        """Date the stamps read from now on by `calendar` (a stream's: today's, as the days pass)."""
        self._normalizer.calendar = calendar

    def feed(self, raw: str, may_start: bool = True) -> list[ErrorEvent]:
        """`may_start`: False where the line can start no record (see TracebackAssembler.feed)."""
        self.lines += 1
        fresh = not self._normalizer.holding  # (else what comes out may be an earlier line's)
        lines = self._normalize(raw)
        if len(lines) == 1:  # (nearly always)
            line = lines[0]  # (the line itself, its prefixes taken off, or may_start holds for it no longer)
            return self._assembler.feed(line, may_start or not (fresh and line.lineno == self.lines and raw.endswith(line.text)))
        events: list[ErrorEvent] = []
        for line in lines:
            events.extend(self._assembler.feed(line))
        return events

    def feed_stack(self, raws: list[str]) -> bool:
        """Lines that go on with the stack of an open traceback, each without prefixes and read
        before (a traceback echoed by rank after rank, or raised again and again): read together,
        as feeding each would read them. False, and nothing read, unless that is sure."""
        found = self._normalizer.plain_lines(raws, self.lines + 1)
        if found is None:
            return False
        texts, first = found
        if not self._config.unchanged_by(texts) or not self._assembler.extend(first, texts):
            return False
        self.lines += len(raws)
        if self.first_timestamp is None:
            self.first_timestamp = first.timestamp
        return True

    @property
    def learner(self) -> PrefixLearner:
        """The prefix families learned from this input so far."""
        return self._normalizer.learner

    @property
    def quiet(self) -> bool:
        """No record is open, nor a launch command continued over lines: a line that cannot start
        a record changes nothing but the prefix state."""
        return not self._assembler.pending and not self._normalizer.holding and not self._config.continuing

    def skip(self, count: int, setters: Iterable[str] = ()) -> None:
        """While quiet, let `count` lines that cannot start a record go by unparsed; `setters` are
        those of them (in order) whose prefixes the lines after them may inherit (the fast path)."""
        for raw in setters:
            self._normalize(raw)
        self.lines += count

    def inherit(self, setters: Iterable[str]) -> None:
        """Lines skipped earlier whose prefix state the lines of their channel inherit, handed over late
        (the fast path defers them to the next line that may be of their channel). The run's
        configuration does not see them: they are not in the order its collector needs."""
        for raw in setters:
            self._normalizer.normalize(raw, self.lines)

    @property
    def run_config(self) -> RunConfig:
        """What the lines read so far say of the run's configuration (fixes use its values)."""
        return self._config.config

    def _normalize(self, raw: str) -> list[LogLine]:
        lines = self._normalizer.normalize(raw, self.lines)
        if self.first_timestamp is None:
            self.first_timestamp = self._normalizer.time_alone
        for line in lines:
            self._config.feed(line.text)
            if self.first_timestamp is None:
                self.first_timestamp = line.timestamp
            if not self.host:
                self.host = line.host
        return lines

    def idle(self) -> list[ErrorEvent]:
        return self._assembler.provisional()

    def finish(self) -> Iterator[ErrorEvent]:
        for line in self._normalizer.finish():
            yield from self._assembler.feed(line)
        yield from self._assembler.finish()


def events_from_lines(lines: Iterable[str | None], file: str, notices: NoticeDetector | None,
                      calendar: Calendar | None = None) -> Iterator[ErrorEvent]:
    """Events of one input as they complete. A `None` item means 'input is quiet now'."""
    scanner = FileScanner(file, notices, calendar=calendar)
    for raw in lines:
        yield from scanner.idle() if raw is None else scanner.feed(raw)
    yield from scanner.finish()


_RECENT_CHAINS = 1024


class Change(enum.Enum):
    """What adding an event did to its incident."""

    NEW = "new"  # it opened the incident
    AGAIN = "again"  # one more occurrence
    REVISED = "revised"  # a record shown before grew after a pause: its occurrence was replaced
    UNCHANGED = "unchanged"  # a record shown before ended as it was shown
    REMATCHED = "rematched"  # matched again: the log told its run's server or release after it (`revised()`)


class Diagnoser(Protocol):
    """What diagnoses an event: a `Matcher`, or a run's (core/versions.py `TieredMatcher`)."""

    def match_event(self, event: ErrorEvent) -> Diagnosis: ...

    def match(self, info: ErrorInfo) -> Diagnosis: ...


# Recent chains' diagnoses, by the matcher that read them: a repeated error is matched once.
Diagnoses = dict[tuple[Diagnoser, tuple[ErrorInfo, ...]], Diagnosis]

_EARLY_EVENTS = 32  # a file's events kept to be matched again once its run is known: a log tells it early


@dataclass(slots=True)
class _Matched:
    event: ErrorEvent
    incident: str
    matcher: Diagnoser
    diagnosis: Diagnosis


class Analysis:
    """Matches and groups events; `incidents()` is the report at any moment."""

    def __init__(self, matcher: Matcher, window_seconds: float = 600.0, app_packages: tuple[str, ...] = (),
                 run_gap_seconds: float = 3600.0, run_of: Callable[[str], str] | None = None,
                 matcher_for: Callable[[str], Diagnoser] | None = None, diagnosed: Diagnoses | None = None) -> None:
        """`matcher_for(file)`: the matcher of the run a file belongs to, as far as its lines told
        (its server and release); `matcher` for every file without it. `diagnosed`: where the
        diagnoses of recent chains are kept, which analyses may share (a fleet's files repeat
        their errors); one of its own by default."""
        self.matcher = matcher
        self._matcher_for = matcher_for
        self._grouper = IncidentGrouper(window_seconds, app_packages, run_gap_seconds, run_of)
        self._shown: dict[tuple[str, str, int], tuple[ErrorEvent, str]] = {}  # provisional events, by record
        self._early: dict[str, dict[tuple[str, str, int], _Matched]] = {}  # each file's first events
        self._early_matcher: dict[str, Diagnoser] = {}  # the matcher each file's first events were matched by last
        self._revised: list[str] = []
        self._diagnosed = {} if diagnosed is None else diagnosed
        self.events = 0

    def diagnose(self, event: ErrorEvent, matcher: Diagnoser | None = None) -> Diagnosis:
        """What the event is about: the chain link its incident is keyed by, and that link's match."""
        matcher = matcher or self._matcher(event.span.file)
        key = (matcher, event.chain)
        known = self._diagnosed.get(key)
        if known is None:
            if len(self._diagnosed) >= _RECENT_CHAINS:
                self._diagnosed.clear()
            known = self._diagnosed[key] = root_diagnosis(event, matcher.match_event(event), matcher.match)
        return known

    def _matcher(self, file: str) -> Diagnoser:
        return self._matcher_for(file) if self._matcher_for is not None else self.matcher

    def add(self, event: ErrorEvent) -> tuple[str, Change]:
        """Returns the incident the event joined and what it changed there. An event of a record
        shown before (a `provisional` one: the input paused) replaces the one shown: one
        occurrence, never split into two."""
        key = (event.span.file, event.stream, event.span.line_start)
        matcher = self._matcher(event.span.file)
        self._rematch(event.span.file, matcher)
        shown = self._shown.pop(key, None)
        diagnosis = self.diagnose(event, matcher)
        if shown is None:
            self.events += 1
            incident_id, is_new = self._grouper.add(event, diagnosis)
            change = Change.NEW if is_new else Change.AGAIN
        else:
            incident_id = self._grouper.revise(shown[1], shown[0], event, diagnosis)
            grew = (shown[0].chain, shown[0].span) != (event.chain, event.span) or shown[1] != incident_id
            change = Change.REVISED if grew else Change.UNCHANGED
        if event.provisional:
            self._shown[key] = (event, incident_id)
        early = self._early.setdefault(event.span.file, {})
        if key in early or len(early) < _EARLY_EVENTS:
            early[key] = _Matched(event, incident_id, matcher, diagnosis)
        return incident_id, change

    def revised(self) -> list[str]:
        """The incidents changed since the last call because the log told its run's server or
        release after some of its errors: those are matched again with the run's own patterns."""
        for file in self._early:
            self._rematch(file, self._matcher(file))
        found, self._revised = self._revised, []
        return list(dict.fromkeys(found))

    def _rematch(self, file: str, matcher: Diagnoser) -> None:
        if self._early_matcher.get(file) is matcher:
            return  # (every event kept since was matched by it too)
        self._early_matcher[file] = matcher
        for key, matched in self._early.get(file, {}).items():
            if matched.matcher is matcher:
                continue
            matched.matcher = matcher
            diagnosis = self.diagnose(matched.event, matcher)
            if diagnosis == matched.diagnosis:
                continue
            matched.diagnosis = diagnosis
            matched.incident = self._grouper.revise(matched.incident, matched.event, matched.event, diagnosis)
            if key in self._shown:
                self._shown[key] = (matched.event, matched.incident)
            self._revised.append(matched.incident)

    def incidents(self) -> list[Incident]:
        self.revised()
        return self._grouper.incidents()

    def snapshot(self, incident_id: str) -> Incident:
        return self._grouper.snapshot(incident_id)
