"""The main window's files: new, open, save, recent files, drops, autosave and crash recovery.

A mixin of :class:`app.gui.mainwindow.MainWindow` (which builds the document, the dialogs, the
autosave session and the menus these methods use); kept apart so that the window's composition
and its file handling each read in one place. Saves go through the one writer
(app/core/fileio.write_output); restored work is kept until it is saved or knowingly discarded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QEventLoop, QObject, QSettings, QTimer
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QMenu, QWidget

from app.core.formats import detect_format, read_json, topology_from_data
from app.core.layout import with_layout
from app.core.topology import Topology, TopologyError, new_topology
from app.gui.analysis import Analysed, analysed
from app.gui.autosave import AutosaveSession, Recoverable, find_recoverable
from app.gui.canvas import CanvasView
from app.gui.dialogs import Dialogs
from app.gui.document import DocumentModel, lenient_topology
from app.gui.status_summary import StatusSummary
from app.gui.workers import Worker

MAX_RECENT = 8


def problem_text(path: Path | str, err: TopologyError) -> str:
    """Every problem of a file, one per line, as `FILE: element.field: problem`."""
    return "\n".join(f"{path}: {p}" for p in err.problems)


def load_file(path: Path) -> tuple[Topology, str]:
    """Read a topology file of any supported format; (topology, what the file is: `detect_format`)."""
    data = read_json(path)
    kind = detect_format(data)
    try:
        topo = topology_from_data(data)
    except TopologyError:
        if kind != "stormbound":
            raise
        topo = lenient_topology(data)  # a file saved mid-edit, e.g. before its first spout
    return with_layout(topo), kind


class OpenWorker(Worker[tuple[Analysed, str]]):
    """Reads, checks and analyses a file off the GUI thread (File ▸ Open: 20,000 streams take seconds); the
    outcome is kept on the worker (`outcome`: the result or the exception) for `open_path` to read once the
    thread has ended. Nothing to cancel: reading is bounded (app/core/fileio.py) and ends on its own."""

    def __init__(self, path: Path, parent: QObject | None = None):
        super().__init__(parent)
        self.path = path
        self.outcome: tuple[Analysed, str] | Exception | None = None

    def work(self) -> tuple[Analysed, str]:
        try:
            topo, kind = load_file(self.path)
            self.outcome = (analysed(topo), kind)
        except Exception as err:  # noqa: BLE001 - shown by open_path, as the open on the GUI thread did
            self.outcome = err
            raise
        return self.outcome


class DocumentFiles:
    """Opening, saving and recovering the window's document (mixed into MainWindow, before QMainWindow)."""

    # what the window provides
    document: DocumentModel
    dialogs: Dialogs
    settings: QSettings
    canvas: CanvasView
    autosave: AutosaveSession
    autosave_timer: QTimer
    recent_menu: QMenu
    restored: bool
    closed: bool  # the window was shut down (a file read meanwhile is not shown)
    _opening: OpenWorker | None  # the file being read, if any
    _restored: list[Recoverable]
    show_message: Callable[..., None]
    _update_title: Callable[..., None]
    status_problems: StatusSummary

    # the autosave sessions of this process's windows (a crashed session's files are offered only once)
    _live_sessions: set[str] = set()

    def _widget(self) -> QWidget:
        """The window itself, as the parent of its dialogs."""
        return cast(QWidget, self)

    # ---- files ----------------------------------------------------------------
    def maybe_save(self) -> bool:
        """Ask before the current work is replaced; False means the user cancelled."""
        if not self.document.is_modified():
            return True
        answer = self.dialogs.ask_save_changes(self._widget(), self.document.section_values("topology")["name"])
        if answer == "save":
            return self.save()
        if answer == "discard":
            self._forget_restored()  # the user chose to drop the work, restored work included
            return True
        return False

    def new_document(self) -> None:
        if self.maybe_save():
            self.document.replace(new_topology())

    def open_dialog(self) -> None:
        folder = str(self.document.path.parent) if self.document.path else ""
        name = self.dialogs.open_file_name(self._widget(), "Open topology", folder)
        if name:
            self.open_path(name)

    def import_dialog(self) -> None:
        name = self.dialogs.open_file_name(self._widget(), "Import D-VerT JSON")
        if name:
            self.open_path(name)

    def load_file(self, path: Path) -> tuple[Topology, str]:
        """Read a topology file of any supported format, in the calling thread (see `load_file`)."""
        return load_file(path)

    def _read_off_the_gui_thread(self, path: Path) -> tuple[Analysed, str]:
        """Read, check and analyse `path` in an OpenWorker; the GUI thread runs its events meanwhile (a local
        event loop, the window disabled so that no edit or second open starts). Raises what reading raised."""
        worker = OpenWorker(path, parent=self._widget())
        self._opening = worker
        loop = QEventLoop()
        worker.finished.connect(loop.quit)
        widget = self._widget()
        enabled = widget.isEnabled()
        widget.setEnabled(False)
        self.show_message(f"Opening {path.name}…", 0)
        try:
            worker.start()
            if not worker.isFinished():
                loop.exec()
            worker.wait()
        finally:
            self._opening = None
            widget.setEnabled(enabled)
            self.show_message("", 1)
        if worker.outcome is None:
            raise RuntimeError("the file was not read")
        if isinstance(worker.outcome, Exception):
            raise worker.outcome
        return worker.outcome

    def open_path(self, path: str | Path, ask: bool = True) -> bool:
        """Open a .storm.json or D-VerT file; errors are shown naming the file and field. The file is read,
        checked and analysed in a worker (`OpenWorker`): the window stays drawn and the GUI thread free."""
        path = Path(path)
        if self._opening is not None:  # a drop or a recent file while a file is being opened
            self.show_message(f"Still opening another file; {path.name} was not opened")
            return False
        if ask and not self.maybe_save():
            return False
        try:
            known, kind = self._read_off_the_gui_thread(path)
        except TopologyError as err:
            self.dialogs.error(self._widget(), "Cannot open file", problem_text(path, err))
            self.show_message(f"Could not open {path.name}")
            return False
        except Exception as err:  # a reader defect: still one message, and the open work stays
            self.dialogs.error(self._widget(), "Cannot open file",
                               f"{path}: internal error: {type(err).__name__}: {err}")
            return False
        if self.closed:  # the window was closed while the file was read
            return False
        # an imported D-VerT file (or a trace's topology) is not overwritten in our format: Save asks for a new name
        ours = kind == "stormbound"
        topo = known.topology
        self.document.replace(topo, path.resolve() if ours else None, known)
        self.add_recent(path.resolve())
        self.canvas.fit_all()
        problems = self.document.problems()
        note = f" ({len(problems)} problem(s) to fix before verifying)" if problems else ""
        # an earlier version's document: what reading it assumed, said once (saving writes the current version)
        note += "".join(f"; {line}" for line in topo.read_notes)
        opened = {"stormbound": "Opened", "dvert": "Imported D-VerT file",
                  "trace": "Opened the topology of trace file"}.get(kind, "Opened")
        self.show_message(f"{opened} {path.name}{note}")
        return True

    def save(self) -> bool:
        if self.document.path is None:
            return self.save_as_dialog()
        return self.save_to(self.document.path)

    def save_as_dialog(self) -> bool:
        name = self.document.section_values("topology")["name"] or "untitled"
        suggestion = str(self.document.path or Path.cwd() / f"{name}.storm.json")
        target = self.dialogs.save_file_name(self._widget(), "Save topology as", suggestion)
        if not target:
            return False
        if not target.endswith(".json"):
            target += ".storm.json"
        return self.save_to(Path(target))

    def save_to(self, path: Path) -> bool:
        """Serialise to bytes first, then write through the one writer (app/core/fileio.write_output:
        a temporary file renamed over the target, its mode kept; never a folder, pipe or device).
        Replacing a file is what Save means (Save As asked already)."""
        topo = self.document.topology()
        if str(path).endswith(".dvert.json"):
            from app.core.formats.dvert import to_dvert_bytes

            try:
                data = to_dvert_bytes(topo)
            except Exception as err:
                self.dialogs.error(self._widget(), "Cannot save file", f"{path}: {err}")
                return False
        else:
            if topo.storm.flux_file or topo.storm.flux_filter or topo.storm.flux_resources:
                from app.core.storm.flux.origin import relative_paths

                topo = relative_paths(topo, path)  # the folder can move with its Flux file (docs/storm.md)
            data = topo.to_json_bytes()
        from app.core.fileio import OutputRefused, write_output

        try:
            write_output(path, data, force=True)
        except (OSError, OutputRefused) as err:
            self.dialogs.error(self._widget(), "Cannot save file", f"{path}: {err}")
            return False
        self.document.mark_saved(path.resolve())
        self.add_recent(path.resolve())
        self.autosave.clear_snapshot()
        self._forget_restored()  # the restored work is in a file now
        problems = self.document.problems()
        note = f"; note: {problems[0]}" if problems else ""
        self.show_message(f"Saved {path.name}{note}")
        return True

    # ---- recent files and drops ---------------------------------------------------
    def recent_files(self) -> list[Path]:
        """Recently opened or saved files that still exist (missing ones are pruned)."""
        raw = self.settings.value("recent_files", [])
        if isinstance(raw, str):
            raw = [raw]
        paths = [Path(p) for p in (raw if isinstance(raw, list) else [])]
        kept = [p for p in paths if p.is_file()]
        if len(kept) != len(paths):
            self.settings.setValue("recent_files", [str(p) for p in kept])
        return kept

    def add_recent(self, path: Path) -> None:
        current = [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent_files", [str(p) for p in [path, *current][:MAX_RECENT]])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(no recent files)").setEnabled(False)
        for path in files:
            action = self.recent_menu.addAction(path.name)
            action.setToolTip(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))

    def _on_files_dropped(self, paths: list[str]) -> None:
        if paths:
            self.open_path(paths[0])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_path(paths[0])

    def _on_document_replaced(self) -> None:
        self._update_title()
        self.status_problems.refresh()
        self.autosave.clear_snapshot()

    # ---- autosave and recovery ----------------------------------------------------
    def _schedule_autosave(self, *_: Any) -> None:
        if self.autosave.active and self.document.is_modified():
            self.autosave_timer.start()

    def _on_modified_for_autosave(self, modified: bool) -> None:
        if not modified:
            self.autosave_timer.stop()
            self.autosave.clear_snapshot()

    def autosave_now(self) -> bool:
        """Write the snapshot now (the timer calls this a few seconds after the last edit)."""
        if not self.autosave.active or not self.document.is_modified():
            return False
        try:
            self.autosave.save_snapshot(self.document.topology(), self.document.path)
        except OSError as err:
            self.show_message(f"Autosave failed: {err}")
            return False
        return True

    def offer_recovery(self) -> bool:
        """Offer the newest unsaved work of a crashed session; True when it was restored."""
        found = find_recoverable(self.autosave.folder, DocumentFiles._live_sessions)
        if not found:
            return False
        newest = found[0]
        if not self.dialogs.ask_restore(self._widget(), newest.describe()):
            for item in found:  # the user said no: knowingly discarded
                item.discard()
            return False
        try:
            topo = lenient_topology(newest.topology_data)
        except TopologyError as err:
            self.dialogs.error(self._widget(), "Cannot restore", problem_text(newest.autosave, err))
            return False
        self.document.replace(with_layout(topo), newest.original)
        self.document.undo_stack.resetClean()  # restored work is unsaved work
        self._update_title()
        # The crashed session's files stay until the restored work is saved or knowingly discarded
        # (a second crash before then still finds them); this process claims them so that no other
        # window offers them again.
        self._restored = found
        DocumentFiles._live_sessions.update(item.session for item in found)
        self.restored = True
        self.autosave_now()
        self.canvas.fit_all()
        self.show_message("Restored unsaved work; save it to keep it")
        return True

    def _forget_restored(self) -> None:
        """The restored work was saved or knowingly discarded: the crashed session's files go."""
        for item in self._restored:
            item.discard()
            DocumentFiles._live_sessions.discard(item.session)
        self._restored = []
