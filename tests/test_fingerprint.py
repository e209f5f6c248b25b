"""Fingerprints of real raised exceptions: the same bug with other values gets one fingerprint,
two different bugs get two; and the two runs of the 8-rank fixture agree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy
import pytest

from analyzer.cli import main
from analyzer.core.fingerprint import fingerprint, mask_message
from analyzer.core.records import ErrorInfo
from analyzer.core.scan import events_from_lines
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"


def parsed(func) -> ErrorInfo:
    """Raise for real, print the traceback as Python does, and read it back like a log."""
    (event,) = events_from_lines(text_of(capture(func)).splitlines(), "run.log", NO_NOTICES)
    return event.root


def in_file(path: str, source: str, function: str):
    """A function compiled under another file name, so that two raise sites share a name."""
    namespace: dict = {}
    exec(compile(source, path, "exec"), namespace)  # test code we wrote
    return namespace[function]


# Raise sites; each is called with the values of one run.
def load_config(root):
    with open(os.path.join(root, "config.json")):
        pass


def broadcast(a, b):
    return numpy.ones(a) + numpy.ones(b)


def parse_port(text):
    return int(text)


def lookup_weight(name):
    return {}[name]


def rendezvous(host, port, seconds, started):
    raise TimeoutError(f"rendezvous with {host}:{port} timed out after {seconds} s (started {started})")


def check_devices(device):
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {device} and cpu!")


def fetch_block(request, address, shape, log):
    raise RuntimeError(f"request {request}: KV block at {address} has shape torch.Size({shape}); dump in {log}")


def call_router(url):
    raise ConnectionError(f"POST {url} failed with status 503")


def divide_batch(batch, world):
    raise ValueError(f"batch {batch} not divisible by {world}")


def check_batch(batch, world, limit):
    if batch > limit:
        raise ValueError(f"batch {batch} exceeds the limit of {limit}")
    raise ValueError(f"batch {batch} not divisible by {world}")


def shard(batch, world):
    raise ValueError(f"batch {batch} not divisible by {world}")


def check_ready():
    assert False  # noqa: B011 - a bare assert, as servers have them


def check_loaded():
    assert False  # noqa: B011


SAME_BUG = {
    "path in a quoted filename": (lambda: load_config("/nonexistent/run-0914/ckpt"),
                                  lambda: load_config("/scratch/other-user/run-0915/checkpoint")),
    "tensor shapes": (lambda: broadcast((3, 4), (5,)), lambda: broadcast((8, 16, 2), (7, 3))),
    "quoted value": (lambda: parse_port("30000x"), lambda: parse_port("abc")),
    "dict key with numbers": (lambda: lookup_weight("model.layers.3.mlp.w1"),
                              lambda: lookup_weight("model.layers.47.mlp.w1")),
    "address, port, number, timestamp": (lambda: rendezvous("10.0.0.3", 29500, 600, "2026-09-14 08:15:02.184"),
                                         lambda: rendezvous("gpu-node-17.cluster", 31644, 1800, "2026-09-15T14:02:11Z")),
    "device id": (lambda: check_devices("cuda:0"), lambda: check_devices("cuda:7")),
    "uuid, hex address, shape, path": (
        lambda: fetch_block("3f2b9c1e-8d4a-4f6b-9a0c-5e7d1b2c3a4f", "0x7f3a2c001e40", [64, 16, 128], "/var/log/kv-3.log"),
        lambda: fetch_block("c0ffee00-1234-4abc-8def-0123456789ab", "0x7fe81b3c9a00", [32, 16], "/tmp/kv/dump-5.log")),
    "url with host and port": (lambda: call_router("http://10.0.0.3:30000/generate"),
                               lambda: call_router("https://router.internal:8443/v1/chat/completions")),
}


@pytest.mark.parametrize("first, second", SAME_BUG.values(), ids=SAME_BUG.keys())
def test_same_bug_with_other_values_has_one_fingerprint(first, second):
    a, b = parsed(first), parsed(second)
    assert a.message != b.message
    assert fingerprint(a) == fingerprint(b), (mask_message(a.message), mask_message(b.message))


def _same_name_elsewhere():
    return in_file("/srv/app/loader.py", "def divide_batch(batch, world):\n"
                                         "    raise ValueError(f'batch {batch} not divisible by {world}')\n",
                   "divide_batch")


DIFFERENT_BUGS = {
    "other message, same function and type": (lambda: check_batch(30, 4, 16), lambda: check_batch(30, 4, 64)),
    "same message, other function": (lambda: divide_batch(30, 4), lambda: shard(30, 4)),
    "same message and function, other file": (lambda: divide_batch(30, 4), lambda: _same_name_elsewhere()(30, 4)),
    "same message, other type": (lambda: parse_port("x"), lambda: lookup_weight("x")),
    "bare asserts in two functions": (check_ready, check_loaded),
    "other words around the same values": (lambda: rendezvous("10.0.0.3", 29500, 600, "2026-09-14 08:15:02"),
                                           lambda: check_devices("cuda:0")),
}


@pytest.mark.parametrize("first, second", DIFFERENT_BUGS.values(), ids=DIFFERENT_BUGS.keys())
def test_different_bugs_have_different_fingerprints(first, second):
    assert fingerprint(parsed(first)) != fingerprint(parsed(second))


@pytest.mark.parametrize("message, masked", [
    ("GPU 3 has 1.02 GiB free", "GPU <num> has <num> GiB free"),
    ("can't start, won't retry", "can't start, won't retry"),  # apostrophes are no quotes
    ("peer [::1]:29500 and 10.0.0.3:29500 and localhost:8000", "peer <addr> and <addr> and <addr>"),
    ("rank3 on TP5 saw 4096x8 on cuda:1", "<rank> on <rank> saw <shape> on <device>"),
    ("at 2026-09-14_08:25:04 and 10:00:01", "at <time> and <time>"),
    ("C:\\models\\qwen\\config.json missing", "<path> missing"),
    ("id 1a2b3c4d5e and token AbC123xyz789QwErTy", "id <hex> and token <id>"),
])
def test_masks(message, masked):
    assert mask_message(message) == masked


def _scan(capsys, log: str) -> list[dict]:
    assert main(["scan", "--format", "jsonl", str(LOGS / log)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_two_runs_of_the_eight_rank_failure_share_one_fingerprint(capsys):
    """Other failing rank, request id, peer, port, buffer address, sizes, device, deadline, log path
    and install prefix: still one bug."""
    run_a = _scan(capsys, "torchrun_8rank_cascade.log")
    run_b = _scan(capsys, "torchrun_8rank_cascade_rerun.log")
    (root_a,) = [i for i in run_a if i["is_run_root"]]
    (root_b,) = [i for i in run_b if i["is_run_root"]]
    assert root_a["pattern_id"] is None and root_a["ranks"] == ["rank3"] and root_b["ranks"] == ["rank5"]
    assert root_a["message"] != root_b["message"]
    assert root_a["fingerprint"] == root_b["fingerprint"]
    assert root_a["fingerprint"].startswith("TransferError@transfer_sync:")
    assert [i["fingerprint"] for i in run_a] == [i["fingerprint"] for i in run_b]  # the echoes too
    assert len({i["fingerprint"] for i in run_a}) == len(run_a)
