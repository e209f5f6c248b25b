"""Matcher speed with a 10,000-pattern pack: time per message, by the kind of match expected.

The pack is 10,000 real patterns of the built-in packs (those with example messages). Messages:
- exact: each chosen pattern's own example;
- raise_site: a message no template fits whole but that reads like the chosen pattern's text (its
  literal words in reverse order), raised at that pattern's source location;
- fuzzy: an example with one literal word misspelt (swapped letters), so no template matches
  whole but one is close;
- unknown: made-up messages about nothing the packs know.
Every message is new to the matcher (its result cache cannot answer), so each timing includes the
index lookup, the candidate templates, and their lazy compilation on first use ("cold"); the
"warm" pass matches the same messages again after clearing the result cache.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("exact", "raise_site", "fuzzy", "unknown")


def matcher_speed(pack_size: int = 10_000, per_kind: int = 2_000, seed: int = 0) -> dict:
    sys.path.insert(0, str(ROOT))
    from analyzer.core.matcher import Matcher
    from analyzer.sources.packs import load_packs

    rng = random.Random(seed)
    pool = sorted((p for p in load_packs().patterns if p.examples), key=lambda p: p.id)
    pack = rng.sample(pool, min(pack_size, len(pool)))
    start = time.perf_counter()
    matcher = Matcher(pack)
    build = time.perf_counter() - start
    messages = _messages(pack, per_kind, rng)
    result = {"patterns": len(pack), "build_seconds": build, "kinds": {}}
    for kind in KINDS:
        infos = messages[kind]
        cold, found = _timed(matcher, infos)
        matcher._match_cached.cache_clear()  # to time the same messages again
        warm, _ = _timed(matcher, infos)
        result["kinds"][kind] = {
            "messages": len(infos), "cold": _summary(cold), "warm": _summary(warm),
            "got": {k: found.count(k) for k in sorted(set(found))},
        }
    return result


def _timed(matcher, infos) -> tuple[list[float], list[str]]:
    times, kinds = [], []
    for info in infos:
        start = time.perf_counter_ns()
        diagnosis = matcher.match(info)
        times.append((time.perf_counter_ns() - start) / 1000)
        kinds.append(diagnosis.match_kind.value)
    return times, kinds


def _summary(micros: list[float]) -> dict:
    ordered = sorted(micros)
    return {"median_us": statistics.median(ordered), "p99_us": ordered[int(len(ordered) * 0.99) - 1],
            "per_second": len(ordered) / (sum(ordered) / 1e6)}


def _messages(pack, per_kind: int, rng: random.Random) -> dict:
    from analyzer.core.matcher import _literal_text
    from analyzer.core.records import ErrorInfo, Frame

    out: dict[str, list] = {kind: [] for kind in KINDS}
    for pattern in pack:
        if len(out["exact"]) < per_kind:
            out["exact"].append(ErrorInfo(pattern.exception, pattern.examples[0]))
        source = pattern.source
        if len(out["raise_site"]) < per_kind and source.path and source.function and source.line:
            site = Frame(f"/usr/lib/python3/site-packages/{source.path}", source.line, source.function)
            reworded = " ".join(reversed(_literal_text(pattern.template).split())) or "state"
            out["raise_site"].append(ErrorInfo(pattern.exception, reworded, frames=(site,)))
        if len(out["fuzzy"]) < per_kind and (misspelt := _misspell(pattern.examples[0],
                                                                   _literal_text(pattern.template), rng)):
            out["fuzzy"].append(ErrorInfo(pattern.exception, misspelt))
    words = ["quasar", "lantern", "orchard", "velvet", "pylon", "marble", "thicket", "ember", "harbor", "gust"]
    for index in range(per_kind):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(4, 12)))
        out["unknown"].append(ErrorInfo("RuntimeError", f"{text} {index}"))
    return out


def _misspell(example: str, literal: str, rng: random.Random) -> str | None:
    """The example with one literal word (not the longest, which the index is keyed on) misspelt."""
    words = [w for w in literal.split() if w.isalpha() and len(w) >= 4]
    if len(words) < 3 or len(literal) < 20:
        return None
    longest = max(words, key=len)
    choices = [w for w in words if w != longest and example.count(w) == 1]
    if not choices:
        return None
    word = rng.choice(choices)
    swapped = word[0] + word[2] + word[1] + word[3:]
    return None if swapped == word else example.replace(word, swapped)
