"""`analyzer explain ID|"<message>"`: one known error's page."""

from __future__ import annotations

import argparse
import json
import sys

from analyzer.commands.common import add_pack_arguments, engine_from
from analyzer.commands.exit_codes import Exit
from analyzer.core.runconfig import run_config_from_lines
from analyzer.sinks.console import output_console
from analyzer.sinks.page import page_dict, render_page
from analyzer.sources.files import read_lines

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("explain", help="print one known error's page (by id or by message)",
                                   description="Print a pattern's page: message, meaning, source, trigger, "
                                               "fixes, examples, related errors. Give a pattern id, or an "
                                               "error message (optionally starting with 'ValueError: ').")
    parser.add_argument("query", metavar="ID_OR_MESSAGE")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--config-from", metavar="LOG",
                        help="fill the fixes with the run's own settings and launch command, read from this log "
                             "(SGLang's server_args line, vLLM's engine config, a launch command)")
    add_pack_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    engine = engine_from(args)
    matcher = engine.matcher
    pattern = matcher.pattern(args.query.strip())
    diagnosis = None
    if pattern is None:
        diagnosis = matcher.match_message(args.query.strip())
        pattern = diagnosis.pattern
    if pattern is None:
        print(f"analyzer: no known error matches {args.query[:200]!r}", file=sys.stderr)
        return Exit.FOUND
    run = None
    if args.config_from:
        run = run_config_from_lines(read_lines(args.config_from, lambda problem: print(
            f"analyzer: {problem}", file=sys.stderr)))
    releases = engine.releases(pattern, run)
    if args.format == "json":
        print(json.dumps(page_dict(pattern, diagnosis, run, releases, matcher.derived(pattern.id)), ensure_ascii=False,
                         indent=2))
    else:
        render_page(pattern, matcher, output_console(), diagnosis, run, releases)
    return Exit.OK
