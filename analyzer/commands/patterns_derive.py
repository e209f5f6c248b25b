"""`analyzer patterns derive`: the pages derived from the source for an extracted pack.

    cd DIR_WITH_SGLANG_SOURCE && analyzer patterns derive sglang --version 0.5.23 \
        --pack /path/to/patterns/sglang/extracted -o /path/to/patterns/sglang/derived.jsonl.zst
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from analyzer import __version__
from analyzer.commands.exit_codes import Exit
from analyzer.extract.derive import PROJECTS, SIDECAR, derive_rows, write_sidecar
from analyzer.extract.emit import load_pack

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("derive", help="derive code, condition, flags and related errors for a pack",
                                   description="Read the source an extracted pack came from again and write, per "
                                               "signature, the code around the raise, a pinned link, the condition "
                                               "in words, related errors, a hint and the launch flags involved.")
    parser.add_argument("project", help="the package folder under --root (sglang, vllm, torch)")
    parser.add_argument("--version", required=True, help="the release the source is (for the pinned links)")
    parser.add_argument("--pack", required=True, metavar="DIR", help="the extracted pack (its YAML is only read)")
    parser.add_argument("--root", default=".", metavar="DIR", help="the folder holding the package (default: .)")
    parser.add_argument("-o", "--output", metavar="FILE", help=f"the sidecar (default: PACK/../{SIDECAR})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.root)
    if not (root / args.project).is_dir():
        print(f"analyzer: no folder {args.project!r} under {root}", file=sys.stderr)
        return Exit.USAGE
    _, entries = load_pack(args.pack)
    target = Path(args.output) if args.output else Path(args.pack).parent / SIDECAR
    header = {"project": args.project, "version": args.version, "schema": 1,
              "generated_by": f"analyzer patterns derive {args.project} --version {args.version} "
                              f"(analyzer {__version__})"}
    rows: list[dict] = []
    count = write_sidecar(target, header, _kept(derive_rows(args.project, args.version, root, entries), rows))
    print(f"{count} of {len(entries)} signatures derived -> {target} ({target.stat().st_size:,} bytes)")
    project = PROJECTS.get(args.project)
    launch = [row for row in rows if project and project.is_launch(row["path"])]
    for label, group in (("all signatures", rows), ("launch arguments", launch)):
        if group:
            shares = ", ".join(f"{part} {sum(part in row for row in group) / len(group):.0%}" for part in _PARTS)
            print(f"  {label} ({len(group):,}): {shares}")
    return Exit.OK


_PARTS = ("snippet", "link", "condition", "related", "hint", "flags", "allowed_values", "before_after", "env_vars")


def _kept(items: Iterable[dict], rows: list[dict]) -> Iterator[dict]:
    """`items`, passed on, with the signature rows also kept in `rows` (for the coverage line)."""
    for item in items:
        if "id" in item:
            rows.append(item)
        yield item
