"""`analyzer kb build -o DIR`: the pattern knowledge as a static, offline website."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analyzer.commands.common import add_pack_arguments, engine_from
from analyzer.commands.exit_codes import Exit
from analyzer.core.derived import DerivedPage
from analyzer.core.schema import Pattern
from analyzer.core.versions import History, version_note
from analyzer.sinks.kb.site import build_site
from analyzer.sinks.page import page_dict
from analyzer.sources.histories import load_histories

__all__ = ["register", "run_build", "kb_page"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("kb", help="build the knowledge base: a static site of every known error",
                                   description="Tools for the knowledge base: a static website, one page per "
                                               "known error, with indexes and search by message text.")
    group = parser.add_subparsers(dest="kb_command", metavar="SUBCOMMAND", parser_class=type(parser))
    build = group.add_parser("build", help="write the site into a directory",
                             description="Write one page per signature of the loaded packs (the page "
                                         "`analyzer explain` prints), indexes by project, source file and "
                                         "exception type, and an offline search by message; open "
                                         "DIR/index.html in a browser, no server needed.")
    build.add_argument("-o", "--output", required=True, metavar="DIR", help="the site's directory")
    build.add_argument("--only", action="append", default=[], metavar="ID_PREFIX",
                       help="only the signatures whose id starts with this (repeatable), e.g. 'sglang.'")
    build.add_argument("--clean", action="store_true", help="empty DIR first (it must hold a site or nothing)")
    add_pack_arguments(build)
    build.set_defaults(func=run_build)
    parser.set_defaults(func=lambda args: (parser.print_help(), Exit.USAGE)[1])


def kb_page(pattern: Pattern, histories: Mapping[str, History], derived: DerivedPage | None = None) -> dict[str, Any]:
    """A signature's page data: `explain --format json`'s (with the page derived from the source),
    the releases that raise it and a bare assert's condition."""
    data = page_dict(pattern, derived=derived)
    note = version_note(pattern, histories, {})
    if note and not data.get("releases"):
        data["releases"] = note
    if pattern.assert_expr and not data.get("assert_expr"):
        data["assert_expr"] = pattern.assert_expr
    return data


def run_build(args: argparse.Namespace) -> int:
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        print(f"analyzer: error: {out} is not a directory", file=sys.stderr)
        return Exit.USAGE
    if args.clean and out.is_dir() and any(out.iterdir()):
        if not (out / "index.html").is_file() or not (out / "search.js").is_file():
            print(f"analyzer: error: --clean: {out} does not look like a knowledge base; not emptying it",
                  file=sys.stderr)
            return Exit.USAGE
        shutil.rmtree(out)
    started = time.monotonic()
    matcher = engine_from(args).matcher
    patterns = [p for p in matcher.patterns if not args.only or p.id.startswith(tuple(args.only))]
    histories = load_histories(args.patterns)

    def progress(count: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{count}/{len(patterns)} pages", end="", file=sys.stderr, flush=True)

    stats = build_site(patterns, lambda pattern: kb_page(pattern, histories, matcher.derived(pattern.id)),
                       out, progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(f"analyzer: wrote {stats.pages} signature pages ({stats.files} files, {stats.bytes / 1e6:.1f} MB) to "
          f"{out} in {time.monotonic() - started:.0f} s; open {out / 'index.html'}", file=sys.stderr)
    return Exit.OK
