"""The report in a terminal: one line of figures per group and a line of detail under it, then
the bad runs. Lines, not a wide table, so that it reads at 80 columns and in a pipe."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from analyzer.report.aggregate import Summary
from analyzer.report.display import display_rows, headline

__all__ = ["render_text"]

BAD_SHOWN = 20
_FIGURES = ("runs", "count", "root of", "first seen", "last seen")


def render_text(report: Summary, console: Console) -> None:
    console.print(f"[bold]Fleet report by {report.by}[/]: {escape(headline(report))}")
    rows = display_rows(report, values=2, hosts=2)
    if not rows:
        console.print("[green]No errors in any run.[/]")
    else:
        for row in rows:
            row["first seen"], row["last seen"] = row["first seen"][:10], row["last seen"][:10]
        widths = {name: max(len(name), *(len(row[name]) for row in rows)) for name in _FIGURES}
        header = "  ".join(name.ljust(widths[name]) for name in _FIGURES)
        console.print(f"\n[dim]{escape(header)}  {report.key}[/]")
        for row in rows:
            figures = "  ".join(row[name].rjust(widths[name]) if name in ("count", "root of")
                                else row[name].ljust(widths[name]) for name in _FIGURES)
            new = " [bold red]NEW[/]" if row["new"] else ""
            style = "dim" if row["role"] == "consequence" else "bold"
            fold = "↳ " if row["follows"] else ""  # a consequence, right under the root cause it followed
            console.print(f"{escape(figures)}  {fold}[{style}]{escape(row[report.key])}[/]{new}", soft_wrap=True)
            console.print(f"    [dim]{escape(_details(report, row))}[/]", soft_wrap=True)
    if report.bad:
        console.print(f"\n[yellow]{len(report.bad)} bad file(s)[/] [dim]({_bad_note(report)})[/]")
        for bad in report.bad[:BAD_SHOWN]:
            detail = f" ({bad['detail']})" if isinstance(bad["detail"], str) else ""
            console.print(f"  [yellow]{bad['status']}[/] {escape(str(bad['file']))}{escape(detail)}", soft_wrap=True)
        if len(report.bad) > BAD_SHOWN:
            console.print(f"  [dim]… {len(report.bad) - BAD_SHOWN} more (--format csv --rows bad lists all)[/]")


def _bad_note(report: Summary) -> str:
    runs = len({bad["run"] for bad in report.bad})
    failed = runs - report.runs_bad
    return (f"{report.runs_bad} run(s) counted as bad" + (f"; {failed} run(s) with errors in them are counted with "
                                                          "errors" if failed else ""))


def _details(report: Summary, row: dict[str, str]) -> str:
    what = row["exception"] if report.by in ("pattern", "fingerprint") else f"{row['signatures']} signature(s)"
    hosts = f"hosts {row['hosts']}" if row["hosts"] and report.by != "host" else ""
    parts = [what, row["role"], hosts, row["values"]]
    return " · ".join(part for part in parts if part)
