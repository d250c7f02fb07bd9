"""Paced failing bolts fed through another bolt: played runs (the exact stepper of tests/unit/test_rates_failures.py)
with the spout at its fastest, the bolts at their slowest, failures as early as min_ttf allows and reboots as long
as they may; prints, per stretch of the run, the largest queue of every bolt and the spout's largest replay backlog,
so a reader sees whether they pile up from stretch to stretch. The stepper plays `default` streams only: give a
declared stream's ratio to the bolt's `sigma` first (bench/RESULTS.md, "Paced failing bolts fed through a bolt").

    PYTHONPATH=$PWD python bench/paced_chains.py /work/wt/data/r205.storm.json --horizon 2000 --stretches 5

With `--cycles F U` (a failing bolt F fed by bolt U alone, U fed by the spout): per failure cycle of F (recovery r,
failure f, recovery r'), checks that F completes in [r, f) every tuple U sends it before t_f − Λ, Λ = 2·α_F(1+τ) +
max_idle_time ("F keeps up"), and prints the largest fresh[r, r') − (1/σ_U − 1)·A_F[r, r') − done_F[r, f) (Φ's change
over the cycle, bench/RESULTS.md "Paced failing bolts fed through a bolt: a count over U's emit spacing"), apart for
the cycles in which U's queue holds at least its batch C at every position, those in which S's backlog stays above
C_EMIT (S replays throughout) and the others.
"""

from __future__ import annotations

import argparse
import bisect
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
    parser.add_argument("--init", type=int, default=0, help="init_queues of every bolt")
    parser.add_argument("--cycles", nargs=2, metavar=("F", "U"), help="per-cycle counts of F fed through U")
    parser.add_argument("--psi", nargs=2, metavar=("F", "U"), help="checks Psi = R_S + H_U/2 + H_F per position")
    args = parser.parse_args()
    import tests.unit.test_rates_failures as stepper

    data = json.loads(Path(args.document).read_text())
    data["settings"]["init_queues"] = args.init
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
    if args.psi:
        return psi(stepper, topo, args.seeds, Fraction(args.horizon), *args.psi)
    if args.cycles:
        return cycles(stepper, topo, args.seeds, Fraction(args.horizon), *args.cycles)
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


def cycles(stepper, topo, seeds: int, horizon: Fraction, f_name: str, u_name: str) -> int:  # type: ignore[no-untyped-def]
    ids = {c.name: c.id for c in topo.components}
    f, u, s = ids[f_name], ids[u_name], topo.spouts[0].id
    bolt = {b.id: b for b in topo.bolts}
    tau, idle = Fraction(str(topo.settings.tolerance)), Fraction(str(topo.settings.max_idle_time))
    lam = 2 * Fraction(str(bolt[f].alpha)) * (1 + tau) + idle
    weight = 1 / Fraction(str(bolt[u].sigma)) - 1
    take, s_take = bolt[u].parallelism, topo.spouts[0].burst
    orig_reboot = stepper.Run.reboot

    def reboot(self: stepper.Run) -> Fraction:
        down = orig_reboot(self)
        self.cycle_ends.append((self.times[-1], self.times[-1] + down))
        return down
    stepper.Run.reboot = reboot  # type: ignore[method-assign]
    worst: dict[str, Fraction] = {}
    count: dict[str, int] = {}
    for seed in range(seeds):
        run = stepper.Run(topo, seed, horizon)
        run.cycle_ends = []  # type: ignore[attr-defined]
        run.go()
        times, start = run.times, Fraction(0)
        for fail, back in run.cycle_ends:  # type: ignore[attr-defined]
            i0, i1, i2 = (bisect.bisect_left(times, t) for t in (start, fail, back))
            early = bisect.bisect_left(times, fail - lam)
            if start and i0 < i1 and i2 < len(times):
                done = sum(run.emitted[f][i0:i1])
                assert done >= sum(run.emitted[u][i0:max(i0, early)]), f"{f_name} fell behind at {float(fail)}"
                arrived = sum(run.emitted[u][i0:i2])
                replayed = run.backlogs[s][i0] + sum(run.added[s][i0:i2]) - run.backlogs[s][i2]
                fresh = sum(run.emitted[s][i0:i2]) - replayed
                kind = "busy" if all(run.queues[u][i] >= take for i in range(i0, i2)) else "emptied, " + (
                    "S replaying throughout" if min(run.backlogs[s][i0:i2]) > s_take else "S drained")
                change = fresh - weight * arrived - done
                worst[kind] = max(worst.get(kind, change), change)
                count[kind] = count.get(kind, 0) + 1
            start = back
    for kind in sorted(worst):
        print(f"{kind}: {count[kind]} cycles, {f_name} kept up in each, largest change of the count "
              f"{float(worst[kind]):+.3g}")
    return 0


