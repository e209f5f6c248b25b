"""The benchmark log generator's ground truth is what the scanner must find, at a small size."""

from __future__ import annotations

import json

from analyzer.core.scan import events_from_lines
from benchmarks.generate import build_log, parse_size, truth_path, write_log
from benchmarks.rewrapped import WRAPPERS, collector_clock, wrapped_text
from tests.support import NO_NOTICES, bare_engine


def _as_truth(event) -> dict:
    return {"line_start": event.span.line_start, "line_end": event.span.line_end, "rank": event.rank,
            "timestamp": event.timestamp.isoformat() if event.timestamp else None, "kind": event.kind.value,
            "types": [info.exception_type for info in event.chain], "message": event.root.message.split("\n")[0]}


def test_truth_is_every_error_field_by_field():
    text, truth = build_log(400_000, every=300, seed=3)
    events = list(events_from_lines(text.splitlines(), "gen.log", NO_NOTICES))
    assert [_as_truth(e) for e in events] == [_truth_dict(t) for t in truth]
    kinds = {t.kind for t in truth}
    assert kinds == {"traceback", "bare"}
    assert any(len(t.types) == 2 for t in truth), "chained errors"
    assert len({t.rank for t in truth}) > 4, "errors on many ranks"


def _truth_dict(truth) -> dict:
    return {name: list(getattr(truth, name)) if name == "types" else getattr(truth, name)
            for name in truth.__slots__}


def test_same_seed_same_log_and_about_the_size_asked():
    first, truth = build_log(200_000, every=500, seed=7)
    again, _ = build_log(200_000, every=500, seed=7)
    assert first == again
    assert 200_000 <= len(first.encode()) < 200_000 + 2_000_000
    assert truth and first.count("\n") > 1000


def test_written_log_and_truth_file_agree_with_the_fast_path(tmp_path):
    log = tmp_path / "gen.log"
    truth = write_log(log, 300_000, every=400, seed=5)
    stored = json.loads(truth_path(log).read_text())
    assert stored == [_truth_dict(t) for t in truth]
    events = list(bare_engine().events([str(log)], lambda problem: None))
    assert [_as_truth(e) for e in events] == stored


def test_sizes_parse():
    assert parse_size("100M") == 100 << 20 and parse_size("1G") == 1 << 30 and parse_size("2048") == 2048


def test_rewrapped_logs_keep_every_line_and_follow_the_logs_own_clock(tmp_path):
    """benchmarks/rewrapped.py: each wrapper gives back every line of the log behind its prefix, in order (CRLF's
    `\\r` aside), bytes that are not UTF-8 kept; the collector's clock is the line's own time where it shows one."""
    raw = [b"[2025-04-04 06:22:32 TP0] Load weight begin.", b"Traceback (most recent call last):", b"x \xff y",
           b"[2025-04-04 06:24:51 TP7] Scheduler hit an exception:"]
    lines = [line.decode("utf-8", "surrogateescape") for line in raw]
    log = tmp_path / "server.log"
    log.write_bytes(b"\n".join(raw) + b"\n")
    for name, wrapper in WRAPPERS.items():
        wrapped = wrapped_text(log, wrapper).decode("utf-8", "surrogateescape").split("\n")
        assert wrapped.pop() == "", name  # (the last newline kept)
        if name == "docker-json":  # (bytes that are not UTF-8 as Docker writes them: U+FFFD)
            wrapped = [json.loads(line)["log"].rstrip("\n").replace("\ufffd", "\udcff") for line in wrapped]
        elif name == "json-each-line":
            wrapped = [json.loads(line)["message"] for line in wrapped]
        elif name == "double-spaced":
            assert not any(wrapped[1::2]), name
            wrapped = wrapped[::2]
        assert len(wrapped) == len(lines), name
        assert all(out.rstrip("\r").endswith(line) for out, line in zip(wrapped, lines, strict=True)), name
    assert [f"{when:%H:%M:%S.%f}" for when in collector_clock(lines)] == [
        "06:22:32.000000", "06:22:32.001000", "06:22:32.002000", "06:24:51.000000"]
