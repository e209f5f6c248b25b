"""The build backend asks for mypyc unless a wheel is to be built uncompiled, and setup.py compiles modules that
exist. (The compiled wheel itself is built and tested by .ci/run; the fallback by tests/test_install.py.)"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def backend(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    sys.modules.pop("build_backend", None)
    import build_backend

    monkeypatch.setattr(build_backend.build_meta, "get_requires_for_build_wheel", lambda config_settings=None: ["x"])
    yield build_backend
    sys.modules.pop("build_backend", None)


@pytest.mark.parametrize(("value", "compiled"), [(None, True), ("0", False), ("1", True)])
def test_mypyc_is_asked_for_unless_the_wheel_is_built_uncompiled(backend, monkeypatch, value, compiled):
    if value is None:
        monkeypatch.delenv("ANALYZER_COMPILE", raising=False)
    else:
        monkeypatch.setenv("ANALYZER_COMPILE", value)
    assert backend.get_requires_for_build_wheel() == (["x", backend.MYPYC] if compiled else ["x"])


@pytest.mark.skipif(not (ROOT / "analyzer").is_dir(), reason="the tests run outside a checkout (the compiled wheel's)")
def test_the_modules_compiled_exist():
    tree = ast.parse((ROOT / "setup.py").read_text())
    compiled = next(ast.literal_eval(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                    and any(isinstance(target, ast.Name) and target.id == "COMPILED" for target in node.targets))
    assert compiled and all((ROOT / path).is_file() for path in compiled)


def test_the_version_says_whether_the_core_runs_compiled(capsys):
    from analyzer.cli import main
    from analyzer.core import scan

    with pytest.raises(SystemExit):
        main(["--version"])
    said = capsys.readouterr().out
    assert said.startswith("analyzer ") and ("compiled" in said) == (not (scan.__file__ or "").endswith(".py"))
