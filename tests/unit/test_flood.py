"""Unbounded by a flood (docs/boundedness.md, "Unbounded: a backlog that floods"): the builder
(app/core/tcn/flood.py), its independent checker (app/core/tcn/check/flood.py) with mutated certificates, the
verdict end to end, runs played by an independent simulator that take the flooded queue past any N, and the
property that no bolt called unbounded is proven bounded."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.rates import rate_check
from app.core.results import BoltVerdict, FloodCertificate, FloodEvidence, FloodTerm
from app.core.tcn.check.certify import certify
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.flood import prove_flood
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology
from tests.adversary import play, slow_then_fast


def _doc(bolts: list[tuple[str, float, float, int]], subs: list[tuple[str, str]], *, rate: float = 1.0,
         tolerance: float = 0.1, idle: float = 0.0, emission: str = "exact", failing: dict[str, float] | None = None,
         streams: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    failing, streams = failing or {}, streams or {}
    doc: dict[str, Any] = {
        "schema_version": 1, "name": "t", "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": rate,
                                                     "burst": 1}],
        "bolts": [{"kind": "bolt", "id": n, "name": n, "alpha": a, "sigma": s, "parallelism": c,
                   **({"min_ttf": failing[n]} if n in failing else {}),
                   **({"streams": sorted(streams[n]), "stream_sigma": streams[n]} if n in streams else {})}
                  for n, a, s, c in bolts],
        "subscriptions": [{"id": f"e{i}", "source": a, "target": b, **({"stream": st} if st else {})}
                          for i, (a, b, st) in enumerate((*sub, None)[:3] for sub in subs)],
        "settings": {"tolerance": tolerance, "max_idle_time": idle, "emission": emission},
    }
    if failing:
        doc["settings"].update(failures=True, min_reboot_time=1, max_reboot_time=2)
    return doc


# S (1/s) -> U (α 0.95: may fall behind) -> J (α 0.8): J keeps up in every repeating run, not after U backs up
FLOOD = _doc([("U", 0.95, 1.0, 1), ("J", 0.8, 0.0, 1)], [("S", "U"), ("U", "J")])


# τ 0.3: S brings up to 10/7 tuples/s; U (two tuples per 1.6 s) takes 2/2.08 at its slowest, drains 2/1.12 at its
# fastest; J takes 1/0.65 at its slowest: a wide margin, so short runs show the flood
WIDE = _doc([("U", 1.6, 1.0, 2), ("J", 0.5, 0.0, 1)], [("S", "U"), ("U", "J")], tolerance=0.3)


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def by_rates(doc: dict[str, Any], source: str, target: str) -> FloodCertificate | None:
    """The flood certificate of `target` with `source`'s growth proven by rates as its evidence (no search)."""
    growth = prove_growth(cone(doc, source), source)
    if growth is None:
        return None
    verdicts = {source: BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                    growth_certificate=growth),
                target: BoltVerdict(verdict="no-repeating-growth")}
    return prove_flood(cone(doc, target), target, verdicts, [], lambda n: cone(doc, n))


def _replace(cert: FloodCertificate, **changes: Any) -> FloodCertificate:
    return cert.model_copy(update=changes)


# ---- the verdict, end to end ----------------------------------------------------------------------------


def test_a_bolt_flooded_by_a_growing_bolt_is_unbounded_with_a_checked_certificate(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]
                                                                                ) -> None:
    result = verify(parse_topology(FLOOD), SearchOptions(timeout_s=60))
    u, j = result.bolts["U"], result.bolts["J"]
    assert u.verdict == "counterexample"
    assert j.verdict == "unbounded" and j.method == "flood proof" and j.flood_certificate is not None
    assert j.message.startswith("unbounded: U backs up, then floods J at 1.17 tuples/s or more")
    assert "no repeating run makes its queue grow" in j.message  # the earlier answer stays as the detail
    cert = j.flood_certificate
    assert (cert.source, cert.capacity, [(t.sender, t.rate, t.ratio) for t in cert.terms]) == (
        "U", "25/22", [("U", "200/171", "1/1")])  # 1/(0.95·0.9) against 1/(0.8·1.1)
    trace = result.traces[cert.evidence.trace_index] if cert.evidence.trace_index is not None else None
    assert check_flood_certificate(cone(FLOOD, "J"), cert, trace) == []
    path, out = tmp_path / "flood.storm.json", tmp_path / "flood.cert.json"
    path.write_text(json.dumps(FLOOD))
    assert main(["verify", str(path), "--certificate-out", str(out), "-q"]) == 1
    assert "unbounded, flooded by a bolt that backs up (J)" in capsys.readouterr().out
    assert main(["check-certificate", str(out)]) == 0
    assert "J: accepted (flood proof)" in capsys.readouterr().out
    data = json.loads(out.read_text())
    entry = next(e for e in data["certificates"] if "flood_certificate" in e)
    entry["flood_certificate"]["capacity"] = "1/1"
    out.write_text(json.dumps(data))
    assert main(["check-certificate", str(out)]) == 1
    assert "J: rejected (flood proof): capacity 1/1 is not J's smallest" in capsys.readouterr().out


