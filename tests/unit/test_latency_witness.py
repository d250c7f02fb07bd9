"""Timeout witnesses attributed to a spout's tree, and `check-witness` against the file's own figures
(docs/latency.md, "Against the timeout"). The checker (app/core/tcn/check/latency_witness.py) recomputes the chain of
emits and every stated figure; each mutation below must be refused."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.latency.report import latency_report
from app.core.tcn.check.latency_witness import check_witness
from app.core.topology import parse_topology

MODELS = Path(__file__).resolve().parents[2] / "models"
TWO_SPOUTS = MODELS / "simple-DIA-cfg-1.storm.json"  # S1 and S2 both reach B2, which grows


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("w") / "w.json"
    assert main(["check", str(TWO_SPOUTS), "--fail-on", "timeout", "--witness-out", str(path)]) == 1
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_a_bolt_two_spouts_reach_gets_a_witness_per_spout() -> None:
    """Each spout's answer is "tuples time out", its witness's tuple recomputed to be in that spout's tree."""
    topo = parse_topology(json.loads(TWO_SPOUTS.read_text()))
    report = latency_report(topo, pending=False)
    trace = report.witness_traces["B2"]
    for name in ("S1", "S2"):
        answer = report.spouts[name]
        assert answer.answer == "times-out" and "tuples time out" in answer.sentence
        w = answer.witness
        assert w is not None and w["root"] == name and w["chain"][0][0] == name
        result = check_witness(trace, w["bolt"], w["loop_pass"], w["position"], Fraction(30), chain=w["chain"])
        assert result.ok and result.root == name


def test_a_chain_that_does_not_hold_is_refused(written: dict[str, Any]) -> None:
    w = written["witnesses"][0]
    trace, args = w["trace"], (w["bolt"], w["loop_pass"], w["position"], Fraction(30))
    assert check_witness(trace, *args, chain=w["chain"]).root == w["root"]
    mutations = {
        "a spout the topology lacks": [["S9", w["chain"][0][1]], *w["chain"][1:]],
        "a bolt as the root": [["B2", w["chain"][0][1]], *w["chain"][1:]],
        "an emit one position earlier": [[w["chain"][0][0], w["chain"][0][1] - 1], *w["chain"][1:]],
        "not ending at the arrival": [[w["chain"][0][0], w["chain"][0][1] + 7]],
        "empty": [],
        "not pairs": [["S1"]],
        "not a list": 7,
        "a component the lasso lacks": [w["chain"][0], ["nope", w["chain"][-1][1]]],
        "a spout in the middle": [w["chain"][0], [w["chain"][0][0], w["chain"][0][1]]],
        "a position far beyond": [[w["chain"][0][0], 10**15], ["B1", 10**15 + 3]],
    }
    for what, chain in mutations.items():
        result = check_witness(trace, *args, chain=chain)
        assert not result.ok and result.root is None, what


def test_check_witness_accepts_the_written_file(written: dict[str, Any], tmp_path: Path, capsys) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(written))
    assert main(["check-witness", str(path)]) == 0
    out = capsys.readouterr().out
    assert "S1 at B2: accepted: a tuple of a tree of S1 waits" in out and "S2 at B2: accepted" in out


@pytest.mark.parametrize(("key", "value", "says"), [
    ("wait", "100", "the stated wait 100"),
    ("wait_s", 100.0, "the stated wait_s 100.0"),
    ("arrived", "0", "the stated arrived 0"),
    ("taken", "1/3", "the stated taken 1/3"),
    ("tuple", 1, "the stated tuple 1"),
    ("taken_position", -1, "the stated taken_position -1"),
    ("root", "S9", "the stated root S9"),
    ("spout", "S2", "listed for S2"),
])
def test_check_witness_refuses_a_file_whose_figures_disagree(written: dict[str, Any], tmp_path: Path, capsys,
                                                             key: str, value: Any, says: str) -> None:
    data = copy.deepcopy(written)
    first = next(w for w in data["witnesses"] if w["spout"] == "S1")
    first[key] = value
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    assert main(["check-witness", str(path)]) == 1
    out = capsys.readouterr().out
    assert "rejected" in out and says in out, out


def test_check_witness_refuses_a_timeout_other_than_the_topologys(written: dict[str, Any], tmp_path: Path,
                                                                  capsys) -> None:
    """A smaller stated timeout would make any long wait a "timeout": it must be the topology's own."""
    data = copy.deepcopy(written)
    data["timeout"] = 1
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    assert main(["check-witness", str(path)]) == 1
    assert "the stated timeout 1 s is not the topology's message timeout 30 s" in capsys.readouterr().out
