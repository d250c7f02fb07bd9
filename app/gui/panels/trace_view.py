"""The lasso trace view: one plot per bolt over time, the loop shaded, a cursor you can step.

A counterexample is a lasso: positions 0..k, then position k+1 repeats `loop_start`,
so positions loop_start..k repeat forever, each pass adding `growth_per_loop` to the
queues. Each bolt's plot shows its queue (after the position's actions, as a step),
the tuples in process (the current batch) and the tuples arriving from each
component it subscribes to. "Unroll loop ×N" appends N more passes of the loop,
shifted by the loop's duration and its queue growth. The cursor steps through the
positions (buttons, Left/Right/Home/End, or a click in a plot), fills the table with
that position's values and reports the acting components (`acting_changed`) so the
canvas can highlight them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QSaveFile, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.formats.trace import BoltStep, Trace, TracePosition, format_time, save_trace
from app.core.topology import TopologyError, parse_topology

QUEUE_PEN = pg.mkPen("#1f77b4", width=2)
PROCESS_PEN = pg.mkPen("#2ca02c", width=1.5, style=Qt.PenStyle.DashLine)
ARRIVAL_COLOURS = ["#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
LOOP_BRUSHES = [pg.mkBrush(255, 191, 0, 60), pg.mkBrush(255, 191, 0, 35)]
CURSOR_PEN = pg.mkPen("#444444", width=1, style=Qt.PenStyle.DotLine)
TABLE_COLUMNS = ["component", "queue", "arrivals", "take", "in process", "emit", "emitted", "buffer", "phase"]


class ExportError(OSError):
    """A file could not be written; the message names the file and the reason."""


def save_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` with QSaveFile: readers see the old file or the whole new one, never half."""
    out = QSaveFile(str(path))
    if not out.open(QIODevice.OpenModeFlag.WriteOnly):
        raise ExportError(f"{path}: {out.errorString()}")
    if out.write(QByteArray(data)) != len(data) or not out.commit():
        reason = out.errorString()
        out.cancelWriting()
        raise ExportError(f"{path}: {reason}")


# ---- the shown positions (Qt-free logic, tested directly) -------------------------------------
@dataclass(frozen=True)
class ShownPosition:
    """One position as displayed: where it comes from in the trace and which loop pass it is in."""

    source: int  # index into trace.positions
    loop_pass: int  # 0 before the loop; 1, 2, ... for the passes of the loop
    time: Fraction
    position: TracePosition  # queues already raised by the passes before this one


def _shifted(position: TracePosition, passes: int, growth: dict[str, int], duration: Fraction) -> TracePosition:
    """The position `passes` loop passes later: same actions, later time, larger queues."""
    if passes == 0:
        return position
    bolts = {name: step.model_copy(update={"queue": step.queue + passes * growth.get(name, 0)})
             for name, step in position.bolts.items()}
    return position.model_copy(update={"time": format_time(position.exact_time + passes * duration), "bolts": bolts})


def unroll(trace: Trace, extra_passes: int = 0) -> list[ShownPosition]:
    """Positions 0..k, the loop repeated `extra_passes` more times, then the closing position.

    With 0 extra passes this is the trace as found (0..k+1, the last repeating loop_start).
    A trace without a loop (a run reaching a queue threshold: loop_start = k+1) is shown as is.
    """
    if extra_passes < 0:
        raise ValueError("extra_passes: must be 0 or more")
    k, start = trace.k, trace.loop_start
    if not has_loop(trace):
        return [ShownPosition(i, 0, p.exact_time, p) for i, p in enumerate(trace.positions)]
    growth, duration = trace.growth_per_loop(), trace.loop_duration()
    shown: list[ShownPosition] = []
    for i in range(k + 1):
        p = trace.positions[i]
        shown.append(ShownPosition(i, 1 if i >= start else 0, p.exact_time, p))
    for r in range(1, extra_passes + 1):
        for i in range(start, k + 1):
            p = _shifted(trace.positions[i], r, growth, duration)
            shown.append(ShownPosition(i, r + 1, p.exact_time, p))
    closing = _shifted(trace.positions[k + 1], extra_passes, growth, duration)
    shown.append(ShownPosition(k + 1, extra_passes + 2, closing.exact_time, closing))
    return shown


def has_loop(trace: Trace) -> bool:
    """A lasso has a loop; a finite run (the threshold property's witness) has loop_start = k+1."""
    return trace.loop_start <= trace.k


def queue_after(step: BoltStep) -> int:
    """The queue after the position's actions: arrivals join it, a take removes the batch."""
    return step.queue + step.arrivals - (step.batch if step.take else 0)


