"""`analyzer` command line: subcommands live in analyzer/commands/, one module each.

Only the module of the command being run is imported (pandas, Textual and Rich's progress bar stay
out of `analyzer scan`, and `--help` and `--version` import none): the others are listed by name and
summary alone.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from analyzer import __version__
from analyzer.commands.exit_codes import Exit

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = Exit.OK, Exit.USAGE, Exit.INTERRUPTED

_COMMANDS = {  # name: its summary in `analyzer --help`
    "scan": "find and explain the errors in logs",
    "explain": "print one known error's page (by id or by message)",
    "patterns": "build, check, extract, update and suggest pattern packs",
    "tui": "triage the errors in logs interactively",
    "report": "fleet report: which failures hit how many runs, where, since when",
    "kb": "build the knowledge base: a static site of every known error",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # the error first, on one line; exit 2 (argparse's own convention)
        from analyzer.commands.did_you_mean import suggestion  # only on a usage error: start-up stays light
        close = suggestion(message)
        hint = f"; did you mean '{close}'?" if close else ""
        command = f"analyzer {self.prog.split(' ', 1)[-1]}" if " " in self.prog else "analyzer"
        self.exit(EXIT_USAGE, f"analyzer: error: {message}{hint} (see '{command} --help')\n")


def _version() -> str:
    """The version, and whether the core runs compiled (as a wheel builds it where a C compiler works: setup.py)."""
    spec = importlib.util.find_spec("analyzer.core.scan")  # (found, not imported: --version stays light)
    compiled = spec is not None and not (spec.origin or "").endswith(".py")
    return f"analyzer {__version__}" + (" (core compiled by mypyc)" if compiled else "")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv`: the command it names is registered in full, the others by summary.
    Without `argv`, every command in full."""
    wanted = _COMMANDS.keys() if argv is None else {next((a for a in argv if not a.startswith("-")), None)}
    parser = _Parser(prog="analyzer", description="Find the failure that matters in LLM-server logs.")
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, summary in _COMMANDS.items():
        if name in wanted:
            importlib.import_module(f"analyzer.commands.{name}").register(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
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

