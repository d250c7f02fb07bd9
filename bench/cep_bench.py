"""CEP benchmark: the gesture-recognition workload of the VIATRA-CEP paper, atomic events per second.

Each cycle of one body is four posture events (the `forward` gesture: start, two middle
postures, end) plus two noise postures that belong to no gesture. With B bodies the
cycles of all bodies interleave event by event and the pattern joins the postures on
the `body` parameter. Every cycle must yield exactly one match per body; the script
checks that before printing a figure. Target: above 414,000 atomic events/s for one body
(the figure VIATRA-CEP reports). Run: `.venv/bin/python bench/cep_bench.py [--events N]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.cep import CepEngine, Pattern, parse_text  # noqa: E402  # after the sys.path line

POSTURES = ("forward_start", "forward_middle1", "forward_middle2", "forward_end")
NOISE = ("lean_left", "hands_up")
PLAIN = "forward_start -> forward_middle1 -> forward_middle2 -> forward_end"
JOINED = "forward_start(body) -> forward_middle1(body) -> forward_middle2(body) -> forward_end(body)"
TARGET = 414_000


def workload(bodies: int, events: int) -> list[dict]:
    """About `events` atomic events: cycles of 4 postures + 2 noise events, bodies interleaved."""
    cycle = (POSTURES[0], NOISE[0], POSTURES[1], POSTURES[2], NOISE[1], POSTURES[3])
    cycles = max(1, events // (len(cycle) * bodies))
    out: list[dict] = []
    t = 0.0
    for _ in range(cycles):
        for kind in cycle:
            for body in range(bodies):
                out.append({"type": kind, "t": t, "body": body})
                t += 0.001
    return out


def measure(text: str, context: str, bodies: int, events: int, repeats: int) -> dict:
    stream = workload(bodies, events)
    expected = len(stream) // 6
    rates: list[float] = []
    cpu_rates: list[float] = []  # per CPU second: what one core does when the machine is shared
    for _ in range(repeats):
        engine = CepEngine([Pattern(id="forward", ast=parse_text(text), context=context)])
        gc.collect()
        gc.disable()
        start, cpu_start = time.perf_counter(), time.process_time()
        matches = engine.run(stream)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        gc.enable()
        if len(matches) != expected:
            raise SystemExit(f"wrong result: {len(matches)} matches, expected {expected}")
        rates.append(len(stream) / elapsed)
        cpu_rates.append(len(stream) / max(cpu, 1e-9))
    return {"pattern": "joined on body" if "(" in text else "plain", "context": context, "bodies": bodies,
            "events": len(stream), "matches": expected, "events_per_s": statistics.median(rates),
            "best_events_per_s": max(rates), "events_per_cpu_s": statistics.median(cpu_rates)}


def storm_log(events: int) -> list[dict]:
    """A synthetic Storm run for the shipped monitors: takes, acks (every 50th tuple never acked),
    emits, a failure every 200 tuples and a queue sample every 20 events."""
    out: list[dict] = []
    t = 0.0
    n = 0
    while len(out) < events:
        comp = ("split", "count")[n % 2]
        tid = f"t{n}"
        out.append({"type": "take", "t": t, "comp": comp, "task": n % 4, "tuple": tid})
        out.append({"type": "bolt_emit", "t": t + 0.001, "comp": comp, "task": n % 4, "tuple": tid + "e"})
        if n % 50:
            out.append({"type": "bolt_ack", "t": t + 0.002, "comp": comp, "task": n % 4, "tuple": tid})
        if n % 200 == 0:
            out.append({"type": "bolt_fail", "t": t + 0.003, "comp": comp, "task": n % 4, "tuple": tid + "f"})
        if n % 7 == 0:
            out.append({"type": "queue", "t": t + 0.004, "comp": comp, "task": n % 4, "queue": 900 + (n * 37) % 400})
        t += 0.01
        n += 1
    return out


def measure_monitors(events: int, repeats: int) -> dict:
    from app.cep.monitors import load_monitors, summarize

    stream = storm_log(events)
    patterns = load_monitors()
    rates: list[float] = []
    cpu_rates: list[float] = []
    counts: dict[str, int] = {}
    for _ in range(repeats):
        engine = CepEngine(patterns)
        gc.collect()
        start, cpu_start = time.perf_counter(), time.process_time()
        matches = engine.run(stream)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        counts = summarize(matches, patterns)
        rates.append(len(stream) / elapsed)
        cpu_rates.append(len(stream) / max(cpu, 1e-9))
    return {"pattern": "storm monitors", "context": "mixed", "bodies": 0, "events": len(stream),
            "matches": sum(counts.values()), "counts": counts, "events_per_s": statistics.median(rates),
            "best_events_per_s": max(rates), "events_per_cpu_s": statistics.median(cpu_rates)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000, help="atomic events per run (default 300000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bodies", type=int, nargs="*", default=[1, 2, 5, 10, 25])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(PLAIN, "chronicle", 1, args.events, args.repeats)]
    rows += [measure(JOINED, "chronicle", b, args.events, args.repeats) for b in args.bodies]
    rows.append(measure_monitors(args.events, args.repeats))
    if args.json:
        print(json.dumps({"python": platform.python_version(), "target": TARGET, "load_average": os.getloadavg(),
                          "rows": rows}, indent=2))
        return 0
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPython {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, load average {load} "
          f"after the runs; median of {args.repeats} runs; target {TARGET:,} events/s")
    print(f"{'pattern':16} {'bodies':>6} {'events':>9} {'matches':>8} {'events/s':>11} {'per CPU s':>11}  vs target")
    for r in rows:
        print(f"{r['pattern']:16} {r['bodies']:>6} {r['events']:>9} {r['matches']:>8} {r['events_per_s']:>11,.0f}"
              f" {r['events_per_cpu_s']:>11,.0f}  {r['events_per_s'] / TARGET:.2f}x")
        if "counts" in r:
            print(f"  monitor matches: {r['counts']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
