"""Property tests of the streaming parser.

1. Real tracebacks (raised here, formatted by `traceback`) are written as a server would write them:
   behind random prefixes, by several ranks at once, between realistic log lines, with CRLF, ANSI
   colours, a byte-order mark or UTF-16, and read back in chunks cut at random bytes. Exactly the
   tracebacks that went in must come out, field for field: none lost, none invented, none merged.
2. Arbitrary bytes never make the parser, matcher or output raise, and no line outgrows the cap.

How processes interleave follows how they print:
- a per-line prefix (torchrun `[rank3]:`, vLLM/Ray workers, journald) is on every line a process
  writes, so the lines of several processes interleave one by one;
- a per-message prefix (SGLang `[time TP3]`, Python logging, vLLM's level) is on a record's first
  line only, so records of several ranks interleave whole.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import json
import os
import random
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from analyzer.cli import main
from analyzer.commands.exit_codes import Exit
from analyzer.core.records import EventKind
from analyzer.core.scan import events_from_lines
from analyzer.sinks.serialize import incident_dict
from analyzer.sinks.text import render_report
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.lines import split_lines, utf8_chunks
from analyzer.sources.packs import builtin_pack_dir
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.support import CALENDAR, builtin_engine

# CI runs a fixed, derandomised sample; ANALYZER_PROPERTY_EXAMPLES=5000 explores new ones for longer.
_SOAK = os.environ.get("ANALYZER_PROPERTY_EXAMPLES")
PROPERTY = settings(max_examples=int(_SOAK or 120), derandomize=not _SOAK, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ----------------------------------------------------------------------------- real exceptions


class DistBackendError(RuntimeError):
    """A third-party exception type: printed with its module, as torch prints it."""


DistBackendError.__module__ = "torch.distributed"

EXCEPTION_TYPES = (ValueError, RuntimeError, TypeError, KeyError, AssertionError, OSError, ImportError,
                   DistBackendError)
# Words of messages, including reprs, unicode, emoji and a Windows path; no word starts a log record.
WORDS = ("bad", "value", "42", "-1", "0.93", "rank", "GPU", "CUDA", "out", "of", "memory", "tried", "to",
         "allocate", "2.00", "GiB", "expected", "got", "--tp-size", "'flashinfer_tkv'", "('none', 'deepep')",
         "[1, 2, 3]", "{'tp': 8}", "torch.Size([2, 4096])", "None", "température", "显存不足", "🔥",
         "C:\\models\\llama", "x=1;", "error:", "Traceback?", "\"quoted\"")
SENTENCES = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


@dataclass(frozen=True)
class LinkSpec:
    exc_type: type
    lines: tuple[str, ...]  # the message; () for an exception raised without arguments
    depth: int  # frames between the raising helper and the raise
    link: str  # how it follows the link before it: cause | context | hidden (`from None`)
    note: str | None


LINKS = st.builds(LinkSpec, st.sampled_from(EXCEPTION_TYPES), st.lists(SENTENCES, max_size=3).map(tuple),
                  st.integers(0, 3), st.sampled_from(("cause", "context", "hidden")), st.none() | SENTENCES)
_HIDE = object()


def _dive(depth: int, exc: BaseException, cause) -> None:
    if depth:
        _dive(depth - 1, exc, cause)
    if cause is _HIDE:
        raise exc from None
    if cause is not None:
        raise exc from cause
    raise exc


def _build(spec: LinkSpec) -> BaseException:
    exc = spec.exc_type("\n".join(spec.lines)) if spec.lines else spec.exc_type()
    if spec.note:
        exc.add_note(spec.note)
    return exc


def _raise_chain(links: list[LinkSpec]) -> None:
    *earlier, last = links
    if not earlier:
        _dive(last.depth, _build(last), None)
    try:
        _raise_chain(earlier)
    except Exception as err:  # the chain is built on purpose
        _dive(last.depth, _build(last), {"cause": err, "context": None, "hidden": _HIDE}[last.link])


def _recursion(n: int = 0) -> int:
    return _recursion(n + 1)


def _syntax() -> None:
    compile("x = (\n", "<generated>", "exec")


def _caret() -> int:
    values = {"a": [1, 2]}
    return values["a"][5] + values["a"][0]


def _interrupt() -> None:
    raise KeyboardInterrupt


def _group() -> None:
    def nested():
        raise ExceptionGroup("inner", [TypeError("t1"), OSError("disk full")])

    try:
        nested()
    except ExceptionGroup as inner:
        raise ExceptionGroup("outer", [inner, ValueError("v"), KeyError("k")])  # noqa: B904 - the implicit context is tested


def _group_in_chain() -> None:
    try:
        _group()
    except ExceptionGroup as err:
        raise RuntimeError("group failed") from err


SPECIAL = [capture(f) for f in (_recursion, _syntax, _caret, _interrupt, _group, _group_in_chain)]
EXCEPTIONS = st.one_of(st.lists(LINKS, min_size=1, max_size=3).map(lambda links: capture(lambda: _raise_chain(links))),
                       st.sampled_from(SPECIAL))

# ----------------------------------------------------------------------------- how logs are written

# Log records from real servers; none of them is an error event. Each carries a record start of its
# own (a timestamp or a level), so it also ends an exception message printed before it.
RECORDS = (
    "Decode batch. #running-req: 3, #token: 4096, token usage: 0.02, cuda graph: True, gen throughput (token/s): 812.44, #queue-req: 0",
    "Prefill batch. #new-seq: 1, #new-token: 128, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0",
    "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=61.52 GB, mem usage=12.10 GB.",
    "Avg prompt throughput: 512.3 tokens/s, Avg generation throughput: 48.1 tokens/s, Running: 4 reqs, GPU KV cache usage: 12.5%",
    "Retrying request after error: connection reset by peer (attempt 2 of 5)",
    "The server is fired up and ready to roll!",
)
STANDALONE_RECORDS = (
    "W1201 10:00:00.123000 140 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable to 1",
    "I1201 10:00:01.000000 140 torch/distributed/elastic/agent/server/api.py:867] [default] Starting worker group",
    'INFO:     127.0.0.1:52514 - "POST /generate HTTP/1.1" 200 OK',
    "INFO 12-01 10:00:05 [metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Running: 0 reqs",
)
# Lines without a record start: safe only where no traceback of the same process can be open.
LOOSE = (
    "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.02s/it]",
    "Capturing batches (bs=160 avail_mem=59.23 GB): 100%|██████████| 23/23 [00:04<00:00,  5.21it/s]",
    "NCCL version 2.21.5+cuda12.4",
    "*****************************************",
    "",
)
# Per-message prefixes: (text before a record's first line, the rank it names).
MESSAGE_PREFIXES = {
    "sglang": lambda r: (f"[2026-08-28 10:00:0{r} TP{r}] ", f"TP{r}"),
    "sglang_dp": lambda r: (f"[2026-08-28 10:00:01,25 DP1 TP{r}] ", f"DP1 TP{r}"),
    "logging": lambda r: (f"2026-12-01 10:00:00,12{r} - sglang.srt.worker{r} - ERROR - ", None),
    "logging_basic": lambda r: ("ERROR:root:", None),
    "vllm": lambda r: (f"ERROR 12-01 10:00:0{r} [core.py:1{r}] ", None),
}
# Per-line prefixes: (text before every line of process r, the rank it names).
LINE_PREFIXES = {
    "torchrun": lambda r: (f"[rank{r}]: ", f"rank{r}"),
    "vllm_worker": lambda r: (f"(VllmWorker rank={r} pid={4300 + r}) ", f"rank{r}"),
    "ray": lambda r: (f"(pid={1200 + r}, ip=10.0.0.{r + 1}) ", f"pid={1200 + r}"),
    "journald": lambda r: (f"Dec  1 10:00:0{r} gpu-node-{r} python3[{5550 + r}]: ", f"pid={5550 + r}"),
}
CONTAINER = "2026-12-01T10:00:0{s}.{n:09d}Z stderr F "
ANSI = ("\x1b[31m", "\x1b[0m", "\x1b[1;33m", "\x1b[K", "\x1b[38;5;208m")
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be")


@dataclass(frozen=True)
class Written:
    """One traceback as written into the log, and what the parser must say about it."""

    line_start: int
    line_end: int
    rank: str | None
    context: str
    chain: tuple


@dataclass
class _Item:
    process: int
    lines: list[str]  # body lines, without the per-line prefix
    traceback: tuple | None = None  # (chain, context) when the item is a traceback
    first_prefixed: bool = False  # the first line carries a per-message prefix


@st.composite
def logs(draw):
    """A log as text lines, and the tracebacks written into it."""
    mode = draw(st.sampled_from(("per_line", "per_message", "json")))
    processes = draw(st.integers(1, 4))
    item_count = draw(st.integers(1, 8))
    items: list[_Item] = []
    line_kind = draw(st.sampled_from(sorted(LINE_PREFIXES)))
    inner = [draw(st.sampled_from((None, *sorted(MESSAGE_PREFIXES)))) for _ in range(processes)]
    message_kind = draw(st.sampled_from(sorted(MESSAGE_PREFIXES)))
    for _ in range(item_count):
        process = draw(st.integers(0, processes - 1))
        if draw(st.booleans()):
            exc = draw(EXCEPTIONS)
            context = draw(st.sampled_from(("", "Scheduler hit an exception:", "Worker 3 failed:")))
            body = text_of(exc).rstrip("\n").split("\n")
            if context:
                body[0] = f"{context} {body[0]}"
            items.append(_Item(process, body, (expected_chain(exc), context)))
        else:
            items.append(_Item(process, [draw(st.sampled_from(RECORDS + STANDALONE_RECORDS))]))
    if mode == "json":
        return _json_log(draw, items)
    container = draw(st.booleans())
    if mode == "per_message":
        return _message_log(draw, items, message_kind, container)
    return _line_log(draw, items, line_kind, inner, container)


def _message_log(draw, items, kind, container):
    lines, written = [], []
    for item in items:
        prefix, rank = MESSAGE_PREFIXES[kind](item.process)
        body = list(item.lines)
        if item.traceback is not None or body[0] in RECORDS:
            body[0] = prefix + body[0]
        if item.traceback is not None:
            chain, context = item.traceback
            written.append(Written(len(lines) + 1, len(lines) + len(body), rank, context, chain))
        lines.extend(body)
    if container:
        lines = [CONTAINER.format(s=i % 10, n=i) + line for i, line in enumerate(lines)]
    return lines, written


def _line_log(draw, items, kind, inner, container):
    """Each process writes its items in order; the processes' lines interleave at random."""
    queues: dict[int, list[tuple[str, object]]] = {}
    for index, item in enumerate(items):
        line_prefix, line_rank = LINE_PREFIXES[kind](item.process)
        body = list(item.lines)
        rank = line_rank
        if inner[item.process] is not None and (item.traceback is not None or body[0] in RECORDS):
            message_prefix, message_rank = MESSAGE_PREFIXES[inner[item.process]](item.process)
            body[0] = message_prefix + body[0]
            rank = message_rank or line_rank
        elif body[0] in RECORDS:
            body[0] = "INFO 12-01 10:00:00 [scheduler.py:1] " + body[0]  # a record needs a record start
        tag = (index, rank) if item.traceback is not None else None
        queues.setdefault(item.process, []).extend((line_prefix + text, tag) for text in body)
    loose = draw(st.lists(st.sampled_from(LOOSE + STANDALONE_RECORDS), max_size=6))
    queues[-1] = [(text, None) for text in loose]  # the launcher's own, unprefixed output
    order = [p for p, queue in queues.items() for _ in queue]
    random.Random(draw(st.integers(0, 2**32))).shuffle(order)
    lines: list[str] = []
    spans: dict[tuple, list[int]] = {}
    for process in order:
        text, tag = queues[process].pop(0)
        lines.append(text)
        if tag is not None:
            spans.setdefault(tag, []).append(len(lines))
    written = []
    for (index, rank), numbers in spans.items():
        chain, context = items[index].traceback
        written.append(Written(numbers[0], numbers[-1], rank, context, chain))
    if container:
        lines = [CONTAINER.format(s=i % 10, n=i) + line for i, line in enumerate(lines)]
    return lines, written


