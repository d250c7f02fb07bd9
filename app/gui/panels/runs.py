"""The Runs panel: attach Spark, run the current topology, open a log, compare and apply measured values.

The view of the panel: widgets, settings and drawing. What it does is in
`RunsController` (app/gui/panels/runs_controller.py); the view sends it typed
requests and follows its signals. Analysing or checking a log runs in this process
when the engine setting allows it (`auto`: small logs, app.measure.engine_choice), so a
log can be opened without attaching Spark. The result tabs are a `RunResults`
(app/gui/panels/run_results.py): measured queue series are drawn dashed, in its own plot
and over the plots of a `TracePlots` source (the verification trace view, wired in by
the main window) for the same bolts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.topology import Topology
from app.gui.document import DocumentModel
from app.gui.panels.run_results import RunResults, TracePlots
from app.gui.panels.runs_controller import HostFactory, MonitorMatches, RunOptions, RunsController, SparkHostLike
from app.gui.workers import CallWorker, WorkProgress
from app.measure.analysis import Analysis
from app.measure.model_vs_measured import Comparison
from app.measure.reliability import ReliabilityReport


class RunsPanel(QWidget):
    """Spark status, run with progress and Cancel, queue plots, parameters, comparison, reliability."""

    analysis_ready = Signal(object)
    run_finished = Signal(str)

    def __init__(self, document: DocumentModel, settings: QSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.controller = RunsController(document, self)
        self._build()
        controller = self.controller
        controller.engine = self.engine_box.currentText()
        controller.status_changed.connect(self.status.setText)
        controller.state_changed.connect(self._update_buttons)
        controller.attach_finished.connect(self._reenable_attach)
        controller.progress_changed.connect(self._on_progress)
        controller.failed.connect(self._on_failed)
        controller.analysis_ready.connect(self._show_analysis)
        controller.reliability_ready.connect(self.results.show_reliability)
        controller.patterns_started.connect(self._on_patterns_started)
        controller.patterns_matched.connect(self._on_patterns_matched)
        controller.patterns_failed.connect(self._on_patterns_failed)
        controller.analysis_ready.connect(self.analysis_ready)
        controller.run_finished.connect(self.run_finished)
        self._update_buttons()

    # ---- the controller's state, as the panel's
    @property
    def host(self) -> SparkHostLike | None:
        return self.controller.host

    @property
    def host_factory(self) -> HostFactory:
        return self.controller.host_factory

    @host_factory.setter
    def host_factory(self, factory: HostFactory) -> None:
        self.controller.host_factory = factory

    @property
    def running(self) -> CallWorker[Any] | None:
        return self.controller.running

    @property
    def analysis(self) -> Analysis | None:
        return self.controller.analysis

    @property
    def comparison(self) -> Comparison | None:
        return self.controller.comparison

    @property
    def measured_topology(self) -> Topology | None:
        return self.controller.measured_topology

    @property
    def report(self) -> ReliabilityReport | None:
        return self.controller.report

    @property
    def log_path(self) -> Path | None:
        return self.controller.log_path

    def set_trace_plots(self, source: TracePlots | None) -> None:
        """Draw measured queues over these plots too (the main window passes the trace view)."""
        self.results.set_trace_plots(source)

    # ---- layout
    def _build(self) -> None:
        """Three rows (Spark, the run's settings, run and open) above the result tabs (`RunResults`)."""
        top = self._build_spark_row()
        settings_row, row = self._build_run_rows()
        self.results = RunResults()
        self.results.apply_button.clicked.connect(self.apply_measured)
        main = QVBoxLayout(self)
        main.addLayout(top)
        main.addLayout(settings_row)
        main.addLayout(row)
        main.addWidget(self.results)

    def _build_spark_row(self) -> QHBoxLayout:
        """The Spark host: its status, master and Python, Attach, and the engine that analyses logs."""
        self.status = QLabel("Spark: detached")
        self.master_edit = QLineEdit(str(self.settings.value("runs/master", "local[*]")))
        self.master_edit.setToolTip("Spark master: local[*], spark://host:7077, yarn, k8s://..., "
                                    "or a Spark Connect server sc://host:15002")
        self.python_edit = QLineEdit(str(self.settings.value("runs/python", "")))
        self.python_edit.setPlaceholderText("Python with pyspark (empty: STORMBOUND_SPARK_PYTHON, else found)")
        self.attach_button = QPushButton("Attach Spark")
        self.attach_button.clicked.connect(self.toggle_attach)
        self.engine_box = QComboBox()
        self.engine_box.addItems(["auto", "embedded", "spark"])
        engine = str(self.settings.value("runs/engine", "auto"))
        engine = "embedded" if engine == "local" else engine
        self.engine_box.setCurrentText(engine if engine in ("auto", "embedded", "spark") else "auto")
        self.engine_box.setToolTip("Where logs are analysed and checked: auto = the embedded engine (DuckDB, "
                                   "in this process, no Java) for a log on this machine; embedded = always here; "
                                   "spark = always on the attached Spark")
        self.engine_box.currentTextChanged.connect(self._engine_changed)
        top = QHBoxLayout()
        w: QWidget
        for w in (self.status, QLabel("master"), self.master_edit, QLabel("python"), self.python_edit,
                  self.attach_button, QLabel("engine"), self.engine_box):
            top.addWidget(w)
        return top

    def _build_run_rows(self) -> tuple[QHBoxLayout, QHBoxLayout]:
        """The run's settings (duration, acker, timeout, max pending, kills) and the row that runs,
        cancels, opens a log or checks reliability."""
        self.duration = QDoubleSpinBox()
        self.duration.setRange(1, 24 * 3600)
        self.duration.setValue(float(str(self.settings.value("runs/duration", 60.0))))
        self.duration.setSuffix(" s")
        self.acker_box = QCheckBox("acker")
        self.acker_box.setChecked(str(self.settings.value("runs/acking", "true")).lower() == "true")
        self.acker_box.setToolTip("Track tuple trees as Storm's acker does (topology.acker.executors = 1); "
                                  "off: spouts ack at emit")
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.1, 3600)
        self.timeout.setValue(float(str(self.settings.value("runs/timeout", 30.0))))
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("topology.message.timeout.secs: a tree pending longer fails (spout_fail, TIMEOUT)")
        self.max_pending = QSpinBox()
        self.max_pending.setRange(0, 1_000_000)
        self.max_pending.setSpecialValueText("no limit")
        self.max_pending.setValue(int(str(self.settings.value("runs/max_pending", 0))))
        self.max_pending.setToolTip(
            "topology.max.spout.pending: a spout waits while this many of its trees are pending")
        self.kill_edit = QLineEdit()  # not remembered: a kill names the bolts of one topology
        self.kill_edit.setPlaceholderText("kill: BOLT@TIME[/DOWN], ...")
        self.kill_edit.setToolTip("Optional: kill bolts' tasks during the run, e.g. 'split@20s/2s, count@40': "
                                  "the queue, batch and tuples reaching it while down are lost, the acker fails "
                                  "their trees and the spouts replay them (docs/spark-runs.md, Killing a task)")
        self.acker_box.toggled.connect(self.timeout.setEnabled)
        self.acker_box.toggled.connect(self.max_pending.setEnabled)
        self.timeout.setEnabled(self.acker_box.isChecked())
        self.max_pending.setEnabled(self.acker_box.isChecked())
        self.run_button = QPushButton("Run current topology")
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.open_button = QPushButton("Open log...")
        self.open_button.clicked.connect(self.open_dialog)
        self.reliability_button = QPushButton("Check reliability")
        self.reliability_button.clicked.connect(self.check_reliability)
        settings_row = QHBoxLayout()
        w: QWidget
        for w in (QLabel("duration"), self.duration, self.acker_box, QLabel("timeout"), self.timeout,
                  QLabel("max pending"), self.max_pending, self.kill_edit):
            settings_row.addWidget(w)
        settings_row.addStretch(1)
        row = QHBoxLayout()
        for w in (self.run_button, self.progress, self.cancel_button, self.open_button, self.reliability_button):
            row.addWidget(w)
        return settings_row, row

    def _update_buttons(self) -> None:
        attached = self.host is not None
        busy = self.running is not None
        self.attach_button.setText("Detach Spark" if attached else "Attach Spark")
        can_read = attached or self.engine_box.currentText() != "spark"
        self.run_button.setEnabled(attached and not busy)
        self.open_button.setEnabled(can_read and not busy)
        self.reliability_button.setEnabled(can_read and not busy and self.log_path is not None)
        self.cancel_button.setEnabled(busy)
        self.results.apply_button.setEnabled(self.measured_topology is not None)

    def _engine_changed(self, engine: str) -> None:
        self.settings.setValue("runs/engine", engine)
        self.controller.engine = engine
        self._update_buttons()

    def _on_progress(self, progress: WorkProgress) -> None:
        if progress.fraction is not None:
            self.progress.setValue(int(progress.fraction * 1000))
        self.progress.setFormat(progress.message)

    def _on_failed(self, message: str) -> None:
        self.progress.setFormat(message)

    # ---- attach / detach
    def toggle_attach(self) -> None:
        if self.host is not None:
            self.detach()
        else:
            self.attach()

    def attach(self) -> CallWorker[Any]:
        """Start the Spark host with the master and Python typed in the panel."""
        self.settings.setValue("runs/master", self.master_edit.text())
        self.settings.setValue("runs/python", self.python_edit.text())
        self.attach_button.setEnabled(False)
        return self.controller.attach(self.python_edit.text().strip(), self.master_edit.text().strip())

    def _reenable_attach(self) -> None:
        self.attach_button.setEnabled(True)

    def detach(self) -> None:
        self.controller.detach()

    # ---- run / open / reliability
    def start_run(self) -> CallWorker[Any] | None:
        """Run the current topology with the panel's settings (remembered for next time)."""
        if self.host is None or self.running is not None:
            return None
        if any(c.unannotated for c in self.document.topology().components):
            # an import's placeholders would drive the workload
            self.controller.failed.emit("Run needs every rate, burst, α and σ annotated (amber values are not)")
            return None
        from app.spark.run_job import parse_kill

        try:
            kills = tuple(parse_kill(item.strip()) for item in self.kill_edit.text().split(",") if item.strip())
        except ValueError as err:
            self.controller.failed.emit(f"kill {err}")
            return None
        options = RunOptions(duration_s=self.duration.value(), acking=self.acker_box.isChecked(),
                             message_timeout_s=self.timeout.value(),
                             max_spout_pending=self.max_pending.value() or None, kills=kills)
        self.settings.setValue("runs/duration", self.duration.value())
        self.settings.setValue("runs/acking", "true" if self.acker_box.isChecked() else "false")
        self.settings.setValue("runs/timeout", self.timeout.value())
        self.settings.setValue("runs/max_pending", self.max_pending.value())
        self.progress.setValue(0)
        return self.controller.start_run(options)

    def match_patterns(self, path: Path) -> CallWorker[Any]:
        """Match the shipped Storm monitor patterns over a run's log, off the GUI thread."""
        return self.controller.match_patterns(path)

    def _on_patterns_started(self) -> None:
        self.results.patterns.summary.setText("matching monitor patterns...")

    def _on_patterns_matched(self, result: MonitorMatches) -> None:
        self.results.patterns.set_matches(result.matches, result.patterns)

    def _on_patterns_failed(self, message: str) -> None:
        self.results.patterns.summary.setText(f"monitor patterns could not run: {message}")

    def cancel(self) -> None:
        if self.controller.cancel():
            self.progress.setFormat("cancelling...")

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open event log", "",
                                              "Event logs (*.jsonl *.json *.csv *.parquet *.log *.txt);;All files (*)")
        if path:
            self.open_log(path)

    def open_log(self, path: str | Path) -> CallWorker[Any] | None:
        """Analyse a log or run folder against the current topology."""
        return self.controller.open_log(path)

    def check_reliability(self) -> CallWorker[Any] | None:
        return self.controller.check_reliability()

    # ---- showing results
    def show_analysis(self, analysis: Analysis, topo: Topology | None = None) -> None:
        """Fill the plot and tables from an analysis of a run of `topo` (default: the current document)."""
        self.controller.set_analysis(analysis, topo)

    def _show_analysis(self, analysis: Analysis) -> None:
        self.results.show_analysis(analysis, self.controller.comparison)

    def apply_measured(self) -> int:
        """Put the measured parameters into the document as one undoable step; returns the components changed."""
        return self.controller.apply_measured()

    def shutdown(self) -> None:
        """Stop the Spark host and wait for background calls (on quit)."""
        self.controller.shutdown()


def create_actions(panel: RunsPanel, parent: QObject) -> list[QAction]:
    """The panel's actions for the Runs menu (Attach / detach Spark, Run, Cancel, Open event log, Check
    reliability, Apply measured values), owned by `parent`, in their menu order."""
    actions = []
    for text, slot, name in (("Attach / detach Spark", panel.toggle_attach, "action_runs_attach"),
                             ("Run current topology", panel.start_run, "action_runs_run"),
                             ("Cancel run", panel.cancel, "action_runs_cancel"),
                             ("Open event log...", panel.open_dialog, "action_runs_open"),
                             ("Check reliability", panel.check_reliability, "action_runs_reliability"),
                             ("Apply measured values", panel.apply_measured, "action_runs_apply")):
        action = QAction(text, parent)
        action.setObjectName(name)
        action.triggered.connect(slot)
        actions.append(action)
    return actions
