"""The TUI as a first-time user met it (issue 21), driven by Pilot: width, gutter, search by rank
and log line, jump to the root, open in $EDITOR, each rank's own lines, follow announcements."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest

from analyzer.engine import Engine, Options
from analyzer.tui import app as app_module
from analyzer.tui.app import TriageApp, open_command
from analyzer.tui.context import read_window
from analyzer.tui.incident_table import IncidentTable
from analyzer.tui.live import LiveScan
from analyzer.tui.log_pane import LogPane, window_text
from tests.realtb import capture, text_of

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CRASH = str(LOGS / "sglang_8rank_scheduler_crash.log")


def _oom():
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB on rank 3")


OOM = text_of(capture(_oom)).splitlines()


@pytest.fixture(scope="module")
def engine():
    """An engine of this module's own: the scans of other modules' tests (a followed log's thread
    among them) note their files' runs in the engine they share, and so change what its matcher sees."""
    return Engine(Options())


async def _until(pilot, condition, what: str) -> None:
    deadline = time.monotonic() + 60  # a hang guard, not a measurement: a loaded machine is slow
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never happened: {what}")


def triage(live: LiveScan, scenario, size=(120, 36), before=None):
    async def main():
        app = TriageApp(live)
        if before is not None:
            before(app)
        async with app.run_test(size=size) as pilot:
            if not live.streaming:
                await _until(pilot, lambda: live.done and app.incidents == live.incidents(), "scan shown")
                await _until(pilot, lambda: app.log_pane.settled, "log window read")
            outcome = await scenario(app, pilot)
        deadline = time.monotonic() + 60  # the scan's thread ends (the app stopped it) before the next test
        while not live.done and time.monotonic() < deadline:  # shares the engine: never two scans at once
            await asyncio.sleep(0.01)
        return outcome

    return asyncio.run(main())


def rows(app) -> list[str]:
    return [key.value for key in app.query_one(IncidentTable).rows]


def shown(app, selector: str) -> str:
    return app.screen.query_one(selector).content.plain


def test_the_table_has_a_message_column_and_marks_the_sorted_column(engine):
    async def scenario(app, pilot):
        table = app.query_one(IncidentTable)
        labels = [str(column.label).rstrip(" ▲▼") for column in table.columns.values()]
        assert labels[-1] == "Message"
        root = app.incidents[[i.is_run_root for i in app.incidents].index(True)]
        assert str(table.get_row(root.id)[-1]).startswith("CUDA out of memory")
        assert str(table.columns[next(iter(table.columns))].label) == "Role ▲"
        await pilot.press("s")
        assert str(table.columns[list(table.columns)[1]].label) == "Severity ▲"
        await pilot.press("S")
        assert str(table.columns[list(table.columns)[1]].label) == "Severity ▼"
        assert str(table.columns[next(iter(table.columns))].label) == "Role  "  # same width, no arrow

    triage(LiveScan(engine, [CRASH]), scenario)


def test_search_finds_ranks_and_raw_log_lines(engine):
    async def scenario(app, pilot):
        await pilot.press("slash", *"TP3")
        found = [i for i in app.incidents if i.id in rows(app)]
        assert found and all("TP3" in i.ranks for i in found)
        assert len(found) < len(app.incidents)
        app.search_box.value = "scheduler.py"  # a frame's file: only in the log lines, not in a message
        await pilot.pause()
        assert rows(app) and all(any("scheduler.py" in line for line in i.event.lines)
                                 for i in app.incidents if i.id in rows(app))

    triage(LiveScan(engine, [CRASH]), scenario)


def test_r_jumps_from_a_consequence_to_its_root_even_when_filtered_out(engine):
    async def scenario(app, pilot):
        await pilot.press("f", "f", "f", "f")  # consequences only
        assert "filter consequences" in str(app.query_one("#status-text").content)
        consequence = app.selected
        assert consequence.caused_by
        await pilot.press("r")
        assert app.selected.id == consequence.caused_by and app.selected.is_run_root
        assert app.view.filter == "all"
        await pilot.press("r")  # a root has nowhere to go: a warning, no move
        assert app.selected.id == consequence.caused_by

    triage(LiveScan(engine, [CRASH]), scenario)


def test_o_opens_the_selected_line_in_the_editor_with_the_app_suspended(engine, monkeypatch):
    ran: list[list[str]] = []
    suspended: list[bool] = []
    monkeypatch.setenv("EDITOR", "myeditor --wait")
    monkeypatch.setattr(app_module.subprocess, "run", lambda command, check: ran.append(command))

    @contextlib.contextmanager
    def suspend():
        suspended.append(True)
        yield

    async def scenario(app, pilot):
        monkeypatch.setattr(app, "suspend", suspend)
        await pilot.press("o")
        span = app.selected.event.span
        assert ran == [["myeditor", "--wait", f"+{span.line_start}", span.file]] and suspended == [True]

    triage(LiveScan(engine, [CRASH]), scenario)


