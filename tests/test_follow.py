"""`--follow`: rotation, truncation and deletion while a traceback is half written.

The follow reader is driven directly: it yields `None` each time it has read everything, and the
test changes the file at exactly those moments, so every run takes the same path. One test runs the
real CLI in a subprocess as a user would."""

from __future__ import annotations

import codecs
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import analyzer.engine as engine_module
from analyzer.sources.files import RESTART, follow_chunks
from analyzer.sources.lines import LineSplitter
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.support import bare_engine

ROOT = Path(__file__).resolve().parent.parent


def _oom():
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")


def _bad_config():
    raise ValueError("tp_size 3 does not divide 32 attention heads")


OOM = text_of(capture(_oom)).splitlines()
BAD = text_of(capture(_bad_config)).splitlines()


def follow_lines(path: str, on_problem, idle: float):
    """`follow_chunks` as lines; each file's last line comes before its RESTART, newline or not."""
    splitter = LineSplitter()
    for chunk in follow_chunks(path, on_problem, idle=idle):
        if chunk is None:
            yield None
        elif chunk is RESTART:
            last = splitter.finish()
            if last is not None:
                yield last
            splitter = LineSplitter()
            yield RESTART
        else:
            yield from splitter.feed(chunk)


def _follow(path: Path, actions: list[Callable[[], None]], quiet_ticks: int = 3):
    """Everything `follow_chunks` yields, as lines, but the quiet ticks, doing one action at each quiet tick;
    after the last action it stops at the `quiet_ticks`-th quiet tick. Returns (items, problems)."""
    problems: list[str] = []
    items: list = []
    todo = list(actions)
    ticks = 0
    source = follow_lines(str(path), lambda problem: problems.append(str(problem)), idle=0.001)
    for item in source:
        if item is not None:
            items.append(item)
        elif todo:
            todo.pop(0)()
        else:
            ticks += 1
            if ticks == quiet_ticks:
                break
    source.close()
    return items, problems


def _write(path: Path, lines: list[str], mode: str = "w", end: str = "\n") -> None:
    with open(path, mode, encoding="utf-8") as handle:
        handle.write("\n".join(lines) + end)


def test_rotation_mid_traceback_drains_the_old_file_then_restarts(tmp_path):
    log = tmp_path / "server.log"
    _write(log, ["INFO 12-01 10:00:00 [a.py:1] serving", *OOM[:3]])

    def rotate():
        _write(log, OOM[3:4], mode="a")  # written just before the rename: still read, from the old file
        log.rename(tmp_path / "server.log.1")
        _write(log, BAD)

    items, problems = _follow(log, [rotate])
    assert items == ["INFO 12-01 10:00:00 [a.py:1] serving", *OOM[:4], RESTART, *BAD]
    assert problems == [f"{log}: rotated, reading the new file"]


def test_truncation_restarts_from_the_top(tmp_path):
    log = tmp_path / "server.log"
    _write(log, ["INFO 12-01 10:00:00 [a.py:1] a long line before the truncation", *OOM[:2]])

    def truncate():
        _write(log, ["ValueError: short"])

    items, problems = _follow(log, [truncate])
    assert items == ["INFO 12-01 10:00:00 [a.py:1] a long line before the truncation", *OOM[:2], RESTART,
                     "ValueError: short"]
    assert problems == [f"{log}: truncated, reading from the start"]


def test_deleted_while_followed_gives_its_last_line_and_waits(tmp_path):
    log = tmp_path / "server.log"
    _write(log, OOM[:3], end="")  # the last line has no newline yet

    items, problems = _follow(log, [log.unlink, lambda: _write(log, BAD)])
    assert items == [*OOM[:3], RESTART, *BAD]
    assert problems == [f"{log}: No such file or directory; waiting for it to appear"]


