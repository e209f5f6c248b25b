"""The prefixes real server logs are known to put in front of lines, and what each one says.

Two scopes matter (see shared/notes/log-formats.md):
- per-line prefixes (container runtimes, journald, Ray/vLLM workers, torchrun `[rank3]:`) are on
  every line a process prints, so they tell interleaved processes apart line by line: the channel;
- per-message prefixes (SGLang `[time TP3] `, Python logging, vLLM's logger) start a log record. Some
  formatters print them on the record's first line only, so the unprefixed lines after them continue
  that record; others (vLLM's NewLineFormatter, collectors that split records) repeat them on every line.
Prefixes nobody listed are learned instead: see `infer_prefix.py`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import regex

from analyzer.core import lazyregex
from analyzer.core.yearless import Calendar

__all__ = ["CLOUD_LOGGING", "CONTAINER", "KNOWN", "PASTED", "KnownPrefix", "PrefixMeta", "Scope", "parse_timestamp", "known_at",
           "read_known", "ruled_out_by"]


class Scope(enum.Enum):
    LINE = "line"  # on every line a process prints
    MESSAGE = "message"  # starts a log record


@dataclass(frozen=True, slots=True, eq=False)  # each kind is one constant: identity is equality
class KnownPrefix:
    name: str
    pattern: regex.Pattern
    scope: Scope


# How a paste wraps a log: a tab in front of every line (a CI log viewer's copy), a web log viewer's
# table cell (`\xa0 | `, Buildkite's page), a markdown blockquote (`> ` per level, `>` alone on a quoted
# blank line), or a cell and a quote. No program writes it and it says nothing, but it hides every other
# prefix; it is only ever outermost (inside a prefix, `[a]> ` say, a `> ` is that prefix's). (`>>> ` is
# Python's prompt; Python indents with spaces, never a tab.)
# Or numbers each line: `cat -n` and `nl` right-align it in six columns before a tab; a notebook's log
# viewer (Kaggle) puts the seconds elapsed and the line's number in cells (`141.8s | 1015 | `; copied as a table's
# rows, apart by tabs: `704.7s\t1290\t`).
PASTED = KnownPrefix("pasted", lazyregex.compile(
    r"^(?:(?: {5}\d| {4}\d\d| {3}\d{3}| {2}\d{4}| \d{5}|\d{6,9})\t|\d+(?:\.\d+)?s(?: \| \d+ \| |\t\d+\t)"
    r"|(?:\t|\xa0 \| )(?:(?:> )*>(?: |$))?|(?:> )*>(?: |$))"), Scope.LINE)
# The CRI log format: time, stream, F(ull)/P(artial) record; a blank record may have lost its last space.
CONTAINER = KnownPrefix("container", lazyregex.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r"(?: (?P<std>stdout|stderr) (?P<tag>[FP]))?(?: |$)"), Scope.LINE)
# A CI runner's time on every line it captured (Buildkite: `[2025-06-26T16:27:15Z] `).
CI_TIME = KnownPrefix("ci_time", lazyregex.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)\](?: |$)"), Scope.LINE)
# pdsh (DeepSpeed's multi-node launcher) puts the host each line came from in front of it; only an
# address is taken: a name and a colon read as prose (`Error: `, `Note: `).
PDSH = KnownPrefix("pdsh", lazyregex.compile(r"^(?P<host>(?:\d{1,3}\.){3}\d{1,3}): "), Scope.LINE)
# journald/syslog: `time host proc[pid]: `; a copy may lack the time or the host, not both (a month in a
# locale's lower case too: `fev`)
SYSLOG = KnownPrefix("syslog", lazyregex.compile(
    r"^(?:(?P<yts>[A-Za-z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?:(?P<host>[A-Za-z0-9][\w.-]*) )?"
    r"|(?P<host>[A-Za-z0-9][\w.-]*) )(?P<proc>[\w./@-]+)\[(?P<pid>\d+)\]: "
    # (with its time and host, a program that logs no pid: `Jun 20 11:51:00 host jupyterhub: `)
    r"|^(?P<yts>[A-Za-z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<host>[A-Za-z0-9][\w.-]*) (?P<proc>[\w./@-]+): "), Scope.LINE)
# Open MPI's `--tag-output` (mpirun, Horovod): `[job,rank]<stream>:`; SageMaker's distributed jobs name the rank and
# the host: `[1,mpirank:7,algo-1]<stderr>:`; horovodrun's own launcher (Gloo) the rank alone: `[1]<stderr>:`.
MPI = KnownPrefix("mpi", lazyregex.compile(
    r"^\[(?:(?P<job>\d+),)?(?:mpirank:)?(?P<rank>\d+)(?:,(?P<host>[\w.-]+))?\]<(?P<std>stdout|stderr|stddiag)>:"), Scope.LINE)
# Heroku's router and dynos, after the time (`2019-09-18T13:31:13.946164+00:00 app[web.1]: `).
HEROKU = KnownPrefix("heroku", lazyregex.compile(r"^(?P<source>app|heroku)\[(?P<dyno>[\w.-]+)\]: "), Scope.LINE)
# Ray and vLLM workers: `(pid=12, ip=...)`, `(VllmWorker rank=1 pid=4321)`, `(VllmWorker TP1 pid=4301)`. (A copy begun
# inside the first line's prefix lost its parenthesis: `EngineCore_0 pid=1248800) ValueError: ...`.)
_WORKER_NAMED = r"(?:(?P<name>[\w.:-]+)(?: rank=(?P<rank>\d+)| (?P<tags>(?:[A-Z]{2}\d+)(?: [A-Z]{2}\d+)*))? )?"
_WORKER_PID = r"pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^)\s]+))?\)\s"
WORKER = KnownPrefix("worker", lazyregex.compile(rf"^(?:\(|(?={_WORKER_NAMED}{_WORKER_PID})){_WORKER_NAMED}{_WORKER_PID}"),
                     Scope.LINE)
# torchrun's `[default0]:` has no space of its own and PyTorch's `[rank0]: ` has one: whose the space
# after the colon is, the normaliser tells (see `LineNormalizer._torchrun_space`). (A copy begun inside the
# first line's prefix lost its bracket: `rank1]: ValueError: ...`.)
TORCHRUN = KnownPrefix("torchrun", lazyregex.compile(r"^\[?(?:rank|default)(?P<rank>\d+)\]:(?P<space> )?"), Scope.LINE)
SGLANG = KnownPrefix("sglang", lazyregex.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<tags>(?: [A-Za-z_]*[A-Za-z]\d+)*)\] "), Scope.MESSAGE)
# logging's `%(asctime)s - %(name)s - %(levelname)s - %(message)s`, maybe with `%(filename)s:%(lineno)d - `,
# or without the name, or with more fields before the level and a colon after it (crewAI's `%(asctime)s -
# %(process)d - %(filename)s-%(module)s:%(lineno)d - %(levelname)s: %(message)s`); a copy begun inside the line
# may have lost the time (then the name is a logger's: `lmdeploy - ERROR - `).
_LEVEL_NAME = r"(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG)"
LOGGING_ASCTIME = KnownPrefix("logging", lazyregex.compile(
    rf"^(?:(?P<ts>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?) - (?:(?P<name>\S+) - ){{0,3}}{_LEVEL_NAME}(?: -|:)"
    rf"|(?P<name>[A-Za-z_][\w.-]*) - {_LEVEL_NAME} -)(?: [\w./-]+\.py:\d+ -)?(?: |$)"), Scope.MESSAGE)
LOGGING_BASIC = KnownPrefix("logging_basic", lazyregex.compile(
    r"^(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG):(?P<name>[\w.-]*):"), Scope.MESSAGE)
# vLLM's logger: `INFO 12-01 10:00:00 [engine.py:12] ` (V1) or `INFO 12-01 10:00:00 engine.py:12] ` (V0);
# or V1's without its time (`ERROR [serving.py:830] `, a time format that prints none).
# On a record's blank line a paste has often lost the space after the prefix.
VLLM = KnownPrefix("vllm", lazyregex.compile(
    r"^(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG) (?:(?P<yts>\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) "
    r"(?:\[[\w./-]+:\d+\](?: |$)|[\w./-]+\.py:\d+\](?: |$))?|\[[\w./-]+\.py:\d+\](?: |$))"), Scope.MESSAGE)

# Tornado's log formatter (Tornado servers, KServe, Jupyter): `[%(levelname)1.1s %(asctime)s %(module)s:%(lineno)d] `, its
# time `%y%m%d %H:%M:%S` (`[E 211213 04:25:33 __main__:37] `), or Jupyter's dated with milliseconds and the logger's
# name (`[E 2024-05-01 12:00:00.123 ServerApp] `).
TORNADO = KnownPrefix("tornado", lazyregex.compile(
    r"^\[(?P<level>[DIWEC]) (?:(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)|\d{6} \d\d:\d\d:\d\d(?:\.\d+)?) "
    r"(?P<name>[^\]\s]+)(?: [\w.-]+:\d+)?\](?: |$)"), Scope.MESSAGE)  # (JupyterHub's names the module and line too)

# torch's logging before 2.4 (`torch._logging`): `[%(asctime)s] %(name)s: [%(levelname)s] `, on each line of
# a record (`[2023-11-29 22:29:33,093] torch._dynamo.convert_frame: [WARNING] `).
TORCH_LOGGING = KnownPrefix("torch_logging", lazyregex.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)\] (?P<name>[A-Za-z_][\w.]*): "
    r"\[(?P<level>CRITICAL|ERROR|WARNING|INFO|DEBUG)\](?: |$)"), Scope.MESSAGE)

# Google Cloud Logging's entries as its Logs Explorer copies them or `gcloud logging read` prints them
# (Cloud Run, GKE, Cloud Functions): the severity, then the time (`DEFAULT 2025-04-14T12:06:23.036336Z `).
# Each line a process writes is an entry of its own.
CLOUD_LOGGING = KnownPrefix("cloud_logging", lazyregex.compile(
    r"^(?P<level>DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) "
    r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))(?: |$)"), Scope.LINE)

# OpenStack's oslo.log: `%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [request ids] ` on a
# record's first line, and on each line of a traceback it formats the same without the request ids (the
# level ERROR, or TRACE before 2015). A copy may have lost the time and the pid; then only an error's level
# and a dotted logger name are taken (`ERROR nova.compute.manager AttributeError: ...`).
OSLO = KnownPrefix("oslo", lazyregex.compile(
    r"^(?:(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (?P<pid>\d+) "
    r"(?P<level>TRACE|CRITICAL|ERROR|WARNING|AUDIT|INFO|DEBUG) (?P<name>[a-z_][\w.-]*)"
    r"|(?P<level>CRITICAL|ERROR) (?P<name>[a-z_]\w*(?:\.\w+)+))"
    r"(?: \[[^\]\n]*\])?(?: \[instance: [\w-]+\])?(?: |$)"), Scope.MESSAGE)

# GitHub Actions' web log marks a line its problem matcher took with `Error: `; setup-python's matcher takes a
# traceback's `raise X('...')` line under a frame line, so a copy of the log holds `Error:     raise ...`.
GITHUB_ANNOTATION = KnownPrefix("github_annotation", lazyregex.compile(r"^Error: (?=[ \t]+raise\b)"), Scope.LINE)

# `docker build --progress=plain` (BuildKit): the step and the seconds since it began on each line a command wrote
# (`#16 3.943 `); steps that run at once interleave: each step is a channel.
BUILDKIT = KnownPrefix("buildkit", lazyregex.compile(r"^#(?P<step>\d+) \d+\.\d+ "), Scope.LINE)

# dmlc's logging (TVM, MLC, XGBoost, xgrammar): the clock and the place, a warning's level between (`[10:38:03]
# C:\\x\\llm_chat.cc:526: `, `[10:38:03] WARNING: /src/learner.cc:767: `); an error's what() begins with it too (see
# native). Without a date it says no time the lines after it would inherit.
DMLC = KnownPrefix("dmlc", lazyregex.compile(
    r"^\[\d\d:\d\d:\d\d\] (?:(?:WARNING|ERROR|INFO|FATAL): )?(?P<path>(?:[A-Za-z]:)?[^\s:]+):(?P<lineno>\d+): "), Scope.LINE)

# TorchServe (and MMS before it: SageMaker's and KServe's PyTorch servers) logs each line a model's worker process
# prints through log4j, `%d{ISO8601} [%-5p] %t %c - ` (`2022-05-04 01:34:40,609 [INFO ] W-9000-model_1-stdout MODEL_LOG -
# `; older ones name the class that reads the worker's output, `org.pytorch.serve.wlm.WorkerLifeCycle - `): the
# worker's thread names its port, model and stream, each a channel; the level is the relay's, not the line's.
# DJL Serving (SageMaker's LMI containers, vLLM among their engines) relays them the same way from its PyProcess
# logger, `[%-5level] %logger{0} - ` (`[WARN ] PyProcess - W-133-model-stderr: `), a time in front in some patterns.
TORCHSERVE = KnownPrefix("torchserve", lazyregex.compile(
    r"^(?:(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?) \[[A-Z]+ *\] "
    r"(?P<worker>W-\d+-[\w.-]+?)-(?P<std>stdout|stderr) (?P<logger>MODEL_LOG|org\.pytorch\.serve\.wlm\.WorkerLifeCycle) - "
    r"|(?:(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?)(?:Z|[+-]\d\d:?\d\d)? )?\[[A-Z]+ *\] PyProcess - "
    r"(?P<worker>W-\d+-[\w.-]+?)-(?P<std>stdout|stderr): )"), Scope.LINE)

# NVIDIA Omniverse Kit's log (Isaac Sim, Isaac Lab): the time, the milliseconds since start-up, the level and the
# channel (`2025-04-29 08:19:34 [6,447ms] [Error] [carb.scripting-python.plugin] `), on a record's first line; a
# Python error Kit's scripting plugin caught comes with pybind11's stack under it (`At:`).
OMNI_KIT = KnownPrefix("omni_kit", lazyregex.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[[\d,]+ms\] \[(?P<level>Verbose|Info|Warning|Error|Fatal)\] "
    r"\[(?P<name>[\w.-]+)\](?: |$)"), Scope.MESSAGE)

# Rich's logging handler (`RichHandler`: SkyPilot, kohya_ss, Lightning's and many CLIs' loggers): the time in brackets
# (`[%x %X]` by default, `[%X]` often), the level padded to eight, then the message, its place right-aligned at the
# line's end (`[05:21:05] ERROR    failed (exitcode: 1) ...   api.py:672`). A record in the same second as the one
# before it has blanks for its time. The padding is exact: no other text is laid out so.
RICH_HANDLER = KnownPrefix("rich_handler", lazyregex.compile(
    r"^(?:\[(?:\d\d/\d\d/\d\d )?\d\d:\d\d:\d\d\]| {10}| {19}) "
    r"(?:(?P<level>CRITICAL) |(?P<level>WARNING)  |(?P<level>ERROR|DEBUG)    |(?P<level>INFO)     )(?=\S)"), Scope.MESSAGE)

# Celery's worker log (`worker_log_format`: `[%(asctime)s: %(levelname)s/%(processName)s] `, `[2019-07-26 12:51:56,419:
# ERROR/ForkPoolWorker-3] `); a task's records name it and its id after that (`worker_task_log_format`: `add[a3f-...]: `).
CELERY = KnownPrefix("celery", lazyregex.compile(
    rf"^\[(?P<ts>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?): {_LEVEL_NAME}/(?P<name>[\w.-]+)\]"
    r"(?: [\w.]+\[[\w-]+\]:)?(?: |$)"), Scope.MESSAGE)

# Outermost first, as they stack (PASTED before all); the rarest last, each unlike every other: a line
# tries them only when no other took it.
KNOWN = (CONTAINER, CI_TIME, SYSLOG, WORKER, TORCHRUN, TORCH_LOGGING, SGLANG, LOGGING_ASCTIME, LOGGING_BASIC, VLLM, PDSH,
         HEROKU, MPI, CLOUD_LOGGING, OSLO, GITHUB_ANNOTATION, TORNADO, DMLC, BUILDKIT, TORCHSERVE, OMNI_KIT, RICH_HANDLER, CELERY)


# The first characters each known prefix can start with (the fast path: most lines start with a letter
# and most prefixes cannot); a kind not listed is always tried. (In step with the patterns above:
# tests/test_fastpath.py holds them to it.)
_OPENS = {
    "container": str.isdecimal, "ci_time": "[".__eq__, "torchrun": "[rd".__contains__,
    "worker": lambda c: c == "(" or c.isascii() and (c.isalnum() or c in "_.:-"),  # (or a name: a copy begun inside it)
    "logging": lambda c: c.isascii() and (c.isalnum() or c == "_"),  # (a time, or a logger's name where a copy cut it)
    "sglang": "[".__eq__, "syslog": lambda c: c.isascii() and c.isalnum(),
    "pdsh": str.isdecimal, "heroku": "ah".__contains__, "mpi": "[".__eq__,
    "logging_basic": lambda c: c in "CEWID", "vllm": lambda c: c in "CEWID", "torch_logging": "[".__eq__,
    "cloud_logging": lambda c: c in "DINWECA", "oslo": lambda c: c.isdecimal() or c in "CE",
    "github_annotation": "E".__eq__, "tornado": "[".__eq__, "dmlc": "[".__eq__, "buildkit": "#".__eq__,
    "torchserve": lambda c: c.isdecimal() or c == "[", "omni_kit": str.isdecimal, "rich_handler": "[ ".__contains__,
    "celery": "[".__eq__,
}


@lru_cache(maxsize=1024)
def ruled_out_by(first: str) -> frozenset[str]:
    """The known prefixes that cannot begin with the character `first`."""
    return frozenset(name for name, opens in _OPENS.items() if not opens(first))


def known_at(text: str, kinds: Iterable[KnownPrefix]) -> tuple[KnownPrefix, regex.Match] | None:
    """The first of `kinds` whose pattern matches at the text's start, with its match; None where none does. (Those
    that cannot begin with the text's first character are not tried.)"""
    ruled_out = ruled_out_by(text[0]) if text else frozenset()
    return next(((kind, m) for kind in kinds if kind.name not in ruled_out and (m := kind.pattern.match(text)) is not None),
                None)


