"""Live Mode's Stop against a Storm UI of many bolts: how long from Stop to Live Mode stopped, as figures.

    QT_QPA_PLATFORM=offscreen python bench/live_stop.py [--bolts 3000] [--stops 3]

A stand-in Storm UI (tests/storm_ui_live.py, scenario `wide`: one spout, N bolts, one poll = N + 2 requests)
is polled by Runs ▸ Live Mode in a MainWindow; Stop is pressed at a few moments inside polls. Printed per stop:
the seconds from Stop until the Live Mode action is enabled again (the user can start it anew) and until the
worker thread has ended; and how long one poll took.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bolts", type=int, default=3000)
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()

    from PySide6.QtCore import QEventLoop, QSettings
    from PySide6.QtWidgets import QApplication
    from storm_ui_live import LiveStormUI

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp())
    window = MainWindow(settings=QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True), autosave_dir=folder / "autosave", recover=False)
    window.show()

    def pump(until, limit: float = 600.0) -> float:
        start = time.monotonic()
        while not until() and time.monotonic() - start < limit:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
        return time.monotonic() - start

    with LiveStormUI("wide", bolts=args.bolts, lifetime=3600) as ui:
        for k in range(args.stops):
            live = window.live
            worker = live.start({"url": ui.url, "topology": "wordcount-live", "every": 0.05})
            assert worker is not None
            polls: list[float] = []
            worker.progress.connect(lambda _line, polls=polls: polls.append(time.monotonic()))
            started = time.monotonic()
            pump(lambda polls=polls: len(polls) >= 2)
            first = polls[0] - started if polls else float("nan")
            per_poll = polls[1] - polls[0] if len(polls) > 1 else float("nan")
            time.sleep(0)
            pump(lambda: False, limit=per_poll * (0.2 + 0.3 * k))  # Stop lands inside a poll, at a few places
            running = worker.isRunning()
            live.action_stop.trigger()
            usable = pump(lambda live=live: live.action_start.isEnabled())
            ended = pump(lambda worker=worker: worker.isFinished()) + usable
            print(f"stop {k + 1}: {args.bolts} bolts; first poll {first:.1f} s, a poll {per_poll:.1f} s; "
                  f"Stop → Live Mode stopped (start enabled) {usable:.2f} s, → worker ended {ended:.2f} s; "
                  f"(worker running at Stop: {running}; messages: {window.dialogs.shown[-1:]})")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
