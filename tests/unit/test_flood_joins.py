"""Flood proofs through a join (docs/boundedness.md, "Through a join"): a join completes what its slowest branch
delivers, so below a join it adds its slowest branch's least rate, a flooded join needs every branch to drain
faster than its capacity, and a join is never a flood's source. Builder and independent checker, with forgeries."""

from __future__ import annotations

from typing import Any

from app.core.results import BoltVerdict, FloodCertificate, FloodTerm
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.flood import flood_message, prove_flood
from app.core.tcn.flood_run import build_threshold_run
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.topology import Topology, parse_topology


def doc(j_parallelism: int, j_join: bool, x_join: bool = True) -> dict[str, Any]:
    """tests/unit/test_flood_others.py's U (drains at 50/9 tuples/s; it may back up, max_idle 1 s) into J, and X, a
    join of S directly and through A, adding at least S's least rate 10/11 (its slowest branch, not the sum 20/11);
    with `j_join`, J is a join of U and of S2 (10/s, at least 100/11) instead."""
    join = {"join": {"kind": "all"}}
    bolts = [{"name": "U", "alpha": 0.2, "sigma": 1, "parallelism": 1},
             {"name": "A", "alpha": 0.01, "sigma": 1, "parallelism": 1},
             {"name": "X", "alpha": 0.2, "sigma": 1, "parallelism": 2, **(join if x_join else {})},
             {"name": "J", "alpha": 0.1, "sigma": 0, "parallelism": j_parallelism, **(join if j_join else {})}]
    subs = [("S", "U"), ("S", "A"), ("S", "X"), ("A", "X")]
    subs += [("U", "J"), ("S2", "J")] if j_join else [("U", "J"), ("X", "J")]
    return {"schema_version": 5, "name": "joins", "settings": {"tolerance": 0.1, "max_idle_time": 1.0},
            "spouts": [{"name": "S", "rate": 1}, {"name": "S2", "rate": 10}], "bolts": bolts,
            "subscriptions": [{"source": a, "target": b} for a, b in subs]}


def cone(data: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(data), [name]).topology


def flood(data: dict[str, Any], source: str = "U") -> FloodCertificate | None:
    growth = prove_growth(cone(data, "U"), "U")
    assert growth is not None
    verdicts = {source: BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                    growth_certificate=growth)}
    return prove_flood(cone(data, "J"), "J", verdicts, [], lambda n: cone(data, n))


def test_below_a_join_it_adds_its_slowest_branch() -> None:
    """J (8 executors: 800/111 at its slowest) is flooded by U's drain plus X's sum of branches (50/9 + 20/11), not
    by the least branch (50/9 + 10/11): no proof, and a certificate counting X at its branches' sum is rejected;
    with 7 executors (700/111) the least branch is enough."""
    assert flood(doc(8, False)) is None
    cert = flood(doc(7, False))
    assert cert is not None and not cert.join and check_flood_certificate(cone(doc(7, False), "J"), cert) == []
    assert {t.sender: t.rate for t in cert.terms} == {"U": "50/9", "X": "10/11"}
    wide = cone(doc(8, False), "J")
    summed = cert.model_copy(update={"content_hash": content_hash(wide), "capacity": "800/111", "terms": [
        t if t.sender != "X" else t.model_copy(update={"rate": "20/11"}) for t in cert.terms]})
    assert "term X/default: rate 20/11 × ratio 1/1 is above the derived 10/11 × 1" in check_flood_certificate(
        wide, summed)
    # as an ordinary bolt X would add the sum, and then floods J with 8 executors
    plain = flood(doc(8, False, x_join=False))
    assert plain is not None and {t.sender: t.rate for t in plain.terms}["X"] == "20/11"


def test_a_flooded_join_needs_every_branch_to_drain_faster_than_it() -> None:
    """J a join of U (draining at 50/9) and S2 (at least 100/11): it completes at least min(50/9, 100/11) = 50/9
    a second, above its 600/111 with 6 executors: unbounded; with 10 executors (1000/111) the sum 1400/99 would
    flood it but the slowest branch does not, and a certificate taking the sum, or leaving a branch out, is
    rejected."""
    cert = flood(doc(6, True))
    assert cert is not None and cert.join and check_flood_certificate(cone(doc(6, True), "J"), cert) == []
    assert "floods J at 5.556 tuples/s or more (exactly 50/9) on its slowest branch (a join completes no more" in (
        flood_message(cert).text())
    assert flood(doc(10, True)) is None
    wide = cone(doc(10, True), "J")
    moved = cert.model_copy(update={"content_hash": content_hash(wide), "capacity": "1000/111"})
    assert check_flood_certificate(wide, moved) == ["the drain brings 50/9 tuples/s, not strictly more than the "
                                                    "capacity 1000/111"]
    alone = cert.model_copy(update={"terms": [t for t in cert.terms if t.sender == "U"]})
    assert check_flood_certificate(cone(doc(6, True), "J"), alone) == [
        "J is a join and its branch S2/default has no term"]
    assert check_flood_certificate(cone(doc(6, True), "J"), cert.model_copy(update={"join": False}))[0].startswith(
        "join False, but J is a join")


def test_a_join_is_never_the_source_of_a_flood() -> None:
    """A join's growth may be its cache's, which leaves nothing in its queue to drain: the builder takes no join as
    a source, and the checker rejects a certificate that does."""
    data = doc(7, False)
    assert flood(data, source="X") is None
    cert = FloodCertificate(target="J", content_hash=content_hash(cone(data, "J")), source="X",
                            terms=[FloodTerm(sender="X", stream="default", rate="100/9", ratio="1/1")],
                            capacity="700/111", evidence={"trace_index": 0})
    assert check_flood_certificate(cone(data, "J"), cert) == [
        "the source X is a join: its growth may be its cache's, which leaves no backlog in its queue to drain"]


def test_each_flood_through_a_join_has_a_certified_threshold_run() -> None:
    """The product's threshold run (U slow, then draining, J slowest) takes J's queue to N in a finite run the
    certifier, with its own join rule, accepts: below a join, and into a join through its slowest branch."""
    for data, threshold in ((doc(7, False), 12), (doc(6, True), 6)):
        built = build_threshold_run(cone(data, "J"), ["U"], "J", threshold)
        assert not isinstance(built, str), built
        assert built[2] >= threshold
