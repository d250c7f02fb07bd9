"""The verification panel: a property list with coloured verdicts, a background search, progress.

UPPAAL-style: each property (unbounded growth of the checked bolts; some queue reaches
N) has a marker, and the growth property has one row per checked bolt beneath it with
that bolt's own verdict (double-click opens its own lasso). Markers: grey = not run or stale
(any semantic edit of the document makes
results stale), red = counterexample, green = no counterexample up to k or bounded by
the rate proof, amber = unknown (cancelled, timed out, failed). Verify runs one
`VerifyWorker` (own thread, own Search, own z3 context) per property in turn; Cancel
interrupts the solver from the GUI thread. A counterexample opens in the trace view.
`install(window)` docks both, fills the Verify menu and adds File > Export verified
configuration.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPixmap
from PySide6.QtWidgets import (
    QApplication,
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
    QTextBrowser,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.formats.verified import bolt_verdict_words, verdict_words, verified_bytes
from app.core.tcn.options import SearchOptions
from app.core.tcn.result import Progress, PropertyKind, VerifyResult
from app.core.topology import Problem, Topology, TopologyError, parse_topology
from app.gui.commands import SetSectionFieldsCommand
from app.gui.document import DocumentModel
from app.gui.panels.trace_view import TraceView, save_bytes
from app.gui.workers import SearchFactory, VerifyWorker

MARKER_COLOURS = {"grey": "#9e9e9e", "red": "#d32f2f", "green": "#388e3c", "amber": "#f5a300"}
VERDICT_MARKER = {"counterexample": "red", "none-up-to-k": "green", "bounded": "green", "unknown": "amber"}
PREFERRED_STATS = ("conflicts", "decisions", "propagations", "memory", "max memory", "rlimit count")
COLUMNS = ["", "property", "verdict", "k", "time"]
_QUIT_HOOKED = False  # the application-exit hook that stops running searches, connected once


def marker_icon(colour: str) -> QIcon:
    """A filled circle in the verdict colour."""
    pixmap = QPixmap(14, 14)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(MARKER_COLOURS[colour]))
    painter.setPen(QColor(MARKER_COLOURS[colour]).darker(130))
    painter.drawEllipse(1, 1, 12, 12)
    painter.end()
    return QIcon(pixmap)


def format_stats(stats: dict[str, float | int], limit: int = 4) -> str:
    """A few solver statistics in words ("conflicts 1234 · decisions 5678 · memory 21.3 MB")."""
    keys = [k for k in PREFERRED_STATS if k in stats] or sorted(stats)
    parts = []
    for key in keys[:limit]:
        value = stats[key]
        if "memory" in key:
            parts.append(f"{key} {float(value):.1f} MB")
        elif isinstance(value, float) and not value.is_integer():
            parts.append(f"{key} {value:.3g}")
        else:
            parts.append(f"{key} {int(value)}")
    return " · ".join(parts)


@dataclass(frozen=True)
class PropertySpec:
    """One property of the list: what it asks, in the user's words."""

    kind: PropertyKind
    title: str
    threshold: int | None = None
    bolts: tuple[str, ...] = ()  # the checked bolts, one row each under the growth property

    @property
    def key(self) -> tuple[str, str, int | None, tuple[str, ...]]:
        return (self.kind, self.title, self.threshold, self.bolts)


@dataclass
class PropertyState:
    """What the panel knows about a property: its last result, whether it is stale or running."""

    spec: PropertySpec
    result: VerifyResult | None = None
    stale: bool = False
    running: bool = False
    error: str = ""
    note: str = ""
    progress: Progress | None = None
    generation: int = -1

    @property
    def colour(self) -> str:
        if self.running or self.stale:
            return "grey"
        if self.error:
            return "amber"
        if self.result is None:
            return "grey"
        return VERDICT_MARKER[self.result.verdict]

    @property
    def verdict_text(self) -> str:
        if self.running:
            return "verifying…"
        if self.error:
            return "unknown (failed)"
        if self.result is None:
            return self.note or "not run"
        words = verdict_words(self.result)
        return f"stale: {words}" if self.stale else words


