"""Runs ▸ Live Mode: a worker polls a stand-in Storm UI whose counts move; the canvas shows each bolt's measured
capacity and verdict beside the model's ρ at the measured figures and the drift of α (app/gui/live.py)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_drift import DriftingStormUI  # noqa: E402 - the stand-ins live in tests/
from storm_ui_live import LiveStormUI  # noqa: E402


def test_live_mode_colours_bolts_by_measured_capacity(make_window: Callable[..., Any], qtbot: Any) -> None:
    window = make_window()
    with LiveStormUI("drift", change_after=3) as ui:
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-live", "every": 0.2, "polls": 40}
        window.findChild(type(window.action_save), "action_live_start").trigger()
        worker = window.live.worker
        assert worker is not None and not window.live.action_start.isEnabled()
        lines: list[Any] = []
        worker.progress.connect(lines.append)
        qtbot.waitUntil(lambda: any(line.statuses.get("count") == "grows" for line in lines), timeout=60000)
        topo = window.document.topology()  # it was empty: the first poll's topology is drawn, to be coloured
        assert {b.name for b in topo.bolts} >= {"split", "count"}, [b.name for b in topo.bolts]
        count = next(b for b in topo.bolts if b.name == "count")
        assert window.scene.nodes[count.id].live is not None  # coloured by its measured capacity
        last = window.live.last
        assert last is not None and last.bolts["count"].capacity == 1.0
        worker.cancel()
        qtbot.waitUntil(lambda: window.live.action_start.isEnabled(), timeout=15000)  # finished, handled


def test_a_wide_topology_is_laid_out_and_analysed_off_the_gui_thread_and_drawn_in_turns(
        make_window: Callable[..., Any], qtbot: Any, monkeypatch: Any) -> None:
    """The first poll's topology on an empty canvas: laid out and analysed by the worker (3,000 bolts take seconds:
    bench/gui_live_first_poll.py), drawn in turns, then coloured by the polls."""
    import threading

    from app.core import layout as layout_module
    from app.gui import analysis as analysis_module
    from app.gui.canvas import scene as scene_module

    threads: dict[str, list[str]] = {"layout": [], "analysis": []}
    real_layout, real_analysis = layout_module.with_layout, analysis_module.RateAnalysis

    def with_layout(topo: Any) -> Any:
        threads["layout"].append(threading.current_thread().name)
        return real_layout(topo)

    class Counted(real_analysis):  # type: ignore[misc, valid-type]
        def __init__(self, topo: Any) -> None:
            threads["analysis"].append(threading.current_thread().name)
            super().__init__(topo)

    monkeypatch.setattr(layout_module, "with_layout", with_layout)
    monkeypatch.setattr(analysis_module, "RateAnalysis", Counted)
    bolts = 2 * scene_module.NODE_BATCH + 50
    window = make_window()
    threads["analysis"].clear()  # the new window's empty document
    first_turn: list[int] = []
    window.document.document_replaced.connect(lambda: first_turn.append(len(window.scene.nodes)))
    with LiveStormUI("wide", bolts=bolts) as ui:
        worker = window.live.start({"url": ui.url, "topology": "wordcount-live", "every": 0.2, "polls": 60})
        assert worker is not None
        nodes = window.scene.nodes
        qtbot.waitUntil(lambda: len(nodes) == bolts + 1 and not window.scene.drawing()
                        and all(n.live is not None for n in nodes.values() if n.component.kind == "bolt"),
                        timeout=120_000)
        window.live.stop()
    assert first_turn == [scene_module.NODE_BATCH]  # drawn in turns, the window answering between them
    assert len(window.scene.edges) == bolts
    gui = threading.current_thread().name
    for what in ("layout", "analysis"):  # once, in the worker
        assert len(threads[what]) == 1 and threads[what][0] != gui, (what, threads[what])
    assert all(n.rates is not None for n in nodes.values() if n.component.kind == "bolt")  # the worker's analysis


def test_live_mode_on_the_open_document(make_window: Callable[..., Any], qtbot: Any, tmp_path: Path) -> None:
    from app.cli import main
    from app.gui.canvas.items import utilisation_colour
    from app.measure.storm_figures import model_of_run

    with LiveStormUI("drift", change_after=1000) as ui:  # healthy: count at capacity 0.5
        assert main(["-q", "record", ui.url, "--topology", "wordcount-live", "--every", "0.05", "--polls", "3",
                     "--out", str(tmp_path / "r")]) == 0
        model = model_of_run(str(tmp_path / "r"))
        assert model is not None
        doc = tmp_path / "wc.storm.json"
        doc.write_bytes(model.to_json_bytes())
        window = make_window()
        window.open_path(str(doc))
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-live", "every": 0.2, "polls": 30}
        window.live.start_dialog()
        count = window.document.topology().bolt_by_name("count")
        node = window.scene.nodes[count.id]
        qtbot.waitUntil(lambda: node.live is not None and node.live.get("capacity") is not None, timeout=15000)
        assert node.header_colour() == utilisation_colour(0.5)
        # the figures labelled as `watch` labels them: the UI's capacity, the model's ρ at the measured figures
        assert node.parameter_lines()[0] == "UI capacity 0.50 · keeps up"
        second = node.parameter_lines()[1]
        assert second.startswith("model ρ ") and 0.4 < float(second.split()[2]) < 0.6, second
        assert "UI capacity 0.500" in node.toolTip() and "model ρ at the measured figures 0." in node.toolTip()
        assert window.status_problems.text().startswith("Live: every bolt keeps up")
        window.live.stop()
        qtbot.waitUntil(lambda: not window.live.action_stop.isEnabled(), timeout=15000)
    assert node.live is None  # stopping clears the live figures


def test_an_overloaded_bolt_is_red_and_its_labels_fit(make_window: Callable[..., Any], qtbot: Any) -> None:
    from PySide6.QtGui import QFont, QFontMetricsF

    from app.gui.canvas.items import NODE_WIDTH, RED, fitted_font

    window = make_window()
    with LiveStormUI("stall", change_after=3) as ui:
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-live", "every": 0.05, "polls": 12}
        window.live.start_dialog()
        qtbot.waitUntil(lambda: window.scene.live_verdicts.get("count") == "stall", timeout=30000)
        count = window.document.topology().bolt_by_name("count")
        node = window.scene.nodes[count.id]
        assert node.header_colour() == RED  # its capacity is shown as 1.50 but the colour says overload
        lines = node.parameter_lines()
        assert lines[0] == "UI capacity 1.50 · stall", lines
        body = QFont()
        body.setPointSizeF(8.5)
        for line in [*lines, "UI capacity 1.00 · within noise", "model ρ 1.25 · α+103%"]:
            assert QFontMetricsF(fitted_font(body, line, NODE_WIDTH - 24)).horizontalAdvance(line) <= NODE_WIDTH - 24
        assert "count stall" in window.status_problems.text()
        window.live.stop()
        qtbot.waitUntil(lambda: window.live.action_start.isEnabled(), timeout=15000)
    assert not window.scene.live_verdicts


def test_live_mode_refuses_an_open_document_of_another_topology(make_window: Callable[..., Any], qtbot: Any,
                                                                tmp_path: Path) -> None:
    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot

    poll = LiveStormUI("drift").poll_at(1, 5.0)
    model = from_storm_ui(StormUISnapshot(url="http://x", topology_id="x", window="all", topology=poll.topology,
                                          components=poll.components)).topology
    doc = tmp_path / "wc.storm.json"
    doc.write_bytes(model.to_json_bytes())
    window = make_window()
    window.open_path(str(doc))
    with LiveStormUI("wrong") as ui:
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-live", "every": 0.05, "polls": 5}
        window.live.start_dialog()
        qtbot.waitUntil(lambda: window.live.action_start.isEnabled(), timeout=15000)
    errors = [text for kind, _, text in window.dialogs.shown if kind == "error"]
    assert errors and "the document is not the running topology" in errors[0]
    assert "bolts only on the cluster: fetch, store" in errors[0]
    assert all(node.live is None for node in window.scene.nodes.values())


def _inside_a_hung_poll(window: Any, ui: DriftingStormUI, qtbot: Any) -> Any:
    """Live Mode started against `ui`, one poll judged, then its worker inside a poll the UI does not answer."""
    window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-drift", "every": 0.05, "polls": 1000}
    window.live.start_dialog()
    worker = window.live.worker
    assert worker is not None
    qtbot.waitUntil(lambda: window.live.last is not None and bool(window.live.last.statuses), timeout=30000)
    ui.hold()
    qtbot.waitUntil(lambda: ui.held >= 1, timeout=30000)
    return worker


def test_closing_the_window_while_live_mode_polls(qtbot: Any, tmp_path: Path) -> None:
    """The user closes the window while a poll hangs: the window goes (its join is bounded), the worker ends
    on its own later and its last signals find no window; nothing is freed twice, nothing raises."""
    from PySide6.QtCore import QSettings

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow
    from app.gui.workers import Worker

    # not make_window's: this window is deleted here, as the application deletes a closed window
    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True, answers={"save_changes": "discard"}),
                        autosave_dir=tmp_path / "autosave")
    window.show()
    with DriftingStormUI(overload_after=1000) as ui:
        worker = _inside_a_hung_poll(window, ui, qtbot)
        assert window.close()  # shutdown cancels the worker and waits for it, within a bound
        assert worker.isRunning()  # still waiting for the UI: it outlives the window
        window.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the window and its Live Mode are gone
        gc.collect()  # and so are their Python wrappers, with the worker still running
        ui.release()
        qtbot.waitUntil(lambda: worker not in Worker.running_workers(), timeout=30000)
    assert worker.wait(30000)
    QApplication.processEvents()  # its last queued signals, for a window that is no more
    gc.collect()


def test_stop_turns_live_mode_off_at_once_while_a_poll_hangs(make_window: Callable[..., Any], qtbot: Any) -> None:
    """Stop inside a poll the UI does not answer (as inside the seconds a 3,000-bolt poll takes: bench/live_stop.py):
    Live Mode is off within the click; the worker, let go, ends on its own and its late signals change nothing."""
    from app.gui.workers import Worker

    window = make_window()
    with DriftingStormUI(overload_after=1000) as ui:
        worker = _inside_a_hung_poll(window, ui, qtbot)
        window.live.action_stop.trigger()
        # off now, without waiting for the worker: the start action is back, the canvas no longer live
        assert window.live.action_start.isEnabled() and not window.live.action_stop.isEnabled()
        assert window.live.worker is None and window.scene.live_verdicts == {}
        assert worker.isRunning() and worker in window.live.stopping
        # Live Mode can start again at once, beside the one still ending
        window.dialogs.answers["live"] = {**window.dialogs.answers["live"], "polls": 1}
        shown = len(window.dialogs.shown)
        ui.release()
        qtbot.waitUntil(lambda: worker not in Worker.running_workers(), timeout=30000)
        QApplication.processEvents()  # its last queued signals: disconnected, so nothing is shown or coloured
        assert window.scene.live_verdicts == {} and len(window.dialogs.shown) == shown
        assert window.live.stopping == [] and window.live.action_start.isEnabled()
        second = window.live.start({"url": ui.url, "topology": "wordcount-drift", "every": 0.05, "polls": 2})
        assert second is not None
        qtbot.waitUntil(lambda: second.isFinished(), timeout=60000)


def test_live_mode_takes_watchs_judging_options_with_its_defaults_and_bounds(make_window: Callable[..., Any],
                                                                            monkeypatch: Any) -> None:
    """--window, --lag-window and --fail-after: in the dialog with watch's defaults, refused as watch refuses
    them (naming the option), and given to the judge."""
    from app.cli import build_parser
    from app.gui.live import LiveDialog, LiveWorker, judging_problem
    from app.measure import storm_watch

    watch = build_parser().parse_args(["watch", "http://ui", "--topology", "t"])
    dialog = LiveDialog(None, {})
    values = dialog.values()
    assert (values["window"], values["lag_window"], values["fail_after"]) == \
        (watch.window, watch.lag_window, watch.fail_after)
    assert dialog.intervals.minimum() == 2 and dialog.fail_after.minimum() == 1 and dialog.lag_window.minimum() > 0
    assert LiveDialog(None, {"window": 9, "lag_window": 90.0, "fail_after": 5}).values()["window"] == 9
    dialog.deleteLater()
    for bad, says in (({"window": 1}, "--window: 1 is below 2"), ({"fail_after": 0}, "--fail-after: 0 is below 1"),
                      ({"lag_window": 0}, "--lag-window: 0 s is out of range"),
                      ({"window": 2.5}, "--window: 2.5 is not a whole number"),
                      ({"lag_window": "60"}, "--lag-window: '60' is not a number")):
        assert (judging_problem(bad) or "").startswith(says), (bad, judging_problem(bad))
    assert judging_problem({"window": 2, "lag_window": 0.5, "fail_after": 1}) is None
    window = make_window()
    window.dialogs.answers["live"] = {"url": "http://127.0.0.1:9", "topology": "t", "window": 1}
    window.live.start_dialog()
    assert window.live.worker is None and "--window: 1 is below 2" in window.dialogs.shown[-1][2]

    made: list[dict[str, Any]] = []

    class Stop(Exception):
        pass

    def judge(model: Any, every: float, **kwargs: Any) -> Any:
        made.append(kwargs)
        raise Stop

    monkeypatch.setattr(storm_watch, "Judge", judge)
    monkeypatch.setattr("app.core.storm.ui.fetch.find_topology", lambda client, name: name)
    worker = LiveWorker({"url": "http://127.0.0.1:9", "topology": "t", "every": 1, "window": 4, "lag_window": 90.0,
                         "fail_after": 2}, None)
    with pytest.raises(Stop):
        worker.work()
    assert made == [{"fail_on": "may-grow", "window": 4, "fail_after": 2, "lag_window": 90.0}]
