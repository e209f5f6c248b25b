"""Signature extraction from Python source (analyzer.extract)."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from analyzer.extract import scan as scan_mod
from analyzer.extract.emit import build_entries, function_slug, module_name, split_entries
from analyzer.extract.message import format_example, percent_example
from analyzer.extract.scan import extract_tree, find_package, find_sources
from analyzer.extract.walker import ParseFailure, extract_source

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "fixtures" / "extract_src"
PKG = SRC / "demo_pkg"


def marker_line(relpath: str, name: str) -> int:
    """Line of the ``# <- name`` marker in a fixture module."""
    lines = (SRC / relpath).read_text(encoding="utf-8").splitlines()
    hits = [i for i, text in enumerate(lines, 1) if re.search(rf"#\s*<-\s*{re.escape(name)}\s*$", text)]
    assert len(hits) == 1, f"marker {name!r} in {relpath}: {hits}"
    return hits[0]


@pytest.fixture(scope="module")
def result():
    return extract_tree(PKG, jobs=1)


@pytest.fixture(scope="module")
def by_location(result):
    return {(e["source"]["path"], e["source"]["line"]): e for e in result.entries}


F = "demo_pkg/forms.py"
X = "demo_pkg/sub/extras.py"

# marker, module, exception, template, style, function, trigger
CASES = [
    ("module_level", F, "RuntimeError", "Python 3 is required", "plain", "<module>",
     "sys.version_info < (3, 0)"),
    ("plain", F, "ValueError", "x must not be None", "plain", "plain_raise", "x is None"),
    ("fstring", F, "ValueError", "backend must be one of {SUPPORTED}, got {cfg.backend!r}.", "fstring",
     "fstring_raise", "cfg.backend not in SUPPORTED"),
    ("fstring_spec", F, "OverflowError", "n={n:d} too large (ratio {ratio:.2f}, {n:>5})", "fstring",
     "fstring_spec", "n > 3"),
    ("percent", F, "IndexError", "rank %d out of range for world size %s", "percent", "percent_raise",
     "rank >= world"),
    ("format", F, "KeyError", "unknown model {} (see {!r})", "format", "format_raise", "not name"),
    ("concat", F, "ValueError",
     "option --a cannot be combined with --b; got a={cfg.a} and b={{cfg.b}} literally", "fstring",
     "concatenated", "cfg.a and cfg.b"),
    ("msg_var", F, "FileNotFoundError", "checkpoint {path} does not exist", "fstring", "message_variable",
     "not path.exists()"),
    ("raise_from", F, "TypeError", "cannot parse {text!r}", "fstring", "raise_from", None),
    ("bare_class", F, "NotImplementedError", "", "plain", "bare_class", None),
    ("non_string", F, "RuntimeError", "", "plain", "non_string", None),
    ("assert_plain", F, "AssertionError", "world size must be divisible by tp", "plain", "asserts",
     "world_size % tp != 0"),
    ("assert_fstring", F, "AssertionError", "tp must be positive, got {tp}", "fstring", "asserts",
     "not (tp > 0)"),
    ("assert_bare", F, "AssertionError", "", "plain", "asserts", "not (world_size >= tp)"),
    ("braces", F, "ValueError", "expected a {{'key': value}} mapping for {cfg.kind}", "fstring", "braces",
     'cfg.kind == "json"'),
    ("log_error", F, "log.error", "rank %s failed: %s", "percent", "logging_calls", "err"),
    ("log_critical", F, "log.critical", "rank {rank} is unreachable", "fstring", "logging_calls", "not err"),
    ("log_exception", F, "log.exception", "worker crashed", "plain", "logging_calls", None),
    ("logging_error", F, "log.error", "root logger: %d errors", "percent", "logging_calls", None),
    ("parser_error", F, "ArgumentError", "--tp must be >= 1, got {args.tp}", "fstring", "cli", "args.tp < 1"),
    ("sys_exit", F, "SystemExit", "dry run requested; exiting", "plain", "cli", "args.dry"),
    ("method", F, "ValueError", "size must be positive, got {size}", "fstring", "Scheduler.__init__",
     "size <= 0"),
    ("nested", F, "ValueError", "value {v} exceeds {size}", "fstring", "Scheduler.check.inner", "v > size"),
    ("dup_1", F, "ValueError", "duplicate message", "plain", "Scheduler.duplicate", "a"),
    ("dup_2", F, "ValueError", "duplicate message", "plain", "Scheduler.duplicate", "not a and b"),
    ("other_module", "demo_pkg/sub/loader.py", "ValueError", "x must not be None", "plain", "load",
     "path is None"),
    ("keyword_detail", X, "HTTPException", "model {model} is not loaded", "fstring", "Server.route",
     'mode != "a" and mode == "b"'),
    ("plus_concat", X, "ValueError", "Unknown mode: {mode}, expected a or b", "fstring", "Server.route",
     'mode != "a" and mode != "b"'),
    ("aug_assign", X, "MemoryError", "cannot grow the pool beyond {n} pages", "fstring", "Server.grow", "n > 8"),
    ("self_logger", X, "log.error", "pool at %d%% capacity", "percent", "Server.grow", "not (n > 8)"),
]


