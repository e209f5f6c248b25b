"""Faithful copies of the formatters that put prefixes on log lines, written from each format's
definition, for tests: a real exception goes in (raised and formatted by `traceback`), the lines a
server would have written come out.

Each formatter takes the text a program wrote (one record or a stream of lines) and returns lines.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import traceback
from datetime import UTC, datetime, timedelta

__all__ = [
    "app_logger",
    "ci_timestamps",
    "cloud_export",
    "compose",
    "container_ui_export",
    "events_table_copy",
    "logfmt",
    "structlog_console",
    "tui_log_box",
    "cri",
    "djl_serving_worker",
    "docker_json_file",
    "ecs_logger",
    "structlog_dict_tracebacks",
    "fastchat_stderr",
    "github_actions",
    "journal_json",
    "json_each_line",
    "json_logger",
    "kubectl_timestamps",
    "logging_each_line",
    "ray_dedup",
    "sglang_each_line",
    "sglang_record",
    "torch_glog",
    "torchelastic_error_file",
    "glog",
    "loguru",
    "ci_clock",
    "app_stream_level",
    "torchrun_tee",
    "torchx_local",
    "vllm_record",
    "vllm_worker",
]

T0 = datetime(2026, 11, 28, 3, 12, 40, 123456)


class _NewLineFormatter(logging.Formatter):
    """vLLM's formatter: the whole record prefix again after every newline of the formatted record
    (traceback included), behind a `\\r` (vllm/logging_utils/formatter.py)."""

    def format(self, record: logging.LogRecord) -> str:
        msg = super().format(record)
        if record.message != "":
            head = msg.split(record.message)[0]
            msg = msg.replace("\n", "\r\n" + head)
        return msg


_VLLM_V1 = "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"
_VLLM_V0 = "%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s"
_VLLM_TIMELESS = "%(levelname)s [%(filename)s:%(lineno)d] %(message)s"  # (V1's with a time format that prints none)


def _record(message: str, exc: BaseException | None, when: datetime, level: int = logging.ERROR,
            pathname: str = "/srv/vllm/v1/engine/core.py", lineno: int = 396, name: str = "vllm") -> logging.LogRecord:
    record = logging.LogRecord(name, level, pathname, lineno, message, None,
                               (type(exc), exc, exc.__traceback__) if exc is not None else None)
    record.created = when.timestamp()
    record.msecs = when.microsecond // 1000
    return record


def vllm_record(message: str, exc: BaseException | None = None, when: datetime = T0, v0: bool = False,
                file: str = "core.py", lineno: int = 396, level: int = logging.ERROR, timeless: bool = False) -> list[str]:
    """`logger.exception(message)` in vLLM: every line `ERROR 11-28 03:12:40 [core.py:396] ...` (V1) or
    `ERROR 11-28 03:12:40 core.py:396] ...` (V0), or `ERROR [core.py:396] ...` (`timeless`). The `\\r` of `\\r\\n`
    stays on the line, as in a file."""
    formatter = _NewLineFormatter(_VLLM_TIMELESS if timeless else _VLLM_V0 if v0 else _VLLM_V1, datefmt="%m-%d %H:%M:%S")
    text = formatter.format(_record(message, exc, when, level, f"/srv/vllm/{file}", lineno))
    return text.split("\n")


def logging_placed(message: str, exc: BaseException | None = None, when: datetime = T0,
                   name: str = "lmdeploy") -> list[str]:
    """`logger.exception(message)` formatted `%(asctime)s - %(name)s - %(levelname)s - %(filename)s:%(lineno)d
    - %(message)s` (lmdeploy's logger): the record's first line prefixed, its traceback's lines not."""
    formatter = logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(filename)s:%(lineno)d - %(message)s")
    return formatter.format(_record(message, exc, when, pathname=f"/srv/{name}/utils.py", lineno=411,
                                    name=name)).split("\n")


def mmengine(message: str, exc: BaseException | None = None, when: datetime = T0, level: int = logging.ERROR,
             name: str = "OpenCompass", pathname: str = "/srv/opencompass/models/openai_api.py", lineno: int = 650) -> list[str]:
    """mmengine's logger (OpenCompass, MMDetection): `01/15 16:19:27 - OpenCompass - INFO - ...`; at ERROR and above
    the record's file, function and line too (`... - ERROR - /srv/x.py - _generate - 650 - ...`)."""
    place = " - %(pathname)s - %(funcName)s - %(lineno)d" if level >= logging.ERROR else ""
    formatter = logging.Formatter(f"%(asctime)s - %(name)s - %(levelname)s{place} - %(message)s", "%m/%d %H:%M:%S")
    record = _record(message, exc, when, level, pathname=pathname, lineno=lineno, name=name)
    record.funcName = "_generate"
    return formatter.format(record).split("\n")


def celery(message: str, exc: BaseException | None = None, when: datetime = T0, level: int = logging.ERROR,
           process: str = "ForkPoolWorker-3", task: tuple[str, str] | None = None) -> list[str]:
    """A Celery worker's record: `worker_log_format`, `[%(asctime)s: %(levelname)s/%(processName)s] %(message)s`, or a
    task's, `worker_task_log_format`, the task's name and id after it (`tasks.add[4c3e...]: `); its traceback below."""
    place = f" {task[0]}[{task[1]}]:" if task else ""
    formatter = logging.Formatter(f"[%(asctime)s: %(levelname)s/%(processName)s]{place} %(message)s")
    record = _record(message, exc, when, level, name="celery.app.trace")
    record.processName = process
    return formatter.format(record).split("\n")


def asctime_colon(lines: list[str], when: datetime = T0) -> list[str]:
    """Each line logged by itself through `%(asctime)s: %(message)s` (PythonAnywhere's error log of a web app)."""
    formatter = logging.Formatter("%(asctime)s: %(message)s")
    return [formatter.format(_record(line, None, when)) for line in lines]


def logging_padded(message: str, name: str = "sagemaker-containers", level: int = logging.ERROR,
                   when: datetime = T0) -> list[str]:
    """`logger.log(level, message)` formatted `%(name)s %(levelname)-8s %(message)s` (sagemaker-containers' logger): the
    logger's name, the level padded to eight; a message's further lines as they are."""
    return logging.Formatter("%(name)s %(levelname)-8s %(message)s").format(
        _record(message, None, when, level, name=name)).split("\n")


def logging_nameless(message: str, exc: BaseException | None = None, when: datetime = T0,
                     level: int = logging.ERROR, fields: bool = False) -> list[str]:
    """`logger.exception(message)` (or `logger.error`) formatted `%(asctime)s - %(levelname)s - %(message)s`, the
    basicConfig format many scripts set, or with more fields before the level and a colon after it (`fields`:
    crewAI's); the record's first line prefixed, its traceback's lines not."""
    formatter = logging.Formatter("%(asctime)s - %(process)d - %(filename)s-%(module)s:%(lineno)d - %(levelname)s: %(message)s"
                                  if fields else "%(asctime)s - %(levelname)s - %(message)s")
    return formatter.format(_record(message, exc, when, level, name="optimizer")).split("\n")


class _TornadoFormatter(logging.Formatter):
    """Tornado's `LogFormatter` without colours: the level's first letter in brackets with the time and place."""

    def format(self, record: logging.LogRecord) -> str:
        record.levelletter = record.levelname[0]
        return super().format(record)


def tornado(message: str, exc: BaseException | None = None, when: datetime = T0, level: int = logging.ERROR,
            jupyter: bool = False, hub: bool = False) -> list[str]:
    """`logger.exception(message)` through Tornado's formatter (KServe's model server): `[E 211213 04:25:33
    __main__:37] `, the traceback's lines under it; or Jupyter's (`[E 2024-05-01 12:00:00.123 ServerApp] `), or
    JupyterHub's, which names the module and line too (`[W 2018-06-20 11:51:10.549 JupyterHub web:1618] `)."""
    if hub:
        formatter = _TornadoFormatter("[%(levelletter)s %(asctime)s.%(msecs)03d %(name)s %(module)s:%(lineno)d] %(message)s",
                                      "%Y-%m-%d %H:%M:%S")
    elif jupyter:
        formatter = _TornadoFormatter("[%(levelletter)s %(asctime)s.%(msecs)03d %(name)s] %(message)s", "%Y-%m-%d %H:%M:%S")
    else:
        formatter = _TornadoFormatter("[%(levelletter)s %(asctime)s %(module)s:%(lineno)d] %(message)s", "%y%m%d %H:%M:%S")
    record = _record(message, exc, when, level, pathname="/srv/kserve/__main__.py", lineno=37, name="ServerApp")
    return formatter.format(record).split("\n")


def vllm_worker(lines: list[str], name: str = "VllmWorker", pid: int = 4321, rank: int | None = None,
                tp: int | None = None) -> list[str]:
    """vLLM's multiprocessing workers write stdout/stderr through a wrapper that starts each line with
    `(VllmWorker rank=1 pid=4321) `, `(VllmWorker TP1 pid=4301) ` or `(VllmWorkerProcess pid=N) `."""
    tag = f" rank={rank}" if rank is not None else f" TP{tp}" if tp is not None else ""
    return [f"({name}{tag} pid={pid}) {line}" for line in lines]


def sglang_record(message: str, lines: list[str], when: datetime = T0, tags: str = " TP1") -> list[str]:
    """SGLang's `[%(asctime)s%(prefix)s] %(message)s`: the prefix on a record's first line only."""
    return [f"[{when:%Y-%m-%d %H:%M:%S}{tags}] {message}{lines[0]}", *lines[1:]]


def sglang_each_line(lines: list[str], when: datetime = T0, tags: str = " TP1") -> list[str]:
    """The same records split into one record per line (a collector, `logger.exception` per line)."""
    return [f"[{when:%Y-%m-%d %H:%M:%S}{tags}] {line}" for line in lines]


def uvicorn(lines: list[str], level: str = "ERROR") -> list[str]:
    """uvicorn's default format, `%(levelprefix)s %(message)s`: the level and a colon padded to nine columns, then a
    blank; here each line logged as a record of its own (an app that relays a child's stderr line by line)."""
    return [f"{level}:{' ' * (8 - len(level))} {line}" for line in lines]


def compose(lines: list[str], service: str, width: int = 0) -> list[str]:
    """docker compose: the service name padded to the widest one, then ` | `."""
    return [f"{service.ljust(width)} | {line}" for line in lines]


def podman_compose(lines: list[str], service: str, width: int = 0, colour: int | None = 2) -> list[str]:
    """podman-compose: the service in brackets, blanks to the widest one's width and one more, a bar; in the service's
    colour (`colour`, an ANSI code's last digit), reset after the bar; then a blank and the line."""
    pad = " " * (max(width, len(service)) - len(service) + 1)
    on, off = (f"\x1b[1;3{colour}m", "\x1b[0m") if colour is not None else ("", "")
    return [f"{on}[{service}]{pad}|{off} {line}" for line in lines]


def container_ui_export(lines: list[str], start: datetime = T0, separator: str = " | ", stream: str = "stdout",
                        nanoseconds: bool = False) -> list[str]:
    """A container UI's log table copied as text (Synology's, Portainer's): `date | stream | line` per row (tab
    separated in another export), the newest row first; or the engine's own time, RFC 3339 in nanoseconds, each row's
    a little earlier than the row above it (`2024-10-08T08:50:34.331322727Z | stdout | line`)."""
    rows = []
    for k, line in enumerate(reversed(lines)):
        when = start - timedelta(microseconds=75 * k)
        stamp = f"{when:%Y-%m-%dT%H:%M:%S.%f}{k % 1000:03d}Z" if nanoseconds else f"{start:%Y-%m-%d %H:%M:%S}"
        rows.append(f"{stamp}{separator}{stream}{separator}{line}")
    return rows


def structlog_console(event: str, level: str = "info", when: datetime = T0, **pairs: str) -> str:
    """structlog's ConsoleRenderer without colours: the ISO time, the level in brackets padded to the longest level's
    name (`exception`), the event padded to 30 characters, then the other pairs as key=value, sorted."""
    stamp = f"{when:%Y-%m-%dT%H:%M:%S.%f}Z"
    tail = " ".join(f"{key}={value}" for key, value in sorted(pairs.items()))
    return f"{stamp} [{level:<9}] {event:<30} {tail}".rstrip()


def logfmt(pairs: list[tuple[str, str]]) -> str:
    """One logfmt record (Go's logfmt, Heroku's, Python's key=value renderers): `key=value` pairs apart by a blank,
    a value quoted where it holds a blank, `=` or `"`, or is empty, and a quote or backslash in it escaped."""
    def value(text: str) -> str:
        if text and not any(char in text for char in ' ="\\'):
            return text
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return " ".join(f"{key}={value(text)}" for key, text in pairs)


def events_table_copy(lines: list[str], start: datetime = T0) -> list[str]:
    """A log viewer's table of events copied as text, the newest first: each row the time in epoch milliseconds and
    in ISO 8601 (UTC, milliseconds), then the line, tab separated; rows a few milliseconds apart."""
    rows = []
    for k, line in enumerate(reversed(lines)):
        when = start - timedelta(milliseconds=3 * k)
        epoch_ms = int((when - datetime(1970, 1, 1, tzinfo=when.tzinfo)).total_seconds() * 1000)
        rows.append(f"{epoch_ms}\t{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z\t{line}")
    return rows


def pm2(lines: list[str], pm_id: int = 0, name: str = "api", padding: int = 3, when: datetime | None = None) -> list[str]:
    """`pm2 logs`: the process's id and name (`0|api`) padded to the widest seen so far (at least a blank more than
    itself), then ` | `; with `--time` (`when`), the time each line came to the minute and its offset (its default
    format, `YYYY-MM-DD HH:mm Z`), then `: `."""
    label = f"{pm_id}|{name}"
    stamp = f"{when:%Y-%m-%d %H:%M} +00:00: " if when is not None else ""
    return [f"{label.ljust(max(padding, len(label) + 1))} | {stamp}{line}" for line in lines]


def djl_serving_worker(lines: list[str], worker: int = 133, model: str = "model", stream: str = "stderr") -> list[str]:
    """DJL Serving's relay of a Python worker's lines (SageMaker's LMI containers): its PyProcess logger through the
    default log4j pattern `[%-5level] %logger{0} - %msg`, the worker's thread and stream first in the message; stderr at
    WARN, stdout at INFO."""
    level = "WARN " if stream == "stderr" else "INFO "
    return [f"[{level}] PyProcess - W-{worker}-{model}-{stream}: {line}" for line in lines]


def torchserve_worker(lines: list[str], port: int = 9000, model: str = "model_1", stream: str = "stdout",
                      start: datetime = T0, iso: bool = False, logger: str = "MODEL_LOG") -> list[str]:
    """TorchServe (MMS before it) relaying each line its model's worker process prints, through log4j's
    `%d{ISO8601} [%-5p] %t %c - %m`: the worker's thread `W-<port>-<model>-<stream>`, the logger MODEL_LOG (in older
    releases the class that reads the output, `org.pytorch.serve.wlm.WorkerLifeCycle`), stdout at INFO and stderr at
    WARN (`2022-05-04 01:34:40,609 [INFO ] W-9000-model_1-stdout MODEL_LOG - ...`)."""
    level = "INFO" if stream == "stdout" else "WARN"
    stamp = f"{start:%Y-%m-%d}{'T' if iso else ' '}{start:%H:%M:%S},{start.microsecond // 1000:03d}"
    return [f"{stamp} [{level:<5}] W-{port}-{model}-{stream} {logger} - {line}" for line in lines]


def rich_handler_lines(records: list[tuple[str, str]], start: datetime = T0) -> list[str]:
    """Rich's logging handler as SD.Next sets it up (`log_time_format='%H:%M:%S-%f'`, no path): the time, the level
    padded to eight, the message; `records` are (level, message)."""
    return [f"{start:%H:%M:%S-%f} {level:<8} {message}" for level, message in records]


def rich_logging(records: list[tuple[int, str]], time_format: str = "[%x %X]", width: int = 120,
                 start: datetime = T0, step: timedelta = timedelta(seconds=1)) -> list[str]:
    """Rich's own logging handler (`rich.logging.RichHandler`, not a copy) on a console `width` wide: the time (blanks for
    a record in the same second as the one before it), the level padded to eight, the message wrapped in its column,
    the record's place at the right edge. `records` are (level, message); each `step` after the one before."""
    from rich.console import Console
    from rich.logging import RichHandler

    console = Console(file=io.StringIO(), width=width, color_system=None)
    handler = RichHandler(console=console, log_time_format=time_format)
    for index, (level, message) in enumerate(records):
        record = logging.LogRecord("torch.distributed.elastic.multiprocessing.api", level, "/srv/venv/api.py", 672,
                                   message, None, None)
        record.created = (start + step * index).timestamp()
        handler.handle(record)
    return console.file.getvalue().splitlines()


def omni_kit(lines: list[str], level: str = "Error", channel: str = "carb.scripting-python.plugin", start: datetime = T0,
             since_start_ms: int = 6447) -> list[str]:
    """NVIDIA Omniverse Kit's log of a record (Isaac Sim, Isaac Lab): `%Y-%m-%d %H:%M:%S [N,NNNms] [Level] [channel] `
    on its first line, the milliseconds since start-up with a thousands separator; its other lines as they are."""
    return [f"{start:%Y-%m-%d %H:%M:%S} [{since_start_ms:,}ms] [{level}] [{channel}] {lines[0]}", *lines[1:]]


def cloudwatch_csv(lines: list[str], stream: str | None = "AllTraffic/i-03af43d35aa1655b6", start: datetime = T0) -> list[str]:
    """CloudWatch Logs' export of a stream's events as a table: the event's time in epoch milliseconds, its message
    (quoted where it holds a comma or a quote, its own quotes doubled, as CSV writes them), the log stream where the
    export has that column."""
    millis = int((start - datetime(1970, 1, 1)).total_seconds() * 1000)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows((millis, line, *([stream] if stream else [])) for line in lines)
    return out.getvalue().splitlines()


def syslog_escaped(line: str) -> str:
    """A line as rsyslog passes it on (`$EscapeControlCharactersOnReceive`): each control character as `#` and its
    octal code (an ANSI colour's ESC as `#033`)."""
    return "".join(f"#{ord(char):03o}" if ord(char) < 32 and char != "\t" else char for char in line)


def _ticking(count: int, start: datetime, step: timedelta) -> list[datetime]:
    return [start + step * i for i in range(count)]


def fastchat_stderr(lines: list[str], start: datetime = T0, step: timedelta = timedelta(milliseconds=400)) -> list[str]:
    """FastChat's StreamToLogger: each stderr line a record of the `stderr` logger at ERROR, formatted
    `%(asctime)s | %(levelname)s | %(name)s | %(message)s` with `%Y-%m-%d %H:%M:%S`; the clock ticks."""
    return [f"{when:%Y-%m-%d %H:%M:%S} | ERROR | stderr | {line}"
            for when, line in zip(_ticking(len(lines), start, step), lines)]


def loguru(lines: list[str], level: str = "ERROR", where: str = "app.server:main:12", start: datetime = T0,
           step: timedelta = timedelta(milliseconds=400)) -> list[str]:
    """loguru's default format, `{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - `,
    each line a record of its own (a message without line breaks)."""
    return [f"{when:%Y-%m-%d %H:%M:%S}.{when.microsecond // 1000:03d} | {level:<8} | {where} - {line}"
            for when, line in zip(_ticking(len(lines), start, step), lines)]


def loguru_backtrace(lines: list[str], caught: int, indent: str = "") -> list[str]:
    """loguru's own print of a traceback (`logger.exception`, backtrace on): a blank line after the header and
    after each frame's lines, `> ` in place of the indentation of the `caught`-th frame line (where the error
    was caught), each line behind `indent` (the message column of a Rich handler that prints the record)."""
    out: list[str] = []
    frames = 0
    for line in lines:
        if line.startswith("  File "):
            out += [""] if frames else []
            line = f"> {line[2:]}" if frames == caught else line
            frames += 1
        elif not line.startswith(" ") and frames:
            out.append("")
        out.append(line)
        out += [""] if line.startswith("Traceback") else []
    return [f"{indent}{line}" if line else line for line in out]


def ci_clock(lines: list[str], start: datetime = T0) -> list[str]:
    """A CI runner's clock on every line it captured, month by name and no year (`Nov 20 16:03:25 `)."""
    return [f"{when:%b %d %H:%M:%S} {line}" for when, line in zip(_ticking(len(lines), start, timedelta(seconds=1)), lines)]


def app_stream_level(lines: list[str], stream: str = "stdout", level: str = "INFO", start: datetime = T0) -> list[str]:
    """An app's launcher that tags each line of its child's streams: `[16:10:33] stdout/INFO  `."""
    return [f"[{when:%H:%M:%S}] {stream}/{level}  {line}" for when, line in zip(_ticking(len(lines), start, timedelta(seconds=1)), lines)]


def logging_each_line(lines: list[str], name: str = "sglang", level: str = "INFO", start: datetime = T0,
                      step: timedelta = timedelta(0)) -> list[str]:
    """Python logging's `%(asctime)s - %(name)s - %(levelname)s - %(message)s` on each line: a record
    split by a collector (one time), or each line logged as a record of its own (`step` apart)."""
    return [f"{when:%Y-%m-%d %H:%M:%S},{when.microsecond // 1000:03d} - {name} - {level} - {line}"
            for when, line in zip(_ticking(len(lines), start, step), lines)]


def app_logger(lines: list[str], app: str = "AReaL", name: str = "SGLangServer", level: str = "INFO",
               start: datetime = T0, step: timedelta = timedelta(milliseconds=1)) -> list[str]:
    """A launcher that logs each line its server prints through its own logger, formatted
    `(%(app)s) %Y%m%d-%H:%M:%S.mmm %(name)s %(levelname)s: %(message)s` (as RL frameworks do)."""
    return [f"({app}) {when:%Y%m%d-%H:%M:%S}.{when.microsecond // 1000:03d} {name} {level}: {line}"
            for when, line in zip(_ticking(len(lines), start, step), lines)]


def ci_timestamps(lines: list[str], start: datetime = T0) -> list[str]:
    """Buildkite's timestamps on a job's log: `[2026-11-28T03:12:40Z] ` (UTC, seconds) on every line."""
    return [f"[{start:%Y-%m-%dT%H:%M:%S}Z] {line}" for line in lines]


def github_actions(lines: list[str], start: datetime = T0) -> list[str]:
    """A GitHub Actions job's raw log: the runner's UTC time, seven digits of the second's fraction, `Z` and a blank
    in front of every line (`2025-11-14T08:52:38.3746210Z `)."""
    return [f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond:06d}{i % 10}Z {line}"
            for i, (when, line) in enumerate(zip(_ticking(len(lines), start, timedelta(microseconds=90)), lines))]


