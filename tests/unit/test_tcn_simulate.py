"""Lassos built by simulation (app/core/tcn/simulate.py): certified, both emission rules, fallback on defects."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import z3
from layered_topologies import layered_topology, overloaded_bolts

from app.core.formats import load_topology
from app.core.formats.trace import Trace
from app.core.rates import rate_check
from app.core.tcn import schedule_order, search_lassos, search_proofs, simulate
from app.core.tcn.check.certify import CANCELLED, certify
from app.core.tcn.encode import Encoding
from app.core.tcn.network import build_network, lasso_lower_bound
from app.core.tcn.search import Search, SearchOptions, verify
from app.core.tcn.simulate import Lasso, build_lasso
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]


def rounding_topology(emission: str, alpha_b: float = 1.05, rate: float = 1) -> dict:
    """S (1/s) -> A (α 0.1, σ 3/4, one tuple per batch) -> B (α `alpha_b`): under 'dvert' A passes on
    every tuple in the long run (its carry is rounded up), so B (capacity at most 1/1.165) grows."""
    return {"name": "sigma-rounding", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
            "bolts": [{"name": "A", "alpha": 0.1, "sigma": 0.75, "parallelism": 1},
                      {"name": "B", "alpha": alpha_b, "sigma": 1, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}],
            "settings": {"tolerance": 0.1, "max_idle_time": 0.01, "emission": emission},
            "verification": {"checked": ["B"]}}


def test_dvert_rounding_lasso_is_built_by_simulation() -> None:
    """The solver needs minutes for this one (a k = 32 lasso); the simulation a few milliseconds (measured
    by bench/cancel_latency.py)."""
    topo = parse_topology(rounding_topology("dvert"))
    assert rate_check(topo).bolts["B"].status == "grows"
    result = verify(topo, SearchOptions(timeout_s=60))
    assert result.verdict == "counterexample" and result.certified, result.message
    verdict = result.bolts["B"]
    assert verdict.method == "simulation" and verdict.growth_per_loop and verdict.growth_per_loop > 0
    assert "built by simulation" in verdict.message
    assert result.trace is not None and certify(result.trace, checked=["B"]).ok


@pytest.mark.parametrize("emission", ["dvert", "exact"])
def test_both_emission_rules_give_certified_simulated_lassos(emission: str) -> None:
    # B slower (α 1.4): it grows under either rule (exact: A passes on 3/4 of 1 to 1.11 tuples/s)
    topo = parse_topology(rounding_topology(emission, alpha_b=1.4))
    assert rate_check(topo).bolts["B"].status == "grows"
    net = build_network(topo, ["B"])
    lasso = build_lasso(net, "B")
    assert lasso.trace is not None, lasso.message
    cert = certify(lasso.trace, checked=["B"])
    assert cert.ok, cert.problems[:3]
    assert cert.growth_per_loop["B"] > 0 and cert.growth_per_loop["A"] == 0
    carries = {p.bolts["A"].buffer for p in lasso.trace.positions}
    if emission == "exact":  # the exact carry c + P − E/σ: thirds, written "p/q"
        assert any(isinstance(c, str) and c.endswith("/3") for c in carries), carries
    else:  # rounded up to whole tuples
        assert all(isinstance(c, int) for c in carries), carries


def test_a_simulated_lasso_that_fails_certification_falls_back_to_the_solver(monkeypatch) -> None:
    """A broken simulation is a defect (noted), never a verdict: the solver answers instead."""
    real = simulate.build_lasso

    def broken(net, target, **kwargs) -> Lasso:
        lasso = real(net, target, **kwargs)
        assert lasso.trace is not None
        data = lasso.trace.model_dump(mode="json")
        data["positions"][-1]["bolts"][target]["queue"] += 1  # queue arithmetic no longer adds up
        return Lasso(Trace.model_validate(data), lasso.message)

    monkeypatch.setattr(search_lassos, "build_lasso", broken)
    monkeypatch.setattr(search_proofs, "prove_growth", lambda topo, target: None)  # rates would answer first
    topo = load_topology(ROOT / "models" / "getting-started.storm.json")  # the solver needs k = 4 here
    result = verify(topo, SearchOptions(k_max=8, timeout_s=60))
    assert result.verdict == "counterexample" and result.certified, result.message
    assert result.bolts["count"].method == "solver"
    assert any(n.startswith("defect: a lasso built by simulation for count failed certification")
               for n in result.notes)
    assert all(certify(t).ok for t in result.traces)


def test_a_single_bound_is_left_to_the_solver() -> None:
    """`k=` asks about exactly one bound: no simulated lasso of another length answers it."""
    topo = parse_topology(rounding_topology("dvert", alpha_b=1.4))
    result = verify(topo, SearchOptions(k=3, timeout_s=60))
    assert result.verdict == "none-up-to-k" and result.k == 3


def test_cancel_during_the_simulation_returns_unknown(monkeypatch) -> None:
    # how fast (under 100 ms) is measured by bench/cancel_latency.py: a wall-clock bound fails under load;
    # only the unaligned schedule: its spout gap 0.9/1.0007 s against B's cycle of 1.55 s closes no loop soon
    topo = parse_topology(rounding_topology("exact", alpha_b=1.4, rate=1.0007))
    monkeypatch.setattr(schedule_order, "schedules",  # the search's simulations play a target's schedule order
                        lambda net, target, cancelled, haste=(): iter([simulate.unaligned_schedule(net, target)]))
    monkeypatch.setattr(simulate, "MAX_CELLS", 10**9)
    monkeypatch.setattr(search_lassos, "FIRST_PASS_CELLS", 10**9)  # else the first pass stops, the rates answer
    monkeypatch.setattr(search_lassos, "SIMULATION_BUDGET_S", 60.0)
    monkeypatch.setattr(search_proofs, "prove_growth", lambda topo, target: None)  # else the rates answer first
    search = Search(topo, SearchOptions(timeout_s=60))
    out = {}
    thread = threading.Thread(target=lambda: out.update(result=search.run()))
    thread.start()
    time.sleep(0.5)
    assert thread.is_alive()  # still simulating
    search.cancel()
    thread.join(30)
    assert not thread.is_alive()
    assert out["result"].verdict == "unknown" and "cancelled" in out["result"].message


def test_a_cancelled_certification_is_no_certificate() -> None:
    topo = parse_topology(rounding_topology("dvert"))
    lasso = build_lasso(build_network(topo, ["B"]), "B")
    assert lasso.trace is not None and certify(lasso.trace, checked=["B"]).ok
    cert = certify(lasso.trace, checked=["B"], cancelled=lambda: True)
    assert not cert.ok and cert.problems == [CANCELLED]


def test_a_simulated_trace_survives_the_json_round_trip() -> None:
    topo = parse_topology(rounding_topology("exact", alpha_b=1.4))
    lasso = build_lasso(build_network(topo, ["B"]), "B")
    assert lasso.trace is not None
    again = Trace.model_validate(lasso.trace.model_dump(mode="json"))
    assert again == lasso.trace and certify(again, checked=["B"]).ok


# ---- generated layered topologies (tests/layered_topologies.py) ---------------------------------

def test_layered_topologies_are_seeded_and_overload_what_they_say() -> None:
    topo = layered_topology(30, seed=1)
    assert topo.semantics() == layered_topology(30, seed=1).semantics() != layered_topology(30, seed=2).semantics()
    assert len(topo.components) == 30
    assert len({s.rate for s in layered_topology(100, seed=0).spouts}) > 1  # several spouts, different rates
    assert any(b.sigma != int(b.sigma) for b in topo.bolts)  # σ that are not integers
    statuses = rate_check(topo).bolts
    grows = overloaded_bolts(topo)
    assert len(grows) == 2
    assert all(statuses[b.name].status == "bounded" for b in topo.bolts if b.name not in grows)
    deepest = max(int(b.name[1:]) for b in topo.bolts)
    assert all(int(n[1:]) > deepest / 2 for n in grows)  # deep in the graph


@pytest.mark.parametrize("emission", ["dvert", "exact"])
@pytest.mark.parametrize("size,seed", [(10, 0), (10, 1), (10, 2), (20, 0), (20, 1), (30, 2)])
def test_every_bolt_the_rate_check_says_grows_gets_a_simulated_certified_lasso(size: int, seed: int,
                                                                               emission: str) -> None:
    topo = layered_topology(size, seed, emission=emission)
    grows = overloaded_bolts(topo)
    result = verify(topo, SearchOptions(timeout_s=60))
    for name in grows:
        verdict = result.bolts[name]
        assert verdict.verdict == "counterexample" and verdict.certified, verdict.message
        assert verdict.method == "simulation"
        trace = result.traces[verdict.trace_index]
        assert certify(trace, checked=[name]).ok
    assert not any(n.startswith("defect") for n in result.notes)


@pytest.mark.parametrize("size,seed", [(5, 1), (6, 1), (6, 3)])
def test_the_solver_agrees_with_the_simulation_on_small_generated_topologies(size: int, seed: int) -> None:
    topo = layered_topology(size, seed, overloaded=1)
    simulated = verify(topo, SearchOptions(timeout_s=60))
    solved = verify(topo, SearchOptions(k_max=16, timeout_s=120, simulate=False))
    for name in overloaded_bolts(topo):
        assert simulated.bolts[name].method == "simulation" and simulated.bolts[name].verdict == "counterexample"
        assert solved.bolts[name].method == "solver" and solved.bolts[name].verdict == "counterexample", \
            solved.bolts[name].message
        assert solved.bolts[name].k <= simulated.bolts[name].k  # the solver's are the short ones


# ---- the lower bound on k ------------------------------------------------------------------

def chain(length: int, init: int = 0) -> dict:
    bolts = [{"name": f"B{i}", "alpha": 0.5, "sigma": 1, "parallelism": 1} for i in range(1, length + 1)]
    subs = [{"source": "S", "target": "B1"}] + [{"source": f"B{i}", "target": f"B{i + 1}"} for i in range(1, length)]
    bolts[-1]["alpha"] = 2.0  # the last one is overloaded
    return {"name": "chain", "spouts": [{"name": "S", "rate": 1}], "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": 0.1, "max_idle_time": 0.05, "init_queues": init},
            "verification": {"checked": [f"B{length}"]}}


def test_no_lasso_is_shorter_than_the_lower_bound() -> None:
    topo = parse_topology(chain(4))
    net = build_network(topo, ["B4"])
    assert lasso_lower_bound(net) == 3  # B1, B2, B3 must each emit inside the loop; B4 is final
    assert lasso_lower_bound(build_network(parse_topology(chain(4, init=1)), ["B4"])) == 1
    enc = Encoding(net, 2, z3.Context(), solver_options={"smt.arith.solver": 2})
    enc.solver.set("timeout", 60_000)
    assert enc.solver.check() == z3.unsat


def test_the_search_skips_bounds_below_the_lower_bound() -> None:
    topo = parse_topology(chain(7))
    seen = []
    result = verify(topo, SearchOptions(k_max=4, timeout_s=60, simulate=False), progress=seen.append)
    assert result.verdict == "none-up-to-k" and result.k == 4
    # k = 4 < 6: answered without the solver (its progress carries a bound k; the phases' announcements do not)
    assert [p for p in seen if p.k or p.stats] == []
    assert all(p.doing for p in seen)
