"""Latency bounds against adversarial runs, and their cost (bench/RESULTS.md, "Latency bounds").

1. **Tightness.** For every shipped model (models/) and every published D-VerT configuration (the folder
   given with --published, e.g. tests/data/dvert, the ICFEM and example configurations), per spout with a
   proven complete-latency bound: the worst complete latency the independent simulator of tests/adversary.py
   reaches (all slow; random; each bolt slow-then-fast in turn; maximal bursts), read in FIFO order by
   tests/latency_runs.py, and the ratio worst / bound. The simulator plays the "exact" emission rule and the
   default streams, so a configuration is played (and bounded) with `emission: "exact"`; one it cannot play
   (declared streams, ticks) is listed as such.
2. **Families.** The random chains and trees of tests/unit/test_latency_runs.py, failure-free and with
   failures: the smallest, median and largest ratio over seeded topologies.
3. **Cost.** Milliseconds for the whole latency analysis (sojourn bounds, every spout's bound, the
   max.spout.pending bisection) on seeded layered topologies of 50..500 components.

    .venv/bin/python bench/latency.py [--published DIR] [--until 60] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.cli.inputs import read_topology  # noqa: E402
from app.core.latency.bounds import LatencyAnalysis  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402
from tests.adversary import play, random_policy, slow_then_fast  # noqa: E402
from tests.latency_runs import Latencies  # noqa: E402


def _all_slow(name: str, now: Fraction, kind: str, low: Fraction, high: Fraction) -> Fraction:
    return low if kind == "gap" else high


def _playable(doc: dict[str, Any]) -> str | None:
    if any(s.get("stream") not in (None, "default") for s in doc["subscriptions"]):
        return "declared streams"
    if any(c.get("streams") for c in [*doc["spouts"], *doc["bolts"]]):
        return "declared streams"
    return None


def tightness(path: Path, until: int) -> list[dict[str, Any]]:
    topo = read_topology(str(path))
    doc = topo.model_dump(mode="json")
    doc["settings"]["emission"] = "exact"
    fed = {s["source"] for s in doc["subscriptions"]}
    for b in doc["bolts"]:  # the adversary's final bolt emits nothing (a silent stream)
        if b["id"] not in fed:
            b["sigma"] = 0.0
    lat = LatencyAnalysis(parse_topology(doc))
    rows = []
    spouts = lat.spouts()
    why = _playable(doc)
    worst: dict[str, Fraction] = {}
    if why is None and any(s.bound is not None for s in spouts.values()):
        names = [b["name"] for b in doc["bolts"]]
        policies = [_all_slow, random_policy(random.Random(2))]
        policies += [slow_then_fast({n: Fraction(until // 3) for n in names if n != t}, {t}) for t in names]
        for policy in policies:
            run = play(doc, policy, Fraction(until), max_positions=100_000)
            found = Latencies(run, doc)
            for s in spouts.values():
                if s.bound is not None:
                    worst[s.name] = max([worst.get(s.name, Fraction(0)), *found.trees(s.name)])
    for s in spouts.values():
        rows.append({"file": path.name, "spout": s.name,
                     "bound_s": None if s.bound is None else round(float(s.bound), 4),
                     "worst_s": None if s.name not in worst else round(float(worst[s.name]), 4),
                     "ratio": None if s.name not in worst or not s.bound else round(float(worst[s.name] / s.bound), 3),
                     "note": s.reason[:70] if s.bound is None else (why or "")})
    return rows


def families(count: int) -> list[dict[str, Any]]:
    """The random chains and trees of tests/unit/test_latency_runs.py (failure-free, then with failures): per
    family the ratio worst / bound over `count` seeded topologies with a bound."""
    from tests.unit.test_latency_runs import _policies, _random_doc, _timed_failures, _with_failures

    rows = []
    for shape, failing in (("chain", False), ("tree", False), ("chain", True), ("tree", True)):
        rng = random.Random(11)
        ratios: list[float] = []
        while len(ratios) < count:
            doc = _random_doc(rng, shape)
            if failing:
                doc = _with_failures(doc, rng)
            bound = LatencyAnalysis(parse_topology(doc)).spouts()["S"].bound
            if bound is None:
                continue
            worst = Fraction(0)
            names = [b["name"] for b in doc["bolts"]]
            runs = [(policy, None) for policy in _policies(rng, names)]
            if failing:  # failures timed to pile up replays on a drained backlog
                runs += _timed_failures(random.Random(len(ratios)), names)
            for policy, fail_when in runs:
                run = play(doc, policy, Fraction(90 if failing else 60), max_positions=20_000, fail_when=fail_when)
                worst = max([worst, *Latencies(run, doc).trees("S")])
            ratios.append(float(worst / bound))
        ratios.sort()
        rows.append({"family": shape + (" with failures" if failing else ""), "topologies": count,
                     "min_ratio": round(ratios[0], 3), "median_ratio": round(ratios[len(ratios) // 2], 3),
                     "max_ratio": round(ratios[-1], 3), "exact": sum(r == 1 for r in ratios)})
    return rows


def cost(sizes: list[int]) -> list[dict[str, Any]]:
    from tests.layered_topologies import layered_topology

    rows = []
    for n in sizes:
        topo = layered_topology(n, seed=n, overloaded=0)
        start = time.perf_counter()
        lat = LatencyAnalysis(topo)
        spouts = lat.spouts()
        mid = time.perf_counter()
        lat.advice()
        end = time.perf_counter()
        rows.append({"components": n, "bounds_ms": round((mid - start) * 1000, 1),
                     "with_pending_advice_ms": round((end - start) * 1000, 1),
                     "spouts_bounded": sum(s.bound is not None for s in spouts.values()), "spouts": len(spouts)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--published", type=Path, help="a folder of D-VerT JSON configurations")
    parser.add_argument("--until", type=int, default=60, help="seconds of each adversarial run")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500])
    parser.add_argument("--families", type=int, default=20, help="random chains and trees per family")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = sorted((ROOT / "models").glob("*.storm.json"))
    if args.published is not None:
        files += sorted(p for p in args.published.glob("*.json") if "expected" not in p.name)
    rows = [r for f in files for r in tightness(f, args.until)]
    fams = families(args.families)
    scale = cost(args.sizes)
    if args.json:
        print(json.dumps({"tightness": rows, "families": fams, "cost": scale}, indent=1))
        return 0
    print("file | spout | bound (s) | worst simulated (s) | ratio | note")
    for r in rows:
        print(f"{r['file']} | {r['spout']} | {r['bound_s']} | {r['worst_s']} | {r['ratio']} | {r['note']}")
    print("\nfamily | topologies | min ratio | median | max | exactly the bound")
    for r in fams:
        print(f"{r['family']} | {r['topologies']} | {r['min_ratio']} | {r['median_ratio']} | {r['max_ratio']} | "
              f"{r['exact']}")
    print("\ncomponents | bounds (ms) | with the max.spout.pending bisection (ms) | spouts bounded")
    for r in scale:
        print(f"{r['components']} | {r['bounds_ms']} | {r['with_pending_advice_ms']} | "
              f"{r['spouts_bounded']}/{r['spouts']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