def cloud_export(lines: list[str], start: datetime = T0, severity: str = "ERROR",
                 step: timedelta = timedelta(microseconds=7)) -> list[str]:
    """A cloud log export: severity and an RFC 3339 time with nanoseconds before every entry."""
    return [f"{severity} {when:%Y-%m-%dT%H:%M:%S}.{when.microsecond:06d}{i % 1000:03d}Z {line}"
            for i, (when, line) in enumerate(zip(_ticking(len(lines), start, step), lines))]


def torch_logging(lines: list[str], name: str = "torch._dynamo.convert_frame", level: str = "WARNING",
                  when: datetime = T0) -> list[str]:
    """torch._logging's format before torch 2.4, `[%(asctime)s] %(name)s: [%(levelname)s] `, on each line of a
    record (a traceback dynamo logs when it falls back to eager)."""
    return [f"[{when:%Y-%m-%d %H:%M:%S},{when.microsecond // 1000:03d}] {name}: [{level}] {line}" for line in lines]


def torch_glog(lines: list[str], rank: int | None = 4, pid: int = 2265, level: str = "ERROR",
               where: str = "torch/_guards.py:283", trace: str = " [14/1]", when: datetime = T0) -> list[str]:
    """torch._logging's formatter: `[rankN]:` + level letter + `MMDD hh:mm:ss.micros pid path:line]` +
    trace id, then a space and the line, on each line of the record."""
    rank_prefix = f"[rank{rank}]:" if rank is not None else ""
    prefix = f"{rank_prefix}{level[0]}{when:%m%d %H:%M:%S}.{when.microsecond:06d} {pid} {where}]{trace}"
    return [f"{prefix} {line}" for line in lines]


