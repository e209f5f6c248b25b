"""A built wheel installed into a fresh venv, run in an empty folder: it must carry its knowledge.

The wheel is built from a copy of the checkout (nothing written into the tree) with the core left as
Python (ANALYZER_COMPILE=0: compiling it takes a minute), or taken from $ANALYZER_TEST_WHEEL (.ci/run passes
the compiled wheel it builds), installed without dependencies and without any index; the venv sees this
environment's packages through a path file, not its `analyzer`, so only what the wheel holds can answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEED_ID = "sglang.deepseek-v4-cp-a2a-backend"
SEED_MESSAGE = ("DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), "
                "got 'flashinfer_tkv'.")
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                     ".hypothesis", "data", "__snapshots__")

# Starts the real `analyzer tui` entry point, but drives the app headless until it shows the scan.
_TUI_START = """
import asyncio, sys
from analyzer.tui import app as tui_app

class Started(tui_app.TriageApp):
    def run(self, **_):
        async def start():
            async with self.run_test(size=(100, 32)) as pilot:
                for _ in range(400):
                    if self.incidents:
                        break
                    await pilot.pause(0.05)
        asyncio.run(start())
        print("tui started:", len(self.incidents or ()), "incident(s)")

tui_app.TriageApp = Started
from analyzer.cli import main
sys.exit(main(["tui"]))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("install")
    if "ANALYZER_TEST_WHEEL" in os.environ:
        wheel = Path(os.environ["ANALYZER_TEST_WHEEL"])
    else:
        built = _build(tmp, {"ANALYZER_COMPILE": "0"})
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        wheel = next((tmp / "dist").glob("analyzer-*.whl"))
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    Path(purelib, "_test_deps.pth").write_text("".join(f"{d}\n" for d in sorted(deps)))
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", str(wheel)],
                   check=True)  # (forced: the environment seen through the path file may hold the same version)
    home = tmp / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "ANALYZER_PATTERNS")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), COLUMNS="200", NO_COLOR="1")
    empty = tmp / "empty"
    empty.mkdir()
    return {"bin": str(env_dir / "bin"), "cwd": str(empty), "home": str(home),
            **{f"env:{k}": v for k, v in env.items()}}


def _build(tmp: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`pip wheel` of a copy of the checkout into tmp/dist, with these variables set."""
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index",
                           "-w", str(tmp / "dist"), str(source)], env={**os.environ, **env}, capture_output=True,
                          text=True, check=False)


def _run(installed: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    env = {k[4:]: v for k, v in installed.items() if k.startswith("env:")}
    command = [str(Path(installed["bin"]) / argv[0]), *argv[1:]]
    return subprocess.run(command, cwd=installed["cwd"], env=env, capture_output=True, text=True, timeout=300,
                          check=False)


pytestmark = pytest.mark.slow
_IN_A_CHECKOUT = pytest.mark.skipif(not (ROOT / "analyzer").is_dir(), reason="builds from a checkout (the tests run "
                                    "outside one, against $ANALYZER_TEST_WHEEL)")


def test_the_installed_copy_is_the_one_that_runs(installed):
    found = _run(installed, "python", "-c", "import analyzer; print(analyzer.__file__)")
    assert found.stdout.startswith(str(Path(installed["bin"]).parent)), found


def test_scan_without_a_path_names_the_seed_error_with_its_fixes(installed):
    result = _run(installed, "analyzer", "scan")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr and "error" not in result.stderr, result.stderr
    assert SEED_ID in result.stdout and "Fix 1: " in result.stdout and "Fix 3: " in result.stdout
    assert "ROOT CAUSE" in result.stdout


def test_explain_a_message(installed):
    result = _run(installed, "analyzer", "explain", f"ValueError: {SEED_MESSAGE}")
    assert result.returncode == 0, result.stderr
    assert SEED_ID in result.stdout


def test_tui_starts(installed):
    result = _run(installed, "python", "-c", _TUI_START)
    assert result.returncode == 0, result.stderr
    assert "tui started: 1 incident(s)" in result.stdout


def test_report(installed):
    sample = _run(installed, "python", "-c", "from analyzer.commands.common import sample_log; print(sample_log())")
    result = _run(installed, "analyzer", "report", "--no-cache", "--format", "json", sample.stdout.strip())
    assert result.returncode == 0, result.stderr
    assert SEED_ID in result.stdout


def test_the_shipped_index_is_used_as_it_is(installed):
    """No first-run penalty for the packs: nothing was compiled or written in $HOME but the fast
    path's Hyperscan databases, which are compiled for the machine that runs them and kept."""
    home = Path(installed["home"])
    written = [p.relative_to(home) for p in home.rglob("*") if p.is_file()]
    assert written and all(p.parent == Path(".cache/analyzer/hyperscan") and p.suffix == ".db" for p in written), written
    index = _run(installed, "python", "-c", "from analyzer.sources.packs import builtin_index_path as p; "
                                             "print(p().is_file(), p().parent.parent.parent.name)")
    assert index.stdout.split() == ["True", "site-packages"]


@_IN_A_CHECKOUT
def test_a_wheel_built_where_no_c_compiler_works_carries_the_core_as_python(tmp_path):
    built = _build(tmp_path, {"CC": "false"})  # (a compiler that fails on every file)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "warning: the core is left uncompiled" in built.stdout + built.stderr
    with zipfile.ZipFile(next((tmp_path / "dist").glob("analyzer-*.whl"))) as wheel:
        names = wheel.namelist()
    assert "analyzer/core/scan.py" in names and not [name for name in names if name.endswith(".so")], names


@_IN_A_CHECKOUT
def test_a_build_that_must_compile_the_core_fails_where_it_cannot(tmp_path):
    built = _build(tmp_path, {"CC": "false", "ANALYZER_COMPILE": "1"})
    assert built.returncode != 0
    assert "ANALYZER_COMPILE=1, but the core cannot be compiled" in built.stdout + built.stderr
    assert not list((tmp_path / "dist").glob("*.whl"))
