"""DiffStream matcher throughput: 1 million events per side, `same_key` (1,000 keys, bounded drift) and `all`.

Prints events per second (both sides counted), mean cost per event (wall and CPU)
and the peak number of unmatched items, for the fast paths and for a naive
baseline measured in the same run: the general matcher (a list of unmatched
items scanned per arrival, dependence as an expression predicate), which is
the algorithm written down directly. Target: at most 2 µs per event on one core.

    .venv/bin/python bench/diff_bench.py [--events 1000000] [--keys 1000] [--drift 64] [--json]
        [--files N] [--spark]   # also: JSON Lines files end to end, and the Spark same_key job on them
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.diff import LEFT, Matcher, interleave  # noqa: E402  # after the sys.path line


def keyed_streams(n: int, keys: int, drift: int, seed: int = 1) -> tuple[list[dict], list[dict]]:
    """Left: n items over `keys` keys. Right: the same items, each moved by less than `drift`
    positions, per-key order kept (as a parallel run that merges keyed partitions)."""
    rng = random.Random(seed)
    left = [{"key": rng.randrange(keys), "seq": i, "value": rng.randrange(1000)} for i in range(n)]
    jittered = sorted(range(n), key=lambda i: i + rng.random() * drift)
    slots: dict[int, list[int]] = {}
    for position, i in enumerate(jittered):
        slots.setdefault(left[i]["key"], []).append(position)
    right: list[Any] = [None] * n
    cursor: dict[int, int] = {}
    for item in left:  # the k-th item of a key goes to the k-th slot of that key
        k = item["key"]
        c = cursor.get(k, 0)
        right[slots[k][c]] = dict(item)  # a distinct object, as if parsed from another file
        cursor[k] = c + 1
    return left, right


def lagged(left: list[Any], right: list[Any], lag: int) -> list[tuple[int, Any]]:
    """The connected stream where the right side starts `lag` items late, then alternates."""
    events = [(LEFT, item) for item in left[:lag]]
    events += interleave(left[lag:], right)
    return events


def measure(run: Callable[[], Matcher], repeat: int) -> dict[str, Any]:
    walls, cpus, last = [], [], None
    for _ in range(repeat):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        last = run()
        walls.append(time.perf_counter() - wall0)
        cpus.append(time.process_time() - cpu0)
    assert last is not None
    result = last.finish()
    events = result.left_count + result.right_count
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {
        "events": events, "equivalent": result.equivalent, "peak_unmatched": result.peak_unmatched,
        "wall_s": round(wall, 3), "events_per_s": round(events / wall),
        "us_per_event_wall": round(wall / events * 1e6, 3), "us_per_event_cpu": round(cpu / events * 1e6, 3),
    }


def feeder(spec: str, events: list[tuple[int, Any]]) -> Callable[[], Matcher]:
    def run() -> Matcher:
        matcher = Matcher(spec)
        matcher.feed(events)
        return matcher
    return run


class _Done:
    """A finished comparison posing as a Matcher for `measure`."""

    def __init__(self, result: Any):
        self.result = result

    def finish(self) -> Any:
        return self.result


def file_rows(n: int, keys: int, drift: int, spark: bool) -> list[tuple[str, dict[str, Any]]]:
    """End to end on JSON Lines files: read + parse + match locally, and optionally the Spark job."""
    import tempfile

    from app.diff import diff_streams, read_stream

    left, right = keyed_streams(n, keys, drift, seed=2)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / "left.jsonl", Path(folder) / "right.jsonl"]
        for path, items in zip(paths, (left, right), strict=True):
            path.write_text("".join(json.dumps(item) + "\n" for item in items))
        del left, right
        rows.append((f"files end to end, local (JSON parsing included, {n:,}/side)",
                     measure(lambda: _Done(diff_streams(read_stream(paths[0]), read_stream(paths[1]), "same_key:key")),
                             1)))
        if spark:
            from app.spark.diff_job import spark_same_key_diff
            from app.spark.session import build_session

            session = build_session("local[2]", "diff-bench")
            spark_same_key_diff(session, paths[0], paths[1], "same_key:key")  # warm-up (JVM, workers)
            rows.append((f"files end to end, Spark local[2] job ({n:,}/side)",
                         measure(lambda: _Done(spark_same_key_diff(session, paths[0], paths[1], "same_key:key")), 1)))
            session.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events per side")
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--drift", type=int, default=64, help="max displacement of an item on the right side")
    parser.add_argument("--lag", type=int, default=1000, help="how late the right side starts (the `all` lag row)")
    parser.add_argument("--naive-events", type=int, default=100_000, help="events per side for the naive rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--files", type=int, default=0, metavar="N",
                        help="also compare two JSON Lines files of N items per side end to end (parsing included)")
    parser.add_argument("--spark", action="store_true", help="with --files: also time the Spark same_key job")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    left, right = keyed_streams(args.events, args.keys, args.drift)
    same = [dict(item) for item in left]
    keyed_events = list(interleave(left, right))
    all_events = list(interleave(left, same))
    lag_events = lagged(left, same, args.lag)
    n_naive = min(args.naive_events, args.events)
    naive_left, naive_right = keyed_streams(n_naive, args.keys, args.drift)  # same generator, fewer items
    naive_keyed = list(interleave(naive_left, naive_right))
    naive_all = list(interleave(left[:n_naive], same[:n_naive]))
    setup = time.perf_counter() - t0

    rows: list[tuple[str, dict[str, Any]]] = []
    rows.append(("same_key:key, drift (fast path)", measure(feeder("same_key:key", keyed_events), args.repeat)))
    rows.append(("all, aligned (fast path)", measure(feeder("all", all_events), args.repeat)))
    rows.append((f"all, right {args.lag} behind (fast path)", measure(feeder("all", lag_events), args.repeat)))
    rows.append(("none, drift (fast path, multiset)", measure(feeder("none", keyed_events), args.repeat)))

    def from_files_order() -> Matcher:  # includes building the connected stream on the fly
        matcher = Matcher("same_key:key")
        matcher.feed(interleave(left, right))
        return matcher
    rows.append(("same_key:key, drift, connecting two lists on the fly", measure(from_files_order, args.repeat)))
    rows.append((f"naive: predicate x.key == y.key, drift ({n_naive:,}/side)",
                 measure(feeder("predicate:x.key == y.key", naive_keyed), 1)))
    rows.append((f"naive: predicate true, aligned ({n_naive:,}/side)",
                 measure(feeder("predicate:true", naive_all), 1)))

    if args.files:
        rows += file_rows(args.files, args.keys, args.drift, args.spark)

    info = {
        "python": platform.python_version(), "machine": platform.machine(),
        "events_per_side": args.events, "keys": args.keys, "drift": args.drift, "setup_s": round(setup, 1),
    }
    if args.json:
        print(json.dumps({"info": info, "rows": [{"name": n, **r} for n, r in rows]}, indent=2))
        return 0
    print(f"DiffStream matcher, CPython {info['python']}, {args.events:,} events per side, "
          f"{args.keys} keys, drift < {args.drift} (setup {info['setup_s']} s, median of {args.repeat})")
    print("| workload | events | equivalent | peak unmatched | events/s (wall) | µs/event wall | µs/event CPU |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, r in rows:
        peak = "-" if r["peak_unmatched"] is None else f"{r['peak_unmatched']:,}"
        print(f"| {name} | {r['events']:,} | {r['equivalent']} | {peak} | {r['events_per_s']:,} "
              f"| {r['us_per_event_wall']} | {r['us_per_event_cpu']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