def glog(lines: list[str], level: str = "ERROR", thread: int = 1234, where: str = "python_be.cc:1233",
         when: datetime = T0) -> list[str]:
    """glog's LogMessage prefix (C++ servers: Triton, absl): level letter, `MMDD hh:mm:ss.micros`, the
    thread id right-aligned in five columns, `file:line] `."""
    return [f"{level[0]}{when:%m%d %H:%M:%S}.{when.microsecond:06d} {thread:5d} {where}] {line}" for line in lines]


def cri(lines: list[str], stream: str = "stderr", start: datetime = T0, max_record: int = 16384) -> list[str]:
    """The CRI log format of Kubernetes' container runtimes: time, stream, F for a full line; a line
    longer than `max_record` bytes is split into partial records (P) ended by a full one. A blank
    record keeps its space before the (empty) text: tools that strip trailing blanks lose it."""
    out = []
    for i, line in enumerate(lines):
        stamp = f"{start + timedelta(microseconds=i):%Y-%m-%dT%H:%M:%S.%f}000Z {stream}"
        pieces = [line[at:at + max_record] for at in range(0, len(line), max_record)] or [""]
        out += [f"{stamp} P {piece}" for piece in pieces[:-1]] + [f"{stamp} F {pieces[-1]}"]
    return out


