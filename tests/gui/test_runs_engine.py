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
    assert "grows" in panel.results.bolts.item(0, 4).text()
    assert panel.reliability_button.isEnabled()
    panel.check_reliability()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    assert "P2_take_has_ack_or_fail" in panel.results.reliability_text.toPlainText()


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


def test_the_panel_reads_logs_only_through_the_factory(make_window, qtbot, tmp_path: Path, monkeypatch) -> None:
    """A fake engine injected through the one factory (app/measure/engines.py) is what the panel uses."""
    from app.measure import engines
    from app.measure.analysis import analyze_local
    from app.measure.reliability import ReliabilityConfig, check_reliability_local

    log = known_log()
    calls: list[tuple[str, str]] = []

    class FakeEngine:
        name = "embedded"

        def __init__(self, reason: str):
            self.reason = reason

        def analyze(self, path, **kwargs):
            calls.append(("analyze", self.reason))
            return analyze_local(log.events, log.queues).model_copy(update={"source": "from the fake engine"})

        def reliability(self, path, config, **kwargs):
            calls.append(("reliability", self.reason))
            return check_reliability_local(log.events, ReliabilityConfig(ackers=0))

    monkeypatch.setitem(engines.ENGINE_BUILDERS, "embedded", lambda choice, spark: FakeEngine(choice.reason))
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    panel.open_log(_write_known(tmp_path))
    qtbot.waitUntil(lambda: panel.analysis is not None and panel.running is None, timeout=60_000)
    assert panel.analysis.source == "from the fake engine"
    panel.check_reliability()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    assert [op for op, _ in calls] == ["analyze", "reliability"]


def test_the_attached_spark_is_the_factorys_spark_engine(tmp_path: Path) -> None:
    from app.gui.panels.runs_controller import RunsController
    from app.spark.log_engine import SparkEngine
    from tests.gui.test_runs_panel import FakeHost

    host = FakeHost()
    path = _write_known(tmp_path)
    engine = RunsController.engine_for(path, host, "spark")
    assert isinstance(engine, SparkEngine) and engine.reason == "--engine spark"
    steps: list[str] = []
    analysis = RunsController.analyse(lambda message, fraction=None: steps.append(message), host, path, "spark")
    assert analysis.components["B"].taken == 20
    assert host.requests[-1] == ("analyze", {"path": str(path.resolve()), "time_unit": "s", "bin_s": 1.0,
                                             "growth_floor": 0.05})
    assert RunsController.engine_for(path, None, "embedded").name == "embedded"


def test_the_reports_reliability_comes_from_the_factorys_engine(tmp_path: Path, monkeypatch) -> None:
    """`analyze --report` checks the log in this process only with the engine the factory gives for it."""
    from app.cli import main
    from app.measure import engines
    from app.measure.reliability import ReliabilityConfig, check_reliability_local
    from tests.unit.test_log_engine import FakeEngine

    path = _write_known(tmp_path)

    class Fake(FakeEngine):
        def reliability(self, log, config, **kwargs):
            self.calls.append("reliability")
            report = check_reliability_local(known_log().events, ReliabilityConfig(ackers=0))
            return report.model_copy(update={"notes": ["checked by the fake engine"]})

    fake = Fake(path)
    monkeypatch.setitem(engines.ENGINE_BUILDERS, "embedded", lambda choice, spark: fake)
    out = tmp_path / "report.html"
    assert main(["analyze", str(path), "--report", str(out), "--json"]) == 0
    assert fake.calls == ["analyze", "reliability"]
    assert "checked by the fake engine" in out.read_text()
