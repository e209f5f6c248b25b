"""`analyzer patterns build [--check]`: compile the built-in YAML packs into the index the package ships."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from analyzer.commands.exit_codes import Exit
from analyzer.sources.pack_index import IndexStore
from analyzer.sources.packs import builtin_digest, builtin_index_path, builtin_pack_dir, compile_builtin

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("build", help="compile the built-in packs into the shipped index",
                                   description="Compile the YAML packs under patterns/ into "
                                               "analyzer/_data/patterns.sqlite, which every run queries. "
                                               "Installing the package does it, and a checkout's next run after a pack "
                                               "or its building code changed does it again; this does it by hand.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the index is out of date with the packs or the code")
    parser.add_argument("-o", "--output", metavar="FILE", type=Path, help="write the index here instead")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    target = args.output or builtin_index_path()
    if args.check:
        try:
            current = IndexStore(target).digest == builtin_digest()
        except (OSError, sqlite3.Error, ValueError, KeyError) as err:  # missing, unreadable or foreign
            print(f"{target}: cannot be read ({err}); run 'analyzer patterns build'", file=sys.stderr)
            return Exit.FOUND
        if not current:
            print(f"{target} is out of date with {builtin_pack_dir()} or the code that builds it; "
                  "run 'analyzer patterns build'", file=sys.stderr)
            return Exit.FOUND
        print(f"{target}: up to date")
        return Exit.OK
    count, problems = compile_builtin(target)
    for problem in problems:
        print(f"analyzer: warning: pattern skipped: {problem}", file=sys.stderr)
    print(f"{count} pattern(s) from {builtin_pack_dir()} -> {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return Exit.OK
