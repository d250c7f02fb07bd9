"""Count-windowed bolts (docs/model.md section 10): the rate check against an independent tuple-by-tuple simulation
of Storm's windowed executor (its WindowManager: a count trigger every S tuples, a count eviction keeping the last L,
a tuple acked when it expires), and every layer that has no window rule yet deciding nothing through one."""

from __future__ import annotations

import json
import random
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest
from window_documents import windowed

from app.core.rates import rate_check
from app.core.topology import parse_topology


@dataclass
class Executor:
    """One executor of a windowed bolt, as Storm runs it: `execute(tuple)` adds the tuple to the window manager at
    once; every S-th tuple triggers: the tuples no longer among the last L expire (and are acked), then
    execute(TupleWindow) runs on the last L in the executor's own thread, α s, while tuples wait in its queue."""

    received: deque[int] = field(default_factory=deque)  # the receive queue: tuple numbers in arrival order
    window: deque[int] = field(default_factory=deque)  # tuples added to the window manager, not yet expired
    added: int = 0  # tuples added so far
    since_trigger: int = 0  # tuples added since the last trigger (not yet in an evaluated window)
    free_at: float = 0.0
    seen: int = 0  # tuples that reached this executor


@dataclass
class Played:
    unevaluated_max: int = 0  # receive queues + unfinished slides, over the executors
    pending_max: int = 0  # received, not yet acked
    later_max: int = 0  # the most tuples that reached a tuple's executor after it before its ack
    hold_times: list[float] = field(default_factory=list)  # arrival -> ack (s)
    unevaluated_end: int = 0


def storm_window(rate: float, alpha: float, length: int, slide: int, executors: int, horizon: float, *,
                 tolerance: float = 0.0, seed: int = 0) -> Played:
    """An independent simulation of a spout feeding a count-windowed bolt of `executors` executors (shuffle grouping:
    tuples dealt to the executors in turn); the spout's gaps and the evaluations jitter within `tolerance`."""
    rng = random.Random(seed)
    execs = [Executor() for _ in range(executors)]
    arrivals: dict[int, tuple[float, int, int]] = {}  # tuple -> (time, executor, the executor's count when it came)
    out = Played()
    t, n, turn = 0.0, 0, 0
    acked = 0
    while t <= horizon:
        ex = execs[turn]
        arrivals[n] = (t, turn, ex.seen)
        ex.seen += 1
        ex.received.append(n)
        n += 1
        turn = (turn + 1) % executors
        for e in execs:  # every executor works up to time t
            while e.received and e.free_at <= t:
                tup = e.received.popleft()
                e.window.append(tup)
                e.added += 1
                e.since_trigger += 1
                start = max(e.free_at, arrivals[tup][0])
                if e.added % slide:
                    e.free_at = start
                    continue
                while len(e.window) > length:  # eviction at the trigger: expired tuples are acked
                    gone = e.window.popleft()
                    came, _, count = arrivals[gone]
                    out.later_max = max(out.later_max, e.seen - 1 - count)
                    out.hold_times.append(start - came)
                    acked += 1
                e.since_trigger = 0
                e.free_at = start + alpha * (1 + rng.uniform(-tolerance, tolerance))
        unevaluated = sum(len(e.received) + e.since_trigger for e in execs)
        out.unevaluated_max = max(out.unevaluated_max, unevaluated)
        out.pending_max = max(out.pending_max, n - acked)
        out.unevaluated_end = unevaluated
        t += (1 / rate) * (1 + rng.uniform(-tolerance, tolerance))
    return out


@pytest.mark.parametrize(("rate", "alpha", "length", "slide", "executors"), [
    (10, 0.5, 30, 10, 1),  # storm-starter's SlidingWindowTopology: withWindow(Count(30), Count(10))
    (10, 0.01, 5, 3, 1),  # Storm's simple_windowing.yaml: withWindow(Count(5), Count(3))
    (16, 0.5, 30, 10, 1),  # near its smallest capacity at τ = 0.1, 10 / 0.55 ≈ 18.2 tuples/s
    (30, 0.2, 4, None, 2),  # a tumbling window on two executors
    (7, 0.3, 6, 2, 2)])
