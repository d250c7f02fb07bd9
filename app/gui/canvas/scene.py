"""The canvas scene: mirrors the DocumentModel through its signals and turns gestures into commands.

The scene never edits the document directly: a finished drag becomes one
MoveComponentsCommand, a finished port drag one AddSubscriptionCommand, both pushed
on the document's undo stack on mouse release.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSceneMouseEvent, QGraphicsTextItem

from app.core.rates import RateReport
from app.core.topology import Position, Subscription
from app.gui.canvas.items import NODE_HEIGHT, NODE_WIDTH, EdgeItem, NodeItem, PortItem, RubberLink
from app.gui.commands import AddSubscriptionCommand, ConnectionRefused, MoveComponentsCommand
from app.gui.document import DocumentModel

#: links added per turn of the event loop when a document is shown: 20,000 subscriptions are drawn in turns
#: of a fraction of a second each, the window answering between them (bench/gui_open_large.py)
EDGE_BATCH = 1000
#: components added per turn of the event loop when a document is shown (each with its rate colour and latency
#: words): Live Mode's first poll of 3,000 bolts is drawn in turns too (bench/gui_live_first_poll.py). A document
#: of up to NODE_BATCH components is drawn at once.
NODE_BATCH = 200


def rate_marks(document: DocumentModel) -> tuple[RateReport | None, dict[str, str]]:
    """What the canvas shows of the snapshot's rate check: its report (None when the document is not analysable
    yet, e.g. mid-edit without a spout) and the bolts it proves unbounded, each with `check`'s words for it."""
    try:
        report = document.report() if document.topology().bolts else None
    except Exception:  # a document mid-edit may not be analysable yet
        return None, {}
    floods = document.floods() if report is not None else {}
    if not floods:
        return report, {}
    from app.core.tcn.flood import unbounded_words  # loaded with the floods found

    return report, {name: unbounded_words(cert) for name, cert in floods.items()}


def layout_rect(document: DocumentModel) -> QRectF:
    """Where the document's components are, by its layout (those still to be drawn too); empty without any."""
    rect = QRectF()
    for c in document.topology().components:
        pos = document.position(c.id)
        rect = rect.united(QRectF(pos.x, pos.y, NODE_WIDTH, NODE_HEIGHT))
    return rect


def edge_label(sub: Subscription) -> str:
    """What a link shows on the canvas: its grouping (not shuffle's), fields, and a stream other than default."""
    label: str = sub.grouping if sub.grouping != "shuffle" else ""
    if sub.grouping == "fields":
        label = "fields(" + ",".join(sub.fields) + ")"
    if sub.stream not in (None, "default"):  # a non-default stream is named on its link
        label = f"{sub.stream}: {label}" if label else sub.stream
    return label


