"""Stream output that grows with ticks, not with events × ranks (issue 16): many ranks failing the
same way on stdin print the incident a few times, its last object is the file path's incident, and
a new incident still appears at once. Driven through a real pipe by a writer thread; the only
clock read bounds how many ticks there could have been, never how fast anything ran."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.realtb import capture, text_of

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
RANKS = 2000
TICK = 0.1  # the engine's tick (engine._TICK_SECONDS)


def _bad_config():
    raise ValueError("tp_size 3 does not divide 32 attention heads")


def _load_shard():
    raise RuntimeError("shard 7 is missing from /ckpt/model-00007.safetensors")


def _first() -> str:
    return "".join(f"[rank0]: {line}\n" for line in text_of(capture(_bad_config)).splitlines())


def _fleet() -> str:
    """Every rank fails the same way at once, its lines interleaved with the other ranks'."""
    lines = text_of(capture(_load_shard)).splitlines()
    return "".join(f"[rank{rank}]: {line}\n" for line in lines for rank in range(RANKS))


def _lines_of(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        into.put(line.decode())
    into.put(None)


def _stream(fmt: str, wanted: str, fifo: Path | None = None) -> tuple[list[str], float]:
    """`scan -` (or `scan FIFO`) fed `_first()`, then, once a line with `wanted` was printed,
    `_fleet()`. Returns the lines printed and the seconds the scan ran (for the bound on its ticks)."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "--format", fmt, str(fifo or "-")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_lines_of, args=(proc.stdout, out), daemon=True).start()
    printed: list[str] = []
    pipe = proc.stdin if fifo is None else open(fifo, "wb")  # noqa: SIM115 - closed by the writer
    pipe.write(_first().encode())  # type: ignore[union-attr]
    pipe.flush()  # type: ignore[union-attr]
    while wanted not in (printed[-1] if printed else ""):  # the new incident, before the writer goes on
        line = out.get(timeout=60)  # a hang guard, not a measurement
        assert line is not None, "the scan ended before the first incident was printed"
        printed.append(line)
    writer = threading.Thread(target=_write_and_close, args=(pipe, _fleet().encode()))
    writer.start()
    while (line := out.get(timeout=120)) is not None:
        printed.append(line)
    writer.join(60)
    assert proc.wait(timeout=60) == 0
    return printed, time.monotonic() - started


def _write_and_close(pipe, data: bytes) -> None:
    for start in range(0, len(data), 1 << 16):
        pipe.write(data[start:start + (1 << 16)])
        pipe.flush()
    pipe.close()


def test_a_fleet_failing_at_once_prints_its_incident_a_few_times_ending_as_the_file_says(tmp_path):
    printed, seconds = _stream("jsonl", '"ValueError"')
    objects = [json.loads(line) for line in printed]
    assert objects[0]["exception_type"] == "ValueError"  # printed while the writer waited for it
    fleet = [o for o in objects if o["exception_type"] == "RuntimeError"]
    assert fleet[-1]["count"] == RANKS and len(fleet[-1]["ranks"]) == RANKS
    # once when it appeared, at most once per tick after, once more at the end: not once per rank
    assert len(fleet) <= 2 + seconds / TICK and len(fleet) < RANKS // 10

    log = tmp_path / "server.log"
    log.write_text(_first() + _fleet())
    done = subprocess.run([sys.executable, "-m", "analyzer", "scan", "--format", "jsonl", str(log)],
                          capture_output=True, env=ENV, timeout=120, check=False)
    from_file = {o["id"]: o for o in map(json.loads, done.stdout.decode().splitlines())}
    latest = {o["id"]: o for o in objects}  # the last object with an id is current
    named = json.dumps(str(log))
    assert latest == {i: json.loads(json.dumps(o).replace(named, '"<stdin>"')) for i, o in from_file.items()}


def test_text_says_again_once_per_tick_with_the_ranks_that_joined():
    printed, seconds = _stream("text", "ValueError")
    again = [line for line in printed if "I2 again" in line]
    assert 1 <= len(again) <= 1 + seconds / TICK and len(again) < RANKS // 10
    assert again[-1].lstrip().startswith(f"I2 again ({RANKS}×")
    assert sum(int(line.split("; ")[1].split()[0]) if "more since" in line else 1 for line in again) == RANKS - 1
    assert any("more since the last line; " in line and " ranks), latest on rank" in line for line in again)
    assert printed[-1].startswith(f"-- 1 file(s), {RANKS + 1} error event(s), 2 incident(s)")


def test_a_fifo_prints_as_it_comes_like_stdin(tmp_path):
    """`analyzer scan <(command)`: the first incident is printed while the writer waits for it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    printed, _ = _stream("jsonl", '"ValueError"', fifo)
    latest = {o["id"]: o for o in map(json.loads, printed)}
    assert [o["exception_type"] for o in latest.values()] == ["ValueError", "RuntimeError"]
    assert latest["I2"]["count"] == RANKS
