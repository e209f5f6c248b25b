"""`analyzer scan PATH...`: find, explain and group the errors in logs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from rich.markup import escape

from analyzer.commands.common import add_analysis_arguments, engine_from, sample_log, warn
from analyzer.commands.exit_codes import Exit
from analyzer.core.derived import DerivedPage
from analyzer.core.incidents import Incident
from analyzer.core.runconfig import RunConfig
from analyzer.core.scan import Change
from analyzer.sinks.console import output_console
from analyzer.sinks.serialize import incident_dict
from analyzer.sinks.text import render_incident, render_report
from analyzer.sources.files import STDIN
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
    streaming = args.follow or STDIN in paths
    sink = _StreamSink(args.format, engine.run_config, engine.matcher.derived) if streaming else None
    files = engine.expand(paths, on_problem, follow=args.follow)
    if not files:
        print("analyzer: error: nothing to read in " + ", ".join(paths), file=sys.stderr)
        return Exit.USAGE
    if STDIN in files and sys.stdin.isatty():
        print("analyzer: reading standard input (end it with Ctrl-D)", file=sys.stderr)
    interrupted, warned = False, 0
    try:
        disabled = engine.matcher.disabled  # a user pattern that backtracks: said once, when it happens
        for event in engine.events(files, on_problem, follow=args.follow):
            incident_id, change = analysis.add(event)
            while warned < len(disabled):
                pattern, why = disabled[warned]
                warn(f"pattern {pattern.id} ({pattern.origin or 'no file'}): {why}")
                warned += 1
            if sink is not None:
                sink.show(analysis.snapshot(incident_id), change, event.rank)
                for revised in analysis.revised():
                    sink.show(analysis.snapshot(revised), Change.REMATCHED, None)
    except KeyboardInterrupt:
        interrupted = True
    incidents = analysis.incidents()
    summary = f"{len(files)} file(s), {analysis.events} error event(s), {len(incidents)} incident(s)"
    if sink is None:
        _print_batch(incidents, args, summary, engine.run_config, engine.matcher.derived)
    elif args.format == "text":
        roots = [i for i in incidents if i.is_run_root]
        tail = f"; root cause {roots[0].id}" if roots else ""
        print(f"-- {summary}{tail}", flush=True)
    if interrupted:
        return Exit.INTERRUPTED
    if any(problem.kind.input_lost for problem in problems):
        return Exit.USAGE  # some input could not be read at all; the others were scanned
    return Exit.FOUND if _fails(incidents, args.fail_on) else Exit.OK


class _StreamSink:
    """Follow/stdin output: each new incident at once, repeats as one short line."""

    def __init__(self, fmt: str, run_of: Callable[[str], RunConfig | None],
                 derived_of: Callable[[str], DerivedPage | None]) -> None:
        self.format = fmt
        self.console = output_console()
        self.run_of = run_of  # a log file's run configuration, for fixes with its values
        self.derived_of = derived_of  # a pattern's page derived from the source

    def show(self, incident: Incident, change: Change, rank: str | None) -> None:
        """`rank`: where the event that was just added to the incident happened."""
        if change is Change.UNCHANGED:
            return
        run = self.run_of(incident.event.span.file)
        if self.format != "text":  # the last object with an id is current
            print(json.dumps(incident_dict(incident, run), ensure_ascii=False), flush=True)
        elif change is not Change.AGAIN:
            if change is Change.REVISED:
                self.console.print(f"[dim]  {incident.id} went on after a pause; as it stands now:[/]")
            elif change is Change.REMATCHED:
                self.console.print(f"[dim]  {incident.id} matched again, now that the log named its server "
                                   "or release:[/]")
            render_incident(incident, self.console, run, self.derived_of)
            self.console.print()
        else:
            self.console.print(f"[dim]  {incident.id} again ({incident.count}×), latest on {escape(rank or '?')}[/]")
        sys.stdout.flush()


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