def _json_log(draw, items):
    lines, written = [], []
    for item in items:
        record = {"time": f"2026-12-01T10:00:0{item.process}Z", "host": f"gpu-{item.process}",
                  "rank": item.process}
        if item.traceback is None:
            record.update(level="INFO", message=item.lines[0])
        elif draw(st.booleans()):
            record.update(level="ERROR", message="\n".join(_coloured(draw, line) for line in item.lines))
        else:
            record.update(level="ERROR", message="engine step failed", exc_info="\n".join(item.lines))
        lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())))
        if item.traceback is not None:
            chain, context = item.traceback
            written.append(Written(len(lines), len(lines), f"rank{item.process}", context, chain))
    return lines, written


def _coloured(draw, line: str) -> str:
    """Colour codes at up to two places of the line, never inside one another."""
    places = draw(st.lists(st.integers(0, len(line)), max_size=2, unique=True))
    for at in sorted(places, reverse=True):
        line = line[:at] + draw(st.sampled_from(ANSI)) + line[at:]
    return line


@st.composite
def encoded(draw, lines: list[str]) -> list[bytes]:
    """The log as bytes with random line endings and colours, cut into chunks at random bytes."""
    text = "".join(_coloured(draw, line) + draw(st.sampled_from(("\n", "\r\n"))) for line in lines)
    if not draw(st.booleans()):
        text = text[:-1].rstrip("\r")  # no newline at the end of the file
    encoding = draw(st.sampled_from(ENCODINGS))
    data = text.encode(encoding)
    if encoding == "utf-16-le":
        data = codecs.BOM_UTF16_LE + data
    elif encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    cuts = sorted({cut % (len(data) + 1) for cut in draw(st.lists(st.integers(0, 2**31), max_size=30))})
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]