def test_the_open_command_falls_back_to_the_pager_then_less():
    assert open_command("a.log", 7, {"PAGER": "most"}) == ["most", "+7", "a.log"]
    assert open_command("a.log", 7, {}) == ["less", "+7", "a.log"]


def _interleaved(tmp_path: Path) -> Path:
    """rank3's traceback with rank1's progress lines between its lines, as torchrun prints them."""
    lines = ["[rank1]: INFO step 1 ok"]
    for number, line in enumerate(OOM):
        lines.append(f"[rank3]: {line}")
        if number % 2 == 0:
            lines.append(f"[rank1]: INFO step {number + 2} ok")
    lines.append("[rank1]: INFO done")
    log = tmp_path / "interleaved.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def test_a_ranks_incident_marks_only_its_own_lines_among_another_ranks(engine, tmp_path):
    log = _interleaved(tmp_path)
    (incident,) = engine.analyse([str(log)]).incidents
    window = read_window(incident.event)
    raw = dict(window.rows)
    mine = {number for number, line in raw.items() if line.startswith("[rank3]")}
    assert window.own == mine
    assert any(line.startswith("[rank1]") for number, line in raw.items()
               if window.first <= number <= window.last), "the fixture interleaves"

    async def scenario(app, pilot):
        marked = {int(line.split()[0]) for line in shown(app, "#log-lines").splitlines() if "▌" in line}
        return marked

    assert triage(LiveScan(engine, [str(log)]), scenario) == mine


def test_the_gutter_stays_while_the_log_scrolls_sideways_and_keys_wrap_and_strip_prefixes(engine):
    async def scenario(app, pilot):
        pane = app.query_one(LogPane)
        before = shown(app, "#log-lines").splitlines()
        pane.focus()
        await pilot.press("right", "right")
        after = shown(app, "#log-lines").splitlines()
        assert pane.shift == 2 * LogPane.SHIFT_STEP
        width = len(str(pane.window.rows[-1][0]))
        for old, new in zip(before, after):  # the numbers stay; the text moves left by 16 columns
            assert new[:width] == old[:width]
            assert new[width + 3:] == old[width + 3 + 16:].rstrip() or old[width + 3 + 16:].startswith(
                new[width + 3:].rstrip())
        await pilot.press("left", "left")
        assert pane.shift == 0
        await pilot.press("x")  # prefixes hidden: the lines as the scan reads them
        stripped = shown(app, "#log-lines")
        assert "[2026-08-28 10:10:00 TP3]" not in stripped and "Scheduler hit an exception" in stripped
        await pilot.press("x", "w")
        assert pane.wrap and pane.prefixes
        await pilot.press("right")
        assert pane.shift == 0  # folded lines have nothing hidden to the right

    triage(LiveScan(engine, [CRASH]), scenario)


def test_window_text_keeps_the_gutter_when_shifted(engine):
    incident = next(i for i in engine.analyse([CRASH]).incidents if i.is_run_root)
    window = read_window(incident.event)
    plain = window_text(window, shift=10).plain.splitlines()
    numbers = [line.split()[0] for line in plain if line.split() and line.split()[0].isdigit()]
    assert numbers == [str(number) for number, _ in window.rows]


def test_following_a_log_announces_each_new_incident(engine, tmp_path):
    log = tmp_path / "server.log"
    log.write_text("INFO starting\n")
    rings: list[int] = []
    notes: list[str] = []

    def watch(app):
        app.bell = lambda: rings.append(1)
        real = app.notify
        app.notify = lambda message, **kw: (notes.append(message), real(message, **kw))[1]

    async def scenario(app, pilot):
        await _until(pilot, lambda: app._seen_ids is not None, "first poll")
        with log.open("a") as out:
            out.write("\n".join(OOM) + "\nINFO after\n")
        await _until(pilot, lambda: rings, "the bell")
        app.live.stop()
        return notes

    live = LiveScan(engine, [str(log)], follow=True)
    notes = triage(live, scenario, before=watch)
    assert rings == [1]
    assert any(note.startswith("I1 (ROOT CAUSE): RuntimeError: CUDA out of memory") for note in notes)


def test_t_scrolls_the_detail_pane_to_the_traceback(engine):
    async def scenario(app, pilot):
        detail = app.detail
        assert detail.scroll_y == 0
        await pilot.press("t")
        traceback = detail.parts["traceback"]
        # the scroll lands over a few refreshes: wait for it rather than for one pause; the traceback
        # comes to the top of the pane, or as near as the pane scrolls (a short detail ends sooner)
        at_top = lambda: traceback.region.y - detail.region.y <= 2  # noqa: E731
        await _until(pilot, lambda: detail.scroll_y > 0 and (at_top() or detail.scroll_y >= detail.max_scroll_y),
                     f"the traceback at the top of the pane (scroll {detail.scroll_y} of {detail.max_scroll_y})")
        assert traceback.region.y < detail.region.bottom  # in view, not below the fold

    triage(LiveScan(engine, [CRASH]), scenario)
