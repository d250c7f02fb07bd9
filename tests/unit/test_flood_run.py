"""The threshold run of a flooded bolt (docs/boundedness.md, "The threshold run"): the builder
(app/core/tcn/flood_run.py) plays U slow, then draining, until J's queue passes N; the product's certifier accepts
the run as a threshold witness, the flood checker (app/core/tcn/check/flood.py) checks it with the certificate and
rejects broken ones; on random topologies every unbounded bolt gets a run past 10 × its largest queue in any lasso
found, and none of them is proven bounded."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats.trace import Trace
from app.core.rates import rate_check
from app.core.results import BoltVerdict, FloodCertificate, FloodRun
from app.core.tcn.check.certify import certify
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.flood import prove_flood
from app.core.tcn.flood_run import build_threshold_run, chain_of
from app.core.tcn.rate_growth import prove_growth
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import parse_topology
from tests.unit.test_flood import FLOOD, WIDE, _doc, _random_doc, by_rates, cone


def _with_run(cert: FloodCertificate, trace: Trace, threshold: int, reached: int) -> FloodCertificate:
    run = FloodRun(threshold=threshold, slow_s="1/1", reached=reached, trace=trace.model_dump(mode="json"))
    return cert.model_copy(update={"run": run})


def _run(doc: dict, n: int) -> tuple[Trace, int]:
    found = build_threshold_run(parse_topology(doc), ["U"], "J", n)
    assert not isinstance(found, str), found
    return found[0], found[2]


@pytest.mark.parametrize("n", [10, 40, 160])
def test_a_run_past_n_is_built_and_certified(n: int) -> None:
    """WIDE (U grows by rates, J `no-repeating-growth`): the run reaches N exactly at its last position, the
    certifier accepts it as a threshold witness for J, and the flood certificate with it is accepted."""
    trace, reached = _run(WIDE, n)
    assert reached >= n and trace.loop_start == trace.k + 1
    assert max(p.bolts["J"].queue for p in trace.positions) == reached
    assert certify(trace, checked=["J"], threshold=n).ok
    cert = by_rates(WIDE, "U", "J")
    assert cert is not None
    assert check_flood_certificate(cone(WIDE, "J"), _with_run(cert, trace, n, reached)) == []


def test_the_checker_rejects_a_broken_threshold_run() -> None:
    cert = by_rates(WIDE, "U", "J")
    assert cert is not None
    trace, reached = _run(WIDE, 20)
    whole = cone(WIDE, "J")
    # exactly reached: accepted (the certifier's comparison is "at least")
    assert check_flood_certificate(whole, _with_run(cert, trace, reached, reached)) == []
    # one more than J reaches: rejected, though U's backlog is far above it (and U is checked in the run's document)
    assert max(p.bolts["U"].queue for p in trace.positions) > reached + 1
    every = trace.model_copy(update={"topology": {**trace.topology, "verification": {
        **trace.topology["verification"], "checked": []}}})
    problems = check_flood_certificate(whole, _with_run(cert, every, reached + 1, reached))
    assert problems and problems[0].startswith("threshold run: not certified: no checked queue reaches"), problems
    # a run of another document (J slower there): legal there, not a run here
    slower = json.loads(json.dumps(WIDE))
    slower["bolts"][1]["alpha"] = 0.7
    other, got = _run(slower, 20)
    assert check_flood_certificate(whole, _with_run(cert, other, 20, got)) == [
        "threshold run: J is not in this document with the same parameters"]
    # a tampered position: J's queue raised without arrivals
    data = trace.model_dump(mode="json")
    data["positions"][3]["bolts"]["J"]["queue"] += 5
    broken = cert.model_copy(update={"run": FloodRun(threshold=20, slow_s="1/1", reached=reached, trace=data)})
    problems = check_flood_certificate(whole, broken)
    assert problems and problems[0].startswith("threshold run: not certified"), problems
    # no trace at all
    empty = cert.model_copy(update={"run": FloodRun(threshold=20, slow_s="1/1", reached=reached)})
    assert check_flood_certificate(whole, empty) == ["threshold run: no trace"]


def test_verify_flood_run_writes_the_run_and_check_certificate_checks_it(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path, out, traces = tmp_path / "flood.storm.json", tmp_path / "flood.cert.json", tmp_path / "t.json"
    path.write_text(json.dumps(FLOOD))
    assert main(["verify", str(path), "--flood-run", "30", "--trace-out", str(traces), "--certificate-out",
                 str(out), "-q"]) == 1
    text = capsys.readouterr().out
    assert "A certified finite run takes its queue to 30 (at least 30): U slow for" in text
    assert "(a run taking J's queue past 30)" in text
    assert main(["check-certificate", str(out)]) == 0
    assert "J: accepted (flood proof)" in capsys.readouterr().out
    data = json.loads(out.read_text())
    entry = next(e for e in data["certificates"] if "flood_certificate" in e)
    run = entry["flood_certificate"]["run"]
    assert run["threshold"] == 30 and run["trace"]["loop_start"] == run["trace"]["k"] + 1
    # the finite run among the traces written (U's lasso, when one is built for its trace, is another)
    written = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("t*.json"))]
    finite = [d for d in written if d["loop_start"] == d["k"] + 1]
    assert len(finite) == 1 and certify(finite[0], checked=["J"], threshold=30).ok
    run["threshold"] = 10_000
    out.write_text(json.dumps(data))
    assert main(["check-certificate", str(out)]) == 1
    assert "J: rejected (flood proof): threshold run: not certified: no checked queue reaches 10000" in (
        capsys.readouterr().out)


def _flood_doc(rng: random.Random) -> dict:
    """A random topology near a flood: U a little too slow for S at its slowest, J a little faster than S at its
    slowest; with a second input X of J, a cycle back into U, a failing bolt, both emission rules and replays."""
    r, tau, idle = rng.choice([1.0, 2.0]), rng.choice([0.1, 0.2, 0.3]), rng.choice([0.0, 0.05])
    cu, slow = rng.choice([1, 2]), (1 - tau) / r  # S emits up to r/(1−τ) tuples/s
    bolts = [("U", round((cu * slow * rng.choice([1.02, 1.05, 1.1]) - idle) / (1 + tau), 4), 1.0, cu),
             ("J", round((slow / rng.choice([1.08, 1.15, 1.2]) - idle) / (1 + tau), 4), 0.5, 1)]
    subs = [("S", "U"), ("U", "J")]
    failing: dict[str, float] = {}
    if rng.random() < 0.4:
        bolts.append(("X", 0.1, rng.choice([0.05, 0.0]), 1))
        subs += [("S", "X"), ("X", "J")]
        if rng.random() < 0.5:
            failing["X"] = rng.choice([3.0, 20.0])
    if rng.random() < 0.3:
        subs.append(("J", "U"))  # J passes on half of what it takes back into U: a cycle
    doc = _doc(bolts, subs, rate=r, tolerance=tau, idle=idle, emission=rng.choice(["exact", "dvert"]),
               failing=failing)
    if failing:
        doc["settings"]["replay"] = rng.choice(["paced", "at-once", "none"])
    return doc


def test_every_unbounded_bolt_has_a_run_past_ten_times_its_largest_lasso_queue() -> None:
    """Random topologies (cycles, failures, both emission rules), verified with the threshold run on: every bolt
    answered `unbounded` has a certified run past N = 10 × its largest queue in any lasso found (at least 10),
    accepted with its certificate by the flood checker, and the rate check does not prove it bounded (with failures
    as the document has them: a bolt flooded only thanks to replays is bounded without failures)."""
    rng = random.Random(4646)
    unbounded = 0
    for i in range(30):
        doc = _random_doc(rng) if i % 3 == 0 else _flood_doc(rng)
        topo = parse_topology(doc)
        found = verify(topo, SearchOptions(timeout_s=20))
        flooded = [n for n, v in found.bolts.items() if v.verdict == "unbounded"]
        if not flooded:
            continue
        status = rate_check(topo).bolts
        for name in flooded:
            cert = found.bolts[name].flood_certificate
            assert cert is not None
            largest = max((p.bolts[name].queue for t in found.traces for p in t.positions if name in p.bolts),
                          default=0)
            n = 10 * max(largest, 1)
            run = build_threshold_run(topo, chain_of(cert), name, n)
            assert not isinstance(run, str), (doc, name, run)
            trace, _, reached = run
            assert reached >= n and certify(trace, checked=[name], threshold=n).ok
            index = cert.evidence.trace_index
            assert check_flood_certificate(cone(doc, name), _with_run(cert, trace, n, reached),
                                           found.traces[index] if index is not None else None) == [], (doc, name)
            assert status[name].status != "bounded", (doc, name)  # the same document, failures as it has them
            unbounded += 1
    assert unbounded >= 8, unbounded


# S -> U (grows) -> V (keeps up in every repeating run; U floods it) -> W (V, once backed up, floods it): a chain
CHAIN = _doc([("U", 1.6, 1.0, 2), ("V", 0.5, 1.0, 1), ("W", 0.42, 0.0, 1)], [("S", "U"), ("U", "V"), ("V", "W")],
             tolerance=0.3)


def test_a_chain_of_floods_is_unbounded_with_a_nested_certificate_and_a_run() -> None:
    """W's source V is itself only `unbounded` (flooded by U): V's drain, 1/(0.5·0.7) = 20/7 tuples/s, beats W's
    slowest 500/273; the certificate nests V's and the run backs up U, then V, then drains V into W."""
    found = verify(parse_topology(CHAIN), SearchOptions(timeout_s=60, flood_run=40))
    v, w = found.bolts["V"], found.bolts["W"]
    assert v.verdict == w.verdict == "unbounded", (v.message, w.message)
    cert = w.flood_certificate
    assert cert is not None and cert.source == "V" and cert.evidence.flood_certificate is not None
    assert cert.evidence.flood_certificate.source == "U" and chain_of(cert) == ["U", "V"]
    assert "it is itself unbounded: U backs up, then floods it" in w.message
    assert cert.run is not None and cert.run.reached >= 40 and cert.run.trace_index is not None
    run_trace = found.traces[cert.run.trace_index]
    assert certify(run_trace, checked=["W"], threshold=40).ok
    assert check_flood_certificate(cone(CHAIN, "W"), cert, None, run_trace) == []
    # the nested certificate is checked too: a capacity that is not V's, or a certificate about another bolt
    nested = cert.evidence.flood_certificate
    wrong = cert.model_copy(update={"run": None, "evidence": cert.evidence.model_copy(update={
        "flood_certificate": nested.model_copy(update={"capacity": "1/100"})})})
    problems = check_flood_certificate(cone(CHAIN, "W"), wrong)
    assert problems and problems[0].startswith("evidence: capacity 1/100 is not V's smallest"), problems
    other = cert.model_copy(update={"run": None, "evidence": cert.evidence.model_copy(update={
        "flood_certificate": nested.model_copy(update={"target": "U"})})})
    assert check_flood_certificate(cone(CHAIN, "W"), other) == [
        "evidence: the flood certificate is about U, not V"]


