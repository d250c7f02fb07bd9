"""The deepening search: verdicts on the shipped examples, the rate-check proof, cancellation."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.formats import load_topology
from app.core.rates import bounded_bolts
from app.core.tcn.check.certify import certify
from app.core.tcn.network import build_network
from app.core.tcn.search import Search, SearchOptions, deepening_schedule, verify
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def model(name: str):
    return load_topology(MODELS / f"{name}.storm.json")


def test_schedule_is_monotone_and_ends_at_k_max() -> None:
    assert deepening_schedule(4, 40) == [4, 8, 12, 16, 20, 24, 32, 40]
    assert deepening_schedule(4, 15) == [4, 8, 12, 15]
    assert deepening_schedule(10, 6) == [6]


def test_cone_of_influence_keeps_checked_bolts_and_their_upstream() -> None:
    net = build_network(model("focused-crawler-reduced-cfg-2"))
    assert net.checked == ["expander"]
    assert set(net.kept) == {"wpSpout", "WpDeserializer", "expander"}
    assert set(net.dropped) == {"articleExtraction", "mediaExtraction"}


def test_getting_started_counterexample_is_certified() -> None:
    result = verify(model("getting-started"), SearchOptions(k_max=8, timeout_s=60))
    assert result.verdict == "counterexample" and result.certified
    assert result.growing == ["count"] and result.growth_per_loop["count"] > 0
    assert result.trace is not None and certify(result.trace).ok
    positions = result.trace.positions
    assert positions[result.k + 1].bolts["count"].queue > positions[result.loop_start].bolts["count"].queue


def test_simple_dia_cfg_1_certified_counterexample_b2_grows() -> None:
    # B2 alone: the document also checks B3, which no lasso up to k = 15 grows (the slow test below), so its search
    # would only run to the timeout
    topo = model("simple-DIA-cfg-1")
    b2 = next(b.id for b in topo.bolts if b.name == "B2")
    topo = topo.model_copy(update={"verification": topo.verification.model_copy(update={"checked": [b2]})})
    result = verify(topo, SearchOptions(k_max=15, timeout_s=150, simulate=False))
    assert result.verdict == "counterexample" and result.certified, result.message
    assert result.growing == ["B2"] and result.growth_per_loop["B2"] > 0
    assert result.trace is not None and certify(result.trace).ok
    assert result.loop_start is not None and 1 <= result.loop_start <= result.k


_B2_AND_B3_PROOF = """
import z3
from pathlib import Path
from app.core.formats import load_topology
from app.core.tcn.encode import Encoding
from app.core.tcn.network import build_network
net = build_network(load_topology(Path(%r)))
enc = Encoding(net, 15, z3.Context(), solver_options={"smt.arith.solver": 2})
enc.solver.add(enc.growing["B2"], enc.growing["B3"])
enc.solver.set("rlimit", 14_000_000_000)
outcome = enc.solver.check()
print(outcome, enc.solver.reason_unknown() if outcome == z3.unknown else "")
"""


@pytest.mark.slow
def test_simple_dia_cfg_1_b2_and_b3_never_grow_together_up_to_the_published_k() -> None:
    """The published k = 15 lasso grew B2 and B3; under the sound loop conditions no such lasso exists.

    The proof runs in a Python process of its own: in the test process, a timer left by an earlier
    search's time limit was seen to cancel it ("canceled" after 50 s). A resource limit, not a
    wall-clock one, bounds it, so that a loaded machine cannot turn the proof into "unknown"
    (measured: 9.6e9 units, about 3 minutes of CPU on the 2-core machine, since a bolt may emit and
    take at one position, back-to-back: 1.3e9 before; hence slow, bench/RESULTS.md)."""
    script = _B2_AND_B3_PROOF % str(MODELS / "simple-DIA-cfg-1.storm.json")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["unsat"], done.stdout


def test_simple_dia_cfg_3_widened_lasso_grows_the_published_bolts() -> None:
    result = verify(model("simple-DIA-cfg-3"), SearchOptions(k_max=15, timeout_s=150, widen_s=60))
    assert result.verdict == "counterexample" and result.certified, result.message
    assert set(result.growing) == {"B2", "B3"}  # published: B2 and B3 grow
    assert result.trace is not None and certify(result.trace).ok


def test_rate_check_proof_gives_bounded_without_search() -> None:
    result = verify(model("focused-crawler-reduced-cfg-5"))
    assert result.verdict == "bounded" and result.k is None and result.trace is None
    assert "10/3" in result.message and "1000/133" in result.message  # the exact inflow and capacity cited
    assert result.rate_check["all_checked_bounded"] is True


def test_forced_search_on_a_bounded_topology_finds_no_lasso() -> None:
    result = verify(model("focused-crawler-reduced-cfg-5"), SearchOptions(force_search=True, k_max=8, timeout_s=60))
    assert result.verdict == "none-up-to-k" and result.k == 8
    assert "not a proof" in result.message and "bounded" not in result.message.replace("boundedness", "")


def test_none_up_to_k_suggests_larger_k_when_rate_check_says_grows() -> None:
    # k = 2 (at k = 3 B2 already has a lasso: it emits and takes again at one position, back-to-back)
    result = verify(model("simple-DIA-cfg-1"), SearchOptions(k=2, timeout_s=60))
    assert result.verdict == "none-up-to-k" and result.k == 2
    assert any("B2 grows" in n and "larger k" in n for n in result.notes)


def test_threshold_property_reaches_n() -> None:
    result = verify(model("getting-started"), SearchOptions(threshold=3, k_max=8, timeout_s=60))
    assert result.verdict == "counterexample" and result.property == "threshold"
    assert result.trace is not None and certify(result.trace, threshold=3).ok
    assert any(p.bolts[n].queue >= 3 for p in result.trace.positions for n in result.growing)
    assert not certify(result.trace, threshold=10**6).ok


def test_progress_is_reported_per_bound() -> None:
    seen = []
    verify(model("focused-crawler-reduced-cfg-5"), SearchOptions(force_search=True, k_max=8), progress=seen.append)
    steps = [p for p in seen if not p.doing]  # the solver's steps (the others say what it does next)
    assert [p.k for p in steps] == [4, 8] and all(p.elapsed_s >= 0 for p in seen)


def test_time_limit_gives_unknown() -> None:
    result = verify(model("simple-DIA-cfg-2"), SearchOptions(k=20, timeout_s=0.5))
    assert result.verdict == "unknown" and "time limit" in result.message


def test_cancel_during_the_solver_returns_unknown() -> None:
    # how fast (under 100 ms) is measured by bench/cancel_latency.py: a wall-clock bound fails under load
    search = Search(model("simple-DIA-cfg-2"), SearchOptions(k=20, timeout_s=60))
    out = {}
    thread = threading.Thread(target=lambda: out.update(result=search.run()))
    thread.start()
    time.sleep(1.0)  # well inside the solver by now
    assert thread.is_alive()  # still solving: the cancel, not the time limit, ends it
    search.cancel()
    thread.join(30)
    assert not thread.is_alive()
    assert out["result"].verdict == "unknown" and "cancelled" in out["result"].message


def test_cancel_before_run() -> None:
    search = Search(model("simple-DIA-cfg-2"), SearchOptions(k=20))
    search.cancel()
    assert search.run().verdict == "unknown"


# ---- random small topologies: a lasso never contradicts the rate-check proof --------------

@st.composite
def small_topologies(draw):
    rate = draw(st.sampled_from([0.5, 1.0, 2.0]))
    bolts = []
    n = draw(st.integers(1, 2))
    for i in range(n):
        bolts.append({"name": f"B{i}", "alpha": draw(st.sampled_from([0.5, 1.0, 2.0])),
                      "sigma": draw(st.sampled_from([0.5, 1.0, 2.0])), "parallelism": draw(st.integers(1, 3))})
    subs = [{"source": "S", "target": "B0"}] + [{"source": f"B{i - 1}", "target": f"B{i}"} for i in range(1, n)]
    return parse_topology({"name": "random", "spouts": [{"name": "S", "rate": rate, "burst": draw(st.integers(1, 2))}],
                           "bolts": bolts, "subscriptions": subs,
                           "settings": {"tolerance": 0.1, "max_idle_time": 0.05,
                                        "init_queues": draw(st.integers(0, 2))}})


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(small_topologies())
def test_no_lasso_where_the_rate_check_proves_bounded(topo) -> None:
    result = verify(topo, SearchOptions(force_search=True, k_max=6, timeout_s=5))
    bounded = bounded_bolts(topo)
    if all(bounded[b.name] for b in topo.checked_bolts()):
        assert result.verdict != "counterexample", result.message
    if result.verdict == "counterexample":
        assert result.trace is not None and certify(result.trace).ok
        assert not all(bounded[n] for n in result.growing)


def test_complete_focused_crawler_shows_expander_growing() -> None:
    result = verify(model("focused-crawler-complete"), SearchOptions(k_max=20, timeout_s=150))
    assert result.verdict == "counterexample" and result.certified, result.message
    assert "expander" in result.growing and result.growth_per_loop["expander"] > 0
    assert result.trace is not None and certify(result.trace).ok


@pytest.mark.slow  # 13-90 s: z3's time on this lasso is heavy-tailed
def test_simple_dia_cfg_2_b2_grows_where_the_published_run_found_nothing() -> None:
    """Published: no lasso up to 15 with B2 *and* B3 growing; ours: B2 alone grows (rate check: may grow)."""
    result = verify(model("simple-DIA-cfg-2"), SearchOptions(k_max=15, timeout_s=150))
    assert result.verdict == "counterexample" and result.certified, result.message
    assert result.growing == ["B2"] and result.rate_check["bolts"]["B2"]["status"] == "may-grow"
    assert result.trace is not None and certify(result.trace).ok and result.k <= 15
