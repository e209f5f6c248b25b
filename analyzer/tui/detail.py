"""The detail pane: diagnosis, where the pattern and the log say the error is raised, the
traceback and the chain of the selected incident."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from analyzer.core.incidents import Incident
from analyzer.core.runconfig import RunConfig
from analyzer.core.view import IncidentView, incident_view
from analyzer.tui import sections

__all__ = ["DetailPane"]

_FITTED = ("pattern-source", "raise-site")

_SECTIONS = {"summary": sections.summary, "diagnosis": sections.diagnosis,
             "pattern-source": sections.pattern_source, "raise-site": sections.raise_site,
             "traceback": sections.traceback, "chain": sections.chain}


class _Fitted(Static):
    """A section whose paths are shortened to its own width: laid out again whenever that changes."""

    def __init__(self, build, *, id: str) -> None:
        super().__init__(id=id)
        self.build = build
        self.view: IncidentView | None = None

    def show(self, view: IncidentView | None) -> None:
        self.view = view
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if self.view is not None:
            self.update(self.build(self.view, self.content_size.width or None))
        else:
            self.update("")


class DetailPane(VerticalScroll):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.incident: Incident | None = None
        self.run: RunConfig | None = None
        self.view: IncidentView | None = None  # built once per incident shown; every section reads it
        self.parts = {name: _Fitted(build, id=name) if name in _FITTED else Static(id=name)
                      for name, build in _SECTIONS.items()}

    def compose(self) -> ComposeResult:
        yield self.parts["summary"]
        yield self.parts["diagnosis"]
        with Horizontal(id="where"):
            yield self.parts["pattern-source"]
            yield self.parts["raise-site"]
        yield self.parts["traceback"]
        yield self.parts["chain"]

    def show(self, incident: Incident | None, run: RunConfig | None = None) -> None:
        """`run`: the configuration of the run the incident's log came from; it fills the fixes."""
        if incident == self.incident and run == self.run and incident is not None:
            return
        moved = incident is None or self.incident is None or incident.id != self.incident.id
        self.incident, self.run = incident, run
        self.view = incident_view(incident, run) if incident else None
        self.border_title = f"incident {incident.id}" if incident else "incident"
        view = self.view
        for name, build in _SECTIONS.items():
            part = self.parts[name]
            if isinstance(part, _Fitted):
                part.show(view)
            else:
                part.update(build(view) if view else Text("No incident selected." if name == "summary" else ""))
        if moved:
            self.scroll_home(animate=False)
