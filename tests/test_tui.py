"""The triage TUI driven by Textual's Pilot: keys pressed, widgets' contents read back."""

from __future__ import annotations

import asyncio
import html
import re
import time
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from analyzer.engine import Engine, Options
from analyzer.sinks.text import ordered_for_people
from analyzer.sources.problems import Problem, ProblemKind
from analyzer.tui.app import TriageApp
from analyzer.tui.help_screen import HelpScreen
from analyzer.tui.incident_table import IncidentTable
from analyzer.tui.live import LiveScan
from analyzer.tui.log_pane import LogPane
from analyzer.tui.pattern_screen import PatternScreen

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CRASH = str(LOGS / "sglang_8rank_scheduler_crash.log")
DEEPSEEK = str(LOGS / "sglang_deepseek_v4_cp_a2a.log")
CHAINED = str(LOGS / "sglang_chained_weight_loading.log")
INTERLEAVED = str(LOGS / "torchrun_interleaved.log")  # holds an error no pattern knows


@pytest.fixture
def engine():
    """An engine of each test's own: a scan notes its files' runs in its engine, which changes what that engine's
    matcher sees (a notice a server's pack names is matched for that server's logs): a test whose scan noted a run
    (a followed log's thread among them) made the next test's live scan and its expected incidents differ.
    `engine_incidents` scans with another one for the same reason."""
    return Engine(Options())


def engine_incidents(engine, *paths):
    """What `analyzer scan` finds in the same files: the TUI must show exactly this. (Scanned by an engine like
    the test's, not by it: the runs this scan notes would change what the live scan's matcher sees.)"""
    return ordered_for_people(list(Engine(engine.options).analyse(list(paths)).incidents))


async def until(pilot, condition, what: str, state=lambda: "") -> None:
    """Wait until `condition()`; failing, say what was awaited and what `state()` was then."""
    deadline = time.monotonic() + 60  # a hang guard, not a measurement: a loaded machine is slow
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never happened: {what} {state()}")


async def shows(pilot, app, ids: list[str], what: str) -> None:
    """The table comes to show these rows (after a key, on a loaded machine, it may be redrawn a frame later)."""
    await until(pilot, lambda: rows(app) == ids, what, lambda: f"(rows {rows(app)}, wanted {ids})")


def triage(live: LiveScan, scenario, size=(100, 32)):
    """Run the app on `live` until the scan is over and the log pane has read its lines."""

    async def main():
        app = TriageApp(live)
        async with app.run_test(size=size) as pilot:
            if not live.streaming:
                # the same incidents, not just as many: a record that grew after a poll (a chain
                # link came) is revised in place, and the table must show its final diagnosis
                await until(pilot, lambda: live.done and app.incidents == live.incidents()
                            and len(app.query_one(IncidentTable).rows) == len(app.incidents), "scan shown",
                            lambda: f"(done {live.done}, shown {[i.id for i in app.incidents]}, scanned "
                                    f"{[i.id for i in live.incidents()]}, rows {rows(app)})")
                await until(pilot, lambda: app.query_one(LogPane).settled or not app.incidents,
                            "log window read", lambda: f"(window {app.query_one(LogPane).window is not None})")
            outcome = await scenario(app, pilot)
        deadline = time.monotonic() + 60  # the scan's thread ends (the app stopped it) before the next test
        while not live.done and time.monotonic() < deadline:  # shares the engine: never two scans at once
            await asyncio.sleep(0.01)
        return outcome

    return asyncio.run(main())


def text(app, selector: str) -> str:
    return app.screen.query_one(selector).content.plain


def rows(app) -> list[str]:
    return [key.value for key in app.query_one(IncidentTable).rows]


def test_table_lists_the_engines_incidents_root_cause_first(engine):
    expected = engine_incidents(engine, CRASH)

    async def scenario(app, pilot):
        table = app.query_one(IncidentTable)
        assert rows(app) == [incident.id for incident in expected]
        first = [str(cell) for cell in table.get_row_at(0)]
        root = expected[0]
        assert root.is_run_root and first[0] == "● ROOT CAUSE"
        assert first[5] == root.diagnosis.pattern.id == "torch.cuda-out-of-memory"
        assert first[4] == "OutOfMemoryError" and first[3] == "TP3" and first[6] == "08-28 10:10:00"
        nccl = next(i for i in expected if i.diagnosis.pattern and i.diagnosis.pattern.id == "torch.nccl-watchdog-timeout")
        cells = [str(cell) for cell in table.get_row(nccl.id)]
        assert cells[0] == f"↳ consequence of {root.id}" and cells[2] == "×7" and cells[3] == "TP0-2,4-7"
        status = str(app.query_one("#status-text").content)
        assert "done" in status and "210 lines" in status and f"root cause {root.id}" in status

    triage(LiveScan(engine, [CRASH]), scenario)


