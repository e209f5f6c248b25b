"""`analyzer patterns check [DIR...]`: validate packs; exit 1 when anything is wrong."""

from __future__ import annotations

import argparse
import sys

from analyzer.commands.exit_codes import Exit
from analyzer.core.packcheck import check_patterns, pack_notes
from analyzer.sources.packs import builtin_pack_dir, load_pack_files, pack_files

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("check", help="validate pattern packs (schema, ids, templates, examples)",
                                   description="Validate pattern packs: schema errors with file:line, "
                                               "duplicate ids, templates that do not compile, examples "
                                               "that do not match their own pattern, dangling related ids.")
    parser.add_argument("dirs", nargs="*", metavar="DIR", help="pack directories or files (default: built-in)")
    parser.add_argument("--notes", action="store_true",
                        help="list every generic template and every group of same-text twins")
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
    notes = pack_notes(patterns)
    if args.notes:
        for pattern in notes.generic:
            print(f"{pattern.origin}: note: '{pattern.id}' is generic ({pattern.template!r}): "
                  f"matched only where the traceback is at {pattern.source.path} in {pattern.source.function}")
        for group in notes.twins:
            first = group[0]
            print(f"{first.origin}: note: {len(group)} raises of {first.template!r} in {first.source.path}: "
                  + ", ".join(f"{p.id} (line {p.source.line}, {p.source.function})" for p in group))
    examples = sum(len(p.examples) for p in patterns)
    status = "ok" if not problems and not missing else f"{len(problems)} problem(s)"
    print(f"{len(files)} file(s), {len(patterns)} pattern(s), {examples} example(s): {status}; "
          f"{len(notes.generic)} generic template(s) matched only at their raise site, "
          f"{sum(len(g) for g in notes.twins)} same-text twin(s) told apart by function and line"
          f"{'' if args.notes or not (notes.generic or notes.twins) else ' (--notes lists them)'}")
    return Exit.FOUND if problems or missing else Exit.OK
