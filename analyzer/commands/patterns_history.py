"""`analyzer patterns history ID`: a signature's life across the releases of its project."""

from __future__ import annotations

import argparse
import sys

from analyzer.commands.exit_codes import Exit
from analyzer.sources.histories import load_histories
from analyzer.sources.packs import load_packs

__all__ = ["register", "run"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("history", help="show a signature's life across releases",
                                   description="When a signature was added, moved, reworded and removed, "
                                               "from the histories `patterns build-history` writes.")
    parser.add_argument("id", help="a pattern id, or part of one")
    parser.add_argument("--patterns", action="append", default=[], metavar="DIR",
                        help="more pack directories (with their history.tsv)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    histories = load_histories(args.patterns)
    owner = next((h for h in histories.values() if args.id in h.spans), None)
    if owner is None:
        near = sorted(sid for h in histories.values() for sid in h.spans if args.id in sid)
        if len(near) == 1:
            args.id = near[0]
            owner = next(h for h in histories.values() if args.id in h.spans)
        else:
            print(f"no history for {args.id!r}" + (": did you mean" if near else ""), file=sys.stderr)
            for sid in near[:20]:
                print(f"  {sid}", file=sys.stderr)
            return Exit.FOUND if near else Exit.USAGE
    pattern = next((p for p in load_packs(args.patterns).patterns if p.id == args.id), None)
    print(args.id)
    if pattern is not None:
        print(f"  {pattern.exception}: {pattern.template or pattern.trigger or '(no message)'}")
        print(f"  {pattern.source.path}, in {pattern.source.function}")
    for event in owner.life(args.id):
        detail = f"  {event.detail}" if event.detail else ""
        print(f"  {event.version:<12} {event.kind.value:<9}{detail}")
    print(f"  {owner.note(args.id)}")
    return Exit.OK
