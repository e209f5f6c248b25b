"""Which project's patterns diagnose each real log, with and without the run's project and version.

    python benchmarks/projects.py ../shared/reallogs/github             # version-aware (the default)
    python benchmarks/projects.py ../shared/reallogs/github --plain     # every pattern, no version

Each log goes through the engine as `analyzer scan` reads it. Per log: the server and version it reveals, and each incident's pattern id with its project
(`*` marks the run's root cause).
Last, per project, the incidents that got a pattern, and how many cases whose manifest raise site lies
inside sglang/, vllm/ or torch/ have a root-cause pattern of that same project that the log's release
raises (or, with no release known, any release), and how many incidents got a pattern of the other
LLM server (an SGLang pattern on a vLLM log).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.core.scan import Analysis
from analyzer.core.versions import SERVERS
from analyzer.engine import Engine, Options
from analyzer.sources.histories import Histories
from benchmarks.reallogs import read_manifest

_PROJECTS = ("sglang", "vllm", "torch")
_SAME = {"pytorch": "torch"}  # the hand-written PyTorch pages name the project as people say it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--plain", action="store_true", help="every pattern, no project or version selection")
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    args = parser.parse_args(argv)
    engine = Engine(Options.resolve())
    histories = Histories()
    per_project: Counter[str] = Counter()
    own, own_cases, foreign = 0, 0, 0
    for case in read_manifest(args.folder):
        path = str(args.folder / case.file)
        analysis = engine.analysis()
        if args.plain:  # every pattern, whatever the run
            analysis = Analysis(engine.matcher, engine.options.window_seconds, engine.options.app_packages,
                                engine.options.run_gap_seconds)
        for event in engine.events(engine.expand([path], lambda problem: None), lambda problem: None):
            analysis.add(event)
        config = engine.run_config(path)
        server = config.server.value if config is not None and config.server is not None else None
        version = config.version if config is not None and server else None
        versions = {server: version} if server and version else {}
        rows = []
        for incident in analysis.incidents():
            pattern = incident.diagnosis.pattern
            project = (pattern.source.project or "common") if pattern else None
            if project:
                per_project[project] += 1
                if server and project in {p.value for p in SERVERS} - {server}:
                    foreign += 1
            rows.append((incident, pattern, project))
        site_project = case.raise_site.split("/", 1)[0] if case.raise_site else ""
        if site_project in _PROJECTS:
            own_cases += 1
            if any(_own(row, site_project, versions, histories) for row in rows if row[0].is_run_root):
                own += 1
        if not args.quiet:
            found = ", ".join(f"{'*' if incident.is_run_root else ''}{p.id} [{project} {p.source.version or ''}]"
                              for incident, p, project in rows if p) or "-"
            print(f"{case.file}: {server or '?'} {version or ''} -> {found}")
    print("patterns per project: " + ", ".join(f"{p} {n}" for p, n in sorted(per_project.items())))
    print(f"other server's pattern: {foreign}")
    print(f"own project and release: {own}/{own_cases}")
    return 0


def _own(row, project: str, versions: dict[str, str], histories) -> bool:
    _, pattern, pattern_project = row
    if pattern is None or _SAME.get(pattern_project, pattern_project) != project:
        return False
    history, version = histories.get(project), versions.get(project)
    if history is None or version is None or pattern.id not in history.spans or not history.release(version):
        return True
    return history.line_in(pattern.id, version) is not None


if __name__ == "__main__":
    raise SystemExit(main())
