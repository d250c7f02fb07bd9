"""Verdicts that are never wrong: exact output ratios, both emission rules, a certifier that rejects
every broken trace, and a verdict per checked bolt (docs/model.md, docs/boundedness.md)."""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.emission import carry_graph, emit, output_ratio_bounds
from app.core.formats import load_topology
from app.core.formats.trace import load_trace
from app.core.rates import rate_check, sigma_bounds
from app.core.tcn.check.certify import certify
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "data" / "traces"
SIGMAS = [Fraction(1, 3), Fraction(2, 5), Fraction(3, 4), Fraction(3, 2), Fraction(5, 2)]


def rounding_example(emission: str) -> Any:
    """S (rate 1) -> A (α 0.1, σ 0.75) -> B (α 1.05, σ 1), τ 0.1, max idle 0.01, B checked."""
    return parse_topology({
        "name": "sigma-rounding",
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 0.75, "parallelism": 1},
                  {"name": "B", "alpha": 1.05, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0.01, "emission": emission},
        "verification": {"checked": ["B"]},
    })


# ---- exact output ratios ---------------------------------------------------------------------


def brute_force_ratios(sigma: Fraction, take_max: int) -> tuple[Fraction, Fraction]:
    """Every simple cycle of the carry automaton (every choice among parallel moves), enumerated."""
    edges = carry_graph(sigma, take_max, "dvert")
    graph = nx.DiGraph()
    moves: dict[tuple[Fraction, Fraction], list[tuple[int, int]]] = {}
    for state, out_edges in edges.items():
        for batch, out, nxt in out_edges:
            graph.add_edge(state, nxt)
            moves.setdefault((state, nxt), []).append((batch, out))
    ratios = []
    for cycle in nx.simple_cycles(graph):
        hops = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        for choice in itertools.product(*(moves[h] for h in hops)):
            ratios.append(Fraction(sum(o for _, o in choice), sum(b for b, _ in choice)))
    return min(ratios), max(ratios)


@pytest.mark.parametrize("sigma", SIGMAS + [Fraction(1, 2), Fraction(2), Fraction(7, 10), Fraction(5, 3)])
@pytest.mark.parametrize("take_max", [1, 2, 3, 4, 6])
def test_output_ratio_bounds_match_a_brute_force_cycle_enumeration(sigma: Fraction, take_max: int) -> None:
    assert output_ratio_bounds(sigma, take_max, "dvert") == brute_force_ratios(sigma, take_max)


def test_output_ratios_of_the_documented_cases() -> None:
    # σ = 3/4 with batches of one: the carry is 1 after the first batch and every later batch emits 1
    assert output_ratio_bounds(Fraction(3, 4), 1, "dvert") == (1, 1)
    assert output_ratio_bounds(Fraction(3, 2), 1, "dvert") == (2, 2)
    # σ integer or 1/n: exactly σ; the exact rule: always σ
    assert output_ratio_bounds(Fraction(1, 3), 3, "dvert") == (Fraction(1, 3), Fraction(1, 3))
    assert output_ratio_bounds(Fraction(3, 4), 1, "exact") == (Fraction(3, 4), Fraction(3, 4))


@pytest.mark.parametrize("sigma", SIGMAS + [Fraction(7, 10), Fraction(5, 3)])
def test_large_batches_add_no_cycle_beyond_those_up_to_the_denominator(sigma: Fraction) -> None:
    # the shortcut in rates.sigma_bounds (batches above den(σ) change nothing) checked by brute force
    for take_max in range(sigma.denominator, sigma.denominator + 4):
        lo, hi = brute_force_ratios(sigma, take_max)
        assert sigma_bounds(sigma, take_max, "dvert") == (lo, hi) == (sigma, hi)


def test_exact_rule_keeps_the_long_run_ratio_at_sigma() -> None:
    for sigma in SIGMAS:
        carry, emitted, processed = Fraction(0), 0, 0
        for batch in [1, 2, 3, 1, 1, 2] * 20:
            out, carry = emit(sigma, carry, batch, "exact")
            emitted, processed = emitted + out, processed + batch
            assert 0 <= carry < 1 / sigma
            assert emitted == sigma * processed - carry * sigma  # nothing lost, nothing made up