def parse_timestamp(text: str | None) -> datetime | None:
    """ISO-like timestamps with a year; nanosecond fractions are cut to microseconds.

    The wall clock is kept as printed and a UTC offset dropped: a container runtime's stamp
    (`...Z`) and the server's own naive one on the same line must compare with each other.
    """
    if not text:
        return None
    # Lines of the same second say it over and over; a crafted long one is not worth a place.
    return _parsed_timestamp(text) if len(text) <= 64 else _parse_timestamp(text)


def _parse_timestamp(text: str) -> datetime | None:
    text = text.replace(",", ".").replace("Z", "+00:00")
    head, dot, rest = text.partition(".")
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[:min(digits, 6)] + rest[digits:]
        text = f"{head}.{rest}"
    try:
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        return None


_parsed_timestamp = lru_cache(maxsize=1024)(_parse_timestamp)


@dataclass(slots=True)
class PrefixMeta:
    """What the prefixes of one line said, gathered while peeling them off."""

    channel: tuple[str, ...] = ()  # the per-line parts of the stream key
    tags: str | None = None  # per-message stream tag; None when the line has no such prefix
    rank: str | None = None
    host: str | None = None
    timestamp: datetime | None = None
    starts_message: bool = False
    message_prefix: str = ""  # the per-message prefix text, to tell a repeated one from a new record
    inferred: tuple[str, ...] = ()  # stream keys of the learned prefixes on the line
    learned: str = ""  # the text of the first one


