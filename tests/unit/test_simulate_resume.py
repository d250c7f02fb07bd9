"""A simulation stopped by its deadline and taken up again (app/core/tcn/simulate.py `build_lasso(paused=...)`,
`simulate_trace.Resumable`; docs/verifier.md step 2d, the failure-cycle rounds) gives the very run it gives in one
go: the same lasso, position for position, or the same end without one.

Each random topology (failing bolts, every replay mode, τ 0 or 0.1) is simulated for each target twice: once with
no deadline, once with a deadline always past, so that every call stops at its next look at the clock (every
`CHECK_EVERY` positions) and the next call, given the same `paused`, goes on from there; the schedules a call played
to their end are skipped by the next (`Lasso.ended`), as the rounds skip them.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from app.core.formats.trace import CompressedTrace, Trace, trace_data
from app.core.tcn.network import build_network, only_failing
from app.core.tcn.simulate import CHECK_EVERY, Resumable, build_lasso, schedules, simulation
from app.core.tcn.simulate_trace import Stopped
from app.core.topology import parse_topology

MAX_CELLS = 4_000  # per schedule: each run stays short, the same in both ways


def random_doc(rng: random.Random) -> dict[str, Any]:
    """A spout feeding 2-4 bolts near their capacity (a chain and a fan), one or two of them failing."""
    n = rng.randint(2, 4)
    bolts = [{"name": f"B{i}", "alpha": round(rng.uniform(0.3, 0.98), 3), "sigma": rng.choice([0.5, 1.0, 2.0]),
              "parallelism": rng.choice([1, 1, 2])} for i in range(n)]
    for b in rng.sample(bolts, rng.randint(1, 2)):
        b["min_ttf"] = float(rng.choice([3, 5, 20]))
    subs = [{"source": "S", "target": "B0"}] + [
        {"source": rng.choice(["S", f"B{i - 1}"]), "target": f"B{i}"} for i in range(1, n)]
    return {"name": "resume", "spouts": [{"name": "S", "rate": rng.choice([1.0, 2.0]), "burst": 1}],
            "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": rng.choice([0.0, 0.1]), "max_idle_time": 0, "emission": "exact",
                         "failures": True, "min_reboot_time": 1, "max_reboot_time": 2,
                         "replay": rng.choice(["paced", "at-once", "none"])}}


def outcome(sim: Resumable[Any], deadline: float | None) -> tuple[Any, int]:
    """A run's outcome, advanced with `deadline` until it ends (each advance past a deadline stops at its next look
    at the clock), and how many advances it took."""
    for calls in range(1, 1_000_000):
        try:
            return sim.advance(deadline), calls
        except Stopped:
            assert not sim.done
    raise AssertionError("never ended")


def same(a: Any, b: Any) -> bool:
    return trace_data(a) == trace_data(b) if isinstance(a, Trace | CompressedTrace) else a == b


def test_a_resumed_simulation_is_the_run_in_one_go() -> None:
    """Every schedule of random topologies, run to its end at once and run in pieces of CHECK_EVERY positions (a
    deadline always past): the same lasso, position for position, or the same end without one."""
    rng = random.Random(188)
    lassos = pieces = 0
    for _ in range(6):
        topo = parse_topology(random_doc(rng))
        target = topo.bolts[rng.randrange(len(topo.bolts))].name
        net = build_network(topo, [target])
        for sched in itertools.islice(schedules(net, target), 4):
            run_on = only_failing(net, frozenset(sched.fail))
            whole, _ = outcome(simulation(run_on, target, sched, frozenset(), lambda: False, MAX_CELLS), None)
            again, calls = outcome(simulation(run_on, target, sched, frozenset(), lambda: False, MAX_CELLS), 0.0)
            assert same(whole, again), sched.describe()
            lassos += not isinstance(whole, tuple)
            pieces += calls
    assert lassos >= 3 and pieces >= 100  # (lassos, and runs stopped many times: the test is not vacuous)


def test_rounds_go_on_with_the_schedule_they_stopped() -> None:
    """`build_lasso(paused=...)`, as the failure-cycle rounds call it: each call with a deadline past stops the
    schedule it plays at its next look at the clock and keeps it; the next call takes it up there; the lasso found so
    is the one found in one call."""
    doc = random_doc(random.Random(1))
    topo = parse_topology(doc)
    net = build_network(topo, ["B0"])
    whole = build_lasso(net, "B0", max_cells=MAX_CELLS)
    assert whole.trace is not None and whole.trace.k > 4 * CHECK_EVERY
    paused: dict[int, Resumable[Any]] = {}
    ended: frozenset[int] = frozenset()
    calls = 0
    while calls < 10_000:
        calls += 1
        lasso = build_lasso(net, "B0", deadline=0.0, max_cells=MAX_CELLS, skip=ended, paused=paused)
        ended = lasso.ended
        if lasso.trace is not None:
            break
        assert lasso.message == "time limit reached" and len(paused) == 1
    assert calls > 4 and lasso.trace is not None and trace_data(lasso.trace) == trace_data(whole.trace)
    assert not paused  # (a run that ended is not kept)


def test_a_run_too_large_to_keep_is_simulated_again(monkeypatch: Any) -> None:
    """A run stopped past PAUSED_CELLS is not kept (its memory): the next call simulates that schedule from time 0."""
    from app.core.tcn import simulate

    net = build_network(parse_topology(random_doc(random.Random(1))), ["B0"])
    paused: dict[int, Resumable[Any]] = {}
    build_lasso(net, "B0", deadline=0.0, max_cells=MAX_CELLS, paused=paused)
    assert len(paused) == 1 and next(iter(paused.values())).cells == 0  # stopped before position 0
    monkeypatch.setattr(simulate, "PAUSED_CELLS", -1)
    paused.clear()
    build_lasso(net, "B0", deadline=0.0, max_cells=MAX_CELLS, paused=paused)
    assert not paused
