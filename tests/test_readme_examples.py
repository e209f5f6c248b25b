"""The README's command lines run as written, and its sample outputs are what they print today."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet import write_fleet

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, re.S | re.M)


def _analyzer(command: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    """`analyzer ...` as the README writes it, through this checkout's package."""
    argv = shlex.split(command)
    assert argv[0] == "analyzer"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "analyzer", *argv[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env, check=False)


def test_the_quick_start_prints_what_the_readme_shows(tmp_path):
    setup = next(block for block in _blocks("bash") if "analyzer scan fixtures/logs/" in block)
    command = "analyzer " + setup.split(".venv/bin/analyzer ", 1)[1].strip()
    shown = next(block for block in _blocks("text") if block.startswith("● ROOT CAUSE"))
    done = _analyzer(command, ROOT, tmp_path)
    assert done.returncode == 0 and done.stdout == shown


@pytest.fixture(scope="module")
def fleet_home(tmp_path_factory):
    """What the README's fleet section assumes: `python -m tests.fleet fleet/` in the current directory."""
    home = tmp_path_factory.mktemp("readme-fleet")
    write_fleet(home / "fleet")
    return home


def _report_lines() -> list[str]:
    (block,) = [block for block in _blocks("bash") if block.startswith("analyzer report fleet/")]
    return [line.split("  #")[0].strip() for line in block.splitlines()]


def test_the_sample_fleet_report_is_what_the_command_prints(fleet_home, tmp_path):
    shown = next(block for block in _blocks("text") if block.startswith("Fleet report by pattern"))
    done = _analyzer("analyzer report fleet/ --new-since 2026-08-28", fleet_home, tmp_path / "fresh-cache")
    assert done.returncode == 0, done.stderr
    lines = shown.rstrip("\n").splitlines()
    assert lines[-1] == "  …"
    assert done.stdout.splitlines()[:len(lines) - 1] == lines[:-1]


def test_every_report_command_line_of_the_readme_runs(fleet_home, tmp_path):
    for command in _report_lines():
        if "--engine dask" in command:  # needs a running scheduler at that address
            continue
        done = _analyzer(command, fleet_home, tmp_path / "cache")
        assert done.returncode == 0, (command, done.stderr)
        if " -o " in command:
            written = command.split(" -o ")[1].split()[0]
            assert (fleet_home / written).stat().st_size > 0 and "wrote" in done.stderr
        else:
            assert done.stdout.startswith("Fleet report by "), command
        if "--by host" in command:  # no --path-regex: the hosts come from the directories' names
            assert "(unknown)" not in done.stdout and "8 host(s)" in done.stdout