def test_every_run_bounds_hold_in_the_independent_simulation(rate: float, alpha: float, length: int,
                                                             slide: int | None, executors: int) -> None:
    """A bounded windowed bolt: its unevaluated tuples stay below the rate check's queue bound, its unacked tuples
    below its pending bound, and a tuple is acked within L + S − 1 later tuples on its executor, in runs with
    jitter too (τ = 0.1)."""
    for tolerance, seed in ((0.0, 0), (0.1, 1), (0.1, 2)):
        report = rate_check(parse_topology(windowed(rate, alpha, length, slide, executors, tolerance=tolerance)))
        w = report.bolts["W"]
        assert w.status == "bounded", w.explanation
        s = slide or length
        assert w.capacity_nominal == pytest.approx(executors * s / alpha)
        played = storm_window(rate, alpha, length, s, executors, 300, tolerance=tolerance, seed=seed)
        assert w.queue_bound is not None and w.window_pending is not None
        assert played.unevaluated_max <= w.queue_bound, (played.unevaluated_max, w.queue_bound)
        assert played.pending_max <= w.window_pending, (played.pending_max, w.window_pending)
        assert played.later_max <= length + s - 1
        if tolerance == 0:
            assert played.later_max == length + s - 1  # the bound is reached: the first tuple of a slide
            assert max(played.hold_times) <= w.window_hold_nominal + alpha + 1 / rate  # (its evaluation, a gap)


@pytest.mark.parametrize(("rate", "executors"), [(25, 1), (45, 2)])
def test_a_windowed_bolt_slower_than_its_inflow_grows_as_the_simulation_does(rate: float, executors: int) -> None:
    """Above p·S/α the evaluations fall behind: the rate check says grows, at the rate the simulation's backlog
    grows (one slide per α per executor)."""
    report = rate_check(parse_topology(windowed(rate, 0.5, 30, 10, executors)))
    w = report.bolts["W"]
    assert w.status == "grows" and w.queue_bound is None and w.window_pending is None
    played = storm_window(rate, 0.5, 30, 10, executors, 200)
    assert played.unevaluated_end / 200 == pytest.approx(w.growth_nominal, rel=0.05)


def test_the_explanation_says_the_window_in_storms_terms() -> None:
    w = rate_check(parse_topology(windowed(10, 0.5, 30, 10))).bolts["W"]
    assert ("it is a windowed bolt (withWindow(Count(30), Count(10))): its executor runs execute(TupleWindow) once "
            "per 10 tuples it receives, 0.5 s each, so it takes 10 tuples a batch per executor (C = 10)"
            in w.explanation)
    assert "it holds at most 50 tuples not yet acked (its queue bound and 1 × 30 in windows)" in w.explanation
    assert ("Storm acks a tuple when it leaves its last window, up to 39 tuples later on its executor: about 3.9 s at "
            "the nominal inflow, within topology.message.timeout.secs (30 s)") in w.explanation
    assert w.queue_bound == 20  # max(Q₀, C − 1) + C + b = 9 + 10 + 1
    slow = rate_check(parse_topology(windowed(1, 0.5, 30, 10, timeout=30))).bolts["W"]
    assert slow.status == "bounded" and slow.window_hold_nominal == 39
    assert "about 39 s at the nominal inflow, beyond topology.message.timeout.secs (30 s), so its trees time out" \
        in slow.explanation


def test_read_as_an_ordinary_bolt_its_queue_bound_would_be_broken() -> None:
    """A slide of 10 at 1 tuple/s leaves 9 tuples unevaluated for seconds: the ordinary bolt of the same executor (one
    tuple a batch) has the bound Q₀ + C + b = 2, which the simulation breaks; the window's, max(Q₀, C − 1) + C + b
    = 20, holds."""
    report = rate_check(parse_topology(windowed(1, 0.5, 30, 10))).bolts["W"]
    played = storm_window(1, 0.5, 30, 10, 1, 100)
    assert played.unevaluated_max == 9 and report.queue_bound == 20
    ordinary = windowed(1, 0.5, 30, 10)
    del ordinary["bolts"][0]["window"]
    assert rate_check(parse_topology(ordinary)).bolts["W"].queue_bound == 2 < played.unevaluated_max


