"""Build pattern-pack entries (ids, fields) and read/write pack YAML.

Pack file layout (``schema: 1``)::

    schema: 1
    project: sglang
    version: "0.5.23"
    generated_by: "analyzer patterns extract --package sglang (analyzer 0.1.0)"
    patterns:
      - id: sglang.srt.server_args.serverargs-handle-a2a-moe.3fa2c9d1
        exception: ValueError
        template: "..."
        style: plain
        source: {project: sglang, path: sglang/srt/server_args.py, line: 7701,
                 function: ServerArgs._handle_a2a_moe, version: "0.5.23"}
        trigger: "..."
        role: root
        severity: error
        tags: [extracted]
        examples: ["..."]

Ids are ``<project>.<module>.<function-slug>.<hash8>`` where ``hash8`` is
the first 8 hex digits of SHA-1 over ``exception`` and ``template``; line
numbers are deliberately not part of the id so it survives edits that move
code. For message-less entries (empty template) the asserted expression or
the message expression is hashed too, so different bare asserts in one
function get different ids. Remaining collisions (one function raising the
same message twice) get ``-2``, ``-3``... in source order.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "SCHEMA",
    "module_name",
    "function_slug",
    "signature_hash",
    "base_id",
    "build_entries",
    "split_entries",
    "dump_pack",
    "write_pack",
    "load_pack",
    "ENTRY_KEY_ORDER",
]

SCHEMA = 1
DEFAULT_SPLIT_DEPTH = 2

# Canonical key order of a written entry; unknown (curated) keys follow.
ENTRY_KEY_ORDER = (
    "id",
    "exception",
    "template",
    "template_locked",
    "style",
    "source",
    "trigger",
    "assert_expr",
    "role",
    "severity",
    "tags",
    "meaning",
    "situations",
    "fixes",
    "related",
    "examples",
)
_SOURCE_KEY_ORDER = ("project", "path", "line", "function", "version")


# --------------------------------------------------------------------------
# ids


def module_name(project: str, path: str) -> str:
    """``sglang/srt/server_args.py`` -> ``sglang.srt.server_args``."""
    parts = path.replace("\\", "/").split("/")
    if parts and parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] == project:
        parts.pop(0)
    return ".".join([project, *parts])


def function_slug(function: str) -> str:
    """``ServerArgs._handle_a2a_moe`` -> ``serverargs-handle-a2a-moe``."""
    slug = re.sub(r"[^a-z0-9]+", "-", function.lower()).strip("-")
    return slug or "module"


def signature_hash(exception: str, template: str, discriminator: str = "") -> str:
    key = f"{exception}\x00{template}"
    if not template and discriminator:
        key += "\x00" + discriminator
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _discriminator(sig: dict[str, Any]) -> str:
    if sig.get("template"):
        return ""
    return "{}:{}".format(
        sig.get("kind", ""), sig.get("assert_expr") or sig.get("message_expr") or ""
    )


def base_id(project: str, path: str, function: str, exception: str,
            template: str, discriminator: str = "") -> str:
    return f"{module_name(project, path)}.{function_slug(function)}.{signature_hash(exception, template, discriminator)}"


# --------------------------------------------------------------------------
# entries


class FlowMap(dict):
    """A mapping written in YAML flow style (``{a: 1, b: 2}``)."""


class FlowList(list):
    """A sequence written in YAML flow style (``[a, b]``)."""


def _entry_from_sig(project: str, version: str | None, path: str,
                    sig: dict[str, Any], entry_id: str) -> dict[str, Any]:
    source = {"project": project, "path": path, "line": sig["line"],
              "function": sig["function"]}
    if version:
        source["version"] = version
    entry: dict[str, Any] = {
        "id": entry_id,
        "exception": sig["exception"],
        "template": sig["template"],
        "style": sig["style"],
        "source": source,
        "trigger": sig.get("trigger"),
    }
    if sig.get("assert_expr") is not None:
        entry["assert_expr"] = sig["assert_expr"]
    entry["role"] = "root"
    entry["severity"] = sig.get("severity", "error")
    # The pack schema has no 'kind' field: message-less entries say why in
    # a tag (no-args, non-string-arg, bare-assert).
    entry["tags"] = ["extracted", sig["kind"]] if sig.get("kind") else ["extracted"]
    example = sig.get("example")
    entry["examples"] = [example] if (example and sig["template"]) else []
    return entry


def build_entries(project: str, version: str | None,
                  per_file: Iterable[tuple[str, Sequence[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Turn ``(path, signatures)`` pairs into entries sorted by path, line.

    Collisions of the base id are disambiguated with ``-2``, ``-3`` in
    source order.
    """
    ordered: list[tuple[str, dict[str, Any]]] = []
    for path, sigs in per_file:
        for sig in sigs:
            ordered.append((path, sig))
    ordered.sort(key=lambda ps: (ps[0], ps[1]["line"], ps[1].get("col", 0)))
    seen: dict[str, int] = defaultdict(int)
    entries = []
    for path, sig in ordered:
        bid = base_id(project, path, sig["function"], sig["exception"],
                      sig["template"], _discriminator(sig))
        seen[bid] += 1
        n = seen[bid]
        entries.append(_entry_from_sig(project, version, path, sig,
                                       bid if n == 1 else f"{bid}-{n}"))
    return entries


