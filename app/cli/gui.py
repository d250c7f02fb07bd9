"""`stormbound gui [FILE] [--screenshot OUT.png] [--verify]`: the desktop app, or a PNG of it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.cli.common import UsageError, examples
from app.cli.outputs import add_force_option, check_output_file, write_output_file
from app.core.topology import one_line

SCREENSHOT_SIZE = (1440, 900)
VERIFY_LIMIT_S = 900


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gui", help="open the desktop app (optionally on FILE)",
                       epilog=examples("stormbound gui models/simple-DIA-cfg-1.storm.json",
                                       "stormbound gui models/simple-DIA-cfg-1.storm.json --screenshot shot.png "
                                       "--verify"))
    p.add_argument("file", nargs="?", help="a .storm.json topology or a D-VerT JSON file")
    p.add_argument("--screenshot", metavar="OUT.png",
                   help="render the window offscreen to OUT.png and exit (no dialogs, no autosave)")
    p.add_argument("--verify", action="store_true", help=f"with --screenshot: run verification to completion first "
                                                             f"(at most {VERIFY_LIMIT_S} s)")
    add_force_option(p)
    p.set_defaults(func=cmd_gui, file_args=("file",))


def cmd_gui(args: argparse.Namespace) -> int:
    if args.verify and not args.screenshot:
        raise UsageError("--verify needs --screenshot (in the app, use the Verify menu)")
    if args.screenshot:
        if not args.screenshot.lower().endswith(".png"):
            raise UsageError(f"--screenshot: '{args.screenshot}' must end in .png")
        check_output_file(args, "--screenshot", args.screenshot)
        return screenshot(args.file, Path(args.screenshot), args.verify, args)
    return run_app(args.file)


OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)


def _quiet_offscreen(mode: object, context: object, message: str) -> None:
    """Qt's log minus the offscreen plugin's harmless warning, so screenshot mode prints one line."""
    if message not in OFFSCREEN_NOISE:
        print(message, file=sys.stderr)


def _application() -> Any:  # the QApplication (Qt is imported only here)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Stormbound")
    app.setOrganizationName("Stormbound")
    return app


def _has_display() -> bool:
    """False on a Linux machine without X11/Wayland, where Qt would abort instead of raising."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_app(file: str | None) -> int:
    """Open the window (and FILE) and run the event loop until it closes."""
    if not _has_display():
        raise UsageError("no display to open the app on (DISPLAY is not set); "
                         "use 'stormbound check FILE', or 'stormbound gui FILE --screenshot OUT.png'")
    app = _application()
    from app.gui.mainwindow import MainWindow

    windows = open_windows(file, MainWindow)  # noqa: F841 - kept alive until the event loop ends
    return int(app.exec())


def open_windows(file: str | None, make: Callable[..., Any]) -> list[Any]:
    """The first window (it offers work of a crashed session), and FILE: in that window, or, when
    restored work is showing there (unsaved, marked modified), in a window of its own beside it, so
    the restored work is never replaced or dropped without the user deciding."""
    from PySide6.QtCore import QPoint

    window = make()
    window.show()
    windows = [window]
    if file and window.restored:
        other = make(recover=False, restore_layout=False)
        other.move(window.pos() + QPoint(40, 40))
        other.show()
        other.open_path(file, ask=False)
        windows.append(other)
    elif file:
        window.open_path(file)
    return windows


def screenshot(file: str | None, out: Path, verify: bool, args: argparse.Namespace | None = None) -> int:
    """Render the window offscreen (optionally after verification) to a PNG; bad input exits 2."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["STORMBOUND_NO_DIALOGS"] = "1"
    from PySide6.QtCore import QEventLoop, QSettings, QTimer, qInstallMessageHandler

    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        qInstallMessageHandler(_quiet_offscreen)
    app = _application()

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    settings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "Stormbound", "screenshot")
    window = MainWindow(settings=settings, dialogs=Dialogs(headless=True), autosave=False, recover=False,
                        restore_layout=False)
    try:
        window.resize(*SCREENSHOT_SIZE)
        if file:
            # read it first as the other commands do: bad input is one line (exit 2, or a JSON error
            # document), a reader defect an internal error (exit 3), and nothing is printed twice
            window.load_file(Path(file))
            if not window.open_path(file, ask=False):
                shown = window.dialogs.shown[-1][2] if window.dialogs.shown else f"{file}: cannot open"
                raise UsageError(shown.splitlines()[0])
        window.show()
        app.processEvents()
        window.arrange_docks()
        app.processEvents()
        window.canvas.fit_all()
        if verify:
            panel = window.verification_panel
            loop = QEventLoop()
            finished: list[bool] = []
            panel.all_finished.connect(lambda: finished.append(True))
            panel.all_finished.connect(loop.quit)
            QTimer.singleShot(VERIFY_LIMIT_S * 1000, loop.quit)
            panel.start()
            if not finished:  # it may finish at once (nothing to search, or an early failure)
                loop.exec()
        for _ in range(3):
            app.processEvents()
        image = window.grab()
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, "PNG"):
            raise UsageError(f"{out}: cannot encode the PNG")
        write_output_file(args or argparse.Namespace(force=True), "--screenshot", str(out), bytes(data.data()))
        print(f"wrote {one_line(str(out))} ({image.width()}x{image.height()})")
        return 0
    finally:
        window.shutdown()
        window.deleteLater()
