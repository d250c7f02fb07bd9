"""A bolt bounded by its senders' fastest pace under failures (docs/boundedness.md, "Failures", "Bounded by its
senders' fastest pace"): the curve against random legal runs, and bolts of `bench/verdict_sweep.py` whose cone holds
a cycle that it decides."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from app.core.failures import failure_model
from app.core.rates import RateFigures, rate_check
from app.core.rates.curves import fastest_inflow
from app.core.rates.failures_check import failure_components
from app.core.topology import parse_topology
from tests.unit.test_rates_failures import Run, assert_within, random_topology


def sweep(bolts: list[dict[str, Any]], subs: list[tuple[str, str]], **settings: Any) -> dict[str, Any]:
    return {"schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
            "bolts": [{"sigma": 1.0, "parallelism": 1, **b} for b in bolts],
            "subscriptions": [{"source": s, "target": t} for s, t in subs],
            "settings": {"failures": True, "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced",
                         **settings}}


def test_a_bolt_beside_a_failing_cycle_is_bounded_by_the_paced_spout_alone() -> None:
    # random #27 of the sweep: B0 (fails) and B1 form a cycle that grows, S replays B0's losses paced; B2 takes
    # at least 4.107 tuples/s and S emits at most twice its 2 tuples/s, whatever it replays
    data = sweep([{"name": "B0", "alpha": 0.353, "min_ttf": 20.0}, {"name": "B1", "alpha": 0.373},
                  {"name": "B2", "alpha": 0.487, "sigma": 2.0, "parallelism": 2}],
                 [("S", "B0"), ("B0", "B1"), ("B1", "B0"), ("S", "B2")], tolerance=0.0, max_idle_time=0,
                 emission="dvert")
    report = rate_check(parse_topology(data))
    assert report.bolts["B2"].status == "bounded" and report.bolts["B2"].queue_bound is not None
    assert "fastest pace" in report.bolts["B2"].failures_note
    assert report.bolts["B0"].status != "bounded"
    # at-once replays have no bound on one emission: nothing proven
    report = rate_check(parse_topology({**data, "settings": {**data["settings"], "replay": "at-once"}}))
    assert report.bolts["B2"].status != "bounded"


def test_a_bolt_on_a_cycle_fed_only_by_a_slower_bolt_is_bounded() -> None:
    # random #179: B1 receives only B0's half, at most 0.5 · 2/(0.339·0.9) = 3.28 tuples/s, and takes 3.94 at its
    # slowest, though B0 grows with the failures of B4 below
    data = sweep([{"name": "B0", "alpha": 0.339, "sigma": 0.5, "parallelism": 2},
                  {"name": "B1", "alpha": 0.416, "parallelism": 2},
                  {"name": "B4", "alpha": 0.463, "min_ttf": 20.0}],
                 [("S", "B0"), ("B0", "B1"), ("B1", "B0"), ("B1", "B4")], tolerance=0.1, max_idle_time=0.05,
                 emission="dvert")
    report = rate_check(parse_topology(data))
    assert report.bolts["B1"].status == "bounded"
    assert report.bolts["B0"].status != "bounded"
    # a slower B1 (its smallest capacity below B0's fastest half): not proven
    data["bolts"][1]["alpha"] = 0.6
    assert rate_check(parse_topology(data)).bolts["B1"].status != "bounded"


def test_no_random_run_exceeds_the_fastest_pace_curve_or_its_queue_bound() -> None:
    rng = random.Random(52)
    bounded = 0
    for _ in range(25):
        topo = parse_topology(random_topology(rng))
        model = failure_model(topo)
        assert model is not None
        e = RateFigures(topo)
        comps = {c.ident: c for c in failure_components(topo, e, model)}
        replaying = set() if model.replay == "none" else {s for j in model.min_ttf for s in model.impact.get(j, {})}
        run = Run(topo, rng.randint(0, 10**6), Fraction(120)).go()
        for b in topo.bolts:
            curve = fastest_inflow(comps, model, replaying, b.id)
            assert_within(curve, run.times, run.arrivals[b.id], f"{b.name}'s arrivals")
            excess = curve.excess(e.cap_min[b.id])
            if excess is not None:  # the queue bound the rate check states with it
                bound = e.q0 + comps[b.id].held + excess + comps[b.id].take
                assert max(run.queues[b.id]) <= bound, f"{b.name}: queue {max(run.queues[b.id])} above {bound}"
                bounded += 1
    assert bounded >= 10