def _parsed(chunks: list[bytes]) -> dict[int, Written]:
    """What the line-by-line parser (follow, stdin) found; the fast path of `analyzer scan` must
    find the same."""
    notices = builtin_engine().notices  # the notice path runs too: no line of these logs is one
    fast = ChunkScanner("prop.log", notices, calendar=CALENDAR)
    fast_events = [event for chunk in utf8_chunks(chunks) for event in fast.feed(chunk)] + list(fast.finish())
    events = list(events_from_lines(split_lines(chunks), "prop.log", notices, CALENDAR))
    assert fast_events == events
    found = {}
    for event in events:
        assert event.kind is EventKind.TRACEBACK and not event.truncated, event
        assert event.span.line_start not in found, f"two events start on line {event.span.line_start}"
        found[event.span.line_start] = Written(event.span.line_start, event.span.line_end, event.rank,
                                               event.context, actual_chain(event.chain))
    return found


@PROPERTY
@given(st.data())
def test_exactly_the_tracebacks_written_come_out(data):
    lines, written = data.draw(logs())
    chunks = data.draw(encoded(lines))
    assert _parsed(chunks) == {w.line_start: w for w in written}


@PROPERTY
@given(st.lists(st.sampled_from(RECORDS + STANDALONE_RECORDS + LOOSE), max_size=40),
       st.sampled_from(sorted(MESSAGE_PREFIXES)))
