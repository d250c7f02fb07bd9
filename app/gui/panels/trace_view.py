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
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import BadInput
from app.core.formats.trace import BoltStep, SpoutStep, Trace, TracePosition, WorkerStep, save_trace
from app.core.trace_series import (  # the Qt-free half, re-exported for the view's callers and tests
    ShownPosition,
    acting_components,
    describe_trace,
    emitted_at,
    has_failures,
    has_loop,
    max_unroll,
    queue_after,
    subscriptions_by_bolt,
    trace_series,
    unroll,
)
from app.gui.trace_plots import (
    DrawnTrace,
    RenderError,
    component_colours,
    draw_trace,
    png_bytes,
    show_range,
    svg_bytes,
)

__all__ = ["ExportError", "ShownPosition", "TraceExports", "TraceView", "acting_components", "emitted_at", "has_loop",
           "queue_after", "save_bytes", "subscriptions_by_bolt", "trace_csv", "unroll"]

CURSOR_PEN = pg.mkPen("#444444", width=1, style=Qt.PenStyle.DotLine)
MAX_UNROLL = 50  # loop passes the unroll control offers (fewer for a long loop: trace_series.max_unroll)
DETAIL_DELAY_MS = 60  # after a zoom, pan or resize, the series are redrawn for the new range this much later
QWIDGETSIZE_MAX = 16_777_215  # Qt's "no maximum"
KEY_PX = 90  # the key under the plots (up to four lines) and the layout's margins
TABLE_COLUMNS = ["component", "queue", "arrivals", "take", "in process", "emit", "emitted", "buffer", "phase"]


class ExportError(BadInput, OSError):
    """A file could not be written; the message names the file and the reason."""


