"""Hostile and broken input, one test each.

Whatever comes in, the scan ends with a clear one-line message naming the file (and line where there
is one), goes on with the other inputs, and keeps its memory bounded. Huge inputs are made on the fly
(generators, sparse files); memory is checked by peak figures, never by time.
"""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import gzip
import io
import json
import os
import re
import subprocess
import sys
import traceback
import tracemalloc
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.core import triggers
from analyzer.core.assemble import TracebackAssembler
from analyzer.core.records import LogLine, SourceSpan
from analyzer.core.scan import events_from_lines
from analyzer.core.template import CompiledTemplate, compile_template
from analyzer.sources.lines import MAX_LINE, LineSplitter, split_lines
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.support import NO_NOTICES, builtin_engine

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
# Runs `analyzer` and reports its peak memory on stderr as the last line.
_MEASURED = ("import resource, sys\nfrom analyzer.cli import main\ncode = main(sys.argv[1:])\n"
             "sys.stderr.write(f'peak_rss_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
             "sys.exit(code)\n")


def _load_weights():
    raise RuntimeError("Error(s) in loading state_dict for LlamaForCausalLM: size mismatch for lm_head.weight")


def _bad_tp():
    raise ValueError("tp_size 3 does not divide 32 attention heads")


LOAD, BAD_TP = capture(_load_weights), capture(_bad_tp)


