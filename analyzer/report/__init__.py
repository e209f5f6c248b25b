"""Fleet-wide failure reports: which failures hit how many runs, since when, where, with which values.

    from analyzer.report import incidents_frame, summary
    df = incidents_frame(["fleet/"])          # one typed row per incident per log file
    report = summary(df, by="pattern")        # per signature: runs affected, first/last seen, ...

The names below load on first use, so that worker processes, which import only the per-file
scan, do not pay for pandas.
"""

from __future__ import annotations

import importlib

__all__ = ["incidents_frame", "summary", "restrict", "fleet_tables", "FleetTables", "Summary", "BY"]

_HOMES = {"incidents_frame": "frame", "restrict": "frame", "fleet_tables": "frame", "FleetTables": "frame",
          "summary": "aggregate", "Summary": "aggregate", "BY": "aggregate"}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'analyzer.report' has no attribute {name!r}")
    return getattr(importlib.import_module(f"analyzer.report.{_HOMES[name]}"), name)
