"""Incidents: the same error on many ranks, once; root causes and the consequences that followed.

An incident groups the events of one run with one pattern and fingerprint (core/fingerprint.py):
the same error on several ranks within `window_seconds`, and the same error recurring on a stream
it already came from anywhere in the run (one incident with its count and first/last seen). Each
gets a role: `consequence` when its pattern says so (NCCL timeouts, watchdog aborts, SIGQUIT
notices, killed children, broken pipes), else `root`.

Runs: each file is a run of its own unless `run_of` maps several files to one run (files in one
run directory); within a run a quiet gap longer than `run_gap_seconds` starts a new one (it must
outlast collective timeouts, which are 10 to 30 minutes). The earliest complete root of a run is
its root cause (a traceback cut off before its exception line only when there is nothing else),
and the run's consequences point to it with `caused_by`. Incidents without a timestamp take their
place in the log's order: after the stamped incident before them in the same file.

Memory does not grow with repetition: an incident counts its occurrences exactly, per file and per
rank, but keeps only a sample of where they were (the first few, the first on a new file or rank
while there is room, and the latest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from analyzer.core import grammar as g
from analyzer.core import lazyregex, native
from analyzer.core.fingerprint import fingerprint
from analyzer.core.matcher import UNKNOWN, Diagnosis
from analyzer.core.notices import RETRYING
from analyzer.core.records import ErrorEvent, ErrorInfo, EventKind, Frame, SourceSpan, package_relative, short_type
from analyzer.core.schema import Role

__all__ = ["Incident", "IncidentGrouper", "blame_frame", "root_diagnosis"]


@dataclass(frozen=True, slots=True)
class Incident:
    id: str
    event: ErrorEvent  # the first occurrence
    diagnosis: Diagnosis
    fingerprint: str
    role: Role
    ranks: tuple[str, ...]
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    occurrences: tuple[SourceSpan, ...]  # a sample when `count` is larger (see _Group.note)
    blame: Frame | None = None
    caused_by: str | None = None
    is_run_root: bool = False
    run: str = ""  # the run it belongs to (a file, or a run directory holding several)
    count_by_file: tuple[tuple[str, int], ...] = ()  # exact, in order of first occurrence
    count_by_rank: tuple[tuple[str, int], ...] = ()  # exact, in rank order

    @property
    def occurrences_sampled(self) -> bool:
        """`occurrences` holds fewer than all of them."""
        return len(self.occurrences) < self.count

    @property
    def info(self) -> ErrorInfo:
        """The exception the incident is about: the diagnosed link of the chain."""
        return self.event.chain[self.diagnosis.link]

    @property
    def known(self) -> bool:
        return self.diagnosis.pattern is not None

    @property
    def is_fragment(self) -> bool:
        """A traceback cut off before its exception line: where it failed, but not with what."""
        return self.event.truncated and not self.info.exception_type


_SAMPLE_FIRST = 4  # occurrences always kept: the first ones
_SAMPLE_MAX = 16  # and the first on each new file or rank while the sample holds fewer than this


@dataclass(slots=True)
class _Group:
    id: str
    event: ErrorEvent
    diagnosis: Diagnosis
    fingerprint: str
    order: int
    run: str
    streams: set[str] = field(default_factory=set)
    by_rank: dict[str, int] = field(default_factory=dict)  # occurrences per rank, exact
    by_file: dict[str, int] = field(default_factory=dict)  # occurrences per file, exact
    sample: list[SourceSpan] = field(default_factory=list)
    latest: SourceSpan | None = None
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    def note(self, span: SourceSpan, rank: str | None) -> None:
        """One more occurrence: counted exactly, kept in the sample only while it is small."""
        new_place = span.file not in self.by_file or (rank is not None and rank not in self.by_rank)
        if len(self.sample) < _SAMPLE_FIRST or (new_place and len(self.sample) < _SAMPLE_MAX):
            self.sample.append(span)
        self.latest = span
        self.count += 1
        _tally(self.by_file, span.file, 1)
        if rank:
            _tally(self.by_rank, rank, 1)

    def forget(self, span: SourceSpan, rank: str | None) -> None:
        """An occurrence moved to another incident (its record grew into another error)."""
        if span in self.sample:
            self.sample.remove(span)
        if self.latest == span:
            self.latest = self.sample[-1] if self.sample else None
        self.count -= 1
        _tally(self.by_file, span.file, -1)
        if rank:
            _tally(self.by_rank, rank, -1)

    def regrow(self, old: SourceSpan, new: SourceSpan) -> None:
        """The same occurrence, grown after a pause: counts stay, the spans change."""
        self.sample = [new if span == old else span for span in self.sample]
        if self.latest == old:
            self.latest = new

    def occurrences(self) -> tuple[SourceSpan, ...]:
        if self.latest is None or self.latest in self.sample:
            return tuple(self.sample)
        return (*self.sample, self.latest)


def _tally(counts: dict[str, int], key: str, change: int) -> None:
    left = counts.get(key, 0) + change
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)


def _rank_of(event: ErrorEvent) -> str | None:
    """Its rank, else the stream that printed it; not a stream that names nothing (a learned prefix that holds only a
    time, its key `[ ]`)."""
    return event.rank or (event.stream.removesuffix("#") if any(map(str.isalnum, event.stream)) else None)


class IncidentGrouper:
    """Pure and incremental: `add` events as they come, read `incidents()` at any time."""

    def __init__(self, window_seconds: float = 600.0, app_packages: tuple[str, ...] = (),
                 run_gap_seconds: float = 3600.0, run_of: Callable[[str], str] | None = None) -> None:
        self.window_seconds = window_seconds
        self.app_packages = app_packages
        self.run_gap_seconds = run_gap_seconds
        self._run_of = run_of or (lambda file: file)
        self._groups: dict[str, _Group] = {}  # by id, in the order they were made
        self._open: dict[tuple[str, str, str], _Group] = {}
        self._made = 0  # incidents made so far: ids stay unique when a revision drops one
        self._fingerprints: dict[ErrorInfo, str] = {}  # of recent errors: a repeated one is masked once

    def add(self, event: ErrorEvent, diagnosis: Diagnosis) -> tuple[str, bool]:
        """Returns the incident id and whether this event opened a new incident."""
        info = event.chain[diagnosis.link]
        run = self._run_of(event.span.file)
        key = (run, diagnosis.pattern.id if diagnosis.pattern else "", self._fingerprint(info))
        group = self._open.get(key)
        stamp = event.timestamp
        if group is not None and stamp and group.last_seen and not self._joins(group, event):
            group = None  # the same error again much later: a new incident
        is_new = group is None
        if group is None:
            self._made += 1
            group = _Group(f"I{self._made}", event, diagnosis, key[2], self._made, run, first_seen=stamp)
            self._groups[group.id] = group
            self._open[key] = group
        elif group.event.inferred and not event.inferred:
            group.event, group.diagnosis = event, diagnosis  # (the error printed with its class shows it, not an echo)
        elif stamp and group.first_seen and _naive(stamp) < _naive(group.first_seen) and not event.inferred:
            group.event, group.diagnosis = event, diagnosis  # (the first to happen shows it, not the first printed: Ray
            # prints a remote worker's lines when they reach it)
        group.note(event.span, _rank_of(event))
        group.streams.add(event.stream)
        if stamp:
            group.first_seen = min(group.first_seen or stamp, stamp, key=_naive)
            group.last_seen = max(group.last_seen or stamp, stamp, key=_naive)
        return group.id, is_new

    def revise(self, incident_id: str, old: ErrorEvent, new: ErrorEvent, diagnosis: Diagnosis) -> str:
        """`new` is `old`'s record as it stands now (it grew after a pause): it takes `old`'s place
        as an occurrence. Returns the incident it is in now: the same one unless what it is about
        changed (a chain link came), when it moves, and an incident left empty goes."""
        group = self._groups[incident_id]
        key = (group.run, diagnosis.pattern.id if diagnosis.pattern else "",
               self._fingerprint(new.chain[diagnosis.link]))
        if key == (group.run, group.diagnosis.pattern.id if group.diagnosis.pattern else "", group.fingerprint):
            group.regrow(old.span, new.span)
            if group.event is old:
                group.event, group.diagnosis = new, diagnosis
            return group.id
        group.forget(old.span, _rank_of(old))
        if not group.count and key not in self._open:  # it was this record alone: the incident becomes
            self._open = {k: g for k, g in self._open.items() if g is not group}  # what the record is now
            group.event, group.diagnosis, group.fingerprint = new, diagnosis, key[2]
            group.note(new.span, _rank_of(new))
            self._open[key] = group
            return group.id
        if not group.count:
            del self._groups[group.id]
            self._open = {k: g for k, g in self._open.items() if g is not group}
        return self.add(new, diagnosis)[0]

    def _fingerprint(self, info: ErrorInfo) -> str:
        known = self._fingerprints.get(info)
        if known is None:
            if len(self._fingerprints) >= 256:
                self._fingerprints.clear()
            known = self._fingerprints[info] = fingerprint(info)
        return known

    def _joins(self, group: _Group, event: ErrorEvent) -> bool:
        """Another rank within the window, or the same stream again within the run."""
        assert event.timestamp is not None and group.last_seen is not None  # the caller joins only stamped events
        gap = _seconds(event.timestamp, group.last_seen)
        return gap <= self.window_seconds or (event.stream in group.streams and gap <= self.run_gap_seconds)

    def incidents(self) -> list[Incident]:
        """Incidents in log order (fragments last), with roles, causes and each run's root cause marked."""
        frozen = [self._freeze(group) for group in sorted(self._groups.values(), key=_log_order)]
        return link_causes(sorted(frozen, key=lambda incident: incident.is_fragment), self.run_gap_seconds)

    def snapshot(self, incident_id: str) -> Incident:
        """One incident as it stands now (streaming output); roles across incidents come later."""
        return self._freeze(self._groups[incident_id])

    def _freeze(self, group: _Group) -> Incident:
        diagnosis = group.diagnosis
        info = group.event.chain[diagnosis.link]
        by_rank = sorted(group.by_rank.items(), key=lambda pair: _rank_order(pair[0]))
        return Incident(
            id=group.id, event=group.event, diagnosis=diagnosis, fingerprint=group.fingerprint,
            role=_role(diagnosis), ranks=tuple(rank for rank, _ in by_rank), count=group.count,
            first_seen=group.first_seen, last_seen=group.last_seen, occurrences=group.occurrences(),
            blame=blame_frame(info, self._apps(diagnosis, info)), run=group.run,
            count_by_file=tuple(group.by_file.items()), count_by_rank=tuple(by_rank),
        )

    def _apps(self, diagnosis: Diagnosis, info: ErrorInfo) -> tuple[str, ...]:
        """--app-package, else the pattern's project when the stack runs through it."""
        if self.app_packages:
            return self.app_packages
        project = diagnosis.pattern.source.project if diagnosis.pattern else None
        if project and any(_package(frame) == project for frame in info.frames):
            return (project,)
        return ()


