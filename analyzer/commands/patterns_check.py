"""`analyzer patterns check [DIR...]`: validate packs; exit 1 when anything is wrong."""

from __future__ import annotations

import argparse
import sys

from analyzer.commands.exit_codes import Exit
from analyzer.core.packcheck import check_patterns
from analyzer.sources.packs import builtin_pack_dir, load_pack_files, pack_files

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("check", help="validate pattern packs (schema, ids, templates, examples)",
                                   description="Validate pattern packs: schema errors with file:line, "
                                               "duplicate ids, templates that do not compile, examples "
                                               "that do not match their own pattern, dangling related ids.")
    parser.add_argument("dirs", nargs="*", metavar="DIR", help="pack directories or files (default: built-in)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    dirs = args.dirs or [str(builtin_pack_dir())]
    files = [f for d in dirs for f in pack_files(d)]
    missing = [d for d in dirs if not pack_files(d)]
    patterns, problems = load_pack_files(files)
    problems = [*problems, *check_patterns(patterns)]
    for directory in missing:
        print(f"{directory}: no pattern files found", file=sys.stderr)
    for problem in problems:
        print(problem)
    examples = sum(len(p.examples) for p in patterns)
    status = "ok" if not problems and not missing else f"{len(problems)} problem(s)"
    print(f"{len(files)} file(s), {len(patterns)} pattern(s), {examples} example(s): {status}")
    return Exit.FOUND if problems or missing else Exit.OK
