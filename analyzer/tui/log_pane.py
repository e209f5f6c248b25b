"""The raw log around the selected incident, prefixes and all, its own lines highlighted."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from analyzer.core.records import ErrorEvent
from analyzer.tui.context import LogWindow, read_window

__all__ = ["LogPane", "window_text"]


def window_text(window: LogWindow, shift: int = 0, wrap: bool = False, prefixes: bool = True) -> Text:
    """The window's lines behind a line-number gutter that stays put: `shift` columns of each line
    are scrolled off to the left, after the gutter. `wrap` folds long lines instead; without
    `prefixes` each line is shown as the scan reads it, timestamps, ranks and containers stripped."""
    width = len(str(window.rows[-1][0])) if window.rows else 1
    shown = [window.rows[index][1] if prefixes else window.body(index) for index in range(len(window.rows))]
    widest = max((len(line) for line in shown), default=0)  # the marked band runs this far
    text = Text()
    if window.note:
        text.append(window.note + "\n", "italic yellow")
    previous = None
    for (number, _), line in zip(window.rows, shown):
        if previous is not None and number > previous + 1:
            text.append(f"{'⋮':>{width}}   {number - previous - 1} lines left out\n", "dim")
        previous = number
        inside = number in window.own if window.own else window.first <= number <= window.last
        text.append(f"{number:>{width}} ", "bold yellow" if inside else "dim")
        text.append("▌ " if inside else "  ", "yellow")
        body = Text.from_ansi(line.replace("\r", ""), no_wrap=not wrap)  # logs may carry colour codes
        if shift and not wrap:
            body = body[shift:]
        if inside and not wrap:
            body.pad_right(max(0, widest - shift - len(body)))
        body.stylize("on #3a2a10" if inside else "dim")
        text.append_text(body).append("\n")
    text.rstrip()
    text.no_wrap = not wrap
    return text


class LogPane(ScrollableContainer):
    """Reads its window on a worker thread: a log of millions of lines must not freeze the UI.

    Scrolls sideways by itself (left/right), so that the line-number gutter stays in place."""

    SHIFT_STEP = 8  # columns per left/right press

    class WindowRead(Message):
        def __init__(self, event: ErrorEvent, window: LogWindow) -> None:
            super().__init__()
            self.event = event
            self.window = window

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.event: ErrorEvent | None = None
        self.window: LogWindow | None = None
        self.lines = Static(id="log-lines")
        self._scroll_target: tuple[int, int] | None = None  # (line offset, content height) once laid out
        self.shift = 0  # columns scrolled off to the left, after the gutter
        self.wrap = False
        self.prefixes = True  # show each line's prefixes (timestamp, rank, container), as in the file

    def compose(self) -> ComposeResult:
        yield self.lines

    @property
    def settled(self) -> bool:
        """The selected incident's lines are shown and scrolled into view."""
        return self.window is not None and self._scroll_target is None

    def show(self, event: ErrorEvent | None) -> None:
        if event is not None and event is self.event:
            return
        self.event, self.window, self._scroll_target = event, None, None
        if event is None:
            self.border_title = "log"
            self.lines.update(Text("No incident selected.", "dim"))
            return
        span = event.span
        self.border_title = f"log {span.file}:{span.line_start}-{span.line_end}"
        self.lines.update(Text(f"reading {span.file} around line {span.line_start}…", "dim"))
        self._load(event)

    @work(thread=True, exclusive=True, group="log-window")
    def _load(self, event: ErrorEvent) -> None:
        worker = get_current_worker()
        window = read_window(event, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(self.WindowRead(event, window))  # thread-safe, unlike most calls

    def on_log_pane_window_read(self, message: WindowRead) -> None:
        message.stop()
        if message.event is not self.event:
            return  # read for an incident no longer selected
        self.window = message.window
        self.shift = 0
        content = self._render_window(message.window)
        top = next((index for index, (number, _) in enumerate(message.window.rows) if number >= message.window.first), 0)
        offset = top - 3 + (1 if message.window.note else 0)
        self._scroll_target = (max(0, offset), len(content.plain.splitlines()))
        self.call_after_refresh(self._scroll_when_laid_out)

    def _render_window(self, window: LogWindow) -> Text:
        content = window_text(window, self.shift, self.wrap, self.prefixes)
        self.lines.update(content)
        return content

    def set_layout(self, wrap: bool | None = None, prefixes: bool | None = None) -> None:
        """Fold long lines or not; show the prefixes or not."""
        self.wrap = self.wrap if wrap is None else wrap
        self.prefixes = self.prefixes if prefixes is None else prefixes
        self.lines.set_class(self.wrap, "-wrap")
        if self.window is not None:
            self._render_window(self.window)

    def action_scroll_left(self) -> None:
        self._shift_by(-self.SHIFT_STEP)

    def action_scroll_right(self) -> None:
        self._shift_by(self.SHIFT_STEP)

    def _shift_by(self, columns: int) -> None:
        if self.window is None or self.wrap:
            return
        widest = max((len(line) for _, line in self.window.rows), default=0)
        self.shift = max(0, min(widest - 1, self.shift + columns))
        self._render_window(self.window)

    def watch_virtual_size(self) -> None:
        # The new lines are laid out; sizes settle by the next refresh.
        self.call_after_refresh(self._scroll_when_laid_out)

    def _scroll_when_laid_out(self) -> None:
        # Scrolling before the new lines are laid out would be clamped to the old height.
        if self._scroll_target is not None and self.virtual_size.height >= self._scroll_target[1]:
            self.scroll_to(y=self._scroll_target[0], animate=False, immediate=True)
            self._scroll_target = None
