"""A paced spout's replays kept in lumps (docs/latency.md, "Replays in lumps") and pipelines through bolts that may
fail ("Pipelines with losses"): the curve bounds every window of simulated spout runs, and the bounds it gives are
sharper than the affine replay curve's."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.latency.bounds import LatencyAnalysis
from app.core.latency.replays import Lumps
from app.core.topology import parse_topology
from tests.unit.test_latency_runs import _doc


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
