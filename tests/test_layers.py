"""The import graph runs one way: core <- sources, sinks <- engine <- front ends <- cli.

A module may import its own layer and the layers below it, never one above: the pure core knows no
files or screens, the engine knows no command line, and no front end reaches into another.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "analyzer"

# What each part of the package may import (besides itself and the package root `analyzer`).
ALLOWED = {
    "options": set(),  # what decides a scan besides the logs: plain values every layer may read
    "core": set(),
    "extract": {"core"},
    "sources": {"core", "options"},
    "sinks": {"core"},
    "engine": {"core", "sources", "sinks", "options"},
    "report": {"core", "sources", "sinks", "engine", "options"},
    "tui": {"core", "sources", "sinks", "engine", "options"},
    "commands": {"core", "sources", "sinks", "engine", "extract", "report", "tui", "options"},
    "cli": {"commands"},
    "__main__": {"cli"},
}


def _part(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("analyzer.")}


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_runs_up_a_layer(path):
    layer = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    if layer == "__init__":
        return
    wrong = sorted(name for name in _imports(path)
                   if _part(name) != layer and _part(name) not in ALLOWED[layer] and _part(name) != "__init__")
    assert not wrong, f"{path.relative_to(PACKAGE)} imports {wrong}, above or beside its layer '{layer}'"


def test_every_part_of_the_package_has_a_layer():
    parts = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in MODULES}
    assert parts - {"__init__"} <= set(ALLOWED), parts - set(ALLOWED)