def acting_components(position: TracePosition) -> set[str]:
    """Names of the components that act at a position: emitting spouts, taking or emitting bolts."""
    names = {name for name, s in position.spouts.items() if s.emit}
    names |= {name for name, b in position.bolts.items() if b.take or b.emit}
    return names


def subscriptions_by_bolt(trace: Trace) -> dict[str, list[str]]:
    """For each bolt of the trace, the names of the components it subscribes to (empty if unknown)."""
    try:
        topo = parse_topology(trace.topology)
    except TopologyError:
        return {}
    return {b.name: [c.name for c in topo.sources_of(b.id)] for b in topo.bolts}


def emitted_at(position: TracePosition, name: str) -> int:
    """Tuples component `name` emits at this position (0 when it does not emit)."""
    step = position.spouts.get(name) or position.bolts.get(name)
    if step is None or not step.emit:
        return 0
    return step.emitted


def trace_csv(trace: Trace, shown: list[ShownPosition]) -> str:
    """One row per shown position: index, source position, loop pass, time, then each component's values."""
    spouts = list(trace.positions[0].spouts)
    bolts = list(trace.positions[0].bolts)
    header = ["index", "position", "loop_pass", "time", "time_s"]
    for s in spouts:
        header += [f"{s}.emit", f"{s}.emitted"]
    for b in bolts:
        header += [f"{b}.{f}" for f in ("queue", "arrivals", "take", "batch", "emit", "emitted", "buffer", "phase",
                                        "queue_after")]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for index, sp in enumerate(shown):
        p = sp.position
        row: list[object] = [index, sp.source, sp.loop_pass, p.time, f"{float(sp.time):.6g}"]
        for s in spouts:
            step = p.spouts[s]
            row += [int(step.emit), step.emitted]
        for b in bolts:
            st = p.bolts[b]
            row += [st.queue, st.arrivals, int(st.take), st.batch, int(st.emit), st.emitted, st.buffer, st.phase,
                    queue_after(st)]
        writer.writerow(row)
    return out.getvalue()


def _time_words(shown: ShownPosition) -> str:
    """The exact time, with its decimal value when it is a fraction ("293/75 ≈ 3.907")."""
    text = shown.position.time
    return f"{text} ≈ {float(shown.time):.4g}" if "/" in text else text


