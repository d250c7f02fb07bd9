"""A paced replay backlog bounded per failure cycle (docs/boundedness.md, "Failures", "Paced: the backlog over a failure
cycle"; app/core/rates/paced.py).

The bounds are checked against exact random legal runs (the stepper of tests/unit/test_rates_failures.py: random
timings within the tolerance and max_idle, failures as soon as min_ttf allows or later or where the bolt holds the
most, random reboots, one replay per lost tuple): no queue, loss per failure or backlog of replays may exceed them."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.failures import failure_model
from app.core.rates import RateFigures, rate_check
from app.core.rates.failures_check import failure_check
from app.core.rates.paced import paced_cycle
from app.core.topology import parse_topology
from tests.unit.test_rates_failures import Run, check_run
from tests.unit.worst_runs import Worst, pushed_losses, pushed_picks

SETTINGS = {"min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced", "failures": True}


def sweep(n: int) -> dict[str, Any]:
    """Random #177, #233 and #286 of bench/verdict_sweep.py (seed 46): S paced into B0, which fails; B0's queue
    fills while S replays (up to twice S's fresh tuples, more than B0 processes) and drains over each cycle. (#177's
    B0 → B2 is a declared stream of ratio 0.5 there; the stepper plays `default` streams only, and B0's bounds do not
    depend on what is below it.)"""
    if n == 177:
        return {"name": "r177", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
                "bolts": [{"name": "B0", "alpha": 0.667, "sigma": 2.0, "parallelism": 1, "min_ttf": 20.0},
                          {"name": "B1", "alpha": 0.778, "sigma": 2.0, "parallelism": 1},
                          {"name": "B2", "alpha": 0.744, "sigma": 2.0, "parallelism": 1}],
                "subscriptions": [{"source": "B0", "target": "B1"}, {"source": "B0", "target": "B2"},
                                  {"source": "B1", "target": "B2"}, {"source": "S", "target": "B0"}],
                "settings": {"tolerance": 0.1, "max_idle_time": 0, "emission": "dvert", **SETTINGS}}
    if n == 233:
        return {"name": "r233", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
                "bolts": [{"name": "B0", "alpha": 0.679, "sigma": 0.5, "parallelism": 1, "min_ttf": 200.0},
                          {"name": "B1", "alpha": 0.803, "sigma": 2.0, "parallelism": 2}],
                "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
                "settings": {"tolerance": 0.1, "max_idle_time": 0.05, "emission": "dvert", **SETTINGS}}
    return {"name": "r286", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
            "bolts": [{"name": "B0", "alpha": 0.935, "sigma": 1.0, "parallelism": 1, "min_ttf": 200.0},
                      {"name": "B1", "alpha": 0.735, "sigma": 1.0, "parallelism": 1}],
            "subscriptions": [{"source": "B0", "target": "B1"}, {"source": "S", "target": "B0"}],
            "settings": {"tolerance": 0.0, "max_idle_time": 0.05, "emission": "exact", **SETTINGS}}


def small(rng: random.Random) -> dict[str, Any]:
    """S (paced, bursts) into F, which fails and cannot keep up with twice S's fresh tuples, and into B beside it;
    another failing bolt G on S (its replays reach F too) half of the time; F → D below."""
    rate = rng.choice([1, 2, 3])
    burst = rng.choice([1, 1, 2, 3])
    tau = rng.choice([0, 0.05, 0.1])
    c = rng.choice([1, 2])
    alpha = round(c / rate * rng.uniform(0.55, 0.85), 3)  # F processes between S's fastest pace and twice it
    bolts = [{"name": "F", "alpha": alpha, "sigma": 1, "parallelism": c, "min_ttf": rng.choice([8, 15, 30])},
             {"name": "B", "alpha": round(0.3 / rate, 3), "sigma": 1, "parallelism": 1},
             {"name": "D", "alpha": round(0.4 / rate, 3), "sigma": 1, "parallelism": 2}]
    subs = [{"source": "S", "target": "F"}, {"source": "S", "target": "B"}, {"source": "F", "target": "D"}]
    if rng.random() < 0.5:
        bolts.append({"name": "G", "alpha": round(0.2 / rate, 3), "sigma": 0, "parallelism": 2, "min_ttf": 60})
        subs.append({"source": "S", "target": "G"})
    return {"name": "small", "spouts": [{"name": "S", "rate": rate, "burst": burst}], "bolts": bolts,
            "subscriptions": subs,
            "settings": {"tolerance": tau, "max_idle_time": rng.choice([0, 0.05]), "emission": "exact",
                         "min_reboot_time": 0.5, "max_reboot_time": rng.choice([1, 2]), "replay": "paced"}}


def _played(data: dict[str, Any], seeds: int, horizon: int) -> tuple[int, int]:
    """Plays `seeds` random runs against the bounds; the largest loss and backlog the runs reached."""
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None and check.bounds.paced, data["name"]
    lost = backlog = 0
    for seed in range(seeds):
        run = Run(topo, seed, Fraction(horizon)).go()
        check_run(topo, check, run)
        lost = max(lost, *(max(v, default=0) for v in run.losses.values()))
        backlog = max(backlog, *(max(v) for v in run.backlogs.values()))
    return lost, backlog


@pytest.mark.parametrize("n", [177, 233, 286])
def test_the_sweeps_paced_failing_bolts_are_bounded_and_no_run_passes_their_bounds(n: int) -> None:
    data = sweep(n)
    report = rate_check(parse_topology(data))
    status = {name: bolt.status for name, bolt in report.bolts.items()}
    assert status["B0"] == "bounded"
    if n == 233:
        assert status["B1"] == "bounded"  # beside B0: S's replays of B0's losses, at most 8 per failure
    lost, backlog = _played(data, 2, 5 * (int(data["bolts"][0]["min_ttf"]) + 2))
    assert lost > 0 and backlog > 0  # the runs did fail and replay


def test_no_random_run_of_a_small_paced_topology_passes_the_bounds() -> None:
    rng = random.Random(7)
    played = 0
    for _ in range(12):
        data = small(rng)
        topo = parse_topology(data)
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        if check.bounds is None or not check.bounds.paced:
            continue
        _played(data, 2, 5 * 32)
        played += 1
    assert played >= 4


def test_the_drift_counts_whole_emissions_and_batches() -> None:
    """#286's B0: 202 fresh tuples at most over a cycle of 200 + 2 s, 203 batches at least in 200 s: a drift of 0.
    One tuple per cycle more (min_ttf 199) and the bound is gone; the fluid count alone (1.05 spare) would not say."""
    args = dict(spout="S", emit=1, fast=Fraction(1), slow=Fraction(1), take=1, phase=Fraction("0.935"),
                wait=Fraction("0.985"), down=Fraction(2), q0=Fraction(0), rho=Fraction(0), burst=Fraction(0))
    found = paced_cycle(ttf=Fraction(200), **args)  # type: ignore[arg-type]
    assert found is not None and found.drift == 0
    assert paced_cycle(ttf=Fraction(150), **args) is None  # type: ignore[arg-type]


def test_check_says_what_bounds_the_backlog() -> None:
    """The note, `check --json`'s failures_cycle and the bounds: #286's B0 in plain words."""
    report = rate_check(parse_topology(sweep(286)))
    b0 = report.bolts["B0"]
    assert b0.status == "bounded" and b0.queue_bound == 5 and b0.lost_per_failure == 6
    assert "cannot pile up from one recovery to the next" in b0.failures_cycle
    assert "S sends B0 at most 202 fresh tuples and B0 completes at least 203" in b0.failures_note
    assert report.to_public_json()["bolts"]["B0"]["failures_cycle"] == b0.failures_cycle
    assert "failures_cycle" not in report.to_public_json()["bolts"]["B1"]


def test_no_run_with_the_spout_at_its_fastest_and_the_bolts_at_their_slowest_passes_the_bounds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The backlog piles up fastest when S emits as fast as it may and every bolt, reboot and idle wait takes as long
    as it may: the stepper's picks pushed to those ends most of the time, on #177, #286 and small topologies."""
    rng = random.Random(3)
    cases = [sweep(177), sweep(286), *(small(rng) for _ in range(6))]
    for data in cases:
        topo = parse_topology(data)
        monkeypatch.setattr("tests.unit.test_rates_failures._pick", pushed_picks(topo))
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        if check.bounds is None or not check.bounds.paced:
            continue
        for seed in range(2):
            check_run(topo, check, Run(topo, seed, Fraction(4 * (int(data["bolts"][0]["min_ttf"]) + 2))).go())


