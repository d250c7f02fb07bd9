"""The rate check's exact cycle solve (app/core/rates/cycles.py, `cycle_fixpoint`) against the iteration it replaces.

On random cyclic topologies the solved flows must be the limit of the old iteration: never
above it from above (largest flows: still sound, docs/boundedness.md "Cycles"), never below it
from zero (smallest and nominal flows), equal to a long iteration up to its remaining gap, and a
fixpoint of the flow equations; every bolt the old iteration proved bounded stays bounded.
"""

from __future__ import annotations

import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from app.core.rates import flows, rate_check
from app.core.topology import parse_topology

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _random_topology(rng: random.Random):
    n = rng.randint(2, 9)
    bolts = [{"name": f"b{i}", "alpha": rng.choice([0.05, 0.1, 0.25, 0.5, 1.0]),
              "sigma": rng.choice([0, 0.25, 0.5, 0.75, 1, 1, 1.5, 2]), "parallelism": rng.randint(1, 4)}
             for i in range(n)]
    spouts = [{"name": f"s{i}", "rate": rng.choice([0.5, 1.0, 2.0, 5.0]), "burst": rng.randint(1, 3)}
              for i in range(rng.randint(1, 2))]
    subs = {(s["name"], rng.choice(bolts)["name"]) for s in spouts}
    for i in range(1, n):
        subs.add((bolts[rng.randrange(i)]["name"], bolts[i]["name"]))
    for _ in range(rng.randint(1, 3)):  # back edges (and self loops): cycles
        a, b = rng.randrange(n), rng.randrange(n)
        subs.add((bolts[max(a, b)]["name"], bolts[min(a, b)]["name"]))
    return parse_topology({
        "spouts": spouts, "bolts": bolts,
        "subscriptions": [{"source": a, "target": b} for a, b in sorted(subs)],
        "settings": {"tolerance": rng.choice([0.0, 0.1, 0.2]), "max_idle_time": rng.choice([0.0, 0.01]),
                     "emission": rng.choice(["exact", "dvert"])},
    })


def _computed(e: flows.RateFigures) -> flows.RateFigures:
    """Every figure computed now (they are computed on first use)."""
    for figures in (e.in_long, e.in_long, e.in_min, e.in_nominal):
        assert figures is not None
    return e


def _old(topo, rounds: int = flows.CYCLE_ROUNDS):
    """The flows as the iteration alone computes them (`rounds` per cycle)."""
    saved, saved_rounds = flows.cycle_fixpoint, flows.CYCLE_ROUNDS
    flows.cycle_fixpoint = lambda *a, **k: None  # type: ignore[assignment]
    flows.CYCLE_ROUNDS = rounds
    try:
        return _computed(flows.RateFigures(topo))
    finally:
        flows.cycle_fixpoint, flows.CYCLE_ROUNDS = saved, saved_rounds  # type: ignore[assignment]


def _fixpoint_holds(e: flows.RateFigures, inflow: dict[str, Fraction], cap: dict[str, Fraction],
                    ratio: dict[str, Fraction]) -> bool:
    for m in cap:
        expected = sum((ratio[p] * min(inflow[p], cap[p]) if p in cap else Fraction(0)
                        for p in e.graph.predecessors(m)), Fraction(0))
        spouts = sum((v for p, v in e.spout_max.items() if e.graph.has_edge(p, m)), Fraction(0))
        if inflow[m] != expected + spouts:
            return False
    return True


@pytest.mark.parametrize("seed", range(150))
def test_the_solved_cycles_are_the_limit_of_the_old_iteration(seed: int) -> None:
    topo = _random_topology(random.Random(seed))
    unsolved: list[bool] = []
    solve = flows.cycle_fixpoint

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - the solver's own arguments
        found = solve(*args, **kwargs)
        unsolved.append(found is None)
        return found

    flows.cycle_fixpoint = recording  # type: ignore[assignment]
    try:
        new = _computed(flows.RateFigures(topo))
    finally:
        flows.cycle_fixpoint = solve  # type: ignore[assignment]
    old, long = _old(topo), _old(topo, 3000)
    for b in topo.bolts:
        i = b.id
        assert new.in_long[i] <= old.in_long[i]  # sound: never above the iteration from above
        assert new.in_min[i] >= old.in_min[i] and new.in_nominal[i] >= old.in_nominal[i]  # from zero: never below
        if any(unsolved):
            continue  # some cycle was iterated as before (CYCLE_ROUNDS rounds): the figures above hold
        assert new.in_long[i] <= long.in_long[i]  # the limit is below every iterate
        for solved, iterated in ((new.in_long, long.in_long), (new.in_min, long.in_min),
                                 (new.in_nominal, long.in_nominal)):
            assert abs(float(solved[i]) - float(iterated[i])) <= 1e-6 * max(1.0, float(iterated[i])), b.name
        if old.in_long[i] < old.cap_min[i]:
            assert new.in_long[i] < new.cap_min[i]  # bounded by the old iteration: bounded now
    assert _fixpoint_holds(new, new.in_long, new.cap_max, new.sigma_hi)


