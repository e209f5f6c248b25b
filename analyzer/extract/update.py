"""Merge a fresh extraction into an existing (possibly curated) pack.

Entries are matched by id. Since an id hashes exception and template, an
entry under the same id always has the same message; what can change is its
line (code moved), its trigger, or its style. Curated fields of the old
entry survive:

* ``meaning``, ``situations``, ``fixes``, ``related`` -- copied as is;
* ``role``, ``severity`` -- the old value wins;
* ``tags`` -- union, old order first;
* ``examples`` -- old (curated) examples kept, the synthesized one added if
  missing;
* ``template`` (and ``style``) -- kept only when ``template_locked: true``;
* any other key the extractor does not produce -- copied as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["UpdateReport", "merge_entries", "CURATED_KEYS"]

CURATED_KEYS = ("meaning", "situations", "fixes", "related")
# keys the extractor owns: refreshed from the new extraction
_EXTRACTED_KEYS = {"id", "exception", "template", "style", "source", "trigger",
                   "assert_expr", "role", "severity",
                   "tags", "examples", "template_locked"}


@dataclass
class UpdateReport:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # id -> list of human-readable reasons ("line 10 -> 12", "trigger", "style")
    changed: dict[str, list[str]] = field(default_factory=dict)
    unchanged: int = 0
    # removed ids that carried curated fields (their curation is dropped)
    removed_curated: list[str] = field(default_factory=list)

    @property
    def moved(self) -> list[str]:
        return [i for i, r in self.changed.items() if any(x.startswith("line") for x in r)]

    def summary(self) -> str:
        return (f"added {len(self.added)}, removed {len(self.removed)}, "
                f"changed {len(self.changed)} (moved {len(self.moved)}), "
                f"unchanged {self.unchanged}")


def _union(old: Sequence[Any] | None, new: Sequence[Any] | None) -> list[Any]:
    out: list[Any] = []
    for item in list(old or []) + list(new or []):
        if item not in out:
            out.append(item)
    return out


def _merge_one(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    merged = dict(new)
    reasons: list[str] = []
    old_src = old.get("source") or {}
    new_src = new.get("source") or {}
    if old_src.get("line") != new_src.get("line"):
        reasons.append(f"line {old_src.get('line')} -> {new_src.get('line')}")
    if old.get("trigger") != new.get("trigger"):
        reasons.append("trigger")
    if old.get("template_locked") is True:
        merged["template_locked"] = True
        merged["template"] = old.get("template", new.get("template"))
        if "style" in old:
            merged["style"] = old["style"]
    elif old.get("style", new.get("style")) != new.get("style"):
        reasons.append("style")
    for key in CURATED_KEYS:
        if key in old:
            merged[key] = old[key]
    for key in ("role", "severity"):
        if old.get(key) is not None:
            merged[key] = old[key]
    merged["tags"] = _union(old.get("tags"), new.get("tags"))
    if old.get("examples"):
        merged["examples"] = _union(old.get("examples"), new.get("examples"))
    for key, value in old.items():
        if key not in _EXTRACTED_KEYS and key not in merged:
            merged[key] = value
    return merged, reasons


def merge_entries(old_entries: Sequence[dict[str, Any]],
                  new_entries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], UpdateReport]:
    """Merge *new_entries* (fresh extraction order) with *old_entries*."""
    old_by_id: dict[str, dict[str, Any]] = {}
    for e in old_entries:
        old_by_id.setdefault(e["id"], e)
    report = UpdateReport()
    merged: list[dict[str, Any]] = []
    new_ids = set()
    for entry in new_entries:
        eid = entry["id"]
        new_ids.add(eid)
        old = old_by_id.get(eid)
        if old is None:
            report.added.append(eid)
            merged.append(entry)
            continue
        out, reasons = _merge_one(old, entry)
        if reasons:
            report.changed[eid] = reasons
        else:
            report.unchanged += 1
        merged.append(out)
    for eid, old in old_by_id.items():
        if eid not in new_ids:
            report.removed.append(eid)
            if any(k in old for k in CURATED_KEYS) or old.get("template_locked"):
                report.removed_curated.append(eid)
    return merged, report
