"""The main window: canvas in the middle, panels docked around it, menus. It builds every panel itself
and wires their signals: the one place the GUI is composed. Its files (open, save, recent files,
autosave and crash recovery) are the DocumentFiles mixin of app/gui/window_files.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMenu, QToolBar, QUndoView, QWidget

from app.gui.app_words import in_app_words
from app.gui.autosave import AutosaveSession, Recoverable, default_autosave_dir
from app.gui.canvas import CanvasScene, CanvasView
from app.gui.dialogs import Dialogs
from app.gui.diffstream_dialog import DiffStreamDialog
from app.gui.document import DocumentModel
from app.gui.editing import Editing
from app.gui.live import LiveMode
from app.gui.panels import runs, verification
from app.gui.panels.inspector import Inspector
from app.gui.panels.palette import Palette
from app.gui.panels.runs import RunsPanel
from app.gui.panels.verification import VerificationPanel
from app.gui.plugins import MenuSection, Plugin
from app.gui.resources import icon, style_sheet
from app.gui.status_summary import StatusSummary
from app.gui.storm_io import StormIO
from app.gui.window_files import DocumentFiles
from app.gui.window_menus import WindowMenus
from app.gui.workers import Worker

P = TypeVar("P", bound=Plugin)

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
        self.menus = WindowMenus(self)
        self.docks: dict[str, QDockWidget] = {}  # by title
        self._docks_arranged = False
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

        self.status_problems = StatusSummary(self.document, self.scene)
        self.statusBar().addPermanentWidget(self.status_problems)
        self.scene.status_message.connect(self.show_message)
        self.scene.selectionChanged.connect(self._on_selection_changed)
        self.canvas.files_dropped.connect(self._on_files_dropped)
        self.document.modified_changed.connect(self._update_title)
        self.document.path_changed.connect(self._update_title)
        self.document.settings_changed.connect(self._update_title)
        self.document.document_replaced.connect(self._on_document_replaced)

        self._update_title()

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
        return self.menus.menu(title)

    def menu_section(self, name: str) -> MenuSection:
        """The menu section `name` (MENU_SECTIONS, and "File ▸ Import"): where the window and its plug-ins add
        their entries."""
        return self.menus.section(name)

    def host_widget(self) -> QWidget:
        """The window as the parent of the plug-ins' actions, dialogs and workers (app/gui/plugins.py)."""
        return self

    def install_plugin(self, plugin: P) -> P:
        """Keep `plugin` (built with this window as its host) under its name; the window shuts it down."""
        if plugin.name in self.plugins:
            raise ValueError(f"a plug-in named {plugin.name!r} is installed already")
        unknown = [s for s in plugin.sections if s not in self.menus.sections]
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
        for action in runs.create_actions(panel, self):
            menu.add_action(action)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(panel.shutdown)
            if not MainWindow._quit_hooked:  # every worker of every window joins before the app ends
                app.aboutToQuit.connect(_stop_workers)
                MainWindow._quit_hooked = True

        self.diffstream_dialog = DiffStreamDialog(self)
        self.action_compare_runs = menu.add_action(self.diffstream_dialog.create_action(self))

    # ---- actions -------------------------------------------------------------------
    def _build_actions(self) -> None:
        """File's own actions (the Import submenu's sections among them), Edit's and View's (`Editing`), Help's,
        and the toolbar."""
        keys, menus = QKeySequence.StandardKey, self.menus
        self.action_new = menus.action("File ▸ Open", "&New", self.new_document, keys.New)
        self.action_open = menus.action("File ▸ Open", "&Open…", self.open_dialog, keys.Open,
                                        "Open a .storm.json topology or a D-VerT JSON file")
        self.recent_menu = self.menu_section("File ▸ Open").add_menu(QMenu("Open &Recent", self.menu("File")))
        self.recent_menu.setObjectName("menu_recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.import_menu = menus.add_submenu("File ▸ Open", "File ▸ Import", QMenu("&Import", self))
        self.import_menu.setObjectName("menu_import")
        self.action_import = menus.action("File ▸ Import", "&D-VerT JSON…", self.import_dialog, None,
                                          "Import a D-VerT configuration (laid out automatically)",
                                          name="action_import_dvert_json")
        self.action_save = menus.action("File ▸ Save", "&Save", self.save, keys.Save)
        self.action_save_as = menus.action("File ▸ Save", "Save &As…", self.save_as_dialog, keys.SaveAs)
        self.action_quit = menus.action("File ▸ Quit", "&Quit", self.close, keys.Quit)
        self.editing = Editing(self, menus)
        menus.action("Help", "&Mouse and Keyboard", self.editing.show_controls)
        menus.action("Help", "&About Stormbound", self.about)
        for group in self.editing.toolbar_groups():
            for action in group:
                self.toolbar.addAction(action)
            self.toolbar.addSeparator()

    # ---- messages ----------------------------------------------------------------
    def show_message(self, text: str, timeout_ms: int = 8000) -> None:
        self.statusBar().showMessage(in_app_words(text), timeout_ms)

    def _update_title(self, *_: Any) -> None:
        topo_name = self.document.section_values("topology")["name"]
        where = self.document.path.name if self.document.path else "not saved"
        self.setWindowTitle(f"{topo_name} ({where})[*] — Stormbound")
        self.setWindowModified(self.document.is_modified())

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
        self.document.shutdown()
        self.verification_panel.shutdown()
        self.runs_panel.shutdown()
        self.diffstream_dialog.shutdown()
        for plugin in self.plugins.values():
            plugin.shutdown()
        self.autosave_timer.stop()
        self.autosave.stop()
        MainWindow._live_sessions.discard(self.autosave.session)
