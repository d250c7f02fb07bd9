"""Mixed windows (docs/model.md section 10.4): `withWindow(Count L, Duration S)`, a count eviction on a timer, and
`withWindow(Duration L, Count S)`, a time eviction on a count trigger. The trigger decides the queue and the
evaluations (10.3's timer, 10.2's whole slides), the eviction the acks, with no every-run hold bound. Against an
independent simulation of storm-client's WindowManager with those policies (CountEvictionPolicy with TimeTriggerPolicy,
TimeEvictionPolicy with CountTriggerPolicy); the search, the certifier and the linear program on them; the document's
field and its version; the Flux import and export."""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from window_documents import windowed

from app.core.rates import duration_figures, rate_check, window_figures
from app.core.rates.flows import RateFigures
from app.core.results import LinearCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import TopologyError, parse_topology

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "tests" / "data" / "windows" / "mixed-time-count.storm.json"
FLUX = ROOT / "tests" / "data" / "flux" / "mixed" / "mixed-count-timer.yaml"


def mixed(rate: float, alpha: float, length: float, slide: float, trigger: str, parallelism: int = 1, *,
          p_alpha: float = 0.001) -> dict[str, Any]:
    """S -> W (a mixed window: a `trigger` slide, the length of the other kind) -> P."""
    doc = windowed(rate, alpha, length, slide, parallelism, kind="count" if trigger == "duration" else "duration",
                   p_alpha=p_alpha)
    doc["schema_version"] = 6
    doc["bolts"][0]["window"]["slide_kind"] = trigger
    return doc


@dataclass
class MixedPlay:
    holds: list[float] = field(default_factory=list)  # arrival -> ack (s), of the tuples acked
    never_acked: int = 0  # tuples still in a window when the play ends (arrivals stopped at the horizon)
    unevaluated_max: int = 0  # tuples received that no evaluation held yet, at most
    unevaluated_end: int = 0  # the same when the arrivals stop
    pending_max: int = 0  # tuples received and not yet acked, at most (at any arrival)
    taken: list[tuple[float, int]] = field(default_factory=list)  # (evaluation end, new tuples in it)


def storm_mixed_window(rate: float, alpha: float, length: float, slide: float, trigger: str, horizon: float,
                       tail: float = 60.0) -> MixedPlay:
    """One executor of a mixed-windowed bolt as storm-client runs it, a tuple every 1/rate s until `horizon`, then
    `tail` more seconds without arrivals.

    `trigger` "duration" (withWindow(Count L, Duration S)): a TimeTriggerPolicy thread runs at k·S, or as soon as the
    previous run ends (scheduleAtFixedRate); each run scans the manager's queue with CountEvictionPolicy (a tuple
    expires, and is acked, while more than L tuples are tracked), then evaluates what is left for α (nothing when it
    is empty); tuples are added by the executor's thread whenever they arrive; every 100 additions a partial scan
    expires from the front too (compactWindow).

    `trigger` "count" (withWindow(Duration L, Count S)): the executor's thread adds each tuple, stamped with the time
    it runs it; every S-th tracked tuple CountTriggerPolicy sets the reference time to now (no sliding interval in the
    context: TimeEvictionPolicy's delta stays 0), expires every tuple at least L old, then evaluates the window in that
    thread for α, tuples queueing meanwhile; every 100 additions a partial scan with the last reference time (now,
    before the first trigger)."""
    out = MixedPlay()
    arrivals = [k / rate for k in range(int(horizon * rate) + 1)]
    acked: dict[int, float] = {}
    events: list[tuple[float, int]] = []
    first_eval: dict[int, float] = {}  # per tuple, when an evaluated window first held it
    prev_window: set[int] = set()
    since_scan = 0
    end_of_play = horizon + tail
    if trigger == "duration":
        k, free, i = 1, 0.0, 0
        while True:
            start = max(k * slide, free)
            if start > end_of_play:
                break
            while i < len(arrivals) and arrivals[i] < start:  # additions (the executor's thread)
                events.append((arrivals[i], i))
                since_scan += 1
                if since_scan >= 100:  # compactWindow: expire from the front while more than L are tracked
                    since_scan = 0
                    while len(events) > length:
                        acked[events.pop(0)[1]] = arrivals[i]
                i += 1
            since_scan = 0
            while len(events) > length:  # the full scan: CountEvictionPolicy expires the oldest beyond L
                acked[events.pop(0)[1]] = start
            window = {tup for _, tup in events}
            new = window - prev_window
            prev_window = window
            for tup in new:
                first_eval.setdefault(tup, start)
            end = start + (alpha if window else 0.0)
            if new:
                out.taken.append((end, len(new)))
            free = end
            k += 1
    else:
        free, count, ref = 0.0, 0, None
        for i, at in enumerate(arrivals):
            now = max(at, free)  # the executor's thread runs execute(tuple) once it is free
            events.append((now, i))
            since_scan += 1
            if since_scan >= 100:
                since_scan = 0
                scan_at = now if ref is None else ref
                while events and scan_at - events[0][0] >= length:
                    acked[events.pop(0)[1]] = now
            count += 1
            if count >= slide:  # CountTriggerPolicy: reference time now, delta 0
                ref, count, since_scan = now, 0, 0
                kept = []
                for ts, tup in events:
                    if ref - ts >= length:
                        acked[tup] = now
                    else:
                        kept.append((ts, tup))
                events = kept
                window = {tup for ts, tup in events if ts <= ref}
                new = window - prev_window
                prev_window = window
                for tup in new:
                    first_eval.setdefault(tup, ref)
                free = now + alpha
                out.taken.append((free, len(new)))
    evals = sorted(first_eval.values())
    for at in arrivals:  # received and in no evaluated window yet, at each arrival (its largest values)
        waiting = bisect.bisect_right(arrivals, at) - bisect.bisect_left(evals, at)
        out.unevaluated_max = max(out.unevaluated_max, waiting)
    out.unevaluated_end = len(arrivals) - bisect.bisect_right(evals, horizon)
    out.holds = [acked[t] - arrivals[t] for t in acked]
    out.never_acked = len(arrivals) - len(acked)
    for i, at in enumerate(arrivals):  # pending at each arrival: received, not acked
        out.pending_max = max(out.pending_max, sum(1 for t in range(i + 1) if acked.get(t, math.inf) > at))
    return out


