"""The triage app: incident table on top, the selected incident's detail and raw log below.

The scan runs on a thread worker (LiveScan); a timer reads its incidents and counters, so the UI
stays responsive however fast lines arrive and however long a file is.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import replace
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input
from textual.worker import Worker, WorkerState

from analyzer.core.incidents import Incident
from analyzer.core.view import headline
from analyzer.sources.files import STDIN
from analyzer.tui.detail import DetailPane
from analyzer.tui.help_screen import HelpScreen
from analyzer.tui.incident_table import IncidentTable
from analyzer.tui.live import LiveScan
from analyzer.tui.log_pane import LogPane
from analyzer.tui.pattern_screen import PatternScreen
from analyzer.tui.status import StatusBar, Throughput
from analyzer.tui.view import FILTERS, SORTS, ViewState, visible

__all__ = ["TriageApp", "open_command"]

POLL_SECONDS = 0.25


def open_command(path: str, line: int, environ: dict[str, str]) -> list[str]:
    """$EDITOR (else $PAGER, else less) at `line` of `path`: `+N` is what vi, nano, emacs and less take."""
    program = environ.get("EDITOR") or environ.get("PAGER") or "less"
    return [*shlex.split(program), f"+{line}", path]


class TriageApp(App):
    CSS_PATH = Path(__file__).with_name("triage.tcss")
    TITLE = "analyzer"
    BINDINGS = [
        Binding("n", "step(1)", "Next"),
        Binding("p", "step(-1)", "Prev"),
        Binding("slash", "search", "Search"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("c", "copy_fix(1)", "Copy fix"),
        *(Binding(str(n), f"copy_fix({n})", "Copy fix N", show=False) for n in range(1, 10)),
        Binding("m", "copy_message", "Copy msg"),
        Binding("e", "explain", "Explain"),
        Binding("r", "goto_root", "Root"),
        Binding("t", "show_traceback", "Traceback", show=False),
        Binding("o", "open_log", "Open in $EDITOR"),
        Binding("w", "toggle_wrap", "Wrap log lines", show=False),
        Binding("x", "toggle_prefixes", "Hide log prefixes", show=False),
        Binding("escape", "clear_search", "Clear search", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, live: LiveScan) -> None:
        super().__init__()
        self.live = live
        self.view = ViewState()
        self.incidents: list[Incident] = []
        self._seen_version = -1
        self._seen_ids: set[str] | None = None  # the incidents shown so far; None before the first poll
        self._problems_shown = 0
        self._throughput = Throughput()
        names = ["stdin" if path == STDIN else os.path.basename(path) for path in live.files]
        self.sub_title = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")

    def compose(self) -> ComposeResult:
        # Kept as attributes: queries go to the active screen, which may be a modal one.
        self.table = IncidentTable(id="incidents")
        self.detail = DetailPane(id="detail")
        self.log_pane = LogPane(id="log")
        self.search_box = Input(placeholder="search messages (Enter to keep, Esc to clear)", id="search")
        self.status_bar = StatusBar(id="status")
        yield Header()
        yield self.table
        with Horizontal(id="panes"):
            yield self.detail
            yield self.log_pane
        yield self.search_box
        yield self.status_bar
        yield Footer()

    def on_mount(self) -> None:
        self.table.border_title = "incidents"
        self.table.focus()
        self.detail.show(None)
        self.log_pane.show(None)
        self.set_interval(POLL_SECONDS, self.poll)
        self._scan()
        self.poll()

    @work(thread=True, exclusive=True, group="scan")
    def _scan(self) -> None:
        self.live.run()

    def on_worker_state_changed(self, message: Worker.StateChanged) -> None:
        if message.worker.group == "scan" and message.state is WorkerState.SUCCESS:
            self.poll()  # show the last incidents now, not at the next tick

    def on_unmount(self) -> None:
        self.live.stop()

    # -- reading the engine ------------------------------------------------------------------

    def poll(self) -> None:
        live = self.live
        for problem in live.problems[self._problems_shown:]:
            self.notify(str(problem), severity="warning", timeout=10)
        self._problems_shown = len(live.problems)
        version = live.version
        if version != self._seen_version:
            self._seen_version = version
            self.incidents = live.incidents()
            self._show_rows()
            self._announce_new()
        self._show_status()

    def _announce_new(self) -> None:
        """Following a log, a new incident rings the bell and says what it is; a file read once
        to its end does not (it would ring for every one)."""
        ids = {incident.id for incident in self.incidents}
        if self._seen_ids is not None and self.live.streaming:
            for incident in self.incidents:
                if incident.id not in self._seen_ids:
                    role = "ROOT CAUSE" if incident.is_run_root else incident.role
                    self.bell()
                    self.notify(f"{incident.id} ({role}): {headline(incident.info)[:120]}", title="New incident",
                                severity="error" if incident.role == "root" else "warning")
        self._seen_ids = ids

    def _show_rows(self) -> None:
        self.table.show(visible(self.incidents, self.view), keep=self.table.selected_id)
        self._select(self.table.selected_id)

    def _show_status(self) -> None:
        live = self.live
        state = "done" if live.done else "following" if live.streaming else "reading"
        roots = [incident.id for incident in self.incidents if incident.is_run_root]
        view = f"{len(self.incidents)} incident(s)" + (f", root cause {roots[0]}" if roots else "")
        if self.table.row_count != len(self.incidents):
            view += f", {self.table.row_count} shown"
        view += f" · filter {self.view.filter} · sort {self.view.sort}{' ↓' if self.view.reverse else ''}"
        if self.view.search:
            view += f" · search {self.view.search!r}"
        rate = self._throughput.sample(live.lines_read)
        self.status_bar.show(lines=live.lines_read, rate=None if live.done else rate, state=state,
                             fraction=live.fraction, view=view)

    # -- selection -----------------------------------------------------------------------------

    @property
    def selected(self) -> Incident | None:
        wanted = self.table.selected_id
        return next((incident for incident in self.incidents if incident.id == wanted), None)

    def _select(self, incident_id: str | None) -> None:
        incident = next((i for i in self.incidents if i.id == incident_id), None)
        self.detail.show(incident, self.live.run_config(incident) if incident else None)
        self.log_pane.show(incident.event if incident else None)

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        self._select(message.row_key.value)

    def on_data_table_header_selected(self, message: DataTable.HeaderSelected) -> None:
        key = message.column_key.value
        assert key is not None  # every column is added with a key (IncidentTable.on_mount)
        reverse = not self.view.reverse if key == self.view.sort else False
        self._set_view(replace(self.view, sort=key, reverse=reverse))

    def _set_view(self, view: ViewState) -> None:
        self.view = view
        self.table.mark_sort(view.sort, view.reverse)
        self._show_rows()
        self._show_status()

    # -- actions -------------------------------------------------------------------------------

    def action_step(self, delta: int) -> None:
        self.table.step(delta)

    def action_cycle_filter(self) -> None:
        names = list(FILTERS)
        self._set_view(replace(self.view, filter=names[(names.index(self.view.filter) + 1) % len(names)]))

    def action_cycle_sort(self) -> None:
        names = list(SORTS)
        self._set_view(replace(self.view, sort=names[(names.index(self.view.sort) + 1) % len(names)], reverse=False))

    def action_reverse_sort(self) -> None:
        self._set_view(replace(self.view, reverse=not self.view.reverse))

    def action_search(self) -> None:
        self.search_box.add_class("-active")
        self.search_box.focus()

    def on_input_changed(self, message: Input.Changed) -> None:
        self._set_view(replace(self.view, search=message.value))

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.table.focus()

    def action_clear_search(self) -> None:
        self.search_box.value = ""
        self.search_box.remove_class("-active")
        self._set_view(replace(self.view, search=""))
        self.table.focus()

    def action_copy_fix(self, number: int) -> None:
        view = self.detail.view
        fixes = view.explanation.fixes if view and view.explanation else ()
        if not 1 <= number <= len(fixes):
            self.notify(f"No fix {number} for this incident.", severity="warning")
            return
        fix = fixes[number - 1]
        # the log's own launch command with the change applied, when the log shows the command
        self.copy_to_clipboard(fix.command or fix.after or fix.text or fix.title)
        what = "your launch command with fix" if fix.command else "fix"
        self.notify(f"Copied {what} {number}: {fix.title}")

    def action_copy_message(self) -> None:
        incident = self.selected
        if incident is None:
            return
        info = incident.info
        self.copy_to_clipboard(f"{info.exception_type}: {info.message}" if info.message else info.exception_type)
        self.notify(f"Copied the {info.short_type or 'error'} message.")

    def action_explain(self) -> None:
        incident = self.selected
        if incident is None or not incident.diagnosis.known:
            self.notify("No known pattern for this incident: nothing to explain.", severity="warning")
            return
        self.push_screen(PatternScreen(incident.diagnosis, self.live.matcher, self.live.run_config(incident)))

    def action_help(self) -> None:
        # all of ours are Binding objects; Textual types BINDINGS to also allow tuples
        self.push_screen(HelpScreen([b for b in self.BINDINGS if isinstance(b, Binding)]))

    def action_goto_root(self) -> None:
        """From a consequence to the root cause it followed (shown again if a filter hid it)."""
        incident = self.selected
        if incident is None or not incident.caused_by:
            self.notify("Not a consequence: no root cause to go to.", severity="warning")
            return
        if incident.caused_by not in {i.id for i in visible(self.incidents, self.view)}:
            self.search_box.value = ""
            self._set_view(replace(self.view, filter="all", search=""))
        self.table.select(incident.caused_by)

    def action_open_log(self) -> None:
        """The selected incident's first line in $EDITOR or $PAGER, the app suspended meanwhile."""
        incident = self.selected
        if incident is None:
            return
        span = incident.event.span
        if not os.path.isfile(span.file):
            self.notify(f"{span.file} cannot be opened: it is not a file.", severity="warning")
            return
        command = open_command(span.file, span.line_start, dict(os.environ))
        try:
            with self.suspend():
                subprocess.run(command, check=False)
        except SuspendNotSupported:
            self.notify("This terminal cannot hand itself over to another program.", severity="warning")
        except OSError as err:
            self.notify(f"{command[0]}: {err.strerror or err}", severity="error")

    def action_show_traceback(self) -> None:
        """The detail pane scrolled to the traceback, which sits below the diagnosis."""
        # after the next refresh: a detail just filled in has no final layout yet to scroll by
        self.call_after_refresh(self.detail.scroll_to_widget, self.detail.parts["traceback"], animate=False, top=True)

    def action_toggle_wrap(self) -> None:
        self.log_pane.set_layout(wrap=not self.log_pane.wrap)

    def action_toggle_prefixes(self) -> None:
        self.log_pane.set_layout(prefixes=not self.log_pane.prefixes)
