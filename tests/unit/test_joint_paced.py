"""Several failing bolts on one paced spout (docs/boundedness.md, "Unbounded: several failing bolts on one paced
spout"): the builder (app/core/tcn/joint.py through paced.prove_paced), its independent checker
(app/core/tcn/check/joint.py inside check/storm.py) with mutated certificates, the threshold run with the other bolts'
failures (app/core/tcn/paced_run.py) certified past N, `check`'s answer, and the property that no bolt called
unbounded so is proven bounded, each with a certified run past 10 × its largest lasso queue."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats.verified import bolt_verdict_words
from app.core.rates import rate_check
from app.core.results import BoltVerdict, JointFailure, StormCertificate, StormRun
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.cones import bounded_in_cones
from app.core.tcn.network import build_network
from app.core.tcn.paced import prove_paced
from app.core.tcn.paced_run import build_paced_run
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology
from tests.unit.test_paced_flood import run_past_tenfold

# random #182 of the sweep: B0 (α 0.433 s, min_ttf 20 s) and B1 (2 × α 0.42 s, min_ttf 200 s) on S, 2 tuples/s
R182 = json.loads((Path(__file__).resolve().parents[1] / "data" / "joint" / "random-182.storm.json").read_text())


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def _joint() -> StormCertificate:
    cert = prove_paced(cone(R182, "B0"), "B0")
    assert cert is not None and cert.others
    return cert


def test_random_182_b0_is_unbounded_by_the_joint_cycle() -> None:
    """B0 up 20.5 s, down 2 s: 45 fresh tuples against ⌊20/0.433⌋ = 46 batches (−1); B1 once every 9 cycles
    (202.5 s), 0.21 s after S's first emission after B0's recovery, down 2 s: 2 + 2·4 = 10 lost; 9·(−1) + 10 = 1."""
    cert = _joint()
    assert (cert.up, cert.reboot, cert.emissions, cert.gap, cert.completions, cert.growth, cert.capacity) == (
        "41/2", "2/1", 45, "1/2", 46, -1, "1000/433")
    assert cert.others == [JointFailure(bolt="B1", reboot="2/1", every=9, emission=1, offset="21/100", loss=10)]
    assert [(t.sender, t.rate) for t in cert.terms] == [("S", "4/1")]
    assert check_storm_certificate(cone(R182, "B0"), cert) == []
    assert prove_paced(cone(R182, "B1"), "B1") is None  # B1 processes 4.76 tuples/s against the drain's 4


def test_the_rate_check_does_not_call_b0_bounded() -> None:
    topo = parse_topology(R182)
    report = rate_check(topo)
    assert report.bolts["B0"].status != "bounded"
    assert bounded_in_cones(topo, report, ["B0"])[0].bolts["B0"].status != "bounded"


def _mutations(cert: StormCertificate) -> dict[str, StormCertificate]:
    def with_(**fields: Any) -> StormCertificate:
        return cert.model_copy(update=fields)

    def other(**fields: Any) -> StormCertificate:
        return with_(others=[cert.others[0].model_copy(update=fields)])

    return {
        "a loss above the derived": other(loss=11),
        "a failure sooner than min_ttf allows": other(every=8, loss=10),
        "a replay assumed where the backlog may be empty": other(emission=4),
        "an offset past the fastest batch": other(offset="9/20"),  # (0.45 s: B1's batch may have ended)
        "no offset": other(offset="0/1"),
        "a reboot outside the bounds": other(reboot="5/2", loss=12),
        "the failing bolt as another": other(bolt="B0"),
        "another bolt twice": with_(others=[cert.others[0], cert.others[0]]),
        "no joint growth": with_(others=[]),
        "B1 once every 10 cycles: a joint growth of 0": other(every=10),
        "up below min_ttf": with_(up="39/2", emissions=43, completions=43, growth=0,  # (else a sound cycle)
                                  others=[cert.others[0].model_copy(update={"every": 10})]),
        "at-once replays": with_(replay="at-once"),
    }


MUTATIONS = list(_mutations(StormCertificate(
    target="x", content_hash="x", failing="x", spout="x", reboot="1/1", emissions=1, gap="1/1", waits=True,
    completions=0, growth=1, others=[JointFailure(bolt="x", reboot="1", every=1, emission=1, offset="1", loss=1)])))


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_the_checker_rejects_a_mutated_joint_certificate(mutation: str) -> None:
    cert = _joint()
    assert check_storm_certificate(cone(R182, "B0"), _mutations(cert)[mutation]), mutation


def test_another_bolt_that_does_not_receive_the_spout_or_never_fails_is_rejected() -> None:
    """B1 fed by B0 instead of S, or B1 without min_ttf: its losses are not S's tuples at each emission, or it
    never fails; the certificate is refused on each (forged with the document's hash)."""
    for change in ("fed by B0", "never fails"):
        doc = json.loads(json.dumps(R182))
        if change == "fed by B0":
            doc["subscriptions"][1]["source"] = "B0"
        else:
            del doc["bolts"][1]["min_ttf"]
        whole = parse_topology(doc)  # (B1 that never fails is not in B0's cone: the whole document keeps it)
        forged = _joint().model_copy(update={"content_hash": content_hash(whole)})
        assert check_storm_certificate(whole, forged), change
        assert prove_paced(cone(doc, "B0"), "B0") is None, change


def test_other_failing_bolts_under_at_once_replays_are_rejected() -> None:
    """The joint cycle is a paced backlog's: under at-once replays a certificate with others is refused, whatever
    its figures."""
    doc = json.loads(json.dumps(R182))
    doc["settings"]["replay"] = "at-once"
    at_once = _joint().model_copy(update={"content_hash": content_hash(cone(doc, "B0")), "replay": "at-once",
                                          "terms": [], "capacity": None})
    assert check_storm_certificate(cone(doc, "B0"), at_once) == [
        "other failing bolts (others) are a paced storm's only"]


def test_the_threshold_run_is_certified_past_n() -> None:
    """B0 and B1 on the joint cycle, then no failure: B0's queue passes 20; the run is accepted with the
    certificate (and not without its trace)."""
    cert = _joint()
    found = build_paced_run(cone(R182, "B0"), cert, 20)
    assert not isinstance(found, str), found
    trace, reached = found
    assert reached >= 20
    with_run = cert.model_copy(update={"run": StormRun(threshold=20, reached=reached)})
    assert check_storm_certificate(cone(R182, "B0"), with_run, trace) == []
    assert check_storm_certificate(cone(R182, "B0"), with_run) == ["threshold run: no trace"]


def test_check_and_verify_show_the_answer(tmp_path: Path, capsys: Any) -> None:
    """`check` (text and --json) without a search; `verify` after its search (the linear program leaves B0 without a
    repeating growth), with a certificate file that check-certificate accepts."""
    path = tmp_path / "r182.json"
    path.write_text(json.dumps(R182))
    out = tmp_path / "certs.json"
    assert main(["verify", str(path), "--timeout", "10", "--certificate-out", str(out)]) == 1
    said = capsys.readouterr().out
    assert said.startswith("unbounded: 1 unbounded by the paced backlog of several failing bolts (B0)"), said
    assert "B1, failing once every 9 of those cycles (202.5 s)" in said
    assert main(["check-certificate", str(out)]) == 0
    assert "B0: accepted (storm proof)" in capsys.readouterr().out
    assert main(["check", str(path)]) == 0
    said = capsys.readouterr().out
    assert "B0: unbounded (several failing bolts on one paced spout, certified)" in said
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unbounded_by_storm"]["B0"]["storm_certificate"]["others"][0]["loss"] == 10


def test_the_apps_row_names_every_failing_bolt() -> None:
    verdict = BoltVerdict(verdict="unbounded", method="storm proof", certified=True, storm_certificate=_joint())
    assert bolt_verdict_words(verdict) == ("unbounded: S's paced replays of B0 and B1's losses pile up, then flood it "
                                           "(storm proof, certified)")


def _random_doc(rng: random.Random) -> dict[str, Any]:
    """B0 (one executor, 2.2 to 3.3 tuples/s at its slowest) and B1, sometimes B2 (two executors), failing, all fed
    by S (2 tuples/s) with paced replays; sometimes B3 below S or B0, never failing."""
    bolts = [{"name": "B0", "alpha": round(rng.uniform(0.3, 0.45), 3), "sigma": 1.0, "parallelism": 1,
              "min_ttf": rng.choice([5.0, 10.0, 20.0])},
             {"name": "B1", "alpha": round(rng.uniform(0.2, 0.45), 3), "sigma": rng.choice([1.0, 0.5]),
              "parallelism": 2, "min_ttf": rng.choice([20.0, 50.0, 100.0, 200.0])}]
    subs = [("S", "B0"), ("S", "B1")]
    if rng.random() < 0.5:
        bolts.append({"name": "B2", "alpha": round(rng.uniform(0.2, 0.45), 3), "sigma": 1.0, "parallelism": 2,
                      "min_ttf": rng.choice([20.0, 50.0, 100.0, 200.0])})
        subs.append(("S", "B2"))
    if rng.random() < 0.5:
        bolts.append({"name": "B3", "alpha": round(rng.uniform(0.2, 0.3), 3), "sigma": 1.0, "parallelism": 1})
        subs.append((rng.choice(["S", "B0"]), "B3"))
    return {"schema_version": 1, "name": "joint", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
            "bolts": bolts, "subscriptions": [{"source": a, "target": b} for a, b in subs],
            "settings": {"tolerance": rng.choice([0.0, 0.1]), "max_idle_time": rng.choice([0.0, 0.05]),
                         "emission": rng.choice(["exact", "dvert"]), "failures": True, "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "paced"}}


def test_no_bolt_a_joint_cycle_makes_unbounded_is_proven_bounded_and_each_has_a_run() -> None:
    """Random topologies with two or three failing bolts on one paced spout: every bolt the joint proof calls
    unbounded has a certificate the checker accepts, is not proven bounded by the rate check (nor per cone) nor by a
    brief verification, and has a certified run past N = 10 × its largest queue in any lasso that verification
    finds (at least 10)."""
    rng = random.Random(3)
    joint = 0
    while joint < 3:
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        certs = {b.name: c for b in topo.bolts if (c := prove_paced(cone(doc, b.name), b.name)) is not None
                 and c.others}
        if not certs:
            continue
        report = rate_check(topo)
        per_cone = bounded_in_cones(topo, report, list(certs))[0]
        found = verify(topo, SearchOptions(timeout_s=1))
        for name, cert in certs.items():
            assert check_storm_certificate(cone(doc, name), cert) == [], (doc, name)
            assert report.bolts[name].status != "bounded" and per_cone.bolts[name].status != "bounded", (doc, name)
            assert found.bolts[name].verdict not in ("bounded", "no-repeating-growth"), (doc, name)
            run_past_tenfold(doc, name, cert, found)
            joint += 1