def test_a_count_eviction_on_a_timer_against_storm() -> None:
    """withWindow(Count(30), Duration(3 s)), 10 tuples/s, α 0.5 s: the timer's queue bound (1 + 10 × 3 = 31), the
    tuples unacked (31 + 30) and the nominal hold (30 tuples' time + S = 6 s) hold in Storm's window manager, which
    reaches the hold; the rate check gives no every-run hold bound and says why, and in Storm the last 30 tuples are
    never acked once nothing more arrives."""
    topo = parse_topology(mixed(10, 0.5, 30, 3, "duration"))
    e = RateFigures(topo)
    w = duration_figures(e, topo.bolt_by_name("W"))
    assert w is not None and w.counted_eviction and w.hold_max is None and w.gap == 3
    assert e.queue_bound[topo.bolt_by_name("W").id] == 31 and w.pending == 61 and w.hold_nominal == 6
    played = storm_mixed_window(10, 0.5, 30, 3, "duration", 60)
    assert played.unevaluated_max <= 31 and played.pending_max <= 61
    assert max(played.holds) <= 6 and max(played.holds) >= 5
    assert played.never_acked == 30  # (the last window: nothing bounds its hold)
    report = rate_check(topo)
    text = report.bolts["W"].explanation
    assert report.bolts["W"].status == "bounded" and "no bound holds in every run" in text
    assert "about 6 s at the nominal inflow" in text
    assert report.bolts["W"].window_hold_max is None and report.bolts["W"].window_timer == 3


def test_a_time_eviction_on_a_count_trigger_against_storm() -> None:
    """withWindow(Duration(5 s), Count(10)), 10 tuples/s: with α 0.5 s (capacity 20/s) the count window's queue bound
    (9 + 10 + 1 = 20), the tuples unacked and the nominal hold (5 s + 10 tuples' time = 6 s) hold in Storm's window
    manager; with α 2 s (5 tuples/s) its unevaluated tuples grow by 5 a second there too, and the rate check says
    grows. Once nothing more arrives, the tuples of the unfinished slide are never acked."""
    topo = parse_topology(mixed(10, 0.5, 5, 10, "count"))
    e = RateFigures(topo)
    w = window_figures(e, topo.bolt_by_name("W"))
    assert w is not None and w.timed_eviction and w.hold_nominal == 6
    assert e.queue_bound[topo.bolt_by_name("W").id] == 20 and w.pending == 20 + (20 + 10 * 5 + 1)
    played = storm_mixed_window(10, 0.5, 5, 10, "count", 60)
    assert played.unevaluated_max <= 20 and played.pending_max <= w.pending
    assert 5.5 <= max(played.holds) <= 6
    assert played.never_acked > 0
    text = rate_check(topo).bolts["W"].explanation
    assert "acks a tuple at the first trigger at least 5 s after it arrived" in text
    assert "no bound holds in every run" in text
    slow = storm_mixed_window(10, 2.0, 5, 10, "count", 100, tail=0)
    assert slow.unevaluated_end / 100 == pytest.approx(5, rel=0.05)
    assert rate_check(parse_topology(mixed(10, 2.0, 5, 10, "count"))).bolts["W"].status == "grows"


