"""`?`: the key bindings, read from the app itself so the list cannot drift from the keys."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen"]

_PANES = ("The table lists one row per incident: an error grouped over the ranks and files it "
          "appeared in, the run's root cause first. The detail pane explains the selected one; the "
          "log pane shows the lines around it in the file, with the incident's own lines marked. "
          "Tab moves between panes; the arrow keys scroll the focused one (the log pane sideways behind "
          "its line numbers).")


def _key_name(key: str) -> str:
    return {"slash": "/", "question_mark": "?", "escape": "Esc"}.get(key, key)


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        merged: dict[str, list[str]] = {}  # bindings sharing a description share a row
        for binding in self.bindings:
            merged.setdefault(binding.description, []).extend(_key_name(k) for k in binding.key.split(","))
        rows = [(f"{names[0]} … {names[-1]}" if len(names) > 3 else ", ".join(names), description)
                for description, names in merged.items()]
        width = max(len(keys) for keys, _ in rows)
        keys = Text()
        for names, description in rows:
            keys.append(f"{names:<{width}}  ", "bold cyan").append(description + "\n")
        keys.rstrip()
        with VerticalScroll(id="help-box") as box:
            box.border_title = "analyzer tui: keys"
            box.border_subtitle = "Esc to close"
            yield Static(Text(_PANES + "\n"))
            yield Static(keys, id="help-keys")
