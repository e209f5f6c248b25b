"""What a first-time user tripped on (issue 21): inputs, exit codes and the text `scan` prints."""

from __future__ import annotations

import json
import os
import pty
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from analyzer.cli import main
from tests.realtb import capture, text_of

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _bad_config():
    raise ValueError("tp_size 3 does not divide 32 attention heads")


def _oom():
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")


BAD = text_of(capture(_bad_config))
OOM = text_of(capture(_oom))


def _scan(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["scan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- inputs and exit codes -------------------------------------------------------------------------

def test_an_empty_directory_fails_the_gate_with_a_clear_line(capsys, tmp_path):
    code, out, err = _scan(capsys, "--fail-on", "any", str(tmp_path))
    assert code == 2
    assert f"{tmp_path}: a directory with no files to read" in err
    assert "No errors found" not in out


def test_a_missing_file_says_so_and_exits_2(capsys, tmp_path):
    code, out, err = _scan(capsys, str(tmp_path / "nowhere.log"))
    assert code == 2
    assert "nowhere.log: no such file or directory" in err
    assert "No errors found" not in out


def test_the_same_file_named_three_times_is_read_once(capsys, tmp_path):
    log = tmp_path / "server.log"
    log.write_text(BAD)
    code, out, _ = _scan(capsys, str(log), str(log), str(tmp_path / "." / "server.log"))
    assert code == 0
    assert "1 file(s), 1 error event(s), 1 incident(s)" in out


def test_a_binary_file_is_reported_as_binary(capsys, tmp_path):
    blob = tmp_path / "core.bin"
    blob.write_bytes(bytes(range(256)) * 64 + BAD.encode())
    code, out, err = _scan(capsys, str(blob))
    assert f"analyzer: warning: {blob}: binary, not a log: skipped" in err.splitlines()
    assert "ValueError" not in out and code == 0


def test_a_short_binary_file_is_reported_too(capsys, tmp_path):
    blob = tmp_path / "tiny.bin"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd\x01\x02\x03\x04")
    _, _, err = _scan(capsys, str(blob))
    assert "binary, not a log" in err


def test_window_refuses_negative_values_and_shows_its_default(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["scan", "--window", "-5", "x.log"])
    assert stop.value.code == 2
    assert "must be 0 or more seconds" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: 600)" in help_text
    assert "jsonl: one JSON object per incident" in help_text  # --format has help text


def _lines_of(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        into.put(line.decode())
    into.put(None)


def _next(lines: queue.Queue, want) -> str:
    """The next line that `want`s; the wait is a hang guard, not a measurement."""
    while True:
        line = lines.get(timeout=60)
        assert line is not None, "the command ended"
        if want(line):
            return line


def _follow(tmp_path: Path, target: Path, *extra: str):
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "--follow", "--format", "jsonl", *extra,
                             str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path)
    out: queue.Queue = queue.Queue()
    err: queue.Queue = queue.Queue()
    threading.Thread(target=_lines_of, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_lines_of, args=(proc.stderr, err), daemon=True).start()
    return proc, out, err


def _stop(proc, err: queue.Queue) -> list[str]:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    lines = []
    while (line := err.get(timeout=60)) is not None:
        lines.append(line.rstrip("\n"))
    return lines


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_follow_waits_for_a_missing_file_like_tail_F(tmp_path):
    log = tmp_path / "later.log"
    proc, out, err = _follow(tmp_path, log)
    try:
        _next(err, lambda line: "waiting for it to appear" in line)  # it is waiting, not gone
        log.write_text(BAD)
        incident = json.loads(_next(out, lambda line: line.startswith("{")))
        assert incident["exception_type"] == "ValueError" and incident["source"]["file"] == str(log)
    finally:
        warnings = _stop(proc, err)
    assert proc.returncode == 130
    assert sum("waiting for it to appear" in line for line in warnings) == 0  # said once, read above


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_follow_of_a_directory_waits_and_picks_up_files_created_later(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    proc, out, err = _follow(tmp_path, runs)
    try:
        (runs / "rank0.log").write_text(BAD)
        first = json.loads(_next(out, lambda line: line.startswith("{")))
        assert first["source"]["file"] == str(runs / "rank0.log")
        (runs / "sub").mkdir()
        (runs / "sub" / "rank1.log").write_text(OOM)
        second = json.loads(_next(out, lambda line: "CUDA out of memory" in line))
        assert second["source"]["file"] == str(runs / "sub" / "rank1.log")
    finally:
        warnings = _stop(proc, err)
    assert proc.returncode == 130
    assert not [line for line in warnings if "no files to read" in line]


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_scan_dash_on_a_terminal_says_it_reads_standard_input():
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "-"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    os.close(follower)
    err: queue.Queue = queue.Queue()
    threading.Thread(target=_lines_of, args=(proc.stderr, err), daemon=True).start()
    try:
        assert "reading standard input" in _next(err, lambda line: "analyzer:" in line)
    finally:
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        proc.communicate(timeout=60)
        os.close(leader)
    assert proc.returncode == 0


def test_stream_repeats_name_the_rank_that_just_failed(tmp_path):
    prefixed = "".join(f"[rank{rank}]: {line}\n" for rank in (0, 1) for line in BAD.splitlines())
    done = subprocess.run([sys.executable, "-m", "analyzer", "scan", "-"], input=prefixed.encode(),
                          capture_output=True, env=ENV, timeout=120, check=False)
    assert "I1 again (2×), latest on rank1" in done.stdout.decode()


# -- text output --------------------------------------------------------------------------------

LOGS = ROOT / "fixtures" / "logs"


def test_argparse_incidents_lead_with_the_error_and_offer_the_close_choice(capsys):
    _, out, _ = _scan(capsys, str(LOGS / "sglang_argparse_invalid_choice.log"))
    lines = out.splitlines()
    assert lines[1].startswith("  argument --moe-a2a-backend: invalid choice: 'deepep3'")
    assert lines[2].startswith("  usage: ")  # kept, after the error it came with
    values = next(line for line in lines if "Your values:" in line)
    assert values == "  Your values: argument='--moe-a2a-backend', value='deepep3'; did you mean 'deepep'?"


def test_your_values_leave_out_a_long_quote_of_the_message():
    from analyzer.core.schema import Pattern
    from analyzer.core.view import explanation

    tail = "Including non-PyTorch memory, this process has 78.15 GiB memory in use."
    message = f"CUDA out of memory. Tried to allocate 2.50 GiB. {tail}"
    pattern = Pattern(id="demo.oom", exception="torch.OutOfMemoryError",
                      template="CUDA out of memory. Tried to allocate {size}. {details}")
    found = explanation(pattern, {"size": "2.50 GiB", "details": tail}, message=message)
    assert [(value.name, value.shown) for value in found.values] == [("size", "'2.50 GiB'")]
    assert found.hint is None
    near = explanation(pattern, {"backend": "mooncak", "allowed": ("mooncake", "deepep")})
    assert near.hint == "did you mean 'mooncake'?"
    assert explanation(pattern, {"backend": "zzz", "allowed": ("mooncake", "deepep")}).hint is None


def test_stdin_does_not_point_at_a_root_cause_above_before_one_was_seen():
    from fixtures.generate import nccl_timeout_traceback

    log = "".join(f"[2026-08-28 10:20:00 TP0] {line}\n" for line in nccl_timeout_traceback(0, 48211, 600041)
                  .splitlines())
    done = subprocess.run([sys.executable, "-m", "analyzer", "scan", "-"], input=log.encode(), capture_output=True,
                          env=ENV, timeout=120, check=False)
    out = done.stdout.decode()
    assert "CONSEQUENCE" in out and "no root cause seen yet" in out
    assert "ROOT CAUSE above" not in out and "ROOT CAUSE incident above" not in out
    assert "ROOT CAUSE (none seen yet)" in out  # the fix's pointer, reworded


def test_the_analyzers_own_usage_errors_lead_with_the_error_and_suggest(capsys):
    for argv, close in ((["scna", "x.log"], "scan"), (["scan", "--format", "jsn", "x.log"], "json"),
                        (["report", "--by", "hots", "x"], "host")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and err.startswith("analyzer: error: argument ") and err.count("\n") == 1
        assert f"did you mean '{close}'?" in err
    with pytest.raises(SystemExit):
        main(["scan", "--format", "zzzzzz", "x.log"])
    assert "did you mean" not in capsys.readouterr().err


def test_patterns_extract_help_is_plain_and_a_missing_package_exits_2(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["patterns", "extract", "--help"])
    assert "``" not in capsys.readouterr().out
    code = main(["patterns", "extract", "--package", "nosuchpkg_for_analyzer_tests", "-o", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("analyzer: error: ") and "nosuchpkg_for_analyzer_tests" in err