def ray_dedup(lines: list[str], times: int = 7) -> list[str]:
    """Ray's log deduplication: a line every worker printed is shown once, with a count appended."""
    return [f"{line} [repeated {times}x across cluster]" if line.strip() else line for line in lines]


def torchrun_tee(lines: list[str], local_rank: int = 0, role: str = "default") -> list[str]:
    """torchrun's `--tee` log prefix `[default0]:`: no space of its own before the worker's text."""
    return [f"[{role}{local_rank}]:{line}" for line in lines]


def level_in_brackets(lines: list[str], level: str = "Error", source: str | None = "Process", when: datetime = T0) -> list[str]:
    """A desktop server's log of the lines it relays from the engine it runs (Lemonade's): the time to the millisecond,
    the level in brackets as the app spells it, and what the line came from in parentheses."""
    head = f"{when:%Y-%m-%d %H:%M:%S}.{when.microsecond // 1000:03d} [{level}] " + (f"({source}) " if source else "")
    return [head + line for line in lines]


def torchx_local(lines: list[str], role: str = "trainer", replica: int = 0) -> list[str]:
    """TorchX's local scheduler (NeMo-Run's too) in front of each line of a replica: `role/replica `."""
    return [f"{role}/{replica} {line}" for line in lines]


def _rfc3339_nano(when: datetime, nanos: int = 0) -> str:
    """Go's time.RFC3339Nano in UTC: trailing zeros of the fraction dropped, and the dot with them."""
    fraction = f"{when.microsecond:06d}{nanos:03d}".rstrip("0")
    return f"{when:%Y-%m-%dT%H:%M:%S}{'.' + fraction if fraction else ''}Z"


