"""The report as one self-contained HTML file: charts inline as SVG, styles inline, no scripts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from html import escape
from pathlib import Path

import pandas as pd

from analyzer import __version__
from analyzer.core.derived import DerivedPage
from analyzer.core.schema import Pattern, Role
from analyzer.core.view import Explanation, explanation
from analyzer.report.aggregate import Example, Summary, per_day, root_cause_counts
from analyzer.report.charts import horizontal_bars, stacked_bars
from analyzer.report.display import display_columns, display_rows, headline
from analyzer.sinks.kb.paths import kb_href

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
.meaning { font-size: 12px; color: #444; margin-top: 2px; } td.nowrap { white-space: nowrap; } .fp { color: #888; font-size: 11px; } .example { font-size: 11px; }
.new { color: #fff; background: #c00; font-weight: bold; font-size: 10px; padding: 0 4px; border-radius: 3px; }
.rates td { text-align: right; white-space: nowrap; } .rates td.high { background: #fde2e2; }
tr.explained td { border-bottom: 0; } tr.explain td { padding-top: 0; font-size: 12px; color: #444; }
tr.explain summary { cursor: pointer; color: #555; } tr.explain details > div { margin: 4px 0 0 14px; }
.fixes { display: flex; flex-wrap: wrap; gap: 6px 18px; } .fix { flex: 1 1 360px; border-left: 3px solid #ddd; padding-left: 8px; }
.label { font-weight: 600; } .unbroken { white-space: nowrap; }
td, tr.explain { overflow-wrap: anywhere; }  /* a long unbroken name or value must not widen the table */
td.key { min-width: 18em; } td.exception { overflow-wrap: normal; } td.values { min-width: 16em; } .hint { color: #a60; }
.fix .before { color: #b00; } .fix .after { color: #070; } .fix .your { font-weight: 600; }
code { font-size: 12px; } footer { margin-top: 28px; color: #888; font-size: 12px; }
"""
_NUMERIC = {"runs", "count", "root of", "signatures"}
_NOWRAP = {"role"}  # a time may fold between its date and its hour
KB_BASE = "kb"  # where the report finds the knowledge base (`analyzer kb build`) by default: beside it


def day_chart(report: Summary) -> str:
    return stacked_bars(per_day(report), "Failed runs per day, by root cause")


def root_cause_chart(report: Summary) -> str:
    return horizontal_bars(root_cause_counts(report), "Top root causes (runs)")


def render_html(report: Summary, title: str = "Fleet failure report",
                patterns: Mapping[str, Pattern] | None = None, kb: str = KB_BASE,
                derived: Callable[[str], DerivedPage | None] = lambda pattern_id: None) -> str:
    """`patterns`, when given (id -> pattern), add each known signature's explanation, as `scan`
    words it for the group's earliest incident: its values, and fixes from its run's configuration;
    `derived(id)`, its page derived from the source (`Matcher.derived`): when it fires, the pinned code.
    `kb`: the knowledge base's folder relative to the report, or its URL; each signature links to its page."""
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>", f'<p class="lead">By {escape(report.by)} · {escape(headline(report))}</p>',
        f'<div class="charts">{day_chart(report)}{root_cause_chart(report)}</div>',
        f"<h2>By {escape(report.by)}</h2>", _summary_table(report, patterns or {}, kb, derived),
    ]
    if report.daily_rates is not None:
        parts += ["<h2>Failure rate per day</h2>",
                  "<p>Runs with the failure over all runs that day: a busy day has more failures and more runs.</p>",
                  _rates_table(report.daily_rates)]
    if len(report.bad_files):
        note = (f"<p>Logs that could not be reported on in full. {report.runs_bad} run(s) with no error found "
                "count as bad; errors found in half-written logs are included above, and their runs count "
                "with errors.</p>")
        parts += [f"<h2>Bad files ({len(report.bad_files)})</h2>", note, _bad_table(report)]
    if len(report.clean_runs):
        parts += [f"<h2>Runs without errors ({len(report.clean_runs)})</h2>", "<details><summary>list</summary><ul>"]
        parts += [f"<li><code>{escape(run)}</code></li>" for run in report.clean_runs["run"]]
        parts.append("</ul></details>")
    parts.append(f"<footer>analyzer {escape(__version__)} · {datetime.now():%Y-%m-%d %H:%M}</footer></body></html>")
    return "\n".join(parts)


