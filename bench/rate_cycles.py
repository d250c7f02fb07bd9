"""The rate check on long chains with and without one back edge (bench/RESULTS.md, "Rate check around cycles").

A chain spout -> b0 -> b1 -> ... -> b(n-1) of n bolts; "cycle" adds one subscription from the
last bolt back to the first. Each row times `stormbound check`'s work (rate_check: the report and
the parallelism suggestion) in this process, and compares it with the acyclic chain of the same
size measured in the same run. `--old` also times the previous iteration (CYCLE_ROUNDS sweeps in
condensation order, kept in bench/ only) for the before/after figures.

    .venv/bin/python bench/rate_cycles.py [--sizes 300 3000] [--old] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.topology import Bolt, Spout, Subscription, Topology  # noqa: E402


def chain(n: int, cycle: bool, sigma_back: float = 0.5) -> Topology:
    """A spout feeding n bolts in a row; with `cycle`, the last bolt also feeds the first."""
    spout = Spout(name="s", rate=10.0, burst=1)
    bolts = [Bolt(name=f"b{i}", alpha=0.01, sigma=(sigma_back if i == n - 1 else 1.0), parallelism=1)
             for i in range(n)]
    subs = [Subscription(source=spout.id, target=bolts[0].id)]
    subs += [Subscription(source=a.id, target=b.id) for a, b in zip(bolts, bolts[1:], strict=False)]
    if cycle:
        subs.append(Subscription(source=bolts[-1].id, target=bolts[0].id))
    return Topology(name=f"chain-{n}{'-cycle' if cycle else ''}", spouts=[spout], bolts=bolts, subscriptions=subs)


def timed(fn, *args):  # noqa: ANN001, ANN202 - any callable
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000])
    parser.add_argument("--old", action="store_true", help="also time the previous iteration (slow: minutes)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from app.core import rates

    rows = []
    for n in args.sizes:
        base_s, _ = timed(rates.rate_check, chain(n, False))
        new_s, report = timed(rates.rate_check, chain(n, True))
        row = {"bolts": n, "acyclic_s": round(base_s, 3), "cycle_s": round(new_s, 3),
               "ratio": round(new_s / base_s, 2), "statuses": sorted({b.status for b in report.bolts.values()})}
        if args.old:
            from bench.old_rates import old_iteration

            with old_iteration():
                old_s, old = timed(rates.rate_check, chain(n, True))
            row["old_cycle_s"] = round(old_s, 3)
            row["speedup"] = round(old_s / new_s, 1)
        rows.append(row)
        if not args.json:
            print(row, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
