"""The fast path (ChunkScanner) yields exactly what feeding every line to a FileScanner yields.

Same events field for field (line numbers included), same line count, same first timestamp,
host and run configuration, for every fixture log, for generated server logs, and for logs mixed from every prefix
format and error shape the parser knows, cut into chunks of several sizes.
"""

from __future__ import annotations

import codecs
import itertools
import json
import random
from datetime import timedelta
from functools import cache
from pathlib import Path

import pytest

from analyzer.core import triggers
from analyzer.core.grammar import HEADER_TEXT
from analyzer.core.normalize import LineNormalizer
from analyzer.core.notices import NoticeDetector
from analyzer.core.records import EventKind
from analyzer.core.scan import FileScanner
from analyzer.sources import chunkscan
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.lines import MAX_LINE, split_lines, utf8_chunks
from analyzer.sources.packs import load_packs
from benchmarks.generate import build_log
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.support import CALENDAR, PURE_ONLY

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "logs").glob("*.log"))
CHUNKS = (1 << 20, 1000, 61)

pytestmark = pytest.mark.skipif(not triggers.available(), reason="hyperscan is not installed")


@cache
def notices() -> NoticeDetector:
    return NoticeDetector(load_packs(use_env=False).line_patterns())


def line_path(data: bytes, max_line: int = MAX_LINE):
    scanner = FileScanner("t.log", notices(), calendar=CALENDAR)
    events = [e for raw in split_lines([data], max_line) for e in scanner.feed(raw)] + list(scanner.finish())
    return events, scanner.lines, scanner.first_timestamp, scanner.host, scanner.run_config


def fast_path(data: bytes, chunk: int, max_line: int = MAX_LINE, fast: bool = True):
    scanner = ChunkScanner("t.log", notices(), max_line, fast=fast, calendar=CALENDAR)
    pieces = utf8_chunks(data[i:i + chunk] for i in range(0, len(data), chunk))
    events = [e for piece in pieces for e in scanner.feed(piece)] + list(scanner.finish())
    return events, scanner.lines, scanner.scanner.first_timestamp, scanner.scanner.host, scanner.scanner.run_config


def assert_same(data: bytes, max_line: int = MAX_LINE, chunks=CHUNKS) -> list:
    expected = line_path(data, max_line)
    for chunk in chunks:
        assert fast_path(data, chunk, max_line) == expected, f"chunks of {chunk} bytes"
    return expected[0]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_logs(path):
    assert assert_same(path.read_bytes())


@pytest.mark.parametrize("seed", range(3))
def test_generated_server_logs(seed):
    text, truth = build_log(150_000, every=400, seed=seed)
    events = assert_same(text.encode(), chunks=(1 << 20, 4096))
    assert len(events) == len(truth)


# ----------------------------------------------------------------------------- mixed logs

def _value_error():
    raise ValueError("bad value 42")


def _chained():
    try:
        {}["missing"]
    except KeyError as err:
        raise RuntimeError("could not load\nsecond line of the message") from err


def _interrupt():
    raise KeyboardInterrupt


ERRORS = (_value_error, _chained, _interrupt)
TRACEBACKS = [text_of(capture(f)).splitlines() for f in ERRORS]
NOTICE = "Received sigquit from a child process. It usually means the child failed."


def _stamp(rng: random.Random) -> str:
    return f"2026-08-28 10:{rng.randrange(60):02d}:{rng.randrange(60):02d}"


# Where the project is checked out: the tracebacks raised here hold it in their paths. The logs mixed from them
# have it replaced by one fixed path, so that they are the same in every checkout (a path's length moves where
# a form that wraps lines cuts them, and so which of the parser's rules a line meets).
_CHECKOUT = str(Path(__file__).parent.parent)


def _fixed(lines: list[str]) -> list[str]:
    return [line.replace(_CHECKOUT, "/srv/analyzer") for line in lines]


def _record(rng: random.Random) -> list[str]:
    """One log record of a shape the parser knows, or plain noise."""
    rank = f"TP{rng.randrange(4)}"
    tb = rng.choice(TRACEBACKS)
    shapes = [
        lambda: [f"[{_stamp(rng)} {rank}] Decode batch. #running-req: 3, token usage: 0.41, #queue-req: 0"],
        lambda: [f"[{_stamp(rng)}] INFO:     127.0.0.1:5000 - \"POST /generate HTTP/1.1\" 200 OK"],
        lambda: ["plain output without any prefix", "    an indented continuation"],
        lambda: [f"INFO 12-01 10:00:0{rng.randrange(10)} [engine.py:12] vLLM engine step"],
        lambda: ["WARNING:sglang.srt:slow step", "Memory pool status: token usage: 0.9"],
        lambda: [f"INFO:root:[{_stamp(rng)} {rank}] a dated prefix after a levelled one"],
        lambda: [f"{_stamp(rng)},123 - sglang.srt - ERROR - worker {rank} failed", *tb],
        lambda: ["ERROR:root:worker crashed", *tb],
        lambda: [f"[{_stamp(rng)} {rank}] Scheduler hit an exception: {tb[0]}", *tb[1:]],
        lambda: list(tb),  # unprefixed: it inherits the stream and time of the record before it
        lambda: tb[2:],  # cut above its header
        lambda: [f"[{_stamp(rng)} {rank}] ValueError: expected 4 heads, got 3"],
        lambda: [line.ljust(120) for line in ["AssertionError", *tb[-3:], "KeyError: 'lm_head'"]],  # a terminal's padding
        lambda: ["usage: serve [-h] [--tp TP]", '  File "/x.py", line 3, in f', "serve: error: argument --tp: bad"],
        lambda: ["token usage: 0.5", '  File "/srv/x.py", line 3, in f', "    f()"],
        lambda: ["usage: tool [-h]", "just printing help"],
        lambda: ["Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'an illegal memory access was encountered'"],
        lambda: [f"[{_stamp(rng)}] {NOTICE}"],
        lambda: [f"[rank{rng.randrange(2)}]: {line}" for line in tb],
        lambda: [f"(VllmWorker rank=1 pid=4321) {line}" for line in tb],
        lambda: [json.dumps({"time": "2026-12-01T10:00:00Z", "message": "worker crashed\n" + "\n".join(tb),
                             "rank": rng.randrange(3), "host": "gpu-1"})],
        lambda: [json.dumps({"message": "ok", "level": "INFO"})],
        lambda: [f"\x1b[31m{line}\x1b[0m" for line in tb],
        lambda: ["progress 10%\r" + f"[{_stamp(rng)} {rank}] Load weight end."],
        lambda: ["Trace\x00back (most recent call last):", *tb[1:]],
        lambda: ["", "   "],
        # Prefixes on every line, known and learned (tests/logformats.py).
        lambda: fmt.vllm_record("EngineCore failed", capture(rng.choice(ERRORS)), v0=rng.random() < 0.5),
        lambda: fmt.vllm_worker(fmt.vllm_record("failed", capture(rng.choice(ERRORS))), rank=rng.randrange(2)),
        lambda: fmt.sglang_each_line(tb, tags=f" {rank}"),
        lambda: fmt.compose(tb, rng.choice(("svc-a", "svc-b", "inference_engine")), width=16),
        lambda: fmt.compose([f"[{_stamp(rng)} {rank}] Decode batch. #running-req: 3"], "svc-a", width=16),
        lambda: fmt.fastchat_stderr(tb),
        lambda: fmt.logging_each_line(tb),
        lambda: fmt.cloud_export(tb),
        lambda: fmt.torch_glog(tb, rank=rng.randrange(2)),
        lambda: fmt.torchrun_tee(tb, rng.randrange(2)),
        lambda: fmt.ray_dedup(tb),
        lambda: fmt.logging_each_line(fmt.sglang_record("Scheduler hit an exception: ", tb, tags=f" {rank}"),
                                      name="__main__", step=timedelta(milliseconds=rng.choice((0, 1)))),
        lambda: fmt.app_logger(tb, name=rng.choice(("SGLangServer", "Server1")), level="ERROR"),
        lambda: [f"Processed prompts:   0%|     | 0/128 [00:00<?, ?it/s]{tb[0]}", *tb[1:]],
    ]
    return _fixed(rng.choice(shapes)())


