"""The topology canvas: a scene whose items follow the DocumentModel, and its view."""

from app.gui.canvas.scene import CanvasScene
from app.gui.canvas.view import CanvasView

__all__ = ["CanvasScene", "CanvasView"]
