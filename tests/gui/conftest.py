"""GUI test fixtures: no modal dialogs, autosaves in a temporary folder, windows closed cleanly,
and no background worker outliving its test."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _no_dialogs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every GUI test runs without modal dialogs and never touches the user's app data."""
    monkeypatch.setenv("STORMBOUND_NO_DIALOGS", "1")
    monkeypatch.setenv("STORMBOUND_AUTOSAVE_DIR", str(tmp_path / "autosave"))


GUI_TEST_TIMEOUT_S = 300  # a GUI test without its own timeout marker fails after this, never hangs the suite


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gui/" in item.nodeid.replace("\\", "/") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(GUI_TEST_TIMEOUT_S))


WORKER_JOIN_S = 60  # generous: the machine may be busy; a worker still running after it is a bug


@pytest.fixture(autouse=True)
def _workers_joined() -> Any:
    """After each test (and after its widgets are closed), cancel and join every background worker.

    A QThread destroyed while it runs aborts the process (often a later test's, at a random point);
    this makes each test leave none behind, and names the test that did.
    """
    yield
    from PySide6.QtWidgets import QApplication

    from app.gui.workers import Worker

    still = Worker.stop_all(WORKER_JOIN_S * 1000)
    app = QApplication.instance()
    if app is not None:
        app.processEvents()  # deliver the joined workers' last queued signals within this test
    # free this test's reference cycles (widgets, canvases, results) now, in this thread, with no worker running,
    # so a test's garbage is collected within it; the app's objects must survive a collection in any order
    # (docs/gui.md, "Who frees what")
    gc.collect()
    if still:
        pytest.fail(f"{len(still)} background worker(s) still running {WORKER_JOIN_S} s after the test: "
                    + ", ".join(f"{type(w).__name__} of {w.owner_name or 'no owner'}" for w in still))


@pytest.fixture
def make_window(qtbot: Any, tmp_path: Path) -> Callable[..., Any]:
    """Build MainWindows with private settings and autosave folder; they are shut down afterwards."""
    from PySide6.QtCore import QSettings

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    windows: list[MainWindow] = []

    def make(**kwargs: Any) -> MainWindow:
        kwargs.setdefault("settings", QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        kwargs.setdefault("dialogs", Dialogs(headless=True, answers={"save_changes": "discard"}))
        kwargs.setdefault("autosave_dir", tmp_path / "autosave")
        window = MainWindow(**kwargs)
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.dialogs.answers["save_changes"] = "discard"
        window.shutdown()


@pytest.fixture(autouse=True, scope="session")
def _clear_clipboard_at_exit() -> Any:
    """Empty the clipboard before the QApplication goes away.

    Mime data left on the offscreen platform's clipboard is destroyed after the
    QApplication at interpreter exit, which crashes the process (exit 139).
    """
    yield
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        app.clipboard().clear()