WRAPS = {
    "none": lambda rng, line: line,
    "container": lambda rng, line: f"2026-12-01T10:00:{rng.randrange(60):02d}.{rng.randrange(10**9):09d}Z stderr F {line}",
    "crlf": lambda rng, line: line + "\r",
    "syslog": lambda rng, line: f"Dec  1 10:00:00 gpu-node-7 python3[{rng.choice((5, 6))}]: {line}",
    "syslog_no_host": lambda rng, line: f"fev  1 10:00:00 litellm[{rng.choice((5, 6))}]: {line}",
    "heroku": lambda rng, line: f"2019-09-18T13:31:13.9461{rng.randrange(10)}+00:00 app[web.{rng.choice((1, 2))}]: {line}",
    "mpi": lambda rng, line: f"[1,{rng.randrange(2)}]<{rng.choice(('stdout', 'stderr'))}>:{line}",
    "pdsh": lambda rng, line: f"10.0.0.{rng.choice((5, 6))}: " + rng.choice(("", "[rank0]: ", "[rank1]: ")) + line,
    "torchrun": lambda rng, line: f"[rank{rng.randrange(2)}]: {line}",
    "ray": lambda rng, line: f"(pid={rng.choice((12, 13))}, ip=10.0.0.1) {line}",
    "vllm": lambda rng, line: f"ERROR 12-01 10:00:0{rng.randrange(10)} {line}" if rng.random() < 0.3 else line,
    "oslo": lambda rng, line: (f"2026-12-01 10:00:0{rng.randrange(10)}.123 {rng.choice((2711, 2712))} {rng.choice(('ERROR', 'TRACE'))} "
                               f"nova.compute.manager {line}"),
    "ansi": lambda rng, line: f"\x1b[3{rng.randrange(8)}m{line}\x1b[0m" if rng.random() < 0.5 else line,
    "compose": lambda rng, line: f"{rng.choice(('api', 'worker-1'))}       | {line}",
    "quoted": lambda rng, line: (f"> {line}" if line else ">") if rng.random() < 0.8 else f"> > {line}",
    "cloud_logging": lambda rng, line: (rng.choice(("", "> ")) + rng.choice(("DEFAULT", "ERROR"))
                                        + f" 2026-12-01T10:00:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}Z {line}"),
    "torch_logging": lambda rng, line: f"[2026-12-01 10:00:0{rng.randrange(10)},123] torch._dynamo.convert_frame: [WARNING] {line}",
    "buildkite": lambda rng, line: f"[2026-12-01T10:00:{rng.randrange(60):02d}Z] {line}",
    "torchserve": lambda rng, line: (f"2026-12-01 10:00:{rng.randrange(60):02d},123 [{rng.choice(('INFO ', 'WARN '))}] "
                                     f"W-900{rng.randrange(2)}-model_1-{rng.choice(('stdout', 'stderr'))} MODEL_LOG - {line}"),
    "djl": lambda rng, line: (rng.choice(("", "2026-12-01T10:00:00.123+00:00 ")) + f"[{rng.choice(('INFO ', 'WARN '))}] "
                              f"PyProcess - W-13{rng.randrange(2)}-model-{rng.choice(('stdout', 'stderr'))}: {line}"),
    "srun": lambda rng, line: f"{rng.randrange(12):2d}: {line}",
    "pm2": lambda rng, line: f"{rng.randrange(2)}|api     | {line}",
    "web_viewer": lambda rng, line: f"\xa0 | [2026-12-01T10:00:{rng.randrange(60):02d}Z] {line}",
    "tabbed": lambda rng, line: f"\t{line}" if rng.random() < 0.9 else f"\t> {line}",
    "cri_partial": lambda rng, line: "\n".join(fmt.cri([line], max_record=rng.choice((7, 40, 16384)))),
    # Per-line channel heads, interleaved: the fast path skips their lines and rebuilds each channel's state.
    "torchrun_glued": lambda rng, line: f"[default{rng.randrange(3)}]:{line}",
    "torchrun_spacing": lambda rng, line: f"[rank{rng.randrange(2)}]:{rng.choice(('', ' ', '  '))}{line}",
    "vllm_workers": lambda rng, line: rng.choice(("(VllmWorker rank=1 pid=4321) ", "(VllmWorker TP0 pid=4301) ",
                                                  "(EngineCore_DP0 pid=4301) ", "(pid=7, ip=10.0.0.2) ")) + line,
    "heads_mixed": lambda rng, line: rng.choice(("", "[rank0]: ", "[rank1]:", "(VllmWorker rank=2 pid=9) ",
                                                 "[rank0]:(VllmWorker TP1 pid=8) ", "[rank1]: INFO 12-01 10:00:01 ")) + line,
    "heads_redrawn": lambda rng, line: (f"[rank{rng.randrange(2)}]: " + rng.choice(("", "10%\r", "x\r[rank1]: ", "\r")) + line),
}


def mixed_log(seed: int, wrap: str, records: int = 120) -> bytes:
    rng = random.Random(seed)
    lines = [WRAPS[wrap](rng, line) for _ in range(records) for line in _record(rng)]
    return ("\n".join(lines) + rng.choice(("\n", ""))).encode()


@pytest.mark.parametrize("wrap", sorted(WRAPS))
# most seeds in the slow run (.ci/run runs both): the quick suite stays near its time budget
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in range(1, 8))])
def test_mixed_logs(seed, wrap):
    assert_same(mixed_log(seed, wrap))


@pytest.mark.parametrize("seed", range(4))
def test_lines_longer_than_the_cut(seed):
    data = mixed_log(seed, "none") + b"[2026-08-28 10:00:00 TP1] " + b"x" * 900 + b" ValueError:\n" + b"y" * 700
    assert_same(data, max_line=300, chunks=(1 << 20, 250, 61))


# Pieces of every format, and stray bytes, glued at random: the paths must agree on any input.
PIECES = tuple(piece.encode() for piece in (
    "Traceback (most recent call last):\n", '  File "/srv/x.py", line 12, in run\n', "    x = f(y)\n",
    "ValueError: bad value\n", "KeyboardInterrupt\n", "\n", "usage: serve [-h]\n",
    "The above exception was the direct cause of the following exception:\n",
    "serve: error: argument --tp: invalid int value: 'x'\n", "[rank3]: ", "(pid=12, ip=1.2.3.4) ",
    "[2026-08-28 10:00:01 DP1 TP3] ", "2026-12-01T10:00:00.1Z stderr F ", "ERROR:root:", "INFO 12-01 10:00:00 ",
    "2026-12-01T10:00:00.1Z stdout P ", "svc-1  | ", "2024-01-01 00:00:00 | ERROR | stderr | ", "[default0]:",
    "ERROR 2026-12-01T10:00:00.123456789Z ", "[rank4]:E0317 07:53:56.045000 2265 torch/_guards.py:283] [14/1] ",
    "ERROR 11-28 03:12:40 engine.py:158] ", "(VllmWorker TP1 pid=4301) ", " [repeated 7x across cluster]",
    "Exception Group Traceback (most recent call last):\n",
    '{"message": "', '\\n", "rank": 1}', "\x1b[31m", "\r", "\r\n", "\x00", "\ufeff", "[" * 40, "token usage: 0.5 ",
    NOTICE + "\n",
    # what tells the run's configuration: a launch command over lines, settings, a release path, a pin
    "python3 -m sglang.launch_server --model-path m \\\n", "    --tp 2 \\\n", "  m2\n", "server_args=ServerArgs(tp_size=2)\n",
    " at /opt/vllm-0.8.3/bin ", "sglang[all]==0.4.6 ")) + (b"\xff\xfe", b"\xc3", b"\xe2\x82")


