"""The Runs panel's result tabs: measured queues, parameters, model vs measured, reliability, patterns.

A view only: the Runs panel (app/gui/panels/runs.py) hands it what its controller found (an `Analysis` with
its `Comparison`, a `ReliabilityReport`, monitor matches). Measured queue series are drawn dashed, in the
Queues tab's own plot and over the plots of a `TracePlots` source (the verification trace view, wired in
by the main window) for the same bolts.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.panels.cep_matches import CepMatchesPanel
from app.measure.analysis import Analysis
from app.measure.model_vs_measured import Comparison
from app.measure.reliability import ReliabilityReport

DASHED = Qt.PenStyle.DashLine
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


class TracePlots(Protocol):
    """Plots per bolt name that measured queues can be drawn over (the verification trace view)."""

    plot_items: dict[str, Any]


class RunResults(QTabWidget):
    """The tabs that show a run: Queues (with the overlay switch), Parameters (with Apply measured values),
    Model vs measured, Reliability, Patterns."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.trace_plots: TracePlots | None = None
        self.overlays: list[Any] = []  # (plot, item) drawn over the trace plots
        self.analysis: Analysis | None = None  # the run shown
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("left", "queue (tuples)")
        self.plot.setLabel("bottom", "time (s)")
        self.plot.addLegend()
        self.overlay_box = QCheckBox("Overlay measured queues on the trace plots")
        self.overlay_box.setChecked(True)
        self.overlay_box.toggled.connect(self.draw_overlays)
        plot_tab = QWidget()
        lay = QVBoxLayout(plot_tab)
        lay.addWidget(self.plot)
        lay.addWidget(self.overlay_box)

        self.parameters = QTableWidget(0, 5)
        self.parameters.setHorizontalHeaderLabels(["component", "parameter", "annotated", "measured", "difference"])
        self.apply_button = QPushButton("Apply measured values")
        self.apply_button.setToolTip("Put the measured rates, bursts, α and σ into the topology (undoable)")
        param_tab = QWidget()
        lay = QVBoxLayout(param_tab)
        lay.addWidget(self.parameters)
        lay.addWidget(self.apply_button)

        self.bolts = QTableWidget(0, 6)
        self.bolts.setHorizontalHeaderLabels(["bolt", "model", "growth/s (model)", "predicted at measured",
                                              "measured slope (95% CI)", "agrees"])
        self.reliability_text = QPlainTextEdit()
        self.reliability_text.setReadOnly(True)
        self.addTab(plot_tab, "Queues")
        self.addTab(param_tab, "Parameters")
        self.addTab(self.bolts, "Model vs measured")
        self.addTab(self.reliability_text, "Reliability")
        self.patterns = CepMatchesPanel()
        self.addTab(self.patterns, "Patterns")

    def set_trace_plots(self, source: TracePlots | None) -> None:
        """Draw measured queues over these plots too."""
        self.trace_plots = source
        self.draw_overlays()

    def show_reliability(self, report: ReliabilityReport) -> None:
        self.reliability_text.setPlainText(report.summary())
        self.setCurrentWidget(self.reliability_text)

    def show_analysis(self, analysis: Analysis, comparison: Comparison | None) -> None:
        """The run's measured queues (plot and overlays) and its comparison with the model (the tables)."""
        self.analysis = analysis
        self.plot.clear()
        for i, (name, comp) in enumerate(sorted(analysis.components.items())):
            if comp.series:
                xs = [x - analysis.start for x, _ in comp.series]
                pen = pg.mkPen(COLOURS[i % len(COLOURS)], width=2, style=DASHED)
                self.plot.plot(xs, [y for _, y in comp.series], pen=pen, name=f"{name} (measured)")
        self._fill_parameters(comparison)
        self._fill_bolts(comparison)
        self.draw_overlays()

    def _fill_parameters(self, comparison: Comparison | None) -> None:
        rows = comparison.parameters if comparison else []
        self.parameters.setRowCount(len(rows))
        for r, p in enumerate(rows):
            diff = p.relative_error
            cells = [p.component, p.parameter, f"{p.annotated:g}", "-" if p.measured is None else f"{p.measured:.4g}",
                     "-" if diff is None else f"{diff:+.1%}"]
            for c, text in enumerate(cells):
                self.parameters.setItem(r, c, QTableWidgetItem(text))

    def _fill_bolts(self, comparison: Comparison | None) -> None:
        rows = comparison.bolts if comparison else []
        self.bolts.setRowCount(len(rows))
        for r, b in enumerate(rows):
            cells = [b.bolt, b.model_status, f"{b.model_growth:.3g}",
                     "-" if b.predicted_growth is None else f"{b.predicted_growth:.3g}",
                     "-" if b.measured_slope is None or b.measured_ci is None else
                     f"{b.measured_slope:+.3f} ({b.measured_ci[0]:+.3f}..{b.measured_ci[1]:+.3f}) {b.measured_verdict}",
                     {True: "yes", False: "no", None: "-"}[b.agrees]]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 4 and b.measured_note:
                    item.setToolTip(b.measured_note)
                self.bolts.setItem(r, c, item)

    def _trace_plot_items(self) -> list[tuple[str, Any]]:
        return list((self.trace_plots.plot_items or {}).items()) if self.trace_plots is not None else []

    def draw_overlays(self, *_: Any) -> None:
        """Dashed measured queue series over the verification trace plots of the same bolts."""
        for plot, item in self.overlays:
            with contextlib.suppress(RuntimeError):  # the trace view rebuilt its plots
                plot.removeItem(item)
        self.overlays.clear()
        analysis = self.analysis
        if analysis is None or not self.overlay_box.isChecked():
            return
        for name, plot in self._trace_plot_items():
            comp = analysis.components.get(name)
            if comp is None or not comp.series:
                continue
            item = pg.PlotDataItem([x - analysis.start for x, _ in comp.series], [y for _, y in comp.series],
                                   pen=pg.mkPen("#444444", width=1.5, style=DASHED), name="measured")
            plot.addItem(item)
            self.overlays.append((plot, item))
