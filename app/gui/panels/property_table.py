"""The Verification panel's property list as a Qt item model: one row per property, one per checked bolt.

Columns: marker, property, verdict, k, time. Verdicts are coloured as UPPAAL colours its
queries: grey = not run or stale, green = no counterexample (up to k, or bounded by the
rate proof), red = counterexample, amber = unknown. The marker column's UserRole holds the
colour's name; the property column's UserRole holds a bolt row's bolt name. The model
reads the states of a `VerificationController` and follows its signals; `PropertyTableView` shows it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.core.formats.verified import bolt_verdict_words
from app.gui.app_words import in_app_words
from app.gui.panels.verification_controller import MARKER_MEANING, PropertyState, VerificationController

MARKER_COLOURS = {"grey": "#9e9e9e", "red": "#d32f2f", "green": "#388e3c", "amber": "#f5a300"}
VERDICT_TEXT_COLOURS = {"grey": "#757575", "red": "#c62828", "green": "#2e7d32", "amber": "#b26a00"}
COLUMNS = ["", "property", "verdict", "k", "time"]
MARKER, PROPERTY, VERDICT, K, TIME = range(len(COLUMNS))
BOLT_INDENT = "    "  # bolt rows stand under their property

_ICONS: dict[str, QIcon] = {}
Index = QModelIndex | QPersistentModelIndex


def marker_icon(colour: str) -> QIcon:
    """A filled circle in the verdict colour."""
    icon = _ICONS.get(colour)
    if icon is None:
        pixmap = QPixmap(14, 14)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(QColor(MARKER_COLOURS[colour]))
        painter.setPen(QColor(MARKER_COLOURS[colour]).darker(130))
        painter.drawEllipse(1, 1, 12, 12)
        painter.end()
        icon = _ICONS[colour] = QIcon(pixmap)
    return icon


class PropertyTableModel(QAbstractTableModel):
    """Rows: each property, followed by one row per checked bolt of the growth property."""

    def __init__(self, controller: VerificationController):
        super().__init__(controller)
        self.controller = controller
        self.entries: list[tuple[int, str | None]] = []  # (property row, bolt name or None) per table row
        self._fill()
        controller.properties_reset.connect(self._on_reset)
        controller.property_changed.connect(self._on_property_changed)

    def _fill(self) -> None:
        self.entries = []
        for row, state in enumerate(self.controller.states):
            self.entries.append((row, None))
            self.entries += [(row, name) for name in state.spec.bolts]

    def _on_reset(self) -> None:
        self.beginResetModel()
        self._fill()
        self.endResetModel()

    def _on_property_changed(self, row: int) -> None:
        rows = [i for i, (prop, _bolt) in enumerate(self.entries) if prop == row]
        if rows:
            self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(COLUMNS) - 1))

    # ---- where things are --------------------------------------------------------------------
    def entry(self, table_row: int) -> tuple[int, str | None]:
        """(property row, bolt name or None) of a table row; (-1, None) outside the table."""
        return self.entries[table_row] if 0 <= table_row < len(self.entries) else (-1, None)

    def table_row(self, row: int, bolt: str | None = None) -> int:
        """The table row of property `row` (or of its checked bolt `bolt`); -1 when not listed."""
        return next((i for i, e in enumerate(self.entries) if e == (row, bolt)), -1)

    def text(self, row: int, column: int, bolt: str | None = None) -> str:
        """What a cell shows (also used by tests)."""
        table_row = self.table_row(row, bolt)
        if table_row < 0:
            raise KeyError(bolt if bolt is not None else row)
        value = self.data(self.index(table_row, column))
        return "" if value is None else str(value)

    # ---- QAbstractTableModel ------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008  # Qt's default argument
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008  # Qt's default argument
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.entries):
            return None
        row, bolt = self.entries[index.row()]
        if not 0 <= row < len(self.controller.states):
            return None
        state = self.controller.states[row]
        if bolt is None:
            return self._property_data(state, index.column(), role)
        return self._bolt_data(state, bolt, index.column(), role)

    def _property_data(self, state: PropertyState, column: int, role: int) -> Any:
        colour = state.colour
        result = state.result
        if role == Qt.ItemDataRole.DisplayRole:
            if column == PROPERTY:
                return state.spec.title
            if column == VERDICT:
                return state.verdict_text
            if column == K:
                return "" if result is None or result.k is None else str(result.k)
            if column == TIME:
                return "" if result is None else f"{result.elapsed_s:.1f} s"
            return None
        if role == Qt.ItemDataRole.ToolTipRole and column == VERDICT and state.verdict_words:
            return f"{state.spec.title}: {state.verdict_words}"
        return self._decoration(colour, column, role, state.spec.title)

    def _bolt_data(self, state: PropertyState, bolt: str, column: int, role: int) -> Any:
        verdict = state.bolt_verdict(bolt)
        if verdict is None and state.running and state.doing.startswith(f"{bolt}: "):
            text = "searching: " + state.doing.removeprefix(f"{bolt}: ")
        elif verdict is None:
            text = "verifying…" if state.running else ("" if state.result is None else "not searched")
        else:
            text = bolt_verdict_words(verdict)
            if state.stale and state.instant_verdict(bolt) is None:  # the rate check's answer is of this document
                text = f"stale: {text}"
        if role == Qt.ItemDataRole.DisplayRole:
            if column == PROPERTY:
                return BOLT_INDENT + bolt
            if column == VERDICT:
                return text
            if column == K:
                return "" if verdict is None or verdict.k is None else str(verdict.k)
            return None
        if role == Qt.ItemDataRole.UserRole and column == PROPERTY:
            return bolt
        tip = f"{bolt}'s own verdict: double-click to open its lasso"
        if role == Qt.ItemDataRole.ToolTipRole and column == VERDICT:
            return in_app_words(verdict.message) if verdict is not None and verdict.message else text
        return self._decoration(state.bolt_colour(bolt), column, role, tip)

    @staticmethod
    def _decoration(colour: str, column: int, role: int, title_tip: str) -> Any:
        if column == MARKER:
            if role == Qt.ItemDataRole.DecorationRole:
                return marker_icon(colour)
            if role == Qt.ItemDataRole.UserRole:
                return colour
            if role == Qt.ItemDataRole.ToolTipRole:
                return MARKER_MEANING[colour]
        if column == VERDICT and role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(VERDICT_TEXT_COLOURS[colour]))
        if column == PROPERTY and role == Qt.ItemDataRole.ToolTipRole:
            return title_tip
        return None


class PropertyTableView(QTableView):
    """The property list on screen: one line a row, one row selected at a time; `selected` and `select` speak
    in (property row, bolt name) as the model does."""

    def __init__(self, model: PropertyTableModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.property_model = model
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        # one line a row: a fixed height, not each row measured again whenever a verdict arrives (50 bolts: 0.5 s)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setSectionResizeMode(MARKER, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PROPERTY, QHeaderView.ResizeMode.Stretch)
        for c in (VERDICT, K, TIME):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        # columns fitted to the rows on screen, not to every row whenever a verdict arrives (480 bolts: Qt asked the
        # model 60,000 times and the GUI thread stalled 1–3 s per update; bench/RESULTS.md)
        header.setResizeContentsPrecision(0)

    def selected(self) -> tuple[int, str | None]:
        """(property row, bolt name or None) of the selected row; (-1, None) when nothing is selected."""
        rows = self.selectionModel().selectedRows()
        return self.property_model.entry(rows[0].row()) if rows else (-1, None)

    def select(self, row: int, bolt: str | None = None) -> None:
        """Select property `row` (or its checked bolt `bolt`)."""
        table_row = self.property_model.table_row(row, bolt)
        if table_row >= 0:
            self.selectRow(table_row)