class _Held(list):  # type: ignore[type-arg]
    """A bolt's queue record that also keeps its batch and carry before the position."""

    def __init__(self, run, bolt: str):  # type: ignore[no-untyped-def]
        super().__init__()
        self.run, self.bolt = run, bolt
        self.held: list[Fraction] = []

    def append(self, q) -> None:  # type: ignore[no-untyped-def, override]
        st = self.run.bolt[self.bolt]
        self.held.append(q + st["P"] + st["carry"])
        super().append(q)


def psi(stepper, topo, seeds: int, horizon: Fraction, f_name: str, u_name: str) -> int:  # type: ignore[no-untyped-def]
    """Psi = R_S + H_U/2 + H_F (H: queue + batch (+ carry)), for U of sigma 1/2 into F: checks at every position
    that Psi grows by at most 1/2 per emission of S that replays nothing and falls by what F completes; prints the
    largest Psi, R_S, H_U, H_F, the largest H_U at an emission of S that finds its backlog empty, and the largest
    rise of Phi = R_S + H_U + 2 H_F from U's last empty queue to such an emission (K_c in bench/RESULTS.md)."""
    ids = {c.name: c.id for c in topo.components}
    f, u, s = ids[f_name], ids[u_name], topo.spouts[0].id
    top = dict(psi=Fraction(0), R=0, HU=Fraction(0), HF=Fraction(0), HU_at_empty=Fraction(0), slack=Fraction(0),
               busy_rise=Fraction(-10**9))
    for seed in range(seeds):
        run = stepper.Run(topo, seed, horizon)
        run.queues[u], run.queues[f] = _Held(run, u), _Held(run, f)
        run.go()
        hu, hf, back = run.queues[u].held, run.queues[f].held, run.backlogs[s]
        val = [back[i] + hu[i] / 2 + hf[i] for i in range(len(hf))]
        phi = [back[i] + hu[i] + 2 * hf[i] for i in range(len(hf))]
        last_empty = 0  # the last position j with U's queue empty before it (q + 1)
        for i in range(len(val) - 1):
            if run.queues[u][i] == 0:
                last_empty = i
            sent = run.emitted[s][i]
            fresh_only = sent if back[i] == 0 else 0  # (C_EMIT 1: an emission replays one tuple when R >= 1)
            allowed = Fraction(fresh_only, 2) - run.emitted[f][i]
            assert val[i + 1] - val[i] <= allowed, f"Psi grew by {val[i + 1] - val[i]} > {allowed} at {i}"
            top["slack"] = max(top["slack"], allowed - (val[i + 1] - val[i]))
            if sent and back[i] == 0:
                top["HU_at_empty"] = max(top["HU_at_empty"], hu[i])
                top["busy_rise"] = max(top["busy_rise"], phi[i] - phi[last_empty])
        top["psi"], top["R"] = max(top["psi"], max(val)), max(top["R"], max(back))
        top["HU"], top["HF"] = max(top["HU"], max(hu)), max(top["HF"], max(hf))
    print({k: float(v) for k, v in top.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
