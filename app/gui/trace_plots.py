"""Drawing with pyqtgraph, shared by the trace view and the headless pictures of the command line.

`draw_trace` puts one plot per bolt of a `TraceSeries` (app/core/trace_series.py) into
a pyqtgraph layout: the trace view calls it inside its widget, `stormbound plot` on a
widget never shown on screen. `queue_plot` draws a measured queue beside the model's
prediction (`stormbound analyze --report`). `svg_bytes` / `png_bytes` export a scene
with pyqtgraph's exporters; `headless_app` starts Qt on the offscreen platform when no
application runs yet, so a terminal or a CI job needs no display.
"""

from __future__ import annotations

import os
import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtCore import QBuffer, QIODevice, Qt
from PySide6.QtWidgets import QApplication

from app.core.errors import InternalError
from app.core.trace_series import Band, Marks, TraceSeries, peaks, step_band, visible

QUEUE_PEN = pg.mkPen("#1f77b4", width=2)
PROCESS_PEN = pg.mkPen("#2ca02c", width=1.5, style=Qt.PenStyle.DashLine)
# distinct from each other and from the queue's blue and the in-process green; more components get colours
# generated around the hue circle (golden-ratio steps), so no two components ever share one
ARRIVAL_COLOURS = ["#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
                   "#393b79", "#e7969c", "#637939", "#ad494a", "#6b6ecf", "#8c6d31", "#ce6dbd", "#000000",
                   "#fd8d3c", "#843c39", "#9e9ac8", "#b5cf6b"]
TITLE_CHAR_PX = 7.2  # average width of a 10pt character: a title wraps before it is cut
KEY_CHAR_PX = 6.0  # the same for the 8pt key
LOOP_BRUSHES = [pg.mkBrush(255, 191, 0, 60), pg.mkBrush(255, 191, 0, 35)]
MEASURED_PEN = pg.mkPen("#444444", width=1.5, style=Qt.PenStyle.DashLine)
PREDICTED_PEN = pg.mkPen("#d62728", width=2)
DEATH_COLOUR = "#6a1b9a"  # a worker's death: a dashed line across every plot
FAILED_ALPHA = 60  # a failure interval is shaded in its bolt's own colour, this opaque (0..255)
# one per bolt, in the bolts' order: none of them near the loop's amber
FAILED_COLOURS = ["#d62728", "#9467bd", "#17becf", "#e377c2", "#1f3b99", "#2ca02c", "#8c564b", "#7f7f7f"]
LOST_COLOUR = "#000000"
BACKLOG_PEN = pg.mkPen("#ff7f0e", width=2)
REPLAY_COLOUR = "#d62728"
BAND_ALPHA = 90  # a band (least..greatest per pixel) is filled in its line's colour, this opaque (0..255)
DEFAULT_PIXELS = 1000  # the buckets of a plot whose width is not known yet
MARK_PIXELS = 8  # with bands, one lost or replay marker (the largest) per this many pixels


class RenderError(InternalError, OSError):
    """A picture could not be rendered or encoded; the message says which."""


@dataclass
class DrawnTrace:
    """The items `draw_trace` made, for the trace view's cursor, tests and overlays."""

    plots: dict[str, pg.PlotItem] = field(default_factory=dict)
    loop_regions: list[pg.LinearRegionItem] = field(default_factory=list)
    loop_labels: list[pg.InfLineLabel] = field(default_factory=list)
    key: Any = None  # the key's label item
    failed_regions: dict[str, list[pg.LinearRegionItem]] = field(default_factory=dict)  # per bolt
    lost_marks: dict[str, pg.ScatterPlotItem] = field(default_factory=dict)  # per bolt that loses tuples
    replay_marks: dict[str, pg.ScatterPlotItem] = field(default_factory=dict)  # per spout that replays
    series: TraceSeries | None = None
    colours: dict[str, str] = field(default_factory=dict)
    max_chars: int | None = None  # the key's line length
    data_items: dict[str, list[Any]] = field(default_factory=dict)  # per plot: what `show_range` drew last
    envelope: bool = False  # the last `show_range` drew bands (more positions in range than pixels)
    shown_range: tuple[float, float, int] | None = None  # (t0, t1, pixels) of the last `show_range`
    height: int = 0  # the plots' rows, in pixels (the key's row not counted)
    row_heights: dict[int, int] = field(default_factory=dict)  # per grid row holding a plot


