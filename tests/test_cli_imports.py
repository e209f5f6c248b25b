"""Each command imports what it needs and nothing more: start-up is mostly imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "pyarrow", "textual", "yaml", "rich.progress", "analyzer.commands.report",
         "analyzer.commands.tui", "analyzer.commands.patterns", "analyzer.report.fleet")
_PROBE = """
import contextlib, io, json, sys
from analyzer.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as exit:
        code = exit.code
print(json.dumps([code, sorted(sys.modules)]))
"""


def _imported(argv: list[str]) -> tuple[int, set[str]]:
    result = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    code, modules = json.loads(result.stdout)
    return code, set(modules)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_help_and_version_import_no_command(argv):
    code, modules = _imported(argv)
    assert code in (0, 2)
    assert not {m for m in modules if m.startswith("analyzer.commands.")} - {"analyzer.commands.exit_codes"}
    assert not modules & {*HEAVY, "analyzer.core.matcher", "rich.console"}


def test_scan_and_explain_import_neither_pandas_nor_textual_nor_yaml(tmp_path):
    log = tmp_path / "one.log"
    log.write_text("ValueError: x\n")
    for argv in (["scan", str(log)], ["explain", "ValueError: x"]):
        code, modules = _imported(argv)
        assert code in (0, 1)
        assert not modules & set(HEAVY), (argv, modules & set(HEAVY))
