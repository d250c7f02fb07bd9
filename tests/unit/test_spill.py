"""Unbounded by a backlog replayed at once (docs/boundedness.md, "Unbounded: a backlog replayed at once"): the builder
(app/core/tcn/spill.py), its independent checker (app/core/tcn/check/spill.py) with forged certificates, the
threshold run (app/core/tcn/spill_run.py) certified past N, the verdict end to end, and the property that no bolt
called unbounded so is proven bounded, each with a certified run past N."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.core.rates import rate_check
from app.core.results import SpillCertificate, StormRun
from app.core.tcn.check.spill import check_spill_certificate
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.spill import instant_spills
from app.core.tcn.spill_run import build_spill_run
from app.core.topology import Topology, parse_topology

# random #30 of bench/verdict_sweep.py (seed 46): B3 (fails every 20 s at the earliest) receives B1's output, up to
# 1.11 tuples/s against the 1.08 it processes at its slowest, so it backs up without failing; S replays at once
R30: dict[str, Any] = {
    "schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
    "bolts": [{"name": "B0", "alpha": 0.671, "sigma": 0.5, "parallelism": 2},
              {"name": "B1", "alpha": 1.093, "sigma": 1.0, "parallelism": 2},
              {"name": "B2", "alpha": 0.922, "sigma": 2.0, "parallelism": 1},
              {"name": "B3", "alpha": 0.845, "sigma": 2.0, "parallelism": 1, "min_ttf": 20.0}],
    "settings": {"tolerance": 0.1, "max_idle_time": 0, "emission": "exact", "failures": True, "min_reboot_time": 1,
                 "max_reboot_time": 2, "replay": "at-once"},
    "subscriptions": [{"source": "B0", "target": "B2"}, {"source": "B1", "target": "B3"},
                      {"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}]}


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def statuses(topo: Topology) -> dict[str, str]:
    return {n: b.status for n, b in rate_check(topo).bolts.items()}


def spilled(doc: dict[str, Any]) -> dict[str, SpillCertificate]:
    topo = parse_topology(doc)
    return instant_spills(topo, statuses(topo))


def test_a_growing_failing_bolt_spills_into_the_bolts_its_spout_feeds() -> None:
    found = spilled(R30)
    assert set(found) == {"B0", "B1"}  # B2 receives S's tuples only through B0, which caps them
    cert = found["B0"]
    assert (cert.failing, cert.spout) == ("B3", "S") and cert.evidence.growth_certificate is not None
    assert check_spill_certificate(cone(R30, "B0"), cert) == []


@pytest.mark.parametrize("change", ["paced", "none", "off", "no-min-ttf"])
def test_no_spill_without_at_once_replays_or_a_failing_bolt(change: str) -> None:
    doc = json.loads(json.dumps(R30))
    if change in ("paced", "none"):
        doc["settings"]["replay"] = change
    elif change == "off":
        doc["settings"]["failures"] = False
    else:
        del doc["bolts"][3]["min_ttf"]
    assert spilled(doc) == {}


def _forged(doc: dict[str, Any], cert: SpillCertificate, **update: Any) -> list[str]:
    return check_spill_certificate(doc, cert.model_copy(update=update))


def test_the_checker_rejects_forged_certificates() -> None:
    cert = spilled(R30)["B0"]
    doc = cone(R30, "B0").model_dump(mode="json")
    assert _forged(doc, cert) == []
    paced = json.loads(json.dumps(doc))
    paced["settings"]["replay"] = "paced"
    assert "not at-once" in " ".join(check_spill_certificate(paced, cert))
    assert "never fails" in " ".join(_forged(doc, cert, failing="B1"))  # B1 has no min_ttf
    assert "another ordinary bolt" in " ".join(_forged(doc, cert, target="B3", failing="B3"))
    # the evidence is B3's growth proof: about another bolt than the one said to fail
    wrong = cert.evidence.model_copy(update={"growth_certificate": cert.evidence.growth_certificate.model_copy(
        update={"target": "B1"})})  # type: ignore[union-attr]
    assert "evidence" in " ".join(_forged(doc, cert, evidence=wrong))
    assert "no trace" in " ".join(_forged(doc, cert, run=StormRun(threshold=5, reached=5)))


def test_the_checker_rejects_a_target_the_spout_does_not_feed_or_the_failing_bolt_itself() -> None:
    cert = spilled(R30)["B0"]
    below = cone(R30, "B2").model_dump(mode="json")  # B2 receives S's tuples only through B0
    assert "another ordinary bolt" in " ".join(_forged(below, cert, target="B2"))
    fed = json.loads(json.dumps(R30))  # S feeds B3 too: still, B3's own burst is lost while it is down
    fed["subscriptions"].append({"source": "S", "target": "B3"})
    assert "another ordinary bolt" in " ".join(_forged(cone(fed, "B3").model_dump(mode="json"), cert, target="B3"))


def test_the_checker_rejects_a_spout_whose_trees_do_not_reach_the_failing_bolt() -> None:
    """T, a second spout feeding B0 only: its trees never reach B3, so it replays none of B3's losses."""
    doc = json.loads(json.dumps(R30))
    doc["spouts"].append({"name": "T", "rate": 1.0, "burst": 1})
    doc["subscriptions"].append({"source": "T", "target": "B0"})
    cert = spilled(doc)["B0"]
    assert cert.spout == "S"
    problems = check_spill_certificate(cone(doc, "B0"), cert.model_copy(update={"spout": "T"}))
    assert any("do not reach" in p for p in problems)


