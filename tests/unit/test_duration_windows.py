"""Duration-windowed bolts (docs/model.md section 10.3): the rate check's timer rule against an independent simulation
of Storm's windowed executor on processing time (storm-client's TimeTriggerPolicy: scheduleAtFixedRate every S on a
thread of its own; TimeEvictionPolicy: a tuple expires once the reference time is L plus the drift delta past it;
WindowManager: expired tuples acked at the trigger, the window's new tuples evaluated), and the layers that have no
duration rule saying so."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from window_documents import windowed

from app.core.rates import rate_check
from app.core.rates.flows import RateFigures
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]


def timed(rate: float, alpha: float, length: float, slide: float | None, parallelism: int = 1, *,
          tolerance: float = 0, timeout: int | None = None, p_alpha: float = 0.001) -> dict[str, Any]:
    """S -> W (a duration window) -> P (ordinary)."""
    return windowed(rate, alpha, length, slide, parallelism, kind="duration", tolerance=tolerance, timeout=timeout,
                    p_alpha=p_alpha)


@dataclass
class TimedExecutor:
    """One executor's window manager on processing time, as storm-client runs it."""

    events: list[tuple[float, int]] = field(default_factory=list)  # (time stamp, tuple) in the manager's queue
    prev_ref: float | None = None  # the previous trigger's reference time (None: no trigger yet)
    delta: float = math.inf  # TimeEvictionPolicy's drift adjustment (the first window keeps everything)
    prev_window: set[int] = field(default_factory=set)
    last_start: float = 0.0  # the last trigger's start (tuples since then are in no evaluated window)
    added_since_scan: int = 0


@dataclass
class TimedPlay:
    holds: list[float] = field(default_factory=list)  # arrival -> ack (s)
    emit_delays: list[float] = field(default_factory=list)  # arrival -> the end of the evaluation it was new in
    unevaluated_max: int = 0
    pending_max: int = 0
    taken: list[tuple[float, int]] = field(default_factory=list)  # (evaluation end, new tuples it took)
    losses: list[int] = field(default_factory=list)  # per death: unacked tuples held, and arrivals while down


