"""Stable fingerprints: the same error in two runs gets the same one, whatever its values.

The message is masked (timestamps, UUIDs, hex addresses, URLs, paths, addresses and ports,
quoted strings, devices, shapes, ranks, numbers) and combined with the exception type and the
raise site: its file name and function, not its line, which moves between releases, nor its
directory, which differs between installs.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from analyzer.core import lazyregex
from analyzer.core.records import ErrorInfo

__all__ = ["mask_message", "fingerprint", "MASKS"]

# Order matters: wider shapes first, so that a timestamp is not masked as three numbers or a
# path's digits as numbers. Each mask names what it hides; suggest.py turns them into fields.
MASKS = (
    ("time", lazyregex.compile(
        r"\b\d{4}-\d\d-\d\d(?:[ T_]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?\b"
        r"|\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b")),
    ("uuid", lazyregex.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("hex", lazyregex.compile(r"\b0x[0-9a-fA-F]+\b")),
    ("url", lazyregex.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]]+")),
    ("str", lazyregex.compile(r"(?<!\w)(?:'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")(?!\w)")),  # not "can't ... won't"
    ("path", lazyregex.compile(
        r"(?:[A-Za-z]:|~|\.{1,2})?(?:/[\w.@+-]+)+/?"  # /abs/path, ~/x, ./x, ../x
        r"|(?<![\w/])[A-Za-z]:\\(?:[^\\\s]+\\)*[^\\\s]*"  # C:\windows\path
        r"|\b[\w.@+-]+(?:/[\w.@+-]+)+/?")),  # relative/path, org/model
    ("addr", lazyregex.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9a-fA-F:]*:[0-9a-fA-F:]*\](?::\d+)?")),
    ("addr", lazyregex.compile(r"\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b")),
    ("device", lazyregex.compile(r"\b(?:cuda|cpu|npu|xpu|hip|mps|meta):\d+\b")),
    ("shape", lazyregex.compile(
        r"(?:torch\.Size\()?\[\s*-?\d+(?:\s*,\s*-?\d+)*\s*\]\)?"  # [8, 4096], torch.Size([8, 4096])
        r"|\((?=[^)]*,)\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*\)"  # (8, 4096), (5,)
        r"|\b\d+(?:x\d+)+\b")),  # 4096x8
    ("rank", lazyregex.compile(r"(?i)\b(?:rank|tp|dp|pp|ep|cp|gpu|node|worker)[_-]?\d+\b")),
    ("hex", lazyregex.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")),
    ("id", lazyregex.compile(r"\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}\b")),
    ("num", lazyregex.compile(r"(?<![A-Za-z_])[-+]?\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?")),
)
_SPACES = lazyregex.compile(r"\s+")


def mask_message(message: str) -> str:
    # Ranks and retries repeat the same messages, and masking is most of an error's cost: short ones
    # are remembered (a long one, rare, is not kept).
    return _mask(message) if len(message) <= _MAX_REMEMBERED else _mask.__wrapped__(message)


_MAX_REMEMBERED = 4096


@lru_cache(maxsize=1024)
def _mask(message: str) -> str:
    for name, pattern in MASKS:
        message = pattern.sub(f"<{name}>", message)
    return _SPACES.sub(" ", message).strip()


def fingerprint(info: ErrorInfo) -> str:
    """`ValueError@function:hash`: short enough to read in a table, stable across runs."""
    site = info.raise_site
    function = site.function if site and site.function else "-"
    file = site.path.replace("\\", "/").rsplit("/", 1)[-1] if site else "-"
    key = (info.exception_type, info.short_type, file, function, info.message)
    return _fingerprint(*key) if len(info.message) <= _MAX_REMEMBERED else _fingerprint.__wrapped__(*key)


@lru_cache(maxsize=1024)
def _fingerprint(exception_type: str, short_type: str, file: str, function: str, message: str) -> str:
    masked = mask_message(message)
    digest = hashlib.blake2b(f"{exception_type}\0{file}\0{function}\0{masked}".encode(), digest_size=6)
    name = short_type if short_type[:1].isupper() else exception_type  # log.error, not error
    return f"{name or 'Truncated'}@{function}:{digest.hexdigest()}"
