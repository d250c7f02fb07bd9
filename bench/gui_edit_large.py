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
import time

from gui_bench import Ticks, bench_window, pump


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("layered", "cycle"), default="layered")
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()

    from app.core.layout import with_layout
    from app.gui.commands import SetComponentFieldsCommand

    if args.kind == "layered":
        from layered_topologies import layered_topology
        topo = layered_topology(args.size, 0)
    else:
        from rate_cycles import chain
        topo = chain(args.size, True, 1.0)
    app, window = bench_window()
    document = window.document

    def analysed() -> bool:  # a tree without SnapshotAnalyser analyses in the edit itself
        return not hasattr(document, "analysis") or document.analysis() is not None

    ticks = Ticks()
    document.replace(with_layout(topo))  # laid out as File ▸ Open lays out a file without positions
    pump(app, lambda: analysed() and not window.scene.drawing())
    window.canvas.fit_all()
    print(f"{args.kind}, {len(topo.components)} components, load {os.getloadavg()[0]:.1f}")
    bolt = document.topology().bolts[len(topo.bolts) // 2]
    for step in range(1, args.edits + 1):
        pump(app, lambda: False, limit=0.5)
        started, cpu = ticks.mark(), time.thread_time()
        document.undo_stack.push(SetComponentFieldsCommand(document, bolt.id, {"alpha": bolt.alpha * (1 + step)},
                                                           merge=False))
        edit_cpu = time.thread_time() - cpu
        pump(app, analysed)
        window.canvas.viewport().repaint()  # the canvas shown with the edit's colours, in both trees
        ended = time.monotonic()
        gap = max(g[1] for g in ticks.gaps(until=ended))
        print(f"  edit {step}: the edit held the GUI thread {edit_cpu:.3f} CPU s; longest gap {gap:.3f} s; "
              f"analysis shown after {ended - started:.3f} s")
    ticks.stop()
    window.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