def storm_duration_window(rate: float | tuple[float, ...], alpha: float, length: float, slide: float, executors: int,
                          horizon: float, *, tolerance: float = 0.0, seed: int = 0, counts: bool = True,
                          deaths: tuple[tuple[float, float], ...] = ()) -> TimedPlay:
    """A spout (one tuple per 1/rate·(1±τ) s; several spouts' tuples merged in time order when `rate` is a tuple,
    as Storm's JoinBolt receives its inputs, dealt to the executors in turn) into a duration-windowed bolt: per
    executor a fixed-rate timer (scheduled k·S; a run starts at the later of that and the previous run's end), each
    run expiring (acking) what TimeEvictionPolicy expires, then evaluating the window for α(1±τ) s (nothing when the
    window is empty); every 100 additions the executor's thread compacts the window with the last context.
    `counts`: the unevaluated and pending tuples at every arrival too (quadratic: short horizons only).
    `deaths`: (time, restart) of the worker running every executor: a death loses every tuple its window managers
    hold unacked and what arrives until the restart, then each executor starts afresh (a new timer from the restart;
    `losses`, per executor and death)."""
    rng = random.Random(seed)
    out = TimedPlay()
    times: list[float] = []
    for one in rate if isinstance(rate, tuple) else (rate,):
        t = 0.0
        while t <= horizon:
            times.append(t)
            t += (1 / one) * (1 + rng.uniform(-tolerance, tolerance))
    arrivals = [(at, n, n % executors) for n, at in enumerate(sorted(times))]  # (time, tuple, executor)
    came = {tup: at for at, tup, _ in arrivals}
    acked: dict[int, float] = {}
    execs = [TimedExecutor() for _ in range(executors)]
    starts: list[list[float]] = [[] for _ in range(executors)]  # per executor its timer's runs' starts
    # play every executor on its own: its arrivals and its timer's runs in time order
    for ex_id, ex in enumerate(execs):
        mine = [(at, tup) for at, tup, e in arrivals if e == ex_id]
        k, free, i, base, dying = 1, 0.0, 0, 0.0, list(deaths)
        while base + k * slide <= horizon + length + 4 * slide + 4 * alpha:
            start = max(base + k * slide, free)
            if dying and dying[0][0] <= start:  # the worker dies before this run: everything unacked is lost
                died, down = dying.pop(0)
                i, ex = _die(ex, mine, i, died, down, out), TimedExecutor()
                k, free, base = 1, died + down, died + down
                continue
            while i < len(mine) and mine[i][0] < start:  # additions before the run (the executor's thread)
                ex.events.append(mine[i])
                ex.added_since_scan += 1
                if ex.added_since_scan >= 100 and ex.prev_ref is not None:  # compactWindow: a partial scan
                    ex.added_since_scan = 0
                    while ex.events and ex.prev_ref - ex.events[0][0] >= length + ex.delta:
                        acked[ex.events.pop(0)[1]] = mine[i][0]
                i += 1
            ref = start
            starts[ex_id].append(start)
            ex.delta = math.inf if ex.prev_ref is None else ref - ex.prev_ref - slide
            ex.prev_ref = ref
            ex.added_since_scan = 0
            kept = []
            for ts, tup in ex.events:  # the full scan: expire, else process
                if ref - ts >= length + ex.delta:
                    acked[tup] = start
                else:
                    kept.append((ts, tup))
            ex.events = kept
            window = {tup for ts, tup in kept if ts <= ref}
            new = window - ex.prev_window
            ex.prev_window = window
            ex.last_start = start
            took = alpha * (1 + rng.uniform(-tolerance, tolerance)) if window else 0.0
            end = start + took
            if new:
                out.taken.append((end, len(new)))
                out.emit_delays.extend(end - came[tup] for tup in new)
            free = end
            k += 1
    out.holds = [acked[tup] - came[tup] for tup in came if tup in acked]
    # unevaluated and pending tuples at every arrival (their largest values are reached just before a trigger)
    for at, _, _ in arrivals if counts else []:
        last = {e: max([s for s in starts[e] if s <= at], default=0.0) for e in range(executors)}
        out.unevaluated_max = max(out.unevaluated_max, sum(1 for a, _, e in arrivals if last[e] <= a <= at))
        out.pending_max = max(out.pending_max, sum(1 for a, tup, _ in arrivals
                                                   if a <= at and acked.get(tup, math.inf) > at))
    return out


def _die(ex: TimedExecutor, mine: list[tuple[float, int]], i: int, died: float, down: float, out: TimedPlay) -> int:
    """A death at `died`: the tuples added by then and not yet acked (its queue, its run, its windows) and those
    arriving until the restart are lost; returns the index of the first arrival after the restart."""
    while i < len(mine) and mine[i][0] < died:
        ex.events.append(mine[i])
        i += 1
    lost = len(ex.events)
    while i < len(mine) and mine[i][0] < died + down:
        lost, i = lost + 1, i + 1
    out.losses.append(lost)
    return i


CASES = [
    (10, 0.5, 5, 3, 1, 0.0),  # storm-starter's SlidingTupleTsTopology window on arrival time, 0.5 s a window
    (10, 4.0, 5, 3, 1, 0.1),  # evaluations longer than the sliding interval: back to back
    (40, 0.3, 2, None, 2, 0.2),  # tumbling, two executors, jitter
]


