"""What several commands share: the analysis options, building the engine, warnings on stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.options import ENV_VAR, Options
from analyzer.sources.problems import Problem

if TYPE_CHECKING:
    from analyzer.engine import Engine

__all__ = ["add_pack_arguments", "add_analysis_arguments", "options_from", "engine_from", "warn", "warn_problem",
           "sample_log"]


def warn(message: str) -> None:
    print(f"analyzer: warning: {message}", file=sys.stderr, flush=True)


def warn_problem(problem: Problem) -> None:
    warn(str(problem))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def add_pack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--patterns", metavar="DIR", action="append", default=[],
                        help=f"extra pattern pack directory or file (repeatable; also ${ENV_VAR}, "
                             "separated by ':'); a pattern with the id of a built-in one replaces it")
    parser.add_argument("--no-builtin", action="store_true", help="do not load the built-in packs")


def add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every command that turns logs into incidents (scan, tui, report)."""
    defaults = Options()
    parser.add_argument("--app-package", action="append", default=[], metavar="NAME",
                        help="package whose frames are the application's own (for the blame frame)")
    parser.add_argument("--window", type=_seconds, default=defaults.window_seconds, metavar="SECONDS",
                        help="identical errors further apart than this are separate incidents "
                             "(default: %(default)g)")
    parser.add_argument("--run-gap", type=_seconds, default=defaults.run_gap_seconds, metavar="SECONDS",
                        help="a quiet gap longer than this between incidents starts a new run, with a root "
                             "cause of its own (default: %(default)g)")
    add_pack_arguments(parser)


def options_from(args: argparse.Namespace) -> Options:
    """The engine's options from the command line, $ANALYZER_PATTERNS read once, here."""
    values = {}
    if hasattr(args, "window"):
        values = {"window_seconds": args.window, "run_gap_seconds": args.run_gap,
                  "app_packages": tuple(args.app_package)}
    return Options.resolve(args.patterns, builtin=not args.no_builtin, **values)


def engine_from(args: argparse.Namespace) -> Engine:
    """Load the packs; broken files or entries are skipped with a warning naming file:line."""
    from analyzer.engine import Engine  # not for parsing arguments, nor for a warm report

    engine = Engine(options_from(args))
    for problem in engine.problems:
        warn_problem(problem)
    return engine


def sample_log() -> Path:
    """The bundled sample: what `analyzer scan` reads when given nothing to read. In a checkout it
    is a fixture; a built wheel carries a copy inside the package (see setup.py)."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent / "fixtures" / "logs" / "sglang_deepseek_v4_cp_a2a.log"
    return checkout if checkout.is_file() else package / "_data" / "sample.log"
