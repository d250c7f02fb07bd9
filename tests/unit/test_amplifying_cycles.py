"""Cycles that amplify (docs/boundedness.md, "Cycles that amplify"): a cycle fed from a spout whose gain is 1
or more is decided without iterating. `cycles.amplifies` against the spectral radius; the headroom and the
rate check's statuses with the shortcut equal to those without it (the shrinking and the iteration) on random
cyclic topologies; the suggestion gives no value to the members of such a cycle (as the iteration ends)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from app.core.headroom import headroom
from app.core.rates import RateAnalysis, RateFigures
from app.core.rates.cycles import amplifies
from app.core.topology import Bolt, Spout, Subscription, Topology


def test_amplifies_is_the_spectral_radius_at_least_one() -> None:
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(300):
        n = rng.randint(1, 6)
        members = [f"m{i}" for i in range(n)]
        weights: dict[str, dict[str, Fraction]] = {m: {} for m in members}
        for i, m in enumerate(members):  # a ring keeps the component strongly connected
            weights[members[(i + 1) % n]][m] = Fraction(rng.randint(1, 12), 8)
        for _ in range(rng.randint(0, 4)):
            weights[rng.choice(members)][rng.choice(members)] = Fraction(rng.randint(1, 12), 8)
        matrix = np.array([[float(weights[m].get(u, 0)) for u in members] for m in members])
        radius = max(abs(np.linalg.eigvals(matrix)))
        if abs(radius - 1) < 1e-9:
            continue  # too close to call in floats
        assert amplifies(members, weights) is bool(radius > 1), (weights, radius)
        seen[bool(radius > 1)] += 1
    assert min(seen.values()) > 30  # both kinds were tried
    ring = {"a": {"b": Fraction(1)}, "b": {"a": Fraction(1)}}  # gain exactly 1
    assert amplifies(["a", "b"], ring) is True


def random_cyclic_topology(rng: random.Random) -> Topology:
    """A spout, a chain of bolts and one or two back edges; σ around the cycles from 1/2 to 2."""
    spout = Spout(name="s", rate=float(rng.choice([1, 5, 10, 40])), burst=rng.randint(1, 3))
    n = rng.randint(2, 6)
    bolts = [Bolt(name=f"b{i}", alpha=rng.choice([0.005, 0.01, 0.02, 0.05]),
                  sigma=rng.choice([0.5, 1.0, 1.0, 1.5, 2.0]), parallelism=rng.randint(1, 3)) for i in range(n)]
    subs = [Subscription(source=spout.id, target=bolts[0].id)]
    subs += [Subscription(source=a.id, target=b.id) for a, b in zip(bolts, bolts[1:], strict=False)]
    for _ in range(rng.randint(1, 2)):
        late = rng.randrange(1, n)
        subs.append(Subscription(source=bolts[late].id, target=bolts[rng.randrange(0, late + 1)].id))
    unique = {(s.source, s.target): s for s in subs}
    return Topology(name="random-cycle", spouts=[spout], bolts=bolts, subscriptions=list(unique.values()))


def _without_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RateFigures, "amplifying", property(lambda self: frozenset()))


@pytest.mark.parametrize("seed", range(20))
def test_headroom_and_statuses_are_those_of_the_iteration(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    topo = random_cyclic_topology(random.Random(seed))
    rates = RateAnalysis(topo)
    shortcut = rates.figures.amplifying
    room = headroom(topo, rates)
    statuses = {n: b.status for n, b in rates.report().bolts.items()}
    suggestion = rates.report().suggested_parallelism
    with monkeypatch.context() as patched:
        _without_shortcut(patched)
        old_rates = RateAnalysis(topo)
        old_room = headroom(topo, old_rates)
        old_suggestion = old_rates.report().suggested_parallelism
        assert {n: b.status for n, b in old_rates.report().bolts.items()} == statuses
    assert (room.headroom, room.headroom_exact, room.limiting_bolts) == (
        old_room.headroom, old_room.headroom_exact, old_room.limiting_bolts)
    members = {c.name for c in topo.bolts if c.id in RateFigures(topo, {b.id: 1 for b in topo.bolts}).amplifying}
    for name, value in suggestion.items():
        if name in members:
            assert value is None  # some member saturates at every parallelism: none gets a value
        else:
            assert value == old_suggestion[name] or old_suggestion[name] is None, (name, value, old_suggestion)
    if not members:
        assert suggestion == old_suggestion
        assert (room.grows_at, room.grows_at_exact, room.first_to_saturate) == (
            old_room.grows_at, old_room.grows_at_exact, old_room.first_to_saturate)
    if shortcut:  # the shrinking of the old headroom found no factor either
        assert (room.headroom, room.headroom_exact, room.limiting_bolts) == (Fraction(0), False, [])
