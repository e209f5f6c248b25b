"""Snapshot tests (pytest-textual-snapshot): the whole screen, compared with an accepted SVG.

The log and the pattern pack are made here, so edits to the shared packs and fixtures do not
move these pictures; the traceback is raised for real, from code compiled under SGLang paths.
Screens are taken once the scan is over and the log window is read, so nothing depends on timing.
Rendering differs between Textual releases: the pictures are checked under the one that made them.
After an intended change: `pytest tests/test_tui_snapshot.py --snapshot-update`, and look at them.
"""

from __future__ import annotations

import linecache
import time
import traceback

import pytest
import textual

from analyzer.engine import Engine, Options
from analyzer.tui.app import TriageApp
from analyzer.tui.incident_table import IncidentTable
from analyzer.tui.live import LiveScan
from analyzer.tui.log_pane import LogPane

pytestmark = pytest.mark.skipif(not textual.__version__.startswith("8.2."),
                                reason="snapshots were taken with Textual 8.2")

SERVER_ARGS = "/usr/local/lib/python3.11/site-packages/sglang/srt/server_args.py"
CHECK_LINE = 1042
PACK = """\
schema: 1
project: sglang
version: "0.5.23"
patterns:
  - id: demo.tp-size-exceeds-gpus
    exception: ValueError
    template: "tp_size {tp_size} exceeds the {gpus} visible GPUs"
    source: {path: sglang/srt/server_args.py, line: 1042, function: check_tp_size}
    meaning: "Tensor parallelism puts one rank on each GPU; the server was asked for more ranks than it can see."
    fixes:
      - title: "Use as many ranks as visible GPUs"
        text: "You asked for {tp_size} ranks on {gpus} GPUs."
        before: "--tp-size {tp_size}"
        after: "--tp-size {gpus}"
      - title: "Make the other GPUs visible"
        text: "Check CUDA_VISIBLE_DEVICES in the server's environment."
    severity: critical
    examples:
      - "tp_size 8 exceeds the 4 visible GPUs"
"""


def raised_in_sglang() -> str:
    """A ValueError raised from a function compiled as SGLang's server_args.py, formatted."""
    source = "\n" * (CHECK_LINE - 2) + "def check_tp_size(tp_size, gpus):\n    raise ValueError(" \
        "f'tp_size {tp_size} exceeds the {gpus} visible GPUs')\n"
    namespace: dict = {}
    exec(compile(source, SERVER_ARGS, "exec"), namespace)
    shown = ["\n"] * CHECK_LINE
    shown[CHECK_LINE - 1] = "        raise ValueError(f\"tp_size {tp_size} exceeds the {gpus} visible GPUs\")\n"
    linecache.cache[SERVER_ARGS] = (len("".join(shown)), None, shown, SERVER_ARGS)
    try:
        namespace["check_tp_size"](8, 4)
    except ValueError as err:
        te = traceback.TracebackException.from_exception(err)
        te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename == SERVER_ARGS])
        for frame in te.stack:
            frame.colno = frame.end_colno = None  # carets would point into the compiled stand-in
        return "".join(te.format())
    raise AssertionError("check_tp_size did not raise")


@pytest.fixture
def triage_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths: the same picture wherever the tests run
    lines = [f"[2026-08-28 10:00:0{n}] Load weight begin. avail mem=78.52 GB" for n in range(4)]
    for rank in (0, 1):
        tb = raised_in_sglang().splitlines()
        lines.append(f"[2026-08-28 10:00:05 TP{rank}] Scheduler hit an exception: {tb[0]}")
        lines.extend(tb[1:])
    lines.append("[2026-08-28 10:00:06] Received sigquit from a child process. It usually means the child failed.")
    (tmp_path / "server.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "pack.yaml").write_text(PACK)
    return tmp_path


def triage_app() -> TriageApp:
    return TriageApp(LiveScan(Engine(Options(pattern_dirs=("pack.yaml",), builtin=False)), ["server.log"]))


async def settled(pilot) -> None:
    app = pilot.app
    table = app.query_one(IncidentTable)
    deadline = time.monotonic() + 60  # a hang guard: a loaded machine is slow
    while time.monotonic() < deadline:
        if (app.live.done and app.incidents and app.incidents == app.live.incidents() and app.query_one(LogPane).settled
                and str(app.query_one("#status-text").content).startswith("done")  # (the poll after the scan's end)
                # a row revised in place widens its columns when the table is next idle (Textual 8.2's DataTable):
                # a picture taken before showed the first widths, cut (`● ROOT ` for `● ROOT CAUSE`)
                and not table._updated_cells and not table._require_update_dimensions):
            break
        await pilot.pause(0.02)
    await pilot.pause(0.2)
    # and until the screen stops changing: on a loaded machine a revised row's widths may still be on their way
    # (taken cut, `● ROOT ` for `● ROOT CAUSE`, though the table said it had nothing left to do)
    shown = None
    while time.monotonic() < deadline and (shot := app.export_screenshot()) != shown:
        shown = shot
        await pilot.pause(0.25)


def test_triage_screen(snap_compare, triage_dir):
    assert snap_compare(triage_app(), terminal_size=(120, 36), run_before=settled)


def test_explain_page_over_the_triage(snap_compare, triage_dir):
    assert snap_compare(triage_app(), press=["e"], terminal_size=(100, 30), run_before=settled)
