"""`analyzer patterns build-history`: a project's signature history over its PyPI releases.

    analyzer patterns build-history sglang --from 0.3.0 --to 0.5.23 -o patterns/sglang
    analyzer patterns build-history sglang --versions 0.4.3,0.5.0 --wheels /tmp/wheels/sglang -o DIR

Each release's wheel is downloaded once into --wheels (`pip download --no-deps`, never installed)
and read as a zip. Signatures are cached per file content and per release under --cache, so a second
run, or one that was interrupted, only scans what it has not seen. Writes `OUT/history.tsv` (each
signature's releases and line per release) and `OUT/extracted/removed/` (a pack of the signatures the newest
release no longer raises, less those a page in `OUT/curated/` already explains). Without --versions,
the releases are the final ones (no .postN, rc or dev) that `pip index versions` lists between
--from and --to.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from analyzer import __version__
from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.versions import format_history, version_key
from analyzer.extract.emit import write_pack
from analyzer.extract.history import (
    DEFAULT_EXCLUDE,
    cached_release,
    extract_release,
    merge_releases,
    removed_entries,
)
from analyzer.sources.packs import load_pack_files, pack_files

__all__ = ["REMOVED", "register", "run"]

REMOVED = "extracted/removed"  # beside the current release's pack, which `patterns update` rewrites one level up

_FINAL = re.compile(r"\d+(\.\d+)*")


def register(subparsers) -> None:
    parser = subparsers.add_parser("build-history", help="build a signature history over a project's releases",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("project", help="the distribution and top-level package name, e.g. sglang")
    parser.add_argument("--versions", help="comma-separated releases (default: from pip index, see --from/--to)")
    parser.add_argument("--from", dest="first", help="oldest release to include")
    parser.add_argument("--to", dest="last", help="newest release to include")
    parser.add_argument("--wheels", default=None, help="wheel directory (default: /tmp/wheels/PROJECT)")
    parser.add_argument("--source", action="append", default=[], metavar="VERSION=PATH",
                        help="a release from a source tree or wheel instead of PyPI (repeatable)")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "analyzer", "history"))
    parser.add_argument("-o", "--out", required=True, help="pack directory: gets history.tsv and extracted/removed/")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="also skip files whose package-relative path matches GLOB (tests always are)")
    parser.add_argument("--include", action="append", default=[], metavar="GLOB",
                        help="only files whose package-relative path matches one GLOB (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sources = dict(item.split("=", 1) for item in args.source)
    versions = args.versions.split(",") if args.versions else [] if sources else _index(args.project, args.first, args.last)
    wheels = Path(args.wheels or f"/tmp/wheels/{args.project}")
    releases = []
    for version in sorted(set(versions) | set(sources), key=version_key):
        started = time.perf_counter()
        exclude = (*DEFAULT_EXCLUDE, *args.exclude)
        release = cached_release(args.project, version, args.cache, exclude, args.include)
        if release is None:
            source = sources.get(version) or _wheel(args.project, version, wheels)
            if source is None:
                print(f"{version}: no wheel (skipped)", file=sys.stderr)
                continue
            release = extract_release(source, args.project, version, args.cache, args.jobs, exclude, args.include)
        print(f"{version}: {len(release.entries)} signatures, {release.files} files "
              f"({release.cached_files} cached) in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        releases.append(release)
    if not releases:
        print("no releases", file=sys.stderr)
        return 1
    history, latest = merge_releases(args.project, releases)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "history.tsv").write_text(format_history(history), encoding="utf-8")
    removed = _not_curated(removed_entries(history, latest), out / "curated")
    command = f"analyzer patterns build-history {args.project} (analyzer {__version__})"
    write_pack(out / REMOVED, args.project, None, command, removed)
    print(f"{len(history.spans)} signatures over {len(history.versions)} releases, "
          f"{len(removed)} no longer raised by {history.versions[-1]}")
    return 0


def _not_curated(entries: list[dict], curated_dir: Path) -> list[dict]:
    """Leaves out the old signatures whose message a hand-written page of the pack already explains."""
    curated, _ = load_pack_files(pack_files(curated_dir)) if curated_dir.is_dir() else ([], [])
    if not curated:
        return entries
    matcher = Matcher(curated)
    return [e for e in entries if not any(
        matcher.match_message(example, e["exception"].rsplit(".", 1)[-1]).match_kind is MatchKind.EXACT
        for example in e.get("examples") or ())]


def _index(project: str, first: str | None, last: str | None) -> list[str]:
    listing = subprocess.run([sys.executable, "-m", "pip", "index", "versions", project],
                             capture_output=True, text=True, check=True).stdout
    line = next(row for row in listing.splitlines() if row.startswith("Available versions:"))
    found = [v.strip() for v in line.split(":", 1)[1].split(",")]
    low = version_key(first) if first else None
    high = version_key(last) if last else None
    return [v for v in found if _FINAL.fullmatch(v)
            and (low is None or version_key(v) >= low) and (high is None or version_key(v) <= high)]


def _wheel(project: str, version: str, wheels: Path) -> Path | None:
    found = sorted(wheels.glob(f"{project}-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{project}=={version}",
                        "-d", str(wheels)], check=False)
        found = sorted(wheels.glob(f"{project}-{version}-*.whl"))
    return found[0] if found else None
