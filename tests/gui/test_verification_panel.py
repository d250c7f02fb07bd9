"""The verification panel's mechanics with a scripted search: markers, cancel, stale, export.

The scripted search behaves like `app.core.tcn.search.Search` (progress callback,
blocking run, thread-safe cancel) so these tests are fast and independent of solver
timing; tests/gui/test_verification_e2e.py runs the real verifier.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from test_trace_view import make_trace

from app.cli import build_parser
from app.core.formats import load_topology
from app.core.formats.verified import check_verified
from app.core.results import Progress, VerifyResult
from app.core.tcn.options import SearchOptions
from app.core.topology import TopologyError
from app.gui.commands import SetComponentFieldsCommand, SetSectionFieldsCommand
from app.gui.document import DocumentModel
from app.gui.panels.verification import VerificationPanel, create_actions, format_stats
from app.gui.workers import VerifyWorker


class ScriptedSearch:
    """Counts k up every `step_s` seconds until `k_final`, then returns `verdict`; cancel stops it."""

    instances: list[ScriptedSearch] = []

    def __init__(self, topo: Any, options: SearchOptions, *, progress: Callable[[Progress], None] | None = None,
                 verdict: str = "counterexample", k_final: int = 6, step_s: float = 0.01, fail: str = "") -> None:
        self.topo, self.options, self.threshold = topo, options, options.threshold
        self.progress, self.verdict, self.k_final, self.step_s, self.fail = progress, verdict, k_final, step_s, fail
        self._stop = threading.Event()
        ScriptedSearch.instances.append(self)

    def cancel(self) -> None:
        self._stop.set()

    def run(self) -> VerifyResult:
        started = time.monotonic()
        prop = "threshold" if self.threshold is not None else "growth"
        for k in range(2, self.k_final + 1):
            if self._stop.wait(self.step_s):
                return VerifyResult(property=prop, verdict="unknown", k=k, elapsed_s=time.monotonic() - started,
                                    message="Cancelled.")
            if self.progress is not None:
                self.progress(Progress(k=k, elapsed_s=time.monotonic() - started,
                                       stats={"conflicts": 10 * k, "decisions": 7 * k, "memory": 12.5}))
        if self.fail:
            raise RuntimeError(self.fail)
        trace = make_trace() if self.verdict == "counterexample" else None
        return VerifyResult(property=prop, verdict=self.verdict, k=self.k_final, loop_start=1,  # type: ignore[arg-type]  # a str verdict
                            growing=["B1"] if trace else [], growth_per_loop={"B1": 1} if trace else {},
                            certified=trace is not None, elapsed_s=time.monotonic() - started,
                            message=f"scripted {self.verdict}", notes=["a note in words"], threshold=self.threshold,
                            trace=trace)


@pytest.fixture()
def document(models_dir: Path) -> DocumentModel:
    return DocumentModel(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"))


def make_panel(qtbot, document: DocumentModel, **script: Any) -> VerificationPanel:
    panel = VerificationPanel(document, search_factory=partial(ScriptedSearch, **script))
    qtbot.addWidget(panel)
    panel.show()
    return panel


def run_to_end(qtbot, panel: VerificationPanel, timeout_ms: int = 30_000) -> None:
    with qtbot.waitSignal(panel.all_finished, timeout=timeout_ms):
        panel.start()


def test_properties_start_grey_and_follow_the_settings(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document)
    assert [s.spec.title for s in panel.states] == ["Unbounded growth of B2, B3"]
    assert panel.marker_colour(0) == "grey" and panel.verdict_text(0) == "not run"
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 40}))
    assert [s.spec.title for s in panel.states] == ["Unbounded growth of B2, B3", "Some queue reaches 40"]


@pytest.mark.parametrize(("verdict", "colour", "words"), [
    ("counterexample", "red", "counterexample (k = 6)"),
    ("none-up-to-k", "green", "no counterexample up to k = 6"),
    ("bounded", "green", "bounded (rate proof)"),
    ("unknown", "amber", "unknown"),
])
def test_verdict_markers_and_words(qtbot, document: DocumentModel, verdict: str, colour: str, words: str) -> None:
    panel = make_panel(qtbot, document, verdict=verdict)
    run_to_end(qtbot, panel)
    assert panel.marker_colour(0) == colour
    assert panel.verdict_text(0) == words
    assert panel.model.text(0, 2) == words and panel.model.text(0, 3) == "6"
    assert f"scripted {verdict}" in panel.details.toPlainText()
    assert "a note in words" in panel.details.toPlainText()
    assert panel.progress.label.text().startswith("Finished in")
    assert (panel.trace_view.trace is not None) == (verdict == "counterexample")


def test_counterexample_opens_trace_with_loop_region(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document)
    run_to_end(qtbot, panel)
    assert panel.trace_view.trace == make_trace()
    assert panel.trace_view.loop_region_bounds() == [(1.0, 2.0)]
    assert panel.bar.trace_button.isEnabled()


def test_progress_shows_k_elapsed_and_solver_statistics(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document, k_final=40, step_s=0.02)
    seen: list[str] = []
    panel.start()
    qtbot.waitUntil(lambda: "k = " in panel.progress.label.text(), timeout=30_000)
    seen.append(panel.progress.label.text())
    text = seen[0]
    assert text.startswith("Verifying unbounded growth of b2, b3: ")
    assert " s, k = " in text and "conflicts" in text and "decisions" in text and "memory 12.5 MB" in text
    assert panel.progress.bar.isVisible() and panel.progress.bar.value() >= 2
    with qtbot.waitSignal(panel.all_finished, timeout=30_000):
        panel.cancel()


def test_cancel_stops_promptly_and_reports_unknown(qtbot, document: DocumentModel) -> None:
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 40}))
    panel = make_panel(qtbot, document, k_final=10_000, step_s=0.05)
    # load-tolerant: the median of 5 cancels within 0.5 s, any one within 2 s (the 100 ms target on a
    # quiet machine is a figure of bench/gui_latency.py)
    latencies, reported = [], []
    for _ in range(5):
        panel.start()
        qtbot.waitUntil(lambda: panel.states[0].progress is not None, timeout=60_000)
        started = time.monotonic()
        with qtbot.waitSignal(panel.all_finished, timeout=60_000):
            panel.cancel()
        latencies.append(time.monotonic() - started)
        assert panel.last_cancel_latency_s is not None
        reported.append(panel.last_cancel_latency_s)
    assert statistics.median(latencies) < 0.5, f"cancel took {[round(t * 1000) for t in latencies]} ms"
    assert max(latencies) < 2.0 and statistics.median(reported) < 0.5, (latencies, reported)
    assert panel.marker_colour(0) == "amber" and panel.verdict_text(0) == "unknown"
    assert panel.verdict_text(1) == "not run (cancelled)" and panel.marker_colour(1) == "grey"
    assert not panel.is_running() and panel.bar.verify_button.isEnabled()


def test_any_edit_makes_results_stale(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document)
    run_to_end(qtbot, panel)
    assert panel.marker_colour(0) == "red"
    b2 = document.topology().bolt_by_name("B2")
    document.undo_stack.push(SetComponentFieldsCommand(document, b2.id, {"parallelism": 9}))
    assert panel.marker_colour(0) == "grey"
    assert panel.verdict_text(0) == "stale: counterexample (k = 6)"
    assert "verify again" in panel.details.toPlainText()
    assert panel.trace_view.title.text().startswith("Stale")
    document.undo_stack.undo()  # back to the verified semantics, but results stay stale: re-verify
    assert panel.marker_colour(0) == "grey"
    run_to_end(qtbot, panel)
    assert panel.marker_colour(0) == "red" and not panel.states[0].stale


def test_edit_during_run_makes_arriving_result_stale(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document, k_final=8, step_s=0.02)
    with qtbot.waitSignal(panel.all_finished, timeout=30_000):
        panel.start()
        b3 = document.topology().bolt_by_name("B3")
        document.undo_stack.push(SetComponentFieldsCommand(document, b3.id, {"alpha": 0.5}))
    assert panel.states[0].stale and panel.marker_colour(0) == "grey"


def test_gui_keeps_processing_events_while_verifying(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document, k_final=60, step_s=0.02)
    timer = QTimer()
    timer.setInterval(20)
    shown: list[int] = []  # at each tick of the GUI thread's timer, the k the panel shows

    def tick() -> None:
        progress = panel.states[0].progress
        if progress is not None:
            shown.append(progress.k)

    timer.timeout.connect(tick)
    timer.start()
    run_to_end(qtbot, panel, timeout_ms=60_000)
    timer.stop()
    # the timer ran between the search's steps: a search in the GUI thread would let no tick see a step
    # before the last (judged by what was seen, not by gaps in time, which a loaded machine stretches)
    assert len(set(shown) - {60}) >= 3, f"the GUI thread ticked at k = {sorted(set(shown))} of a 60-step search"


def test_invalid_document_is_refused_in_words(qtbot) -> None:
    document = DocumentModel()
    panel = make_panel(qtbot, document)
    with qtbot.waitSignal(panel.all_finished, timeout=60_000):
        panel.start()
    assert panel.marker_colour(0) == "amber"
    assert "Cannot verify: topology: is empty" in panel.progress.label.text()
    assert not ScriptedSearch.instances or ScriptedSearch.instances[-1].topo.spouts


def test_search_failure_is_amber_with_a_message(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document, fail="encoding exploded")
    run_to_end(qtbot, panel)
    assert panel.marker_colour(0) == "amber"
    assert panel.verdict_text(0) == "unknown (failed)"
    assert "RuntimeError: encoding exploded" in panel.details.toPlainText()


def test_options_reach_the_search(qtbot, document: DocumentModel) -> None:
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 7}))
    panel = make_panel(qtbot, document, verdict="none-up-to-k")
    panel.bar.force_box.setChecked(True)
    panel.bar.region_box.setChecked(True)
    ScriptedSearch.instances.clear()
    run_to_end(qtbot, panel)
    growth, threshold = ScriptedSearch.instances
    assert growth.threshold is None and threshold.threshold == 7
    assert growth.options.force_search and threshold.options.force_search
    assert growth.options.loop_clocks == threshold.options.loop_clocks == "region"
    assert panel.states[1].result.property == "threshold"


def test_the_search_is_asked_as_the_cli_asks_it(qtbot, document: DocumentModel) -> None:
    """The document's k (15 in simple-DIA-cfg-1) is the deepest bound, not a single one: a single k
    would skip the simulation-built lassos that `stormbound verify` finds."""
    assert document.topology().verification.k == 15
    panel = make_panel(qtbot, document, verdict="none-up-to-k")
    ScriptedSearch.instances.clear()
    run_to_end(qtbot, panel)
    growth, = ScriptedSearch.instances
    cli = build_parser().parse_args(["verify", "model.storm.json"])
    assert growth.options == SearchOptions(k=cli.k, k_max=cli.k_max, timeout_s=cli.timeout,
                                           force_search=cli.force_search, threshold=cli.threshold,
                                           widen_s=cli.widen, simulate=not cli.no_simulation)
    assert growth.options.k is None and growth.options.simulate
    assert growth.options.deepest(growth.topo) == 15 and panel.progress.bar.maximum() == 15


def test_export_verified_configuration(qtbot, document: DocumentModel, tmp_path: Path) -> None:
    panel = make_panel(qtbot, document, verdict="none-up-to-k")
    out = tmp_path / "cfg.verified.json"
    with pytest.raises(TopologyError, match="has no result: run Verify first"):
        panel.export_verified(out)
    run_to_end(qtbot, panel)
    panel.export_verified(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert check_verified(data).semantics() == document.topology().semantics()
    assert data["verdicts"][0]["verdict_words"] == "no counterexample up to k = 6"
    assert data["solver_bound"]["k"] == 6
    b2 = document.topology().bolt_by_name("B2")
    document.undo_stack.push(SetComponentFieldsCommand(document, b2.id, {"parallelism": 9}))
    with pytest.raises(TopologyError, match="stale"):
        panel.export_verified(tmp_path / "again.json")
    assert not (tmp_path / "again.json").exists()


def test_format_stats() -> None:
    assert format_stats({"decisions": 5, "conflicts": 3, "memory": 20.25, "other": 1}) == \
        "conflicts 3 · decisions 5 · memory 20.2 MB"
    assert format_stats({"b": 0.5, "a": 2}) == "a 2 · b 0.5"


def test_docked_in_the_main_window(qtbot, make_window, models_dir: Path, tmp_path: Path, monkeypatch) -> None:
    window = make_window()
    panel = window.verification_panel
    assert panel.trace_view is not None
    titles = [a.text() for a in window.menu("Verify").actions()]
    assert "&Verify all properties" in titles and "&Cancel verification" in titles
    assert any(a.objectName() == "action_export_verified" for a in window.menu("File").actions())
    window.document.replace(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"))
    panel.search_factory = partial(ScriptedSearch)
    with qtbot.waitSignal(panel.all_finished, timeout=30_000):
        panel.action_verify.trigger()
    assert panel.marker_colour(0) == "red"
    # the trace cursor highlights the acting components on the canvas
    panel.trace_view.set_cursor(2)
    highlighted = {n.component.name for n in window.scene.nodes.values() if n.highlighted}
    assert highlighted == {"B1", "B2"}
    panel.trace_view.clear()
    assert not any(n.highlighted for n in window.scene.nodes.values())
    # File > Export verified configuration… with the file name answered headlessly
    out = tmp_path / "x.verified.json"
    window.dialogs.answers["verified_file"] = str(out)
    panel.action_export_verified.trigger()
    assert check_verified(json.loads(out.read_text()))
    # a new document clears results (cfg-3: no bolt the instant check proves unbounded, which would show red)
    window.document.replace(load_topology(models_dir / "simple-DIA-cfg-3.storm.json"))
    assert panel.marker_colour(0) == "grey" and panel.verdict_text(0) == "not run"
    assert panel.trace_view.trace is None
    assert not VerifyWorker._running


def test_the_panel_actions_need_no_window(qtbot, document: DocumentModel) -> None:
    """The actions belong to the panel; a window only places them (no searching its menus by text)."""
    panel = make_panel(qtbot, document)
    create_actions(panel, panel)
    assert [a.objectName() for a in (panel.action_verify, panel.action_cancel, panel.action_trace,
                                     panel.action_force, panel.action_export_verified)] == \
        ["action_verify_all", "action_cancel_verification", "action_show_trace", "action_force_search",
         "action_export_verified"]
    panel.action_force.setChecked(True)
    assert panel.bar.force_box.isChecked()
    run_to_end(qtbot, panel)
    assert panel.trace_dock is None and panel.trace_view.trace is not None  # no dock to raise: nothing breaks


def test_closing_the_panel_mid_search_stops_the_worker(qtbot, document: DocumentModel) -> None:
    panel = VerificationPanel(document, search_factory=partial(ScriptedSearch, k_final=10_000, step_s=0.05))
    panel.start()
    qtbot.waitUntil(lambda: panel.states[0].progress is not None, timeout=30_000)
    worker = panel.worker
    assert worker is not None and worker in VerifyWorker._running
    panel.deleteLater()
    qtbot.waitUntil(lambda: worker not in VerifyWorker._running, timeout=60_000)
    assert worker.cancel_requested_at is not None


def test_choosing_checked_bolts_is_undoable(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document)
    topo = document.topology()
    b1, b2, b3 = (topo.bolt_by_name(n) for n in ("B1", "B2", "B3"))
    panel.bar.fill_bolts_menu()
    assert [(a.text(), a.isChecked()) for a in panel.bar.bolts_menu.actions()] == \
        [("B1", False), ("B2", True), ("B3", True)]
    panel.bar.bolts_menu.actions()[0].trigger()  # check B1 too: all bolts -> stored as "every bolt"
    assert document.topology().verification.checked == []
    assert panel.states[0].spec.title == "Unbounded growth of B1, B2, B3"
    panel.set_checked_bolt(b3.id, False)
    assert document.topology().verification.checked == [b1.id, b2.id]
    panel.set_checked_bolt(b1.id, False)
    panel.set_checked_bolt(b2.id, False)  # the last one stays
    assert document.topology().verification.checked == [b2.id]
    assert "At least one bolt" in panel.progress.label.text()
    for _ in range(3):
        document.undo_stack.undo()
    assert document.topology().verification.checked == [b2.id, b3.id]
    assert panel.states[0].spec.title == "Unbounded growth of B2, B3"


def test_edit_during_run_marks_queued_properties_stale_too(qtbot, document: DocumentModel) -> None:
    """Both properties verify the snapshot taken at Verify; an edit meanwhile makes both stale."""
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 40}))
    panel = make_panel(qtbot, document, k_final=8, step_s=0.02)
    with qtbot.waitSignal(panel.all_finished, timeout=30_000):
        panel.start()
        document.undo_stack.push(SetSectionFieldsCommand(document, "settings", {"max_idle_time": 0.02}))
    assert [s.stale for s in panel.states] == [True, True]
    assert [panel.marker_colour(r) for r in (0, 1)] == ["grey", "grey"]


def test_changing_the_properties_mid_run_does_not_confuse_rows(qtbot, document: DocumentModel) -> None:
    panel = make_panel(qtbot, document, k_final=8, step_s=0.02)
    b1 = document.topology().bolt_by_name("B1")
    with qtbot.waitSignal(panel.all_finished, timeout=30_000):
        panel.start()
        panel.set_checked_bolt(b1.id, True)  # the growth property becomes "B1, B2, B3": a new row
    assert [s.spec.title for s in panel.states] == ["Unbounded growth of B1, B2, B3"]
    assert panel.verdict_text(0) == "not run" and panel.marker_colour(0) == "grey"
    assert not panel.is_running()


class PerBoltSearch(ScriptedSearch):
    """B2 grows in one lasso, B3 in another: each bolt's row opens its own."""

    def run(self) -> VerifyResult:
        from app.core.results import BoltVerdict

        first, second = make_trace(), make_trace()
        second = second.model_copy(update={"k": second.k})  # a distinct object with the same shape
        bolts = {"B2": BoltVerdict(verdict="counterexample", k=first.k, loop_start=1, growth_per_loop=1,
                                   certified=True, trace_index=0, method="solver", message="B2 grows"),
                 "B3": BoltVerdict(verdict="counterexample", k=second.k, loop_start=1, growth_per_loop=2,
                                   certified=True, trace_index=1, method="solver", message="B3 grows")}
        return VerifyResult(verdict="counterexample", k=first.k, loop_start=1, growing=["B2", "B3"],
                            certified=True, message="two lassos", trace=first, traces=[first, second], bolts=bolts)


