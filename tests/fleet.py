"""A generated fleet of run logs with known, injected failures: the ground truth for fleet reports.

Layout: ROOT/<date>/<host>/<run-id>/server.log (two-node runs: node0.log and node1.log). The
tracebacks are raised for real through fixtures/generate.py, with varied values (which
`--moe-a2a-backend` was passed, how much memory, which rank), and some runs are bad on purpose:
empty, binary, half-written, cut-short gzip, or a dangling link.

    python -m tests.fleet OUT [RUNS]     # writes a fleet and prints its ground truth summary
"""

from __future__ import annotations

import gzip
import os
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from fixtures.generate import (
    LAUNCH,
    SCHED,
    Frame,
    deepep_v2_traceback,
    foreign_exception,
    formatted,
    nccl_timeout_traceback,
)

PATH_REGEX = r"(?P<date>\d{4}-\d\d-\d\d)/(?P<host>[^/]+)/(?P<run>run-\d+)/"
FIRST_DAY = date(2026, 8, 24)
DAYS = 7
NEW_FROM = 4  # days after FIRST_DAY when the `weights` failure first appears
HOSTS = tuple(f"gpu-node-{n:02d}" for n in range(1, 9))
VERSIONS = ("0.5.21", "0.5.22", "0.5.23")
A2A_BACKENDS = ("flashinfer_tkv", "flashinfer_tkv", "flashinfer_tkv", "mooncake", "mooncake", "ascend_fuseep")
BAD_CHOICES = ("deepep3", "deepep3", "deep_ep", "mori2")

# What each kind of run is, and how many of every hundred runs are of it.
MIX = {
    "clean": 40, "clean_gz": 6, "a2a": 14, "oom": 8, "oom_two_nodes": 4, "deepep_v2": 6, "argparse": 7,
    "weights": 5, "empty": 2, "binary": 2, "half_written": 2, "half_written_failure": 2, "cut_gz": 1,
    "dangling": 1,
}


@dataclass(frozen=True)
class Expected:
    """One incident the analyzer must find in one file."""

    file: str  # name inside the run directory
    pattern_id: str | None
    exception_type: str
    role: str
    count: int
    params: dict = field(default_factory=dict)  # captured values that must be there


@dataclass(frozen=True)
class RunTruth:
    run: str
    host: str
    day: date
    version: str | None  # as the report names it ("sglang 0.5.23"); None when the log never says
    kind: str
    files: tuple[str, ...]
    expected: tuple[Expected, ...]
    status: str  # "ok", or the bad status its broken file must get

    @property
    def signature(self) -> str | None:
        """The root cause's signature: pattern id, or exception type for unknown errors."""
        roots = [e for e in self.expected if e.role == "root"]
        return (roots[0].pattern_id or roots[0].exception_type) if roots else None


@dataclass(frozen=True)
class FleetTruth:
    root: Path
    runs: tuple[RunTruth, ...]

    def runs_with(self, signature: str) -> set[str]:
        return {r.run for r in self.runs if any((e.pattern_id or e.exception_type) == signature for e in r.expected)}

    def occurrences(self, signature: str) -> int:
        return sum(e.count for r in self.runs for e in r.expected if (e.pattern_id or e.exception_type) == signature)

    def signatures(self) -> set[str]:
        return {e.pattern_id or e.exception_type for r in self.runs for e in r.expected}

    def clean(self) -> set[str]:
        return {r.run for r in self.runs if not r.expected and r.status == "ok"}

    def bad(self) -> dict[str, str]:
        return {r.run: r.status for r in self.runs if r.status != "ok"}

    def param_counts(self, signature: str, name: str) -> Counter:
        return Counter(e.params[name] for r in self.runs for e in r.expected
                       if (e.pattern_id or e.exception_type) == signature and name in e.params)


# ---------------------------------------------------------------- log pieces
def _stamp(when: datetime, tag: str = "") -> str:
    return f"[{when:%Y-%m-%d %H:%M:%S}{' ' + tag if tag else ''}] "


def _head(when: datetime, version: str, tp: int, extra: str = "") -> str:
    lines = [_stamp(when) + f"sglang version {version}\n",
             _stamp(when) + f"server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size={tp}{extra}, "
                            "port=30000, ...)\n"]
    for rank in range(tp):
        loaded = when + timedelta(seconds=5 + rank)
        lines.append(_stamp(loaded, f"TP{rank}") + "Load weight begin. avail mem=78.52 GB\n")
    return "".join(lines)


