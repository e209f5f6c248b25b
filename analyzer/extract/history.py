"""Signature history: extract many releases of one project and merge them by the stable id.

Each release is a wheel (a zip of the sources, read without installing it) or a source tree. A
file's signatures are cached under its content hash, so a release that changed a hundred files
costs a hundred files: most of a patch release is read from the cache. A finished release is
cached too, which makes an interrupted build resumable.

The merged history is one line per signature: its id, then the version spans that raise it with
the line in each (`0.4.3-0.4.10:231 0.5.1-0.5.23:240`); a span ends where the line changes or the
signature disappears. Signatures that the newest release no longer raises are written as an
ordinary pack (their last release's entry), so logs of old releases still match them.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.core.versions import History, Span, version_key
from analyzer.extract.emit import build_entries
from analyzer.extract.scan import find_sources
from analyzer.extract.walker import ParseFailure, extract_source

__all__ = ["Release", "cached_release", "extract_release", "extractor_key", "merge_releases", "read_sources", "removed_entries"]

# Test suites never raise in a served model's log; leaving them out keeps the history small.
DEFAULT_EXCLUDE = ("*/test/*", "*/tests/*")
_EXTRACTOR_FILES = ("walker.py", "message.py", "emit.py")


@dataclass(frozen=True, slots=True)
class Release:
    version: str
    entries: tuple[dict[str, Any], ...]
    files: int
    cached_files: int


def extractor_key() -> str:
    """A hash of the extractor's own code: a changed extractor invalidates every cached file."""
    digest = hashlib.sha1()
    here = Path(__file__).resolve().parent
    for name in _EXTRACTOR_FILES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:12]


def read_sources(source: str | os.PathLike, project: str, exclude: Sequence[str] = DEFAULT_EXCLUDE,
                 include: Sequence[str] = ()) -> list[tuple[str, bytes]]:
    """`(relpath, bytes)` of every `.py` file of `project` in a wheel or a source tree, sorted;
    with `include`, only those matching one of its globs (`torch/distributed/*`)."""
    path = Path(source)

    def wanted(name: str) -> bool:
        return not any(fnmatch.fnmatch(name, p) for p in exclude) and (
            not include or any(fnmatch.fnmatch(name, p) for p in include))

    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            names = [n for n in wheel.namelist()
                     if n.startswith(project + "/") and n.endswith(".py") and not _hidden(n) and wanted(n)]
            return [(name, wheel.read(name)) for name in sorted(names)]
    _, files = find_sources(path / project if (path / project).is_dir() else path, exclude)
    return [(rel, file.read_bytes()) for file, rel in files if wanted(rel)]


def _hidden(name: str) -> bool:
    return any(part.startswith(".") or part == "__pycache__" for part in name.split("/")[:-1])


def _scan(job: tuple[str, bytes]) -> list[dict[str, Any]] | None:
    rel, data = job
    try:
        return extract_source(data, filename=rel)
    except ParseFailure:
        return None
    except (RecursionError, ValueError):  # an extractor bug on one odd file must not sink a release
        return None


def _release_file(cache: Path, project: str, version: str, exclude: Sequence[str], include: Sequence[str]) -> Path:
    scope = hashlib.sha1(repr((sorted(exclude), sorted(include))).encode()).hexdigest()[:8]  # what was read
    return cache / "releases" / extractor_key() / f"{project}-{version}-{scope}.json"


def cached_release(project: str, version: str, cache: str | os.PathLike, exclude: Sequence[str] = DEFAULT_EXCLUDE,
                   include: Sequence[str] = ()) -> Release | None:
    """A release extracted before with the same extractor and files, without its wheel; else None."""
    done = _release_file(Path(cache), project, version, exclude, include)
    if not done.is_file():
        return None
    data = json.loads(done.read_text(encoding="utf-8"))
    return Release(version, tuple(data["entries"]), data["files"], data["files"])


def extract_release(source: str | os.PathLike, project: str, version: str, cache: str | os.PathLike,
                    jobs: int = 2, exclude: Sequence[str] = DEFAULT_EXCLUDE, include: Sequence[str] = ()) -> Release:
    """The entries of one release, from the release cache or by scanning only the files not seen before."""
    cached = cached_release(project, version, cache, exclude, include)
    if cached is not None:
        return cached
    cache = Path(cache)
    key = extractor_key()
    done = _release_file(cache, project, version, exclude, include)
    sources = read_sources(source, project, exclude, include)
    file_dir = cache / "files" / key
    file_dir.mkdir(parents=True, exist_ok=True)
    per_file: dict[str, list[dict[str, Any]] | None] = {}
    missing = []
    for rel, data in sources:
        stored = file_dir / (hashlib.sha1(data).hexdigest() + ".json")
        if stored.is_file():
            per_file[rel] = json.loads(stored.read_text(encoding="utf-8"))
        else:
            missing.append((rel, data, stored))
    jobs_list = [(rel, data) for rel, data, _ in missing]
    if jobs > 1 and len(jobs_list) >= 32:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_scan, jobs_list, chunksize=8))
    else:
        results = [_scan(job) for job in jobs_list]
    for (rel, _, stored), sigs in zip(missing, results):
        per_file[rel] = sigs
        _write_atomic(stored, json.dumps(sigs))
    entries = build_entries(project, version, ((rel, sigs) for rel, sigs in per_file.items() if sigs))
    done.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(done, json.dumps({"files": len(sources), "entries": entries}))
    return Release(version, tuple(entries), len(sources), len(sources) - len(missing))


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def merge_releases(project: str, releases: Iterable[Release]) -> tuple[History, dict[str, dict[str, Any]]]:
    """Merge releases (any order) into a History, and each id's entry from the last release raising it."""
    ordered = sorted(releases, key=lambda r: version_key(r.version))
    versions = tuple(r.version for r in ordered)
    spans: dict[str, list[Span]] = {}
    latest: dict[str, dict[str, Any]] = {}
    for index, release in enumerate(ordered):
        for entry in release.entries:
            sid, line = entry["id"], entry["source"]["line"]
            runs = spans.setdefault(sid, [])
            last = runs[-1] if runs else None
            if last is not None and last.last == versions[index - 1] and last.line == line:
                runs[-1] = Span(last.first, release.version, line)
            else:
                runs.append(Span(release.version, release.version, line))
            latest[sid] = entry
    history = History(project, versions, {sid: tuple(runs) for sid, runs in spans.items()})
    return history, latest


def removed_entries(history: History, latest: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of signatures the newest release no longer raises, tagged `removed`, by path and line."""
    newest = history.versions[-1]
    out = []
    for sid, runs in history.spans.items():
        if runs[-1].last != newest:
            entry = dict(latest[sid])
            entry["tags"] = [*entry.get("tags", []), "removed"]
            out.append(entry)
    out.sort(key=lambda e: (e["source"]["path"], e["source"]["line"], e["id"]))
    return out
