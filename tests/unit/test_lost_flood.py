"""Unbounded by a backlog lost into a paced spout (docs/boundedness.md, "Unbounded: a backlog lost into a paced
spout"): the builder (`flood._lost_flood`, through `floods_by_rates`), its independent checker
(app/core/tcn/check/flood.py, `_lost_problems`) with mutated certificates, the threshold run
(`flood_run.build_lost_run`) certified past N, and the property that no bolt called unbounded so is proven bounded
by the rate check."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.trace import expanded_trace
from app.core.rates import rate_check
from app.core.results import FloodCertificate, FloodRun, FloodTerm
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.cones import bounded_in_cones
from app.core.tcn.flood import floods_by_rates
from app.core.tcn.flood_run import build_lost_run
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology

DATA = Path(__file__).resolve().parents[1] / "data" / "lost"
# random #54 of the sweep: B0 (fed by S and B2, 3 tuples/s against 2.23) fails every 20 s; B1 (2.58 tuples/s) and
# B2 (2.5) are fed by S at 2 (tests/data/lost/README.md)
R54 = json.loads((DATA / "random-54.storm.json").read_text())


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def _lost(doc: dict[str, Any]) -> dict[str, FloodCertificate]:
    topo = parse_topology(doc)
    report = rate_check(topo)
    found = floods_by_rates(topo, {n: b.status for n, b in report.bolts.items()})
    return {n: c for n, c in found.items() if c.via is not None}


def _rehashed(doc: dict[str, Any], cert: FloodCertificate, name: str) -> FloodCertificate:
    return cert.model_copy(update={"content_hash": content_hash(cone(doc, name))})


def test_b1_and_b2_are_unbounded_by_b0s_lost_backlog() -> None:
    found = _lost(R54)
    assert set(found) == {"B1", "B2"}
    cert = found["B1"]
    assert (cert.source, cert.via, cert.capacity) == ("B0", "S", "250/97")
    assert [(t.sender, t.stream, t.rate, t.ratio) for t in cert.terms] == [("S", "default", "4/1", "1/1")]
    assert cert.evidence.growth_certificate is not None
    for name, c in found.items():
        assert check_flood_certificate(cone(R54, name), c) == []


def test_the_rate_check_does_not_call_the_targets_bounded() -> None:
    topo = parse_topology(R54)
    report = rate_check(topo)
    for name in ("B1", "B2"):
        assert report.bolts[name].status != "bounded"
        assert bounded_in_cones(topo, report, [name])[0].bolts[name].status != "bounded"


def _mutations(cert: FloodCertificate) -> dict[str, FloodCertificate]:
    term = cert.terms[0]
    return {
        "rate above a fresh tuple and a replay per least gap": cert.model_copy(update={"terms": [
            term.model_copy(update={"rate": "401/100"})]}),
        "ratio above the stream's": cert.model_copy(update={"terms": [term.model_copy(update={"ratio": "11/10"})]}),
        "a term twice": cert.model_copy(update={"terms": [term, term]}),
        "no term from the spout": cert.model_copy(update={"terms": []}),
        "capacity below the smallest": cert.model_copy(update={"capacity": "2/1"}),
        "via a bolt": cert.model_copy(update={"via": "B2"}),
    }


@pytest.mark.parametrize("mutation", list(_mutations(_lost(R54)["B1"])))
def test_the_checker_rejects_a_mutated_certificate(mutation: str) -> None:
    cert = _mutations(_lost(R54)["B1"])[mutation]
    assert check_flood_certificate(cone(R54, "B1"), cert) != [], mutation


def _edited(edit: Any) -> dict[str, Any]:
    doc = copy.deepcopy(R54)
    edit(doc)
    return doc


def test_the_settings_and_the_failing_source_are_needed() -> None:
    """Failures off or at-once replays (no paced drain), or a source that never fails: rejected, the certificate
    rehashed on the edited document so that only that is wrong."""
    cert = _lost(R54)["B1"]
    at_once = _edited(lambda d: d["settings"].update(replay="at-once"))
    never = _edited(lambda d: d["bolts"][0].pop("min_ttf"))
    for doc in (at_once, never):
        whole = parse_topology(doc)  # (B1's cone drops a B0 that never fails)
        problems = check_flood_certificate(whole, cert.model_copy(update={"content_hash": content_hash(whole)}))
        assert any("paced replays and a min_ttf" in p for p in problems), problems


def test_a_spout_whose_trees_do_not_reach_the_source_is_rejected() -> None:
    """S2 (0.2 tuples/s) feeds B1 (2.33 tuples/s) alone: its replays never carry B0's losses (S2's drain, 0.4 and
    S's least 2, would be above B1's capacity)."""
    def add(d: dict[str, Any]) -> None:
        d["spouts"].append({"name": "S2", "rate": 0.2, "burst": 1})
        d["subscriptions"].append({"source": "S2", "target": "B1"})
        d["bolts"][1]["alpha"] = 0.43
    doc = _edited(add)
    cert = _lost(doc)["B1"]
    assert cert.via == "S" and check_flood_certificate(cone(doc, "B1"), cert) == []  # (S reaches B0: accepted)
    via_s2 = cert.model_copy(update={"via": "S2", "terms": [
        FloodTerm(sender="S", stream="default", rate="2/1", ratio="1/1"),
        FloodTerm(sender="S2", stream="default", rate="2/5", ratio="1/1")]})
    problems = check_flood_certificate(cone(doc, "B1"), via_s2)
    assert any("whose trees reach B0" in p for p in problems), problems


def test_a_tie_between_the_drain_and_the_capacity_is_rejected() -> None:
    doc = _edited(lambda d: d["bolts"][1].update(alpha=0.25))  # B1: exactly 4 tuples/s, the drain's 4
    cert = _rehashed(doc, _lost(R54)["B1"], "B1").model_copy(update={"capacity": "4/1"})
    problems = check_flood_certificate(cone(doc, "B1"), cert)
    assert any("not strictly more" in p for p in problems), problems


@pytest.mark.parametrize("name", ["B1", "B2"])
def test_the_threshold_run_is_certified_past_n(name: str) -> None:
    cert = _lost(R54)[name]
    run = build_lost_run(cone(R54, name), cert, 40)
    assert not isinstance(run, str), run
    trace, slow, reached = run
    assert reached >= 40
    with_run = cert.model_copy(update={"run": FloodRun(threshold=40, slow_s=f"{slow.numerator}/{slow.denominator}",
                                                       reached=reached, trace_index=0)})
    assert check_flood_certificate(cone(R54, name), with_run, None, trace) == []
    unrun = cert.model_copy(update={"run": FloodRun(threshold=40, slow_s="1/1", reached=40, trace_index=0)})
    assert check_flood_certificate(cone(R54, name), unrun) != []  # a run without its trace: rejected


def _random_doc(rng: random.Random) -> dict[str, Any]:
    """A failing bolt B0 fed by S (2 tuples/s) that cannot keep up (1.4 to 1.9 tuples/s), and 1-2 bolts fed by S
    alone (and a declared stream of S at ratio 1/4) of 2.4 to 3.3 tuples/s; min_ttf 3 or 20 s, paced."""
    n = rng.randint(2, 3)
    bolts: list[dict[str, Any]] = [{"name": "B0", "alpha": round(rng.uniform(0.53, 0.7), 3), "sigma": 1.0,
                                    "parallelism": 1, "min_ttf": rng.choice([3.0, 20.0])}]
    bolts += [{"name": f"B{i}", "alpha": round(rng.uniform(0.3, 0.42), 3), "sigma": 1.0, "parallelism": 1}
              for i in range(1, n)]
    subs = [{"source": "S", "target": b["name"]} for b in bolts]
    if rng.random() < 0.5:
        subs.append({"source": "S", "target": "B1", "stream": "side"})
    spout = {"name": "S", "rate": 2.0, "burst": 1, "streams": ["side"], "stream_ratio": {"side": 0.25}}
    return {"schema_version": 1, "name": "lost", "spouts": [spout], "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": rng.choice([0.0, 0.1]), "max_idle_time": rng.choice([0.0, 0.05]),
                         "emission": rng.choice(["exact", "dvert"]), "failures": True, "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "paced"}}


def test_no_bolt_a_lost_backlog_makes_unbounded_is_proven_bounded_and_each_has_a_run() -> None:
    """Random paced topologies: every bolt the proof calls unbounded is not proven bounded by the rate check (nor
    per cone), the search does not call it bounded, and it has a certified run past N = 10 × its largest queue in
    any lasso a brief verification finds (at least 10), accepted with its certificate by the checker."""
    rng = random.Random(3)
    lost = 0
    for _ in range(5):
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        found = _lost(doc)
        if not found:
            continue
        report = rate_check(topo)
        per_cone = bounded_in_cones(topo, report, list(found))[0]
        searched = verify(topo, SearchOptions(timeout_s=1))
        for name, cert in found.items():
            assert report.bolts[name].status != "bounded" and per_cone.bolts[name].status != "bounded", (doc, name)
            assert searched.bolts[name].verdict != "bounded", (doc, name)
            largest = max((p.bolts[name].queue for t in searched.traces for p in expanded_trace(t).positions
                           if name in p.bolts), default=0)
            n = 10 * max(largest, 1)
            run = build_lost_run(cone(doc, name), cert, n)
            assert not isinstance(run, str), (doc, name, run)
            trace, slow, reached = run
            with_run = cert.model_copy(update={"run": FloodRun(
                threshold=n, slow_s=f"{slow.numerator}/{slow.denominator}", reached=reached, trace_index=0)})
            assert check_flood_certificate(cone(doc, name), with_run, None, trace) == [], (doc, name)
            lost += 1
    assert lost >= 3, lost


def test_evidence_about_another_bolt_is_rejected() -> None:
    """B1 fails too (every 200 s) and S reaches it, but B0's growth is no evidence that B1 can hold a backlog."""
    cert = _lost(R54)["B2"].model_copy(update={"source": "B1"})
    problems = check_flood_certificate(cone(R54, "B2"), cert)
    assert any(p.startswith("evidence") for p in problems), problems


def test_a_term_from_the_spout_is_needed() -> None:
    """B9 (S alone, 1.67 tuples/s) grows on S's fresh tuples already; S3 (0.1 tuples/s) reaches B0 but sends B9
    nothing: a certificate via S3 with S's least rate alone is no replay drain."""
    def add(d: dict[str, Any]) -> None:
        d["spouts"].append({"name": "S3", "rate": 0.1, "burst": 1})
        d["bolts"].append({"name": "B9", "alpha": 0.6, "sigma": 1.0, "parallelism": 1})
        d["subscriptions"] += [{"source": "S3", "target": "B0"}, {"source": "S", "target": "B9"}]
    doc = _edited(add)
    base = _lost(doc)["B1"]
    cert = base.model_copy(update={"target": "B9", "content_hash": content_hash(cone(doc, "B9")), "via": "S3",
                                   "capacity": "5/3", "terms": [FloodTerm(sender="S", stream="default", rate="2/1",
                                                                          ratio="1/1")]})
    problems = check_flood_certificate(cone(doc, "B9"), cert)
    assert problems == ["no term from S3: B9 must receive its replays"], problems