def root_diagnosis(event: ErrorEvent, best: Diagnosis, match: Callable[[ErrorInfo], Diagnosis]) -> Diagnosis:
    """The diagnosis of the exception an incident is about: its chain's headline.

    One rule, the same whether a pattern knows a link or not: the headline is the chain's root
    cause (the first exception printed), unless a pattern calls that one a consequence (a broken
    pipe, a reset connection); then it is the next link, and so on. Links cut off before their
    exception line are passed over. `best` is the event's best match (`Matcher.match_event`), used
    as it is when the chain has a single link. An exception group's sub-exceptions get theirs too
    (`Diagnosis.subs`), for the people reading it: the incident stays the group's.
    """
    found = best if len(event.chain) == 1 else _headline(event.chain, match)
    subs = event.chain[found.link].sub_exceptions  # (an exception group's errors: each told the same way)
    return replace(found, subs=tuple(_headline(sub, match) if sub else UNKNOWN for sub in subs)) if subs else found


def _headline(chain: tuple[ErrorInfo, ...], match: Callable[[ErrorInfo], Diagnosis]) -> Diagnosis:
    typed = [index for index, info in enumerate(chain) if info.exception_type] or [0]
    for index in typed:
        found = match(chain[index])
        if _role(found) != "consequence":
            return replace(found, link=index)
    return replace(match(chain[typed[0]]), link=typed[0])  # all echoes: the first one printed