def read_known(kind: KnownPrefix, m: regex.Match, meta: PrefixMeta, calendar: Calendar | None = None) -> None:
    """Record what the prefix `kind`, matched as `m`, says about its line. `calendar`: the year of a stamp
    printed without one (without it, such a stamp is no time)."""
    groups = m.groupdict()
    if groups.get("ts"):
        meta.timestamp = parse_timestamp(groups["ts"]) or meta.timestamp
    elif groups.get("yts") and calendar is not None and meta.timestamp is None:  # (a dated one outside it knows the year)
        meta.timestamp = calendar.read(groups["yts"])
    if kind is PDSH:
        meta.host = groups["host"]
        meta.channel += (groups["host"],)
    elif kind is SYSLOG:
        meta.host = groups["host"] or meta.host
        meta.channel += (f"{groups['host'] or ''} {groups['proc']}[{groups['pid'] or ''}]",)
        meta.rank = meta.rank or (f"pid={groups['pid']}" if groups["pid"] else None)
    elif kind is MPI:
        meta.host = groups["host"] or meta.host
        meta.channel += (f"[{groups['job']},{groups['rank']},{groups['host'] or ''}]<{groups['std']}>",)
        meta.rank = f"rank{groups['rank']}"
    elif kind is BUILDKIT:
        meta.channel += (f"#{groups['step']}",)
    elif kind is TORCHSERVE:  # (where MODEL_LOG relays the worker's lines, the reader's own are not among them)
        meta.channel += (f"{groups['worker']}-{groups['std']}{'' if groups['logger'] in (None, 'MODEL_LOG') else ' reader'}",)
    elif kind is HEROKU:
        meta.channel += (f"{groups['source']}[{groups['dyno']}]",)
        meta.rank = meta.rank or groups["dyno"]
    elif kind is WORKER:
        meta.host = groups["ip"] or meta.host
        meta.channel += (f"pid={groups['pid']}@{groups['ip'] or ''}",)
        meta.rank = (f"rank{groups['rank']}" if groups["rank"] else groups["tags"] or f"pid={groups['pid']}")
    elif kind is TORCHRUN:
        meta.channel += (f"rank{groups['rank']}",)
        meta.rank = f"rank{groups['rank']}"
    elif kind is SGLANG:
        tags = groups["tags"].strip()
        meta.tags = tags
        meta.rank = tags or meta.rank
        meta.starts_message = True
        meta.message_prefix += m.group(0)
    elif kind.scope is Scope.MESSAGE:
        if kind is OSLO and groups["pid"]:
            meta.rank = meta.rank or f"pid={groups['pid']}"
        meta.tags = ""
        meta.starts_message = True
        meta.message_prefix += m.group(0)
