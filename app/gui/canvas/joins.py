"""How a join (docs/model.md section 11) looks on the canvas: an AND gate on its input side, a band along it, its
cache on its parameter line and its tooltip in Metron's terms. The node item (items.py) calls these."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen

from app.core.rates import STATUS_SHORT, BoltRates
from app.core.topology import Bolt
from app.core.units import format_duration

JOIN_GATE = QColor("#7b4fa6")  # a join's AND gate on its input side
GATE_WIDTH = 26.0  # how far the gate reaches left of the node


def paint_join(painter: QPainter, rect: QRectF) -> None:
    """The AND gate on a join's input side (its branches meet there, and a message goes through once all came), and a
    band of the gate's colour along that side, inside its body (drawn after the body)."""
    mid, half = rect.center().y(), 15.0
    back, start = rect.left() - GATE_WIDTH, rect.left() - half - 1  # the arc ends at the node's edge
    gate = QPainterPath()
    gate.moveTo(start, mid - half)
    gate.lineTo(back, mid - half)
    gate.lineTo(back, mid + half)
    gate.lineTo(start, mid + half)
    gate.arcTo(QRectF(start - half, mid - half, 2 * half, 2 * half), -90, 180)
    gate.closeSubpath()
    painter.setPen(QPen(JOIN_GATE, 1.6))
    painter.setBrush(QColor("#efe6f7"))
    painter.drawPath(gate)
    painter.fillRect(QRectF(rect.left() + 1.5, 26, 4, rect.height() - 32), JOIN_GATE)


def join_line(rates: BoltRates) -> str:
    """A join's second line: its ρ and its cache (growing, or its bound in every run)."""
    cache = rates.join_cache_bound
    return f"ρ {rates.utilisation:.2f} · " + ("cache grows" if rates.join_cache_growth else
                                            f"cache < {cache:.4g}" if cache is not None else
                                            STATUS_SHORT.get(rates.status, ""))


def join_tooltip(bolt: Bolt) -> str:
    """A join's tooltip in Metron's terms."""
    cache = bolt.join.max_cache if bolt.join is not None else None
    sigma = f"{float(bolt.sigma):g}"
    return (f"Join {bolt.name}: waits for a part from every input stream (a branch) of each message, holding the "
            f"parts that came in its cache" + (f" (maxCacheSize {cache})" if cache is not None else "")
            + f"; a complete message is queued, and its {bolt.parallelism} executors work "
            f"{format_duration(bolt.alpha)} on one, emitting {sigma} per message: its output follows its slowest "
            "branch")
