"""Unbounded by a replay storm (docs/boundedness.md, "Unbounded: a replay storm"): the builder
(app/core/tcn/storm.py), its independent checker (app/core/tcn/check/storm.py) with mutated certificates, the
threshold run (app/core/tcn/storm_run.py) certified past N, the verdict end to end, and the property that no bolt
called unbounded by a storm is proven bounded by the rate check."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.cli import main
from app.core.rates import rate_check
from app.core.results import BoltVerdict, StormCertificate, StormRun
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.storm import prove_storm, storm_verdicts
from app.core.tcn.storm_run import build_storm_run
from app.core.topology import Topology, parse_topology


def _doc(bolts: list[tuple[str, float, int, float | None]], subs: list[tuple[str, str]], *, rate: float = 1.0,
         tolerance: float = 0.2, idle: float = 0.0, replay: str = "at-once") -> dict[str, Any]:
    """One spout S; bolts (name, α, parallelism, min_ttf); σ 1; reboot 1..2 s."""
    return {
        "schema_version": 1, "name": "storm", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
        "bolts": [{"name": n, "alpha": a, "sigma": 1.0, "parallelism": c, **({"min_ttf": m} if m else {})}
                  for n, a, c, m in bolts],
        "subscriptions": [{"source": a, "target": b} for a, b in subs],
        "settings": {"tolerance": tolerance, "max_idle_time": idle, "emission": "exact", "failures": True,
                     "min_reboot_time": 1, "max_reboot_time": 2, "replay": replay},
    }


# random #55 of the sweep, σ 1: F (α 0.839, fails after 3 s) completes at most one tuple per 5 s cycle at its
# slowest (1.0068 s a tuple, its first a whole gap after the recovery) against 5 fresh tuples; J (two per 0.913 s)
# receives every replay of S
STORM = _doc([("J", 0.913, 2, None), ("F", 0.839, 1, 3.0)], [("S", "J"), ("S", "F")])


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def test_the_failing_bolt_and_every_bolt_its_spout_feeds_are_unbounded() -> None:
    topo = parse_topology(STORM)
    verdicts: dict[str, BoltVerdict] = {}
    notes: list[str] = []
    storm_verdicts(topo, verdicts, ["J", "F"], notes)
    assert notes == []
    for name in ("J", "F"):
        v = verdicts[name]
        assert v.verdict == "unbounded" and v.method == "storm proof" and v.certified
        cert = v.storm_certificate
        assert cert is not None and cert.failing == "F" and cert.spout == "S" and cert.waits
        # 5 one-second gaps per cycle of 3 + 2 s; ⌊(3 − 1)/1.0068⌋ = 1 batch: 5 − 1 = 4 more pending per cycle
        assert (cert.emissions, cert.gap, cert.reboot, cert.completions, cert.growth) == (5, "1/1", "2/1", 1, 4)
        assert check_storm_certificate(cone(STORM, name), cert) == []


@pytest.mark.parametrize("change", ["paced", "none", "fast", "off"])
def test_no_storm_without_at_once_replays_or_when_the_bolt_keeps_up(change: str) -> None:
    doc = json.loads(json.dumps(STORM))
    if change in ("paced", "none"):
        doc["settings"]["replay"] = change
    elif change == "fast":  # F completes 10 tuples per 3 s up: more than the 5 fresh tuples of a cycle
        doc["bolts"][1]["alpha"] = 0.2
    else:
        doc["settings"]["failures"] = False
    assert prove_storm(cone(doc, "J"), "J") is None and prove_storm(cone(doc, "F"), "F") is None


def test_a_bolt_fed_by_another_bolt_is_not_stormed() -> None:
    """K receives S's tuples through J, whose pace caps what reaches it: the storm proof says nothing of it."""
    doc = _doc([("J", 0.5, 2, None), ("F", 0.839, 1, 3.0), ("K", 0.4, 1, None)], [("S", "J"), ("S", "F"),
                                                                                 ("J", "K")])
    assert prove_storm(cone(doc, "K"), "K") is None
    assert prove_storm(cone(doc, "J"), "J") is not None


def test_a_bolt_that_cannot_wait_a_gap_counts_every_batch() -> None:
    """F receives from J too: its first tuple may come at the recovery, so k = ⌈3/1.0068⌉ − 1 = 2 (not 1)."""
    doc = _doc([("J", 0.5, 2, None), ("F", 0.839, 1, 3.0)], [("S", "J"), ("S", "F"), ("J", "F")])
    cert = prove_storm(cone(doc, "F"), "F")
    assert cert is not None and not cert.waits and cert.completions == 2
    assert check_storm_certificate(cone(doc, "F"), cert) == []
    forged = cert.model_copy(update={"waits": True, "completions": 1, "growth": cert.emissions - 1})
    assert check_storm_certificate(cone(doc, "F"), forged) == [
        "waits, but F receives from another component than S"]


