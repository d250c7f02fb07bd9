"""The fluid rate check: hand-computed cases, cycles, published configurations, repair."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.rates import bounded_bolts, rate_check
from app.core.topology import parse_topology

MODELS = Path(__file__).resolve().parents[2] / "models"


def topo(spouts, bolts, subs, tolerance=0.0, idle=0.0):
    return parse_topology({
        "spouts": [{"name": n, "rate": r, "burst": b} for n, r, b in spouts],
        "bolts": [{"name": n, "alpha": a, "sigma": s, "parallelism": c} for n, a, s, c in bolts],
        "subscriptions": [{"source": a, "target": b} for a, b in subs],
        "settings": {"tolerance": tolerance, "max_idle_time": idle},
    })


def test_exact_timing_single_bolt() -> None:
    r = rate_check(topo([("S", 1.0, 1)], [("B", 1.0, 1.0, 2)], [("S", "B")])).bolts["B"]
    assert (r.capacity_min, r.capacity_max, r.inflow_min, r.inflow_max) == (2.0, 2.0, 1.0, 1.0)
    assert r.utilisation == 0.5 and r.status == "bounded"
    assert "at least 2 tuples/s" in r.explanation and "at most 1" in r.explanation


def test_jitter_and_idle_widen_the_intervals() -> None:
    r = rate_check(topo([("S", 2.0, 3)], [("B", 1.0, 1.0, 2)], [("S", "B")], tolerance=0.1, idle=0.1)).bolts["B"]
    assert r.capacity_min == pytest.approx(2 / 1.2)
    assert r.capacity_max == pytest.approx(2 / 0.9)
    assert r.inflow_max == pytest.approx(1 / (0.5 * 0.9))
    assert r.inflow_min == pytest.approx(1 / (0.5 * 1.1))
    assert r.utilisation == pytest.approx(1.0)
    assert r.status == "may-grow"  # only some timings overload it
    assert "at most 1.67" in r.explanation and "may receive 2.22" in r.explanation


def test_grows_at_nominal_rates() -> None:
    r = rate_check(topo([("S", 2.0, 1)], [("B", 1.0, 1.0, 1)], [("S", "B")], tolerance=0.1)).bolts["B"]
    assert r.status == "grows" and r.growth_nominal == pytest.approx(1.0)
    assert "grows by about 1 tuples/s" in r.explanation


def test_outflow_is_capped_by_capacity_and_scaled_by_sigma() -> None:
    report = rate_check(topo([("S", 10.0, 1)], [("B1", 1.0, 1.5, 2), ("B2", 1.0, 0.0, 5)], [("S", "B1"), ("B1", "B2")]))
    assert report.bolts["B1"].status == "grows"
    assert report.bolts["B2"].inflow_max == pytest.approx(3.0)  # 1.5 * min(10, 2)
    assert report.bolts["B2"].status == "bounded"


def test_join_sums_inflows() -> None:
    report = rate_check(topo([("S1", 1.0, 1), ("S2", 2.5, 1)], [("B", 1.0, 1.0, 4)], [("S1", "B"), ("S2", "B")]))
    assert report.bolts["B"].inflow_nominal == pytest.approx(3.5)


def test_cycle_reaches_the_fixpoint() -> None:
    t = topo([("S", 1.0, 1)], [("B1", 1.0, 0.5, 3), ("B2", 1.0, 1.0, 2)], [("S", "B1"), ("B1", "B2"), ("B2", "B1")])
    report = rate_check(t)
    assert report.cyclic
    assert report.bolts["B1"].inflow_max == pytest.approx(2.0)  # 1 + 0.5 * inflow
    assert report.bolts["B2"].inflow_max == pytest.approx(1.0)
    assert report.bolts["B1"].status == "bounded" and report.bolts["B2"].status == "bounded"
    assert report.suggested_parallelism == {"B1": 3, "B2": 2}


def test_cycle_with_gain_one_cannot_be_repaired() -> None:
    t = topo([("S", 1.0, 1)], [("B1", 1.0, 1.0, 3), ("B2", 1.0, 1.0, 3)], [("S", "B1"), ("B1", "B2"), ("B2", "B1")])
    report = rate_check(t)
    assert report.bolts["B1"].status != "bounded"
    assert report.suggested_parallelism["B1"] is None


def test_published_simple_dia_cfg1() -> None:
    report = rate_check(load_topology(MODELS / "simple-DIA-cfg-1.storm.json"))
    assert report.bolts["B2"].status == "grows"
    assert report.bolts["B1"].status == "bounded"
    assert report.bolts["B3"].status == "may-grow"
    assert report.bolts["B2"].utilisation == pytest.approx(4 / 3)


def test_published_focused_crawler_expander_grows() -> None:
    for name in ("focused-crawler-complete", "focused-crawler-reduced-cfg-1"):
        report = rate_check(load_topology(MODELS / f"{name}.storm.json"))
        assert report.bolts["expander"].status == "grows", name


def test_published_cfg5_and_cfg6_are_proven_bounded() -> None:
    for name in ("focused-crawler-reduced-cfg-5", "focused-crawler-reduced-cfg-6"):
        report = rate_check(load_topology(MODELS / f"{name}.storm.json"))
        assert report.all_bounded(), name


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.storm.json")), ids=lambda p: p.stem)
def test_suggestion_is_minimal_and_makes_every_queue_bounded(path: Path) -> None:
    # without failures (with failures the suggestion is raised until proven: tests/unit/test_rates_failures.py)
    t = load_topology(path)
    t = t.model_copy(update={"settings": t.settings.model_copy(update={"failures": False})})
    suggestion = rate_check(t).suggested_parallelism
    ids = {b.name: b.id for b in t.bolts}
    applied = {ids[n]: c for n, c in suggestion.items() if c is not None}
    assert all(bounded_bolts(t, applied).values())
    for name, c in suggestion.items():
        if c is not None and c > 1:
            assert not bounded_bolts(t, {**applied, ids[name]: c - 1})[name]


def test_public_json_shape() -> None:
    data = rate_check(load_topology(MODELS / "simple-DIA-cfg-1.storm.json")).to_public_json()
    assert set(data) == {"bolts", "suggested_parallelism"}
    assert set(data["bolts"]["B2"]) == {"capacity_min", "capacity_max", "inflow_min", "inflow_max", "utilisation",
                                        "status", "explanation", "sigma_effective", "queue_bound"}