def test_a_long_chain_with_one_back_edge_is_solved_not_iterated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The work counted, not the clock (bench/rate_cycles.py measures it): every solve of the cycle succeeds,
    so no round of the iteration runs."""
    from rate_cycles import chain  # bench/rate_cycles.py: the bench's own topology

    solved: list[bool] = []
    solve = flows.cycle_fixpoint

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - the solver's own arguments
        found = solve(*args, **kwargs)
        solved.append(found is not None)
        return found

    monkeypatch.setattr(flows, "cycle_fixpoint", recording)
    report = rate_check(chain(1000, True))
    assert solved and all(solved)
    assert all(b.status == "bounded" for b in report.bolts.values())
    first = report.bolts["b0"]
    # spout at most 10/(1-0.1) tuples/s, half of b0's output comes back: inflow = 2 * 100/9 exactly
    assert first.inflow_max == pytest.approx(200 / 9)


def test_a_cycle_that_does_not_shrink_falls_back_to_the_iteration() -> None:
    """σ = 1 around a loop fed from outside: the uncapped system has no solution, the caps decide."""
    topo = parse_topology({
        "spouts": [{"name": "s", "rate": 1.0}],
        "bolts": [{"name": "a", "alpha": 0.1, "sigma": 1, "parallelism": 1},
                  {"name": "b", "alpha": 0.1, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "s", "target": "a"}, {"source": "a", "target": "b"},
                          {"source": "b", "target": "a"}],
        "settings": {"tolerance": 0.0, "max_idle_time": 0.0},
    })
    new, old = flows.RateFigures(topo), _old(topo)
    assert new.in_long == old.in_long and new.in_min == old.in_min
    report = rate_check(topo)
    assert report.bolts["a"].status != "bounded"


def _random_topology_with_streams(rng: random.Random):
    """As `_random_topology`, with a side stream `status` on some bolts (its own σ) read inside the cycles,
    sometimes beside the same component's default stream (two streams of one source into one bolt)."""
    topo = _random_topology(rng).model_dump(mode="json")
    names = {c["id"]: c["name"] for c in [*topo["spouts"], *topo["bolts"]]}
    side = {b["name"] for b in topo["bolts"] if rng.random() < 0.5}
    for b in topo["bolts"]:
        if b["name"] in side:
            b["streams"], b["stream_sigma"] = ["status"], {"status": rng.choice([0, 0.1, 0.5, 1])}
    subs = []
    for sub in topo["subscriptions"]:
        source = names[sub["source"]]
        subs.append(sub)
        if source in side:
            extra = {**sub, "id": f"{sub['id']}-status", "stream": "status"}
            if rng.random() < 0.5:
                subs[-1] = extra  # the status stream only
            else:
                subs.append(extra)  # both streams of the source
    topo["subscriptions"] = subs
    return parse_topology(topo)


@pytest.mark.parametrize("seed", range(60))
def test_the_solved_cycles_with_streams_are_the_limit_of_the_old_iteration(seed: int) -> None:
    topo = _random_topology_with_streams(random.Random(1000 + seed))
    new, old, long = flows.RateFigures(topo), _old(topo), _old(topo, 3000)
    for b in topo.bolts:
        i = b.id
        assert new.in_long[i] <= old.in_long[i]  # sound: never above the iteration from above
        assert new.in_min[i] >= old.in_min[i] and new.in_nominal[i] >= old.in_nominal[i]
        assert new.in_long[i] <= long.in_long[i] or abs(float(new.in_long[i]) - float(long.in_long[i])) <= 1e-9
        if old.in_long[i] < old.cap_min[i]:
            assert new.in_long[i] < new.cap_min[i]  # bounded by the old iteration: bounded now
    # the largest inflows are a fixpoint of the per-stream equations
    processed = {b.id: min(new.in_long[b.id], new.cap_max[b.id]) for b in topo.bolts}
    processed.update(new.spout_max)
    for b in topo.bolts:
        expected = sum((new.streams[u][s][2] * processed[u] for u, s in new.inputs[b.id] if s in new.streams[u]),
                       Fraction(0))
        assert new.in_long[b.id] == expected, b.name
