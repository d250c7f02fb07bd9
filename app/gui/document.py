"""The document the GUI edits: a QObject around the pydantic Topology that emits what changed.

One-way flow (orange-canvas-core): QUndoCommands in `app.gui.commands` call the
`apply_*` methods here; the canvas, inspector and panels follow the signals and
never mutate the document themselves. While editing, the document may break the
cross-element rules of a saved file (no spout yet, empty); those are reported by
:meth:`DocumentModel.problems` instead of refusing the edit.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from app.core.errors import BadInput
from app.core.rates import RateAnalysis, RateReport
from app.core.results import FloodCertificate, SpillCertificate, StormCertificate
from app.core.topology import (
    Bolt,
    Component,
    Position,
    Problem,
    Spout,
    StormSettings,
    Subscription,
    Topology,
    TopologyError,
    TopologySettings,
    VerificationSettings,
    graph_problems,
    new_topology,
    parse_topology,
    still_unannotated,
)
from app.gui.analysis import Analysed, AnalysisPending, LatencyMarks, SnapshotAnalyser


class FieldError(BadInput, ValueError):
    """An edit refused by validation; `field` names the edited field, `message` says why."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def _first_message(err: ValidationError, fields: dict[str, Any]) -> FieldError:
    """The most relevant validation message, attributed to an edited field when possible."""
    for e in err.errors():
        loc = e.get("loc") or ()
        msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        field = str(loc[0]) if loc else next(iter(fields), "value")
        return FieldError(field, msg[:1].lower() + msg[1:])
    return FieldError(next(iter(fields), "value"), "invalid value")


def validated_update(model: BaseModel, fields: dict[str, Any]) -> BaseModel:
    """A copy of `model` with `fields` changed, validated by its own pydantic class."""
    unknown = [f for f in fields if f not in type(model).model_fields]
    if unknown:
        raise FieldError(unknown[0], "unknown field")
    try:
        return type(model).model_validate({**model.model_dump(), **fields})
    except ValidationError as err:
        raise _first_message(err, fields) from None


def lenient_topology(data: Any) -> Topology:
    """A Topology whose elements are valid one by one but whose graph may be incomplete.

    Used for autosaves and files saved mid-edit (no spout yet, say); every element is
    still validated by its pydantic class and every reference must resolve.
    """
    if not isinstance(data, dict):
        raise TopologyError([Problem("document", "expected a JSON object")])
    try:
        return parse_topology(data)
    except TopologyError as strict:
        shapes = {"spouts": list, "bolts": list, "subscriptions": list, "layout": dict}
        if any(not isinstance(data.get(key, kind()), kind) for key, kind in shapes.items()):
            raise strict from None
        try:
            spouts = [Spout.model_validate(s) for s in data.get("spouts") or []]
            bolts = [Bolt.model_validate(b) for b in data.get("bolts") or []]
            subs = [Subscription.model_validate(s) for s in data.get("subscriptions") or []]
            settings = TopologySettings.model_validate(data.get("settings") or {})
            verification = VerificationSettings.model_validate(data.get("verification") or {})
            layout = {str(k): Position.model_validate(v) for k, v in (data.get("layout") or {}).items()}
            storm = StormSettings.model_validate(data.get("storm") or {})
        except (ValidationError, AttributeError, TypeError):  # not even the elements are sound
            raise strict from None
        topo = Topology.model_construct(
            name=str(data.get("name") or "untitled"), description=str(data.get("description") or ""),
            spouts=spouts, bolts=bolts, subscriptions=subs, settings=settings,
            verification=verification, layout=layout, storm=storm,
        )
        ids = {c.id for c in topo.components}
        # an empty document or one without a spout yet is a normal state while editing
        serious = [p for p in graph_problems(topo) if p.path not in ("topology", "spouts")]
        if serious or any(s.source not in ids or s.target not in ids for s in subs):
            raise strict from None
        return topo


