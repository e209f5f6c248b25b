"""Stable fingerprints: the same error in two runs gets the same one, whatever its numbers.

The message is masked (numbers, hex addresses, UUIDs, paths, quoted strings, shapes, devices,
ports, timestamps) and combined with the exception type and the raise site's function.
"""

from __future__ import annotations

import hashlib

import regex

from analyzer.core.records import ErrorInfo

__all__ = ["mask_message", "fingerprint"]

# Order matters: wider shapes first, so a timestamp is not masked as three numbers.
_MASKS = (
    (regex.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (regex.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (regex.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (regex.compile(r"(?:[A-Za-z]:)?(?:/[\w.@+-]+){2,}/?"), "<path>"),
    (regex.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"), "<addr>"),
    (regex.compile(r"\b(?:localhost|[\w-]+(?:\.[\w-]+)+):\d{2,5}\b"), "<addr>"),
    (regex.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""), "<str>"),
    (regex.compile(r"\b(?:cuda|cpu|npu|xpu|hip):\d+\b"), "<device>"),
    (regex.compile(r"(?:torch\.Size\()?\[\s*\d+(?:\s*,\s*\d+)*\s*\]\)?|\(\s*\d+(?:\s*,\s*\d+)+\s*,?\s*\)"), "<shape>"),
    (regex.compile(r"\b[0-9a-f]{12,}\b"), "<hex>"),
    (regex.compile(r"[-+]?\b\d+(?:[.,_]\d+)*(?:[eE][-+]?\d+)?\b"), "<num>"),
    (regex.compile(r"\s+"), " "),
)


def mask_message(message: str) -> str:
    for pattern, mask in _MASKS:
        message = pattern.sub(mask, message)
    return message.strip()


def fingerprint(info: ErrorInfo) -> str:
    """`ValueError@function:hash` of the masked message, short enough to read in a table."""
    site = info.raise_site
    function = site.function if site and site.function else "-"
    masked = mask_message(info.message)
    digest = hashlib.blake2b(f"{info.exception_type}\0{function}\0{masked}".encode(), digest_size=6)
    return f"{info.short_type or 'Truncated'}@{function}:{digest.hexdigest()}"
