"""Live Mode's Stop against a Storm UI of many bolts: how long from Stop to Live Mode stopped, as figures.

    QT_QPA_PLATFORM=offscreen python bench/live_stop.py [--bolts 3000] [--stops 3]

A stand-in Storm UI (tests/storm_ui_live.py, scenario `wide`: one spout, N bolts, one poll = N + 2 requests)
is polled by Runs ▸ Live Mode in a MainWindow; Stop is pressed at a few moments inside polls. Printed per stop:
the seconds from Stop until the Live Mode action is enabled again (the user can start it anew) and until the
worker thread has ended; and how long one poll took.
"""

from __future__ import annotations

import argparse
import sys
import time

from gui_bench import bench_window, pump


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bolts", type=int, default=3000)
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()

    from storm_ui_live import LiveStormUI

    app, window = bench_window()

    with LiveStormUI("wide", bolts=args.bolts, lifetime=3600) as ui:
        for k in range(args.stops):
            live = window.live
            worker = live.start({"url": ui.url, "topology": "wordcount-live", "every": 0.05})
            assert worker is not None
            polls: list[float] = []
            worker.progress.connect(lambda _line, polls=polls: polls.append(time.monotonic()))
            started = time.monotonic()
            pump(app, lambda polls=polls: len(polls) >= 2)
            first = polls[0] - started if polls else float("nan")
            per_poll = polls[1] - polls[0] if len(polls) > 1 else float("nan")
            time.sleep(0)
            pump(app, lambda: False, limit=per_poll * (0.2 + 0.3 * k))  # Stop lands inside a poll, at a few places
            running = worker.isRunning()
            live.action_stop.trigger()
            usable = pump(app, lambda live=live: live.action_start.isEnabled())
            ended = pump(app, lambda worker=worker: worker.isFinished()) + usable
            print(f"stop {k + 1}: {args.bolts} bolts; first poll {first:.1f} s, a poll {per_poll:.1f} s; "
                  f"Stop → Live Mode stopped (start enabled) {usable:.2f} s, → worker ended {ended:.2f} s; "
                  f"(worker running at Stop: {running}; messages: {window.dialogs.shown[-1:]})")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