def test_one_row_per_checked_bolt_each_opening_its_own_lasso(qtbot, document: DocumentModel) -> None:
    panel = VerificationPanel(document, search_factory=PerBoltSearch)
    qtbot.addWidget(panel)
    panel.show()
    model = panel.model
    assert [bolt for row, bolt in model.entries if row == 0 and bolt is not None] == ["B2", "B3"]
    assert panel.bolt_row_text(0, "B2") == ""
    run_to_end(qtbot, panel)
    assert panel.bolt_row_text(0, "B2").startswith("grows: lasso 1 (k = ")
    assert panel.bolt_row_text(0, "B3").startswith("grows: lasso 2 (k = ")
    assert model.index(model.table_row(0, "B3"), 0).data(0x0100) == "red"  # Qt.UserRole holds the marker colour
    result = panel.states[0].result
    panel.select(0, "B3")
    assert "B3 grows" in panel.details.toPlainText()
    assert panel.bar.trace_button.isEnabled()
    panel.show_selected_trace()
    assert panel.trace_view.trace is result.traces[1]
    assert "B3 grows (lasso 2 of 2)" in panel.trace_view.title.text()
    panel.table.doubleClicked.emit(model.index(model.table_row(0, "B2"), 1))
    assert panel.trace_view.trace is result.traces[0]
    # an edit makes every bolt row stale (grey)
    document.undo_stack.push(SetComponentFieldsCommand(document, document.topology().bolts[0].id, {"alpha": 2.0}))
    assert panel.bolt_row_text(0, "B3").startswith("stale: grows")


