"""The palette: Spout and Bolt, dragged onto the canvas (or double-clicked to add at the centre)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QByteArray, QMimeData, QSize, Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from app.gui.canvas.view import COMPONENT_MIME
from app.gui.resources import icon


class Palette(QListWidget):
    """A list of component kinds; the drag carries the kind under COMPONENT_MIME."""

    add_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("palette")
        self.setDragEnabled(True)
        self.setIconSize(QSize(28, 28))
        self.setSpacing(2)
        for kind, label, tip in (
            ("spout", "Spout", "A source of tuples: rate (tuples/s) and burst"),
            ("bolt", "Bolt", "A worker: α (s per batch), σ (output per input), parallelism"),
        ):
            item = QListWidgetItem(icon(kind), label)
            item.setData(Qt.ItemDataRole.UserRole, kind)
            item.setToolTip(tip + ". Drag onto the canvas, or double-click.")
            self.addItem(item)
        self.itemDoubleClicked.connect(self._on_double_click)
        self.setMaximumHeight(90)

    def mimeData(self, items: Sequence[QListWidgetItem]) -> QMimeData:
        data = QMimeData()
        if items:
            data.setData(COMPONENT_MIME, QByteArray(str(items[0].data(Qt.ItemDataRole.UserRole)).encode()))
        return data

    def mimeTypes(self) -> list[str]:
        return [COMPONENT_MIME]

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.CopyAction

    def _on_double_click(self, item: QListWidgetItem) -> None:
        self.add_requested.emit(str(item.data(Qt.ItemDataRole.UserRole)))


__all__ = ["Palette"]
