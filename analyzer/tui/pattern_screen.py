"""`e`: the matched pattern's page, exactly as `analyzer explain` prints it."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.sinks.page import render_page

__all__ = ["PatternScreen", "page_text"]


def page_text(diagnosis: Diagnosis, matcher: Matcher, width: int = 100) -> Text:
    console = Console(width=width, force_terminal=True, color_system="truecolor", highlight=False, soft_wrap=True)
    with console.capture() as captured:
        render_page(diagnosis.pattern, matcher, console, diagnosis)
    return Text.from_ansi(captured.get().rstrip())


class PatternScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,e", "dismiss", "Close")]

    def __init__(self, diagnosis: Diagnosis, matcher: Matcher) -> None:
        super().__init__()
        self.diagnosis = diagnosis
        self.matcher = matcher

    def compose(self):
        with VerticalScroll(id="page-box") as box:
            box.border_title = f"explain {self.diagnosis.pattern.id}"
            box.border_subtitle = "Esc to close"
            yield Static(page_text(self.diagnosis, self.matcher), id="page")