def test_noise_vocabulary_holds_no_error(noise, kind):
    """The noise the other property mixes in is no error on its own, with or without a prefix."""
    prefix, _ = MESSAGE_PREFIXES[kind](0)
    lines = [prefix + line if line in RECORDS else line for line in noise]
    assert list(events_from_lines(lines, "noise.log", builtin_engine().notices)) == []


# ----------------------------------------------------------------------------- arbitrary bytes

# Pieces of the formats the parser reads, so that random input reaches deep into the grammar.
FRAGMENTS = tuple(piece.encode() for piece in (
    "Traceback (most recent call last):\n", '  File "/srv/sglang/srt/x.py", line 12, in run\n', "    x = f(y)\n",
    "    ^^^^^^\n", "  [Previous line repeated 996 more times]\n", "ValueError: bad value\n", "KeyboardInterrupt\n",
    "The above exception was the direct cause of the following exception:\n",
    "During handling of the above exception, another exception occurred:\n", "\n",
    "  + Exception Group Traceback (most recent call last):\n", "  | ValueError: v\n",
    "  +-+---------------- 1 ----------------\n", "    | KeyError: 'k'\n", "    +------------------------------------\n",
    "usage: serve [-h]\n", "serve: error: argument --tp: invalid int value: 'x'\n", "[rank3]: ", "(pid=12, ip=1.2.3.4) ",
    "[2026-08-28 10:00:01 DP1 TP3] ", "2026-12-01T10:00:00.1Z stderr F ", "ERROR:root:", '{"message": "', '\\n", "rank": 1}',
    "\x1b[31m", "\r", "\r\n", "\x00", "\ufeff", "[" * 40, "{" * 20,
)) + (b"\xff\xfe", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x94")


PACKS = builtin_pack_dir()


@PROPERTY
@given(st.lists(st.one_of(st.binary(max_size=48), st.sampled_from(FRAGMENTS)), max_size=60).map(b"".join),
       st.integers(1, 64), st.integers(16, 512), st.integers(0, 5))
def test_arbitrary_bytes_never_break_the_pipeline(blob, chunk, max_line, tick_every):
    marker = len(" [analyzer: line cut, 99999999 more bytes dropped]")

    def lines():
        for count, line in enumerate(split_lines([blob[i:i + chunk] for i in range(0, len(blob), chunk)], max_line), 1):
            assert len(line) <= max_line + marker
            yield line
            if tick_every and count % tick_every == 0:
                yield None  # an idle tick, as in follow and stdin mode

    engine = builtin_engine()
    analysis = engine.analysis()
    for event in events_from_lines(lines(), "bytes.log", engine.notices):
        analysis.add(event)
    incidents = analysis.incidents()
    json.dumps([incident_dict(incident) for incident in incidents], ensure_ascii=False)
    render_report(incidents, Console(file=io.StringIO(), width=100), show_all=True, summary="s")


# The hand-written packs: loading all 20,000 built-in patterns on every example would be slow, and the
# matcher meets them in the pipeline property above.
CURATED_PACKS = [arg for pack in ("common", "sglang/curated") for arg in ("--patterns", str(PACKS / pack))]


@settings(PROPERTY, max_examples=int(_SOAK or 25))
@given(st.lists(st.one_of(st.binary(max_size=48), st.sampled_from(FRAGMENTS)), max_size=40).map(b"".join),
       st.sampled_from(("text", "jsonl", "json")), st.booleans(), st.integers(0, 7))
def test_arbitrary_bytes_never_break_the_cli(tmp_path_factory, blob, fmt, packed, eighths):
    """`analyzer scan` on a file of arbitrary bytes, plain or as a gzip cut anywhere: a documented
    exit code, output in the format asked for, and at most one-line warnings."""
    log = tmp_path_factory.mktemp("bytes") / "server.log"
    if packed:
        compressed = gzip.compress(blob)
        blob = compressed[:len(compressed) * (eighths + 1) // 8]
    log.write_bytes(blob)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["scan", "--format", fmt, "--fail-on", "any", "--no-builtin", *CURATED_PACKS, str(log)])
    assert code in (Exit.OK, Exit.FOUND)
    if fmt == "json":
        json.loads(out.getvalue())
    elif fmt == "jsonl":
        for line in out.getvalue().splitlines():
            json.loads(line)
    assert all(line.startswith("analyzer: warning: ") for line in err.getvalue().splitlines())
