"""The Verification panel's row of controls (app/gui/panels/verification.py): Verify, Cancel, Show trace, the
Checked bolts menu (which bolts the growth property covers, each change one undoable step) and the search
options, which it sets on the panel's `VerificationController`."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QMenu, QPushButton, QToolButton, QVBoxLayout, QWidget

from app.gui.document import DocumentModel
from app.gui.panels.verification_controller import VerificationController


class VerificationBar(QWidget):
    """The buttons (Verify, Cancel, Show trace, Checked bolts) and the search options, in one row; the panel
    connects the three buttons and enables them."""

    def __init__(self, document: DocumentModel, controller: VerificationController, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.controller = controller
        self.verify_button = QPushButton("Verify")
        self.verify_button.setToolTip("Verify every property in a background thread (F5)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running verification")
        self.trace_button = QPushButton("Show trace")
        self.trace_button.setToolTip("Open the selected property's counterexample in the trace view")
        self.bolts_button = QToolButton()
        self.bolts_button.setText("Checked bolts")
        self.bolts_button.setToolTip("Choose the bolts whose unbounded growth is verified (undoable)")
        self.bolts_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.bolts_menu = QMenu(self.bolts_button)
        self.bolts_menu.aboutToShow.connect(self.fill_bolts_menu)
        self.bolts_menu.triggered.connect(self._on_bolt_toggled)
        self.bolts_button.setMenu(self.bolts_menu)
        self.force_box = QCheckBox("search even if proved bounded")
        self.force_box.setToolTip("Without this, a bolt the rate argument proves bounded is reported "
                                  "'bounded (rate proof)' without running the solver")
        self.force_box.toggled.connect(self._on_force_toggled)
        self.region_box = QCheckBox("clocks up to regions")
        self.region_box.setToolTip("Let the loop's clocks repeat up to regions instead of exactly: finds more "
                                   "lassos (section 3 of the semantics) but can be much slower")
        self.region_box.toggled.connect(self._on_region_toggled)
        bar = QHBoxLayout(self)
        bar.setContentsMargins(0, 0, 0, 0)
        for w in (self.verify_button, self.cancel_button, self.trace_button, self.bolts_button):
            bar.addWidget(w)
        options = QVBoxLayout()  # stacked, so the panel stays narrow
        options.setSpacing(0)
        options.addWidget(self.force_box)
        options.addWidget(self.region_box)
        bar.addLayout(options)
        bar.addStretch(1)

    def fill_bolts_menu(self) -> None:
        """The document's bolts, the checked ones ticked (filled each time the menu opens)."""
        self.bolts_menu.clear()
        topo = self.document.topology()
        checked = {b.id for b in topo.checked_bolts()}
        for bolt in topo.bolts:
            action = self.bolts_menu.addAction(bolt.name)
            action.setCheckable(True)
            action.setChecked(bolt.id in checked)
            action.setData(bolt.id)
        if not topo.bolts:
            self.bolts_menu.addAction("(no bolts yet)").setEnabled(False)

    def _on_bolt_toggled(self, action: QAction) -> None:
        bolt_id = action.data()
        if isinstance(bolt_id, str) and bolt_id:
            self.controller.set_checked_bolt(bolt_id, action.isChecked())

    def _on_force_toggled(self, on: bool) -> None:
        self.controller.force_search = on

    def _on_region_toggled(self, on: bool) -> None:
        self.controller.loop_clocks = "region" if on else "equal"