def test_the_property_list_is_a_table_model_with_coloured_verdicts(qtbot, document: DocumentModel) -> None:
    from PySide6.QtCore import QAbstractTableModel, Qt

    from app.gui.panels.property_table import COLUMNS, VERDICT_TEXT_COLOURS

    panel = make_panel(qtbot, document)
    model = panel.model
    assert isinstance(model, QAbstractTableModel)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())] == \
        COLUMNS == ["", "property", "verdict", "k", "time"]
    assert model.rowCount() == 3  # the growth property and its bolts B2, B3

    def verdict_colour(bolt: str | None = None) -> str:
        brush = model.index(model.table_row(0, bolt), 2).data(Qt.ItemDataRole.ForegroundRole)
        return brush.color().name()

    assert verdict_colour() == VERDICT_TEXT_COLOURS["grey"]
    run_to_end(qtbot, panel)
    assert verdict_colour() == VERDICT_TEXT_COLOURS["red"]
    b2 = document.topology().bolt_by_name("B2")
    document.undo_stack.push(SetComponentFieldsCommand(document, b2.id, {"parallelism": 9}))
    assert verdict_colour() == VERDICT_TEXT_COLOURS["grey"]  # stale
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 5}))
    assert model.rowCount() == 4 and model.text(1, 1) == "Some queue reaches 5"


