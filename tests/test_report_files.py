"""Per-file scanning for the report: runs from paths, file health, versions, same result as `scan`."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from analyzer.core.versions import detect_version
from analyzer.engine import Options
from analyzer.report import incidents_frame
from analyzer.report.filescan import scan_batch
from analyzer.report.runs import PathLayout, discover
from analyzer.sinks.serialize import incident_dict
from analyzer.sources.sniff import TextSniffer
from tests.realtb import capture, text_of
from tests.support import builtin_engine

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"


def scan_one(path: Path):
    (result,) = scan_batch([str(path)], Options()).results
    return result


def real_traceback() -> str:
    def load(config):
        return config["max_total_tokens"]

    return text_of(capture(lambda: load({})))


# ---------------------------------------------------------------- runs from paths
def test_default_layout_names_runs_by_directory_and_reads_the_date(tmp_path):
    layout = PathLayout()
    root = str(tmp_path / "fleet")
    nested = layout.describe(f"{root}/2026-08-28/node-3/run-42/server.log", root)
    assert (nested.run, nested.date, nested.host) == (f"{root}/2026-08-28/node-3/run-42", date(2026, 8, 28), None)
    flat = layout.describe(f"{root}/job-7.log", root)
    assert flat.run == f"{root}/job-7.log" and flat.date is None
    given = layout.describe("server.log", "server.log")
    assert given.run == "server.log"


def test_path_regex_names_run_host_date_and_version(tmp_path):
    layout = PathLayout(r"(?P<version>v[\d.]+)/(?P<date>\d{8})/(?P<host>[^/]+)/(?P<run>[^/]+)/")
    found = layout.describe("logs/v0.5.23/20260828/gpu-7/job-1/rank0.log", "logs")
    assert (found.run, found.host, found.date, found.version) == ("job-1", "gpu-7", date(2026, 8, 28), "v0.5.23")
    unmatched = layout.describe("logs/other/rank0.log", "logs")
    assert unmatched.run == "logs/other" and unmatched.host is None


@pytest.mark.parametrize(("regex", "message"), [
    ("(?P<node>x)", "path regex group(s) node not known"),
    ("(?P<run>", "invalid path regex"),
])
def test_a_bad_path_regex_is_a_clear_error(regex, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PathLayout(regex)


def test_discovery_keeps_unreadable_entries_and_reports_loops(tmp_path):
    (tmp_path / "run-1").mkdir()
    (tmp_path / "run-1" / "server.log").write_text("hello\n")
    (tmp_path / "run-1" / "notes.txt").write_text("x\n")
    os.symlink(tmp_path / "gone.log", tmp_path / "run-1" / "worker.log")
    os.symlink(tmp_path, tmp_path / "run-1" / "loop")
    problems: list[str] = []
    found = [p for p, _ in discover([str(tmp_path), str(tmp_path / "missing")], ("*.log",), problems.append)]
    assert found == [str(tmp_path / "run-1" / "server.log"), str(tmp_path / "run-1" / "worker.log")]
    assert [str(problem) for problem in problems] == [f"{tmp_path / 'run-1' / 'loop'}: symlink loop, skipped",
                        f"{tmp_path / 'missing'}: no such file or directory"]


# ---------------------------------------------------------------- file health
def test_a_readable_log_is_ok_with_its_incidents_version_and_start(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2026-08-28 09:00:00] sglang version 0.5.23\n" + real_traceback(), encoding="utf-8")
    result = scan_one(log)
    assert (result.status, result.detail, result.version) == ("ok", None, "sglang 0.5.23")
    assert result.started == "2026-08-28T09:00:00"
    assert [(i.exception_type, i.count) for i in result.incidents] == [("KeyError", 1)]
    assert result.size == log.stat().st_size and result.mtime_ns == log.stat().st_mtime_ns


@pytest.mark.parametrize(("content", "detail"), [
    (b"", "0 bytes"),
    (b"\n\n   \n", "only blank lines or NUL bytes"),
    (b"\x00" * 4096, "only blank lines or NUL bytes"),  # a file preallocated by a node that then crashed
])
def test_empty_logs(tmp_path, content, detail):
    log = tmp_path / "server.log"
    log.write_bytes(content)
    result = scan_one(log)
    assert (result.status, result.detail, result.incidents) == ("empty", detail, ())


def test_binary_files_are_told_from_logs(tmp_path):
    with open(sys.executable, "rb") as handle:
        executable = handle.read(200_000)  # a real binary: the interpreter running this test
    noise = random.Random(1).randbytes(3000)
    for name, content in (("python.bin", executable), ("noise.bin", noise),
                          ("noise.gz", gzip.compress(noise, mtime=0))):
        (tmp_path / name).write_bytes(content)
        assert scan_one(tmp_path / name).status == "binary", name


def test_utf16_and_ansi_coloured_logs_are_text(tmp_path):
    text = "\x1b[31m[2026-08-28 09:00:00] starting\x1b[0m\n" + real_traceback()
    log = tmp_path / "utf16.log"
    log.write_bytes(text.encode("utf-16"))
    result = scan_one(log)
    assert result.status == "ok" and [i.exception_type for i in result.incidents] == ["KeyError"]


def test_a_half_written_log_is_partial_and_its_errors_still_count(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(real_traceback() + "[2026-08-28 09:00:05] Shutting down the tok", encoding="utf-8")
    result = scan_one(log)
    assert result.status == "partial" and "ends mid-line" in result.detail
    assert [i.exception_type for i in result.incidents] == ["KeyError"]


def test_compressed_logs_whole_and_cut_short(tmp_path):
    whole = gzip.compress(real_traceback().encode(), mtime=0)
    (tmp_path / "whole.log.gz").write_bytes(whole)
    (tmp_path / "cut.log.gz").write_bytes(whole[: len(whole) // 2])
    assert scan_one(tmp_path / "whole.log.gz").status == "ok"  # a gzip trailer is not a cut-off line
    cut = scan_one(tmp_path / "cut.log.gz")
    assert cut.status == "partial" and cut.detail.startswith("read stopped early")


def test_links_to_nowhere_and_pipes_are_unreadable_without_blocking(tmp_path):
    os.symlink(tmp_path / "rotated-away.log", tmp_path / "server.log")
    os.mkfifo(tmp_path / "pipe.log")
    assert (scan_one(tmp_path / "server.log").status, scan_one(tmp_path / "server.log").detail) == (
        "unreadable", "broken link")
    assert (scan_one(tmp_path / "pipe.log").status, scan_one(tmp_path / "pipe.log").detail) == (
        "unreadable", "not a regular file")


@pytest.mark.parametrize(("line", "version"), [
    ("[2026-08-28 09:00:00] sglang version 0.5.23", "sglang 0.5.23"),
    ("INFO 12-01 10:00:00 [api_server.py:1090] vLLM API server version 0.9.1", "vllm 0.9.1"),
    ("sglang==0.5.23rc1", "sglang 0.5.23rc1"),
    ("SGLang version: v0.4.6.post1.", "sglang 0.4.6.post1"),
    ("[2026-08-28 09:00:00] Decode batch. #running-req: 42, version 3", None),
    ("torch version 2.8.0", None),
])
def test_version_banners(line, version):
    assert detect_version(line) == version


_VERSION_PIECES = ("sglang==0.4.6", "SGLang version 0.5.2", "vllm-0.8.3/", "Initializing a V0 LLM engine (v0.8.3) with",
                   "torch==2.3.0", "lmsysorg/sglang:v0.4.6-cu124", "\u017fglang==0.1.2", "  vllm    0.9.1  ", "\u0130stanbul",
                   "vLLM API server version 0.9.2", "pytorch version: 2.1", "\r", "\n", "\r\n", "\u2028", "x", " ", "version")


def test_a_version_is_found_as_reading_every_line_finds_it():
    """`detect_version` reads only the lines naming a project (found by plain search): the same
    answer as every line through `VersionSniffer.feed_versions`, whatever case, breaks and letters."""
    from analyzer.core.versions import SERVERS, VersionSniffer

    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(_VERSION_PIECES) for _ in range(rng.randrange(12)))
        sniffer = VersionSniffer()
        for line in text.splitlines():
            sniffer.feed_versions(line)
        server = next((p for p in sniffer.versions if p in SERVERS), None)
        assert detect_version(text) == (f"{server.value} {sniffer.versions[server]}" if server else None), text


# ---------------------------------------------------------------- same as `analyzer scan`
def test_each_files_rows_are_what_scan_reports_for_it():
    """`analyzer scan`'s own event source and analysis, file by file, against the frame's rows."""
    engine = builtin_engine()
    df = incidents_frame([str(LOGS)], jobs=1, cache=False)
    for log in sorted(LOGS.glob("*.log")):
        scanned = [incident_dict(incident) for incident in engine.analyse([str(log)]).incidents]
        rows = df[df["file"] == str(log)]
        assert list(rows["incident"]) == [i["id"] for i in scanned], log.name
        assert list(rows["fingerprint"]) == [i["fingerprint"] for i in scanned]
        assert list(rows["pattern_id"].astype(object).where(rows["pattern_id"].notna(), None)) == [
            i["pattern_id"] for i in scanned]
        assert list(rows["count"]) == [i["count"] for i in scanned]
        assert list(rows["role"]) == [i["role"] for i in scanned]
        assert list(rows["ranks"]) == [i["ranks"] for i in scanned]  # a list, as in the JSON


def test_each_row_agrees_field_by_field_with_scan_json(tmp_path, capsys):
    """The report's IncidentRow against `analyzer scan --format json` for the same files."""
    from analyzer.cli import main
    from analyzer.report.rows import MAX_MESSAGE, IncidentRow

    sites = {"raise_site": "raise_site", "blame_site": "blame_site"}
    for log in sorted(LOGS.glob("*.log")):
        assert main(["scan", "--format", "json", str(log)]) in (0, 1)
        scanned = json.loads(capsys.readouterr().out)
        (result,) = scan_batch([str(log)], Options()).results
        assert len(result.incidents) == len(scanned), log.name
        for row, data in zip(result.incidents, scanned):
            assert isinstance(row, IncidentRow)
            assert row.incident == data["id"] and row.ranks == tuple(data["ranks"])
            for name in ("pattern_id", "confidence", "fingerprint", "exception_type", "role", "is_run_root",
                         "caused_by", "severity", "count", "host", "first_seen", "last_seen", "truncated"):
                assert getattr(row, name) == data[name], (log.name, name)
            assert row.match_kind.value == data["match_kind"] and row.params == (data["params"] or {})
            message = data["message"]
            assert row.message == (message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + " …")
            assert (row.line_start, row.line_end) == (data["source"]["line_start"], data["source"]["line_end"])
            for field, key in sites.items():
                frame = data[key]
                assert getattr(row, field) == (f"{frame['relpath']}:{frame['line']}" if frame else None)
                assert getattr(row, field.replace("site", "function")) == (frame["function"] if frame else None)


