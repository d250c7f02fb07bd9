"""The DiffStream dialog (Runs > Compare runs...): are two run outputs equivalent up to a dependence relation?

Pick two output files (JSON Lines, JSON arrays or event logs), a dependence and
an equality in the same short forms as `stormbound diff`; the comparison runs
in a `CallWorker` (app.gui.workers) and the dialog shows the verdict, the first
difference and the unmatched items of each side. The main window owns the
dialog and its menu entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.diff import DiffError, DiffResult, Matcher, StreamItem, interleave, read_stream, short_json
from app.gui.workers import CallWorker

DEPENDENCE_EXAMPLES = ("same_key:key", "all", "none", "predicate:x.comp == y.comp and x.task == y.task",
                       "pairs:a-b")
VERDICT_COLOURS = {"equivalent": "#2e7d32", "different": "#c62828", "error": "#ef6c00", "idle": "#757575"}


def diff_files(left: str, right: str, dependence: str, equality: str | None = None,
                  order: str = "alternate") -> DiffResult:
    """The comparison the dialog runs (the same core call as `stormbound diff` without Spark)."""
    matcher = Matcher(dependence, equality or None)
    matcher.feed(interleave(read_stream(left), read_stream(right), order))
    return matcher.finish()


def failure_text(err: Exception) -> str:
    """Bad input in its own words (TopologyError/EventLogError are ValueErrors); anything else as internal."""
    if isinstance(err, (DiffError, ValueError, OSError)):
        return str(err)
    return f"internal error: {type(err).__name__}: {err}"


class DiffStreamDialog(QDialog):
    """Two files, a dependence and an equality in; verdict, first difference and leftovers out."""

    result_ready = Signal(object)  # DiffResult, or None after a problem

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Compare runs")
        self.setObjectName("diffstream_dialog")
        self.diff_result: DiffResult | None = None
        self.problem: str | None = None
        self._worker: CallWorker[DiffResult] | None = None

        self.left_edit, left_row = self._file_row("left")
        self.right_edit, right_row = self._file_row("right")
        self.dependence_edit = QComboBox()
        self.dependence_edit.setEditable(True)
        self.dependence_edit.addItems(DEPENDENCE_EXAMPLES)
        self.dependence_edit.setToolTip("all | none | same_key:FIELD | pairs:a-b | predicate:EXPR | JSON")
        self.equality_edit = QLineEdit()
        self.equality_edit.setPlaceholderText("structural (default), ignore:t,task, only:F, set_of_split:SEP")
        self.order_edit = QComboBox()
        self.order_edit.addItems(["alternate", "left-first"])
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("compare_button")
        self.compare_button.clicked.connect(self.start)

        form = QFormLayout()
        form.addRow("Left output", left_row)
        form.addRow("Right output", right_row)
        form.addRow("Dependence", self.dependence_edit)
        form.addRow("Equality", self.equality_edit)
        form.addRow("Connect as", self.order_edit)

        self.verdict = QLabel("No comparison yet")
        self.verdict.setObjectName("verdict")
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._set_verdict("idle", "No comparison yet")
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setObjectName("first_difference")
        self.details.setMaximumBlockCount(200)
        self.unmatched_left = self._table()
        self.unmatched_right = self._table()
        tables = QSplitter(Qt.Orientation.Horizontal)
        for title, table in (("Unmatched left", self.unmatched_left), ("Unmatched right", self.unmatched_right)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(QLabel(title))
            lay.addWidget(table)
            tables.addWidget(box)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.compare_button)
        layout.addLayout(buttons)
        layout.addWidget(self.verdict)
        layout.addWidget(self.details, 1)
        layout.addWidget(tables, 2)
        self.resize(820, 600)

    # -- building --

    def _file_row(self, side: str) -> tuple[QLineEdit, QWidget]:
        edit = QLineEdit()
        edit.setObjectName(f"{side}_file")
        edit.setPlaceholderText("run output: .jsonl, .json, .csv, .parquet or a run folder")
        browse = QPushButton("Browse...")
        browse.clicked.connect(lambda: self._browse(edit))  # GUI-thread widget signal: a lambda is fine here
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(edit, 1)
        lay.addWidget(browse)
        return edit, row

    def _browse(self, edit: QLineEdit) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Run output", edit.text(),
                                              "Run outputs (*.jsonl *.ndjson *.json *.csv *.parquet);;All files (*)")
        if name:
            edit.setText(name)

    @staticmethod
    def _table() -> QTableWidget:
        table = QTableWidget(0, 3)
        table.setHorizontalHeaderLabels(["#", "position", "item"])
        table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        return table

    def _set_verdict(self, state: str, text: str) -> None:
        self.verdict_state = state
        self.verdict.setText(text)
        self.verdict.setStyleSheet(f"font-weight: bold; color: {VERDICT_COLOURS[state]};")

    # -- running --

    def set_inputs(self, left: str, right: str, dependence: str, equality: str = "", order: str = "alternate") -> None:
        """Fill the form (used by the Runs panel and by tests)."""
        self.left_edit.setText(left)
        self.right_edit.setText(right)
        self.dependence_edit.setCurrentText(dependence)
        self.equality_edit.setText(equality)
        self.order_edit.setCurrentText(order)

    @Slot()
    def start(self) -> None:
        """Start the comparison in a worker thread (one at a time)."""
        if self._worker is not None:
            return
        left, right = self.left_edit.text().strip(), self.right_edit.text().strip()
        if not left or not right:
            self.show_problem("choose a left and a right output file")
            return
        self._set_verdict("idle", "Comparing...")
        self.compare_button.setEnabled(False)
        dependence, equality = self.dependence_edit.currentText().strip(), self.equality_edit.text().strip() or None
        order = self.order_edit.currentText()

        def compare(report: Callable[..., None]) -> DiffResult:
            return diff_files(left, right, dependence, equality, order)

        worker: CallWorker[DiffResult] = CallWorker(compare, describe=failure_text, parent=self)
        worker.result_ready.connect(self.show_result)  # bound methods of a GUI-thread object
        worker.failed.connect(self.show_problem)
        worker.finished.connect(worker.deleteLater)
        self._worker = worker
        worker.start()

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.wait()  # it has delivered its result: the thread is ending
            self._worker = None
        self.compare_button.setEnabled(True)

    @Slot(str)
    def show_problem(self, message: str) -> None:
        """Show a one-line problem (bad spec, missing file, item without the key field)."""
        self._stop_worker()
        self.diff_result, self.problem = None, message
        self._set_verdict("error", f"Cannot compare: {message}")
        self.details.setPlainText(message)
        self.unmatched_left.setRowCount(0)
        self.unmatched_right.setRowCount(0)
        self.result_ready.emit(None)

    @Slot(object)
    def show_result(self, result: DiffResult) -> None:
        """Show the verdict, the first difference and the unmatched items."""
        self._stop_worker()
        self.diff_result, self.problem = result, None
        if result.equivalent:
            self._set_verdict("equivalent", f"Equivalent: {result.matched:,} pairs matched "
                                            f"(dependence {result.dependence})")
        elif result.first_difference is not None:
            self._set_verdict("different", f"NOT equivalent: first difference at position "
                                           f"{result.first_difference.position}")
        else:
            self._set_verdict("different", f"NOT equivalent: {result.unmatched_left_count} left and "
                                           f"{result.unmatched_right_count} right items never matched")
        self.details.setPlainText(result.summary())
        for table, items in ((self.unmatched_left, result.unmatched_left),
                             (self.unmatched_right, result.unmatched_right)):
            self._fill(table, items)
        self.result_ready.emit(result)

    @staticmethod
    def _fill(table: QTableWidget, items: list[StreamItem], limit: int = 1000) -> None:
        shown = items[:limit]
        table.setRowCount(len(shown))
        for row, entry in enumerate(shown):
            for col, text in enumerate((str(entry.index), str(entry.position or ""), short_json(entry.item, 200))):
                table.setItem(row, col, QTableWidgetItem(text))

    def create_action(self, parent: QObject) -> QAction:
        """Runs ▸ Compare runs...: shows this dialog (one per window), owned by `parent`."""
        action = QAction("Compare runs...", parent)
        action.setObjectName("action_compare_runs")
        action.setStatusTip("Are two run outputs equivalent up to a dependence relation? (DiffStream)")
        action.triggered.connect(self.show_raised)
        return action

    def show_raised(self) -> None:
        self.show()
        self.raise_()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Wait (bounded) for a running comparison, which cannot be interrupted; True when none runs."""
        worker = self._worker
        return worker is None or worker.join(timeout_ms)

    def closeEvent(self, event: Any) -> None:
        self.shutdown()
        super().closeEvent(event)

