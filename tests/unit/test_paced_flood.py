"""Unbounded by a paced replay backlog (docs/boundedness.md, "Unbounded: a paced replay backlog"): the builder
(app/core/tcn/paced.py), its independent checker (app/core/tcn/check/storm.py with check/paced.py) with mutated
certificates, the threshold run (app/core/tcn/paced_run.py) certified past N, a flood whose source is such a bolt,
the verdict end to end, and the property that no bolt called unbounded so is proven bounded by the rate check."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats.trace import expanded_trace
from app.core.rates import rate_check
from app.core.results import BoltVerdict, FloodTerm, StormCertificate, StormRun, VerifyResult
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.cones import bounded_in_cones
from app.core.tcn.network import build_network
from app.core.tcn.paced import paced_verdicts, prove_paced
from app.core.tcn.paced_run import build_paced_run
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology

DATA = Path(__file__).resolve().parents[1] / "data" / "paced"
# random #46 of the sweep: B0 (α 0.4, fails after 3 s, down 1..2 s) fed by S at 2 tuples/s, τ 0; #239: B0 (two per
# 0.386 s, τ 0.2, max_idle 0.05) fed by S, B2 below it (tests/data/paced/README.md)
R46 = json.loads((DATA / "random-46.storm.json").read_text())
R239 = json.loads((DATA / "random-239.storm.json").read_text())


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def run_past_tenfold(doc: dict[str, Any], name: str, cert: StormCertificate, found: VerifyResult) -> None:
    """The property's second half: a certified threshold run past N = 10 x the bolt's largest queue in any lasso of
    `found` (N = 10 when there is none), accepted with its certificate."""
    largest = max((p.bolts[name].queue for t in found.traces for p in expanded_trace(t).positions
                   if name in p.bolts), default=0)
    n = 10 * max(largest, 1)
    run = build_paced_run(cone(doc, name), cert, n)
    assert not isinstance(run, str), (doc, name, run)
    with_run = cert.model_copy(update={"run": StormRun(threshold=n, reached=run[1])})
    assert check_storm_certificate(cone(doc, name), with_run, run[0]) == [], (doc, name)


def _paced(doc: dict[str, Any], name: str) -> StormCertificate:
    cert = prove_paced(cone(doc, name), name)
    assert cert is not None, name
    return cert


@pytest.mark.parametrize(("doc", "figures"), [
    (R46, ("2/1", 10, "1/2", 6, 4, "4/1", "5/2")),  # 10 fresh per 5 s against ⌊2.5/0.4⌋ = 6 completed
    (R239, ("2/1", 12, "5/12", 5, 2, "24/5", "5000/1283")),  # 12 against two per ⌊2.5833/0.5132⌋ = 5 batches
])
def test_the_failing_bolt_is_unbounded_by_its_paced_backlog(doc: dict[str, Any], figures: tuple[Any, ...]) -> None:
    cert = _paced(doc, "B0")
    assert (cert.reboot, cert.emissions, cert.gap, cert.completions, cert.growth, cert.terms[0].rate,
            cert.capacity) == figures
    assert cert.failing == "B0" and cert.spout == "S" and cert.waits and cert.replay == "paced"
    assert check_storm_certificate(cone(doc, "B0"), cert) == []


@pytest.mark.parametrize(("doc", "name"), [(R46, "B0"), (R239, "B0"), (R239, "B2")])
def test_the_rate_check_does_not_call_the_targets_bounded(doc: dict[str, Any], name: str) -> None:
    """The rate check's failure pass (and its per-cone retry, what `check` shows) never proves them bounded: a bound
    on a paced backlog that drains must not hold where this proof says it grows."""
    topo = parse_topology(doc)
    report = rate_check(topo)
    assert report.bolts[name].status != "bounded"
    assert bounded_in_cones(topo, report, [name])[0].bolts[name].status != "bounded"


def _mutations(cert: StormCertificate) -> dict[str, StormCertificate]:
    def with_(**fields: Any) -> StormCertificate:
        return cert.model_copy(update=fields)

    term = cert.terms[0]
    return {
        "spout rate above a fresh tuple and a replay per gap": with_(terms=[term.model_copy(update={"rate": "5/1"})]),
        "ratio above the stream's": with_(terms=[term.model_copy(update={"ratio": "2/1"})]),
        "a term stated twice": with_(terms=[term, term]),
        "a term from a bolt": with_(terms=[FloodTerm(sender="B2", stream="default", rate="9/1", ratio="1/1")]),
        "no term": with_(terms=[]),
        "a capacity below the smallest": with_(capacity="1/1"),
        "growth not the cycle's": with_(growth=9),
        "a reboot outside the bounds": with_(reboot="3/1", gap="3/5"),
        "at-once replays": with_(replay="at-once"),
    }


@pytest.mark.parametrize("mutation", list(_mutations(StormCertificate(
    target="x", content_hash="x", failing="x", spout="x", reboot="1/1", emissions=1, gap="1/1", waits=True,
    completions=0, growth=1, terms=[FloodTerm(sender="x", stream="x", rate="1/1", ratio="1/1")]))))
def test_the_checker_rejects_a_mutated_paced_certificate(mutation: str) -> None:
    cert = _paced(R46, "B0")
    assert check_storm_certificate(cone(R46, "B0"), _mutations(cert)[mutation]), mutation


def test_a_tie_between_the_drain_and_the_capacity_is_rejected() -> None:
    """B0 at α 0.25 failing after 0.5 s: it completes nothing while up, so S's backlog grows by all 5 fresh tuples
    of each 2.5 s cycle, but its drain, 4 tuples/s, only ties B0's 4 at its slowest: no proof, and a certificate
    stating it is refused."""
    doc = json.loads(json.dumps(R46))
    doc["bolts"][0]["alpha"] = 0.25
    doc["bolts"][0]["min_ttf"] = 0.5  # up 0.5 s: ⌊(0.5 − 0.5)/0.25⌋ = 0 completed, 5 fresh per 2.5 s
    cert = prove_paced(cone(doc, "B0"), "B0")
    assert cert is None  # 4 tuples/s against 4: no proof
    tie = StormCertificate(target="B0", content_hash=content_hash(cone(doc, "B0")), failing="B0", spout="S",
                           reboot="2/1", emissions=5, gap="1/2", waits=True, completions=0, growth=5,
                           replay="paced", terms=[FloodTerm(sender="S", stream="default", rate="4/1", ratio="1/1")],
                           capacity="4/1")
    assert check_storm_certificate(cone(doc, "B0"), tie) == ["the drain 4 is not strictly above the capacity 4"]


TWO = {**json.loads(json.dumps(R46)), "spouts": [*R46["spouts"], {"name": "T", "rate": 3.0, "burst": 1}]}
TWO["subscriptions"] = [*R46["subscriptions"], {"source": "T", "target": "B1"}]


def test_another_spout_counts_at_its_least_rate_and_the_spout_is_needed() -> None:
    """B1 receives S (B0's spout) and T (3 tuples/s): T's term at its least rate is accepted; at S's paced rate,
    or alone (B1 would then not receive the backlog), it is not."""
    cert = _paced(TWO, "B1")
    assert {t.sender: t.rate for t in cert.terms} == {"S": "4/1", "T": "3/1"}
    assert check_storm_certificate(cone(TWO, "B1"), cert) == []
    t_term = next(t for t in cert.terms if t.sender == "T")
    fast = cert.model_copy(update={"terms": [*(t for t in cert.terms if t.sender == "S"),
                                             t_term.model_copy(update={"rate": "4/1"})]})  # S's 2/gap
    assert check_storm_certificate(cone(TWO, "B1"), fast)
    alone = cert.model_copy(update={"terms": [t_term]})
    assert "no term from S: B1 must receive its replays" in check_storm_certificate(cone(TWO, "B1"), alone)


def test_a_duration_window_target_is_rejected() -> None:
    doc = {**json.loads(json.dumps(R46)), "schema_version": 6}
    doc["bolts"][1]["window"] = {"kind": "duration", "length": 6, "slide": 6}
    cert = _paced(R46, "B1")
    assert prove_paced(cone(doc, "B1"), "B1") is None
    forged = cert.model_copy(update={"content_hash": content_hash(cone(doc, "B1"))})
    assert any("duration window" in p for p in check_storm_certificate(cone(doc, "B1"), forged))


def test_a_paced_certificate_on_an_at_once_document_is_rejected() -> None:
    doc = json.loads(json.dumps(R46))
    doc["settings"]["replay"] = "at-once"
    cert = _paced(R46, "B0").model_copy(update={"content_hash": content_hash(cone(doc, "B0"))})
    assert check_storm_certificate(cone(doc, "B0"), cert) == [
        "the document's failures are off or its replays are not paced"]


@pytest.mark.parametrize(("doc", "n"), [(R46, 40), (R239, 20)])
def test_the_threshold_run_is_certified_past_n(doc: dict[str, Any], n: int) -> None:
    """The cycle for enough failures, then none: B0's queue passes N; the run is accepted with the certificate, a
    run of the other document is not, and neither is a run that is missing."""
    cert = _paced(doc, "B0")
    found = build_paced_run(cone(doc, "B0"), cert, n)
    assert not isinstance(found, str), found
    trace, reached = found
    assert reached >= n
    with_run = cert.model_copy(update={"run": StormRun(threshold=n, reached=reached)})
    assert check_storm_certificate(cone(doc, "B0"), with_run, trace) == []
    other = R239 if doc is R46 else R46
    found_other = build_paced_run(cone(other, "B0"), _paced(other, "B0"), n)
    assert not isinstance(found_other, str)
    assert check_storm_certificate(cone(doc, "B0"), with_run, found_other[0])
    assert check_storm_certificate(cone(doc, "B0"), with_run) == ["threshold run: no trace"]


def test_verify_answers_both_targets_and_the_flood_below_with_runs(tmp_path: Path, capsys: Any) -> None:
    """#239: B0 by its paced backlog, B2 flooded by B0 (3.238 against 1.629 tuples/s) with B0's certificate as the
    source's evidence; each with a certified run past 15; `check` shows B0's answer without a search."""
    path = tmp_path / "r239.json"
    path.write_text(json.dumps(R239))
    out = tmp_path / "certs.json"
    code = main(["verify", str(path), "--timeout", "20", "--flood-run", "15", "--certificate-out", str(out)])
    said = capsys.readouterr().out
    assert code == 1, said
    assert "unbounded by a paced replay backlog (B0)" in said and "B0: unbounded (paced replay backlog" in said
    assert "unbounded by a paced replay backlog: S's replays of B0's losses pile up" in said  # B2's source
    assert said.count("(at least 15)") == 2
    assert main(["check-certificate", str(out)]) == 0
    checked = capsys.readouterr().out
    assert "B0: accepted (storm proof)" in checked and "B2: accepted (flood proof)" in checked
    result = verify(parse_topology(R239), SearchOptions(timeout_s=20))
    b2 = result.bolts["B2"].flood_certificate
    assert b2 is not None and b2.evidence.storm_certificate is not None
    forged = b2.evidence.model_copy(update={"storm_certificate": b2.evidence.storm_certificate.model_copy(
        update={"capacity": "1/1"})})
    assert check_flood_certificate(cone(R239, "B2"), b2) == []
    assert check_flood_certificate(cone(R239, "B2"), b2.model_copy(update={"evidence": forged}))
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unbounded_by_storm"]["B0"]["storm_certificate"]["replay"] == "paced"


def _random_doc(rng: random.Random) -> dict[str, Any]:
    """2-4 bolts of 1.7 to 6.7 tuples/s at nominal timing fed by S (2 tuples/s) or each other, one or two failing
    every 3 or 20 s, paced replays, both emission rules."""
    n = rng.randint(2, 4)
    names = [f"B{i}" for i in range(n)]
    bolts = [{"name": x, "alpha": round(rng.uniform(0.3, 0.6), 3), "sigma": rng.choice([1.0, 0.5]),
              "parallelism": rng.choice([1, 1, 2])} for x in names]
    for i in rng.sample(range(n), rng.randint(1, 2)):
        bolts[i]["min_ttf"] = rng.choice([3.0, 3.0, 20.0])
    subs = [("S", names[0])] + [(rng.choice(["S", "S", *names[:i]]), names[i]) for i in range(1, n)]
    return {"schema_version": 1, "name": "paced", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
            "bolts": bolts, "subscriptions": [{"source": a, "target": b} for a, b in subs],
            "settings": {"tolerance": rng.choice([0.0, 0.1, 0.2]), "max_idle_time": rng.choice([0.0, 0.05]),
                         "emission": rng.choice(["exact", "dvert"]), "failures": True, "min_reboot_time": 1,
                         "max_reboot_time": 2, "replay": "paced"}}


def test_no_bolt_a_paced_backlog_makes_unbounded_is_proven_bounded_and_each_has_a_run() -> None:
    """Random paced topologies: every bolt the proof calls unbounded (the pass on every bolt, as if none were
    answered; `verify` only asks it about the bolts its search leaves) is not proven bounded by the rate check (nor
    per cone), and has a certified run past N = 10 × its largest queue in any lasso a brief verification finds (at
    least 10), accepted with its certificate by the checker."""
    rng = random.Random(1)
    paced = 0
    for _ in range(6):
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        verdicts: dict[str, BoltVerdict] = {}
        notes: list[str] = []
        paced_verdicts(topo, verdicts, [b.name for b in topo.bolts], notes)
        assert notes == []
        if not verdicts:
            continue
        found = verify(topo, SearchOptions(timeout_s=1))
        report = rate_check(topo)
        per_cone = bounded_in_cones(topo, report, list(verdicts))[0]
        for name, v in verdicts.items():
            cert = v.storm_certificate
            assert cert is not None and cert.replay == "paced" and v.verdict == "unbounded"
            assert report.bolts[name].status != "bounded" and per_cone.bolts[name].status != "bounded", (doc, name)
            assert found.bolts[name].verdict in ("counterexample", "unbounded"), (doc, name)  # the search agrees
            run_past_tenfold(doc, name, cert, found)
            paced += 1
    assert paced >= 7, paced
