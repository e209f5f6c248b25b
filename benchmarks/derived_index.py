"""Index build time with and without the derived-page sidecars, and one derived page's read time
(issue #18; figures in RESULTS.md).

    python benchmarks/derived_index.py
"""

from __future__ import annotations

import time
from pathlib import Path

from analyzer.sources import packs
from analyzer.sources.pack_index import IndexStore, write_index

PAGE = "sglang.srt.arg_groups.parallel_hook.handle-data-parallelism.846855d1"


def timed(work):
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def main() -> None:
    root = packs.builtin_pack_dir()
    (patterns, problems), parse = timed(lambda: packs._parse(packs._builtin_sources(root), curated_first=True))
    plain_path, derived_path = Path("/tmp/index_plain.sqlite"), Path("/tmp/index_derived.sqlite")
    _, plain = timed(lambda: write_index(plain_path, patterns, problems, "x"))
    sidecars, read = timed(lambda: list(packs._sidecars(root)))
    _, both = timed(lambda: write_index(derived_path, patterns, problems, "x", sidecars))
    store = IndexStore(derived_path)
    assert store.derived(PAGE) is not None
    _, pages = timed(lambda: [store.derived(PAGE) for _ in range(100)])
    print(f"parse YAML {parse:.1f} s; write the index without derived pages {plain:.1f} s, with them {both:.1f} s "
          f"(+ reading the sidecars {read:.1f} s); {plain_path.stat().st_size / 1e6:.1f} MB -> "
          f"{derived_path.stat().st_size / 1e6:.1f} MB; one derived page {pages * 10:.2f} ms")


if __name__ == "__main__":
    main()