def _mutations(cert: StormCertificate) -> dict[str, StormCertificate]:
    def with_(**fields: Any) -> StormCertificate:
        return cert.model_copy(update=fields)

    return {
        "growth one more": with_(growth=cert.growth + 1),
        "one batch fewer": with_(completions=cert.completions - 1, growth=cert.growth + 1),
        "reboot above its bound": with_(reboot="5/2", gap="11/10"),
        "gap not the cycle's": with_(gap="9/10", completions=2, growth=3),
        "gap too short for the spout": with_(emissions=7, gap="5/7", completions=2, growth=5),
        "another spout": with_(spout="T"),
        "failing bolt that never fails": with_(failing="J"),
        "other hash": with_(content_hash="0" * 64),
        "run without a trace": with_(run=StormRun(threshold=5, reached=5)),
    }


@pytest.mark.parametrize("mutation", list(_mutations(StormCertificate(
    target="J", content_hash="", failing="F", spout="S", reboot="2/1", emissions=5, gap="1/1", waits=True,
    completions=1, growth=4))))
def test_the_checker_rejects_a_mutated_storm_certificate(mutation: str) -> None:
    cert = prove_storm(cone(STORM, "J"), "J")
    assert cert is not None and check_storm_certificate(cone(STORM, "J"), cert) == []
    assert check_storm_certificate(cone(STORM, "J"), _mutations(cert)[mutation]), mutation


@pytest.mark.parametrize("change", ["paced", "target fed by another bolt"])
def test_the_checker_rejects_a_certificate_for_another_document(change: str) -> None:
    cert = prove_storm(cone(STORM, "J"), "J")
    assert cert is not None
    doc = json.loads(json.dumps(STORM))
    if change == "paced":
        doc["settings"]["replay"] = "paced"
    else:
        doc["bolts"].append({"name": "K", "alpha": 0.1, "sigma": 1.0, "parallelism": 1})
        doc["subscriptions"] = [{"source": "S", "target": "K"}, {"source": "K", "target": "J"},
                                {"source": "S", "target": "F"}]
    other = cone(doc, "J")
    assert check_storm_certificate(other, cert.model_copy(update={"content_hash": content_hash(other)}))


@pytest.mark.parametrize("target", ["J", "F"])
def test_the_threshold_run_is_certified_past_n(target: str) -> None:
    """The storm's cycle played by the simulator: J past 40 (every replay reaches it), F past 20 (its queue just
    before a failure); the certificate with the run is accepted, and with the run of the other bolt rejected."""
    n = 40 if target == "J" else 20
    cert = prove_storm(cone(STORM, target), target)
    assert cert is not None
    found = build_storm_run(cone(STORM, target), cert, n)
    assert not isinstance(found, str), found
    trace, reached = found
    assert reached >= n
    with_run = cert.model_copy(update={"run": StormRun(threshold=n, reached=reached)})
    assert check_storm_certificate(cone(STORM, target), with_run, trace) == []
    other = "F" if target == "J" else "J"
    cert_other = prove_storm(cone(STORM, other), other)
    assert cert_other is not None
    found_other = build_storm_run(cone(STORM, other), cert_other, n)
    assert not isinstance(found_other, str)
    assert check_storm_certificate(cone(STORM, target), with_run, found_other[0])


def test_verify_answers_unbounded_by_a_storm_with_its_run(tmp_path: Any, capsys: Any) -> None:
    path = tmp_path / "storm.json"
    path.write_text(json.dumps(STORM))
    out = tmp_path / "certs.json"
    code = main(["verify", str(path), "--timeout", "20", "--flood-run", "15", "--certificate-out", str(out)])
    said = capsys.readouterr().out
    assert code == 1, said
    assert "J: unbounded (storm proof, certified)" in said and "(at least 15)" in said
    assert main(["check-certificate", str(out)]) == 0
    assert "J: accepted (storm proof)" in capsys.readouterr().out
    result = verify(parse_topology(STORM), SearchOptions(timeout_s=20))
    assert result.bolts["J"].verdict == "unbounded" and result.bolts["J"].method == "storm proof"


