"""The detail pane: diagnosis, where the pattern and the log say the error is raised, the
traceback and the chain of the selected incident."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from analyzer.core.incidents import Incident
from analyzer.core.view import IncidentView, incident_view
from analyzer.tui import sections

__all__ = ["DetailPane"]

_FITTED = ("pattern-source", "raise-site")

_SECTIONS = {"summary": sections.summary, "diagnosis": sections.diagnosis,
             "pattern-source": sections.pattern_source, "raise-site": sections.raise_site,
             "traceback": sections.traceback, "chain": sections.chain}


class DetailPane(VerticalScroll):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.incident: Incident | None = None
        self.view: IncidentView | None = None  # built once per incident shown; every section reads it
        self.parts = {name: Static(id=name) for name in _SECTIONS}

    def compose(self):
        yield self.parts["summary"]
        yield self.parts["diagnosis"]
        with Horizontal(id="where"):
            yield self.parts["pattern-source"]
            yield self.parts["raise-site"]
        yield self.parts["traceback"]
        yield self.parts["chain"]

    def _fill(self, names) -> None:
        view = self.view
        for name in names:
            build = _SECTIONS[name]
            if view is None:
                content = Text("No incident selected." if name == "summary" else "")
            elif name in _FITTED:  # paths shortened to the column, never folded
                width = self.parts[name].content_size.width
                content = build(view, width or None)
            else:
                content = build(view)
            self.parts[name].update(content)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill, _FITTED)

    def show(self, incident: Incident | None) -> None:
        if incident == self.incident and incident is not None:
            return
        moved = incident is None or self.incident is None or incident.id != self.incident.id
        self.incident = incident
        self.view = incident_view(incident) if incident else None
        self.border_title = f"incident {incident.id}" if incident else "incident"
        self._fill(_SECTIONS)
        self.call_after_refresh(self._fill, _FITTED)  # once laid out, the columns' widths are known
        if moved:
            self.scroll_home(animate=False)
