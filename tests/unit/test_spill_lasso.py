"""Threshold runs out of a lasso (docs/boundedness.md, "The threshold run"; docs/verifier.md, step 2f): random #157
(tests/data/spill/README.md), B1 grows in a lasso built by simulation under B0's failures every 5 s, a schedule
none of the first generic phase-1 schedules plays; with the lasso's own schedule first, B3 (flooded by B1) and B0
(B3's backlog replayed at once into it) each get a certified run past N, accepted with its certificate."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.core.formats.trace import AnyTrace
from app.core.results import BoltVerdict, FloodRun, StormRun
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.check.spill import check_spill_certificate
from app.core.tcn.flood import prove_flood
from app.core.tcn.flood_run import build_threshold_run
from app.core.tcn.network import build_network
from app.core.tcn.schedule import Schedule
from app.core.tcn.simulate import build_lasso
from app.core.tcn.spill import prove_spill
from app.core.tcn.spill_run import build_spill_run
from app.core.topology import Topology, parse_topology

R157 = parse_topology(json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "spill" / "random-157.storm.json").read_text()))
N = 30
Proofs = tuple[Schedule, dict[str, BoltVerdict], list[AnyTrace]]


def _cone(name: str) -> Topology:
    return build_network(R157, [name]).topology


@pytest.fixture(scope="module")
def proofs() -> Proofs:
    lasso = build_lasso(build_network(R157, ["B1"]), "B1", deadline=time.monotonic() + 120)
    assert lasso.trace is not None and lasso.schedule is not None, lasso.message
    traces: list[AnyTrace] = [lasso.trace]
    verdicts = {"B1": BoltVerdict(verdict="counterexample", certified=True, trace_index=0, method="simulation")}
    flood = prove_flood(_cone("B3"), "B3", verdicts, traces, _cone, _cone)
    assert flood is not None and flood.source == "B1"
    verdicts["B3"] = BoltVerdict(verdict="unbounded", certified=True, method="flood proof", flood_certificate=flood)
    return lasso.schedule, verdicts, traces


def test_b3s_flood_run_starts_from_the_lasso_s_schedule(proofs: Proofs) -> None:
    schedule, verdicts, traces = proofs
    flood = verdicts["B3"].flood_certificate
    assert flood is not None
    found = build_threshold_run(_cone("B3"), ["B1"], "B3", N, lead=schedule)
    assert not isinstance(found, str), found
    trace, slow, reached = found
    run = FloodRun(threshold=N, slow_s=f"{slow.numerator}/{slow.denominator}", reached=reached, trace_index=1)
    assert reached >= N
    assert check_flood_certificate(_cone("B3"), flood.model_copy(update={"run": run}), traces[0],
                                   trace) == []


def test_b0s_spill_has_a_certified_run_past_n(proofs: Proofs) -> None:
    schedule, verdicts, traces = proofs
    spill = prove_spill(_cone("B0"), "B0", verdicts, traces, _cone, _cone)
    assert spill is not None and spill.failing == "B3" and spill.evidence.flood_certificate is not None
    found = build_spill_run(_cone("B0"), spill, N, played={"B1": schedule},
                            deadline=time.monotonic() + 120)
    assert not isinstance(found, str), found
    trace, reached = found
    assert reached >= N
    with_run = spill.model_copy(update={"run": StormRun(threshold=N, reached=reached, trace_index=1)})
    assert check_spill_certificate(_cone("B0"), with_run, None, trace) == []
