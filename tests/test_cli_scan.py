"""`analyzer scan` end to end on the fixture logs: human, JSON, exit codes, pipes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import main

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
JSON_KEYS = {
    "id", "exception_type", "message", "raise_site", "chain", "kind", "context", "ranks", "count",
    "first_seen", "last_seen", "host", "source", "occurrences", "occurrences_sampled",
    "count_by_file", "count_by_rank", "truncated", "elided", "inferred", "pattern_id", "sub_exception_pattern_ids",
    "match_kind",
    "confidence", "evidence", "params", "meaning", "fixes", "pattern_source", "releases", "severity", "role",
    "is_run_root",
    "caused_by", "fingerprint", "blame_site",
}


def scan_json(capsys, *args):
    code = main(["scan", "--format", "jsonl", *args])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_seed_000_names_pattern_source_and_fix_with_user_values(capsys):
    code, (incident,) = scan_json(capsys, str(LOGS / "sglang_deepseek_v4_cp_a2a.log"))
    assert code == 0
    assert set(incident) == JSON_KEYS
    assert incident["pattern_id"] == "sglang.deepseek-v4-cp-a2a-backend"
    assert incident["match_kind"] == "exact"
    assert incident["params"] == {"supported_a2a_backends": ["none", "deepep", "megamoe", "mori"],
                                  "moe_a2a_backend": "flashinfer_tkv"}
    assert incident["raise_site"]["relpath"] == "sglang/srt/arg_groups/deepseek_v4_hook.py"
    assert incident["raise_site"]["line"] == 231
    assert incident["raise_site"]["function"] == "validate_deepseek_v4_cp"
    assert incident["pattern_source"]["path"] == "sglang/srt/arg_groups/deepseek_v4_hook.py"
    first_fix = incident["fixes"][0]
    assert "flashinfer_tkv" in first_fix["text"] and "none, deepep, megamoe or mori" in first_fix["text"]
    assert first_fix["before"] == "--enable-prefill-cp --moe-a2a-backend flashinfer_tkv"


def test_seed_004_through_container_prefixes(capsys):
    code, (incident,) = scan_json(capsys, str(LOGS / "sglang_deepep_v2_deterministic.log"))
    assert incident["pattern_id"] == "sglang.deepep-v2-deterministic"
    assert incident["raise_site"]["line"] == 7701
    afters = [fix["after"] for fix in incident["fixes"]]
    assert "--moe-a2a-backend deepep_v2" in afters
    assert "--moe-a2a-backend deepep --enable-deterministic-inference" in afters


def test_eight_rank_crash_groups_echoes_and_finds_root(capsys):
    code, incidents = scan_json(capsys, str(LOGS / "sglang_8rank_scheduler_crash.log"))
    by_pattern = {i["pattern_id"]: i for i in incidents}
    oom = by_pattern["torch.cuda-out-of-memory"]
    timeout = by_pattern["torch.nccl-watchdog-timeout"]
    assert oom["is_run_root"] and oom["ranks"] == ["TP3"] and oom["role"] == "root"
    assert timeout["count"] == 7 and timeout["role"] == "consequence"
    assert timeout["ranks"] == ["TP0", "TP1", "TP2", "TP4", "TP5", "TP6", "TP7"]
    assert timeout["caused_by"] == oom["id"]
    assert oom["context"] == "Scheduler hit an exception:"
    assert oom["first_seen"] == "2026-08-28T10:10:00"


def test_chained_error_keeps_both_links_root_first(capsys):
    _, (incident, sigquit) = scan_json(capsys, str(LOGS / "sglang_chained_weight_loading.log"))
    assert sigquit["kind"] == "notice" and sigquit["caused_by"] == incident["id"]
    assert [link["exception_type"] for link in incident["chain"]] == ["KeyError", "RuntimeError"]
    assert [link["link"] for link in incident["chain"]] == ["first", "cause"]
    assert incident["count"] == 2 and incident["ranks"] == ["TP0", "TP1"]


def test_human_output_leads_with_root_cause(capsys):
    assert main(["scan", str(LOGS / "sglang_8rank_scheduler_crash.log")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("● ROOT CAUSE I1 torch.OutOfMemoryError ×1 on TP3")
    assert "followed by 3 consequence incident(s)" in out  # the NCCL timeouts and two notices
    assert "Received sigquit from a child process" in out
    assert "Lower the static memory fraction so that GPU 3 keeps more than 1.02 GiB free." in out


def test_fail_on_and_exit_codes(capsys, tmp_path):
    log = str(LOGS / "torchrun_interleaved.log")
    assert main(["scan", "--fail-on", "any", log]) == 1
    assert main(["scan", "--fail-on", "unknown", log]) == 1
    assert main(["scan", "--fail-on", "unknown", str(LOGS / "sglang_deepseek_v4_cp_a2a.log")]) == 0
    clean = tmp_path / "clean.log"
    clean.write_text("INFO all good\n")
    assert main(["scan", "--fail-on", "any", str(clean)]) == 0
    assert main(["scan", str(tmp_path / "missing.log"), str(clean)]) == 2
    assert "missing.log: no such file or directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["scan", "--format", "xml", str(clean)])
    assert usage.value.code == 2


def test_directories_and_compressed_files(capsys, tmp_path):
    source = (LOGS / "sglang_deepseek_v4_cp_a2a.log").read_bytes()
    nested = tmp_path / "runs" / "a"
    nested.mkdir(parents=True)
    with gzip.open(nested / "server.log.1", "wb") as handle:  # compressed, named without .gz
        handle.write(source)
    (tmp_path / "runs" / "b.log").write_bytes(source)
    _, incidents = scan_json(capsys, str(tmp_path / "runs"))
    assert len(incidents) == 2 and all(i["count"] == 1 and i["is_run_root"] for i in incidents)  # a run per file
    assert {i["occurrences"][0]["file"].rsplit("/", 1)[-1] for i in incidents} == {"server.log.1", "b.log"}


def _run_cli(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(LOGS.parent.parent))
    return subprocess.run([sys.executable, "-m", "analyzer", *args], capture_output=True, env=env, **kw)


def test_stdin_and_broken_pipe_end_quietly(tmp_path):
    big = tmp_path / "big.log"
    body = (LOGS / "torchrun_interleaved.log").read_text()
    big.write_text(body * 300)
    proc = subprocess.Popen(f"'{sys.executable}' -m analyzer scan --all {big} | head -n 2", shell=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(LOGS.parent.parent)))
    out, err = proc.communicate(timeout=120)
    assert len(out.splitlines()) == 2
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    quiet = subprocess.run(f"'{sys.executable}' -m analyzer scan --all {big} | head -n 1 >/dev/null; "
                           "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                           env=dict(os.environ, PYTHONPATH=str(LOGS.parent.parent)), timeout=120)
    assert quiet.returncode == 0, quiet.stderr
    piped = _run_cli(["scan", "--format", "jsonl", "-"], input=(LOGS / "sglang_deepseek_v4_cp_a2a.log").read_bytes(),
                     timeout=120)
    assert piped.returncode == 0
    incident = json.loads(piped.stdout.splitlines()[0])
    assert incident["pattern_id"] == "sglang.deepseek-v4-cp-a2a-backend"


def test_follow_prints_incidents_as_they_come_and_ctrl_c_ends_cleanly(tmp_path):
    import select
    import signal
    import time

    log = tmp_path / "server.log"
    log.write_text("[2026-08-28 10:00:00] starting\n")
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "scan", "--follow", "--format", "jsonl", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(LOGS.parent.parent)))
    try:
        with log.open("a") as handle:  # appended while the scan runs, as a server would
            handle.write((LOGS / "sglang_deepseek_v4_cp_a2a.log").read_text())
        deadline = time.monotonic() + 60
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line += proc.stdout.readline()
        assert line, "no incident printed within 60 s"
        assert json.loads(line)["pattern_id"] == "sglang.deepseek-v4-cp-a2a-backend"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err.decode(errors="replace")  # (what it said, should this ever fail)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode(errors="replace")


class _BreaksAtTheEnd:
    """A file's fast-path scanner that hands out what it finds until the input ends, then breaks: a bug met there."""

    def __init__(self, scanner):
        self._scanner = scanner

    def __getattr__(self, name):
        return getattr(self._scanner, name)

    def finish(self):
        raise TypeError("a bug met at the end of the input")


