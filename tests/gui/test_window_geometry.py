"""The window's size and the canvas fit, offscreen: fitted again on resize until the user zooms or
pans, a default size that fits the screen, the geometry remembered in (private) settings, and an
inspector at least as wide as its fields. tests/gui/test_real_display.py checks the same on a real X server.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect, QRectF, QSettings
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit

from app.gui.dialogs import Dialogs
from app.gui.mainwindow import MainWindow


def nodes_width_fraction(window: MainWindow) -> float:
    rect = QRectF()
    for node in window.scene.nodes.values():
        rect = rect.united(node.sceneBoundingRect())
    shown = window.canvas.mapFromScene(rect).boundingRect()
    return shown.width() / window.canvas.viewport().width()


def settle(qtbot, window: MainWindow) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(50)


def test_fit_follows_the_window_size_until_the_user_zooms(qtbot, make_window, models_dir: Path) -> None:
    window = make_window()
    window.resize(window.minimumSizeHint().width() + 50, 700)
    settle(qtbot, window)
    assert window.open_path(models_dir / "simple-DIA-cfg-1.storm.json", ask=False)
    window.resize(window.width() + 600, 900)  # as when the window reaches its final size after opening
    qtbot.waitUntil(lambda: nodes_width_fraction(window) > 0.4, timeout=60_000)
    assert window.canvas.auto_fit
    scale = window.canvas.transform().m11()
    window.canvas.zoom(1.15)  # the user's zoom ends the automatic fit
    zoomed = window.canvas.transform().m11()
    assert zoomed > scale and not window.canvas.auto_fit
    window.resize(window.width() - 500, 800)
    settle(qtbot, window)
    assert window.canvas.transform().m11() == zoomed
    window.editing.action_fit.trigger()  # Ctrl+0 fits again and resumes following the size
    assert window.canvas.auto_fit


def test_scrolling_by_hand_ends_the_automatic_fit(qtbot, make_window, models_dir: Path) -> None:
    window = make_window()
    assert window.open_path(models_dir / "simple-DIA-cfg-1.storm.json", ask=False)
    settle(qtbot, window)
    assert window.canvas.auto_fit
    window.canvas.horizontalScrollBar().triggerAction(window.canvas.horizontalScrollBar().SliderAction.SliderPageStepAdd)
    assert not window.canvas.auto_fit


def test_default_size_fits_the_screen_and_is_centred(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, dialogs=Dialogs(headless=True), autosave=False, recover=False)
    qtbot.addWidget(window)
    window.place_on(QRect(100, 50, 1600, 1000))  # the offscreen platform has no real screen: give one
    least = window.minimumSizeHint()
    assert not window.tabifiedDockWidgets(window.docks["Verification"])  # room enough: side by side
    assert least.width() <= window.width() <= 1600 and least.height() <= window.height() <= 1000
    assert abs(window.geometry().center().x() - 900) <= 2 and abs(window.geometry().center().y() - 550) <= 2
    window.shutdown()


def test_geometry_is_remembered_in_the_given_settings(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "remembered.ini"
    first = MainWindow(settings=QSettings(str(path), QSettings.Format.IniFormat), dialogs=Dialogs(headless=True),
                       autosave=False, recover=False)
    qtbot.addWidget(first)
    first.show()
    default_height = first.height()
    first.resize(first.width(), first.minimumSizeHint().height() + 40)  # within the offscreen 800x600 screen
    settle(qtbot, first)
    size = first.size()
    first.close()
    first.settings.sync()
    assert path.is_file() and b"geometry" in path.read_bytes()
    second = MainWindow(settings=QSettings(str(path), QSettings.Format.IniFormat), dialogs=Dialogs(headless=True),
                        autosave=False, recover=False)
    qtbot.addWidget(second)
    # the offscreen screen (800x600) is narrower than the docks' minimum width, which Qt enforces on
    # restore; the height shows that the remembered geometry, not the default, was applied
    assert second.height() == size.height() != default_height
    second.shutdown()


def test_inspector_is_as_wide_as_its_fields(qtbot, make_window, models_dir: Path) -> None:
    window = make_window()
    assert window.open_path(models_dir / "simple-DIA-cfg-1.storm.json", ask=False)
    for ident in [None, *window.scene.nodes, *(s.id for s in window.document.topology().subscriptions)]:
        window.inspector.show_element(ident)
        settle(qtbot, window)
        viewport = window.inspector.viewport().rect()
        for field in window.inspector.body.findChildren(QLineEdit) + window.inspector.body.findChildren(QComboBox):
            if not field.isVisible():
                continue
            left = field.mapTo(window.inspector.viewport(), field.rect().topLeft()).x()
            assert left >= 0 and left + field.width() <= viewport.width(), \
                f"{field.objectName()} spans {left}..{left + field.width()} of {viewport.width()} ({ident})"
            assert field.width() >= field.fontMetrics().horizontalAdvance("0" * 6), field.objectName()


def test_a_narrow_screen_gets_the_bottom_panels_as_tabs(qtbot, tmp_path: Path) -> None:
    window = MainWindow(settings=QSettings(str(tmp_path / "narrow.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True), autosave=False, recover=False)
    qtbot.addWidget(window)
    verification = window.docks["Verification"]
    assert window.minimumSizeHint().width() > 1366  # side by side, the panels need more than a laptop screen
    window.place_on(QRect(0, 0, 1366, 740))
    assert {d.windowTitle() for d in window.tabifiedDockWidgets(verification)} == {"Trace", "Runs"}
    assert window.minimumSizeHint().width() <= window.width() <= 1366
    window.shutdown()
