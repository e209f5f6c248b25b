"""The compiled pattern index: shipped up to date, queried lazily, user packs cached by content and code."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.core.matcher import Matcher, MatchKind, index_keys
from analyzer.core.store import MemoryStore
from analyzer.sources import packs
from analyzer.sources.pack_index import IndexStore
from analyzer.sources.packs import builtin_index_path, load_packs

SEED = "DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), got 'flashinfer_tkv'."
PACK = """patterns:
  - id: demo.bad-port
    exception: ValueError
    template: "port {port:d} is already in use by {owner!r}"
    source: {path: demo/net/server.py, line: 40, function: Server.bind}
  - id: demo.sigquit
    exception: SignalNotice
    match: line
    template: "Received sigquit from child {pid:d}"
  - id: demo.bad-role
    exception: E
    template: t
    role: maybe
"""


def _pack(directory: Path, text: str = PACK) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pack.yaml").write_text(text)
    return directory


def _cached(cache: Path) -> list[Path]:
    return sorted((cache / "analyzer" / "packs").glob("*.sqlite"))


def test_shipped_index_is_up_to_date_with_the_packs_and_the_code(capsys):
    """The checkout's index, built by the install and brought up to date by conftest, is current."""
    assert main(["patterns", "build", "--check"]) == 0, capsys.readouterr().err


def test_the_index_holds_what_the_yaml_says_filed_by_the_matchers_keys():
    store = IndexStore(builtin_index_path())
    seed = store.get("sglang.deepseek-v4-cp-a2a-backend")
    assert seed is not None and seed.fixes and seed.origin.startswith("patterns/sglang/curated/")
    word, site = index_keys(seed)
    assert seed in store.by_word(word, "ValueError") and seed in store.by_word(word, None)
    assert seed not in store.by_word(word, "KeyError")
    assert seed in store.by_site(site)
    assert all(index_keys(p)[0] == word for p in store.by_word(word, None))
    lines = store.line_patterns()
    assert lines and all(p.match == "line" for p in lines)
    assert "sglang.deepseek-v4-cp-a2a-backend" in store.ids() and len(store.ids()) == len(store)


def test_matching_reads_only_the_candidates():
    matcher = Matcher(load_packs(use_env=False))
    found = matcher.match_message(f"ValueError: {SEED}")
    # a short text is offered as "possible" without a traceback (issue #17); the override is what counts
    assert found.pattern.id == "sglang.deepseek-v4-cp-a2a-backend"
    assert found.match_kind in (MatchKind.EXACT, MatchKind.POSSIBLE)
    assert len(matcher._entries) < 100  # of 21,000 built-in patterns