@pytest.mark.parametrize(("rate", "alpha", "length", "slide", "executors", "tolerance"), CASES)
def test_the_rate_checks_timer_rule_holds_in_storms_window_manager(rate: float, alpha: float, length: float,
                                                                   slide: float | None, executors: int,
                                                                   tolerance: float) -> None:
    """W is bounded at any inflow; the simulated unevaluated tuples, pending tuples, hold times and emission delays
    stay within the rate check's figures (queue bound, window_pending, window_hold_max, G + α(1+τ))."""
    doc = timed(rate, alpha, length, slide, executors, tolerance=tolerance, timeout=60)
    topo = parse_topology(doc)
    w = rate_check(topo).bolts["W"]
    assert w.status == "bounded" and w.window_timer == (slide or length)
    played = storm_duration_window(rate, alpha, length, slide or length, executors, 40, tolerance=tolerance)
    assert played.holds and played.emit_delays
    assert w.queue_bound is not None and played.unevaluated_max <= w.queue_bound
    assert w.window_pending is not None and played.pending_max <= w.window_pending
    assert w.window_hold_max is not None and max(played.holds) <= w.window_hold_max + 1e-9
    e = RateFigures(topo)
    w_id = topo.bolt_by_name("W").id
    assert max(played.emit_delays) <= float(e.timed[w_id] + e.longest_phase[w_id]) + 1e-9
    if tolerance == 0 and alpha <= (slide or length):  # nominal: held L to L + S (Storm's own validation bound)
        assert length - 1e-9 <= min(played.holds) and max(played.holds) <= w.window_hold_nominal + 1e-9
        assert w.window_hold_nominal == length + (slide or length)
    # what W passes on in any window of length v stays under the stream's every-run curve (σ per tuple taken)
    r, b = e.stream_windows[(w_id, "default")]
    ends = [end for end, _ in played.taken]
    for v in (0.5, 3.0, 10.0):
        most = max(sum(k for end, k in played.taken if u <= end <= u + v) for u in ends)
        assert Fraction(1, 10) * most <= r * Fraction(v) + b


def test_falling_behind_holds_tuples_past_length_plus_slide() -> None:
    """The 2G of the hold bound is needed: once evaluations outlast the sliding interval, Storm's window manager acks
    tuples later than L + S (its startup validation's figure), and the rate check says the evaluations fall
    behind."""
    played = storm_duration_window(10, 4.0, 5, 3, 1, 40)
    assert max(played.holds) > 5 + 3
    w = rate_check(parse_topology(timed(10, 4.0, 5, 3, timeout=60))).bolts["W"]
    assert "its evaluations fall behind their timer and run back to back" in w.explanation
    assert w.window_hold_max == pytest.approx(5 - 3 + 2 * 4)


def test_a_duration_window_never_limits_and_is_said_in_storms_terms() -> None:
    """Its timer takes whatever arrived: bounded at 10,000 tuples/s with 10 s a window, its executors kept by the
    suggestion, ρ the evaluation's share of its interval, the headroom limited by another bolt; a hold beyond the
    message timeout is said."""
    topo = parse_topology(timed(10_000, 2.0, 20, 10, 3, tolerance=0.1, timeout=30, p_alpha=0.00001))
    report = rate_check(topo)
    w = report.bolts["W"]
    assert w.status == "bounded" and w.utilisation == pytest.approx(0.2)
    assert report.suggested_parallelism["W"] == 3
    assert ("each of its 3 executors' timers runs execute(TupleWindow) every 10 s on whatever arrived, 2 s each, so "
            "its evaluations keep their timer") in w.explanation
    assert w.explanation.endswith("(30 s at nominal timing), beyond topology.message.timeout.secs (30 s): its trees "
                                  "may time out and be replayed") is False  # 30 s is not beyond 30 s
    assert "not proven in every run" in w.explanation  # every run: 20 − 10 + 2 × 11 = 32 s > 30 s
    public = report.to_public_json()["bolts"]["W"]
    assert public["window_timer"] == 10 and public["window_hold_max"] == pytest.approx(32)


def test_a_spout_tree_through_a_duration_window_gets_a_latency_bound() -> None:
    """docs/latency.md, "Duration windows": W's sojourn is its hold bound L − S + 2G, whatever arrives, so the
    spout's trees complete within it plus P's sojourn."""
    from app.core.latency.report import latency_report

    topo = parse_topology(timed(10, 0.5, 5, 3, timeout=30))
    lat = latency_report(topo, witnesses=False, pending=False)
    assert lat.sojourn_bound["W"] == pytest.approx(8.0)
    tree = lat.spouts["S"].bound
    assert tree is not None and 8.0 < tree < 8.01