def test_the_example_document_grows_with_a_certified_lasso_and_keeps_up_when_fast() -> None:
    """tests/data/windows/mixed-time-count.storm.json: W's evaluation of 2 s per 10 tuples is too slow for 10
    tuples/s: a certified lasso gaining 5 tuples a second, as Storm's window manager does; at 0.5 s it is bounded."""
    data = json.loads(DOC.read_text())
    result = verify(parse_topology(data), SearchOptions(k_max=8))
    w = result.bolts["W"]
    assert w.verdict == "counterexample" and w.certified
    cert = certify(result.traces[0].model_dump(mode="json"))
    assert cert.ok and cert.loop_duration is not None
    assert Fraction(cert.growth_per_loop["W"]) / cert.loop_duration == 5
    trace = result.traces[0]
    assert all(p.bolts["W"].batch % 10 == 0 for p in trace.positions if p.bolts["W"].take)  # whole slides
    data["bolts"][0]["alpha"] = 0.5
    fast = verify(parse_topology(data), SearchOptions(k_max=8))
    assert fast.verdict == "bounded" and fast.bolts["W"].queue_bound is not None


def _flux_topology(printer_alpha: float) -> Any:
    """tests/data/flux/mixed/mixed-count-timer.yaml, annotated: 10 integers/s, 0.5 s an evaluation, one sum per 10
    tuples, the printer `printer_alpha` a tuple, no jitter."""
    from app.core.storm.flux.builder import import_flux

    result = import_flux(FLUX)
    doc = result.topology.model_dump(mode="json")
    doc["spouts"][0].update(rate=10, burst=1, unannotated=[])
    doc["bolts"][0].update(alpha=0.5, sigma=0.1, unannotated=[])
    doc["bolts"][1].update(alpha=printer_alpha, unannotated=[])
    doc["settings"]["tolerance"] = 0
    return parse_topology(doc), result.notes


def test_the_flux_file_imports_a_mixed_window_and_a_slow_printer_grows() -> None:
    """withWindow(Count(30), Duration(3, SECONDS)) imports as a mixed window (the mark it had is gone); below it a
    printer serving one tuple per 20 s gets a certified lasso gaining 19 per 20 s (the timer passes on its whole
    inflow, as Storm's does: the window manager's evaluations take the 10 tuples/s whole); at 0.5 s it is bounded."""
    topo, notes = _flux_topology(20.0)
    bolt = topo.bolt_by_name("slidingsum")
    assert bolt.unmodelled is None and bolt.window is not None
    assert bolt.window.model_dump() == {"kind": "count", "length": 30, "slide": 3, "slide_kind": "duration"}
    assert bolt.window.phrase() == "withWindow(Count(30), Duration(3 s))"
    assert any("a mixed window, its trigger a timer" in n for n in notes)
    result = verify(topo, SearchOptions(k_max=8))
    p = result.bolts["printer"]
    assert p.verdict == "counterexample" and p.certified and result.bolts["slidingsum"].verdict == "bounded"
    cert = certify(result.traces[0].model_dump(mode="json"))
    assert cert.ok and cert.loop_duration is not None
    assert Fraction(cert.growth_per_loop["printer"]) / cert.loop_duration == Fraction(19, 20)
    played = storm_mixed_window(10, 0.5, 30, 3, "duration", 100, tail=0)
    assert sum(k for _, k in played.taken) / 100 == pytest.approx(10, rel=0.05)  # 1 tuple/s into the printer
    fast, _ = _flux_topology(0.5)
    assert verify(fast, SearchOptions(k_max=8)).verdict == "bounded"


