"""Decisions per second: how many checked bolts get the user's answer (bounded, grows, unbounded) and how fast.

Usage: .venv/bin/python bench/decisions.py [--sizes 100,500] [--random 30] [--failing 0] [--timeout S] [--seed N]
       [--profile N]

Verifies seeded layered topologies (tests/layered_topologies.py) of the given sizes, `--random` small random
topologies near the boundary (every bolt's nominal capacity 0-50 % above what reaches it, so the jitter τ
decides; τ 0.1 or 0.2,
both emission rules, some cycles) and `--failing` topologies of the sweep's generator (bench/verdict_sweep.py:
declared streams, cycles, failing bolts with every replay mode, τ 0-0.2), every bolt checked. Prints per topology
the count of each bolt verdict, the wall and CPU seconds, and the decisions per second, where a decision is a bolt
answered `bounded`, `counterexample` (grows) or `unbounded`; the rest (`no-repeating-growth`, `none-up-to-k`,
`unknown`) are not the user's answer yet; per group the seconds per bolt, the share of each answer and the load
average before and after it. Wall-clock on a shared 2-core machine: noisy (the CPU seconds less so).
`--profile N`: the whole run under cProfile (in CPU seconds), then its N costliest functions by cumulative time
(where a group's time goes; the imports are in it too). Not run by the tests.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

ANSWERS = ("bounded", "counterexample", "unbounded")


def near_boundary(rng: random.Random) -> dict[str, Any]:
    """A small random topology whose bolts sit near their capacity (a chain with joins, sometimes a cycle)."""
    n = rng.randint(2, 5)
    names = [f"B{i}" for i in range(n)]
    rate, tau = rng.choice([1.0, 2.0]), rng.choice([0.1, 0.2])
    bolts, inflow = [], {}
    subs = [("S", names[0])] + [(rng.choice(["S", *names[:i]]), names[i]) for i in range(1, n)]
    for name in names:
        got = sum(rate if src == "S" else inflow.get(src, rate) for src, dst in subs if dst == name)
        inflow[name] = got
        alpha = round(1 / (got * rng.uniform(1.0, 1.5)), 3)  # nominal capacity 1/α 0-50 % above the inflow
        bolts.append({"name": name, "alpha": max(alpha, 0.01), "sigma": 1.0, "parallelism": 1})
    bolts[-1]["sigma"] = 0.0
    if rng.random() < 0.2 and n > 2:
        subs.append((names[-2], names[1]))
        bolts[-2]["sigma"] = 0.5
    return {"schema_version": 1, "name": "near-boundary", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
            "bolts": bolts, "subscriptions": [{"source": a, "target": b} for a, b in sorted(set(subs))],
            "settings": {"tolerance": tau, "max_idle_time": 0, "emission": rng.choice(["exact", "dvert"])}}


def run(label: str, topo: Any, timeout: float) -> tuple[Counter[str], float, float]:
    from app.core.tcn.search import SearchOptions, verify

    started, cpu = time.monotonic(), time.process_time()
    result = verify(topo, SearchOptions(timeout_s=timeout))
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    counts = Counter(v.verdict for v in result.bolts.values())
    decided = sum(counts[a] for a in ANSWERS)
    print(f"{label}: {len(result.bolts)} bolts, {dict(sorted(counts.items()))}, {seconds:.1f} s ({cpu:.1f} CPU s), "
          f"{decided / seconds if seconds else 0:.1f} decisions/s", flush=True)
    return counts, seconds, cpu


def group(label: str, topos: list[Any], timeout: float) -> None:
    """Verify each topology of a group and print the group's totals: bolts answered, CPU seconds per bolt (the
    figure that load changes least), decisions per wall second, each answer's share, the load average around it."""
    if not topos:
        return
    load = os.getloadavg()[0]
    counts: Counter[str] = Counter()
    seconds = cpu = 0.0
    for i, topo in enumerate(topos):
        got, s, c = run(f"{label} #{i}" if len(topos) > 1 else label, topo, timeout)
        counts, seconds, cpu = counts + got, seconds + s, cpu + c
    bolts, decided = sum(counts.values()), sum(counts[a] for a in ANSWERS)
    shares = ", ".join(f"{name} {100 * counts[name] / max(1, bolts):.1f} %"
                       for name in (*ANSWERS, *sorted(set(counts) - set(ANSWERS))))
    print(f"{label}: {decided} of {bolts} bolts answered in {seconds:.1f} s ({cpu:.1f} CPU s), "
          f"{cpu / max(1, bolts):.3f} CPU s and {seconds / max(1, bolts):.3f} s per bolt, "
          f"{decided / seconds if seconds else 0:.1f} decisions/s; {shares}; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500")
    parser.add_argument("--random", type=int, default=30)
    parser.add_argument("--failing", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    profile = cProfile.Profile(time.process_time) if args.profile else None  # CPU seconds: the machine is shared
    if profile is not None:
        profile.enable()
    groups(args)
    if profile is not None:
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.profile)


def groups(args: argparse.Namespace) -> None:
    from layered_topologies import layered_topology

    from app.core.topology import parse_topology

    sys.path.insert(0, str(ROOT / "bench"))
    from verdict_sweep import random_doc

    rng = random.Random(args.seed)
    group("near-boundary", [parse_topology(near_boundary(rng)) for _ in range(args.random)], args.timeout)
    rng = random.Random(args.seed)  # the sweep's first topologies (bench/verdict_sweep.py, same seed)
    group("sweep generator", [parse_topology(random_doc(rng)) for _ in range(args.failing)], args.timeout)
    for size in (int(s) for s in args.sizes.split(",") if s):
        group(f"layered {size} components", [layered_topology(size, 0)], args.timeout)


if __name__ == "__main__":
    main()