def test_a_file_result_survives_its_json_and_carries_the_runs_configuration(tmp_path):
    from analyzer.report.filescan import FileResult

    log = tmp_path / "server.log"
    log.write_text("$ python -m sglang.launch_server --model-path /m --tp 2 --mem-fraction-static 0.8\n"
                   "[2026-08-28 09:00:00] server_args=ServerArgs(model_path='/m', tp_size=2, mem_fraction_static=0.8, "
                   "cuda_graph_bs=[1, 2, 4], quantization=None)\n" + real_traceback(), encoding="utf-8")
    result = scan_one(log)
    assert result.run is not None and result.run.get("mem_fraction_static") == 0.8
    assert result.run.command is not None and result.run.command.words[-1] == "0.8"
    again = FileResult.from_json(result.to_json())
    assert again.incidents == result.incidents and again.run.command == result.run.command
    assert dict(again.run.settings) == {**dict(result.run.settings), "cuda_graph_bs": [1, 2, 4]}  # JSON lists
    assert again == replace(result, run=again.run)


def test_the_sniffer_counts_each_odd_character_of_the_decoded_text():
    # (counted in the bytes: each control character decodes to itself, each invalid byte to U+FFFD)
    odd = re.compile("[\ufffd\x01-\x08\x0e-\x1a\x1c-\x1f]")
    rng = random.Random(3)
    alphabet = [b"a", b" ", b"\n", b"\t", b"\x1b[0m", b"\x00", b"\x01", b"\x07", b"\x0e", b"\x1f", b"\x7f", b"\xff",
                b"\xc3", b"\xc3\xa9", b"\xef\xbf\xbd", b"\xe2\x80", b"\xf0\x9f\x98\x80"]
    for _ in range(300):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 200)))
        sniffer = TextSniffer()
        sniffer.feed(data)
        assert sniffer.odd == len(odd.findall(data.decode("utf-8", "replace").replace("\x00", ""))), data
