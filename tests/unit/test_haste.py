"""Haste schedules (docs/simulation.md, "Haste"; app/core/tcn/schedule_haste.py, app/core/tcn/simulate_pace.py): a
target slowest except while a failing bolt below it is down. The published focused-crawler cfg-5 with failures on
grows so (a certified lasso: WpDeserializer works off its queue into expander while expander is down, and each of
the doubled tuples lost there comes back as a replay), the paces change legally (the certifier accepts the runs),
and the schedules are only built where they can matter."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.trace import Trace, expanded_trace
from app.core.rates import rate_check
from app.core.tcn import schedule_order
from app.core.tcn.check.certify import certify
from app.core.tcn.cones import bounded_in_cones
from app.core.tcn.flood_run import build_threshold_run
from app.core.tcn.network import build_network
from app.core.tcn.schedule import Haste, Switch, unaligned_schedule
from app.core.tcn.schedule_haste import haste_schedules
from app.core.tcn.simulate import Goal, build_finite_run, build_lasso
from app.core.topology import Topology, parse_topology

CFG5 = Path(__file__).resolve().parents[1] / "data" / "dvert" / "icfem-focused-crawler-reduced-cfg-5.json"


def _cfg5() -> Topology:
    from app.cli.inputs import read_topology

    topo = read_topology(str(CFG5))
    return topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})})


def test_cfg5_wpdeserializer_grows_by_a_certified_haste_lasso(monkeypatch: pytest.MonkeyPatch) -> None:
    topo = _cfg5()
    net = build_network(topo, ["WpDeserializer"])
    # only the haste schedules (the search plays the probes first, seconds more)
    monkeypatch.setattr(schedule_order, "schedules", lambda net, target, cancelled, haste=(): iter(haste))
    lasso = build_lasso(net, "WpDeserializer")
    assert lasso.trace is not None and lasso.schedule is not None, lasso.message
    assert lasso.schedule.haste["WpDeserializer"].watch == "expander"
    found = certify(lasso.trace, checked=["WpDeserializer"])
    assert found.ok, found.problems
    assert found.growth_per_loop["WpDeserializer"] > 0
    # both proofs speak of the same runs: the rate check calls none of the four bounded
    report = rate_check(topo)
    names = ["WpDeserializer", "expander", "articleExtraction", "mediaExtraction"]
    assert all(report.bolts[n].status != "bounded" for n in names)
    assert all(b.status != "bounded" for b in bounded_in_cones(topo, report, names)[0].bolts.values())


def _small(**settings: Any) -> dict[str, Any]:
    """S (2 tuples/s) → T (σ 2, one tuple per 0.3..0.5 s, then up to 0.5 s idle) → K (fails after 5 s, down 1..2 s)."""
    return {
        "schema_version": 6, "name": "haste",
        "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": 2, "burst": 1}],
        "bolts": [{"kind": "bolt", "id": "T", "name": "T", "alpha": 0.4, "sigma": 2, "parallelism": 1},
                  {"kind": "bolt", "id": "K", "name": "K", "alpha": 0.1, "sigma": 0, "parallelism": 10,
                   "min_ttf": 5}],
        "subscriptions": [{"id": "a", "source": "S", "target": "T", "grouping": "shuffle", "fields": []},
                          {"id": "b", "source": "T", "target": "K", "grouping": "shuffle", "fields": []}],
        "settings": {"tolerance": 0.25, "max_idle_time": 0.5, "init_queues": 0, "emission": "exact",
                     "min_reboot_time": 1, "max_reboot_time": 2, "failures": True, **settings},
        "verification": {"k": 10, "checked": []},
    }


def test_a_hasting_bolt_runs_fast_exactly_while_the_watched_bolt_is_down_and_the_run_is_legal() -> None:
    net = build_network(parse_topology(_small()), ["T"])
    base = unaligned_schedule(net, "T")
    assert base is not None
    hold = Switch("T", Fraction(1, 2), Fraction(1, 2), False)  # (keeps the finite run going)
    sched = replace(base, fail={"K": (Fraction(5), Fraction(2))}, haste={"T": Haste("K", Fraction(3, 10), Fraction(0))},
                    switch_at=Fraction(10**6), switches=(hold,))
    goal = Goal("T", 12, "T")
    out = build_finite_run(net, sched, goal)
    assert isinstance(out, Trace), out
    assert certify(out, checked=["T"], threshold=12).ok
    trace = expanded_trace(out)
    taken, fast, slow, down = None, 0, 0, False
    for p in trace.positions:
        t, k, tb = Fraction(p.time), p.bolts["K"], p.bolts["T"]
        if tb.emit and taken is not None:
            if t - taken == Fraction(3, 10):
                fast += 1
                assert down or k.recover, f"T hasted at {t} s while K was up"
            else:
                slow += 1
        down = (down or k.fail) and not k.recover
        if tb.take:
            taken = t
    assert fast > 0 and slow > 0


def test_haste_schedules_only_where_they_can_matter() -> None:
    def count(doc: dict[str, Any], target: str = "T") -> int:
        return len(list(haste_schedules(build_network(parse_topology(doc), [target]), target)))

    assert count(_small()) == 1
    one = _small()
    one["bolts"][0]["sigma"] = 1  # no gain: one lost tuple per tuple T took, one replay each
    assert count(one) == 0
    assert count(_small(replay="at-once")) == 0
    slow_spout = _small()
    slow_spout["spouts"][0]["rate"] = 0.3  # twice its fresh tuples stay below T's slowest pace: T never backs up
    assert count(slow_spout) == 0
    assert count(_small(), "K") == 0  # nothing fails below K
    from app.cli.inputs import read_topology

    off = read_topology(str(CFG5))  # as published: failures off
    assert len(list(haste_schedules(build_network(off, ["WpDeserializer"]), "WpDeserializer"))) == 0
    assert len(list(haste_schedules(build_network(_cfg5(), ["WpDeserializer"]), "WpDeserializer"))) == 1


def test_cfg5_expander_has_a_certified_threshold_run_below_the_growing_wpdeserializer() -> None:
    """The flood's threshold run (docs/boundedness.md, "The threshold run"): WpDeserializer backs up in phase 1, then
    drains into expander at its fastest; the run is a threshold witness the certifier accepts."""
    cone = build_network(_cfg5(), ["expander"]).topology
    out = build_threshold_run(cone, ["WpDeserializer"], "expander", 100)
    assert not isinstance(out, str), out
    trace, _, reached = out
    assert reached >= 100
    assert certify(trace, checked=["expander"], threshold=100).ok


def test_runs_under_random_haste_schedules_are_legal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small random topologies S → T (σ > 1) → K (fails) [→ L]: every finite run and every lasso the simulator plays
    under their haste schedules is accepted by the certifier (the pace changes keep every rule)."""
    rng = random.Random(7)
    monkeypatch.setattr(schedule_order, "schedules", lambda net, target, cancelled, haste=(): iter(haste))
    played = 0
    for _ in range(8):
        doc = _small(tolerance=rng.choice([0, 0.1, 0.25]), max_idle_time=rng.choice([0, 0.2, 0.5]),
                     min_reboot_time=1, max_reboot_time=rng.choice([1, 2, 3]))
        doc["spouts"][0]["rate"] = rng.choice([2, 3, 4])
        doc["bolts"][0].update(alpha=rng.choice([0.3, 0.4, 0.6]), sigma=rng.choice([1.5, 2, 3]),
                               parallelism=rng.choice([1, 2]))
        doc["bolts"][1].update(min_ttf=rng.choice([2, 3, 5]), sigma=rng.choice([0, 1]))
        if doc["bolts"][1]["sigma"]:
            doc["bolts"].append({"kind": "bolt", "id": "L", "name": "L", "alpha": 0.2, "sigma": 0, "parallelism": 4})
            doc["subscriptions"].append({"id": "c", "source": "K", "target": "L", "grouping": "shuffle",
                                         "fields": []})
        net = build_network(parse_topology(doc), ["T"])
        slowest = net.bolts[0].alpha * (1 + net.tolerance)
        for sched in haste_schedules(net, "T"):
            hold = (Switch("T", slowest, net.max_idle, False),)  # (never made: keeps the finite run going)
            out = build_finite_run(net, replace(sched, switch_at=Fraction(10**6), switches=hold), Goal("T", 15, "T"),
                                   max_cells=40_000)
            if isinstance(out, Trace):
                assert certify(out, checked=["T"], threshold=15).ok
                played += 1
            lasso = build_lasso(net, "T", max_cells=40_000)
            if lasso.trace is not None:
                assert certify(lasso.trace, checked=["T"]).ok
                played += 1
    assert played >= 4
