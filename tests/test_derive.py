"""Pages derived from the source (`analyzer patterns derive`): the fixture package
`fixtures/extract_src/launchpkg` (argparse flags with choices, annotated and documented fields, an
assert, nested ifs, an environment variable) pins every derived part exactly; the sidecar goes
through the index to `explain`'s text and JSON; five shipped launch-argument pages are pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from analyzer.cli import main
from analyzer.core.matcher import Matcher
from analyzer.core.scan import events_from_lines
from analyzer.extract import extract_tree
from analyzer.extract.derive import derive_rows, write_sidecar
from analyzer.extract.emit import write_pack
from analyzer.sinks.page import page_dict, render_page
from analyzer.sinks.text import render_report
from analyzer.sources.derived import read_sidecar
from analyzer.sources.pack_index import IndexStore, write_index
from analyzer.sources.packs import builtin_pack_dir, load_pack_files, pack_files
from analyzer.tui.sections import page
from fixtures.generate import SCHED, Frame, formatted
from tests.support import builtin_engine

SRC = Path(__file__).resolve().parent.parent / "fixtures" / "extract_src"
HEADER = {"project": "launchpkg", "version": "1.0", "schema": 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The fixture package extracted, derived and compiled into an index: (index, sidecar path, entries)."""
    tmp = tmp_path_factory.mktemp("derive")
    entries = extract_tree(SRC / "launchpkg", jobs=1).entries
    write_pack(tmp / "pack", "launchpkg", "1.0", "test", entries)
    sidecar = tmp / "derived.jsonl.zst"
    write_sidecar(sidecar, HEADER, derive_rows("launchpkg", "1.0", SRC, entries))
    patterns, problems = load_pack_files(pack_files(tmp / "pack"))
    assert not problems
    write_index(tmp / "index.sqlite", patterns, [], "test", [read_sidecar(sidecar)])
    return IndexStore(tmp / "index.sqlite"), sidecar, {e["template"]: e["id"] for e in entries}


def _id(built, start: str) -> str:
    (found,) = [pattern_id for template, pattern_id in built[2].items() if template.startswith(start)]
    return found


def _page(built, start: str) -> dict:
    return built[0].derived(_id(built, start))


def test_assert_fires_when_its_test_is_false_with_flags_help_and_a_bound_change(built):
    page = _page(built, "prefill CP needs tp_size ")
    assert page["condition"] == "fires when `--enable-prefill-cp` is set and `--tp-size` is above 8"
    assert page["flags"] == [
        {"flag": "--enable-prefill-cp", "attribute": "enable_prefill_cp",
         "help": "Split prefill across ranks (context parallelism)."},
        {"flag": "--tp-size", "attribute": "tp_size", "help": "Number of tensor parallel ranks.", "default": 1}]
    assert page["before_after"] == [{"before": "--enable-prefill-cp --tp-size 9", "after": "--enable-prefill-cp --tp-size 8"}]
    assert page["hint"] == "Cross-machine CP loses precision."  # the comment just above the assert
    assert page["snippet"] == {"start": 19, "raise_line": 27, "lines": (
        SRC / "launchpkg/args.py").read_text().splitlines()[18:33]}  # 8 lines before, 6 after
    assert page["snippet"]["lines"][27 - 19].strip().startswith("assert self.tp_size <= 8")
    assert page["link"] == "https://github.com/example/launchpkg/blob/v1.0/src/launchpkg/args.py#L27"
    assert page["related"] == [{"id": _id(built, "prefill CP supports"), "line": 30, "why":
                                "same function, tests `enable_prefill_cp`",
                                "message": "prefill CP supports {supported}, got {self.moe_a2a_backend!r}"}]


def test_membership_in_a_local_literal_gives_allowed_values_and_keeps_the_required_flag(built):
    page = _page(built, "prefill CP supports {sup")
    assert page["condition"] == ("fires when `--enable-prefill-cp` is set and `--moe-a2a-backend` is not one of "
                                 "('none', 'deepep')")
    assert page["allowed_values"] == ["none", "deepep"]
    assert page["flags"][1]["choices"] == ["none", "deepep", "mooncake"]  # resolved through A2A_BACKENDS
    assert page["before_after"] == [{"before": "--enable-prefill-cp --moe-a2a-backend <value>",
                                     "after": "--enable-prefill-cp --moe-a2a-backend deepep"}]
    assert page["hint"] == "Context parallelism needs one machine and a supported all-to-all."  # docstring


