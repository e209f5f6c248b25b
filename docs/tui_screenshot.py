"""Rebuild docs/tui.svg: `analyzer tui` triaging the eight-rank crash fixture, as the README shows it.

    .venv/bin/python docs/tui_screenshot.py
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from analyzer.engine import Engine, Options
from analyzer.tui.app import TriageApp
from analyzer.tui.live import LiveScan

ROOT = Path(__file__).resolve().parent.parent
LOG = "fixtures/logs/sglang_8rank_scheduler_crash.log"


async def shoot(size: tuple[int, int] = (140, 44)) -> None:
    app = TriageApp(LiveScan(Engine(Options()), [LOG]))
    async with app.run_test(size=size) as pilot:
        while not (app.live.done and app.incidents and app.log_pane.settled):
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        app.save_screenshot("tui.svg", path=str(ROOT / "docs"))


if __name__ == "__main__":
    os.chdir(ROOT)  # the log's path as a user would type it
    asyncio.run(shoot())
    print(ROOT / "docs" / "tui.svg")
