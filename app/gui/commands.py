"""Undoable edits of the DocumentModel; they change the document and nothing else.

Each command validates its edit when it is created (raising FieldError or
ConnectionRefused with a message for the user), so a command on the stack always
applies. Field edits merge while typing: one undo step per field (`id`/`mergeWith`).
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Set as AbstractSet
from typing import Any

from PySide6.QtGui import QUndoCommand

from app.core.errors import BadInput
from app.core.topology import Bolt, Component, Position, Spout, Subscription
from app.gui.document import DocumentModel, FieldError

MERGE_COMPONENT_FIELD = 1001
MERGE_SECTION_FIELD = 1002
MERGE_SUBSCRIPTION_FIELD = 1003


class ConnectionRefused(BadInput, ValueError):
    """A subscription that the document rules forbid (into a spout, duplicate)."""


class DocumentCommand(QUndoCommand):
    """An undoable edit of one DocumentModel (every command derives from it, app/gui/storm_io.py's too).

    The document owns its commands (its QUndoStack holds them, in C++), so a command refers to its document
    weakly. A strong reference back would make document, stack and commands one reference cycle, left to
    Python's cycle collector: that takes the cycle apart in no particular order, and a command it clears is
    handed back to Python (shiboken), which deletes the C++ command while the stack still holds it; the
    stack's own delete then crashes the process (docs/gui.md, "Who frees what").
    """

    def __init__(self, document: DocumentModel, text: str):
        super().__init__(text)
        self._document = weakref.ref(document)

    @property
    def document(self) -> DocumentModel:
        document = self._document()
        if document is None:  # never while the command is on its document's stack
            raise RuntimeError(f"{self.text()}: the document of this edit is gone")
        return document


class AddComponentCommand(DocumentCommand):
    """Add a spout or bolt at a canvas position."""

    def __init__(self, document: DocumentModel, component: Component, position: Position):
        if document.has_component(component.id):
            raise FieldError("id", f"duplicate id '{component.id}'")
        if any(c.name == component.name for c in document.topology().components):
            raise FieldError("name", f"'{component.name}' is already the name of another component")
        super().__init__(document, f"Add {component.kind} {component.name}")
        self.component, self.position = component, position

    def redo(self) -> None:
        self.document.apply_insert_component(self.component, self.position)

    def undo(self) -> None:
        self.document.apply_remove_component(self.component.id)


def new_spout(document: DocumentModel, **fields: Any) -> Spout:
    """A spout with a fresh id, the next free name and sensible defaults."""
    values: dict[str, Any] = {"name": document.unique_name("S"), "rate": 1.0, "burst": 1, **fields}
    return Spout(**values)


def new_bolt(document: DocumentModel, **fields: Any) -> Bolt:
    """A bolt with a fresh id, the next free name and sensible defaults."""
    values: dict[str, Any] = {"name": document.unique_name("B"), "alpha": 1.0, "sigma": 1.0, "parallelism": 1, **fields}
    return Bolt(**values)


class AddSubscriptionCommand(DocumentCommand):
    """Let bolt `target` subscribe to `source`; refused into spouts and for duplicates."""

    def __init__(self, document: DocumentModel, source: str, target: str, grouping: str = "shuffle",
                 fields: list[str] | None = None):
        problem = document.connection_problem(source, target)
        if problem:
            raise ConnectionRefused(problem)
        try:
            self.subscription = Subscription(source=source, target=target, grouping=grouping, fields=fields or [])
        except ValueError as err:
            raise ConnectionRefused(str(err)) from None
        super().__init__(document, f"Connect {document.component(source).name} → {document.component(target).name}")

    def redo(self) -> None:
        self.document.apply_insert_subscription(self.subscription)

    def undo(self) -> None:
        self.document.apply_remove_subscription(self.subscription.id)


class RemoveElementsCommand(DocumentCommand):
    """Delete components (with their subscriptions and checked marks) and subscriptions."""

    def __init__(self, document: DocumentModel, component_ids: AbstractSet[str],
                 subscription_ids: AbstractSet[str] = frozenset()):
        topo = document.topology()
        self.component_ids = [c.id for c in topo.components if c.id in component_ids]
        self.subscription_ids = [s.id for s in topo.subscriptions
                                 if s.id in subscription_ids or s.source in component_ids or s.target in component_ids]
        checked = topo.verification.checked
        kept = [r for r in checked if r not in component_ids]
        self.old_verification = topo.verification
        self.new_verification = topo.verification.model_copy(update={"checked": kept}) if kept != checked else None
        names = [topo.name_of(i) for i in self.component_ids]
        what = ", ".join(names) if names else f"{len(self.subscription_ids)} subscription(s)"
        super().__init__(document, f"Delete {what}")
        self._removed_subs: list[tuple[Subscription, int]] = []
        self._removed_comps: list[tuple[Component, int, Position | None]] = []

    def is_empty(self) -> bool:
        return not self.component_ids and not self.subscription_ids

    def redo(self) -> None:
        if self.new_verification is not None:
            self.document.apply_section("verification", self.new_verification)
        self._removed_subs = [self.document.apply_remove_subscription(i) for i in self.subscription_ids]
        self._removed_comps = [self.document.apply_remove_component(i) for i in self.component_ids]

    def undo(self) -> None:
        for comp, index, position in reversed(self._removed_comps):
            self.document.apply_insert_component(comp, position or Position(), index)
        for sub, index in reversed(self._removed_subs):
            self.document.apply_insert_subscription(sub, index)
        if self.new_verification is not None:
            self.document.apply_section("verification", self.old_verification)


class _MergingFieldsCommand(DocumentCommand):
    """Typing in one inspector field: successive edits of the same target and fields merge into one step.

    Subclasses set `old`, `new`, `keys`, `merge`, `session` and say what they edit in `_target()`.
    """

    MERGE_ID = -1
    session: int | None = None  # the inspector's editing session; only equal sessions merge
    old: Any
    new: Any
    keys: frozenset[str]
    merge: bool

    def _target(self) -> Any:
        raise NotImplementedError

    def id(self) -> int:
        return self.MERGE_ID if self.merge else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not (type(other) is type(self) and other.merge and other._target() == self._target()
                and other.keys == self.keys and other.session == self.session):
            return False
        self.new = other.new
        if self.new == self.old:
            self.setObsolete(True)
        return True


class SetComponentFieldsCommand(_MergingFieldsCommand):
    """Change fields of one spout or bolt; successive edits of the same field merge."""

    MERGE_ID = MERGE_COMPONENT_FIELD

    def __init__(self, document: DocumentModel, component_id: str, fields: dict[str, Any], merge: bool = True):
        self.component_id = component_id
        self.old = document.component(component_id)
        self.new = document.check_component_fields(component_id, dict(fields))
        self.keys = frozenset(fields)
        self.merge = merge
        self.session = None
        super().__init__(document, f"Set {', '.join(sorted(fields))} of {self.old.name}")

    def _target(self) -> Any:
        return self.component_id

    def redo(self) -> None:
        self.document.apply_replace_component(self.new)

    def undo(self) -> None:
        self.document.apply_replace_component(self.old)


class SetParallelismCommand(DocumentCommand):
    """Set the parallelism of several bolts at once, by name (Suggest parallelism, measured values)."""

    def __init__(self, document: DocumentModel, parallelism: dict[str, int], text: str = "Set parallelism"):
        super().__init__(document, text)
        topo = document.topology()
        self.changes: list[tuple[Bolt, Bolt]] = []
        for name, value in parallelism.items():
            try:
                bolt = topo.bolt_by_name(name)
            except KeyError:
                raise FieldError("parallelism", f"no bolt named '{name}'") from None
            if bolt.parallelism != value:
                changed = document.check_component_fields(bolt.id, {"parallelism": value})
                assert isinstance(changed, Bolt)  # the same component, one field changed
                self.changes.append((bolt, changed))

    def redo(self) -> None:
        for _, new in self.changes:
            self.document.apply_replace_component(new)

    def undo(self) -> None:
        for old, _ in reversed(self.changes):
            self.document.apply_replace_component(old)


class SetSubscriptionFieldsCommand(_MergingFieldsCommand):
    """Change the grouping or grouping fields of a subscription."""

    MERGE_ID = MERGE_SUBSCRIPTION_FIELD

    def __init__(self, document: DocumentModel, subscription_id: str, fields: dict[str, Any], merge: bool = True):
        from app.gui.document import validated_update

        self.old = document.subscription(subscription_id)
        for key in ("id", "source", "target"):
            if key in fields:
                raise FieldError(key, "cannot be changed; delete the subscription and connect again")
        self.new = validated_update(self.old, dict(fields))
        if self.new.grouping == "fields" and not self.new.fields:
            raise FieldError("fields", "fields grouping needs at least one field name")
        self.keys = frozenset(fields)
        self.merge = merge
        self.session = None
        super().__init__(document, f"Set {', '.join(sorted(fields))} of a subscription")

    def _target(self) -> Any:
        return self.old.id

    def redo(self) -> None:
        self.document.apply_replace_subscription(self.new)

    def undo(self) -> None:
        self.document.apply_replace_subscription(self.old)


class SetSectionFieldsCommand(_MergingFieldsCommand):
    """Change the topology's name/description, its timing settings or its verification settings."""

    MERGE_ID = MERGE_SECTION_FIELD

    def __init__(self, document: DocumentModel, section: str, fields: dict[str, Any], merge: bool = True):
        self.section = section
        self.old = document.section_values(section) if section == "topology" else document._section(section)
        self.new = document.check_section_fields(section, dict(fields))
        self.keys = frozenset(fields)
        self.merge = merge
        self.session = None
        super().__init__(document, f"Set {section} {', '.join(sorted(fields))}")

    def _target(self) -> Any:
        return self.section

    def redo(self) -> None:
        self.document.apply_section(self.section, self.new)

    def undo(self) -> None:
        self.document.apply_section(self.section, self.old)


class MoveComponentsCommand(DocumentCommand):
    """Move components on the canvas (a whole drag, or an auto-layout, is one step)."""

    def __init__(self, document: DocumentModel, positions: dict[str, Position], text: str = "Move",
                 old_positions: dict[str, Position] | None = None):
        super().__init__(document,
                         text if len(positions) != 1 else f"{text} {document.component(next(iter(positions))).name}")
        self.new = dict(positions)
        self.old = dict(old_positions) if old_positions else {i: document.position(i) for i in positions}

    def redo(self) -> None:
        self.document.apply_positions(self.new)

    def undo(self) -> None:
        self.document.apply_positions(self.old)


class PasteCommand(DocumentCommand):
    """Insert a copied fragment with fresh ids and free names, shifted by `offset`."""

    def __init__(self, document: DocumentModel, fragment: Any, offset: tuple[float, float] = (30.0, 30.0)):
        if not isinstance(fragment, dict) or fragment.get("format") != "stormbound-fragment/1":
            raise FieldError("clipboard", "does not hold Stormbound components")
        super().__init__(document, "Paste")
        taken = {c.name for c in document.topology().components}
        id_map: dict[str, str] = {}
        self.components: list[tuple[Component, Position]] = []
        layout = fragment.get("layout") or {}
        for raw in fragment.get("components") or []:
            old_id = str(raw.get("id"))
            new_id = str(uuid.uuid4())
            id_map[old_id] = new_id
            name = str(raw.get("name") or "C")
            base, n = name, 2
            while name in taken:
                name = f"{base}_{n}"
                n += 1
            taken.add(name)
            cls = Spout if raw.get("kind") == "spout" else Bolt
            try:
                comp = cls.model_validate({**raw, "id": new_id, "name": name})
            except ValueError as err:
                raise FieldError("clipboard", f"invalid component '{name}': {err}") from None
            pos = layout.get(old_id) or {}
            self.components.append((comp, Position(x=float(pos.get("x", 0)) + offset[0],
                                                   y=float(pos.get("y", 0)) + offset[1])))
        self.subscriptions = [
            Subscription.model_validate({**s, "id": str(uuid.uuid4()), "source": id_map[s["source"]],
                                         "target": id_map[s["target"]]})
            for s in fragment.get("subscriptions") or []
            if s.get("source") in id_map and s.get("target") in id_map
        ]
        self.new_ids = {c.id for c, _ in self.components}

    def redo(self) -> None:
        for comp, pos in self.components:
            self.document.apply_insert_component(comp, pos)
        for sub in self.subscriptions:
            self.document.apply_insert_subscription(sub)

    def undo(self) -> None:
        for sub in reversed(self.subscriptions):
            self.document.apply_remove_subscription(sub.id)
        for comp, _ in reversed(self.components):
            self.document.apply_remove_component(comp.id)
