"""Growth proven by rates through a join (docs/verifier.md, "Growth proven by rates", joins): a join receives the
least of its branches, and a target join whose cache grows is proven by its branches' figures; the independent
checker derives them on its own and rejects each forged figure."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.results import RateGrowthCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.network import build_network
from app.core.tcn.options import SearchOptions
from app.core.tcn.rate_growth import growth_message, prove_growth
from app.core.tcn.search import verify
from app.core.topology import Topology, parse_topology
from tests.unit.test_cli_schema import errors, schema
from tests.unit.test_joins import enrichment, metron_by_message

METRON = Path(__file__).resolve().parents[1] / "data" / "joins" / "metron-enrichment-geo-20ms.storm.json"


def cone(data: dict[str, Any] | Topology, target: str) -> Topology:
    topo = data if isinstance(data, Topology) else parse_topology(data)
    return build_network(topo, [target]).topology


def with_line(cert: RateGrowthCertificate, name: str, **change: Any) -> RateGrowthCertificate:
    return cert.model_copy(update={"bolts": {**cert.bolts, name: cert.bolts[name].model_copy(update=change)}})


def test_metrons_join_cache_grows_by_a_checked_rate_proof() -> None:
    """geo at 20 ms (50 parts/s) against 100 messages/s: geo saturated, every other branch keeps up, the join's
    queue keeps up (it completes 50 of its 1,000 a second) and its cache grows by 50 parts/s per faster branch."""
    topo = cone(parse_topology(json.loads(METRON.read_text())), "enrichmentJoinBolt")
    cert = prove_growth(topo, "enrichmentJoinBolt")
    assert cert is not None and check_growth_certificate(topo, cert) == []
    line = cert.bolts["enrichmentJoinBolt"]
    assert line.role == "cache grows" and (line.inflow_low, line.inflow_high, line.capacity) == ("50/1", "50/1",
                                                                                                 "1000/1")
    rates = {(b.sender, b.stream): (b.rate_low, b.rate_high) for b in line.branches}
    assert rates[("geoEnrichmentBolt", "geo")] == ("50/1", "50/1") and len(rates) == 5
    assert rates[("enrichmentSplitBolt", "message")] == ("100/1", "100/1")
    assert cert.bolts["geoEnrichmentBolt"].role == "saturated"
    text = growth_message(cert).text()
    assert "enrichmentJoinBolt's cache grows" in text and "slowest branch geoEnrichmentBolt (stream 'geo')" in text
    assert "gain 50 per second" in text


def test_the_certified_cache_growth_holds_in_the_independent_key_matched_simulation() -> None:
    """At τ = 0 the schedule is nominal timing: the messages waiting for their geo part in the message-by-message
    simulation of tests/unit/test_joins.py grow at least at the certified rate (a faster branch's least minus the
    slowest's most), up to the constant a period's phase leaves."""
    data = enrichment(geo=0.02)
    cert = prove_growth(cone(data, "join"), "join")
    assert cert is not None and check_growth_certificate(cone(data, "join"), cert) == []
    branches = cert.bolts["join"].branches
    certified = max(Fraction(b.rate_low) for b in branches) - min(Fraction(b.rate_high) for b in branches)
    assert certified == 50
    entries = metron_by_message(data, 4)["entries"]
    (t1, n1), (t2, n2) = next(x for x in entries if x[0] >= 1), entries[-1]
    assert n2 - n1 >= certified * (t2 - t1) - 2


def test_balanced_branches_prove_no_cache_growth_and_a_forged_one_is_rejected() -> None:
    """geo at 5 ms keeps up: every branch delivers exactly 100 parts/s, a tie, so no proof; a certificate claiming
    the cache grows (the message branch raised to 200) is rejected, and so is one stating the tie."""
    data = enrichment(geo=0.005)
    topo = cone(data, "join")
    assert prove_growth(topo, "join") is None
    grows = prove_growth(cone(enrichment(geo=0.02), "join"), "join")
    assert grows is not None
    # the same shape of certificate, about the balanced document: its figures are the derived ones but for the claim
    forged = grows.model_copy(update={"content_hash": content_hash(topo)})
    forged = with_line(forged, "geo", role="keeps up", inflow_low="100/1", inflow_high="100/1", capacity="200/1")
    branches = forged.bolts["join"].branches
    tie = [b.model_copy(update={"rate_low": "100/1", "rate_high": "100/1"}) for b in branches]
    forged = with_line(forged, "join", inflow_low="100/1", inflow_high="100/1", branches=tie)
    problems = check_growth_certificate(topo, forged)
    assert problems == ["join: no branch delivers at least strictly more (100) than another at most (100): its cache "
                        "is not shown to grow"]
    raised = [b.model_copy(update={"rate_low": "200/1"}) if b.sender == "split" else b for b in tie]
    problems = check_growth_certificate(topo, with_line(forged, "join", branches=raised))
    assert problems == ["join: branch split/default: rate_low 200 is above the derived 100"]


def test_each_forged_figure_of_a_join_whose_cache_grows_is_rejected() -> None:
    data = enrichment(geo=0.02)
    topo = cone(data, "join")
    cert = prove_growth(topo, "join")
    assert cert is not None and check_growth_certificate(topo, cert) == []
    branches = cert.bolts["join"].branches
    lowered = [b.model_copy(update={"rate_high": "40/1"}) if b.sender == "geo" else b for b in branches]
    assert check_growth_certificate(topo, with_line(cert, "join", branches=lowered)) == [
        "join: branch geo/default: rate_high 40 is below the derived 50"]
    assert "the certificate states the branches" in check_growth_certificate(
        topo, with_line(cert, "join", branches=branches[1:]))[0]
    assert check_growth_certificate(topo, with_line(cert, "geo", branches=branches))[0] == (
        "geo: states branches, which only a target join whose cache grows has")
    queue_tie = with_line(cert, "join", inflow_high="1000/3")  # raised to the join's capacity: weaker, but a tie
    assert "is not strictly on one side of its capacity" in check_growth_certificate(topo, queue_tie)[0]
    assert check_growth_certificate(topo, cert.model_copy(update={"rounds": 3}))[0].startswith(
        "the certificate states rounds, and the rounds have no join rule")


def test_a_bolt_below_a_join_receives_the_least_branch_not_their_sum() -> None:
    """A sink below the join at 60/s: the join passes on 50 messages/s (its slowest branch), so the sink keeps up
    and no proof is given; a certificate reading the join as the sum of its branches (250/s) is rejected. At 40/s
    the sink grows, proven through the join."""
    def below(alpha: float) -> dict[str, Any]:
        data = enrichment(geo=0.02)
        data["bolts"].append({"name": "sink", "alpha": alpha, "sigma": 0, "parallelism": 1})
        data["subscriptions"].append({"source": "join", "target": "sink"})
        return data

    grows = cone(below(0.025), "sink")
    cert = prove_growth(grows, "sink")
    assert cert is not None and check_growth_certificate(grows, cert) == []
    assert cert.bolts["join"].role == "keeps up" and cert.bolts["join"].inflow_low == "50/1"
    assert cert.bolts["sink"].role == "target" and cert.bolts["join"].branches == []
    keeps = cone(below(1 / 60), "sink")
    assert prove_growth(keeps, "sink") is None
    summed = with_line(cert.model_copy(update={"content_hash": content_hash(keeps)}), "sink", capacity="60/1",
                       inflow_low="150/1", inflow_high="150/1")
    summed = with_line(summed, "join", inflow_low="250/1", inflow_high="250/1")
    problems = check_growth_certificate(keeps, summed)
    assert "sink: inflow_low 150/1 is above the derived least inflow 50" in problems


def test_verify_proves_a_cache_growing_too_slowly_for_the_simulation_by_rates() -> None:
    """S at 10/s feeds J directly and through A at 9.99999 a second: J's cache gains one part every 10^5 s or so,
    whose lasso no simulation budget closes; verify proves it by rates, certified."""
    data = {"schema_version": 5, "name": "slow", "settings": {"tolerance": 0, "max_idle_time": 0},
            "spouts": [{"name": "S", "rate": 10}],
            "bolts": [{"name": "A", "alpha": 0.100001, "sigma": 1, "parallelism": 1},
                      {"name": "J", "alpha": 0.01, "sigma": 1, "parallelism": 1, "join": {"kind": "all"}}],
            "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "J"},
                              {"source": "S", "target": "J"}],
            "verification": {"checked": ["J"]}}
    verdict = verify(parse_topology(data), SearchOptions(timeout_s=60)).bolts["J"]
    assert verdict.verdict == "counterexample" and verdict.method == "rate proof" and verdict.certified
    assert verdict.growth_certificate is not None and verdict.growth_certificate.bolts["J"].role == "cache grows"


def test_check_says_metrons_join_grows_by_a_certified_rate_proof(capsys: pytest.CaptureFixture[str]) -> None:
    """`stormbound check` proves the join's cache growth without a search, its certificate in --json, and its note
    says which proofs have the join rule."""
    assert main(["check", str(METRON), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    found = data["grows_by_rates"]
    assert list(found) == ["enrichmentJoinBolt"] and "enrichmentJoinBolt's cache grows" in found["enrichmentJoinBolt"][
        "message"]
    topo = cone(parse_topology(json.loads(METRON.read_text())), "enrichmentJoinBolt")
    cert = RateGrowthCertificate.model_validate(found["enrichmentJoinBolt"]["growth_certificate"])
    assert check_growth_certificate(topo, cert) == []
    result_schema = schema(capsys, "result")
    assert errors(data, result_schema, result_schema) == []
    assert "the proofs of growth by rates (without a cycle) and the flood proofs (never from a join) have its join " \
        "rule" in " ".join(captured.err.split())