def _breaking_at_the_end(monkeypatch, name: str) -> None:
    from analyzer.engine import Engine

    made = Engine.chunk_scanner
    monkeypatch.setattr(Engine, "chunk_scanner", lambda self, path, live=False, status=None: (
        _BreaksAtTheEnd(made(self, path, live, status)) if Path(path).name == name else made(self, path, live, status)))


def test_a_scan_that_breaks_on_one_input_says_so_and_reads_the_others(capsys, monkeypatch, tmp_path):
    from tests.realtb import capture, text_of

    first, second = capture(lambda: {}["first"]), capture(lambda: int("second"))
    broken = tmp_path / "broken.log"  # the first error ends where the second begins: out before the scan breaks
    broken.write_text(f"INFO start\n{text_of(first)}{text_of(second)}")
    _breaking_at_the_end(monkeypatch, "broken.log")
    code = main(["scan", "--format", "jsonl", str(broken), str(LOGS / "sglang_deepseek_v4_cp_a2a.log")])
    out, err = capsys.readouterr()
    incidents = [json.loads(line) for line in out.splitlines()]
    assert code == 2  # (an input not read to its end: as one not read at all)
    assert f"{broken}:" in err and "the scan broke after this line" in err and "TypeError" in err, err
    found = sorted((i["exception_type"], i["message"]) for i in incidents)  # (the second error, held to the end: lost)
    assert [kind for kind, _ in found] == ["KeyError", "ValueError"] and found[0][1] == "'first'"
    assert not any("second" in message for _, message in found), found


def test_a_followed_input_whose_scan_breaks_is_told_once_and_read_no_more(monkeypatch, tmp_path):
    import time

    from analyzer.engine import Engine
    from analyzer.sources.problems import ProblemKind
    from tests.realtb import capture, text_of

    log = tmp_path / "followed.log"
    log.write_text(text_of(capture(lambda: {}["first"])))
    made = Engine.chunk_scanner

    class _Breaks(_BreaksAtTheEnd):
        def feed(self, text):
            raise TypeError("a bug met on the first chunk")

    monkeypatch.setattr(Engine, "chunk_scanner", lambda self, path, live=False, status=None: _Breaks(made(self, path, live, status)))
    problems = []
    deadline = time.monotonic() + 1.5  # (several idle ticks after the chunk: each would call the broken scanner)
    events = list(Engine().events([str(log)], problems.append, follow=True, stopped=lambda: time.monotonic() > deadline))
    assert events == []
    assert [(p.kind, p.where) for p in problems] == [(ProblemKind.INTERNAL, f"{log}:0")], problems