def test_detail_pane_explains_the_root_cause_with_the_users_values(engine):
    async def scenario(app, pilot):
        diagnosis = text(app, "#diagnosis")
        assert "Known error sglang.deepseek-v4-cp-a2a-backend" in diagnosis
        assert "What it means" in diagnosis and "Your values" in diagnosis
        assert "moe_a2a_backend='flashinfer_tkv'" in diagnosis
        assert "before: --enable-prefill-cp --moe-a2a-backend flashinfer_tkv" in diagnosis
        assert "after:  --enable-prefill-cp --moe-a2a-backend deepep" in diagnosis
        source, site = text(app, "#pattern-source"), text(app, "#raise-site")
        # the two columns share the width: paths lose leading directories, never their line number
        where = "sglang/srt/arg_groups/deepseek_v4_hook.py:231"
        for column in (source, site):
            shown = column.splitlines()[1]
            assert shown.endswith("deepseek_v4_hook.py:231") and where.endswith(shown.removeprefix("…"))
        assert "@ sglang 0.5.23" in source and "validate_deepseek_v4_cp" in site
        assert "ValueError" in text(app, "#summary") and "flashinfer_tkv" in text(app, "#summary")

    triage(LiveScan(engine, [DEEPSEEK]), scenario)
    wide = triage(LiveScan(engine, [DEEPSEEK]), lambda app, pilot: _texts(app, "#pattern-source", "#raise-site"),
                  size=(260, 40))
    assert all("sglang/srt/arg_groups/deepseek_v4_hook.py:231" in column for column in wide)


async def _texts(app, *selectors):
    return [text(app, selector) for selector in selectors]


def test_traceback_is_highlighted_and_marks_raise_site_and_blame(engine):
    async def scenario(app, pilot):
        incident = app.selected
        traceback = app.screen.query_one("#traceback").content
        plain = traceback.plain
        assert plain.startswith("Traceback (most recent call last):")
        site = incident.info.raise_site
        marked = [line for line in plain.splitlines() if "← raised here" in line or "← blame" in line]
        assert len(marked) == 1 and f"{site.relpath}:{site.lineno}" in marked[0]
        if incident.blame is site:
            assert marked[0].startswith("▶ ") and "← blame" in marked[0]
        code_at = plain.index(site.code)
        styled = {str(span.style) for span in traceback.spans if span.start <= code_at < span.end}
        assert any("#" in style for style in styled), "the frame's code is syntax-highlighted"
        assert plain.rstrip().endswith(incident.info.message.splitlines()[0])

    triage(LiveScan(Engine(Options(app_packages=("sglang",))), [DEEPSEEK]), scenario)


def test_chain_and_traceback_show_every_link(engine):
    async def scenario(app, pilot):
        incident = app.selected
        assert len(incident.event.chain) > 1
        chain = text(app, "#chain")
        assert f"{len(incident.event.chain)} exception(s), root cause first" in chain
        for number, info in enumerate(incident.event.chain, 1):
            assert f"{number}. " in chain and info.exception_type in chain
        assert "← diagnosed" in chain
        assert "The above exception was the direct cause" in text(app, "#traceback") or \
            "During handling of the above exception" in text(app, "#traceback")

    triage(LiveScan(engine, [CHAINED]), scenario)


def test_log_pane_shows_raw_lines_around_the_incident_with_its_own_lines_marked(engine):
    async def scenario(app, pilot):
        span = app.selected.event.span
        log = text(app, "#log-lines").splitlines()
        numbered = {int(line.split()[0]): line for line in log if line.split() and line.split()[0].isdigit()}
        assert min(numbered) == span.line_start - 15 and max(numbered) == span.line_end + 15
        raw = Path(CRASH).read_text().splitlines()
        assert raw[span.line_start - 1] in numbered[span.line_start]  # prefixes kept: the line as written
        assert "[2026-08-28 10:10:00 TP3] Scheduler hit an exception" in numbered[span.line_start]
        assert all("▌" in numbered[n] for n in range(span.line_start, span.line_end + 1))
        assert "▌" not in numbered[span.line_start - 1] and "▌" not in numbered[span.line_end + 1]
        assert app.query_one(LogPane).border_title == f"log {CRASH}:{span.line_start}-{span.line_end}"

    triage(LiveScan(engine, [CRASH]), scenario)


