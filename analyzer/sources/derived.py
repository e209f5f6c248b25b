"""Reading the derived-page sidecars `analyzer patterns derive` writes (`patterns/<project>/derived.jsonl.zst`).

The file is zstd-compressed JSON lines: a header (project, version, the command that wrote it),
then per source file its snippet lines as `[first line, [texts]]` runs, one row per signature
keyed by its id, and last the launch flags the rows name, each once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

__all__ = ["Sidecar", "read_sidecar", "sidecar_files", "SIDECAR"]

SIDECAR = "derived.jsonl.zst"


@dataclass(slots=True)
class Sidecar:
    header: dict[str, Any]
    files: list[dict[str, Any]] = field(default_factory=list)  # {"file": path, "segments": [...]}
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per signature; flags named by attribute
    flags: dict[str, dict[str, Any]] = field(default_factory=dict)  # attribute -> flag, help, choices, default


def sidecar_files(pack_root: Path) -> list[Path]:
    """The sidecars of a pack directory: one per project folder."""
    return sorted(pack_root.glob(f"*/{SIDECAR}"))


def read_sidecar(path: Path) -> Sidecar:
    with open(path, "rb") as fh:
        data = zstandard.ZstdDecompressor().stream_reader(fh).read()
    lines = data.decode().splitlines()
    sidecar = Sidecar(json.loads(lines[0]) if lines else {})
    for line in lines[1:]:
        item = json.loads(line)
        if "file" in item:
            sidecar.files.append(item)
        elif "id" in item:
            sidecar.rows.append(item)
        else:
            sidecar.flags.update(item.get("flags", {}))
    return sidecar
