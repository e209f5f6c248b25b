"""`analyzer scan PATH...`: find, explain and group the errors in logs."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.markup import escape

from analyzer.commands.common import add_analysis_arguments, engine_from, sample_log, warn
from analyzer.commands.exit_codes import Exit
from analyzer.core.derived import DerivedPage
from analyzer.core.incidents import Incident
from analyzer.core.runconfig import RunConfig
from analyzer.core.scan import Analysis, Change
from analyzer.sinks.console import output_console
from analyzer.sinks.serialize import incident_dict
from analyzer.sinks.text import render_incident, render_report
from analyzer.sources.files import STDIN, is_stream
from analyzer.sources.problems import Problem

__all__ = ["register", "run"]

_FORMATS = {"text": "a report for people (default)", "jsonl": "one JSON object per incident",
            "json": "one JSON array of every incident"}


def register(subparsers) -> None:
    parser = subparsers.add_parser("scan", help="find and explain the errors in logs",
                                   description="Find, explain and group the errors in logs.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files, directories (recursive), .gz/.bz2/.xz/.zst, or - for stdin "
                             "(default: the bundled sample log)")
    parser.add_argument("--format", choices=tuple(_FORMATS), default="text",
                        help="; ".join(f"{name}: {text}" for name, text in _FORMATS.items()))
    parser.add_argument("-f", "--follow", action="store_true",
                        help="keep reading growing files like tail -F (survives truncation and rotation)")
    parser.add_argument("--fail-on", choices=("none", "unknown", "any"), default="none",
                        help="exit 1 when any incident (any) or an unrecognised one (unknown) is found")
    parser.add_argument("--all", action="store_true", help="show consequences in full, not folded")
    add_analysis_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths = args.paths
    if not paths:
        paths = [str(sample_log())]
        print(f"analyzer: no PATH given, scanning the bundled sample {paths[0]}", file=sys.stderr)
    problems: list[Problem] = []

    def on_problem(problem: Problem) -> None:
        problems.append(problem)
        warn(str(problem))

    engine = engine_from(args)
    analysis = engine.analysis()
    files = engine.expand(paths, on_problem, follow=args.follow)
    if not files:
        print("analyzer: error: nothing to read in " + ", ".join(paths), file=sys.stderr)
        return Exit.USAGE
    streaming = args.follow or any(is_stream(path) for path in files)  # stdin, a FIFO, `<(command)`
    sink = _StreamSink(args.format, engine.run_config, engine.matcher.derived, analysis) if streaming else None
    if STDIN in files and sys.stdin.isatty():
        print("analyzer: reading standard input (end it with Ctrl-D)", file=sys.stderr)
    interrupted, warned = False, 0
    try:
        disabled = engine.matcher.disabled  # a user pattern that backtracks: said once, when it happens
        for event in engine.events(files, on_problem, follow=args.follow, on_tick=sink.tick if sink else None):
            incident_id, change = analysis.add(event)
            while warned < len(disabled):
                pattern, why = disabled[warned]
                warn(f"pattern {pattern.id} ({pattern.origin or 'no file'}): {why}")
                warned += 1
            if sink is not None:
                sink.show(incident_id, change, event.rank)
                for revised in analysis.revised():
                    sink.show(revised, Change.REMATCHED, None)
    except KeyboardInterrupt:
        interrupted = True
    incidents = analysis.incidents()
    summary = f"{len(files)} file(s), {analysis.events} error event(s), {len(incidents)} incident(s)"
    if sink is None:
        _print_batch(incidents, args, summary, engine.run_config, engine.matcher.derived)
    else:
        sink.close(incidents)
    if sink is not None and args.format == "text":
        roots = [i for i in incidents if i.is_run_root]
        tail = f"; root cause {roots[0].id}" if roots else ""
        print(f"-- {summary}{tail}", flush=True)
    if interrupted:
        return Exit.INTERRUPTED
    if any(problem.kind.input_lost for problem in problems):
        return Exit.USAGE  # some input could not be read at all; the others were scanned
    return Exit.FOUND if _fails(incidents, args.fail_on) else Exit.OK


@dataclass(slots=True)
class _Unshown:
    """What happened to an incident since it was last printed."""

    change: Change  # a revision (shown whole) outweighs repeats
    again: int = 0  # occurrences added
    rank: str | None = None  # where the latest of them happened


_TICK_SECONDS = 0.1  # the engine's tick: an incident changed since is printed at most once per tick
_OBJECT_BYTES = 1 << 16  # a JSON object this big waits one more tick before it is printed again


class _StreamSink:
    """Follow/stdin output: each new incident at once; what changes an incident after that is
    gathered and printed at the next tick (and at the end) as the incident then stands, so output
    grows with ticks, not with the ranks that repeat an error."""

    def __init__(self, fmt: str, run_of: Callable[[str], RunConfig | None],
                 derived_of: Callable[[str], DerivedPage | None], analysis: Analysis) -> None:
        self.format = fmt
        self.console = output_console()
        self.run_of = run_of  # a log file's run configuration, for fixes with its values
        self.derived_of = derived_of  # a pattern's page derived from the source
        self.analysis = analysis
        self._unshown: dict[str, _Unshown] = {}
        self._printed: dict[str, tuple[int, float]] = {}  # JSON: id -> (hash of the last object, next print due)

    def show(self, incident_id: str, change: Change, rank: str | None) -> None:
        """`rank`: where the event that was just added to the incident happened."""
        if change is Change.UNCHANGED:
            return
        if change is Change.NEW:  # at once: a new error is what a watcher waits for
            self._print(self.analysis.snapshot(incident_id), _Unshown(change, 1, rank), time.monotonic())
            sys.stdout.flush()
            return
        unshown = self._unshown.setdefault(incident_id, _Unshown(change))
        if change is Change.AGAIN:
            unshown.again += 1
            unshown.rank = rank
        elif unshown.change is Change.AGAIN:
            unshown.change = change

    def tick(self) -> None:
        """Prints each incident changed since the last tick whose turn has come."""
        now, waiting = time.monotonic(), {}
        for incident_id, unshown in self._unshown.items():
            if self._printed.get(incident_id, (0, now))[1] > now:
                waiting[incident_id] = unshown  # a big object: printed again less often
            else:
                self._print(self.analysis.snapshot(incident_id), unshown, now)
        if len(waiting) < len(self._unshown):
            sys.stdout.flush()
        self._unshown = waiting

    def close(self, incidents: list[Incident]) -> None:
        """At the end: JSON prints each incident whose final state (roles across incidents included)
        differs from the object printed last; text prints what the last tick had not."""
        if self.format == "text":
            self.tick()
            return
        self._unshown.clear()
        for incident in incidents:
            self._json(incident, 0.0)
        sys.stdout.flush()

    def _print(self, incident: Incident, unshown: _Unshown, now: float) -> None:
        if self.format != "text":  # the last object with an id is current
            self._json(incident, now)
        elif unshown.change is not Change.AGAIN:
            if unshown.change is Change.REVISED:
                self.console.print(f"[dim]  {incident.id} went on after a pause; as it stands now:[/]")
            elif unshown.change is Change.REMATCHED:
                self.console.print(f"[dim]  {incident.id} matched again, now that the log named its server "
                                   "or release:[/]")
            render_incident(incident, self.console, self.run_of(incident.event.span.file), self.derived_of)
            self.console.print()
        else:
            more = "" if unshown.again == 1 else f"; {unshown.again} more since the last line"
            ranks = f"; {len(incident.ranks)} ranks" if len(incident.ranks) > 1 and more else ""
            self.console.print(f"[dim]  {incident.id} again ({incident.count}×{more}{ranks}), "
                               f"latest on {escape(unshown.rank or '?')}[/]")

    def _json(self, incident: Incident, now: float) -> None:
        line = json.dumps(incident_dict(incident, self.run_of(incident.event.span.file)), ensure_ascii=False)
        if self._printed.get(incident.id, (None,))[0] != hash(line):
            print(line)
            self._printed[incident.id] = (hash(line), now + _TICK_SECONDS * (len(line) // _OBJECT_BYTES))


def _print_batch(incidents: list[Incident], args: argparse.Namespace, summary: str,
                 run_of: Callable[[str], RunConfig | None], derived_of: Callable[[str], DerivedPage | None]) -> None:
    if args.format == "jsonl":
        for incident in incidents:
            sys.stdout.write(json.dumps(incident_dict(incident, run_of(incident.event.span.file)),
                                        ensure_ascii=False) + "\n")
    elif args.format == "json":
        json.dump([incident_dict(i, run_of(i.event.span.file)) for i in incidents], sys.stdout, ensure_ascii=False,
                  indent=2)
        sys.stdout.write("\n")
    else:
        render_report(incidents, output_console(), show_all=args.all, summary=summary, run_of=run_of,
                      derived_of=derived_of)
    sys.stdout.flush()


def _fails(incidents: list[Incident], fail_on: str) -> bool:
    if fail_on == "any":
        return bool(incidents)
    if fail_on == "unknown":
        return any(i.diagnosis.pattern is None for i in incidents)
    return False