def test_n_and_p_jump_between_incidents(engine):
    expected = engine_incidents(engine, CRASH)

    async def scenario(app, pilot):
        assert app.selected.id == expected[0].id
        for incident in expected[1:]:  # (each key waited for: on a loaded machine one may be handled a frame later)
            await pilot.press("n")
            await until(pilot, lambda incident=incident: app.selected.id == incident.id, f"n selects {incident.id}",
                        lambda: f"(selected {app.selected.id}, rows {rows(app)}, wanted {[i.id for i in expected]}, "
                                f"focus {app.focused}, problems {app.live.problems}, "
                                f"disabled {app.live.engine.matcher.disabled})")
        await until(pilot, lambda: f" {expected[-1].id} " in text(app, "#summary").splitlines()[0], "the summary follows")
        await pilot.press("n")  # past the end stays on the last one
        await pilot.pause()
        assert app.selected.id == expected[-1].id
        await pilot.press("p")
        await until(pilot, lambda: app.selected.id == expected[-2].id, "p selects the one before")
        await until(pilot, lambda: app.query_one(LogPane).settled
                    and app.query_one(LogPane).window.first == expected[-2].event.span.line_start, "log follows")

    triage(LiveScan(engine, [CRASH]), scenario)


def test_filters_cycle_through_known_unknown_roots_and_consequences(engine):
    expected = engine_incidents(engine, CHAINED, CRASH, INTERLEAVED)
    known = [i.id for i in expected if i.diagnosis.known]
    unknown = [i.id for i in expected if not i.diagnosis.known]
    assert known and unknown

    async def scenario(app, pilot):
        assert rows(app) == [i.id for i in expected], app.live.engine.matcher.disabled
        await pilot.press("f")
        await shows(pilot, app, known, "the known ones")
        assert "filter known" in str(app.query_one("#status-text").content)
        await pilot.press("f")
        await shows(pilot, app, unknown, "the unknown ones")
        assert [str(c) for c in app.query_one(IncidentTable).get_row_at(0)][5] == "unknown"
        await pilot.press("f")
        await shows(pilot, app, [i.id for i in expected if i.role == "root"], "the roots")
        await pilot.press("f")
        await shows(pilot, app, [i.id for i in expected if i.role == "consequence"], "the consequences")
        await pilot.press("f")
        await shows(pilot, app, [i.id for i in expected], "every incident again")

    triage(LiveScan(engine, [CHAINED, CRASH, INTERLEAVED]), scenario)


def test_slash_searches_messages_and_escape_clears(engine):
    expected = engine_incidents(engine, CHAINED, CRASH)
    nccl = [i.id for i in expected if "watchdog" in i.info.message.lower()]
    assert nccl

    async def scenario(app, pilot):
        await pilot.press("slash")
        assert app.focused.id == "search"
        await pilot.press(*"watchdog")
        await shows(pilot, app, nccl, "the watchdog's")
        assert app.selected.id == nccl[0] and "Watchdog caught" in text(app, "#summary")
        await pilot.press("enter")
        assert isinstance(app.focused, IncidentTable) and rows(app) == nccl
        await pilot.press("escape")
        await shows(pilot, app, [i.id for i in expected], "every incident")
        await pilot.press("slash", *"zqxj")
        await shows(pilot, app, [], "none")
        assert "No incident selected" in text(app, "#summary")

    triage(LiveScan(engine, [CHAINED, CRASH]), scenario)


def test_s_sorts_by_the_next_column_and_shift_s_reverses(engine):
    async def scenario(app, pilot):
        expected = app.incidents  # the order is judged on what the table shows, found by the app's own scan
        await pilot.press("s")
        await until(pilot, lambda: "sort severity" in str(app.query_one("#status-text").content), "sorted by severity")
        rank = {"critical": 0, "error": 1, "warning": 2, "info": 3}
        severities = [rank.get(i.diagnosis.pattern.severity, 4) if i.diagnosis.pattern else 4
                      for i in (next(e for e in expected if e.id == row) for row in rows(app))]
        assert severities == sorted(severities)
        await pilot.press("s")  # count, most frequent first
        counts = [next(e for e in expected if e.id == row).count for row in rows(app)]
        assert counts == sorted(counts, reverse=True)
        before = rows(app)
        await pilot.press("S")
        await shows(pilot, app, before[::-1], "the order reversed")

    triage(LiveScan(engine, [CHAINED, CRASH]), scenario)


