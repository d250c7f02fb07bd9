"""A paced spout's replays kept in lumps (docs/latency.md, "Replays in lumps") and pipelines through bolts that may
fail ("Pipelines with losses"): the curve bounds every window of simulated spout runs, and the bounds it gives are
sharper than the affine replay curve's."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.latency.bounds import LatencyAnalysis
from app.core.latency.losses import loss_bound
from app.core.latency.replays import Lumps
from app.core.topology import parse_topology
from tests.adversary import play
from tests.unit.test_latency_runs import _doc, _policies, _random_doc, _timed_failures, _with_failures


def _spout_run(rng: random.Random, lumps: Lumps, period: Fraction, tau: Fraction, until: int
               ) -> list[tuple[Fraction, int]]:
    """One paced spout: emissions of n fresh tuples (1..C_EMIT) after gaps in [(n − τ)a, (n + τ)a], replays of
    min(R, n) at each, losses of at most ℓ_j spread over [t_f, t_f + m] at failures T_j apart or more, the first
    at min_ttf_j or later (each lost tuple replayed once, from the next position on). Returns (time, tuples
    emitted) per emission."""
    adds: list[tuple[Fraction, int]] = []
    for (lost, gap), ttf in zip(lumps.losses, lumps.first, strict=True):
        t = ttf + Fraction(rng.choice([0, 1, 3]))
        while t < until:
            size = int(lost) if rng.random() < 0.7 else rng.randint(0, int(lost))
            for _ in range(size):  # (the earliest: all at the failure; else spread over the reboot)
                adds.append((t if rng.random() < 0.6 else t + lumps.reboot * Fraction(rng.randint(0, 8), 8), 1))
            t += gap + Fraction(rng.choice([0, 0, 0, 1, 5]))
    adds.sort()
    out: list[tuple[Fraction, int]] = []
    backlog, now, k = 0, Fraction(0), 0
    while now < until:
        n = rng.randint(1, int(lumps.burst))
        replayed = min(backlog, n)
        out.append((now, n + replayed))
        backlog -= replayed
        fast = rng.random() < 0.5
        gap = (n - tau if fast else n + tau) * period
        while k < len(adds) and adds[k][0] < now + gap:  # added before the next emission: replayed from it on
            backlog += adds[k][1]
            k += 1
        now += gap
    return out


def test_lumped_replays_bound_every_window_of_simulated_spout_runs() -> None:
    rng = random.Random(3)
    checked = 0
    for _ in range(6):
        period, tau, burst = Fraction(rng.choice([1, 2]), 2), Fraction(rng.choice([0, 1, 3]), 10), rng.choice([1, 2])
        losses = tuple((Fraction(rng.choice([4, 8, 15])), Fraction(rng.choice([17, 41]), 2))
                       for _ in range(rng.choice([1, 2])))
        first = tuple(Fraction(rng.choice([0, 3, 8])) for _ in losses)
        lumps = Lumps(1 / (period * (1 - tau)), 1 / (period * (1 + tau)), Fraction(burst), losses, Fraction(2), first)
        run = _spout_run(rng, lumps, period, tau, 90)
        total = 0
        for end, n in run:  # windows from time 0 ("From the start"), drained or not
            total += n
            assert total <= lumps.from_start(end), (lumps, end, total)
        if not lumps.drains:
            continue
        for i, (start, _) in enumerate(run):  # windows from each emission, to each later one
            total = 0
            for end, n in run[i:i + 40]:
                total += n
                checked += 1
                if total < lumps.emitted_float(float(end - start)) - Fraction(1, 1000):
                    continue  # (clearly below: the exact check is for the close ones)
                assert total <= lumps.emitted(end - start), (lumps, start, end, total)
    assert checked > 1_000


def _chain(q0: int = 0) -> dict[str, Any]:
    """The random chain bench/RESULTS.md takes apart: S 2/s → B0 (α 0.2) → B1 (α 0.45 ×3, fails every 20 s)."""
    doc = _doc([("B0", 0.2, 1.0, 1), ("B1", 0.45, 0.0, 3)], [("S", "B0"), ("B0", "B1")], rate=2.0, idle=0.05, q0=q0)
    doc["settings"].update(failures=True, min_reboot_time=0.5, max_reboot_time=2.0, replay="paced")
    doc["bolts"][1]["min_ttf"] = 20
    return doc


def test_lumps_sharpen_the_first_bolt(monkeypatch: pytest.MonkeyPatch) -> None:
    def first_bolt() -> Fraction:
        bolt = next(b for b in LatencyAnalysis(parse_topology(_chain())).bolts.values() if b.name == "B0")
        assert bolt.sojourn is not None
        return bolt.sojourn

    lumped = first_bolt()
    monkeypatch.setattr("app.core.latency.bounds.lumps_of", lambda *args: {})
    affine = first_bolt()
    assert lumped < affine * 3 / 5, (lumped, affine)  # (2.695 s against 4.68 s)


def test_a_pipeline_through_bolts_that_may_fail_is_paid_once() -> None:
    """S → B0 (fails) → B1 → B2 (fails), σ = 1: the three as one server beat the sum of their own bounds
    (docs/latency.md, "Pipelines with losses"); tests/unit/test_latency_runs.py checks no surviving tree exceeds it.
    (Bursts of 2: with 1, each emission and its replay fit one take, and "Spaced arrivals" is sharper.)"""
    line = _doc([("B0", 0.3, 1.0, 3), ("B1", 0.45, 1.0, 2), ("B2", 0.45, 0.0, 2)],
                [("S", "B0"), ("B0", "B1"), ("B1", "B2")], rate=1.0, burst=2)
    line["settings"].update(failures=True, min_reboot_time=0.5, max_reboot_time=2.0, replay="paced")
    line["bolts"][0]["min_ttf"], line["bolts"][2]["min_ttf"] = 8, 20
    lat = LatencyAnalysis(parse_topology(line))
    spout = lat.spouts()["S"]
    assert spout.paid_once == [["B0", "B1", "B2"]], spout
    own = sum((b.sojourn for b in lat.bolts.values() if b.sojourn is not None), Fraction(0))
    assert spout.bound is not None and spout.bound < own


def _episodes(run: Any, name: str) -> list[int]:
    """Per failure of the bolt in a run of tests/adversary.py: the tuples it lost, at the failure and while down."""
    out: list[int] = []
    for p in run.positions:
        step = p["bolts"][name]
        if step.get("fail"):
            out.append(0)
        if step.get("phase") == "failed":
            out[-1] += step.get("lost", 0)
    return out


def test_one_failure_loses_no_more_than_the_bolts_own_arrivals_allow() -> None:
    """docs/latency.md, "Losses from the bolt's own arrivals": every failure of the random failure topologies, timed
    after a slow stretch or as soon as min_ttf allows, loses at most ℓ'_j."""
    rng = random.Random(23)
    failures = 0
    for _ in range(12):
        doc = _with_failures(_random_doc(rng, rng.choice(["chain", "tree"])), rng)
        topo = parse_topology(doc)
        lat = LatencyAnalysis(topo)
        e, model = lat.e, lat.model
        if model is None:  # (no bolt drew a min_ttf)
            continue
        names = {b["id"]: b["name"] for b in doc["bolts"]}
        bounds = {}
        for j in model.min_ttf:
            arrival = lat.bolts[j].arrival
            if arrival is not None:
                bounds[names[j]] = loss_bound(arrival, e.burst[j], e.longest_phase[j], e.slowest_take[j], lat.idle,
                                              model.max_reboot, lat.q0)
        order = list(names.values())
        runs = [(policy, None) for policy in _policies(rng, order)[:2]] + _timed_failures(rng, order)[:2]
        for policy, fail_when in runs:
            run = play(doc, policy, Fraction(90), max_positions=20_000, fail_when=fail_when)
            for name, ell in bounds.items():
                assert ell is not None
                for lost in _episodes(run, name):
                    assert lost <= ell, (doc, name, lost, ell)
                    failures += 1
    assert failures >= 40, failures


