"""With failures, a cycle elsewhere takes no bound away: each checked bolt is decided on its own cone of
influence (app/core/tcn/cones.py, docs/verifier.md "Failures")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cone_documents import beside_a_loop as _doc

from app.cli import main
from app.core.rates import rate_check
from app.core.tcn.cones import on_or_below_cycles
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import parse_topology


def test_a_cycle_beside_a_failing_bolt_takes_no_bound_away() -> None:
    # fed by S directly, C is bounded by its sender's fastest pace, cycle or not (docs/boundedness.md, "Failures")
    assert "fastest pace" in rate_check(parse_topology(_doc(True))).bolts["C"].failures_note
    # through the fast relay P only the fixpoint bounds it: on its cone, which holds no cycle
    plain, looped = parse_topology(_doc(False, relay=True)), parse_topology(_doc(True, relay=True))
    assert rate_check(plain).bolts["C"].status == "bounded"
    assert rate_check(looped).bolts["C"].status != "bounded"  # the whole topology's check: a cycle, failures on
    without, beside = verify(plain, SearchOptions(timeout_s=30)), verify(looped, SearchOptions(timeout_s=30))
    assert without.bolts["C"].verdict == "bounded"
    c = beside.bolts["C"]
    assert c.verdict == "bounded" and c.queue_bound == without.bolts["C"].queue_bound
    assert beside.rate_check["bolts"]["C"]["status"] == "bounded"
    assert "on its cone of influence" in beside.rate_check["bolts"]["C"]["explanation"]


def test_check_decides_per_cone_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`stormbound check` gives C the bound verify gives it, not `may-grow`, beside A's loop;
    A keeps the whole topology's status; and a bolt below a cycle gets no cone built (its cone holds the cycle)."""
    path = tmp_path / "cones.storm.json"
    path.write_text(json.dumps(_doc(True, relay=True)))
    assert main(["check", str(path), "--json"]) == 0
    bolts = json.loads(capsys.readouterr().out)["bolts"]
    plain = rate_check(parse_topology(_doc(False, relay=True))).bolts["C"]
    assert bolts["C"]["status"] == "bounded" and bolts["C"]["queue_bound"] == plain.queue_bound
    assert bolts["A"]["status"] == rate_check(parse_topology(_doc(True, relay=True))).bolts["A"].status  # as before
    assert on_or_below_cycles(parse_topology(_doc(True))) == {"A"}
    assert on_or_below_cycles(parse_topology(_doc(True)), larger_than=1) == set()