def test_runs_played_independently_take_the_flooded_queue_past_any_n() -> None:
    """The construction of the proof, played by tests/adversary.py: U slow for longer and longer, then fast, J
    always at its slowest. J's largest queue passes N = 10, 40, 160 with longer slow stretches, in runs that the
    product's certifier accepts as legal (threshold witnesses)."""
    cert = by_rates(WIDE, "U", "J")
    assert cert is not None and check_flood_certificate(cone(WIDE, "J"), cert) == []
    assert rate_check(parse_topology(WIDE)).bolts["J"].status == "no-repeating-growth"
    reached = []
    for switch, n in ((60, 10), (240, 40), (960, 160)):
        run = play(WIDE, slow_then_fast({"U": Fraction(switch)}, {"J"}), Fraction(switch * 3),
                   max_positions=200_000)
        witness = certify(run.trace(WIDE), checked=["J"], threshold=n)
        assert witness.ok, witness.problems[:3]
        reached.append(run.largest["J"])
    assert reached == sorted(reached) and reached[-1] > 160, reached


# ---- the checker: accepted, and mutated certificates rejected --------------------------------------------


def test_growth_by_rates_as_evidence_dvert_failures_and_a_spout_term() -> None:
    """τ 0.1, "dvert" (σ 0.6 with batches of 3: σ_lo 2/3 < σ_hi 1), a failing bolt beside, J fed by S too."""
    doc = _doc([("U", 1.5, 0.6, 3), ("F", 0.1, 0.0, 1), ("J", 1.0, 0.0, 1)],
               [("S", "U"), ("S", "F"), ("U", "J"), ("S", "J")], rate=2.0, emission="dvert", failing={"F": 5})
    cert = by_rates(doc, "U", "J")
    assert cert is not None
    assert {(t.sender, t.ratio) for t in cert.terms} == {("U", "2/3"), ("S", "1/1")}
    assert check_flood_certificate(cone(doc, "J"), cert) == []


def mutations(cert: FloodCertificate) -> dict[str, FloodCertificate]:
    u = next(t for t in cert.terms if t.sender == cert.source)
    others = [t for t in cert.terms if t is not u]
    high = Fraction(u.rate) * 2
    faster = u.model_copy(update={"rate": f"{high.numerator}/{high.denominator}"})
    return {
        "rate above derived": _replace(cert, terms=[faster, *others]),
        "ratio σ_hi": _replace(cert, terms=[u.model_copy(update={"ratio": "1/1"}), *others]),
        "term twice": _replace(cert, terms=[u, u, *others]),
        "no source term": _replace(cert, terms=others),
        "term of no stream": _replace(cert, terms=[*cert.terms, FloodTerm(sender="F", stream="default", rate="9/1",
                                                                          ratio="1/1")]),
        "capacity": _replace(cert, capacity="1/100"),
        "source is target": _replace(cert, source=cert.target),
        "evidence of another bolt": _replace(cert, evidence=cert.evidence.model_copy(update={
            "growth_certificate": cert.evidence.growth_certificate.model_copy(update={"target": "F"})})),
        "no evidence": _replace(cert, evidence=cert.evidence.model_copy(update={"growth_certificate": None})),
        "other hash": _replace(cert, content_hash="0" * 64),
    }


@pytest.mark.parametrize("mutation", ["rate above derived", "ratio σ_hi", "term twice", "no source term",
                                      "term of no stream", "capacity", "source is target", "evidence of another bolt",
                                      "no evidence", "other hash"])
def test_the_checker_rejects_a_mutated_flood_certificate(mutation: str) -> None:
    doc = _doc([("U", 1.5, 0.6, 3), ("F", 0.1, 0.0, 1), ("J", 1.0, 0.0, 1)],
               [("S", "U"), ("S", "F"), ("U", "J"), ("S", "J")], rate=2.0, emission="dvert", failing={"F": 5})
    cert = by_rates(doc, "U", "J")
    assert cert is not None
    assert check_flood_certificate(cone(doc, "J"), mutations(cert)[mutation]), mutation