def test_the_search_and_its_checkers_no_longer_refuse_a_duration_window() -> None:
    """The search simulates and solves a cone through a duration window (docs/model.md 10.3, "In the search"): without
    growth by rates or the simulation (--no-simulate) P is searched by the solver, no longer `unknown` for want of a
    rule; the certifier reads a lasso through a count window given a duration window by the timer's rule (its
    takes of whole slides are not all W holds: rejected for that, not refused)."""
    from app.core.tcn.check.certify import certify
    from app.core.tcn.search import SearchOptions, verify

    doc = timed(10, 0.5, 5, 3, p_alpha=20.0)  # P: 0.05 tuples/s against 1
    doc["verification"]["checked"] = ["W", "P"]
    topo = parse_topology(doc)
    report = rate_check(topo)
    assert report.bolts["W"].status == "bounded" and report.bolts["P"].status == "grows"
    with_count = json.loads(json.dumps(doc))
    with_count["bolts"][0]["window"] = {"kind": "count", "length": 30, "slide": 10}
    with_count["bolts"][0]["alpha"] = 0.5
    with_count["spouts"][0]["rate"] = 25
    with_count["verification"]["checked"] = ["W"]
    found = verify(parse_topology(with_count), SearchOptions(k_max=8))
    trace = found.traces[0].model_dump(mode="json")
    assert certify(trace).ok  # a certified lasso through a count window; given a duration window, read by its rule
    trace["topology"]["bolts"][0]["window"] = {"kind": "duration", "length": 5, "slide": 3}
    cert = certify(trace)
    assert not cert.ok and "no rule" not in " ".join(cert.problems)
    assert any("its timer's run takes all it holds" in x or "W grows by" in x for x in cert.problems)
    result = verify(topo, SearchOptions(k_max=4, simulate=False))
    assert result.bolts["W"].verdict == "bounded" and result.bolts["P"].verdict == "none-up-to-k"
    assert "not searched" not in (result.bolts["P"].message or "")


