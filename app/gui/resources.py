"""Icons and the style sheet from `resources/` beside the package (drawn plainly when absent)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
_FALLBACK_COLOURS = {"spout": "#3d7ab8", "bolt": "#f0b429", "suggest": "#3fa34d", "layout": "#5b6470", "app": "#1f2a38"}


@cache
def icon(name: str) -> QIcon:
    """The icon `resources/icons/<name>.svg`, or a plain coloured disc if the file is missing."""
    path = RESOURCES / "icons" / f"{name}.svg"
    if path.exists():
        result = QIcon(str(path))
        if not result.isNull():
            return result
    pixmap = QPixmap(32, 32)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(_FALLBACK_COLOURS.get(name, "#8a8f98")))
    painter.drawEllipse(4, 4, 24, 24)
    painter.end()
    return QIcon(pixmap)


def style_sheet() -> str:
    """The application style sheet (empty when the file is missing)."""
    path = RESOURCES / "style.qss"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""
