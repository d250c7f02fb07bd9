"""The Runs panel with a fake Spark host: attach, run with progress and Cancel, parameters, apply, undo."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from app.measure.analysis import analyze_local
from app.measure.reliability import ReliabilityConfig, check_reliability_local
from tests.spark.test_analysis import known_log


class FakeHost:
    """Answers like the Spark host: a run reports progress until done or cancelled."""

    def __init__(self, python: str | None = None, master: str | None = None, fail: str | None = None):
        self.fail = fail
        self.info = {"master": "local[2]", "spark_version": "fake"}
        self.cancelled: set[int] = set()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.closed = False
        self._next = 0

    def start(self) -> dict[str, Any]:
        if self.fail:
            from app.spark.session import SparkUnavailable

            raise SparkUnavailable(self.fail)
        return self.info

    def submit(self, op: str, **params: Any) -> int:
        self._next += 1
        self.requests.append((op, params))
        return self._next

    def wait(self, ident: int, on_progress=None) -> dict[str, Any]:
        from app.spark.client import HostError

        op, params = self.requests[ident - 1]
        if op == "run":
            for i in range(200):
                if ident in self.cancelled:
                    raise HostError("run cancelled", "cancelled")
                if on_progress:
                    on_progress(i / 200, f"running {i}")
                if params["spec"]["duration_s"] < 10 and i > 5:
                    break
                time.sleep(0.02)
            return {"out_dir": params["out"]}
        if op == "analyze":
            log = known_log()
            return analyze_local(log.events, log.queues).model_dump()
        if op == "reliability":
            return check_reliability_local(known_log().events, ReliabilityConfig(ackers=0)).model_dump()
        raise HostError(f"unknown {op}")

    def request(self, op: str, on_progress=None, **params: Any) -> dict[str, Any]:
        return self.wait(self.submit(op, **params), on_progress)

    def cancel(self, ident: int) -> None:
        self.cancelled.add(ident)

    def close(self) -> None:
        self.closed = True


def _known_topology_window(make_window, tmp_path: Path):
    window = make_window()
    path = tmp_path / "known.storm.json"
    path.write_text("""{"name": "known", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
      "bolts": [{"name": "B", "alpha": 0.25, "sigma": 1.0, "parallelism": 1},
                {"name": "C", "alpha": 1, "sigma": 0, "parallelism": 1}],
      "subscriptions": [{"source": "S", "target": "B"}, {"source": "B", "target": "C"}]}""")
    assert window.open_path(path, ask=False)
    return window


def _attached_window(make_window, qtbot, tmp_path: Path, fake: FakeHost):
    """A window on the known topology whose Runs panel is attached to `fake`."""
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    panel.host_factory = lambda python, master: fake
    panel.attach()
    qtbot.waitUntil(lambda: panel.host is fake, timeout=30_000)
    return window


def test_menu_and_panel_installed(make_window) -> None:
    window = make_window()
    panel = window.runs_panel
    names = {a.objectName() for a in window.menu("Runs").actions()}
    assert {"action_runs_attach", "action_runs_run", "action_runs_cancel", "action_runs_apply"} <= names
    assert not panel.run_button.isEnabled() and panel.status.text() == "Spark: detached"


def test_attach_failure_is_one_line(make_window, qtbot) -> None:
    panel = make_window().runs_panel
    panel.host_factory = lambda python, master: FakeHost(fail="/usr/bin/python3 has no pyspark: install it there")
    panel.attach()
    qtbot.waitUntil(lambda: "has no pyspark" in panel.status.text(), timeout=30_000)
    assert panel.host is None and not panel.run_button.isEnabled()


def test_run_progress_cancel_then_run_and_apply(make_window, qtbot, tmp_path: Path) -> None:
    fake = FakeHost()
    window = _attached_window(make_window, qtbot, tmp_path, fake)
    panel = window.runs_panel
    assert "attached" in panel.status.text() and panel.run_button.isEnabled()

    panel.duration.setValue(60)
    panel.start_run()
    qtbot.waitUntil(lambda: panel.progress.value() > 0, timeout=30_000)
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    panel.cancel()
    qtbot.waitUntil(lambda: panel.running is None, timeout=30_000)
    assert "cancelled" in panel.progress.format() and panel.analysis is None

    panel.duration.setValue(2)
    panel.start_run()
    qtbot.waitUntil(lambda: panel.analysis is not None and panel.running is None, timeout=30_000)
    assert panel.results.parameters.rowCount() == 2 + 2 * 2
    cells = {(panel.results.parameters.item(r, 0).text(), panel.results.parameters.item(r, 1).text()):
             panel.results.parameters.item(r, 3).text()
             for r in range(panel.results.parameters.rowCount())}
    assert cells[("S", "rate")] == "2" and cells[("B", "alpha")] == "0.5"
    assert panel.results.bolts.item(0, 0).text() == "B" and "grows" in panel.results.bolts.item(0, 4).text()
    assert panel.results.plot.getPlotItem().listDataItems()  # measured series drawn

    before = window.document.topology()
    assert panel.apply_measured() == 2  # S (rate, burst) and B (alpha, sigma)
    after = window.document.topology()
    assert after.component("S").rate == 2.0 and after.component("B").alpha == 0.5 and after.component("B").sigma == 0.5
    window.document.undo_stack.undo()  # one step
    assert window.document.topology().semantics() == before.semantics()

    panel.check_reliability()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=30_000)
    assert "P2_take_has_ack_or_fail" in panel.results.reliability_text.toPlainText()
    panel.detach()
    assert fake.closed and panel.host is None


def test_overlay_on_trace_plots(make_window, tmp_path: Path) -> None:
    import pyqtgraph as pg

    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    plot = pg.PlotItem()

    class View:
        plot_items = {"B": plot}

    panel.set_trace_plots(View())  # stands in for the trace view's plots
    log = known_log()
    panel.show_analysis(analyze_local(log.events, log.queues))
    items = [i for i in plot.listDataItems() if i.opts["pen"].style() == pg.QtCore.Qt.PenStyle.DashLine]
    assert len(items) == 1
    panel.results.overlay_box.setChecked(False)
    assert not plot.listDataItems()


def test_patterns_tab_shows_monitor_matches_of_a_run(make_window, qtbot, tmp_path: Path) -> None:
    import json

    window = make_window()
    panel = window.runs_panel
    log = tmp_path / "events.jsonl"
    rows = [{"t": t, "ev": "bolt_fail", "comp": "B2", "task": 1, "tuple": f"t{i}"}
            for i, t in enumerate((1.0, 4.0, 9.0))]
    rows.append({"t": 30.0, "ev": "bolt_fail", "comp": "B3", "task": 2, "tuple": "t9"})
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    panel.match_patterns(log)
    qtbot.waitUntil(lambda: panel.results.patterns.model.rowCount() > 0, timeout=60_000)
    found = {m.pattern for m in panel.results.patterns.model.matches}
    assert found == {"repeated_bolt_failure"}
    assert "1 matches" in panel.results.patterns.summary.text()
    panel.match_patterns(tmp_path / "missing.jsonl")
    qtbot.waitUntil(lambda: "could not run" in panel.results.patterns.summary.text(), timeout=60_000)


def test_attach_to_a_spark_connect_url(make_window, qtbot, tmp_path: Path) -> None:
    window = _known_topology_window(make_window, tmp_path)
    panel = window.runs_panel
    fake = FakeHost()
    fake.info = {"master": "sc://gateway:15002", "spark_version": "4.0.5", "slots": 8, "connect": True}
    seen: list[str | None] = []

    def factory(python, master):
        seen.append(master)
        return fake

    panel.host_factory = factory
    panel.master_edit.setText("sc://gateway:15002")
    panel.attach()
    qtbot.waitUntil(lambda: panel.host is fake, timeout=30_000)
    assert seen == ["sc://gateway:15002"]
    assert panel.status.text() == "Spark: attached (Spark Connect sc://gateway:15002, Spark 4.0.5, 8 task slots)"
    assert panel.settings.value("runs/master") == "sc://gateway:15002"


def test_run_sends_the_acker_settings(make_window, qtbot, tmp_path: Path) -> None:
    fake = FakeHost()
    panel = _attached_window(make_window, qtbot, tmp_path, fake).runs_panel
    panel.duration.setValue(2)
    panel.timeout.setValue(5)
    panel.max_pending.setValue(40)
    call = panel.start_run()
    qtbot.waitUntil(lambda: panel.running is None, timeout=60_000)
    spec = fake.requests[0][1]["spec"]
    assert (spec["acking"], spec["message_timeout_s"], spec["max_spout_pending"]) == (True, 5.0, 40)
    panel.acker_box.setChecked(False)
    assert not panel.timeout.isEnabled() and not panel.max_pending.isEnabled()
    panel.max_pending.setValue(0)  # "no limit"
    panel.start_run()
    qtbot.waitUntil(lambda: panel.running is None, timeout=60_000)
    spec = [params["spec"] for op, params in fake.requests if op == "run"][-1]
    assert (spec["acking"], spec["max_spout_pending"]) == (False, None)
    assert panel.settings.value("runs/acking") == "false" and call is not None


def test_run_sends_the_kills_and_refuses_a_bad_one(make_window, qtbot, tmp_path: Path) -> None:
    fake = FakeHost()
    panel = _attached_window(make_window, qtbot, tmp_path, fake).runs_panel
    panel.duration.setValue(5)
    failures: list[str] = []
    panel.controller.failed.connect(failures.append)
    for bad, message in (("B@9", "kill B@9: the time must be before the end of the run"),
                         ("S@1", "kill S: a spout cannot be killed"), ("B@-1", "kill B@-1: TIME must be at least 0"),
                         ("B", "kill expected BOLT@TIME[/DOWN]")):
        panel.kill_edit.setText(bad)
        assert panel.start_run() is None
        assert failures[-1].startswith(message), failures[-1]
    assert not fake.requests
    panel.kill_edit.setText("B@1/500ms, C@2s")
    panel.start_run()
    qtbot.waitUntil(lambda: panel.running is None, timeout=60_000)
    spec = fake.requests[0][1]["spec"]
    assert spec["kills"] == [{"bolt": "B", "at_s": 1.0, "down_s": 0.5}, {"bolt": "C", "at_s": 2.0, "down_s": 1.0}]
