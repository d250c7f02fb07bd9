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
import sys
import time

from gui_bench import Ticks, bench_window, pump


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bolts", type=int, default=3000)
    parser.add_argument("--profile", action="store_true", help="print the GUI thread's profile")
    parser.add_argument("--screenshot", help="grab the window to this png once drawn and coloured")
    args = parser.parse_args()

    from storm_ui_live import LiveStormUI

    app, window = bench_window()
    ticks = Ticks()

    def drawn_and_coloured() -> bool:
        scene = window.scene
        return (len(scene.nodes) == args.bolts + 1 and len(scene.edges) == args.bolts
                and all(node.live is not None for node in scene.nodes.values() if node.component.kind == "bolt"))

    pump(app, lambda: False, limit=0.5)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with LiveStormUI("wide", bolts=args.bolts, lifetime=3600) as ui:
        wall0 = ticks.mark()
        worker = window.live.start({"url": ui.url, "topology": "wordcount-live", "every": 1.0})
        assert worker is not None
        pump(app, drawn_and_coloured)
        done, ok = time.monotonic() - wall0, drawn_and_coloured()
        pump(app, lambda: False, limit=1.0)  # what the drawing queued runs too
        if profiler is not None:
            import pstats

            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        if args.screenshot:
            window.grab().save(args.screenshot)
        window.live.stop()
    ticks.stop()
    print(f"{args.bolts} bolts: drawn and coloured {ok} after {done:.2f} s; "
          f"status '{window.status_problems.text()[:80]}'")
    print(ticks.report("Live Mode started", worst=5))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