# ---- the widget ----------------------------------------------------------------------------------
class TraceView(QWidget):
    """Plots of a lasso trace with a loop region, an unroll control, a stepping cursor and exports."""

    cursor_moved = Signal(int)
    acting_changed = Signal(object)  # set[str] of component names acting at the cursor

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.trace: Trace | None = None
        self.shown: list[ShownPosition] = []
        self.cursor_index = 0
        self.plot_items: dict[str, pg.PlotItem] = {}
        self.loop_regions: list[pg.LinearRegionItem] = []
        self.loop_labels: list[pg.TextItem] = []
        self._cursor_lines: list[pg.InfiniteLine] = []
        self._sources: dict[str, list[str]] = {}
        self.title = QLabel("No trace: verify a property; a counterexample opens here.")
        self.title.setWordWrap(True)
        self._colours: dict[str, str] = {}

        self.first_button = self._tool("|◀", "First position (Home)", self.first)
        self.prev_button = self._tool("◀", "Previous position (Left)", self.step_back)
        self.next_button = self._tool("▶", "Next position (Right)", self.step_forward)
        self.last_button = self._tool("▶|", "Last position (End)", self.last)
        self.unroll_box = QSpinBox()
        self.unroll_box.setRange(0, 50)
        self.unroll_box.setPrefix("unroll loop ×")
        self.unroll_box.setToolTip("Repeat the loop this many more times (times shift by the loop's duration, "
                                   "queues by their growth per loop)")
        self.unroll_box.valueChanged.connect(self.set_unroll)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("PNG image…", self._ask_png)
        menu.addAction("SVG drawing…", self._ask_svg)
        menu.addAction("CSV table…", self._ask_csv)
        menu.addAction("Trace JSON…", self._ask_json)
        self.export_button.setMenu(menu)
        self.position_label = QLabel("")
        self.position_label.setWordWrap(True)  # wraps rather than widening the window past the screen

        bar = QHBoxLayout()
        for w in (self.first_button, self.prev_button, self.next_button, self.last_button):
            bar.addWidget(w)
        bar.addWidget(self.position_label, 1)
        bar.addWidget(self.unroll_box)
        bar.addWidget(self.export_button)

        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        self.plots.scene().sigMouseClicked.connect(self._on_plot_clicked)
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.plots.setMinimumHeight(220)
        self.table.setMinimumWidth(280)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plots)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        for key, slot in ((Qt.Key.Key_Left, self.step_back), (Qt.Key.Key_Right, self.step_forward),
                          (Qt.Key.Key_Home, self.first), (Qt.Key.Key_End, self.last)):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._update_enabled()

    def _tool(self, text: str, tip: str, slot: Callable[[], object]) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # ---- content -----------------------------------------------------------------------------
    def set_trace(self, trace: Trace | None, caption: str = "") -> None:
        """Show a trace (None clears the view); the cursor goes to position 0, no unrolling."""
        self.trace = trace
        self._sources = subscriptions_by_bolt(trace) if trace is not None else {}
        names = [*trace.positions[0].spouts, *trace.positions[0].bolts] if trace is not None else []
        self._colours = {n: ARRIVAL_COLOURS[i % len(ARRIVAL_COLOURS)] for i, n in enumerate(names)}
        if trace is None:
            self.title.setText(caption or "No trace: verify a property; a counterexample opens here.")
        elif not has_loop(trace):
            self.title.setText((caption + " — " if caption else "")
                               + f"a run of {trace.k + 2} positions (no loop: the witness is a finite run).")
        else:
            growth = {n: d for n, d in trace.growth_per_loop().items() if d}
            grows = ", ".join(f"{n} +{d}" for n, d in growth.items()) or "no queue"
            self.title.setText((caption + " — " if caption else "")
                               + f"lasso with k = {trace.k}: positions {trace.loop_start}..{trace.k} repeat forever "
                               f"(every {format_time(trace.loop_duration())} s; per loop: {grows}).")
        self.unroll_box.blockSignals(True)
        self.unroll_box.setValue(0)
        self.unroll_box.blockSignals(False)
        self._rebuild(0)
        self.set_cursor(0)

    def _key_html(self) -> str:
        """One key for every plot: line styles, and a colour per component whose tuples arrive."""
        if self.trace is None:
            return ""
        senders = [n for n in self._colours if any(n in srcs for srcs in self._sources.values())]
        dots = " ".join(f"<span style='color:{self._colours[n]}'>●</span>&nbsp;{n}" for n in senders)
        return ("<span style='color:#1f77b4'>━━</span>&nbsp;queue &nbsp; "
                "<span style='color:#2ca02c'>╌╌</span>&nbsp;in process &nbsp; "
                + (f"arrivals from: {dots} &nbsp; " if dots else "")
                + "<span style='background:#fde9a8'>&nbsp;&nbsp;&nbsp;</span>&nbsp;loop")

    def clear(self, caption: str = "") -> None:
        self.set_trace(None, caption)

    def set_unroll(self, extra_passes: int) -> None:
        """Show the loop `extra_passes` more times, keeping the cursor on the same position of the trace."""
        if self.unroll_box.value() != extra_passes:
            self.unroll_box.setValue(extra_passes)  # re-enters through valueChanged
            return
        keep = self.shown[self.cursor_index].source if self.shown else 0
        self._rebuild(extra_passes)
        index = next((i for i, sp in enumerate(self.shown) if sp.source == keep), 0)
        self.set_cursor(index)

    def _rebuild(self, extra_passes: int) -> None:
        self.plots.clear()
        self.plot_items.clear()
        self.loop_regions.clear()
        self.loop_labels.clear()
        self._cursor_lines.clear()
        trace = self.trace
        self.shown = unroll(trace, extra_passes) if trace is not None else []
        if trace is None:
            self._update_enabled()
            return
        times = [float(sp.time) for sp in self.shown]
        span = (times[-1] - times[0]) or 1.0
        step_x = times + [times[-1] + span * 0.03]
        growth = trace.growth_per_loop()
        first: pg.PlotItem | None = None
        # the key is part of the scene, so PNG and SVG exports carry it too
        self.key_item = self.plots.addLabel(self._key_html(), row=0, col=0, size="8pt", justify="left")
        for row, bolt in enumerate(self.shown[0].position.bolts, start=1):
            plot = self.plots.addPlot(row=row, col=0)
            # the bolt's name as the axis label (a title would cost each plot a text line)
            plot.setLabel("left", f"{bolt}" + (f" (+{growth[bolt]}/loop)" if growth.get(bolt) else ""))
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setMouseEnabled(x=True, y=False)
            steps = [sp.position.bolts[bolt] for sp in self.shown]
            plot.plot(step_x, [queue_after(s) for s in steps], stepMode="center", pen=QUEUE_PEN, name="queue")
            plot.plot(step_x, [s.batch for s in steps], stepMode="center", pen=PROCESS_PEN, name="in process")
            sources = self._sources.get(bolt) or []
            if not sources:
                self._plot_arrivals(plot, times, [s.arrivals for s in steps], "arrivals", ARRIVAL_COLOURS[0])
            for source in sources:
                counts = [emitted_at(sp.position, source) for sp in self.shown]
                self._plot_arrivals(plot, times, counts, f"from {source}", self._colours[source])
            self._shade_loops(plot, extra_passes, labelled=first is None)
            line = pg.InfiniteLine(pos=times[0], angle=90, movable=False, pen=CURSOR_PEN)
            plot.addItem(line, ignoreBounds=True)
            self._cursor_lines.append(line)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self.plot_items[bolt] = plot
        if first is not None:
            first.setXRange(times[0], step_x[-1], padding=0.02)
        last = self.plot_items.get(list(self.plot_items)[-1]) if self.plot_items else None
        if last is not None:
            last.setLabel("bottom", "time", units="s")
        self._update_enabled()

    def _plot_arrivals(self, plot: pg.PlotItem, times: list[float], counts: list[int], name: str,
                       colour: str) -> None:
        xs = [t for t, c in zip(times, counts, strict=True) if c]
        ys = [c for c in counts if c]
        stems_x = [x for t in xs for x in (t, t)]
        stems_y = [y for c in ys for y in (0, c)]
        plot.plot(stems_x, stems_y, pen=pg.mkPen(colour, width=1), connect="pairs")
        plot.plot(xs, ys, pen=None, symbol="o", symbolSize=6, symbolBrush=colour, symbolPen=None, name=name)

    def _shade_loops(self, plot: pg.PlotItem, extra_passes: int, labelled: bool) -> None:
        assert self.trace is not None
        if not has_loop(self.trace):
            return
        start = self.trace.positions[self.trace.loop_start].exact_time
        duration = self.trace.loop_duration()
        for r in range(extra_passes + 1):
            begin, end = start + r * duration, start + (r + 1) * duration
            region = pg.LinearRegionItem(values=(float(begin), float(end)), movable=False,
                                         brush=LOOP_BRUSHES[r % 2], pen=pg.mkPen(None))
            region.setZValue(-10)
            plot.addItem(region, ignoreBounds=True)
            self.loop_regions.append(region)
            if labelled:  # only the top plot: the bolts' plots are short and share the time axis
                text = ("loop (repeats forever)" if extra_passes == 0 else "loop") if r == 0 else f"pass {r + 1}"
                # on the region's left edge, kept near the top of the view whatever the zoom
                label = pg.InfLineLabel(region.lines[0], text, position=0.97, anchors=[(0, 0), (0, 0)],
                                        color="#8a6d00")
                self.loop_labels.append(label)

    def loop_region_bounds(self) -> list[tuple[float, float]]:
        """The shaded loop passes (of the first plot) as (start, end) times."""
        n = len(self.loop_regions) // max(1, len(self.plot_items))
        return [tuple(r.getRegion()) for r in self.loop_regions[:n]]

    # ---- the cursor ----------------------------------------------------------------------------
    def set_cursor(self, index: int) -> None:
        """Move the cursor to shown position `index` (clamped) and update the table and highlight."""
        if not self.shown:
            self.cursor_index = 0
            self.table.setRowCount(0)
            self.position_label.setText("")
            self.acting_changed.emit(set())
            self._update_enabled()
            return
        index = max(0, min(index, len(self.shown) - 1))
        self.cursor_index = index
        shown = self.shown[index]
        for line in self._cursor_lines:
            line.setValue(float(shown.time))
        assert self.trace is not None
        where = "before the loop" if shown.loop_pass == 0 else f"loop pass {shown.loop_pass}"
        closing = shown.source == self.trace.k + 1 and has_loop(self.trace)
        note = f" (= position {self.trace.loop_start}, next pass)" if closing else ""
        self.position_label.setText(f"position {index} of {len(self.shown) - 1}: trace position {shown.source}"
                                    f"{note}, t = {_time_words(shown)} s, {where}")
        self._fill_table(shown.position)
        self._update_enabled()
        self.cursor_moved.emit(index)
        self.acting_changed.emit(acting_components(shown.position))

    def _fill_table(self, position: TracePosition) -> None:
        rows: list[list[str]] = []
        for name, s in position.spouts.items():
            rows.append([name, "", "", "", "", "yes" if s.emit else "", str(s.emitted) if s.emit else "", "", "spout"])
        for name, b in position.bolts.items():
            rows.append([name, f"{b.queue} → {queue_after(b)}", str(b.arrivals), "yes" if b.take else "",
                         str(b.batch), "yes" if b.emit else "", str(b.emitted) if b.emit else "", str(b.buffer),
                         b.phase])
        acting = acting_components(position)
        self.table.setRowCount(len(rows))
        for r, values in enumerate(rows):
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                if values[0] in acting:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)

    def table_values(self) -> dict[str, dict[str, str]]:
        """The table as {component: {column: text}} (what the user reads at the cursor)."""
        out: dict[str, dict[str, str]] = {}
        for r in range(self.table.rowCount()):
            name = self._cell_text(r, 0)
            out[name] = {TABLE_COLUMNS[c]: self._cell_text(r, c) for c in range(1, self.table.columnCount())}
        return out

    def _cell_text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def step_forward(self) -> None:
        self.set_cursor(self.cursor_index + 1)

    def step_back(self) -> None:
        self.set_cursor(self.cursor_index - 1)

    def first(self) -> None:
        self.set_cursor(0)

    def last(self) -> None:
        self.set_cursor(len(self.shown) - 1)

    def cursor_to_time(self, time_s: float) -> None:
        """Move the cursor to the shown position nearest to a time (what a click in a plot does)."""
        if not self.shown:
            return
        best = min(range(len(self.shown)), key=lambda i: (abs(float(self.shown[i].time) - time_s), i))
        self.set_cursor(best)

    def _on_plot_clicked(self, event: Any) -> None:  # pyqtgraph's mouse click event
        scene_pos: QPointF = event.scenePos()
        for plot in self.plot_items.values():
            if plot.vb.sceneBoundingRect().contains(scene_pos):
                self.cursor_to_time(plot.vb.mapSceneToView(scene_pos).x())
                return

    def _update_enabled(self) -> None:
        has = bool(self.shown)
        self.first_button.setEnabled(has and self.cursor_index > 0)
        self.prev_button.setEnabled(has and self.cursor_index > 0)
        self.next_button.setEnabled(has and self.cursor_index < len(self.shown) - 1)
        self.last_button.setEnabled(has and self.cursor_index < len(self.shown) - 1)
        self.unroll_box.setEnabled(has and self.trace is not None and has_loop(self.trace))
        self.export_button.setEnabled(has)

    # ---- exports -------------------------------------------------------------------------------
    def _require_trace(self) -> Trace:
        if self.trace is None:
            raise ExportError("no trace to export: verify a property with a counterexample first")
        return self.trace

    def export_png(self, path: str | Path, width: int | None = None) -> None:
        """The plots as a PNG image (pyqtgraph ImageExporter, written through QSaveFile)."""
        self._require_trace()
        exporter = ImageExporter(self.plots.scene())
        if width is not None:
            exporter.parameters()["width"] = width
        image = exporter.export(toBytes=True)
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if image is None or image.isNull() or not image.save(buffer, "PNG"):
            raise ExportError(f"{path}: the plots could not be rendered as an image")
        save_bytes(path, bytes(buffer.data().data()))

    def export_svg(self, path: str | Path) -> None:
        """The plots as an SVG drawing (pyqtgraph SVGExporter; works with the pinned Qt 6.10)."""
        self._require_trace()
        data = SVGExporter(self.plots.scene()).export(toBytes=True)
        if isinstance(data, str):
            data = data.encode("utf-8")
        save_bytes(path, bytes(data))

    def export_csv(self, path: str | Path) -> None:
        """One row per shown position (unrolled passes included)."""
        trace = self._require_trace()
        save_bytes(path, trace_csv(trace, self.shown).encode("utf-8"))

    def export_json(self, path: str | Path) -> None:
        """The trace as found (not unrolled), in the `stormbound-trace/1` format."""
        save_trace(self._require_trace(), path)

    def _ask(self, title: str, pattern: str, suffix: str, write: Callable[[str], object]) -> None:
        if self.trace is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, title, f"trace{suffix}", pattern)
        if not path:
            return
        if not path.endswith(suffix):
            path += suffix
        try:
            write(path)
        except (OSError, ValueError) as err:
            QMessageBox.warning(self, title, str(err))

    def _ask_png(self) -> None:
        self._ask("Export trace as PNG", "PNG images (*.png)", ".png", self.export_png)

    def _ask_svg(self) -> None:
        self._ask("Export trace as SVG", "SVG drawings (*.svg)", ".svg", self.export_svg)

    def _ask_csv(self) -> None:
        self._ask("Export trace as CSV", "CSV tables (*.csv)", ".csv", self.export_csv)

    def _ask_json(self) -> None:
        self._ask("Export trace JSON", "Trace files (*.trace.json *.json)", ".trace.json", self.export_json)
