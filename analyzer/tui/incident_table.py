"""The incident list: one row per incident, keyed by its id."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from analyzer.core.incidents import Incident
from analyzer.core.view import headline

__all__ = ["IncidentTable", "row_cells", "compact_ranks", "COLUMNS", "MESSAGE_WIDTH"]

# (key, label): keys double as sort names in view.SORTS, so a header click sorts by its column.
COLUMNS = (("role", "Role"), ("severity", "Severity"), ("count", "Count"), ("ranks", "Ranks"),
           ("exception", "Exception"), ("pattern", "Pattern"), ("first_seen", "First seen"), ("message", "Message"))
MESSAGE_WIDTH = 90  # characters of the message shown in its column; the detail pane has it all
_ARROWS = {False: " ▲", True: " ▼"}  # the sorted column's label ends with one; the others with room for it
SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def compact_ranks(ranks: tuple[str, ...], limit: int = 3) -> str:
    """`TP0, TP1, TP2, TP4` -> `TP0-2,4`; more than `limit` families end with `…`."""
    families: dict[str, list[int]] = {}
    loose: list[str] = []
    for rank in ranks:
        stem = rank.rstrip("0123456789")
        if stem == rank:
            loose.append(rank)
        else:
            families.setdefault(stem, []).append(int(rank[len(stem):]))
    parts = [stem + _ranges(sorted(numbers)) for stem, numbers in families.items()] + loose
    return ", ".join(parts[:limit]) + (", …" if len(parts) > limit else "")


def _ranges(numbers: list[int]) -> str:
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def row_cells(incident: Incident) -> tuple[Text, ...]:
    pattern = incident.diagnosis.pattern
    if incident.is_run_root:
        role = Text("● ROOT CAUSE", "bold red")
    elif incident.role == "root":
        role = Text("● root", "red")
    else:
        role = Text(f"↳ consequence of {incident.caused_by}" if incident.caused_by else "↳ consequence", "yellow")
    severity = Text(pattern.severity, SEVERITY_STYLE.get(pattern.severity, "")) if pattern else Text("-", "dim")
    when = incident.first_seen.strftime("%m-%d %H:%M:%S") if incident.first_seen else "-"
    name = Text(pattern.id, "green") if pattern else Text("unknown", "magenta")
    message = headline(incident.info).split(": ", 1)[-1]
    message = message if len(message) <= MESSAGE_WIDTH else message[:MESSAGE_WIDTH - 1] + "…"
    return (role, severity, Text(f"×{incident.count}", justify="right"), Text(compact_ranks(incident.ranks) or "-"),
            Text(incident.info.short_type or "traceback cut off", "bold"), name, Text(when, "dim"),
            Text(message, "dim"))


class IncidentTable(DataTable):
    """Rows follow `show`; the cursor stays on the same incident as rows come and go."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in COLUMNS:
            self.add_column(label + "  ", key=key)
        self.mark_sort("role", reverse=False)

    def mark_sort(self, key: str, reverse: bool) -> None:
        """The sorted column's header ends with ▲ (▼ reversed); the labels keep their widths."""
        for column_key, label in COLUMNS:
            column = self.columns[ColumnKey(column_key)]
            column.label = Text(label + (_ARROWS[reverse] if column_key == key else "  "))
        self.refresh()

    @property
    def selected_id(self) -> str | None:
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def show(self, incidents: list[Incident], keep: str | None) -> None:
        """Display `incidents` in order, with the cursor on `keep` when it is still listed."""
        ids = [incident.id for incident in incidents]
        shown = [row.value for row in self.rows]
        if ids[:len(shown)] == shown:  # same order, maybe more rows: update in place, no jump
            for incident in incidents[:len(shown)]:
                for (column, _), cell in zip(COLUMNS, row_cells(incident)):
                    if self.get_cell(incident.id, column) != cell:  # (a cell that grew widens its column)
                        self.update_cell(incident.id, column, cell, update_width=True)
                        self._widen(column, cell)
            for incident in incidents[len(shown):]:
                self._add(incident)
            self.check_idle()  # (the table widens its columns when idle: without a message after it, not until a key)
            return
        self.clear()
        for incident in incidents:
            self._add(incident)
        if keep in ids:
            self.move_cursor(row=ids.index(keep))

    def _add(self, incident: Incident) -> None:
        cells = row_cells(incident)
        self.add_row(*cells, key=incident.id)
        for (column, _), cell in zip(COLUMNS, cells):
            self._widen(column, cell)

    def _widen(self, column: str, cell: Text) -> None:
        """The column as wide as a cell just put in it, at once. DataTable widens it when it is next idle, but keeps
        the cells it drew before then, cut to the old width, while nothing else changes (its cache of drawn cells
        does not know widths): on a loaded machine a revised row stayed `● ROOT ` for `● ROOT CAUSE`."""
        widths = self.columns[ColumnKey(column)]
        widths.content_width = max(widths.content_width, cell.cell_len)

    def select(self, incident_id: str) -> None:
        """Put the cursor on `incident_id`, when it is listed."""
        ids = [row.value for row in self.rows]
        if incident_id in ids:
            self.move_cursor(row=ids.index(incident_id))

    def step(self, delta: int) -> None:
        if self.row_count:
            self.move_cursor(row=max(0, min(self.row_count - 1, self.cursor_row + delta)))
