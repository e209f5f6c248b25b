"""The report as people read it: short text cells shared by the terminal, Markdown and HTML."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from analyzer.core.view import unknown_label
from analyzer.report.aggregate import Summary

__all__ = ["headline", "display_rows", "display_columns", "cell_text", "values_text", "shorten"]


def headline(report: Summary) -> str:
    total = report.runs_total
    share = f" ({100 * report.runs_failed / total:.1f}%)" if total else ""
    cache = f"; {report.scanned} file(s) scanned, {report.cached} from cache" if report.scanned or report.cached else ""
    return (f"{total} run(s): {report.runs_failed} with errors{share}, {len(report.clean)} without, "
            f"{report.runs_bad} bad; {len(report.groups)} {report.key}(s){cache}")


def display_columns(report: Summary) -> list[str]:
    first = [report.key] + (["exception"] if report.by in ("pattern", "fingerprint") else ["signatures"])
    new = ["new"] if report.since is not None else []
    return first + ["runs", "count", "root of", "role", "first seen", "last seen", "hosts", "values"] + new


def display_rows(report: Summary, values: int = 2, hosts: int = 3) -> list[dict[str, str]]:
    rows = []
    for row in report.groups:
        cells = {
            report.key: str(row[report.key]),
            "exception": row["exception_type"] or "",
            "signatures": str(row["signatures"]),
            "runs": f"{row['runs']}/{row['of_runs']} ({row['runs_pct']:.1f}%)",
            "count": str(row["occurrences"]),
            "root of": str(row["run_roots"]),
            "role": _role(row["roots"], row["consequences"]),
            "first seen": cell_text(row["first_seen"]),
            "last seen": cell_text(row["last_seen"]),
            "hosts": _few(row["hosts"], hosts),
            # per signature: the values it was raised with; per host, day or version: what hit it most
            "values": values_text(row["top_params"], values) if report.by in ("pattern", "fingerprint")
            else ", ".join(f"{sig} ({runs})" for sig, runs in row["top_signatures"]),
            "new": "NEW" if row["new"] else "",
            "follows": row["follows"] if isinstance(row["follows"], str) else "",
            "pattern": _pattern_id(report, row),
            "label": _label(report, row),
            "example": row["example"] if isinstance(row["example"], str) else "",
            "message": shorten(row["message"] or "", 160),
        }
        rows.append(cells)
    return rows


def _is_fingerprint(report: Summary, row: dict[str, Any]) -> bool:
    key = str(row[report.key])
    return report.by == "fingerprint" or bool(row["exception_type"]) and key.startswith(f"{row['exception_type']}@")


def _pattern_id(report: Summary, row: dict[str, Any]) -> str:
    """The pattern id a signature row stands for ('' for fingerprints and for other groupings)."""
    if report.by != "pattern" or _is_fingerprint(report, row):
        return ""
    return str(row[report.key])


def _label(report: Summary, row: dict[str, Any]) -> str:
    """What people call the group: a pattern id, or an unknown error's type and function."""
    if report.by in ("pattern", "fingerprint") and _is_fingerprint(report, row):
        function = row["raise_function"] if isinstance(row["raise_function"], str) else None
        return unknown_label(row["exception_type"], function)
    return str(row[report.key])


def cell_text(value: Any) -> str:
    """One value as table text: times to the minute, lists joined, nothing as empty."""
    if value is None or isinstance(value, float) and value != value:  # nothing, or NaN
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, dict):
        return values_text(value, len(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(cell_text(v) for v in value)
    return str(value)


def values_text(top_params: dict[str, list[list[Any]]], most: int) -> str:
    """`moe_a2a_backend=flashinfer_tkv (15), mooncake (9)`: the parameters that vary most first."""
    # A list that never changes (the allowed choices a message quotes) says nothing about the runs.
    varying = {name: values for name, values in top_params.items() if len(values) > 1 or not _is_list(values[0][0])}
    ranked = sorted(varying.items(), key=lambda item: (-len(item[1]), item[0]))[:most]
    return "; ".join(f"{name}=" + ", ".join(f"{shorten(str(value), 24)} ({count})" for value, count in values)
                     for name, values in ranked)


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or isinstance(value, str) and value.startswith(("[", "("))


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _role(roots: int, consequences: int) -> str:
    if roots and consequences:
        return f"root {roots} / consequence {consequences}"
    return "consequence" if consequences else "root"


def _few(items: list[str], most: int) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" +{len(items) - most}" if len(items) > most else "")
