"""The app's capacity label gives the worker-death verdict (docs/model.md section 9) in a few words, the capacity
lines in full in its tooltip; the worker line alone does not make the topology read as overloaded."""

from __future__ import annotations

from pathlib import Path

from test_verification_panel import make_panel, run_to_end

from app.core.formats import load_topology
from app.gui.document import DocumentModel
from app.gui.panels.verification import VerificationPanel

DATA = Path(__file__).resolve().parents[1] / "data" / "workers"


def test_the_capacity_label_says_the_topology_does_not_survive_its_workers_deaths(qtbot) -> None:
    document = DocumentModel(load_topology(DATA / "replays.storm.json"))
    panel = make_panel(qtbot, document)
    run_to_end(qtbot, panel)
    text = panel.summary_lines.capacity_label.text()
    assert text.startswith("Capacity: headroom ×1.11") and "; does not survive worker deaths" in text
    tip = panel.summary_lines.capacity_label.toolTip()
    assert "worker deaths (topology.workers 2, each dying at most once every 6 s" in tip
    assert "it does survive the failures of single bolts" in tip


def test_a_lasso_with_worker_deaths_opens_in_the_trace_view_with_each_death(qtbot) -> None:
    # docs/model.md 9.5: A survives C's failures alone but not the acker worker's deaths (the real search)
    document = DocumentModel(load_topology(DATA / "acker-death.storm.json"))
    panel = VerificationPanel(document)
    qtbot.addWidget(panel)
    panel.show()
    run_to_end(qtbot, panel, timeout_ms=60_000)
    result = panel.states[0].result
    assert result is not None and set(result.worker_death_lassos) == {"A"}
    assert any("but not its workers' deaths" in note for note in result.notes)
    assert "grows with worker deaths (a certified lasso; Show trace opens it): A" in panel.details.toPlainText()
    assert panel.headline() == "all 3 bounded; A grows when workers die (certified lasso)"  # not all green words
    assert panel.marker_colour(0) == "amber"
    assert panel.show_trace(0, "A")
    view = panel.trace_view
    death = next(i for i, shown in enumerate(view.shown) if shown.position.workers
                 and any(w.death for w in shown.position.workers.values()))
    view.set_cursor(death)
    assert view.table_values()["worker w1"]["phase"].startswith("worker: dies here")
    assert "worker dies" in view.drawn.key.text  # the plots' key: each death is a dashed line


def test_a_worker_with_half_of_a_bolt_and_a_spout_executor_shows_its_lasso(qtbot) -> None:
    # docs/model.md 9.5, "Part of a bolt" and "A spout's executors": B survives A's failures alone but not the deaths
    # of the worker that runs half of A and one of S's executors
    document = DocumentModel(load_topology(DATA / "half-worker.storm.json"))
    panel = VerificationPanel(document)
    qtbot.addWidget(panel)
    panel.show()
    run_to_end(qtbot, panel, timeout_ms=60_000)
    result = panel.states[0].result
    assert result is not None and set(result.worker_death_lassos) == {"B"}
    assert panel.headline() == "all 2 bounded; B grows when workers die (certified lasso)"
    assert panel.marker_colour(0) == "amber"
    assert panel.show_trace(0, "B")
    view = panel.trace_view
    death = next(i for i, shown in enumerate(view.shown) if shown.position.workers
                 and any(w.death for w in shown.position.workers.values()))
    view.set_cursor(death)
    assert view.table_values()["worker w1"]["phase"].startswith("worker: dies here")