def test_suggested_executors_count_the_slide() -> None:
    """At 45 tuples/s, slides of 10 evaluated in 0.5 s: 3 executors (capacity 60), not the 23 an ordinary bolt of
    one tuple per 0.5 s would need."""
    report = rate_check(parse_topology(windowed(45, 0.5, 30, 10, 1)))
    assert report.suggested_parallelism["W"] == 3


def test_a_windowed_bolt_with_failures_or_threads_is_refused_naming_the_field() -> None:
    from app.core.topology import TopologyError

    doc = windowed(10, 0.5, 30, 10)
    doc["bolts"][0]["min_ttf"] = 100
    with pytest.raises(TopologyError) as err:
        parse_topology(doc)
    assert err.value.problems[0].path == "bolts.W" and "min_ttf" in err.value.problems[0].message


def test_the_simulation_builds_a_certified_lasso_through_a_count_window() -> None:
    """Above p·S/α the simulation, which has the window rule, builds a lasso in which the bolt waits for a whole slide
    and takes it, growing by (25 − 20) tuples a second; the certifier, which has the rule too, accepts it. P below
    it is bounded by the rate check; a bounded window is proven by the rate check alone."""
    from app.core.tcn.check.certify import certify
    from app.core.tcn.search import SearchOptions, verify

    doc = windowed(25, 0.5, 30, 10)
    doc["verification"]["checked"] = ["W", "P"]
    result = verify(parse_topology(doc), SearchOptions(k_max=8))
    w = result.bolts["W"]
    assert result.verdict == "counterexample" and w.verdict == "counterexample" and w.method == "simulation"
    trace = result.traces[w.trace_index or 0]
    cert = certify(trace)
    assert cert.ok and cert.growth_per_loop == {"W": 5} and cert.loop_duration == 1
    takes = [p.bolts["W"].batch for p in trace.positions if p.bolts["W"].take]
    assert takes and set(takes) == {10}  # whole slides only
    assert result.bolts["P"].verdict == "bounded" and result.bolts["P"].method == "rate check"
    bounded = verify(parse_topology(windowed(10, 0.5, 30, 10)), SearchOptions(k_max=8))
    assert bounded.verdict == "bounded" and bounded.bolts["W"].queue_bound == 20  # the rate check's own proof


def test_the_solver_finds_a_certified_lasso_through_a_count_window() -> None:
    """The SMT encoding has the window rule too: without the simulation, the solver's lasso of a tumbling
    Count(2) window served 2 tuples per 0.5 s and fed 5 a second takes whole slides only, and the certifier
    accepts it (growth 1 per 1 s pass)."""
    from app.core.tcn.check.certify import certify
    from app.core.tcn.search import SearchOptions, verify

    doc = windowed(5, 0.5, 4, 2)
    doc["settings"]["init_queues"] = 3  # (a short prefix: the loop needs a slide waiting at every position)
    result = verify(parse_topology(doc), SearchOptions(k_max=16, simulate=False))
    w = result.bolts["W"]
    assert result.verdict == "counterexample" and w.method == "solver"
    trace = result.traces[w.trace_index or 0]
    assert certify(trace).ok and certify(trace).growth_per_loop == {"W": 1}
    assert {p.bolts["W"].batch for p in trace.positions if p.bolts["W"].take} == {2}


def test_a_duration_window_is_searched() -> None:
    """A duration window has its rule in the search (docs/model.md section 10.3): a target below one that the rate
    check does not prove gets a certified lasso (here by simulation); the windowed bolt itself is bounded by its timer
    (the rate check)."""
    from app.core.tcn.check.certify import certify
    from app.core.tcn.search import SearchOptions, verify

    doc = windowed(25, 0.5, 30, 10)
    doc["bolts"][0]["window"] = {"kind": "duration", "length": 10, "slide": 2}
    doc["bolts"][1]["alpha"] = 1.0  # P: 2.5 tuple/s against its 1
    doc["verification"]["checked"] = ["W", "P"]
    result = verify(parse_topology(doc), SearchOptions(k_max=8))
    assert result.bolts["W"].verdict == "bounded"
    assert result.bolts["P"].verdict == "counterexample" and result.bolts["P"].method == "simulation"
    assert certify(result.traces[0].model_dump(mode="json")).ok


