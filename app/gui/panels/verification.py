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

from PySide6.QtCore import QItemSelection, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.formats.verified import bolt_verdict_words, result_headline
from app.core.results import BoltVerdict, VerifyResult
from app.core.storm.lines import capacity_suffix
from app.gui.app_words import in_app_words
from app.gui.document import DocumentModel
from app.gui.panels.property_table import (
    COLUMNS,
    MARKER_COLOURS,
    VERDICT_TEXT_COLOURS,
    PropertyTableModel,
    marker_icon,
)
from app.gui.panels.trace_view import TraceView, save_bytes
from app.gui.panels.verification_controller import (
    VERDICT_MARKER,
    PropertySpec,
    PropertyState,
    VerificationController,
    format_stats,
    property_specs,
)
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
        layout.addLayout(bar)
        layout.addWidget(self.headline_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.capacity_label)
        layout.addWidget(self.timeouts_label)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress_bar)

        self.elapsed_timer = QTimer(self)
        self.elapsed_timer.setInterval(100)
        self.elapsed_timer.timeout.connect(self._show_progress)
        self._connect_controller()
        self._selected_property = 0
        self._restore_selection()
        self._update_buttons()

    def _build_bar(self) -> QHBoxLayout:
        """The buttons (Verify, Cancel, Show trace, Checked bolts) and the search options, in one row."""
        self.verify_button = QPushButton("Verify")
        self.verify_button.setToolTip("Verify every property in a background thread (F5)")
        self.verify_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running verification")
        self.cancel_button.clicked.connect(self.cancel)
        self.trace_button = QPushButton("Show trace")
        self.trace_button.setToolTip("Open the selected property's counterexample in the trace view")
        self.trace_button.clicked.connect(self.show_selected_trace)
        self.bolts_button = QToolButton()
        self.bolts_button.setText("Checked bolts")
        self.bolts_button.setToolTip("Choose the bolts whose unbounded growth is verified (undoable)")
        self.bolts_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.bolts_menu = QMenu(self.bolts_button)
        self.bolts_menu.aboutToShow.connect(self._fill_bolts_menu)
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
        bar = QHBoxLayout()
        for w in (self.verify_button, self.cancel_button, self.trace_button, self.bolts_button):
            bar.addWidget(w)
        options = QVBoxLayout()  # stacked, so the panel stays narrow
        options.setSpacing(0)
        options.addWidget(self.force_box)
        options.addWidget(self.region_box)
        bar.addLayout(options)
        bar.addStretch(1)
        return bar

    def _build_table(self) -> None:
        """The property list: one row per property (and per checked bolt), selected one at a time."""
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        # one line a row: a fixed height, not each row measured again whenever a verdict arrives (50 bolts: 0.5 s)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for c in (2, 3, 4):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        # columns fitted to the rows on screen, not to every row whenever a verdict arrives (480 bolts: Qt asked the
        # model 60,000 times and the GUI thread stalled 1–3 s per update; bench/RESULTS.md)
        header.setResizeContentsPrecision(0)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)

    def _build_status(self) -> None:
        """Below the list: the capacity line, the progress in words and as a bar, the selected row's details."""
        # capacity in Storm's terms: one short line (the headroom), Storm's response in its tooltip
        self.capacity_label = QLabel("")
        self.capacity_label.setWordWrap(True)
        self.capacity_label.setVisible(False)
        # per spout: can a tuple tree outlast the message timeout (docs/latency.md), the reasons in the tooltip
        self.timeouts_label = QLabel("")
        self.timeouts_label.setWordWrap(True)
        self.timeouts_label.setVisible(False)
        self.progress_label = QLabel("Not run.")
        self.progress_label.setWordWrap(True)
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setVisible(False)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(False)

    def _connect_controller(self) -> None:
        """The controller's and the document's signals to the panel (in this order: a result reaches the
        panel before the panel's own `result_arrived`)."""
        controller, document = self.controller, self.document
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        controller.property_changed.connect(self._on_property_changed)
        controller.status_changed.connect(self.progress_label.setText)
        controller.progress_changed.connect(self._on_progress)
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
        rows = self.table.selectionModel().selectedRows()
        return self.model.entry(rows[0].row()) if rows else (-1, None)

    def select(self, row: int, bolt: str | None = None) -> None:
        """Select property `row` (or its checked bolt `bolt`) in the list."""
        table_row = self.model.table_row(row, bolt)
        if table_row >= 0:
            self.table.selectRow(table_row)

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
        lines = [(s.verdict_text, s.colour) for s in self.states if s.result is not None or s.running or s.partial]
        self.headline_label.setText("<br>".join(
            f"<span style='font-size:large; font-weight:bold; color:{VERDICT_TEXT_COLOURS[colour]}'>"
            f"{_html(text)}</span>" for text, colour in lines))
        self.headline_label.setVisible(bool(lines))

    def headline(self) -> str:
        """The headline's text (also used by tests): each shown property's verdict at a glance, a line each."""
        return "\n".join(s.verdict_text for s in self.states if s.result is not None or s.running or s.partial)

    def _show_details(self) -> None:
        row, bolt = self.selected()
        if not 0 <= row < len(self.states):
            self.details.clear()
            return
        state = self.states[row]
        parts = [f"<b>{_html(state.verdict_text)}</b>"]
        if state.verdict_words and state.verdict_words != state.verdict_text.removeprefix("stale: "):
            parts.append(f"{_html(state.spec.title)}: {_html(state.verdict_words)}")
        else:
            parts.append(_html(state.spec.title))
        if state.stale:
            parts.append("<i>The model changed since this result: verify again.</i>")
        if state.error:
            parts.append(f"<span style='color:#b26a00'>{_html(state.error)}</span>")
        result = state.result
        if result is not None and bolt is not None and bolt in result.bolts:
            verdict = result.bolts[bolt]
            parts.append(f"<b>{_html(bolt)}</b>: {_html(bolt_verdict_words(verdict))}")
            if verdict.message:
                parts.append(_html(verdict.message))
            if verdict.verdict == "counterexample":
                parts.append(_html(f"found by the {verdict.method}; certified" if verdict.certified
                                   else f"found by the {verdict.method}; not certified"))
        if state.capacity and not state.stale:
            parts.append("<b>Capacity</b> (in Storm's terms):<ul>"
                         + "".join(f"<li>{_html(line)}</li>" for line in state.capacity) + "</ul>")
        if result is not None:
            if result.message:
                parts.append(_html(result.message))
            facts = []
            if result.growing:
                facts.append("growing queues: " + ", ".join(result.growing))
            if result.growth_per_loop:
                facts.append("growth per loop: " + ", ".join(f"{n} +{d}" for n, d in result.growth_per_loop.items()))
            if result.verdict == "counterexample":
                facts.append(("certified lasso" if result.traces else "certified proof of growth by rates")
                             if result.certified else "not certified")
            if result.kept:
                facts.append("components kept (cone of influence): " + ", ".join(result.kept))
            facts.append(f"elapsed {result.elapsed_s:.2f} s")
            parts.append("<br>".join(_html(f) for f in facts))
            if result.notes:
                parts.append("Notes:<ul>" + "".join(f"<li>{_html(n)}</li>" for n in result.notes) + "</ul>")
        self.details.setHtml(in_app_words("<p>" + "</p><p>".join(parts) + "</p>"))

    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._show_details()
        self._update_buttons()

    def _on_double_clicked(self, index: QModelIndex) -> None:
        row, bolt = self.model.entry(index.row())
        self.show_trace(row, bolt)

    # ---- choosing the checked bolts ---------------------------------------------------------
    def _fill_bolts_menu(self) -> None:
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

    def set_checked_bolt(self, bolt_id: str, on: bool) -> None:
        """Add or remove a bolt from the growth property, as one undoable step (the last one stays)."""
        self.controller.set_checked_bolt(bolt_id, on)

    def _on_bolt_toggled(self, action: QAction) -> None:
        bolt_id = action.data()
        if isinstance(bolt_id, str) and bolt_id:
            self.set_checked_bolt(bolt_id, action.isChecked())

    def _on_force_toggled(self, on: bool) -> None:
        self.controller.force_search = on

    def _on_region_toggled(self, on: bool) -> None:
        self.controller.loop_clocks = "region" if on else "equal"

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
        self.progress_bar.setRange(0, self.controller.deepest_bound())
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("k = %v of %m")
        self.progress_bar.setVisible(True)
        self.elapsed_timer.start()
        self._show_progress()
        self._update_buttons()

    def _on_progress(self) -> None:
        state = self.controller.worker_state
        value = min(state.progress.k, self.progress_bar.maximum()) if state and state.progress else None
        if value is not None and value != self.progress_bar.value():  # setValue repaints the panel at once
            self.progress_bar.setValue(value)
        self._show_progress()

    def _show_progress(self) -> None:
        text = self.controller.progress_text()
        if text:
            self.progress_label.setText(text)

    def _on_result(self, row: int, result: VerifyResult) -> None:
        if row < 0:
            return
        self._show_capacity(self.states[row].capacity)
        self._show_timeouts(self.states[row].timeouts)
        shown = self.trace_row < 0 or self.trace_row == row or self.trace_view.trace is None
        if result.verdict == "counterexample" and result.trace is not None and not self.states[row].stale and shown:
            self.show_trace(row)

    def _show_capacity(self, lines: list[str]) -> None:
        """The headroom as a short line (and the worker-death verdict); what Storm does (overloaded) in its tooltip."""
        if not lines:
            return
        short = lines[0].split(": every bolt")[0]
        rest = lines[0].split("; ", 1)[1] if "; " in lines[0] else ""
        self.capacity_label.setText(in_app_words(f"Capacity: {short}") + (f"; {in_app_words(rest)}" if rest else "")
                                    + capacity_suffix(lines))
        self.capacity_label.setToolTip(in_app_words("\n".join(lines)))
        self.capacity_label.setVisible(True)

    def _show_timeouts(self, timeouts: tuple[list[str], list[str]]) -> None:
        """Per spout its answer against the message timeout in a few words; the sentences in the tooltip."""
        short, lines = timeouts
        if not short:
            return
        self.timeouts_label.setText("Timeouts: " + "; ".join(short))
        self.timeouts_label.setToolTip("\n".join(lines))
        self.timeouts_label.setVisible(True)

    def raise_trace(self) -> None:
        """Show the trace view's dock (a counterexample arrived)."""
        if self.trace_dock is not None:
            self.trace_dock.show()
            self.trace_dock.raise_()

    def _on_all_finished(self) -> None:
        self.elapsed_timer.stop()
        self.progress_bar.setVisible(False)
        self._update_buttons()

    # ---- staleness -------------------------------------------------------------------------
    def _on_results_stale(self) -> None:
        for label in (self.capacity_label, self.timeouts_label):
            if label.isVisible() and not label.text().startswith("(stale)"):
                label.setText("(stale) " + label.text())
        if self.trace_view.trace is not None and "Stale" not in self.trace_view.title.text():
            self.trace_view.title.setText("Stale (the model changed since): " + self.trace_view.title.text())
        self._update_buttons()

    def _on_document_replaced(self) -> None:
        self.trace_row = -1
        self.capacity_label.setVisible(False)
        self.timeouts_label.setVisible(False)
        self.trace_view.clear()

    # ---- the trace -------------------------------------------------------------------------
    def show_trace(self, row: int, bolt: str | None = None) -> bool:
        """Open property `row`'s counterexample (checked bolt `bolt`'s own lasso when given) in the
        trace view; False when there is none."""
        if not 0 <= row < len(self.states):
            return False
        result = self.states[row].result
        if result is None or result.trace is None:
            return False
        state = self.states[row]
        # what grows first, the property second ("status grows; 9 bounded — unbounded growth of …: counterexample")
        trace, caption = result.trace, f"{result_headline(result)} — {state.spec.title.lower()}: {state.verdict_words}"
        if bolt is not None:
            verdict = result.bolts.get(bolt)
            if verdict is None or verdict.trace_index is None or verdict.trace_index >= len(result.traces):
                return False
            trace = result.traces[verdict.trace_index]
            caption = (f"{bolt} grows (lasso {verdict.trace_index + 1} of {len(result.traces)}) — "
                       f"{result_headline(result)}")
        self.trace_row = row
        if self.states[row].stale:
            caption = "Stale (the model changed since): " + caption
        self.trace_view.set_trace(trace, caption)
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
        self.verify_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        row, bolt = self.selected()
        result = self.states[row].result if 0 <= row < len(self.states) else None
        has_trace = result is not None and result.trace is not None
        if has_trace and bolt is not None and result is not None:
            verdict = result.bolts.get(bolt)
            has_trace = verdict is not None and verdict.trace_index is not None
        self.trace_button.setEnabled(bool(has_trace))

    # ---- verified configuration ------------------------------------------------------------
    def verified_problem(self) -> str | None:
        """Why the current results cannot be exported as a verified configuration (None when they can)."""
        return self.controller.verified_problem()

    def export_verified(self, path: str | Path) -> None:
        """Write the verified configuration (topology, settings, verdicts, bound, hash) through `save_bytes`."""
        save_bytes(path, self.controller.verified_configuration())

    def export_verified_dialog(self) -> None:
        """File > Export verified configuration…: ask for a file name, write, report in words."""
        title = "Export verified configuration"
        problem = self.verified_problem()
        if problem is not None:
            self._message("error", title, f"Cannot export: {problem}.")
            return
        document_path = self.document.path
        base = document_path.name.removesuffix(".json").removesuffix(".storm") if document_path else "topology"
        suggestion = str((document_path.parent if document_path else Path.cwd()) / f"{base}.verified.json")
        if self.dialogs is not None and getattr(self.dialogs, "headless", False):
            path = str(self.dialogs._answer("verified_file", ""))
        else:
            path, _ = QFileDialog.getSaveFileName(self, title, suggestion, "Verified configurations (*.verified.json)")
        if not path:
            return
        try:
            self.export_verified(path)
        except (OSError, ValueError) as err:
            self._message("error", title, str(err))
            return
        self._message("info", title, f"Wrote {path}.")

    def _message(self, kind: str, title: str, text: str) -> None:
        if self.dialogs is not None:
            getattr(self.dialogs, kind)(self, title, text)
        elif kind == "error":
            QMessageBox.warning(self, title, text)
        else:
            QMessageBox.information(self, title, text)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")


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
    panel.action_force.toggled.connect(panel.force_box.setChecked)
    panel.force_box.toggled.connect(panel.action_force.setChecked)
    panel.action_export_verified = QAction("Export &verified configuration…", parent)
    panel.action_export_verified.setObjectName("action_export_verified")
    panel.action_export_verified.setStatusTip(
        "Save the topology with its verdicts, the solver bound and a content hash")
    panel.action_export_verified.triggered.connect(panel.export_verified_dialog)

