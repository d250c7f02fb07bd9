"""What the GUI benches share: a window of their own (private settings and autosave folder, no dialog that
blocks, no recovery offered), a pump of its event loop, and a 20 ms timer that ticks on the GUI thread so that
the longest gap between two ticks says how long the window did not answer (`Ticks`).

Used by bench/gui_open_large.py, bench/gui_live_first_poll.py, bench/live_stop.py and bench/gui_edit_large.py."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
for folder in (HERE.parent, HERE.parent / "tests"):  # after PYTHONPATH: another tree there gives the before figures
    if str(folder) not in sys.path:
        sys.path.append(str(folder))


def bench_window() -> tuple[Any, Any]:
    """(the QApplication, a shown MainWindow with private settings and autosave folder)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp())
    window = MainWindow(settings=QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True), autosave_dir=folder / "autosave", recover=False)
    window.show()
    return app, window


def pump(app: Any, until: Callable[[], bool], limit: float = 600.0) -> float:
    """Run the event loop until `until()` or `limit` seconds; the seconds it ran."""
    from PySide6.QtCore import QEventLoop

    start = time.monotonic()
    while not until() and time.monotonic() - start < limit:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
    return time.monotonic() - start


class Ticks:
    """A 20 ms timer on the GUI thread; each tick's (wall, GUI-thread CPU) time, from `mark` on."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.ticks: list[tuple[float, float]] = []
        self.timer = QTimer()
        self.timer.setInterval(20)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        self.ticks.append((time.monotonic(), time.thread_time()))

    def mark(self) -> float:
        """Start counting from now (a tick of its own); the wall time it started."""
        self.ticks.clear()
        self._tick()
        return self.ticks[0][0]

    def gaps(self, until: float | None = None) -> list[tuple[float, float, float]]:
        """Each gap since `mark` (ending at `until` too, when given): (when it began after the mark, wall s, GUI-thread
        CPU s)."""
        marks = list(self.ticks) + ([(until, time.thread_time())] if until is not None else [])
        start = marks[0][0]
        return [(a[0] - start, b[0] - a[0], b[1] - a[1]) for a, b in zip(marks, marks[1:], strict=False)]

    def report(self, what: str, until: float | None = None, worst: int = 4) -> str:
        """The longest gap (wall and CPU) and the `worst` longest gaps, in two lines."""
        gaps = self.gaps(until)
        longest = sorted(gaps, key=lambda g: -g[1])[:worst]
        return (f"longest gap between 20 ms ticks: {max(g[1] for g in gaps):.2f} s wall; most GUI-thread CPU between "
                f"two ticks: {max(g[2] for g in gaps):.2f} s\nthe longest gaps (start after {what}, wall, GUI CPU): "
                + "; ".join(f"{g[0]:.2f} s: {g[1]:.2f} s, {g[2]:.2f} s CPU" for g in sorted(longest)))

    def stop(self) -> None:
        self.timer.stop()