def test_check_json_reports_the_effective_ratios() -> None:
    report = rate_check(rounding_example("dvert")).to_public_json()
    assert report["bolts"]["A"]["sigma_effective"] == ["1", "1"]
    assert report["bolts"]["B"]["status"] == "grows"
    assert "emits 1 per processed tuple in the long run, not its σ = 3/4" in report["bolts"]["B"]["explanation"]
    exact = rate_check(rounding_example("exact")).to_public_json()
    assert exact["bolts"]["A"]["sigma_effective"] == ["3/4", "3/4"]
    assert exact["bolts"]["B"]["status"] == "bounded"


def test_suggested_parallelism_uses_the_effective_ratio() -> None:
    report = rate_check(rounding_example("dvert"))
    assert report.suggested_parallelism["B"] == 2
    repaired = rounding_example("dvert").model_copy(deep=True)
    repaired.bolts[1].parallelism = 2
    assert rate_check(repaired).bolts["B"].status == "bounded"


# ---- the false "bounded" proof, under both rules ------------------------------------------------


def test_the_rounding_example_is_bounded_under_the_exact_rule() -> None:
    result = verify(rounding_example("exact"))
    assert result.verdict == "bounded" and result.bolts["B"].verdict == "bounded"
    assert result.bolts["B"].method == "rate check"


def test_the_rounding_example_is_not_proven_bounded_under_the_dvert_rule() -> None:
    result = verify(rounding_example("dvert"), SearchOptions(k_max=4, timeout_s=60))
    assert result.verdict != "bounded"
    assert result.rate_check["bolts"]["B"]["status"] == "grows"


def test_the_rounding_example_has_a_certified_lasso_under_the_dvert_rule() -> None:
    """The lasso our search found (k = 32): B gains one tuple per pass of about 4.5 s."""
    trace = load_trace(TRACES / "sigma-rounding-dvert.trace.json")
    assert trace.topology["settings"]["emission"] == "dvert"
    cert = certify(trace)
    assert cert.ok, cert.problems
    assert cert.growth_per_loop["B"] == 1
    # the same run is impossible under the exact rule: A's carry would not round up
    exact = trace.model_dump(mode="json")
    exact["topology"]["settings"]["emission"] = "exact"
    assert not certify(exact).ok


def test_the_verifier_finds_the_rounding_lasso_under_the_dvert_rule() -> None:
    result = verify(rounding_example("dvert"), SearchOptions(timeout_s=120))
    assert result.verdict == "counterexample" and result.bolts["B"].certified, result.message
    trace = result.traces[result.bolts["B"].trace_index]
    assert certify(trace, checked=["B"]).ok


@pytest.mark.slow
def test_the_smt_search_alone_finds_the_rounding_lasso_under_the_dvert_rule() -> None:
    result = verify(rounding_example("dvert"), SearchOptions(timeout_s=900, simulate=False))
    assert result.verdict == "counterexample" and result.bolts["B"].method == "solver"


# ---- both rules through encoder, trace and certifier ------------------------------------------


