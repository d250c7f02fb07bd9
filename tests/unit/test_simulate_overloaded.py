"""A failing bolt that cannot keep up (app/core/tcn/schedule.py, docs/simulation.md, "Failures").

Distilled from a random topology of bench/verdict_sweep.py: S (2/s, τ 0.1) feeds B0 (α 0.485, one at a time,
min_ttf 20 s) and B1 (α 0.38, two at a time, the target); paced replays, reboots of 1 to 2 s. B0 takes at most
1.71 tuples/s against up to 2.22 arriving, so its queue piles up while it is up and each failure loses all of it;
replayed, those losses raise B0's own inflow, so it loses more, until S replays one tuple per fresh one. B1 then
receives up to 4.44 tuples/s against its slowest 4.27: it grows, in a lasso of one failure cycle. The fluid
estimate that ranks the schedules must follow the replays that far (a few rounds leave it short of the target's
capacity, and the aligned schedules of that plan are dropped), else no lasso is found within the first pass.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from app.core.formats.trace import expanded_trace
from app.core.tcn import schedule, simulate
from app.core.tcn.check.certify import certify
from app.core.tcn.network import build_network
from app.core.tcn.schedule import aligned_schedule, expected_growth, whole_flow_multiples
from app.core.tcn.search_lassos import FIRST_PASS_CELLS
from app.core.tcn.simulate import build_lasso
from app.core.topology import parse_topology


def overloaded() -> dict[str, Any]:
    return {"name": "overloaded-failing", "spouts": [{"name": "S", "rate": 2, "burst": 1}],
            "bolts": [{"name": "B0", "alpha": 0.485, "sigma": 0.5, "parallelism": 1, "min_ttf": 20},
                      {"name": "B1", "alpha": 0.38, "sigma": 1, "parallelism": 2}],
            "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
            "settings": {"tolerance": 0.1, "max_idle_time": 0.05, "emission": "exact", "failures": True,
                         "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced"}}


def test_the_estimate_follows_the_replays_to_their_fixpoint() -> None:
    net = build_network(parse_topology(overloaded()), ["B1"])
    fail = {"B0": (Fraction(20), Fraction(2))}
    sched = aligned_schedule(net, "B1", Fraction(44), whole_flow_multiples(net, "B1"), fail, frozenset({"B0"}))
    assert sched is not None
    # in 44 s: 97 fresh tuples, and as many replays once S replays one per fresh tuple, against B1's slowest
    # 95 cycles of two: B1 grows by 4 per 44 s (after four rounds the estimate still had it shrinking)
    assert sched.period is not None and sched.period / sched.gap["S"] == 97
    assert abs(expected_growth(net, "B1", sched, False) - 4 / 44) < 1e-3
    assert expected_growth(net, "B1", sched, False, Fraction) > 0

def test_the_first_pass_finds_the_lasso_of_a_failure_cycle() -> None:
    net = build_network(parse_topology(overloaded()), ["B1"])
    lasso = build_lasso(net, "B1", total_cells=FIRST_PASS_CELLS)
    assert lasso.trace is not None, lasso.message
    assert "aligned to a period" in lasso.message and "B0 fails" in lasso.message  # one failure cycle, repeated
    assert lasso.trace.k < 10_000
    cert = certify(lasso.trace, checked=["B1"])
    assert cert.ok, cert.problems
    trace = expanded_trace(lasso.trace)
    loop = trace.positions[trace.loop_start:]
    assert any(p.bolts["B0"].fail for p in loop)  # the loop holds B0's failure


def at_once_storm() -> dict[str, Any]:
    """Distilled from another random topology of the sweep: S (2/s, τ 0) feeds B0 (α 0.377, two at a time,
    min_ttf 3 s, at-once replays) and the target B1 (α 0.465, two at a time: 4.3 tuples/s)."""
    return {"name": "at-once-storm", "spouts": [{"name": "S", "rate": 2, "burst": 1}],
            "bolts": [{"name": "B0", "alpha": 0.377, "sigma": 1, "parallelism": 2, "min_ttf": 3},
                      {"name": "B1", "alpha": 0.465, "sigma": 0.5, "parallelism": 2}],
            "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
            "settings": {"tolerance": 0, "max_idle_time": 0, "emission": "dvert", "failures": True,
                         "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"}}


def test_a_failure_timed_between_emissions_makes_the_storm_grow_the_target() -> None:
    """Failing at min_ttf (3 s, at an emission) B0 has finished its batch and loses the arrival only; while it is
    down 2 s, three more emissions carry the backlog and are lost again: replays 1 + 2 + 3 + 4 per 5 s, B1
    receives 2 + 2 tuples/s and keeps up. Timed an eighth of a second later, B0 also loses its batch in
    progress and four emissions fall while it is down: 1 + 2 + 3 + 4 + 5 per 5 s, 5 tuples/s against 4.3."""
    net = build_network(parse_topology(at_once_storm()), ["B1"])
    lasso = build_lasso(net, "B1", total_cells=FIRST_PASS_CELLS)
    assert lasso.trace is not None, lasso.message
    assert "first at 3.125 s" in lasso.message
    assert any("fails every 5 s, down 2 s)" in tried and "periodic without the target growing" in tried
               for tried in lasso.schedules_tried)  # the same plan untimed: no growth
    cert = certify(lasso.trace, checked=["B1"])
    assert cert.ok, cert.problems


def batch_lost() -> dict[str, Any]:
    """Distilled from a third random topology of the sweep: S (1/s, τ 0) feeds the target B0 (α 0.817, one at a
    time: at its slowest, waiting 0.05 s, 1.153 tuples/s) and B1 (α 0.94, two at a time, min_ttf 20 s, paced)."""
    return {"name": "batch-lost", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
            "bolts": [{"name": "B0", "alpha": 0.817, "sigma": 0.5, "parallelism": 1},
                      {"name": "B1", "alpha": 0.94, "sigma": 1, "parallelism": 2, "min_ttf": 20}],
            "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
            "settings": {"tolerance": 0, "max_idle_time": 0.05, "emission": "exact", "failures": True,
                         "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced"}}


def test_a_probe_finds_the_lasso_the_fluid_ranking_drops() -> None:
    """B1 fails every 22 s, down 2 s. Timed a quarter second after an emission it loses its batch in progress and
    two emissions of a fresh tuple and a replay: 1 + 2 + 2 replays per 22 s, so B0 receives 27 tuples against the
    25.4 it takes at its slowest. The fluid estimate (a share 2/22 of B1's inflow: about 2 per cycle) calls every
    aligned schedule shrinking and drops them; only the unaligned ones were left, whose lasso took 98,583
    positions (6.8 s). The probe of the aligned period of 22 s, timed, closes one of 181 in the first pass."""
    net = build_network(parse_topology(batch_lost()), ["B0"])
    lasso = build_lasso(net, "B0", total_cells=FIRST_PASS_CELLS)
    assert lasso.trace is not None, lasso.message
    assert "aligned to a period of 22 s" in lasso.message and "first at 20.25 s" in lasso.message
    assert "a probe" in lasso.message and lasso.trace.k < 1_000
    cert = certify(lasso.trace, checked=["B0"])
    assert cert.ok, cert.problems


@pytest.mark.parametrize(("doc", "target"), [(overloaded(), "B1"), (at_once_storm(), "B1"), (batch_lost(), "B0")],
                         ids=lambda d: d["name"] if isinstance(d, dict) else d)
@pytest.mark.parametrize("replay", ["paced", "at-once"])
def test_probes_find_every_lasso_the_order_without_them_finds(doc: dict[str, Any], target: str, replay: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Probes only add schedules before the old ones, on a budget of their own (docs/simulation.md, "Probes"): a
    target the order without probes gives a certified lasso gets one with them, on each replay mode."""
    net = build_network(parse_topology({**doc, "settings": {**doc["settings"], "replay": replay}}), [target])
    monkeypatch.setattr(simulate, "PROBE_TOTAL_CELLS", 60_000)  # a small budget of their own: a fast test
    with monkeypatch.context() as patch:
        patch.setattr(schedule, "probes", lambda *args, **kwargs: [])
        old = build_lasso(net, target, total_cells=20_000)
    new = build_lasso(net, target, total_cells=20_000)
    for lasso in (old, new):
        assert lasso.trace is None or certify(lasso.trace, checked=[target]).ok
    assert new.trace is not None or old.trace is None, new.message
