"""Which project and release a log comes from, and what each release raises.

A `History` says, per signature id, which releases raise it and at which line (spans of
consecutive releases with one line each). `VersionSniffer` reads log lines and finds the LLM
server (SGLang or vLLM) and its version from banners, install paths and stack frames (the engine
takes both from the run's configuration, core/runconfig.py). From both, `patterns_for_run` (and
`RunStore`, the same over a lazily read store) keeps the patterns of the run's own server and, for a
known release, moves each signature to that release's line and leaves out those the release does
not raise; `TieredMatcher` matches against those first and against every release after, and puts
the releases line (`version_note`) on each diagnosis. `RunMatchers` builds one per kind of run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import regex

from analyzer.core import lazyregex
from analyzer.core.matcher import Diagnosis, Matcher, MatchKind
from analyzer.core.records import ErrorEvent, ErrorInfo, package_relative
from analyzer.core.schema import Pattern
from analyzer.core.store import PatternStore, Site

__all__ = [
    "SERVERS",
    "History",
    "LifeEvent",
    "LifeKind",
    "Project",
    "RunMatchers",
    "RunStore",
    "Span",
    "TieredMatcher",
    "VersionSniffer",
    "detect_version",
    "format_history",
    "parse_history",
    "patterns_for_run",
    "select_patterns",
    "version_key",
    "version_note",
]


class Project(enum.Enum):
    SGLANG = "sglang"
    VLLM = "vllm"
    TORCH = "torch"


SERVERS = (Project.SGLANG, Project.VLLM)  # the LLM servers: a run is one of them, never both

_VERSION_PART = lazyregex.compile(r"(\d+(?:\.\d+)*)(?:[.-]?(a|b|rc|dev)(\d*))?(?:[.-]?post(\d+))?")
_PRE = {"dev": 0, "a": 1, "b": 2, "rc": 3, None: 4}


def version_key(version: str) -> tuple:
    """`0.4.6.post1` -> a key that sorts releases as PEP 440 does for the forms projects use."""
    found = _VERSION_PART.match(version.lstrip("v"))
    if not found:
        return ((0,) * 4, 0, 0, 0)
    numbers = tuple(int(n) for n in found[1].split("."))
    numbers = (numbers + (0,) * 4)[:4]
    return numbers, _PRE[found[2]], int(found[3] or 0), int(found[4] or 0)


@dataclass(frozen=True, slots=True)
class Span:
    """Consecutive releases `first`..`last` (both included) that raise a signature at `line`."""

    first: str
    last: str
    line: int


class LifeKind(enum.Enum):
    ADDED = "added"
    MOVED = "moved"
    REWORDED = "reworded"
    RELOCATED = "relocated"  # the same message now raised from another function or module
    REMOVED = "removed"
    RETURNED = "returned"


@dataclass(frozen=True, slots=True)
class LifeEvent:
    version: str
    kind: LifeKind
    detail: str = ""


@dataclass(frozen=True)
class History:
    project: str
    versions: tuple[str, ...]  # every release the history was built from, oldest first
    spans: Mapping[str, tuple[Span, ...]] = field(hash=False)

    @cached_property
    def _keys(self) -> tuple[tuple, ...]:
        return tuple(version_key(v) for v in self.versions)

    @cached_property
    def _by_function(self) -> dict[str, list[str]]:
        """Ids by their `module.function` part: a reworded message keeps it and changes its hash."""
        return _grouped(self.spans, _site_part)

    def release(self, version: str) -> str | None:
        """The newest release of the history at or before `version` (`0.4.6.post1` -> `0.4.6`)."""
        key = version_key(version)
        fit = [v for v, k in zip(self.versions, self._keys) if k <= key]
        return fit[-1] if fit else None

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {version: index for index, version in enumerate(self.versions)}

    def _index(self, version: str) -> int:
        return self._positions[version]

    def line_in(self, sid: str, version: str) -> int | None:
        """The line `sid` is raised at in the release of `version`; None when it does not raise it."""
        release = self.release(version)
        if release is None:
            return None
        at = self._index(release)
        for span in self.spans.get(sid, ()):
            if self._index(span.first) <= at <= self._index(span.last):
                return span.line
        return None

    @cached_property
    def _by_message(self) -> dict[str, list[str]]:
        """Ids by their hash of exception and template: the same message raised from another place."""
        return _grouped(self.spans, _message_part)

    @cached_property
    def _by_module(self) -> dict[str, list[str]]:
        return _grouped(self.spans, lambda sid: sid.rsplit(".", 2)[0])

    def in_function(self, module: str, function_slug: str) -> list[str]:
        """Ids of `module` whose function slug is `function_slug` or a method of that name."""
        out = []
        for sid in self._by_module.get(module, ()):
            slug = sid.rsplit(".", 2)[1]
            if slug == function_slug or slug.endswith("-" + function_slug):
                out.append(sid)
        return out

    def removed_in(self, sid: str) -> str | None:
        """The first release after the last one that raises `sid`; None while the newest raises it."""
        spans = self.spans.get(sid)
        if not spans or spans[-1].last == self.versions[-1]:
            return None
        return self.versions[self._index(spans[-1].last) + 1]

    def successors(self, sid: str, version: str) -> list[str]:
        """Ids of the same function that first appear in `version`: what `sid` was reworded to."""
        return [other for other in self._by_function.get(_site_part(sid), ())
                if other != sid and self.spans[other][0].first == version]

    def relocated(self, sid: str, version: str) -> list[str]:
        """Ids elsewhere that raise the same message in `version`: where the code of `sid` went."""
        return [other for other in self._by_message.get(_message_part(sid), ())
                if other != sid and self.line_in(other, version) is not None]

    def life(self, sid: str) -> list[LifeEvent]:
        """Added, moved, reworded, removed and returned, in release order."""
        spans = self.spans.get(sid, ())
        events: list[LifeEvent] = []
        for index, span in enumerate(spans):
            if index == 0:
                oldest = " (already in the oldest release scanned)" if span.first == self.versions[0] else ""
                events.append(LifeEvent(span.first, LifeKind.ADDED, f"line {span.line}{oldest}"))
            elif self._index(span.first) == self._index(spans[index - 1].last) + 1:
                events.append(LifeEvent(span.first, LifeKind.MOVED, f"line {spans[index - 1].line} -> {span.line}"))
            else:
                events.append(LifeEvent(span.first, LifeKind.RETURNED, f"line {span.line}"))
            following = self._index(span.last) + 1
            gap = index + 1 == len(spans) or self._index(spans[index + 1].first) > following
            if following < len(self.versions) and gap:
                version = self.versions[following]
                relocated = self.relocated(sid, version)
                reworded = self.successors(sid, version)
                kind = LifeKind.RELOCATED if relocated else LifeKind.REWORDED if reworded else LifeKind.REMOVED
                events.append(LifeEvent(version, kind, ", ".join(relocated or reworded)))
        return events

    def ranges(self, sid: str) -> str:
        """`0.4.3–0.4.10, 0.5.2–0.5.23`: the releases that raise `sid`, line moves merged."""
        merged: list[list[str]] = []
        for span in self.spans.get(sid, ()):
            if merged and self._index(span.first) == self._index(merged[-1][1]) + 1:
                merged[-1][1] = span.last
            else:
                merged.append([span.first, span.last])
        return ", ".join(first if first == last else f"{first}–{last}" for first, last in merged)

    def note(self, sid: str, version: str | None = None) -> str:
        """What a page says about the releases: `raised in 0.4.3–0.4.10; removed in 0.5.0`,
        `new in 0.5.21`, and `upgrade to X fixes this` when a later release dropped it unreplaced."""
        spans = self.spans.get(sid)
        if not spans:
            return ""
        parts = []
        first = spans[0].first
        if first != self.versions[0] and spans[-1].last == self.versions[-1] and len(spans) == 1:
            parts.append(f"new in {first}")
        else:
            parts.append(f"raised in {self.ranges(sid)}")
        removed = self.removed_in(sid)
        if removed:
            relocated = self.relocated(sid, removed)
            reworded = self.successors(sid, removed)
            parts.append(f"moved elsewhere in {removed}" if relocated else
                         f"reworded in {removed}" if reworded else f"removed in {removed}")
            if not (relocated or reworded) and (version is None or version_key(version) < version_key(removed)):
                parts.append(f"upgrade to {removed} fixes this")
        if version is not None and self.release(version) and self.line_in(sid, version) is None:
            parts.append(f"not raised by {version}")
        return "; ".join(parts)


def _grouped(ids: Iterable[str], key: Callable[[str], str]) -> dict[str, list[str]]:
    """Signature ids by a part of them, in their order."""
    out: dict[str, list[str]] = {}
    for sid in ids:
        out.setdefault(key(sid), []).append(sid)
    return out


def _site_part(sid: str) -> str:
    return sid.rsplit(".", 1)[0]


def _message_part(sid: str) -> str:
    return sid.rsplit(".", 1)[-1].split("-", 1)[0]


def format_history(history: History) -> str:
    """The text form: a header, the release list, then one line per id, sorted."""
    lines = ["# signature history: id, then the releases raising it as first-last:line",
             f"project\t{history.project}", "versions\t" + " ".join(history.versions)]
    for sid in sorted(history.spans):
        spans = " ".join(f"{s.first}:{s.line}" if s.first == s.last else f"{s.first}-{s.last}:{s.line}"
                         for s in history.spans[sid])
        lines.append(f"{sid}\t{spans}")
    return "\n".join(lines) + "\n"


def parse_history(text: str) -> History:
    project = ""
    versions: tuple[str, ...] = ()
    raw: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition("\t")
        if head == "project":
            project = rest.strip()
        elif head == "versions":
            versions = tuple(rest.split())
        else:
            raw[head] = rest
    return History(project, versions, _SpanTable(raw))


class _SpanTable(Mapping[str, tuple[Span, ...]]):
    """Spans by id, each id's text parsed when it is first asked for: a history of 40,000 ids
    opens in a tenth of the time, and a run asks for a handful."""

    def __init__(self, raw: dict[str, str]) -> None:
        self._raw = raw
        self._parsed: dict[str, tuple[Span, ...]] = {}

    def __getitem__(self, sid: str) -> tuple[Span, ...]:
        found = self._parsed.get(sid)
        if found is None:
            found = self._parsed[sid] = tuple(_span(item) for item in self._raw[sid].split())
        return found

    def __contains__(self, sid: object) -> bool:
        return sid in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _span(item: str) -> Span:
    """`0.4.3-0.4.10:412` or `0.5.2:97`."""
    releases, _, number = item.rpartition(":")
    first, _, last = releases.partition("-")
    return Span(first, last or first, int(number))


# ---------------------------------------------------------------------------------------------
# the run's project and version, from its log lines

_NAME = r"(?P<name>sglang|vllm|torch|pytorch)"
_NUMBER = r"v?(?P<version>\d+\.\d+(?:\.\d+)*(?:(?:\.|-)?(?:post|rc|dev|a|b)\d*)*)"
_VERSION_FORMS = (
    # banners: `sglang version 0.5.23`, `vLLM API server version 0.9.1`, `PyTorch version: 2.3.0`
    lazyregex.compile(_NAME + r"\b[^\n]{0,40}?\bversion\b[\s:=]*" + _NUMBER, regex.I),
    # `Initializing a V0 LLM engine (v0.8.3) with config`
    lazyregex.compile(r"(?P<name>LLM) engine \(" + _NUMBER + r"\)"),
    # pins, install directories, images: `sglang==0.4.6`, `sglang-0.4.6.post1/`, `lmsysorg/sglang:v0.4.6`
    lazyregex.compile(r"(?<![\w-])" + _NAME + r"(?:==|-(?=\d)|:(?=v?\d))" + _NUMBER, regex.I),
    # `pip list`: `sglang      0.4.6.post1`
    lazyregex.compile(r"^\s*" + _NAME + r"[ \t]{2,}" + _NUMBER + r"\s*$", regex.I),
)
_NAMED = lazyregex.compile(_NAME + r"|LLM engine \(", regex.I)  # what every form above holds
# The servers' names among them as plain words, lower case or as written (a name is a project's only
# if it lower-cases to one; `detect_version` tells only a server's).
_NAME_FORMS = (("sglang", True), ("vllm", True), ("LLM engine (", False))
_BANNER_PROJECT = (  # launch lines, banners, module names and environment variables of each server
    (lazyregex.compile(r"\bsglang\.(?:launch_server|srt|lang)\b|\bserver_args=ServerArgs\(|\bSGLANG_[A-Z_]+"), Project.SGLANG),
    (lazyregex.compile(r"\bvllm serve\b|\bvllm\.(?:entrypoints|engine|v1|model_executor|worker|executor|plugins|"
                       r"general_plugins|config|distributed)\b|\bvLLM API server\b|\bvllm-openai\b|\bVLLM_[A-Z_]+"),
     Project.VLLM),
)
_FRAME = lazyregex.compile(r'File "[^"]*?/(?P<name>sglang|vllm|torch)/')


@dataclass(slots=True)
class VersionSniffer:
    """Feed it a run's lines; it keeps the first version seen per project and counts stack frames
    by package, so that `server` names the LLM server the run belongs to."""

    versions: dict[Project, str] = field(default_factory=dict)
    frames: dict[Project, int] = field(default_factory=dict)
    banners: dict[Project, int] = field(default_factory=dict)

    def feed(self, line: str) -> None:
        self.feed_versions(line)
        if 'File "' in line:
            for found in _FRAME.finditer(line):
                project = Project(found["name"])
                self.frames[project] = self.frames.get(project, 0) + 1
        for form, project in _BANNER_PROJECT:
            if form.search(line):
                self.banners[project] = self.banners.get(project, 0) + 1

    def feed_versions(self, line: str) -> None:
        """Only the versions the line names."""
        if "ersion" in line or "==" in line or "-0." in line or ":v" in line or "engine (v" in line \
                or "  " in line:
            for form in _VERSION_FORMS:
                for found in form.finditer(line):
                    project = _project_of(found["name"])
                    if project is not None:
                        self.versions.setdefault(project, found["version"].rstrip(".-"))

    @property
    def server(self) -> Project | None:
        """SGLang or vLLM: frames outvote banners, banners outvote a bare version mention."""
        for votes in (self.frames, self.banners, self.versions):
            counted = {p: (votes[p] if isinstance(votes[p], int) else 1) for p in SERVERS if p in votes}
            if counted:
                return max(counted, key=lambda p: (counted[p], p.value))
        return None

    @property
    def named_versions(self) -> dict[str, str]:
        """The versions by project name, as `patterns_for_run` takes them."""
        return {project.value: version for project, version in self.versions.items()}

    @property
    def version(self) -> str | None:
        server = self.server
        return self.versions.get(server) if server else None


def detect_version(text: str) -> str | None:
    """The first LLM-server version `text` reveals, as `sglang 0.5.23` / `vllm 0.9.1`."""
    sniffer = VersionSniffer()
    for line in _naming_lines(text):
        sniffer.feed_versions(line)
    found = next((p for p in sniffer.versions if p in SERVERS), None)
    return f"{found.value} {sniffer.versions[found]}" if found else None


def _naming_lines(text: str) -> Iterator[str]:
    """The lines of `text` (as `splitlines` cuts them) that name a server, in order: only they can
    name its version, and they are few. Found by plain search in the text lower-cased, much faster
    than a case-blind regex over it; each line found is confirmed by `_NAMED`."""
    low = text.lower()
    if len(low) != len(text):  # (a letter whose lower case is longer: places in `low` are not those in `text`)
        yield from filter(_NAMED.search, text.splitlines())
        return
    places = sorted(at for name, lowered in _NAME_FORMS for at in _places(low if lowered else text, name))
    end = 0
    for at in places:
        if at < end:
            continue  # on a line given already
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield from filter(_NAMED.search, text[start:end].splitlines())


def _places(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def _project_of(name: str) -> Project | None:
    name = name.lower()
    if name == "llm":
        return Project.VLLM
    if name == "pytorch":
        return Project.TORCH
    return Project(name) if name in ("sglang", "vllm", "torch") else None


# ---------------------------------------------------------------------------------------------
# the patterns a run is matched against


def select_patterns(patterns: Iterable[Pattern], server: Project | None) -> tuple[Pattern, ...]:
    """A vLLM run never gets an SGLang pattern and the reverse; torch and generic ones stay."""
    return tuple(p for p in patterns if _of_server(p, server))


def _of_server(pattern: Pattern, server: Project | None) -> bool:
    project = (pattern.source.project or "").lower()
    return server is None or project == server.value or project not in _SERVER_NAMES


_SERVER_NAMES = frozenset(p.value for p in SERVERS)


def patterns_for_run(patterns: Iterable[Pattern], histories: Mapping[str, History],
                     versions: Mapping[str, str]) -> tuple[Pattern, ...]:
    """Each signature with a history, moved to the line of the run's release of its project, and
    left out when that release does not raise it. Others (curated, no version known) stay as they are."""
    return tuple(moved for p in patterns if (moved := _in_release(p, histories, versions)) is not None)


def _in_release(pattern: Pattern, histories: Mapping[str, History], versions: Mapping[str, str]) -> Pattern | None:
    project = (pattern.source.project or "").lower()
    version = versions.get(project)
    history = histories.get(project) if version is not None else None
    release = history.release(version) if history is not None and version is not None else None
    if history is None or version is None or release is None or pattern.id not in history.spans:
        return pattern
    line = history.line_in(pattern.id, version)
    return None if line is None else replace(pattern, source=replace(pattern.source, line=line, version=release))


class RunStore:
    """A pattern store as one run sees it, read lazily like the store under it: the other LLM
    server's patterns left out and, for the releases in `versions`, each signature moved to its
    line there (left out where that release does not raise it)."""

    def __init__(self, base: PatternStore, server: Project | None, histories: Mapping[str, History],
                 versions: Mapping[str, str]) -> None:
        self.base, self.server, self.histories, self.versions = base, server, histories, versions
        self._seen: dict[str, Pattern | None] = {}

    def _view(self, pattern: Pattern) -> Pattern | None:
        if pattern.id not in self._seen:
            keep = _of_server(pattern, self.server)
            self._seen[pattern.id] = _in_release(pattern, self.histories, self.versions) if keep else None
        return self._seen[pattern.id]

    def _all(self, patterns: Iterable[Pattern]) -> list[Pattern]:
        return [seen for p in patterns if (seen := self._view(p)) is not None]

    def get(self, pattern_id: str) -> Pattern | None:
        found = self.base.get(pattern_id)
        return self._view(found) if found is not None else None

    def by_word(self, word: str, short_type: str | None) -> Sequence[Pattern]:
        return self._all(self.base.by_word(word, short_type))

    def by_site(self, site: Site) -> Sequence[Pattern]:
        return self._all(self.base.by_site(site))

    def line_patterns(self) -> Sequence[Pattern]:
        return self._all(self.base.line_patterns())

    def frame_patterns(self) -> Sequence[Pattern]:
        return self._all(self.base.frame_patterns())

    def ids(self) -> frozenset[str]:
        return frozenset(p.id for p in self)

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self._all(self.base))


_STRENGTH = {MatchKind.EXACT: 4, MatchKind.RAISE_SITE: 3, MatchKind.FUZZY: 2, MatchKind.POSSIBLE: 1,
             MatchKind.UNKNOWN: 0}


class TieredMatcher:
    """Matches with the run's release first and falls back to every release when that finds less.

    When neither finds the raise site (a message-less assert, an unknown release whose lines differ
    from the newest one), the histories are asked: a signature of the frame's module and function
    that some release raises at exactly that line, or (asserts) whose asserted expression is the
    frame's code line within the raise-site window. The release that fits is put on the pattern."""

    def __init__(self, first: Matcher, fallback: Matcher, histories: Mapping[str, History] | None = None,
                 window: int = 20, versions: Mapping[str, str] | None = None,
                 others: tuple[Matcher, tuple[str, ...]] | None = None) -> None:
        """`versions`: the run's releases by project, for the releases line of each diagnosis. `others`: where the
        fallback leaves the other LLM servers' patterns out, a matcher with them and those servers' names: an error whose
        frames or text show one of them running in this run (SGLang once imported vLLM's kernels and loaders) is
        matched with them too."""
        self.first, self.fallback = first, fallback
        self.histories = histories or {}
        self.window = window
        self.versions = versions or {}
        self.others: Matcher | None = others[0] if others is not None else None
        self.other_servers: tuple[str, ...] = others[1] if others is not None else ()
        # (a module of one of them named in a message: `vllm._C`, `vllm/model_executor`)
        self._names_other = regex.compile(r"(?<![\w-])(?:" + "|".join(map(regex.escape, self.other_servers))
                                          + r")[./](?=\w)") if self.other_servers else None

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        return self.fallback.patterns

    def pattern(self, pattern_id: str) -> Pattern | None:
        return self.first.pattern(pattern_id) or self.fallback.pattern(pattern_id)

    def match_event(self, event: ErrorEvent) -> Diagnosis:
        found = self._better(self.first.match_event(event), lambda: self.fallback.match_event(event))
        if (others := self.others) is not None and any(self._shows_other_server(info) for info in event.chain):
            found = self._better(found, lambda: others.match_event(event))
        if _STRENGTH[found.match_kind] < _STRENGTH[MatchKind.RAISE_SITE]:
            for index, info in enumerate(event.chain):
                site = self._history_site(info)
                if site is not None:
                    found = replace(site, link=index)
                    break
        return self._noted(found, event.chain[found.link] if found.link < len(event.chain) else None)

    def match(self, info: ErrorInfo) -> Diagnosis:
        found = self._better(self.first.match(info), lambda: self.fallback.match(info))
        if (others := self.others) is not None and self._shows_other_server(info):
            found = self._better(found, lambda: others.match(info))
        if _STRENGTH[found.match_kind] < _STRENGTH[MatchKind.RAISE_SITE]:
            found = self._history_site(info) or found
        return self._noted(found, info)

    def _noted(self, found: Diagnosis, info: ErrorInfo | None) -> Diagnosis:
        """The diagnosis with its releases line (empty for a pattern no history knows). Without the
        run's release, the releases whose line is the one the log's frame shows are named, and the
        pattern is put at the newest of them."""
        pattern = found.pattern
        if pattern is None:
            return found
        note = version_note(pattern, self.histories, self.versions)
        fits = self._fitting(pattern, info) if note else ()
        if fits:
            pattern = replace(pattern, source=replace(pattern.source, line=fits[-1].line, version=fits[-1].last))
            spans = ", ".join(s.first if s.first == s.last else f"{s.first}–{s.last}" for s in fits)
            found = replace(found, pattern=pattern)
            note += f"; the log's line {fits[-1].line} is that of {spans}"
        return replace(found, releases=note) if note else found

    def _fitting(self, pattern: Pattern, info: ErrorInfo | None) -> tuple[Span, ...]:
        """The spans of `pattern` at the raise line `info` shows, when the run's release is unknown
        and the log's line differs from the pattern's."""
        project = (pattern.source.project or "").lower()
        frame = info.raise_site if info is not None else None
        if project in self.versions or frame is None or not frame.lineno or frame.lineno == pattern.source.line:
            return ()
        if not pattern.source.path or not frame.path.replace("\\", "/").endswith("/" + pattern.source.path):
            return ()
        return tuple(span for span in self.histories[project].spans.get(pattern.id, ()) if span.line == frame.lineno)

    def _shows_other_server(self, info: ErrorInfo) -> bool:
        """Whether the error was raised in another LLM server's package, or its text names one of its modules."""
        names = self.other_servers
        return any(f"/{name}/" in frame.path.replace("\\", "/") for frame in info.frames for name in names) or (
            self._names_other is not None and any(name in info.message for name in names)
            and self._names_other.search(info.message) is not None)

    @staticmethod
    def _better(found: Diagnosis, other) -> Diagnosis:
        if found.match_kind is MatchKind.EXACT:
            return found
        alternative = other()
        return alternative if _STRENGTH[alternative.match_kind] > _STRENGTH[found.match_kind] else found

    def _history_site(self, info: ErrorInfo) -> Diagnosis | None:
        frame = info.raise_site
        if frame is None or not frame.lineno or not frame.function:
            return None
        relpath = _project_path(frame.path, self.histories)
        if relpath is None:
            return None
        history = self.histories[relpath.split("/", 1)[0]]
        code = " ".join((frame.code or "").split())
        best: tuple[bool, int, Pattern, Span] | None = None
        for sid in history.in_function(_module_of(relpath), _slug(frame.function)):
            pattern = self.fallback.pattern(sid)
            if pattern is None or pattern.short_exception != info.short_type or not self._fits(sid, pattern, info):
                continue
            same_code = bool(pattern.trigger) and code == "assert " + " ".join(pattern.trigger.split())
            for span in history.spans[sid]:
                distance = abs(span.line - frame.lineno)
                if (distance == 0 or (same_code and distance <= self.window)) and (
                        best is None or (same_code, -distance) > best[:2]):
                    best = (same_code, -distance, pattern, span)
        if best is None:
            return None
        same_code, nearness, pattern, span = best
        moved = replace(pattern, source=replace(pattern.source, line=span.line, version=span.first))
        confidence = 0.6 + 0.1 * same_code + 0.2 * (1 + nearness / (self.window + 1))
        return Diagnosis(moved, MatchKind.RAISE_SITE, round(confidence, 3), {})

    def _fits(self, sid: str, pattern: Pattern, info: ErrorInfo) -> bool:
        """A message-less signature fits any message; one with a template only a message it matches."""
        if not pattern.template or not info.message:
            return True
        compiled = self.fallback.compiled(sid)
        return compiled is not None and compiled.match(info.message) is not None