def test_a_cycle_that_does_not_grow_is_rejected() -> None:
    """F at α 0.32 (0.384 s a tuple at its slowest) completes ⌊2/0.384⌋ = 5 batches while up in a cycle of five
    one-second gaps: the pending tuples grow by 0, which proves nothing."""
    doc = json.loads(json.dumps(STORM))
    doc["bolts"][1]["alpha"] = 0.32
    flat = StormCertificate(target="F", content_hash=content_hash(cone(doc, "F")), failing="F", spout="S",
                            reboot="2/1", emissions=5, gap="1/1", waits=True, completions=5, growth=0)
    assert check_storm_certificate(cone(doc, "F"), flat) == ["the pending tuples grow by 0 per cycle, not at least 1"]


def test_a_threshold_run_of_another_document_is_rejected() -> None:
    """A run in which J passes 30, certified, but of a document in which J is ten times slower."""
    slower = json.loads(json.dumps(STORM))
    slower["bolts"][0]["alpha"] = 9.13
    cert = prove_storm(cone(slower, "J"), "J")
    assert cert is not None
    found = build_storm_run(cone(slower, "J"), cert, 30)
    assert not isinstance(found, str)
    mine = prove_storm(cone(STORM, "J"), "J")
    assert mine is not None
    with_run = mine.model_copy(update={"run": StormRun(threshold=30, reached=found[1])})
    assert check_storm_certificate(cone(STORM, "J"), with_run, found[0]) == [
        "threshold run: J is not in this document with the same parameters"]


def _random_doc(rng: random.Random) -> dict[str, Any]:
    """2-4 bolts near their capacity fed by S or each other, one or two failing every 3 or 20 s, at-once."""
    n = rng.randint(2, 4)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, round(rng.uniform(0.5, 1.2), 3), rng.choice([1, 1, 2]), None) for name in names]
    for i in rng.sample(range(n), rng.randint(1, 2)):
        bolts[i] = (*bolts[i][:3], rng.choice([3.0, 20.0]))
    subs = [("S", names[0])] + [(rng.choice(["S", *names[:i]]), names[i]) for i in range(1, n)]
    return _doc(bolts, subs, tolerance=rng.choice([0.0, 0.1, 0.2]), idle=rng.choice([0.0, 0.05]))


def test_no_bolt_a_storm_makes_unbounded_is_proven_bounded_and_each_has_a_run() -> None:
    rng = random.Random(46)
    stormed = 0
    for _ in range(12):
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        report = rate_check(topo)
        verdicts: dict[str, BoltVerdict] = {}
        notes: list[str] = []
        storm_verdicts(topo, verdicts, [b.name for b in topo.bolts], notes)
        assert notes == []
        for name, v in verdicts.items():
            stormed += 1
            assert report.bolts[name].status != "bounded", (doc, name)
            cert = v.storm_certificate
            assert cert is not None
            found = build_storm_run(cone(doc, name), cert, 10)
            assert not isinstance(found, str), (doc, name, found)
            run = cert.model_copy(update={"run": StormRun(threshold=10, reached=found[1])})
            assert check_storm_certificate(cone(doc, name), run, found[0]) == []
    assert stormed >= 5


def test_a_bolt_stormed_without_bound_floods_the_bolt_below_it() -> None:
    """K (one tuple per 0.72 s at its slowest, faster than S) below J: J, unbounded by F's storm, drains two tuples
    per 0.7304 s into it: a flood whose evidence is the storm certificate, with a certified threshold run past 10."""
    doc = json.loads(json.dumps(STORM))
    doc["bolts"].append({"name": "K", "alpha": 0.6, "sigma": 1.0, "parallelism": 1})
    doc["subscriptions"].append({"source": "J", "target": "K"})
    result = verify(parse_topology(doc), SearchOptions(timeout_s=20, flood_run=10))
    k = result.bolts["K"]
    assert k.verdict == "unbounded" and k.method == "flood proof", k.message
    cert = k.flood_certificate
    assert cert is not None and cert.source == "J" and cert.evidence.storm_certificate is not None
    assert "unbounded by a replay storm" in k.message
    assert cert.run is not None and cert.run.reached >= 10
    from app.core.tcn.check.flood import check_flood_certificate
    bare = cert.model_copy(update={"run": None})
    assert check_flood_certificate(cone(doc, "K"), bare) == []
    forged = bare.model_copy(update={"evidence": cert.evidence.model_copy(update={
        "storm_certificate": cert.evidence.storm_certificate.model_copy(update={"growth": 9})})})
    assert check_flood_certificate(cone(doc, "K"), forged)
