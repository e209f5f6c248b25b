"""`analyzer patterns extract`: build a pattern pack from Python source (its --help text below)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from analyzer import __version__
from analyzer.commands.exit_codes import Exit

__all__ = ["register", "run", "add_source_arguments", "resolve_source", "generated_by"]

DESCRIPTION = """\
Build a pattern pack from Python source: every error message the code can raise, as a signature.

  analyzer patterns extract PATH -o DIR [--project NAME] [--version V]
  analyzer patterns extract --package NAME -o DIR [...]

PATH is a source tree or a single .py file; --package finds an installed package without
importing it. The source is only parsed, never run. Files that do not parse are skipped with a
one-line warning on stderr.
"""


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments shared by ``extract`` and ``update``."""
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="source tree (directory) or a single .py file")
    p.add_argument("--package", metavar="NAME",
                   help="scan an installed package (located, not imported)")
    p.add_argument("--project", metavar="NAME",
                   help="project name for ids and source (default: top-level package name)")
    p.add_argument("--version", dest="pack_version", metavar="V",
                   help="version recorded in the pack (default: detected from metadata)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip files whose package-relative path matches GLOB (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: min(2, cpus))")


def resolve_source(args: Any) -> tuple[str | None, str | None, str | None]:
    """Return (path, package, error message)."""
    path = getattr(args, "path", None)
    package = getattr(args, "package", None)
    if (path is None) == (package is None):
        return None, None, "give exactly one of PATH or --package NAME"
    return path, package, None


def generated_by(command: str, args: Any) -> str:
    parts = ["analyzer", "patterns", command]
    if getattr(args, "package", None):
        parts += ["--package", args.package]
    else:
        parts.append(args.path)
    if getattr(args, "project", None):
        parts += ["--project", args.project]
    if getattr(args, "pack_version", None):
        parts += ["--version", args.pack_version]
    for pat in getattr(args, "exclude", None) or []:
        parts += ["--exclude", pat]
    return f"{shlex.join(parts)} (analyzer {__version__})"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "extract",
        help="extract error-message signatures from Python source into a pattern pack",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output directory (one YAML per subpackage) or a single .yaml file")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from analyzer.extract.emit import write_pack
    from analyzer.extract.scan import extract_tree

    path, package, err = resolve_source(args)
    if err:
        print(f"analyzer: error: {err}", file=sys.stderr)
        return Exit.USAGE
    try:
        result = extract_tree(path, package=package, project=getattr(args, "project", None),
                              version=getattr(args, "pack_version", None),
                              jobs=getattr(args, "jobs", None),
                              exclude=getattr(args, "exclude", None) or ())
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # missing input: a usage error, as with `scan`
        print(f"analyzer: error: {exc}", file=sys.stderr)
        return Exit.USAGE
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    written, removed = write_pack(args.output, result.project, result.version,
                                  generated_by("extract", args), result.entries)
    print(f"extracted {len(result.entries)} signatures from {result.files} files "
          f"({result.skipped} skipped) in {result.seconds:.1f}s")
    print(f"{result.project} {result.version or '(unknown version)'} -> {args.output} "
          f"({len(written)} files written, {len(removed)} stale removed)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m analyzer.commands.patterns_extract``."""
    parser = argparse.ArgumentParser(prog="analyzer patterns")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["extract", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
