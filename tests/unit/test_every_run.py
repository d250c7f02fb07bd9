"""What "bounded" means: one bound that the queue never exceeds, in every run (docs/boundedness.md).

The runs here come from tests/adversary.py, a simulator that shares no code with the product,
and the product's certifier confirms them as legal finite runs (threshold witnesses).
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.topology import parse_topology
from tests.adversary import play, random_policy, slow_then_fast


def _doc(bolts: list[tuple[str, float, float, int]], subs: list[tuple[str, str]], *, rate: float = 1.0,
         tolerance: float = 0.1, idle: float = 0.0, q0: int = 0, spouts: tuple[str, ...] = ("S",)) -> dict[str, Any]:
    return {
        "schema_version": 1, "name": "t",
        "spouts": [{"kind": "spout", "id": s, "name": s, "rate": rate, "burst": 1} for s in spouts],
        "bolts": [{"kind": "bolt", "id": n, "name": n, "alpha": a, "sigma": s, "parallelism": c}
                  for n, a, s, c in bolts],
        "subscriptions": [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(subs)],
        "settings": {"tolerance": tolerance, "max_idle_time": idle, "emission": "exact", "init_queues": q0},
    }


# the auditor's run: U may grow, J keeps up with U's long-run output but not with its drain
UPSTREAM_FLOOD = _doc([("U", 0.95, 1.0, 1), ("J", 0.8, 0.0, 1)], [("S", "U"), ("U", "J")])
# the same with J in a cycle (J passes half of what it processes back to itself)
FLOOD_INTO_CYCLE = _doc([("U", 0.95, 1.0, 1), ("J", 0.395, 0.5, 1)], [("S", "U"), ("U", "J"), ("J", "J")])


def _flood(doc: dict[str, Any], switch: float, until: float) -> int:
    """J's largest queue when U is slow until `switch` s and fast after, the spout fastest, J slowest;
    the run is certified by the product as a legal run in which J's queue reaches that size."""
    run = play(doc, slow_then_fast({"U": Fraction(switch)}, {"J"}), Fraction(until))
    reached = run.largest["J"]
    certificate = certify(run.trace(doc), checked=["J"], threshold=reached)
    assert certificate.ok, certificate.problems[:3]
    return reached


@pytest.mark.parametrize("doc", [UPSTREAM_FLOOD, FLOOD_INTO_CYCLE], ids=["chain", "cycle"])
def test_a_bolt_below_a_backed_up_bolt_is_not_bounded(doc: dict[str, Any]) -> None:
    report = rate_check(parse_topology(doc))
    j = report.bolts["J"]
    assert report.bolts["U"].status == "may-grow"
    assert j.status == "no-repeating-growth" and j.queue_bound is None
    assert j.flooded_by == ["U"] and "not proven bounded" in j.explanation
    assert j.inflow_long_run_max is not None and j.inflow_long_run_max < j.capacity_min <= j.inflow_max
    # a longer slow phase floods J further: no bound holds in every run (certified finite runs)
    short, longer = _flood(doc, 150, 400), _flood(doc, 600, 1500)
    assert longer > short + 3 and longer >= 8, (short, longer)


def test_the_search_calls_it_no_repeating_growth_and_never_bounded() -> None:
    from app.core.tcn.options import SearchOptions
    from app.core.tcn.search import verify

    doc = copy.deepcopy(UPSTREAM_FLOOD)
    doc["verification"] = {"checked": ["J"]}
    result = verify(parse_topology(doc), SearchOptions(timeout_s=30))
    assert result.verdict == "no-repeating-growth" and result.bolts["J"].verdict == "no-repeating-growth"
    assert result.bolts["J"].method == "rate check" and "U may back up" in result.bolts["J"].message


def test_bounded_has_its_bound_by_hand() -> None:
    """S (rate 1, burst 1, τ 0.1) -> A (α 0.5, C 1, idle 0) -> B (the same). A receives at most R = 1/0.9
    tuples/s with a burst of 1 (one emission), so its queue stays below Q0 + C + 1 = 2. A's emits in a window w
    are at most R·w + (1 + Q0 + C + R·(L + α(1+τ))) + H with L = α(1+τ) = 0.55 and H = 1 (the "exact" rule):
    a burst of 2 + 11/9 + 1 = 38/9 at B, whose bound is then Q0 + C + 38/9 = 47/9."""
    from app.core.rates import queue_bounds

    doc = _doc([("A", 0.5, 1.0, 1), ("B", 0.5, 1.0, 1)], [("S", "A"), ("A", "B")])
    bounds = queue_bounds(parse_topology(doc))
    assert bounds["A"] == 2 and bounds["B"] == Fraction(47, 9)
    assert rate_check(parse_topology(doc)).bolts["A"].queue_bound == 2