def test_a_fix_never_flips_a_flag_the_check_only_depends_on(built):
    page = _page(built, "transfer backend {self.t")
    assert page["condition"] == ("fires when `--disaggregation-mode` is not 'null' and `--transfer-backend` is not "
                                 "one of ('mooncake', 'nixl')")
    assert page["before_after"] == [{"before": "--transfer-backend <value>", "after": "--transfer-backend mooncake"}]
    assert "hint" not in page


def test_an_environment_variable_is_named_and_no_command_line_is_offered(built):
    page = _page(built, "LAUNCHPKG_STRICT allows n")
    assert page["condition"] == "fires when `os.environ.get('LAUNCHPKG_STRICT')` is '1' and `--tp-size` is above 1"
    assert page["env_vars"] == ["LAUNCHPKG_STRICT"]
    assert "before_after" not in page


def test_annotated_and_documented_fields_are_flags(built):
    page = _page(built, "fp8 KV cache supports bl")
    assert page["condition"] == "fires when `--kv-dtype` is 'fp8' and `--block-size` is above 32"
    assert page["flags"] == [
        {"flag": "--kv-dtype", "attribute": "kv_dtype", "help": "Data type of the KV cache.",
         "choices": ["auto", "fp8"], "default": "auto"},
        {"flag": "--block-size", "attribute": "block_size", "help": "Tokens per KV-cache block.", "default": 16}]
    assert page["before_after"] == [{"before": "--kv-dtype fp8 --block-size 33", "after": "--kv-dtype fp8 --block-size 32"}]
    assert _page(built, "mem_fraction must be betw")["condition"] == "fires when `--mem-fraction` is not between 0 and 1"


def test_the_sidecar_is_deterministic(built, tmp_path):
    _, sidecar, _ = built
    again = tmp_path / "again.zst"
    write_sidecar(again, HEADER, derive_rows("launchpkg", "1.0", SRC, extract_tree(SRC / "launchpkg", jobs=1).entries))
    assert again.read_bytes() == sidecar.read_bytes()


def test_explain_shows_the_derived_parts_beside_the_pattern(built):
    matcher = Matcher(built[0])
    pattern = matcher.pattern(_id(built, "prefill CP supports"))
    console = Console(record=True, width=200)
    render_page(pattern, matcher, console)
    text = console.export_text()
    assert "Code around the raise (derived from the source)" in text
    assert '> 30                  raise ValueError(f"prefill CP supports {supported}' in text
    assert ("Fires when `--enable-prefill-cp` is set and `--moe-a2a-backend` is not one of ('none', 'deepep') "
            "(derived from the source)") in text
    assert "--moe-a2a-backend: Backend for the MoE all-to-all. [choices: none, deepep, mooncake] (default none)" in text
    assert "# before\n  --enable-prefill-cp --moe-a2a-backend <value>\n  # after\n" in text
    assert "Trigger:" not in text  # the raw code trigger gives way to the condition in words
    derived = page_dict(pattern, derived=matcher.derived(pattern.id))["derived"]
    assert set(derived) == {"snippet", "link", "condition", "related", "flags", "allowed_values", "before_after",
                            "hint"}


# --------------------------------------------------------------------------
# the shipped sidecars

_SG = "https://github.com/sgl-project/sglang/blob/v0.5.23/python/sglang/srt/arg_groups/"
_CP = ("fires when `--enable-prefill-cp` is set, `--cp-strategy` is one of ('interleave', 'zigzag'), "
       "(`--cp-strategy` is not 'zigzag' or `is_npu()` is true)")