def _window_lasso() -> dict[str, Any]:
    from app.core.tcn.search import SearchOptions, verify

    result = verify(parse_topology(windowed(25, 0.5, 30, 10)), SearchOptions(k_max=8))
    assert result.traces
    return result.traces[0].model_dump(mode="json")


def test_the_certifier_rejects_a_trace_that_breaks_the_window_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutations of a certified windowed lasso: a take of less than a slide, a partial slide, and a certifier that
    forgot the rule (it then reads the windowed bolt as an ordinary one, whose idle rule the lasso breaks)."""
    from app.core.tcn.check import certify_rules
    from app.core.tcn.check.certify import certify

    trace = _window_lasso()
    assert certify(trace).ok
    first = next(i for i, p in enumerate(trace["positions"]) if p["bolts"]["W"]["take"])
    early = json.loads(json.dumps(trace))  # the first take one position early, with 9 tuples
    row = early["positions"][first - 1]["bolts"]["W"]
    row.update(take=True, batch=9, phase="processing")
    problems = certify(early).problems
    assert any("less than its window's slide of 10" in p for p in problems), problems[:3]
    partial = json.loads(json.dumps(trace))  # a take of 9 of the 10 there
    partial["positions"][first]["bolts"]["W"]["batch"] = 9
    problems = certify(partial).problems
    assert any("takes 9 tuples but whole slides of 10 give 10" in p for p in problems), problems[:3]
    monkeypatch.setattr(certify_rules, "slide_bound", lambda bolt: 1)
    forgot = certify(trace)
    assert not forgot.ok and any("max_idle_time" in p or "min(parallelism" in p for p in forgot.problems)


def test_growth_by_rates_through_a_count_window_and_the_checkers_without_a_window_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Growth by rates has the count window (docs/verifier.md, "Growth proven by rates": the schedule takes whole
    slides): W, 10 tuples a slide per 0.5 s fed 25 a second, is proven to grow and its checker accepts the
    certificate; a checker that forgot the slide in C, or a document whose window is a duration (a timer never
    grows), is refused. The
    timeout-witness checker has no window rule for the bolt it counts: a witness of W is refused, naming it."""
    from app.core.tcn.check import rate_growth as growth_checker
    from app.core.tcn.check.latency_witness import check_witness
    from app.core.tcn.check.rate_growth import check_growth_certificate
    from app.core.tcn.network import build_network
    from app.core.tcn.rate_growth import prove_growth

    cone = build_network(parse_topology(windowed(25, 0.5, 30, 10)), ["W"]).document()
    cert = prove_growth(parse_topology(cone), "W")
    assert cert is not None and check_growth_certificate(cone, cert) == []
    assert cert.bolts["W"].role == "target" and Fraction(cert.bolts["W"].capacity) == 20
    assert prove_growth(parse_topology(build_network(parse_topology(windowed(15, 0.5, 30, 10)), ["W"]).document()),
                        "W") is None  # 15 a second is below its 20
    timed = json.loads(json.dumps(cone))
    next(b for b in timed["bolts"] if b["name"] == "W")["window"] = {"kind": "duration", "length": 30, "slide": 10}
    problems = check_growth_certificate(timed, cert)  # (a duration window only keeps up: docs/verifier.md)
    assert any("W: target, but a duration window's timer takes whatever arrived" in p for p in problems), problems
    monkeypatch.setattr(growth_checker, "take_bound", lambda bolt: bolt.parallelism)
    forgot = check_growth_certificate(cone, cert)
    assert forgot == ["W: capacity 20/1 is not the derived 2"]
    monkeypatch.undo()
    witness = check_witness(_window_lasso(), "W", 1, 80, Fraction(1))
    assert not witness.ok and "W is a windowed bolt" in witness.problems[0]


def test_a_spout_tree_through_a_window_gets_no_latency_bound() -> None:
    """A tuple is acked when later tuples push it out of its last window: no arrival curve bounds that from above,
    so no latency bound is claimed for a spout whose trees pass a windowed bolt, and the reason says why."""
    from app.core.latency.report import latency_report

    report = latency_report(parse_topology(windowed(10, 0.5, 30, 10)), witnesses=False, pending=False)
    assert report.spouts["S"].bound is None and report.sojourn_bound["W"] is None
    assert "W is a windowed bolt (withWindow(Count(30), Count(10))): Storm acks a tuple only when later tuples push " \
           "it out of its last window" in report.spouts["S"].reason