def test_growth_by_rates_through_a_duration_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Growth by rates has the timer (docs/verifier.md): P below W, fed 1/3 tuple/s (σ 1/30 of 10) and processing 1
    per 20 s, is proven to grow, W keeping up at the checker's stated 2^62; a certificate that reads W as an ordinary
    bolt, or calls it saturated, is refused. In an independent simulation of Storm's window manager feeding P, P's
    queue grows at least at the certified rate."""
    from app.core.results import RateGrowthLine
    from app.core.tcn.check import rate_growth as growth_checker
    from app.core.tcn.check.rate_growth import check_growth_certificate
    from app.core.tcn.network import build_network
    from app.core.tcn.rate_growth import prove_growth
    from app.core.tcn.search import SearchOptions, verify

    doc = timed(10, 0.5, 5, 3, p_alpha=20.0)
    doc["bolts"][0]["sigma"] = 0.1
    doc["verification"]["checked"] = ["W", "P"]
    p = verify(parse_topology(doc), SearchOptions(k_max=8)).bolts["P"]  # (a lasso by simulation comes first)
    assert p.verdict == "counterexample" and p.method == "simulation"
    cert = prove_growth(build_network(parse_topology(doc), ["P"]).topology, "P")
    assert cert is not None
    assert cert.bolts["W"].role == "keeps up" and Fraction(cert.bolts["W"].capacity) == 2**62
    cone = build_network(parse_topology(doc), ["P"]).document()
    assert check_growth_certificate(cone, cert) == []
    ordinary = cert.model_copy(deep=True)
    ordinary.bolts["W"] = RateGrowthLine(role="keeps up", inflow_low=cert.bolts["W"].inflow_low,
                                         inflow_high=cert.bolts["W"].inflow_high, capacity="2")
    assert any("W: capacity 2 is not the derived" in x for x in check_growth_certificate(cone, ordinary))
    saturated = cert.model_copy(deep=True)
    saturated.bolts["W"] = cert.bolts["W"].model_copy(update={"role": "saturated"})
    assert any("a duration window's timer takes whatever arrived" in x
               for x in check_growth_certificate(cone, saturated))
    monkeypatch.setattr(growth_checker, "TIMER_CAPACITY", Fraction(2))  # a checker that reads W as 1 per 0.5 s
    assert check_growth_certificate(cone, cert) != []
    monkeypatch.undo()
    # Storm's window manager feeding P: P gets 0.1 per tuple W took at each evaluation's end, serves one per 20 s
    played = storm_duration_window(10, 0.5, 5, 3, 1, 400, counts=False)
    gain = Fraction(cert.bolts["P"].inflow_low) - Fraction(cert.bolts["P"].capacity)
    arrivals = sorted((end, k) for end, k in played.taken)
    carry, queue, free, at = 0.0, 0, 0.0, {}
    for end, k in arrivals:
        while queue and free + 20 <= end:  # P serves one tuple every 20 s while it has one
            free, queue = free + 20, queue - 1
        free = max(free, end) if not queue else free
        carry += 0.1 * k
        queue += int(carry)
        carry -= int(carry)
        at[end] = queue
    early = max(q for t, q in at.items() if t <= 100)
    late = max(q for t, q in at.items() if t <= 400)
    assert late - early >= float(gain) * 300 * 0.8


def test_storm_starters_sliding_window_on_arrival_time_imports_and_checks() -> None:
    """storm-starter's SlidingTupleTsTopology's window, withWindow(Duration(5 s), Duration(3 s)), on arrival time
    (tests/data/flux/storm-starter/sliding-duration-topology.yaml): imported as a duration window, annotated, bounded
    with its hold time; the event-time original (withTimestampField) stays marked, not modelled."""
    from app.core.storm.flux.builder import import_flux

    flux = ROOT / "tests" / "data" / "flux" / "storm-starter"
    topo = import_flux(flux / "sliding-duration-topology.yaml").topology
    bolt = topo.bolt_by_name("slidingsum")
    assert bolt.window is not None and bolt.window.model_dump() == {"kind": "duration", "length": 5, "slide": 3}
    event_time = import_flux(flux / "sliding-tuple-ts-topology.yaml").topology.bolt_by_name("slidingsum")
    assert event_time.window is None and event_time.unmodelled is not None and "withTimestampField" in \
        event_time.unmodelled


def test_worker_deaths_through_a_duration_window_are_bounded_and_a_death_loses_what_the_window_holds() -> None:
    """The worker-death check has the timer (docs/boundedness.md, "Failures through a timer", step 5): with
    storm.worker_min_ttf W is bounded at any inflow and a death of its worker loses at most Q₀ + α(L − S + 2G +
    max_reboot), every tuple its windows hold unacked and what arrives until the restart. Storm's window manager,
    its worker dying at random times (just before a run, where it holds most), never loses more, nor holds more
    unevaluated than the queue bound; a loss that counts only the queue and the run in progress, α(G + α(1+τ) +
    max_reboot), is exceeded. The search's worker-death rows prove W and P too."""
    from app.core.headroom import headroom
    from app.core.rates.verdicts import status_of
    from app.core.rates.workers_check import worker_check
    from app.core.tcn.search_deaths import death_proofs
    from app.core.workers import worker_model

    doc = timed(10, 0.5, 5, 3)
    doc["storm"] = {"worker_min_ttf": 600, "workers": 1, "max_spout_pending": 20}
    doc["settings"].update(min_reboot_time=1, max_reboot_time=2, replay="paced")
    topo = parse_topology(doc)
    e = RateFigures(topo)
    model = worker_model(topo)
    assert model is not None
    check = worker_check(topo, e, model, {b.id: status_of(e, b.id) for b in topo.bolts})
    w_id = topo.bolt_by_name("W").id
    w = check.bolts[w_id]
    assert w.status == "bounded" and "its timer takes whatever arrived at most 3 s apart" in w.note
    assert check.survives is True, check.reason
    assert check.bounds is not None
    lost, queue, inflow = check.bounds.lost[w_id], check.bounds.queue[w_id], check.bounds.inflow[w_id]
    assert lost is not None and queue is not None
    assert lost == inflow.at(Fraction(5 - 3 + 2 * 3 + 2))  # Q₀ = 0: α(L − S + 2G + max_reboot)
    assert check.loss[0] is not None and check.loss[0] >= lost  # its worker's loss counts it
    from app.core.storm.lines import worker_deaths_line

    assert "tuples in queues, in work, in windows (unacked: their trees time out too) and while it restarts" in \
        worker_deaths_line(check, None)
    rng = random.Random(5)
    worst = 0
    for seed in range(6):  # deaths just before a run (where the window is fullest), or anywhere
        deaths = []
        at = 20.0
        for _ in range(3):
            at = (math.ceil(at / 3) * 3 - 0.01) if rng.random() < 0.6 else at + rng.uniform(0, 3)
            deaths.append((at, rng.choice([1.0, 2.0])))
            at += 2 + 10 + rng.uniform(0, 5)
        played = storm_duration_window(10, 0.5, 5, 3, 1, 80, seed=seed, counts=False, deaths=tuple(deaths))
        assert len(played.losses) == 3
        worst = max(worst, *played.losses)
        assert max(k for _, k in played.taken) <= queue
    assert worst <= lost
    assert worst > float(inflow.at(Fraction(3) + Fraction(1, 2) + 2))  # (a loss without the windows is exceeded)
    note, proven = death_proofs(topo, ["W", "P"], lambda: False)  # the search's worker-death rows have the timer
    assert set(proven) == {"W", "P"} and note is not None and "proves nothing" not in note
    lone = timed(10, 0.5, 5, 3)
    lone["storm"] = {"workers": 1}
    lone_topo = parse_topology(lone)
    report = rate_check(lone_topo)
    w2, p = report.bolts["W"], report.bolts["P"]
    assert w2.window_pending is not None and p.queue_bound is not None
    # its one worker loses what W holds unacked (its queue among it) and P's queue and batch
    assert headroom(lone_topo).worker_loss == pytest.approx(w2.window_pending + p.queue_bound + 1)


