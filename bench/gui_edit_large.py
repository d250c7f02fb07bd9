"""How long an edit of a large document holds the GUI thread (bench/RESULTS.md, "Edits of a large document
analysed in a worker").

Opens a document in the window (offscreen unless DISPLAY is set), waits until it is drawn and analysed, then
sets one bolt's α (one undoable edit, as the Inspector does) and reports: the CPU seconds the GUI thread spent in
the edit itself (the push of the command, the views' refresh included), the longest gap between two ticks of a
20 ms timer from the edit until its analysis is shown and the canvas repainted with it, and that wall time.
Documents: `layered` (tests/layered_topologies.py) and `cycle` (bench/rate_cycles.py's chain whose last bolt
feeds the first, σ = 1: the rate check's slowest case). Run it with another tree on PYTHONPATH for the before
figures (a tree whose edits are analysed on the GUI thread: its edit's own CPU time is then the analysis).

    .venv/bin/python bench/gui_edit_large.py [--kind layered|cycle] [--size 3000] [--edits 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))
sys.path.append(str(HERE.parent / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("layered", "cycle"), default="layered")
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()

    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.layout import with_layout
    from app.gui.commands import SetComponentFieldsCommand
    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    if args.kind == "layered":
        from layered_topologies import layered_topology
        topo = layered_topology(args.size, 0)
    else:
        from rate_cycles import chain
        topo = chain(args.size, True, 1.0)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp())
    window = MainWindow(settings=QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat),
                        dialogs=Dialogs(headless=True), autosave_dir=folder / "autosave", recover=False)
    window.show()
    document = window.document

    def analysed() -> bool:  # a tree without SnapshotAnalyser analyses in the edit itself
        return not hasattr(document, "analysis") or document.analysis() is not None

    def spin(done: object) -> None:
        while not done():  # type: ignore[operator]
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)

    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    document.replace(with_layout(topo))  # laid out as File ▸ Open lays out a file without positions
    spin(lambda: analysed() and not window.scene.drawing())
    window.canvas.fit_all()
    print(f"{args.kind}, {len(topo.components)} components, load {os.getloadavg()[0]:.1f}")
    bolt = document.topology().bolts[len(topo.bolts) // 2]
    for step in range(1, args.edits + 1):
        spin(lambda: True)
        ticks.clear()
        started, cpu = time.monotonic(), time.thread_time()
        document.undo_stack.push(SetComponentFieldsCommand(document, bolt.id, {"alpha": bolt.alpha * (1 + step)},
                                                           merge=False))
        edit_cpu = time.thread_time() - cpu
        spin(analysed)
        window.canvas.viewport().repaint()  # the canvas shown with the edit's colours, in both trees
        ended = time.monotonic()
        marks = [started, *ticks, ended]
        gap = max(b - a for a, b in zip(marks, marks[1:], strict=False))
        print(f"  edit {step}: the edit held the GUI thread {edit_cpu:.3f} CPU s; longest gap {gap:.3f} s; "
              f"analysis shown after {ended - started:.3f} s")
    timer.stop()
    window.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