def tight() -> dict[str, Any]:
    """A small paced topology (the 10th of `small` with seed 7) on which pushed runs reach the loss bound: S at 2
    tuples/s exactly (τ 0) into F (two executors, α 0.744 s, max_idle 0.05 s, min_ttf 30 s; reboots up to 2 s)."""
    return {"name": "tight", "spouts": [{"name": "S", "rate": 2, "burst": 1}],
            "bolts": [{"name": "F", "alpha": 0.744, "sigma": 1, "parallelism": 2, "min_ttf": 30},
                      {"name": "B", "alpha": 0.15, "sigma": 1, "parallelism": 1},
                      {"name": "D", "alpha": 0.2, "sigma": 1, "parallelism": 2}],
            "subscriptions": [{"source": "S", "target": "F"}, {"source": "S", "target": "B"},
                              {"source": "F", "target": "D"}],
            "settings": {"tolerance": 0, "max_idle_time": 0.05, "emission": "exact", "min_reboot_time": 0.5,
                         "max_reboot_time": 2, "replay": "paced"}}


def test_runs_pushed_to_the_worst_timing_reach_the_loss_bound_and_pass_none() -> None:
    """Pushed runs (tests/unit/worst_runs.py): F fails 30.5 s in holding 4 (a full batch of 2 and 2 waiting), and
    S's 4 emissions while it is down each carry a fresh tuple and a replay: F loses 12, its bound exactly (a bound
    one lower is refuted; bench/RESULTS.md, "Runs pushed to the worst timing")."""
    lost, bound, kinds = pushed_losses(tight(), "F", (121, 385), 70)
    assert "paced" in kinds and lost == bound == 12


