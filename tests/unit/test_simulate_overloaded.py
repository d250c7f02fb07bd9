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

from app.core.formats.trace import expanded_trace
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
