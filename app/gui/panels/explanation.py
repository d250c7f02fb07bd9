"""The Inspector's "Why" box: the selected component explained in words, for a user who never hovers.

It shows what the component's tooltip on the canvas says (the rate check in Storm's terms: its
utilisation, why it is bounded or grows, its queue bound; app/gui/canvas/items.py) and, once
verified, each property's verdict on it with its reason (the verifier's own message). `attach`
wires it to the canvas scene and the Verification panel: it follows edits and arriving verdicts.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGroupBox, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.core.formats.verified import bolt_verdict_words
from app.gui.app_words import in_app_words

MIN_WIDTH = 240  # the label's width before it is laid out


class ExplanationBox(QGroupBox):
    """The selected component's explanation (hidden when nothing is selected or there is nothing to say)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Why", parent)
        self.setObjectName("selection_explanation")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)  # the Inspector scrolls instead
        self.text = QLabel("")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long word (a Java class name) wraps at the Inspector's width instead of widening it
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        QVBoxLayout(self).addWidget(self.text)
        self.ident: str | None = None
        self.scene: Any = None  # the canvas scene: `nodes` by id, each with the tooltip the canvas shows
        self.panel: Any = None  # the Verification panel: `states`, each with `bolt_verdict(name)`
        self.setVisible(False)

    def attach(self, scene: Any, panel: Any, document: Any) -> None:
        """Explain from `scene`'s items and `panel`'s verdicts; follow `document`'s edits and new verdicts."""
        self.scene, self.panel = scene, panel
        document.changed.connect(self.refresh)  # after the scene's own refresh of the rates (connected first)
        document.analysis_ready.connect(self.refresh)
        panel.controller.property_changed.connect(self.refresh)

    def show_for(self, ident: str | None) -> None:
        """Explain component `ident` (None, or a link: hide)."""
        self.ident = ident
        self.refresh()

    def explanation(self) -> str:
        """The text shown: the canvas tooltip's words, then each verdict on the component with its reason."""
        node = self.scene.nodes.get(self.ident) if self.scene is not None and self.ident is not None else None
        if node is None:
            return ""
        lines = [node.toolTip()]
        name = node.component.name
        for state in self.panel.states if self.panel is not None else []:
            verdict = state.bolt_verdict(name)
            if verdict is not None:
                stale = "stale: " if state.stale else ""
                lines.append(f"{state.spec.title}: {stale}{bolt_verdict_words(verdict)}"
                             + (f"\n{verdict.message}" if verdict.message else ""))
        return in_app_words("\n\n".join(line for line in lines if line))

    def refresh(self, *_: Any) -> None:
        text = self.explanation()
        self.text.setText(text)
        self.setVisible(bool(text))
        self._fit()

    def _fit(self) -> None:
        # a word-wrapped label's minimum height does not follow its width: without this, a scroll area
        # squeezes the Inspector's fields to make room for it
        self.text.setMinimumHeight(max(0, self.text.heightForWidth(max(self.text.width(), MIN_WIDTH))))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()