def _go_json(value: dict) -> str:
    """encoding/json's output: compact, UTF-8 kept, and `<`, `>`, `&`, U+2028/9 escaped (HTML-safe)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def docker_json_file(writes: list[tuple[str, str]], start: datetime = T0, max_record: int = 16384) -> list[str]:
    """Docker's json-file log driver: one object per line a container wrote, `{"log": text + "\\n",
    "stream": "stdout"|"stderr", "time": RFC 3339 with nanoseconds}`. A line longer than the copier's
    16 KiB buffer is split into pieces whose `log` has no newline; the last piece has it. `writes` are
    (stream, line) in the order the container wrote them, so streams interleave as they did."""
    out = []
    for i, (stream, line) in enumerate(writes):
        stamp = _rfc3339_nano(start + timedelta(microseconds=i), i % 1000)
        data = line.encode("utf-8")
        pieces = [data[at:at + max_record] for at in range(0, len(data), max_record)] or [b""]
        for n, piece in enumerate(pieces):
            text = piece.decode("utf-8", errors="replace") + ("\n" if n == len(pieces) - 1 else "")
            out.append(_go_json({"log": text, "stream": stream, "time": stamp}))
    return out


def c_printer_writes(exc: BaseException) -> list[str]:
    """The writes CPython's exception printer in C (3.12 and before: `PyErr_Display`, `PyTraceBack_Print`) makes to
    a stderr for an uncaught exception without a cause: the header, each frame's line whole, its source line as
    the indent, the stripped line and the line break, then the exception line as the module's name, `.`, the
    class's name, `: `, the message and the line break (builtins' module left out; no carets: 3.10's form)."""
    writes = ["Traceback (most recent call last):\n"]
    for frame in traceback.extract_tb(exc.__traceback__):
        writes.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n')
        if frame.line:
            writes += ["    ", frame.line.strip(), "\n"]
    kind = type(exc)
    if kind.__module__ != "builtins":
        writes += [kind.__module__, "."]
    writes.append(kind.__qualname__)
    if str(exc):
        writes += [": ", str(exc)]
    return [*writes, "\n"]


def interleaved_writes(*processes: list[str], turns: tuple[int, ...] = (1,)) -> list[str]:
    """Processes writing to one file at once, unbuffered: the writes of each in order, the processes taking turns
    (process k writes `turns[k % len(turns)]` pieces a turn), as lines."""
    pending = [list(writes) for writes in processes]
    out: list[str] = []
    while any(pending):
        for k, writes in enumerate(pending):
            out += writes[:turns[k % len(turns)]]
            del writes[:turns[k % len(turns)]]
    return "".join(out).rstrip("\n").split("\n")


def relayed_events(writes: list[tuple[str, str]], command: tuple[str, ...] = ("python", "main.py")) -> list[str]:
    """A benchmark runner relaying its child's output as events, one JSON object per line (Python's json.dumps,
    default separators, ASCII escapes), as milabench writes them: `{"event": "line", "data": text + "\\n",
    "pipe": "stdout"|"stderr"}` for each line the child wrote, between the run's own events (`start`, `data`
    with a metric, `end` with the return code) whose `pipe` is null or `data`. `writes` are (stream, line)."""
    out = [json.dumps({"event": "start", "data": {"command": list(command), "time": 1733480000.5}, "pipe": None})]
    for i, (stream, line) in enumerate(writes):
        out.append(json.dumps({"event": "line", "data": line + "\n", "pipe": stream}))
        if i % 4 == 3:
            out.append(json.dumps({"event": "data", "data": {"rate": 112.5 + i, "units": "items/s"}, "pipe": "data"}))
    out.append(json.dumps({"event": "end", "data": {"command": list(command), "return_code": 1}, "pipe": None}))
    return out


def journal_json(writes: list[tuple[int, str]], host: str = "gpu-node-3", ident: str = "python3",
                 start: datetime = T0) -> list[str]:
    """`journalctl -o json` of services writing to stdout: journald stores each line as an entry, and
    journalctl prints every field as a string, except a value that is not printable UTF-8 (a colour
    escape, say), which is an array of its bytes. `writes` are (pid, line) in the order written."""
    out = []
    epoch = datetime(1970, 1, 1)
    for i, (pid, line) in enumerate(writes):
        when = start + timedelta(microseconds=i)
        usec = (when - epoch) // timedelta(microseconds=1)
        printable = not any(ord(ch) < 32 and ch not in "\t\n" or 127 <= ord(ch) < 160 for ch in line)
        out.append(json.dumps({
            "__CURSOR": f"s=0f1e;i={i:x};b=3c2a;m={i:x};t={usec:x};x=77",
            "__REALTIME_TIMESTAMP": str(usec),
            "__MONOTONIC_TIMESTAMP": str(1_000_000 + i),
            "_BOOT_ID": "3c2a9d8e1b7f4c6a8e0d2b4f6a8c0e1d",
            "PRIORITY": "6",
            "_TRANSPORT": "stdout",
            "_PID": str(pid),
            "_COMM": ident,
            "SYSLOG_IDENTIFIER": ident,
            "_HOSTNAME": host,
            "MESSAGE": line if printable else list(line.encode("utf-8")),
        }))
    return out


def json_logger(message: str, exc: BaseException | None = None, when: datetime = T0, level: int = logging.ERROR,
                keys: dict[str, str] | None = None, name: str = "sglang.srt") -> str:
    """A `logging` record through a JSON formatter of python-json-logger's shape: the fields the format
    names, `message`, and the formatted exception under `exc_info`. `keys` renames fields as
    `rename_fields` does (`{"message": "msg", "levelname": "level"}`)."""
    record = _record(message, exc, when, level, name=name)
    formatter = logging.Formatter()
    fields = {"asctime": when.replace(tzinfo=UTC).isoformat(), "levelname": record.levelname,
              "name": record.name, "message": record.getMessage()}
    if record.exc_info:
        fields["exc_info"] = formatter.formatException(record.exc_info)
    renames = keys or {}
    return json.dumps({renames.get(key, key): value for key, value in fields.items()})


def json_each_line(lines: list[str], start: datetime = T0, step: timedelta = timedelta(milliseconds=400),
                   extra: str = "") -> list[str]:
    """FastChat's StreamToLogger behind a JSON formatter: each stderr line a record of the `stderr`
    logger at ERROR; the clock ticks. `extra` is more fields, as JSON text (`"rank": 3`)."""
    return [json_logger(line, when=when, name="stderr")[:-1] + (f", {extra}}}" if extra else "}")
            for when, line in zip(_ticking(len(lines), start, step), lines)]


def ecs_logger(message: str, exc: BaseException, when: datetime = T0, name: str = "vllm.engine") -> str:
    """Elastic's ECS formatter for `logging` (ecs-logging-python's StdlibFormatter): dotted fields
    nested, keys sorted but `@timestamp`, `log.level` and `message` first, compact; the exception as
    `error.type` (the class's `__name__`), `error.message` (`str()`) and `error.stack_trace`
    (`traceback.format_tb`)."""
    fields = {
        "ecs": {"version": "1.6.0"},
        "error": {"message": str(exc), "stack_trace": "".join(traceback.format_tb(exc.__traceback__)),
                  "type": type(exc).__name__},
        "log": {"logger": name, "origin": {"file": {"line": 396, "name": "core.py"}, "function": "run"},
                "original": message},
        "process": {"name": "MainProcess", "pid": 4321, "thread": {"id": 140245, "name": "MainThread"}},
    }
    head = {"@timestamp": f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z", "log.level": "error",
            "message": message}
    return json.dumps({**head, **dict(sorted(fields.items()))}, sort_keys=False, separators=(",", ":"))


def structlog_dict_tracebacks(event: str, exc: BaseException, when: datetime = T0, key: str = "exception") -> str:
    """structlog's JSONRenderer behind its `dict_tracebacks` processor: the exception as a list of the chain's
    exceptions, the one raised first, then each one's cause (`is_cause` true) or context after it, each with
    `exc_type` (the class's `__name__`), `exc_value` (`str()`), `exc_notes`, `syntax_error`, `is_cause`, `frames`
    (`filename`, `lineno`, `name`; no source line), `is_group` and `exceptions`. Airflow 3 logs it under `error_detail`."""
    stacks: list[dict] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    is_cause = False
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        stacks.append({"exc_type": type(current).__name__, "exc_value": str(current),
                       "exc_notes": [str(note) for note in getattr(current, "__notes__", ())], "syntax_error": None,
                       "is_cause": is_cause,
                       "frames": [{"filename": f.filename, "lineno": f.lineno, "name": f.name}
                                  for f in traceback.extract_tb(current.__traceback__)],
                       "is_group": False, "exceptions": []})
        if current.__cause__ is not None:
            current, is_cause = current.__cause__, True
        else:
            current, is_cause = (None if current.__suppress_context__ else current.__context__), False
    return json.dumps({"event": event, "level": "error", "timestamp": f"{when:%Y-%m-%dT%H:%M:%S.%f}Z", key: stacks})


def torchelastic_error_file(exc: BaseException) -> list[str]:
    """torchelastic's error handler logging the error file it records (`ErrorHandler.record_exception`): the logger's
    basic format, then the JSON pretty-printed, the error as `"Type: text"` and its formatted traceback in
    `extraInfo.py_callstack`."""
    said = f"{type(exc).__name__}: {exc}"
    callstack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    record = {"message": {"message": said, "extraInfo": {"py_callstack": callstack, "timestamp": "1700000000"}}}
    text = json.dumps(record, indent=2)
    return f"ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{text}".split("\n")


def kubectl_timestamps(lines: list[str], start: datetime = T0) -> list[str]:
    """`kubectl logs --timestamps`: the runtime's RFC 3339 time (nanoseconds) and a space before each line."""
    return [f"{start + timedelta(microseconds=i):%Y-%m-%dT%H:%M:%S.%f}000Z {line}" for i, line in enumerate(lines)]


def journal(lines: list[str], host: str | None = "gpu-node-7", ident: str = "litellm", pid: int | None = 511221,
            start: datetime = T0) -> list[str]:
    """`journalctl`'s short output, `%b %e %T host ident[pid]: ` (a copy may have lost the host; a program whose
    records name no pid, as syslog's `logger -t`, has none)."""
    where = f"{host} " if host else ""
    ident = f"{ident}[{pid}]" if pid is not None else ident
    return [f"{start:%b} {start.day:2d} {start:%H:%M:%S} {where}{ident}: {line}" for line in lines]


def kernel_console(lines: list[str], ident: str = "cloud-init", pid: int = 528, since_boot: float = 113.002366,
                   step: float = 0.004137) -> list[str]:
    """A service's lines on the machine's serial console as systemd echoes them: the kernel's time since boot, `[%5lu.%06lu] `
    (seconds and microseconds), then `ident[pid]: `. What a VM's console log, and a cloud image's boot log, show."""
    out = []
    for k, line in enumerate(lines):
        micros = round((since_boot + k * step) * 1_000_000)
        out.append(f"[{micros // 1_000_000:5d}.{micros % 1_000_000:06d}] {ident}[{pid}]: {line}")
    return out


def log_drain(lines: list[str], host: str = "web-7f9c", process: str = "worker", start: datetime = T0) -> list[str]:
    """A log drain's viewer (Mezmo's of a Heroku app, lines carried as syslog): `%b %d %H:%M:%S host app[process] `
    and a severity in lower case, which the drain gives each line by its words: `error` where a line names an error or
    an exception, else `info`."""
    return [f"{start:%b %d %H:%M:%S} {host} app[{process}] {_drain_severity(line)} {line}" for line in lines]


def _drain_severity(line: str) -> str:
    return "error" if any(word in line.lower() for word in ("error", "exception")) else "info"


def shell_relayed(lines: list[str], name: str = "bash") -> list[str]:
    """A wrapper script relaying a program's output as `while read line; do echo "bash: $line"; done`: `read` without
    `IFS=` strips each line's leading and trailing blanks."""
    return [f"{name}: " + line.strip(" \t") for line in lines]


def heroku(lines: list[str], dyno: str = "web.1", start: datetime = T0,
           step: timedelta = timedelta(microseconds=2)) -> list[str]:
    """`heroku logs`: the time with its offset, then `app[dyno]: ` in front of each line."""
    return [f"{when.isoformat()}+00:00 app[{dyno}]: {line}" for when, line in zip(_ticking(len(lines), start, step), lines)]


def oslo(message: str, lines: list[str], when: datetime = T0, pid: int = 2711, name: str = "nova.compute.manager",
         trace: str = "ERROR", context: str = "req-1c1e975c-f9ee-4149-bfbf-212e898c53fc - - - - -") -> list[str]:
    """OpenStack's oslo.log: the record's line under `%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s
    [%(request_id)s %(user_identity)s] `, then each line of its traceback under the exception prefix
    `%(asctime)s.%(msecs)03d %(process)d ERROR %(name)s ` (`TRACE` for the level before 2015), all at the record's time."""
    stamp = f"{when:%Y-%m-%d %H:%M:%S}.{when.microsecond // 1000:03d} {pid}"
    return [f"{stamp} ERROR {name} [{context}] {message}", *(f"{stamp} {trace} {name} {line}" for line in lines)]


def aws_lambda(exc: BaseException) -> list[str]:
    """The Python Lambda runtime's log of an unhandled error (awslambdaric's `log_error`): `[ERROR] Type:
    message`, then `Traceback (most recent call last):` and the stack as `traceback.format_list` gives
    it, without the exception line again."""
    stack = "".join(traceback.format_list(traceback.extract_tb(exc.__traceback__)))
    return [f"[ERROR] {type(exc).__name__}: {exc}", "Traceback (most recent call last):", *stack.splitlines()]


def aws_lambda_syntax_error(exc: SyntaxError, module: str) -> list[str]:
    """The same runtime's log where the handler's module does not compile: `Runtime.UserCodeSyntaxError`, and the
    place as its stack's one item (`  File "path" Line N` and the source line)."""
    said = f"Syntax error in module '{module}': {exc}"
    return [f"[ERROR] Runtime.UserCodeSyntaxError: {said}", "Traceback (most recent call last):",
            f'  File "{exc.filename}" Line {exc.lineno}', f"        {(exc.text or '').strip()}"]


def mpi_tagged(lines: list[str], rank: int = 2, stream: str = "stderr", job: int | None = 1, host: str = "") -> list[str]:
    """Open MPI's `mpirun --tag-output`: `[job,rank]<stream>:` glued to each line a rank prints; SageMaker's
    distributed jobs name the host too: `[1,mpirank:7,algo-1]<stderr>:`; horovodrun's Gloo launcher (`job` None) the
    rank alone: `[1]<stderr>:`."""
    tag = f"{job},mpirank:{rank},{host}" if host else f"{job},{rank}" if job is not None else str(rank)
    return [f"[{tag}]<{stream}>:{line}" for line in lines]


def pdsh(lines: list[str], host: str = "10.29.253.123") -> list[str]:
    """pdsh (DeepSpeed's multi-node launcher): `%h: ` in front of each line a host's processes print."""
    return [f"{host}: {line}" for line in lines]


def srun_label(lines: list[str], task: int = 0, tasks: int = 1, pack: int | None = None) -> list[str]:
    """Slurm's `srun --label`: the task's number right-aligned to the widest of the step's task numbers, then `: `;
    in a heterogeneous job the component's `P<n> ` before it."""
    label = f"{'' if pack is None else f'P{pack} '}{task:{len(str(tasks - 1))}d}: "
    return [label + line for line in lines]


def buildkit(lines: list[str], step: int | None = 16, start: float = 0.883) -> list[str]:
    """`docker build --progress=plain` (BuildKit): the step's number and the seconds since it began, on each line its
    command wrote (`#16 3.943 `); without the step (None), its summary of a failed step's last lines, the seconds to
    two places (`31.59 `)."""
    if step is None:
        return [f"{start + k * 0.01:.2f} {line}" for k, line in enumerate(lines)]
    return [f"#{step} {start + k * 0.01:.3f} {line}" for k, line in enumerate(lines)]


def tui_log_box(lines: list[str], width: int = 200, title: str = " Logs(default/vllm-0)[tail] ") -> list[str]:
    """A terminal UI's log pane copied as text (k9s): the pane's border around it, each line between the side
    borders, padded to the pane's width (longer ones wrapped onto more rows)."""
    shown = [line.rstrip("\r") for line in lines]  # (a line's carriage return moves the cursor; nothing is drawn)
    rows = [line[k:k + width] for line in shown for k in range(0, max(len(line), 1), width)]
    top = "\u250c" + title.center(width + 1, "\u2500") + "\u2510"
    return [top, *(f"\u2502 {row:<{width}}\u2502" for row in rows), "\u2514" + "\u2500" * (width + 1) + "\u2518"]


