"""`analyzer` command line: subcommands live in analyzer/commands/, one module each."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from analyzer import __version__
from analyzer.commands.did_you_mean import suggestion
from analyzer.commands.exit_codes import Exit

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = Exit.OK, Exit.USAGE, Exit.INTERRUPTED

_COMMANDS = ("scan", "explain", "patterns", "tui", "report")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # the error first, on one line; exit 2 (argparse's own convention)
        close = suggestion(message)
        hint = f"; did you mean '{close}'?" if close else ""
        command = f"analyzer {self.prog.split(' ', 1)[-1]}" if " " in self.prog else "analyzer"
        self.exit(EXIT_USAGE, f"analyzer: error: {message}{hint} (see '{command} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="analyzer", description="Find the failure that matters in LLM-server logs.")
    parser.add_argument("--version", action="version", version=f"analyzer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"analyzer.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"analyzer.commands.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `analyzer scan big.log | head`: the reader left; end quietly, as cat does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK

