"""The verification panel: a property list with coloured verdicts, a background search, progress.

UPPAAL-style: each property (unbounded growth of the checked bolts; some queue reaches
N) has a marker, and the growth property has one row per checked bolt beneath it with
that bolt's own verdict (double-click opens its own lasso). Markers: grey = not run or stale
(any semantic edit of the document makes results stale), red = counterexample, green = no
counterexample up to k or bounded by the rate proof, amber = unknown (cancelled, timed out,
failed). This module is the view: the widgets, the details of the selected row and the
trace view. What runs lives in `VerificationController`
(app/gui/panels/verification_controller.py: the property states, one `VerifyWorker` per
property in turn, staleness), the list is a `PropertyTableModel`
(app/gui/panels/property_table.py). Cancel interrupts the solver from the GUI thread. A
counterexample opens in the trace view (its dock raised, when the panel has one).
`create_actions` makes the panel's actions; the main window docks the panel and the trace
view and places the actions in its Verify and File menus (app/gui/mainwindow.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.formats.trace import expanded_trace
from app.core.formats.verified import result_headline
from app.core.results import BoltVerdict, VerifyResult
from app.gui.dialogs import Dialogs
from app.gui.document import DocumentModel
from app.gui.panels.property_table import COLUMNS, MARKER_COLOURS, PropertyTableModel, PropertyTableView, marker_icon
from app.gui.panels.trace_view import TraceView
from app.gui.panels.verification_bar import VerificationBar
from app.gui.panels.verification_controller import (
    VERDICT_MARKER,
    PropertySpec,
    PropertyState,
    VerificationController,
    format_stats,
    property_specs,
)
from app.gui.panels.verification_text import (
    SearchProgress,
    SummaryLines,
    details_html,
    headline_html,
    shown_in_headline,
)
from app.gui.panels.verified_export import export_verified, export_verified_dialog
from app.gui.workers import SearchFactory, VerifyWorker

__all__ = [
    "COLUMNS", "MARKER_COLOURS", "VERDICT_MARKER", "PropertySpec", "PropertyState", "VerificationPanel",
    "create_actions", "format_stats", "marker_icon", "property_specs",
]

class VerificationPanel(QWidget):
    """The property list, Verify/Cancel, progress and the verdicts in words; owns the trace view."""

    all_finished = Signal()
    result_arrived = Signal(int, object)  # property row, VerifyResult
    trace_available = Signal()

    def __init__(self, document: DocumentModel, *, search_factory: SearchFactory | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.controller = VerificationController(document, search_factory=search_factory, parent=self)
        self.model = PropertyTableModel(self.controller)
        self.trace_view = TraceView()
        self.canvas: Any = None  # the main window's canvas, when docked in one: has highlight_components(names)
        self.dialogs: Any = None  # the main window's Dialogs, when docked in one
        self.trace_dock: QWidget | None = None  # the dock holding the trace view, raised when a lasso arrives
        self.trace_row = -1
        self.action_verify: QAction
        self.action_cancel: QAction
        self.action_trace: QAction
        self.action_force: QAction
        self.action_export_verified: QAction
        bar = self._build_bar()
        self._build_table()
        self._build_status()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        # the answer at a glance, over the list: what grows first ("status grows; 9 bounded")
        self.headline_label = QLabel("")
        self.headline_label.setObjectName("verification_headline")
        self.headline_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(bar)
        layout.addWidget(self.headline_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.summary_lines)
        layout.addWidget(self.progress)

        self._connect_controller()
        self._selected_property = 0
        self._restore_selection()
        self._update_buttons()

    def _build_bar(self) -> VerificationBar:
        """The row of buttons and search options (`VerificationBar`), its three buttons connected."""
        bar = self.bar = VerificationBar(self.document, self.controller)
        bar.verify_button.clicked.connect(self.start)
        bar.cancel_button.clicked.connect(self.cancel)
        bar.trace_button.clicked.connect(self.show_selected_trace)
        return bar

    def _build_table(self) -> None:
        """The property list: one row per property (and per checked bolt), selected one at a time."""
        self.table = PropertyTableView(self.model)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)

    def _build_status(self) -> None:
        """Below the list: the capacity and timeouts lines, the progress in words and as a bar, the selected
        row's details."""
        self.summary_lines = SummaryLines()
        self.progress = SearchProgress(self.controller)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(False)

    def _connect_controller(self) -> None:
        """The controller's and the document's signals to the panel (in this order: a result reaches the
        panel before the panel's own `result_arrived`)."""
        controller, document = self.controller, self.document
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        controller.property_changed.connect(self._on_property_changed)
        controller.run_started.connect(self._on_run_started)
        controller.result_arrived.connect(self._on_result)
        controller.result_arrived.connect(self.result_arrived)
        controller.all_finished.connect(self._on_all_finished)
        controller.all_finished.connect(self.all_finished)
        self.trace_available.connect(self.raise_trace)
        controller.results_stale.connect(self._on_results_stale)
        document.document_replaced.connect(self._on_document_replaced)
        self.trace_view.acting_changed.connect(self.highlight_on_canvas)

    # ---- the controller's state, as the panel's ---------------------------------------------
    @property
    def states(self) -> list[PropertyState]:
        return self.controller.states

    @property
    def worker(self) -> VerifyWorker | None:
        return self.controller.worker

    @property
    def search_factory(self) -> SearchFactory | None:
        return self.controller.search_factory

    @search_factory.setter
    def search_factory(self, factory: SearchFactory | None) -> None:
        self.controller.search_factory = factory

    @property
    def last_cancel_latency_s(self) -> float | None:
        return self.controller.last_cancel_latency_s

    # ---- queries (also used by tests) ----------------------------------------------------
    def is_running(self) -> bool:
        return self.controller.is_running()

    def marker_colour(self, row: int) -> str:
        return self.states[row].colour

    def verdict_text(self, row: int) -> str:
        return self.states[row].verdict_text

    def results(self) -> list[VerifyResult]:
        return self.controller.results()

    def bolt_verdict(self, row: int, name: str) -> BoltVerdict | None:
        """The BoltVerdict of checked bolt `name` in property `row` (None before a result)."""
        return self.states[row].bolt_verdict(name)

    def bolt_row_text(self, row: int, name: str) -> str:
        """What the bolt's row under property `row` says (also used by tests)."""
        return self.model.text(row, 2, name)

    def selected(self) -> tuple[int, str | None]:
        """(property row, bolt name or None) of the selected row; (-1, None) when nothing is selected."""
        return self.table.selected()

    def select(self, row: int, bolt: str | None = None) -> None:
        """Select property `row` (or its checked bolt `bolt`) in the list."""
        self.table.select(row, bolt)

    # ---- the property list -----------------------------------------------------------------
    def _remember_selection(self) -> None:
        row, _bolt = self.selected()
        self._selected_property = row

    def _restore_selection(self) -> None:
        if self.states:
            self.select(min(max(self._selected_property, 0), len(self.states) - 1))
        self._show_details()
        self._show_headline()
        self._update_buttons()

    def _on_property_changed(self, row: int) -> None:
        if self.selected()[0] == row:
            self._show_details()
        self._show_headline()
        self._update_buttons()

    def _show_headline(self) -> None:
        """Each property's verdict at a glance, in its marker's colour, one line each (hidden before any)."""
        self.headline_label.setText(headline_html(self.states))
        self.headline_label.setVisible(bool(shown_in_headline(self.states)))

    def headline(self) -> str:
        """The headline's text (also used by tests): each shown property's verdict at a glance, a line each."""
        return "\n".join(s.verdict_text for s in shown_in_headline(self.states))

    def _show_details(self) -> None:
        row, bolt = self.selected()
        if 0 <= row < len(self.states):
            self.details.setHtml(details_html(self.states[row], bolt))
        else:
            self.details.clear()

    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_details()
        self._update_buttons()

    def _on_double_clicked(self, index: QModelIndex) -> None:
        row, bolt = self.model.entry(index.row())
        self.show_trace(row, bolt)

    def set_checked_bolt(self, bolt_id: str, on: bool) -> None:
        """Add or remove a bolt from the growth property, as one undoable step (the last one stays)."""
        self.controller.set_checked_bolt(bolt_id, on)

    # ---- running ---------------------------------------------------------------------------
    def start(self) -> None:
        """Verify every property, one after the other, in a background thread."""
        if self.is_running():
            return
        self.trace_row = -1
        self.controller.start()

    def cancel(self) -> None:
        """Stop the running search (its property turns amber/unknown) and skip the rest."""
        self.controller.cancel()

    def shutdown(self) -> None:
        """Cancel and join the worker (window closing); waits at most a few seconds."""
        self.controller.shutdown()

    def _on_run_started(self, _row: int) -> None:
        self._update_buttons()

    def _on_result(self, row: int, result: VerifyResult) -> None:
        if row < 0:
            return
        self.summary_lines.show_capacity(self.states[row].capacity)
        self.summary_lines.show_timeouts(self.states[row].timeouts)
        shown = self.trace_row < 0 or self.trace_row == row or self.trace_view.trace is None
        if result.verdict == "counterexample" and result.trace is not None and not self.states[row].stale and shown:
            self.show_trace(row)

    def raise_trace(self) -> None:
        """Show the trace view's dock (a counterexample arrived)."""
        if self.trace_dock is not None:
            self.trace_dock.show()
            self.trace_dock.raise_()

    def _on_all_finished(self) -> None:
        self._update_buttons()

    # ---- staleness -------------------------------------------------------------------------
    def _on_results_stale(self) -> None:
        self.summary_lines.mark_stale()
        if self.trace_view.trace is not None and "Stale" not in self.trace_view.title.text():
            self.trace_view.title.setText("Stale (the model changed since): " + self.trace_view.title.text())
        self._update_buttons()

    def _on_document_replaced(self) -> None:
        self.trace_row = -1
        self.summary_lines.clear()
        self.trace_view.clear()

    # ---- the trace -------------------------------------------------------------------------
    def show_trace(self, row: int, bolt: str | None = None) -> bool:
        """Open property `row`'s counterexample (checked bolt `bolt`'s own lasso when given) in the
        trace view; False when there is none."""
        if not 0 <= row < len(self.states):
            return False
        result = self.states[row].result
        if result is None or (result.trace is None and not result.worker_death_traces):
            return False
        state = self.states[row]
        # what grows first, the property second ("status grows; 9 bounded — unbounded growth of …: counterexample")
        trace, caption = result.trace, f"{result_headline(result)} — {state.spec.title.lower()}: {state.verdict_words}"
        if trace is None:  # only a lasso with worker deaths (docs/model.md 9.5): the note says what it shows
            name = next(iter(result.worker_death_lassos))
            trace = result.worker_death_traces[result.worker_death_lassos[name]]
            caption = f"{name} grows with worker deaths (a certified lasso) — {result_headline(result)}"
        verdict = result.bolts.get(bolt) if bolt is not None else None
        if bolt in result.worker_death_lassos and (verdict is None or verdict.trace_index is None):
            trace = result.worker_death_traces[result.worker_death_lassos[bolt]]
            caption = f"{bolt} grows with worker deaths (a certified lasso) — {result_headline(result)}"
        elif bolt is not None:
            if verdict is None or verdict.trace_index is None or verdict.trace_index >= len(result.traces):
                return False
            trace = result.traces[verdict.trace_index]
            caption = (f"{bolt} grows (lasso {verdict.trace_index + 1} of {len(result.traces)}) — "
                       f"{result_headline(result)}")
        self.trace_row = row
        if self.states[row].stale:
            caption = "Stale (the model changed since): " + caption
        self.trace_view.set_trace(None if trace is None else expanded_trace(trace), caption)
        self.trace_available.emit()
        self._update_buttons()
        return True

    def show_selected_trace(self) -> None:
        row, bolt = self.selected()
        if row >= 0:
            self.show_trace(row, bolt)

    def highlight_on_canvas(self, names: set[str]) -> None:
        """Highlight the components acting at the trace cursor (when a canvas is attached)."""
        if self.canvas is not None and hasattr(self.canvas, "highlight_components"):
            self.canvas.highlight_components(set(names))

    def _update_buttons(self) -> None:
        running = self.is_running()
        self.bar.verify_button.setEnabled(not running)
        self.bar.cancel_button.setEnabled(running)
        row, bolt = self.selected()
        result = self.states[row].result if 0 <= row < len(self.states) else None
        has_trace = result is not None and (result.trace is not None or bool(result.worker_death_traces))
        if has_trace and bolt is not None and result is not None:
            verdict = result.bolts.get(bolt)
            has_trace = verdict is not None and verdict.trace_index is not None or bolt in result.worker_death_lassos
        self.bar.trace_button.setEnabled(bool(has_trace))

    # ---- verified configuration ------------------------------------------------------------
    def verified_problem(self) -> str | None:
        """Why the current results cannot be exported as a verified configuration (None when they can)."""
        return self.controller.verified_problem()

    def export_verified(self, path: str | Path) -> None:
        """Write the verified configuration (topology, settings, verdicts, bound, hash) through `save_bytes`."""
        export_verified(self.controller, path)

    def export_verified_dialog(self) -> None:
        """File > Export verified configuration…: ask for a file name, write, report in words."""
        export_verified_dialog(self, self.controller, self.document.path, self.dialogs or Dialogs())


def create_actions(panel: VerificationPanel, parent: QObject) -> None:
    """The panel's actions (Verify all, Cancel, Show trace, Search even when bounded, Export verified
    configuration), owned by `parent`; the main window puts them in its menus and toolbar."""
    panel.action_verify = QAction("&Verify all properties", parent)
    panel.action_verify.setObjectName("action_verify_all")
    panel.action_verify.setShortcut(QKeySequence("F5"))
    panel.action_verify.setIconText("Verify")
    panel.action_verify.setToolTip("Verify every property in the background (F5)")
    panel.action_verify.triggered.connect(panel.start)
    panel.action_cancel = QAction("&Cancel verification", parent)
    panel.action_cancel.setObjectName("action_cancel_verification")
    panel.action_cancel.setShortcut(QKeySequence("Shift+F5"))
    panel.action_cancel.triggered.connect(panel.cancel)
    panel.action_trace = QAction("Show &trace of selected property", parent)
    panel.action_trace.setObjectName("action_show_trace")
    panel.action_trace.triggered.connect(panel.show_selected_trace)
    panel.action_force = QAction("&Search even when the rate check proves bounded", parent)
    panel.action_force.setObjectName("action_force_search")
    panel.action_force.setCheckable(True)
    panel.action_force.toggled.connect(panel.bar.force_box.setChecked)
    panel.bar.force_box.toggled.connect(panel.action_force.setChecked)
    panel.action_export_verified = QAction("Export &verified configuration…", parent)
    panel.action_export_verified.setObjectName("action_export_verified")
    panel.action_export_verified.setStatusTip(
        "Save the topology with its verdicts, the solver bound and a content hash")
    panel.action_export_verified.triggered.connect(panel.export_verified_dialog)