def link_causes(incidents: list[Incident], run_gap_seconds: float) -> list[Incident]:
    """Mark each run's root cause and point the run's consequences at it."""
    marks: dict[str, dict] = {}
    for run in _runs(incidents, run_gap_seconds):
        # (a cut-off fragment, an exception CPython reported as ignored, one a call raised before it was tried again, an
        # error whose class its message named, an interrupt (the user's Ctrl-C, often after a failure elsewhere), or an
        # error that tells another process died (what that one printed may come later: the stderr pytest captured), is
        # the root only where no other is)
        roots = sorted((i for i in run if i.role is Role.ROOT),
                       key=lambda i: (i.is_fragment, i.event.context.startswith(g.UNRAISABLE),
                                      i.event.context.startswith(RETRYING) or i.event.inferred
                                      or i.info.short_type == "KeyboardInterrupt",
                                      _DEATH_TOLD.search(_first_line(i)) is not None))
        # (where only echoes say with what it failed, the first of them is the first failure the run shows: its own cause
        # is in a log we were not given, or cut before its class, as a lone `Engine core initialization failed` tells;
        # it stays an echo, and leads the run over a traceback cut before it said what it raised; an error raised, or a
        # native report, over a logged line about it: torchrun's ChildFailedError over its `failed (exitcode: 1)`)
        echoes = sorted((i for i in run if i.role is Role.CONSEQUENCE and not i.is_fragment),
                        key=lambda i: i.event.kind is EventKind.NOTICE)
        leads = roots if not echoes or any(not i.is_fragment for i in roots) else echoes
        if not leads:
            continue
        root = _best_evidenced(leads[0], leads)
        marks[root.id] = {"is_run_root": True}
        if root is not leads[0]:  # the first told it without frames: the same error, told again
            marks[leads[0].id] = {"caused_by": root.id, "role": Role.CONSEQUENCE}
        for incident in run:
            if incident.role == "consequence" and incident is not root and not _before(incident, root):
                marks[incident.id] = {"caused_by": root.id}
            elif incident is not root and not _before(incident, root) and (_quotes(incident, root)
                                                                           or _retells(incident, root)):
                marks[incident.id] = {"caused_by": root.id, "role": Role.CONSEQUENCE}
    return [replace(i, **marks[i.id]) if i.id in marks else i for i in incidents]


