"""The canvas view: grid, zoom (wheel), pan (middle button or Space+drag), rubber-band select, drops.

After `fit_all` the view keeps the topology fitted while its size changes (the window being shown,
docks arranged, the window resized) until the user zooms or pans: on a real display the first fit
runs before the window has its final size.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsView, QMenu, QWidget

from app.core.topology import Position
from app.gui.canvas.items import NODE_HEIGHT, NODE_WIDTH, NodeItem
from app.gui.canvas.scene import CanvasScene, layout_rect
from app.gui.commands import AddComponentCommand, new_bolt, new_spout
from app.gui.document import DocumentModel

COMPONENT_MIME = "application/x-stormbound-component"
GRID = 20


class CanvasView(QGraphicsView):
    """Shows a CanvasScene; accepts spouts and bolts dropped from the palette, and files to open."""

    files_dropped = Signal(list)

    def __init__(self, scene: CanvasScene, parent: QWidget | None = None):
        super().__init__(scene, parent)
        self.canvas_scene = scene
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setAcceptDrops(True)
        self.setObjectName("canvas")
        self._panning = False
        self._space_held = False
        self._pan_start = QPointF()
        self.context_actions: list[QAction] = []  # the window's Copy, Paste, Delete ... for the right-click menu
        self.auto_fit = False  # refit on resize: set by fit_all, cleared when the user zooms or pans
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self._refit_now)
        for bar in (self.horizontalScrollBar(), self.verticalScrollBar()):
            bar.actionTriggered.connect(self._user_moved)  # the user's own scrolling only

    @property
    def document(self) -> DocumentModel:
        return self.canvas_scene.document

    def highlight_components(self, names: set[str]) -> None:
        """Mark the acting components of a trace position (empty set clears)."""
        self.canvas_scene.highlight_components(set(names))

    # ---- grid ----------------------------------------------------------------------
    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        painter.fillRect(rect, QColor("#f4f6f8"))
        scale = self.transform().m11()
        step = GRID if scale >= 0.5 else GRID * 5
        while step * scale < 4:  # zoomed far out (thousands of components): lines at least 4 pixels apart
            step *= 5
        left = math.floor(rect.left() / step) * step
        top = math.floor(rect.top() / step) * step
        fine = QPen(QColor("#e3e7ec"), 0)
        coarse = QPen(QColor("#d2d8df"), 0)
        x = left
        while x < rect.right():
            painter.setPen(coarse if round(x / step) % 5 == 0 else fine)
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
            x += step
        y = top
        while y < rect.bottom():
            painter.setPen(coarse if round(y / step) % 5 == 0 else fine)
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
            y += step

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        if self.canvas_scene.nodes:
            return
        # an empty document says how to begin
        painter.save()
        painter.resetTransform()
        painter.setPen(QColor("#7a828c"))
        font = painter.font()
        font.setPointSizeF(12.0)
        painter.setFont(font)
        painter.drawText(QRectF(self.viewport().rect()), Qt.AlignmentFlag.AlignCenter,
                         "Drag a Spout and Bolts from the palette onto the canvas,\n"
                         "then drag from an output port (right) to a bolt to connect them.\n"
                         "Or open a .storm.json or D-VerT file (File ▸ Open, or drop it here).")
        painter.restore()

    # ---- zoom and pan ------------------------------------------------------------
    def zoom(self, factor: float) -> None:
        self.auto_fit = False
        scale = self.transform().m11() * factor
        if 0.15 <= scale <= 4.0:
            self.scale(factor, factor)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            item = self.itemAt(event.pos())
            if isinstance(item, NodeItem):
                item.toolTip()  # made now if due (NodeItem makes its tooltip when it is read)
        return super().viewportEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.auto_fit = False
            super().wheelEvent(event)  # scroll
            return
        self.zoom(1.15 if event.angleDelta().y() > 0 else 1 / 1.15)

    def _user_moved(self, *_: object) -> None:
        self.auto_fit = False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.auto_fit:
            self._refit.start()  # after the layout settles; coalesces a burst of resizes

    def _refit_now(self) -> None:
        if self.auto_fit:
            self.fit_all()

    def fit_all(self) -> None:
        """Zoom to show every node (at most 125 %); kept fitted on resize until the user zooms or pans."""
        self.auto_fit = True
        items = self.canvas_scene.nodes.values()
        if not items:
            self.resetTransform()
            self.centerOn(0, 0)
            return
        rect = QRectF()
        for item in items:
            rect = rect.united(item.sceneBoundingRect())
        rect = rect.united(layout_rect(self.canvas_scene.document))  # those still to be drawn too
        rect = rect.adjusted(-60, -70, 60, 60)
        self.resetTransform()
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
            self.centerOn(rect.center())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = True
            self.auto_fit = False
            self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = False
            self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        super().keyReleaseEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.MiddleButton:
            self.auto_fit = False
            self._panning = True
            self._pan_start = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._panning:
            delta = event.position() - self._pan_start
            self._pan_start = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._panning and event.button() == Qt.MouseButton.MiddleButton:
            self._panning = False
            self.unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        from app.gui.resources import icon

        where = self.mapToScene(event.pos())
        menu = QMenu(self)
        menu.addAction(icon("spout"), "Add Spout Here", lambda: self.add_component("spout", where))
        menu.addAction(icon("bolt"), "Add Bolt Here", lambda: self.add_component("bolt", where))
        if self.context_actions:
            menu.addSeparator()
            menu.addActions(self.context_actions)
        menu.exec(event.globalPos())

    # ---- drops from the palette ------------------------------------------------------
    def _accepts(self, event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> bool:
        data = event.mimeData()
        return data.hasFormat(COMPONENT_MIME) or any(url.isLocalFile() for url in data.urls())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        if not event.mimeData().hasFormat(COMPONENT_MIME):
            paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
            if paths:
                event.acceptProposedAction()
                self.files_dropped.emit(paths)
            else:
                event.ignore()
            return
        kind = bytes(event.mimeData().data(COMPONENT_MIME).data()).decode()
        self.add_component(kind, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def add_component(self, kind: str, scene_pos: QPointF | None = None) -> str:
        """Add a new spout or bolt centred at `scene_pos` (the view's centre by default); returns its id."""
        if scene_pos is None:
            scene_pos = self.mapToScene(self.viewport().rect().center())
        doc = self.document
        comp = new_spout(doc) if kind == "spout" else new_bolt(doc)
        x = round((scene_pos.x() - NODE_WIDTH / 2) / GRID) * GRID
        y = round((scene_pos.y() - NODE_HEIGHT / 2) / GRID) * GRID
        doc.undo_stack.push(AddComponentCommand(doc, comp, Position(x=x, y=y)))
        self.canvas_scene.select_ids({comp.id})
        return comp.id
