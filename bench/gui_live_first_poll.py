"""Live Mode's first poll of a wide topology drawn on an empty canvas: the longest stall of the GUI thread.

    QT_QPA_PLATFORM=offscreen python bench/gui_live_first_poll.py [--bolts 3000] [--profile]

A stand-in Storm UI (tests/storm_ui_live.py, scenario `wide`: one spout, N bolts) is polled by Runs ▸ Live Mode
in a MainWindow with an empty document, so the first poll's topology is laid out and drawn, then coloured by
each poll. A 20 ms QTimer ticks on the GUI thread meanwhile; printed: the time until the canvas holds every
bolt with its link and its live colour, the longest gap between two ticks (wall) and the most GUI-thread CPU
spent between two ticks (steadier than wall on a loaded machine), and the longest gaps with when they began.
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
    parser.add_argument("--profile", action="store_true", help="print the GUI thread's profile")
    parser.add_argument("--screenshot", help="grab the window to this png once drawn and coloured")
    args = parser.parse_args()

    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication
    from storm_ui_live import LiveStormUI

    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp())
    window = MainWindow(settings=QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True), autosave_dir=folder / "autosave", recover=False)
    window.show()

    ticks: list[tuple[float, float]] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append((time.monotonic(), time.thread_time())))
    timer.start()

    def pump(until, limit: float = 600.0) -> None:
        start = time.monotonic()
        while not until() and time.monotonic() - start < limit:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)

    def drawn_and_coloured() -> bool:
        scene = window.scene
        return (len(scene.nodes) == args.bolts + 1 and len(scene.edges) == args.bolts
                and all(node.live is not None for node in scene.nodes.values() if node.component.kind == "bolt"))

    pump(lambda: False, limit=0.5)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with LiveStormUI("wide", bolts=args.bolts, lifetime=3600) as ui:
        wall0 = time.monotonic()
        ticks.append((wall0, time.thread_time()))
        worker = window.live.start({"url": ui.url, "topology": "wordcount-live", "every": 1.0})
        assert worker is not None
        pump(drawn_and_coloured)
        done, ok = time.monotonic() - wall0, drawn_and_coloured()
        pump(lambda: False, limit=1.0)  # what the drawing queued runs too
        if profiler is not None:
            import pstats

            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        if args.screenshot:
            window.grab().save(args.screenshot)
        window.live.stop()
    timer.stop()
    after = [t for t in ticks if t[0] >= wall0]
    gaps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(after, after[1:], strict=False)]
    print(f"{args.bolts} bolts: drawn and coloured {ok} after {done:.2f} s; "
          f"status '{window.status_problems.text()[:80]}'")
    print(f"longest gap between 20 ms ticks: {max(g[0] for g in gaps):.2f} s wall; "
          f"most GUI-thread CPU between two ticks: {max(g[1] for g in gaps):.2f} s")
    worst = sorted(range(len(gaps)), key=lambda i: -gaps[i][0])[:5]
    print("the longest gaps (start after Live Mode started, wall, GUI CPU): " + "; ".join(
        f"{after[i][0] - wall0:.2f} s: {gaps[i][0]:.2f} s, {gaps[i][1]:.2f} s CPU" for i in sorted(worst)))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
