"""The TUI's pieces without a screen: view rules, rank ranges, the log window, the live scan's
progress and stop, and the `analyzer tui` command's wiring."""

from __future__ import annotations

import gzip
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.core.incidents import link_causes
from analyzer.core.scan import FileScanner
from analyzer.sources.files import read_lines
from analyzer.tui import app as app_module
from analyzer.tui.context import numbered_lines, read_window
from analyzer.tui.incident_table import compact_ranks
from analyzer.tui.live import LiveScan
from analyzer.tui.log_pane import window_text
from analyzer.tui.status import Throughput
from analyzer.tui.view import ViewState, visible
from tests.support import NO_NOTICES, bare_engine, builtin_engine

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CRASH = LOGS / "sglang_8rank_scheduler_crash.log"
CHAINED = LOGS / "sglang_chained_weight_loading.log"
INFO = "[2026-08-28 10:00:{:02d} TP0] Decode batch. #running-req: 42, #token: 83188, token usage: 0.62\n"


@pytest.fixture(scope="module")
def engine():
    return builtin_engine()


def incidents_of(engine, *paths):
    return list(engine.analyse([str(path) for path in paths]).incidents)


def test_compact_ranks_folds_runs_per_family():
    assert compact_ranks(("TP0", "TP1", "TP2", "TP4", "TP5", "TP6", "TP7")) == "TP0-2,4-7"
    assert compact_ranks(("DP0 TP0", "DP0 TP1", "DP1 TP0")) == "DP0 TP0-1, DP1 TP0"
    assert compact_ranks(("rank0", "rank1", "pid=12", "host-a")) == "rank0-1, pid=12, host-a"
    assert compact_ranks(("a1", "b1", "c1", "d1")) == "a1, b1, c1, …"
    assert compact_ranks(()) == ""


def test_view_filters_search_and_sorts_keep_the_engines_incidents(engine):
    incidents = incidents_of(engine, CHAINED, CRASH)
    ids = {i.id for i in incidents}
    everything = visible(incidents, ViewState())
    assert {i.id for i in everything} == ids and everything[0].is_run_root
    known = visible(incidents, ViewState(filter="known"))
    unknown = visible(incidents, ViewState(filter="unknown"))
    assert {i.id for i in known} | {i.id for i in unknown} == ids and all(i.diagnosis.known for i in known)
    roots = visible(incidents, ViewState(filter="roots"))
    consequences = visible(incidents, ViewState(filter="consequences"))
    assert {i.id for i in roots} | {i.id for i in consequences} == ids
    assert all(i.caused_by for i in consequences)
    echoes = [i for i in incidents if i.role == "consequence"][:1]  # (a log of echoes alone: the first leads its run)
    (led,) = link_causes([replace(i, is_run_root=False, caused_by=None) for i in echoes], 3600.0)
    assert led.is_run_root and visible([led], ViewState(filter="roots")) == [led]
    found = visible(incidents, ViewState(search="OUT OF MEMORY"))
    assert [i.diagnosis.pattern.id for i in found] == ["torch.cuda-out-of-memory"]
    assert visible(incidents, ViewState(search="torch.nccl-watchdog")), "pattern ids are searched too"
    by_time = visible(incidents, ViewState(sort="first_seen"))
    stamps = [i.first_seen.replace(tzinfo=None) for i in by_time if i.first_seen]
    assert stamps == sorted(stamps)
    assert visible(incidents, ViewState(sort="first_seen", reverse=True)) == by_time[::-1]
    by_count = visible(incidents, ViewState(sort="count"))
    assert [i.count for i in by_count] == sorted((i.count for i in incidents), reverse=True)


def test_throughput_is_lines_per_second_over_recent_samples():
    rate = Throughput(seconds=3.0)
    assert rate.sample(0, now=10.0) == 0.0
    assert rate.sample(500, now=11.0) == 500.0
    assert rate.sample(1500, now=12.0) == 750.0
    assert rate.sample(1500, now=20.0) == pytest.approx(0.0)


def _event_of(path: Path):
    scanner = FileScanner(str(path), NO_NOTICES)
    events = [e for raw in read_lines(str(path), print) for e in scanner.feed(raw)] + list(scanner.finish())
    return events[0]


def test_log_window_keeps_head_and_tail_of_a_long_traceback(tmp_path):
    frames = "".join(f'  File "/srv/app/step{n}.py", line {n}, in step{n}\n    step{n + 1}()\n' for n in range(400))
    log = tmp_path / "deep.log"
    log.write_text("".join(INFO.format(s) for s in range(30)) + "Traceback (most recent call last):\n" + frames
                   + "RecursionError: maximum recursion depth exceeded\n" + INFO.format(59) * 5)
    event = _event_of(log)
    window = read_window(event, before=5, after=3, max_event_lines=100)
    numbers = [number for number, _ in window.rows]
    assert numbers[0] == event.span.line_start - 5 and numbers[-1] == event.span.line_end + 3
    assert event.span.line_start + 49 in numbers and event.span.line_start + 50 not in numbers
    assert event.span.line_end - 49 in numbers and event.span.line_end - 50 not in numbers
    assert len(numbers) == 5 + 100 + 3
    shown = window_text(window).plain
    assert f"{event.span.line_end - event.span.line_start + 1 - 100} lines left out" in shown
    assert "RecursionError: maximum recursion depth exceeded" in shown


