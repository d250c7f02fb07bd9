"""How a plug-in joins the main window: what it may use of the window (:class:`PluginHost`), what it
declares of itself (:class:`Plugin`: its name and the menu sections it adds to) and the named menu
sections it adds its actions to (:class:`MenuSection`).

The window (app/gui/mainwindow.py) lays its menus out as named sections, in order, each a run of entries
in one menu, set off by a separator when the window says so ("File ▸ Import" is the File menu's Import
submenu; "File ▸ Save", "File ▸ Export", "Runs ▸ Live"...). A plug-in adds to a section by its name and
never by a position in a menu, so the window's own entries and the plug-ins' can change apart. The
plug-ins: app/gui/storm_io.py (Flux and the Storm UI) and app/gui/live.py (Live Mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from app.gui.canvas import CanvasScene, CanvasView
from app.gui.dialogs import Dialogs
from app.gui.document import DocumentModel


class MenuSection:
    """A named run of entries in one menu: its actions stay together, in the order they were added, after the
    sections before it in the menu and before those after it. A separated section has a separator before
    its entries, once it has any (and some entry is above it)."""

    def __init__(self, name: str, menu: QMenu, separated: bool = False, after: MenuSection | None = None):
        self.name = name
        self.menu = menu
        self.separated = separated
        self.actions: list[QAction] = []
        self._separator: QAction | None = None
        self._next: MenuSection | None = None
        if after is not None:
            if after.menu is not menu:
                raise ValueError(f"{name} follows {after.name}, a section of another menu")
            self._next, after._next = after._next, self

    def add_action(self, action: QAction) -> QAction:
        """Add `action` at the end of the section."""
        if self.separated and not self.actions and self._above():
            self._separator = QAction(self.menu)
            self._separator.setSeparator(True)
            self._place(self._separator)
        self._place(action)
        self.actions.append(action)
        if len(self.actions) == 1:
            self._separate_next()
        return action

    def add_menu(self, menu: QMenu) -> QMenu:
        """Add the submenu `menu` at the end of the section."""
        self.add_action(menu.menuAction())
        return menu

    def _separate_next(self) -> None:
        """This section has its first entry: the next section with entries gets its separator, if it has none."""
        section = self._next
        while section is not None and not section.actions:
            section = section._next
        if section is not None and section.separated and section._separator is None:
            section._separator = QAction(section.menu)
            section._separator.setSeparator(True)
            section.menu.insertAction(section.actions[0], section._separator)

    def _first(self) -> QAction | None:
        return self._separator or (self.actions[0] if self.actions else None)

    def _above(self) -> bool:
        """Some entry of the menu is above this section (a separator on top would stand alone)."""
        below: set[int] = set()
        section: MenuSection | None = self
        while section is not None:
            below.update(id(a) for a in ([section._separator] if section._separator else []) + section.actions)
            section = section._next
        return any(id(a) not in below for a in self.menu.actions())

    def _place(self, action: QAction) -> None:
        """Insert `action` before the first entry of the next section that has one, or at the end of the menu."""
        section = self._next
        while section is not None and section._first() is None:
            section = section._next
        before = section._first() if section is not None else None
        if before is None:
            self.menu.addAction(action)
        else:
            self.menu.insertAction(before, action)


class PluginHost(Protocol):
    """What a plug-in may use of the main window: the document and its canvas, the dialogs and settings,
    the status bar, the question about unsaved work, and the menu sections by name."""

    @property
    def document(self) -> DocumentModel: ...
    @property
    def dialogs(self) -> Dialogs: ...
    @property
    def settings(self) -> QSettings: ...
    @property
    def canvas(self) -> CanvasView: ...
    @property
    def scene(self) -> CanvasScene: ...

    def host_widget(self) -> QWidget:
        """The window as a widget: the parent of a plug-in's actions, dialogs and workers."""
        ...

    def show_message(self, text: str, timeout_ms: int = 8000) -> None:
        """A status bar message (timeout 0: until the next one)."""
        ...

    def maybe_save(self) -> bool:
        """Ask about unsaved work before the document is replaced; False: the user cancelled."""
        ...

    def menu_section(self, name: str) -> MenuSection:
        """The menu section `name` (e.g. "File ▸ Import"); KeyError naming the sections when there is none."""
        ...


class Plugin(Protocol):
    """A plug-in of the main window, built with the window as its host: it adds its actions to the menu
    sections it names in `sections`, and `shutdown` waits (bounded) for its background work."""

    @property
    def name(self) -> str:
        """What the window keeps it under (its `plugins`)."""
        ...

    @property
    def sections(self) -> Sequence[str]:
        """The menu sections it adds entries to (MenuSection names)."""
        ...

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Wait for the plug-in's background work, at most `timeout_ms`; True when none runs any more."""
        ...
