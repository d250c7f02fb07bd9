"""Spaced arrivals (docs/latency.md, "Spaced arrivals: one batch at a time"): a bolt whose arrivals come at least
L = α(1+τ) + max_idle apart, each at most one take, waits for nothing; no simulated run exceeds the bound it gives,
and on the chain the bound was loosest on with failures the adversary reaches it exactly."""

from __future__ import annotations

import random
from fractions import Fraction

from app.core.failures import failure_model
from app.core.latency.bounds import LatencyAnalysis
from app.core.latency.spacing import spaced_sojourns
from app.core.rates import RateFigures
from app.core.topology import parse_topology
from tests.adversary import play, random_policy, slow_then_fast
from tests.latency_runs import Latencies
from tests.unit.test_latency_runs import _all_slow, _doc, _random_doc, _with_failures


def _spaced(doc: dict) -> dict[str, Fraction]:
    topo = parse_topology(doc)
    lat = LatencyAnalysis(topo)
    e = RateFigures(topo)
    got = spaced_sojourns(topo, e, failure_model(topo), list(lat.bolts), {})
    return {lat.names[j]: v for j, v in got if v is not None}


def _chain(burst: int = 1, replay: str = "paced") -> dict:
    """S 1/s → B0 (α 0.3 ×3, fails) → B1 (α 0.45 ×2) → B2 (α 0.45 ×2, fails): an emission and its replay fit one
    take, and arrive 0.9 s apart at the least."""
    doc = _doc([("B0", 0.3, 1.0, 3), ("B1", 0.45, 1.0, 2), ("B2", 0.45, 0.0, 2)],
               [("S", "B0"), ("B0", "B1"), ("B1", "B2")], rate=1.0, burst=burst)
    doc["settings"].update(failures=True, min_reboot_time=0.5, max_reboot_time=2.0, replay=replay)
    doc["bolts"][0]["min_ttf"], doc["bolts"][2]["min_ttf"] = 8, 20
    return doc


def test_spaced_chain_with_failures_is_bounded_by_its_phases_and_a_run_reaches_it() -> None:
    doc = _chain()
    spout = LatencyAnalysis(parse_topology(doc)).spouts()["S"]
    assert spout.bound == Fraction(33, 100) + 2 * Fraction(99, 200), spout  # Σ α(1+τ): 1.32 s (3.135 s before)
    run = play(doc, _all_slow, Fraction(40), max_positions=5_000)
    assert any(p["bolts"]["B0"].get("fail") for p in run.positions)
    assert max(Latencies(run, doc).trees("S")) == spout.bound


def test_spacing_needs_one_take_per_arrival_and_no_initial_tuples() -> None:
    assert set(_spaced(_chain())) == {"B0", "B1", "B2"}
    assert _spaced(_chain(burst=2)) == {}  # 2 fresh + 2 replays: more than B0 takes at once
    assert _spaced(_chain(replay="at-once")) == {}  # the whole backlog in one emission
    q0 = _chain()
    q0["settings"]["init_queues"] = 2
    assert _spaced(q0) == {}
    close = _chain()
    close["spouts"][0]["rate"] = 3.0  # emissions 0.3 s apart: B0 (L 0.33 s) may still be busy
    assert _spaced(close) == {}


def test_no_run_exceeds_a_spaced_sojourn() -> None:
    """Random chains and trees without initial tuples, with and without failures: every tuple's sojourn at a bolt
    the spacing bounds is within α(1+τ) + max_idle, in all-slow, random and slow-then-fast runs."""
    rng = random.Random(17)
    checked = reached = 0
    for i in range(16):
        doc = _random_doc(rng, rng.choice(["chain", "tree"]))
        doc["settings"]["init_queues"] = 0
        doc["spouts"][0]["rate"] = rng.choice([0.5, 1.0])
        if i % 2:
            doc = _with_failures(doc, rng)
        spaced = _spaced(doc)
        if not spaced:
            continue
        names = [b["name"] for b in doc["bolts"]]
        for policy in (_all_slow, random_policy(random.Random(i)), slow_then_fast({n: Fraction(10) for n in names},
                                                                                  set())):
            found = Latencies(play(doc, policy, Fraction(30), max_positions=5_000), doc)
            for name, bound in spaced.items():
                worst = max(found.sojourns(name), default=0)
                assert worst <= bound, (doc, name, bound)
                checked += 1
                reached += worst == bound
    assert checked >= 30 and reached >= checked // 2, (checked, reached)  # (and the runs reach it)