SHIPPED = [
    # a curated page covers these two signatures: it shows their derived parts; found by message
    ("ValueError: DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), got 'nixl'.", {
        "condition": _CP + " and `--moe-a2a-backend` is not one of ('none', 'deepep', 'megamoe', 'mori')",
        "allowed_values": ["none", "deepep", "megamoe", "mori"],
        "before_after": [{"before": "--enable-prefill-cp --moe-a2a-backend <value>",
                          "after": "--enable-prefill-cp --moe-a2a-backend deepep"}],
        "link": _SG + "deepseek_v4_hook.py#L231",
        "flags": ["--enable-prefill-cp", "--cp-strategy", "--moe-a2a-backend"]}),
    ("AssertionError: Context parallel only supports single machine (tp_size <= 8). Cross-machine CP has precision "
     "issues.", {
        "condition": _CP + ", `is_npu()` is false and `--tp-size` is above 8",
        "before_after": [{"before": "--enable-prefill-cp --tp-size 9", "after": "--enable-prefill-cp --tp-size 8"}],
        "link": _SG + "deepseek_v4_hook.py#L226",
        "flags": ["--enable-prefill-cp", "--cp-strategy", "--tp-size"]}),
    ("sglang.srt.arg_groups.parallel_hook.handle-data-parallelism.846855d1", {
        "condition": "fires when `--attn-dp-size` is below 1",
        "before_after": [{"before": "--attn-dp-size 0", "after": "--attn-dp-size 1"}],
        "link": _SG + "parallel_hook.py#L286", "flags": ["--attn-dp-size"]}),
    ("sglang.srt.arg_groups.pd_disaggregation_hook.handle-pd-disaggregation.38abef74", {  # the mode stays as it is
        "condition": "fires when `--disaggregation-decode-host-receive-threshold` is between 0 and 1, "
                     "`--disaggregation-mode` is 'decode', `--dcp-size` is above 1 and "
                     "`--disaggregation-transfer-backend` is not one of ('mooncake', 'nixl', 'mori', 'ascend', 'fake')",
        "allowed_values": ["mooncake", "nixl", "mori", "ascend", "fake"],
        "before_after": [{"before": "--disaggregation-mode decode --disaggregation-transfer-backend <value>",
                          "after": "--disaggregation-mode decode --disaggregation-transfer-backend mooncake"}],
        "link": _SG + "pd_disaggregation_hook.py#L92",
        "flags": ["--disaggregation-decode-host-receive-threshold", "--disaggregation-mode", "--dcp-size",
                  "--disaggregation-transfer-backend"]}),
    ("vllm.config.engram.engramconfig-verify-parallel-config.15fefaab", {
        "condition": "fires when `--dp-shared-memory` is set and `--data-parallel-size` is at most 1",
        "before_after": [{"before": "--dp-shared-memory --data-parallel-size 1",
                          "after": "--dp-shared-memory --data-parallel-size 2"}],
        "link": "https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/engram.py#L110",
        "flags": ["--dp-shared-memory", "--data-parallel-size"]}),
]


@pytest.mark.skipif(not (builtin_pack_dir() / "sglang" / "derived.jsonl.zst").is_file(), reason="no shipped sidecar")
@pytest.mark.parametrize("query,expected", SHIPPED, ids=["cp-a2a", "cp-tp-size", "attn-dp-size", "pd-transfer",
                                                          "vllm-dp-size"])
def test_shipped_launch_argument_pages(query, expected, capsys):
    assert main(["explain", query, "--format", "json"]) == 0
    derived = json.loads(capsys.readouterr().out)["derived"]
    for key, value in expected.items():
        if key == "flags":
            flags = derived["flags"]
            assert [f["flag"] for f in flags] == value
            assert all(f.get("help") for f in flags)
        else:
            assert derived[key] == value, key
    snippet = derived["snippet"]
    assert snippet["start"] <= snippet["raise_line"] < snippet["start"] + len(snippet["lines"])
    assert derived["related"]


def test_a_scan_says_when_a_matched_extracted_signature_fires():
    message = ("DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep', 'megamoe', 'mori'), got 'flashinfer'.")
    site = Frame("sglang/srt/arg_groups/deepseek_v4_hook.py", 231, "validate_deepseek_v4_cp", "        raise ValueError(")
    lines = formatted(SCHED[:2] + [site], ValueError(message)).splitlines()
    engine = builtin_engine()
    analysis = engine.analysis()
    for event in events_from_lines(lines, "server.log", engine.notices):
        analysis.add(event)
    console = Console(record=True, width=400)
    render_report(analysis.incidents(), console, derived_of=engine.matcher.derived)
    text = console.export_text()
    if engine.matcher.derived("sglang.srt.arg_groups.deepseek_v4_hook.validate-deepseek-v4-cp.8ec325ac") is None:
        pytest.skip("no shipped sidecar")
    assert "Fires when `--enable-prefill-cp` is set" in text
    assert "(derived from the source)" in text


def test_the_tui_explain_page_has_the_derived_section(built):
    matcher = Matcher(built[0])
    diagnosis = matcher.match_message("ValueError: prefill CP supports ('none', 'deepep'), got 'mooncake'")
    assert diagnosis.pattern is not None and diagnosis.pattern.id == _id(built, "prefill CP supports")
    text = page(diagnosis, matcher).plain
    assert "Code around the raise  derived from the source" in text
    assert "When it fires  derived\n  Fires when `--enable-prefill-cp` is set" in text
    assert "Example fix  derived\n  before: --enable-prefill-cp --moe-a2a-backend <value>" in text
