"""verify's time limit (docs/verifier.md, "The time limit"): a verification ends within its limit plus its overtime,
max(1 s, 5 % of the limit), whatever a phase was doing; the failure-cycle simulation shares the time among the bolts
it searches in rounds, so one bolt whose simulation never closes a lasso does not take the time of the others."""

from __future__ import annotations

import threading
import time
from typing import Any

from app.core.tcn import search_lassos, simulate
from app.core.tcn.check import lassos
from app.core.tcn.network import build_network
from app.core.tcn.search import Search, SearchOptions, verify
from app.core.tcn.search_run import OVERTIME_MIN_S
from app.core.topology import parse_topology

# random topology #157 of bench/verdict_sweep.py (seed 46): B0 fails every 3 s at the soonest and its losses are
# replayed at once; B1, B2 and B3 are bounded while nothing fails, and B1 and B2 grow with B0's failures timed on a
# batch (lassos of 2,688 and 3,621 positions, each certified in about a second), B3 has no lasso the simulation finds.
R157: dict[str, Any] = {
    "schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
    "bolts": [{"name": "B0", "alpha": 0.377, "sigma": 1.0, "parallelism": 2, "min_ttf": 3.0},
              {"name": "B1", "alpha": 0.465, "sigma": 0.5, "parallelism": 2},
              {"name": "B2", "alpha": 0.524, "sigma": 0.5, "parallelism": 2},
              {"name": "B3", "alpha": 0.498, "sigma": 0.5, "parallelism": 1, "min_ttf": 200.0}],
    "settings": {"tolerance": 0.0, "max_idle_time": 0, "emission": "dvert", "failures": True,
                 "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"},
    "subscriptions": [{"source": "B1", "target": "B3"}, {"source": "S", "target": "B0"},
                      {"source": "S", "target": "B1"}, {"source": "S", "target": "B2"}]}

# S → A with A at half the spout's rate: its lasso is found in milliseconds
OVERLOADED: dict[str, Any] = {
    "schema_version": 1, "name": "overloaded", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
    "bolts": [{"name": "A", "alpha": 1.0, "sigma": 1.0, "parallelism": 1}],
    "subscriptions": [{"source": "S", "target": "A"}]}


def _topology(doc: dict[str, Any], checked: list[str]) -> Any:
    return parse_topology({**doc, "verification": {"checked": checked}})


def test_a_long_certification_stops_at_the_time_limit_and_its_overtime(monkeypatch: Any) -> None:
    """A lasso found before the limit whose certification would take 20 s: before, it was certified whatever the
    limit (random #53 took 242 s at a 20 s limit, a lasso of 98,583 positions found near the end); now its
    certification stops at the limit plus the overtime, and the bolt says what was missing."""
    polled: list[float] = []
    real = lassos.certify  # (what the search's `certified` calls: app/core/tcn/check/lassos.py)

    def slow(trace: Any, checked: Any = None, threshold: Any = None, cancelled: Any = None) -> Any:
        started = time.monotonic()
        while time.monotonic() - started < 20 and not (cancelled is not None and cancelled()):
            time.sleep(0.01)
        polled.append(time.monotonic() - started)
        return real(trace, checked, threshold, lambda: True)  # the real certifier, cancelled at once

    monkeypatch.setattr(lassos, "certify", slow)
    started = time.monotonic()
    result = verify(_topology(OVERLOADED, ["A"]), SearchOptions(timeout_s=1.0, force_search=True))
    took = time.monotonic() - started
    assert polled, "the simulation found no lasso to certify"
    assert took < 1.0 + OVERTIME_MIN_S + 3.0, took  # generous: 20 s before
    assert result.bolts["A"].verdict == "unknown"
    assert "not certified within the time limit and its overtime" in (result.bolts["A"].message or "")


