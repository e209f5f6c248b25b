"""The report as one self-contained HTML file: charts inline as SVG, styles inline, no scripts."""

from __future__ import annotations

from datetime import datetime
from html import escape

from analyzer import __version__
from analyzer.report.charts import horizontal_bars, stacked_bars
from analyzer.report.display import display_columns, display_rows, headline
from analyzer.report.aggregate import Summary, per_day, root_cause_counts

__all__ = ["render_html", "day_chart", "root_cause_chart"]

_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.lead { color: #555; margin: 0 0 16px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts svg { max-width: 100%; height: auto; border: 1px solid #eee; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #e6e6e6; padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; position: sticky; top: 0; }
td.num { text-align: right; white-space: nowrap; } td .msg { color: #666; font-size: 12px; }
tr.new td:first-child::after { content: " NEW"; color: #c00; font-weight: bold; font-size: 11px; }
code { font-size: 12px; } footer { margin-top: 28px; color: #888; font-size: 12px; }
"""
_NUMERIC = {"runs", "count", "root of", "signatures"}


def day_chart(report: Summary) -> str:
    return stacked_bars(per_day(report), "Failed runs per day, by root cause")


def root_cause_chart(report: Summary) -> str:
    return horizontal_bars(root_cause_counts(report), "Top root causes (runs)")


def render_html(report: Summary, title: str = "Fleet failure report") -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>", f'<p class="lead">By {escape(report.by)} · {escape(headline(report))}</p>',
        f'<div class="charts">{day_chart(report)}{root_cause_chart(report)}</div>',
        f"<h2>By {escape(report.by)}</h2>", _summary_table(report),
    ]
    if len(report.bad_files):
        parts += [f"<h2>Bad files ({len(report.bad_files)})</h2>",
                  f"<p>Logs that could not be reported on in full. {report.runs_bad} run(s) with no error found "
                  "count as bad; errors found in half-written logs are included above, and their runs count "
                  "with errors.</p>", _bad_table(report)]
    if len(report.clean_runs):
        parts += [f"<h2>Runs without errors ({len(report.clean_runs)})</h2>", "<details><summary>list</summary><ul>"]
        parts += [f"<li><code>{escape(run)}</code></li>" for run in report.clean_runs["run"]]
        parts.append("</ul></details>")
    parts.append(f"<footer>analyzer {escape(__version__)} · {datetime.now():%Y-%m-%d %H:%M}</footer></body></html>")
    return "\n".join(parts)


def _summary_table(report: Summary) -> str:
    if report.table.empty:
        return "<p>No errors in any run.</p>"
    columns = [c for c in display_columns(report) if c != "new"]
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in columns) + "</tr></thead><tbody>"]
    for row in display_rows(report, values=3):
        cells = []
        for name in columns:
            text = escape(row[name])
            if name == report.key and row["message"]:
                text = f"<code>{text}</code><div class=\"msg\">{escape(row['message'])}</div>"
            cells.append(f'<td class="num">{text}</td>' if name in _NUMERIC else f"<td>{text}</td>")
        out.append(f'<tr{" class=new" if row["new"] else ""}>' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _bad_table(report: Summary) -> str:
    out = ["<table><thead><tr><th>run</th><th>file</th><th>status</th><th>detail</th></tr></thead><tbody>"]
    for bad in report.bad_files.itertuples():
        detail = bad.detail if isinstance(bad.detail, str) else ""
        out.append(f"<tr><td><code>{escape(str(bad.run))}</code></td><td>{escape(str(bad.file))}</td>"
                   f"<td>{escape(str(bad.status))}</td><td>{escape(detail)}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)
