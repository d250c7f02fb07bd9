"""The main window's Edit and View actions and what they do: undo and redo, the clipboard (a fragment of the
document, app/gui/document.py `copy_fragment`), delete, select all, add a spout or bolt, Suggest Parallelism,
zoom, fit and Auto-layout. Each edit is one undoable command (app/gui/commands.py); nothing here draws."""

from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QMimeData
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from app.core.layout import layered_layout
from app.core.rates import no_parallelism_reason
from app.core.topology import unannotated_problems
from app.gui.commands import MoveComponentsCommand, PasteCommand, RemoveElementsCommand, SetParallelismCommand
from app.gui.document import FieldError, copy_fragment
from app.gui.plugins import PluginHost
from app.gui.resources import icon
from app.gui.window_menus import WindowMenus

FRAGMENT_MIME = "application/x-stormbound-fragment"
CONTROLS = (  # Help ▸ Mouse and Keyboard
    "Drag Spout or Bolt from the palette onto the canvas (or double-click it).",
    "Connect: drag from a component's output port (right) onto a bolt.",
    "Select: click, Ctrl-click, or drag a rubber band over empty canvas.",
    "Move: drag nodes (one undo step per drag).  Delete: Del.",
    "Copy / Cut / Paste: Ctrl+C / Ctrl+X / Ctrl+V.  Undo / Redo: Ctrl+Z / Ctrl+Shift+Z.",
    "Zoom: mouse wheel, Ctrl++ / Ctrl+-, fit: Ctrl+0.  Pan: middle button or Space+drag.",
    "Suggest parallelism: Ctrl+Shift+P.  Auto-layout: Ctrl+L.",
)