def test_a_schedule_cut_to_leave_time_for_certifying_is_not_counted_as_played() -> None:
    """`build_lasso(cut=...)`: a schedule its own deadline stops is left unplayed and the next one is tried; a later
    call skips only the schedules played to their end."""
    net = build_network(_topology(R157, ["B3"]), ["B3"])
    lasso = simulate.build_lasso(net, "B3", cut=lambda: time.monotonic() - 1, deadline=time.monotonic() + 30)
    assert lasso.trace is None and not lasso.exhausted and not lasso.ended
    assert lasso.schedules_tried and all(t.endswith("stopped to leave time to certify a lasso")
                                         for t in lasso.schedules_tried)
    again = simulate.build_lasso(net, "B3", deadline=time.monotonic() + 0.5, skip=frozenset({0}))
    second = lasso.schedules_tried[1].rsplit(": stopped to leave", 1)[0]
    assert again.schedules_tried[0].startswith(second)  # schedule 0 skipped, schedule 1 played
    assert 0 in again.ended  # what was skipped counts as played for the next call


def test_a_bolt_without_a_lasso_does_not_take_the_time_of_the_next(monkeypatch: Any) -> None:
    """B3's failure-cycle simulation closes no lasso: here its first call runs out whatever share it gets, its next
    finds every schedule played. B2, searched after it, has a cheap lasso. Before, B3's one simulation took the
    whole limit and left B2 `unknown`; now B3's first round takes FIRST_ROUND_S and B2 is answered."""
    real = search_lassos.build_lasso
    calls: list[float] = []

    def never(net: Any, target: str, **kw: Any) -> Any:
        if target != "B3":
            return real(net, target, **kw)
        calls.append(kw["deadline"] - time.monotonic())
        if len(calls) > 1:
            return simulate.Lasso(None, "no schedule closed a lasso", 0, [], exhausted=True)
        while time.monotonic() < kw["deadline"] and not kw["cancelled"]():
            time.sleep(0.01)
        return simulate.Lasso(None, "time limit reached", 0, ["a schedule that never repeats"])

    monkeypatch.setattr(search_lassos, "build_lasso", never)
    result = verify(_topology(R157, ["B3", "B2"]), SearchOptions(timeout_s=120.0, k_max=4))  # generous: load
    assert calls[0] <= search_lassos.FIRST_ROUND_S + 0.01
    assert result.bolts["B2"].verdict == "counterexample", result.bolts["B2"].message
    assert result.bolts["B3"].verdict == "none-up-to-k"  # (the solver, after the simulation)
    assert len(calls) == 2 and result.elapsed_s < 120


def test_a_cancel_during_the_failure_cycle_simulation_returns_at_once() -> None:
    """The app's cancel (`Search.cancel`, from the GUI thread) stops a verification without a time limit in its
    long simulation: the result arrives within a few seconds, its undecided bolts `unknown`."""
    search = Search(_topology(R157, ["B3"]), SearchOptions(timeout_s=None))
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(result=search.run()))
    thread.start()
    time.sleep(1.0)
    cancelled_at = time.monotonic()
    search.cancel()
    thread.join(30)
    assert not thread.is_alive()
    assert time.monotonic() - cancelled_at < 5  # generous: within 100 ms on an idle machine
    assert out["result"].bolts["B3"].verdict == "unknown"


# S feeds A (capacity 10/9 tuples/s against 1) and C, which fails every 3 or 4 s and whose losses S replays through A:
# A grows only with C's failures (a lasso of a few dozen positions, built by simulation in milliseconds)
FAILING: dict[str, Any] = {
    "schema_version": 1, "name": "failing", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
    "bolts": [{"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1},
              {"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": 2}],
    "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
    "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced",
                 "failures": True}}