# --------------------------------------------------------------------------
# splitting into files


def _dirs_of(project: str, path: str) -> tuple[str, ...]:
    parts = path.split("/")[:-1]
    if parts and parts[0] == project:
        parts = parts[1:]
    return tuple(parts)


def split_entries(project: str, entries: Sequence[dict[str, Any]],
                  depth: int = DEFAULT_SPLIT_DEPTH) -> dict[str, list[dict[str, Any]]]:
    """Group entries into files by subpackage, ``depth`` levels deep.

    With the default depth 2, ``sglang/srt/layers/moe/x.py`` goes to
    ``srt_layers.yaml``, ``sglang/srt/server_args.py`` to ``srt.yaml`` and
    modules directly under the package root to ``_root.yaml``. The rule
    depends only on paths, so an entry stays in the same file across
    versions. Entry order inside a file follows *entries* (path, then line).
    """
    files: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        key = _dirs_of(project, e["source"]["path"])[:depth]
        name = ("_".join(key) if key else "_root") + ".yaml"
        files.setdefault(name, []).append(e)
    return dict(sorted(files.items()))


# --------------------------------------------------------------------------
# YAML


_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _PackDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    def ignore_aliases(self, data):  # never emit &anchors / *aliases
        return True


_PackDumper.add_representer(
    FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True)
)
_PackDumper.add_representer(
    FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True)
)


def _ordered_entry(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ENTRY_KEY_ORDER:
        if key in entry:
            out[key] = entry[key]
    for key, value in entry.items():
        if key not in out:
            out[key] = value
    src = out.get("source")
    if isinstance(src, dict):
        fm = FlowMap()
        for key in _SOURCE_KEY_ORDER:
            if key in src:
                fm[key] = src[key]
        for key, value in src.items():
            if key not in fm:
                fm[key] = value
        out["source"] = fm
    for key in ("tags", "examples"):
        if isinstance(out.get(key), list):
            out[key] = FlowList(out[key])
    return out


def dump_pack(project: str, version: str | None, generated_by: str,
              entries: Sequence[dict[str, Any]]) -> str:
    doc = {
        "schema": SCHEMA,
        "project": project,
        "version": version,
        "generated_by": generated_by,
        "patterns": [_ordered_entry(e) for e in entries],
    }
    return yaml.dump(doc, Dumper=_PackDumper, sort_keys=False, allow_unicode=True,
                     width=1000, default_flow_style=False)


def _is_generated_pack(path: Path, project: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return (re.search(r"^schema:\s*\d+", head, re.M) is not None
            and re.search(rf"^project:\s*['\"]?{re.escape(project)}['\"]?\s*$", head, re.M) is not None
            and re.search(r"^patterns:", head, re.M) is not None)


# PyYAML's (de)serialization is mostly Python even with libyaml; spread big
# packs over two processes.
_POOL_MIN_ENTRIES = 5000


def _map(func, jobs, parallel: bool):
    if parallel and len(jobs) > 1 and (os.cpu_count() or 1) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            return list(pool.map(func, jobs))
    return [func(job) for job in jobs]


def _write_one(job) -> None:
    target, project, version, generated_by, group = job
    text = dump_pack(project, version, generated_by, group)
    with open(target, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _load_one(path: str):
    with open(path, "rb") as fh:
        return yaml.load(fh, Loader=_BaseLoader)


def write_pack(out: str | os.PathLike, project: str, version: str | None,
               generated_by: str, entries: Sequence[dict[str, Any]],
               depth: int = DEFAULT_SPLIT_DEPTH) -> tuple[list[Path], list[Path]]:
    """Write *entries* to *out*.

    *out* ending in ``.yaml``/``.yml`` is a single pack file; otherwise it is
    a directory that receives one file per subpackage. Stale generated pack
    files of the same project in that directory are removed.
    Returns ``(written, removed)``.
    """
    out = Path(out)
    if out.suffix in (".yaml", ".yml"):
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_one((str(out), project, version, generated_by, entries))
        return [out], []
    out.mkdir(parents=True, exist_ok=True)
    groups = split_entries(project, entries, depth)
    jobs = [(str(out / name), project, version, generated_by, group)
            for name, group in groups.items()]
    _map(_write_one, jobs, parallel=len(entries) >= _POOL_MIN_ENTRIES)
    written = [out / name for name in groups]
    removed = []
    keep = set(groups)
    for stale in sorted(out.glob("*.yaml")):
        if stale.name not in keep and _is_generated_pack(stale, project):
            stale.unlink()
            removed.append(stale)
    return written, removed


def load_pack(path: str | os.PathLike) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Load a pack file or a directory of pack files.

    Returns ``(header, entries)``; *header* holds the first file's
    ``schema``/``project``/``version``/``generated_by``. Missing paths give an
    empty pack.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(list(path.glob("*.yaml")) + list(path.glob("*.yml")))
    elif path.exists():
        files = [path]
    else:
        files = []
    header: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    total = sum(f.stat().st_size for f in files)
    docs = _map(_load_one, [str(f) for f in files], parallel=total > 2_000_000)
    for doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("patterns"), list):
            continue
        if not header:
            header = {k: doc.get(k) for k in ("schema", "project", "version", "generated_by")}
        for e in doc["patterns"]:
            if isinstance(e, dict) and e.get("id"):
                entries.append(e)
    return header, entries
