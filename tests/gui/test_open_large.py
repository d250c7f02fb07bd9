"""Opening a large document: read, checked and analysed in a worker, drawn in turns, one analysis per snapshot.

The figures (the longest stall of the GUI thread while 20,000 streams open) are in bench/gui_open_large.py and
bench/RESULTS.md; these tests keep only what cannot depend on the machine's load.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyleOptionGraphicsItem

from app.gui import analysis as analysis_module
from app.gui import window_files
from app.gui.canvas import scene as scene_module

ROOT = Path(__file__).resolve().parents[2]


def many_streams(tmp_path: Path, n: int) -> Path:
    """models/getting-started.storm.json with `n` declared streams of its spout, each subscribed to by `split`."""
    data = json.loads((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"))
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(n)]
    data["spouts"][0]["stream_ratio"] = {f"s{i}": 1.0 for i in range(n)}
    data["subscriptions"] += [{"source": "sentences", "target": "split", "stream": f"s{i}"} for i in range(n)]
    path = tmp_path / "streams.storm.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_file_is_read_checked_and_analysed_off_the_gui_thread_once(make_window, qtbot, tmp_path, monkeypatch) -> None:
    window = make_window()
    path = many_streams(tmp_path, 2500)
    threads: dict[str, list[str]] = {"analysis": [], "problems": [], "read": []}
    real_analysis, real_problems, real_load = (analysis_module.RateAnalysis, analysis_module.graph_problems,
                                               window_files.load_file)

    def counted(kind: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            threads[kind].append(threading.current_thread().name)
            return real(*args, **kwargs)
        return call

    class Counted(real_analysis):
        def __init__(self, topo: Any) -> None:
            threads["analysis"].append(threading.current_thread().name)
            super().__init__(topo)

    monkeypatch.setattr(analysis_module, "RateAnalysis", Counted)
    monkeypatch.setattr(analysis_module, "graph_problems", counted("problems", real_problems))
    monkeypatch.setattr(window_files, "load_file", counted("read", real_load))
    gui = threading.current_thread().name
    assert window.open_path(path, ask=False)
    assert window.scene.drawing()  # 2,502 links: drawn in turns after the open returned
    qtbot.waitUntil(lambda: not window.scene.drawing(), timeout=120_000)
    assert len(window.scene.edges) == 2502
    for what in ("read", "analysis", "problems"):  # each once, none on the GUI thread
        assert len(threads[what]) == 1 and threads[what][0] != gui, (what, threads[what])
    # the status bar, the canvas and the checks read that one snapshot's analysis: nothing made again
    window.status_problems.refresh()
    window.scene.refresh_rates()
    assert window.document.problems() == [] and "2 bolts" in window.status_problems.text()
    assert len(threads["analysis"]) == 1 and len(threads["problems"]) == 1


def test_the_gui_thread_answers_while_a_slow_file_is_read(make_window, qtbot, tmp_path, monkeypatch) -> None:
    window = make_window()
    path = many_streams(tmp_path, 3)
    real_load = window_files.load_file

    def slow(p: Path) -> Any:
        time.sleep(1.5)  # a large file (or a slow disk): the window must keep answering meanwhile
        return real_load(p)

    monkeypatch.setattr(window_files, "load_file", slow)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    second: list[bool] = []
    QTimer.singleShot(300, lambda: second.append(window.open_path(path, ask=False)))  # a drop meanwhile
    timer.start()
    started = time.monotonic()
    assert window.open_path(path, ask=False)
    timer.stop()
    assert time.monotonic() - started >= 1.5
    assert len([t for t in ticks if t >= started]) >= 5  # the event loop ran while the worker read
    assert second == [False]  # refused while a file is being opened, not started twice
    assert window.isEnabled() and len(window.document.topology().subscriptions) == 5


def test_a_file_that_cannot_be_read_still_names_the_field(make_window, tmp_path) -> None:
    window = make_window()
    data = json.loads((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"))
    data["spouts"][0]["parallelism"] = -1
    bad = tmp_path / "bad.storm.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    before = window.document.topology()
    assert not window.open_path(bad, ask=False)
    assert "parallelism" in window.dialogs.shown[-1][2] and window.document.topology() is before
    assert window.isEnabled()


def drawn(item: Any) -> int:
    """How many pixels `item.paint` covers on a blank image (in scene coordinates, moved into view)."""
    image = QImage(1200, 1200, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    rect = item.boundingRect()
    painter.translate(-rect.left(), -rect.top())
    item.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    return sum(1 for y in range(0, 1200, 3) for x in range(0, 1200, 3) if image.pixelColor(x, y).alpha())


def test_links_between_the_same_two_nodes_draw_one_curve(make_window, qtbot, tmp_path) -> None:
    window = make_window()
    assert window.open_path(many_streams(tmp_path, 1500), ask=False)
    qtbot.waitUntil(lambda: not window.scene.drawing(), timeout=120_000)
    bundle = next(e.bundle for e in window.scene.edges.values() if len(e.bundle) > 1)
    lead, other = bundle[0], bundle[1]
    assert len(bundle) == 1501 and lead.shown_label() == "×1,501"
    assert other.shown_label() == "" and other.path() == lead.path()  # one curve, computed once
    assert drawn(other) == 0 and drawn(lead) > 0  # only the first link of the bundle draws the curve
    other.setSelected(True)
    assert drawn(other) > 0  # a selected link draws itself over it
    window.scene.removeItem(lead)  # what deleting the subscription does (edge_removed): the next link leads
    lead.detach()
    assert bundle[0] is other and other.shown_label() == "×1,500"
    window.scene.nodes[lead.source.component_id].setPos(40, 40)  # moving a node moves every link of the bundle
    assert all(e.path() == other.path() for e in bundle)
    assert scene_module.EDGE_BATCH < 1501


def many_bolts(n: int) -> Any:
    """A spout `S` read by `n` bolts b0, b1, ... (α 0.1 s, σ 1), laid out: a document too large to draw at once."""
    from app.core.formats import topology_from_data
    from app.core.layout import with_layout

    spout = {"kind": "spout", "id": "S", "name": "S", "rate": 1.0, "burst": 1}
    bolts = [{"kind": "bolt", "id": f"b{i}", "name": f"b{i}", "alpha": 0.1, "sigma": 1.0, "parallelism": 1}
             for i in range(n)]
    subs = [{"id": f"s{i}", "source": "S", "target": f"b{i}"} for i in range(n)]
    return with_layout(topology_from_data({"schema_version": 1, "name": "wide", "spouts": [spout], "bolts": bolts,
                                           "subscriptions": subs}))


def test_many_components_are_drawn_in_turns_with_their_colours_and_words(make_window, qtbot) -> None:
    from app.gui.commands import AddSubscriptionCommand

    n = 2 * scene_module.NODE_BATCH + 50
    window = make_window()
    scene = window.scene
    window.document.replace(many_bolts(n))
    assert len(scene.nodes) == scene_module.NODE_BATCH and scene.drawing()  # the first turn; the rest to come
    window.canvas.fit_all()  # fitted to the whole layout, not to the turn drawn so far
    whole = scene_module.layout_rect(window.document)
    first = scene.itemsBoundingRect()
    assert whole.height() > first.height()  # the turn drawn so far is a part of the layout
    scale, room = window.canvas.transform().m11(), window.canvas.viewport().height()
    assert scale * whole.height() <= room and scene.sceneRect().contains(whole), (scale, whole, room)
    last = f"b{n - 1}"  # not drawn yet: a link to it, added meanwhile, is drawn once it is
    window.document.undo_stack.push(AddSubscriptionCommand(window.document, "b0", last))
    qtbot.waitUntil(lambda: not scene.drawing(), timeout=120_000)
    assert len(scene.nodes) == n + 1 and len(scene.edges) == n + 1
    report = window.document.rates().report(suggest=False)
    words, _critical = window.document.latency_marks()
    for ident, node in scene.nodes.items():
        if node.component.kind == "bolt":
            assert node.rates == report.bolts[node.component.name], ident  # coloured as refresh_rates colours
        assert node.latency == words.get(ident), ident
    assert any(e.source.component_id == "b0" and e.target.component_id == last for e in scene.edges.values())


def test_a_node_too_small_to_read_is_drawn_as_a_box_of_its_colour(make_window) -> None:
    window = make_window()
    window.document.replace(many_bolts(3))
    node = window.scene.nodes["b0"]
    image = QImage(40, 40, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.scale(0.1, 0.1)  # 156 pixels wide at 1:1, 15.6 here
    node.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    assert image.pixelColor(5, 5) == node.header_colour()  # one box, its header's colour, where words would be


def test_a_nodes_tooltip_is_made_when_shown(make_window, qtbot) -> None:
    """Live Mode changes every bolt's figures each poll; a node makes its tooltip when it is read or shown."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    window = make_window()
    window.document.replace(many_bolts(3))
    node, view = window.scene.nodes["b1"], window.canvas
    node.set_live({"capacity": 0.25, "status": "bounded", "verdict": "ok"})
    where = view.mapFromScene(node.sceneBoundingRect().center())
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, where, view.viewport().mapToGlobal(where)))
    qtbot.waitUntil(lambda: "UI capacity 0.250" in QToolTip.text(), timeout=10_000)
    assert QToolTip.text() == node.toolTip() and node.toolTip().startswith("Bolt b1")