class CanvasScene(QGraphicsScene):
    """Nodes and links of the open document; emits `status_message` to explain refusals."""

    status_message = Signal(str)
    connection_refused = Signal(str)
    live_changed = Signal()  # Live Mode's verdicts changed (the status bar's summary follows)

    def __init__(self, document: DocumentModel, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[str, EdgeItem] = {}
        self._rubber: RubberLink | None = None
        self._rubber_reason: QGraphicsTextItem | None = None
        self._drag_source: NodeItem | None = None
        self._press_positions: dict[str, QPointF] = {}
        self._reselect_edge: str | None = None
        self.last_refusal = ""
        self.live_verdicts: dict[str, str] = {}  # Live Mode: each bolt's verdict at the last poll
        self.setSceneRect(-2000, -2000, 4000, 4000)
        self._pending_nodes: list[str] = []  # component ids still to draw after a rebuild, in turns
        self._pending_edges: list[str] = []  # subscription ids still to draw after a rebuild, in turns
        self._edge_timer = QTimer(self)
        self._edge_timer.setSingleShot(True)
        self._edge_timer.setInterval(0)
        self._edge_timer.timeout.connect(self._add_pending_edges)
        document.node_added.connect(self._on_node_added)
        document.node_removed.connect(self._on_node_removed)
        document.node_changed.connect(self._on_node_changed)
        document.edge_added.connect(self._on_edge_added)
        document.edge_removed.connect(self._on_edge_removed)
        document.layout_changed.connect(self._on_layout_changed)
        document.document_replaced.connect(self.rebuild)
        document.changed.connect(self.refresh_rates)
        document.analysis_ready.connect(self.refresh_rates)  # a large document's edit, analysed in a worker
        self.rebuild()

    # ---- following the model ----------------------------------------------------
    def rebuild(self) -> None:
        """Recreate every item from the document (after New/Open/restore)."""
        for edge in list(self.edges.values()):
            self.removeItem(edge)
        for node in list(self.nodes.values()):
            self.removeItem(node)
        self.edges.clear()
        self.nodes.clear()
        topo = self.document.topology()
        # room for the whole layout (3,000 bolts in a column are 300,000 pixels tall), drawn or still to be drawn
        room = layout_rect(self.document).adjusted(-500, -500, 500, 500)
        self.setSceneRect(QRectF(-2000, -2000, 4000, 4000).united(room))
        self._edge_timer.stop()
        self._pending_edges = [s.id for s in topo.subscriptions]
        if len(topo.components) <= NODE_BATCH:
            self._pending_nodes = []
            for c in topo.components:
                self._on_node_added(c.id)
            self._add_pending_edges(refresh=False)
            self.refresh_rates()
        else:  # components in turns, each with its colour and words, then the links in turns
            self._pending_nodes = [c.id for c in topo.components]
            self._add_pending_nodes()

    def drawing(self) -> bool:
        """Whether components or links of the document are still to be drawn (a large document is drawn in
        turns)."""
        return bool(self._pending_nodes or self._pending_edges)

    def _add_pending_nodes(self) -> None:
        """Draw the next NODE_BATCH components still to draw (those the document still has) with their rate colour
        and latency words, then let the event loop run before the next turn; after the last, the links."""
        batch, self._pending_nodes = self._pending_nodes[:NODE_BATCH], self._pending_nodes[NODE_BATCH:]
        report, floods = rate_marks(self.document)
        words, critical = self.document.latency_marks()
        on_path = {n for pair in critical for n in pair}
        for ident in batch:
            if ident in self.nodes or not self.document.has_component(ident):
                continue
            self._on_node_added(ident)
            node = self.nodes[ident]
            if node.component.kind == "bolt":
                name = node.component.name
                node.set_rates(report.bolts.get(name) if report else None, floods.get(name))
            node.set_latency(words.get(ident), ident in on_path)
        self._edge_timer.start()

    def _add_pending_edges(self, refresh: bool = True) -> None:
        """Draw the next EDGE_BATCH links still to draw (those the document still has), then let the event loop
        run before the next turn; the last turn marks the critical paths on every link."""
        if self._pending_nodes:  # the components first
            self._add_pending_nodes()
            return
        batch, self._pending_edges = self._pending_edges[:EDGE_BATCH], self._pending_edges[EDGE_BATCH:]
        for ident in batch:
            if ident not in self.edges and self.document.has_subscription(ident):
                self._on_edge_added(ident)
        if self._pending_edges:
            self._edge_timer.start()
        elif refresh:
            self._refresh_latency(nodes=False)

    def _on_node_added(self, ident: str) -> None:
        item = NodeItem(self.document.component(ident))
        pos = self.document.position(ident)
        item.setPos(pos.x, pos.y)
        self.addItem(item)
        self.nodes[ident] = item

    def _on_node_removed(self, ident: str) -> None:
        item = self.nodes.pop(ident, None)
        if item is not None:
            self.removeItem(item)

    def _on_node_changed(self, ident: str) -> None:
        if ident in self.nodes:
            self.nodes[ident].set_component(self.document.component(ident))
            for edge in self.nodes[ident].edges:
                edge.update()

    def _on_edge_added(self, ident: str) -> None:
        sub = self.document.subscription(ident)
        if sub.source not in self.nodes or sub.target not in self.nodes:  # drawn once its components are
            self._pending_edges.append(ident)
            return
        edge = EdgeItem(ident, self.nodes[sub.source], self.nodes[sub.target], edge_label(sub))
        grouping = sub.grouping + (f" on {', '.join(sub.fields)}" if sub.fields else "")
        stream = f"stream {sub.stream or 'default'} of "
        edge.setToolTip(f"{self.nodes[sub.target].component.name} subscribes to "
                        f"{stream}{self.nodes[sub.source].component.name} ({grouping} grouping)")
        self.addItem(edge)
        self.edges[ident] = edge
        if ident == self._reselect_edge:  # a changed subscription keeps its selection
            self._reselect_edge = None
            edge.setSelected(True)

    def _on_edge_removed(self, ident: str) -> None:
        edge = self.edges.pop(ident, None)
        if edge is not None:
            self._reselect_edge = ident if edge.isSelected() else None
            edge.detach()
            self.removeItem(edge)

    def _on_layout_changed(self, ident: str) -> None:
        item = self.nodes.get(ident)
        if item is not None:
            pos = self.document.position(ident)
            if item.pos() != QPointF(pos.x, pos.y):
                item.setPos(pos.x, pos.y)

    def refresh_rates(self) -> None:
        """Colour every bolt by the rate check's utilisation, red where the check proves it unbounded (instant, so
        after every change); while a worker analyses a large document's edit, the colours stay until it is done."""
        if self.document.analysis() is None:
            return
        report, floods = rate_marks(self.document)
        for b in self.document.topology().bolts:
            if b.id in self.nodes:
                self.nodes[b.id].set_rates(report.bolts.get(b.name) if report else None, floods.get(b.name))
        self._refresh_latency()

    def _refresh_latency(self, nodes: bool = True) -> None:
        """Each bolt's sojourn bound in its tooltip, each spout's complete-latency bound in its (unless `nodes` is
        False: a large document's were given as it was drawn), and the critical paths marked
        (app/core/latency/bounds.py: exact and instant, no witness searched here; kept beside the document's
        snapshot, `DocumentModel.latency_marks`)."""
        words, critical = self.document.latency_marks()
        on_path = {n for pair in critical for n in pair}
        for ident, node in self.nodes.items() if nodes else ():
            node.set_latency(words.get(ident), ident in on_path)
        for edge in self.edges.values():
            mark = (edge.source.component_id, edge.target.component_id) in critical
            if mark != edge.critical:
                edge.critical = mark
                edge.update()

    def set_live(self, bolts: dict[str, dict[str, Any]] | None, statuses: dict[str, str] | None) -> None:
        """Live Mode (app/gui/live.py): each bolt's measured figures and its verdict at them; None clears."""
        self.live_verdicts = dict(statuses or {})
        for b in self.document.topology().bolts:
            if b.id in self.nodes:
                figures = None if bolts is None else bolts.get(b.name)
                status = None if statuses is None else statuses.get(b.name)
                self.nodes[b.id].set_live(None if figures is None else {**figures, "verdict": status})
        self.live_changed.emit()

    # ---- queries used by the window -----------------------------------------------
    def selected_ids(self) -> tuple[set[str], set[str]]:
        """(component ids, subscription ids) currently selected."""
        comps = {i.component_id for i in self.selectedItems() if isinstance(i, NodeItem)}
        subs = {i.subscription_id for i in self.selectedItems() if isinstance(i, EdgeItem)}
        return comps, subs

    def select_ids(self, ids: set[str]) -> None:
        self.clearSelection()
        for ident in ids:
            if ident in self.nodes:
                self.nodes[ident].setSelected(True)
            elif ident in self.edges:
                self.edges[ident].setSelected(True)

    def highlight_components(self, names: set[str]) -> None:
        for node in self.nodes.values():
            node.set_highlighted(node.component.name in names)

    # ---- gestures ------------------------------------------------------------------
    def _port_at(self, pos: QPointF) -> PortItem | None:
        for item in self.items(pos, Qt.ItemSelectionMode.IntersectsItemShape, Qt.SortOrder.DescendingOrder,
                               QTransform()):
            if isinstance(item, PortItem):
                return item
        return None

    def _node_at(self, pos: QPointF) -> NodeItem | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item
            if isinstance(item, PortItem):
                return item.node
        return None

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            port = self._port_at(event.scenePos())
            if port is not None and port.is_output:
                self._drag_source = port.node
                self._rubber = RubberLink(port.scene_centre())
                self.addItem(self._rubber)
                event.accept()
                return
        super().mousePressEvent(event)
        self._press_positions = {i.component_id: i.pos() for i in self.selectedItems() if isinstance(i, NodeItem)}

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._rubber is not None and self._drag_source is not None:
            target = self._node_at(event.scenePos())
            reason = None
            if target is not None:
                reason = self.document.connection_problem(self._drag_source.component_id, target.component_id)
            self._rubber.set_end(event.scenePos(), refused=reason is not None)
            self._show_reason(reason, event.scenePos())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._rubber is not None and self._drag_source is not None:
            source = self._drag_source
            self.removeItem(self._rubber)
            self._rubber = None
            self._drag_source = None
            self._show_reason(None, event.scenePos())
            target = self._node_at(event.scenePos())
            if target is not None:
                self.connect_components(source.component_id, target.component_id)
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self._finish_move()

    def _finish_move(self) -> None:
        """Turn a finished drag of nodes into one undo step."""
        moved: dict[str, Position] = {}
        old: dict[str, Position] = {}
        for ident, start in self._press_positions.items():
            item = self.nodes.get(ident)
            if item is not None and item.pos() != start:
                moved[ident] = Position(x=round(item.pos().x(), 1), y=round(item.pos().y(), 1))
                old[ident] = Position(x=start.x(), y=start.y())
        self._press_positions = {}
        if moved:
            self.document.undo_stack.push(MoveComponentsCommand(self.document, moved, old_positions=old))

    def connect_components(self, source: str, target: str) -> bool:
        """Push a subscription, or explain in the status bar why it is refused."""
        try:
            self.document.undo_stack.push(AddSubscriptionCommand(self.document, source, target))
        except ConnectionRefused as err:
            self.last_refusal = f"Cannot connect: {err}"
            self.status_message.emit(self.last_refusal)
            self.connection_refused.emit(str(err))
            return False
        self.last_refusal = ""
        return True

    def _show_reason(self, reason: str | None, pos: QPointF) -> None:
        if reason is None:
            if self._rubber_reason is not None:
                self.removeItem(self._rubber_reason)
                self._rubber_reason = None
            return
        if self._rubber_reason is None:
            self._rubber_reason = QGraphicsTextItem()
            self._rubber_reason.setDefaultTextColor(Qt.GlobalColor.red)
            self._rubber_reason.setZValue(4)
            self._rubber_reason.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
            self.addItem(self._rubber_reason)
        self._rubber_reason.setPlainText(reason)
        self._rubber_reason.setPos(pos + QPointF(12, 8))
        self.status_message.emit(f"Cannot connect: {reason}")