# An error's words that another process died (Ray's `ActorDiedError`, a process pool's `BrokenProcessPool`, loky's
# `TerminatedWorkerError`)
_DEATH_TOLD = lazyregex.compile(r"\bdied unexpectedly\b|\b(?:terminated abruptly|unexpectedly terminated)\b|\bprocess (?:has )?died\b")
_QUOTED_AT_LEAST = 20  # characters of an error's first line that another error must repeat to be its echo
_ENDED_AT_LEAST = 8  # ... that a wrapper's first line must end in, after a colon, to be the wrapper of that error


def _quotes(later: Incident, root: Incident) -> bool:
    """A later error whose message repeats the root cause's first line is that error told again: the
    NCCL watchdog aborting with the CUDA error the rank's Python code raised, a wrapper's text."""
    said = _first_line(root).strip()
    return len(said) >= _QUOTED_AT_LEAST and said in later.info.message


def _retells(later: Incident, root: Incident) -> bool:
    """A later error without frames, of the root cause's type, whose text begins with the root cause's
    first line, is that error told again (the exception logged once more); so is the shell's word for a crash of the
    signal the root cause names: `Segmentation fault (core dumped)` (SIGSEGV) after faulthandler's dump of it
    (`Fatal Python error: Segmentation fault`) or UCX's."""
    said, signal = _first_line(root).strip(), native.signal_of(root.info)
    if signal is not None and later.info.exception_type == signal and not later.info.frames:
        return True  # (the shell's word for the crash: `Segmentation fault (core dumped)`, after UCX's report of it)
    return (not later.info.frames and bool(said) and later.info.exception_type == root.info.exception_type
            and later.info.message.startswith(said))