def test_recording_a_certified_lasso_reads_it_no_more(monkeypatch: Any) -> None:
    """The words of a simulated lasso's failures and its loop's duration come from its certificate, which read them
    in its passes: before, recording it read the whole lasso once more, unpolled, and so did the result's summary
    for its duration (random #54's 70,495 positions: seconds past the time limit and its overtime). Here the lasso
    is kept compressed, as a long one is, and a reading of it that takes 30 s would show in the time taken."""
    from app.core.formats.trace import CompressedTrace
    from app.core.tcn import search_run, simulate_trace
    from app.core.tcn.failing import failure_summary

    def slow(*args: Any) -> Any:
        time.sleep(30)
        raise AssertionError("the lasso was read again to record it")

    monkeypatch.setattr(simulate_trace, "COMPRESS_FROM", 10)
    monkeypatch.setattr(search_run, "failures_read", slow)
    monkeypatch.setattr(CompressedTrace, "loop_duration", slow)
    started = time.monotonic()
    result = verify(_topology(FAILING, ["A"]), SearchOptions(timeout_s=20.0))
    assert time.monotonic() - started < 20  # 30 s and more before
    verdict = result.bolts["A"]
    assert verdict.verdict == "counterexample" and verdict.method == "simulation" and verdict.failures is True
    assert isinstance(result.trace, CompressedTrace)
    monkeypatch.undo()
    summary = failure_summary(result.trace)  # the words the trace itself gives
    assert f"every {float(result.trace.loop_duration()):.4g} s" in (result.message or "")
    assert summary is not None and verdict.message.endswith(f", with failures: {summary}"), verdict.message


def test_the_certifier_stops_in_its_first_pass_over_a_compressed_lasso(monkeypatch: Any) -> None:
    """A compressed lasso is read once whole before any rule (a malformed position named first): that pass polls
    the stop signal too (before, a lasso of 10^5 positions took seconds to read whatever the signal)."""
    from app.core.formats.trace import CompressedTrace
    from app.core.tcn import simulate_trace
    from app.core.tcn.check import certify_source
    from app.core.tcn.check.certify import CANCELLED, certify

    monkeypatch.setattr(simulate_trace, "COMPRESS_FROM", 10)
    net = build_network(_topology(FAILING, ["A"]), ["A"])
    trace = simulate.build_lasso(net, "A").trace
    assert isinstance(trace, CompressedTrace) and trace.k > 40
    real, read = certify_source.iter_expanded, [0]

    def counted(*args: Any, **kw: Any) -> Any:
        for position in real(*args, **kw):
            read[0] += 1
            yield position

    monkeypatch.setattr(certify_source, "iter_expanded", counted)
    stopped = certify(trace, checked=["A"], cancelled=lambda: True)
    assert stopped.problems == [CANCELLED] and read[0] <= 2, read  # k + 2 before
    whole = certify(trace, checked=["A"])  # (what it counts of the loop's failures, for their words)
    assert whole.ok and whole.fails and whole.loop_failures.keys() == {"C"} and whole.loop_replays.keys() == {"C"}


def test_a_stopped_certification_leaves_part_of_the_overtime_for_what_follows(monkeypatch: Any) -> None:
    """A certification still running at the end stops with a quarter of the overtime left (WRAP_UP_SHARE): dropping
    the lasso it held and the summary took random #188 0.2-0.8 s past its limit and overtime (63.2-63.8 s at 60 s)."""
    stopped: list[float] = []
    real = lassos.certify

    def slow(trace: Any, checked: Any = None, threshold: Any = None, cancelled: Any = None) -> Any:
        while not (cancelled is not None and cancelled()):
            time.sleep(0.005)
        stopped.append(time.monotonic())  # the first poll at which it was told to stop
        return real(trace, checked, threshold, lambda: True)

    monkeypatch.setattr(lassos, "certify", slow)
    search = Search(_topology(OVERLOADED, ["A"]), SearchOptions(timeout_s=1.0, force_search=True))
    result = search.run()
    assert stopped and search.deadline is not None
    assert stopped[0] < search.deadline + search.overtime(), (stopped[0] - search.deadline, search.overtime())
    assert result.bolts["A"].verdict == "unknown"
