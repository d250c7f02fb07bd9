"""The menus a user sees, and the named menu sections the window and its plug-ins add to (app/gui/plugins.py)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

#: every menu's entries in order, as the window and its plug-ins leave them ("---" a separator, "▸" a submenu):
#: recorded from the window as it was before the menu sections, which must not change what a user sees
MENUS: list[tuple[str, list[str]]] = [
    ('&File', ['&New', '&Open…', 'Open &Recent ▸', '&Import ▸', '---', '&Save', 'Save &As…',
               'Save Parallelism to &Flux File…', '---', 'Export &verified configuration…', '---', '&Quit']),
    ('&File ▸ &Import', ['&D-VerT JSON…', '&Flux…', 'From &Storm UI…', '&Timings or Storm UI Tables…']),
    ('&Edit', ['&Undo', '&Redo', '---', 'Cu&t', '&Copy', '&Paste', '&Delete', 'Select &All', '---', 'Add &Spout',
               'Add &Bolt', '---', 'Suggest &Parallelism']),
    ('&View', ['Zoom &In', 'Zoom &Out', '&Fit to Window', '&Auto-layout', '---', 'Palette panel', 'Inspector panel',
               'History panel', 'Verification panel', 'Trace panel', 'Runs panel']),
    ('&Verify', ['&Verify all properties', '&Cancel verification', 'Show &trace of selected property', '---',
                 '&Search even when the rate check proves bounded']),
    ('&Runs', ['Attach / detach Spark', 'Run current topology', 'Cancel run', 'Open event log...',
               'Check reliability', 'Apply measured values', 'Compare runs...', '---', '&Live Mode (Storm UI)…',
               'Stop Live &Mode']),
    ('&Help', ['&Mouse and Keyboard', '&About Stormbound']),
]


def entries(menu: QMenu) -> list[str]:
    return ["---" if a.isSeparator() else a.text() + (" ▸" if a.menu() is not None else "") for a in menu.actions()]


def menu_tree(window) -> list[tuple[str, list[str]]]:
    """Every menu of the bar, and each submenu with entries after its menu (Open Recent fills when shown)."""
    found: list[tuple[str, list[str]]] = []

    def walk(title: str, menu: QMenu) -> None:
        found.append((title, entries(menu)))
        for action in menu.actions():
            sub = action.menu()
            if sub is not None and sub.actions():
                walk(f"{title} ▸ {action.text()}", sub)

    for action in window.menuBar().actions():
        walk(action.text(), action.menu())
    return found


def test_the_menus_keep_their_entries_in_order(make_window) -> None:
    window = make_window()
    assert menu_tree(window) == MENUS
    assert set(window.plugins) == {"storm_io", "live"}
    assert window.plugins["storm_io"] is window.storm_io and window.plugins["live"] is window.live


def test_a_plugin_adds_to_a_section_by_name(make_window) -> None:
    window = make_window()
    added = []
    for section in ("File ▸ Import", "File ▸ Open", "File ▸ Export", "Runs", "Help"):
        action = QAction(f"new in {section}", window)
        added.append(window.menu_section(section).add_action(action))
    file_entries = entries(window.menu("File"))
    # after the section's own entries, before the next section's separator
    assert file_entries[file_entries.index("&Import ▸") + 1] == "new in File ▸ Open"
    assert file_entries[file_entries.index("Export &verified configuration…") + 1] == "new in File ▸ Export"
    assert file_entries[-2:] == ["---", "&Quit"]
    assert entries(window.import_menu)[-1] == "new in File ▸ Import"
    runs = entries(window.menu("Runs"))
    assert runs[runs.index("Compare runs...") + 1] == "new in Runs"
    assert runs[-3:] == ["---", "&Live Mode (Storm UI)…", "Stop Live &Mode"]
    assert entries(window.menu("Help"))[-1] == "new in Help"
    with pytest.raises(KeyError, match="no menu section 'File ▸ Print'"):
        window.menu_section("File ▸ Print")


def test_a_separated_section_gets_its_separator_with_its_first_entry() -> None:
    from app.gui.plugins import MenuSection

    menu = QMenu("Test")
    first = MenuSection("first", menu)
    second = MenuSection("second", menu, separated=True, after=first)
    third = MenuSection("third", menu, separated=True, after=second)
    third.add_action(QAction("c", menu))  # nothing above it yet: no separator on top
    assert entries(menu) == ["c"]
    first.add_action(QAction("a", menu))  # now something is above the third section
    assert entries(menu) == ["a", "---", "c"]
    second.add_action(QAction("b", menu))
    assert entries(menu) == ["a", "---", "b", "---", "c"]
    with pytest.raises(ValueError, match="another menu"):
        MenuSection("elsewhere", QMenu("Other"), after=first)
