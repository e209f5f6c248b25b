"""The raw log around the selected incident, prefixes and all, its own lines highlighted."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.containers import ScrollableContainer
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from analyzer.core.records import ErrorEvent
from analyzer.tui.context import LogWindow, read_window

__all__ = ["LogPane", "window_text"]


def window_text(window: LogWindow) -> Text:
    width = len(str(window.rows[-1][0])) if window.rows else 1
    widest = max((len(line) for _, line in window.rows), default=0)  # the marked band runs this far
    text = Text()
    if window.note:
        text.append(window.note + "\n", "italic yellow")
    previous = None
    for number, line in window.rows:
        if previous is not None and number > previous + 1:
            text.append(f"{'⋮':>{width}}   {number - previous - 1} lines left out\n", "dim")
        previous = number
        inside = window.first <= number <= window.last
        text.append(f"{number:>{width}} ", "bold yellow" if inside else "dim")
        text.append("▌ " if inside else "  ", "yellow")
        body = Text.from_ansi(line.replace("\r", ""), no_wrap=True)  # logs may carry colour codes
        if inside:
            body.pad_right(widest - len(body))
        body.stylize("on #3a2a10" if inside else "dim")
        text.append_text(body).append("\n")
    text.rstrip()
    return text


class LogPane(ScrollableContainer):
    """Reads its window on a worker thread: a log of millions of lines must not freeze the UI."""

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

    def compose(self):
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
        content = window_text(message.window)
        self.lines.update(content)
        top = next((index for index, (number, _) in enumerate(message.window.rows) if number >= message.window.first), 0)
        offset = top - 3 + (1 if message.window.note else 0)
        self._scroll_target = (max(0, offset), len(content.plain.splitlines()))
        self.call_after_refresh(self._scroll_when_laid_out)

    def watch_virtual_size(self) -> None:
        # The new lines are laid out; sizes settle by the next refresh.
        self.call_after_refresh(self._scroll_when_laid_out)

    def _scroll_when_laid_out(self) -> None:
        # Scrolling before the new lines are laid out would be clamped to the old height.
        if self._scroll_target is not None and self.virtual_size.height >= self._scroll_target[1]:
            self.scroll_to(y=self._scroll_target[0], animate=False, immediate=True)
            self._scroll_target = None
