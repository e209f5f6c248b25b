"""`patterns check` notes what limits a pack: generic templates and same-text twins."""

from __future__ import annotations

from analyzer.cli import main
from analyzer.core.packcheck import pack_notes
from analyzer.core.schema import Pattern, PatternSource

PACK = """schema: 1
project: demo
patterns:
  - id: demo.dtype
    exception: ValueError
    template: "Unsupported dtype: {dtype}"
    source: {path: demo/quant.py, line: 3, function: pick}
  - id: demo.missing-a
    exception: RuntimeError
    template: "weights of {name} are missing from the checkpoint"
    source: {path: demo/loader.py, line: 10, function: load_dense}
  - id: demo.missing-b
    exception: RuntimeError
    template: "weights of {name} are missing from the checkpoint"
    source: {path: demo/loader.py, line: 40, function: load_moe}
  - id: demo.universal
    exception: BrokenPipeError
    template: "[Errno 32] Broken pipe"
"""


def test_generic_and_twins_are_found():
    def at(path: str) -> PatternSource:
        return PatternSource(path=path, function="f")

    notes = pack_notes([
        Pattern("a", "ValueError", "Unsupported dtype: {dtype}", at("demo/q.py")),
        Pattern("b", "ValueError", "Unsupported dtype: {dtype}", at("other.py")),  # no package: the text is all
        Pattern("c", "KeyError", "no such layer in the checkpoint index: {name}", at("demo/l.py")),
        Pattern("d", "KeyError", "no such layer in the checkpoint  index: {name}", at("demo/l.py")),
        Pattern("e", "log.error", "x", at("demo/l.py")),
    ])
    assert [p.id for p in notes.generic] == ["a"]
    assert [[p.id for p in group] for group in notes.twins] == [["c", "d"]]


def test_patterns_check_reports_them(tmp_path, capsys):
    (tmp_path / "demo.yaml").write_text(PACK)
    assert main(["patterns", "check", "--notes", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "'demo.dtype' is generic" in out and "2 raises of 'weights of {name} are missing" in out
    assert out.splitlines()[-1].endswith(": ok; 1 generic template(s) matched only at their raise site, "
                                         "2 same-text twin(s) told apart by function and line")
