"""The canvas shows each bolt's sojourn bound in its tooltip and marks every spout's critical path (docs/latency.md)."""

from __future__ import annotations

from pathlib import Path

from app.core.formats import load_topology
from app.gui.canvas.scene import CanvasScene
from app.gui.commands import SetSectionFieldsCommand
from app.gui.document import DocumentModel


def test_sojourn_bounds_and_the_critical_path(qtbot, models_dir: Path) -> None:
    document = DocumentModel(load_topology(models_dir / "focused-crawler-reduced-cfg-6.storm.json"))
    scene = CanvasScene(document)
    scene.refresh_rates()
    topo = document.topology()
    ids = {c.name: c.id for c in topo.components}
    assert "A tuple stays here at most 6.2 s (queue and processing)" in scene.nodes[ids["WpDeserializer"]].toolTip()
    assert "Every tuple tree completes within 12.4915 s" in scene.nodes[ids["wpSpout"]].toolTip()
    path = ["wpSpout", "WpDeserializer", "expander", "articleExtraction"]
    assert {n for n, i in ids.items() if scene.nodes[i].critical} == set(path)
    marked = {(e.source.component.name, e.target.component.name) for e in scene.edges.values() if e.critical}
    assert marked == set(zip(path, path[1:], strict=False))
    # faster spouts: no bolt is proven bounded, no bound, nothing marked
    document.undo_stack.push(SetSectionFieldsCommand(document, "settings", {"tolerance": 0.9}))
    scene.refresh_rates()
    assert not any(node.critical for node in scene.nodes.values())
    assert not any(edge.critical for edge in scene.edges.values())