def test_a_user_pack_is_compiled_once_and_cached_by_content(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    pack = _pack(tmp_path / "pack")
    first = load_packs([str(pack)], builtin=False, use_env=False)
    assert isinstance(first.layers[0], MemoryStore) and len(_cached(cache)) == 1
    again = load_packs([str(pack)], builtin=False, use_env=False)
    assert isinstance(again.layers[0], IndexStore)
    assert again.patterns == first.patterns and again.problems == first.problems
    role = "'role' must be one of root, consequence, got 'maybe'"
    assert [str(p) for p in again.problems] == [f"{pack / 'pack.yaml'}:10: {role}"]
    assert [p.id for p in again.line_patterns()] == ["demo.sigquit"]
    _pack(pack, PACK.replace("in use by", "taken by"))
    changed = load_packs([str(pack)], builtin=False, use_env=False)
    assert isinstance(changed.layers[0], MemoryStore) and len(_cached(cache)) == 2
    assert changed.get("demo.bad-port").template == "port {port:d} is already taken by {owner!r}"


def test_a_change_in_the_building_code_compiles_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pack = _pack(tmp_path / "pack")
    load_packs([str(pack)], builtin=False, use_env=False)
    monkeypatch.setattr(packs, "_code_digest", lambda: b"build_pattern changed")
    assert isinstance(load_packs([str(pack)], builtin=False, use_env=False).layers[0], MemoryStore)
    assert len(_cached(tmp_path / "cache")) == 2


@pytest.mark.parametrize("trouble", ["a file", "garbage"])
def test_an_unusable_cache_costs_only_the_parse(tmp_path, monkeypatch, trouble):
    pack = _pack(tmp_path / "pack")
    if trouble == "a file":  # the cache dir cannot be created (root ignores permission bits)
        (tmp_path / "cache").write_text("not a directory")
    else:  # a torn or foreign file under the very name
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        load_packs([str(pack)], builtin=False, use_env=False)
        _cached(tmp_path / "cache")[0].write_bytes(b"SQLite format 3\0 torn")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    loaded = load_packs([str(pack)], builtin=False, use_env=False)
    assert [p.id for p in loaded.patterns] == ["demo.bad-port", "demo.sigquit"] and len(loaded.problems) == 1
    matcher = Matcher(loaded)
    assert matcher.match_message("ValueError: port 30000 is already in use by 'nginx'").pattern.id == "demo.bad-port"


def test_the_cache_keeps_within_its_bound(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(packs, "CACHE_BOUND", 1)  # smaller than any index: only the newest stays
    for index in range(3):
        load_packs([str(_pack(tmp_path / f"pack{index}", PACK.replace("demo.", f"demo{index}.")))],
                   builtin=False, use_env=False)
    (newest,) = _cached(cache)
    assert IndexStore(newest).get("demo2.bad-port") is not None


def test_a_later_pack_hides_an_earlier_pattern_with_its_id(tmp_path, monkeypatch):
    override = PACK.replace("demo.bad-port", "sglang.deepseek-v4-cp-a2a-backend")
    monkeypatch.setenv("ANALYZER_PATTERNS", str(_pack(tmp_path / "pack", override)))
    matcher = Matcher(load_packs())
    assert matcher.pattern("sglang.deepseek-v4-cp-a2a-backend").template.startswith("port ")
    hidden = matcher.match_message(f"ValueError: {SEED}").pattern
    assert hidden is None or "DeepSeekV4" not in hidden.template
    found = matcher.match_message("ValueError: port 30000 is already in use by 'nginx'")
    # a short text is offered as "possible" without a traceback (issue #17); the override is what counts
    assert found.pattern.id == "sglang.deepseek-v4-cp-a2a-backend"
    assert found.match_kind in (MatchKind.EXACT, MatchKind.POSSIBLE)
    assert [p.id for p in matcher.line_patterns()].count("demo.sigquit") == 1


@pytest.mark.slow
def test_a_checkout_whose_packs_moved_on_compiles_its_index_again_once(tmp_path, monkeypatch, capsys):
    """A pack edited (or code changed) since the index was built: the first run compiles it again
    in place, saying so, and later runs use it; it holds row for row what the current one holds."""
    index = tmp_path / "_data" / "patterns.sqlite"
    monkeypatch.setattr(packs, "builtin_index_path", lambda: index)
    monkeypatch.setattr(packs, "_code_digest", lambda: b"template.py changed")
    first = load_packs(use_env=False)
    assert "compiling the built-in patterns" in capsys.readouterr().err
    second = load_packs(use_env=False)
    assert "compiling" not in capsys.readouterr().err
    assert isinstance(first.layers[0], IndexStore) and isinstance(second.layers[0], IndexStore)
    assert Matcher(second).match_message(f"ValueError: {SEED}").pattern.id == "sglang.deepseek-v4-cp-a2a-backend"
    assert second.layers[0].content_digest() == IndexStore(builtin_index_path()).content_digest()


@pytest.mark.slow
def test_a_package_folder_that_cannot_be_written_compiles_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "not-a-dir").write_text("")
    monkeypatch.setattr(packs, "builtin_index_path", lambda: tmp_path / "not-a-dir" / "patterns.sqlite")
    monkeypatch.setattr(packs, "_code_digest", lambda: b"template.py changed")
    assert isinstance(load_packs(use_env=False).layers[0], MemoryStore)  # compiled, and cached
    assert len(_cached(tmp_path / "cache")) == 1
    again = load_packs(use_env=False)
    assert isinstance(again.layers[0], IndexStore)
    assert Matcher(again).match_message(f"ValueError: {SEED}").pattern.id == "sglang.deepseek-v4-cp-a2a-backend"


def test_an_unchanged_checkout_is_not_hashed_again_on_each_run(tmp_path, monkeypatch):
    """The digest is read once per change of the files' sizes or times: a stamp beside the index
    remembers it. A touched file is hashed again, and found current without a compile."""
    index = tmp_path / "patterns.sqlite"
    index.write_bytes(builtin_index_path().read_bytes())
    monkeypatch.setattr(packs, "builtin_index_path", lambda: index)
    assert packs.ensure_builtin_index() is not None  # hashes, finds it current, writes the stamp
    assert (tmp_path / "patterns.stamp").is_file()

    def no_reading(path):
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(packs, "_read", no_reading)
    assert packs.ensure_builtin_index() is not None
    monkeypatch.setattr(packs, "_stamp", lambda root: "touched")
    with pytest.raises(AssertionError, match="read"):
        packs.ensure_builtin_index()