def test_bolt_failures_through_a_duration_window_are_proven_or_say_why() -> None:
    """Section 7's failures with a duration window (docs/boundedness.md, "Failures through a timer"): tests/data/timer/
    has S → F (fails) → W → P. Paced, W is bounded with failures (its queue what may arrive within G = 3 s, replays
    included) and so is P. With a slower P (0.213 tuples/s against 0.2 fresh) the replays through W are more than
    P's spare, but they only replace what F lost (step 7, netting): P receives at most S's 0.2. At once, W is still
    bounded below F (F passes on at most its capacity)."""
    data = ROOT / "tests" / "data" / "timer"

    def read(name: str) -> Any:
        return rate_check(parse_topology(json.loads((data / f"{name}.storm.json").read_text())))

    paced = read("failing-then-window")
    assert paced.failures and all(b.status == "bounded" for b in paced.bolts.values())
    w = paced.bolts["W"]
    assert w.queue_bound is not None and float(w.queue_bound) == pytest.approx(18.4, abs=0.05)
    assert "its timer takes whatever arrived at most 3 s apart" in w.failures_note
    assert "F's failures lose at most" in w.failures_note and "S replays up to" in w.failures_note
    from app.cli.check import failure_line

    line = failure_line("W", w)  # F passes on the replays of its losses only in place of them (step 7, netting)
    assert line == ("W (bounded): receives at most 2 tuples/s with replays, its timer takes whatever arrived every "
                    "3 s; queue below 18.4 tuples")
    slow = read("failing-then-window-slow")
    assert slow.bolts["W"].status == "bounded"
    p = slow.bolts["P"]
    assert p.status == "bounded" and "P receives at most 0.2 tuples/s" in p.failures_note
    assert "F passing on the replays of its own losses only in place of what it lost" in p.failures_note
    assert "does not have yet" not in p.explanation
    burst = read("failing-then-window-at-once")
    assert burst.bolts["W"].status == "bounded" and burst.bolts["W"].queue_bound is not None
    assert burst.bolts["W"].queue_bound <= 32 and "its timer takes whatever arrived" in burst.bolts["W"].failures_note