def _cli(*args: str, stdin: bytes | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`analyzer` in a subprocess; the timeout only guards against a hang."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, env=env, timeout=300, **kwargs)


def _scan_jsonl(capsys, *args: str) -> tuple[int, list[dict], list[str]]:
    code = main(["scan", "--format", "jsonl", *args])
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err.splitlines()


def _one_line_warnings(err: list[str]) -> None:
    assert err, "expected a warning"
    assert all(line.startswith("analyzer: ") for line in err), err


# ----------------------------------------------------------------------------- size


def test_hundred_megabyte_line_keeps_memory_flat(tmp_path):
    """A 100 MB line (a dumped tensor) between two tracebacks, and a last line of 3 MB without a
    newline: both tracebacks are found, and the peak memory barely moves."""
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    body = text_of(LOAD) + text_of(BAD_TP)
    small.write_text(body)
    with open(big, "wb") as handle:
        handle.write(text_of(LOAD).encode())
        piece = b"128000, " * (MIB // 8)
        handle.write(b"[rank0]: generated token ids: ")
        for _ in range(100):
            handle.write(piece)
        handle.write(b"\n" + text_of(BAD_TP).encode() + piece * 3)
    runs = {}
    for path in (small, big):
        proc = _cli("-c", _MEASURED, "scan", "--format", "jsonl", str(path))
        assert proc.returncode == 0, proc.stderr[-2000:]
        incidents = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [i["exception_type"] for i in incidents] == ["RuntimeError", "ValueError"]
        runs[path] = int(proc.stderr.decode().rsplit("peak_rss_kb=", 1)[1]) * 1024
    assert runs[big] - runs[small] < 48 * MIB, runs


def test_gigabyte_without_a_newline_is_one_cut_line():
    chunk = b"x" * MIB  # the same chunk again and again: the input itself costs nothing

    tracemalloc.start()
    try:
        splitter = LineSplitter()
        for _ in range(1024):
            assert splitter.feed(chunk) == []
        last = splitter.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert last == "x" * MAX_LINE + f" [analyzer: line cut, {1024 * MIB - MAX_LINE} more bytes dropped]"
    assert peak < 8 * MIB


def test_gigabyte_hole_of_nuls_then_a_traceback(tmp_path, capsys):
    """A sparse file: 1 GB of NULs (what copytruncate leaves) and no newline before the traceback.
    The NULs are dropped before they count against the line cap, so the traceback is whole."""
    log = tmp_path / "copytruncated.log"
    with open(log, "wb") as handle:
        handle.seek(1 << 30)
        handle.write(text_of(BAD_TP).encode())
    code, incidents, _ = _scan_jsonl(capsys, str(log))
    assert code == 0
    (incident,) = incidents
    assert incident["message"] == "tp_size 3 does not divide 32 attention heads" and not incident["truncated"]
    assert incident["source"]["line_start"] == 1


def test_traceback_of_huge_lines_stays_within_the_assembler_budget():
    """3000 frame lines of 64 KiB: at its budget (of all open blocks together) the assembler leaves
    out the middle of the stack instead of holding 192 MiB, and says how much it left out: one
    record, its header and last frame kept. A small budget keeps this quick."""
    assembler = TracebackAssembler(max_held=8 * MIB)
    events = []
    tracemalloc.start()
    try:
        for number in range(3001):
            text = "Traceback (most recent call last):" if number == 0 else \
                f'  File "/srv/{"d" * 65536}/x.py", line {number}, in f'
            events += assembler.feed(LogLine(text, "wide.log", number + 1))
        events += assembler.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (event,) = events
    assert event.truncated and event.span == SourceSpan("wide.log", 1, 3001)
    assert event.lines[0] == "Traceback (most recent call last):" and event.lines[-1].endswith("line 3000, in f")
    assert event.elided == 3001 - len(event.lines)
    assert peak < 40 * MIB  # the block at its budget, the event made of it, and the next block


@pytest.mark.parametrize("where", ["after a source line", "on one line with its traceback"])
def test_a_megabyte_of_dotted_names_is_read_in_one_pass(where):
    """`a.a.a. ...` where an exception line may be: its type is read in one pass (a pattern that tried
    every split of the dotted name would take hours on this line), and the traceback is reported."""
    dotted = "A." * 500_000 + " z"
    lines = ["Traceback (most recent call last):", '  File "/srv/x.py", line 3, in f', "    f()", dotted]
    if where != "after a source line":
        lines = [" ".join(lines)]
    (event,) = events_from_lines(lines, "dotted.log", NO_NOTICES)
    assert event.root.frames[-1].lineno == 3


@pytest.mark.skipif(not triggers.available(), reason="hyperscan is not installed")
def test_a_line_full_of_loose_triggers_is_looked_through_once_per_kind(monkeypatch):
    """The fast path confirms the loose forms of its costliest patterns (a logged error's type and colon, an errno) in
    the line each is in: once per line and kind, however many the line holds (once per hit, 100 kB of `[Errno 1] `
    took 21 s; a megabyte, hours). The lines are reported as before."""
    searched: list[tuple[int, int]] = []

    class Counting:
        def __init__(self, pattern: re.Pattern[bytes]) -> None:
            self.pattern = pattern

        def search(self, buffer: bytes, start: int, end: int) -> re.Match[bytes] | None:
            searched.append((start, end))
            return self.pattern.search(buffer, start, end)

    finder = triggers.TriggerFinder(headed=True)
    for unit, reported in ((b"[Errno 1] ", False), (b"(aError: ", True), (b"ERROR [Errno 1] ", True), (b"x: aError: ", True)):
        line = unit * 5_000
        expected = finder.scan(line + b"\n" + line)
        with monkeypatch.context() as patched:
            patched.setattr(triggers, "_CONFIRMING", tuple(map(Counting, triggers._CONFIRMING)))
            searched.clear()
            assert finder.scan(line + b"\n" + line) == expected
        assert len(searched) == 2 and bool(expected) == reported, unit


def test_a_megabyte_of_modules_in_lower_case_is_read_in_one_pass():
    """`a.ba.ba.b...`: read as the modules before a class of any name (`pyarrow.lib.ArrowInvalid`), they were read
    back to the line's start at its end, where no capital begins a class (400 kB took 30 s, a megabyte hours)."""
    lines = ["a.b" * 350_000, "**" + "a.b" * 350_000, "ValueError: bad value"]
    events = events_from_lines(lines, "modules.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message) for event in events] == [("ValueError", "bad value")]
    # (`a.a.a. ... Error: x`, modules in lower case before a class: they were read back from the class at each dot,
    # 300 kB took 8 s; behind a prefix taught by the exception line, 15 s)
    for prefix in ("", "svc  | ", "2024-01-01 10:00:00 "):
        (event,) = events_from_lines([prefix + "a." * 150_000 + "Error: x"], "modules.log", NO_NOTICES)
        assert (event.root.short_type, event.root.message) == ("Error", "x")
    # (and in front of a frame line, which no prefix then opens: read as a grep margin's file name, or Snakemake's
    # modules before a class, from each dot back, 100 kB took 1.1 s)
    frame = '  File "/srv/app/worker.py", line 162, in load'
    assert list(events_from_lines(["a." * 150_000 + frame], "modules.log", NO_NOTICES)) == []


def test_a_megabyte_of_modules_logged_as_an_errors_type_alone_is_read_in_one_pass():
    """`name ERROR    a.a.a. ... Error:`: a logged error whose record says only its type (SageMaker's) reads the dotted
    name once; tried as modules before the class from each dot back, 200 kB took 1.6 s, a megabyte minutes."""
    lines = ["sagemaker-containers ERROR    " + "a." * 500_000 + "Error:", "Command \"x\""]
    assert list(events_from_lines(lines, "modules.log", NO_NOTICES)) == []


def test_a_megabyte_of_dashes_behind_a_dated_levelled_prefix_is_read_in_one_pass():
    """`| ERROR | - - - ...` and no exception line: where a prefix learned from the exception line behind
    it may end is looked for near the line's start only (trying every way to pair the dashes took 11 s
    on this line, hours on a 100 MB one)."""
    lines = ["2023-05-30 17:19:25 | ERROR | stderr |" + " - -" * 250_000 + " done",
             "2023-05-30 17:19:26 | ERROR | stderr | ValueError: bad value"]
    events = events_from_lines(lines, "dashes.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message, event.span.line_start) for event in events] == [
        ("ValueError", "bad value", 2)]


def test_lines_with_a_long_run_of_blanks_inside_are_read_in_one_pass():
    """pytest's `E` line, short frame and summary line, native crashes' lines (a Rust error and its causes, CUDA's,
    faulthandler's and its frames, C++'s `what()`), a frame line's rest, a report's field, a traceback's header and a
    group's, a traceback on one line, IPython's frame, a frame cut in its path, a source line padded to an exception's,
    a retry's report, with a run of blanks inside their text: what they say was read up to blanks that end it, each
    blank of the run tried to its end (30,000 tabs took 2 to 13 s a line, a megabyte's run hours); a long dotted name
    before a message CPython words, and a long run of brackets before a launch command's words, likewise. (Found by
    putting such runs into each line of the real logs.)"""
    tabs = "\t" * 300_000
    lines = [f"E   ValueError: bad{tabs}value", f"tests/x.py:12: in f{tabs}g", f"FAILED tests/x.py::t - ValueError: a{tabs}b",
             f"Error: a{tabs}b", f"   0: a{tabs}b", f"CUDA error: a{tabs}b", f"Fatal Python error: a{tabs}b",
             f'  File "x.py", line 3 in f{tabs}g', f"  what():  a{tabs}b", f'x.py", line 3, in f{tabs}g',
             f"Exception Value: a{tabs}b", f"Server error:{tabs} Traceback (most recent call last):",
             f"  + Exception Group{tabs}  + Exception Group Traceback (most recent call last):",
             f'Traceback (most recent call last): File "x.py", line 3, in f{tabs}x = 1 File "y.py", line 4, in g',
             f"File /x/sdk.py:453, in Client.logs(self,{tabs}job_id)", f'  File "/x/{tabs}y.py", line 3 in f',
             f"    return table[key]{tabs}x", f"Retrying f in 4.0 seconds as it raised KeyError: a{tabs}b.",
             f"{'a.' * 150_000}    ModuleNotFoundError: No module named 'venv'",
             f"{'(' * 300_000}from sglang.utils import launch_server_cmd",
             f"terminate called after throwing an instance of 'c10::Error'  what():  a{tabs}b"]
    read = [list(events_from_lines([line], "blanks.log", NO_NOTICES)) for line in lines]  # (each alone: a record may
    # take the lines after it)
    assert [(event.root.exception_type, event.root.message) for event in read[0]] == [("ValueError", f"bad{tabs}value")]
    assert [event.root.message for event in read[5]] == [f"CUDA error: a{tabs}b"]


def test_a_megabyte_long_name_of_dots_is_no_exception_printed_in_step():
    """`a..a..a..` then `Error: : ...`: the copies that ranks printing at once make are looked for in a
    class's name only as long as one is (each split of this one tried took two minutes)."""
    lines = ["a.." * 300_000 + "Error: : x x", "ValueError: bad value"]
    events = events_from_lines(lines, "dots.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message) for event in events][-1:] == [("ValueError", "bad value")]


def test_a_line_of_a_hundred_thousand_exception_names_is_no_name_printed_in_step():
    """`aError.aError... Error`, 700 kB: whether it opens with a name that two ranks wrote in step is told in one pass
    (a pattern took 0.4 s on 3,000 names, four times that on twice as many: minutes on this one)."""
    lines = ["aError." * 100_000 + " Error", "ValueError: bad value"]
    events = events_from_lines(lines, "names.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message) for event in events][-1:] == [("ValueError", "bad value")]


def test_megabyte_lines_of_what_may_be_glued_lines_are_read_in_one_pass():
    """A raise statement of a hundred thousand exception names, each inside its unclosed bracket (each tried
    from the line's start took minutes); a hundred thousand `File ` before one `, line` (a path is never
    longer than a few hundred characters); sixty thousand starts of a printed `exc_info` triple after its traceback
    object, and two hundred thousand of the tutorial's `{err=}` after its class (each read to the line's end: a
    minute); a hundred thousand starts of a markdown link, and two hundred thousand of its text, behind a notebook's
    arrow (each read to the line's end: half an hour); a hundred thousand colons, each read as the end of a kernel's
    path in a device-side assertion's line (a minute); three hundred thousand bars, each tried as the side that ends a
    row of Rich's box (a minute); a megabyte set in bold as a whole, its last character before the bold's end a blank
    (each place tried as that end: a minute)."""
    lines = ["raise (" + " ValueError: x" * 70_000, "File " * 200_000 + ", line 1",
             "<traceback object at 0x1 " + "(<class 'X'>, Y(" * 60_000, ")=<class 'X'>" + " a=B(" * 200_000,
             "--> " + "[1](f://x" * 100_000, "--> [" * 200_000 + "](", ":(" * 100_000, "| <" * 300_000,
             "**" + "\u2502 : " * 250_000 + "**", "ValueError: bad value"]
    events = events_from_lines(lines, "glued.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message) for event in events][-1:] == [("ValueError", "bad value")]


def test_a_row_of_bars_is_no_table_in_a_table():
    """A line of `|| ` pieces read as a table's row: each cell was read as a row of its own, a thousand deep
    (RecursionError)."""
    events = events_from_lines(["|| " * 3000 + "|", "| step | ValueError: bad value |"], "bars.log", NO_NOTICES)
    assert [(event.root.exception_type, event.root.message) for event in events] == [("ValueError", "bad value")]


def test_errors_that_each_point_to_the_other_as_the_one_told_with_its_text_end(tmp_path):
    """A fuzzer's input: a type alone whose text another line tells, which introduces the first again (each pointed
    the root to the other, a thousand deep: RecursionError)."""
    lines = ["2026-09-15T14:25:06.310000Z torch.distributed.elastic.multiprocessing.errors.ChildFaiLedError: ",
             "2026-09-15T14:25:06.310000Z     raise ChildFailedError(",
             "2026-09-15T14:25:06.310000Z torch.distributed.elastic.multiprocessing.errors.ChildFaiLedError: ",
             '2026-09-15T14:2\x05@File "/workspace/serve.py", line 142, in <module>']
    log = tmp_path / "cycle.log"
    log.write_text("\n".join(lines) + "\n")
    incidents = builtin_engine().analyse([str(log)]).incidents
    assert sum(incident.is_run_root for incident in incidents) == 1


def test_a_new_stream_on_every_line_costs_constant_time_and_bounded_memory():
    """Frames without a header, each from another pid: every line opens a block, and each stays
    open (its frames may go on) until the budget sheds the one idle longest, cut off."""
    assembler = TracebackAssembler(max_held=2 * MIB)
    events = []
    for pid in range(20000):
        line = LogLine('  File "/srv/x.py", line 1, in f', "pids.log", pid + 1, stream=f"pid={pid}#",
                       channel=f"pid={pid}")
        events += assembler.feed(line)
        assert assembler.pending <= 2 * MIB // 768  # a block costs the budget at least its record
    events += assembler.finish()
    assert sorted(event.span.line_start for event in events) == list(range(1, 20001))
    assert all(event.truncated for event in events)


# ----------------------------------------------------------------------------- encodings and bytes


def test_invalid_utf8_inside_and_around_a_traceback(tmp_path, capsys):
    text = text_of(BAD_TP).encode().replace(b"tp_size 3", b"tp_size \xff\xfe3\xc3")
    log = tmp_path / "broken.log"
    log.write_bytes(b"\xf0\x9f\nINFO 12-01 10:00:00 [a.py:1] \x80\x81 weights \xe2\x82\n" + text)
    code, (incident,), _ = _scan_jsonl(capsys, str(log))
    assert code == 0
    assert incident["message"] == "tp_size \ufffd\ufffd3\ufffd does not divide 32 attention heads"
    assert incident["raise_site"]["function"] == "_bad_tp"


UTF16 = {
    "le-with-mark": codecs.BOM_UTF16_LE + text_of(LOAD).encode("utf-16-le"),
    "be-with-mark": codecs.BOM_UTF16_BE + text_of(LOAD).encode("utf-16-be"),
    "le-without-mark": text_of(LOAD).encode("utf-16-le"),  # ASCII text: the NULs go, the text stays
}


@pytest.mark.parametrize("form", sorted(UTF16))
def test_utf16_logs_from_a_file_and_from_stdin(tmp_path, capsys, form):
    log = tmp_path / "windows.log"
    log.write_bytes(UTF16[form])
    code, (incident,), _ = _scan_jsonl(capsys, str(log))
    assert code == 0 and incident["exception_type"] == "RuntimeError" and not incident["truncated"]
    assert incident["raise_site"]["function"] == "_load_weights"
    if form == "le-with-mark":
        piped = _cli("-m", "analyzer", "scan", "--format", "jsonl", "-", stdin=UTF16[form])
        assert piped.returncode == 0, piped.stderr[-2000:]
        assert json.loads(piped.stdout.splitlines()[0])["raise_site"]["function"] == "_load_weights"


def test_nul_bytes_all_through_a_traceback():
    data = b"\x00".join(text_of(LOAD).encode()[i:i + 7] for i in range(0, len(text_of(LOAD).encode()), 7))
    (event,) = events_from_lines(split_lines([data]), "nul.log", NO_NOTICES)
    assert actual_chain(event.chain) == expected_chain(LOAD)


def test_hostile_json_lines(tmp_path):
    """JSON nested past the decoder's depth, half a surrogate pair, a message of 200,000 lines and a
    rank that reads as Rich markup: each line is read; the output is printable in every format."""
    records = [
        '{"message": ' + "[" * 100_000 + "]" * 100_000 + "}",
        json.dumps({"message": "ValueError: bad \ud800 value", "rank": "r\udc00"}),
        json.dumps({"message": "x\n" * 200_000, "level": "INFO"}),
        json.dumps({"message": "ValueError: markup", "rank": "[/bold]"}),
        json.dumps({"message": "ValueError: markup", "rank": "[red]"}),
    ]
    log = tmp_path / "records.jsonl"
    log.write_text("\n".join(records) + "\n", encoding="utf-8", errors="surrogatepass")
    for fmt in ("text", "jsonl"):
        proc = _cli("-m", "analyzer", "scan", "--format", fmt, str(log))
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        assert b"Traceback" not in proc.stderr
    incidents = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [i["message"] for i in incidents] == ["bad \ufffd value", "markup"]
    assert incidents[1]["ranks"] == ["[/bold]", "[red]"]


def test_exception_groups_nested_four_hundred_deep():
    """Formatted for real with max_group_depth raised; CPython prints 10 levels by default."""
    try:
        raise ValueError("leaf")
    except ValueError as leaf:
        error: BaseException = leaf
    for level in range(400):
        try:
            raise ExceptionGroup(f"level {level}", [error])
        except ExceptionGroup as group:
            error = group
    text = "".join(traceback.TracebackException.from_exception(error, max_group_depth=1000).format())
    (event,) = events_from_lines(text.splitlines(), "groups.log", NO_NOTICES)
    assert event.root.exception_type == "ExceptionGroup" and event.root.message == "level 399 (1 sub-exception)"


# ----------------------------------------------------------------------------- directories and compression


def _without_read_override() -> None:
    """Root reads any file: in the child, drop the capabilities that let it (prctl PR_CAPBSET_DROP of
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH; the program run next starts without them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            os._exit(99)  # cannot drop them here; the test is skipped


def test_directory_with_unreadable_files_and_symlink_loops(tmp_path):
    """Exit 2 (some input could not be read), one line per problem naming the path, and every
    readable file scanned."""
    root = tmp_path / "logs"
    (root / "node1").mkdir(parents=True)
    (root / "node1" / "server.log").write_text(text_of(BAD_TP))
    (root / "node2.log").write_text(text_of(LOAD))
    secret = root / "node1" / "secret.log"
    secret.write_text(text_of(LOAD))
    secret.chmod(0)
    (root / "node1" / "loop").symlink_to(root)
    (root / "self.log").symlink_to(root / "self.log")
    proc = _cli("-m", "analyzer", "scan", "--format", "jsonl", "--no-builtin", str(root),
                preexec_fn=_without_read_override if os.geteuid() == 0 else None)
    if proc.returncode == 99:
        pytest.skip("running as root, and root's right to read any file cannot be dropped here")
    assert proc.returncode == 2, proc.stderr.decode()[-2000:]
    found = sorted(json.loads(line)["exception_type"] for line in proc.stdout.splitlines())
    assert found == ["RuntimeError", "ValueError"]
    err = proc.stderr.decode().splitlines()
    _one_line_warnings(err)
    assert f"analyzer: warning: {secret}: permission denied, skipped" in err
    assert any(line.startswith(f"analyzer: warning: {root / 'node1' / 'loop'}: symlink loop") for line in err)
    assert any(line.startswith(f"analyzer: warning: {root / 'self.log'}: ") for line in err)


def test_gzip_cut_in_the_middle(tmp_path, capsys):
    body = (text_of(LOAD) + "INFO 12-01 10:00:00 [a.py:1] steady state\n" * 50_000 + text_of(BAD_TP)).encode()
    packed = gzip.compress(body)
    cut = tmp_path / "server.log.2.gz"
    cut.write_bytes(packed[:len(packed) // 2])
    whole = tmp_path / "server.log"
    whole.write_text(text_of(BAD_TP))
    code, incidents, err = _scan_jsonl(capsys, str(cut), str(whole))
    assert code == 0  # read in part: a warning, not a failure to read
    assert sorted(i["exception_type"] for i in incidents) == ["RuntimeError", "ValueError"]
    assert err == [f"analyzer: warning: {cut}: read stopped early: "
                   "Compressed file ended before the end-of-stream marker was reached"]


def test_ranks_named_with_digits_int_refuses_are_ordered(tmp_path, capsys):
    """A rank may hold a character that is a digit to Python but no number (`➀`, found by fuzzing): the
    incident's ranks are still put in order."""
    lines = text_of(BAD_TP).splitlines()
    log = tmp_path / "heroku.log"
    log.write_text("".join(f"2019-09-18T13:31:13.946164+00:00 app[{dyno}]: {line}\n"
                           for dyno in ("web.\u2780", "web.2", "web.10") for line in lines))
    code, incidents, _ = _scan_jsonl(capsys, str(log))
    (ranks,) = [i["ranks"] for i in incidents]
    assert code == 0 and len(ranks) == 3 and ranks.index("web.2") < ranks.index("web.10")  # (in number order)


# ----------------------------------------------------------------------------- pattern packs


def test_catastrophic_template_is_cut_off_by_the_regex_timeout(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "slow.yaml").write_text(
        "patterns:\n"
        "  - id: user.eight-adjacent-fields\n"
        "    exception: RuntimeError\n"
        '    template: "worker {a}{b}{c}{d}{e}{f}{g}{h} failed"\n')
    message = "worker " + "x" * 300 + " failed."
    assert compile_template("worker {a}{b}{c}{d}{e}{f}{g}{h} failed").match(message) is None
    log = tmp_path / "run.log"
    log.write_text("".join(f"RuntimeError: {message[:-1]}{'y' * n}.\n" for n in range(5)))
    proc = _cli("-m", "analyzer", "scan", "--format", "jsonl", "--no-builtin", "--patterns", str(pack), str(log))
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert {json.loads(line)["match_kind"] for line in proc.stdout.splitlines()} <= {"unknown", "fuzzy"}


BROKEN_PACKS = {
    "syntax.yaml": ("patterns:\n  - id: x\n    exception: [unclosed\n", ":4: invalid YAML"),  # found at the end
    "tab.yaml": ("patterns:\n\t- id: x\n", ":2: invalid YAML"),
    "control.yaml": ("patterns:\n  - id: a\x01b\n", ":2: invalid YAML"),
    "latin1.yaml": ("patterns:\n  - {id: caf\xe9}\n".encode("latin-1"), ":2: not UTF-8 text (byte 0xe9)"),
    "list.yaml": ("- just\n- a list\n", ":1: a pack file must be a mapping with a 'patterns' list"),
    "deep.yaml": ("patterns: " + "[" * 5000 + "]" * 5000 + "\n", ":1: invalid YAML"),
    "types.yaml": ("patterns:\n  - id: 404\n    exception: ValueError\n    template: t\n    fixes: 5\n"
                   "    related: 7\n", ":2: 'fixes' in pattern must be list, got int"),
    "bomb.yaml": ("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                  + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
                  + "patterns:\n  - {id: bomb, exception: E, template: t, tags: *i}\n",
                  ":11: 'tags' must be a list of strings"),
}


def test_malformed_pattern_files_are_skipped_one_line_each(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pack = tmp_path / "pack"
    pack.mkdir()
    for name, (content, _) in BROKEN_PACKS.items():
        (pack / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    (pack / "good.yaml").write_text("patterns:\n  - id: user.bad-tp\n    exception: ValueError\n"
                                    '    template: "tp_size {tp:d} does not divide {heads:d} attention heads"\n')
    log = tmp_path / "run.log"
    log.write_text(text_of(BAD_TP))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["scan", "--format", "jsonl", "--no-builtin", "--patterns", str(pack), str(log)])
    assert code == 0
    assert json.loads(out.getvalue())["pattern_id"] == "user.bad-tp"
    warnings = err.getvalue().splitlines()
    _one_line_warnings(warnings)
    for name, (_, where) in BROKEN_PACKS.items():
        prefix = f"analyzer: warning: pattern skipped: {pack / name}{where}"
        assert any(line.startswith(prefix) for line in warnings), (prefix, warnings)


@pytest.mark.slow
def test_pack_of_a_hundred_thousand_patterns(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pack = tmp_path / "pack"
    pack.mkdir()
    with open(pack / "generated.yaml", "w") as handle:
        handle.write("schema: 1\nproject: stress\npatterns:\n")
        for index in range(100_000):
            handle.write(f'  - {{"id": "stress.e{index}", "exception": "RuntimeError", '
                         f'"template": "stage {index} of {{name}} failed with code {{code:d}}"}}\n')
        handle.write("  - {id: stress.broken, exception: RuntimeError, role: maybe, template: t}\n")
    log = tmp_path / "run.log"
    log.write_text("RuntimeError: stage 99999 of 'warmup' failed with code 7\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["scan", "--format", "jsonl", "--no-builtin", "--patterns", str(pack), str(log)])
    assert code == 0
    incident = json.loads(out.getvalue())
    assert (incident["pattern_id"], incident["params"]) == ("stress.e99999", {"name": "'warmup'", "code": 7})
    assert err.getvalue().splitlines() == [
        f"analyzer: warning: pattern skipped: {pack / 'generated.yaml'}:100004: "
        "'role' must be one of root, consequence, got 'maybe'"]


def test_a_backtracking_user_template_costs_one_timeout_per_run(tmp_path, capsys, monkeypatch):
    """Each matching line would pay the template's time limit again: after it times out on the first
    message (and on a longer retry there, in case the machine stalled) the pattern is given up on
    for the run, with one warning naming it."""
    pack = tmp_path / "pack.yaml"
    pack.write_text("patterns:\n  - id: user.slow\n    exception: RuntimeError\n"
                    "    template: 'stage {a}{b}{c}{d}{e}{f}{g}{h}!'\n    examples: ['stage abcdefgh!']\n")
    log = tmp_path / "run.log"
    log.write_text("".join(f"RuntimeError: stage {'x' * 3000}{i}!y\n" for i in range(200)))
    calls = []
    real = CompiledTemplate.match

    def counted(self, message, timeout=0.05, raise_timeout=False):
        calls.append(self.template)
        return real(self, message, timeout, raise_timeout)

    monkeypatch.setattr(CompiledTemplate, "match", counted)
    assert main(["scan", "--no-builtin", "--patterns", str(pack), "--format", "jsonl", str(log)]) == 0
    err = capsys.readouterr().err
    assert calls.count("stage {a}{b}{c}{d}{e}{f}{g}{h}!") == 2  # the first message: a try and a longer retry
    assert err.count("pattern user.slow") == 1 and "not used for the rest of this run" in err
