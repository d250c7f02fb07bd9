"""At-once storms whose tails drain over several failure cycles (docs/boundedness.md, "Failures", "At once: tails that
drain over several cycles"): random and adversarial legal runs never pass the bounds, and the sweep's bolts it
decides are bounded."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from app.core.failures import failure_model
from app.core.rates import RateFigures
from app.core.rates.curves import Curve
from app.core.rates.failures_check import failure_check
from app.core.rates.tails import over_cycles
from app.core.topology import parse_topology
from tests.unit.test_rates_failures import Run, check_run
from tests.unit.worst_runs import pushed_losses


class Adversary(Run):
    """Every failing bolt fails as soon as min_ttf allows (plus a fixed offset per bolt, to time one failure's replays
    just before another's), and stays down max_reboot; every other choice as in `Run`."""

    offsets: dict[str, Fraction] = {}

    def fail_time(self, up: Fraction, bolt: str) -> Fraction | None:
        return up + self.model.min_ttf[bolt] + self.offsets.get(bolt, Fraction(0))

    def reboot(self) -> Fraction:
        return self.model.max_reboot


def _sweep(name: str, bolts: list[dict[str, Any]], subs: list[tuple[str, str]]) -> dict[str, Any]:
    return {"name": name, "spouts": [{"name": "S", "rate": 2, "burst": 1}], "bolts": bolts,
            "subscriptions": [{"source": u, "target": v} for u, v in subs],
            "settings": {"tolerance": 0, "max_idle_time": 0, "emission": "dvert", "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "at-once"}}


def random_116() -> dict[str, Any]:
    """Random #116 of bench/verdict_sweep.py (seed 46): B0 fails, its own replays outrun it as inflow (2.1 against
    2.088 tuples/s), yet its pending tuples stay few."""
    return _sweep("r116", [
        {"name": "B0", "alpha": 0.479, "sigma": 1.0, "parallelism": 1, "min_ttf": 200.0},
        {"name": "B1", "alpha": 0.519, "sigma": 2.0, "parallelism": 2},
        {"name": "B3", "alpha": 0.371, "sigma": 2.0, "parallelism": 2}],
        [("S", "B0"), ("S", "B1"), ("B0", "B3")])


def random_277() -> dict[str, Any]:
    """Random #277 of the sweep, its B0's declared stream (σ 0.5, B0's only subscribed stream) written as its default
    stream (the players here read default streams only; the same bounds): B2's replays reach B1 in bursts that do not
    drain within one of B1's up stretches."""
    return _sweep("r277", [
        {"name": "B0", "alpha": 0.361, "sigma": 0.5, "parallelism": 1},
        {"name": "B1", "alpha": 0.465, "sigma": 0.5, "parallelism": 1, "min_ttf": 200.0},
        {"name": "B2", "alpha": 0.429, "sigma": 2.0, "parallelism": 2, "min_ttf": 200.0}],
        [("S", "B0"), ("S", "B1"), ("B0", "B2"), ("B1", "B2")])


def tails(f_ttf: float, g_ttf: float) -> dict[str, Any]:
    """F (2.5 tuples/s against S's 2) fails every f_ttf s; G, below B, fails every g_ttf s and S replays its losses
    (up to 34 at once) into F, which drains them over several of its up stretches."""
    data = _sweep("tails", [
        {"name": "F", "alpha": 0.4, "sigma": 0, "parallelism": 1, "min_ttf": f_ttf},
        {"name": "B", "alpha": 0.2, "sigma": 1, "parallelism": 1},
        {"name": "G", "alpha": 0.1, "sigma": 0, "parallelism": 10, "min_ttf": g_ttf}],
        [("S", "F"), ("S", "B"), ("B", "G")])
    data["settings"]["emission"] = "exact"
    return data


CASES = [("r116", random_116(), {}, 420), ("r277", random_277(), {"B2": Fraction(-1, 2)}, 450),
         ("tails-40", tails(40, 200), {"G": Fraction(-1, 2)}, 450), ("tails-60", tails(60, 100), {}, 350)]


@pytest.mark.parametrize(("name", "data", "offsets", "horizon"), CASES, ids=[c[0] for c in CASES])
def test_no_random_or_adversarial_run_passes_the_bounds_over_several_cycles(
        name: str, data: dict[str, Any], offsets: dict[str, Fraction], horizon: int) -> None:
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None and check.bounds.storm, name
    ids = {b.name: b.id for b in topo.bolts}
    Adversary.offsets = {ids[n]: off for n, off in offsets.items()}
    failed = relost = 0
    for player in (Run, Adversary):
        run = player(topo, 3, Fraction(horizon)).go()
        check_run(topo, check, run)  # every queue, loss per failure, curve, and the storm's own queue bound
        failed += sum(len(v) for v in run.losses.values())
        relost += run.relost
    assert failed > 0 and relost > 0  # the runs failed, and lost replays again while down


def test_the_sweeps_bolts_and_the_tails_are_bounded_where_one_cycle_was_not_enough() -> None:
    """#116 B0 (its own queue), #277 B0 and B1, F of the tails case: `bounded`, with the figures of
    docs/boundedness.md."""
    for data, bolts in ((random_116(), {"B0": 20}), (random_277(), {"B1": 95, "B0": None}),
                        (tails(40, 200), {"F": None})):
        topo = parse_topology(data)
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        by_name = {b.name: check.bolts[b.id] for b in topo.bolts}
        for name, lost in bolts.items():
            assert by_name[name].status == "bounded", (data["name"], name, by_name[name].note)
            assert lost is None or by_name[name].lost == lost
    assert "its own replays aside" in by_name["F"].note


def test_over_cycles_is_the_largest_value_over_whole_cycles() -> None:
    """A flow with a steep start (8 tuples/s for 10 s) gains over a second cycle; a flat one does not; a flow whose
    cycle brings more than it drains has no bound."""
    steep = Curve(((Fraction(8), Fraction(0)), (Fraction(1), Fraction(70))))
    c, busy, cycle = Fraction(2), Fraction(1, 2), Fraction(5)
    values = [(steep.shifted((n - 1) * cycle + busy).excess(c) or 0) - (n - 1) * 9 for n in range(1, 40)]
    assert over_cycles(steep, c, busy, cycle, Fraction(9)) == max(values) > values[0]
    flat = Curve.affine(1, 3)
    assert over_cycles(flat, c, busy, cycle, Fraction(9)) == flat.shifted(busy).excess(c)
    assert over_cycles(flat, c, busy, cycle, Fraction(4)) is None


def storming_batches() -> dict[str, Any]:
    """S at 2 tuples/s exactly (τ 0) into F alone: four executors, α 1.2 s (3.33 tuples/s), min_ttf 40 s, reboots up
    to 2 s: while F works on a batch of 4 two more tuples come, so it may hold X = 5 at a failure, and S's m = 4
    emissions while it is down each send everything it lost since the one before."""
    return {"name": "batches", "spouts": [{"name": "S", "rate": 2, "burst": 1}],
            "bolts": [{"name": "F", "alpha": 1.2, "sigma": 0, "parallelism": 4, "min_ttf": 40}],
            "subscriptions": [{"source": "S", "target": "F"}],
            "settings": {"tolerance": 0, "max_idle_time": 0, "emission": "exact", "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "at-once"}}


def test_runs_pushed_to_the_worst_timing_reach_the_storms_loss_bound() -> None:
    """Pushed runs (tests/unit/worst_runs.py): F fails holding 5 (a batch of 4 and one arrival) just before an
    emission of S, and the 4 emissions while it is down lose 6, 7, 8 and 9: 35, the bound (m+1)·X + m(m+1)/2
    exactly, so every weight of X below m + 1 is refuted (bench/RESULTS.md, "Runs pushed to the worst timing")."""
    lost, bound, kinds = pushed_losses(storming_batches(), "F", (1, 20), 70)
    assert "storm" in kinds and lost == bound == 35