def property_specs(topo: Topology) -> list[PropertySpec]:
    """The properties the document asks for: growth of the checked bolts, and the queue threshold."""
    names = [b.name for b in topo.checked_bolts()]
    which = ", ".join(names) if names else "every bolt"
    specs = [PropertySpec("growth", f"Unbounded growth of {which}", bolts=tuple(names))]
    threshold = topo.verification.queue_threshold
    if threshold is not None:
        specs.append(PropertySpec("threshold", f"Some queue reaches {threshold}", threshold))
    return specs


class VerificationPanel(QWidget):
    """The property list, Verify/Cancel, progress and the verdicts in words; owns the trace view."""

    all_finished = Signal()
    result_arrived = Signal(int, object)  # property row, VerifyResult
    trace_available = Signal()

    def __init__(self, document: DocumentModel, *, search_factory: SearchFactory | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.search_factory = search_factory
        self.trace_view = TraceView()
        self.canvas: Any = None  # set by install(); has highlight_components(names)
        self.dialogs: Any = None  # the main window's Dialogs, when installed
        self.states: list[PropertyState] = []
        self.worker: VerifyWorker | None = None
        self.worker_state: PropertyState | None = None
        self._queue: list[PropertyState] = []
        self._generation = 0
        self._run_started = 0.0
        self.last_cancel_latency_s: float | None = None
        self.trace_row = -1
        self._snapshot: Topology = document.topology()

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
        self.region_box = QCheckBox("clocks up to regions")
        self.region_box.setToolTip("Let the loop's clocks repeat up to regions instead of exactly: finds more "
                                   "lassos (section 3 of the semantics) but can be much slower")
        bar = QHBoxLayout()
        for w in (self.verify_button, self.cancel_button, self.trace_button, self.bolts_button):
            bar.addWidget(w)
        options = QVBoxLayout()  # stacked, so the panel stays narrow
        options.setSpacing(0)
        options.addWidget(self.force_box)
        options.addWidget(self.region_box)
        bar.addLayout(options)
        bar.addStretch(1)

        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for c in (2, 3, 4):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._on_current_changed)
        self.tree.itemDoubleClicked.connect(self._on_double_clicked)

        self.progress_label = QLabel("Not run.")
        self.progress_label.setWordWrap(True)
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setVisible(False)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(False)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress_bar)

        self.elapsed_timer = QTimer(self)
        self.elapsed_timer.setInterval(100)
        self.elapsed_timer.timeout.connect(self._show_progress)

        document.changed.connect(self._on_document_changed)
        document.document_replaced.connect(self._on_document_replaced)
        self.trace_view.acting_changed.connect(self.highlight_on_canvas)
        self._rebuild_properties(keep=False)
        self._update_buttons()

    # ---- queries (also used by tests) ----------------------------------------------------
    def is_running(self) -> bool:
        return self.worker is not None

    def marker_colour(self, row: int) -> str:
        return self.states[row].colour

    def verdict_text(self, row: int) -> str:
        return self.states[row].verdict_text

    def results(self) -> list[VerifyResult]:
        return [s.result for s in self.states if s.result is not None]

    # ---- the property list -----------------------------------------------------------------
    def _rebuild_properties(self, keep: bool) -> None:
        """Follow the document's properties; results of unchanged properties are kept (when `keep`)."""
        old = {s.spec.key: s for s in self.states} if keep else {}
        specs = property_specs(self.document.topology())
        same = [s.spec.key for s in self.states] == [spec.key for spec in specs] and keep
        if not same:
            row, _bolt = self._row_of(self.tree.currentItem())
            self.states = [old.get(spec.key) or PropertyState(spec) for spec in specs]
            self.tree.clear()
            for state in self.states:
                item = QTreeWidgetItem(self.tree)
                item.setText(1, state.spec.title)
                item.setToolTip(1, state.spec.title)
                for name in state.spec.bolts:
                    child = QTreeWidgetItem(item)
                    child.setText(1, name)
                    child.setData(1, Qt.ItemDataRole.UserRole, name)
                    child.setToolTip(1, f"{name}'s own verdict: double-click to open its lasso")
                item.setExpanded(True)
            if self.states:
                self.tree.setCurrentItem(self.tree.topLevelItem(min(max(row, 0), len(self.states) - 1)))
        for row in range(len(self.states)):
            self._refresh_row(row)

    def _refresh_state(self, state: PropertyState) -> None:
        """Redraw a property's row, if it is still in the list (an edit may have replaced it)."""
        for row, shown in enumerate(self.states):
            if shown is state:
                self._refresh_row(row)

    def _refresh_row(self, row: int) -> None:
        state = self.states[row]
        item = self.tree.topLevelItem(row)
        if item is None:
            return
        item.setIcon(0, marker_icon(state.colour))
        item.setData(0, Qt.ItemDataRole.UserRole, state.colour)
        item.setToolTip(0, {"grey": "not run or stale", "red": "counterexample", "green": "no counterexample found",
                            "amber": "unknown"}[state.colour])
        item.setText(2, state.verdict_text)
        result = state.result
        item.setText(3, "" if result is None or result.k is None else str(result.k))
        item.setText(4, "" if result is None else f"{result.elapsed_s:.1f} s")
        for i in range(item.childCount()):
            self._refresh_bolt(state, item.child(i))
        current = self.tree.currentItem()
        if current is item or (current is not None and current.parent() is item):
            self._show_details(row)

    def bolt_verdict(self, row: int, name: str) -> Any:
        """The BoltVerdict of checked bolt `name` in property `row` (None before a result)."""
        result = self.states[row].result
        if result is None or self.states[row].running:
            return None
        return result.bolts.get(name)

    def bolt_row_text(self, row: int, name: str) -> str:
        """What the bolt's row under property `row` says (also used by tests)."""
        item = self.tree.topLevelItem(row)
        if item is not None:
            for i in range(item.childCount()):
                child = item.child(i)
                if child is not None and child.data(1, Qt.ItemDataRole.UserRole) == name:
                    return child.text(2)
        raise KeyError(name)

    def _refresh_bolt(self, state: PropertyState, child: QTreeWidgetItem) -> None:
        name = child.data(1, Qt.ItemDataRole.UserRole)
        verdict = None if state.running or state.result is None else state.result.bolts.get(name)
        if verdict is None:
            colour = "grey" if not state.error else "amber"
            text = "verifying…" if state.running else ("" if state.result is None else "not searched")
        else:
            colour = "grey" if state.stale else VERDICT_MARKER[verdict.verdict]
            text = bolt_verdict_words(verdict)
            if state.stale:
                text = f"stale: {text}"
        child.setIcon(0, marker_icon(colour))
        child.setData(0, Qt.ItemDataRole.UserRole, colour)
        child.setText(2, text)
        child.setText(3, "" if verdict is None or verdict.k is None else str(verdict.k))
        child.setToolTip(2, verdict.message if verdict is not None and verdict.message else text)

    def _show_details(self, row: int) -> None:
        if not 0 <= row < len(self.states):
            self.details.clear()
            return
        state = self.states[row]
        parts = [f"<b>{_html(state.spec.title)}</b>: {_html(state.verdict_text)}"]
        if state.stale:
            parts.append("<i>The model changed since this result: verify again.</i>")
        if state.error:
            parts.append(f"<span style='color:#b26a00'>{_html(state.error)}</span>")
        result = state.result
        _row, bolt = self._row_of(self.tree.currentItem())
        if result is not None and bolt is not None and bolt in result.bolts:
            verdict = result.bolts[bolt]
            parts.append(f"<b>{_html(bolt)}</b>: {_html(bolt_verdict_words(verdict))}")
            if verdict.message:
                parts.append(_html(verdict.message))
            if verdict.verdict == "counterexample":
                parts.append(_html(f"found by the {verdict.method}; certified" if verdict.certified
                                   else f"found by the {verdict.method}; not certified"))
        if result is not None:
            if result.message:
                parts.append(_html(result.message))
            facts = []
            if result.growing:
                facts.append("growing queues: " + ", ".join(result.growing))
            if result.growth_per_loop:
                facts.append("growth per loop: " + ", ".join(f"{n} +{d}" for n, d in result.growth_per_loop.items()))
            if result.verdict == "counterexample":
                facts.append("certified lasso" if result.certified else "not certified")
            if result.kept:
                facts.append("components kept (cone of influence): " + ", ".join(result.kept))
            facts.append(f"elapsed {result.elapsed_s:.2f} s")
            parts.append("<br>".join(_html(f) for f in facts))
            if result.notes:
                parts.append("Notes:<ul>" + "".join(f"<li>{_html(n)}</li>" for n in result.notes) + "</ul>")
        self.details.setHtml("<p>" + "</p><p>".join(parts) + "</p>")

    def _row_of(self, item: QTreeWidgetItem | None) -> tuple[int, str | None]:
        """(property row, bolt name or None) of a tree item."""
        if item is None:
            return -1, None
        parent = item.parent()
        if parent is None:
            return self.tree.indexOfTopLevelItem(item), None
        return self.tree.indexOfTopLevelItem(parent), item.data(1, Qt.ItemDataRole.UserRole)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        row, _bolt = self._row_of(current)
        self._show_details(row)
        self._update_buttons()

    def _on_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        row, bolt = self._row_of(item)
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
        """Add or remove a bolt from the growth property, as one undoable step.

        All bolts chosen is stored as the empty list ("every bolt"); the last bolt cannot be removed.
        """
        topo = self.document.topology()
        chosen = [b.id for b in topo.checked_bolts() if b.id != bolt_id]
        if on:
            chosen.append(bolt_id)
        if not chosen:
            self.progress_label.setText("At least one bolt must be checked.")
            return
        ordered = [b.id for b in topo.bolts if b.id in chosen]
        value = [] if len(ordered) == len(topo.bolts) else ordered
        if value == list(topo.verification.checked):
            return
        command = SetSectionFieldsCommand(self.document, "verification", {"checked": value}, merge=False)
        name = topo.component(bolt_id).name
        command.setText(f"{'Check' if on else 'Uncheck'} growth of {name}")
        self.document.undo_stack.push(command)

    def _on_bolt_toggled(self, action: QAction) -> None:
        bolt_id = action.data()
        if isinstance(bolt_id, str) and bolt_id:
            self.set_checked_bolt(bolt_id, action.isChecked())

    # ---- running ---------------------------------------------------------------------------
    def start(self) -> None:
        """Verify every property, one after the other, in a background thread."""
        if self.is_running():
            return
        self._rebuild_properties(keep=True)
        topo = self.document.topology()
        try:
            topo = parse_topology(topo.model_dump(mode="json"))
        except TopologyError as err:
            message = "Cannot verify: " + "; ".join(str(p) for p in err.problems)
            for row, state in enumerate(self.states):
                state.error, state.result, state.running, state.stale = message, None, False, False
                self._refresh_row(row)
            self.progress_label.setText(message)
            self.all_finished.emit()
            return
        self._snapshot = topo
        self._queue = list(self.states)
        for row, state in enumerate(self.states):
            state.result, state.stale, state.error, state.note = None, False, "", "waiting"
            state.generation = self._generation  # the snapshot's generation: later edits make it stale
            self._refresh_row(row)
        self.trace_row = -1
        self._run_started = time.monotonic()
        self.last_cancel_latency_s = None
        self._run_next()

    def _options(self, spec: PropertySpec) -> SearchOptions:
        """The search of one property, as the CLI's `verify` asks it: the document's bounds (its k as
        the deepest bound, so that simulation-built lassos are tried) and time limit, the panel's choices."""
        return SearchOptions(force_search=self.force_box.isChecked(),
                             loop_clocks="region" if self.region_box.isChecked() else "equal",
                             threshold=spec.threshold if spec.kind == "threshold" else None)

    def _run_next(self) -> None:
        if not self._queue:
            self.worker = None
            self.worker_state = None
            self.elapsed_timer.stop()
            self.progress_bar.setVisible(False)
            total = time.monotonic() - self._run_started
            self.progress_label.setText(f"Finished in {total:.1f} s.")
            self._update_buttons()
            self.all_finished.emit()
            return
        state = self._queue.pop(0)
        state.running, state.error, state.note, state.progress = True, "", "", None
        worker = VerifyWorker(self._snapshot, prop=state.spec.kind, options=self._options(state.spec),
                              search_factory=self.search_factory)
        worker.progress.connect(self._on_progress)
        worker.result_ready.connect(self._on_result)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(self._on_worker_finished)
        self.destroyed.connect(worker.cancel)  # a panel closed mid-search stops its search
        self.worker, self.worker_state = worker, state
        self._refresh_state(state)
        k_max = self._snapshot.verification.k or self._snapshot.verification.k_max
        self.progress_bar.setRange(0, k_max)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("k = %v of %m")
        self.progress_bar.setVisible(True)
        self.elapsed_timer.start()
        self._show_progress()
        self._update_buttons()
        worker.start()

    def cancel(self) -> None:
        """Stop the running search (its property turns amber/unknown) and skip the rest."""
        if self.worker is None:
            return
        skipped = self._queue
        self._queue = []
        for state in skipped:
            state.note = "not run (cancelled)"
            self._refresh_state(state)
        self.progress_label.setText("Cancelling…")
        self.worker.cancel()

    def _on_progress(self, progress: Progress) -> None:
        if self.worker_state is None:
            return
        self.worker_state.progress = progress
        self.progress_bar.setValue(min(progress.k, self.progress_bar.maximum()))
        self._show_progress()

    def _show_progress(self) -> None:
        state = self.worker_state
        if state is None or self.worker is None:
            return
        elapsed = time.monotonic() - (self.worker.started_at or self._run_started)
        text = f"Verifying {state.spec.title.lower()}: {elapsed:.1f} s"
        if state.progress is not None:
            text += f", k = {state.progress.k}"
            stats = format_stats(state.progress.stats)
            if stats:
                text += f" · {stats}"
            if state.progress.message:
                text += f" — {state.progress.message}"
        self.progress_label.setText(text)

    def _on_result(self, result: VerifyResult) -> None:
        state = self.worker_state
        if state is None:
            return
        state.result = result
        state.running = False
        state.stale = state.generation != self._generation
        state.error = ""
        if self.worker is not None and self.worker.cancel_requested_at is not None:
            self.last_cancel_latency_s = time.monotonic() - self.worker.cancel_requested_at
        self._refresh_state(state)
        row = next((i for i, shown in enumerate(self.states) if shown is state), -1)
        self.result_arrived.emit(row, result)
        shown = self.trace_row < 0 or self.trace_row == row or self.trace_view.trace is None
        if row >= 0 and result.verdict == "counterexample" and result.trace is not None and not state.stale and shown:
            self.show_trace(row)

    def _on_failed(self, message: str) -> None:
        state = self.worker_state
        if state is None:
            return
        state.running = False
        state.result = None
        state.error = f"Verification failed: {message}"
        self._refresh_state(state)

    def _on_worker_finished(self) -> None:
        worker = self.worker
        if worker is not None:
            worker.wait()
            worker.deleteLater()
            state = self.worker_state
            if state is not None and state.running:
                # neither result nor failure arrived (should not happen): do not leave it spinning
                state.running = False
                state.error = "Verification stopped without a result."
                self._refresh_state(state)
        self.worker = None
        self.worker_state = None
        self._run_next()

    def shutdown(self) -> None:
        """Cancel and join the worker (window closing); waits at most a few seconds."""
        self._queue = []
        worker = self.worker
        if worker is not None:
            worker.cancel()
            worker.wait(5000)

    # ---- staleness -------------------------------------------------------------------------
    def _on_document_changed(self) -> None:
        self._generation += 1
        for state in self.states:
            if state.result is not None or state.error:
                state.stale = True
        self._rebuild_properties(keep=True)
        if self.trace_view.trace is not None and "Stale" not in self.trace_view.title.text():
            self.trace_view.title.setText("Stale (the model changed since): " + self.trace_view.title.text())
        self._update_buttons()

    def _on_document_replaced(self) -> None:
        self.shutdown()
        self.states = []
        self._rebuild_properties(keep=False)
        self.trace_row = -1
        self.trace_view.clear()
        self.progress_label.setText("Not run.")

    # ---- the trace -------------------------------------------------------------------------
    def show_trace(self, row: int, bolt: str | None = None) -> bool:
        """Open property `row`'s counterexample (checked bolt `bolt`'s own lasso when given) in the
        trace view; False when there is none."""
        if not 0 <= row < len(self.states):
            return False
        result = self.states[row].result
        if result is None or result.trace is None:
            return False
        trace, caption = result.trace, self.states[row].spec.title
        if bolt is not None:
            verdict = result.bolts.get(bolt)
            if verdict is None or verdict.trace_index is None or verdict.trace_index >= len(result.traces):
                return False
            trace = result.traces[verdict.trace_index]
            caption = f"{caption}: {bolt} grows (lasso {verdict.trace_index + 1} of {len(result.traces)})"
        self.trace_row = row
        if self.states[row].stale:
            caption = "Stale (the model changed since): " + caption
        self.trace_view.set_trace(trace, caption)
        self.trace_available.emit()
        self._update_buttons()
        return True

    def show_selected_trace(self) -> None:
        row, bolt = self._row_of(self.tree.currentItem())
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
        row, bolt = self._row_of(self.tree.currentItem())
        result = self.states[row].result if 0 <= row < len(self.states) else None
        has_trace = result is not None and result.trace is not None
        if has_trace and bolt is not None and result is not None:
            verdict = result.bolts.get(bolt)
            has_trace = verdict is not None and verdict.trace_index is not None
        self.trace_button.setEnabled(bool(has_trace))

    # ---- verified configuration ------------------------------------------------------------
    def verified_problem(self) -> str | None:
        """Why the current results cannot be exported as a verified configuration (None when they can)."""
        if self.is_running():
            return "verification is still running"
        if not self.states:
            return "there is no property to verify"
        for state in self.states:
            if state.result is None:
                return f"'{state.spec.title}' has no result: run Verify first"
            if state.stale:
                return f"the result of '{state.spec.title}' is stale: the model changed, run Verify again"
        return None

    def export_verified(self, path: str | Path) -> None:
        """Write the verified configuration (topology, settings, verdicts, bound, hash) via QSaveFile."""
        problem = self.verified_problem()
        if problem is not None:
            raise TopologyError([Problem("verdicts", problem)])
        data = verified_bytes(self.document.topology(), self.results())
        save_bytes(path, data)

    def export_verified_dialog(self) -> None:
        """File > Export verified configuration…: ask for a file name, write, report in words."""
        title = "Export verified configuration"
        problem = self.verified_problem()
        if problem is not None:
            self._message("error", title, f"Cannot export: {problem}.")
            return
        path = self.document.path
        base = path.name.removesuffix(".json").removesuffix(".storm") if path else "topology"
        suggestion = str((self.document.path.parent if self.document.path else Path.cwd()) / f"{base}.verified.json")
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


