"""The app opening a topology with many declared streams: the longest stall of the GUI thread, as figures.

    QT_QPA_PLATFORM=offscreen python bench/gui_open_large.py [--streams 20000] [--profile]

Writes models/getting-started.storm.json with one spout declaring N streams, each subscribed to by
`split` (the issue's 20,000-stream document), opens it in a MainWindow through File ▸ Open's path
(`open_path`) while a 20 ms QTimer ticks, and prints: the whole open (wall, GUI-thread CPU), the longest
gap between two ticks (wall) and the most GUI-thread CPU spent between two ticks (steadier than wall on a
loaded machine). The tests keep only generous bounds (tests/gui/test_open_large.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from gui_bench import Ticks, bench_window, pump

ROOT = Path(__file__).resolve().parent.parent


def many_streams(n: int) -> dict:
    """The getting-started document with `n` declared streams of its spout, each subscribed to by `split`."""
    data = json.loads((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"))
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(n)]
    data["spouts"][0]["stream_ratio"] = {f"s{i}": 1.0 for i in range(n)}
    data["subscriptions"] += [{"source": "sentences", "target": "split", "stream": f"s{i}"} for i in range(n)]
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=20_000)
    parser.add_argument("--profile", action="store_true", help="print the GUI thread's profile of the open")
    parser.add_argument("--screenshot", help="grab the window to this png once opened")
    args = parser.parse_args()

    path = Path(tempfile.mkdtemp()) / "streams.storm.json"
    path.write_text(json.dumps(many_streams(args.streams)), encoding="utf-8")
    app, window = bench_window()
    ticks = Ticks()
    pump(app, lambda: False, limit=0.5)

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    wall0, cpu0 = ticks.mark(), time.thread_time()
    opened = window.open_path(path, ask=False)
    subscriptions = len(window.document.topology().subscriptions)
    pump(app, lambda: bool(window.scene.edges) and len(window.scene.edges) >= subscriptions)
    pump(app, lambda: False, limit=1.0)  # what the open queued (status bar, panels) runs too
    wall, cpu = time.monotonic() - wall0 - 1.0, time.thread_time() - cpu0
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
    ticks.stop()
    if args.screenshot:
        window.grab().save(args.screenshot)
    print(f"streams {args.streams}: opened={opened}, edges drawn {len(window.scene.edges)}, "
          f"status '{window.status_problems.text()[:90]}'")
    print(f"open until drawn: {wall:.2f} s wall (GUI-thread CPU in all {cpu:.2f} s incl. 1 s idle ticking)")
    print(ticks.report("the open began"))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
