"""The main window: canvas in the middle, panels docked around it, menus. It builds every panel itself
and wires their signals: the one place the GUI is composed. Its files (open, save, recent files,
autosave and crash recovery) are the DocumentFiles mixin of app/gui/window_files.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QByteArray, QMimeData, QRect, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QMenu, QToolBar, QUndoView, QWidget

from app.core.layout import layered_layout
from app.core.rates import idle_warning, no_parallelism_reason
from app.core.topology import unannotated_problems
from app.gui.app_words import in_app_words
from app.gui.autosave import AutosaveSession, Recoverable, default_autosave_dir
from app.gui.canvas import CanvasScene, CanvasView
from app.gui.commands import MoveComponentsCommand, PasteCommand, RemoveElementsCommand, SetParallelismCommand
from app.gui.dialogs import Dialogs
from app.gui.diffstream_dialog import DiffStreamDialog
from app.gui.document import DocumentModel, FieldError
from app.gui.live import LiveMode
from app.gui.panels import verification
from app.gui.panels.inspector import Inspector
from app.gui.panels.palette import Palette
from app.gui.panels.runs import RunsPanel
from app.gui.panels.verification import VerificationPanel
from app.gui.plugins import MenuSection, Plugin
from app.gui.resources import icon, style_sheet
from app.gui.storm_io import StormIO
from app.gui.window_files import DocumentFiles
from app.gui.workers import Worker

P = TypeVar("P", bound=Plugin)

MENU_ORDER = ("File", "Edit", "View", "Verify", "Runs", "Help")
#: the named sections of the menus, in order: (section, its menu, a separator before it). The window and its
#: plug-ins add entries to a section by its name (app/gui/plugins.py); "File ▸ Import" is File's Import submenu.
MENU_SECTIONS: tuple[tuple[str, str, bool], ...] = (
    ("File ▸ Open", "File", False),
    ("File ▸ Save", "File", True),
    ("File ▸ Export", "File", True),
    ("File ▸ Quit", "File", True),
    ("Edit ▸ Undo", "Edit", False),
    ("Edit ▸ Clipboard", "Edit", True),
    ("Edit ▸ Add", "Edit", True),
    ("Edit ▸ Parallelism", "Edit", True),
    ("View", "View", False),
    ("View ▸ Panels", "View", True),
    ("Verify", "Verify", False),
    ("Verify ▸ Options", "Verify", True),
    ("Runs", "Runs", False),
    ("Runs ▸ Live", "Runs", True),
    ("Help", "Help", False),
)
FRAGMENT_MIME = "application/x-stormbound-fragment"
AUTOSAVE_DELAY_MS = 3000
DEFAULT_SIZE = (1500, 900)  # a first start; later starts restore the window's last geometry
QUIT_WAIT_MS = 10_000  # how long quitting waits for background work to stop


def _stop_workers() -> None:
    """Application exit: cancel every background worker and wait for it (bounded)."""
    Worker.stop_all(QUIT_WAIT_MS)


class MainWindow(DocumentFiles, QMainWindow):
    """The Stormbound editor window.

    `document` holds the topology, `canvas` is the view; the panels (`inspector`,
    `verification_panel`, `runs_panel`, ...) are built here, docked with `add_panel`
    and given their menu entries with `menu_section(name)` (MENU_SECTIONS); the plug-ins
    (`storm_io`, `live`) are built with the window as their PluginHost (app/gui/plugins.py).
    """

    _quit_hooked = False

    def __init__(self, settings: QSettings | None = None, dialogs: Dialogs | None = None,
                 autosave_dir: Path | None = None, autosave: bool = True, recover: bool = True,
                 restore_layout: bool = True, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings if settings is not None else QSettings("Stormbound", "Stormbound")
        self.dialogs = dialogs if dialogs is not None else Dialogs()
        self.document = DocumentModel(parent=self)
        self.scene = CanvasScene(self.document, self)
        self.canvas = CanvasView(self.scene, self)
        self.setCentralWidget(self.canvas)
        self.setObjectName("MainWindow")
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        sheet = style_sheet()
        if sheet:
            self.setStyleSheet(sheet)
        self._menus: dict[str, QMenu] = {}
        self.docks: dict[str, QDockWidget] = {}  # by title
        self._docks_arranged = False
        for title in MENU_ORDER:
            self.menu(title)
        self._sections: dict[str, MenuSection] = {}
        last: dict[str, MenuSection] = {}
        for name, title, separated in MENU_SECTIONS:
            self._sections[name] = last[title] = MenuSection(name, self.menu(title), separated, last.get(title))
        self.plugins: dict[str, Plugin] = {}
        self.toolbar = QToolBar("Main", self)
        self.toolbar.setObjectName("toolbar_main")
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(self.toolbar)

        self._build_actions()
        self.component_palette = Palette()  # not `palette`: QWidget.palette() is Qt's colour palette
        self.palette_dock = self.add_panel(self.component_palette, "Palette", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.inspector = Inspector(self.document)
        self.inspector_dock = self.add_panel(self.inspector, "Inspector", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.component_palette.add_requested.connect(self.add_component)
        self.history = QUndoView(self.document.undo_stack)
        self.history.setEmptyLabel("<opened>")
        self.history_dock = self.add_panel(self.history, "History", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.inspector_dock, self.history_dock)
        self.inspector_dock.raise_()

        self.status_problems = QLabel()
        self.status_problems.setObjectName("status_problems")
        self.statusBar().addPermanentWidget(self.status_problems)
        self.scene.status_message.connect(self.show_message)
        self.scene.selectionChanged.connect(self._on_selection_changed)
        self.canvas.files_dropped.connect(self._on_files_dropped)
        self.document.modified_changed.connect(self._update_title)
        self.document.path_changed.connect(self._update_title)
        self.document.settings_changed.connect(self._update_title)
        self.document.changed.connect(self._update_status)
        self.scene.live_changed.connect(self._update_status)
        self.document.document_replaced.connect(self._on_document_replaced)

        self._update_title()
        self._update_status()

        self.autosave = AutosaveSession(autosave_dir or default_autosave_dir())
        self._restored: list[Recoverable] = []  # a crashed session's files, kept until its work is saved or dropped
        self.restored = False  # this window shows work restored from a crash
        self.closed = False
        self._opening = None
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.document.undo_stack.indexChanged.connect(self._schedule_autosave)
        self.document.modified_changed.connect(self._on_modified_for_autosave)
        if autosave:
            try:
                self.autosave.start()
                MainWindow._live_sessions.add(self.autosave.session)
            except OSError as err:
                self.show_message(f"Autosave is off: cannot write {self.autosave.folder}: {err}")
        self._build_verification()
        self._build_runs()
        # File > Import > Flux… / From Storm UI… / Timings…, File > Save Parallelism to Flux File…
        self.storm_io = self.install_plugin(StormIO(self))
        self.live = self.install_plugin(LiveMode(self))  # Runs > Live Mode (Storm UI)
        self._default_geometry()
        self._save_layout = restore_layout
        if restore_layout:
            geometry, state = self.settings.value("window/geometry"), self.settings.value("window/state")
            if isinstance(geometry, QByteArray):
                self.restoreGeometry(geometry)
            if isinstance(state, QByteArray) and self.restoreState(state):
                self._docks_arranged = True  # the user's own arrangement wins
        if recover and autosave:
            self.offer_recovery()

    def _default_geometry(self) -> None:
        """DEFAULT_SIZE, or most of a smaller screen, centred (a remembered geometry replaces it)."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None or QApplication.platformName() == "offscreen":  # no real screen to fit
            self.resize(*DEFAULT_SIZE)
            return
        self.place_on(screen.availableGeometry())

    def place_on(self, free: QRect) -> None:
        """Size and centre the window within `free` (a screen's available area); when the panels side by
        side are wider than it, Verification, Trace and Runs share the bottom area as tabs."""
        width, height = DEFAULT_SIZE
        least = self.minimumSizeHint()  # the docked panels' own minimum widths add up
        bottom = [self.docks[t] for t in ("Verification", "Trace", "Runs") if t in self.docks]
        if least.width() > free.width() and len(bottom) > 1:
            for dock in bottom[1:]:
                self.tabifyDockWidget(bottom[0], dock)
            bottom[0].raise_()
            layout = self.layout()
            if layout is not None:
                layout.activate()  # the window's minimum size follows the tabs' narrower one now
            least = self.minimumSizeHint()
        # not below the minimum Qt would enforce, nor wider than the screen
        width = min(max(least.width(), min(width, int(free.width() * 0.94))), free.width())
        height = min(max(least.height(), min(height, int(free.height() * 0.92))), free.height())
        self.resize(width, height)
        self.move(free.x() + max(0, (free.width() - width) // 2), free.y() + max(0, (free.height() - height) // 2))

    # ---- menus and docks ---------------------------------------------------------
    def menu(self, title: str) -> QMenu:
        """The menu `title`, created on demand (File, Edit, View, Verify, Runs, Help keep their order)."""
        key = title.replace("&", "")
        if key not in self._menus:
            menu = QMenu(f"&{key}", self)
            menu.setObjectName(f"menu_{key.lower()}")
            later = [self._menus[t] for t in MENU_ORDER[MENU_ORDER.index(key) + 1:] if t in self._menus] \
                if key in MENU_ORDER else []
            if later:
                self.menuBar().insertMenu(later[0].menuAction(), menu)
            else:
                help_menu = self._menus.get("Help")
                if help_menu is not None and key not in MENU_ORDER:
                    self.menuBar().insertMenu(help_menu.menuAction(), menu)
                else:
                    self.menuBar().addMenu(menu)
            self._menus[key] = menu
        return self._menus[key]

    def menu_section(self, name: str) -> MenuSection:
        """The menu section `name` (MENU_SECTIONS, and "File ▸ Import"): where the window and its plug-ins add
        their entries."""
        try:
            return self._sections[name]
        except KeyError:
            raise KeyError(f"no menu section {name!r}; the sections: {', '.join(self._sections)}") from None

    def host_widget(self) -> QWidget:
        """The window as the parent of the plug-ins' actions, dialogs and workers (app/gui/plugins.py)."""
        return self

    def install_plugin(self, plugin: P) -> P:
        """Keep `plugin` (built with this window as its host) under its name; the window shuts it down."""
        if plugin.name in self.plugins:
            raise ValueError(f"a plug-in named {plugin.name!r} is installed already")
        unknown = [s for s in plugin.sections if s not in self._sections]
        if unknown:
            raise KeyError(f"plug-in {plugin.name!r} names unknown menu sections: {', '.join(unknown)}")
        self.plugins[plugin.name] = plugin
        return plugin

    def add_panel(self, widget: QWidget, title: str,
                  area: Qt.DockWidgetArea = Qt.DockWidgetArea.BottomDockWidgetArea) -> QDockWidget:
        """Dock `widget` under `title` and add its show/hide toggle to the View menu."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title.lower().replace(' ', '_')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[title] = dock
        toggle = dock.toggleViewAction()
        toggle.setText(f"{title} panel")
        self.menu_section("View ▸ Panels").add_action(toggle)
        return dock

    def _build_verification(self) -> None:
        """The Verification and Trace docks, the Verify menu and File > Export verified configuration."""
        panel = self.verification_panel = VerificationPanel(self.document, parent=self)
        panel.canvas, panel.dialogs = self.canvas, self.dialogs
        self.inspector.explanation.attach(self.scene, panel, self.document)
        dock = self.add_panel(panel, "Verification")
        panel.trace_dock = self.add_panel(panel.trace_view, "Trace")
        self.splitDockWidget(dock, panel.trace_dock, Qt.Orientation.Horizontal)
        verification.create_actions(panel, self)
        for action in (panel.action_verify, panel.action_cancel, panel.action_trace):
            self.menu_section("Verify").add_action(action)
        self.menu_section("Verify ▸ Options").add_action(panel.action_force)
        self.toolbar.addSeparator()
        self.toolbar.addAction(panel.action_verify)
        self.menu_section("File ▸ Export").add_action(panel.action_export_verified)

    def _build_runs(self) -> None:
        """The Runs dock (tabbed with the trace view), the Runs menu and the DiffStream dialog."""
        panel = self.runs_panel = RunsPanel(self.document, self.settings)
        self.runs_dock = self.add_panel(panel, "Runs")
        trace_dock = self.docks["Trace"]  # share the bottom area with the trace view
        self.tabifyDockWidget(trace_dock, self.runs_dock)
        trace_dock.raise_()
        panel.set_trace_plots(self.verification_panel.trace_view)
        panel.controller.failed.connect(self.show_message)
        panel.controller.raise_requested.connect(self.runs_dock.raise_)
        menu = self.menu_section("Runs")
        for text, slot, name in (("Attach / detach Spark", panel.toggle_attach, "action_runs_attach"),
                                 ("Run current topology", panel.start_run, "action_runs_run"),
                                 ("Cancel run", panel.cancel, "action_runs_cancel"),
                                 ("Open event log...", panel.open_dialog, "action_runs_open"),
                                 ("Check reliability", panel.check_reliability, "action_runs_reliability"),
                                 ("Apply measured values", panel.apply_measured, "action_runs_apply")):
            action = QAction(text, self)
            action.setObjectName(name)
            action.triggered.connect(slot)
            menu.add_action(action)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(panel.shutdown)
            if not MainWindow._quit_hooked:  # every worker of every window joins before the app ends
                app.aboutToQuit.connect(_stop_workers)
                MainWindow._quit_hooked = True

        self.diffstream_dialog = DiffStreamDialog(self)
        self.action_compare_runs = QAction("Compare runs...", self)
        self.action_compare_runs.setObjectName("action_compare_runs")
        self.action_compare_runs.setStatusTip(
            "Are two run outputs equivalent up to a dependence relation? (DiffStream)")
        self.action_compare_runs.triggered.connect(self.show_diffstream_dialog)
        menu.add_action(self.action_compare_runs)

    def show_diffstream_dialog(self) -> None:
        """Runs > Compare runs...: the DiffStream dialog (one per window)."""
        self.diffstream_dialog.show()
        self.diffstream_dialog.raise_()

    # ---- actions -------------------------------------------------------------------
    def _action(self, section: str, text: str, slot: Any,
                shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
                tip: str = "", name: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.setObjectName(name or "action_" + "".join(ch for ch in text.lower() if ch.isalnum() or ch == " ")
                             .strip().replace(" ", "_"))
        action.triggered.connect(slot)
        self.menu_section(section).add_action(action)
        return action

    def _build_actions(self) -> None:
        keys = QKeySequence.StandardKey
        self.action_new = self._action("File ▸ Open", "&New", self.new_document, keys.New)
        self.action_open = self._action("File ▸ Open", "&Open…", self.open_dialog, keys.Open,
                                        "Open a .storm.json topology or a D-VerT JSON file")
        self.recent_menu = self.menu_section("File ▸ Open").add_menu(QMenu("Open &Recent", self.menu("File")))
        self.recent_menu.setObjectName("menu_recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.import_menu = self.menu_section("File ▸ Open").add_menu(QMenu("&Import", self))
        self.import_menu.setObjectName("menu_import")
        self._sections["File ▸ Import"] = MenuSection("File ▸ Import", self.import_menu)
        self.action_import = self._action("File ▸ Import", "&D-VerT JSON…", self.import_dialog, None,
                                          "Import a D-VerT configuration (laid out automatically)",
                                          name="action_import_dvert_json")
        self.action_save = self._action("File ▸ Save", "&Save", self.save, keys.Save)
        self.action_save_as = self._action("File ▸ Save", "Save &As…", self.save_as_dialog, keys.SaveAs)
        self.action_quit = self._action("File ▸ Quit", "&Quit", self.close, keys.Quit)

        self.action_undo = self.document.undo_stack.createUndoAction(self, "&Undo")
        self.action_undo.setShortcut(QKeySequence(keys.Undo))
        self.action_undo.setObjectName("action_undo")
        self.action_redo = self.document.undo_stack.createRedoAction(self, "&Redo")
        self.action_redo.setShortcut(QKeySequence(keys.Redo))
        self.action_redo.setObjectName("action_redo")
        self.menu_section("Edit ▸ Undo").add_action(self.action_undo)
        self.menu_section("Edit ▸ Undo").add_action(self.action_redo)
        self.action_cut = self._action("Edit ▸ Clipboard", "Cu&t", self.cut, keys.Cut)
        self.action_copy = self._action("Edit ▸ Clipboard", "&Copy", self.copy, keys.Copy)
        self.action_paste = self._action("Edit ▸ Clipboard", "&Paste", self.paste, keys.Paste)
        self.action_delete = self._action("Edit ▸ Clipboard", "&Delete", self.delete_selection, keys.Delete,
                                          "Delete the selected components and links")
        self.action_select_all = self._action("Edit ▸ Clipboard", "Select &All", self.select_all, keys.SelectAll)
        self.action_add_spout = self._action("Edit ▸ Add", "Add &Spout", lambda: self.add_component("spout"),
                                             "Ctrl+Shift+S")
        self.action_add_bolt = self._action("Edit ▸ Add", "Add &Bolt", lambda: self.add_component("bolt"),
                                            "Ctrl+Shift+B")
        self.action_suggest = self._action(
            "Edit ▸ Parallelism", "Suggest &Parallelism", self.suggest_parallelism, "Ctrl+Shift+P",
            "Set each bolt's parallelism to the rate check's smallest value that keeps every queue bounded",
            name="action_suggest_parallelism")
        self.action_suggest.setIcon(icon("suggest"))
        self.action_add_spout.setIcon(icon("spout"))
        self.action_add_bolt.setIcon(icon("bolt"))

        self.action_zoom_in = self._action("View", "Zoom &In", lambda: self.canvas.zoom(1.25), keys.ZoomIn)
        self.action_zoom_out = self._action("View", "Zoom &Out", lambda: self.canvas.zoom(0.8), keys.ZoomOut)
        self.action_fit = self._action("View", "&Fit to Window", self.canvas.fit_all, "Ctrl+0")
        self.action_layout = self._action("View", "&Auto-layout", self.auto_layout, "Ctrl+L",
                                          "Arrange the components in layers (one undo step)")
        self.action_layout.setIcon(icon("layout"))

        self._action("Help", "&Mouse and Keyboard", self.show_controls)
        self._action("Help", "&About Stormbound", self.about)

        self.canvas.context_actions = [self.action_cut, self.action_copy, self.action_paste, self.action_delete,
                                       self.action_select_all, self.action_suggest, self.action_layout]
        for action in (self.action_add_spout, self.action_add_bolt):
            self.toolbar.addAction(action)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.action_undo)
        self.toolbar.addAction(self.action_redo)
        self.toolbar.addSeparator()
        self.toolbar.addAction(self.action_suggest)
        self.toolbar.addAction(self.action_layout)
        self.toolbar.addSeparator()

    # ---- messages ----------------------------------------------------------------
    def show_message(self, text: str, timeout_ms: int = 8000) -> None:
        self.statusBar().showMessage(in_app_words(text), timeout_ms)

    def _update_title(self, *_: Any) -> None:
        topo_name = self.document.section_values("topology")["name"]
        where = self.document.path.name if self.document.path else "not saved"
        self.setWindowTitle(f"{topo_name} ({where})[*] — Stormbound")
        self.setWindowModified(self.document.is_modified())

    def _update_status(self) -> None:
        problems = self.document.problems()
        topo = self.document.topology()
        if problems:
            self.status_problems.setText("⚠ " + "; ".join(str(p) for p in problems[:2]))
            self.status_problems.setToolTip("\n".join(str(p) for p in problems))
            return
        missing = unannotated_problems(topo)
        if missing:  # an import's placeholders: no rate check until they are set
            self.status_problems.setText(f"⚠ {len(missing)} value(s) not annotated (amber): "
                                         + ", ".join(p.path for p in missing[:3]) + (" …" if len(missing) > 3 else ""))
            self.status_problems.setToolTip("\n".join(str(p) for p in missing))
            return
        try:
            report = self.document.rates().report(suggest=False)  # the snapshot's one analysis (canvas too)
        except Exception as err:  # keep editing possible whatever the analysis thinks
            self.status_problems.setText(f"rate check failed: {err}")
            return
        counts = {s: sum(1 for b in report.bolts.values() if b.status == s)
                  for s in ("bounded", "no-repeating-growth", "may-grow", "grows")}
        steady = counts["no-repeating-growth"]
        text = (f"{len(topo.spouts)} spouts, {len(topo.bolts)} bolts · rate check: {counts['bounded']} bounded, "
                + (f"{steady} without repeating growth, " if steady else "")
                + f"{counts['may-grow']} may grow, {counts['grows']} grow")
        if self.scene.live_verdicts:  # Live Mode: the verdicts of the measured figures, as on the nodes
            from app.gui.canvas.items import LIVE_WORDS

            shown = [f"{n} {LIVE_WORDS.get(v, v)}" for n, v in self.scene.live_verdicts.items() if v != "ok"]
            text = ("Live: " + (", ".join(shown) if shown else "every bolt keeps up")
                    + f" · the document's rate check: {counts['grows']} grow")
        tips = [b.explanation for b in report.bolts.values()]
        warning = idle_warning(topo)  # what `check` prints on stderr: the same words, in the tooltip
        if warning is not None:
            text += f" · ⚠ max idle time over α/10 of {warning.bolts[0]}"
            tips.insert(0, "⚠ " + warning.message)
        self.status_problems.setText(text)
        self.status_problems.setToolTip("\n".join(tips))

    # ---- editing ----------------------------------------------------------------
    def add_component(self, kind: str) -> str:
        """Add a spout or bolt at the centre of the view (palette double-click, Edit menu)."""
        return self.canvas.add_component(kind)

    def _on_selection_changed(self) -> None:
        comps, subs = self.scene.selected_ids()
        chosen = comps | subs
        self.inspector.show_element(next(iter(chosen)) if len(chosen) == 1 else None)
        if len(chosen) > 1:
            self.show_message(f"{len(comps)} components and {len(subs)} links selected", 4000)

    def delete_selection(self) -> None:
        comps, subs = self.scene.selected_ids()
        command = RemoveElementsCommand(self.document, comps, subs)
        if not command.is_empty():
            self.document.undo_stack.push(command)

    def select_all(self) -> None:
        for node in self.scene.nodes.values():
            node.setSelected(True)

    def copy(self) -> bool:
        comps, _ = self.scene.selected_ids()
        if not comps:
            self.show_message("Select components to copy")
            return False
        fragment = self.document.copy_fragment(comps)
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
            command = PasteCommand(self.document, fragment)
        except (ValueError, FieldError) as err:
            self.show_message(f"Cannot paste: {err}")
            return
        self.document.undo_stack.push(command)
        self.scene.select_ids(command.new_ids)

    def suggest_parallelism(self) -> None:
        """Apply the rate check's smallest bounded parallelism as one undoable step."""
        topo = self.document.topology()
        if self.document.problems() or not topo.bolts:
            self.show_message("Suggest parallelism needs a complete topology (spouts and bolts)")
            return
        if unannotated_problems(topo):
            self.show_message("Suggest parallelism needs every value annotated (the amber ones are not)")
            return
        report = self.document.rates().report()
        suggestion = report.suggested_parallelism
        hopeless = sorted(name for name, value in suggestion.items() if value is None)
        wanted = {name: value for name, value in suggestion.items() if value is not None}
        command = SetParallelismCommand(self.document, wanted, "Suggest parallelism")
        if command.changes:
            self.document.undo_stack.push(command)
            changes = ", ".join(f"{old.name} {old.parallelism}→{new.parallelism}" for old, new in command.changes)
            message = f"Parallelism set: {changes}"
        else:
            message = "Every bolt already has the suggested parallelism"
        if hopeless:
            message += f"; no parallelism bounds {', '.join(hopeless)} ({no_parallelism_reason(report)})"
        self.show_message(message)

    def auto_layout(self) -> None:
        topo = self.document.topology()
        if not topo.components:
            return
        self.document.undo_stack.push(MoveComponentsCommand(self.document, layered_layout(topo), "Auto-layout"))
        self.canvas.fit_all()

    def show_controls(self) -> None:
        self.dialogs.info(self, "Mouse and keyboard", "\n".join([
            "Drag Spout or Bolt from the palette onto the canvas (or double-click it).",
            "Connect: drag from a component's output port (right) onto a bolt.",
            "Select: click, Ctrl-click, or drag a rubber band over empty canvas.",
            "Move: drag nodes (one undo step per drag).  Delete: Del.",
            "Copy / Cut / Paste: Ctrl+C / Ctrl+X / Ctrl+V.  Undo / Redo: Ctrl+Z / Ctrl+Shift+Z.",
            "Zoom: mouse wheel, Ctrl++ / Ctrl+-, fit: Ctrl+0.  Pan: middle button or Space+drag.",
            "Suggest parallelism: Ctrl+Shift+P.  Auto-layout: Ctrl+L.",
        ]))

    def about(self) -> None:
        from app import __version__

        self.dialogs.info(self, "About Stormbound",
                          f"Stormbound {__version__}\nDraw Storm topologies and verify before deployment "
                          "whether any bolt's queue can grow without bound.")

    def arrange_docks(self) -> None:
        """Give the canvas most of the height: bottom panels get about a third of the window."""
        bottom = [d for d in self.findChildren(QDockWidget)
                  if self.dockWidgetArea(d) == Qt.DockWidgetArea.BottomDockWidgetArea and d.isVisible()]
        if bottom:
            self.resizeDocks(bottom, [max(220, int(self.height() * 0.34))] * len(bottom), Qt.Orientation.Vertical)
        self.resizeDocks([self.palette_dock], [96], Qt.Orientation.Vertical)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._docks_arranged:
            self._docks_arranged = True
            QTimer.singleShot(0, self.arrange_docks)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        if self._save_layout:
            self.settings.setValue("window/geometry", self.saveGeometry())
            self.settings.setValue("window/state", self.saveState())
        self.shutdown()
        event.accept()

    def shutdown(self) -> None:
        """A clean exit: stop background work (cancel, then join with a bound) and autosaving, remove
        the lock and snapshot. A worker that outlives the bound stays referenced until it ends
        (app/gui/workers.py), so the window may go away; the application joins it before quitting."""
        self.closed = True
        if self._opening is not None:
            self._opening.join()  # reading a file is bounded (app/core/fileio.py); its result is dropped
        self.verification_panel.shutdown()
        self.runs_panel.shutdown()
        self.diffstream_dialog.shutdown()
        for plugin in self.plugins.values():
            plugin.shutdown()
        self.autosave_timer.stop()
        self.autosave.stop()
        MainWindow._live_sessions.discard(self.autosave.session)
