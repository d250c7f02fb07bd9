"""Graphics items of the canvas: component nodes with ports, and curved subscription links.

Items only draw what the document holds; moving a node changes the item, and the
scene turns the finished drag into one MoveComponentsCommand.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QGraphicsPathItem, QStyleOptionGraphicsItem, QWidget

from app.core.rates import STATUS_SHORT, STATUS_WORDS, BoltRates
from app.core.topology import Bolt, Component, Window
from app.core.units import format_duration
from app.gui.canvas.joins import GATE_WIDTH, JOIN_GATE, join_line, join_tooltip, paint_join

NODE_WIDTH = 156.0
NODE_HEIGHT = 74.0
SMALLEST_DETAILED = 24.0  # a node drawn narrower than this many pixels is drawn as a box in its header's colour
ASYNC_OFFSET = 4.0  # an asynchronous bolt's stacked cards, each this far behind the one before
PORT_RADIUS = 7.0

GREEN = QColor("#3fa34d")
AMBER = QColor("#e0a800")
RED = QColor("#d64541")
SPOUT_COLOUR = QColor("#3d7ab8")
GREY = QColor("#8a8f98")
HIGHLIGHT = QColor("#ffb000")
CRITICAL = QColor("#8e44ad")  # the critical path of a spout's tuple trees (docs/latency.md)
WINDOW_FRAME = QColor("#1f8a8a")  # a windowed bolt's window frames (docs/model.md section 10)
SELECTED = QColor("#2f80ed")


def _window_label(window: Window) -> str:
    """A window's label on the canvas: "tumbling 3", "win 10/30", "win 3/5 s"; a mixed window names both units
    (docs/model.md section 10.4): "win 3 s/30 tuples"."""
    def sized(value: float, kind: str) -> str:
        return f"{value:g} s" if kind == "duration" else f"{value:g} tuples"
    unit = " s" if window.kind == "duration" else ""
    if window.slide is None:
        return f"tumbling {window.length:g}{unit}"
    if window.mixed:
        return f"win {sized(window.slide, window.trigger)}/{sized(window.length, window.kind)}"
    return f"win {window.slide:g}/{window.length:g}{unit}"


def _window_tooltip(c: Bolt) -> str:
    """A windowed bolt's tooltip in Storm's terms (docs/model.md sections 10.2 and 10.3)."""
    window = c.window
    assert window is not None
    if window.mixed and window.trigger == "duration":  # docs/model.md section 10.4
        return (f"Windowed bolt {c.name}: {window.phrase()}, a mixed window: a timer runs execute(TupleWindow) every "
                f"{format_duration(window.interval)} on each of its {c.parallelism} executors, on whatever arrived "
                f"({format_duration(c.alpha)} a window), emits {_number(c.sigma)} per input; Storm acks a tuple at "
                f"the first run once {window.length:g} more tuples reached its executor: no bound holds in every run")
    if window.mixed:
        return (f"Windowed bolt {c.name}: {window.phrase()}, a mixed window: each of its {c.parallelism} executors "
                f"runs execute(TupleWindow) once per {window.interval:g} tuples, {format_duration(c.alpha)} a window "
                f"(the model's C: {c.take_max} tuples a batch), emits {_number(c.sigma)} per input; Storm acks a "
                f"tuple at the first trigger {format_duration(window.length)} or more after it arrived: no bound "
                "holds in every run (a trigger waits for tuples still to come)")
    if window.kind == "count":
        return (f"Windowed bolt {c.name}: {window.phrase()}: each of its {c.parallelism} executors runs "
                f"execute(TupleWindow) once per {window.interval:g} tuples, {format_duration(c.alpha)} a window "
                f"(the model's C: {c.take_max} tuples a batch), emits {_number(c.sigma)} per input; Storm acks a "
                f"tuple when it leaves its last window, up to {window.length + window.interval - 1:g} tuples later")
    return (f"Windowed bolt {c.name}: {window.phrase()}: a timer runs execute(TupleWindow) every "
            f"{format_duration(window.interval)} on each of its {c.parallelism} executors, on whatever arrived "
            f"({format_duration(c.alpha)} a window), emits {_number(c.sigma)} per input; Storm acks a tuple "
            f"when it leaves its last window, {format_duration(window.length)} to "
            f"{format_duration(window.length + window.interval)} later while the evaluations keep their timer")


def utilisation_colour(utilisation: float) -> QColor:
    """Green below 0.8, amber up to 1, red above: the Storm UI's capacity language."""
    if utilisation < 0.8:
        return GREEN
    if utilisation <= 1.0:
        return AMBER
    return RED


#: Live Mode's verdicts (app/measure/storm_watch.py) in the node's words; these four are overload (red)
LIVE_WORDS = {"ok": "keeps up", "noise": "within noise", "may-grow": "may grow", "grows": "grows", "full": "full",
              "stall": "stall"}
OVERLOAD_VERDICTS = ("grows", "full", "stall")


def fitted_font(font: QFont, text: str, width: float, smallest: float = 6.0) -> QFont:
    """`font`, its size lowered until `text` fits in `width` (not below `smallest` points)."""
    fitted = QFont(font)
    size = font.pointSizeF()
    while size > smallest and QFontMetricsF(fitted).horizontalAdvance(text) > width:
        size -= 0.25
        fitted.setPointSizeF(size)
    return fitted


def _number(value: float) -> str:
    return f"{value:g}"


UNANNOTATED_TEXT = QColor("#9a6b00")  # amber, dark enough to read on white
SYMBOLS = {"rate": "rate", "burst": "burst", "alpha": "α", "sigma": "σ"}


def _value(component: Component, field: str, text: str) -> str:
    """A parameter as shown on a node: `?` while an import left it unannotated."""
    return "?" if field in component.unannotated else text


class PortItem(QGraphicsItem):
    """An input (left, bolts only) or output (right) port of a node; links start and end here."""

    def __init__(self, node: NodeItem, is_output: bool):
        super().__init__(node)
        self.node = node
        self.is_output = is_output
        self.hovered_refusal = False
        self.setAcceptHoverEvents(True)
        self.setPos(NODE_WIDTH if is_output else 0.0, NODE_HEIGHT / 2)
        self.setToolTip("drag to a bolt's input port to connect" if is_output else "input: drop a link here")
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setZValue(2)

    def boundingRect(self) -> QRectF:
        r = PORT_RADIUS + 3
        return QRectF(-r, -r, 2 * r, 2 * r)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addEllipse(self.boundingRect())
        return path

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor("#2b2f36"), 1.5))
        painter.setBrush(QColor("#ffffff") if not self.is_output else QColor("#cfd8e3"))
        painter.drawEllipse(QPointF(0, 0), PORT_RADIUS, PORT_RADIUS)

    def scene_centre(self) -> QPointF:
        return self.mapToScene(QPointF(0, 0))


class NodeItem(QGraphicsObject):
    """A spout or bolt: name, key parameters and (bolts) the rate check's utilisation colour."""

    def __init__(self, component: Component):
        super().__init__()
        self.component_id = component.id
        self.component = component
        self.rates: BoltRates | None = None
        self._tooltip_due = True
        # the rate check's proof that this bolt is unbounded (a flood whose source grows by rates), in words
        self.flood: str | None = None
        self.live: dict[str, Any] | None = None  # Live Mode: measured capacity, ρ and α at the last poll
        self.highlighted = False
        # docs/latency.md: a bolt's sojourn bound, a spout's complete-latency bound (words), and whether it is on a
        # spout's critical path (the slowest branch of its tuple trees)
        self.latency: str | None = None
        self.critical = False
        self.edges: list[EdgeItem] = []
        self.bundles: dict[str, list[EdgeItem]] = {}  # the links out of this node, by target id (EdgeItem)
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setZValue(1)
        self.output_port = PortItem(self, is_output=True)
        self.input_port = PortItem(self, is_output=False) if component.kind == "bolt" else None
        self.set_component(component)

    # ---- content -------------------------------------------------------------
    def set_component(self, component: Component) -> None:
        self.component = component
        self._update_tooltip()
        self.update()

    def set_rates(self, rates: BoltRates | None, flood: str | None = None) -> None:
        """The rate check's figures of this bolt, and its words when the check proves it unbounded (`stormbound
        check`'s "Unbounded" line: red, as a bolt that grows)."""
        self.rates, self.flood = rates, flood
        self._update_tooltip()
        self.update()

    def set_latency(self, words: str | None, critical: bool) -> None:
        """The latency bound in words for the tooltip (None: none to tell) and the critical-path mark."""
        if words != self.latency or critical != self.critical:
            self.latency, self.critical = words, critical
            self._update_tooltip()
            self.update()

    def set_live(self, live: dict[str, Any] | None) -> None:
        """Live Mode's figures of this bolt (capacity, rho, alpha_s, growth, status), or None to leave it."""
        self.live = live
        self._update_tooltip()
        self.update()

    def live_lines(self) -> list[str] | None:
        """Live Mode's two lines, the figures labelled as `watch` labels them: `UI capacity 1.00 · grows` (the Storm
        UI's measured capacity, the verdict over the window of polls) and `model ρ 1.25 · α+150%` (the model's ρ at
        the measured figures, the drift of the measured α from the document's)."""
        live = self.live
        if live is None or self.component.kind != "bolt":
            return None
        capacity = "-" if live.get("capacity") is None else f"{live['capacity']:.2f}"
        verdict = LIVE_WORDS.get(str(live.get("verdict") or live.get("status")), str(live.get("status") or "-"))
        second = ["model ρ -" if live.get("rho") is None else f"model ρ {live['rho']:.2f}"]
        alpha = live.get("alpha_s")
        if alpha and self.component.alpha:
            second.append(f"α{(alpha - self.component.alpha) / self.component.alpha:+.0%}")
        return [f"UI capacity {capacity} · {verdict}", " · ".join(second)]

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.update()

    def _update_tooltip(self) -> None:
        """The tooltip is made again when it is next read (`toolTip`, or shown: CanvasView): a poll of Live Mode
        changes 3,000 bolts' figures, most of whose tooltips are never shown."""
        self._tooltip_due = True

    def toolTip(self) -> str:  # noqa: N802 - Qt's name
        if self._tooltip_due:
            self._tooltip_due = False
            self._make_tooltip()
        return super().toolTip()

    def _make_tooltip(self) -> None:
        c = self.component
        if c.kind == "spout":
            text = f"Spout {c.name}: emits {_number(c.rate)} tuples/s on average, bursts of up to {c.burst}"
        elif c.waits_for_all:  # docs/model.md section 11
            text = join_tooltip(c)
        elif c.window is not None:  # docs/model.md section 10
            text = _window_tooltip(c)
        elif c.threads is not None:  # docs/model.md section 8
            text = (f"Asynchronous bolt {c.name}: {c.parallelism} executors × {c.threads} threads (the model's C: up "
                    f"to {c.take_max} tuples in work at once); execute only enqueues, a thread works "
                    f"{format_duration(c.alpha)} on one tuple (the process latency), "
                    f"emits {_number(c.sigma)} per input")
        else:
            text = (f"Bolt {c.name}: {c.parallelism} executors (the model's C: up to {c.parallelism} tuples "
                    f"in process at once), works {format_duration(c.alpha)}, "
                    f"emits {_number(c.sigma)} per input")
        if c.kind == "bolt" and c.threads is None and self.rates is not None:  # (a join's: its cache too)
            bound = self.rates.queue_bound
            shown = "its cache grows" if self.rates.join_cache_growth else STATUS_WORDS.get(  # (a join's: model.md 11)
                self.rates.status, self.rates.status)
            text += (f"\nUtilisation ρ = {self.rates.utilisation:.2f} ({shown}"
                     + (f": queue below {bound:.4g} tuples in every run" if bound is not None else "") + ")"
                     f"\n{self.rates.explanation}")
        if self.flood is not None:
            text += f"\nProven by the rate check, no search: {self.flood}"
        if self.latency:
            text += f"\n{self.latency}"
        if self.live is not None and c.kind == "bolt":
            live = self.live
            alpha = live.get("alpha_s")
            capacity = "-" if live.get("capacity") is None else f"{live['capacity']:.3f}"
            verdict = LIVE_WORDS.get(str(live.get("verdict")), str(live.get("verdict")))
            text += (f"\nLive (Storm UI): {verdict}" + (f": {live['why']}" if live.get("why") else "")
                     + f"\nUI capacity {capacity}"
                     + ("" if live.get("rho") is None else
                        f", model ρ at the measured figures {live['rho']:.3f} ({live.get('status')})")
                     + ("" if not alpha else f", measured α {format_duration(alpha)} (document "
                                             f"{format_duration(c.alpha)})")
                     + ("" if live.get("growth") is None else f", queue {live['growth']:+.4g} tuples/s"))
        if c.unannotated:
            text = (f"{c.kind.capitalize()} {c.name}: not annotated: {', '.join(SYMBOLS[f] for f in c.unannotated)} "
                    "(the import had no value; take it from the Storm UI, a run's calibration, or type it)\n" + text)
        if c.kind == "bolt" and c.not_modelled is not None:
            text += (f"\nIt is {c.not_modelled}: the model has no windows or joins yet, so its verdicts read it as an "
                     "ordinary bolt (docs/model.md section 10)")
        if c.class_name:
            text += f"\n{c.class_name}"
        self.setToolTip(text)

    def unannotated_fields(self) -> list[str]:
        """Parameters an import left as placeholders (drawn amber, shown as `?`)."""
        return list(self.component.unannotated)

    def parameter_colour(self) -> QColor:
        return UNANNOTATED_TEXT if self.component.unannotated else QColor("#22262c")

    def parameter_lines(self) -> list[str]:
        """The key parameters shown on the node."""
        c = self.component
        if c.kind == "spout":
            return [f"rate {_value(c, 'rate', _number(c.rate) + '/s')} · burst {_value(c, 'burst', str(c.burst))}"]
        alpha = format_duration(c.alpha).replace(" ", "")  # milliseconds below a second, as the inspector shows it
        lines = [f"α {_value(c, 'alpha', alpha)} · σ {_value(c, 'sigma', _number(c.sigma))} "
                 f"· {c.parallelism} exec" + (f"/{c.tasks} tasks" if c.tasks and c.tasks != c.parallelism else "")
                 + (f" × {c.threads} thr" if c.threads is not None else "")]
        live = self.live_lines()
        if live is not None:  # Live Mode: the measured capacity and verdict, the model's ρ at the measured figures
            return live
        if self.rates is not None:
            bound, r = self.rates.queue_bound, self.rates
            status = "unbounded" if self.flood is not None else STATUS_SHORT.get(self.rates.status, self.rates.status)
            lines.append(join_line(r) if r.join_slowest is not None else  # a join: its cache (docs/model.md 11)
                         f"ρ {r.utilisation:.2f} · {status}" + (f" < {bound:.4g}" if bound is not None else ""))
        return lines

    def header_colour(self) -> QColor:
        if self.component.kind == "spout":
            return SPOUT_COLOUR
        if self.live is not None:  # Live Mode: red when the measured work exceeds capacity, else the UI's capacity
            if self.live.get("verdict") in OVERLOAD_VERDICTS:
                return RED
            if self.live.get("capacity") is not None:
                return utilisation_colour(min(float(self.live["capacity"]), 1.0))
        if self.rates is None:
            return GREY
        if self.flood is not None or self.rates.join_cache_growth:  # proven unbounded, or a join's cache grows
            return RED  # (docs/model.md section 11): red, as a bolt that grows (its ρ may be low)
        return utilisation_colour(self.rates.utilisation)

    # ---- drawing -------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        # (room for an asynchronous bolt's cards, a window's frames and its slide/length below them)
        # (and a join's gate on its left)
        return QRectF(-GATE_WIDTH - 2, -4, NODE_WIDTH + GATE_WIDTH + 6 + ASYNC_OFFSET * 2,
                      NODE_HEIGHT + 16 + ASYNC_OFFSET * 2)

    def _paint_threads(self, painter: QPainter, rect: QRectF) -> None:
        """An asynchronous bolt (docs/model.md section 8) is drawn as a stack of cards, its threads behind it."""
        painter.setPen(QPen(QColor("#454b55"), 1.2))
        painter.setBrush(QColor("#e8ecf1"))
        for step in (2, 1):
            painter.drawRoundedRect(rect.translated(ASYNC_OFFSET * step, ASYNC_OFFSET * step), 8, 8)

    def kind_label(self) -> str:
        """The header's word for what the component is: a spout, a bolt, an asynchronous bolt, a window's
        slide/length (tuples, or seconds for a duration window: docs/model.md section 10), or a construct the model
        does not have, marked ⚠."""
        c = self.component
        if c.kind == "spout":
            return "⟶ spout"
        if c.threads is not None:
            return "async bolt"
        if c.not_modelled is not None:
            return "join ⚠" if c.not_modelled.startswith("a join") else "window ⚠"
        if c.waits_for_all:
            return "join ∧ all"
        window = c.window
        if window is None:
            return "bolt"
        label = _window_label(window)
        return f"join {label}" if c.join is not None else label

    def _paint_window(self, painter: QPainter, rect: QRectF) -> None:
        """A windowed bolt (docs/model.md section 10) is framed by its window, dashed; a sliding one by two
        overlapping frames, the second one slide further on."""
        window = self.component.window if self.component.kind == "bolt" else None
        if window is None:
            return
        painter.setPen(QPen(WINDOW_FRAME, 1.6, Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect.adjusted(-3, -3, 3, 3), 10, 10)
        if window.slide is not None and (window.mixed or window.slide < window.length):
            painter.drawRoundedRect(rect.adjusted(-3 + ASYNC_OFFSET * 2, 3, 3 + ASYNC_OFFSET * 2, 3 + ASYNC_OFFSET),
                                    10, 10)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        rect = QRectF(0, 0, NODE_WIDTH, NODE_HEIGHT)
        header = self.header_colour()
        if option.levelOfDetailFromTransform(painter.worldTransform()) * NODE_WIDTH < SMALLEST_DETAILED:
            # too small to read (a fitted view of thousands): the box in its header's colour, without words
            painter.setPen(QPen(SELECTED, 0) if self.isSelected() else Qt.PenStyle.NoPen)
            painter.fillRect(rect, header)
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.highlighted:
            painter.setPen(QPen(HIGHLIGHT, 5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(-2, -2, 2, 2), 9, 9)
        if self.critical:  # on a spout's critical path (docs/latency.md)
            painter.setPen(QPen(CRITICAL, 3, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(-5, -5, 5, 5), 11, 11)
        if self.component.kind == "bolt" and self.component.threads is not None:
            self._paint_threads(painter, rect)
        if self.component.kind == "bolt":
            self._paint_window(painter, rect)
        border = QPen(SELECTED, 2.5) if self.isSelected() else QPen(QColor("#454b55"), 1.2)
        if self.component.unannotated and not self.isSelected():
            border = QPen(AMBER, 2.0, Qt.PenStyle.DashLine)
        painter.setPen(border)
        painter.setBrush(QColor("#fbfcfd"))
        painter.drawRoundedRect(rect, 8, 8)
        # coloured header band with the name
        outline = QPainterPath()
        outline.addRoundedRect(rect, 8, 8)
        painter.save()
        painter.setClipPath(outline)
        painter.fillRect(QRectF(0, 0, NODE_WIDTH, 26), QBrush(header))
        painter.restore()
        painter.setPen(border)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect, 8, 8)
        if self.component.kind == "bolt" and self.component.join is not None:
            paint_join(painter, rect)
        title = QFont()
        title.setBold(True)
        title.setPointSizeF(10.0)
        painter.setFont(title)
        painter.setPen(QColor("#ffffff"))
        kind = self.kind_label()
        small = QFont()
        small.setPointSizeF(8.0)
        room = NODE_WIDTH - 20
        name_width = QFontMetricsF(title).horizontalAdvance(self.component.name)
        kind_width = QFontMetricsF(small).horizontalAdvance(kind) + 8
        show_kind = name_width + kind_width <= room
        name = QFontMetricsF(title).elidedText(self.component.name, Qt.TextElideMode.ElideRight, room)
        painter.drawText(QRectF(10, 3, room, 20), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, name)
        if show_kind:
            painter.setFont(small)
            painter.drawText(QRectF(10, 3, room, 20), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, kind)
        elif self.component.kind == "bolt" and (self.component.window is not None
                                                or self.component.join is not None):  # on its frame, below
            painter.setFont(small)
            painter.setPen(JOIN_GATE if self.component.join is not None else WINDOW_FRAME)
            painter.drawText(QRectF(10, NODE_HEIGHT + ASYNC_OFFSET + 3, room, 12),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, kind)
        body = QFont()
        body.setPointSizeF(8.5)
        painter.setFont(body)
        painter.setPen(self.parameter_colour())
        for i, line in enumerate(self.parameter_lines()):
            painter.setFont(fitted_font(body, line, NODE_WIDTH - 24))  # never cut: smaller type when it must
            painter.drawText(QRectF(12, 30 + i * 18, NODE_WIDTH - 24, 18),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, line)

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: Any) -> Any:
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            bundles = {id(edge.bundle): edge.bundle for edge in self.edges}
            for bundle in bundles.values():  # one curve per pair of nodes, shared by its links
                bundle[0].update_path()
        return super().itemChange(change, value)


def link_path(start: QPointF, end: QPointF) -> QPainterPath:
    """A horizontal-tangent cubic curve from an output port to an input port."""
    path = QPainterPath(start)
    dx = max(60.0, abs(end.x() - start.x()) * 0.5)
    path.cubicTo(QPointF(start.x() + dx, start.y()), QPointF(end.x() - dx, end.y()), end)
    return path


class EdgeItem(QGraphicsPathItem):
    """A subscription drawn as a curved link with an arrow head; selectable for deletion.

    Links between the same two nodes (a bolt subscribing to several streams of one component: 20,000 in a
    hostile file) lie on one curve, their `bundle`: the curve, its outline and its bounds are computed once
    per bundle, and only its first link draws it (labelled ×N with the number of links it carries); another link
    draws itself only when selected. So a document of 20,000 streams draws and moves as one link.
    """

    def __init__(self, subscription_id: str, source: NodeItem, target: NodeItem, label: str = ""):
        super().__init__()
        self.subscription_id = subscription_id
        self.source = source
        self.target = target
        self.label = label
        self.critical = False  # on a spout's critical path (docs/latency.md)
        self._shape = QPainterPath()
        self._bounds = QRectF()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(0)
        source.edges.append(self)
        target.edges.append(self)
        self.bundle = source.bundles.setdefault(target.component_id, [])
        self.bundle.append(self)
        if len(self.bundle) == 1:
            self.update_path()
        else:
            lead = self.bundle[0]
            self._set_path(lead.path(), lead._shape, lead._bounds)
            lead.update()  # its label counts the links

    def detach(self) -> None:
        for node in (self.source, self.target):
            if self in node.edges:
                node.edges.remove(self)
        if self in self.bundle:
            self.bundle.remove(self)
            if not self.bundle:
                self.source.bundles.pop(self.target.component_id, None)
            else:
                self.bundle[0].update()

    def shown_label(self) -> str:
        """The label drawn on the curve: the link's own, or on a shared curve how many links share it (drawn by
        the first; another, drawn when selected, adds none over it)."""
        if len(self.bundle) > 1:
            return f"×{len(self.bundle):,}" if self.bundle[0] is self else ""  # short: a curve may be short
        return self.label

    def update_path(self) -> None:
        """Compute the curve between the ports again (a node moved) and give it to every link of the bundle."""
        start = self.source.output_port.scene_centre()
        assert self.target.input_port is not None
        end = self.target.input_port.scene_centre()
        if self.source is self.target:  # a bolt subscribing to itself: loop over the top
            path = QPainterPath(start)
            top = self.source.sceneBoundingRect().top() - 40
            path.cubicTo(QPointF(start.x() + 70, top), QPointF(end.x() - 70, top), end)
        else:
            path = link_path(start, end)
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        shape = stroker.createStroke(path)
        bounds = shape.boundingRect().adjusted(-10, -10, 10, 10)
        for edge in self.bundle or [self]:
            edge._set_path(path, shape, bounds)

    def _set_path(self, path: QPainterPath, shape: QPainterPath, bounds: QRectF) -> None:
        self.prepareGeometryChange()
        self._shape, self._bounds = shape, bounds
        self.setPath(path)

    def shape(self) -> QPainterPath:
        return self._shape

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self.bundle and self.bundle[0] is not self and not self.isSelected():
            return  # the bundle's first link draws the curve
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = SELECTED if self.isSelected() else CRITICAL if self.critical else QColor("#5b6470")
        painter.setPen(QPen(colour, 2.4 if self.isSelected() or self.critical else 1.8))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        path = self.path()
        painter.drawPath(path)
        if option.levelOfDetailFromTransform(painter.worldTransform()) * NODE_WIDTH < SMALLEST_DETAILED:
            return  # as its nodes: too small to read, the curve without its arrowhead and label
        end = path.pointAtPercent(1.0)
        before = path.pointAtPercent(0.96)
        direction = end - before
        length = max(1e-6, (direction.x() ** 2 + direction.y() ** 2) ** 0.5)
        ux, uy = direction.x() / length, direction.y() / length
        tip = QPointF(end.x() - ux * PORT_RADIUS, end.y() - uy * PORT_RADIUS)
        left = QPointF(tip.x() - ux * 10 - uy * 5, tip.y() - uy * 10 + ux * 5)
        right = QPointF(tip.x() - ux * 10 + uy * 5, tip.y() - uy * 10 - ux * 5)
        painter.setBrush(colour)
        painter.drawPolygon(QPolygonF([tip, left, right]))
        label = self.shown_label()
        if label:
            mid = path.pointAtPercent(0.5)
            font = QFont()
            font.setPointSizeF(7.5)
            painter.setFont(font)
            painter.setPen(QColor("#5b6470"))
            painter.drawText(QRectF(mid.x() - 50, mid.y() - 16, 100, 14), Qt.AlignmentFlag.AlignCenter, label)


class RubberLink(QGraphicsPathItem):
    """The link being dragged from an output port; red with a reason when it would be refused."""

    def __init__(self, start: QPointF):
        super().__init__()
        self.start = start
        self.refused = False
        self.setZValue(3)
        self.set_end(start, refused=False)

    def set_end(self, end: QPointF, refused: bool) -> None:
        self.refused = refused
        pen = QPen(RED if refused else SELECTED, 2.2, Qt.PenStyle.DashLine)
        self.setPen(pen)
        self.setPath(link_path(self.start, end))
