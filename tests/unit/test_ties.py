"""Ties inside cycles and with failures (docs/boundedness.md, "Ties"): a bolt whose largest inflow equals its
smallest capacity (R = c) is bounded, since steps 3 and 4 of "Every run" (and step 3 of "Failures") need only
R ≤ c. Runs played by the independent simulator (tests/adversary.py) at the extremes and at random never pass
the stated bound."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from app.core.rates import rate_check
from app.core.topology import parse_topology
from tests.adversary import play, random_policy, slow_then_fast


def _doc(bolts: list[tuple[str, float, float, int]], subs: list[tuple[str, str]], *, tolerance: float,
         failures: dict[str, float] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1, "name": "ties",
        "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": 1.0, "burst": 1}],
        "bolts": [{"kind": "bolt", "id": n, "name": n, "alpha": a, "sigma": s, "parallelism": c,
                   **({"min_ttf": failures[n]} if failures and n in failures else {})} for n, a, s, c in bolts],
        "subscriptions": [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(subs)],
        "settings": {"tolerance": tolerance, "max_idle_time": 0.0, "emission": "exact"},
    }
    if failures:
        doc["settings"].update(failures=True, replay="none", min_reboot_time=1, max_reboot_time=2)
    return doc


# U ⇄ V: U receives S (at most 4/3 tuples/s at τ 0.25) and half of what V passes back; V passes on all U sends it,
# so U's largest inflow R solves R = 4/3 + R/2: R = 8/3, exactly U's smallest capacity 2/(0.6 · 1.25)
CYCLE_TIE = _doc([("U", 0.6, 1.0, 2), ("V", 0.1, 0.5, 1)], [("S", "U"), ("U", "V"), ("V", "U")], tolerance=0.25)
# C receives exactly its capacity (τ 0) and fails (replay none: its losses are not replayed)
FAILING_TIE = _doc([("C", 1.0, 0.0, 1)], [("S", "C")], tolerance=0.0, failures={"C": 5.0})


def _played(doc: dict[str, Any], bounds: dict[str, Fraction], seed: int) -> dict[str, int]:
    """The largest queue of each bolt of `bounds` over runs at the extremes and at random."""
    rng = random.Random(seed)
    largest = {n: 0 for n in bounds}
    names = set(bounds)
    for policy in [slow_then_fast({}, names), slow_then_fast({n: Fraction(60) for n in names}, set()),
                   *(random_policy(random.Random(rng.random())) for _ in range(3))]:
        run = play(doc, policy, Fraction(150))
        for n in names:
            largest[n] = max(largest[n], run.largest[n])
    return largest


def test_a_tie_inside_a_cycle_is_bounded_and_no_run_passes_its_bound() -> None:
    report = rate_check(parse_topology(CYCLE_TIE))
    u = report.bolts["U"]
    assert Fraction(u.inflow_max).limit_denominator(1000) == Fraction(8, 3) == Fraction(u.capacity_min
                                                                                        ).limit_denominator(1000)
    assert u.status == "bounded" and u.queue_bound is not None and report.bolts["V"].status == "bounded"
    bounds = {n: Fraction(b.queue_bound) for n, b in report.bolts.items() if b.queue_bound is not None}
    largest = _played(CYCLE_TIE, bounds, 11)
    assert all(largest[n] <= bounds[n] for n in bounds), (largest, bounds)


def test_a_tie_with_failures_is_bounded_and_no_run_passes_its_bound() -> None:
    report = rate_check(parse_topology(FAILING_TIE))
    c = report.bolts["C"]
    assert report.failures and c.status == "bounded" and c.queue_bound is not None
    # the simulator plays paced replays only: it plays the runs in which C does not fail (a failure is never
    # forced, docs/model.md 7.2), and with replay none a failure only empties C's queue
    unfailing = {**FAILING_TIE, "settings": {**FAILING_TIE["settings"], "failures": False}}
    largest = _played(unfailing, {"C": Fraction(c.queue_bound)}, 12)
    assert largest["C"] <= c.queue_bound, (largest, c.queue_bound)


def test_a_cycle_above_the_tie_is_not_bounded() -> None:
    """One step past the tie (U a little slower) and U is pinned: not bounded, as before."""
    slower = _doc([("U", 0.61, 1.0, 2), ("V", 0.1, 0.5, 1)], [("S", "U"), ("U", "V"), ("V", "U")], tolerance=0.25)
    assert rate_check(parse_topology(slower)).bolts["U"].status != "bounded"