def test_storm_starters_sliding_window_topology_by_hand() -> None:
    """storm-starter's SlidingWindowTopology (tests/data/flux/storm-starter/): 10 integers/s into slidingsum
    (withWindow(Count(30), Count(10)), one sum per window: σ = 1/10), whose sums go to tumblingavg
    (withTumblingWindow(Count(3)): σ = 1/3). With one evaluation of 0.5 s, slidingsum serves 10 / 0.5 = 20 tuples/s:
    bounded below 9 + 10 + 1 = 20 tuples, 20 + 30 = 50 unacked, a tuple acked 39 tuples (3.9 s) later;
    tumblingavg receives one sum a second and acks a sum 3 + 3 − 1 = 5 sums (5 s) later: by hand."""
    from pathlib import Path

    from app.core.storm.flux.builder import import_flux
    from app.core.tcn.search import SearchOptions, verify

    flux = Path(__file__).resolve().parents[1] / "data" / "flux" / "storm-starter" / "sliding-window-topology.yaml"
    data = import_flux(flux).topology.model_dump(mode="json")
    assert {b["name"]: b.get("window") for b in data["bolts"]} == {
        "slidingsum": {"kind": "count", "length": 30, "slide": 10}, "tumblingavg": {"kind": "count", "length": 3},
        "printer": None}
    data["spouts"][0].update(rate=10, burst=1, unannotated=[])
    figures = {"slidingsum": (0.5, 0.1), "tumblingavg": (0.01, 1 / 3), "printer": (0.001, 0)}
    for b in data["bolts"]:
        b.update(alpha=figures[b["name"]][0], sigma=figures[b["name"]][1], unannotated=[])
    data["settings"].update(tolerance=0, max_idle_time=0)
    topo = parse_topology(data)
    report = rate_check(topo)
    total = report.bolts["slidingsum"]
    assert (total.status, total.queue_bound, total.window_pending, total.window_hold_nominal) == \
        ("bounded", 20, 50, pytest.approx(3.9))
    avg = report.bolts["tumblingavg"]
    assert avg.status == "bounded" and avg.inflow_max == pytest.approx(1) and avg.window_hold_nominal == \
        pytest.approx(5)
    assert "up to 5 tuples later on its executor: about 5 s at the nominal inflow" in avg.explanation
    result = verify(topo, SearchOptions(k_max=8))
    assert result.verdict == "bounded" and all(v.method == "rate check" for v in result.bolts.values())