def test_clicking_a_column_header_sorts_by_it_and_again_reverses(engine):
    async def scenario(app, pilot):
        expected = app.incidents
        table = app.query_one(IncidentTable)
        header = DataTable.HeaderSelected(table, ColumnKey("ranks"), 3, Text("Ranks"))
        table.post_message(header)
        await pilot.pause()
        by_ranks = [next(e for e in expected if e.id == row) for row in rows(app)]
        assert [len(i.ranks) for i in by_ranks] == sorted((len(i.ranks) for i in expected), reverse=True)
        table.post_message(DataTable.HeaderSelected(table, ColumnKey("ranks"), 3, Text("Ranks")))
        await pilot.pause()
        assert rows(app) == [i.id for i in by_ranks][::-1]

    triage(LiveScan(engine, [CHAINED, CRASH]), scenario)


def test_copy_a_fix_and_the_message_to_the_clipboard(engine):
    """The log shows its launch command: a fix is copied as that command with the change applied."""
    command = "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4 --tp 8 {} --port 30000"

    async def scenario(app, pilot):
        await pilot.press("1")
        assert app.clipboard == command.format("--enable-prefill-cp --moe-a2a-backend deepep")
        await pilot.press("3")
        assert app.clipboard == command.format("--moe-a2a-backend flashinfer_tkv")
        await pilot.press("c")
        assert app.clipboard == command.format("--enable-prefill-cp --moe-a2a-backend deepep")
        await pilot.press("m")
        assert app.clipboard.startswith("ValueError: DeepSeekV4 CP supports moe_a2a_backend in")
        await pilot.press("9")  # there is no fix 9: the clipboard keeps what it had
        assert app.clipboard.startswith("ValueError: ")

    triage(LiveScan(engine, [DEEPSEEK]), scenario)


def test_e_opens_the_patterns_page_and_escape_closes_it(engine):
    async def scenario(app, pilot):
        await pilot.press("e")
        assert isinstance(app.screen, PatternScreen)
        page = text(app, "#page")
        assert page.startswith("sglang.deepseek-v4-cp-a2a-backend")
        assert "What it means" in page and "Fixes" in page and "flashinfer_tkv" in page
        await pilot.press("escape")
        assert not isinstance(app.screen, PatternScreen)

    triage(LiveScan(engine, [DEEPSEEK]), scenario)


def test_e_on_an_unknown_error_stays_put(engine):
    async def scenario(app, pilot):
        assert not app.selected.diagnosis.known
        await pilot.press("e")
        assert not isinstance(app.screen, PatternScreen)

    triage(LiveScan(engine, [INTERLEAVED]), scenario)


def test_question_mark_lists_the_keys(engine):
    async def scenario(app, pilot):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in text(app, "#help-keys").splitlines())
        assert keys["n"] == "Next" and keys["/"] == "Search" and keys["1 … 9"] == "Copy fix N"
        assert keys["e"] == "Explain" and keys["?"] == "Help" and keys["q"] == "Quit"
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")

    triage(LiveScan(engine, [DEEPSEEK]), scenario)


def test_follow_shows_new_incidents_as_the_file_grows(engine, tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2026-08-28 10:00:00] server_args=ServerArgs(model_path='x')\n")
    crash = Path(CRASH).read_text()
    deepseek = Path(DEEPSEEK).read_text()
    live = LiveScan(engine, [str(log)], follow=True)

    async def scenario(app, pilot):
        await until(pilot, lambda: live.lines_read == 1, "first line read")
        assert rows(app) == [] and "following" in str(app.query_one("#status-text").content)
        with log.open("a") as out:
            out.write(deepseek)
        await until(pilot, lambda: len(rows(app)) == 1, "first incident")
        assert "deepseek-v4-cp-a2a-backend" in text(app, "#diagnosis")
        # followed, the launch command the appended lines show is known as their incident comes out
        assert "your command, fixed: python -m sglang.launch_server" in text(app, "#diagnosis")
        with log.open("a") as out:
            out.write(crash)
        await until(pilot, lambda: len(rows(app)) > 1 and live.lines_read == 1 + len(deepseek.splitlines())
                    + len(crash.splitlines()), "incidents of the appended crash")
        # (the status line is redrawn on a timer: it may not have counted the last lines yet)
        await until(pilot, lambda: f"{live.lines_read:,} lines" in str(app.query_one("#status-text").content),
                    "the status line counting every line")
        status = str(app.query_one("#status-text").content)
        assert "following" in status and "lines/s" in status
        assert rows(app)[0] == app.selected.id  # the cursor stayed on the first incident
        await pilot.press("q")

    triage(live, scenario)
    assert live.done  # quitting stopped the follow


