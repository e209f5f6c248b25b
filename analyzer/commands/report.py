"""`analyzer report PATH...`: which failures hit how many runs, since when, where, with which values."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.commands.common import add_analysis_arguments, options_from, warn
from analyzer.commands.exit_codes import Exit
from analyzer.report.choices import BY, ENGINES, ROWS
from analyzer.report.runs import DEFAULT_PATH_REGEX, parse_day
from analyzer.sources.problems import Problem, ProblemKind

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = ["register", "run"]

FORMATS = ("table", "csv", "parquet", "xlsx", "json", "md", "html")
_BY_SUFFIX = {".csv": "csv", ".parquet": "parquet", ".xlsx": "xlsx", ".json": "json", ".md": "md", ".html": "html",
              ".htm": "html", ".txt": "table"}
_FILE_ONLY = ("parquet", "xlsx")  # binary formats: never to a terminal


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="fleet report: which failures hit how many runs, where, since when",
        description="Scan a fleet of run logs and report each failure signature: how often, on how many "
                    "runs, first and last seen, on which hosts and versions, with which captured values. "
                    "Each log file belongs to a run, named by --path-regex or by its directory.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="run log files or directories of runs (recursive)")
    parser.add_argument("--by", choices=BY, default="pattern",
                        help="group by known pattern (else fingerprint), fingerprint, host, day or version")
    parser.add_argument("--format", choices=FORMATS,
                        help="output format (default: from --output's extension, else table)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout (needed for parquet)")
    parser.add_argument("--rows", choices=ROWS, default="summary",
                        help="the table csv, parquet and json write: the summary, every incident, every run, "
                             "or the bad files (default: summary)")
    parser.add_argument("--path-regex", metavar="REGEX",
                        help="named groups run, host, date, version read from each file's path "
                             f"(default: a YYYY-MM-DD path component as the date: {DEFAULT_PATH_REGEX})")
    parser.add_argument("--include", action="append", default=[], metavar="GLOB",
                        help="only files whose name matches (repeatable), e.g. '*.log*'")
    parser.add_argument("--from", dest="start", type=_day, metavar="DATE", help="only runs on or after DATE")
    parser.add_argument("--to", dest="end", type=_day, metavar="DATE", help="only runs on or before DATE")
    parser.add_argument("--new-since", type=_day, metavar="DATE",
                        help="mark the signatures first seen on or after DATE as new")
    parser.add_argument("--top", type=int, default=3, metavar="N", help="values kept per parameter (default 3)")
    parser.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                        help="parallel workers (default: one per core)")
    parser.add_argument("--engine", choices=ENGINES, default="local",
                        help="local process pool, or Dask (a local cluster unless --scheduler)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", metavar="FILE",
                       help="per-file results kept between reports (default: ~/.cache/analyzer/report.sqlite)")
    cache.add_argument("--no-cache", action="store_true", help="scan every file, keep nothing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--kb", metavar="DIR_OR_URL",
                        help="the knowledge base (`analyzer kb build`) the HTML report links each signature to: "
                             "its folder or its URL (default: a 'kb' folder beside the report)")
    add_analysis_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, and pandas only for the outputs that are frames: pandas and pyarrow cost half
    # a second, which other commands and a summary in JSON or text should not pay.
    from analyzer.report.aggregate import summarise
    from analyzer.report.engines import EngineError
    from analyzer.report.fleet import FleetOptions, collector_paused, scan_fleet
    from analyzer.report.fleetrows import fleet_rows, restrict_rows

    suffix = os.path.splitext(args.output or "")[1].lower()
    if args.output and not args.format and suffix not in _BY_SUFFIX:
        print(f"analyzer: error: cannot tell the format of {args.output} from its extension; use one of "
              f"{', '.join(sorted(_BY_SUFFIX))} or --format", file=sys.stderr)
        return Exit.USAGE
    fmt = args.format or _BY_SUFFIX.get(suffix, "table")
    if fmt in _FILE_ONLY and not args.output:
        print(f"analyzer: error: --format {fmt} needs --output FILE", file=sys.stderr)
        return Exit.USAGE
    if fmt == "xlsx" and importlib.util.find_spec("openpyxl") is None:
        print("analyzer: error: writing Excel files needs openpyxl: pip install 'analyzer[excel]'", file=sys.stderr)
        return Exit.USAGE
    if fmt == "parquet" and not _have_pyarrow():
        print("analyzer: error: Parquet output needs pyarrow: pip install 'analyzer[parquet]'", file=sys.stderr)
        return Exit.USAGE
    if args.engine == "local" and args.scheduler:
        print("analyzer: error: --scheduler goes with --engine dask", file=sys.stderr)
        return Exit.USAGE
    options = FleetOptions(
        path_regex=args.path_regex, include=tuple(args.include), engine=args.engine, jobs=max(args.jobs, 0),
        scheduler=args.scheduler, cache=False if args.no_cache else (args.cache or True),
        patterns=tuple(args.patterns), builtin=not args.no_builtin, window_seconds=args.window,
        run_gap_seconds=args.run_gap, app_packages=tuple(args.app_package))
    missing: list[Problem] = []

    def on_problem(problem: Problem) -> None:
        if problem.kind is ProblemKind.MISSING:
            missing.append(problem)
        warn(str(problem))

    try:
        with _ProgressBar(not args.no_progress) as progress:
            scan = scan_fleet(args.paths, options, on_problem, progress)
    except (ValueError, EngineError) as err:
        print(f"analyzer: error: {err}", file=sys.stderr)
        return Exit.USAGE
    with collector_paused():
        fleet = restrict_rows(fleet_rows(scan), args.start, args.end)
        report = summarise(fleet, by=args.by, since=args.new_since, top=args.top)
        try:
            _write(fmt, args, report, fleet)
        except OSError as err:
            if not args.output:
                raise  # stdout: a closed pipe is the command line's to handle
            print(f"analyzer: error: {args.output}: {err.strerror or err}", file=sys.stderr)
            return Exit.USAGE
    if args.output:
        what = "the summary" if args.rows == "summary" or fmt in ("table", "md", "html") else f"the {args.rows} rows"
        print(f"analyzer: wrote {what} ({fmt}) to {args.output}", file=sys.stderr)
    return Exit.USAGE if missing else Exit.OK


def _write(fmt: str, args: argparse.Namespace, report, fleet) -> None:
    from analyzer.report.tables import records, report_json, table_of, write_csv, write_parquet, write_xlsx

    def table():  # the rows asked for, as a frame: only these outputs import pandas
        from analyzer.report.frame import frame_from_rows

        return table_of(args.rows, report, frame_from_rows(fleet) if args.rows in ("incidents", "runs") else None)

    if fmt == "parquet":
        write_parquet(table(), args.output)
        return
    if fmt == "xlsx":
        write_xlsx(table(), args.output)
        return
    with (open(args.output, "w", encoding="utf-8", newline="") if args.output else _Stdout()) as out:
        if fmt == "csv":
            write_csv(table(), out)
        elif fmt == "json":
            data = report_json(report) if args.rows == "summary" else records(table())
            json.dump(data, out, ensure_ascii=False, indent=2)
            out.write("\n")
        elif fmt == "md":
            from analyzer.report.markdown import render_markdown

            out.write(render_markdown(report) + "\n")
        elif fmt == "html":
            from analyzer.report.html import render_html

            patterns, derived = _patterns(args)
            out.write(render_html(report, patterns=patterns, kb=_kb_base(args), derived=derived))
        else:
            from analyzer.report.text import render_text
            from analyzer.sinks.console import output_console

            render_text(report, output_console(file=out, soft_wrap=not args.output))


def _kb_base(args: argparse.Namespace) -> str:
    """The knowledge base as the report sees it: a URL as given, a folder relative to the report."""
    if not args.kb:
        return "kb"
    if "://" in args.kb:
        return args.kb
    beside = Path(args.output).resolve().parent if args.output else Path.cwd()
    return Path(os.path.relpath(Path(args.kb).resolve(), beside)).as_posix()


def _patterns(args: argparse.Namespace) -> tuple[dict, Callable]:
    """The loaded packs' patterns by id and their pages derived from the source (for the HTML
    report's explanations); the scan's workers already warned about broken pack entries."""
    from analyzer.engine import Engine

    matcher = Engine(options_from(args)).matcher
    return {pattern.id: pattern for pattern in matcher.patterns}, matcher.derived


class _Stdout:
    """stdout as a context manager that is not closed afterwards."""

    def __enter__(self):
        return sys.stdout

    def __exit__(self, *exc) -> None:
        sys.stdout.flush()


class _ProgressBar:
    """A progress bar on stderr when it is a terminal; a callable the scan reports to."""

    def __init__(self, wanted: bool) -> None:
        self._bar = None
        if wanted and sys.stderr.isatty():  # Rich's progress only then: importing it costs a warm report 60 ms
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
        self._task: TaskID | None = None

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task("scan", total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is not None:
            assert self._task is not None  # added when the bar started (__enter__)
            self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()


def _day(text: str) -> date:
    day = parse_day(text)
    if day is None:
        raise argparse.ArgumentTypeError(f"not a date: {text!r} (use YYYY-MM-DD)")
    return day


def _have_pyarrow() -> bool:
    """pyarrow is the `parquet` extra: 170 MB that only this output needs."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True
