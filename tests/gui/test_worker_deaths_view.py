"""The app's capacity label gives the worker-death verdict (docs/model.md section 9) in a few words, the capacity
lines in full in its tooltip; the worker line alone does not make the topology read as overloaded."""

from __future__ import annotations

from pathlib import Path

from test_verification_panel import make_panel, run_to_end

from app.core.formats import load_topology
from app.gui.document import DocumentModel

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
