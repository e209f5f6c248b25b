"""Which run a log file belongs to, and on which host, day and version, read from its path.

Every file found under the PATH arguments is a log of some run. Without a `run` group in the
path regex, a file directly given or directly inside a given directory is a run of its own, and
files deeper down belong to the run named by their directory (fleet/2026-08-28/node-3/run-42/).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import regex

from analyzer.core import lazyregex
from analyzer.options import run_of
from analyzer.sources.files import walk_files
from analyzer.sources.problems import OnProblem, Problem, ProblemKind

__all__ = ["LogFile", "PathLayout", "discover", "DEFAULT_PATH_REGEX", "parse_day"]

# A path component that is an ISO date, e.g. logs/2026-08-28/run-7/server.log.
DEFAULT_PATH_REGEX = r"(?:^|/)(?P<date>\d{4}-\d\d-\d\d)(?:/|$)"
# A directory named like a machine: gpu-node-01, node3, host_12, worker-7a2, 10.0.0.5.
_HOST_LIKE = lazyregex.compile(r"(?i)^(?:[a-z][\w-]*?[-_])?(?:node|host|gpu|worker|machine|server)[-_]?\w*?\d+\w*$"
                               r"|^\d{1,3}(?:\.\d{1,3}){3}$")
_FIELDS = ("run", "host", "date", "version")


@dataclass(frozen=True, slots=True)
class LogFile:
    path: str  # as found: the PATH argument joined with the walk below it
    run: str
    host: str | None  # from the path; the log's own prefixes fill in later
    date: date | None
    version: str | None
    host_hint: str | None = None  # a directory named like a machine: the host when neither regex nor log says


def host_hint(path: str, argument: str) -> str | None:
    """The innermost directory below `argument` whose name looks like a machine's, or None."""
    folder, base = os.path.dirname(path), argument.rstrip(os.sep)
    if path == argument or folder == (base or os.sep):
        below = ""
    elif folder.startswith(base + os.sep):  # as the walk joins them: no relpath, which is slow
        below = folder[len(base) + 1:]
    else:
        below = os.path.relpath(folder, argument)
    parts = [part for part in below.replace(os.sep, "/").split("/") if part not in ("", ".", "..")]
    return next((part for part in reversed(parts) if _HOST_LIKE.match(part)), None)


def parse_day(text: str | None) -> date | None:
    """`2026-08-28` or `20260828`; anything else is no date (never an error)."""
    if not text:
        return None
    try:
        return date.fromisoformat(text.replace("/", "-").replace("_", "-"))
    except ValueError:
        return None


class PathLayout:
    """Reads run, host, date and version from file paths with one regex of named groups."""

    def __init__(self, pattern: str | None = None) -> None:
        source = pattern or DEFAULT_PATH_REGEX
        try:
            self._regex = regex.compile(source)
        except regex.error as err:
            raise ValueError(f"invalid path regex {source!r}: {err}") from None
        unknown = sorted(set(self._regex.groupindex) - set(_FIELDS))
        if unknown:
            raise ValueError(f"path regex group(s) {', '.join(unknown)} not known; "
                             f"use (?P<run>...), (?P<host>...), (?P<date>...), (?P<version>...)")

    def describe(self, path: str, argument: str) -> LogFile:
        slashed = path.replace(os.sep, "/")
        found = self._regex.search(slashed)
        groups = {k: v for k, v in found.groupdict().items() if v} if found else {}
        return LogFile(path=path, run=groups.get("run") or run_of(path, argument),
                       host=groups.get("host"), date=parse_day(groups.get("date")),
                       version=groups.get("version"), host_hint=host_hint(path, argument))


def discover(arguments: list[str], include: tuple[str, ...], on_problem: OnProblem
             ) -> Iterator[tuple[str, str]]:
    """(file, argument) for every entry that is not a directory, unreadable ones included: a
    run whose log cannot be read is still a run, and is reported as such."""
    for argument in arguments:
        if os.path.isdir(argument):
            for path in walk_files(argument, on_problem):
                if not include or any(fnmatch.fnmatch(os.path.basename(path), glob) for glob in include):
                    yield path, argument
        elif os.path.lexists(argument):
            yield argument, argument
        else:
            on_problem(Problem(ProblemKind.MISSING, argument, "no such file or directory"))