@pytest.mark.parametrize("marker,module,exception,template,style,function,trigger", CASES,
                         ids=[c[0] for c in CASES])
def test_forms(by_location, marker, module, exception, template, style, function, trigger):
    line = marker_line(module, marker)
    entry = by_location.get((module, line))
    assert entry is not None, f"nothing extracted at {module}:{line}"
    assert entry["exception"] == exception
    assert entry["template"] == template
    assert entry["style"] == style
    assert entry["source"]["function"] == function
    assert entry["source"]["line"] == line
    assert entry["trigger"] == trigger
    assert entry["role"] == "root"
    assert entry["tags"][0] == "extracted"
    if template:
        assert len(entry["examples"]) == 1
    else:
        assert entry["examples"] == []


def test_message_less_entries(by_location):
    bare = by_location[(F, marker_line(F, "assert_bare"))]
    assert bare["assert_expr"] == "world_size >= tp"
    assert bare["tags"] == ["extracted", "bare-assert"]
    assert by_location[(F, marker_line(F, "bare_class"))]["tags"] == ["extracted", "no-args"]
    assert by_location[(F, marker_line(F, "non_string"))]["tags"] == ["extracted", "non-string-arg"]


def test_severity(by_location):
    assert by_location[(F, marker_line(F, "log_critical"))]["severity"] == "critical"
    assert by_location[(F, marker_line(F, "log_error"))]["severity"] == "error"
    assert by_location[(F, marker_line(F, "plain"))]["severity"] == "error"


def test_nothing_else_extracted(result):
    """Bare re-raises and ``raise exc`` of a caught instance are not signatures."""
    expected = {(c[1], marker_line(c[1], c[0])) for c in CASES}
    found = {(e["source"]["path"], e["source"]["line"]) for e in result.entries}
    assert found == expected


def test_multiline_raise_uses_raise_line(by_location):
    line = marker_line(F, "concat")
    text = (PKG / "forms.py").read_text().splitlines()[line - 1]
    assert text.strip().startswith("raise ValueError(")
    assert by_location[(F, line)]["source"]["line"] == line


def test_source_fields(result):
    assert result.project == "demo_pkg"
    assert result.version == "1.2.3"  # from __version__, read with ast
    for e in result.entries:
        src = e["source"]
        assert src["project"] == "demo_pkg"
        assert src["version"] == "1.2.3"
        assert src["path"].startswith("demo_pkg/") and "\\" not in src["path"]
    paths = [(e["source"]["path"], e["source"]["line"]) for e in result.entries]
    assert paths == sorted(paths)


def test_unparseable_files_are_skipped_with_warning(result):
    assert result.files == 7
    assert result.skipped == 2
    warnings = sorted(result.warnings)
    assert re.match(r"demo_pkg/bad_encoding\.py:3: skipped: .*utf-8", warnings[0])
    assert re.match(r"demo_pkg/broken\.py:8: skipped: SyntaxError", warnings[1])
    assert all("\n" not in w for w in warnings)
    assert not any("never extracted" in e["template"] for e in result.entries)


def test_source_is_not_imported(result):
    assert "demo_pkg" not in sys.modules
    assert "demo_pkg.forms" not in sys.modules


# -- ids ---------------------------------------------------------------------


def test_id_format(by_location):
    e = by_location[(F, marker_line(F, "method"))]
    assert re.fullmatch(r"demo_pkg\.forms\.scheduler-init\.[0-9a-f]{8}", e["id"])
    e = by_location[(F, marker_line(F, "module_level"))]
    assert re.fullmatch(r"demo_pkg\.forms\.module\.[0-9a-f]{8}", e["id"])
    e = by_location[("demo_pkg/sub/loader.py", marker_line("demo_pkg/sub/loader.py", "other_module"))]
    assert re.fullmatch(r"demo_pkg\.sub\.loader\.load\.[0-9a-f]{8}", e["id"])


def test_id_collisions_get_suffixes_in_source_order(by_location):
    first = by_location[(F, marker_line(F, "dup_1"))]["id"]
    second = by_location[(F, marker_line(F, "dup_2"))]["id"]
    assert second == first + "-2"


def test_ids_unique(result):
    ids = [e["id"] for e in result.entries]
    assert len(ids) == len(set(ids))