def test_the_loss_bound_sharpens_a_tree_with_initial_tuples() -> None:
    """S 2/s → B1 (α 0.1 ×3) → B2 (α 0.45 ×2), B1 → B3 (α 0.3 ×3, fails), Q₀ = 2: B3's failures lose at most 19
    tuples, not the fixpoint's 34.04, and the spout's bound falls from 3.57 s to 2.895 s."""
    doc = _doc([("B1", 0.1, 1.0, 3), ("B2", 0.45, 0.0, 2), ("B3", 0.3, 0.0, 3)],
               [("S", "B1"), ("B1", "B2"), ("B1", "B3")], rate=2.0, q0=2)
    doc["settings"].update(failures=True, min_reboot_time=0.5, max_reboot_time=2.0, replay="paced")
    doc["bolts"][2]["min_ttf"] = 40
    lat = LatencyAnalysis(parse_topology(doc))
    b3 = lat.bolts["B3"]
    assert b3.arrival is not None and lat.model is not None
    assert loss_bound(b3.arrival, 3, lat.e.longest_phase["B3"], lat.e.slowest_take["B3"], lat.idle,
                      lat.model.max_reboot, lat.q0) == 19
    bound = lat.spouts()["S"].bound
    assert bound is not None and bound < Fraction(29, 10), bound
