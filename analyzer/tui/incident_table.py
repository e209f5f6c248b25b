"""The incident list: one row per incident, keyed by its id."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from analyzer.core.incidents import Incident

__all__ = ["IncidentTable", "row_cells", "compact_ranks", "COLUMNS"]

# (key, label): keys double as sort names in view.SORTS, so a header click sorts by its column.
COLUMNS = (("role", "Role"), ("severity", "Severity"), ("count", "Count"), ("ranks", "Ranks"),
           ("exception", "Exception"), ("pattern", "Pattern"), ("first_seen", "First seen"))
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
    return (role, severity, Text(f"×{incident.count}", justify="right"), Text(compact_ranks(incident.ranks) or "-"),
            Text(incident.info.short_type or "traceback cut off", "bold"),
            Text(pattern.id, "green") if pattern else Text("unknown", "magenta"), Text(when, "dim"))


class IncidentTable(DataTable):
    """Rows follow `show`; the cursor stays on the same incident as rows come and go."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in COLUMNS:
            self.add_column(label, key=key)

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
                    if self.get_cell(incident.id, column) != cell:
                        self.update_cell(incident.id, column, cell)
            for incident in incidents[len(shown):]:
                self.add_row(*row_cells(incident), key=incident.id)
            return
        self.clear()
        for incident in incidents:
            self.add_row(*row_cells(incident), key=incident.id)
        if keep in ids:
            self.move_cursor(row=ids.index(keep))

    def step(self, delta: int) -> None:
        if self.row_count:
            self.move_cursor(row=max(0, min(self.row_count - 1, self.cursor_row + delta)))