def _generated(i: int) -> str:
    import colorsys

    hue = (i * 0.618033988749895) % 1.0
    r, g, b = colorsys.hsv_to_rgb(hue, 0.75 if i % 2 else 0.55, 0.8 if i % 3 else 0.6)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def component_colours(names: list[str]) -> dict[str, str]:
    """A distinct colour per component name, in order: the palette first, then generated ones."""
    out: dict[str, str] = {}
    used: set[str] = set()
    extra = 0
    for i, n in enumerate(names):
        colour = ARRIVAL_COLOURS[i] if i < len(ARRIVAL_COLOURS) else ""
        while not colour or colour in used:
            colour = _generated(extra)
            extra += 1
        out[n] = colour
        used.add(colour)
    return out


def key_html(series: TraceSeries, colours: dict[str, str], max_chars: int | None = None,
             envelope: bool = False) -> str:
    """One key for every plot: line styles, and a colour per component whose tuples arrive.

    With `max_chars` the key breaks into lines of about that many characters instead of running off the picture;
    with `envelope` it says that the plots show bands, not single positions."""
    parts = ["<span style='color:#1f77b4'>━━</span>&nbsp;queue",
             "<span style='color:#2ca02c'>╌╌</span>&nbsp;in process"]
    lengths = [7, 12]
    senders = [n for n in series.senders if n in colours]
    for i, n in enumerate(senders):
        parts.append(("arrivals from: " if i == 0 else "") + f"<span style='color:{colours[n]}'>●</span>&nbsp;{n}")
        lengths.append(len(n) + 3 + (15 if i == 0 else 0))
    if series.loop_passes:
        parts.append("<span style='background:#fde9a8'>&nbsp;&nbsp;&nbsp;</span>&nbsp;loop")
        lengths.append(7)
    failing = [(i, b.bolt) for i, b in enumerate(series.bolts) if b.failed]
    for order, (i, bolt) in enumerate(failing):  # each bolt's failures in its own colour
        parts.append(("failed: " if order == 0 else "")
                     + f"<span style='background:{failed_colour(i)}'>&nbsp;&nbsp;&nbsp;</span>&nbsp;{bolt}")
        lengths.append(len(bolt) + 4 + (8 if order == 0 else 0))
    if any(b.lost.times for b in series.bolts):
        parts.append(f"<span style='color:{LOST_COLOUR}'>✕</span>&nbsp;lost")
        lengths.append(6)
    if series.spouts:
        parts.append(f"<span style='color:{REPLAY_COLOUR}'>▲</span>&nbsp;replays "
                     "<span style='color:#ff7f0e'>━━</span>&nbsp;backlog")
        lengths.append(20)
    if series.deaths:
        parts.append(f"<span style='color:{DEATH_COLOUR}'>┆</span>&nbsp;worker dies")
        lengths.append(13)
    if envelope:
        parts.append(f"<i>{ENVELOPE_WORDS}</i>")
        lengths.append(len(ENVELOPE_WORDS))
    out, used = "", 0
    for part, length in zip(parts, lengths, strict=True):
        if out and max_chars is not None and used + length > max_chars:
            out += "<br>"
            used = 0
        elif out:
            out += " &nbsp; "
            used += 3
        out += part
        used += length
    return out


ENVELOPE_WORDS = "bands: min..max per pixel (zoom in for each position)"


def wrap_title(title: str, width_px: int) -> str:
    """The title broken into lines that fit `width_px` (HTML line breaks, the text escaped)."""
    import html
    import re
    import textwrap

    chars = max(20, int(width_px / TITLE_CHAR_PX))
    kept = re.sub(r"(\d) (ms|s|min|h)\b", "\\1\u00a0\\2", title)  # a figure stays on the line of its unit
    return "<br>".join(html.escape(line) for line in textwrap.wrap(kept, chars) or [""])


def time_unit(series: TraceSeries) -> tuple[str, float]:
    """One time unit for a whole figure: milliseconds when the trace spans less than a second, else seconds."""
    span = float(series.step_times[-1] - series.times[0]) if len(series.times) else 0.0
    return ("ms", 1000.0) if 0 < span < 1 else ("s", 1.0)


FOCUS_PX = 170  # a growing bolt's plot: large (the trace view scrolls to fit the others)
CONTEXT_PX = 80  # every other plot: context, small
TITLE_SIZE = "9pt"
AXIS_LABEL_PX = 30  # the last plot's row also holds the time axis' label


