"""Duration windows in the search (docs/model.md section 10.3, "In the search"): a timer's run takes every waiting
tuple, at most G = (1+τ)·max(S, α) after its last run. Lassos through one built by simulation and by the solver and
certified, the linear program's rows and its checker, and what the certifier and the checker reject; the growth of a
lasso against the independent simulation of Storm's window manager (tests/unit/test_duration_windows.py)."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from test_duration_windows import storm_duration_window
from window_documents import windowed

from app.core.results import LinearCertificate
from app.core.tcn import schedule_order, simulate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.linear import LinearRow, build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.schedule import Schedule
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]


def timed(rate: float, alpha: float, length: float, slide: float | None, *, sigma: float = 0.1,
          p_alpha: float = 20.0, tolerance: float = 0, emission: str = "exact") -> dict[str, Any]:
    """S -> W (a duration window, σ `sigma`) -> P (α `p_alpha`), P checked."""
    doc = windowed(rate, alpha, length, slide, kind="duration", tolerance=tolerance, p_alpha=p_alpha)
    doc["bolts"][0]["sigma"] = sigma
    doc["settings"]["emission"] = emission
    doc["verification"]["checked"] = ["P"]
    return doc


def _sliding_duration(printer_alpha: float) -> Any:
    """storm-starter's sliding sum on arrival time as imported from its Flux file, annotated: 10 integers/s, 0.5 s an
    evaluation, one sum per 10 tuples, the printer `printer_alpha` a tuple, no jitter."""
    from app.core.storm.flux.builder import import_flux

    flux = ROOT / "tests" / "data" / "flux" / "storm-starter" / "sliding-duration-topology.yaml"
    doc = import_flux(flux).topology.model_dump(mode="json")
    doc["spouts"][0].update(rate=10, burst=1, unannotated=[])
    doc["bolts"][0].update(alpha=0.5, sigma=0.1, unannotated=[])
    doc["bolts"][1].update(alpha=printer_alpha, unannotated=[])
    doc["settings"]["tolerance"] = 0
    return parse_topology(doc)


def test_a_bolt_below_storm_starters_sliding_duration_window_gets_a_certified_lasso() -> None:
    """storm-starter's sliding sum on arrival time (its Flux file: withWindow(Duration(5 s), Duration(3 s)), 10
    tuples/s, one sum per 10 tuples) feeding a printer that serves one tuple per 20 s: verify builds a certified
    lasso by simulation (no longer 'not searched'); the printer gains 19 per 20 s pass, the fluid 1 - 1/20 tuples/s,
    and in the independent simulation of Storm's window manager its queue grows at that rate too. With a printer of
    0.5 s a tuple every bolt is bounded, with its bound."""
    bounded = verify(_sliding_duration(0.5), SearchOptions(k_max=8))
    assert bounded.verdict == "bounded" and bounded.bolts["printer"].queue_bound is not None
    result = verify(_sliding_duration(20.0), SearchOptions(k_max=8))
    p = result.bolts["printer"]
    assert result.bolts["slidingsum"].verdict == "bounded"
    assert p.verdict == "counterexample" and p.method == "simulation" and p.certified
    assert "not searched" not in (p.message or "")
    trace = result.traces[0]
    cert = certify(trace.model_dump(mode="json"))
    assert cert.ok and cert.loop_duration is not None
    gain = Fraction(cert.growth_per_loop["printer"]) / cert.loop_duration
    assert gain == Fraction(19, 20)
    # the window's runs in the lasso take all it holds, at most G = 3 s after the run before
    runs = [(p_.exact_time, p_.bolts["slidingsum"]) for p_ in trace.positions if p_.bolts["slidingsum"].take]
    assert all(b.batch == b.queue + b.arrivals for _, b in runs)
    assert all(later - earlier <= 3 for (earlier, _), (later, _) in zip(runs, runs[1:], strict=False))
    # Storm's window manager feeding P (σ 0.1 per tuple taken at each evaluation's end, one served per 20 s)
    played = storm_duration_window(10, 0.5, 5, 3, 1, 200, counts=False)
    carry, queue, free, seen = 0.0, 0, 0.0, []
    for end, k in sorted(played.taken):
        while queue and free + 20 <= end:
            free, queue = free + 20, queue - 1
        free = max(free, end) if not queue else free
        carry += 0.1 * k
        queue, carry = queue + int(carry), carry - int(carry)
        seen.append((end, queue))
    early = max(q for t, q in seen if t <= 50)
    late = max(q for t, q in seen if t <= 200)
    assert (late - early) / 150 == pytest.approx(float(gain), rel=0.1)


@pytest.mark.parametrize("emission", ["exact", "dvert"])
def test_the_solver_finds_a_lasso_through_a_duration_window(emission: str) -> None:
    """Without the simulation, the solver's lasso through a tumbling 1 s window (2 tuples/s into P serving one per
    second) is certified, under either emission rule."""
    doc = timed(2, 0.1, 1, None, sigma=1, p_alpha=1.0, emission=emission)
    result = verify(parse_topology(doc), SearchOptions(k_max=10, simulate=False, timeout_s=60))
    p = result.bolts["P"]
    assert p.verdict == "counterexample" and p.method == "solver" and p.certified
    assert certify(result.traces[0].model_dump(mode="json")).ok


def test_a_lasso_through_a_window_whose_evaluations_fall_behind() -> None:
    """Evaluations of 4 s on a 3 s timer run back to back: G = (1+τ)·max(S, α) = 4.4 s with τ = 0.1, and the
    certified lasso's runs are further apart than (1+τ)·S = 3.3 s."""
    doc = timed(10, 4.0, 5, 3, tolerance=0.1)
    result = verify(parse_topology(doc), SearchOptions(k_max=8))
    assert result.bolts["P"].verdict == "counterexample" and result.bolts["P"].certified
    trace = result.traces[0]
    assert certify(trace.model_dump(mode="json")).ok
    runs = [p.exact_time for p in trace.positions if p.bolts["W"].take]
    gaps = [later - earlier for earlier, later in zip(runs, runs[1:], strict=False)]
    assert max(gaps) > Fraction(33, 10) and max(gaps) <= Fraction(44, 10)


