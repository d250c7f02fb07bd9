"""The Runs panel: attach Spark, run the current topology, open a log, compare and apply measured values.

Plug-in (`install(window)`): adds the Runs dock and entries to the Runs menu. Spark work
goes through the Spark host process (`app.runs.client.SparkHost`); analysing or checking a
log runs in this process when the engine setting allows it (`auto`: small logs,
app.runs.engine_choice), so a log can be opened without attaching Spark. Each call runs in
a `HostCall` QThread; its signals reach only bound methods of this panel (GUI thread).
Measured queue series are drawn dashed, in the panel's own plot and over the verification
trace plots of the same bolts when those exist.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pyqtgraph as pg
from PySide6.QtCore import QObject, QThread, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.topology import Topology
from app.runs.analysis import Analysis
from app.runs.compare import Comparison, calibrate, compare
from app.runs.reliability import ReliabilityConfig, ReliabilityReport, run_settings
from app.gui.panels.cep_matches import CepMatchesPanel

DASHED = Qt.PenStyle.DashLine
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


class HostCall(QThread):
    """One blocking call on the Spark host (attach, or one request) in a background thread."""

    progress = Signal(float, str)
    result_ready = Signal(object)
    failed = Signal(str)

    def __init__(self, work: Callable[["HostCall"], Any], parent: QObject | None = None):
        super().__init__(parent)
        self.work = work
        self.request_id: int | None = None

    def report(self, fraction: float, message: str) -> None:
        self.progress.emit(fraction, message)

    def run(self) -> None:  # noqa: D401 - QThread entry point
        try:
            self.result_ready.emit(self.work(self))
        except Exception as err:  # noqa: BLE001 - shown as one line in the panel
            self.failed.emit(str(err) or type(err).__name__)


def _default_host_factory(python: str | None, master: str | None):
    from app.runs.client import SparkHost

    return SparkHost(python=python or None, master=master or None)


class RunsPanel(QWidget):
    """Spark status, run with progress and Cancel, queue plots, parameters, comparison, reliability."""

    analysis_ready = Signal(object)
    run_finished = Signal(str)

    def __init__(self, window: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.window = window
        self.document = window.document
        self.settings = window.settings
        self.host_factory = _default_host_factory
        self.host: Any = None
        self.calls: set[HostCall] = set()
        self.running: HostCall | None = None
        self.analysis: Analysis | None = None
        self.comparison: Comparison | None = None
        self.measured_topology: Topology | None = None
        self.report: ReliabilityReport | None = None
        self.log_path: Path | None = None
        self.dock: Any = None  # the QDockWidget holding the panel, once installed
        self.overlays: list[Any] = []
        self._build()
        self._update_buttons()

    # ---- layout
    def _build(self) -> None:
        self.status = QLabel("Spark: detached")
        self.master_edit = QLineEdit(str(self.settings.value("runs/master", "local[*]")))
        self.master_edit.setToolTip("Spark master: local[*], spark://host:7077, yarn, k8s://..., "
                                    "or a Spark Connect server sc://host:15002")
        self.python_edit = QLineEdit(str(self.settings.value("runs/python", "")))
        self.python_edit.setPlaceholderText("Python with pyspark (empty: STORMBOUND_SPARK_PYTHON or this one)")
        self.attach_button = QPushButton("Attach Spark")
        self.attach_button.clicked.connect(self.toggle_attach)
        self.engine_box = QComboBox()
        self.engine_box.addItems(["auto", "local", "spark"])
        engine = str(self.settings.value("runs/engine", "auto"))
        self.engine_box.setCurrentText(engine if engine in ("auto", "local", "spark") else "auto")
        self.engine_box.setToolTip("Where logs are analysed and checked: auto = in this process when small "
                                   "(no Java), on the attached Spark when large; local = always here; "
                                   "spark = always on the attached Spark")
        self.engine_box.currentTextChanged.connect(self._engine_changed)
        top = QHBoxLayout()
        for w in (self.status, QLabel("master"), self.master_edit, QLabel("python"), self.python_edit, self.attach_button,
                  QLabel("engine"), self.engine_box):
            top.addWidget(w)

        self.duration = QDoubleSpinBox()
        self.duration.setRange(1, 24 * 3600)
        self.duration.setValue(float(self.settings.value("runs/duration", 60.0)))
        self.duration.setSuffix(" s")
        self.acker_box = QCheckBox("acker")
        self.acker_box.setChecked(str(self.settings.value("runs/acking", "true")).lower() == "true")
        self.acker_box.setToolTip("Track tuple trees as Storm's acker does (topology.acker.executors = 1); "
                                  "off: spouts ack at emit")
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.1, 3600)
        self.timeout.setValue(float(self.settings.value("runs/timeout", 30.0)))
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("topology.message.timeout.secs: a tree pending longer fails (spout_fail, TIMEOUT)")
        self.max_pending = QSpinBox()
        self.max_pending.setRange(0, 1_000_000)
        self.max_pending.setSpecialValueText("no limit")
        self.max_pending.setValue(int(self.settings.value("runs/max_pending", 0)))
        self.max_pending.setToolTip("topology.max.spout.pending: a spout waits while this many of its trees are pending")
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
        for w in (QLabel("duration"), self.duration, self.acker_box, QLabel("timeout"), self.timeout,
                  QLabel("max pending"), self.max_pending):
            settings_row.addWidget(w)
        settings_row.addStretch(1)
        row = QHBoxLayout()
        for w in (self.run_button, self.progress, self.cancel_button, self.open_button, self.reliability_button):
            row.addWidget(w)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("left", "queue (tuples)")
        self.plot.setLabel("bottom", "time (s)")
        self.plot.addLegend()
        self.overlay_box = QCheckBox("Overlay measured queues on the trace plots")
        self.overlay_box.setChecked(True)
        self.overlay_box.toggled.connect(self._draw_overlays)
        plot_tab = QWidget()
        lay = QVBoxLayout(plot_tab)
        lay.addWidget(self.plot)
        lay.addWidget(self.overlay_box)

        self.parameters = QTableWidget(0, 5)
        self.parameters.setHorizontalHeaderLabels(["component", "parameter", "annotated", "measured", "difference"])
        self.apply_button = QPushButton("Apply measured values")
        self.apply_button.setToolTip("Put the measured rates, bursts, α and σ into the topology (undoable)")
        self.apply_button.clicked.connect(self.apply_measured)
        param_tab = QWidget()
        lay = QVBoxLayout(param_tab)
        lay.addWidget(self.parameters)
        lay.addWidget(self.apply_button)

        self.bolts = QTableWidget(0, 6)
        self.bolts.setHorizontalHeaderLabels(["bolt", "model", "growth/s (model)", "predicted at measured",
                                              "measured slope (95% CI)", "agrees"])
        self.reliability_text = QPlainTextEdit()
        self.reliability_text.setReadOnly(True)
        self.tabs = QTabWidget()
        self.tabs.addTab(plot_tab, "Queues")
        self.tabs.addTab(param_tab, "Parameters")
        self.tabs.addTab(self.bolts, "Model vs measured")
        self.tabs.addTab(self.reliability_text, "Reliability")
        self.patterns = CepMatchesPanel()
        self.tabs.addTab(self.patterns, "Patterns")

        main = QVBoxLayout(self)
        main.addLayout(top)
        main.addLayout(settings_row)
        main.addLayout(row)
        main.addWidget(self.tabs)

    def _update_buttons(self) -> None:
        attached = self.host is not None
        busy = self.running is not None
        self.attach_button.setText("Detach Spark" if attached else "Attach Spark")
        can_read = attached or self.engine_box.currentText() != "spark"
        self.run_button.setEnabled(attached and not busy)
        self.open_button.setEnabled(can_read and not busy)
        self.reliability_button.setEnabled(can_read and not busy and self.log_path is not None)
        self.cancel_button.setEnabled(busy)
        self.apply_button.setEnabled(self.measured_topology is not None)

    def _engine_changed(self, engine: str) -> None:
        self.settings.setValue("runs/engine", engine)
        self._update_buttons()

    @staticmethod
    def _engine_for(path: Path, host: Any, engine: str) -> str:
        """'local' or 'spark' for a log (called off the GUI thread: sizing a log reads it)."""
        from app.runs.engine_choice import choose_engine

        try:
            choice = choose_engine(path, engine)
        except Exception:  # noqa: BLE001 - a log we cannot size: Spark, if attached, reports its own error
            if host is not None and engine != "local":
                return "spark"
            raise
        if choice.engine == "spark" and host is None:
            raise RuntimeError(f"this log needs Spark ({choice.reason}): attach Spark first, "
                               f"or choose the engine 'local'")
        return choice.engine

    def _analyse(self, call: "HostCall", host: Any, path: Path, engine: str) -> dict[str, Any]:
        if self._engine_for(path, host, engine) == "local":
            from app.runs.analysis import analyze_path_local

            call.report(0.3, "analysing in this process")
            return analyze_path_local(path.resolve()).model_dump()
        return host.request("analyze", on_progress=call.report, path=str(path.resolve()))

    # ---- calls in the background
    def _call(self, work: Callable[[HostCall], Any], done: Callable[[Any], None]) -> HostCall:
        call = HostCall(work, self)
        call.progress.connect(self._on_progress)
        call.result_ready.connect(done)
        call.failed.connect(self._on_failed)
        call.finished.connect(self._on_call_finished)
        self.calls.add(call)
        call.start()
        return call

    def _on_call_finished(self) -> None:
        call = self.sender()
        self.calls.discard(call)  # type: ignore[arg-type]
        if call is self.running:
            self.running = None
        self._update_buttons()

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.progress.setFormat(message)

    def _on_failed(self, message: str) -> None:
        if self.host is None:
            self.status.setText(f"Spark: {message}")
        self.progress.setFormat(message)
        if hasattr(self.window, "show_message"):
            self.window.show_message(message)

    # ---- attach / detach
    def toggle_attach(self) -> None:
        if self.host is not None:
            self.detach()
        else:
            self.attach()

    def attach(self) -> HostCall:
        self.settings.setValue("runs/master", self.master_edit.text())
        self.settings.setValue("runs/python", self.python_edit.text())
        host = self.host_factory(self.python_edit.text().strip(), self.master_edit.text().strip())
        self.status.setText("Spark: starting...")
        self.attach_button.setEnabled(False)

        def work(call: HostCall) -> Any:
            host.start()
            return host

        call = self._call(work, self._on_attached)
        call.finished.connect(self._reenable_attach)
        return call

    def _reenable_attach(self) -> None:
        self.attach_button.setEnabled(True)

    def _on_attached(self, host: Any) -> None:
        self.host = host
        info = getattr(host, "info", {}) or {}
        kind = "Spark Connect " if info.get("connect") else ""
        self.status.setText(f"Spark: attached ({kind}{info.get('master', '?')}, Spark {info.get('spark_version', '?')}, "
                            f"{info.get('slots', '?')} task slots)")
        self._update_buttons()

    def detach(self) -> None:
        if self.running is not None:
            self.cancel()
        host, self.host = self.host, None
        if host is not None:
            host.close()
        self.status.setText("Spark: detached")
        self._update_buttons()

    # ---- run / open / reliability
    def start_run(self) -> HostCall | None:
        if self.host is None or self.running is not None:
            return None
        from app.runs.engine import RunSpec

        topo = self.document.topology()
        spec = RunSpec(topology=topo, duration_s=self.duration.value(), acking=self.acker_box.isChecked(),
                       message_timeout_s=self.timeout.value(), max_spout_pending=self.max_pending.value() or None)
        out = Path(tempfile.mkdtemp(prefix=f"stormbound-run-{topo.name}-"))
        self.settings.setValue("runs/duration", self.duration.value())
        self.settings.setValue("runs/acking", "true" if self.acker_box.isChecked() else "false")
        self.settings.setValue("runs/timeout", self.timeout.value())
        self.settings.setValue("runs/max_pending", self.max_pending.value())
        host, engine = self.host, self.engine_box.currentText()

        def work(call: HostCall) -> Any:
            call.request_id = host.submit("run", spec=json.loads(spec.model_dump_json()), out=str(out))
            host.wait(call.request_id, on_progress=call.report)
            call.report(0.99, "analysing")
            return str(out), self._analyse(call, host, out, engine), topo

        self.progress.setValue(0)
        self.running = self._call(work, self._on_run_done)
        self._update_buttons()
        return self.running

    def _on_run_done(self, result: Any) -> None:
        out, data, topo = result
        self.log_path = Path(out)
        if self.dock is not None:
            self.dock.raise_()
        self.show_analysis(Analysis.model_validate(data), topo)
        self.match_patterns(self.log_path)
        self.progress.setValue(1000)
        self.progress.setFormat(f"run written to {out}")
        self.run_finished.emit(out)

    def match_patterns(self, path: Path) -> HostCall:
        """Match the shipped Storm monitor patterns over the run's log, off the GUI thread."""
        self.patterns.summary.setText("matching monitor patterns...")

        def work(call: HostCall) -> Any:
            from app.runs.eventlog import read_log
            from app.runs.monitors import load_monitors, run_monitors

            patterns = load_monitors()
            return run_monitors(read_log(path), patterns=patterns), patterns

        call = HostCall(work, self)
        call.result_ready.connect(self._on_patterns_matched)
        call.failed.connect(self._on_patterns_failed)
        call.finished.connect(self._on_call_finished)
        self.calls.add(call)
        call.start()
        return call

    def _on_patterns_matched(self, result: Any) -> None:
        matches, patterns = result
        self.patterns.set_matches(matches, patterns)

    def _on_patterns_failed(self, message: str) -> None:
        self.patterns.summary.setText(f"monitor patterns could not run: {message}")

    def cancel(self) -> None:
        call = self.running
        if call is not None and call.request_id is not None and self.host is not None:
            self.host.cancel(call.request_id)
            self.progress.setFormat("cancelling...")

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open event log", "",
                                              "Event logs (*.jsonl *.json *.csv *.parquet *.log *.txt);;All files (*)")
        if path:
            self.open_log(path)

    def open_log(self, path: str | Path) -> HostCall | None:
        """Analyse a log or run folder against the current topology."""
        if self.running is not None or (self.host is None and self.engine_box.currentText() == "spark"):
            return None
        host, engine = self.host, self.engine_box.currentText()
        topo = self.document.topology()

        def work(call: HostCall) -> Any:
            return str(path), self._analyse(call, host, Path(path), engine), topo

        self.running = self._call(work, self._on_run_done)
        self._update_buttons()
        return self.running

    def check_reliability(self) -> HostCall | None:
        if self.log_path is None or self.running is not None or (
                self.host is None and self.engine_box.currentText() == "spark"):
            return None
        host, path, topo = self.host, self.log_path, self.document.topology()
        engine = self.engine_box.currentText()

        def work(call: HostCall) -> Any:  # run.json is read here, off the GUI thread
            config = ReliabilityConfig.from_topology(topo, **run_settings(path))
            if self._engine_for(path, host, engine) == "local":
                from app.runs.reliability import check_reliability_path_local

                call.report(0.3, "checking in this process")
                return check_reliability_path_local(path.resolve(), config).model_dump()
            return host.request("reliability", on_progress=call.report, path=str(path), config=config.model_dump())

        self.running = self._call(work, self._on_reliability)
        self._update_buttons()
        return self.running

    def _on_reliability(self, data: Any) -> None:
        self.show_reliability(ReliabilityReport.model_validate(data))

    # ---- showing results
    def show_reliability(self, report: ReliabilityReport) -> None:
        self.report = report
        self.reliability_text.setPlainText(report.summary())
        self.tabs.setCurrentWidget(self.reliability_text)

    def show_analysis(self, analysis: Analysis, topo: Topology | None = None) -> None:
        """Fill the plot and tables from an analysis of a run of `topo` (default: the current document)."""
        topo = topo or self.document.topology()
        self.analysis = analysis
        known = {c.name for c in topo.components}
        fits = all(name in known for name in analysis.components)
        self.comparison = compare(topo, analysis) if fits else None
        self.measured_topology = calibrate(self.document.topology(), analysis) if fits else None
        self.plot.clear()
        for i, (name, comp) in enumerate(sorted(analysis.components.items())):
            if comp.series:
                xs = [x - analysis.start for x, _ in comp.series]
                pen = pg.mkPen(COLOURS[i % len(COLOURS)], width=2, style=DASHED)
                self.plot.plot(xs, [y for _, y in comp.series], pen=pen, name=f"{name} (measured)")
        self._fill_parameters()
        self._fill_bolts()
        self._draw_overlays()
        self.analysis_ready.emit(analysis)
        self._update_buttons()

    def _fill_parameters(self) -> None:
        rows = self.comparison.parameters if self.comparison else []
        self.parameters.setRowCount(len(rows))
        for r, p in enumerate(rows):
            diff = p.relative_error
            cells = [p.component, p.parameter, f"{p.annotated:g}", "-" if p.measured is None else f"{p.measured:.4g}",
                     "-" if diff is None else f"{diff:+.1%}"]
            for c, text in enumerate(cells):
                self.parameters.setItem(r, c, QTableWidgetItem(text))

    def _fill_bolts(self) -> None:
        rows = self.comparison.bolts if self.comparison else []
        self.bolts.setRowCount(len(rows))
        for r, b in enumerate(rows):
            cells = [b.bolt, b.model_status, f"{b.model_growth:.3g}",
                     "-" if b.predicted_growth is None else f"{b.predicted_growth:.3g}",
                     "-" if b.measured_slope is None else
                     f"{b.measured_slope:+.3f} ({b.measured_ci[0]:+.3f}..{b.measured_ci[1]:+.3f}) {b.measured_verdict}",
                     {True: "yes", False: "no", None: "-"}[b.agrees]]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 4 and b.measured_note:
                    item.setToolTip(b.measured_note)
                self.bolts.setItem(r, c, item)

    def _trace_plots(self) -> dict[str, Any]:
        panel = getattr(self.window, "verification_panel", None)
        view = getattr(panel, "trace_view", None)
        return dict(getattr(view, "plot_items", {}) or {})

    def _draw_overlays(self, *_: Any) -> None:
        """Dashed measured queue series over the verification trace plots of the same bolts."""
        for plot, item in self.overlays:
            try:
                plot.removeItem(item)
            except RuntimeError:
                pass  # the trace view rebuilt its plots
        self.overlays.clear()
        if self.analysis is None or not self.overlay_box.isChecked():
            return
        for name, plot in self._trace_plots().items():
            comp = self.analysis.components.get(name)
            if comp is None or not comp.series:
                continue
            item = pg.PlotDataItem([x - self.analysis.start for x, _ in comp.series], [y for _, y in comp.series],
                                   pen=pg.mkPen("#444444", width=1.5, style=DASHED), name="measured")
            plot.addItem(item)
            self.overlays.append((plot, item))

    def apply_measured(self) -> int:
        """Put the measured parameters into the document as one undoable step; returns the components changed."""
        if self.measured_topology is None:
            return 0
        from app.gui.commands import SetComponentFieldsCommand

        current = self.document.topology()
        changes: list[tuple[str, dict[str, Any]]] = []
        for new in self.measured_topology.components:
            try:
                old = current.component(new.name)
            except KeyError:
                continue
            fields = {k: getattr(new, k) for k in ("rate", "burst", "alpha", "sigma")
                      if hasattr(new, k) and hasattr(old, k) and getattr(new, k) != getattr(old, k)}
            if fields:
                changes.append((old.id, fields))
        if not changes:
            return 0
        stack = self.document.undo_stack
        stack.beginMacro("Apply measured values")
        for ident, fields in changes:
            stack.push(SetComponentFieldsCommand(self.document, ident, fields, merge=False))
        stack.endMacro()
        return len(changes)

    def shutdown(self) -> None:
        """Stop the Spark host and wait for background calls (on quit)."""
        self.detach()
        for call in list(self.calls):
            call.wait(5000)


def install(window: Any) -> RunsPanel:
    """Add the Runs panel and the Runs menu entries (plug-in contract)."""
    panel = RunsPanel(window)
    panel.dock = window.add_panel(panel, "Runs")
    # share the bottom area with the trace view (tabs) instead of widening the window
    trace_dock = getattr(getattr(window, "verification_panel", None), "trace_dock", None)
    if trace_dock is not None:
        window.tabifyDockWidget(trace_dock, panel.dock)
        trace_dock.raise_()
    window.runs_panel = panel
    menu = window.menu("Runs")
    for text, slot, name in (("Attach / detach Spark", panel.toggle_attach, "action_runs_attach"),
                             ("Run current topology", panel.start_run, "action_runs_run"),
                             ("Cancel run", panel.cancel, "action_runs_cancel"),
                             ("Open event log...", panel.open_dialog, "action_runs_open"),
                             ("Check reliability", panel.check_reliability, "action_runs_reliability"),
                             ("Apply measured values", panel.apply_measured, "action_runs_apply")):
        action = QAction(text, window)
        action.setObjectName(name)
        action.triggered.connect(slot)
        menu.addAction(action)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(panel.shutdown)
    return panel
