"""An asynchronous bolt (docs/model.md section 8) in the editor: its threads typed in the inspector, a stack of cards
labelled "async bolt" on the canvas with its executors × threads, and its tooltip's capacity in threads."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.topology import SCHEMA_VERSION, parse_topology

ROOT = Path(__file__).resolve().parents[2]
SIMPLE = ROOT / "models" / "simple-DIA-cfg-1.storm.json"


def type_into(qtbot, row, text: str) -> None:
    row.edit.setFocus()
    row.edit.selectAll()
    qtbot.keyClicks(row.edit, text) if text else row.edit.clear()
    row.edit.textEdited.emit(row.edit.text())
    row.edit.editingFinished.emit()


def b1_selected(make_window):
    """A window on the simple model with its bolt B1 selected (the inspector shows it)."""
    window = make_window()
    window.open_path(SIMPLE)
    b1 = window.document.topology().bolt_by_name("B1")
    window.scene.select_ids({b1.id})
    return window, b1


def test_threads_make_a_bolt_asynchronous_in_the_inspector_and_on_the_canvas(make_window, qtbot) -> None:
    window, b1 = b1_selected(make_window)
    inspector = window.inspector
    node = window.scene.nodes[b1.id]
    assert inspector.element_box.title() == "Bolt B1" and "thr" not in node.parameter_lines()[0]
    type_into(qtbot, inspector.row("threads"), "4")
    bolt = window.document.component(b1.id)
    assert bolt.threads == 4 and bolt.take_max == 4 * bolt.parallelism
    assert inspector.element_box.title() == "Asynchronous bolt B1"
    node = window.scene.nodes[b1.id]
    assert node.parameter_lines()[0].endswith(f"{bolt.parallelism} exec × 4 thr")
    assert node.toolTip().startswith(f"Asynchronous bolt B1: {bolt.parallelism} executors × 4 threads "
                                     f"(the model's C: up to {4 * bolt.parallelism} tuples in work at once)")
    assert node.boundingRect().width() > 156 + 8  # room for the stacked cards
    saved = json.loads(window.document.topology().to_json_bytes())
    assert saved["schema_version"] == SCHEMA_VERSION and parse_topology(saved).bolt_by_name("B1").threads == 4
    type_into(qtbot, inspector.row("threads"), "0")
    assert "Threads (async): input should be greater than or equal to 1" in inspector.row("threads").error.text()
    assert window.document.component(b1.id).threads == 4
    type_into(qtbot, inspector.row("threads"), "")  # empty: an ordinary bolt again
    assert window.document.component(b1.id).threads is None
    assert inspector.element_box.title() == "Bolt B1"
    window.editing.action_undo.trigger()
    assert window.document.component(b1.id).threads == 4


def test_a_windowed_bolt_is_framed_on_the_canvas(make_window, tmp_path) -> None:
    """docs/model.md section 10: Storm's simple_windowing.yaml imports bolt-1 with its count window, drawn framed and
    labelled with its slide/length, its tooltip in Storm's terms; a duration window likewise, its timer said
    (docs/model.md section 10.3)."""
    from app.core.storm.flux.builder import import_flux

    examples = ROOT / "tests" / "data" / "flux" / "storm-examples"
    path = tmp_path / "win.storm.json"
    path.write_bytes(import_flux(examples / "simple_windowing.yaml").topology.to_json_bytes())
    window = make_window()
    window.open_path(path)
    bolt = window.document.topology().bolt_by_name("bolt-1")
    node = window.scene.nodes[bolt.id]
    assert ("Windowed bolt bolt-1: withWindow(Count(5), Count(3)): each of its 1 executors runs execute(TupleWindow) "
            "once per 3 tuples") in node.toolTip()
    assert "Storm acks a tuple when it leaves its last window, up to 7 tuples later" in node.toolTip()
    assert node.kind_label() == "win 3/5"  # its header: slide/length
    other = window.scene.nodes[window.document.topology().bolt_by_name("bolt-2").id]
    assert "window" not in other.toolTip() and other.kind_label() == "bolt"
    data = json.loads(path.read_text())
    next(b for b in data["bolts"] if b["name"] == "bolt-1")["window"] = {"kind": "duration", "length": 10}
    path.write_text(json.dumps(data))
    window.open_path(path)
    node = window.scene.nodes[window.document.topology().bolt_by_name("bolt-1").id]
    assert ("Windowed bolt bolt-1: withTumblingWindow(Duration(10 s)): a timer runs execute(TupleWindow) every 10 s"
            in node.toolTip() and node.kind_label() == "tumbling 10 s")


def test_the_inspector_edits_a_bolts_window(make_window, qtbot) -> None:
    window, b1 = b1_selected(make_window)
    inspector = window.inspector
    type_into(qtbot, inspector.row("window"), "count 30/10")
    bolt = window.document.component(b1.id)
    assert bolt.window is not None and (bolt.window.length, bolt.window.slide) == (30, 10)
    assert bolt.take_max == 10 * bolt.parallelism and inspector.element_box.title() == "Windowed bolt B1"
    assert inspector.row("window").edit.text() == "count 30/10"
    type_into(qtbot, inspector.row("window"), "count 3/5")  # a slide above the length: refused, named
    assert "above the window's length" in inspector.row("window").error.text()
    assert window.document.component(b1.id).window.slide != 5  # (what was typed before the refused "/5" stays)
    type_into(qtbot, inspector.row("window"), "duration 10 s/2 s")
    assert window.document.component(b1.id).window.model_dump() == {"kind": "duration", "length": 10, "slide": 2}
    type_into(qtbot, inspector.row("window"), "")
    assert window.document.component(b1.id).window is None and inspector.element_box.title() == "Bolt B1"
    window.editing.action_undo.trigger()
    assert window.document.component(b1.id).window.kind == "duration"


def test_the_inspector_edits_a_mixed_window_and_the_canvas_shows_both_kinds(make_window, qtbot) -> None:
    """docs/model.md section 10.4: "count 4/duration 2 s" is withWindow(Count(4), Duration(2 s)), a count eviction on
    a timer; the inspector shows it back, the canvas labels the slide with its unit and the tooltip says the timer and
    that no hold bound holds in every run; "duration 10 s/count 5" is the other mixed form; a slide of a kind with no
    size ("count 4/duration") is refused, named."""
    window, b1 = b1_selected(make_window)
    inspector = window.inspector
    type_into(qtbot, inspector.row("window"), "count 4/duration 2 s")
    bolt = window.document.component(b1.id)
    assert bolt.window is not None and bolt.window.model_dump() == {"kind": "count", "length": 4, "slide": 2,
                                                                    "slide_kind": "duration"}
    assert inspector.row("window").edit.text() == "count 4/duration 2 s"
    node = window.scene.nodes[b1.id]
    assert node.kind_label() == "win 2 s/4 tuples"
    assert "a mixed window: a timer runs execute(TupleWindow) every 2 s" in node.toolTip()
    assert "no bound holds in every run" in node.toolTip()
    type_into(qtbot, inspector.row("window"), "duration 10 s/count 5")
    bolt = window.document.component(b1.id)
    assert bolt.window is not None and (bolt.window.trigger, bolt.window.kind) == ("count", "duration")
    assert bolt.take_max == 5 * bolt.parallelism
    assert inspector.row("window").edit.text() == "duration 10 s/count 5"
    assert window.scene.nodes[b1.id].kind_label() == "win 5 tuples/10 s"
    type_into(qtbot, inspector.row("window"), "count 4/duration")
    assert "a mixed window names the slide's kind" in inspector.row("window").error.text()
    saved = json.loads(window.document.topology().to_json_bytes())
    assert saved["schema_version"] == SCHEMA_VERSION == 6