def test_a_tie_floods_nothing_and_a_certificate_claiming_it_is_rejected() -> None:
    """τ 0.5: U drains at most C/(α(1−τ)) = 1/(2·0.5) = 1 tuple/s into J, whose slowest pace is one tuple per
    0.5·1.5 + 0.25 = 1 s: a tie, which proves nothing (U itself grows: S brings 2 tuples/s, U takes 1/3.25)."""
    doc = _doc([("U", 2, 1.0, 1), ("J", 0.5, 0.0, 1)], [("S", "U"), ("U", "J")], rate=1.0, tolerance=0.5,
               idle=0.25)
    growth = prove_growth(cone(doc, "U"), "U")
    assert growth is not None
    assert by_rates(doc, "U", "J") is None
    tie = FloodCertificate(target="J", content_hash=content_hash(cone(doc, "J")), source="U",
                           terms=[FloodTerm(sender="U", stream="default", rate="1/1", ratio="1/1")], capacity="1/1",
                           evidence=FloodEvidence(topology=cone(doc, "U").model_dump(mode="json"),
                                                  growth_certificate=growth))
    assert check_flood_certificate(cone(doc, "J"), tie) == [
        "the drain brings 1 tuples/s, not strictly more than the capacity 1"]


def test_evidence_about_another_document_is_rejected() -> None:
    """A valid growth certificate of U, but on a document where U is slower than in this one."""
    doc = _doc([("U", 1.5, 0.6, 3), ("J", 1.0, 0.0, 1)], [("S", "U"), ("U", "J")], rate=2.0, emission="dvert")
    cert = by_rates(doc, "U", "J")
    assert cert is not None
    slower = json.loads(json.dumps(doc))
    slower["bolts"][0]["alpha"] = 2.5
    growth = prove_growth(cone(slower, "U"), "U")
    assert growth is not None
    moved = _replace(cert, evidence=cert.evidence.model_copy(update={
        "topology": cone(slower, "U").model_dump(mode="json"), "growth_certificate": growth}))
    assert check_flood_certificate(cone(doc, "J"), moved) == [
        "evidence: U is not in this document with the same parameters"]


# ---- the property: no bolt called unbounded is proven bounded --------------------------------------------


def _random_doc(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 4)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, rng.choice([0.2, 0.45, 0.6, 0.9, 1.3]), rng.choice([0.5, 1.0, 1.0, 2.0]), rng.choice([1, 1, 2]))
             for name in names]
    subs = {("S", names[0])} | {(rng.choice(["S", *names[:i]]), name) for i, name in enumerate(names[1:], start=1)}
    if rng.random() < 0.3:  # a back edge: a cycle
        i = rng.randrange(1, n)
        subs.add((names[i], names[rng.randrange(0, i)]))
    failing = {names[-1]: rng.choice([3.0, 30.0])} if rng.random() < 0.3 else {}
    return _doc(bolts, sorted(subs), rate=rng.choice([1.0, 2.0, 3.0]), tolerance=rng.choice([0.0, 0.1, 0.2]),
                idle=rng.choice([0.0, 0.05]), emission=rng.choice(["exact", "dvert"]), failing=failing)


def test_no_bolt_called_unbounded_is_proven_bounded() -> None:
    """On random topologies (cycles, failures, both emission rules): every flood certificate built from a growth
    proof is accepted by the checker, and the rate check never proves its target bounded (with failures on and
    off): the two proofs cannot contradict each other (docs/boundedness.md)."""
    rng = random.Random(46)
    floods = 0
    for _ in range(120):
        doc = _random_doc(rng)
        topo = parse_topology(doc)
        status = rate_check(topo).bolts
        free = rate_check(parse_topology({**doc, "settings": {**doc["settings"], "failures": False}})).bolts
        names = [b.name for b in topo.bolts]
        for source in names:
            for target in names:
                if source == target:
                    continue
                cert = by_rates(doc, source, target)
                if cert is None:
                    continue
                floods += 1
                assert check_flood_certificate(cone(doc, target), cert) == [], (doc, source, target)
                assert status[target].status != "bounded", (doc, target)
                # (a lost backlog needs the failures: docs/boundedness.md, "Unbounded: a backlog lost into a ...")
                assert cert.via is not None or free[target].status != "bounded", (doc, target)
    assert floods >= 15, floods