def test_a_timeout_witness_below_a_window_with_a_failing_bolt_above_it() -> None:
    """docs/latency.md, "Windowed bolts", with failures: S → F (fails, paced replays) → W (the window) → P at 20 s a
    tuple grows; the witness is a certified lasso through W's timer (one in which F happens not to fail: a run
    without failures is a run) in which a tuple of P waits past the 30 s timeout, its tree S's (the chain through
    F's and W's emits), which the checker confirms."""
    from app.core.latency.witness import timeout_witness
    from app.core.tcn.check.latency_witness import check_witness

    doc = json.loads((ROOT / "tests" / "data" / "timer" / "failing-then-window.storm.json").read_text())
    doc["bolts"][2]["alpha"] = 20
    topo = parse_topology(doc)
    witness = timeout_witness(topo, "P", Fraction(30))
    assert witness is not None and witness.wait > 30 and witness.root == "S"
    assert [name for name, _ in witness.chain] == ["S", "F", "W"]
    checked = check_witness(witness.trace, "P", witness.loop_pass, witness.position, Fraction(30), chain=witness.chain)
    assert checked.ok and checked.wait == witness.wait


def test_a_count_eviction_on_a_timer_with_failures_and_worker_deaths() -> None:
    """A mixed window on a timer (withWindow(Count(30), Duration(3 s)), docs/model.md 10.4) has the timer's queue and
    curves with failures (its trigger), but no hold bound: a death of its worker loses what its windows hold, which
    waits for later tuples, so no loss per death and no tree time are proven, and the answer says why."""
    from app.core.rates.verdicts import status_of
    from app.core.rates.workers_check import worker_check
    from app.core.workers import worker_model

    mixed = {"kind": "count", "length": 30, "slide": 3, "slide_kind": "duration"}
    doc = json.loads((ROOT / "tests" / "data" / "timer" / "failing-then-window.storm.json").read_text())
    doc.update(schema_version=6)
    doc["bolts"][1]["window"] = mixed
    w = rate_check(parse_topology(doc)).bolts["W"]
    assert w.status == "bounded" and "its timer takes whatever arrived at most 3 s apart" in w.failures_note
    dying = json.loads((ROOT / "tests" / "data" / "timer" / "window-worker-deaths.storm.json").read_text())
    dying.update(schema_version=6)
    dying["bolts"][0]["window"] = mixed
    topo = parse_topology(dying)
    e = RateFigures(topo)
    model = worker_model(topo)
    assert model is not None
    check = worker_check(topo, e, model, {b.id: status_of(e, b.id) for b in topo.bolts})
    assert check.survives is None and check.loss == [None]
    assert "a window whose count eviction waits for later tuples" in check.reason


def test_a_duration_window_inside_a_cycle_is_not_proven_and_says_why() -> None:
    """docs/boundedness.md, "Duration windows", step 5: the timer's bound is not carried around a cycle, so W and
    the bolt it feeds back through are not proven bounded, each saying why (no 2^62 'capacity' in the words)."""
    doc = timed(10, 0.5, 5, 3)
    doc["bolts"][1]["sigma"] = 0.5
    doc["subscriptions"].append({"source": "P", "target": "W"})
    report = rate_check(parse_topology(doc))
    for name in ("W", "P"):
        b = report.bolts[name]
        assert b.status != "bounded" and b.queue_bound is None
        assert b.explanation.startswith(f"{name} is not proven bounded: W is a duration window inside a cycle")
        assert "e+1" not in b.explanation
