"""`e`: the matched pattern's page, laid out as `analyzer explain` prints it, from the same data."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from analyzer.core.matcher import Diagnosis, Matcher
from analyzer.core.runconfig import RunConfig
from analyzer.tui.sections import page

__all__ = ["PatternScreen"]


class PatternScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,e", "dismiss", "Close")]

    def __init__(self, diagnosis: Diagnosis, matcher: Matcher, run: RunConfig | None = None) -> None:
        super().__init__()
        self.diagnosis = diagnosis
        self.matcher = matcher
        self.run = run  # the configuration of the incident's run: the page's fixes use its values

    def compose(self) -> ComposeResult:
        pattern = self.diagnosis.pattern
        assert pattern is not None  # the app opens this page only for a known diagnosis
        with VerticalScroll(id="page-box") as box:
            box.border_title = f"explain {pattern.id}"
            box.border_subtitle = "Esc to close"
            yield Static(page(self.diagnosis, self.matcher, self.run), id="page")
