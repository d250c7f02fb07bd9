"""File ▸ Import ▸ Flux… / From Storm UI…, and File ▸ Save Parallelism to Flux File….

A plug-in of the main window (app/gui/plugins.py): the same core calls as
`stormbound import flux | storm-ui` and `stormbound repair`. The Storm UI is read in a
CallWorker, so the window never waits on the network; its result annotates the open
document as one undo step (or opens as a new document). Saving parallelism writes
only the `parallelism` values of the user's own Flux file, through QSaveFile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QWidget,
)

from app.core.layout import with_layout
from app.core.storm.ui.client import Credentials
from app.core.storm.ui.fetch import WINDOWS
from app.core.storm.ui.reader import StormUIImport, annotate, onto_notes, read_storm_ui
from app.core.topology import Component, StormSettings, Topology
from app.gui.commands import DocumentCommand
from app.gui.dialogs import FLUX_FILTER, PROPERTIES_FILTER, TIMINGS_FILTER
from app.gui.document import DocumentModel
from app.gui.plugins import PluginHost
from app.gui.workers import CallWorker, WorkProgress

if TYPE_CHECKING:
    from app.core.storm.flux.yaml_text import FluxError, FluxOptions


class AnnotateCommand(DocumentCommand):
    """Put measured values into the open document: changed components and the Storm settings, one step."""

    def __init__(self, document: DocumentModel, annotated: Topology, text: str = "Annotate from Storm UI"):
        super().__init__(document, text)
        current = document.topology()
        old = {c.id: c for c in current.components}
        self.changes: list[tuple[Component, Component]] = [
            (old[c.id], c) for c in annotated.components if c.id in old and old[c.id] != c]
        self.old_storm: StormSettings = current.storm
        self.new_storm: StormSettings = annotated.storm

    def redo(self) -> None:
        for _old, new in self.changes:
            self.document.apply_replace_component(new)
        self.document.apply_section("storm", self.new_storm)

    def undo(self) -> None:
        for old, _new in reversed(self.changes):
            self.document.apply_replace_component(old)
        self.document.apply_section("storm", self.old_storm)


class StormUIDialog(QDialog):
    """Where the Storm UI is and which topology to read."""

    def __init__(self, parent: QWidget | None, annotate_possible: bool, last: dict[str, Any]):
        super().__init__(parent)
        self.setWindowTitle("Import from Storm UI")
        form = QFormLayout(self)
        self.url = QLineEdit(str(last.get("url", "http://localhost:8080")))
        self.topology = QLineEdit(str(last.get("topology", "")))
        self.topology.setPlaceholderText("id or name of the running topology")
        self.time_window = QComboBox()
        self.time_window.addItems(list(WINDOWS))
        self.time_window.setCurrentText(str(last.get("window", "600")))
        self.user = QLineEdit(str(last.get("user", "")))
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.token = QLineEdit()
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(1, 300)
        self.timeout.setValue(float(last.get("timeout", 10)))
        self.lag_interval = QDoubleSpinBox()
        self.lag_interval.setRange(0, 600)
        self.lag_interval.setValue(float(last.get("lag_interval", 0)))
        self.lag_interval.setToolTip("Read the Kafka lag twice, this many seconds apart, and add its growth to the "
                                     "spouts' rates: under backpressure the Storm UI shows throttled rates (0: once)")
        self.annotate = QCheckBox("annotate the open document (match components by name)")
        self.annotate.setChecked(annotate_possible)
        self.annotate.setEnabled(annotate_possible)
        for label, widget in (("Storm UI", self.url), ("Topology", self.topology), ("Window (s)", self.time_window),
                              ("User", self.user), ("Password", self.password), ("Token", self.token),
                              ("Timeout (s)", self.timeout), ("Lag interval (s)", self.lag_interval),
                              ("", self.annotate)):
            form.addRow(label, widget)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> dict[str, Any]:
        return {"url": self.url.text().strip(), "topology": self.topology.text().strip(),
                "window": self.time_window.currentText(), "user": self.user.text().strip() or None,
                "password": self.password.text() or None, "token": self.token.text() or None,
                "timeout": self.timeout.value(), "lag_interval": self.lag_interval.value(),
                "annotate": self.annotate.isChecked()}


def _fetch(request: dict[str, Any], report: Callable[..., None]) -> StormUIImport:
    """Runs in the worker thread: plain data in, a pydantic model out."""
    credentials = Credentials.resolve(request.get("user"), request.get("password"), request.get("token"))
    return read_storm_ui(request["url"], request["topology"], request.get("window", "600"), credentials,
                         float(request.get("timeout", 10)), request.get("cafile"), progress=report,
                         lag_interval=float(request.get("lag_interval", 0)))


class StormIO(QObject):
    """The window's Flux and Storm UI entries and what they do (a plug-in, app/gui/plugins.py)."""

    name = "storm_io"
    sections = ("File ▸ Import", "File ▸ Save")

    def __init__(self, host: PluginHost):
        super().__init__(host.host_widget())
        self.host = host
        self.widget = host.host_widget()  # the parent of the dialogs and actions
        self.worker: CallWorker[StormUIImport] | None = None
        self.pending: dict[str, Any] = {}
        imports = host.menu_section("File ▸ Import")
        self.action_import_flux = imports.add_action(self._action(
            "&Flux…", self.import_flux_dialog, "action_import_flux",
            "Import a Flux YAML topology (timing stays unannotated until set)"))
        self.action_import_storm_ui = imports.add_action(self._action(
            "From &Storm UI…", self.import_storm_ui_dialog, "action_import_storm_ui",
            "Read a running topology's structure and timing from its Storm UI"))
        self.action_import_timings = imports.add_action(self._action(
            "&Timings or Storm UI Tables…", self.import_timings_dialog, "action_import_timings",
            "Annotate every component at once from a timings file (YAML or CSV) or the Storm UI's topology page "
            "(its JSON, or its tables copied as text)"))
        self.action_save_flux = host.menu_section("File ▸ Save").add_action(self._action(
            "Save Parallelism to &Flux File…", self.save_parallelism_to_flux, "action_save_parallelism_to_flux",
            "Write the bolts' parallelism into the Flux file this document came from (nothing else in it changes)"))
        host.document.document_replaced.connect(self._update_enabled)
        host.document.changed.connect(self._update_enabled)
        self._update_enabled()

    def _action(self, text: str, slot: Callable[[], object], name: str, tip: str) -> QAction:
        action = QAction(text, self.widget)
        action.setObjectName(name)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _update_enabled(self) -> None:
        self.action_save_flux.setEnabled(bool(self.host.document.topology().storm.flux_file))

    # ---- Flux ---------------------------------------------------------------------------
    def import_flux_dialog(self) -> None:
        folder = str(self.host.document.path.parent) if self.host.document.path else ""
        name = self.host.dialogs.open_file_name(self.widget, "Import Flux topology", folder, FLUX_FILTER)
        if name:
            self.import_flux_path(name)

    def import_flux_path(self, path: str | Path, options: FluxOptions | None = None, ask: bool = True) -> bool:
        """Import a Flux file as a new document, as `stormbound import flux` does: asks for a properties file
        (--filter), the environment (--env) or a folder of classpath resources (--resources) when the file needs
        one, and only once it imports asks whether to replace unsaved work."""

        from app.core.storm.flux.builder import import_flux
        from app.core.storm.flux.yaml_text import FluxError, FluxOptions
        host = self.host
        options = options or FluxOptions()
        result = None
        for _ in range(8):  # each round adds one thing the file needs, or gives up
            try:
                result = import_flux(path, options)
            except FluxError as err:
                more = self._what_flux_needs(path, options, err)
                if more is None:
                    host.dialogs.error(self.widget, "Cannot import Flux file", str(err))
                    host.show_message(f"Could not import {Path(path).name}")
                    return False
                options = more
                continue
            # Flux leaves an unresolved ${...} as it is, and so does the import; offer what would resolve it
            unresolved = " ".join(result.notes)
            if ask and options.filter is None and "give --filter" in unresolved:
                props = host.dialogs.open_file_name(
                    self.widget, "Properties file for ${...} (Flux's --filter; cancel to keep them as they are)",
                    str(Path(path).parent), PROPERTIES_FILTER)
                if props:
                    options = replace(options, filter=Path(props))
                    continue
            elif ask and not options.env and "needs --env" in unresolved and host.dialogs.confirm(
                    self.widget, "Environment variables", "The file refers to ${ENV-...}: substitute them from the "
                    "environment? (No keeps them as they are, as Flux does without --env.)"):
                options = replace(options, env=True)
                continue
            break
        if result is None:
            return False
        if ask and not host.maybe_save():  # only now: a file that cannot be imported keeps the work as it is
            return False
        host.document.replace(with_layout(result.topology), None)
        host.canvas.fit_all()
        from app.core.topology import unannotated_problems

        missing = len(unannotated_problems(result.topology))  # the count the status bar gives too
        note = f": {missing} value(s) not annotated (amber)" if missing else ""
        host.show_message(f"Imported Flux file {Path(path).name}{note}")
        if result.notes:
            host.dialogs.info(self.widget, "Imported Flux file", "\n".join(result.notes))
        return True

    def _what_flux_needs(self, path: str | Path, options: FluxOptions, err: FluxError) -> FluxOptions | None:
        """The options with what the error says the file needs, chosen by the user; None: nothing to ask, or
        the user cancelled."""
        import re

        from app.core.storm.flux.origin import find_resource_folder
        host = self.host
        resource = re.search(r"resource (\S+) not found", err.message)
        if resource is not None:
            rel = resource.group(1).lstrip("/")
            found = find_resource_folder(Path(path).resolve(), rel)
            start = str(found) if found is not None else str(Path(path).parent)
            folder = host.dialogs.existing_folder(
                self.widget, f"Folder of classpath resources holding /{rel} (Flux's --resources)", start)
            if folder and Path(folder).is_dir() and Path(folder) not in options.resources:
                return replace(options, resources=[*options.resources, Path(folder)])
            return None
        if "give --filter" in err.message and options.filter is None:
            props = host.dialogs.open_file_name(self.widget, "Properties file for ${...} (Flux's --filter)",
                                                  str(Path(path).parent), PROPERTIES_FILTER)
            return replace(options, filter=Path(props)) if props else None
        if "needs --env" in err.message and not options.env and host.dialogs.confirm(
                self.widget, "Environment variables", f"{err}\n\nSubstitute ${{ENV-...}} from the environment?"):
            return replace(options, env=True)
        return None

    # ---- timings ------------------------------------------------------------------------------
    def import_timings_dialog(self) -> None:
        folder = str(self.host.document.path.parent) if self.host.document.path else ""
        name = self.host.dialogs.open_file_name(self.widget, "Annotate from timings or Storm UI tables", folder,
                                                  TIMINGS_FILTER)
        if name:
            self.import_timings_path(name)

    def import_timings_path(self, path: str | Path) -> bool:
        """Annotate the open document from a timings file or the Storm UI's tables, as one undo step (the same
        core call as `stormbound annotate FILE --from PATH`)."""
        from app.core.formats.timings import TimingsError, annotate_from_files

        host = self.host
        current = host.document.topology()
        if not current.components:
            host.show_message("Annotating needs a topology: import or open one first")
            return False
        try:
            annotated, changes, notes = annotate_from_files(current, [path])
        except TimingsError as err:
            host.dialogs.error(self.widget, "Cannot annotate", str(err))
            return False
        command = AnnotateCommand(host.document, annotated, f"Annotate from {Path(path).name}")
        host.document.undo_stack.push(command)
        host.show_message(f"Annotated {len(command.changes)} component(s) from {Path(path).name}")
        if notes:
            host.dialogs.info(self.widget, "Annotated", "\n".join([*changes, "", *notes]))
        return True

    def save_parallelism_to_flux(self) -> bool:
        """Write the document's bolt parallelism into its Flux file after a confirmation."""
        from app.core.storm.flux.origin import missing_flux_files, options_of, resolved_paths
        from app.core.storm.flux.repair import plan_repair
        from app.core.storm.flux.yaml_text import FluxError
        from app.gui.autosave import write_bytes

        host = self.host
        # relative paths are relative to the document's folder (as `import flux -o` writes them)
        topo = resolved_paths(host.document.topology(), host.document.path)
        missing = missing_flux_files(topo)
        if topo.storm.flux_file and missing:
            host.dialogs.error(self.widget, "Cannot save parallelism", "The files this document was imported from are "
                                 "not there: " + "; ".join(f"{f} {p}" for f, p in missing))
            return False
        flux = topo.storm.flux_file
        if not flux:
            host.show_message("This document did not come from a Flux file")
            return False
        try:
            edits = plan_repair(flux, {b.name: b.parallelism for b in topo.bolts}, options_of(topo))
        except (FluxError, RuntimeError) as err:
            host.dialogs.error(self.widget, "Cannot save parallelism", str(err))
            return False
        if not edits:
            host.show_message(f"{Path(flux).name} already has this parallelism")
            return True
        changes = "\n".join(f"{e.path.name}: {c}" for e in edits for c in e.changes)
        commands = rebalance_commands(topo, {c: n for e in edits for c, n in e.raised_tasks.items()})
        if commands:
            changes += "\n\nOn the running topology, without a redeploy:\n" + "\n".join(commands)
        if not host.dialogs.confirm(self.widget, "Save parallelism to Flux file",
                                      f"Change only these values (comments and layout stay)?\n\n{changes}"):
            return False
        for edit in edits:
            try:
                write_bytes(edit.path, edit.after.encode("utf-8"))
            except OSError as err:
                host.dialogs.error(self.widget, "Cannot save parallelism", f"{edit.path}: {err}")
                return False
        host.show_message(f"Saved parallelism to {', '.join(e.path.name for e in edits)}")
        return True

    # ---- Storm UI -------------------------------------------------------------------------
    def import_storm_ui_dialog(self) -> None:
        from app.gui.dialogs import ask_storm_ui

        host = self.host
        has_document = bool(host.document.topology().components)
        request = ask_storm_ui(host, "storm_ui", ("url", "topology", "window", "user", "timeout"),
                               "Import from Storm UI", lambda last: StormUIDialog(self.widget, has_document, last),
                               headless={"annotate": has_document})
        if request is not None:
            self.start_fetch(request)

    def start_fetch(self, request: dict[str, Any]) -> CallWorker[StormUIImport] | None:
        """Read the Storm UI in a worker; the result arrives in `_on_fetched` on the GUI thread."""
        if self.worker is not None and self.worker.isRunning():
            self.host.show_message("Already reading a Storm UI")
            return None
        self.pending = dict(request)
        self.worker = CallWorker(_fetch, dict(request), parent=self)
        self.worker.progress.connect(self._on_progress)
        self.worker.result_ready.connect(self._on_fetched)
        self.worker.failed.connect(self._on_failed)
        self.action_import_storm_ui.setEnabled(False)
        self.host.show_message(f"Reading {request['topology']} from {request['url']} …", 0)
        self.worker.start()
        return self.worker

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Wait (bounded) for a Storm UI read in progress (its own timeout ends it); True when none runs."""
        return self.worker is None or self.worker.join(timeout_ms)

    def _on_progress(self, progress: WorkProgress) -> None:
        self.host.show_message(progress.message, 0)

    def _on_failed(self, text: str) -> None:
        self.action_import_storm_ui.setEnabled(True)
        self.host.dialogs.error(self.widget, "Cannot import from Storm UI", text)
        self.host.show_message("Storm UI import failed")

    def _on_fetched(self, measured: StormUIImport) -> None:
        self.action_import_storm_ui.setEnabled(True)
        host = self.host
        notes = list(measured.notes)
        if self.pending.get("annotate") and host.document.topology().components:
            annotated, more = annotate(host.document.topology(), measured)
            notes = onto_notes(measured) + more  # the document keeps its groupings
            command = AnnotateCommand(host.document, annotated)
            host.document.undo_stack.push(command)
            what = f"Annotated {len(command.changes)} component(s) from {measured.topology_id}"
        else:
            if not host.maybe_save():
                return
            host.document.replace(with_layout(measured.topology), None)
            host.canvas.fit_all()
            what = f"Imported {measured.topology_id} from the Storm UI"
        host.show_message(what)
        lines = [f"{d.path} = {d.value:.6g}   ({d.source})" for d in measured.derived]
        text = "\n".join([what, "", *lines, *([""] + notes if notes else [])])
        host.dialogs.info(self.widget, "Imported from Storm UI", text)


def rebalance_commands(topo: Topology, raised_tasks: dict[str, int] | None = None) -> list[str]:
    """`storm rebalance` lines for the document's parallelism, against its Flux file as deployed."""
    from app.core.storm.flux.origin import options_of
    from app.core.storm.flux.parser import read_flux
    from app.core.storm.flux.yaml_text import FluxError
    from app.core.storm.rebalance import rebalance_lines, running_from_flux

    if not topo.storm.flux_file:
        return []
    try:
        deployed = read_flux(topo.storm.flux_file, options_of(topo))
    except (FluxError, OSError):
        return []
    return rebalance_lines(topo.name, running_from_flux(deployed), {b.name: b.parallelism for b in topo.bolts},
                           raised_tasks)

