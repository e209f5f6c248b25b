"""Re-extraction into an existing pack (analyzer patterns update)."""

from __future__ import annotations

import argparse
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from analyzer.extract.emit import load_pack
from analyzer.extract.update import merge_entries

V1 = '''\
def load(path, strict):
    if path is None:
        raise ValueError("path is required")
    if strict:
        raise RuntimeError(f"strict mode: {path}")
    assert path.exists(), f"{path} missing"
    return path


def gone():
    raise KeyError("removed later")


def stays():
    raise OSError("unchanged")
'''

# same messages, moved down by a docstring; one trigger edited, one raise
# removed, one added
V2 = '''\
"""A module docstring that moves load() down by two lines."""

def load(path, strict):
    if path is None:
        raise ValueError("path is required")
    if strict and path:
        raise RuntimeError(f"strict mode: {path}")
    assert path.exists(), f"{path} missing"
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    return path


def stays():
    raise OSError("unchanged")
'''


def _parser():
    from analyzer.commands import patterns_extract, patterns_update

    parser = argparse.ArgumentParser(prog="analyzer patterns")
    sub = parser.add_subparsers(dest="command", required=True)
    patterns_extract.register(sub)
    patterns_update.register(sub)
    return parser


def _run(*argv: str) -> int:
    args = _parser().parse_args(list(argv))
    return args.func(args)


def _write_src(root: Path, text: str) -> Path:
    pkg = root / "proj"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "core.py").write_text(text, encoding="utf-8")
    return pkg


def _by_exception(pack: Path) -> dict[str, dict]:
    _, entries = load_pack(pack)
    return {e["exception"]: e for e in entries}


@pytest.fixture
def curated_pack(tmp_path, capsys):
    src = _write_src(tmp_path / "src", V1)
    pack = tmp_path / "pack"
    assert _run("extract", str(src), "-o", str(pack), "--version", "1.0") == 0
    capsys.readouterr()
    path = pack / "_root.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for e in doc["patterns"]:
        if e["exception"] == "ValueError":
            e["meaning"] = "load() was called without a path."
            e["situations"] = "Happens when the config file omits `path`."
            e["fixes"] = [{"title": "Pass a path", "text": "Set `path:` in the config."}]
            e["related"] = ["proj.core.stays.x"]
            e["tags"] = ["extracted", "config"]
            e["role"] = "consequence"
            e["severity"] = "critical"
            e["examples"] = ["path is required", "path is required  "]
        elif e["exception"] == "AssertionError":
            e["template"] = "{path} missing (locked)"
            e["template_locked"] = True
        elif e["exception"] == "KeyError":
            e["meaning"] = "curated, but the raise goes away"
        elif e["exception"] == "RuntimeError":
            e["template"] = "hand-edited but not locked"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")
    return tmp_path, pack


def test_update_keeps_curation_and_moves_lines(curated_pack, capsys):
    root, pack = curated_pack
    old = _by_exception(pack)
    src = _write_src(root / "src", V2)
    assert _run("update", str(src), "--pack", str(pack), "--version", "2.0") == 0
    out = capsys.readouterr()
    assert "added 1, removed 1, changed 3 (moved 3), unchanged 1" in out.out
    new = _by_exception(pack)

    # ids survive the move; lines follow the code
    for exc in ("ValueError", "RuntimeError", "AssertionError", "OSError"):
        assert new[exc]["id"] == old[exc]["id"]
    assert new["ValueError"]["source"]["line"] == old["ValueError"]["source"]["line"] + 2
    assert new["OSError"]["source"] == {**old["OSError"]["source"], "version": "2.0"}
    assert new["ValueError"]["source"]["version"] == "2.0"

    # curated fields kept
    v = new["ValueError"]
    assert v["meaning"] == "load() was called without a path."
    assert v["situations"].startswith("Happens when")
    assert v["fixes"] == [{"title": "Pass a path", "text": "Set `path:` in the config."}]
    assert v["related"] == ["proj.core.stays.x"]
    assert v["tags"] == ["extracted", "config"]
    assert (v["role"], v["severity"]) == ("consequence", "critical")
    assert v["examples"] == ["path is required", "path is required  "]

    # template: kept only when locked
    assert new["AssertionError"]["template"] == "{path} missing (locked)"
    assert new["AssertionError"]["template_locked"] is True
    assert new["RuntimeError"]["template"] == "strict mode: {path}"
    assert new["RuntimeError"]["trigger"] == "path is not None and (strict and path)"  # after the early raise

    # removed / added
    assert "KeyError" not in new
    assert new["IsADirectoryError"]["template"] == "{path} is a directory"
    assert re.search(r"^added:\n  proj\.core\.load\.[0-9a-f]{8}$", out.out, re.M)
    assert re.search(r"^removed:\n  proj\.core\.gone\.[0-9a-f]{8}$", out.out, re.M)
    assert re.search(r"^  proj\.core\.load\.[0-9a-f]{8} \(line 5 -> 7; trigger\)$", out.out, re.M)
    assert "removed entries had curated fields" in out.err

    # curated keys are written in a stable, reviewable order
    doc = yaml.safe_load((pack / "_root.yaml").read_text(encoding="utf-8"))
    keys = list(next(e for e in doc["patterns"] if e["exception"] == "ValueError"))
    assert keys.index("tags") < keys.index("meaning") < keys.index("fixes") < keys.index("examples")


