"""DocumentModel + commands: undo/redo/modified transitions through the model (no widgets)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QUndoCommand

from app.core.formats import load_topology
from app.core.topology import Position
from app.gui.commands import (
    AddComponentCommand,
    AddSubscriptionCommand,
    ConnectionRefused,
    MoveComponentsCommand,
    PasteCommand,
    RemoveElementsCommand,
    SetComponentFieldsCommand,
    SetParallelismCommand,
    SetSectionFieldsCommand,
    new_bolt,
    new_spout,
)
from app.gui.document import DocumentModel, FieldError, copy_fragment


class Recorder:
    """Collects every signal of a document as (name, args)."""

    def __init__(self, doc: DocumentModel):
        self.events: list[tuple[str, tuple]] = []
        for name in ("node_added", "node_removed", "node_changed", "edge_added", "edge_removed",
                     "settings_changed", "layout_changed", "document_replaced", "modified_changed", "changed"):
            getattr(doc, name).connect(lambda *args, n=name: self.events.append((n, args)))

    def names(self) -> list[str]:
        return [n for n, _ in self.events]


def build_simple_dia(doc: DocumentModel) -> dict[str, str]:
    """simple-DIA-cfg-1 built through commands, as a user would from the palette."""
    push = doc.undo_stack.push
    ids: dict[str, str] = {}
    for name, x, y in (("S1", 0, 0), ("S2", 0, 120)):
        s = new_spout(doc, name=name, rate=1.0, burst=2)
        push(AddComponentCommand(doc, s, Position(x=x, y=y)))
        ids[name] = s.id
    for name, alpha, sigma, par, x, y in (("B1", 4.0, 2.0, 5, 220, 0), ("B2", 4.0, 0.5, 6, 220, 120),
                                          ("B3", 1.0, 1.0, 3, 440, 60)):
        b = new_bolt(doc, name=name)
        push(AddComponentCommand(doc, b, Position(x=x, y=y)))
        push(SetComponentFieldsCommand(doc, b.id, {"alpha": alpha}))
        push(SetComponentFieldsCommand(doc, b.id, {"sigma": sigma}))
        push(SetComponentFieldsCommand(doc, b.id, {"parallelism": par}))
        ids[name] = b.id
    for src, tgt in (("S1", "B1"), ("S1", "B2"), ("S2", "B2"), ("B1", "B3"), ("B2", "B3")):
        push(AddSubscriptionCommand(doc, ids[src], ids[tgt]))
    # as D-VerT had it (a new document idles for no time: max_idle_time 0, docs/model.md)
    push(SetSectionFieldsCommand(doc, "settings", {"init_queues": 2, "emission": "dvert", "max_idle_time": 0.01}))
    push(SetSectionFieldsCommand(doc, "verification", {"checked": [ids["B2"], ids["B3"]], "k": 15}))
    push(SetSectionFieldsCommand(doc, "topology", {"name": "simple-DIA-cfg-1"}))
    return ids


def test_build_simple_dia_matches_example(models_dir: Path) -> None:
    doc = DocumentModel()
    assert [p.path for p in doc.problems()] == ["topology"]
    build_simple_dia(doc)
    expected = load_topology(models_dir / "simple-DIA-cfg-1.storm.json")
    assert doc.topology().semantics() == expected.semantics()
    assert doc.problems() == []
    assert doc.is_modified()


def test_signals_and_modified_transitions() -> None:
    doc = DocumentModel()
    rec = Recorder(doc)
    assert not doc.is_modified()
    s = new_spout(doc)
    doc.undo_stack.push(AddComponentCommand(doc, s, Position(x=1, y=2)))
    assert rec.names() == ["node_added", "changed", "modified_changed"]
    assert rec.events[-1][1] == (True,)
    assert doc.is_modified()
    rec.events.clear()
    doc.undo_stack.undo()
    assert rec.names() == ["node_removed", "changed", "modified_changed"]
    assert not doc.is_modified()
    assert doc.topology().spouts == []
    doc.undo_stack.redo()
    doc.mark_saved(Path("/tmp/x.storm.json"))
    assert not doc.is_modified()
    rec.events.clear()
    doc.undo_stack.push(MoveComponentsCommand(doc, {s.id: Position(x=50, y=60)}))
    # moving is a modification of the file but not a semantic change
    assert "changed" not in rec.names() and "layout_changed" in rec.names()
    assert doc.is_modified()
    doc.undo_stack.undo()
    assert not doc.is_modified()
    assert doc.position(s.id) == Position(x=1, y=2)


def test_undo_redo_across_a_sequence(models_dir: Path) -> None:
    doc = DocumentModel()
    ids = build_simple_dia(doc)
    states = []
    stack = doc.undo_stack
    final = doc.topology()
    for _ in range(stack.count()):
        states.append(doc.topology())
        stack.undo()
    assert doc.topology().components == [] and not doc.is_modified()
    for state in reversed(states):
        stack.redo()
        assert doc.topology() == state
    assert doc.topology() == final
    # delete B2: its three subscriptions and its checked mark go with it, in one step
    before = doc.topology()
    stack.push(RemoveElementsCommand(doc, {ids["B2"]}))
    after = doc.topology()
    assert len(after.subscriptions) == 2 and after.verification.checked == [ids["B3"]]
    stack.undo()
    assert doc.topology() == before
    stack.redo()
    assert doc.topology() == after


def test_typing_merges_into_one_step_per_field() -> None:
    doc = DocumentModel()
    b = new_bolt(doc)
    doc.undo_stack.push(AddComponentCommand(doc, b, Position()))
    count = doc.undo_stack.count()
    for text in ("2", "2.", "2.5"):
        doc.undo_stack.push(SetComponentFieldsCommand(doc, b.id, {"alpha": float(text)}))
    assert doc.undo_stack.count() == count + 1
    doc.undo_stack.push(SetComponentFieldsCommand(doc, b.id, {"sigma": 3.0}))
    assert doc.undo_stack.count() == count + 2
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.component(b.id).alpha == 1.0
    # typing back to the original value leaves no step at all
    doc.undo_stack.push(SetComponentFieldsCommand(doc, b.id, {"alpha": 7.0}))
    doc.undo_stack.push(SetComponentFieldsCommand(doc, b.id, {"alpha": 1.0}))
    assert doc.undo_stack.count() == count


def test_invalid_values_are_refused_with_the_field() -> None:
    doc = DocumentModel()
    b = new_bolt(doc)
    s = new_spout(doc)
    doc.undo_stack.push(AddComponentCommand(doc, b, Position()))
    doc.undo_stack.push(AddComponentCommand(doc, s, Position()))
    with pytest.raises(FieldError) as err:
        SetComponentFieldsCommand(doc, b.id, {"alpha": 0})
    assert err.value.field == "alpha" and "greater than 0" in err.value.message
    with pytest.raises(FieldError) as err:
        SetComponentFieldsCommand(doc, b.id, {"name": s.name})
    assert err.value.field == "name" and "already" in err.value.message
    with pytest.raises(FieldError) as err:
        SetSectionFieldsCommand(doc, "verification", {"k_min": 50})
    assert "k_min" in err.value.message
    with pytest.raises(FieldError):
        SetSectionFieldsCommand(doc, "settings", {"tolerance": 1.5})


def test_connections_refused_into_spouts_and_duplicates() -> None:
    doc = DocumentModel()
    s, b = new_spout(doc), new_bolt(doc)
    for c in (s, b):
        doc.undo_stack.push(AddComponentCommand(doc, c, Position()))
    doc.undo_stack.push(AddSubscriptionCommand(doc, s.id, b.id))
    with pytest.raises(ConnectionRefused, match="already subscribes"):
        AddSubscriptionCommand(doc, s.id, b.id)
    with pytest.raises(ConnectionRefused, match="is a spout"):
        AddSubscriptionCommand(doc, b.id, s.id)
    doc.undo_stack.push(AddSubscriptionCommand(doc, b.id, b.id))  # a self-loop is a legal cycle
    assert len(doc.topology().subscriptions) == 2


def test_set_parallelism_is_one_step(models_dir: Path) -> None:
    topo = load_topology(models_dir / "simple-DIA-cfg-1.storm.json")
    doc = DocumentModel(topo)
    from app.core.rates import rate_check

    suggestion = {k: v for k, v in rate_check(topo).suggested_parallelism.items() if v is not None}
    doc.undo_stack.push(SetParallelismCommand(doc, suggestion))
    assert doc.undo_stack.count() == 1
    assert {b.name: b.parallelism for b in doc.topology().bolts} == {**{b.name: b.parallelism for b in topo.bolts},
                                                                      **suggestion}
    doc.undo_stack.undo()
    assert doc.topology().semantics() == topo.semantics()


def test_copy_paste_gives_fresh_ids_and_names(models_dir: Path) -> None:
    topo = load_topology(models_dir / "simple-DIA-cfg-1.storm.json")
    doc = DocumentModel(topo)
    ids = {c.name: c.id for c in topo.components}
    fragment = copy_fragment(doc.topology(), {ids["B1"], ids["B3"]})
    cmd = PasteCommand(doc, fragment)
    doc.undo_stack.push(cmd)
    new = doc.topology()
    assert len(new.bolts) == 5
    assert {b.name for b in new.bolts} >= {"B1_2", "B3_2"}
    assert len(new.subscriptions) == 6 and doc.problems() == []
    doc.undo_stack.undo()
    assert doc.topology().semantics() == topo.semantics()


def test_replace_clears_history(models_dir: Path) -> None:
    doc = DocumentModel()
    rec = Recorder(doc)
    doc.undo_stack.push(AddComponentCommand(doc, new_bolt(doc), Position()))
    topo = load_topology(models_dir / "simple-DIA-cfg-2.storm.json")
    doc.replace(topo, models_dir / "simple-DIA-cfg-2.storm.json")
    assert "document_replaced" in rec.names() and rec.events[-1] == ("modified_changed", (False,))
    assert doc.undo_stack.count() == 0 and not doc.is_modified()
    assert doc.topology().semantics() == topo.semantics()


def test_a_document_with_history_goes_with_its_last_reference() -> None:
    """Its commands refer to it weakly (app/gui/commands.py, DocumentCommand): no reference cycle leaves the
    document and the commands its stack owns to the cycle collector, which frees them in no particular order
    (a segmentation fault: docs/gui.md, "Who frees what")."""
    doc = DocumentModel()
    build_simple_dia(doc)
    doc.undo_stack.push(SetParallelismCommand(doc, {"B1": 7}))
    doc.undo_stack.push(MoveComponentsCommand(doc, {doc.topology().bolts[0].id: Position(x=5, y=5)}))
    doc.undo_stack.push(RemoveElementsCommand(doc, {doc.topology().bolts[-1].id}))
    doc.undo_stack.undo()  # commands on both sides of the index
    ref = weakref.ref(doc)
    gc.disable()  # freed by its reference count, not by a collection
    try:
        del doc
        assert ref() is None
    finally:
        gc.enable()


def test_every_undo_command_is_a_document_command() -> None:
    import app.gui.storm_io  # noqa: F401 - AnnotateCommand
    from app.gui.commands import DocumentCommand

    def subclasses(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]

    ours = [c for c in subclasses(QUndoCommand) if c.__module__.startswith("app.")]
    assert {c.__name__ for c in ours} >= {"AddComponentCommand", "PasteCommand", "AnnotateCommand"}
    assert [c.__name__ for c in ours if not issubclass(c, DocumentCommand)] == []


@pytest.mark.parametrize("data", [
    {"spouts": {"S1": 1}, "bolts": []},
    {"bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}], "layout": []},
    {"bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}],
     "subscriptions": [{"source": "nowhere", "target": "B"}]},
])
def test_lenient_loading_still_refuses_broken_documents(data) -> None:
    from app.core.topology import TopologyError
    from app.gui.document import lenient_topology

    with pytest.raises(TopologyError):
        lenient_topology(data)


def test_lenient_loading_accepts_a_draft_without_spouts() -> None:
    from app.gui.document import lenient_topology

    topo = lenient_topology({"bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}]})
    assert [b.name for b in topo.bolts] == ["B"]


def _random_edit(doc: DocumentModel, choice: int, a: int, b: int, value: float) -> QUndoCommand | None:
    """One edit picked by numbers (for hypothesis): add, connect, set a field, move, delete."""
    topo = doc.topology()
    comps = topo.components
    try:
        if choice == 0 or not comps:
            return AddComponentCommand(doc, new_spout(doc) if a % 2 else new_bolt(doc), Position(x=a, y=b))
        src, tgt = comps[a % len(comps)], comps[b % len(comps)]
        if choice == 1:
            return AddSubscriptionCommand(doc, src.id, tgt.id)
        if choice == 2:
            key = "rate" if src.kind == "spout" else ("alpha", "sigma")[b % 2]
            return SetComponentFieldsCommand(doc, src.id, {key: value})
        if choice == 3:
            return MoveComponentsCommand(doc, {src.id: Position(x=value, y=-value)})
        if choice == 4:
            return SetSectionFieldsCommand(doc, "settings", {"tolerance": min(value / 100, 0.9)})
        return RemoveElementsCommand(doc, {src.id})
    except (ConnectionRefused, FieldError):
        return None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 50), st.integers(0, 50),
                          st.floats(0.5, 50, allow_nan=False)), max_size=25))
def test_any_edit_sequence_undoes_and_redoes_exactly(edits) -> None:
    doc = DocumentModel()
    history = [doc.topology()]
    for choice, a, b, value in edits:
        command = _random_edit(doc, choice, a, b, value)
        if command is not None:
            before = doc.undo_stack.index()
            doc.undo_stack.push(command)
            if doc.undo_stack.index() != before:  # merged edits replace the last step
                history.append(doc.topology())
            else:
                history[-1] = doc.topology()
        problems = [p for p in doc.problems() if p.path not in ("topology", "spouts")]
        assert problems == []  # commands never break the graph rules
    final = doc.topology()
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert doc.topology() == history[0] and not doc.is_modified()
    while doc.undo_stack.canRedo():
        doc.undo_stack.redo()
    assert doc.topology() == final
