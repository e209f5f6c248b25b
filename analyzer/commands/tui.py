"""`analyzer tui PATH...|-`: triage a crashed run interactively (Textual)."""

from __future__ import annotations

import argparse
import sys

from analyzer.commands.common import add_analysis_arguments, engine_from, sample_log, warn_problem
from analyzer.commands.exit_codes import Exit
from analyzer.sources.files import STDIN
from analyzer.sources.problems import Problem

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tui", help="triage the errors in logs interactively",
        description="Browse the incidents of a run: the root cause first, each with its diagnosis, "
                    "traceback and the raw log around it. Press ? inside for the keys.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="log files, directories (recursive), .gz/.bz2/.xz, or - for stdin "
                             "(default: the bundled sample log)")
    parser.add_argument("-f", "--follow", action="store_true",
                        help="keep reading growing files like tail -F; new incidents appear as they happen")
    add_analysis_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from analyzer.tui.app import TriageApp  # Textual loads only when the TUI is wanted
    from analyzer.tui.live import LiveScan
    from analyzer.tui.terminal import free_stdin_for_keys

    problems: list[Problem] = []
    engine = engine_from(args)
    files = engine.expand(args.paths or [str(sample_log())], problems.append, follow=args.follow)
    for problem in problems:
        warn_problem(problem)
    if not files:
        print("analyzer: error: nothing to read", file=sys.stderr)
        return Exit.USAGE
    if STDIN in files:
        trouble = free_stdin_for_keys()
        if trouble:
            print(f"analyzer: error: {trouble}", file=sys.stderr)
            return Exit.USAGE
    live = LiveScan(engine, files, args.follow, problems)
    TriageApp(live).run()
    return Exit.USAGE if any(problem.kind.input_lost for problem in live.problems) else Exit.OK
