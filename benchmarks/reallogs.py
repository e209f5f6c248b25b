"""Score `analyzer` on a folder of real logs with a ground-truth manifest.

    python benchmarks/reallogs.py ../shared/reallogs/github            # one line per failure, N/M last
    python benchmarks/reallogs.py DIR --strict                         # the run's ROOT CAUSE must be it
    python benchmarks/reallogs.py DIR --verbose                        # every case, with what was found

`MANIFEST.tsv` has the columns `file`, `exception_type`, `message`, `raise_site` (tab separated, a
header line first). A case passes when some incident, or a link of its chain, has the manifest's
exception type (compared by its last dotted part), a message that starts with the manifest's message (the
blanks that ends with aside), and, when `raise_site` is given (`path:line`), a raise site whose path ends
with that path at that line. An empty `raise_site` (or `-`: the error has no frame in the log) is not checked. With `--strict` the match must be the incident marked as
its run's root cause (or a link of its chain).

Every case also checks that the run's root cause is a complete incident (not a traceback cut off
before its exception line) whenever the log has a complete one; a case that breaks that fails too.
"""

from __future__ import annotations

import argparse
import csv
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.engine import Engine, Options
from analyzer.sinks.serialize import incident_dict


@dataclass(frozen=True)
class Case:
    file: str
    exception_type: str
    message: str
    raise_site: str


def read_manifest(folder: Path) -> list[Case]:
    with open(folder / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Case(r["file"], r["exception_type"] or "", r["message"] or "", r["raise_site"] or "")
                for r in rows]


def _links(incident: dict) -> list[dict]:
    return [incident, *_chain_links(incident["chain"])]


def _chain_links(chain: list[dict]) -> list[dict]:
    """A chain's links and those of its groups' sub-exceptions, nested groups too."""
    links = list(chain)
    for link in chain:
        for sub in link.get("sub_exceptions") or ():
            links.extend(_chain_links(sub))
    return links


_BOLD_DUNDER = re.compile(r"\*\*(\w+)\*\*")
_SAYING = re.compile(r"\A(?:[^\w\n]*\n)+")  # the lines a message begins with that say nothing (rules, blanks)


_STD_TYPEINFO = re.compile(r"\ASt\d+(?=[a-z_])")  # a std class as its typeinfo names it: `St13runtime_error`
_RAY_WRAPPED = re.compile(r"\A(?:[\w.]*\.)?RayTaskError\((?P<inner>[\w.]+)\)\Z")
# A signal as a shell or libc words it, and as the tool names it.
_SIGNALS = {"segmentation fault": "SIGSEGV", "bus error": "SIGBUS", "aborted": "SIGABRT", "glibc abort": "SIGABRT",
            "killed": "SIGKILL"}


def _short_type(name: str) -> str:
    """The class's own name: a C++ one as the tool writes it (demangled: `std::runtime_error`); Ray's
    `RayTaskError(ValueError)`, an instance of both, as the class it wraps; a signal by its name."""
    if (m := _RAY_WRAPPED.match(name)) is not None:
        name = m["inner"]
    name = _SIGNALS.get(name.lower(), name)
    return _STD_TYPEINFO.sub("std::", name).rsplit(".", 1)[-1]


def _fits(case: Case, link: dict) -> bool:
    if _short_type(link["exception_type"] or "") != _short_type(case.exception_type):
        return False
    # (a message may begin with a line break, and with rules above its first line of text, as the tool's headline
    # reads it: torchelastic's summary; one copied from a page's HTML source is read as the page shows it; the blanks
    # a message ends with are not told, as a log that trims its lines shows it: torch's `... signal: Killed. `)
    said = html.unescape(case.message).rstrip()
    message = (link["message"] or "").lstrip()
    if not (message.startswith(said) or _SAYING.sub("", message).startswith(said)):
        return False
    if case.raise_site in ("", "-"):
        return True
    path, _, line = case.raise_site.replace("\\", "/").rpartition(":")  # a Windows path as printed
    path = _BOLD_DUNDER.sub(r"__\1__", path)  # (a dunder name as the paste's markdown rendered it: `**init**.py`)
    site = link["raise_site"]
    # (as printed, or as the tool reads it: a path escaped as in a repr, `C:\\app\\x.py`, is `C:/app/x.py`)
    return bool(site) and (site["path"].replace("\\", "/").endswith(path) or site["relpath"].endswith(path)) and str(
        site["line"]) == line


def score(case: Case, incidents: list[dict], strict: bool) -> str | None:
    """None when the case passes, else why not."""
    roots = [i for i in incidents if i["is_run_root"]]
    pool = roots if strict else incidents
    if not any(_fits(case, link) for incident in pool for link in _links(incident)):
        found = "; ".join(f"{i['id']}{'*' if i['is_run_root'] else ''} {i['exception_type'] or '?'}: "
                          f"{(i['message'] or '')[:50]!r}" for i in incidents[:6])
        return f"not found (found: {found or 'nothing'})"
    complete = [i for i in incidents if not i["truncated"] and i["exception_type"]]
    cut_roots = [i for i in roots if i["truncated"] and not i["exception_type"]]
    if complete and cut_roots:
        return f"run root {cut_roots[0]['id']} is a cut-off fragment while a complete incident exists"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--strict", action="store_true", help="the match must be the run's root cause")
    parser.add_argument("--verbose", action="store_true", help="print every case")
    args = parser.parse_args(argv)
    if not (args.folder / "MANIFEST.tsv").is_file():
        parser.error(f"no MANIFEST.tsv in {args.folder}")
    cases = read_manifest(args.folder)
    engine = Engine(Options())
    passed = 0
    for case in cases:
        incidents = [incident_dict(i) for i in engine.analyse([str(args.folder / case.file)], print).incidents]
        why = score(case, incidents, args.strict)
        passed += why is None
        if why is not None or args.verbose:
            print(f"{'FAIL' if why else 'ok  '} {case.file}: {why or ''}")
    print(f"{passed}/{len(cases)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