@pytest.mark.parametrize("seed", range(40))
def test_random_glue_of_the_formats(seed):
    rng = random.Random(seed)
    data = b"".join(rng.choice(PIECES) if rng.random() < 0.7 else rng.randbytes(rng.randrange(20))
                    for _ in range(rng.randrange(80)))
    assert_same(data, max_line=rng.choice((16, 64, MAX_LINE)), chunks=(1 << 20, 7, 1))


@pytest.mark.parametrize("ending", ["", "\n"])
def test_a_line_held_for_a_header_cut_at_its_end_and_the_next_longer_than_a_line_together(ending):
    """A line that ends in a header's first part is held with the next (the finder looks for both parts at once);
    the two together may be longer than a line may be, each shorter: each is read as a line of its own
    (found by test_random_glue_of_the_formats, seed 240)."""
    data = f"an unfinished Trac\n{'x' * 40}  File \"/srv/x.py\", line 12, in run{ending}".encode()
    assert_same(data, max_line=64, chunks=(1 << 20, 7, 1))
    assert_same(data.replace(b"Trac\n", b"Traceback (most recent call last):\n"), max_line=64, chunks=(1 << 20, 7, 1))


def test_a_frame_line_cut_at_its_start_behind_a_redraw():
    """A copy begun inside a frame line behind a redraw (`\r`), after a quote the redraw left open: the text shown
    last is read, on the fast path too (the differential fuzzer's input, minimised)."""
    data = (b"\x05@\x00prompt_len=29, error='Tracebil    +---------] Setting OMP_NUM_THREADS environment variable fle "
            b'"/work\rspace/train.py", line 40, in step\n[rank1]: a   s sert batch.shape[\x000] % world_size == 0, f"')
    (event,) = assert_same(data, max_line=300, chunks=(1 << 20, 7, 1))
    assert (event.truncated, event.root.raise_site.lineno) == (True, 40)


@pytest.mark.parametrize("prefix", ["2026-09-15T14:15:02.185200Z ", "[rank5]: ", "Dec  1 10:00:00 node python3[55]: "])
@pytest.mark.parametrize("cut", ['"/opt/conda/lib/python3.10/site-packages/kvlink/', "site-packages/kvlink/"])
def test_a_frame_line_cut_at_its_start_behind_a_prefix(prefix, cut):
    """A copy begun inside a frame line, each line behind a collector's prefix: read on the fast path too (the
    differential fuzzer's input, minimised)."""
    data = f'{prefix}{cut}transfer.py", line 58, in transfer_sync\n{prefix}    raise ValueError("x")\n'.encode()
    (event,) = assert_same(data, max_line=300)
    assert (event.truncated, event.root.raise_site.lineno) == (True, 58)


@pytest.mark.parametrize("blanks", [1, 3])
def test_the_first_time_behind_a_pastes_blanks(blanks):
    """A paste's blank or three in front of SGLang's prefix: the normaliser reads its time there, the fast path
    too, with lines after it that nothing reads (found by the differential fuzzer)."""
    data = f"{' ' * blanks}[2026-08-28 10:00:01 DP1 TP3] Decode batch. #running-req: 3\n    ]\n".encode()
    assert_same(data, max_line=64)
    assert fast_path(data, 1 << 20, 64)[2] is not None


@pytest.mark.parametrize("cut", [1, 14, 33])
def test_a_header_a_terminal_wrapped_in_a_windows_file(cut):
    """A header wrapped at the terminal's width, its line break Windows' (found by the differential fuzzer)."""
    wrapped = f"{HEADER_TEXT[:cut]}\r\n{HEADER_TEXT[cut:]}\r\n".encode()
    stack = b'  File "C:\\srv\\x.py", line 12, in run\r\n    load()\r\nValueError: bad shard\r\n'
    (event,) = assert_same(b"step 3 done\r\n" + wrapped + stack, max_line=64, chunks=(1 << 20, 7, 1))
    assert (event.root.exception_type, event.span.line_start) == ("ValueError", 2)


@pytest.mark.parametrize("cut", [9, 24])
def test_a_header_a_terminal_wrapped_right_after_a_line_longer_than_a_line_may_be(cut):
    """The over-long line ends in the chunk that ends inside the wrapped header's rest: the header's first part is
    still held for its rest (the differential fuzzer's input, minimised: the line before it was a chain's separator
    cut at 64 bytes)."""
    data = f"{'x' * 70}\n{HEADER_TEXT[:cut]}\r\n{HEADER_TEXT[cut:]}\n".encode()
    chunks = tuple(range(30, 40)) + (1 << 20, 7, 1)
    (event,) = assert_same(data, max_line=64, chunks=chunks)
    assert (event.truncated, event.span.line_start) == (True, 2)


@pytest.mark.parametrize("head", ["[rank3]:", "(EngineCore_DP0 pid=1) ", "(EngineCore_DP0 pid=1) ERROR:root:"])
def test_the_first_time_cloud_logging_gives_behind_a_channel_head(head):
    """Cloud Logging's severity and time behind a channel head (and a levelled prefix) set the input's first
    time (found by test_random_glue_of_the_formats, seeds 1329, 2544 and 7979)."""
    data = f"{head}ERROR 2026-12-01T10:00:00.9Z \n{head}ERROR 2026-12-01T10:00:01.9Z worker ready\n".encode()
    assert_same(data)
    assert fast_path(data, 1 << 20)[2] is not None


def test_byte_order_marks():
    text = mixed_log(1, "none").decode()
    for data in (codecs.BOM_UTF8 + text.encode(), text.encode("utf-16")):
        assert_same(data, chunks=(1 << 20, 333, 1))


def test_without_hyperscan_every_line_is_read():
    data = mixed_log(2, "container")
    assert fast_path(data, 97, fast=False) == line_path(data)


@pytest.mark.parametrize("style", ["sglang-every", "torchrun", "container", "vllm-every"])
def test_generated_logs_of_every_style(style):
    text, truth = build_log(120_000, every=300, seed=5, style=style)
    events = assert_same(text.encode(), chunks=(1 << 20, 4096))
    assert len(events) == len(truth)


def test_interleaved_channel_heads_cut_anywhere():
    rng = random.Random(9)
    lines = []
    for _ in range(400):
        head = rng.choice(("[rank0]:", "[rank1]: ", "[default2]:", "(VllmWorker rank=1 pid=4321) ", "(pid=7, ip=10.0.0.2) ", ""))
        lines.extend(head + line for line in _record(rng))
    assert_same("\n".join(lines).encode(), chunks=(1 << 20, 4096, 500, 61))


@pytest.mark.parametrize("style", ["first", "torchrun", "vllm-every"])
def test_quiet_stretches_are_not_parsed(monkeypatch, style):
    text, _ = build_log(200_000, every=1000, seed=4, style=style)
    calls = []
    original = LineNormalizer.normalize
    monkeypatch.setattr(LineNormalizer, "normalize", lambda self, raw, n: calls.append(n) or original(self, raw, n))
    events, lines, *_ = fast_path(text.encode(), 1 << 16)
    assert events and len(calls) < lines / 10


@pytest.mark.parametrize("style", ["torchrun", "vllm-every", "first"])
@PURE_ONLY
def test_lines_read_while_a_record_is_open_are_looked_at_for_one_only_where_reported(monkeypatch, style):
    """While a rank's traceback is open, every line is read (the other ranks' too: their state), but only those
    the finder reported are looked at for a record of their own (`TracebackAssembler._begin`): the others
    can start none. The events stay those of reading every line."""
    from analyzer.core.assemble import TracebackAssembler

    text, truth = build_log(200_000, every=1000, seed=4, style=style)
    data = text.encode()
    fed: list[str] = []
    looked_at: list[str] = []
    feed, begin = FileScanner.feed, TracebackAssembler._begin
    monkeypatch.setattr(FileScanner, "feed", lambda self, raw, *may: fed.append(raw) or feed(self, raw, *may))
    monkeypatch.setattr(TracebackAssembler, "_begin", lambda self, line: looked_at.append(line.text) or begin(self, line))
    events, *_ = fast_path(data, 1 << 16)
    finder = triggers.TriggerFinder(notices().keywords, headed=True)
    reported = {data[data.rfind(b"\n", 0, hit) + 1:data.find(b"\n", hit)].decode() for hit in finder.scan(data)}
    unreported = [raw for raw in fed if raw not in reported]
    assert len(events) == len(truth) and len(unreported) > len(fed) / 4  # (most lines read are other ranks')
    assert not any(text.strip() and raw.endswith(text) for raw in unreported for text in looked_at)
    monkeypatch.undo()
    assert fast_path(data, 1 << 16)[0] == line_path(data)[0]


def test_what_a_skipped_line_would_tell_of_the_run_is_read():
    """The run's configuration takes a release from an install path on any line (`/vllm-0.8.3/`),
    and every line of a launch command continued with `\\`: such lines are read, not skipped."""
    quiet = ["[2026-08-28 10:00:00] INFO step"] * 60
    for line in ("[2026-08-28 10:00:01] INFO python at /opt/vllm-0.8.3/bin/python",
                 "plain: /srv/sglang-0.4.6.post1/lib"):
        data = "\n".join([*quiet, line, *quiet]).encode()
        assert_same(data)
        assert line_path(data)[-1].version is not None, line
    command = ["$ python3 -m sglang.launch_server --model-path m \\", "    --tp 2 \\", "    m2 \\", "", "x"]
    data = "\n".join([*quiet, *command, *quiet]).encode()
    assert_same(data, chunks=(1 << 20, 61, 7))
    assert line_path(data)[-1].command.words[-1] == "m2"


def test_an_exception_line_a_terminal_padded_is_read():
    """A terminal's copy pads every line with blanks: a bare exception line so padded is still one."""
    quiet = ["[2026-08-28 10:00:00] INFO step".ljust(100)] * 60
    for line in ("AssertionError", "KeyError: 'lm_head.weight'", "torch.OutOfMemoryError"):
        data = "\n".join([*quiet, line.ljust(100), *quiet]).encode()
        events = assert_same(data)
        assert [event.root.exception_type for event in events] == [line.split(":")[0]]


# ----------------------------------------------------------------------------- stacks read at once

def _deep(depth: int):
    if depth:
        _deep(depth - 1)
    raise OSError(f"[Errno 5] at the bottom of {depth} frames")


def _stacks_taken(monkeypatch) -> list[int]:
    """The lengths of the stretches of stack lines the fast path read at once, as they are read."""
    taken: list[int] = []
    original = FileScanner.feed_stack
    monkeypatch.setattr(FileScanner, "feed_stack", lambda self, raws: original(self, raws) and not taken.append(len(raws)))
    return taken


@PURE_ONLY
def test_a_traceback_echoed_by_every_rank_is_read_a_stack_at_a_time(monkeypatch):
    chained = text_of(capture(_chained)).splitlines()
    lines = []
    for rank in range(8):
        lines += [f"[2026-08-28 10:00:0{rank} TP{rank}] Scheduler hit an exception: {chained[0]}", *chained[1:]]
        lines.append(f"[2026-08-28 10:00:0{rank} TP{rank}] Decode batch. #running-req: 3")
    taken = _stacks_taken(monkeypatch)
    events = assert_same("\n".join(lines).encode())
    assert len(events) == 8 and len({event.chain for event in events}) == 1
    taken.clear()
    fast_path("\n".join(lines).encode(), 1 << 20)
    stacks = [len(list(run)) for indented, run in itertools.groupby(chained, lambda line: line[:1] == " ") if indented]
    assert taken == stacks * 7  # the first rank's lines are read one by one, and remembered


# Stacks of lines that are not what they seem, each printed twice: the second time they are tried at once.
ODD_STACKS = {
    "blank and tab lines": ["   ", "\t  x()", "  \tstill indented"],
    "colour and redraw": ['  File "/srv/x.py", line 3, in f\x1b[0m', "    f()\r    g()"],
    "a pin and a release path": ['  File "/opt/venv/sglang-0.4.6/sglang/srt/x.py", line 3, in f',
                                 '    run("pip install sglang[all]==0.4.6.post1 vllm==0.8.3")'],
    "a launch command": ["    python3 -m sglang.launch_server --model-path m \\", "    --tp 2"],
    "the server's settings": ["    server_args=ServerArgs(tp_size=2, model_path='m')", "    go()"],
    "a nested header": ["    Traceback (most recent call last):", '      File "/x.py", line 1, in <module>'],
    "a learned prefix": ['worker-7 |   File "/x.py", line 1, in f', '  File "/x.py", line 2, in g'],
    "a blank line among frames, then the log goes on": ['  File "/x.py", line 1, in f', "    f()", "",
                                                        '  File "/x.py", line 2, in g', "    g()",
                                                        "[2026-08-28 10:00:05] INFO the stack was cut off"],
    "a deep recursion": _fixed(text_of(capture(lambda: _deep(40))).splitlines()[1:-1]),
}


@pytest.mark.parametrize("name", sorted(ODD_STACKS))
def test_stacks_read_at_once_only_where_that_reads_them_as_one_by_one_would(name):
    stack = ODD_STACKS[name]
    lines = []
    for when in range(2):
        lines += [f"[2026-08-28 10:00:0{when}] Scheduler hit an exception: Traceback (most recent call last):",
                  '  File "/srv/run.py", line 9, in main', *stack, "    boom()", "ValueError: bad value"]
        lines += ["server_args=ServerArgs(tp_size=4, model_path='n')"] * (1 - when)  # what the stack's settings override
    assert_same("\n".join(lines).encode(), chunks=(1 << 20, 100, 7))
    assert_same("\n".join(lines).encode(), max_line=40, chunks=(1 << 20, 61))


def test_a_stack_past_the_record_limit_is_read_one_line_at_a_time(monkeypatch):
    frames = [f'  File "/srv/x.py", line {n}, in f\n    f()' for n in range(3000)]  # 6,000 lines: over 5,000
    record = "Traceback (most recent call last):\n" + "\n".join(frames) + "\nRecursionError: too deep\n"
    taken = _stacks_taken(monkeypatch)
    events = assert_same((record * 2).encode(), chunks=(1 << 20,))
    assert [event.elided for event in events] == [event.elided for event in events[:1]] * 2 and events[0].elided
    assert not taken


# Every failure form of tests/failureforms.py, alone, behind prefixes and among noise lines.
@cache
def failure_forms() -> tuple[tuple[str, ...], ...]:
    from tests import failureforms as forms

    pasted = text_of(capture(_chained)).splitlines()
    sentry = forms.sentry_raw(capture(_chained), shown=1)
    return tuple(tuple(_fixed(lines)) for lines in (
        forms.segfault_child(), forms.segfault_child(bar=True), forms.abort_child(), forms.dumped_stack("Fatal Python error: Aborted"),
        forms.cxx_terminate(), ["libc++abi: terminating due to uncaught exception of type a::B: what"],
        forms.pool_failure(), forms.failing_processes(), forms.nested_traceback(),
        forms.child_output_in_message(), forms.device_assertion(), forms.device_assertion(rocm=True),
        forms.build_backend_output(pasted), forms.pytest_report(), forms.pytest_report("short"),
        [line for line in forms.pytest_report("short") if line.startswith("FAILED ")],
        forms.ray_task_error(), forms.ray_task_error(cut_frame=True), forms.ray_task_error()[-8:], forms.locals_type(), forms.paragraph_message(),
        forms.IPYTHON_FROM_DEFINITION, forms.IPYTHON7_FROM_DEFINITION, forms.rich_traceback(60),
        forms.rich_traceback(100)[5:], forms.newest_first(pasted),
        forms.markdown_bold(pasted), forms.hard_wrapped(pasted, 30), forms.uvicorn_bind_error(), forms.logged_oserror(),
        forms.stripped(pasted), forms.stripped(pasted, gap=True), forms.collapsed(pasted),
        forms.broken_after_path(pasted), forms.broken_after_path(pasted)[1:], forms.frames_on_one_line(pasted),
        forms.hard_wrapped([f"ERROR 11-28 03:12:40 [core.py:396] {line}" for line in pasted], 60),
        forms.hard_wrapped([f"[rank0]: {line}" for line in pasted], 60),
        [pasted[1].split("/")[-1], *forms.stripped(pasted[2:])], forms.elastic_root_cause(pasted),
        forms.notebook_linked(forms.IPYTHON7_FROM_DEFINITION), forms.editor_linked(pasted),
        forms.vscode_exception(capture(_chained)), forms.vscode_exception(capture(_chained), trailing_line=True),
        ["svc  | RuntimeError: Failed to import x because of the", "svc  | following error"],
        forms.hard_wrapped([f"[rank0]: {line}" for line in pasted], 47),
        fmt.numbered(["[2026-08-28 10:00:01 TP0] Scheduler hit an exception:", *pasted]),
        fmt.notebook_viewer(forms.stripped(pasted)), *forms.ipython_copies(forms.ipython_library_frame()),
        [f"```{pasted[0]}", *pasted[1:-1], f"{pasted[-1]}```"], [*pasted, *pasted[-4:]],
        [f"`[rank0]: {pasted[0]}", *(f"[rank0]: {line}" for line in pasted[1:]), "`"],
        [f"` [rank0]: {pasted[1]}", *(f"[rank0]: {line}" for line in pasted[2:-1]), f"[rank0]: {pasted[-1]}`"],
        ["CUDA error: an illegal memory access was encountered",
         "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"],
        ["Killed", "Segmentation fault (core dumped)", "Aborted (core dumped)", "srun: error: node-3: task 0: Exited"],
        ["I got", "  **KeyError: 'model.norm.weight'**", "Exception: Capture cuda graph failed: CUDA out of memory.",
         "Error: no such option", "`RuntimeError: Expected all tensors to be on the same device`"],
        forms.shell_signal_report("bash", "SIGSEGV", script=True), ["zsh: abort      python serve.py"],
        forms.logged_repr_without_exception(RuntimeError("Engine process (pid 3607) died.")),
        forms.logged_repr_without_exception(KeyError()), forms.spawn_failure(), forms.spawn_failure()[5:],
        ["[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: x"],
        ["RuntimeError: ", "        CUDA Setup failed despite GPU being available.", "", "        python -m bitsandbytes"],
        # this session's forms: a frame glued to words, a traceback re-indented by hand, an indented quote of
        # an exception line, IPython's Plain mode and a copy that lost `File`, runpy's report, Ray's own
        # error over the remote one, pybind11's stack (bare, logged, in a glog line), levelled prefixes
        [f"the error log is:{pasted[-3].lstrip()}", *pasted[-2:]], forms.reindented(pasted[-6:]),
        ["  ...", f"  {pasted[-1]}"], forms.IPYTHON_PLAIN_FROM_DEFINITION,
        [forms.ipython_library_frame()[-4][len("File "):], *forms.ipython_library_frame()[-3:]],
        ["/usr/bin/python3: Error while finding module specification for 'x.y' (ModuleNotFoundError: No module named 'x')"],
        forms.ray_own_error_over_remote(capture(_chained)), forms.pybind_what(capture(_chained)),
        ["E1204 10:00:05.456789  1234 python_be.cc:1233] Failed to process the request(s), message: "
         + forms.pybind_what(capture(_chained))[0], *forms.pybind_what(capture(_chained))[1:]],
        ["0614 14:43:50.807869 370 pb_stub.cc:598] " + forms.pybind_what(capture(_chained))[0],
         *forms.pybind_what(capture(_chained))[1:]],
        fmt.fastchat_stderr(["ConnectionError: refused", "(Caused by x)"]), fmt.loguru(["ValueError: bad value 3"]),
        forms.streamlit_error_box(capture(_chained)),
        ["设置--tp 2后报错`RuntimeError: [TM][ERROR] Assertion fail`，但是", "7b-model: torch.cuda.OutOfMemoryError: CUDA out"],
        forms.html_rendered(pasted), forms.stripped(forms.html_rendered(pasted)), fmt.ci_clock(["RuntimeError: NCCL error"]),
        [f"[rank0]: {pasted[0]}", f"[rank0]: {pasted[1]} [rank0]: {pasted[2]}", *(f"[rank0]: {line}" for line in pasted[3:])],
        # AWS Lambda's exception line above the stack alone
        fmt.aws_lambda(capture(_chained)),
        [f"not related```{pasted[-3].lstrip()}", *pasted[-2:-1], f"{pasted[-1]}```"],
        [f" {line[len('FAILED '):]}" for line in forms.pytest_report("short") if line.startswith("FAILED ")],
        # services' own forms: Dagster's error with its cause, Airflow 3's page, a driver's error SQLAlchemy wraps
        forms.dagster_error(capture(_chained), comma=True), forms.airflow3_page(capture(_chained)),
        [line.strip() for line in forms.py313_traceback(capture(_chained), elide=True)],
        ["sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: users",
         "[2022-09-06 10:27:49,217] {taskinstance.py:1150} ERROR - (psycopg2.errors.UndefinedTable) relation \"t\" does not exist"],
        # the next session's: an error tracker's title, classes without the usual suffix, words and markup
        # around an error, a pager's chop, a flattened traceback begun inside its first frame line
        forms.tracker_title(capture(_chained)), ["triton.runtime.autotuner.OutOfResources: out of resource: shared memory",
                                                 "BrokenProcessPool: A child process terminated abruptly"],
        ["No, I still get RuntimeError: LoRA is not enabled", "UNAVAILABLE: Internal: AttributeError: no Logger",
         "Error when loading model: ValueError: Model type qwen3 not supported.", "2. ImportError: cannot import x",
         f"**_{pasted[-1]}_**", f"_{pasted[-1]}_"],
        [f"{line[:line.index(', in ') + 4]}>" if line.lstrip().startswith("File ") else line for line in pasted],
        [forms.on_one_line(pasted[1:]).split(", ", 1)[1]], [f"`{line}`" for line in pasted],
        # and the next: an error oslo.log logged alone, a tool's words around an error, the class printed itself,
        # a code span and a blank before Cleo's report
        ["2023-09-06 14:01:12.895 128 ERROR neutron OSError: [Errno 22] failed to open netns",
         "ERROR nova.compute.manager AttributeError: module 'libvirt' has no attribute 'X'",
         "An exception occurred during task execution. The error was: ModuleNotFoundError: No module named 'x'",
         "ERROR: gcloud crashed (ValueError): invalid width 0 (must be > 0)"],
        [*pasted[:-2], "<class '{}'>: {}".format(*pasted[-2].split(": ", 1)), pasted[-1]],
        ["` ChefBuildError", "", "  Backend is not available.", "", "  at /x/chef.py:147 in _prepare", "    \u2192 147\u2502 raise e`"],
        [*forms.scons_error(capture(_chained)), "I am getting this error: TypeError: 'JavaPackage' object is not callable..",
         "pygame.error: Couldn't open res/bg.png", "pkg/reader.pyc in next(self)", "--> 590         return self.__next__()"],
        [*forms.snakemake_error(capture(_chained), "/w/x.smk", 12), *forms.snakemake_error(capture(_chained), "/w/x.smk", 12, new=True),
         "MissingRuleException:", "No rule to produce reads"],
        ["x | ERROR | bug: " + repr([f"{line}\n" for line in pasted]), f"``{pasted[1].lstrip()}", *pasted[2:], "``"],
        [line.replace(", line ", ", **line ").replace(", in ", "**, in ") for line in pasted],
        forms.sentry_raw(capture(_chained), shown=1),
        # and the next: errors services return or report (AWS Lambda, Azure Functions, Error Reporting), test runners'
        # and tools' reports, a failing excepthook, copies that kept their indents or lost a blank
        forms.lambda_response(capture(_chained)), forms.lambda_response(capture(_chained), legacy=True, indent=None),
        ['{"errorMessage": "Handler \'foo\' missing", "errorType": "Runtime.HandlerNotFound", "stackTrace": []}',
         "[ERROR] Runtime.HandlerNotFound: Handler 'foo' missing on module 'lambda_function'"],
        forms.azure_failure(capture(_chained)), forms.azure_failure(capture(_chained), flat=True),
        forms.error_reporting(capture(_chained)), ["Exception:", *pasted, "[FileNotFoundError]: [Errno 2] No such file: ''"],
        forms.unittest_import_failure("test_gone", "module_gone"), forms.excepthook_failure(),
        forms.doctest_failure(">>> [][10]\nTraceback (most recent call last):\n  ...\nKeyError: 10\n"),
        [" ".join(pasted)], [line.replace(", in ", ",in ") for line in pasted],
        forms.reticulate_error(capture(_chained)), forms.py2_shutdown_thread(capture(_value_error)),
        [f"`{pasted[1]}", *pasted[2:], f">>> {pasted[-1]}", "**ValueError:** bad value 42", *forms.streamlit_error_box(capture(_chained))[1:]],
        [line.replace('.py"', '/\\_\\_init\\_\\_.py"') for line in pasted], [*pasted[:-1], "TimeoutError: ", "", "Pattern not detected."],
        forms.werkzeug_debugger_page(capture(_chained)), [*sentry[:1], "DETAIL: x", "", *sentry[1:]],
        ["The complete exception is provided below:", "", "<class 'django.core.exceptions.ImproperlyConfigured'>", "",
         "statuses are not defined", "", "Python version: 3.9.2"], [f"## {pasted[-1]}", f'"""{pasted[-1]}'],
        [line.replace('.py"', '/**init**.py"') for line in pasted],
        ["Exception Type:\tKeyError", "Exception Value:\t'x'", "Exception Location:\t/x/views.py, line 529, in get"],
        ["ImportError: ", "cannot import name 'Fp8LinearOp'", f"***{pasted[-1]}***", "pywintypes.com_error: (-2147221005, None)",
         *(f"  `{line}`" for line in pasted)],
        [*forms.supervisorctl_fault(capture(_value_error)), *forms.asyncore_compact(capture(_chained)),
         f"Run 0jbbwa4t errored: {capture(_value_error)!r}"],
    ))


def _failure_forms_mixed(seed: int, wrap: str) -> bytes:
    rng = random.Random(seed)
    lines: list[str] = []
    for form in rng.sample(failure_forms(), len(failure_forms())):
        lines.extend(WRAPS[wrap](rng, line) for line in [*_record(rng), *form])
    return "\n".join(lines).encode()


@pytest.mark.parametrize("wrap", ["none", "container", "torchrun", "vllm", "oslo"])
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in (1, 2))])  # (the quick suite's budget)
def test_failure_forms(seed, wrap):
    events = assert_same(_failure_forms_mixed(seed, wrap))
    assert len(events) > len(failure_forms())


@pytest.mark.parametrize("text", ["KeyboardInterrupt", "RuntimeError", "StopIteration", "ValueError: bad value"])
def test_a_line_ray_folded_is_read_whatever_its_text_ends_in(text):
    """Ray marks a line it folded (` [repeated 7x across cluster]`) and the normaliser strips the mark: a line whose
    text ends before it is read by the fast path too, with a line after it (found by test_failure_forms, seed 9)."""
    events = assert_same(f"{text} [repeated 7x across cluster]\nline 89, in f\n".encode())
    assert len(events) == 1


@pytest.mark.parametrize("line", ["[RuntimeError]", '"KeyError"', "'torch.OutOfMemoryError'", "  [ValueError]", "AssertionError`",
                                  '" KeyError "', "\u201cKeyError\u201d"])
def test_a_class_quoted_whole_without_a_message_is_read(line):
    """A line that is an exception's class alone, quoted whole (Cleo's old `[RuntimeError]` over its message) or closed
    by a code span's tick: the fast path reads it too (found by the differential fuzzer, benchmarks/fuzz.py --target
    fastpath)."""
    events = assert_same(f"$ poetry install\n\n{line}\nThe Poetry configuration is invalid:\n  - [build] x\n".encode())
    assert len(events) == 1


def test_azures_report_on_one_line_is_read_whatever_its_errors_name():
    """Azure Functions' portal shows the host's report on one line; its error's class need not read as an
    exception's (found by the differential fuzzer: the fast path read such a line only by its error's name)."""
    flat = "Result: Failure Exception: Timeout: no reply from the model server in 30 s"  # (copied from its wrapper's
    # last words; no stack: it failed to load)
    (event,) = assert_same(f"2026-12-01T10:00:00Z [Information] Executing 'Functions.HttpTrigger'\n{flat}\n".encode())
    assert event.root.message.endswith("no reply from the model server in 30 s")


@pytest.mark.parametrize("max_line", [64, 300, MAX_LINE])
def test_a_type_with_a_fullwidth_colon_whatever_the_line_cut(max_line):
    """What only the non-ASCII patterns find (a type typed with a fullwidth colon) is found however long a line may be:
    the fast path looked for them only where lines may be long enough for channel heads (found by the
    differential fuzzer, lines cut at 300 bytes)."""
    data = 'decode error: "RuntimeError\uff1aE20000: Inner Error! "\nnext\n'.encode()
    assert len(assert_same(data, max_line=max_line)) == 1


@pytest.mark.parametrize("line", ["E AssertionError", "E ValueError: bad value", "E\tKeyError: 'x'"])
def test_pytests_error_line_after_one_blank(line):
    """pytest's `E` line with one blank (or a tab) before the exception line, as a copy that collapsed its blanks
    leaves it: the fast path reads it too (found by the differential fuzzer)."""
    assert len(assert_same(f"tests/test_x.py F\n{line}\nnext\n".encode())) == 1


@pytest.mark.parametrize("line", ["ERROR JSONEncodeError: default", "FATAL ValueError: bad value", "CRITICAL Custom.BadError: x"])
def test_an_error_after_a_level_word_and_one_blank(line):
    """A level word and one blank before an error's line (a logger's record read as a notice): the fast path reads it
    too (found by the differential fuzzer)."""
    assert len(assert_same(f"starting\n{line}\nnext\n".encode())) == 1


def test_a_stack_read_at_once_leaves_the_longest_line_as_one_by_one_would():
    """A stack the fast path reads at once (echoed) updates what feeding each line would: the longest line so far,
    which tells whether a later line without a prefix is the rest of one a terminal cut (found by the differential
    fuzzer: a frame line cut after its `in`, the next line taken as its function on one path only)."""
    stack = b'  File "socket.pyx", line \x90\x9c\x8det.bind("tcp://*:%s" % port)\n  File "socket.pyx", line 434, in\n'
    assert assert_same(stack * 2 + b"zmq    exception: .Socket.bind (zmq/backend/cython/socket.c:3928)")


def test_a_notebooks_copy_begun_at_a_frame_whose_path_is_a_link():
    """Colab's traceback copied from a library's frame on (its header and the cell's frames left out), the frame's
    path a link (`[/x/registration.py](https://localhost:8080/#) in <module>`): the fast path reads it too (found by
    the differential fuzzer)."""
    from tests import failureforms as forms

    lines = ["3 frames", *forms.notebook_linked(forms.IPYTHON7_FROM_DEFINITION)[6:]]
    lines[1] = lines[1].replace("<ipython-input-1-8e7f6a5b4c3d>", "/usr/local/lib/python3.10/x/registration.py")
    (event,) = assert_same("\n".join(lines).encode())
    assert (event.kind, event.root.exception_type, len(event.root.frames)) == (EventKind.TRACEBACK, "ValueError", 1)


def test_a_notebooks_copy_begun_at_an_ipython_8_frame_whose_place_is_a_link():
    """JupyterLab's traceback copied from a library's frame on: IPython 8's `File [path:599](url), in f(args)`,
    its place a link to the file at its line; the fast path reads it too."""
    from tests import failureforms as forms

    lines = [line.replace("Cell In[1], line 3, in", "File /srv/lib/loader.py:3, in")
             for line in forms.IPYTHON_FROM_DEFINITION[6:]]
    linked = forms.notebook_linked(lines, "http://192.168.50.251:8888/lab/tree/srv/lib/loader.py#line=2")
    assert linked[0].startswith("File [/srv/lib/loader.py:3](http")
    (event,) = assert_same("\n".join(linked).encode())
    assert (event.kind, event.root.exception_type) == (EventKind.TRACEBACK, "ValueError")
    assert [(frame.path, frame.lineno) for frame in event.root.frames] == [("/srv/lib/loader.py", 3)]


def test_a_stack_without_the_prefix_of_the_lines_above_it_is_read_as_one_by_one_would():
    """A record whose prefixed lines end in its longest line, a source line, then its stack without the prefix,
    echoed: one by one, a line after it may be that line's rest (a terminal cut it), so the fast path reads
    such a stack one line at a time too; and a whole frame line is never a rest (found by test_failure_forms
    at a path of another length, with a frame line an editor made a link of, taken for a source line)."""
    source = "result = compute_everything(with_a_rather_long_argument_list, and_more)"
    for frame in ('File "/srv/x.py", line 3, in f', 'File "[/srv/x.py", line 3](file:///srv/x.py#line=2), in f'):
        record = ["ERROR 12-01 10:00:05 Traceback (most recent call last):", f"ERROR 12-01 10:00:09   {frame}",
                  f"ERROR 12-01 10:00:09     {source}", '  File "/srv/y.py", line 9, in g', '    {}["missing"]',
                  "KeyError: 1", *["INFO 12-01 10:00:10 fine"] * 3]
        events = assert_same("\n".join(record * 3).encode())
        assert [[f.code for f in event.root.frames] for event in events] == [[source, '{}["missing"]']] * 3
    linked = ['    {}["missing"]', "ERROR 12-01 10:00:05 Traceback (most recent call last):",
              f"ERROR 12-01 10:00:09   {frame}", '    {}["missing"]', "    ~~^^^^^^^^^^^"]
    assert [f.code for f in assert_same("\n".join(linked).encode())[0].root.frames] == ['{}["missing"]']


def test_a_blank_record_line_that_goes_on_with_the_record_before_it_keeps_its_stream():
    """A record's prefix (torch's logging) with nothing after it goes on with the record before it, whose prefix
    held one more (SGLang's, with its tags): the fast path, which reads the last line of a skipped stretch
    that sets the stream, reads the one before such a line too (found by test_mixed_logs, seed 24)."""
    torch = "[2026-12-01 10:00:0{},3] torch._dynamo.convert_frame: [WARNING] "
    lines = ["[2026-12-01 10:00:02,3] ", torch.format(1) + "[2026-08-28 10:28:29 TP2] ", torch.format(7) + " ",
             torch.format(7) + 'File "/srv/x.py"']
    assert assert_same("\n".join(lines).encode())[0].stream == "#TP2"


@pytest.mark.parametrize("between", ["The complete exception is provided below:", ""], ids=("words", "a blank line"))
@pytest.mark.parametrize("before", [[], ["RuntimeError: could not load"]], ids=("skipped whole", "after a record read"))
def test_a_line_without_a_prefix_between_two_records_the_fast_path_skips(before, between):
    """A record's prefix repeated on a blank line continues the record before it, unless a line without a prefix
    came between (normalize._continues), a blank one aside (a paste's doubled line breaks): the fast path, which reads
    only the lines whose prefix state outlives them, reads that line too (found by test_failure_forms: SGLang's head
    inside the first record's text)."""
    lines = [*before, "ERROR 12-01 10:00:00 [2026-08-28 10:29:47 TP1] Decode batch. #running-req: 3",
             between, "ERROR 12-01 10:00:07 ", "ValueError: bad value 42"]
    events = assert_same("\n".join(lines).encode())
    assert (events[-1].stream, events[-1].rank) == (("#", None) if between else ("#TP1", "TP1"))


def test_failure_forms_at_the_start_of_the_input():
    """The input's first line has no line before it: a pattern that looks at what precedes the text
    must see the start as well, indented or not; a line arriving in pieces smaller than a header too."""
    for form in failure_forms():
        for lead in ("", " "):
            assert_same("\n".join([lead + form[0], *form[1:]]).encode(), chunks=(*CHUNKS, 7))


def test_first_characters_rule_out_only_prefixes_that_cannot_match():
    from analyzer.core.prefixes import KNOWN, ruled_out_by

    rng = random.Random(3)
    texts = [piece.decode("utf-8", "replace") for piece in PIECES]
    texts += [WRAPS[wrap](rng, "x") for wrap in sorted(WRAPS) for _ in range(5)]
    texts += ["٣2026-12-01T10:00:00Z x", "2026-12-01 10:00:00,1 - a - INFO - x", "DEBUG:x:y", "Dec  1 10:00:00 h p[1]: x"]
    for text in filter(None, texts):
        for kind in KNOWN:
            if kind.pattern.match(text):
                assert kind.name not in ruled_out_by(text[0]), (kind.name, text)


@pytest.mark.parametrize("place", ["first line", "past the window", "none", "no date"])
def test_where_a_buffers_first_setters_are(place):
    """`first_setter` tells, of each kind, where the first line that may be one begins (len(buffer): none),
    whether it is among the first lines it looks at in Python or further down, as a look at every line
    with the kind's own pattern tells."""
    body = [f"[rank{k % 8}]: INFO [engine.py:12] step {k}" for k in range(200)]  # (vLLM's, its time left out: the stream)
    setters = {"first line": 0, "past the window": 150, "none": None, "no date": None}[place]
    if setters is not None:
        body[setters] = f"[rank3]: [2026-08-28 10:05:58 DP0 TP3] Decode batch {setters}"
        body[setters + 1] = f"2026-08-28T10:05:58.123Z stdout F [2026-08-28 10:05:58] plain {setters}"
    if place == "none":
        body[120] = "[rank1]: the date 2026-08-28 in words"
    buffer = "\n".join(body).encode() + b"\n"
    finder = triggers.TriggerFinder(headed=True)
    finder.scan(buffer)
    for kind in triggers.Setter:
        pattern = triggers._SETTER_RES[kind]
        starts = [0, *(at + 1 for at, byte in enumerate(buffer) if byte == 10)][:-1]
        expected = next((start for start in starts if pattern.search(buffer, start, buffer.index(b"\n", start))), len(buffer))
        assert finder.first_setter(buffer, kind) == expected, kind
    assert finder.first_setter(buffer, triggers.Setter.HEAD_TIME) == (
        len(buffer) if setters is None else sum(len(line) + 1 for line in body[:setters]))


def _heads_read_whole(buffer: bytes) -> set[bytes]:
    starts = [0, *(at + 1 for at, byte in enumerate(buffer) if byte == 10)][:-1]
    return {m.group() for start in starts if (m := triggers.HEAD_AT.match(buffer, start, buffer.index(b"\n", start)))}


def test_the_heads_of_each_buffer_are_those_its_lines_begin_with():
    """`heads` names the heads seen before by name and reads whole only the lines of others: each buffer's heads
    are still exactly those its lines begin with, as new ranks come, old ones go quiet, torchrun's `[rank0]:` and
    `[rank0]: ` are told apart, and past the heads it names (thousands of ranks) every line is read."""
    finder = triggers.TriggerFinder(headed=True)

    def lines(heads: list[str], count: int = 40) -> bytes:
        return "".join(f"{heads[k % len(heads)]}INFO step {k}\n" for k in range(count)).encode()

    buffers = [lines(["[rank0]:", "[rank1]:"]),
               lines(["[rank1]:", "[rank0]: ", "(VllmWorker rank=2 pid=42) "]),  # a new rank, one gone, a spaced head
               lines(["[rank0]:"]),
               b"plain first line\n" + lines(["[rank1]:"], 3),
               lines([f"({'w' * 5000} pid=7) ", "[rank1]:"]),  # a head too long to name (its pattern would be too deep)
               lines([f"({'w' * 5000} pid=7) ", "[rank1]:"]),
               lines([f"[rank{k}]:" for k in range(100)], 300),  # past the heads named
               lines(["[rank7]:", "[rank99]:"])]
    for buffer in buffers:
        assert set(finder.heads(buffer)) == _heads_read_whole(buffer)


def test_an_oserrors_text_is_read_at_an_error_level_only():
    """`[Errno N]` is a line to read where an error level comes before it (a logged OSError's text); in a retry's
    words at no level it reads as no error, and its line is skipped (every log of network retries had them read)."""
    finder = triggers.TriggerFinder(headed=True)
    retry = b"[2026-08-28 10:00:26 DP1 TP2] Retrying the health check after the error [Errno 104] Connection reset by peer\n"
    logged = [b"ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n",
              b"E1204 10:00:05.456789  1234 server.cc:12] [Errno 28] No space left on device\n",
              b"[2026-08-28 10:00:26] ERROR [Errno 2] No such file or directory: 'x'\n"]
    assert finder.scan(retry) == []
    assert all(finder.scan(line) for line in logged)
    leveled = b"[2026-08-28 10:00:25] ERROR the health check failed\n"  # (a level on the line before is not its level)
    assert all(hit < len(leveled) for hit in finder.scan(leveled + retry))
    assert assert_same(retry * 3 + b"".join(logged))


def test_lines_of_long_stretches_are_counted_as_bytes_count_counts_them():
    # (the fast path counts them with numpy past its first 256 MB: that path is not reached by any log here)
    rng = random.Random(7)
    buffer = bytes(rng.choice(b"ab\n") for _ in range(3 << 18))
    for start, end in [(0, len(buffer)), (1, len(buffer) - 1), (5, 1 << 16), (0, 1 << 18), (1 << 18, 2 << 18),
                       *((a, a + rng.randrange(1 << 16, 1 << 19)) for a in (rng.randrange(1 << 18) for _ in range(20)))]:
        assert chunkscan._newlines(buffer, start, end) == buffer.count(b"\n", start, end), (start, end)


@PURE_ONLY
def test_an_input_known_to_be_large_has_its_lines_counted_with_numpy_from_its_start(monkeypatch):
    # (importing numpy costs what counting 250 MB with bytes.count does: it pays from the first byte only where the
    # input is known to be larger; lines are numbered as they are otherwise)
    counted: list[int] = []
    real = chunkscan._newlines

    def spy(buffer: bytes, start: int, end: int) -> int:
        counted.append(end - start)
        return real(buffer, start, end)

    monkeypatch.setattr(chunkscan, "_newlines", spy)
    data = build_log(300_000, every=2_000, seed=4)[0].encode()

    def scan(size: int):
        scanner = ChunkScanner("t.log", notices(), size=size)
        return scanner.feed(data) + list(scanner.finish()), scanner.lines

    unknown = scan(0)
    assert not counted
    assert scan(1 << 30) == unknown == line_path(data)[:2]
    assert sum(counted) > len(data) // 2


_STAMPED_WITHOUT_A_YEAR = {  # a line whose stamp has no year, as relays and copies put it (the normaliser reads each)
    "vllm": "INFO 05-28 03:59:59 [engine.py:12] last step",
    "djl_serving": fmt.djl_serving_worker(["INFO 05-28 03:59:59 [engine.py:12] last step"], stream="stdout")[0],
    "k9s_box": "\u2502 INFO 05-28 03:59:59 [engine.py:12] last step \u2502",
    "markdown_bold": "**INFO 05-28 03:59:59 [engine.py:12] last step**",
    "syslog": "May 28 03:59:59 gpu-7 python3[12]: last step",
    "syslog_without_pid": "May 28 03:59:59 gpu-7 vllm: INFO 05-28 03:59:58 [engine.py:12] last step",
    "torchserve": "2026-05-28 03:59:59,123 [INFO ] W-9000-model_1-stdout MODEL_LOG - last step",
}


@pytest.mark.parametrize("name", sorted(_STAMPED_WITHOUT_A_YEAR))
@pytest.mark.parametrize("before", ["vllm", "no time"])
def test_the_time_a_line_without_a_year_sets_is_found_where_it_was_skipped(name, before):
    """The fast path skips the lines between two it reads: the time the traceback below takes is the last one its
    stream was given, as feeding every line gives it (or none), whichever prefix, relay or box the stamp is behind."""
    filler = ([f"INFO 05-28 03:53:{k % 60:02d} [engine.py:12] step {k}" for k in range(100)] if before == "vllm"
              else [f"step {k}" for k in range(100)])
    lines = [*filler, _STAMPED_WITHOUT_A_YEAR[name], *(f"plain print {k}" for k in range(3)), *TRACEBACKS[0], "done"]
    (event,) = assert_same(("\n".join(lines) + "\n").encode())
    channel = name in ("djl_serving", "syslog", "syslog_without_pid", "torchserve")  # (its time is its own channel's)
    assert (event.timestamp is None) == (before == "no time" and channel)