def _best_evidenced(first: Incident, roots: list[Incident]) -> Incident:
    """The first root cause, or where it is an exception line without frames (the end of a copy cut
    above it, a logged echo, a wrapper that names its own type on the error's text), the same error printed
    with its frames later in the run: the error of its diagnosed link, or of a link its chain wraps it in
    (vLLM logs `IndexError('Error in model execution: ...')`, then the chain whose last link that is).
    Where the first was raised again where it was received (`raise result`: vLLM's engine re-raising a
    worker's exception), the same error printed where it was raised first; where the same error follows it at
    once with more of its stack below the frames it showed (Ren'Py's report: the game's frames, then the full
    traceback), that one."""
    if not first.info.exception_type:
        return first
    # (or the error its last words introduce, told from the line below it on: PySpark's Py4JJavaError whose Java text
    # ends `PythonException: Traceback (most recent call last):`, or `... Please see the stack trace below.`)
    while (below := next((i for i in roots if _introduced(first, i)), None)) is not None:
        first = below
    # (or, an abort that names no cause (`Fatal Python error: Aborted`: an NCCL watchdog's, a Ray worker's), the first
    # Python exception of its run with its frames: what the process aborted over; not one that tells of a process that
    # died, as Ray's driver does of the worker that aborted)
    if native.signal_of(first.info) == "SIGABRT" and (raised := next((i for i in roots if i.info.frames and not i.is_fragment
                                                                       and i.event.kind is EventKind.TRACEBACK
                                                                       and not _DEATH_TOLD.search(_first_line(i))), None)):
        return _best_evidenced(raised, roots)
    said = (first.info.exception_type, _first_line(first))
    if not first.info.frames:  # (or a wrapper's type on the same long text: litellm's APIConnectionError; or
        # its type, alone or with words that quote that error, that type's traceback a few lines below: marimo's
        # banner over the cell's traceback)
        # (or words that end where the error they introduce begins, on the next line: pytest's summary line of
        # torch's `BackendCompilerFailed: backend='inductor' raised:`, the RuntimeError it wraps below it)
        if said[1].endswith(":") and (told := next((i for i in roots if _on_next_line(first, i)), None)) is not None:
            return told
        # (or an interpreter's fatal error at start-up, the exception behind it right below: Python 3.8's
        # `Fatal Python error: init_sys_streams: ...` over its traceback)
        if native.names_its_cause(first.info) and (told := next((i for i in roots if _on_next_line(first, i)), None)):
            return told
        # (or, short, the text of the error whose traceback begins on the next line: litellm's `APIConnectionError:
        # 'name'` over the KeyError('name') it wraps)
        wrapped, alone = len(said[1]) >= _QUOTED_AT_LEAST, not said[1].strip()
        # (or its type alone, as a title over the same type's exception line: Werkzeug's debugger page copied as text;
        # that line's error then as this one's, its traceback below where the page shows it)
        if alone and (title_of := next((i for i in roots if _on_next_line(first, i)
                                        and short_type(i.info.exception_type) == short_type(said[0])), None)):
            return _best_evidenced(title_of, roots)
        # (or its type alone, a few lines from the same type's text told without it: SD.Next's `Exception: 'NoneType'
        # object has no attribute 'decode'`, its arguments, then `gradio call: AttributeError`)
        if alone and (told := next((i for i in roots if i.info.message.strip() and (
                _just_below(first, i) or _just_below(i, first)) and short_type(i.info.exception_type) == short_type(said[0])),
                None)):
            return told  # (as it is: the error below it may be introduced by it, and that one is this type alone again)
        return next((i for i in roots if i.info.frames and (said in _links_said(i) or (wrapped or not alone and _on_next_line(first, i)) and any(
            _unnamed(text) == _unnamed(said[1]) for _, text in _links_said(i)) or _just_below(first, i) and any(
            short_type(kind) == short_type(said[0]) and (alone or len(text) >= _QUOTED_AT_LEAST and (
                text in said[1] or _NUMBERS.sub("0", text) == _NUMBERS.sub("0", said[1])))
            for kind, text in _links_said(i)))), first)
    if _raised_again(first):
        return next((i for i in roots if i.info.frames and not _raised_again(i) and said in _links_said(i)), first)
    # (or, raised `from` an error that a copy cut from above it, that error printed again in the run with its stack: Ray's
    # `raise RuntimeError(msg) from e` over the TypeError its unpickling raised, both told again in a record of Ray's)
    if (cause := next((i for i in roots if i is not first and _caught_in(i, first)), None)) is not None:
        return cause
    # (or the error its text names, printed with its own stack right below it: torch 2.0's `BackendCompilerFailed:
    # compile_fn raised TypeError: ...`, a hint, then the TypeError's traceback)
    named = next((i for i in roots if i is not first and i.info.frames and _just_below(first, i) and _names(first, i)), None)
    if named is not None:
        return named
    # (or the same error told again right below it with its whole stack: Ren'Py's game frames, then `Full traceback:`)
    return next((i for i in roots if i is not first and _just_below(first, i) and (i.info.exception_type, _first_line(i)) == said
                 and _deeper(i.info.frames, first.info.frames)), first)