def test_an_inflow_equal_to_the_capacity_is_bounded_outside_a_cycle() -> None:
    """A tie (docs/boundedness.md, "Ties"): τ = 0, no idling, A receives exactly what it processes; step 3 needs
    only R ≤ c, so A's queue stays ≤ Q0 + C + b = 2, and B below it is bounded too. Runs played at the extremes
    and at random stay within both bounds."""
    doc = _doc([("A", 1.0, 1.0, 1), ("B", 0.5, 0.0, 1)], [("S", "A"), ("A", "B")], tolerance=0.0)
    report = rate_check(parse_topology(doc))
    a, b = report.bolts["A"], report.bolts["B"]
    assert a.inflow_max == a.capacity_min == 1.0
    assert a.status == "bounded" and a.queue_bound == 2 and b.status == "bounded"
    rng = random.Random(7)
    for policy in [slow_then_fast({}, {"A", "B"}), *(random_policy(random.Random(rng.random())) for _ in range(3))]:
        run = play(doc, policy, Fraction(300))
        assert run.largest["A"] <= 2 and run.largest["B"] <= b.queue_bound, run.largest


def _random_doc(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 4)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, rng.choice([0.2, 0.3, 0.45, 0.6, 0.9]), rng.choice([0.0, 0.5, 1.0, 1.0, 2.0]),
              rng.choice([1, 1, 2, 3])) for name in names]
    subs = [("S", names[0])]
    for i, name in enumerate(names[1:], start=1):
        subs.append((rng.choice(["S", *names[:i]]), name))
    if rng.random() < 0.3:  # a back edge makes a cycle
        i = rng.randrange(n)
        subs.append((names[rng.randrange(i, n)], names[i]))
    return _doc(bolts, sorted(set(subs)), rate=rng.choice([1.0, 2.0]), tolerance=rng.choice([0.0, 0.1, 0.3]),
                idle=rng.choice([0.0, 0.05]), q0=rng.choice([0, 0, 3]))


def test_no_run_exceeds_a_bounded_bolts_bound() -> None:
    """Random topologies, random and slow-then-fast runs: every bounded bolt stays below its bound. Counts the
    checks made, so the property cannot pass by checking nothing."""
    rng = random.Random(35)
    checked = close = 0
    for _ in range(60):
        doc = _random_doc(rng)
        report = rate_check(parse_topology(doc))
        bounded = {n: b.queue_bound for n, b in report.bolts.items() if b.status == "bounded"}
        if not bounded:
            continue
        names = [b["name"] for b in doc["bolts"]]
        policies = [random_policy(random.Random(rng.random())) for _ in range(2)]
        for target in bounded:
            upstream = {n: Fraction(rng.choice([20, 60])) for n in names if n != target}
            policies.append(slow_then_fast(upstream, {target}))
        for policy in policies:
            run = play(doc, policy, Fraction(120), max_positions=20_000)
            for name, bound in bounded.items():
                assert bound is not None and run.largest[name] <= bound, (doc, name, run.largest[name], bound)
                checked += 1
                close += run.largest[name] >= bound / 4
    assert checked >= 200 and close >= 10, (checked, close)


def test_replays_make_up_for_losses_they_do_not_add_to_them() -> None:
    """S (4 tuples/s) -> F (fails every 2 s) -> B (capacity 5): B receives 4 tuples/s in the long run, the fresh
    tuples once, so it is not said to grow (nor does its suggestion double)."""
    doc = _doc([("F", 0.1, 1.0, 1), ("B", 0.2, 0.0, 1)], [("S", "F"), ("F", "B")], rate=4.0, tolerance=0.0)
    doc["bolts"][0]["min_ttf"] = 1.0
    doc["settings"].update(failures=True, min_reboot_time=1.0, max_reboot_time=1.0, replay="paced")
    report = rate_check(parse_topology(doc))
    assert report.failures
    b = report.bolts["B"]
    assert b.status != "grows", b.explanation
    assert report.suggested_parallelism["B"] is None or report.suggested_parallelism["B"] <= 2


def test_a_stream_that_carries_nothing_closes_no_cycle() -> None:
    """A bolt subscribed to its own σ = 0 stream has the runs of the document without that subscription, and
    the same verdicts, with failures on too."""
    doc = _doc([("A", 0.5, 0.0, 1), ("C", 0.1, 1.0, 1)], [("S", "A"), ("A", "A"), ("S", "C")])
    doc["bolts"][1]["min_ttf"] = 100.0
    doc["settings"].update(failures=True, min_reboot_time=1.0, max_reboot_time=2.0, replay="paced")
    with_loop = rate_check(parse_topology(doc))
    doc["subscriptions"] = [s for s in doc["subscriptions"] if (s["source"], s["target"]) != ("A", "A")]
    without = rate_check(parse_topology(doc))
    assert not with_loop.cyclic
    assert {n: b.status for n, b in with_loop.bolts.items()} == {n: b.status for n, b in without.bolts.items()}
    assert with_loop.bolts["A"].status == "bounded"
