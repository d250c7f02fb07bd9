"""The first simulation's cell bound (app/core/tcn/search_lassos.py, FIRST_PASS_CELLS): a target whose lasso is
longer than the bound is answered by the proof of growth by rates, which agrees with the unbounded simulation, or
else simulated again with the full bound after the proofs; nothing the pipeline found before is lost."""

from __future__ import annotations

import pytest
from layered_topologies import layered_topology, overloaded_bolts

from app.core.tcn import search_lassos, search_proofs
from app.core.tcn.check.certify import certify
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.simulate import build_lasso


@pytest.mark.parametrize("size,seed", [(20, 0), (30, 2)])
def test_a_capped_first_pass_leaves_growth_to_the_rate_proof_which_agrees_with_the_simulation(
        monkeypatch: pytest.MonkeyPatch, size: int, seed: int) -> None:
    topo = layered_topology(size, seed)
    grows = overloaded_bolts(topo)
    simulated = verify(topo, SearchOptions(timeout_s=60))  # the default bound: these lassos are short
    monkeypatch.setattr(search_lassos, "FIRST_PASS_CELLS", 1)  # 16 positions: no lasso closes
    capped = verify(topo, SearchOptions(timeout_s=60))
    for name in grows:
        full, proven = simulated.bolts[name], capped.bolts[name]
        assert full.method == "simulation" and full.verdict == "counterexample" and full.certified
        assert certify(simulated.traces[full.trace_index], checked=[name]).ok
        assert proven.method == "rate proof" and proven.verdict == "counterexample" and proven.certified
        assert proven.growth_certificate is not None
        assert check_growth_certificate(build_network(topo, [name]).topology, proven.growth_certificate) == []
    assert not any(n.startswith("defect") for n in capped.notes)


def test_a_capped_target_no_proof_answers_is_simulated_again_with_the_full_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    topo = layered_topology(20, 0)
    monkeypatch.setattr(search_lassos, "FIRST_PASS_CELLS", 1)
    monkeypatch.setattr(search_proofs, "prove_growth", lambda topo, target: None)  # no rate proof
    result = verify(topo, SearchOptions(timeout_s=60))
    for name in overloaded_bolts(topo):
        verdict = result.bolts[name]
        assert verdict.method == "simulation" and verdict.verdict == "counterexample" and verdict.certified
        assert certify(result.traces[verdict.trace_index], checked=[name]).ok
        assert any(n.startswith(f"simulation for {name}: no schedule closed") for n in result.notes)


def test_a_lasso_says_whether_the_cell_bound_stopped_it() -> None:
    topo = layered_topology(20, 0)
    name = overloaded_bolts(topo)[0]
    net = build_network(topo, [name])
    stopped = build_lasso(net, name, max_cells=1)
    assert stopped.trace is None and stopped.capped
    found = build_lasso(net, name)
    assert found.trace is not None and not found.capped


def test_the_total_bound_spans_all_schedules() -> None:
    topo = layered_topology(20, 0)
    name = overloaded_bolts(topo)[0]
    net = build_network(topo, [name])
    stopped = build_lasso(net, name, total_cells=1)
    assert stopped.trace is None and stopped.capped
    assert len(stopped.schedules_tried) == 1  # the first schedule spent it: no other is simulated