def plot_order(series: TraceSeries, focus: list[str] | None = None) -> list[str]:
    """The bolts in the order they are plotted: `focus` (default: those whose queue grows per loop) first,
    the rest after in the trace's order."""
    names = [b.bolt for b in series.bolts]
    first = [n for n in (focus if focus is not None else
                         [b.bolt for b in series.bolts if b.growth_per_loop]) if n in names]
    return first + [n for n in names if n not in first]


def draw_trace(layout: Any, series: TraceSeries, colours: dict[str, str], first_row: int = 0,
               width_px: int | None = None, focus: list[str] | None = None, key_last: bool = False) -> DrawnTrace:
    """Add the key and one plot per bolt to `layout` (a GraphicsLayoutWidget or GraphicsLayout), rows from `first_row`.

    The growing bolts (or `focus`) come first, each FOCUS_PX high, the others CONTEXT_PX (`DrawnTrace.height`
    sums them, for a scrolling view); each plot is titled with its bolt's name (horizontal, in its own row of the
    grid, so no two overlap) and scaled to its own data. The plots share the time axis, in one unit for the
    figure (ms below a second of trace, else s); the loop passes are shaded in each, labelled in the top one.
    With `width_px` the key wraps to fit; `key_last` puts it under the plots (the trace view: the growing
    plot first in sight). The series are drawn by `show_range` for the whole trace, `width_px`
    (else DEFAULT_PIXELS) buckets wide: exact with fewer positions than that, else as per-pixel bands.
    """
    drawn = DrawnTrace(series=series, colours=colours)
    unit, scale = time_unit(series)
    grid = getattr(layout, "ci", layout).layout  # the QGraphicsGridLayout under pyqtgraph's layout
    # the key is part of the scene, so PNG and SVG exports carry it too
    drawn.max_chars = int(width_px / KEY_CHAR_PX) if width_px else None
    plots = len(series.bolts) + len(series.spouts)
    drawn.key = layout.addLabel(key_html(series, colours, drawn.max_chars), row=first_row + plots if key_last
                                else first_row, col=0, size="8pt", justify="left")
    first_row -= 1 if key_last else 0  # the plots' rows start at first_row + 1
    bolts = {b.bolt: b for b in series.bolts}
    order = plot_order(series, focus)
    growing = set(order[:len(focus)] if focus is not None else [b.bolt for b in series.bolts if b.growth_per_loop])
    first: pg.PlotItem | None = None
    for row, name in enumerate(order, start=first_row + 1):
        bolt = bolts[name]
        plot = layout.addPlot(row=row, col=0)
        plot.setTitle(name + (f" (+{bolt.growth_per_loop}/loop)" if bolt.growth_per_loop else ""),
                      size=TITLE_SIZE, justify="left", bold=name in growing)
        _axes(plot, scale)
        _shade_loops(plot, series, drawn, labelled=first is None)
        _shade_failures(plot, name, bolt.failed, failed_colour(series.bolts.index(bolt)), drawn)
        _mark_deaths(plot, series.deaths)
        _fix_height(grid, row, FOCUS_PX if name in growing else CONTEXT_PX, drawn)
        if first is None:
            first = plot
        else:
            plot.setXLink(first)
        drawn.plots[name] = plot
    for row, spout in enumerate(series.spouts, start=first_row + 1 + len(series.bolts)):
        # a spout that replays: its backlog of replays (a step line) and the replays it emits (markers)
        plot = layout.addPlot(row=row, col=0)
        plot.setTitle(f"{spout.spout} replays", size=TITLE_SIZE, justify="left")
        _axes(plot, scale)
        _shade_loops(plot, series, drawn, labelled=False)
        _fix_height(grid, row, CONTEXT_PX, drawn)
        if first is None:
            first = plot
        else:
            plot.setXLink(first)
        drawn.plots[f"{spout.spout} (replays)"] = plot
    if first is not None:
        first.setXRange(series.times[0], series.step_times[-1], padding=0.02)
        list(drawn.plots.values())[-1].setLabel("bottom", f"time ({unit})")
        last_row = first_row + plots
        _fix_height(grid, last_row, drawn.row_heights[last_row] + AXIS_LABEL_PX, drawn)
    show_range(drawn, series.times[0], series.step_times[-1], width_px or DEFAULT_PIXELS)
    return drawn


def _fix_height(grid: Any, row: int, pixels: int, drawn: DrawnTrace) -> None:
    """Row `row` of the grid exactly `pixels` high (added to the plots' total height, replacing what it had)."""
    drawn.height += pixels - drawn.row_heights.get(row, 0)
    drawn.row_heights[row] = pixels
    grid.setRowFixedHeight(row, pixels)