def test_a_drain_that_does_not_beat_the_capacity_is_said_to_be_what_is_missing() -> None:
    """The tie of tests/unit/test_flood.py (τ 0.5: U drains at most 1 tuple/s, J takes 1 at its slowest): no
    certificate, and the shortfall names U, its drain and J's capacity."""
    doc = _doc([("U", 2, 1.0, 1), ("J", 0.5, 0.0, 1)], [("S", "U"), ("U", "J")], rate=1.0, tolerance=0.5,
               idle=0.25)
    growth = prove_growth(cone(doc, "U"), "U")
    assert growth is not None
    verdicts = {"U": BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                 growth_certificate=growth),
                "J": BoltVerdict(verdict="no-repeating-growth")}
    short: list[str] = []
    assert prove_flood(cone(doc, "J"), "J", verdicts, [], lambda n: cone(doc, n), None, short) is None
    assert short == ["U can hold any backlog, but its fastest drain with the least inflow of J's other inputs, "
                     "1 tuples/s, is not above the 1 J processes at its slowest"]


def test_check_shows_unbounded_where_the_source_grows_by_rates(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """No search: WIDE's U grows by rates, so `check` proves J unbounded (text, --json with an accepted
    certificate, and --fail-on grows exits 1), while J's rate status stays no-repeating-growth."""
    path = tmp_path / "wide.storm.json"
    path.write_text(json.dumps(WIDE))
    assert main(["check", str(path), "--fail-on", "grows"]) == 1
    text = capsys.readouterr().out
    assert "- J: unbounded: U backs up, then floods J at 1.786 tuples/s or more" in text
    assert "--fail-on grows: J" in text
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bolts"]["J"]["status"] == "no-repeating-growth" and list(data["unbounded"]) == ["J"]
    cert = FloodCertificate.model_validate(data["unbounded"]["J"]["flood_certificate"])
    assert check_flood_certificate(cone(WIDE, "J"), cert) == []
    path.write_text(json.dumps(FLOOD))  # U grows by rates there too: J unbounded, as verify says
    assert main(["check", str(path), "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["unbounded"]) == ["J"]
    path.write_text(json.dumps(_doc([("U", 0.5, 1.0, 1), ("J", 0.4, 0.0, 1)], [("S", "U"), ("U", "J")])))
    assert main(["check", str(path), "--json"]) == 0  # every bolt bounded: nothing to flood
    assert json.loads(capsys.readouterr().out)["unbounded"] == {}


def test_check_tries_sources_on_and_below_small_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    """`floods_by_rates` tries a source on or below a cycle (growth by rates goes through it in rounds) and skips
    only those on or below a cycle of more than LARGE_CYCLE members: on random topologies, with cycles, it finds
    exactly what it finds trying every source, floods from sources on a cycle among them."""
    from app.core.tcn import flood

    rng = random.Random(45)
    docs = [_random_doc(rng) if i % 2 else _flood_doc(rng) for i in range(40)]
    statuses = [{n: b.status for n, b in rate_check(parse_topology(d)).bolts.items()} for d in docs]
    fast = [flood.floods_by_rates(parse_topology(d), st) for d, st in zip(docs, statuses, strict=True)]
    monkeypatch.setattr(flood, "on_or_below_cycles", lambda topo, larger_than=0: set())
    slow = [flood.floods_by_rates(parse_topology(d), st) for d, st in zip(docs, statuses, strict=True)]
    assert [sorted(f) for f in fast] == [sorted(f) for f in slow] and sum(map(len, fast)) >= 5, (fast, slow)
    cyclic = [(doc, cert) for doc, found in zip(docs, fast, strict=True) for cert in found.values()
              if cert.evidence.growth_certificate is not None and cert.evidence.growth_certificate.rounds is not None]
    assert cyclic, "no flood from a source whose cone has a cycle"
    for doc, cert in cyclic:
        assert check_flood_certificate(cone(doc, cert.target), cert) == []
