"""The report as data: one table to CSV or Parquet, or the whole report as JSON."""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from typing import IO, TYPE_CHECKING, Any

from analyzer.report.aggregate import Summary
from analyzer.report.choices import ROWS
from analyzer.report.display import cell_text

if TYPE_CHECKING:  # pandas only for the tables written as tables: the JSON summary does without it
    import pandas as pd

__all__ = ["ROWS", "table_of", "write_csv", "write_parquet", "write_xlsx", "records", "report_json"]


def table_of(rows: str, report: Summary, df: pd.DataFrame | None = None) -> pd.DataFrame:
    """summary: one row per group; incidents: the frame; runs: every run; bad: the bad files.
    The incidents and runs come from the incidents frame, `df`."""
    if rows in ("incidents", "runs"):
        if df is None:
            raise ValueError(f"the {rows} rows are read from the incidents frame")
        if rows == "incidents":
            return df
        from analyzer.report.frame import fleet_tables

        tables = fleet_tables(df)
        return tables.runs if tables else df.iloc[0:0, 0:0]
    if rows == "bad":
        return report.bad_files
    return report.table


def write_csv(frame: pd.DataFrame, stream: IO[str]) -> None:
    """Lists and parameter counts (`hosts`, `ranks`, `top_params`, ...) as JSON text, so that
    `json.loads` gives them back; everything else as it is."""
    flat = frame.copy()
    for column in _nested(flat):
        flat[column] = flat[column].map(_json_cell)
    flat.to_csv(stream, index=False)


def _json_cell(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def write_parquet(frame: pd.DataFrame, path: str) -> None:
    """Lists of names stay lists; values with counts (top parameters, top signatures) are JSON text."""
    flat = frame.copy()
    flat.attrs = {}  # the run table rides in attrs, which Parquet would try to store as JSON
    for column in _nested(flat):
        if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in flat[column]):
            flat[column] = flat[column].map(lambda v: json.dumps(v, ensure_ascii=False, default=str))
    flat.to_parquet(path, index=False)


def write_xlsx(frame: pd.DataFrame, path: str) -> None:
    """One sheet, cells as in the CSV; Excel has no time zones, so times are written as UTC."""
    import pandas as pd

    flat = frame.copy()
    flat.attrs = {}
    for column in _nested(flat):
        flat[column] = flat[column].map(cell_text)
    for column in flat.columns:
        if isinstance(flat[column].dtype, pd.DatetimeTZDtype):
            flat[column] = flat[column].dt.tz_convert("UTC").dt.tz_localize(None)
    flat.to_excel(path, index=False, engine="openpyxl")


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON values: times in ISO form, missing values as null."""
    if frame.empty:
        return []
    return json.loads(frame.to_json(orient="records", date_format="iso", force_ascii=False))


def report_json(report: Summary) -> dict[str, Any]:
    """The summary as JSON values, from its plain records (no pandas): times as `records` writes them."""
    return {
        "by": report.by,
        "runs": {"total": report.runs_total, "with_errors": report.runs_failed,
                 "without_errors": len(report.clean), "bad": report.runs_bad},
        "files": {"scanned": report.scanned, "from_cache": report.cached},
        "new_since": report.since.isoformat() if report.since else None,
        "groups": [_json_record(row) for row in report.groups],
        "root_causes": [_json_record(row) for row in report.roots],
        "clean_runs": [run["run"] for run in report.clean],
        "bad_files": [_json_record(row) for row in report.bad],
    }


def _json_record(row: dict[str, Any]) -> dict[str, Any]:
    return {name: _json_value(value) for name, value in row.items()}


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):  # pandas' ISO form, to the millisecond
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}"
    if isinstance(value, Enum):
        return value.value
    return value


def _nested(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if frame[c].dtype == object
            and any(isinstance(v, (list, dict, tuple)) for v in frame[c])]