def _launch(when: datetime, tp: int) -> str:
    """The command an OOM run was started with: its fixes are computed from the values it logs."""
    return (_stamp(when) + "$ python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
            f"--tp {tp} --mem-fraction-static 0.88\n")


def _serving(when: datetime, minutes: int) -> str:
    lines = [_stamp(when) + "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n"]
    for minute in range(1, minutes + 1):
        at = when + timedelta(minutes=minute)
        lines.append(_stamp(at, "TP0") + f"Decode batch. #running-req: {30 + minute}, #token: {70000 + 911 * minute}, "
                     f"token usage: 0.{40 + minute % 50:02d}, gen throughput (token/s): {2800 + 7 * minute}.12, "
                     f"#queue-req: {minute % 4}\n")
    return "".join(lines)


def _a2a_failure(when: datetime, backend: str) -> str:
    frames = LAUNCH + [
        Frame("sglang/srt/arg_groups/model_hook.py", 480, "handle_model_specific_adjustments",
              "        validate_deepseek_v4_cp(server_args)"),
        Frame("sglang/srt/arg_groups/deepseek_v4_hook.py", 231, "validate_deepseek_v4_cp", "        raise ValueError("),
    ]
    supported = ("none", "deepep", "megamoe", "mori")
    return _stamp(when) + "Enable prefill context parallelism: cp_strategy=interleave\n" + formatted(
        frames, ValueError(f"DeepSeekV4 CP supports moe_a2a_backend in {supported}, got {backend!r}."))


OutOfMemoryError = foreign_exception("torch", "OutOfMemoryError")


def _oom_traceback(gpu: int, size: str) -> str:
    frames = SCHED + [
        Frame("sglang/srt/model_executor/model_runner.py", 2287, "_forward_raw",
              "            ret = self.forward_extend("),
        Frame("sglang/srt/layers/logits_processor.py", 517, "_get_logits",
              "            logits = torch.matmul(hidden_states.to(lm_head.weight.dtype), lm_head.weight.T)"),
    ]
    return formatted(frames, OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {size}. GPU {gpu} has a total capacity of 79.19 GiB of which "
        "1.02 GiB is free. Including non-PyTorch memory, this process has 78.15 GiB memory in use. Of the "
        "allocated memory 74.90 GiB is allocated by PyTorch, and 1.61 GiB is reserved by PyTorch but unallocated."))


