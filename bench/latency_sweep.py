"""Soundness sweep of the latency bounds: random topologies, every adversarial run against every bound.

The random chains, trees and cyclic topologies of tests/unit/test_latency_runs.py (a third of them without initial
tuples and with a slow spout, where "Spaced arrivals" of docs/latency.md applies; half of the acyclic ones with
failures), each played by tests/adversary.py under all-slow, random and slow-then-fast policies, two random
slow/fast schedules, and with failures the failures timed after a slow stretch. Every tuple's sojourn must stay
within its bolt's bound and every tree within its spout's; the script stops at the first that does not (an
AssertionError with the document) and prints the checks made per seed. Not run by the tests (minutes of CPU).

    .venv/bin/python bench/latency_sweep.py [--seeds 2 3 4 5 6 7 8] [--per-seed 42]
"""

from __future__ import annotations

import argparse
import random
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.latency.bounds import LatencyAnalysis  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402
from tests.adversary import play, slow_then_fast  # noqa: E402
from tests.latency_runs import Latencies  # noqa: E402
from tests.unit.test_latency_runs import _policies, _random_doc, _timed_failures, _with_failures  # noqa: E402


def sweep(seed: int, count: int) -> dict[str, int]:
    rng = random.Random(seed)
    made = {"topologies": 0, "bolt checks": 0, "tree checks": 0, "failures": 0}
    for i in range(count):
        shape = rng.choice(["chain", "tree", "any"])
        doc = _random_doc(rng, shape)
        if i % 3 == 0:  # spaced arrivals likely
            doc["settings"]["init_queues"] = 0
            doc["spouts"][0]["rate"] = rng.choice([0.5, 1.0])
        failing = shape != "any" and i % 2 == 0
        if failing:
            doc = _with_failures(doc, rng)
        lat = LatencyAnalysis(parse_topology(doc))
        bounds = {b.name: b.sojourn for b in lat.bolts.values() if b.sojourn is not None}
        spout = lat.spouts()["S"].bound
        if not bounds:
            continue
        made["topologies"] += 1
        names = [b["name"] for b in doc["bolts"]]
        runs = [(policy, None) for policy in _policies(rng, names)]
        for _ in range(2):
            switch = {n: Fraction(rng.choice([5, 15, 25, 41])) for n in names if rng.random() < 0.6}
            runs.append((slow_then_fast(switch, {n for n in names if n not in switch and rng.random() < 0.5}), None))
        if failing:
            runs += _timed_failures(random.Random(seed * 1000 + i), names)
        for policy, fail_when in runs:
            run = play(doc, policy, Fraction(90 if failing else 60), max_positions=20_000, fail_when=fail_when)
            made["failures"] += sum(1 for p in run.positions for s in p["bolts"].values() if s.get("fail"))
            found = Latencies(run, doc)
            for name, bound in bounds.items():
                worst = max(found.sojourns(name), default=0)
                assert worst <= bound, ("sojourn", seed, i, doc, name, worst, bound)
                made["bolt checks"] += 1
            if spout is not None:
                worst = max(found.trees("S"), default=0)
                assert worst <= spout, ("tree", seed, i, doc, worst, spout)
                made["tree checks"] += 1
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7, 8])
    parser.add_argument("--per-seed", type=int, default=42, help="random topologies drawn per seed")
    args = parser.parse_args()
    total: dict[str, int] = {}
    for seed in args.seeds:
        made = sweep(seed, args.per_seed)
        print(f"seed {seed}: " + ", ".join(f"{v} {k}" for k, v in made.items()), flush=True)
        total = {k: total.get(k, 0) + v for k, v in made.items()}
    print("no run exceeded a bound: " + ", ".join(f"{v} {k}" for k, v in total.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
