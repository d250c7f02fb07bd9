"""Runs ▸ Live Mode: a worker polls a drifting stand-in Storm UI; the canvas shows each bolt's measured capacity
beside the model's ρ and the drift of α (app/gui/live.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_drift import DriftingStormUI  # noqa: E402 - the stand-in lives in tests/
from storm_ui_live import LiveStormUI  # noqa: E402


def test_live_mode_colours_bolts_by_measured_capacity(make_window: Callable[..., Any], qtbot: Any) -> None:
    window = make_window()
    with LiveStormUI("drift", change_after=3) as ui:
        window.dialogs.answers["live"] = {"url": ui.url, "topology": "wordcount-live", "every": 0.2, "polls": 12}
        window.findChild(type(window.action_save), "action_live_start").trigger()
        worker = window.live.worker
        assert worker is not None and not window.live.action_start.isEnabled()
        lines: list[Any] = []
        worker.progress.connect(lines.append)
        qtbot.waitUntil(lambda: any(line.statuses.get("count") == "grows" for line in lines), timeout=30000)
        topo = window.document.topology()  # it was empty: the first poll's topology is drawn, to be coloured
        assert {b.name for b in topo.bolts} >= {"split", "count"}, [b.name for b in topo.bolts]
        count = next(b for b in topo.bolts if b.name == "count")
        assert window.scene.nodes[count.id].live is not None  # coloured by its measured capacity
        last = window.live.last
        assert last is not None and last.bolts["count"].capacity == 1.0
        worker.cancel()
        qtbot.waitUntil(lambda: window.live.action_start.isEnabled(), timeout=15000)  # finished, handled


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
