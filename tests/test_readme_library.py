"""The README's pandas snippet, run as users run it: a plain script with no `__main__` guard, and
piped into `python -`. A worker pool that cannot start there must not turn into an empty frame."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet import write_fleet

ROOT = Path(__file__).resolve().parent.parent


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^( *)```python\n(\1from analyzer.report import.*?|\1from datetime import date\n.*?)^\1```",
                          text, re.S | re.M)
    indent, code = block
    return "\n".join(line[len(indent):] for line in code.splitlines()) + "\n"


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("readme")
    write_fleet(root / "fleet", runs=60, seed=3)  # more files than the local engine scans in-process
    return root


CHECK = ("print('ROWS', len(df), 'RUNS', df['run'].nunique(), 'SIGNATURES', len(report.table))\n"
         "print('BAD', len(report.bad_files))\n")


@pytest.mark.parametrize("how", ["script", "stdin"])
def test_readme_pandas_snippet_runs_from_a_plain_script(fleet_dir, how):
    code = readme_snippet() + CHECK
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(fleet_dir / f"cache-{how}")}
    if how == "script":
        (fleet_dir / "snippet.py").write_text(code, encoding="utf-8")
        command, stdin = [sys.executable, "snippet.py"], None
    else:
        command, stdin = [sys.executable, "-"], code
    done = subprocess.run(command, cwd=fleet_dir, input=stdin, capture_output=True, text=True, timeout=600,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = dict(zip(*[iter(done.stdout.split())] * 2))
    assert int(rows["ROWS"]) > 0 and int(rows["SIGNATURES"]) > 0, done.stdout
    assert "could not be scanned" not in done.stderr