def numbered(lines: list[str], first: int = 1) -> list[str]:
    """`cat -n FILE` (and `nl -ba`): each line's number right-aligned in six columns, then a tab."""
    return [f"{number:6d}\t{line}" for number, line in enumerate(lines, first)]


def viewer_numbers(lines: list[str], first: int = 1, separator: str = " ", width: int = 0) -> list[str]:
    """A log viewer's lines copied with its line numbers (an editor's, a CI job's page, a build log's): each number,
    right-aligned to `width` columns, then `separator` (a blank, a tab, ` | `; none where the viewer drew a gap)."""
    return [f"{number:{width}d}{separator}{line}" for number, line in enumerate(lines, first)]


def grep_context(lines: list[str], pattern: str, file: str | None = None, first: int | None = 1) -> list[str]:
    """`grep -n -C N PATTERN` over lines numbered from `first` (None: `grep -C`, no numbers; `-H`: each line's file name
    in front): a line that holds `pattern` marked with `:` after its file and number, a line of context with `-`."""
    marked = []
    for index, line in enumerate(lines):
        mark = ":" if pattern in line else "-"
        number = "" if first is None else f"{first + index}{mark}"
        marked.append(f"{'' if file is None else file + mark}{number}{line}")
    return marked


def search_finds(lines: list[str], numbers: list[int], indent: str = "\t") -> list[str]:
    """An editor's list of a search's finds (Notepad++'s Find All): each line found, numbered as in its file, behind
    `Line N: `, indented by a tab (a copy may turn it into blanks), a blank line between them where the copy doubled
    the breaks."""
    return [f"{indent}Line {number}: {line}" for number, line in zip(numbers, lines)]


def ray_worker(lines: list[str], name: str = "ScanProvider", pid: int = 371, ip: str = "10.17.3.7",
               escapes: bool = True) -> list[str]:
    """Ray's driver relaying a worker's output: the worker's name, pid and node in parentheses, dimmed and coloured
    (`ESC[2mESC[36m(Name pid=N, ip=A)ESC[0m `); an issue tracker's copy drops each code's escape character only."""
    esc = "\x1b" if escapes else ""
    return [f"{esc}[2m{esc}[36m({name} pid={pid}, ip={ip}){esc}[0m {line}" for line in lines]


def notebook_viewer(lines: list[str], first: int = 1009, seconds: float = 129.7, cells: str = " | ") -> list[str]:
    """A notebook service's log viewer (Kaggle) copied as text: seconds since the start, the line's number
    and the line, as table cells (`141.8s | 1015 | Traceback (most recent call last):`; copied as a table's rows, the
    cells apart by tabs: `cells="\\t"`)."""
    return [f"{seconds + index * 0.1:.1f}s{cells}{first + index}{cells}{line}" for index, line in enumerate(lines)]
