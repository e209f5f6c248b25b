"""The report as Markdown: for a wiki page, a pull request or a chat message."""

from __future__ import annotations

from analyzer.report.aggregate import Summary
from analyzer.report.display import display_columns, display_rows, headline, shorten

__all__ = ["render_markdown"]


def render_markdown(report: Summary) -> str:
    lines = [f"# Fleet report by {report.by}", "", headline(report) + ".", ""]
    if not report.groups:
        lines += ["No errors in any run.", ""]
    else:
        columns = display_columns(report) + ["example message"]
        lines.append(_row(columns))
        lines.append(_row(["---"] * len(columns)))
        for row in display_rows(report):
            row["example message"] = shorten(row["message"], 100)
            lines.append(_row([row[name] for name in columns]))
        lines.append("")
    if report.since is not None:
        new = [str(row[report.key]) for row in report.groups if row["new"]]
        lines += [f"## New since {report.since.isoformat()}", ""]
        lines += [f"- `{key}`" for key in new] or ["None."]
        lines.append("")
    if report.bad:
        lines += [f"## Bad files ({len(report.bad)})", "", _row(["run", "file", "status", "detail"]),
                  _row(["---"] * 4)]
        for bad in report.bad:
            lines.append(_row([str(bad["run"]), str(bad["file"]), str(bad["status"]),
                               bad["detail"] if isinstance(bad["detail"], str) else ""]))
        lines.append("")
    return "\n".join(lines)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