def _axes(plot: pg.PlotItem, scale: float) -> None:
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.setMouseEnabled(x=True, y=False)
    plot.enableAutoRange(y=True)
    plot.setAutoVisible(y=True)  # each plot's y axis fits its own data in the time range shown
    bottom = plot.getAxis("bottom")
    bottom.enableAutoSIPrefix(False)  # no ms in one plot and s in the next: the figure's unit throughout
    bottom.setScale(scale)  # the data stay in seconds (the trace view's cursor reads them); ticks show the unit


def show_range(drawn: DrawnTrace, t0: float, t1: float, pixels: int) -> None:
    """(Re)draw the series for the time range [t0, t1] on plots `pixels` wide: each position exactly when the
    range holds at most `pixels` positions, else per-pixel bands (the least and greatest queue, tuples in
    process and backlog of each pixel's positions, filled) and the largest arrivals, losses and replays of each
    pixel (app/core/trace_series.py). Only the series' own items are replaced; the shading stays."""
    series = drawn.series
    if series is None or not series.times:
        return
    pixels = max(1, int(pixels))
    lo, hi = visible(series.times, t0, t1)
    envelope = hi - lo > pixels
    if drawn.key is not None and envelope != drawn.envelope:
        drawn.key.setText(key_html(series, drawn.colours, drawn.max_chars, envelope))
    drawn.envelope, drawn.shown_range = envelope, (t0, t1, pixels)
    for key, items in drawn.data_items.items():
        for item in items:
            drawn.plots[key].removeItem(item)
    drawn.data_items = {}
    steps = series.step_times
    for bolt in series.bolts:
        plot = drawn.plots[bolt.bolt]
        items = drawn.data_items.setdefault(bolt.bolt, [])
        if envelope:
            items += _band(plot, step_band(steps, bolt.queue, t0, t1, pixels), QUEUE_PEN.color(), "queue")
            items += _band(plot, step_band(steps, bolt.in_process, t0, t1, pixels), PROCESS_PEN.color(),
                           "in process")
        else:
            items.append(plot.plot(steps[lo:hi + 1], bolt.queue[lo:hi], stepMode="center", pen=QUEUE_PEN,
                                   name="queue"))
            items.append(plot.plot(steps[lo:hi + 1], bolt.in_process[lo:hi], stepMode="center", pen=PROCESS_PEN,
                                   name="in process"))
        for arrivals in bolt.arrivals:
            colour = drawn.colours.get(arrivals.source, ARRIVAL_COLOURS[0]) if arrivals.source else ARRIVAL_COLOURS[0]
            if envelope:  # the largest arrival of each pixel, joined: the arrivals' envelope
                xs, ys = peaks(arrivals.times, arrivals.counts, t0, t1, pixels)
                items.append(plot.plot(xs, ys, pen=pg.mkPen(colour, width=1), name=arrivals.label))
                continue
            xs, ys = _within(arrivals.times, arrivals.counts, series.times[lo], series.times[hi - 1])
            stems_x = [x for t in xs for x in (t, t)]
            stems_y = [y for c in ys for y in (0, c)]
            items.append(plot.plot(stems_x, stems_y, pen=pg.mkPen(colour, width=1), connect="pairs"))
            items.append(plot.plot(xs, ys, pen=None, symbol="o", symbolSize=6, symbolBrush=colour,
                                   symbolPen=None, name=arrivals.label))
        if bolt.lost.times:
            mark = _marks(plot, _shown_marks(bolt.lost, series.times[lo], series.times[hi - 1], envelope, pixels),
                          "x", LOST_COLOUR, "lost {} tuple(s)")
            drawn.lost_marks[bolt.bolt] = mark
            items.append(mark)
    for spout in series.spouts:
        key = f"{spout.spout} (replays)"
        plot = drawn.plots[key]
        items = drawn.data_items.setdefault(key, [])
        if envelope:
            items += _band(plot, step_band(steps, spout.backlog, t0, t1, pixels), BACKLOG_PEN.color(), "backlog")
        else:
            items.append(plot.plot(steps[lo:hi + 1], spout.backlog[lo:hi], stepMode="center", pen=BACKLOG_PEN,
                                   name="backlog"))
        mark = _marks(plot, _shown_marks(spout.replayed, series.times[lo], series.times[hi - 1], envelope, pixels),
                      "t1", REPLAY_COLOUR, "{} replay(s) emitted")
        drawn.replay_marks[spout.spout] = mark
        items.append(mark)