def _ids(source: str, path: str = "proj/mod.py") -> list[str]:
    sigs = extract_source(textwrap.dedent(source))
    return [e["id"] for e in build_entries("proj", "1.0", [(path, sigs)])]


def test_id_stable_across_line_moves():
    before = _ids('''
        def f(x):
            if x:
                raise ValueError(f"bad {x}")
    ''')
    after = _ids('''
        import os


        def f(x):
            """Docstring that moves everything down."""
            if x and os.sep:
                raise ValueError(f"bad {x}")
    ''')
    assert before == after
    assert before[0].startswith("proj.mod.f.")


def test_id_changes_with_template_exception_function():
    base = _ids('def f(x):\n    raise ValueError(f"bad {x}")\n')[0]
    assert _ids('def f(x):\n    raise ValueError(f"worse {x}")\n')[0] != base
    assert _ids('def f(x):\n    raise TypeError(f"bad {x}")\n')[0] != base
    assert _ids('def g(x):\n    raise ValueError(f"bad {x}")\n')[0] != base


def test_bare_asserts_get_distinct_ids():
    ids = _ids("def f(a, b):\n    assert a\n    assert b\n")
    assert len(set(ids)) == 2 and not any(i.endswith("-2") for i in ids)


def test_module_and_slug_helpers():
    assert module_name("sglang", "sglang/srt/server_args.py") == "sglang.srt.server_args"
    assert module_name("sglang", "sglang/srt/layers/__init__.py") == "sglang.srt.layers"
    assert function_slug("ServerArgs._handle_a2a_moe") == "serverargs-handle-a2a-moe"
    assert function_slug("<module>") == "module"
    assert function_slug("Outer.__init__.inner") == "outer-init-inner"


# -- templates and examples ----------------------------------------------------


def _one(source: str) -> dict:
    sigs = extract_source(textwrap.dedent(source))
    assert len(sigs) == 1, sigs
    return sigs[0]


@pytest.mark.parametrize("source,template,example", [
    ('raise ValueError(f"{x=}")', "x={x!r}", "x='foo'"),
    ('raise ValueError(f"{ {1: 2}[k]} and {d[\'a\']}")', "{ {1: 2}[k]} and {d['a']}", "foo and foo"),
    ('raise ValueError(f"pad {x:>{w}} {y:08.3f} {z!s:^7}")', "pad {x:>{w}} {y:08.3f} {z!s:^7}",
     "pad foo 0001.500   foo  "),
    ('raise ValueError(f"{n:,d} tokens, {p:.1%}")', "{n:,d} tokens, {p:.1%}", "42 tokens, 150.0%"),
    ('raise ValueError("%(name)s has %-5d items (%.2f%%)" % d)', "%(name)s has %-5d items (%.2f%%)",
     "foo has 42    items (1.50%)"),
    ('raise ValueError("{0} vs {name!r} {x:>4}".format(a, name=b, x=c))', "{0} vs {name!r} {x:>4}",
     "foo vs 'foo'  foo"),
    ('raise ValueError("a" + "b")', "ab", "ab"),
    ('raise ValueError("got " + repr(x) + " {raw}")', "got {x!r} {{raw}}", "got 'foo' {raw}"),
])
def test_template_reconstruction(source, template, example):
    sig = _one(source)
    assert sig["template"] == template
    assert sig["example"] == example


def test_percent_and_format_helpers():
    assert percent_example("%s=%r (%d%%) %5.1f %x") == "foo='foo' (42%)   1.5 2a"
    assert percent_example("%5s|%-4d|%(k)s|%c") == "  foo|42  |foo|x"
    assert format_example("{} {0!r} {{x}}") == "foo 'foo' {x}"
    assert format_example("bad {") is None


def test_log_call_without_args_is_plain():
    sig = _one('logger.error("100% broken")')
    assert (sig["style"], sig["template"]) == ("plain", "100% broken")


def test_ignored_calls():
    assert extract_source("logger.info('x')\nlogger.warning('y')\nfoo.error('z')\nsys.exit(1)\n") == []
    assert extract_source("raise make_error('x')\n") == []


def test_parse_failure():
    with pytest.raises(ParseFailure) as info:
        extract_source("def f(:\n    pass\n")
    assert info.value.line == 1


def test_examples_match_their_templates(result):
    template_mod = pytest.importorskip("analyzer.core.template")
    checked = 0
    for e in result.entries:
        style = "auto" if e["style"] == "plain" else e["style"]  # as the matcher maps it
        compiled = template_mod.compile_template(e["template"], style)
        for example in e["examples"]:
            assert compiled.match(example) is not None, (e["id"], e["template"], example)
            assert template_mod.compile_template(e["template"]).match(example) is not None, e["id"]
            checked += 1
    assert checked >= 25


