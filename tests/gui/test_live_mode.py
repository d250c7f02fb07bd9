"""Runs ▸ Live Mode: a worker polls a drifting stand-in Storm UI; the canvas shows each bolt's measured capacity
beside the model's ρ and the drift of α (app/gui/live.py)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_drift import DriftingStormUI  # noqa: E402 - the stand-in lives in tests/


class Shown(QObject):
    """Each poll's line with the `count` node as the window drew it. Connected to the worker after the window's
    own slot, so it runs in the GUI thread right after the window has shown that line."""

    def __init__(self, window: Any):
        super().__init__()
        self.scene, self.document = window.scene, window.document
        self.lines: list[tuple[Any, dict[str, Any] | None, str | None]] = []

    def record(self, line: Any) -> None:
        count = next((b for b in self.document.topology().bolts if b.name == "count"), None)
        node = None if count is None else self.scene.nodes.get(count.id)
        live = None if node is None or node.live is None else dict(node.live)
        self.lines.append((line, live, None if node is None else node.header_colour().name()))

    def first(self, status: str) -> tuple[Any, dict[str, Any] | None, str | None] | None:
        return next((shown for shown in self.lines if shown[0].statuses.get("count") == status), None)


def test_live_mode_colours_bolts_by_measured_capacity(make_window: Callable[..., Any], qtbot: Any) -> None:
    from app.gui.canvas.items import utilisation_colour

    window = make_window()
    with DriftingStormUI(overload_after=3) as ui:
        # polls until stopped: the status of a poll is measured over the short interval since the previous one,
        # so the test waits for the line that shows count growing (once the 3rd poll has overloaded it)
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-drift", "every": 0.1, "polls": 200}
        window.findChild(type(window.action_save), "action_live_start").trigger()
        worker = window.live.worker
        assert worker is not None and not window.live.action_start.isEnabled()
        shown = Shown(window)
        worker.progress.connect(shown.record)
        qtbot.waitUntil(lambda: shown.first("grows") is not None, timeout=60000)
        window.live.stop()
        qtbot.waitUntil(window.live.action_start.isEnabled, timeout=15000)  # Live Mode has stopped, as the user sees
    assert not worker.isRunning() and not window.live.action_stop.isEnabled()
    topo = window.document.topology()  # it was empty: the first poll's topology is drawn, to be coloured
    assert {b.name for b in topo.bolts} >= {"split", "count"}, [b.name for b in topo.bolts]
    grows = shown.first("grows")
    assert grows is not None
    line, live, colour = grows
    assert line.bolts["count"]["capacity"] == 1.0
    assert live is not None and live["capacity"] == 1.0 and live["status"] == "grows"  # the node showed that line
    assert colour == utilisation_colour(1.0).name()  # coloured by its measured capacity
    assert window.live.last is not None and window.live.last.poll >= line.poll
    count = next(b for b in topo.bolts if b.name == "count")
    assert window.scene.nodes[count.id].live is None  # stopping clears the live figures


def test_live_mode_on_the_open_document(make_window: Callable[..., Any], qtbot: Any, tmp_path: Path) -> None:
    from app.cli import main
    from app.gui.canvas.items import utilisation_colour
    from app.measure.storm_figures import model_of_run

    with DriftingStormUI(overload_after=1000) as ui:
        assert main(["-q", "record", ui.url, "--topology", "wordcount-drift", "--every", "0.05", "--polls", "3",
                     "--out", str(tmp_path / "r")]) == 0
        model = model_of_run(str(tmp_path / "r"))
        assert model is not None
        doc = tmp_path / "wc.storm.json"
        doc.write_bytes(model.to_json_bytes())
        window = make_window()
        window.open_path(str(doc))
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-drift", "every": 0.05, "polls": 20}
        window.live.start_dialog()
        count = window.document.topology().bolt_by_name("count")
        node = window.scene.nodes[count.id]
        qtbot.waitUntil(lambda: node.live is not None and node.live.get("capacity") is not None, timeout=15000)
        assert node.header_colour() == utilisation_colour(0.5)
        assert node.parameter_lines()[1].startswith("cap 0.50  ρ 0.")
        assert "Live (Storm UI): capacity 0.500" in node.toolTip()
        window.live.stop()
        qtbot.waitUntil(lambda: not window.live.action_stop.isEnabled(), timeout=15000)
    assert node.live is None  # stopping clears the live figures


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
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-drift", "every": 0.05, "polls": 1000}
        window.live.start_dialog()
        worker = window.live.worker
        assert worker is not None
        qtbot.waitUntil(lambda: window.live.last is not None and bool(window.live.last.statuses), timeout=30000)
        ui.hold()
        qtbot.waitUntil(lambda: ui.held >= 1, timeout=30000)  # the worker is inside a poll the UI does not answer
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