def _within(times: list[float], counts: list[int], t0: float, t1: float) -> tuple[list[float], list[int]]:
    """The (time, count) points from t0 to t1 (times sorted)."""
    a, b = bisect_left(times, t0), bisect_right(times, t1)
    return times[a:b], counts[a:b]


def _shown_marks(marks: Marks, t0: float, t1: float, envelope: bool, pixels: int) -> Marks:
    """The marks from t0 to t1: each one, or with bands the largest of every MARK_PIXELS pixels (a marker is
    about that wide: more would merge into a bar)."""
    if envelope:
        return Marks(*peaks(marks.times, marks.counts, t0, t1, max(1, pixels // MARK_PIXELS)))
    return Marks(*_within(marks.times, marks.counts, t0, t1))


def _band(plot: pg.PlotItem, band: Band, colour: Any, name: str) -> list[Any]:
    """A band: the least and greatest value of each bucket as two thin step lines, filled between."""
    pen = pg.mkPen(colour, width=1)
    high = plot.plot(band.edges, band.high, stepMode="center", pen=pen, name=name)
    low = plot.plot(band.edges, band.low, stepMode="center", pen=pen)
    brush = pg.mkColor(colour)
    brush.setAlpha(BAND_ALPHA)
    fill = pg.FillBetweenItem(low, high, brush=pg.mkBrush(brush))
    fill.setZValue(-1)
    plot.addItem(fill)
    return [high, low, fill]


def failed_colour(index: int) -> str:
    """The colour of the failure intervals of the bolt at `index` (in the plots' order)."""
    return FAILED_COLOURS[index] if index < len(FAILED_COLOURS) else _generated(index)


def _shade_failures(plot: pg.PlotItem, bolt: str, spans: list[tuple[float, float]], colour: str,
                    drawn: DrawnTrace) -> None:
    """A bolt's failure intervals, shaded in the bolt's own colour behind its curves."""
    regions = _shade(plot, spans, colour, f"{bolt} failed")
    if regions:
        drawn.failed_regions.setdefault(bolt, []).extend(regions)


def _mark_deaths(plot: pg.PlotItem, deaths: list[tuple[float, float, str]]) -> None:
    """Each worker's death (docs/model.md 9.5) as a dashed line at its time, with a tooltip."""
    for death, back, worker in deaths:
        line = pg.InfiniteLine(pos=death, angle=90, movable=False,
                               pen=pg.mkPen(DEATH_COLOUR, width=1, style=Qt.PenStyle.DashLine))
        line.setToolTip(f"worker {worker} dies at {death:g} s (back at {back:g} s); the trees it breaks are "
                        "replayed at the message timeout")
        plot.addItem(line, ignoreBounds=True)


def _shade(plot: pg.PlotItem, spans: list[tuple[float, float]], colour: str, tip: str) -> list[pg.LinearRegionItem]:
    """Intervals shaded in `colour` (FAILED_ALPHA opaque) behind the plot's curves, with a tooltip."""
    brush = pg.mkColor(colour)
    brush.setAlpha(FAILED_ALPHA)
    regions = []
    for begin, end in spans:
        region = pg.LinearRegionItem(values=(begin, end), movable=False, brush=pg.mkBrush(brush), pen=pg.mkPen(None))
        region.setZValue(-5)
        region.setToolTip(tip)
        plot.addItem(region, ignoreBounds=True)
        regions.append(region)
    return regions


def _marks(plot: pg.PlotItem, marks: Marks, symbol: str, colour: str, tip: str) -> pg.ScatterPlotItem:
    """Markers at (time, count) with the count in the tooltip."""
    item = pg.ScatterPlotItem(x=marks.times, y=marks.counts, data=marks.counts, symbol=symbol, size=10,
                              brush=pg.mkBrush(colour), pen=pg.mkPen(colour), hoverable=True,
                              tip=lambda x, y, data: tip.format(data))
    plot.addItem(item)
    return item


def _shade_loops(plot: pg.PlotItem, series: TraceSeries, drawn: DrawnTrace, labelled: bool) -> None:
    extra_passes = len(series.loop_passes) - 1
    for r, (begin, end) in enumerate(series.loop_passes):
        region = pg.LinearRegionItem(values=(begin, end), movable=False, brush=LOOP_BRUSHES[r % 2],
                                     pen=pg.mkPen(None))
        region.setZValue(-10)
        plot.addItem(region, ignoreBounds=True)
        drawn.loop_regions.append(region)
        if labelled:  # only the top plot: the bolts' plots are short and share the time axis
            text = ("loop (repeats forever)" if extra_passes == 0 else "loop") if r == 0 else f"pass {r + 1}"
            # on the region's left edge, kept near the top of the view whatever the zoom
            label = pg.InfLineLabel(region.lines[0], text, position=0.97, anchors=[(0, 0), (0, 0)], color="#8a6d00")
            drawn.loop_labels.append(label)


# ---- headless pictures -----------------------------------------------------------------------
def headless_app() -> QApplication:
    """The running QApplication, or a new one on the offscreen platform (unless QT_QPA_PLATFORM says otherwise)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return QApplication([sys.argv[0] if sys.argv else "stormbound"])


def new_canvas(width: int, height: int) -> pg.GraphicsLayoutWidget:
    """A white plot layout laid out at `width`×`height` pixels and never shown on screen."""
    headless_app()
    canvas = pg.GraphicsLayoutWidget()
    canvas.setBackground("w")
    canvas.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    canvas.resize(width, height)
    return canvas


def settle(canvas: pg.GraphicsLayoutWidget) -> None:
    """Lay the canvas out at its size (show it off screen and let Qt handle the resize)."""
    canvas.show()
    app = QApplication.instance()
    if app is not None:
        app.processEvents()


def svg_bytes(canvas: pg.GraphicsLayoutWidget) -> bytes:
    """The canvas's scene as an SVG document (pyqtgraph SVGExporter)."""
    data = SVGExporter(canvas.scene()).export(toBytes=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data:
        raise RenderError("the plots could not be rendered as SVG")
    return bytes(data)


def png_bytes(canvas: pg.GraphicsLayoutWidget, width: int | None = None) -> bytes:
    """The canvas's scene as a PNG image (pyqtgraph ImageExporter), `width` pixels wide when given."""
    exporter = ImageExporter(canvas.scene())
    if width is not None:
        exporter.parameters()["width"] = width
    image = exporter.export(toBytes=True)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if image is None or image.isNull() or not image.save(buffer, "PNG"):
        raise RenderError("the plots could not be rendered as a PNG image")
    return bytes(buffer.data().data())


def trace_canvas(series: TraceSeries, title: str, names: list[str], width: int = 1000,
                 height: int | None = None) -> pg.GraphicsLayoutWidget:
    """The trace view's plots of `series` under a title, on an off-screen canvas ready to export."""
    growing = sum(1 for b in series.bolts if b.growth_per_loop)
    height = height or (120 + FOCUS_PX * growing + CONTEXT_PX * max(1, len(series.bolts) + len(series.spouts) - growing)
                        + AXIS_LABEL_PX)
    canvas = new_canvas(width, height)
    canvas.addLabel(wrap_title(title, width - 20), row=0, col=0, size="10pt", justify="left", color="#222222")
    draw_trace(canvas, series, component_colours(names), first_row=1, width_px=width - 20)
    settle(canvas)
    return canvas


def queue_plot(name: str, measured: list[tuple[float, float]], predicted: list[tuple[float, float]] | None,
               title: str, width: int = 640, height: int = 260,
               down: dict[str, list[tuple[float, float]]] | None = None) -> pg.GraphicsLayoutWidget:
    """A measured queue series (dashed) with the model's predicted queue (solid), on an off-screen canvas.
    `down`: per killed bolt its (down, up) intervals, shaded in its failure colour (as in the trace view)
    and named in the title."""
    down = {bolt: spans for bolt, spans in (down or {}).items() if spans}
    if down:
        title += " — shaded: " + ", ".join(f"{bolt} down" for bolt in down)
    canvas = new_canvas(width, height)
    plot = canvas.addPlot(row=0, col=0, title=title)
    for index, (bolt, spans) in enumerate(down.items()):
        _shade(plot, spans, failed_colour(index), f"{bolt} down (killed)")
    plot.addLegend(offset=(10, 10))
    plot.showGrid(x=True, y=True, alpha=0.2)
    plot.setLabel("left", f"{name} queue (tuples)")
    plot.setLabel("bottom", "time since the run started", units="s")
    plot.plot([x for x, _ in measured], [y for _, y in measured], pen=MEASURED_PEN, name="measured")
    if predicted:
        plot.plot([x for x, _ in predicted], [y for _, y in predicted], pen=PREDICTED_PEN, name="model")
    settle(canvas)
    return canvas