_BELOW_AT_MOST = 8  # lines between an exception's type alone and its traceback told below it
_NUMBERS = lazyregex.compile(r"\d+")  # (the same error on another rank: its GPU, its sizes, its pid told apart)


def _just_below(above: Incident, below: Incident) -> bool:
    a, b = above.event.span, below.event.span
    return a.file == b.file and 0 < b.line_start - a.line_end <= _BELOW_AT_MOST


# (words that end in a colon or point below, or Ray's remote task after which its error's traceback follows:
# `... error raised in its creation task, ray::Replica.__init__() (pid=2712, ip=10.42.5.206, actor_id=...)`; or the
# quote a multiprocessing RemoteTraceback opens around the worker's traceback, as IPython shows it under its own header)
_INTRODUCES = lazyregex.compile(r'(?::|\bbelow\.?|\bray::\S+ \(pid=\d+, ip=[^)]*\)|^""")\s*\Z')
_NEXT_TRACEBACKS_WORDS = lazyregex.compile(r"(?:Exception in (?:thread|callback) [^:]*|Error in (?:atexit\._run_exitfuncs|sys\.exitfunc"
                                           r"|sys\.excepthook)|Original exception was):\s*\Z")
_TYPE_INTRODUCES = lazyregex.compile(r"[A-Za-z_][\w.]*" + g.EXCEPTION_SUFFIX + r":\s*\Z")  # (a class named, its text to follow)


def _introduced(above: Incident, below: Incident) -> bool:
    """Whether `below` is an error that begins on the line after the last of `above` (after the blank line between, where
    a paste doubled every line break), introduced by the last line of `above` or by a class named in front of its own
    header (PySpark's `...: org.apache.spark.api.python.PythonException: Traceback (most recent call last):`, the Java
    text of the Py4JJavaError above it). (CPython's own words for the next traceback say nothing of the error above:
    `Exception in thread Thread-29:` glued to a progress bar between two tracebacks.)"""
    a, b = above.event.span, below.event.span
    lines = above.event.lines
    last = lines[-1] if lines else ""
    return (a.file == b.file and b.line_start == a.line_end + 1 + _double_spaced(lines) and bool(below.info.exception_type)
            and ((_INTRODUCES.search(last) is not None and _NEXT_TRACEBACKS_WORDS.search(last) is None)
                 or _TYPE_INTRODUCES.search(below.event.context) is not None))


_DOUBLED_AT_LEAST = 3  # blank lines, each after a line of text, that tell a paste doubled the line breaks


