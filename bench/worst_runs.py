"""How close legal runs come to the failure bounds of the rate check: the paced per-cycle bound
(app/core/rates/paced.py) and the at-once storm over several cycles (app/core/rates/tails.py).

For each topology of tests/unit/test_paced_cycles.py and tests/unit/test_rates_tails.py (and the small random paced
ones, seed 7), plays the random runs those tests played before (`Run`, the tests' own seeds and horizons), the
deterministic plans of `Worst` (every failure mode and offset of tests/unit/worst_runs.py, `--steps` offsets per
period) and `--pushed` runs of `Pushed`, checks every run against every bound (a run that passes one is printed
with `!!!`: a soundness bug) and prints, per bound, the largest value reached / the bound, for the random runs and
for all of them.

    PYTHONPATH=$PWD python bench/worst_runs.py --pushed 300 --steps 4
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from app.core.failures import failure_model
from app.core.rates import RateFigures
from app.core.rates.failures_check import failure_check
from app.core.topology import parse_topology


def _reached(topo: Any, check: Any, run: Any, best: dict[tuple[str, str], int]) -> None:
    """The largest queue, loss per failure and backlog of each failing bolt the paced or storm bounds speak of."""
    b = check.bounds
    for j in list(b.paced) + list(b.storm):
        spout = (b.paced.get(j) or b.storm.get(j)).spout
        sid = next(c.id for c in topo.spouts if spout in (c.id, c.name))
        for key, value in (("queue", max(run.queues[j])), ("lost", max(run.losses[j], default=0)),
                           ("backlog", max(run.backlogs[sid]))):
            best[(j, key)] = max(best.get((j, key), 0), value)


def _bound(check: Any, j: str, key: str) -> Fraction | None:
    b = check.bounds
    if key == "backlog":
        spout = (b.paced.get(j) or b.storm.get(j)).spout
        return b.backlog.get(spout)
    if key == "queue" and j in b.storm and b.storm[j].queue is not None:
        return b.storm[j].queue
    return b.queue[j] if key == "queue" else b.lost.get(j)


def play(name: str, data: dict[str, Any], horizon: int, seeds: list[int], pushed: int, steps: int,
         adversary: Callable[[Any], Any] | None = None) -> None:
    from tests.unit.test_rates_failures import Run, check_run
    from tests.unit.worst_runs import WHEN, Pushed, Worst, plans

    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    if check.bounds is None or not (check.bounds.paced or check.bounds.storm):
        print(f"{name}: no paced or storm bound")
        return
    started = time.process_time()
    before: dict[tuple[str, str], int] = {}
    after: dict[tuple[str, str], int] = {}

    def played(run: Any, into: dict[tuple[str, str], int]) -> None:
        try:
            check_run(topo, check, run)
        except AssertionError as e:
            print(f"!!! {name}: a run passes a bound: {e}")
        _reached(topo, check, run, into)

    for seed in seeds:
        played(Run(topo, seed, Fraction(horizon)).go(), before)
    if adversary is not None:
        played(adversary(topo), before)
    after.update(before)
    tau = Fraction(str(topo.settings.tolerance))
    periods = [(1 - tau) / Fraction(str(s.rate)) for s in topo.spouts]
    periods += [Fraction(str(b.alpha)) * (1 + tau) + Fraction(str(topo.settings.max_idle_time))
                for b in topo.bolts if b.id in model.min_ttf]
    aligns = [None, *(b.id for b in topo.bolts if b.id in model.min_ttf)]
    runs = 0
    for when in WHEN:
        for align in aligns:
            for offset in plans(periods, steps):
                played(Worst(topo, Fraction(horizon), offset=offset, when=when, align=align).go(), after)
                runs += 1
    for seed in range(pushed):
        played(Pushed(topo, seed, Fraction(horizon)).go(), after)
    names = {c.id: c.name for c in topo.components}
    print(f"{name}: {len(seeds)} random + {runs} planned + {pushed} pushed runs, {time.process_time() - started:.1f} "
          "CPU s")
    for (j, key), value in sorted(after.items()):
        bound = _bound(check, j, key)
        if bound is None:
            continue
        print(f"  {names[j]} {key:8s} random {before[(j, key)]:3d} / {float(bound):7.3f} "
              f"({float(before[(j, key)] / bound):.2f})   all {value:3d} ({float(value / bound):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pushed", type=int, default=100)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--only", default="", help="comma-separated names to play (default: all)")
    args = parser.parse_args()
    import tests.unit.test_paced_cycles as paced
    import tests.unit.test_rates_tails as tails

    cases: list[tuple[str, dict[str, Any], int, list[int], Callable[[Any], Any] | None]] = []
    for n in (177, 233, 286):
        data = paced.sweep(n)
        cases.append((f"paced #{n}", data, 2 * (int(data["bolts"][0]["min_ttf"]) + 2) + 5, [0, 1], None))
    rng = random.Random(7)
    cases += [(f"paced small {i}", paced.small(rng), 5 * 32, [0, 1], None) for i in range(12)]
    cases.append(("paced tight", paced.tight(), 70, [0, 1], None))
    for name, data, offsets, horizon in tails.CASES:
        def adversary(topo: Any, offsets: dict[str, Fraction] = offsets, horizon: int = horizon) -> Any:
            ids = {b.name: b.id for b in topo.bolts}
            tails.Adversary.offsets = {ids[n]: off for n, off in offsets.items()}
            return tails.Adversary(topo, 3, Fraction(horizon)).go()
        cases.append((f"at once {name}", data, horizon, [3], adversary))
    cases.append(("at once batches", tails.storming_batches(), 70, [3], None))
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    for name, data, horizon, seeds, adversary in cases:
        if not only or name in only:
            play(name, data, horizon, seeds, args.pushed, args.steps, adversary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
