"""Signature history: two releases of the demo package, merged by id, and matched per release."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from analyzer.core.matcher import Matcher
from analyzer.core.notices import NoticeDetector
from analyzer.core.scan import Analysis, Change, events_from_lines
from analyzer.core.schema import Pattern, PatternSource
from analyzer.core.versions import (
    LifeKind,
    Project,
    RunMatchers,
    TieredMatcher,
    VersionSniffer,
    format_history,
    parse_history,
    patterns_for_run,
    select_patterns,
    version_key,
    version_note,
)
from analyzer.extract.history import (
    extract_release,
    merge_releases,
    read_sources,
    removed_entries,
)
from analyzer.sources.packs import load_pack_files
from tests.realtb import capture, text_of

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "extract_src" / "demo_pkg"
MOVED_BY = 30  # more than the matcher's raise-site window: the old line would not find the new site


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """1.0 is the demo package as it is; 1.1 moves loader.load and all of forms.py down, drops percent_raise's raise,
    rewords format_raise, moves braces to another module and adds a function."""
    root = tmp_path_factory.mktemp("releases")
    for version in ("1.0", "1.1"):
        shutil.copytree(DEMO, root / version / "demo_pkg")
    newer = root / "1.1" / "demo_pkg"
    _edit(newer / "sub" / "loader.py", '"""Second module', "#\n" * MOVED_BY + '"""Second module')
    _edit(newer / "forms.py", '"""Every message form', "#\n" * MOVED_BY + '"""Every message form')
    _edit(newer / "forms.py", '        raise IndexError("rank %d out of range for world size %s" % (rank, world))',
          "        return None")
    _edit(newer / "forms.py", '"unknown model {} (see {!r})"', '"no model named {} (see {!r})"')
    braces = 'def braces(cfg):\n    if cfg.kind == "json":\n        raise ValueError(f"expected a {{\'key\': value}} mapping for {cfg.kind}")'
    _edit(newer / "forms.py", braces, "")
    _edit(newer / "sub" / "extras.py", "class HTTPException",
          f'def fresh():\n    raise OSError("brand new")\n\n\n{braces}\n\n\nclass HTTPException')
    cache = root / "cache"
    built = [extract_release(root / v, "demo_pkg", v, cache, jobs=1) for v in ("1.1", "1.0")]
    return root, cache, built


@pytest.fixture(scope="module")
def history(releases):
    return merge_releases("demo_pkg", releases[2])


def _id(history, function_slug: str, index: int = 0) -> str:
    found = sorted(sid for sid in history.spans if f".{function_slug}." in sid)
    return found[index]


def test_a_moved_signature_keeps_its_id_with_a_line_per_release(history):
    hist, _ = history
    sid = _id(hist, "load")
    first, second = hist.spans[sid]
    assert (first.first, first.last, second.first, second.last) == ("1.0", "1.0", "1.1", "1.1")
    assert second.line == first.line + MOVED_BY
    assert [e.kind for e in hist.life(sid)] == [LifeKind.ADDED, LifeKind.MOVED]
    assert hist.line_in(sid, "1.0") == first.line and hist.line_in(sid, "1.1.post2") == second.line


def test_a_removed_signature_names_the_release_that_removed_it(history):
    hist, latest = history
    sid = _id(hist, "percent-raise")
    assert hist.removed_in(sid) == "1.1"
    assert hist.note(sid) == "raised in 1.0; removed in 1.1; upgrade to 1.1 fixes this"
    assert hist.note(sid, "1.1") == "raised in 1.0; removed in 1.1; not raised by 1.1"
    removed = removed_entries(hist, latest)
    assert sid in {e["id"] for e in removed}
    assert all("removed" in e["tags"] for e in removed)


def test_a_reworded_message_points_to_its_successor(history):
    hist, _ = history
    old, new = (sid for sid in sorted(hist.spans, key=lambda s: hist.spans[s][0].first)
                if ".format-raise." in sid)
    assert [(e.kind, e.detail) for e in hist.life(old)] == [(LifeKind.ADDED, hist.life(old)[0].detail),
                                                            (LifeKind.REWORDED, new)]
    assert hist.note(old) == "raised in 1.0; reworded in 1.1"  # no upgrade advice: 1.1 still raises it
    assert hist.note(new) == "new in 1.1"


def test_a_message_raised_from_another_module_is_relocated_not_fixed(history):
    hist, _ = history
    old = _id(hist, "braces")
    assert old.startswith("demo_pkg.forms.")
    (event,) = [e for e in hist.life(old) if e.kind is not LifeKind.ADDED]
    assert event.kind is LifeKind.RELOCATED and event.detail.startswith("demo_pkg.sub.extras.braces.")
    assert hist.note(old) == "raised in 1.0; moved elsewhere in 1.1"


def test_the_text_form_round_trips_and_the_release_cache_resumes(releases, history):
    hist, _ = history
    again = parse_history(format_history(hist))
    assert again.project == "demo_pkg" and again.versions == ("1.0", "1.1") and again.spans == hist.spans
    root, cache, built = releases
    resumed = extract_release(root / "1.0", "demo_pkg", "1.0", cache, jobs=1)
    assert resumed.entries == built[1].entries and resumed.cached_files == resumed.files
    only = [rel for rel, _ in read_sources(root / "1.0", "demo_pkg", include=("demo_pkg/sub/*",))]
    assert only == ["demo_pkg/sub/__init__.py", "demo_pkg/sub/extras.py", "demo_pkg/sub/loader.py"]


def test_versions_sort_like_releases():
    ordered = ["0.3.0", "0.4.6", "0.4.6.post1", "0.4.10", "0.5.0rc1", "0.5.0"]
    assert sorted(["0.4.10", "0.5.0", "0.4.6.post1", "0.3.0", "0.5.0rc1", "0.4.6"], key=version_key) == ordered


def _pack(history, tmp_path) -> list:
    from analyzer.extract.emit import write_pack

    _, latest = history
    write_pack(tmp_path / "pack.yaml", "demo_pkg", None, "test", list(latest.values()))
    patterns, problems = load_pack_files([tmp_path / "pack.yaml"])
    assert not problems
    return patterns


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_a_log_of_each_release_matches_at_that_releases_line(releases, history, tmp_path, version):
    root = releases[0]
    hist, _ = history
    patterns = _pack(history, tmp_path)
    loader = _load_module(root / version / "demo_pkg" / "sub" / "loader.py", f"demo_loader_{version.replace('.', '_')}")
    error = capture(lambda: loader.load(None))
    tb = error.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    raised_at = tb.tb_lineno
    matcher = TieredMatcher(Matcher(patterns_for_run(patterns, {"demo_pkg": hist}, {"demo_pkg": version})),
                            Matcher(patterns))
    analysis = Analysis(matcher)
    for event in events_from_lines(text_of(error).splitlines(), "run.log", NoticeDetector(())):
        analysis.add(event)
    (incident,) = analysis.incidents()
    pattern = incident.diagnosis.pattern
    assert pattern.id == _id(hist, "load")
    assert (pattern.source.line, pattern.source.version) == (raised_at, version)


def test_the_sniffer_finds_server_and_version_from_banners_paths_and_frames():
    sniffer = VersionSniffer()
    sniffer.feed("INFO 06-10 12:00:01 [api_server.py:1043] vLLM API server version 0.9.1")
    assert (sniffer.server, sniffer.version) == (Project.VLLM, "0.9.1")
    sniffer = VersionSniffer()
    sniffer.feed("[2025-01-02 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)")
    sniffer.feed('  File "/opt/build/sglang-0.4.6.post1/python/sglang/srt/managers/scheduler.py", line 9, in run')
    assert (sniffer.server, sniffer.version) == (Project.SGLANG, "0.4.6.post1")
    sniffer.feed("torch                    2.5.1")
    assert sniffer.named_versions == {"sglang": "0.4.6.post1", "torch": "2.5.1"}
    sniffer = VersionSniffer()
    sniffer.feed("INFO 03-04 05:06:07 llm_engine.py:100] Initializing an LLM engine (v0.5.3.post1) with config: m")
    assert (sniffer.server, sniffer.version) == (Project.VLLM, "0.5.3.post1")
    sniffer = VersionSniffer()
    sniffer.feed("$ docker run --gpus all lmsysorg/sglang:v0.4.3.post2-cu125 python3 -m sglang.launch_server")
    assert (sniffer.server, sniffer.version) == (Project.SGLANG, "0.4.3.post2")
    sniffer = VersionSniffer()
    sniffer.feed("INFO 01-02 03:04:05 [__init__.py:30] Loading plugins of group vllm.general_plugins")
    assert (sniffer.server, sniffer.version) == (Project.VLLM, None)


def test_a_vllm_run_never_gets_an_sglang_pattern():
    from analyzer.core.schema import Pattern, PatternSource

    own = Pattern("v.one", "ValueError", "x", PatternSource(project="vllm"))
    other = Pattern("s.one", "ValueError", "x", PatternSource(project="sglang"))
    shared = Pattern("t.one", "RuntimeError", "y", PatternSource(project="torch"))
    assert select_patterns([own, other, shared], Project.VLLM) == (own, shared)
    assert select_patterns([own, other, shared], None) == (own, other, shared)


def test_a_runs_matcher_and_page_note_follow_its_release(history, tmp_path):
    hist, _ = history
    patterns = _pack(history, tmp_path)
    removed = next(p for p in patterns if p.id == _id(hist, "percent-raise"))
    matchers = RunMatchers(patterns, {"demo_pkg": hist})
    newer = matchers.for_run(None, {"demo_pkg": "1.1"})
    assert matchers.for_run(None, {"demo_pkg": "1.1"}) is newer
    assert newer.first.pattern(removed.id) is None and newer.pattern(removed.id) == removed
    assert version_note(removed, {"demo_pkg": hist}, {}) == "raised in 1.0; removed in 1.1; upgrade to 1.1 fixes this"
    assert version_note(removed, {"demo_pkg": hist}, {"demo_pkg": "1.0"}).endswith("upgrade to 1.1 fixes this")
    assert version_note(removed, {}, {}) == ""


def test_without_a_version_a_bare_assert_is_found_at_the_line_of_the_release_that_fits(releases, history, tmp_path):
    root = releases[0]
    hist, _ = history
    patterns = _pack(history, tmp_path)
    forms = _load_module(root / "1.0" / "demo_pkg" / "forms.py", "demo_forms_1_0")
    error = capture(lambda: forms.asserts(0, 4))
    events = list(events_from_lines(text_of(error).splitlines(), "run.log", NoticeDetector(())))
    (event,) = events
    assert Matcher(patterns).match_event(event).pattern is None  # the newest line is too far away
    found = TieredMatcher(Matcher(patterns), Matcher(patterns), {"demo_pkg": hist}).match_event(event)
    assert found.pattern.trigger == "not (world_size >= tp)"  # an assert fires when its test is false
    assert (found.pattern.source.line, found.pattern.source.version) == (event.root.raise_site.lineno, "1.0")


# ---------------------------------------------------------------------------------------------
# through the engine, as `analyzer scan` runs: the run's server and release come from its log

_BANNER = "INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version {version}"


@pytest.fixture(scope="module")
def vllm_packs(history, tmp_path_factory):
    """The demo package's pack and history as if they were vLLM's (the engine learns a release
    from an LLM server's banner), in a pattern folder the engine is pointed at."""
    from analyzer.core.versions import History
    from analyzer.extract.emit import write_pack

    hist, latest = history
    root = tmp_path_factory.mktemp("packs")
    entries = [{**entry, "source": {**entry["source"], "project": "vllm"}} for entry in latest.values()]
    entries += [{**entry, "source": {**entry["source"], "project": "vllm"}} for entry in removed_entries(hist, latest)]
    write_pack(root / "vllm" / "pack.yaml", "vllm", None, "test", entries)
    (root / "vllm" / "history.tsv").write_text(format_history(History("vllm", hist.versions, hist.spans)))
    return root


def _raise_in(root: Path, version: str, module: str, call):
    """A real traceback raised by the release `version` of the demo package, and its raise line."""
    loaded = _load_module(root / version / "demo_pkg" / module, f"demo_{module[:-3].replace('/', '_')}_"
                                                                  f"{version.replace('.', '_')}")
    error = capture(lambda: call(loaded))
    tb = error.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    return text_of(error), tb.tb_lineno


def _engine(packs: Path):
    from analyzer.engine import Engine, Options

    return Engine(Options(pattern_dirs=(str(packs),), builtin=False))


@pytest.mark.parametrize(("version", "named_by"), [
    ("1.0", _BANNER), ("1.1", _BANNER),
    ("1.0", "$ docker run --gpus all vllm/vllm-openai:v{version} --model m"),
    ("1.0", "$ pip install torch==2.5.1 vllm=={version} && vllm serve m --port 8000"),
])
def test_the_engine_matches_a_moved_signature_at_the_line_of_the_logs_release(
        releases, history, vllm_packs, tmp_path, version, named_by):
    text, raised_at = _raise_in(releases[0], version, "sub/loader.py", lambda m: m.load(None))
    log = tmp_path / "server.log"
    log.write_text(named_by.format(version=version) + "\n" + text)
    (incident,) = _engine(vllm_packs).analyse([str(log)]).incidents
    pattern = incident.diagnosis.pattern
    assert pattern.id == _id(history[0], "load")
    assert (pattern.source.line, pattern.source.version) == (raised_at, version)
    assert incident.diagnosis.releases == "raised in 1.0–1.1"


def test_a_removed_signature_says_which_release_removed_it_in_scan_text_and_json(
        releases, vllm_packs, tmp_path):
    import io
    import json

    from rich.console import Console

    from analyzer.core.runconfig import run_config_from_lines
    from analyzer.core.view import incident_view
    from analyzer.sinks.serialize import incident_dict
    from analyzer.sinks.text import render_incident
    from analyzer.tui.sections import pattern_source

    text, _ = _raise_in(releases[0], "1.0", "forms.py", lambda m: m.percent_raise(9, 2))
    log = tmp_path / "server.log"
    log.write_text(_BANNER.format(version="1.0") + "\n" + text)
    engine = _engine(vllm_packs)
    (incident,) = engine.analyse([str(log)]).incidents
    releases_line = "raised in 1.0; removed in 1.1; upgrade to 1.1 fixes this"
    assert incident.diagnosis.releases == releases_line
    out = io.StringIO()
    render_incident(incident, Console(file=out, width=200, no_color=True))
    assert f"Releases: {releases_line}" in out.getvalue()
    assert json.loads(json.dumps(incident_dict(incident)))["releases"] == releases_line
    assert releases_line in pattern_source(incident_view(incident)).plain  # the TUI's detail
    assert engine.releases(incident.diagnosis.pattern) == releases_line  # `analyzer explain ID`
    assert engine.releases(incident.diagnosis.pattern, run_config_from_lines([_BANNER.format(version="1.1")])) == (
        "raised in 1.0; removed in 1.1; not raised by 1.1")


def test_an_error_before_the_banner_is_matched_again_when_the_banner_comes(releases, history, vllm_packs, tmp_path):
    text, raised_at = _raise_in(releases[0], "1.0", "sub/loader.py", lambda m: m.load(None))
    engine = _engine(vllm_packs)
    analysis = engine.analysis()
    log = tmp_path / "server.log"
    def later():
        raise RuntimeError("the engine restarted")

    # the first error is complete (and shown) when the second begins, and the banner is in a later chunk
    filler = "INFO 01-02 03:04:04 [engine.py:9] waiting for the workers\n" * 30_000  # more than a chunk
    log.write_text(text + text_of(capture(later)) + filler + _BANNER.format(version="1.0") + "\n")
    added = [analysis.add(event) for event in engine.events([str(log)], lambda problem: None)]
    assert [change for _, change in added] == [Change.NEW, Change.NEW]
    assert analysis.revised() == [added[0][0]]
    incident = analysis.incidents()[0]
    assert (incident.diagnosis.pattern.source.line, incident.diagnosis.pattern.source.version) == (raised_at, "1.0")


def test_a_vllm_banner_picks_the_vllm_page_over_sglangs_for_a_shared_message(tmp_path):
    from analyzer.core.schema import Pattern, PatternSource
    from analyzer.engine import Engine, Options

    pages = [Pattern(f"{project}.shared", "ValueError", "the block size {size} is not supported",
                     PatternSource(project=project), meaning=f"{project}'s page") for project in ("sglang", "vllm")]
    engine = Engine(Options(builtin=False), patterns=pages)

    def shared():
        raise ValueError("the block size 7 is not supported")

    log = tmp_path / "server.log"
    log.write_text(_BANNER.format(version="0.9.1") + "\n" + text_of(capture(shared)))
    (incident,) = engine.analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == "vllm.shared"
    log.write_text("[2025-01-02 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n" + text_of(capture(shared)))
    (incident,) = engine.analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == "sglang.shared"


_SELECTOR = """
def get_attn_backend(size):
    raise ValueError(f"the block size {size} is not supported")
"""


def test_an_sglang_run_gets_vllms_page_for_an_error_vllms_own_code_raised_or_named(tmp_path):
    """SGLang once ran vLLM's kernels and loaders in its own processes: an error raised in vLLM's package, or whose text
    names one of its modules (vLLM's warning that its compiled ops did not load), gets vLLM's page in an SGLang run; the
    same text told without a sign of vLLM does not (the other server's pages stay out of a run)."""
    from analyzer.engine import Engine, Options
    from tests.test_incidents import _installed

    sglang = "[2025-01-02 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n"
    page = Pattern("vllm.block-size", "ValueError", "the block size {size} is not supported",
                   PatternSource(project="vllm", path="vllm/attention/selector.py", function="get_attn_backend"))
    engine = Engine(Options(builtin=False), patterns=[page])
    scope = _installed(tmp_path, "vllm/attention/selector.py", _SELECTOR)
    log = tmp_path / "server.log"
    log.write_text(sglang + text_of(capture(lambda: scope["get_attn_backend"](7))))
    (incident,) = engine.analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == "vllm.block-size"
    log.write_text(sglang + "ValueError: the block size 7 is not supported\n")
    (incident,) = engine.analyse([str(log)]).incidents
    assert incident.diagnosis.pattern is None
    warned = ("WARNING 09-04 04:55:04 _custom_ops.py:14] Failed to import from vllm._C with "
              f"{ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')!r}")
    log.write_text(sglang + warned + "\n")
    (incident,) = Engine(Options()).analyse([str(log)]).incidents
    assert incident.diagnosis.pattern.id == "vllm.compiled-ops-import-failed"


def test_without_a_release_in_the_log_the_releases_whose_line_it_shows_are_named(releases, history, vllm_packs, tmp_path):
    text, raised_at = _raise_in(releases[0], "1.0", "sub/loader.py", lambda m: m.load(None))
    log = tmp_path / "server.log"
    log.write_text(text)
    (incident,) = _engine(vllm_packs).analyse([str(log)]).incidents
    pattern = incident.diagnosis.pattern
    assert pattern.id == _id(history[0], "load")
    assert (pattern.source.line, pattern.source.version) == (raised_at, "1.0")
    assert incident.diagnosis.releases == f"raised in 1.0–1.1; the log's line {raised_at} is that of 1.0"