def test_problems_are_notified_not_fatal(engine, tmp_path):
    garbage = tmp_path / "garbage.log"
    garbage.write_bytes(bytes(range(256)) * 64)
    live = LiveScan(engine, [str(garbage)], problems=[Problem(ProblemKind.MISSING, "missing.log", "no such file or directory")])

    async def scenario(app, pilot):
        assert rows(app) == [] and "No incident selected" in text(app, "#summary")
        assert any("missing.log" in str(note.message) for note in app._notifications)
        await pilot.press("n", "p", "c", "m", "e")
        assert app.clipboard == ""

    triage(live, scenario)


def test_log_pane_says_when_the_file_is_gone(engine, tmp_path):
    log = tmp_path / "gone.log"
    log.write_text(Path(DEEPSEEK).read_text())
    live = LiveScan(engine, [str(log)])
    live.run()
    log.unlink()

    async def scenario(app, pilot):
        shown = text(app, "#log-lines")
        assert "cannot be read again; showing the lines as assembled" in shown
        assert "DeepSeekV4 CP supports moe_a2a_backend" in shown

    triage(live, scenario)


def test_fixes_copy_and_explain_page_use_the_logs_own_configuration(engine, tmp_path, capsys):
    """The log shows SGLang's server_args and its launch command: the detail pane, `e` and `c` fill
    the fixes from them, with the values `analyzer scan` prints for the same log."""
    from analyzer.cli import main
    from tests.test_runconfig import SGLANG_ARGS, VLLM_ARGS, VLLM_ENGINE, _oom_log

    command = "python -m sglang.launch_server --model-path /models/Llama-3.1-70B --tp 4 --mem-fraction-static 0.8"
    fixed = command.replace("0.8", "0.75")
    sglang = tmp_path / "sglang.log"
    sglang.write_text("\n".join(_oom_log([f"$ {command}", SGLANG_ARGS])) + "\n")
    main(["scan", str(sglang)])
    assert f"your command, fixed: {fixed}" in " ".join(capsys.readouterr().out.split())

    async def on_sglang(app, pilot):
        diagnosis = text(app, "#diagnosis")
        assert "before: --mem-fraction-static 0.8\n" in diagnosis and "after:  --mem-fraction-static 0.75" in diagnosis
        assert f"your command, fixed: {fixed}" in diagnosis and "gpu-memory-utilization" not in diagnosis
        assert "(press 1 to copy your command with it)" in diagnosis
        await pilot.press("c")
        assert app.clipboard == fixed
        await pilot.press("e")
        page = text(app, "#page")
        assert "after:  --mem-fraction-static 0.75" in page and "after:  --chunked-prefill-size 4096" in page
        assert f"your command, fixed: {fixed}" in page

    triage(LiveScan(engine, [str(sglang)]), on_sglang)
    vllm = tmp_path / "vllm.log"
    vllm.write_text("\n".join(_oom_log([VLLM_ARGS, VLLM_ENGINE])) + "\n")

    async def on_vllm(app, pilot):
        diagnosis = text(app, "#diagnosis")
        assert "after:  --gpu-memory-utilization 0.8" in diagnosis and "mem-fraction" not in diagnosis
        await pilot.press("c")  # no launch command in this log: the fix's own after command
        assert app.clipboard == "--gpu-memory-utilization 0.8"

    triage(LiveScan(engine, [str(vllm)]), on_vllm)


@pytest.mark.parametrize("drawn_early", [False, True])
def test_a_row_that_grows_widens_its_columns(engine, drawn_early):
    """A row shown early and updated in place (the incident became the run's root cause, or was
    matched again once the log told its release) keeps nothing cut to the width it had; nor where a frame was
    drawn before the table was next idle (a loaded machine: DataTable kept the cells it drew then, cut)."""
    from dataclasses import replace

    from textual.app import App

    root = next(incident for incident in engine_incidents(engine, CRASH) if incident.is_run_root)
    early = replace(root, is_run_root=False, diagnosis=replace(root.diagnosis, pattern=None))

    class Table(App):
        def compose(self):
            yield IncidentTable()

    async def scenario():
        app = Table()
        async with app.run_test(size=(200, 10)) as pilot:
            table = app.query_one(IncidentTable)
            table.show([early], None)
            await pilot.pause()
            table.show([root], None)
            if drawn_early:
                table.render_line(1)
            await pilot.pause()
            shown = html.unescape(re.sub("<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")
            for key, text in (("role", "● ROOT CAUSE"), ("pattern", root.diagnosis.pattern.id)):
                assert table.columns[ColumnKey(key)].content_width >= len(text), key
                assert text in shown, key

    asyncio.run(scenario())
