"""A join (docs/model.md section 11) in the editor: an AND gate and a band on its input side, labelled "join ∧ all",
red when its cache grows whatever its ρ, its tooltip in Metron's terms; its Join field typed in the inspector."""

from __future__ import annotations

from pathlib import Path

from tests.gui.test_async_bolt_view import b1_selected, type_into

METRON = Path(__file__).resolve().parents[1] / "data" / "joins" / "metron-enrichment-geo-20ms.storm.json"


def test_metrons_join_is_drawn_as_a_join_and_red_while_its_cache_grows(make_window) -> None:
    from app.gui.canvas.items import RED

    window = make_window()
    window.open_path(METRON)
    join = window.document.topology().bolt_by_name("enrichmentJoinBolt")
    node = window.scene.nodes[join.id]
    assert node.kind_label() == "join ∧ all" and node.boundingRect().left() < -20  # room for the gate
    assert node.parameter_lines()[1] == "ρ 0.05 · cache grows" and node.header_colour() == RED
    assert node.toolTip().startswith("Join enrichmentJoinBolt: waits for a part from every input stream (a branch) "
                                     "of each message, holding the parts that came in its cache (maxCacheSize 100000)")
    assert "its slowest branch, geoEnrichmentBolt (stream 'geo')" in node.toolTip()
    window.scene.select_ids({join.id})
    assert window.inspector.element_box.title() == "Join enrichmentJoinBolt"
    assert window.inspector.row("join").edit.text() == "all cache 100000 retain 10"


def test_the_inspector_makes_a_bolt_a_join(make_window, qtbot) -> None:
    """B2 of the simple model receives from S1 and S2: typed "all cache 50" it becomes a join of those two branches."""
    window, _ = b1_selected(make_window)
    b2 = window.document.topology().bolt_by_name("B2")
    window.scene.select_ids({b2.id})
    inspector = window.inspector
    type_into(qtbot, inspector.row("join"), "all cache 50")
    join = window.document.component(b2.id).join
    assert join is not None and join.kind == "all" and join.max_cache == 50
    assert inspector.element_box.title() == "Join B2" and window.scene.nodes[b2.id].kind_label() == "join ∧ all"
    type_into(qtbot, inspector.row("join"), "some")
    assert "write all [cache N]" in inspector.row("join").error.text()
    type_into(qtbot, inspector.row("join"), "")  # empty: an ordinary bolt again
    assert window.document.component(b2.id).join is None and inspector.element_box.title() == "Bolt B2"
    window.editing.action_undo.trigger()
    assert window.document.component(b2.id).join is not None