def test_where_a_cycle_may_gain_one_tuple_the_worst_timed_run_piles_up_and_no_bound_is_claimed() -> None:
    """S at 1 tuple/s exactly into F (α 0.75 s, max_idle 0.05 s: a batch at most every 0.8 s; min_ttf 10 s, reboots
    up to 2 s). Over a cycle S sends up to 12 fresh tuples, while F, whose first tuple after a recovery may come a
    second late, completes only 11 in the 9 s left: δ = 1. The run at the worst timing (S at its fastest, F at its
    slowest, failing when about to emit a batch, reboots of 2 s: tests/unit/worst_runs.py) does pile up, so no bound
    may be claimed for F's queue, loss or S's backlog; a count with one batch more per busy stretch (δ = 0) would
    claim one, and this run passes it."""
    data = {"name": "gain", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
            "bolts": [{"name": "F", "alpha": 0.75, "sigma": 0, "parallelism": 1, "min_ttf": 10}],
            "subscriptions": [{"source": "S", "target": "F"}],
            "settings": {"tolerance": 0, "max_idle_time": 0.05, "emission": "exact", "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "paced"}}
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    run = Worst(topo, Fraction(400), when="full").go()
    assert max(run.backlogs[topo.spouts[0].id]) >= 30  # (about one more tuple every cycle of 12 s)
    if check.bounds is not None:
        check_run(topo, check, run)
    assert check.bolts[topo.bolts[0].id].status != "bounded"