def _summary_table(report: Summary, patterns: Mapping[str, Pattern], kb: str,
                   derived: Callable[[str], DerivedPage | None]) -> str:
    if report.table.empty:
        return "<p>No errors in any run.</p>"
    columns = [c for c in display_columns(report) if c != "new"]
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in columns) + "</tr></thead><tbody>"]
    per_signature = report.by in ("pattern", "fingerprint")
    for row in display_rows(report, values=3):
        example = report.examples.get(row[report.key]) if per_signature else None
        found = _explanation(patterns.get(row["pattern"]), example, derived)
        cells = []
        for name in columns:
            text = (_key_cell(row, report.key, found, kb) if name == report.key
                    else _unbroken(row[name], ", ") if name == "hosts"
                    else _unbroken(row[name], " ") if name in ("first seen", "last seen")
                    else escape(row[name]).replace(".", ".<wbr>") if name == "exception"  # folds after a module
                    else escape(row[name]))
            kind = ("num" if name in _NUMERIC else "nowrap" if name in _NOWRAP else "key" if name == report.key
                    else name if name in ("exception", "values") else "")
            cells.append(f'<td class="{kind}">{text}</td>' if kind else f"<td>{text}</td>")
        details = _details(found, example)
        classes = " ".join(name for name, on in (("new", row["new"]), ("explained", details)) if on)
        out.append(f'<tr class="{classes}">' if classes else "<tr>")
        out.append("".join(cells) + "</tr>")
        if details:  # the rest of the explanation, the width of the table, folded
            fixes = found.fixes if found else ()
            summary = (f"{len(fixes)} fix{'es' if len(fixes) != 1 else ''}: " + "; ".join(escape(f.title) for f in fixes)
                       if fixes else "where it was raised")
            out.append(f'<tr class="explain"><td colspan="{len(columns)}"><details><summary>{summary}</summary>'
                       f"{details}</details></td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _unbroken(text: str, between: str) -> str:
    """A cell that may fold only `between` its parts: never inside `gpu-node-01` or `2026-08-25`."""
    return between.join(f'<span class="unbroken">{escape(part)}</span>' for part in text.split(between))


def _key_cell(row: dict[str, str], key: str, found: Explanation | None, kb: str) -> str:
    """The signature's name (linked to its page), NEW, an example message and log line, and what
    the pattern says it means, with the example's values."""
    if row["pattern"]:
        name = f'<a href="{escape(kb_href(row["pattern"], kb))}"><code>{escape(row["pattern"])}</code></a>'
    elif row["label"] != row[key]:  # an unknown error: its type and function, the fingerprint after
        name = f'<b>{escape(row["label"])}</b> <code class="fp">{escape(row[key])}</code>'
    else:
        name = f"<code>{escape(row[key])}</code>"
    if row["new"]:
        name += ' <span class="new">NEW</span>'
    if row["message"]:
        name += f'<div class="msg">{escape(row["message"])}</div>'
    if row["example"]:
        path = row["example"].rpartition(":")[0]
        href = Path(path).resolve().as_uri() if path else ""
        name += f'<div class="example">e.g. <a href="{escape(href)}">{escape(row["example"])}</a></div>'
    if found is not None and found.meaning:
        name += f'<div class="meaning">{escape(found.meaning)}</div>'
    return name


def _explanation(pattern: Pattern | None, example: Example | None,
                 derived: Callable[[str], DerivedPage | None]) -> Explanation | None:
    """The pattern's explanation with the values of the group's earliest incident and of its run,
    as `scan` and the TUI show it for that incident."""
    if pattern is None:
        return None
    if example is None:
        return explanation(pattern, {}, derived=derived(pattern.id))
    row = example.row
    return explanation(pattern, row.params, row.match_kind.value, row.confidence, message=row.message,
                       awaiting_root=row.role is Role.CONSEQUENCE and row.caused_by is None, run=example.run,
                       derived=derived(pattern.id))


def _details(found: Explanation | None, example: Example | None) -> str:
    """Values, fixes and sites: the parts of the explanation (core/view.py) a row folds away."""
    parts, fixes = [], []
    if found is not None and (found.values or found.hint):
        values = ", ".join(f"<code>{escape(v.name)}={escape(v.shown)}</code>" for v in found.values)
        hint = f' <b class="hint">{escape(found.hint)}</b>' if found.hint else ""
        parts.append(f'<div><span class="label">Values (the example)</span> {values}{hint}</div>')
    for number, fix in enumerate(found.fixes if found else (), 1):
        lines = [f'<span class="label">Fix {number}</span> {escape(fix.title)}']
        if fix.text:
            lines.append(escape(fix.text))
        for label, text in (("before", fix.before), ("after", fix.after), ("your command, fixed", fix.command)):
            if text:
                lines.append(f'<span class="{label.split()[0]}">{label}:</span> <code>{escape(text)}</code>')
        fixes.append('<div class="fix">' + "<br>".join(lines) + "</div>")
    if fixes:
        parts.append('<div class="fixes">' + "".join(fixes) + "</div>")
    if found is not None and found.derived and found.derived.condition:
        parts.append(f'<div><span class="label">When it fires</span> {escape(found.derived.fires_when)} '
                     '<span class="fp">(derived from the source)</span></div>')
    if found is not None and (location := found.source.location):
        src = found.source
        where = escape(location) + (f" in <code>{escape(src.function)}</code>" if src.function else "")
        pinned = f' <span class="fp">@ {escape(src.pinned)}</span>' if src.pinned else ""
        if found.derived and found.derived.link:
            where = f'<a href="{escape(found.derived.link)}">{where}</a>'
        parts.append(f'<div><span class="label">Pattern source</span> <code>{where}</code>{pinned}</div>')
    if example is not None and (site := example.row.raise_site):
        function = example.row.raise_function
        named = f" in <code>{escape(function)}</code>" if function else ""
        parts.append(f'<div><span class="label">Raised in the log at</span> <code>{escape(site)}</code>{named}</div>')
    return "".join(parts)


def _rates_table(rates: pd.DataFrame) -> str:
    signatures = [c for c in rates.columns if c != "runs"]
    out = ["<table class=\"rates\"><thead><tr><th>day</th><th>runs</th>"
           + "".join(f"<th><code>{escape(str(s))}</code></th>" for s in signatures) + "</tr></thead><tbody>"]
    for day, row in rates.iterrows():
        cells = "".join(f'<td class="{"high" if row[s] >= 0.2 else ""}">{row[s]:.0%}</td>' for s in signatures)
        out.append(f"<tr><td class=\"nowrap\">{escape(str(day))}</td><td>{int(row['runs'])}</td>{cells}</tr>")
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
