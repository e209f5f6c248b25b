"""`analyzer scan PATH...`: find, explain and group the errors in logs."""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
from collections.abc import Callable, Iterator

from analyzer.sinks.console import output_console
from rich.markup import escape

from analyzer.cli import EXIT_FOUND, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from analyzer.commands.common import add_analysis_arguments, load_matcher, sample_log, warn
from analyzer.core.incidents import Incident
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import ErrorEvent
from analyzer.core.scan import Analysis, FileScanner
from analyzer.sinks.serialize import incident_dict
from analyzer.sinks.text import render_incident, render_report
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.files import RESTART, STDIN, expand_paths, follow_lines, read_chunks, read_lines, stdin_lines
from analyzer.sources.lines import utf8_chunks

__all__ = ["register", "run", "scan_events", "Progress"]

Progress = Callable[[str, int, int | None], None]  # (path, lines read, byte position or None)


def register(subparsers) -> None:
    parser = subparsers.add_parser("scan", help="find and explain the errors in logs",
                                   description="Find, explain and group the errors in logs.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files, directories (recursive), .gz/.bz2/.xz, or - for stdin "
                             "(default: the bundled sample log)")
    parser.add_argument("--format", choices=("text", "jsonl", "json"), default="text")
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
    problems: list[str] = []

    def on_problem(message: str) -> None:
        problems.append(message)
        warn(message)

    analysis = Analysis(load_matcher(args), args.window, tuple(args.app_package))
    streaming = args.follow or STDIN in paths
    sink = _StreamSink(args.format) if streaming else None
    files = list(expand_paths(paths, on_problem))
    unreadable = len(problems)
    interrupted = False
    try:
        for event in scan_events(files, args.follow, on_problem, notices=analysis.notices):
            incident_id, is_new = analysis.add(event)
            if sink is not None:
                sink.show(analysis.snapshot(incident_id), is_new)
    except KeyboardInterrupt:
        interrupted = True
    incidents = analysis.incidents()
    summary = f"{len(files)} file(s), {analysis.events} error event(s), {len(incidents)} incident(s)"
    if sink is None:
        _print_batch(incidents, args, summary)
    elif args.format == "text":
        roots = [i for i in incidents if i.is_run_root]
        tail = f"; root cause {roots[0].id}" if roots else ""
        print(f"-- {summary}{tail}", flush=True)
    if interrupted:
        return EXIT_INTERRUPTED
    if unreadable:  # some input could not be read at all; the others were scanned
        return EXIT_USAGE
    return EXIT_FOUND if _fails(incidents, args.fail_on) else EXIT_OK


def scan_events(files: list[str], follow: bool, on_problem, progress: Progress | None = None,
                stopped: Callable[[], bool] = lambda: False,
                notices: NoticeDetector | None = None) -> Iterator[ErrorEvent]:
    """Events from every input. Plain files are read one after another; followed files and
    stdin are read by threads and interleave as their lines arrive.

    `progress(path, lines, offset)` reports the lines read from an input and, for a file read
    once to its end, the byte position reached (None otherwise); `stopped` ends the scan early;
    `notices` finds the log lines that report a failure without a traceback (Analysis.notices).
    """
    if not follow and STDIN not in files:
        for path in files:  # the fast path: stretches that cannot hold an error are only counted
            scanner = ChunkScanner(path, notices)
            on_read = None if progress is None else (
                lambda offset, path=path, scanner=scanner: progress(path, scanner.lines, offset))
            for chunk in utf8_chunks(read_chunks(path, on_problem, on_read=on_read)):
                yield from scanner.feed(chunk)
                if stopped():
                    return
            yield from scanner.finish()
        return
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

    scanners = {path: FileScanner("<stdin>" if path == STDIN else path, notices) for path in files}
    for path in files:
        threading.Thread(target=pump, args=(path,), daemon=True).start()
    running = len(files)
    try:
        while running and not stopped():
            try:
                path, raw = lines.get(timeout=0.1)
            except queue.Empty:
                for scanner in scanners.values():
                    yield from scanner.idle()
                continue
            if raw is done:
                running -= 1
                yield from scanners[path].finish()
            elif raw is None:
                yield from scanners[path].idle()
            elif raw is RESTART:  # a followed file was replaced or cut: its text so far has ended
                yield from scanners[path].finish()
                scanners[path] = FileScanner(path, notices)
            else:
                yield from scanners[path].feed(raw)
                if progress is not None:
                    progress(path, scanners[path].lines, None)
    finally:
        stop.set()
        if running:  # interrupted: what was assembled so far is still reported
            for scanner in scanners.values():
                yield from scanner.finish()


class _StreamSink:
    """Follow/stdin output: each new incident at once, repeats as one short line."""

    def __init__(self, fmt: str) -> None:
        self.format = fmt
        self.console = output_console()

    def show(self, incident: Incident, is_new: bool) -> None:
        if self.format != "text":
            print(json.dumps(incident_dict(incident), ensure_ascii=False), flush=True)
        elif is_new:
            render_incident(incident, self.console)
            self.console.print()
        else:
            rank = incident.ranks[-1] if incident.ranks else "?"
            self.console.print(f"[dim]  {incident.id} again ({incident.count}×), latest on {escape(rank)}[/]")
        sys.stdout.flush()


def _print_batch(incidents: list[Incident], args: argparse.Namespace, summary: str) -> None:
    if args.format == "jsonl":
        for incident in incidents:
            sys.stdout.write(json.dumps(incident_dict(incident), ensure_ascii=False) + "\n")
    elif args.format == "json":
        json.dump([incident_dict(i) for i in incidents], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        render_report(incidents, output_console(), show_all=args.all, summary=summary)
    sys.stdout.flush()


def _fails(incidents: list[Incident], fail_on: str) -> bool:
    if fail_on == "any":
        return bool(incidents)
    if fail_on == "unknown":
        return any(i.diagnosis.pattern is None for i in incidents)
    return False
