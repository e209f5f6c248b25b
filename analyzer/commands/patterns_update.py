"""``analyzer patterns update``: re-extract and merge into an existing pack.

    analyzer patterns update PATH --pack DIR [--project NAME] [--version V]
    analyzer patterns update --package NAME --pack DIR [...]

Entries are matched by id (ids hash the message template, not the line).
Curated fields (meaning, situations, fixes, related, role, severity, extra
tags and examples, a template marked ``template_locked: true``) are kept;
line numbers and triggers are refreshed. Prints what was added, removed and
changed (moved line, changed trigger).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from analyzer.commands.patterns_extract import add_source_arguments, generated_by, resolve_source

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "update",
        help="re-extract signatures and merge them into an existing pattern pack",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source_arguments(p)
    p.add_argument("--pack", required=True, metavar="DIR",
                   help="pack directory (or single .yaml file) to update in place")
    p.add_argument("--dry-run", action="store_true",
                   help="report what would change without writing")
    p.add_argument("--quiet", action="store_true",
                   help="print counts only, not the ids")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from analyzer.extract.emit import load_pack, write_pack
    from analyzer.extract.scan import extract_tree
    from analyzer.extract.update import merge_entries

    path, package, err = resolve_source(args)
    if err:
        print(f"analyzer patterns update: error: {err}", file=sys.stderr)
        return 2
    header, old_entries = load_pack(args.pack)
    project = getattr(args, "project", None) or header.get("project")
    try:
        result = extract_tree(path, package=package, project=project,
                              version=getattr(args, "pack_version", None),
                              jobs=getattr(args, "jobs", None),
                              exclude=getattr(args, "exclude", None) or ())
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        print(f"analyzer patterns update: error: {exc}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    merged, report = merge_entries(old_entries, result.entries)
    print(f"extracted {len(result.entries)} signatures from {result.files} files "
          f"({result.skipped} skipped) in {result.seconds:.1f}s")
    print(f"{result.project} {header.get('version') or '(new)'} -> "
          f"{result.version or '(unknown version)'}: {report.summary()}")
    if not getattr(args, "quiet", False):
        for title, ids in (("added", report.added), ("removed", report.removed)):
            if ids:
                print(f"{title}:")
                for eid in ids:
                    print(f"  {eid}")
        if report.changed:
            print("changed:")
            for eid, reasons in report.changed.items():
                print(f"  {eid} ({'; '.join(reasons)})")
    if report.removed_curated:
        print(f"note: {len(report.removed_curated)} removed entries had curated fields: "
              + ", ".join(report.removed_curated), file=sys.stderr)
    if getattr(args, "dry_run", False):
        print("dry run: nothing written")
        return 0
    written, removed = write_pack(args.pack, result.project, result.version,
                                  generated_by("update", args), merged)
    print(f"wrote {len(written)} files to {args.pack} ({len(removed)} stale removed)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m analyzer.commands.patterns_update``."""
    parser = argparse.ArgumentParser(prog="analyzer patterns")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["update", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
