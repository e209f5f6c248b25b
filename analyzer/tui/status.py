"""The status line: lines read, throughput, what the table shows, and a progress bar for files."""

from __future__ import annotations

import time
from collections import deque

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

__all__ = ["StatusBar", "Throughput"]


class Throughput:
    """Lines per second over the last few seconds, from samples of a growing line count."""

    def __init__(self, seconds: float = 3.0) -> None:
        self.seconds = seconds
        self._samples: deque[tuple[float, int]] = deque()

    def sample(self, lines: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        self._samples.append((now, lines))
        while len(self._samples) > 2 and now - self._samples[0][0] > self.seconds:
            self._samples.popleft()
        (start, first), (end, last) = self._samples[0], self._samples[-1]
        return (last - first) / (end - start) if end > start else 0.0


def _rate(per_second: float) -> str:
    return f"{per_second / 1000:.1f}k" if per_second >= 1000 else f"{per_second:.0f}"


class StatusBar(Horizontal):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Held, not queried: the app's timer may still tick while the widgets are being removed.
        self.text = Label(id="status-text")
        self.bar = ProgressBar(id="progress", show_eta=False)

    def compose(self) -> ComposeResult:
        yield self.text
        yield self.bar

    def show(self, *, lines: int, rate: float | None, state: str, fraction: float | None, view: str) -> None:
        """`rate` None hides the throughput (the scan is over); `fraction` None hides the bar."""
        parts = [state, f"{lines:,} lines"]
        if rate is not None:
            parts.append(f"{_rate(rate)} lines/s")
        parts.append(view)
        self.text.update(" · ".join(parts))
        self.bar.display = fraction is not None and fraction < 1.0
        if self.bar.display and fraction is not None:
            self.bar.update(total=1.0, progress=fraction)