def save_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` through the one writer (app/core/fileio.write_output; the user chose the file in a
    dialog): atomic, the target's mode kept, a folder, pipe or device refused."""
    from app.core.fileio import OutputRefused, write_output

    try:
        write_output(path, data, force=True)
    except (OSError, OutputRefused) as err:
        raise ExportError(f"{path}: {err}") from None


def trace_csv(trace: Trace, shown: list[ShownPosition]) -> str:
    """One row per shown position: index, source position, loop pass, time, then each component's values."""
    spouts = list(trace.positions[0].spouts)
    bolts = list(trace.positions[0].bolts)
    failures = has_failures(trace)  # the columns of docs/model.md section 7.5, only for a trace with failures
    header = ["index", "position", "loop_pass", "time", "time_s"]
    for s in spouts:
        header += [f"{s}.emit", f"{s}.emitted"] + ([f"{s}.backlog", f"{s}.replayed"] if failures else [])
    for b in bolts:
        header += [f"{b}.{f}" for f in ("queue", "arrivals", "take", "batch", "emit", "emitted", "buffer", "phase",
                                        "queue_after")]
        header += [f"{b}.{f}" for f in ("fail", "recover", "lost", "replays")] if failures else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for index, sp in enumerate(shown):
        p = sp.position
        row: list[object] = [index, sp.source, sp.loop_pass, p.time, f"{float(sp.time):.6g}"]
        for s in spouts:
            step = p.spouts[s]
            row += [int(step.emit), step.emitted] + ([step.backlog, step.replayed] if failures else [])
        for b in bolts:
            st = p.bolts[b]
            row += [st.queue, st.arrivals, int(st.take), st.batch, int(st.emit), st.emitted, st.buffer, st.phase,
                    queue_after(st)]
            if failures:
                row += [int(st.fail), int(st.recover), st.lost,
                        " ".join(f"{k}={v}" for k, v in (st.replays or {}).items() if v)]
        writer.writerow(row)
    return out.getvalue()


def _streams_text(values: dict[str, int | str] | None) -> str:
    """Per-stream values as the table shows them: "default 2, status 1" (empty without streams)."""
    return ", ".join(f"{stream} {value}" for stream, value in (values or {}).items())


def _emitted_text(step: SpoutStep | BoltStep) -> str:
    """Tuples emitted, and on which streams for a component with declared streams: "3 (default 2, status 1)"."""
    if step.emitted_by_stream is None:
        return str(step.emitted)
    return f"{step.emitted} ({_streams_text(dict(step.emitted_by_stream))})"


def _replay_words(step: SpoutStep) -> str:
    """A spout's replays at a position (docs/model.md section 7.3): ", 1 replayed, backlog 4"; "" without."""
    words = ([f"{step.replayed} replayed"] if step.replayed else []) + (
        [f"backlog {step.backlog}"] if step.backlog else [])
    return "".join(f", {w}" for w in words)


def _failure_words(step: BoltStep) -> str:
    """A bolt's failure at a position (docs/model.md section 7.2): " (fails here, lost 4, replays S 4)"."""
    words = (["fails here"] if step.fail else []) + (["recovers here"] if step.recover else []) + (
        [f"lost {step.lost}"] if step.lost else [])
    replays = {s: r for s, r in (step.replays or {}).items() if r}
    if replays:
        words.append("replays " + ", ".join(f"{s} {r}" for s, r in replays.items()))
    return f" ({', '.join(words)})" if words else ""


def worker_words(step: WorkerStep) -> str:
    """A worker at a position (docs/model.md 9.5): "dies here: its executors stop …; the trees it breaks are replayed
    at the message timeout (S 2)"."""
    words = []
    if step.death:
        replays = ", ".join(f"{s} {r}" for s, r in (step.replays or {}).items() if r)
        words.append("dies here: its executors stop (a bolt it runs whole fails, one it runs part of loses their "
                     "share, a spout it runs stops until the restart)" + (
            f"; the trees it breaks are replayed at the message timeout ({replays})" if replays else ""))
    if step.restart:
        words.append("back here (restarted)")
    released = ", ".join(f"{s} {r}" for s, r in (step.released or {}).items() if r)
    if released:
        words.append(f"message timeout of its last death: replays {released} join the backlog")
    return "worker: " + "; ".join(words)


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
        self.drawn = DrawnTrace()  # everything the last draw made (failure intervals, lost and replay markers)
        self._cursor_lines: list[pg.InfiniteLine] = []
        self.title = QLabel("No trace: verify a property; a counterexample opens here.")
        self.title.setWordWrap(True)
        self._colours: dict[str, str] = {}
        # a zoom or a resize redraws the series for the time range shown, once the view settles: exact values
        # when few positions are in range, per-pixel bands when more than the plot has pixels
        self._detail_timer = QTimer(self)
        self._detail_timer.setSingleShot(True)
        self._detail_timer.setInterval(DETAIL_DELAY_MS)
        self._detail_timer.timeout.connect(self.refresh_detail)

        self.first_button = self._tool("|◀", "First position (Home)", self.first)
        self.prev_button = self._tool("◀", "Previous position (Left)", self.step_back)
        self.next_button = self._tool("▶", "Next position (Right)", self.step_forward)
        self.last_button = self._tool("▶|", "Last position (End)", self.last)
        self.unroll_box = QSpinBox()
        self.unroll_box.setRange(0, MAX_UNROLL)
        self.unroll_box.setPrefix("unroll loop ×")
        self.unroll_box.setToolTip("Repeat the loop this many more times (times shift by the loop's duration, "
                                   "queues by their growth per loop)")
        self.unroll_box.valueChanged.connect(self.set_unroll)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        self.exports = TraceExports(self)
        menu.addAction("PNG image…", self.exports.ask_png)
        menu.addAction("SVG drawing…", self.exports.ask_svg)
        menu.addAction("CSV table…", self.exports.ask_csv)
        menu.addAction("Trace JSON…", self.exports.ask_json)
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
        # the growing bolts' plots large, the others small below them: scrolled, never squeezed together
        self.plots_scroll = QScrollArea()
        self.plots_scroll.setWidgetResizable(True)
        self.plots_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plots_scroll.setWidget(self.plots)
        self.table.setMinimumWidth(220)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plots_scroll)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([3000, 1000])  # the plots three quarters of the width, the table the rest

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
        names = [*trace.positions[0].spouts, *trace.positions[0].bolts] if trace is not None else []
        self._colours = component_colours(names)
        if trace is None:
            self.title.setText(caption or "No trace: verify a property; a counterexample opens here.")
        else:
            self.title.setText((caption + " — " if caption else "") + describe_trace(trace))
        self.unroll_box.blockSignals(True)
        self.unroll_box.setValue(0)
        # a long lasso's loop has thousands of positions: no more passes than MAX_SHOWN_POSITIONS allows
        self.unroll_box.setMaximum(max_unroll(trace, MAX_UNROLL) if trace is not None else MAX_UNROLL)
        self.unroll_box.blockSignals(False)
        self._rebuild(0)
        self.set_cursor(0)

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
        grid = self.plots.ci.layout
        for row in self.drawn.row_heights:  # the last trace's row heights go with its plots
            grid.setRowMinimumHeight(row, 0)
            grid.setRowMaximumHeight(row, QWIDGETSIZE_MAX)
        self.plots.setMinimumHeight(220)
        self.plots.clear()
        self.plot_items.clear()
        self.loop_regions.clear()
        self.loop_labels.clear()
        self.drawn = DrawnTrace()
        self._cursor_lines.clear()
        trace = self.trace
        if trace is None:
            self.shown = []
            self._update_enabled()
            return
        series = trace_series(trace, extra_passes)
        self.shown = series.shown
        # the key wraps at the width shown: a long one would widen the plots past the scroll area's edge
        width = max(300, self.plots_scroll.viewport().width() - 20)
        drawn = self.drawn = draw_trace(self.plots, series, self._colours, width_px=width, key_last=True)
        # every plot at its own height (FOCUS_PX or CONTEXT_PX): the scroll area shows what does not fit
        self.plots.setMinimumHeight(max(220, drawn.height + KEY_PX))
        self.plots_scroll.verticalScrollBar().setValue(0)
        self.key_item = drawn.key
        self.plot_items.update(drawn.plots)
        self.loop_regions.extend(drawn.loop_regions)
        self.loop_labels.extend(drawn.loop_labels)
        for plot in drawn.plots.values():
            line = pg.InfiniteLine(pos=series.times[0], angle=90, movable=False, pen=CURSOR_PEN)
            plot.addItem(line, ignoreBounds=True)
            self._cursor_lines.append(line)
        if drawn.plots:  # the plots share the time axis: the first one's view says what is shown
            view = next(iter(drawn.plots.values())).vb
            view.sigXRangeChanged.connect(self._detail_timer.start)
            view.sigResized.connect(self._detail_timer.start)
        self._update_enabled()

    def refresh_detail(self) -> None:
        """Redraw the series for the time range the plots show, as many buckets as they are pixels wide."""
        if not self.drawn.plots:
            return
        view = next(iter(self.drawn.plots.values())).vb
        (t0, t1), pixels = view.viewRange()[0], int(view.width())
        if pixels > 0 and self.drawn.shown_range != (t0, t1, pixels):
            show_range(self.drawn, t0, t1, pixels)

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
            rows.append([name, "", "", "", "", "yes" if s.emit else "", _emitted_text(s) if s.emit else "",
                         _streams_text(s.buffer_by_stream), "spout" + _replay_words(s)])
        for name, b in position.bolts.items():
            buffer = str(b.buffer) if b.buffer_by_stream is None else _streams_text(b.buffer_by_stream)
            rows.append([name, f"{b.queue} → {queue_after(b)}", str(b.arrivals), "yes" if b.take else "",
                         str(b.batch), "yes" if b.emit else "", _emitted_text(b) if b.emit else "", buffer,
                         b.phase + _failure_words(b)])
        for name, w in (position.workers or {}).items():  # docs/model.md 9.5: a worker's death, restart, replays
            rows.append([f"worker {name}", "", "", "", "", "", "", "", worker_words(w)])
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


class TraceExports:
    """What the trace view writes to files: its plots as PNG or SVG, its shown positions as CSV, the trace as
    found as JSON (each through `save_bytes` or the trace writer), and the save dialogs of its Export menu."""

    def __init__(self, view: TraceView) -> None:
        self.view = view

    def _require_trace(self) -> Trace:
        if self.view.trace is None:
            raise ExportError("no trace to export: verify a property with a counterexample first")
        return self.view.trace

    def export_png(self, path: str | Path, width: int | None = None) -> None:
        """The plots as a PNG image (pyqtgraph ImageExporter, written through `save_bytes`)."""
        self._require_trace()
        try:
            data = png_bytes(self.view.plots, width)
        except RenderError as err:
            raise ExportError(f"{path}: {err}") from None
        save_bytes(path, data)

    def export_svg(self, path: str | Path) -> None:
        """The plots as an SVG drawing (pyqtgraph SVGExporter; works with the pinned Qt 6.10)."""
        self._require_trace()
        try:
            data = svg_bytes(self.view.plots)
        except RenderError as err:
            raise ExportError(f"{path}: {err}") from None
        save_bytes(path, data)

    def export_csv(self, path: str | Path) -> None:
        """One row per shown position (unrolled passes included)."""
        trace = self._require_trace()
        save_bytes(path, trace_csv(trace, self.view.shown).encode("utf-8"))

    def export_json(self, path: str | Path) -> None:
        """The trace as found (not unrolled): `stormbound-trace/1`, or `/2` for a long lasso that repeats itself
        (app/core/formats/trace.py `trace_bytes`)."""
        save_trace(self._require_trace(), path)

    def _ask(self, title: str, pattern: str, suffix: str, write: Callable[[str], object]) -> None:
        if self.view.trace is None:
            return
        path, _ = QFileDialog.getSaveFileName(self.view, title, f"trace{suffix}", pattern)
        if not path:
            return
        if not path.endswith(suffix):
            path += suffix
        try:
            write(path)
        except (OSError, ValueError) as err:
            QMessageBox.warning(self.view, title, str(err))

    def ask_png(self) -> None:
        self._ask("Export trace as PNG", "PNG images (*.png)", ".png", self.export_png)

    def ask_svg(self) -> None:
        self._ask("Export trace as SVG", "SVG drawings (*.svg)", ".svg", self.export_svg)

    def ask_csv(self) -> None:
        self._ask("Export trace as CSV", "CSV tables (*.csv)", ".csv", self.export_csv)

    def ask_json(self) -> None:
        self._ask("Export trace JSON", "Trace files (*.trace.json *.json)", ".trace.json", self.export_json)
