"""The main window's menus (File, Edit, View, Verify, Runs, Help, in that order) and their named sections
(`MENU_SECTIONS`): the window and its plug-ins add entries to a section by its name and never place one by its
index in a menu (app/gui/plugins.py, `MenuSection`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from app.gui.plugins import MenuSection

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
Shortcut = QKeySequence | QKeySequence.StandardKey | str | None


class WindowMenus:
    """The menus of `window`'s menu bar by title, created on demand, and the sections of MENU_SECTIONS (plus any
    added, such as "File ▸ Import") by name."""

    def __init__(self, window: QMainWindow):
        self.window = window
        self.menus: dict[str, QMenu] = {}
        for title in MENU_ORDER:
            self.menu(title)
        self.sections: dict[str, MenuSection] = {}
        last: dict[str, MenuSection] = {}
        for name, title, separated in MENU_SECTIONS:
            self.sections[name] = last[title] = MenuSection(name, self.menu(title), separated, last.get(title))

    def menu(self, title: str) -> QMenu:
        """The menu `title`, created on demand (File, Edit, View, Verify, Runs, Help keep their order; another
        goes before Help)."""
        key = title.replace("&", "")
        if key not in self.menus:
            bar = self.window.menuBar()
            menu = QMenu(f"&{key}", self.window)
            menu.setObjectName(f"menu_{key.lower()}")
            later = [self.menus[t] for t in MENU_ORDER[MENU_ORDER.index(key) + 1:] if t in self.menus] \
                if key in MENU_ORDER else []
            if later:
                bar.insertMenu(later[0].menuAction(), menu)
            else:
                help_menu = self.menus.get("Help")
                if help_menu is not None and key not in MENU_ORDER:
                    bar.insertMenu(help_menu.menuAction(), menu)
                else:
                    bar.addMenu(menu)
            self.menus[key] = menu
        return self.menus[key]

    def section(self, name: str) -> MenuSection:
        """The menu section `name`."""
        try:
            return self.sections[name]
        except KeyError:
            raise KeyError(f"no menu section {name!r}; the sections: {', '.join(self.sections)}") from None

    def add_submenu(self, section: str, name: str, menu: QMenu) -> QMenu:
        """`menu` at the end of `section`, and a section of its own called `name`."""
        self.section(section).add_menu(menu)
        self.sections[name] = MenuSection(name, menu)
        return menu

    def action(self, section: str, text: str, slot: Callable[..., object], shortcut: Shortcut = None,
               tip: str = "", name: str = "") -> QAction:
        """A new action of the window at the end of `section`, named `name` (default: `action_` and its words)."""
        action = QAction(text, self.window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.setObjectName(name or "action_" + "".join(ch for ch in text.lower() if ch.isalnum() or ch == " ")
                             .strip().replace(" ", "_"))
        action.triggered.connect(slot)
        self.section(section).add_action(action)
        return action
