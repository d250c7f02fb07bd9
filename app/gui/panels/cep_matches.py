"""A table of complex-event-pattern matches for one run log (the shipped Storm monitors by default).

Standalone: give it matches (`set_matches`) or events and patterns (`show_run`).
The Runs panel embeds it under a run; a double-click on a row reports the match
(`match_activated`) so the host can, for example, move its time cursor to
`match.t_start`. Matching runs in the calling thread: it is fast (about a million
events per CPU second), a host with huge logs can call `app.cep.monitors.run_monitors`
in a worker and pass the result to `set_matches`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.cep import Match, Pattern, find_matches
from app.cep.monitors import load_monitors, run_monitors

ALL_PATTERNS = "All patterns"
COLUMNS = ("Pattern", "Kind", "Start (s)", "End (s)", "Parameters", "Events")
_NO_PARENT = QModelIndex()  # the invalid index: a table has no parent rows


def _event_text(ev: dict[str, Any]) -> str:
    attrs = ", ".join(f"{k}={v}" for k, v in ev.items() if k not in ("type", "t") and v is not None)
    return f"{ev.get('type')}@{ev.get('t', 0):g}" + (f"({attrs})" if attrs else "")


class MatchTableModel(QAbstractTableModel):
    """Matches as rows; sorting uses the raw numbers (times) rather than the shown text."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.matches: list[Match] = []

    def set_matches(self, matches: Sequence[Match]) -> None:
        self.beginResetModel()
        self.matches = list(matches)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.matches)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        m = self.matches[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                m.pattern,
                "timeout" if m.kind == "timeout" else "match",
                f"{m.t_start:g}",
                f"{m.t_end:g}",
                ", ".join(f"{k}={v}" for k, v in m.bindings.items()),
                " → ".join(_event_text(e) for e in m.events),
            )[col]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            return (m.pattern, m.kind, m.t_start, m.t_end, str(m.bindings), m.indices[0] if m.indices else 0)[col]
        if role == Qt.ItemDataRole.ToolTipRole and col == 5:
            return "\n".join(_event_text(e) for e in m.events)
        return None


class CepMatchesPanel(QWidget):
    """Pattern filter, a sortable table of matches and a one-line summary."""

    match_activated = Signal(object)  # the Match of a double-clicked row

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = MatchTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.proxy.setFilterKeyColumn(0)
        self.filter = QComboBox()
        self.filter.addItem(ALL_PATTERNS)
        self.filter.currentTextChanged.connect(self._filter_changed)
        self.summary = QLabel("No matches yet.")
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(self._activated)
        top = QHBoxLayout()
        top.addWidget(QLabel("Show:"))
        top.addWidget(self.filter, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.summary)
        self._pattern_ids: list[str] = []

    def set_matches(self, matches: Sequence[Match], patterns: Sequence[Pattern] | None = None) -> None:
        """Show these matches; `patterns` lists every pattern (also those without a match) in the filter."""
        self.model.set_matches(matches)
        ids = [p.id for p in patterns] if patterns is not None else list(dict.fromkeys(m.pattern for m in matches))
        self._pattern_ids = ids
        current = self.filter.currentText()
        self.filter.blockSignals(True)
        self.filter.clear()
        self.filter.addItem(ALL_PATTERNS)
        for pid in ids:
            self.filter.addItem(pid)
        self.filter.setCurrentText(current if current in ids else ALL_PATTERNS)
        self.filter.blockSignals(False)
        self._filter_changed(self.filter.currentText())
        self.table.sortByColumn(2, Qt.SortOrder.AscendingOrder)
        counts = {pid: 0 for pid in ids}
        for m in matches:
            counts[m.pattern] = counts.get(m.pattern, 0) + 1
        detail = ", ".join(f"{pid}: {n}" for pid, n in counts.items())
        self.summary.setText(f"{len(matches)} matches" + (f" ({detail})" if detail else ""))

    def show_run(self, log: Any, patterns: Sequence[Pattern] | None = None) -> list[Match]:
        """Match `patterns` (default: the shipped Storm monitors) over a run log or events and show them."""
        if patterns is None:
            patterns = load_monitors()
            matches = run_monitors(log, patterns=patterns)
        else:
            from app.cep import events_from_log

            matches = find_matches(patterns, events_from_log(log))
        self.set_matches(matches, patterns)
        return matches

    def visible_matches(self) -> list[Match]:
        """The matches shown, in table order (after filter and sort)."""
        rows = []
        for r in range(self.proxy.rowCount()):
            rows.append(self.model.matches[self.proxy.mapToSource(self.proxy.index(r, 0)).row()])
        return rows

    def _filter_changed(self, text: str) -> None:
        pattern = "" if text in ("", ALL_PATTERNS) else f"^{text}$"
        self.proxy.setFilterRegularExpression(pattern)

    def _activated(self, index: QModelIndex) -> None:
        source = self.proxy.mapToSource(index)
        if source.isValid():
            self.match_activated.emit(self.model.matches[source.row()])
