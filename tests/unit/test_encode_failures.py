"""The z3 encoding of failures and replays (docs/model.md section 7), solver only.

The shared topology: spout S (1 tuple/s), bolt A (α 0.9, σ 1) that keeps up with it
without failures, and bolt C (α 0.1, σ 0) on S too, which may fail every `min_ttf`
seconds; what C loses, S replays, and A receives the replays again.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.failures import replay_problem
from app.core.formats.trace import Trace
from app.core.tcn.check.certify import certify
from app.core.tcn.decode import decode
from app.core.tcn.encode import Encoding
from app.core.tcn.network import Network, build_network, lasso_lower_bound
from app.core.topology import parse_topology

SOLVER = {"smt.arith.solver": 2}


def shared(min_ttf: float = 2, replay: str = "paced", failures: bool = True, tolerance: float = 0.1) -> Network:
    data: dict[str, Any] = {
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1},
                  {"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": min_ttf}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
        "settings": {"tolerance": tolerance, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                     "replay": replay, "failures": failures},
        "verification": {"checked": ["A"]},
    }
    return build_network(parse_topology(data), ["A"])


def solve(net: Network, k: int, **options: Any) -> Trace | None:
    """The decoded trace of a satisfying model, which the certifier must accept, or None (UNSAT)."""
    enc = Encoding(net, k, z3.Context(), solver_options=SOLVER, **options)
    result = enc.solver.check()
    assert result != z3.unknown
    if result != z3.sat:
        return None
    trace = decode(enc, enc.solver.model())
    cert = certify(trace, threshold=options.get("threshold"))
    assert cert.ok, cert.problems
    return trace


def check_failure_rules(trace: Trace, net: Network) -> None:
    """The rules of docs/model.md 7.2-7.4 that the encoder adds, checked on the trace by hand (the
    certifier checks all of them too; this small check names what the encoder must get right)."""
    params = net.failures
    assert params is not None
    pos = trace.positions
    times = [p.exact_time for p in pos]
    spouts = {s.name: s for s in net.spouts}
    tau = net.tolerance
    for name, ttf in params.min_ttf.items():
        up_since, failed_at, failed = Fraction(0), Fraction(0), False
        sources = next(b for b in net.bolts if b.name == name).sources
        for i, p in enumerate(pos):
            b = p.bolts[name]
            steps = {**pos[i].spouts, **pos[i].bolts}
            assert b.arrivals == sum(steps[src].stream_emitted(st) for src, st in sources)
            prev_batch = pos[i - 1].bolts[name].batch if i > 0 else 0
            if b.fail:
                assert not failed and times[i] - up_since >= ttf, (name, i)
                assert not b.take and not b.emit and b.phase == "failed" and b.batch == 0
                assert b.lost == b.queue + b.arrivals + prev_batch
                failed, failed_at = True, times[i]
            elif failed and b.recover:
                assert params.min_reboot <= times[i] - failed_at <= params.max_reboot, (name, i)
                assert b.queue == 0 and b.lost == 0
                failed, up_since = False, times[i]
            elif failed:
                assert times[i] - failed_at < params.max_reboot
                assert not b.take and not b.emit and b.phase == "failed" and b.lost == b.arrivals
            else:
                assert not b.recover and b.lost == 0 and b.phase != "failed"
            if b.lost or b.replays:
                assert replay_problem(b.lost, b.replays or {}, params.impact[name], params.replay) is None
            if i + 1 < len(pos) and (b.fail or (failed and not b.recover)):
                assert pos[i + 1].bolts[name].queue == 0
    for s, spout in spouts.items():
        backlog, last = 0, None
        for i, p in enumerate(pos):
            step = p.spouts[s]
            assert step.backlog == backlog, (s, i)
            fresh = step.emitted - step.replayed
            if params.replay == "paced":
                assert step.replayed == min(backlog, fresh)
            elif params.replay == "at-once":
                assert step.replayed == (backlog if fresh else 0)
            if fresh:
                if last is not None:  # the timing of section 2.1 on the fresh tuples
                    gap, due = times[i] - times[last[0]], last[1] * spout.period
                    assert due - tau * spout.period <= gap <= due + tau * spout.period, (s, i)
                last = (i, fresh)
            backlog += sum((b.replays or {}).get(s, 0) for b in p.bolts.values()) - step.replayed
    # the loop (section 7.4): k+1 repeats l, failing bolts do not grow, backlogs do not shrink
    if trace.loop_start <= trace.k:
        at_l, end = pos[trace.loop_start], pos[trace.k + 1]
        for name in params.min_ttf:
            x, y = at_l.bolts[name], end.bolts[name]
            assert (x.fail, x.recover, x.lost, x.replays, x.take, x.emit, x.phase) == \
                (y.fail, y.recover, y.lost, y.replays, y.take, y.emit, y.phase)
            if any(pos[i].bolts[name].phase == "failed" for i in range(trace.loop_start, trace.k + 1)):
                assert x.queue == y.queue
        for s in spouts:
            assert (at_l.spouts[s].emitted, at_l.spouts[s].replayed) == (end.spouts[s].emitted, end.spouts[s].replayed)
            assert end.spouts[s].backlog >= at_l.spouts[s].backlog


def test_without_failures_the_shared_topology_has_no_lasso() -> None:
    net = shared(failures=False)
    assert net.failures is None
    assert solve(net, 16) is None


def test_frequent_failures_give_a_lasso_with_a_failure_and_replays() -> None:
    net = shared(min_ttf=2)
    trace = solve(net, 16)
    assert trace is not None
    check_failure_rules(trace, net)
    loop = trace.positions[trace.loop_start:trace.k + 1]
    assert any(p.bolts["C"].fail for p in loop)
    assert any(p.spouts["S"].replayed for p in loop)  # the replays come back inside the loop
    assert trace.positions[trace.k + 1].bolts["A"].queue > trace.positions[trace.loop_start].bolts["A"].queue
    # the fields of docs/model.md 7.5 are in the decoded trace and its file
    text = trace.model_dump(mode="json")
    steps = [p["bolts"]["C"] for p in text["positions"]]
    assert any(s.get("fail") for s in steps) and any(s.get("recover") for s in steps)
    assert any(s["phase"] == "failed" for s in steps) and any(s.get("replays") for s in steps)
    assert any(p["spouts"]["S"].get("replayed") for p in text["positions"])
    assert any(p["spouts"]["S"].get("backlog") for p in text["positions"])


def test_region_clocks_with_failures() -> None:
    net = shared(min_ttf=2)
    trace = solve(net, 16, loop_clocks="region")
    assert trace is not None
    check_failure_rules(trace, net)
    assert any(p.bolts["C"].fail for p in trace.positions[trace.loop_start:trace.k + 1])


def test_without_replays_a_failure_only_loses_tuples() -> None:
    # replay "none": C's losses come back to nobody, so A keeps up as without failures
    assert solve(shared(min_ttf=2, replay="none"), 16) is None


def test_at_once_replays() -> None:
    net = shared(min_ttf=2, replay="at-once")
    trace = solve(net, 16)
    assert trace is not None
    check_failure_rules(trace, net)


def test_queue_threshold_under_failures() -> None:
    # without failures A's queue never reaches 2 in 12 positions; with replays it does
    assert solve(shared(failures=False), 12, threshold=2) is None
    net = shared(min_ttf=2)
    trace = solve(net, 12, threshold=2)
    assert trace is not None and max(p.bolts["A"].queue for p in trace.positions) >= 2
    check_failure_rules(trace, net)
    assert any(p.bolts["C"].fail for p in trace.positions)


def test_free_start_is_refused_with_failures() -> None:
    with pytest.raises(ValueError, match="free_start"):
        Encoding(shared(), 4, z3.Context(), free_start=True)


def test_lasso_lower_bound_does_not_count_on_a_bolt_that_may_fail() -> None:
    # S -> F -> X -> Y: without failures X must emit in the loop (k >= 2); when F may fail it can lose
    # every batch of a pass, so X need not emit and the bound falls back to 1
    def chain(ttf: float | None) -> Network:
        f: dict[str, Any] = {"name": "F", "alpha": 0.5, "sigma": 1, "parallelism": 1}
        if ttf is not None:
            f["min_ttf"] = ttf
        return build_network(parse_topology({
            "spouts": [{"name": "S", "rate": 1}],
            "bolts": [f, {"name": "X", "alpha": 0.5, "sigma": 1, "parallelism": 1},
                      {"name": "Y", "alpha": 0.5, "sigma": 0, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "F"}, {"source": "F", "target": "X"},
                              {"source": "X", "target": "Y"}],
            "settings": {"min_reboot_time": 1, "max_reboot_time": 2}}), ["Y"])
    assert lasso_lower_bound(chain(None)) == 2
    assert lasso_lower_bound(chain(5)) == 1


def test_the_replay_split_follows_the_impact() -> None:
    # S -> B (σ 2) -> C: one spout tuple's tree puts 2 tuples at C (Imp(C, S) = 2), so a loss of 4 tuples
    # at C replays between 2 and 4 spout tuples, never 1 and never 5
    net = build_network(parse_topology({
        "spouts": [{"name": "S", "rate": 1, "burst": 2}],
        "bolts": [{"name": "B", "alpha": 0.1, "sigma": 2, "parallelism": 2},
                  {"name": "C", "alpha": 0.5, "sigma": 0, "parallelism": 1, "min_ttf": 0}],
        "subscriptions": [{"source": "S", "target": "B"}, {"source": "B", "target": "C"}],
        "settings": {"min_reboot_time": 1, "max_reboot_time": 2, "tolerance": 0.1}}), ["C"])
    assert net.failures is not None and net.failures.impact["C"] == {"S": Fraction(2)}

    def possible(replays: int) -> bool:
        enc = Encoding(net, 5, z3.Context(), threshold=1, solver_options=SOLVER)
        assert enc.failures is not None
        c = enc.failures.bolts["C"]
        enc.solver.add(z3.Or([z3.And(c.lost[i] == 4, c.replays["S"][i] == replays) for i in range(enc.n)]))
        result = enc.solver.check()
        if result == z3.sat:
            trace = decode(enc, enc.solver.model())
            check_failure_rules(trace, net)
            assert certify(trace, threshold=1).ok
        return result == z3.sat
    assert [possible(r) for r in (1, 2, 4, 5)] == [False, True, True, False]


def test_a_bolt_that_cannot_fail_within_the_bound_is_encoded_without_failures() -> None:
    # positions are at most C_EMIT·a + τa = 1.1 s apart, so 17 positions end before 18 s: with min_ttf 100 C
    # cannot fail in them and the encoding is that of section 2 alone; with min_ttf 2 it can
    far = Encoding(shared(min_ttf=100), 16, z3.Context())
    # C was kept in A's cone only because its losses are replayed: without failures it is dropped
    assert far.failures is None and [b.name for b in far.net.bolts] == ["A"] and far.net.dropped == ["C"]
    assert far.net.topology.settings.failures is False  # its lassos are runs without failures
    assert solve(shared(min_ttf=100), 16) is None
    near = Encoding(shared(min_ttf=17), 16, z3.Context()).failures
    assert near is not None and list(near.bolts) == ["C"]


def random_topology(seed: int) -> dict[str, Any]:
    """A small random topology in which some bolt may fail (cycles, streams of σ 0..2, every replay mode)."""
    rnd = random.Random(seed)
    spouts = [{"name": f"S{i}", "rate": rnd.choice([1, 2]), "burst": rnd.choice([1, 2])}
              for i in range(rnd.choice([1, 1, 2]))]
    bolts: list[dict[str, Any]] = []
    for j in range(rnd.choice([2, 3])):
        bolt: dict[str, Any] = {"name": f"B{j}", "alpha": rnd.choice([0.3, 0.5, 0.9]),
                                "sigma": rnd.choice([0, 0.5, 1, 2]), "parallelism": rnd.choice([1, 2])}
        if rnd.random() < 0.6 or j == 0:
            bolt["min_ttf"] = rnd.choice([0, 1, 2])
        bolts.append(bolt)
    subs = []
    for j in range(len(bolts)):
        sources = [s["name"] for s in spouts] + [f"B{i}" for i in range(j)]
        picked = rnd.sample(sources, rnd.choice([1, min(2, len(sources))]))
        subs += [{"source": src, "target": f"B{j}"} for src in picked]
    if rnd.random() < 0.2:
        subs.append({"source": f"B{len(bolts) - 1}", "target": "B0"})  # a cycle: Imp unbounded
    return {"spouts": spouts, "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": 0.1, "max_idle_time": rnd.choice([0, 0.1]), "min_reboot_time": 1,
                         "max_reboot_time": rnd.choice([1, 2]), "replay": rnd.choice(["paced", "at-once", "none"]),
                         "emission": rnd.choice(["exact", "dvert"])}}


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), loop_clocks=st.sampled_from(["equal", "region"]))
def test_every_trace_with_failures_follows_the_rules(seed: int, loop_clocks: str) -> None:
    # prefixes (threshold 2) and lassos (k 10) in which some bolt fails: the decoded trace obeys the
    # failure rules and certifies; a lasso the solver cannot settle in 20 s is left out
    net = build_network(parse_topology(random_topology(seed)), reduce=False)
    assert net.failures is not None
    for threshold, k in ((2, 6), (None, 10)):
        enc = Encoding(net, k, z3.Context(), threshold=threshold, loop_clocks=loop_clocks,
                       solver_options={**SOLVER, "timeout": 20_000})
        assert enc.failures is not None
        enc.solver.add(z3.Or([f.fail[i] for f in enc.failures.bolts.values() for i in range(enc.n)]))
        if enc.solver.check() == z3.sat:
            trace = decode(enc, enc.solver.model())
            check_failure_rules(trace, net)
            cert = certify(trace, threshold=threshold)
            assert cert.ok, cert.problems