def test_the_certifier_reads_the_trigger_from_the_slide() -> None:
    """The certifier's own reading of a mixed window: a lasso through a count length on a timer read with the
    length's kind (whole slides of 3 tuples), and a growing W of a count trigger read as a timer, are rejected."""
    topo, _ = _flux_topology(20.0)
    result = verify(topo, SearchOptions(k_max=8))
    data = result.traces[0].model_dump(mode="json")
    assert certify(data).ok
    del data["topology"]["bolts"][0]["window"]["slide_kind"]
    data["topology"]["bolts"][0]["window"]["slide"] = 3
    assert not certify(data).ok
    grows = verify(parse_topology(json.loads(DOC.read_text())), SearchOptions(k_max=8))
    data = grows.traces[0].model_dump(mode="json")
    assert certify(data).ok
    data["topology"]["bolts"][0]["window"]["slide_kind"] = "duration"
    data["topology"]["bolts"][0]["window"]["length"] = 50
    problems = certify(data).problems
    assert problems and any("W" in x for x in problems)


def test_the_linear_program_reads_a_timer_under_a_count_length() -> None:
    """The rows of a cone below withWindow(Count(30), Duration(3 s)): W's `timer` row and no batch bound; a P that
    keeps up is proven never to grow, and the checker (its own reading of the slide's kind) accepts."""
    net = build_network(parse_topology(mixed(10, 0.5, 30, 3, "duration", p_alpha=0.5)), ["P"])
    found = farkas(build_rows(net, "P"))
    assert found is not None
    cert = LinearCertificate(target="P", content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in found.items()})
    assert check_certificate(net.topology, cert) == []
    net = build_network(parse_topology(mixed(10, 0.5, 30, 3, "duration")), ["W"])
    found = farkas(build_rows(net, "W"))
    assert found is not None and "timer[W]" in found
    cert = LinearCertificate(target="W", content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in found.items()})
    assert check_certificate(net.topology, cert) == []


def test_the_document_field_and_its_version() -> None:
    """`slide_kind` needs schema_version 6 (refused in an older document, naming the field); a mixed window needs its
    slide; a count slide is whole tuples; the old one-kind windows read as before."""
    doc = mixed(10, 0.5, 30, 3, "duration")
    assert parse_topology(doc).bolt_by_name("W").window.mixed  # type: ignore[union-attr]
    doc["schema_version"] = 5
    with pytest.raises(TopologyError) as err:
        parse_topology(doc)
    assert err.value.problems[0].path == "bolts.W.window.slide_kind"
    assert err.value.problems[0].message == "slide_kind needs schema_version 6 (this document says 5)"
    doc["schema_version"] = 6
    del doc["bolts"][0]["window"]["slide"]
    with pytest.raises(TopologyError, match="needs its sliding interval"):
        parse_topology(doc)
    bad = mixed(10, 0.5, 5, 2.5, "count")
    with pytest.raises(TopologyError, match="a whole number of tuples"):
        parse_topology(bad)
    assert parse_topology(mixed(10, 0.5, 5, 20, "count")).bolt_by_name("W").take_max == 20  # (slide > length: kinds)


@pytest.mark.parametrize(("trigger", "length", "slide", "alpha", "grows"), [
    ("duration", 4, 1, 0.1, "P"), ("count", 5, 2, 1.5, "W")])
def test_the_solver_finds_a_lasso_through_a_mixed_window(trigger: str, length: float, slide: float, alpha: float,
                                                         grows: str) -> None:
    """Without the simulation, the z3 encoding's lasso is certified: below withWindow(Count(4), Duration(1 s)) (a
    timer: P serving one tuple a second behind 2 tuples/s), and in withWindow(Duration(5 s), Count(2)) itself (whole
    slides of 2, 1.5 s each: 4/3 tuples/s against 2)."""
    doc = mixed(2, alpha, length, slide, trigger, p_alpha=1.0)
    doc["bolts"][0]["sigma"] = 1
    doc["verification"]["checked"] = [grows]
    result = verify(parse_topology(doc), SearchOptions(k_max=10, simulate=False, timeout_s=60))
    b = result.bolts[grows]
    assert b.verdict == "counterexample" and b.method == "solver" and b.certified
    assert certify(result.traces[0].model_dump(mode="json")).ok