class _Integration(QObject):
    """Raises the trace dock when a counterexample arrives (a bound method, as the rules ask)."""

    def __init__(self, panel: VerificationPanel, trace_dock: QWidget, parent: QObject):
        super().__init__(parent)
        self.panel, self.trace_dock = panel, trace_dock

    def raise_trace(self) -> None:
        self.trace_dock.show()
        self.trace_dock.raise_()


def install(window: Any) -> VerificationPanel:
    """Add the Verification and Trace docks, the Verify menu and File > Export verified configuration."""
    panel = VerificationPanel(window.document, parent=window)
    panel.canvas = getattr(window, "canvas", None)
    panel.dialogs = getattr(window, "dialogs", None)
    window.verification_panel = panel
    panel.dock = window.add_panel(panel, "Verification")
    panel.trace_dock = window.add_panel(panel.trace_view, "Trace")
    with contextlib.suppress(AttributeError, RuntimeError):
        window.splitDockWidget(panel.dock, panel.trace_dock, Qt.Orientation.Horizontal)
    integration = _Integration(panel, panel.trace_dock, panel)
    panel.trace_available.connect(integration.raise_trace)
    global _QUIT_HOOKED
    app = QApplication.instance()
    if app is not None and not _QUIT_HOOKED:
        app.aboutToQuit.connect(VerifyWorker.stop_all)
        _QUIT_HOOKED = True

    verify_menu = window.menu("Verify")
    panel.action_verify = QAction("&Verify all properties", window)
    panel.action_verify.setObjectName("action_verify_all")
    panel.action_verify.setShortcut(QKeySequence("F5"))
    panel.action_verify.setIconText("Verify")
    panel.action_verify.setToolTip("Verify every property in the background (F5)")
    panel.action_verify.triggered.connect(panel.start)
    panel.action_cancel = QAction("&Cancel verification", window)
    panel.action_cancel.setObjectName("action_cancel_verification")
    panel.action_cancel.setShortcut(QKeySequence("Shift+F5"))
    panel.action_cancel.triggered.connect(panel.cancel)
    panel.action_trace = QAction("Show &trace of selected property", window)
    panel.action_trace.setObjectName("action_show_trace")
    panel.action_trace.triggered.connect(panel.show_selected_trace)
    panel.action_force = QAction("&Search even when the rate check proves bounded", window)
    panel.action_force.setObjectName("action_force_search")
    panel.action_force.setCheckable(True)
    panel.action_force.toggled.connect(panel.force_box.setChecked)
    panel.force_box.toggled.connect(panel.action_force.setChecked)
    for action in (panel.action_verify, panel.action_cancel, panel.action_trace):
        verify_menu.addAction(action)
    verify_menu.addSeparator()
    verify_menu.addAction(panel.action_force)
    toolbar = getattr(window, "toolbar", None)
    if toolbar is not None:
        toolbar.addSeparator()
        toolbar.addAction(panel.action_verify)

    file_menu = window.menu("File")
    panel.action_export_verified = QAction("Export &verified configuration…", window)
    panel.action_export_verified.setObjectName("action_export_verified")
    panel.action_export_verified.setStatusTip(
        "Save the topology with its verdicts, the solver bound and a content hash")
    panel.action_export_verified.triggered.connect(panel.export_verified_dialog)
    quit_action = next((a for a in file_menu.actions() if "quit" in a.text().lower() or "exit" in a.text().lower()),
                       None)
    if quit_action is not None:
        file_menu.insertAction(quit_action, panel.action_export_verified)
        file_menu.insertSeparator(quit_action)
    else:
        file_menu.addAction(panel.action_export_verified)
    return panel
