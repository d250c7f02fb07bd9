"""The Runs panel reads small logs in this process: no Spark attached, no JVM."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gui.test_runs_panel import _known_topology_window
from tests.spark.test_analysis import known_log


def _write_known(folder: Path) -> Path:
    log = known_log()
    rows = [e.model_dump(exclude_none=True) for e in log.events] + [q.model_dump() for q in log.queues]
    path = folder / "known.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_open_and_check_a_small_log_without_spark(make_window, qtbot, tmp_path: Path) -> None:
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    assert panel.host is None and panel.engine_box.currentText() == "auto"
    assert panel.open_button.isEnabled() and not panel.run_button.isEnabled()
    path = _write_known(tmp_path)
    assert panel.open_log(path) is not None
    qtbot.waitUntil(lambda: panel.analysis is not None and panel.running is None, timeout=60_000)
    assert panel.analysis.components["B"].taken == 20
    assert "grows" in panel.bolts.item(0, 4).text()
    assert panel.reliability_button.isEnabled()
    panel.check_reliability()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    assert "P2_take_has_ack_or_fail" in panel.reliability_text.toPlainText()


def test_engine_spark_needs_spark_attached(make_window, qtbot, tmp_path: Path) -> None:
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    panel.engine_box.setCurrentText("spark")
    assert panel.settings.value("runs/engine") == "spark"
    assert not panel.open_button.isEnabled()
    assert panel.open_log(_write_known(tmp_path)) is None
    panel.engine_box.setCurrentText("auto")
    assert panel.open_button.isEnabled()


def test_a_large_log_asks_for_spark(make_window, qtbot, tmp_path: Path, monkeypatch) -> None:
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    monkeypatch.setenv("STORMBOUND_LOCAL_MAX_EVENTS", "5")
    messages: list[str] = []
    window.show_message = messages.append
    panel.open_log(_write_known(tmp_path))
    qtbot.waitUntil(lambda: panel.running is None and "attach Spark" in panel.progress.format(), timeout=60_000)
    assert panel.analysis is None
