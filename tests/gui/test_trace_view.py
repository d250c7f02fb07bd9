"""The lasso trace view on a hand-made trace: plots, loop region, unrolling, cursor, exports."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage

from app.core.formats.trace import BoltStep, SpoutStep, Trace, TracePosition, load_trace
from app.gui.panels.trace_view import (
    ExportError,
    TraceView,
    acting_components,
    queue_after,
    trace_csv,
    unroll,
)

TOPOLOGY = {
    "name": "tiny",
    "spouts": [{"name": "S1", "rate": 1.0, "burst": 2}],
    "bolts": [{"name": "B1", "alpha": 1.0, "sigma": 1.0, "parallelism": 1},
              {"name": "B2", "alpha": 0.5, "sigma": 0.0, "parallelism": 4}],
    "subscriptions": [{"source": "S1", "target": "B1"}, {"source": "B1", "target": "B2"}],
}


def _bolt(queue: int, arrivals: int, take: bool, batch: int, emit: bool, emitted: int, phase: str) -> BoltStep:
    return BoltStep(queue=queue, arrivals=arrivals, take=take, batch=batch, emit=emit, emitted=emitted,
                    buffer=0, phase=phase)  # type: ignore[arg-type]  # phase is one of the Literal's values


def make_trace() -> Trace:
    """S1 emits 2 tuples every second; B1 takes one per second, so its queue grows by 1 per loop.

    Loop: positions 1..2 (duration 1 s), position 3 repeats position 1 one second later.
    """
    rows = [
        ("0", True, _bolt(0, 2, True, 1, False, 0, "processing"), _bolt(0, 0, False, 0, False, 0, "idle")),
        ("1", True, _bolt(1, 2, False, 1, True, 1, "idle"), _bolt(0, 1, True, 1, False, 0, "processing")),
        ("1.5", False, _bolt(3, 0, True, 1, False, 0, "processing"), _bolt(0, 0, False, 0, True, 0, "idle")),
        ("2", True, _bolt(2, 2, False, 1, True, 1, "idle"), _bolt(0, 1, True, 1, False, 0, "processing")),
    ]
    positions = [TracePosition(time=t, spouts={"S1": SpoutStep(emit=e, emitted=2 if e else 0)},
                               bolts={"B1": b1, "B2": b2}) for t, e, b1, b2 in rows]
    return Trace(topology=TOPOLOGY, k=2, loop_start=1, positions=positions, kept=["S1", "B1", "B2"])


@pytest.fixture()
def view(qtbot) -> TraceView:
    widget = TraceView()
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    widget.show()
    widget.set_trace(make_trace(), "test trace")
    return widget


def test_unroll_shifts_times_and_queues() -> None:
    trace = make_trace()
    assert trace.growth_per_loop() == {"B1": 1, "B2": 0}
    assert [str(sp.time) for sp in unroll(trace, 0)] == ["0", "1", "3/2", "2"]
    shown = unroll(trace, 2)
    assert [sp.source for sp in shown] == [0, 1, 2, 1, 2, 1, 2, 3]
    assert [sp.time for sp in shown] == [Fraction(x) for x in ("0", "1", "1.5", "2", "2.5", "3", "3.5", "4")]
    assert [sp.position.bolts["B1"].queue for sp in shown] == [0, 1, 3, 2, 4, 3, 5, 4]
    assert [sp.loop_pass for sp in shown] == [0, 1, 1, 2, 2, 3, 3, 4]
    # the closing position of the unrolled lasso is the loop start one more pass later
    assert shown[-1].position.bolts["B1"].queue == shown[-3].position.bolts["B1"].queue + 1
    with pytest.raises(ValueError, match="extra_passes"):
        unroll(trace, -1)


def test_queue_after_and_acting() -> None:
    p = make_trace().positions[0]
    assert queue_after(p.bolts["B1"]) == 1
    assert acting_components(p) == {"S1", "B1"}
    assert acting_components(make_trace().positions[2]) == {"B1", "B2"}


def test_one_plot_per_bolt_with_linked_x_and_loop_region(view: TraceView) -> None:
    assert list(view.plot_items) == ["B1", "B2"]
    b1, b2 = view.plot_items["B1"], view.plot_items["B2"]
    assert b2.vb.linkedView(b2.vb.XAxis) is b1.vb
    names = [item.name() for item in b1.listDataItems() if item.name()]
    assert names == ["queue", "in process", "from S1"]
    assert [item.name() for item in b2.listDataItems() if item.name()] == ["queue", "in process", "from B1"]
    assert view.loop_region_bounds() == [(1.0, 2.0)]
    assert view.loop_labels[0].textItem.toPlainText() == "loop (repeats forever)"
    assert "positions 1..2 repeat forever" in view.title.text()
    b1.vb.setXRange(0, 1)
    assert b2.vb.viewRange()[0] == pytest.approx(b1.vb.viewRange()[0])


def test_unroll_control_adds_loop_passes(view: TraceView) -> None:
    view.unroll_box.setValue(3)
    assert len(view.shown) == 3 + 3 * 2 + 1
    assert view.loop_region_bounds() == [(1.0, 2.0), (2.0, 3.0), (3.0, 4.0), (4.0, 5.0)]
    queue = view.plot_items["B1"].listDataItems()[0]
    assert max(queue.yData) == 7  # closing position: queue 2 + 3 passes, plus 2 arrivals


def test_cursor_steps_with_buttons_keys_and_clicks(view: TraceView, qtbot) -> None:
    acted: list[set[str]] = []
    view.acting_changed.connect(acted.append)
    assert view.cursor_index == 0
    assert view.table_values()["B1"]["queue"] == "0 → 1"
    qtbot.mouseClick(view.next_button, Qt.MouseButton.LeftButton)
    assert view.cursor_index == 1
    assert acted[-1] == {"S1", "B1", "B2"}
    qtbot.mouseClick(view.next_button, Qt.MouseButton.LeftButton)
    assert view.table_values()["B1"] == {"queue": "3 → 2", "arrivals": "0", "take": "yes", "in process": "1",
                                         "emit": "", "emitted": "", "buffer": "0", "phase": "processing"}
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.cursor_index == 3
    assert not view.next_button.isEnabled()
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert view.cursor_index == 2
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.cursor_index == 0
    view.cursor_to_time(1.4)
    assert view.cursor_index == 2
    # a real click in the B2 plot at t ≈ 1 s moves the cursor there
    plot = view.plot_items["B2"]
    scene_point = plot.vb.mapViewToScene(QPointF(1.02, 0.5))
    widget_point = view.plots.mapFromScene(scene_point)
    qtbot.mouseClick(view.plots.viewport(), Qt.MouseButton.LeftButton, pos=widget_point)
    assert view.cursor_index == 1


def test_exports_png_svg_csv_json(view: TraceView, tmp_path: Path) -> None:
    view.unroll_box.setValue(1)
    png, svg, table, js = (tmp_path / n for n in ("t.png", "t.svg", "t.csv", "t.trace.json"))
    view.exports.export_png(png)
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 100 and image.height() > 100
    view.exports.export_svg(svg)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert any(el.tag.endswith("path") or el.tag.endswith("polyline") for el in root.iter())
    assert "in process" in svg.read_text(encoding="utf-8")  # the key is exported with the plots
    view.exports.export_csv(table)
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert len(rows) == len(view.shown) == 6
    assert [r["B1.queue"] for r in rows] == ["0", "1", "3", "2", "4", "3"]
    assert rows[2]["time"] == "1.5" and rows[-1]["loop_pass"] == "3"
    view.exports.export_json(js)
    assert load_trace(js) == make_trace()
    assert json.loads(js.read_text())["format"] == "stormbound-trace/1"


def test_export_without_trace_or_to_bad_path_fails_clearly(qtbot, tmp_path: Path) -> None:
    empty = TraceView()
    qtbot.addWidget(empty)
    with pytest.raises(ExportError, match="no trace to export"):
        empty.exports.export_csv(tmp_path / "x.csv")
    assert not empty.export_button.isEnabled()
    full = TraceView()
    qtbot.addWidget(full)
    full.set_trace(make_trace())
    with pytest.raises(ExportError, match="missing-dir"):
        full.exports.export_csv(tmp_path / "missing-dir" / "sub" / "x.csv")


def test_csv_has_one_row_per_position() -> None:
    text = trace_csv(make_trace(), unroll(make_trace(), 0))
    lines = text.strip().splitlines()
    assert len(lines) == 1 + 4
    assert lines[0].startswith("index,position,loop_pass,time,time_s,S1.emit,S1.emitted,B1.queue")


def test_finite_run_without_loop(qtbot) -> None:
    """The threshold property's witness is a plain prefix: loop_start = k+1, nothing shaded."""
    trace = make_trace().model_copy(update={"loop_start": 3})
    view = TraceView()
    qtbot.addWidget(view)
    view.set_trace(trace, "Some queue reaches 3")
    assert len(view.shown) == 4 and view.loop_regions == []
    assert "no loop" in view.title.text()
    assert not view.unroll_box.isEnabled()
    view.last()
    assert "next pass" not in view.position_label.text()


def test_the_table_shows_each_streams_count_and_carry(qtbot) -> None:
    """A component with declared streams: the table names what it emits on each stream and each carry."""
    from app.core.tcn.search import verify
    from app.core.topology import parse_topology

    topo = parse_topology({
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["err"],
                   "stream_sigma": {"err": 0.5}},
                  {"name": "U", "alpha": 0.8, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "U"},
                          {"source": "A", "target": "U", "stream": "err"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0}, "verification": {"checked": ["U"]}})
    trace = verify(topo).traces[0]
    view = TraceView()
    qtbot.addWidget(view)
    view.set_trace(trace)
    emits = next(i for i, p in enumerate(trace.positions) if p.bolts["A"].emit)
    view.set_cursor(emits)
    step = trace.positions[emits].bolts["A"]
    assert step.emitted_by_stream is not None
    row = view.table_values()["A"]
    assert row["emitted"] == (f"{step.emitted} (default {step.emitted_by_stream['default']}, "
                              f"err {step.emitted_by_stream['err']})")
    assert row["buffer"].startswith("default ") and ", err " in row["buffer"]
