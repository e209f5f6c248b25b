"""Charts as inline SVG, drawn here: no script, no network, open anywhere."""

from __future__ import annotations

import math
from html import escape

import pandas as pd

__all__ = ["stacked_bars", "horizontal_bars", "PALETTE"]

# Okabe-Ito: told apart with every common colour-vision deficiency; grey is kept for "other".
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
OTHER = "#AAAAAA"
_FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12"'


def stacked_bars(table: pd.DataFrame, title: str, width: int = 820, height: int = 340) -> str:
    """One bar per row of `table` (e.g. a day), stacked by its columns (e.g. signatures)."""
    left, right, top, bottom = 44, 290, 34, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [_open(width, height, title), _text(left, 20, title, weight="bold", size=14)]
    if table.empty:
        parts.append(_text(left, top + 20, "no failed runs with a date"))
        return "".join(parts) + "</svg>"
    totals = table.sum(axis=1)
    ceiling, step = _nice_axis(int(totals.max()))
    for tick in range(0, ceiling + 1, step):
        y = top + plot_h - plot_h * tick / ceiling
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        parts.append(_text(left - 6, y + 4, str(tick), anchor="end", fill="#555"))
    band = plot_w / len(table)
    bar = max(2.0, band * 0.72)
    label_every = max(1, math.ceil(len(table) / 14))
    colors = _colors(list(table.columns))
    for index, (label, counts) in enumerate(table.iterrows()):
        x = left + band * index + (band - bar) / 2
        y = top + plot_h
        for series, count in counts.items():
            if count <= 0:
                continue
            h = plot_h * count / ceiling
            y -= h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colors[series]}">'
                         f'<title>{escape(str(label))} · {escape(str(series))}: {int(count)}</title></rect>')
        if index % label_every == 0:
            parts.append(_text(x + bar / 2, top + plot_h + 16, _short_day(str(label)), anchor="middle", fill="#555"))
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#888"/>')
    parts.extend(_legend(colors, left + plot_w + 16, top))
    return "".join(parts) + "</svg>"


def horizontal_bars(items: list[tuple[str, int]], title: str, width: int = 820) -> str:
    """Labelled bars, longest first as given: e.g. runs per root cause."""
    label_w, row_h, top = 300, 24, 34
    height = top + row_h * max(len(items), 1) + 10
    parts = [_open(width, height, title), _text(8, 20, title, weight="bold", size=14)]
    if not items:
        parts.append(_text(8, top + 16, "no failed runs"))
        return "".join(parts) + "</svg>"
    most = max(value for _, value in items) or 1
    bar_room = width - label_w - 60
    for index, (label, value) in enumerate(items):
        y = top + row_h * index
        w = max(1.0, bar_room * value / most)
        parts.append(_text(label_w - 8, y + 16, _clip(label, 44), anchor="end"))
        parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" '
                     f'fill="{PALETTE[index] if index < len(PALETTE) else OTHER}">'
                     f'<title>{escape(label)}: {value}</title></rect>')
        parts.append(_text(label_w + w + 6, y + 16, str(value), fill="#333"))
    return "".join(parts) + "</svg>"


def _open(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" {_FONT}>'
            f'<rect width="100%" height="100%" fill="#ffffff"/>')


def _text(x: float, y: float, text: str, anchor: str = "start", fill: str = "#222", weight: str = "normal",
          size: int = 12) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" font-weight="{weight}" '
            f'font-size="{size}">{escape(text)}</text>')


def _legend(colors: dict[str, str], x: float, y: float) -> list[str]:
    parts = []
    for index, (series, color) in enumerate(colors.items()):  # most frequent first, as stacked from the axis
        row = y + index * 20
        parts.append(f'<rect x="{x}" y="{row}" width="12" height="12" fill="{color}"/>')
        parts.append(_text(x + 18, row + 10, _clip(str(series), 36)))
    return parts


def _colors(series: list[str]) -> dict[str, str]:
    colors, index = {}, 0
    for name in series:
        if name == "other":
            colors[name] = OTHER
        else:
            colors[name] = PALETTE[index % len(PALETTE)]
            index += 1
    return colors


def _nice_axis(most: int) -> tuple[int, int]:
    """An axis top and tick step from 1, 2 or 5 times a power of ten, about five ticks."""
    most = max(most, 1)
    raw = most / 5
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return step * math.ceil(most / step), int(step)


def _short_day(label: str) -> str:
    return label[5:] if len(label) == 10 and label[4] == "-" else label  # 2026-08-28 -> 08-28


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
