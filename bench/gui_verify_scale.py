"""The app verifying a large topology on a real X display: how long the GUI thread stalls while the search runs
in its worker, with screenshots before, during and after.

Usage: DISPLAY=:NN .venv/bin/python bench/gui_verify_scale.py [--size 500] [--seed 0] [--out DIR]

Opens the main window on tests/layered_topologies.py's topology (every bolt checked), lets it open and paint
(8 s, not measured), then presses Verify (the panel's `start`) and measures, with a 20 ms timer on the GUI thread,
every gap between two ticks until the verification has finished: the longest gap is the longest the window was
unresponsive. Screenshots (ImageMagick `import -window root`, from a thread) go to DIR (default: the current
folder): before.png, during.png (1 s in), after.png. Prints the figures; not run by the tests.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from layered_topologies import layered_topology
    from PySide6.QtCore import QEventLoop, QTimer

    from app.cli.gui import _application, open_windows
    from app.gui.mainwindow import MainWindow

    topo = layered_topology(args.size, args.seed, emission="dvert", flow_denominator=8)
    path = Path(tempfile.mkdtemp()) / f"layered-{args.size}.storm.json"
    path.write_text(topo.model_dump_json(), encoding="utf-8")
    out = Path(args.out)
    app = _application()
    window = open_windows(str(path), MainWindow)[-1]
    window.resize(1600, 1000)
    window.show()
    panel = window.verification_panel
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    def shot(name: str) -> None:
        threading.Thread(target=subprocess.run, args=(["import", "-window", "root", str(out / f"{name}.png")],),
                         kwargs={"check": False}).start()

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(20)
    settle = QEventLoop()
    QTimer.singleShot(8000, settle.quit)
    settle.exec()
    gaps.clear()
    shot("before")
    loop = QEventLoop()
    panel.all_finished.connect(loop.quit)
    QTimer.singleShot(1000, lambda: shot("during"))
    started, cpu = time.monotonic(), time.process_time()
    panel.start()
    loop.exec()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu
    end = QEventLoop()
    QTimer.singleShot(800, end.quit)
    end.exec()
    shot("after")
    time.sleep(2)
    print(f"{args.size} components, seed {args.seed}: verification {wall:.1f} s wall, {cpu:.1f} CPU s (both threads); "
          f"GUI thread: longest gap {max(gaps) * 1000:.0f} ms, {sum(g > 0.2 for g in gaps)} gaps over 200 ms, "
          f"{len(gaps)} ticks")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