def test_the_controller_verifies_without_any_widget(qtbot, document: DocumentModel) -> None:
    """The Qt-light half alone: properties, a run, its result, staleness and the verified export."""
    from app.gui.panels.verification_controller import VerificationController

    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 40}))
    controller = VerificationController(document, search_factory=partial(ScriptedSearch, verdict="none-up-to-k"))
    changed: list[int] = []
    controller.property_changed.connect(changed.append)
    assert [s.spec.kind for s in controller.states] == ["growth", "threshold"]
    with qtbot.waitSignal(controller.all_finished, timeout=5000):
        controller.start()
    assert [s.colour for s in controller.states] == ["green", "green"] and set(changed) == {0, 1}
    assert controller.verified_problem() is None and controller.verified_configuration()
    document.undo_stack.push(SetSectionFieldsCommand(document, "settings", {"max_idle_time": 0.02}))
    assert [s.stale for s in controller.states] == [True, True]
    assert "stale" in (controller.verified_problem() or "")


def test_capacity_in_storm_terms_is_one_short_line(qtbot, document: DocumentModel) -> None:
    """The headroom is computed in the worker thread with the verdict and shown as one line; Storm's response
    (simple-DIA-cfg-1 is overloaded: B2 grows at the document's rates) in its tooltip and in the details."""
    panel = make_panel(qtbot, document)
    assert not panel.summary_lines.capacity_label.isVisible()
    run_to_end(qtbot, panel)
    text = panel.summary_lines.capacity_label.text()
    assert text.startswith("Capacity: headroom ×0.612") and "B2 saturates first" in text
    assert "\n" not in text and "overloaded" in text
    tip = panel.summary_lines.capacity_label.toolTip()
    assert "throttles the spouts to 1.5 tuples/s" in tip and "B2's receive queues" in tip
    assert "Capacity (in Storm's terms)" in panel.details.toPlainText()
    # per spout, against the message timeout (docs/latency.md): computed in the worker with the capacity
    assert panel.summary_lines.timeouts_label.text() == ("Timeouts: S1: tuples time out (a certified run); "
                                           "S2: tuples time out (a certified run)")  # a witness per spout
    assert "a certified run in which a tuple arriving at B2 waits" in panel.summary_lines.timeouts_label.toolTip()
    assert "max.spout.pending: at most 8" in panel.summary_lines.timeouts_label.toolTip()
    document.undo_stack.push(SetSectionFieldsCommand(document, "verification", {"queue_threshold": 40}))
    assert panel.summary_lines.capacity_label.text().startswith("(stale) ")
    assert panel.summary_lines.timeouts_label.text().startswith("(stale) ")