class Editing:
    """The Edit and View menus' actions of `host` (the main window), made in its sections of `menus`, and the
    edits they run on its document and selection."""

    def __init__(self, host: PluginHost, menus: WindowMenus):
        self.host = host
        keys = QKeySequence.StandardKey
        document, canvas = host.document, host.canvas
        self.action_undo = document.undo_stack.createUndoAction(host.host_widget(), "&Undo")
        self.action_undo.setShortcut(QKeySequence(keys.Undo))
        self.action_undo.setObjectName("action_undo")
        self.action_redo = document.undo_stack.createRedoAction(host.host_widget(), "&Redo")
        self.action_redo.setShortcut(QKeySequence(keys.Redo))
        self.action_redo.setObjectName("action_redo")
        menus.section("Edit ▸ Undo").add_action(self.action_undo)
        menus.section("Edit ▸ Undo").add_action(self.action_redo)
        self.action_cut = menus.action("Edit ▸ Clipboard", "Cu&t", self.cut, keys.Cut)
        self.action_copy = menus.action("Edit ▸ Clipboard", "&Copy", self.copy, keys.Copy)
        self.action_paste = menus.action("Edit ▸ Clipboard", "&Paste", self.paste, keys.Paste)
        self.action_delete = menus.action("Edit ▸ Clipboard", "&Delete", self.delete_selection, keys.Delete,
                                          "Delete the selected components and links")
        self.action_select_all = menus.action("Edit ▸ Clipboard", "Select &All", self.select_all, keys.SelectAll)
        self.action_add_spout = menus.action("Edit ▸ Add", "Add &Spout", lambda: canvas.add_component("spout"),
                                             "Ctrl+Shift+S")
        self.action_add_bolt = menus.action("Edit ▸ Add", "Add &Bolt", lambda: canvas.add_component("bolt"),
                                            "Ctrl+Shift+B")
        self.action_suggest = menus.action(
            "Edit ▸ Parallelism", "Suggest &Parallelism", self.suggest_parallelism, "Ctrl+Shift+P",
            "Set each bolt's parallelism to the rate check's smallest value that keeps every queue bounded",
            name="action_suggest_parallelism")
        self.action_suggest.setIcon(icon("suggest"))
        self.action_add_spout.setIcon(icon("spout"))
        self.action_add_bolt.setIcon(icon("bolt"))

        self.action_zoom_in = menus.action("View", "Zoom &In", lambda: canvas.zoom(1.25), keys.ZoomIn)
        self.action_zoom_out = menus.action("View", "Zoom &Out", lambda: canvas.zoom(0.8), keys.ZoomOut)
        self.action_fit = menus.action("View", "&Fit to Window", canvas.fit_all, "Ctrl+0")
        self.action_layout = menus.action("View", "&Auto-layout", self.auto_layout, "Ctrl+L",
                                          "Arrange the components in layers (one undo step)")
        self.action_layout.setIcon(icon("layout"))
        canvas.context_actions = [self.action_cut, self.action_copy, self.action_paste, self.action_delete,
                                  self.action_select_all, self.action_suggest, self.action_layout]

    def toolbar_groups(self) -> list[list[QAction]]:
        """The actions of the main toolbar, in groups separated there."""
        return [[self.action_add_spout, self.action_add_bolt], [self.action_undo, self.action_redo],
                [self.action_suggest, self.action_layout]]

    def show_controls(self) -> None:
        """Help ▸ Mouse and Keyboard: the gestures and keys of editing."""
        self.host.dialogs.info(self.host.host_widget(), "Mouse and keyboard", "\n".join(CONTROLS))

    def delete_selection(self) -> None:
        comps, subs = self.host.scene.selected_ids()
        command = RemoveElementsCommand(self.host.document, comps, subs)
        if not command.is_empty():
            self.host.document.undo_stack.push(command)

    def select_all(self) -> None:
        for node in self.host.scene.nodes.values():
            node.setSelected(True)

    def copy(self) -> bool:
        comps, _ = self.host.scene.selected_ids()
        if not comps:
            self.host.show_message("Select components to copy")
            return False
        fragment = copy_fragment(self.host.document.topology(), comps)
        data = QMimeData()
        text = json.dumps(fragment)
        data.setData(FRAGMENT_MIME, QByteArray(text.encode()))
        data.setText(text)
        QApplication.clipboard().setMimeData(data)
        return True

    def cut(self) -> None:
        if self.copy():
            self.delete_selection()

    def paste(self) -> None:
        data = QApplication.clipboard().mimeData()
        raw = bytes(data.data(FRAGMENT_MIME).data()).decode() if data.hasFormat(FRAGMENT_MIME) else data.text()
        try:
            fragment = json.loads(raw) if raw else None
            command = PasteCommand(self.host.document, fragment)
        except (ValueError, FieldError) as err:
            self.host.show_message(f"Cannot paste: {err}")
            return
        self.host.document.undo_stack.push(command)
        self.host.scene.select_ids(command.new_ids)

    def suggest_parallelism(self) -> None:
        """Apply the rate check's smallest bounded parallelism as one undoable step."""
        document = self.host.document
        topo = document.topology()
        if document.problems() or not topo.bolts:
            self.host.show_message("Suggest parallelism needs a complete topology (spouts and bolts)")
            return
        if unannotated_problems(topo):
            self.host.show_message("Suggest parallelism needs every value annotated (the amber ones are not)")
            return
        if document.analysis() is None:
            self.host.show_message("Suggest parallelism: the rate check is still analysing the last edit; try again "
                                   "when the status bar shows its counts")
            return
        report = document.rates().report()
        suggestion = report.suggested_parallelism
        hopeless = sorted(name for name, value in suggestion.items() if value is None)
        wanted = {name: value for name, value in suggestion.items() if value is not None}
        command = SetParallelismCommand(document, wanted, "Suggest parallelism")
        if command.changes:
            document.undo_stack.push(command)
            changes = ", ".join(f"{old.name} {old.parallelism}→{new.parallelism}" for old, new in command.changes)
            message = f"Parallelism set: {changes}"
        else:
            message = "Every bolt already has the suggested parallelism"
        if hopeless:
            message += f"; no parallelism bounds {', '.join(hopeless)} ({no_parallelism_reason(report)})"
        self.host.show_message(message)

    def auto_layout(self) -> None:
        topo = self.host.document.topology()
        if not topo.components:
            return
        self.host.document.undo_stack.push(MoveComponentsCommand(self.host.document, layered_layout(topo),
                                                                 "Auto-layout"))
        self.host.canvas.fit_all()
