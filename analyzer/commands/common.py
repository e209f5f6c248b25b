"""What several commands share: pattern-pack options, loading the matcher, warnings on stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analyzer.core.matcher import Matcher
from analyzer.sources.packs import ENV_VAR, load_packs

__all__ = ["add_pack_arguments", "add_analysis_arguments", "load_matcher", "warn", "sample_log"]


def warn(message: str) -> None:
    print(f"analyzer: warning: {message}", file=sys.stderr, flush=True)


def add_pack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--patterns", metavar="DIR", action="append", default=[],
                        help=f"extra pattern pack directory or file (repeatable; also ${ENV_VAR}, "
                             "separated by ':'); a pattern with the id of a built-in one replaces it")
    parser.add_argument("--no-builtin", action="store_true", help="do not load the built-in packs")


def add_analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every command that turns logs into incidents (scan, tui, report)."""
    parser.add_argument("--app-package", action="append", default=[], metavar="NAME",
                        help="package whose frames are the application's own (for the blame frame)")
    parser.add_argument("--window", type=float, default=600.0, metavar="SECONDS",
                        help="identical errors further apart than this are separate incidents")
    add_pack_arguments(parser)


def load_matcher(args: argparse.Namespace) -> Matcher:
    """Load the packs; broken files or entries are skipped with a warning naming file:line."""
    packs = load_packs(args.patterns, builtin=not args.no_builtin)
    for problem in packs.problems:
        warn(f"pattern skipped: {problem}")
    return Matcher(packs)  # reads only the candidates each message needs


def sample_log() -> Path:
    """The bundled sample: what `analyzer scan` reads when given nothing to read. In a checkout it
    is a fixture; a built wheel carries a copy inside the package (see setup.py)."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent / "fixtures" / "logs" / "sglang_deepseek_v4_cp_a2a.log"
    return checkout if checkout.is_file() else package / "_data" / "sample.log"