def test_a_run_on_spark_refuses_a_windowed_bolt(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The run engine has no window rule: `stormbound run` refuses the document (exit 2), naming the field, rather
    than play the windowed bolt as an ordinary one."""
    from app.cli import main

    path = tmp_path / "win.storm.json"
    path.write_bytes(parse_topology(windowed(10, 0.5, 30, 10)).to_json_bytes())
    assert main(["run", str(path), "--duration", "5", "--out", str(tmp_path / "out")]) == 2
    assert "bolts.W.window: a run on Spark has no windowed bolts yet" in capsys.readouterr().err


def test_the_linear_program_reads_a_count_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows of one loop pass hold for a windowed lasso too (its batches are whole slides, at most C; a growing
    windowed queue holds a slide at every loop position, so it never idles): the product's certificate that no
    lasso makes W grow at 10 tuples/s (capacity 20) is accepted by the linear checker, and a checker that forgot the
    slide in C cannot follow it. Given a duration window
    instead, its rows are the timer's, which it does not follow."""
    from app.core.tcn.check import linear as check_linear
    from app.core.tcn.check.linear import check_certificate
    from tests.unit.test_linear import certificate_for

    found = certificate_for(parse_topology(windowed(10, 0.5, 30, 10)), "W")
    assert found is not None
    document, cert = found
    assert check_certificate(document, cert) == []
    duration = json.loads(json.dumps(document))
    next(b for b in duration["bolts"] if b["name"] == "W")["window"] = {"kind": "duration", "length": 10}
    assert check_certificate(duration, cert) != []  # (read by the timer's rows: no batch row for W)
    monkeypatch.setattr(check_linear, "take_bound", lambda bolt: bolt.parallelism)
    assert check_certificate(document, cert) != []


def test_a_count_window_that_backs_up_floods_the_bolt_below_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flood proof holds with whole slides (docs/boundedness.md, "Unbounded", count windows): U, a count window
    sliding by 2 (C = 2, α 1.6 s, τ 0.3), falls behind the spout's up to 10/7 tuples/s, then drains full slides at
    2/1.12 tuples/s into J, which takes at most 1/0.65: J is unbounded with a certificate its checker accepts; a
    checker that forgot the slide in C (U draining 1/1.12) refuses it."""
    from app.core.results import BoltVerdict
    from app.core.tcn.check import flood as flood_checker
    from app.core.tcn.check.flood import check_flood_certificate
    from app.core.tcn.flood import prove_flood
    from app.core.tcn.network import build_network
    from app.core.tcn.rate_growth import prove_growth
    from app.core.tcn.search import SearchOptions, verify

    doc: dict[str, Any] = {
        "schema_version": 4, "name": "flood", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "U", "alpha": 1.6, "sigma": 1, "parallelism": 1,
                   "window": {"kind": "count", "length": 4, "slide": 2}},
                  {"name": "J", "alpha": 0.5, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "U"}, {"source": "U", "target": "J"}],
        "settings": {"tolerance": 0.3, "max_idle_time": 0}, "verification": {"checked": ["U", "J"]}}
    topo = parse_topology(doc)

    def cone(name: str) -> Any:
        return build_network(topo, [name]).topology

    growth = prove_growth(cone("U"), "U")
    assert growth is not None
    verdicts = {"U": BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                 growth_certificate=growth), "J": BoltVerdict(verdict="no-repeating-growth")}
    cert = prove_flood(cone("J"), "J", verdicts, [], cone)
    assert cert is not None and cert.source == "U" and cert.terms[0].rate == "25/14"  # 2/(1.6·0.7)
    assert check_flood_certificate(cone("J"), cert, None) == []
    monkeypatch.setattr(flood_checker, "take_bound", lambda bolt: bolt.parallelism)
    assert check_flood_certificate(cone("J"), cert, None) != []
    monkeypatch.undo()
    result = verify(topo, SearchOptions(k_max=8, timeout_s=60))
    assert result.bolts["U"].verdict == "counterexample"
    j = result.bolts["J"]
    assert j.verdict == "unbounded" and j.method == "flood proof"
    assert (j.message or "").startswith("unbounded: U backs up, then floods J at 1.786 tuples/s or more")


def test_a_worker_death_loses_what_a_count_window_holds() -> None:
    """docs/boundedness.md, "Worker deaths", the loss per death: a count-windowed bolt's executors each hold the L
    tuples of the window they last evaluated, unacked ("Windows" 4): a death of their worker loses them too (their
    trees time out), on top of the queue, the batch and what arrives while it restarts; the line says so."""
    from app.core.rates.flows import RateFigures
    from app.core.rates.verdicts import status_of
    from app.core.rates.workers_check import worker_check
    from app.core.storm.lines import worker_deaths_line
    from app.core.workers import worker_model

    doc = windowed(25, 0.5, 30, 10, 2)
    doc["storm"] = {"workers": 1, "worker_min_ttf": 600, "max_spout_pending": 50}
    doc["settings"].update(min_reboot_time=1, max_reboot_time=2, replay="paced")
    topo = parse_topology(doc)
    e = RateFigures(topo)
    model = worker_model(topo)
    assert model is not None
    check = worker_check(topo, e, model, {b.id: status_of(e, b.id) for b in topo.bolts})
    assert check.bounds is not None
    w, p = topo.bolt_by_name("W").id, topo.bolt_by_name("P").id
    lost_w, lost_p = check.bounds.lost[w], check.bounds.lost[p]
    assert lost_w is not None and lost_p is not None
    assert check.loss == [lost_w + lost_p + 2 * 30]  # its one worker runs both executors, 30 tuples a window each
    assert "in windows (unacked: their trees time out too)" in worker_deaths_line(check, None)
