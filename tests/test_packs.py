"""Pattern packs: the shipped packs pass `patterns check`; every example matches its own pattern;
broken user packs are reported with file:line and skipped, never fatal."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.core.matcher import Matcher, MatchKind
from analyzer.sources.packs import builtin_pack_dir, load_pack_files, load_packs, pack_files

# the curated files read alone (the index holds 76,000 patterns: reading them all in every test worker costs seconds)
CURATED = [p for p in load_pack_files(f for f in pack_files(builtin_pack_dir()) if "extracted" not in f.parts)[0]
           if p.curated or "extracted" not in p.origin]


@pytest.mark.slow
def test_shipped_packs_pass_check(capsys):
    assert main(["patterns", "check"]) == 0, capsys.readouterr().out[-3000:]


@cache
def builtin_matcher() -> Matcher:
    return Matcher(load_packs(use_env=False))


@pytest.mark.parametrize("pattern", CURATED, ids=lambda p: p.id)
def test_each_curated_example_matches_its_own_pattern(pattern):
    matcher = builtin_matcher()
    assert pattern.examples, "every curated pattern carries at least one real example"
    if pattern.site is not None:
        pytest.skip("told by its frame, not its message: tests/test_curated_pages.py scans it in a log")
    for example in pattern.examples:
        found = matcher.match_message(example, pattern.short_exception)
        # a short, generic text is only "possible" without a traceback to confirm its site (issue #17)
        assert found.pattern is not None and found.pattern.id == pattern.id, example
        assert found.match_kind in (MatchKind.EXACT, MatchKind.POSSIBLE), example


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """schema: 1
project: demo
patterns:
  - id: demo.bad-port
    exception: ValueError
    template: "port {port:d} is already in use by {owner!r}"
    fixes: [{title: "Pick another port than {port}", before: "--port {port}", after: "--port 30001"}]
    examples: ["port 30000 is already in use by 'nginx'"]
"""


def test_broken_user_pack_is_skipped_with_file_and_line(tmp_path, capsys):
    _write(tmp_path, "good.yaml", GOOD)
    _write(tmp_path, "broken.yaml", "patterns:\n  - id: x\n    exception: [unclosed\n")
    _write(tmp_path, "schema.yaml", "patterns:\n  - id: demo.no-template\n    exception: ValueError\n"
                                    "  - id: demo.bad-role\n    exception: E\n    template: t\n    role: maybe\n")
    packs = load_packs([str(tmp_path)], builtin=False, use_env=False)
    assert [p.id for p in packs.patterns] == ["demo.bad-port"]
    messages = [str(p) for p in packs.problems]
    assert any(m.startswith(f"{tmp_path / 'broken.yaml'}:") and "invalid YAML" in m for m in messages)
    assert f"{tmp_path / 'schema.yaml'}:2: missing required field 'template'" in messages
    assert any(m.startswith(f"{tmp_path / 'schema.yaml'}:4:") and "'role'" in m for m in messages)
    log = _write(tmp_path, "run.log", "ValueError: port 30000 is already in use by 'nginx'\n")
    assert main(["scan", "--format", "jsonl", "--patterns", str(tmp_path), str(log)]) == 0
    captured = capsys.readouterr()
    assert "pattern skipped" in captured.err and "broken.yaml" in captured.err
    assert '"pattern_id": "demo.bad-port"' in captured.out
    assert '"before": "--port 30000"' in captured.out


def test_user_pattern_overrides_builtin_by_id(tmp_path, monkeypatch):
    override = GOOD.replace("demo.bad-port", "sglang.deepseek-v4-cp-a2a-backend")
    _write(tmp_path, "override.yaml", override)
    monkeypatch.setenv("ANALYZER_PATTERNS", str(tmp_path))
    packs = load_packs()
    by_id = {p.id: p for p in packs.patterns}
    assert by_id["sglang.deepseek-v4-cp-a2a-backend"].template.startswith("port ")


def test_check_reports_each_kind_of_problem(tmp_path, capsys):
    _write(tmp_path, "a.yaml", """patterns:
  - id: demo.one
    exception: ValueError
    template: "value {x!r} is wrong"
    related: [demo.nowhere]
    examples: ["value 'a' is wrong", "something else entirely"]
  - id: demo.one
    exception: ValueError
    template: "other"
  - id: demo.broken
    exception: ValueError
    template: "bad {x!r:{nested}"
    style: fstring
  - id: demo.greedy
    exception: ValueError
    template: "value {anything}"
    examples: ["value 'a' is wrong"]
""")
    assert main(["patterns", "check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "duplicate id 'demo.one'" in out
    assert "related id 'demo.nowhere' does not exist" in out
    assert "example does not match its template: 'something else entirely'" in out
    assert "'demo.broken': template does not compile" in out
    assert "'demo.greedy': example is claimed by 'demo.one'" in out
    assert all(line.startswith(str(tmp_path / "a.yaml") + ":") for line in out.splitlines()[:-1])


def test_explain_by_id_and_by_message(capsys):
    assert main(["explain", "sglang.deepep-v2-deterministic"]) == 0
    page = capsys.readouterr().out
    for heading in ("Error message", "What it means", "Source", "When it happens", "Fixes", "Examples",
                    "Related errors"):
        assert heading in page
    assert "sglang/srt/server_args.py:7701 in ServerArgs._handle_a2a_moe" in page
    message = "ValueError: DeepEP v2 MoE currently supports only --moe-runner-backend deep_gemm. Got 'triton'. " \
              "Add a runner adapter before enabling DeepEP v2 with other MoE runners."
    assert main(["explain", message]) == 0
    page = capsys.readouterr().out
    assert "sglang.deepep-v2-runner-backend" in page and "matched exact" in page
    assert "--moe-a2a-backend deepep_v2 --moe-runner-backend triton" in page
    assert main(["explain", "nothing like any known error at all"]) == 1
