"""`analyzer patterns suggest LOG... -o DIR`: pattern stubs for the errors no pack knows.

Scans the logs, groups the unknown errors by fingerprint across all of them, and writes one
stub per fingerprint to DIR/suggested.yaml: the template inferred from the occurrences, the
raise site from the traceback, the occurrences as examples. Meaning and fixes are left empty
for a person to write.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from analyzer.commands.common import add_pack_arguments, engine_from, warn
from analyzer.commands.exit_codes import Exit
from analyzer.core.suggest import Stub, StubCollector
from analyzer.sources.problems import Problem

__all__ = ["register", "run", "render_stub_file"]

STUB_FILE = "suggested.yaml"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "suggest", help="write pattern stubs for the unknown errors in logs",
        description="Group the errors no pattern knows by fingerprint, across all LOGs, and write one "
                    f"pattern stub per fingerprint to DIR/{STUB_FILE}: a template inferred from the "
                    "occurrences (what varies becomes a field), the raise site, and the occurrences as "
                    "examples. Add meaning and fixes, then load DIR with --patterns.")
    parser.add_argument("logs", nargs="+", metavar="LOG", help="log files or directories (recursive)")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the stubs to")
    parser.add_argument("--force", action="store_true", help=f"replace an existing DIR/{STUB_FILE}")
    add_pack_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    target = Path(args.output) / STUB_FILE
    if target.exists() and not args.force:
        print(f"analyzer: error: {target} exists (edited stubs would be lost); use --force to replace it",
              file=sys.stderr)
        return Exit.USAGE
    problems: list[Problem] = []

    def on_problem(problem: Problem) -> None:
        problems.append(problem)
        warn(str(problem))

    engine = engine_from(args)
    files = engine.expand(args.logs, on_problem)
    analysis = engine.analysis()
    collector = StubCollector()
    for event in engine.events(files, on_problem):
        diagnosis = analysis.diagnose(event)
        if diagnosis.pattern is None:
            collector.add(event.chain[diagnosis.link], event.span)
    stubs = collector.stubs()
    if not stubs:
        print(f"no unknown errors in {len(files)} file(s): nothing to suggest")
        return Exit.USAGE if any(p.kind.input_lost for p in problems) else Exit.OK
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_stub_file(stubs, len(files)), encoding="utf-8")
    except OSError as err:
        print(f"analyzer: error: cannot write {target}: {err.strerror or err}", file=sys.stderr)
        return Exit.USAGE
    for stub in stubs:
        print(f"{stub.id}  ×{stub.count}  {stub.exception}: {stub.template[:100]}")
    print(f"wrote {len(stubs)} stub(s) to {target}; check with: analyzer patterns check {args.output}")
    return Exit.USAGE if any(p.kind.input_lost for p in problems) else Exit.OK


def render_stub_file(stubs: list[Stub], log_count: int) -> str:
    """The pack file: a header saying what to do, then each stub under a comment on where it was seen."""
    lines = [
        f"# Pattern stubs from `analyzer patterns suggest` over {log_count} log(s): errors no pattern knew.",
        "# For each: write what it means and how to fix it, rename the id if you like, then load this",
        "# directory with --patterns DIR (or $ANALYZER_PATTERNS). `analyzer patterns check DIR` validates it.",
        "schema: 1",
        "patterns:",
    ]
    for stub in stubs:
        first = stub.seen_at[0]
        where = " ".join(f"{first.file}:{first.line_start}".split())  # a comment is one line
        lines.append(f"# {stub.fingerprint}: seen {stub.count}×, first at {where}")
        lines.append(yaml.safe_dump([stub.pack_entry()], sort_keys=False, allow_unicode=True, width=10**9).rstrip())
    return "\n".join(lines) + "\n"
