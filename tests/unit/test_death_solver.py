"""Worker deaths in the z3 encoding (docs/model.md 9.5, app/core/tcn/encode_deaths.py): the solver alone finds a lasso
with deaths that the independent certifier accepts, finds none where the rule leaves a death nothing to replay, and
`verify --fail-on grows` exits 1 for a bolt with a certified lasso with deaths beside a `bounded` verdict.

`tests/data/workers/acker-death-short.storm.json`: S (1 tuple/s) feeds A (α 0.75 s, 75 % busy, 3 tuples queued at
time 0); worker 0 runs S and A, worker 1 only the acker, which may die 2 s after its restart, is back after 1 s, and
whose death breaks every tree in flight; the spouts replay them at the 2 s message timeout (paced). Without deaths
the rate check bounds A (A < 5); with a death every 3 s that replays 2 of A's tuples in flight, A takes 4 per pass
and receives 5."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import z3

from app.cli import main
from app.core.failures import failures_off
from app.core.tcn.check.certify import certify
from app.core.tcn.decode import decode
from app.core.tcn.encode import Encoding
from app.core.tcn.encode_deaths import death_rule
from app.core.tcn.network import build_network
from app.core.tcn.search_solver import SOLVER_OPTIONS
from app.core.topology import parse_topology
from app.core.workers import worker_model
from tests.unit.test_cli_schema import errors, schema

SHORT = Path(__file__).resolve().parents[1] / "data" / "workers" / "acker-death-short.storm.json"
K = 12  # the shortest bound with a growing lasso (k = 8 and 10: none)


def document() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SHORT.read_text())
    return data


def solve(doc: dict[str, Any], deaths: bool = True) -> tuple[z3.CheckSatResult, Encoding]:
    topo = parse_topology(doc)
    net = build_network(failures_off(topo), ["A"])
    model = worker_model(topo)
    assert model is not None
    rule = death_rule(net, model) if deaths else None
    assert rule is not None or not deaths
    enc = Encoding(net, K, z3.Context(), solver_options=dict(SOLVER_OPTIONS), deaths=rule)
    return enc.solver.check(), enc


@pytest.fixture(scope="module")
def solver_trace() -> dict[str, Any]:
    """The solver's lasso at k = 12 (not yet certified, so that a broken certifier fails a test, not this fixture)."""
    answer, enc = solve(document())
    assert answer == z3.sat
    data: dict[str, Any] = decode(enc, enc.solver.model()).model_dump(mode="json")
    return data


def test_the_solver_finds_a_lasso_with_deaths_that_the_certifier_accepts(solver_trace: dict[str, Any]) -> None:
    cert = certify(solver_trace, ["A"])
    assert cert.ok, cert.problems
    assert cert.growth_per_loop["A"] > 0
    loop = solver_trace["positions"][solver_trace["loop_start"]:]
    records = [p["workers"]["w1"] for p in loop if p.get("workers")]
    assert any(r.get("death") for r in records) and any(r.get("released") for r in records)
    assert any(r.get("restart") for r in records)


@pytest.mark.parametrize("mutation", ["more replays than in flight", "release early", "no failure needed"])
def test_the_certifier_rejects_a_mutated_solver_lasso(solver_trace: dict[str, Any], mutation: str) -> None:
    trace = copy.deepcopy(solver_trace)
    positions = trace["positions"]
    death = next(i for i, p in enumerate(positions) if (p.get("workers") or {}).get("w1", {}).get("death"))
    rec = positions[death]["workers"]["w1"]
    if mutation == "more replays than in flight":
        rec["replays"] = {"S": 1000}
    elif mutation == "release early":
        release = next(i for i, p in enumerate(positions)
                       if i > death and (p.get("workers") or {}).get("w1", {}).get("released"))
        moved = positions[release]["workers"].pop("w1")
        positions[release - 1].setdefault("workers", {})["w1"] = moved
    else:  # a death at a position too early after the restart: moved to the position before the first death
        positions[death]["workers"].pop("w1")
        positions[1]["workers"] = {"w1": rec}
    assert not certify(trace, ["A"]).ok


def test_the_solver_finds_none_where_no_death_is_replayed_or_none_may_die() -> None:
    unacked = document()
    unacked["settings"]["replay"] = "none"  # a death breaks trees but nothing replays them (section 9.5)
    assert solve(unacked)[0] == z3.unsat
    assert solve(document(), deaths=False)[0] == z3.unsat  # no death: A is bounded
    on_spout_worker = document()
    on_spout_worker["storm"]["assignment"]["__acker"] = [1, 0]  # the acker's worker runs S: it never dies in a trace
    topo = parse_topology(on_spout_worker)
    model = worker_model(topo)
    assert model is not None
    assert death_rule(build_network(failures_off(topo), ["A"]), model) is None


def test_verify_without_the_simulation_reports_the_solver_lasso_and_fail_on_grows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, lasso = tmp_path / "short.storm.json", tmp_path / "lasso.json"
    path.write_text(json.dumps(document()))
    argv = ["verify", str(path), "--no-simulation", "--fail-on", "grows", "--json", "-q", "--trace-out", str(lasso)]
    assert main(argv) == 1  # bounded without deaths (exit 0 alone), a certified lasso with them
    out = json.loads(capsys.readouterr().out)
    assert out["bolts"]["A"]["verdict"] == "bounded"
    assert out["fail_on"] == {"status": "grows", "bolts": ["A"]}
    assert "A" in out["worker_death_lassos"]
    assert any("a certified lasso the solver found at k = 12" in n for n in out["notes"])
    assert certify(json.loads(lasso.read_text()), ["A"]).ok
    result_schema = schema(capsys, "result")
    assert errors(out, result_schema, result_schema) == []
    assert errors({**out, "fail_on": {"status": "grows"}}, result_schema, result_schema)


def test_a_bound_too_short_for_any_death_has_no_death_and_no_lasso() -> None:
    from tests.unit.test_death_lassos import x_dies  # worker 1 runs X (whole) and the acker; a death 10 s on at least

    topo = parse_topology(x_dies())
    net = build_network(failures_off(topo), ["A"])
    model = worker_model(topo)
    assert model is not None
    rule = death_rule(net, model)
    assert rule is not None and rule.workers == (("w1", ("X",), True),)
    enc = Encoding(net, 4, z3.Context(), deaths=rule)  # 6 positions, at most 1 s apart: X cannot fail by the last
    assert enc.failures is not None and not enc.failures.bolts
    assert enc.solver.check() == z3.unsat