def _nccl_timeouts(when: datetime, ranks: list[int]) -> str:
    return "".join(_stamp(when + timedelta(seconds=i // 3), f"TP{rank}") + "Scheduler hit an exception: "
                   + nccl_timeout_traceback(rank, 48211, 600000 + 37 * rank + i) for i, rank in enumerate(ranks))


def _deepep_v2_log(when: datetime, version: str) -> str:
    tb = deepep_v2_traceback()
    lines = [f"[{when:%Y-%m-%d %H:%M:%S}] sglang version {version}",
             f"[{when:%Y-%m-%d %H:%M:%S}] server_args=ServerArgs(moe_a2a_backend='deepep_v2', "
             "enable_deterministic_inference=True, ...)"] + tb.splitlines()
    return "".join(f"{when + timedelta(milliseconds=7 * i):%Y-%m-%dT%H:%M:%S.%f}123Z stderr F {line}\n"
                   for i, line in enumerate(lines))


def _argparse_log(value: str) -> str:
    return (
        f"$ python -m sglang.launch_server --model-path Qwen/Qwen3-8B --moe-a2a-backend {value}\n"
        "usage: sglang serve [-h] --model-path MODEL_PATH [--moe-a2a-backend {none,deepep,deepep_v2,mooncake,mori}]\n"
        f"sglang serve: error: argument --moe-a2a-backend: invalid choice: '{value}' (choose from 'none', "
        "'deepep', 'deepep_v2', 'mooncake', 'mori')\n")


def _weights_failure(when: datetime, layer: int) -> str:
    loader = [
        Frame("sglang/srt/managers/scheduler.py", 3093, "run_scheduler_process",
              "        scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)"),
        Frame("sglang/srt/model_executor/model_runner.py", 921, "load_model", "            self.model = get_model("),
    ]
    inner = loader + [Frame("sglang/srt/models/qwen3_moe.py", 958, "load_weights",
                            "                param = params_dict[name]")]
    outer = loader + [Frame("sglang/srt/model_loader/loader.py", 618, "load_model",
                            "                raise RuntimeError(")]
    name = f"model.layers.{layer}.mlp.experts.w13_weight_scale_inv"
    failure = RuntimeError(f"Failed to load weights for Qwen3MoeForCausalLM: unexpected parameter {name!r}.")
    tb = formatted(outer, failure, cause_frames=inner, cause=KeyError(name))
    return "".join(_stamp(when + timedelta(seconds=rank), f"TP{rank}") + "Scheduler hit an exception: " + tb
                   for rank in range(2))


# ---------------------------------------------------------------- one run of each kind
@dataclass(frozen=True)
class Built:
    files: dict  # name -> text, bytes, or None for a link to nowhere
    expected: tuple[Expected, ...] = ()
    status: str = "ok"


OOM = ("torch.cuda-out-of-memory", "torch.OutOfMemoryError", "root")
NCCL = ("torch.nccl-watchdog-timeout", "torch.distributed.DistBackendError", "consequence")
A2A = ("sglang.deepseek-v4-cp-a2a-backend", "ValueError", "root")


def _clean(rng: random.Random, when: datetime, version: str) -> Built:
    return Built({"server.log": _head(when, version, 2) + _serving(when + timedelta(minutes=1), rng.randint(3, 12))})


def _clean_gz(rng: random.Random, when: datetime, version: str) -> Built:
    text = _head(when, version, 2) + _serving(when + timedelta(minutes=1), rng.randint(3, 12))
    return Built({"server.log.gz": gzip.compress(text.encode(), mtime=0)})


def _a2a(rng: random.Random, when: datetime, version: str) -> Built:
    backend = rng.choice(A2A_BACKENDS)
    text = (_head(when, version, 8, f", moe_a2a_backend='{backend}'")
            + _a2a_failure(when + timedelta(seconds=20), backend))
    return Built({"server.log": text}, (Expected("server.log", *A2A, 1, {"moe_a2a_backend": backend}),))


def _oom(rng: random.Random, when: datetime, version: str) -> Built:
    tp = rng.choice((2, 4, 8))
    gpu = rng.randrange(tp)
    size = f"{rng.choice((1.25, 2.5, 3.75))} GiB"
    crash = when + timedelta(minutes=5)
    others = [r for r in range(tp) if r != gpu]
    text = (_launch(when, tp) + _head(when, version, tp, ", mem_fraction_static=0.88")
            + _serving(when + timedelta(minutes=1), 3)
            + _stamp(crash, f"TP{gpu}")
            + "Scheduler hit an exception: " + _oom_traceback(gpu, size)
            + _nccl_timeouts(crash + timedelta(minutes=10), others))
    return Built({"server.log": text}, (Expected("server.log", *OOM, 1, {"gpu": gpu}),
                                        Expected("server.log", *NCCL, len(others))))


def _oom_two_nodes(rng: random.Random, when: datetime, version: str) -> Built:
    """Ranks 0-7 on one node, 8-15 on another: the timeouts reach both logs, the OOM one."""
    gpu = rng.randrange(8)
    crash = when + timedelta(minutes=4)
    node0 = (_launch(when, 8) + _head(when, version, 8, ", mem_fraction_static=0.88") + _stamp(crash, f"TP{gpu}")
             + "Scheduler hit an exception: "
             + _oom_traceback(gpu, "2.5 GiB")
             + _nccl_timeouts(crash + timedelta(minutes=10), [r for r in range(8) if r != gpu]))
    node1 = _head(when, version, 0) + _nccl_timeouts(crash + timedelta(minutes=10), list(range(8, 16)))
    return Built({"node0.log": node0, "node1.log": node1}, (
        Expected("node0.log", *OOM, 1, {"gpu": gpu}), Expected("node0.log", *NCCL, 7),
        Expected("node1.log", *NCCL, 8)))


def _deepep_v2(rng: random.Random, when: datetime, version: str) -> Built:
    return Built({"server.log": _deepep_v2_log(when, version)},
                 (Expected("server.log", "sglang.deepep-v2-deterministic", "ValueError", "root", 1),))


def _argparse(rng: random.Random, when: datetime, version: str) -> Built:
    value = rng.choice(BAD_CHOICES)
    return Built({"server.log": _argparse_log(value)}, (
        Expected("server.log", "python.argparse-invalid-choice", "ArgumentError", "root", 1, {"value": value}),))


def _weights(rng: random.Random, when: datetime, version: str) -> Built:
    """A checkpoint weight the model lacks: no raise names it, the frame it fails in does."""
    text = _head(when, version, 2) + _weights_failure(when + timedelta(seconds=40), rng.randrange(2, 60))
    return Built({"server.log": text}, (Expected("server.log", "sglang.weight-not-in-model", "KeyError", "root", 2),))


def _empty(rng: random.Random, when: datetime, version: str) -> Built:
    return Built({"server.log": ""}, status="empty")


def _binary(rng: random.Random, when: datetime, version: str) -> Built:
    return Built({"server.log": b"\x7fELF\x02\x01\x01\x00" + rng.randbytes(6000)}, status="binary")


def _half_written(rng: random.Random, when: datetime, version: str) -> Built:
    text = _head(when, version, 2) + _serving(when + timedelta(minutes=1), 6)
    return Built({"server.log": text[: text.rindex("\n", 0, len(text) - 1) + 25]}, status="partial")


def _half_written_failure(rng: random.Random, when: datetime, version: str) -> Built:
    backend = rng.choice(A2A_BACKENDS)
    text = (_head(when, version, 8) + _a2a_failure(when + timedelta(seconds=20), backend)
            + _stamp(when + timedelta(seconds=21)) + "Killing all child processes of the server.\n"
            + _stamp(when + timedelta(seconds=22)) + "Shutting down the tokeniz")
    return Built({"server.log": text}, (Expected("server.log", *A2A, 1, {"moe_a2a_backend": backend}),), "partial")


def _cut_gz(rng: random.Random, when: datetime, version: str) -> Built:
    """No version banner: how much of a cut stream can be read back is the reader's business."""
    whole = gzip.compress(_serving(when, 40).encode(), mtime=0)
    return Built({"server.log.gz": whole[: len(whole) * 2 // 3]}, status="partial")


def _dangling(rng: random.Random, when: datetime, version: str) -> Built:
    return Built({"server.log": None}, status="unreadable")


KINDS = {"clean": _clean, "clean_gz": _clean_gz, "a2a": _a2a, "oom": _oom, "oom_two_nodes": _oom_two_nodes,
         "deepep_v2": _deepep_v2, "argparse": _argparse, "weights": _weights, "empty": _empty, "binary": _binary,
         "half_written": _half_written, "half_written_failure": _half_written_failure, "cut_gz": _cut_gz,
         "dangling": _dangling}


def write_fleet(root: str | Path, runs: int = 240, seed: int = 7) -> FleetTruth:
    """Write `runs` run directories under `root` and return what a report must find in them."""
    rng = random.Random(seed)
    root = Path(root)
    kinds = [kind for kind, share in MIX.items() for _ in range(max(1, round(share * runs / 100)))]
    kinds = (kinds * (runs // len(kinds) + 1))[:runs]
    rng.shuffle(kinds)
    truths = []
    for number, kind in enumerate(kinds, 1):
        # The unknown weight-loading error is a regression that starts on the fifth day.
        day = FIRST_DAY + timedelta(days=rng.randrange(NEW_FROM if kind == "weights" else 0, DAYS))
        host, version = rng.choice(HOSTS), rng.choice(VERSIONS)
        hour, minute = rng.randint(1, 21), rng.randrange(60)
        when = datetime.combine(day, datetime.min.time()) + timedelta(hours=hour, minutes=minute)
        run = f"run-{number:04d}"
        directory = root / day.isoformat() / host / run
        directory.mkdir(parents=True, exist_ok=True)
        built = KINDS[kind](rng, when, version)
        for name, content in built.files.items():
            target = directory / name
            if content is None:
                os.symlink(directory / "rotated-away.log", target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        logged = kind not in ("argparse", "empty", "binary", "dangling", "cut_gz")  # argparse exits before logging
        truths.append(RunTruth(run=run, host=host, day=day, version=f"sglang {version}" if logged else None,
                               kind=kind, files=tuple(built.files), expected=built.expected, status=built.status))
    return FleetTruth(root, tuple(truths))


def main(argv: list[str]) -> None:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        raise SystemExit(2)
    truth = write_fleet(argv[0], int(argv[1]) if len(argv) > 1 else 240)
    print(f"{len(truth.runs)} runs under {truth.root}: {len(truth.clean())} clean, {len(truth.bad())} bad")
    for signature in sorted(truth.signatures()):
        print(f"  {signature}: {len(truth.runs_with(signature))} runs, {truth.occurrences(signature)} occurrences")


if __name__ == "__main__":
    main(sys.argv[1:])