def test_update_is_idempotent(curated_pack, capsys):
    root, pack = curated_pack
    src = _write_src(root / "src", V2)
    assert _run("update", str(src), "--pack", str(pack), "--version", "2.0") == 0
    first = (pack / "_root.yaml").read_bytes()
    capsys.readouterr()
    assert _run("update", str(src), "--pack", str(pack), "--version", "2.0", "--quiet") == 0
    out = capsys.readouterr().out
    assert "added 0, removed 0, changed 0 (moved 0), unchanged 5" in out
    assert "added:" not in out
    assert (pack / "_root.yaml").read_bytes() == first


def test_dry_run_writes_nothing(curated_pack, capsys):
    root, pack = curated_pack
    before = (pack / "_root.yaml").read_bytes()
    src = _write_src(root / "src", V2)
    assert _run("update", str(src), "--pack", str(pack), "--dry-run") == 0
    assert "dry run" in capsys.readouterr().out
    assert (pack / "_root.yaml").read_bytes() == before


def test_update_removes_stale_files(tmp_path, capsys):
    src = _write_src(tmp_path / "src", V1)
    sub = src / "extra"
    sub.mkdir()
    (sub / "__init__.py").write_text("", encoding="utf-8")
    (sub / "m.py").write_text('raise ValueError("x")\n', encoding="utf-8")
    pack = tmp_path / "pack"
    assert _run("extract", str(src), "-o", str(pack)) == 0
    assert (pack / "extra.yaml").exists()
    (sub / "m.py").unlink()
    (pack / "notes.yaml").write_text("not: a pack\n", encoding="utf-8")
    assert _run("update", str(src), "--pack", str(pack)) == 0
    assert not (pack / "extra.yaml").exists()
    assert (pack / "notes.yaml").exists()  # not ours: left alone
    assert "removed 1" in capsys.readouterr().out


def test_merge_entries_unit():
    def entry(eid, line, trigger=None, **extra):
        e = {"id": eid, "exception": "ValueError", "template": "t", "style": "plain",
             "source": {"project": "p", "path": "p/m.py", "line": line, "function": "f"},
             "trigger": trigger, "role": "root", "severity": "error", "tags": ["extracted"],
             "examples": ["t"]}
        e.update(extra)
        return e

    old = [entry("a", 1), entry("b", 2, meaning="m", tags=["extracted", "x"], custom_note="kept"),
           entry("c", 3)]
    new = [entry("b", 2), entry("c", 9, trigger="flag"), entry("d", 10)]
    merged, report = merge_entries(old, new)
    assert [e["id"] for e in merged] == ["b", "c", "d"]
    assert report.added == ["d"] and report.removed == ["a"]
    assert report.changed == {"c": ["line 3 -> 9", "trigger"]}
    assert report.unchanged == 1
    b = merged[0]
    assert b["meaning"] == "m" and b["tags"] == ["extracted", "x"] and b["custom_note"] == "kept"
    assert report.removed_curated == []


def test_update_into_missing_pack_adds_everything(tmp_path, capsys):
    src = _write_src(tmp_path / "src", textwrap.dedent(V1))
    assert _run("update", str(src), "--pack", str(tmp_path / "new")) == 0
    assert "added 5, removed 0" in capsys.readouterr().out