def test_exact_carries_are_written_as_fractions_and_certified() -> None:
    topo = parse_topology({
        "spouts": [{"name": "S", "rate": 2, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 1.5, "parallelism": 1},
                  {"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}],
        "settings": {"emission": "exact"},
        "verification": {"checked": ["B"]},
    })
    result = verify(topo, SearchOptions(k_max=16, timeout_s=120))
    assert result.verdict == "counterexample", result.message
    # A (σ = 3/2, batches of one) keeps 1 − 1/σ = 1/3 after its first batch, then 0, and so on
    carries = {p.bolts["A"].buffer for p in result.trace.positions}
    assert "1/3" in carries, carries
    assert certify(result.trace).ok


# ---- the certifier rejects every broken trace --------------------------------------------------


def shipped_traces() -> list[Path]:
    return sorted(TRACES.glob("*.trace.json"))


def mutations(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every single change: each integer field ±1, each boolean flipped, each phase changed."""
    for i, pos in enumerate(data["positions"]):
        for kind in ("spouts", "bolts"):
            for name, comp in pos[kind].items():
                for field, value in comp.items():
                    if isinstance(value, bool):
                        variants: list[Any] = [not value]
                    elif isinstance(value, int):
                        variants = [value + 1, value - 1]
                    elif field == "phase":
                        variants = ["idle" if value == "processing" else "processing"]
                    elif field == "buffer":
                        variants = [str(Fraction(value) + 1), str(Fraction(value) - 1)]
                    else:
                        continue
                    for variant in variants:
                        changed = copy.deepcopy(data)
                        changed["positions"][i][kind][name][field] = variant
                        yield f"position {i}: {kind} {name}.{field} = {variant!r}", changed
    for field in ("k", "loop_start"):
        for step in (1, -1):
            changed = copy.deepcopy(data)
            changed[field] += step
            yield f"{field} {step:+}", changed


def test_there_are_certified_traces_of_the_shipped_models() -> None:
    names = {p.name.split(".")[0] for p in shipped_traces()}
    assert {"getting-started", "simple-DIA-cfg-1", "simple-DIA-cfg-3", "focused-crawler-complete",
            "focused-crawler-reduced-cfg-4"} <= names


@pytest.mark.parametrize("path", shipped_traces(), ids=lambda p: p.name.removesuffix(".trace.json"))
def test_every_single_mutation_of_a_certified_trace_is_rejected(path: Path) -> None:
    data = json.loads(path.read_text())
    assert certify(data).ok, certify(data).problems
    survivors = [label for label, changed in mutations(data) if certify(changed).ok]
    assert not survivors, survivors


def test_a_bolt_that_emits_at_its_takes_is_rejected() -> None:
    data = json.loads((TRACES / "getting-started.1.trace.json").read_text())
    takes = [i for i, p in enumerate(data["positions"]) if p["bolts"]["count"]["take"]]
    for i in takes:
        data["positions"][i]["bolts"]["count"]["emitted"] = 1
    cert = certify(data)
    assert not cert.ok and any("at a take" in p for p in cert.problems), cert.problems


def test_a_spout_silent_at_position_0_is_rejected_not_a_crash() -> None:
    data = json.loads((TRACES / "getting-started.1.trace.json").read_text())
    data["positions"][0]["spouts"]["sentences"].update(emit=False, emitted=0)
    cert = certify(data)
    assert not cert.ok
    assert any("position 0: spout sentences: does not emit at position 0" in p for p in cert.problems)


@pytest.mark.parametrize("damage", [
    lambda d: d["positions"][2]["bolts"].pop("count"),
    lambda d: d["positions"][2]["spouts"].clear(),
    lambda d: d["positions"][1]["bolts"]["split"].pop("queue"),
    lambda d: d["positions"][1]["bolts"]["split"].update(queue="3"),
    lambda d: d["positions"][1]["bolts"]["split"].update(take=1),
    lambda d: d["positions"][1]["bolts"]["split"].update(buffer="one"),
    lambda d: d["positions"][1].update(time="soon"),
    lambda d: d["positions"][1].update(time=1.5),
    lambda d: d.pop("positions"),
    lambda d: d.update(positions=d["positions"][:2]),
    lambda d: d.update(k="4"),
    lambda d: d.update(topology={"spouts": 5}),
    lambda d: d.update(loop_start=99),
], ids=["missing bolt", "missing spouts", "missing field", "string queue", "int take", "word buffer",
        "word time", "float time", "no positions", "too few positions", "string k", "broken topology",
        "loop start beyond k"])
def test_malformed_traces_are_rejected_naming_the_problem(damage: Any) -> None:
    data = json.loads((TRACES / "getting-started.1.trace.json").read_text())
    damage(data)
    cert = certify(data)
    assert not cert.ok and cert.problems
    assert not any("certifier defect" in p for p in cert.problems), cert.problems


def test_certify_never_raises_on_non_objects() -> None:
    for value in (None, 5, "trace", [], {"positions": 5}):
        assert not certify(value).ok


# ---- a verdict per checked bolt ------------------------------------------------------------------


def test_cfg3_answers_for_b2_and_b3_each_with_its_own_certified_lasso() -> None:
    result = verify(load_topology(ROOT / "models" / "simple-DIA-cfg-3.storm.json"), SearchOptions(timeout_s=240))
    assert result.verdict == "counterexample"
    assert set(result.growing) == {"B2", "B3"}
    for name in ("B2", "B3"):
        bolt = result.bolts[name]
        assert bolt.verdict == "counterexample" and bolt.certified and bolt.trace_index is not None
        trace = result.traces[bolt.trace_index]
        cert = certify(trace, checked=[name])
        assert cert.ok and cert.growth_per_loop[name] == bolt.growth_per_loop > 0
    public = result.to_public_json(["a.json", "a.2.json"][: len(result.traces)])
    assert set(public["bolts"]) == {"B2", "B3"}
    assert {"verdict", "k", "loop_start", "growth_per_loop", "certified", "trace_index"} <= set(public["bolts"]["B2"])


def test_bounded_bolts_get_their_rate_proof_and_the_others_are_searched() -> None:
    result = verify(load_topology(ROOT / "models" / "getting-started.storm.json"), SearchOptions(k_max=8, timeout_s=60))
    assert result.bolts["split"].verdict == "bounded" and result.bolts["split"].method == "rate check"
    assert result.bolts["count"].verdict == "counterexample"
    assert result.growing == ["count"]


def test_the_time_limit_bounds_the_whole_search() -> None:
    import time

    start = time.monotonic()
    topo = load_topology(ROOT / "models" / "simple-DIA-cfg-2.storm.json")
    result = verify(topo, SearchOptions(k_max=40, timeout_s=3))
    assert time.monotonic() - start < 60  # generous: the 3 s timeout stops the search, whatever the load
    assert result.verdict in ("unknown", "counterexample")
    assert all(v.verdict in ("unknown", "counterexample", "bounded") for v in result.bolts.values())


# ---- the rate check against a search without it (hypothesis) ------------------------------------


@st.composite
def small_topologies(draw: st.DrawFn) -> Any:
    n_bolts = draw(st.integers(2, 3))
    bolts, subs = [], [{"source": "S", "target": "B0"}]
    for i in range(n_bolts):
        bolts.append({"name": f"B{i}", "alpha": draw(st.sampled_from([0.25, 0.5, 1.05, 2, 3])),
                      "sigma": float(draw(st.sampled_from(SIGMAS))), "parallelism": draw(st.integers(1, 3))})
        if i:
            subs.append({"source": f"B{draw(st.integers(0, i - 1))}", "target": f"B{i}"})
    return parse_topology({
        "spouts": [{"name": "S", "rate": draw(st.sampled_from([1, 2, 4])), "burst": draw(st.integers(1, 2))}],
        "bolts": bolts, "subscriptions": subs,
        "settings": {"tolerance": 0.1, "max_idle_time": 0.01, "emission": draw(st.sampled_from(["dvert", "exact"]))},
    })


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_topologies(), st.sampled_from([8, 12]))
def test_the_rate_check_never_contradicts_an_unconstrained_search(topo: Any, k: int) -> None:
    free = verify(topo, SearchOptions(k=k, timeout_s=20, force_search=True))
    if free.verdict != "counterexample":
        return
    statuses = rate_check(topo).bolts
    for name in free.growing:
        assert statuses[name].status != "bounded", (name, statuses[name].explanation)
    for trace in free.traces:
        assert certify(trace, checked=[n for n in free.growing if n in trace.positions[0].bolts]).ok
    normal = verify(topo, SearchOptions(k=k, timeout_s=20))
    if normal.verdict == "unknown":
        return  # out of time: nothing to compare
    assert normal.verdict == "counterexample", normal.message
    assert math.isfinite(normal.elapsed_s)
