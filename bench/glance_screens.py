"""The app at a glance on a real display: open a topology, press Verify, time the verdicts, screenshot.

    DISPLAY=:74 QT_QPA_PLATFORM=xcb python bench/glance_screens.py FILE.storm.json OUT_PREFIX

Opens FILE in a 1600×1000 main window, triggers Verify (F5's action) and prints when the first bolt verdicts
arrive (the rate check's) and when the run ends; then selects the first growing bolt on the canvas (its
explanation in the Inspector), raises the Trace panel and screenshots the whole screen (ImageMagick's
`import -window root`) to OUT_PREFIX-window.png; prints the growing plot's height and whether any two plot
titles overlap. Settings, autosaves and dialogs are private to the run. Not run by the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QSettings  # noqa: E402 (after the path fix above)
from PySide6.QtWidgets import QApplication  # noqa: E402


def pump(seconds: float = 0.0) -> None:
    end = time.monotonic() + seconds
    while True:
        QApplication.processEvents()
        if time.monotonic() >= end:
            return
        time.sleep(0.01)


def main() -> int:
    file, prefix = sys.argv[1], sys.argv[2]
    home = tempfile.mkdtemp(prefix="glance-")
    os.environ["HOME"] = home
    os.environ["STORMBOUND_AUTOSAVE_DIR"] = home
    qt = QApplication(sys.argv[:1])  # noqa: F841 - kept alive until the end
    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    settings = QSettings(str(Path(home) / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, dialogs=Dialogs(headless=True), autosave=False, recover=False,
                        restore_layout=False)
    window.resize(1600, 1000)
    window.move(0, 0)
    window.show()
    pump(1.0)
    window.open_path(file, ask=False)
    pump(float(os.environ.get("GLANCE_WAIT_S", "3")))  # a user looks at the document before pressing F5
    panel = window.verification_panel
    state = panel.states[0]
    started = time.monotonic()
    panel.action_verify.trigger()
    first = None
    while panel.is_running() or first is None:
        pump(0.005)
        if first is None and any(state.bolt_verdict(n) is not None for n in state.spec.bolts):
            first = time.monotonic() - started
            print(f"first verdicts after {first * 1000:.0f} ms: {panel.headline()}")
        if time.monotonic() - started > 600:
            print("verification still running after 600 s")
            break
    print(f"finished after {time.monotonic() - started:.2f} s: {panel.headline()}")
    result = panel.states[0].result
    growing = [n for n, v in (result.bolts.items() if result else []) if v.verdict == "counterexample"]
    topo = window.document.topology()
    if growing:
        window.scene.select_ids({topo.bolt_by_name(growing[0]).id})
    panel.trace_dock.raise_()
    if os.environ.get("GLANCE_TRACE_PX"):  # a taller bottom area, as a user drags it, to see the context plots
        from PySide6.QtCore import Qt

        window.resizeDocks([panel.trace_dock], [int(os.environ["GLANCE_TRACE_PX"])], Qt.Orientation.Vertical)
    pump(2.0)
    view = panel.trace_view
    plots = view.drawn.plots
    if plots and growing:
        heights = {n: round(p.sceneBoundingRect().height()) for n, p in plots.items()}
        print("plot heights:", heights)
        titles = [p.titleLabel.sceneBoundingRect() for p in plots.values()]
        overlaps = sum(1 for i, a in enumerate(titles) for b in titles[i + 1:] if a.intersects(b))
        print(f"title overlaps: {overlaps}")
    print(f"window {window.width()}x{window.height()}, minimum {window.minimumSizeHint().width()}x"
          f"{window.minimumSizeHint().height()}; trace dock {panel.trace_dock.width()}x{panel.trace_dock.height()}")
    print("inspector explanation:", window.inspector.explanation.text.text()[:300].replace("\n", " | "))
    if os.environ.get("GLANCE_NO_WHY"):  # compare: the Inspector without its Why box
        window.inspector.explanation.hide()
        pump(1.0)
    out = f"{prefix}-window.png"
    subprocess.run(["import", "-window", "root", out], check=True)
    print(f"wrote {out}")
    window.shutdown() if hasattr(window, "shutdown") else None
    window.close()
    pump(0.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
