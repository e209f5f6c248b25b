"""`analyzer kb build`: the static knowledge base. Built from a small pack of our own (and, for the
curated pages and the releases line, from the built-in packs), then read back as a browser would:
every page there, every link resolving, the sections of a page present, the search data
well-formed, and the search itself run under node when node is installed."""

from __future__ import annotations

import json
import posixpath
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.commands.kb import kb_page
from analyzer.sinks.kb.page import render_signature
from analyzer.sinks.kb.paths import file_page, kb_href, page_path, project_page, type_page
from analyzer.sinks.kb.site import ASSETS, build_site
from analyzer.sinks.page import page_dict
from analyzer.sources.histories import load_histories
from tests.fleet import write_fleet
from tests.support import builtin_engine

PACK = """\
schema: 1
patterns:
  - id: demo.a2a-backend
    exception: ValueError
    template: "Prefill CP supports moe_a2a_backend in {supported}, got {backend!r}."
    source: {project: demo, path: demo/srt/server_args.py, line: 120, function: check_cp, version: "1.2.0"}
    meaning: "Only some all-to-all backends work with prefill context parallelism."
    trigger: "--enable-prefill-cp with another --moe-a2a-backend"
    situations: "A launch script copied from another cluster."
    fixes:
      - title: "Pick a supported backend"
        text: "Use one of {supported}."
        before: "--moe-a2a-backend {backend}"
        after: "--moe-a2a-backend deepep"
    related: [demo.tp-size, demo.gone]
    tags: [launch]
    examples:
      - "Prefill CP supports moe_a2a_backend in ('none', 'deepep'), got 'mooncake'."
  - id: demo.tp-size
    exception: AssertionError
    template: "Context parallel only supports a single machine (tp_size <= 8)."
    source: {project: demo, path: demo/srt/server_args.py, line: 98}
  - id: demo.markup
    exception: RuntimeError
    template: "Tensor <{name}> & friends could not be moved to {device}"
    source: {project: demo, path: demo/layers/x.py, line: 7}
  - id: demo.bare-assert
    exception: AssertionError
    template: ""
    assert_expr: "cfg.page_size % 64 == 0"
    source: {project: demo, path: demo/srt/server_args.py, line: 300, function: check_page_size}
  - id: other.kernel-image
    exception: RuntimeError
    template: "no kernel image is available for execution on the device"
    style: plain
"""
IDS = ("demo.a2a-backend", "demo.tp-size", "demo.markup", "demo.bare-assert", "other.kernel-image")
DERIVED = {
    "snippet": {"start": 117, "raise_line": 119,
                "lines": ["    supported = ('none', 'deepep')", "    if cfg.moe_a2a_backend not in supported:",
                          "        raise ValueError(", "            f'...'", "        )"]},
    "link": "https://github.com/example/demo/blob/v1.2.0/python/demo/srt/server_args.py#L119",
    "condition": "fires when --enable-prefill-cp is set and --moe-a2a-backend is not one of none, deepep",
    "related": [{"id": "demo.tp-size", "message": "Context parallel only ...", "line": 98, "why": "same function"},
                {"id": "demo.elsewhere", "message": "Another check", "line": 140, "why": "shares moe_a2a_backend"}],
    "flags": [{"flag": "--moe-a2a-backend", "attribute": "moe_a2a_backend", "help": "The all-to-all backend.",
               "choices": ["none", "deepep", "mooncake"], "default": "none"}],
    "allowed_values": ["none", "deepep"],
    "before_after": [{"before": "--moe-a2a-backend mooncake", "after": "--moe-a2a-backend deepep"}],
    "env_vars": ["DEMO_A2A_OVERRIDE"],
    "hint": "Context parallel needs an all-to-all that keeps the split order.",
    "unheard_of": {"a": 1},
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    (root / "pack").mkdir()
    (root / "pack" / "demo.yaml").write_text(PACK, encoding="utf-8")
    out = root / "site"
    assert main(["kb", "build", "-o", str(out), "--no-builtin", "--patterns", str(root / "pack")]) == 0
    return out


def _links(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*)"', html)


def _data_call(text: str, name: str):
    match = re.fullmatch(rf"KB\.{name}\((.*)\);\n", text, flags=re.S)
    assert match, text[:80]
    return json.loads(f"[{match.group(1)}]")


def test_every_signature_has_its_page_and_every_index_is_there(site):
    for pattern_id in IDS:
        assert (site / page_path(pattern_id)).is_file()
    for page in ("index.html", "kb.css", "search.js", "types/index.html", project_page("demo"),
                 project_page("other"), type_page("ValueError"), type_page("AssertionError", "demo"),
                 file_page("demo", "demo/srt/server_args.py")):
        assert (site / page).is_file(), page
    # the file index lists its signatures by line
    listing = (site / file_page("demo", "demo/srt/server_args.py")).read_text(encoding="utf-8")
    assert listing.index("tp_size &lt;= 8") < listing.index("moe_a2a_backend")


def test_every_link_of_every_page_resolves(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 10
    for page in pages:
        for link in _links(page.read_text(encoding="utf-8")):
            if "://" in link:
                continue
            target = posixpath.normpath(posixpath.join(page.parent.relative_to(site).as_posix(), link.split("?")[0]))
            assert (site / target).is_file(), f"{page.relative_to(site)} links to missing {link}"


def test_a_curated_page_has_the_sections_of_the_seed_pages(site):
    html = (site / page_path("demo.a2a-backend")).read_text(encoding="utf-8")
    for section in ("Error message", "What it means", "Source", "When it happens", "Solutions", "Examples",
                    "Related errors", "Tags"):
        assert f"<h2>{section}</h2>" in html, section
    assert "demo/srt/server_args.py:120</code> in <code>check_cp</code> (demo 1.2.0)" in html
    assert "# before\n--moe-a2a-backend &lt;backend&gt;" in html
    # a related error that is loaded is a link; one that is not says so
    assert f'href="{posixpath.relpath(page_path("demo.tp-size"), posixpath.dirname(page_path("demo.a2a-backend")))}"' in html
    assert "demo.gone (not loaded)" in html
    assert 'class="curated"' in html
    bare = (site / page_path("demo.tp-size")).read_text(encoding="utf-8")
    assert 'class="extracted"' in bare and "<h2>Solutions</h2>" not in bare


def test_text_from_the_packs_is_escaped(site):
    html = (site / page_path("demo.markup")).read_text(encoding="utf-8")
    assert "Tensor &lt;{name}&gt; &amp; friends" in html and "<{name}>" not in html


def test_the_derived_sections_render_and_unknown_keys_do_not_break_a_page():
    pattern = builtin_engine().matcher.pattern("sglang.deepseek-v4-cp-a2a-backend")
    assert pattern is not None
    data = page_dict(pattern) | {"derived": DERIVED, "a_future_key": ["x"], "releases": "raised in 0.5.2–0.5.23"}
    data["id"] = "demo.a2a-backend"
    known = {"demo.tp-size": ("AssertionError", "Context parallel only supports a single machine (tp_size <= 8).")}
    html = render_signature(data, known.get)
    marked = re.findall(r'<span class="raise"><span class="ln">(\d+)</span>([^<]*)</span>', html)
    assert marked == [("119", "        raise ValueError(")]
    assert '<span class="ln">117</span>' in html and '<span class="ln">121</span>' in html
    assert f'href="{DERIVED["link"]}"' in html
    assert "--moe-a2a-backend is not one of none, deepep" in html
    assert "<td>The all-to-all backend.</td>" in html and "<code>mooncake</code>" in html
    assert "<h2>Allowed values" in html and "<code>DEMO_A2A_OVERRIDE</code>" in html
    assert "# before\n--moe-a2a-backend mooncake</span>" in html
    assert "Hint from the source" in html and "keeps the split order" in html
    assert "same function" in html and "Another check (not loaded)" in html and "shares moe_a2a_backend" in html
    assert "<h2>Releases</h2><p>raised in 0.5.2–0.5.23</p>" in html
    assert "More data" in html and "a_future_key" in html and "derived.unheard_of" in html
    # the derived parts are marked as such
    assert html.count('class="derived"') >= 8
    # and nothing breaks when the parts have another shape than expected
    odd = data | {"derived": {"snippet": {"start": "x", "lines": ["a"]}, "flags": ["--x"], "related": [3],
                              "before_after": [None], "allowed_values": "one"},
                  "source": None, "fixes": [None]}
    assert "<h2>Error message</h2>" in render_signature(odd, known.get)


def test_the_search_data_is_split_by_project_and_holds_the_literal_words(site):
    manifest = _data_call((site / "search" / "index.js").read_text(encoding="utf-8"), "projects")[0]
    assert [(m["name"], m["count"]) for m in manifest] == [("demo", 4), ("other", 1)]
    rows = {}
    for entry in manifest:
        name, data = _data_call((site / entry["file"]).read_text(encoding="utf-8"), "data")
        assert name == entry["name"] and len(data) == entry["count"]
        rows.update({row[0]: row for row in data})
    assert set(rows) == set(IDS)
    exception, template, words, curated = rows["demo.a2a-backend"][1:]
    assert exception == "ValueError" and template.startswith("Prefill CP supports") and curated == 1
    assert rows["demo.tp-size"][4] == 0
    # the template's own words, not the names of its fields
    assert set(words.split()) == {"prefill", "supports", "moe_a2a_backend", "got"}
    # a bare assert has no message: it is named, and found, by its condition
    assert rows["demo.bare-assert"][2:4] == ["assert cfg.page_size % 64 == 0", "assert cfg page_size"]


def test_a_bare_assert_is_named_by_its_condition(site):
    html = (site / page_path("demo.bare-assert")).read_text(encoding="utf-8")
    assert "<h1>assert cfg.page_size % 64 == 0</h1>" in html and "A bare <code>assert" in html
    listing = (site / file_page("demo", "demo/srt/server_args.py")).read_text(encoding="utf-8")
    assert "AssertionError: assert cfg.page_size % 64 == 0</a>" in listing


NODE_RUN = """
const fs = require("fs"), path = require("path"), vm = require("vm");
const [site, query] = process.argv.slice(1);
const context = {console};
vm.createContext(context);
vm.runInContext(fs.readFileSync(path.join(site, "search.js"), "utf8"), context);
vm.runInContext(fs.readFileSync(path.join(site, "search", "index.js"), "utf8"), context);
const KB = context.KB;
const projects = KB.manifest.map(m => m.name);
const named = KB.named(query, projects);
for (const m of KB.manifest) vm.runInContext(fs.readFileSync(path.join(site, m.file), "utf8"), context);
const hits = KB.index.search(query, [], 5).map(h => [h.row.id, KB.pagePath(h.row.id), h.score]);
console.log(JSON.stringify({named, hits}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("query, best, named", [
    # a pasted message with its own values ranks its template first
    ("ValueError: Prefill CP supports moe_a2a_backend in ('none', 'deepep'), got 'mooncake'.",
     "demo.a2a-backend", []),
    # a traceback names its project through its file paths
    ('  File "/opt/demo/srt/server_args.py", line 98, in check\nAssertionError: Context parallel only supports '
     "a single machine (tp_size <= 8).", "demo.tp-size", ["demo"]),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "other.kernel-image", []),
    ("could not be moved to cuda:3", "demo.markup", []),
    # a bare assert by the line the traceback shows; the other frames' lines do not count
    ('Traceback (most recent call last):\n  File "/srv/app/run.py", line 3, in <module>\n    check(cfg)  # single '
     'machine supports\n  File "/opt/demo/srt/server_args.py", line 300, in check_page_size\n'
     "    assert cfg.page_size % 64 == 0\nAssertionError", "demo.bare-assert", ["demo"]),
])
def test_the_search_finds_the_page_of_a_pasted_error(site, query, best, named):
    result = json.loads(subprocess.run(["node", "-e", NODE_RUN, str(site), query], capture_output=True,
                                       text=True, check=True, timeout=60).stdout)
    assert result["named"] == named
    top_id, top_path, _ = result["hits"][0]
    assert top_id == best and top_path == page_path(best) and (site / top_path).is_file()


def test_the_builtin_curated_pages_have_meaning_and_solutions(tmp_path):
    patterns = [p for p in builtin_engine().matcher.patterns if p.curated]
    assert len(patterns) >= 40
    build_site(patterns, page_dict, tmp_path)
    for pattern in patterns:
        html = (tmp_path / page_path(pattern.id)).read_text(encoding="utf-8")
        assert "<h2>What it means</h2>" in html or "<h2>Solutions</h2>" in html, pattern.id


def test_a_page_says_which_releases_raise_its_error():
    histories = load_histories()
    history = histories["sglang"]
    sid = next(s for s in history.spans if history.note(s))
    pattern = builtin_engine().matcher.pattern(sid)
    assert pattern is not None
    data = kb_page(pattern, histories)
    assert data["releases"] == history.note(sid)
    assert f"<h2>Releases</h2><p>{data['releases']}</p>" in render_signature(data, lambda _: None)


def test_the_html_report_links_each_signature_to_its_kb_page(tmp_path, capsys):
    write_fleet(tmp_path / "fleet", runs=6)
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    assert main(["report", str(tmp_path / "fleet"), "--no-cache", "-j", "1", "--no-progress", "-o", str(out),
                 "--kb", str(tmp_path / "site")]) == 0
    html = out.read_text(encoding="utf-8")
    ids = re.findall(r'<a href="\.\./site/pages/[^/"]+/([^"]+)\.html"><code>\1</code></a>', html)
    assert ids and all(f'href="../site/{page_path(i)}"' in html for i in ids)
    assert kb_href("sglang.x", "https://kb.example/") == "https://kb.example/pages/sglang/sglang.x.html"


def test_the_assets_are_shipped_with_the_package():
    assert {p.name for p in ASSETS.iterdir()} == {"kb.css", "search.js"}


def test_clean_refuses_a_directory_that_is_not_a_site(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["kb", "build", "-o", str(tmp_path), "--clean", "--no-builtin"]) == 2
    assert (tmp_path / "notes.txt").is_file() and "not emptying" in capsys.readouterr().err