def test_storms_startup_check_of_a_mixed_window_is_said(tmp_path: Path) -> None:
    """Storm's WindowedBoltExecutor checks a mixed window's duration against the message timeout and its count against
    max.spout.pending, each alone: withWindow(Count(40), Duration(3 s)) under a max.spout.pending of 35 is refused at
    startup (40 alone is above it, its 3 s far below the timeout), and the import says it is the length."""
    text = FLUX.read_text().replace("constructorArgs: [30]", "constructorArgs: [40]")
    flux = tmp_path / "m.yaml"
    config = 'name: "m"\nconfig:\n  topology.max.spout.pending: 35\n'
    flux.write_text(text.replace('name: "mixed-count-timer"\n', config))
    from app.core.storm.flux.builder import import_flux

    assert [n for n in import_flux(flux).notes if "refuses" in n] == [
        "bolts.slidingsum: Storm refuses this window when the bolt starts: its count (length) 40 is more than "
        "topology.max.spout.pending 35"]
    assert [n for n in import_flux(FLUX).notes if "refuses" in n] == []


@pytest.mark.parametrize(("trigger", "length", "slide"), [("duration", 30, 3), ("count", 5, 10)])
def test_a_timeout_witness_below_a_mixed_window(trigger: str, length: float, slide: float) -> None:
    """A P below either mixed window, serving one tuple per 20 s, gets a certified timeout witness through the window
    (the checker's certifier reads its trigger), and the latency answer for S is `times-out`."""
    from app.core.latency.report import latency_report
    from app.core.latency.witness import timeout_witness
    from app.core.tcn.check.latency_witness import check_witness

    topo = parse_topology(mixed(10, 0.5, length, slide, trigger, p_alpha=20.0))
    witness = timeout_witness(topo, "P", Fraction(30))
    assert witness is not None and witness.wait > 30 and [name for name, _ in witness.chain] == ["S", "W"]
    checked = check_witness(witness.trace, "P", witness.loop_pass, witness.position, Fraction(30), chain=witness.chain)
    assert checked.ok and checked.wait == witness.wait
    assert latency_report(topo, pending=False).spouts["S"].answer == "times-out"


def test_check_says_what_the_model_has_of_a_mixed_window(capsys: pytest.CaptureFixture[str]) -> None:
    """`check` on the example: the note names the trigger and says no hold bound holds in every run; the latency
    answer gives the time eviction's reason (a trigger waits for tuples still to come), not a bound."""
    from app.cli import main

    main(["check", str(DOC)])
    out, err = capsys.readouterr()
    assert ("bolts.W has a mixed window (withWindow(Duration(5 s), Count(10))): its trigger is whole slides of tuples, "
            "as a count window's") in err and "for which no bound holds in every run" in err
    assert ("W is a windowed bolt (withWindow(Duration(5 s), Count(10))): Storm acks a tuple only at the first trigger "
            "at least its window's length after it arrived, and a trigger waits for a slide of tuples") in out


@pytest.mark.parametrize(("trigger", "length", "slide", "alpha", "p_alpha", "target"), [
    ("duration", 30, 3, 0.5, 20.0, "P"), ("count", 5, 10, 2.0, 0.001, "W")])
def test_growth_by_rates_through_a_mixed_window(trigger: str, length: float, slide: float, alpha: float,
                                                p_alpha: float, target: str) -> None:
    """Growth proven by rates (docs/verifier.md): P below a count length on a timer (the timer keeps up and passes its
    whole inflow on), and W itself on a count trigger (10 tuples per 2 s against 10 tuples/s); its checker, which reads
    the trigger from the slide's kind, accepts both certificates."""
    from app.core.tcn.check.rate_growth import check_growth_certificate
    from app.core.tcn.rate_growth import prove_growth

    topo = parse_topology(mixed(10, alpha, length, slide, trigger, p_alpha=p_alpha))
    cert = prove_growth(topo, target)
    assert cert is not None
    assert check_growth_certificate(topo.model_dump(mode="json"), cert.model_dump(mode="json")) == []


def test_a_flood_proof_counts_a_count_length_on_a_timer_as_a_timer() -> None:
    """tests/unit/test_flood_timers.py's flood (U backs up into J beside X) with X's window a count length on a 6 s
    timer: X passes on its whole least inflow, as a duration window does, and the flood checker (its own reading of
    the slide's kind) accepts; with an ordinary X none is proven."""
    from test_flood_timers import SUBS, _doc, _flood, cone

    from app.core.tcn.check.flood import check_flood_certificate

    doc = _doc(SUBS, {"kind": "count", "length": 50, "slide": 6, "slide_kind": "duration"})
    doc["schema_version"] = 6
    cert = _flood(doc)
    assert cert is not None and {t.sender for t in cert.terms} == {"U", "X"}
    assert check_flood_certificate(cone(doc, "J"), cert) == []
    assert _flood(_doc(SUBS)) is None  # (an ordinary X of α 4 s passes on too little)
