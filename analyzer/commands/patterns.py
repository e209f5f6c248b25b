"""`analyzer patterns ...`: the group for pattern-pack tools, one module per subcommand."""

from __future__ import annotations

import importlib

__all__ = ["register"]

_SUBCOMMANDS = ("build", "check", "extract", "update", "suggest", "history", "build_history", "derive")


def register(subparsers) -> None:
    parser = subparsers.add_parser("patterns", help="build, check, extract, update and suggest pattern packs",
                                   description="Tools for pattern packs.")
    group = parser.add_subparsers(dest="patterns_command", metavar="SUBCOMMAND", parser_class=type(parser))
    for name in _SUBCOMMANDS:
        importlib.import_module(f"analyzer.commands.patterns_{name}").register(group)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