def _double_spaced(lines: tuple[str, ...]) -> bool:
    """Whether an error's lines are a paste's whose every line break was doubled: text, a blank, text, a blank..."""
    return len(lines) >= 2 * _DOUBLED_AT_LEAST and all(
        bool(line.strip()) != (i % 2 == 1) for i, line in enumerate(lines[:len(lines) // 2 * 2]))


def _on_next_line(above: Incident, below: Incident) -> bool:
    """Whether `below` is an error that begins on the line after `above`, a line alone (not a message's lines that
    end in a colon, as triton's `CompilationError: at 81:12:` over the kernel's source)."""
    a, b = above.event.span, below.event.span
    return a.file == b.file and a.line_start == a.line_end and b.line_start == a.line_end + 1 and bool(
        below.info.exception_type)


def _names(wrapper: Incident, inner: Incident) -> bool:
    """Whether the wrapper's first line holds the inner error's exception line (its type, then at least the
    first characters of its message), or ends in its message after a colon (`f"Error in user code in class {name!r}:
    {err}"`: datachain's, over the user's traceback)."""
    said = _first_line(inner)
    return (len(said) >= _QUOTED_AT_LEAST and f"{inner.info.short_type}: {said}" in _first_line(wrapper)) or (
        len(said) >= _ENDED_AT_LEAST and _first_line(wrapper).endswith(f": {said}"))


def _deeper(frames: tuple[Frame, ...], shown: tuple[Frame, ...]) -> bool:
    """Whether `frames` hold the frames `shown`, in order, and more below the last of them."""
    places = iter((frame.path, frame.lineno) for frame in frames)
    return (len(frames) > len(shown) and all((frame.path, frame.lineno) in places for frame in shown)
            and (frames[-1].path, frames[-1].lineno) != (shown[-1].path, shown[-1].lineno))


def _caught_in(cause: Incident, wrapper: Incident) -> bool:
    """Whether the wrapper was raised `from` an error caught in its innermost frame and `cause` is that error: its
    stack begins in that frame's function, above the raise (an error's frames begin where it was caught)."""
    raised, caught = wrapper.info.frames[-1], cause.info.frames[:1]
    return (bool(caught) and _RAISED_FROM.search(raised.code or "") is not None
            and (caught[0].path, caught[0].function) == (raised.path, raised.function)
            and (caught[0].lineno or 0) < (raised.lineno or 0))


_RAISED_FROM = lazyregex.compile(r"^raise\b.*\sfrom\s+(?!None\b)[A-Za-z_]\w*\s*(?:#.*)?$")


def _raised_again(incident: Incident) -> bool:
    """Whether its error was raised at a `raise name` (an exception object made elsewhere, raised anew)."""
    code = incident.info.frames[-1].code or ""
    return code.startswith("raise ") and _RAISED_NAME.fullmatch(code, 6) is not None


_RAISED_NAME = lazyregex.compile(r"[A-Za-z_][\w.]*\s*(?:#.*)?")  # (a comment may follow it)


def _links_said(incident: Incident) -> set[tuple[str, str]]:
    """Each link's type and first line; a faulthandler dump's also under its signal, as a shell names the crash."""
    said = {(link.exception_type, link.message.split("\n", 1)[0].strip()) for link in incident.event.chain}
    return said | {(signal, link.message.strip()) for link in incident.event.chain if (signal := native.signal_of(link))}


def _unnamed(text: str) -> str:
    """A message without the class name it may begin with (litellm's errors name theirs in their text)."""
    return m["message"] if (m := g.BARE_EXCEPTION_LINE.match(text)) is not None and m["message"] else text


def _first_line(incident: Incident) -> str:
    """(Without the blanks a message may begin with: `SystemError:  returned ...` told as `SystemError: returned ...`)"""
    return incident.info.message.split("\n", 1)[0].strip()


def _runs(incidents: list[Incident], run_gap_seconds: float) -> list[list[Incident]]:
    """Each run's incidents in time order, cut where no incident happened for longer than the gap."""
    by_run: dict[str, list[Incident]] = {}
    for incident in incidents:
        by_run.setdefault(incident.run, []).append(incident)
    runs: list[list[Incident]] = []
    for members in by_run.values():
        end: datetime | None = None
        runs.append([])
        for incident, start in _in_time_order(members):
            if (runs[-1] and end is not None and start is not None and _seconds(start, end) > run_gap_seconds
                    and _naive(start) > _naive(end)):
                runs.append([])
            runs[-1].append(incident)
            last = incident.last_seen or start
            if last is not None:
                end = last if end is None else max(end, last, key=_naive)
    return runs


def _in_time_order(incidents: list[Incident]) -> list[tuple[Incident, datetime | None]]:
    """Incidents with the time they count as starting at: their own first timestamp, else that of
    the stamped incident before them in their file (else after them), so they keep the log's order.
    Timestamps decide across files; log position within one."""
    by_position = sorted(incidents, key=lambda i: (i.event.span.file, i.event.span.line_start))
    times: dict[str, datetime | None] = {}
    for file in {i.event.span.file for i in incidents}:
        in_file = [i for i in by_position if i.event.span.file == file]
        known = [i.first_seen for i in in_file if i.first_seen]
        current = known[0] if known else None
        for incident in in_file:
            current = incident.first_seen or current
            times[incident.id] = current
    placed = [(incident, times[incident.id]) for incident in by_position]
    return sorted(placed, key=lambda pair: (_naive(pair[1]).isoformat() if pair[1] else "",
                                            pair[0].event.span.file, pair[0].event.span.line_start))


def _before(incident: Incident, root: Incident) -> bool:
    """Known to have begun before the root (without timestamps, order says nothing across files)."""
    if incident.first_seen and root.first_seen:
        return _naive(incident.first_seen) < _naive(root.first_seen)
    span, root_span = incident.event.span, root.event.span
    return span.file == root_span.file and span.line_start < root_span.line_start


def _role(diagnosis: Diagnosis) -> Role:
    return diagnosis.pattern.role if diagnosis.pattern else Role.ROOT


def _naive(stamp: datetime) -> datetime:
    return stamp.replace(tzinfo=None)


def _seconds(a: datetime, b: datetime) -> float:
    return abs((_naive(a) - _naive(b)).total_seconds())


def _log_order(group: _Group) -> tuple:
    return (group.event.span.file, group.event.span.line_start, group.order)


def _rank_order(rank: str) -> tuple:
    digits = "".join(ch if ch.isdecimal() else " " for ch in rank).split()  # (not `isdigit`: `➀` is a digit int() refuses)
    return (rank.rstrip("0123456789 "), [int(d) for d in digits])


_STDLIB_MARKERS = ("/lib/python3", "<frozen ", "<string>", "<stdin>")
_THIRD_PARTY = ("/site-packages/", "/dist-packages/")
_LAUNCHERS = ("/bin/",)  # console-script wrappers such as /usr/local/bin/torchrun


def blame_frame(info: ErrorInfo, app_packages: tuple[str, ...] = ()) -> Frame | None:
    """The innermost frame in the application's own code: not the stdlib, not third-party code.

    With `app_packages` (e.g. ("sglang",)) the application is those packages, wherever they are
    installed. Without, it is code outside any site-packages (your script); when the whole stack
    is installed code, it is the package the stack enters first (`sglang` for a server started
    with `python -m sglang.launch_server`, whatever library the error was raised in).
    """
    frames = info.frames
    if app_packages:
        return _innermost(frames, lambda frame: _package(frame) in app_packages
                          or any(f"/{package}/" in _path(frame) for package in app_packages))
    own = _innermost(frames, lambda frame: not (_is_stdlib(frame) or _is_third_party(frame) or _is_launcher(frame)))
    if own is not None:
        return own
    entry = next((package for frame in frames if not _is_stdlib(frame) and (package := _package(frame))), None)
    return _innermost(frames, lambda frame: _package(frame) == entry) if entry else None


def _innermost(frames: tuple[Frame, ...], wanted: Callable[[Frame], bool]) -> Frame | None:
    return next((frame for frame in reversed(frames) if wanted(frame)), None)


def _path(frame: Frame) -> str:
    return frame.path.replace("\\", "/")


def _is_third_party(frame: Frame) -> bool:
    return any(marker in _path(frame) for marker in _THIRD_PARTY)


def _is_launcher(frame: Frame) -> bool:
    return any(marker in _path(frame) for marker in _LAUNCHERS)


def _is_stdlib(frame: Frame) -> bool:
    path = _path(frame)
    return any(marker in path for marker in _STDLIB_MARKERS) and not _is_third_party(frame)


def _package(frame: Frame) -> str:
    """The top-level package a frame's file belongs to (`sglang` for .../sglang/srt/x.py)."""
    relative = package_relative(frame.path)
    head = relative.split("/", 1)[0]
    return head if "/" in relative and head.isidentifier() else ""  # not /abs/script.py, python3.11/, C:
