"""Generate a large, realistic multi-rank SGLang server log with known errors in it.

The log is what a long-running `sglang.launch_server --tp 8 --dp 2` writes: per-rank decode and
prefill batch lines, uvicorn access lines, request-finished metrics, a few warnings that mention
errors without being errors, and now and then a real traceback. Tracebacks are raised for real and
formatted by `traceback` (through `fixtures/generate.py`), printed by one rank and echoed by other
ranks, some chained (`raise ... from`, `During handling ...`), some printed without a prefix right
after a rank's log line (they belong to that rank), plus an occasional bare `Error: ...` line.

Next to LOG it writes LOG.truth.json: every error as the scanner must report it (first and last
line, rank, timestamp, kind, the chain's exception types, the root message).

    python benchmarks/generate.py                      # benchmarks/data/sglang_100M.log
    python benchmarks/generate.py --size 1G            # benchmarks/data/sglang_1G.log
    python benchmarks/generate.py --size 20M --every 2000 --out /tmp/x.log
    python benchmarks/generate.py --style torchrun     # every line behind torchrun's `[rankN]:`

`--style` is how lines reach the file (the same log, line for line, so the truth holds for all):
`first` (SGLang's prefix on a record's first line only, as SGLang writes it), `sglang-every` (SGLang's
prefix on every line, as log collectors that split records write it), `torchrun` (`[rankN]:` on every
line of a rank's output), `container` (a CRI runtime's timestamp and stream on every line) and
`vllm-every` (vLLM's worker tag and logger prefix on every line, as its formatter repeats them).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import traceback
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the fixture generator lives at the repository root
    sys.path.insert(0, str(ROOT))

from fixtures.generate import SCHED, Frame, formatted, nccl_timeout_traceback, oom_traceback  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
START = datetime(2026, 8, 28, 10, 0, 0)
TP, DP = 8, 2
RANKS = [f"DP{dp} TP{tp}" for dp in range(DP) for tp in range(TP)]


@dataclass(frozen=True, slots=True)
class TruthError:
    """One error as the scanner must report it."""

    line_start: int
    line_end: int
    rank: str | None
    timestamp: str | None  # ISO, from the prefix the error's first line carries or inherits
    kind: str  # traceback | bare
    types: tuple[str, ...]  # exception types of the chain, root cause first
    message: str  # the root cause's message (first line)


STYLES = ("first", "sglang-every", "torchrun", "container", "vllm-every")


@dataclass(frozen=True, slots=True)
class _Template:
    """A formatted traceback and what it contains."""

    lines: tuple[str, ...]
    types: tuple[str, ...]
    message: str


# ---------------------------------------------------------------- real tracebacks
def _chained_weight_error() -> _Template:
    loader = SCHED[:1] + [
        Frame("sglang/srt/managers/scheduler.py", 402, "__init__", "        self.tp_worker = TpModelWorker("),
        Frame("sglang/srt/model_executor/model_runner.py", 921, "load_model", "            self.model = get_model("),
    ]
    name = "model.layers.61.mlp.experts.w2_weight_scale"
    text = formatted(
        loader + [Frame("sglang/srt/model_loader/loader.py", 618, "load_model", "                raise RuntimeError(")],
        RuntimeError(f"Failed to load weights: unexpected parameter {name!r}."),
        cause_frames=loader + [Frame("sglang/srt/models/deepseek_v2.py", 2741, "load_weights",
                                     "                param = params_dict[name]")],
        cause=KeyError(name))
    return _Template(tuple(text.splitlines()), ("KeyError", "RuntimeError"), repr(name))


def _parse_request(body: str) -> dict:
    return json.loads(body)


def _handled_request_error() -> _Template:
    """`During handling of the above exception`: an error raised while handling another."""
    def handle() -> None:
        try:
            _parse_request('{"text": "hello", "sampling_params": {')
        except ValueError:
            raise RuntimeError("request 7f3a rejected: the body is not valid JSON")  # noqa: B904

    try:
        handle()
    except RuntimeError as err:
        text = "".join(traceback.format_exception(err))
        cause = err.__context__
    return _Template(tuple(text.splitlines()), ("json.decoder.JSONDecodeError", "RuntimeError"), str(cause))


def _oom() -> _Template:
    text = oom_traceback()
    return _Template(tuple(text.splitlines()), ("torch.OutOfMemoryError",), text.splitlines()[-1].split(": ", 1)[1])


def _nccl(rank: int) -> _Template:
    text = nccl_timeout_traceback(rank, 48211, 600000 + rank)
    return _Template(tuple(text.splitlines()), ("torch.distributed.DistBackendError",),
                     text.splitlines()[-1].split(": ", 1)[1])


# ---------------------------------------------------------------- the log
class LogWriter:
    """Builds the log line by line, keeping the line count, the clock and the ground truth."""

    def __init__(self, seed: int, style: str = "first") -> None:
        self.style = style
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.lineno = 0
        self.clock = START
        self.truth: list[TruthError] = []
        self.templates = [_oom(), _chained_weight_error(), _handled_request_error()]
        self.nccl = [_nccl(rank) for rank in range(TP)]
        self.last_rank: str | None = None  # the stream an unprefixed line inherits
        self.last_time: datetime | None = None
        self.in_error = False  # lines of an error are logged at ERROR level (vllm-every)

    def emit(self, text: str, rank: str | None = None, prefixed: bool = True) -> int:
        if prefixed:
            self.last_rank, self.last_time = rank or None, self.clock.replace(microsecond=0)
        self.lines.append(self._styled(text, rank if prefixed else self.last_rank, prefixed or self.style == "sglang-every"))
        self.lineno += 1
        return self.lineno

    def _styled(self, text: str, rank: str | None, prefixed: bool) -> str:
        """The line as `style` writes it: `rank` is the stream the line belongs to."""
        clock = self.clock
        sglang = f"[{clock:%Y-%m-%d %H:%M:%S}{' ' + rank if rank else ''}] " if prefixed else ""
        tp = str(RANKS.index(rank)) if rank in RANKS else "0"  # one torchrun rank or vLLM worker per SGLang rank
        if self.style in ("first", "sglang-every"):
            return sglang + text
        if self.style == "torchrun":
            return f"[rank{tp}]:{sglang}{text}"
        if self.style == "container":
            return f"{clock:%Y-%m-%dT%H:%M:%S}.{clock.microsecond:06d}123Z stderr F {sglang}{text}"
        level, where = ("ERROR", "[multiproc_executor.py:383]") if self.in_error else ("INFO", "[gpu_worker.py:212]")
        return f"(VllmWorker rank={tp} pid={4300 + int(tp)}) {level} {clock:%m-%d %H:%M:%S} {where} {text}"

    def tick(self) -> None:
        self.clock += timedelta(milliseconds=self.rng.randrange(5, 60))

    # -- ordinary traffic
    def info(self) -> None:
        rng = self.rng
        self.tick()
        roll = rng.random()
        rank = rng.choice(RANKS)
        running = rng.randrange(1, 256)
        if roll < 0.45:
            self.emit(f"Decode batch. #running-req: {running}, #token: {running * rng.randrange(300, 900)}, "
                      f"token usage: {rng.random():.2f}, cuda graph: True, "
                      f"gen throughput (token/s): {rng.uniform(500, 9000):.2f}, #queue-req: {rng.randrange(0, 40)}",
                      rank)
        elif roll < 0.65:
            self.emit(f"Prefill batch. #new-seq: {rng.randrange(1, 9)}, #new-token: {rng.randrange(1, 16) * 1024}, "
                      f"#cached-token: {rng.randrange(0, 8) * 512}, token usage: {rng.random():.2f}, "
                      f"#running-req: {running}, #queue-req: {rng.randrange(0, 40)}", rank)
        elif roll < 0.85:
            path = rng.choice(("/v1/chat/completions", "/generate", "/v1/completions", "/health"))
            self.emit(f'INFO:     10.0.{rng.randrange(256)}.{rng.randrange(256)}:{rng.randrange(30000, 65000)} '
                      f'- "POST {path} HTTP/1.1" 200 OK')
        elif roll < 0.995:
            rid = f"{rng.getrandbits(128):032x}"
            prompt, completion = rng.randrange(16, 8192), rng.randrange(1, 2048)
            self.emit(f"Finish: rid='{rid}', prompt_tokens={prompt}, completion_tokens={completion}, "
                      f"cached_tokens={rng.randrange(0, prompt)}, e2e_latency={rng.uniform(0.05, 40):.3f}s, "
                      f"ttft={rng.uniform(0.01, 2):.3f}s", rank)
        elif roll < 0.998:
            # Log lines that mention errors without being one: they must not become incidents.
            self.emit(rng.choice((
                "Retrying the health check after ConnectionResetError: [Errno 104] Connection reset by peer",
                "WARNING: The request was aborted by the client; no Exception raised in the scheduler.",
                "Prefill batch rejected 0 requests (no RuntimeError: capacity left)",
            )), rank)
        else:
            # A multi-line record: the continuation lines carry no prefix.
            self.emit("Memory pool status:", rank)
            for kind in ("token_to_kv_pool", "req_to_token_pool"):
                self.emit(f"    {kind}: used={rng.randrange(10**6)} free={rng.randrange(10**6)}", prefixed=False)

    # -- errors
    def error(self) -> None:
        rng = self.rng
        self.tick()
        roll = rng.random()
        if roll < 0.55:
            # One rank's scheduler dies; a few other ranks print the same traceback.
            template = rng.choice(self.templates)
            for rank in rng.sample(RANKS, rng.randrange(1, 5)):
                self._traceback(template, rank, context="Scheduler hit an exception: ")
        elif roll < 0.75:
            # The watchdog timeout every other rank of the group then prints.
            for tp in rng.sample(range(TP), rng.randrange(2, TP + 1)):
                self._traceback(self.nccl[tp], f"DP{rng.randrange(DP)} TP{tp}", context="Scheduler hit an exception: ")
        elif roll < 0.9:
            # traceback.print_exc() from a rank's helper thread: no prefix, the rank's stream goes on.
            rank = rng.choice(RANKS)
            self.emit("Detokenizer thread stopped; printing the error below", rank)
            self._traceback(rng.choice(self.templates), None)
        else:
            rank = rng.choice(RANKS)
            message = f"expected {rng.randrange(2, 9)} KV heads per rank, got {rng.randrange(9, 17)}"
            line = self.emit(f"ValueError: {message}", rank)
            self.truth.append(TruthError(line, line, rank, self.last_time.isoformat(), "bare", ("ValueError",), message))
        self.info()  # a new record on every channel ends the traceback

    def _traceback(self, template: _Template, rank: str | None, context: str = "") -> None:
        head, *body = template.lines
        self.in_error = True
        if rank is None:
            first = self.emit(head, prefixed=False)
            rank, stamp = self.last_rank, self.last_time
        else:
            first = self.emit(context + head, rank)
            stamp = self.last_time
        for line in body:
            self.emit(line, prefixed=False)
        self.in_error = False
        self.truth.append(TruthError(first, self.lineno, rank, stamp.isoformat() if stamp else None,
                                     "traceback", template.types, template.message.split("\n")[0]))

    def take(self) -> str:
        text = "\n".join(self.lines) + "\n"
        self.lines.clear()
        return text


def _pieces(writer: LogWriter, size: int, every: int) -> Iterator[str]:
    """Pieces of log text, about `size` bytes in all, one error per `every` lines on average."""
    written = 0
    next_error = writer.rng.randrange(every // 2, every * 3 // 2 + 1)
    writer.emit("server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, dp_size=2, "
                "enable_dp_attention=True, mem_fraction_static=0.85, port=30000, ...)")
    while written < size:
        while writer.lineno < next_error and len(writer.lines) < 4096:
            writer.info()
        if writer.lineno >= next_error:
            writer.error()
            next_error = writer.lineno + writer.rng.randrange(every // 2, every * 3 // 2 + 1)
        piece = writer.take()
        written += len(piece.encode())
        yield piece


def build_log(size: int, every: int = 10_000, seed: int = 0, style: str = "first") -> tuple[str, list[TruthError]]:
    """The whole log as one string, for tests at small sizes."""
    writer = LogWriter(seed, style)
    text = "".join(_pieces(writer, size, every))
    return text, writer.truth


def write_log(path: Path, size: int, every: int = 10_000, seed: int = 0, style: str = "first") -> list[TruthError]:
    writer = LogWriter(seed, style)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for piece in _pieces(writer, size, every):
            out.write(piece)
    truth_path(path).write_text(json.dumps([asdict(t) for t in writer.truth], indent=0) + "\n", encoding="utf-8")
    return writer.truth


def data_path(size: str, every: int = 10_000, style: str = "first") -> Path:
    """Where the log of these settings is kept: `sglang_100M.log`, `sglang_1G_torchrun_every100.log`."""
    name = f"sglang_{size.upper().removesuffix('B')}"
    name += "" if style == "first" else f"_{style}"
    name += "" if every == 10_000 else f"_every{every}"
    return DATA / f"{name}.log"


def truth_path(log: Path) -> Path:
    return log.with_name(log.name + ".truth.json")


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a large SGLang-style log with known errors.")
    parser.add_argument("--size", default="100M", help="about how big (100M, 1G, 200000)")
    parser.add_argument("--every", type=int, default=10_000, help="one error per this many lines on average")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--style", choices=STYLES, default="first", help="how prefixes reach the lines (see above)")
    parser.add_argument("--out", type=Path, help="where to write (default benchmarks/data/sglang_SIZE[_STYLE].log)")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
    except ValueError:
        parser.error(f"--size: not a size: {args.size!r}")
    if args.every < 2:
        parser.error("--every must be at least 2")
    out = args.out or data_path(args.size, args.every, args.style)
    truth = write_log(out, size, args.every, args.seed, args.style)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {len(truth)} errors) and {truth_path(out).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