def copy_fragment(topo: Topology, ids: set[str]) -> dict[str, Any]:
    """The chosen components of `topo`, the subscriptions among them and their positions, as JSON data (Copy)."""
    comps = [c for c in topo.components if c.id in ids]
    subs = [s for s in topo.subscriptions if s.source in ids and s.target in ids]
    return copy.deepcopy({
        "format": "stormbound-fragment/1",
        "components": [c.model_dump(mode="json") for c in comps],
        "subscriptions": [s.model_dump(mode="json") for s in subs],
        "layout": {c.id: topo.layout.get(c.id, Position()).model_dump() for c in comps},
    })


class DocumentModel(QObject):
    """The open topology, its file path and its undo stack; emits a signal per change.

    `changed()` follows every semantic change (anything but layout), after the
    specific signal, so the verification panel can mark its results stale.
    """

    node_added = Signal(str)
    node_removed = Signal(str)
    node_changed = Signal(str)
    edge_added = Signal(str)
    edge_removed = Signal(str)
    settings_changed = Signal()
    layout_changed = Signal(str)
    document_replaced = Signal()
    modified_changed = Signal(bool)
    changed = Signal()
    path_changed = Signal()
    analysis_ready = Signal()  # a large snapshot's analysis came from its worker: the views read it again

    def __init__(self, topology: Topology | None = None, path: Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._path: Path | None = None
        self._snapshot: Topology | None = None
        self._analyser = SnapshotAnalyser(self)  # what the views read of each snapshot, and where it is found
        self._analyser.ready.connect(self.analysis_ready)
        self._load(topology if topology is not None else new_topology())
        self._path = Path(path) if path is not None else None

    # ---- reading -------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        return self._path

    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    def topology(self) -> Topology:
        """The current document as a Topology snapshot; do not mutate it (commands do the edits)."""
        if self._snapshot is None:
            self._snapshot = Topology.model_construct(
                name=self._name, description=self._description,
                spouts=list(self._spouts), bolts=list(self._bolts), subscriptions=list(self._subscriptions),
                settings=self._settings, verification=self._verification, layout=dict(self._layout),
                storm=self._storm,
            )
        return self._snapshot

    def analysis(self) -> Analysed | None:
        """What the views read of the current snapshot (`Analysed`), or None while a worker analyses it: a document
        of more than INLINE_COMPONENTS components, whose `analysis_ready` follows (app/gui/analysis.py)."""
        return self._analyser.analysis(self.topology())

    def shutdown(self) -> None:
        """Wait for the edit being analysed in a worker, if any (the window's shutdown; its flood pass is bounded)."""
        self._analyser.join()

    def rates(self) -> RateAnalysis:
        """The snapshot's one rate analysis (app/core/rates/report.py), read by the suggestion and verification;
        raises what the rate check raised (mid-edit, not annotated), or AnalysisPending."""
        return self._analysed_now().rates()

    def report(self) -> RateReport:
        """The rate check's report as `check` prints it, shown by the canvas and status bar (`Analysed.report`)."""
        return self._analysed_now().report()

    def _analysed_now(self) -> Analysed:
        known = self.analysis()
        if known is None:
            raise AnalysisPending("the rate check is still analysing the last edit")
        return known

    def latency_marks(self) -> LatencyMarks:
        """The canvas's latency words and critical links of the snapshot (`latency_marks`); none while pending."""
        known = self.analysis()
        return known.latency_marks() if known is not None else ({}, set())

    def floods(self) -> dict[str, FloodCertificate | StormCertificate | SpillCertificate]:
        """The bolts the instant rate check proves unbounded, by name (`Analysed`); none while pending."""
        known = self.analysis()
        return known.floods() if known is not None else {}

    def problems(self) -> list[Problem]:
        """What keeps the document from being a valid topology (empty, no spout, ...); once per snapshot."""
        return list(self._analyser.problems(self.topology()))

    def _components(self) -> list[Component]:
        return [*self._spouts, *self._bolts]

    def component(self, ident: str) -> Component:
        return self._component_by_id[ident]  # by id: the scene asks for each of 3,000 bolts in turn

    def has_component(self, ident: str) -> bool:
        return ident in self._component_by_id

    def subscription(self, ident: str) -> Subscription:
        return self._subscription_by_id[ident]  # by id: the scene asks for each of 20,000 edges in turn

    def has_subscription(self, ident: str) -> bool:
        return ident in self._subscription_by_id

    def position(self, ident: str) -> Position:
        return self._layout.get(ident, Position())

    def unique_name(self, prefix: str) -> str:
        """The first free name `prefix1`, `prefix2`, ... (names must be unique across components)."""
        taken = {c.name for c in self._components()}
        n = 1
        while f"{prefix}{n}" in taken:
            n += 1
        return f"{prefix}{n}"

    def connection_problem(self, source: str, target: str) -> str | None:
        """Why `source -> target` cannot be added (None when it can), in the user's words."""
        try:
            src, tgt = self.component(source), self.component(target)
        except KeyError as err:
            return f"unknown component {err.args[0]}"
        if tgt.kind == "spout":
            return f"'{tgt.name}' is a spout: spouts cannot subscribe to streams"
        if any(s.source == source and s.target == target for s in self._subscriptions):
            return f"'{tgt.name}' already subscribes to '{src.name}'"
        return None

    def check_component_fields(self, ident: str, fields: dict[str, Any]) -> Component:
        """The component with `fields` changed, or FieldError naming the refused field."""
        old = self.component(ident)
        if "id" in fields or "kind" in fields:
            raise FieldError("id" if "id" in fields else "kind", "cannot be changed")
        if "name" in fields:
            name = str(fields["name"]).strip()
            if not name:
                raise FieldError("name", "must not be empty")
            if any(c.name == name and c.id != ident for c in self._components()):
                raise FieldError("name", f"'{name}' is already the name of another component")
            fields = {**fields, "name": name}
        if "unannotated" not in fields and any(f in old.unannotated for f in fields):
            fields = {**fields, "unannotated": still_unannotated(old.unannotated, fields)}  # typed = annotated
        return validated_update(old, fields)  # type: ignore[return-value]  # same model type as `old`

    def check_section_fields(self, section: str, fields: dict[str, Any]) -> BaseModel | dict[str, str]:
        """Validate an edit of `topology` (name, description), `settings` or `verification`."""
        if section == "topology":
            unknown = [f for f in fields if f not in ("name", "description")]
            if unknown:
                raise FieldError(unknown[0], "unknown field")
            meta = {"name": self._name, "description": self._description}
            meta.update({k: str(v) for k, v in fields.items()})
            if not meta["name"].strip():
                raise FieldError("name", "must not be empty")
            return meta
        if section == "verification" and "checked" in fields:
            for ref in fields["checked"]:
                if not any(b.id == ref for b in self._bolts):
                    raise FieldError("checked", f"'{ref}' is not a bolt of this topology")
        return validated_update(self._section(section), fields)

    def _section(self, section: str) -> BaseModel:
        if section == "settings":
            return self._settings
        if section == "verification":
            return self._verification
        if section == "storm":
            return self._storm
        raise KeyError(section)

    def section_values(self, section: str) -> dict[str, Any]:
        if section == "topology":
            return {"name": self._name, "description": self._description}
        model = self._section(section)
        return {key: getattr(model, key) for key in type(model).model_fields}  # every field, sparse or not

    # ---- whole-document operations (not undoable) -------------------------------
    def replace(self, topology: Topology, path: Path | None = None, known: Analysed | None = None) -> None:
        """Show another document (New, Open, restore): clears undo history, marks it unmodified. `known`: what
        a worker found of this same `topology` (`analysed`), kept as the snapshot's instead of found again."""
        self._load(topology)
        if known is not None and known.topology is topology:
            self._snapshot = topology
            self._analyser.adopt(known)
        self._path = Path(path) if path is not None else None
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.document_replaced.emit()
        self.changed.emit()
        self.modified_changed.emit(False)
        self.path_changed.emit()

    def mark_saved(self, path: Path) -> None:
        """Record that the current state is what `path` now holds."""
        self._path = Path(path)
        self.undo_stack.setClean()
        self.path_changed.emit()

    def _load(self, topo: Topology) -> None:
        self._name = topo.name
        self._description = topo.description
        self._spouts: list[Spout] = list(topo.spouts)
        self._bolts: list[Bolt] = list(topo.bolts)
        self._component_by_id: dict[str, Component] = {c.id: c for c in self._components()}
        self._subscriptions: list[Subscription] = list(topo.subscriptions)
        self._subscription_by_id: dict[str, Subscription] = {s.id: s for s in self._subscriptions}
        self._settings: TopologySettings = topo.settings
        self._verification: VerificationSettings = topo.verification
        self._layout: dict[str, Position] = dict(topo.layout)
        self._storm: StormSettings = topo.storm
        self._touch()

    def _on_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    # ---- mutations: called by QUndoCommands only ------------------------------
    def _touch(self) -> None:
        self._snapshot = None

    def apply_insert_component(self, component: Component, position: Position, index: int | None = None) -> None:
        items: list[Any] = self._spouts if component.kind == "spout" else self._bolts  # the list of its kind
        items.insert(len(items) if index is None else index, component)
        self._component_by_id[component.id] = component
        self._layout[component.id] = position
        self._touch()
        self.node_added.emit(component.id)
        self.changed.emit()

    def apply_remove_component(self, ident: str) -> tuple[Component, int, Position | None]:
        """Remove a component that no subscription mentions; returns what undo needs."""
        comp = self.component(ident)
        items: list[Any] = self._spouts if comp.kind == "spout" else self._bolts
        index = next(i for i, c in enumerate(items) if c.id == ident)
        del items[index]
        del self._component_by_id[ident]
        position = self._layout.pop(ident, None)
        self._touch()
        self.node_removed.emit(ident)
        self.changed.emit()
        return comp, index, position

    def apply_replace_component(self, component: Component) -> None:
        items: list[Any] = self._spouts if component.kind == "spout" else self._bolts  # the list of its kind
        index = next(i for i, c in enumerate(items) if c.id == component.id)
        items[index] = component
        self._component_by_id[component.id] = component
        self._touch()
        self.node_changed.emit(component.id)
        self.changed.emit()

    def apply_insert_subscription(self, sub: Subscription, index: int | None = None) -> None:
        self._subscriptions.insert(len(self._subscriptions) if index is None else index, sub)
        self._subscription_by_id[sub.id] = sub
        self._touch()
        self.edge_added.emit(sub.id)
        self.changed.emit()

    def apply_remove_subscription(self, ident: str) -> tuple[Subscription, int]:
        index = next(i for i, s in enumerate(self._subscriptions) if s.id == ident)
        sub = self._subscriptions.pop(index)
        del self._subscription_by_id[ident]
        self._touch()
        self.edge_removed.emit(ident)
        self.changed.emit()
        return sub, index

    def apply_replace_subscription(self, sub: Subscription) -> None:
        """Change grouping or fields of an edge (shown as remove + add to the canvas)."""
        index = next(i for i, s in enumerate(self._subscriptions) if s.id == sub.id)
        self._subscriptions[index] = sub
        self._subscription_by_id[sub.id] = sub
        self._touch()
        self.edge_removed.emit(sub.id)
        self.edge_added.emit(sub.id)
        self.changed.emit()

    def apply_section(self, section: str, value: Any) -> None:
        """Set `topology` (name/description dict), `settings` or `verification`."""
        if section == "topology":
            self._name, self._description = value["name"], value["description"]
        elif section == "settings":
            self._settings = value
        elif section == "verification":
            self._verification = value
        elif section == "storm":
            self._storm = value
        else:
            raise KeyError(section)
        self._touch()
        self.settings_changed.emit()
        self.changed.emit()

    def apply_positions(self, positions: dict[str, Position]) -> None:
        """Move components on the canvas; layout only, so no `changed()`."""
        for ident, pos in positions.items():
            if self.has_component(ident):
                self._layout[ident] = pos
        self._touch()
        for ident in positions:
            self.layout_changed.emit(ident)