def _slow_timer(net: Any, target: str, *_: Any, **__: Any) -> Iterator[Schedule]:
    """One schedule in which W runs 3.1 s after its last run (beyond its G of 3 s, but within 3 s of the first tuple
    that arrived after that run, 0.1 s later), P every 18.6 s (six runs of W); what arrives while W is idle and
    empty it takes at once."""
    yield Schedule(None, {"S": Fraction(1, 10)}, {"W": Fraction(1, 2), "P": Fraction(93, 5)},
                   {"W": Fraction(31, 10), "P": Fraction(0)}, {"W": True, "P": True})


def test_the_certifier_has_the_timers_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The certifier's own copy of the rule: a lasso whose W runs 3.1 s after its last run is rejected (the tuples
    that arrived during its evaluation waited longer than G = 3 s, though less than G since they arrived); a trace
    whose W takes fewer than it holds, or whose W is read as an ordinary bolt, is rejected."""
    doc = timed(10, 0.5, 5, 3, p_alpha=18.6)
    net = build_network(parse_topology(doc), ["P"])
    monkeypatch.setattr(schedule_order, "schedules", _slow_timer)
    late = simulate.build_lasso(net, "P")
    monkeypatch.undo()
    assert late.trace is not None
    problems = certify(late.trace).problems
    assert any("W: tuples wait" in x and "longer than its timer's G = 3 s" in x for x in problems), problems[:3]
    good = simulate.build_lasso(net, "P").trace
    assert good is not None and certify(good).ok
    data = good.model_dump(mode="json")
    first = next(i for i, p in enumerate(data["positions"]) if p["bolts"]["W"]["take"])
    data["positions"][first]["bolts"]["W"]["batch"] -= 1
    assert any("its timer's run takes all it holds" in x for x in certify(data).problems)
    ordinary = good.model_dump(mode="json")
    ordinary["topology"]["bolts"][0]["window"] = None
    assert not certify(ordinary).ok


def test_the_linear_program_reads_a_duration_window() -> None:
    """The rows of a cone with a duration window (no bound per batch, its queue never grows) prove a P that keeps up
    never grows, under either emission rule (a "dvert" W of σ 3/4 emits σ to σ + 1/4 per tuple it takes, whatever
    its batches), and the checker accepts; W itself never grows (its `timer` row), a
    checker without that row refuses the certificate; a row bounding W's batches, which no run obeys, lets the
    program 'prove' a growing P bounded, and the checker refuses that certificate."""
    for emission, sigma, p_alpha in (("exact", 0.5, 1.0), ("dvert", 0.5, 1.0), ("dvert", 0.75, 0.4)):
        doc = timed(2, 0.1, 1, None, sigma=sigma, p_alpha=p_alpha, emission=emission)
        net = build_network(parse_topology(doc), ["P"])
        found = farkas(build_rows(net, "P"))
        assert found is not None
        cert = LinearCertificate(target="P", content_hash=content_hash(net.topology),
                                 rows={k: str(v) for k, v in found.items()})
        assert check_certificate(net.topology, cert) == []
    net = build_network(parse_topology(timed(10, 0.5, 5, 3)), ["W"])
    found = farkas(build_rows(net, "W"))
    assert found is not None and "timer[W]" in found
    cert = LinearCertificate(target="W", content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in found.items()})
    assert check_certificate(net.topology, cert) == []
    # P grows (1 tuple/s into one per 20 s); W read as taking one tuple per 2.5 s evaluation would starve it
    net = build_network(parse_topology(timed(10, 2.5, 5, 3)), ["P"])
    assert farkas(build_rows(net, "P")) is None
    wrong = build_rows(net, "P") + [LinearRow("batch[W]", "ge", {"K[W]": Fraction(1), "P[W]": Fraction(-1)})]
    fake = farkas(wrong)
    assert fake is not None and "batch[W]" in fake
    cert = LinearCertificate(target="P", content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in fake.items()})
    assert check_certificate(net.topology, cert) != []
    # under "dvert" a W of σ 3/4 taking one tuple a run would emit one per tuple; its runs of ~100 tuples emit about
    # 3/4: a ratio row from batches of one (E ≥ P), with its rounding row, caps its batches and 'proves' P bounded
    net = build_network(parse_topology(timed(100, 0.1, 1, None, sigma=0.75, p_alpha=0.1, emission="dvert")), ["P"])
    rows = build_rows(net, "P")
    assert farkas(rows) is None
    wrong = [LinearRow(r.name, r.kind, {**r.coefficients, "P[W]": Fraction(-1)}) if r.name == "ratio-lo[W/default]"
             else r for r in rows]
    fake = farkas(wrong)
    assert fake is not None and "ratio-lo[W/default]" in fake
    cert = LinearCertificate(target="P", content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in fake.items()})
    assert check_certificate(net.topology, cert) != []


@pytest.mark.parametrize(("kind", "length", "slide"), [("duration", 5, 3), ("count", 30, 10)])
def test_a_timeout_witness_below_a_window(kind: str, length: int, slide: int) -> None:
    """A bolt below a window (storm-starter's sliding sums, on arrival time or in tuples) that grows gets a timeout
    witness: a certified lasso through the window in which a tuple of P, whose tree is S's (the chain from S's emit
    through W's), waits longer than the 30 s message timeout before P takes it, its tree pending longer still (its
    hold in W's window and the wait, recomputed by the checker); the latency report says `times-out`.
    A witness counting a wait in W itself is refused (its tuples wait in its windows)."""
    from app.core.latency.report import latency_report
    from app.core.latency.witness import timeout_witness
    from app.core.tcn.check.latency_witness import check_witness

    doc = windowed(10, 0.5, length, slide, kind=kind, p_alpha=20.0)
    topo = parse_topology(doc)
    witness = timeout_witness(topo, "P", Fraction(30))
    assert witness is not None and witness.wait > 30 and witness.root == "S"
    assert [name for name, _ in witness.chain] == ["S", "W"]
    checked = check_witness(witness.trace, "P", witness.loop_pass, witness.position, Fraction(30), chain=witness.chain)
    assert checked.ok and checked.root == "S" and checked.wait == witness.wait
    # the tree is pending from S's emit: its hold in W's window, then P's wait
    tree = witness.tree_pending
    assert tree is not None and checked.figures["tree_pending"] == tree and tree > witness.wait
    stated = {**witness.to_json(), "tree_pending": str(tree - 1)}
    tampered = check_witness(witness.trace, "P", witness.loop_pass, witness.position, Fraction(30),
                             chain=witness.chain, stated=stated)
    assert not tampered.ok and any("the stated tree_pending" in x for x in tampered.problems)
    answer = latency_report(topo, pending=False).spouts["S"]
    assert answer.answer == "times-out" and "held in the window of W on its way" in answer.sentence
    refused = check_witness(witness.trace, "W", witness.loop_pass, witness.position, Fraction(1))
    assert not refused.ok and "W is a windowed bolt" in refused.problems[0]


def test_the_rate_check_the_simulation_and_the_linear_program_agree_through_a_timer() -> None:
    """On random S -> W (a duration window) -> P topologies (rates, evaluations, intervals, jitter, σ, emission rule):
    where the rate check proves P bounded the linear program proves it too and no lasso is built; where it says P
    grows or may grow, the simulation builds a lasso the certifier accepts and the program has no proof."""
    import random

    from app.core.rates import rate_check
    from app.core.tcn.simulate import build_lasso

    rng = random.Random(3)
    seen = set()
    for _ in range(12):
        slide = rng.choice([0.5, 1, 2, 3])
        doc = timed(rng.choice([2, 4, 5, 10]), rng.choice([0.1, 0.2, 0.5, 1.0]), slide * 2, slide,
                    sigma=rng.choice([0.1, 0.5, 1, 2]), p_alpha=rng.choice([0.05, 0.2, 0.5, 1.0, 2.0]),
                    tolerance=rng.choice([0, 0.1, 0.2]), emission=rng.choice(["exact", "dvert"]))
        topo = parse_topology(doc)
        status = rate_check(topo).bolts["P"].status
        net = build_network(topo, ["P"])
        proof = farkas(build_rows(net, "P"))
        lasso = build_lasso(net, "P", max_cells=20_000)
        grows = lasso.trace is not None and certify(lasso.trace).ok
        assert (status == "bounded") == (proof is not None) == (not grows), (doc, status, lasso.message)
        seen.add(status)
    assert seen >= {"bounded", "grows"}