# -- scanning ------------------------------------------------------------------


def test_single_file_path_is_package_relative():
    base, files = find_sources(PKG / "sub" / "loader.py")
    assert base == SRC
    assert [rel for _, rel in files] == ["demo_pkg/sub/loader.py"]


def test_exclude_globs():
    _, files = find_sources(PKG, exclude=["demo_pkg/sub/*"])
    assert all(not rel.startswith("demo_pkg/sub/") for _, rel in files)


def test_process_pool_gives_same_output(monkeypatch, result):
    monkeypatch.setattr(scan_mod, "_POOL_MIN_FILES", 1)
    pooled = extract_tree(PKG, jobs=2)
    assert pooled.entries == result.entries
    assert sorted(pooled.warnings) == sorted(result.warnings)


def test_find_package_without_import(monkeypatch):
    monkeypatch.syspath_prepend(str(SRC))
    assert find_package("demo_pkg") == PKG
    assert find_package("demo_pkg.sub") == PKG / "sub"
    assert "demo_pkg" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        find_package("no_such_pkg_for_analyzer_tests")


def test_split_by_subpackage(result):
    files = split_entries("demo_pkg", result.entries)
    assert sorted(files) == ["_root.yaml", "sub.yaml"]
    assert all(e["source"]["path"].startswith("demo_pkg/sub/") for e in files["sub.yaml"])


# -- CLI -----------------------------------------------------------------------


def _parser():
    from analyzer.commands import patterns_extract

    parser = argparse.ArgumentParser(prog="analyzer patterns")
    sub = parser.add_subparsers(dest="command", required=True)
    patterns_extract.register(sub)
    return parser


def test_cli_extract_path(tmp_path, capsys):
    out = tmp_path / "pack"
    args = _parser().parse_args(["extract", str(PKG), "-o", str(out), "--version", "9.9"])
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert re.search(r"extracted \d+ signatures from 7 files \(2 skipped\) in [\d.]+s", captured.out)
    err_lines = captured.err.strip().splitlines()
    assert len(err_lines) == 2 and all(line.startswith("warning: demo_pkg/") for line in err_lines)
    assert sorted(p.name for p in out.iterdir()) == ["_root.yaml", "sub.yaml"]
    doc = yaml.safe_load((out / "_root.yaml").read_text(encoding="utf-8"))
    assert doc["schema"] == 1 and doc["project"] == "demo_pkg" and doc["version"] == "9.9"
    assert doc["generated_by"].startswith("analyzer patterns extract ")
    first = doc["patterns"][0]
    assert list(first)[:6] == ["id", "exception", "template", "style", "source", "trigger"]
    assert first["source"]["version"] == "9.9"


def test_cli_extract_package_and_schema(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(SRC))
    out = tmp_path / "single.yaml"
    args = _parser().parse_args(["extract", "--package", "demo_pkg", "-o", str(out)])
    assert args.func(args) == 0
    assert "demo_pkg" not in sys.modules
    doc = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert doc["version"] == "1.2.3"
    assert "--package demo_pkg" in doc["generated_by"]
    schema = pytest.importorskip("analyzer.core.schema")
    for entry in doc["patterns"]:
        pattern, problems = schema.build_pattern(entry, "x", {})
        assert problems == [], problems


def test_cli_needs_exactly_one_source(tmp_path, capsys):
    args = _parser().parse_args(["extract", "-o", str(tmp_path)])
    assert args.func(args) == 2
    args = _parser().parse_args(["extract", str(PKG), "--package", "demo_pkg", "-o", str(tmp_path)])
    assert args.func(args) == 2
    args = _parser().parse_args(["extract", str(tmp_path / "missing"), "-o", str(tmp_path / "o")])
    assert args.func(args) == 2  # a missing input is a usage error, as with every command


def test_trigger_is_the_whole_path_condition():
    """Enclosing ifs, earlier early returns in the same block, and an assert's test negated."""
    sigs = extract_source(textwrap.dedent('''
        def check(cfg, backends, allowed):
            if cfg is None:
                return
            for name in backends:
                if name.startswith("_"):
                    continue
                if cfg.strict or cfg.audit:
                    assert backends <= allowed, f"unsupported {backends - allowed}"
                    if name not in allowed:
                        raise ValueError(f"unknown backend {name}")
    '''))
    assert [s["trigger"] for s in sigs] == [
        "cfg is not None and not name.startswith('_') and (cfg.strict or cfg.audit) and not (backends <= allowed)",
        "cfg is not None and not name.startswith('_') and (cfg.strict or cfg.audit) and name not in allowed",
    ]
