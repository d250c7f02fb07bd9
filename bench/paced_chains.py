"""Paced failing bolts fed through another bolt: played runs (the exact stepper of tests/unit/test_rates_failures.py)
with the spout at its fastest, the bolts at their slowest, failures as early as min_ttf allows and reboots as long
as they may; prints, per stretch of the run, the largest queue of every bolt and the spout's largest replay backlog,
so a reader sees whether they pile up from stretch to stretch. The stepper plays `default` streams only: give a
declared stream's ratio to the bolt's `sigma` first (bench/RESULTS.md, "Paced failing bolts fed through a bolt").

    PYTHONPATH=$PWD python bench/paced_chains.py /work/wt/data/r205.storm.json --horizon 2000 --stretches 5
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from fractions import Fraction
from pathlib import Path

from app.core.topology import parse_topology


def pushed_pick(gaps: set[Fraction], bias: float):  # type: ignore[no-untyped-def]
    from tests.unit.test_rates_failures import _pick

    def pick(r: random.Random, lo: Fraction, hi: Fraction) -> Fraction:
        if lo in gaps:  # the spout's next emission: as early as it may
            return lo if r.random() < bias else _pick(r, lo, hi)
        return hi if r.random() < bias else _pick(r, lo, hi)  # everything else as late as it may
    return pick


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("document")
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--stretches", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--bias", type=float, default=0.95)
    args = parser.parse_args()
    import tests.unit.test_rates_failures as stepper

    data = json.loads(Path(args.document).read_text())
    topo = parse_topology(data)
    tau = Fraction(str(topo.settings.tolerance))
    gaps = {(n - tau) / Fraction(str(s.rate)) for s in topo.spouts for n in range(1, s.burst + 1)}
    stepper._pick = pushed_pick(gaps, args.bias)  # type: ignore[assignment]
    orig_fail = stepper.Run.fail_time

    def fail_soon(self: stepper.Run, up: Fraction, bolt: str) -> Fraction | None:  # as early as allowed
        found = orig_fail(self, up, bolt)  # (never "no more failures": the runs keep failing)
        earliest = up + self.model.min_ttf[bolt]
        return earliest if found is None or self.rng.random() < args.bias else found
    stepper.Run.fail_time = fail_soon  # type: ignore[method-assign]
    name = {c.id: c.name for c in topo.components}
    for seed in range(args.seeds):
        run = stepper.Run(topo, seed, Fraction(args.horizon)).go()
        edges = [Fraction(args.horizon * k, args.stretches) for k in range(args.stretches + 1)]
        print(f"{Path(args.document).name} seed {seed}: {len(run.times)} positions")
        for k in range(args.stretches):
            idx = [i for i, t in enumerate(run.times) if edges[k] <= t < edges[k + 1]]
            if not idx:
                continue
            qs = {name[b]: max(run.queues[b][i] for i in idx) for b in run.queues}
            rs = {name[s]: max(run.backlogs[s][i] for i in idx) for s in run.backlogs}
            sent = {name[s]: sum(run.emitted[s][i] for i in idx) for s in run.emitted if s in run.backlogs}
            span = f"[{float(edges[k]):7.0f}, {float(edges[k + 1]):7.0f})"
            print(f"  {span} queues {qs} backlog {rs} emitted (fresh + replays) {sent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
