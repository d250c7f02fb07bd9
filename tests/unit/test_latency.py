"""Latency bounds by hand, against separate flow analysis on chains, and the timeout witnesses (docs/latency.md)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.latency.bounds import LatencyAnalysis
from app.core.latency.netcalc import Bucket, FeedForward, Flow
from app.core.latency.report import latency_report
from app.core.latency.witness import timeout_witness
from app.core.tcn.check.latency_witness import check_witness
from app.core.topology import parse_topology
from tests.unit.test_latency_runs import _doc


def _chain(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 6)
    bolts = [(f"B{i}", rng.choice([0.05, 0.1, 0.2, 0.3]), 1.0 if i < n - 1 else 0.0, rng.choice([1, 2, 4]))
             for i in range(n)]
    subs = [("S", "B0"), *((f"B{i}", f"B{i + 1}") for i in range(n - 1))]
    return _doc(bolts, subs, rate=rng.choice([1.0, 3.0]), burst=rng.choice([1, 5, 20]),
                tolerance=rng.choice([0.0, 0.1]), idle=rng.choice([0.0, 0.01]), q0=rng.choice([0, 0, 3]))


def test_a_single_bolt_by_hand() -> None:
    """S (rate 1, burst 1, τ 0) -> B (α 0.2, C 1, max_idle 0.05): a tuple finds B idle (the next comes 1 s later),
    waits max_idle and is processed in 0.2 s: 0.25 s, and that is the bound."""
    doc = _doc([("B", 0.2, 0.0, 1)], [("S", "B")], tolerance=0.0, idle=0.05)
    lat = LatencyAnalysis(parse_topology(doc))
    assert lat.bolts["B"].sojourn == Fraction(1, 4)
    assert lat.spouts()["S"].bound == Fraction(1, 4) and lat.spouts()["S"].path == ["B"]


def test_never_above_separate_flow_analysis_on_chains() -> None:
    """On a chain of σ = 1 bolts the bound is at most SFA's with the same curves: the aggregate entering the first
    bolt (its arrival curve's pieces, each a token bucket, plus Q₀) through the bolts' rate-latency service curves,
    the initial tuples of each later bolt as FIFO cross traffic that goes on down the chain."""
    rng = random.Random(3)
    compared = 0
    for _ in range(40):
        doc = _chain(rng)
        lat = LatencyAnalysis(parse_topology(doc))
        bound = lat.spouts()["S"].bound
        first = lat.bolts["B0"].arrival
        if bound is None or first is None:
            continue
        names = [b["name"] for b in doc["bolts"]]
        q0 = Fraction(doc["settings"]["init_queues"])
        for rate, burst in first.pieces:
            if rate >= min(lat.bolts[j].service.rate for j in names):
                continue
            net = FeedForward({j: lat.bolts[j].service for j in names})
            net.flows = [Flow("f", Bucket(rate, burst + q0), tuple(names))]
            # the initial tuples of each later bolt go on down the chain with the aggregate
            net.flows += [Flow(f"q{k}", Bucket(Fraction(0), q0), tuple(names[k:])) for k in range(1, len(names)) if q0]
            assert bound <= net.sfa(net.flows[0]).delay, (doc, bound, net.sfa(net.flows[0]).delay)
            compared += 1
    assert compared >= 20


def test_a_cycle_gets_no_tree_bound() -> None:
    doc = _doc([("A", 0.1, 0.5, 1), ("B", 0.1, 0.0, 1)], [("S", "A"), ("A", "A"), ("A", "B")])
    lat = LatencyAnalysis(parse_topology(doc))
    spout = lat.spouts()["S"]
    assert spout.bound is None and "cycle" in spout.reason
    assert lat.bolts["A"].sojourn is not None  # the member itself is proven bounded


def test_max_spout_pending_bounds_an_overloaded_bolt() -> None:
    """B grows (2 tuples/s into 1/s): the rates prove nothing, but with P pending trees at most P tuples are ahead
    of any tuple: d + L·P = 1 + P seconds, within 30 s for P ≤ 29."""
    doc = _doc([("B", 1.0, 0.0, 1)], [("S", "B")], rate=2.0, tolerance=0.0)
    doc["storm"] = {"max_spout_pending": 10}
    lat = LatencyAnalysis(parse_topology(doc))
    assert lat.bolts["B"].sojourn is None
    assert lat.pending_sojourn("B", 10) == 11
    advice = lat.advice()
    assert advice is not None and advice.largest == 29 and not advice.unlimited
    assert advice.current_bound == {"S": 11} and advice.little == {"S": 5}


@pytest.fixture(scope="module")
def grows() -> dict[str, Any]:
    return _doc([("B", 1.0, 0.0, 1)], [("S", "B")], rate=2.0, tolerance=0.0)


def test_a_growing_bolt_has_a_certified_timeout_witness(grows: dict[str, Any]) -> None:
    topo = parse_topology(grows)
    witness = timeout_witness(topo, "B", Fraction(30))
    assert witness is not None and witness.wait > 30
    ok = check_witness(witness.trace, "B", witness.loop_pass, witness.position, Fraction(30))
    assert ok.ok and ok.wait == witness.wait
    # the checker recomputes: one pass earlier the wait is not above the timeout, a larger timeout is not exceeded
    earlier = check_witness(witness.trace, "B", witness.loop_pass - 1, witness.position, Fraction(30))
    assert not earlier.ok and "not more than the timeout" in earlier.problems[0]
    assert not check_witness(witness.trace, "B", witness.loop_pass, witness.position, witness.wait).ok
    tampered = witness.trace.model_dump()
    tampered["positions"][witness.trace.loop_start]["bolts"]["B"]["batch"] += 1
    assert not check_witness(tampered, "B", witness.loop_pass, witness.position, Fraction(30)).ok
    report = latency_report(topo)
    assert report.spouts["S"].answer == "times-out" and report.not_proven() == ["S"]
    assert "tuples time out" in report.spouts["S"].sentence


def test_one_lasso_serves_every_bolt_that_grows_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """S → A → B, both overloaded: the lasso built for A makes B grow too, so B's witness comes from it (one
    simulation, not two), and the independent checker certifies both."""
    from app.core.latency import witness as builder

    doc = _doc([("A", 0.4, 1.0, 1), ("B", 1.0, 0.0, 1)], [("S", "A"), ("A", "B")], rate=4.0, tolerance=0.0)
    calls: list[str] = []
    real = builder.build_lasso

    def counted(net: Any, target: str, **kw: Any) -> Any:
        calls.append(target)
        return real(net, target, **kw)

    monkeypatch.setattr(builder, "build_lasso", counted)
    found = builder.timeout_witnesses(parse_topology(doc), ["A", "B"], Fraction(30))
    assert calls == ["A"] and set(found) == {"A", "B"}
    for name, (w, *_) in found.items():
        assert check_witness(w.trace, name, w.loop_pass, w.position, Fraction(30)).ok


def test_answers_in_storm_terms() -> None:
    doc = _doc([("B", 0.2, 0.0, 1)], [("S", "B")], tolerance=0.0, idle=0.05)
    report = latency_report(parse_topology(doc))
    assert report.spouts["S"].answer == "no-timeouts" and report.not_proven() == []
    assert report.spouts["S"].sentence == ("S: every tuple tree completes within 250 ms in every run "
                                           "(topology.message.timeout.secs 30 s): no timeouts; slowest branch S → B")
    doc["storm"] = {"acker_executors": 0}
    assert latency_report(parse_topology(doc)).spouts["S"].answer == "no-acking"


def test_check_and_verify_answer_per_spout(tmp_path, capsys) -> None:
    """`check` and `verify` print the answers; --fail-on timeout exits 1 where tuples may time out; --witness-out
    writes a witness the independent checker accepts; --latency-target moves the max.spout.pending advice."""
    import json

    from app.cli import main

    models = __import__("pathlib").Path(__file__).resolve().parents[2] / "models"
    proven = str(models / "focused-crawler-reduced-cfg-6.storm.json")
    assert main(["check", proven, "--fail-on", "timeout"]) == 0
    out = capsys.readouterr().out
    assert "wpSpout: every tuple tree completes within 12.4915 s in every run" in out and "no timeouts" in out
    assert main(["check", proven, "--json", "--latency-target", "10"]) == 0
    data = json.loads(capsys.readouterr().out)["latency"]
    assert data["spouts"]["wpSpout"]["critical_path"] == ["WpDeserializer", "expander", "articleExtraction"]
    assert data["pending"]["largest"] == 6 and data["pending"]["target"] == 10
    witness_file = tmp_path / "w.json"
    grows = str(models / "getting-started.storm.json")
    assert main(["check", grows, "--fail-on", "timeout", "--witness-out", str(witness_file)]) == 1
    assert "sentences: tuples time out: a certified run" in capsys.readouterr().out
    written = json.loads(witness_file.read_text())
    (w,) = written["witnesses"]
    assert check_witness(w["trace"], w["bolt"], w["loop_pass"], w["position"], Fraction(30)).ok
    assert main(["check-witness", str(witness_file)]) == 0
    assert "sentences at count: accepted: a tuple of a tree of sentences waits" in capsys.readouterr().out
    w["loop_pass"] -= 1  # the claim one pass earlier: not a wait beyond the timeout
    witness_file.write_text(json.dumps(written))
    assert main(["check-witness", str(witness_file)]) == 1
    assert "rejected: the tuple waits" in capsys.readouterr().out
    assert main(["verify", proven, "--fail-on", "timeout", "-q"]) == 0
    assert "no timeouts" in capsys.readouterr().out


def test_compare_reports_a_measured_tree_above_the_bound(tmp_path, capsys) -> None:
    """A run whose acked trees take longer than the proven bound disagrees with the model (`compare`)."""
    import json

    from app.cli import main

    topo_file = tmp_path / "pair.storm.json"
    topo_file.write_text(json.dumps({"name": "pair", "spouts": [{"name": "S", "rate": 1.0}],
                                     "bolts": [{"name": "B", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
                                     "subscriptions": [{"source": "S", "target": "B"}]}))
    from app.core.formats import load_topology

    bound = LatencyAnalysis(load_topology(topo_file)).spouts()
    (spout,) = bound.values()
    assert spout.bound is not None
    for late, agrees in ((0.0, True), (1.0, False)):
        log = tmp_path / f"run{late}.jsonl"
        lines = []
        for i in range(60):
            done = i + float(spout.bound) * (0.9 if not late else 1) + late
            lines += [{"t": i, "ev": "spout_emit", "comp": "S", "msg": f"m{i}", "tuple": f"t{i}"},
                      {"t": i + 0.01, "ev": "take", "comp": "B", "tuple": f"t{i}"},
                      {"t": i + 0.11, "ev": "bolt_ack", "comp": "B", "tuple": f"t{i}"},
                      {"t": done, "ev": "spout_ack", "comp": "S", "msg": f"m{i}"},
                      {"t": i + 0.5, "comp": "B", "queue": i % 2}]
        log.write_text("".join(json.dumps(line) + "\n" for line in lines))
        code = main(["compare", str(log), "--topology", str(topo_file), "--engine", "local", "--json",
                     "--fail-on-disagreement"])
        data = json.loads(capsys.readouterr().out)
        (row,) = data["comparison"]["latency"]
        assert row["agrees"] is agrees and row["completed"] == 60 and row["bound"] == float(spout.bound)
        assert code == (0 if agrees else 1)
        assert data["disagreeing"] == ([] if agrees else ["S (complete latency)"])


def test_the_witness_checker_shares_no_code_with_the_builder() -> None:
    """The latency witness checker imports neither the builder, the simulation, the rate check nor the emission
    rules: only the product's certifier (for the lasso's legality), the exact reading of a decimal
    (app/core/numbers.py, which builds nothing) and the standard library."""
    import ast
    from pathlib import Path

    import app.core.tcn.check.latency_witness as checker

    tree = ast.parse(Path(checker.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m.startswith("app.")} == {"app.core.tcn.check.certify", "app.core.numbers"}


def test_the_verified_configuration_records_the_answers() -> None:
    from pathlib import Path

    from app.core.formats import load_topology
    from app.core.formats.verified import build_verified
    from app.core.results import VerifyResult

    models = Path(__file__).resolve().parents[2] / "models"
    topo = load_topology(models / "focused-crawler-reduced-cfg-6.storm.json")
    doc = build_verified(topo, [VerifyResult(property="growth", verdict="bounded")])
    answer = doc["latency"]["spouts"]["wpSpout"]
    assert answer["answer"] == "no-timeouts" and answer["bound_exact"] == "24983/2000"
    assert doc["latency"]["pending"] is None and answer["witness"] is None


def test_the_reason_names_the_same_bolt_in_every_run() -> None:
    """A spout's "not proven" reason names the first unbounded bolt after it by name, whatever the hash seed (it
    used to follow the graph's order of successors, or of ids, which a D-VerT file does not fix: they changed
    between runs of the same file)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    reasons = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run([sys.executable, "-m", "app", "check", "--json", "-q",
                               str(root / "tests" / "data" / "dvert" / "icfem-simple-DIA-cfg-1.json")],
                              capture_output=True, text=True, cwd=root,
                              env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)})
        reasons.add(tuple(s["reason"] for s in json.loads(done.stdout)["latency"]["spouts"].values()))
    assert reasons == {("B3 is not proven bounded, so no tuple's wait in its queue is",
                        "B2 is not proven bounded, so no tuple's wait in its queue is")}