def test_copytruncate_hole_does_not_eat_the_next_line(tmp_path):
    """copytruncate empties the file while the writer keeps its offset: the file starts over with a
    hole of NULs up to that offset, and is not shorter than what was read, so reading goes on."""
    log = tmp_path / "server.log"
    _write(log, ["INFO 12-01 10:00:00 [a.py:1] before the copy"])

    def copytruncate():
        with open(log, "r+b") as handle:
            handle.truncate(0)
            handle.seek(4 << 20)
            handle.write(b"ValueError: written after the copy\n")

    items, problems = _follow(log, [copytruncate])
    assert items == ["INFO 12-01 10:00:00 [a.py:1] before the copy", "ValueError: written after the copy"]
    assert problems == []


def test_each_file_of_a_rotation_has_its_own_encoding(tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(codecs.BOM_UTF16_LE + "\n".join(BAD).encode("utf-16-le") + "\n".encode("utf-16-le"))

    def rotate():
        log.rename(tmp_path / "server.log.1")
        _write(log, OOM)

    items, _ = _follow(log, [rotate])
    assert items == [*BAD, RESTART, *OOM]


def test_scan_ends_the_cut_traceback_and_numbers_the_new_file_from_one(monkeypatch):
    """The consumer in `analyzer scan`: RESTART reports the cut-off traceback at once, truncated,
    and the new file's lines count from 1."""
    def fake_follow(path, on_problem, stop):
        yield "".join(line + "\n" for line in OOM[:3]).encode()
        yield None
        yield RESTART
        yield "".join(line + "\n" for line in BAD).encode()

    monkeypatch.setattr(engine_module, "follow_chunks", fake_follow)
    events = list(bare_engine().events(["server.log"], lambda problem: None, follow=True))
    assert [(e.truncated, e.span.line_start, e.span.line_end) for e in events] == [(True, 1, 3), (False, 1, len(BAD))]
    assert actual_chain(events[1].chain) == expected_chain(capture(_bad_config))


def _reader(stream, lines: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line.decode())
    lines.put(None)


def _next_json(lines: queue.Queue, want: Callable[[dict], bool]) -> dict:
    """The next JSON object the CLI prints that `want`s; the wait is a hang guard, not a measurement."""
    while True:
        line = lines.get(timeout=60)
        assert line is not None, "the follower ended"
        incident = json.loads(line)
        if want(incident):
            return incident


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and renames")
def test_cli_follow_survives_rotation_and_deletion(tmp_path):
    log = tmp_path / "server.log"
    _write(log, ["INFO 12-01 10:00:00 [a.py:1] serving"])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "--follow", "--format", "jsonl", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, out), daemon=True).start()
    try:
        # rank0 has half a traceback when the file is rotated; rank1's line shows it was read.
        _write(log, [f"[rank0]: {line}" for line in OOM[:3]] + ["[rank1]: ValueError: marker one"], mode="a")
        _next_json(out, lambda i: i["message"] == "marker one")
        log.rename(tmp_path / "server.log.1")
        _write(log, ["[rank1]: ValueError: marker two"])  # (another stream: no traceback below it is its own)
        cut = _next_json(out, lambda i: i["ranks"] == ["rank0"])
        assert cut["truncated"] and cut["source"] == {"file": str(log), "line_start": 2, "line_end": 4}
        _next_json(out, lambda i: i["message"] == "marker two")
        # deleted with a traceback half written: reported at once; then the file comes back
        _write(log, OOM[:2], mode="a")
        log.unlink()
        again = _next_json(out, lambda i: i["id"] == cut["id"])  # the same error: the incident grows
        assert again["count"] == 2 and again["occurrences"][-1] == {"file": str(log), "line_start": 2, "line_end": 3}
        _write(log, ["ValueError: marker three"])
        _next_json(out, lambda i: i["message"] == "marker three")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    warnings = err.decode().splitlines()
    assert f"analyzer: warning: {log}: rotated, reading the new file" in warnings
    assert f"analyzer: warning: {log}: No such file or directory; waiting for it to appear" in warnings
    assert "Traceback" not in err.decode()