def _project_path(path: str, projects: Mapping[str, History]) -> str | None:
    """The path from a project's top package on (`vllm/...`), also in a checkout outside any
    site-packages (`/src/vllm-main/vllm/...`); None outside every project."""
    relpath = package_relative(path)
    if relpath.split("/", 1)[0] in projects:
        return relpath
    norm = path.replace("\\", "/")
    cuts = [norm.rfind(f"/{project}/") for project in projects]
    cut = max(cuts, default=-1)
    return norm[cut + 1:] if cut >= 0 else None


def _module_of(relpath: str) -> str:
    """`vllm/model_executor/models/llama.py` -> `vllm.model_executor.models.llama`, as ids name it."""
    parts = relpath.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _slug(function: str) -> str:
    """The id slug of a frame's function, which tracebacks print without its class."""
    return regex.sub(r"[^a-z0-9]+", "-", function.lower()).strip("-") or "module"


class RunMatchers:
    """The matcher for each kind of run, built once and lazily over the store of `patterns`: its
    server's patterns only, its releases tried first, every diagnosis with its releases line."""

    def __init__(self, patterns: Matcher | Iterable[Pattern], histories: Mapping[str, History]) -> None:
        self.base = patterns if isinstance(patterns, Matcher) else Matcher(tuple(patterns))
        self.histories = histories
        self._built: dict[tuple, TieredMatcher] = {}

    def for_run(self, server: Project | None, versions: Mapping[str, str]) -> TieredMatcher:
        versions = {project: version for project, version in versions.items() if project in self.histories}
        key = (server, tuple(sorted(versions.items())))
        if key not in self._built:
            every = self.base if server is None else self._matcher(RunStore(self.base.store, server, {}, {}))
            first = self._matcher(RunStore(self.base.store, server, self.histories, versions)) if versions else every
            others = tuple(p.value for p in SERVERS if p is not server)
            self._built[key] = TieredMatcher(first, every, self.histories, self.base.site_window, versions,
                                             (self.base, others) if server is not None else None)
        return self._built[key]

    def _matcher(self, store: RunStore) -> Matcher:
        matcher = Matcher(store, self.base.fuzzy_threshold, self.base.site_window)
        matcher.broken, matcher.disabled = self.base.broken, self.base.disabled  # reported as the engine's
        return matcher


def version_note(pattern: Pattern, histories: Mapping[str, History], versions: Mapping[str, str]) -> str:
    """The releases line of a pattern's page: `raised in 0.4.3–0.4.10; removed in 0.5.1; upgrade to
    0.5.1 fixes this`, with the run's version when the log revealed one; empty without a history."""
    project = (pattern.source.project or "").lower()
    history = histories.get(project)
    if history is None or pattern.id not in history.spans:
        return ""
    return history.note(pattern.id, versions.get(project))