def test_the_app_and_the_verified_export_show_unbounded_red_with_its_source() -> None:
    from app.core.formats.verified import bolt_verdict_words, verdict_words
    from app.core.results import VerifyResult
    from app.gui.panels.verification_controller import MARKER_MEANING, VERDICT_MARKER

    cert = by_rates(WIDE, "U", "J")
    assert cert is not None
    verdict = BoltVerdict(verdict="unbounded", method="flood proof", certified=True, flood_certificate=cert)
    assert VERDICT_MARKER["unbounded"] == VERDICT_MARKER["counterexample"] == "red"
    assert "unbounded" in MARKER_MEANING["red"]
    assert bolt_verdict_words(verdict) == "unbounded: U backs up, then floods it (flood proof, certified)"
    whole = VerifyResult(verdict="unbounded", bolts={"J": verdict})
    assert verdict_words(whole) == "unbounded (flood proof, certified)"


def test_a_valid_growth_certificate_of_another_bolt_is_no_evidence() -> None:
    """S → U → V and U → J: V grows by rates while U keeps up (U at its fastest takes 1/(0.1·0.9) = 11 tuples/s
    of S's 10/9): V's certificate is valid, its document holds U with the same parameters, yet it says nothing
    of U's backlog. A flood of J claiming U as its source with V's evidence is refused."""
    doc = _doc([("U", 0.1, 1.0, 1), ("V", 2.0, 0.0, 1), ("J", 0.095, 0.0, 1)], [("S", "U"), ("U", "V"), ("U", "J")])
    growth = prove_growth(cone(doc, "V"), "V")
    assert growth is not None and growth.bolts["U"].role == "keeps up"
    assert prove_growth(cone(doc, "U"), "U") is None  # U itself does not grow
    terms = [FloodTerm(sender="U", stream="default", rate="100/9", ratio="1/1")]
    claimed = FloodCertificate(target="J", content_hash=content_hash(cone(doc, "J")), source="U", terms=terms,
                               capacity="2000/209", evidence=FloodEvidence(
                                   topology=cone(doc, "V").model_dump(mode="json"), growth_certificate=growth))
    assert check_flood_certificate(cone(doc, "J"), claimed) == [
        "evidence: the growth certificate is about V, not U"]


@pytest.mark.parametrize("evidence", [{}, {"growth_certificate": None, "trace": {"format": "x"}},
                                      {"topology": {"spouts": 1}, "growth_certificate": {"target": "U"}},
                                      {"growth_certificate": {"target": "U", "content_hash": "0", "spouts": {},
                                                              "bolts": {}}},
                                      {"trace": {"format": "stormbound-trace/1", "topology": {}, "k": 1}}])
def test_broken_evidence_is_refused_in_words(evidence: dict[str, Any]) -> None:
    """A certificate file is user input: whatever its evidence holds, the checker answers with problems."""
    cert = by_rates(FLOOD, "U", "J")
    assert cert is not None
    data = cert.model_dump(mode="json")
    data["evidence"] = evidence
    problems = check_flood_certificate(cone(FLOOD, "J").model_dump(mode="json"), data)
    assert problems and all(isinstance(p, str) for p in problems), problems


def test_what_a_flood_proof_misses_is_said_once_and_the_message_keeps_its_figures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bolt no flood proves says what is missing (once, however many passes try it), and its message keeps its
    figures: the CLI's text writes them as decimals only, like every other verdict's."""
    from app.core.tcn import flood
    from app.core.words import Words

    def short(*args: Any) -> None:
        args[-1].append("U can hold any backlog, but drains 1 tuple/s into J, which takes 1")

    monkeypatch.setattr(flood, "prove_flood", short)
    doc = _doc([("U", 2, 1.0, 1), ("J", 0.5, 0.0, 1)], [("S", "U"), ("U", "J")], rate=1.0)
    topo = parse_topology(doc)
    verdicts = {"U": BoltVerdict(verdict="counterexample", message="U grows"),
                "J": BoltVerdict.said(Words.of("J may receive ", Fraction(20, 9), " tuples/s"), verdict="unknown")}
    for _ in range(2):
        flood.flood_verdicts(topo, verdicts, [], lambda n: topo, [])
    j = verdicts["J"]
    assert j.verdict == "unknown" and j.message.count(flood.NO_FLOOD) == 1
    assert j.message.startswith("J may receive 2.222 (exactly 20/9) tuples/s No flood proof: U can hold")
    assert j.text(exact=False).startswith("J may receive 2.222 tuples/s No flood proof: U can hold")
