"""No run exceeds a latency bound, and adversarial runs come close on chains and trees (docs/latency.md).

The runs come from tests/adversary.py and their latencies from tests/latency_runs.py, neither of which
shares code with app/core/latency; the product's certifier confirms a sample of the runs as legal.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from app.core.latency.bounds import LatencyAnalysis
from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.topology import parse_topology
from tests.adversary import Policy, play, random_policy, slow_then_fast
from tests.latency_runs import Latencies


def _doc(bolts: list[tuple[str, float, float, int]], subs: list[tuple[str, str]], *, rate: float = 1.0,
         burst: int = 1, tolerance: float = 0.1, idle: float = 0.0, q0: int = 0) -> dict[str, Any]:
    return {
        "schema_version": 1, "name": "t",
        "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": rate, "burst": burst}],
        "bolts": [{"kind": "bolt", "id": n, "name": n, "alpha": a, "sigma": s, "parallelism": c}
                  for n, a, s, c in bolts],
        "subscriptions": [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(subs)],
        "settings": {"tolerance": tolerance, "max_idle_time": idle, "emission": "exact", "init_queues": q0},
    }


def _random_doc(rng: random.Random, shape: str) -> dict[str, Any]:
    n = rng.randint(2, 4)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, rng.choice([0.1, 0.2, 0.3, 0.45]), rng.choice([0.0, 0.5, 1.0, 1.0, 1.0, 2.0]),
              rng.choice([1, 1, 2, 3])) for name in names]
    if shape == "chain":
        bolts = [(name, a, 1.0, c) for name, a, _, c in bolts]
        subs = [("S", names[0]), *zip(names, names[1:], strict=False)]
    else:
        subs = [("S", names[0])]
        for i, name in enumerate(names[1:], start=1):
            subs.append((rng.choice(["S", *names[:i]]), name))
        if shape == "any" and rng.random() < 0.3:  # a back edge makes a cycle
            i = rng.randrange(n)
            subs.append((names[rng.randrange(i, n)], names[i]))
    fed = {a for a, _ in subs}
    bolts = [(name, a, sigma if name in fed else 0.0, c) for name, a, sigma, c in bolts]  # a final bolt is silent
    return _doc(bolts, sorted(set(subs)), rate=rng.choice([1.0, 2.0]), burst=rng.choice([1, 1, 2, 3]),
                tolerance=rng.choice([0.0, 0.1, 0.3]), idle=rng.choice([0.0, 0.05]), q0=rng.choice([0, 0, 2]))


def _all_slow(name: str, now: Fraction, kind: str, low: Fraction, high: Fraction) -> Fraction:
    return low if kind == "gap" else high


def _policies(rng: random.Random, names: list[str]) -> list[Policy]:
    out: list[Policy] = [_all_slow, random_policy(random.Random(rng.random()))]
    for target in names:
        upstream = {n: Fraction(rng.choice([10, 30])) for n in names if n != target}
        out.append(slow_then_fast(upstream, {target}))
    return out


def _worst(doc: dict[str, Any], rng: random.Random, until: int = 60) -> tuple[dict[str, Fraction], Fraction]:
    """Per bolt the longest sojourn and the longest complete latency over the adversarial runs."""
    names = [b["name"] for b in doc["bolts"]]
    sojourn = {n: Fraction(0) for n in names}
    tree = Fraction(0)
    for k, policy in enumerate(_policies(rng, names)):
        run = play(doc, policy, Fraction(until), max_positions=20_000)
        if k == 0 and all(float(b["sigma"]).is_integer() for b in doc["bolts"]):
            # the product's certifier: a legal finite run (the adversary writes fractional carries its own way)
            cert = certify(run.trace(doc), checked=[names[0]], threshold=0)
            assert cert.ok, cert.problems[:3]
        lat = Latencies(run, doc)
        for n in names:
            sojourn[n] = max([sojourn[n], *lat.sojourns(n)])
        tree = max([tree, *lat.trees("S")])
    return sojourn, tree


def test_no_run_exceeds_a_latency_bound() -> None:
    """Random topologies (cycles among them), random, all-slow and slow-then-fast runs with maximal bursts:
    no tuple stays longer than its bolt's sojourn bound, no tree takes longer than its spout's bound. Counts
    the checks made, so the property cannot pass by checking nothing."""
    rng = random.Random(41)
    bolts_checked = trees_checked = 0
    for _ in range(30):
        doc = _random_doc(rng, "any")
        lat = LatencyAnalysis(parse_topology(doc))
        bounds = {b.name: b.sojourn for b in lat.bolts.values() if b.sojourn is not None}
        spout = lat.spouts()["S"].bound
        if not bounds:
            continue
        sojourn, tree = _worst(doc, rng)
        for name, bound in bounds.items():
            assert sojourn[name] <= bound, (doc, name, sojourn[name], bound)
            bolts_checked += 1
        if spout is not None:
            assert tree <= spout, (doc, tree, spout)
            trees_checked += 1
    assert bolts_checked >= 30 and trees_checked >= 8, (bolts_checked, trees_checked)


def _has_tie(doc: dict[str, Any]) -> bool:
    """Some bolt receives exactly its smallest capacity: bounded (docs/boundedness.md, "Ties"), but its worst case
    is not one these adversaries approach, so it is no measure of how tight the bounds are."""
    return any(b.inflow_max == b.capacity_min for b in rate_check(parse_topology(doc)).bolts.values())


def test_adversarial_runs_reach_half_the_bound_on_chains_and_trees() -> None:
    rng = random.Random(7)
    ratios = []
    for shape in ("chain", "tree") * 6:
        doc = _random_doc(rng, shape)
        spout = LatencyAnalysis(parse_topology(doc)).spouts()["S"].bound
        if spout is None or _has_tie(doc):
            continue
        _, tree = _worst(doc, rng)
        assert tree <= spout
        ratios.append((float(tree / spout), shape))
    print(ratios)
    assert len(ratios) >= 6 and all(r >= 0.5 for r, _ in ratios), ratios


def _with_failures(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc["settings"].update(failures=True, min_reboot_time=rng.choice([0.5, 1.0]), max_reboot_time=2.0,
                           replay="paced")
    names = [b["name"] for b in doc["bolts"]]
    for b in doc["bolts"]:
        if b["name"] in rng.sample(names, rng.randint(1, 2)):
            b["min_ttf"] = rng.choice([8, 20, 40])
    return doc


def _timed_failures(rng: random.Random, names: list[str]) -> list[tuple[Policy, Callable[[str, Fraction], bool]]]:
    """Failures timed to pile up replays: every bolt slow until a switch time X, then fast (the backlogs drain
    at full speed), and each failing bolt fails at the first position after X that min_ttf allows (its queue and
    what the drain sends it while down are lost, and replayed on top of the fresh tuples); the bolt under test
    stays slow."""
    out: list[tuple[Policy, Callable[[str, Fraction], bool]]] = []
    for target in names:
        switch = Fraction(rng.choice([20, 25, 30, 45]))
        policy = slow_then_fast({n: switch for n in names if n != target}, {target})
        out.append((policy, lambda name, now, x=switch: now >= x))
    return out


def test_no_run_with_failures_and_replays_exceeds_a_latency_bound() -> None:
    """Failures as soon as min_ttf allows, the longest reboots, every lost tuple replayed (paced), on random acyclic
    topologies: every tuple that is not lost stays within its bolt's bound, every tree that loses nothing completes
    within its spout's (docs/latency.md, "Failures with replays")."""
    rng = random.Random(5)
    bolts_checked = trees_checked = failures = 0
    for _ in range(40):
        doc = _with_failures(_random_doc(rng, rng.choice(["chain", "tree"])), rng)
        lat = LatencyAnalysis(parse_topology(doc))
        bounds = {b.name: b.sojourn for b in lat.bolts.values() if b.sojourn is not None}
        spout = lat.spouts()["S"].bound
        if not bounds:
            continue
        names = [b["name"] for b in doc["bolts"]]
        runs = [(policy, None) for policy in _policies(rng, names)[:3]] + _timed_failures(rng, names)[:2]
        for policy, fail_when in runs:
            run = play(doc, policy, Fraction(90), max_positions=20_000, fail_when=fail_when)
            failures += sum(1 for p in run.positions for s in p["bolts"].values() if s.get("fail"))
            found = Latencies(run, doc)
            for name, bound in bounds.items():
                assert max(found.sojourns(name), default=0) <= bound, (doc, name, bound)
                bolts_checked += 1
            if spout is not None:
                assert max(found.trees("S"), default=0) <= spout, (doc, spout)
                trees_checked += 1
    assert bolts_checked >= 30 and trees_checked >= 10 and failures >= 20, (bolts_checked, trees_checked, failures)