def test_a_threshold_run_past_n_is_certified() -> None:
    cert = spilled(R30)["B0"]
    topo = cone(R30, "B0")
    found = build_spill_run(topo, cert, 20)
    assert not isinstance(found, str), found
    trace, reached = found
    assert reached >= 20
    with_run = cert.model_copy(update={"run": StormRun(threshold=20, reached=reached, trace_index=0)})
    assert check_spill_certificate(topo, with_run, None, trace) == []
    assert any("not certified" in p for p in check_spill_certificate(topo, with_run.model_copy(
        update={"run": StormRun(threshold=reached + 1, reached=reached, trace_index=0)}), None, trace))


def test_verify_answers_unbounded_with_the_spill_and_its_run() -> None:
    result = verify(parse_topology(R30), SearchOptions(timeout_s=20, flood_run=20))
    v = result.bolts["B0"]
    assert v.verdict == "unbounded" and v.method == "storm proof" and v.spill_certificate is not None
    assert v.spill_certificate.run is not None and v.spill_certificate.run.reached >= 20
    assert "replays all of them at once" in v.message


def _random_doc(rng: random.Random) -> dict[str, Any]:
    """S into 2-4 bolts, a failing one fed through a bolt near its capacity, at-once replays."""
    n = rng.randint(2, 4)
    bolts = [{"name": f"B{i}", "alpha": round(rng.uniform(0.5, 1.3), 3), "sigma": rng.choice([0.5, 1.0, 2.0]),
              "parallelism": rng.choice([1, 2])} for i in range(n)]
    for b in rng.sample(bolts, rng.randint(1, 2)):
        b["min_ttf"] = rng.choice([3.0, 20.0, 200.0])
    subs = {("S", "B0")} | {(rng.choice(["S", *[f"B{j}" for j in range(i)]]), f"B{i}") for i in range(1, n)}
    return {"schema_version": 1, "name": "spill", "spouts": [{"name": "S", "rate": rng.choice([1.0, 2.0]), "burst": 1}],
            "bolts": bolts, "subscriptions": [{"source": u, "target": v} for u, v in sorted(subs)],
            "settings": {"tolerance": rng.choice([0.0, 0.1]), "max_idle_time": 0, "emission": "exact",
                         "failures": True, "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"}}


def test_no_spilled_bolt_is_proven_bounded_and_each_has_a_run_past_n() -> None:
    """Random at-once topologies: every bolt a spill makes unbounded is not `bounded` by the rate check, and gets a
    certified threshold run past N = 10 (none of them has a growing lasso of its own: its queue empties after each
    burst)."""
    rng = random.Random(46)
    found = 0
    for _ in range(24):
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        status = statuses(topo)
        for name, cert in instant_spills(topo, status).items():
            assert status[name] != "bounded", (doc, name)
            if found < 3:  # a few runs: each takes a fraction of a second
                run = build_spill_run(cone(doc, name), cert, 10)
                assert not isinstance(run, str), (doc, name, run)
                assert run[1] >= 10
            found += 1
    assert found >= 2


def test_the_headline_counts_lassos_not_threshold_runs() -> None:
    from app.cli.verify import headline

    result = verify(parse_topology(R30), SearchOptions(timeout_s=20, flood_run=20))
    runs = sum(1 for v in result.bolts.values() for c in (v.flood_certificate, v.storm_certificate,
                                                            v.spill_certificate) if c is not None and c.run is not None)
    assert runs >= 1 and result.verdict == "counterexample"
    lassos = len(result.traces) - runs
    assert f"in {lassos} certified lasso" in headline(result), headline(result)