def test_numbered_lines_are_the_same_however_the_chunks_fall():
    data = "".join(f"line {n} é\n" for n in range(1, 40)).encode() + b"last without newline"
    expected = [(n, f"line {n} é") for n in range(1, 40)] + [(40, "last without newline")]
    for size in (1, 2, 7, 64, len(data)):
        chunks = [data[at:at + size] for at in range(0, len(data), size)]
        for low, high in ((1, 40), (5, 9), (39, 45), (40, 40), (41, 50)):
            assert list(numbered_lines(chunks, low, high)) == expected[low - 1:high], (size, low, high)


def test_log_window_of_stdin_shows_the_assembled_lines_with_a_note():
    scanner = FileScanner("<stdin>", NO_NOTICES)
    lines = [INFO.format(1).rstrip("\n"), "Traceback (most recent call last):",
             '  File "/srv/app/main.py", line 3, in <module>', "    main()", "KeyError: 'x'"]
    event = [e for line in lines for e in scanner.feed(line)] + list(scanner.finish())
    window = read_window(event[0])
    assert "<stdin>: cannot be read again" in window.note
    assert [text for _, text in window.rows][-1] == "KeyError: 'x'"


def test_read_lines_reports_the_position_on_disk_after_each_chunk(tmp_path):
    plain = tmp_path / "big.log"
    plain.write_text("".join(INFO.format(n % 60) for n in range(150000)))  # about 13 MiB: several chunks
    packed = tmp_path / "big.log.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        offsets: list[int] = []
        lines = sum(1 for _ in read_lines(str(path), print, on_read=offsets.append))
        assert lines == 150000
        assert offsets == sorted(offsets) and offsets[-1] == path.stat().st_size
        assert len(offsets) >= (1 if path is packed else 3)


def test_scan_events_progress_counts_lines_and_bytes(engine, tmp_path):
    log = tmp_path / "run.log"
    log.write_text("".join(INFO.format(n % 60) for n in range(30000)) + CRASH.read_text())
    reports: list[tuple[str, int, int | None]] = []
    events = list(bare_engine().events([str(log)], print, progress=lambda *r: reports.append(r)))
    assert events and reports[-1] == (str(log), 30000 + len(CRASH.read_text().splitlines()), log.stat().st_size)
    assert [r[1] for r in reports] == sorted(r[1] for r in reports) and len(reports) > 1


def test_live_scan_runs_to_the_end_with_the_engines_incidents(engine):
    live = LiveScan(engine, [str(CRASH)])
    assert live.fraction == 0.0 and not live.streaming
    live.run()
    assert live.done and live.fraction == 1.0 and live.lines_read == len(CRASH.read_text().splitlines())
    assert [i.id for i in live.incidents()] == [i.id for i in incidents_of(engine, CRASH)]
    assert live.version == sum(i.count for i in live.incidents())


def test_live_scan_of_a_followed_file_stops_when_asked(engine, tmp_path):
    log = tmp_path / "growing.log"
    log.write_text(CRASH.read_text())
    live = LiveScan(engine, [str(log)], follow=True)
    assert live.streaming and live.fraction is None
    worker = threading.Thread(target=live.run)
    worker.start()
    try:
        while not live.incidents():
            worker.join(0.02)
    finally:
        live.stop()
        worker.join(10)  # a bound against a hang, not a speed target
    assert not worker.is_alive() and live.done


def test_live_scan_reports_an_unreadable_file_as_a_problem(engine, tmp_path):
    live = LiveScan(engine, [str(tmp_path / "vanished.log")])
    live.run()
    assert live.done and live.incidents() == [] and len(live.problems) == 1
    assert live.problems[0].where.endswith("vanished.log")


def test_tui_command_wires_its_options_into_the_live_scan(monkeypatch, capsys):
    started: list[LiveScan] = []
    monkeypatch.setattr(app_module.TriageApp, "run", lambda self: started.append(self.live))
    code = main(["tui", "--no-builtin", "--follow", "--app-package", "sglang", "--window", "60", str(CRASH), "missing.log"])
    (live,) = started
    # followed, a missing file is waited for (as tail -F does), not refused
    assert live.files == [str(CRASH), "missing.log"] and live.follow
    assert live._analysis._grouper.app_packages == ("sglang",)
    assert live.problems == [] and code == 0 and capsys.readouterr().err == ""


def test_tui_command_with_nothing_readable_says_so_in_one_line(capsys):
    assert main(["tui", "nowhere.log"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["analyzer: warning: nowhere.log: no such file or directory", "analyzer: error: nothing to read"]
