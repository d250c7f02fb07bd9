"""Worker deaths in lassos (docs/model.md 9.5): the simulation lets a worker die, the certifier checks every death on
its own copy of the rule and rejects traces that break it, and `verify` reports a topology that survives a single
bolt's failure but not a worker's death with a certified lasso.

Two topologies. `tests/data/workers/acker-death.storm.json`: S (1 tuple/s) feeds A (90 % busy) and C (which fails
alone, section 7), A feeds D; worker 0 runs S, A, C and D, worker 1 only the acker, and a worker may die every 10 s
with a 10 s message timeout. `x_dies`: S feeds X (fast) feeds A (90 % busy); worker 1 runs X and the acker. The
independent check is test_worker_check.py's tree-by-tree simulation (`Sim`), with the assignment written in."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.failures import failures_off
from app.core.formats.trace import Trace
from app.core.long_trace import read_long_trace
from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.search_deaths import REPLAYS_PER_BATCH
from app.core.tcn.simulate import build_lasso
from app.core.tcn.simulate_deaths import death_plan
from app.core.topology import parse_topology
from app.core.trace_series import trace_series
from app.core.workers import worker_model
from tests.unit.test_worker_check import Sim

ACKER_DEATH = Path(__file__).resolve().parents[1] / "data" / "workers" / "acker-death.storm.json"


def x_dies() -> dict[str, Any]:
    return {
        "name": "x dies", "schema_version": 4,
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "X", "alpha": 0.1, "sigma": 1, "parallelism": 1},
                  {"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "X"}, {"source": "X", "target": "A"}],
        "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                     "replay": "paced"},
        "storm": {"workers": 2, "message_timeout_secs": 10, "worker_min_ttf": 10, "acker_executors": 1,
                  "assignment": {"S": [1, 0], "A": [1, 0], "X": [0, 1], "__acker": [0, 1]}},
    }


@pytest.fixture(scope="module")
def x_trace() -> dict[str, Any]:
    """The simulation's lasso, not yet certified (so that a mutated certifier fails a test, not this fixture)."""
    topo = parse_topology(x_dies())
    net = build_network(failures_off(topo), ["A"])
    model = worker_model(topo)
    assert model is not None
    plan = death_plan(net, model, REPLAYS_PER_BATCH)
    assert plan is not None
    trace = build_lasso(net, "A", deaths=plan).trace
    assert isinstance(trace, Trace)  # short: not compressed
    return trace.model_dump(mode="json")


def deaths_of(trace: dict[str, Any]) -> list[int]:
    return [i for i, p in enumerate(trace["positions"]) if p.get("workers", {}).get("w1", {}).get("death")]


def test_a_death_loses_its_workers_tuples_and_its_trees_come_back_at_the_timeout(x_trace: dict[str, Any]) -> None:
    assert certify(x_trace, ["A"]).ok
    positions = x_trace["positions"]
    deaths = deaths_of(x_trace)
    assert len(deaths) >= 3 and deaths[-1] >= x_trace["loop_start"]  # deaths repeat inside the loop
    restart = Fraction(0)
    for d in deaths:
        p = positions[d]
        t = Fraction(p["time"])
        assert t - restart >= 10  # storm.worker_min_ttf after the last restart (time 0 at first)
        x, a = p["bolts"]["X"], p["bolts"]["A"]
        before = positions[d - 1]["bolts"]
        in_process = {n: before[n]["batch"] for n in ("X", "A")}  # the batch in progress before the death
        assert x["fail"] and x["lost"] == x["queue"] + x["arrivals"] + in_process["X"]  # X's executor stops
        replays = p["workers"]["w1"]["replays"]["S"]
        # the acker's death breaks every tree in flight: X's lost tuples and those in A's queue and batch
        assert 0 < replays <= x["lost"] + a["queue"] + a["arrivals"] + in_process["A"]
        back = next(i for i in range(d + 1, len(positions)) if positions[i].get("workers", {}).get("w1", {}).get(
            "restart"))
        restart = Fraction(positions[back]["time"])
        assert 1 <= restart - t <= 2 and positions[back]["bolts"]["X"]["recover"]
        out = next((i for i in range(d + 1, len(positions)) if Fraction(positions[i]["time"]) >= t + 10),
                   len(positions))
        if out < len(positions):
            assert positions[out]["workers"]["w1"]["released"] == {"S": replays}  # at the message timeout
            after, now = positions[out + 1]["spouts"]["S"], positions[out]["spouts"]["S"]  # (0 left out)
            assert after.get("backlog", 0) == now.get("backlog", 0) - now.get("replayed", 0) + replays
    series = trace_series(Trace.model_validate(x_trace))
    assert series.deaths[0][2] == "w1"  # the plots mark them, and `plot`'s reader of long traces alike
    assert read_long_trace(x_trace).series.deaths == series.deaths


def mutated(trace: dict[str, Any], **storm: Any) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    out["topology"]["storm"].update(storm)
    return out


@pytest.mark.parametrize(("name", "storm", "words"), [
    # the deaths at 10 s, 21 s, ... come before a worker_min_ttf of 15 s
    ("a death too early", {"worker_min_ttf": 15}, "before storm.worker_min_ttf 15"),
    # without the acker, w1's death breaks only X's trees: fewer than the replays recorded
    ("replays beyond the tuples in flight", {"assignment": {"S": [1, 0], "A": [1, 0], "X": [0, 1],
                                                            "__acker": [1, 0]}}, "tuples in flight"),
    # two ackers, one per worker: w1's death breaks only the trees hashed to its acker, so only X's are counted
    ("an acker among two", {"acker_executors": 2, "assignment": {"S": [1, 0], "A": [1, 0], "X": [0, 1],
                                                                "__acker": [1, 1]}}, "tuples in flight"),
    # A on worker 1 too: it would have to fail at every death of w1
    ("a bolt of the dead worker still up", {"assignment": {"S": [1, 0], "A": [0, 1], "X": [0, 1],
                                                           "__acker": [0, 1]}}, "does not fail at its worker w1"),
    # a 12 s timeout: the replays come out 2 s too early
    ("replays before the timeout", {"message_timeout_secs": 12}, "no death's replays are due here"),
])
def test_the_certifier_rejects_a_trace_that_breaks_the_death_rule(x_trace: dict[str, Any], name: str,
                                                                   storm: dict[str, Any], words: str) -> None:
    cert = certify(mutated(x_trace, **storm), ["A"])
    assert not cert.ok and any(words in p for p in cert.problems), (name, cert.problems[:3])


def test_the_certifier_rejects_deaths_it_has_no_rule_for(x_trace: dict[str, Any]) -> None:
    forged = copy.deepcopy(x_trace)
    forged["positions"][deaths_of(x_trace)[0]]["bolts"]["X"]["lost"] += 1  # more than was in flight there
    assert any("lost" in p for p in certify(forged, ["A"]).problems)
    unrelated = mutated(x_trace, assignment={})  # no explicit assignment: no worker may die in a trace
    assert any("no worker may die in a trace" in p for p in certify(unrelated, ["A"]).problems)


def test_verify_says_it_survives_a_bolts_failure_but_not_a_workers_death() -> None:
    data = json.loads(ACKER_DEATH.read_text())
    topo = parse_topology(data)
    assert rate_check(topo).bolts["A"].status == "bounded"  # with C failing alone (section 7)
    result = verify(topo, SearchOptions(timeout_s=60))
    assert result.bolts["A"].verdict == "bounded" and set(result.worker_death_lassos) == {"A"}
    trace = result.worker_death_traces[result.worker_death_lassos["A"]]
    assert certify(trace, ["A"]).ok
    note = next(n for n in result.notes if n.startswith("worker deaths (docs/model.md 9.5)"))
    assert "A grows by" in note and "worker w1 dies every 11 s" in note
    assert "A survives a single bolt's failure" in note and "but not its workers' deaths" in note
    assert "worker_death_lassos" in result.to_public_json() and "worker_death_traces" not in result.to_public_json()


class AckerWorkerDies(Sim):
    """The tree-by-tree simulation with the document's assignment: worker 0 runs S, A, C, D; worker 1 the acker,
    and only worker 1 dies (when `deaths`)."""

    def __init__(self, data: dict[str, Any], seed: int, horizon: int, deaths: bool) -> None:
        super().__init__(data, Fraction(data["storm"]["worker_min_ttf"]), seed, Fraction(horizon))
        self.where = dict.fromkeys([*self.spouts, *self.bolts], 0)
        self.acker_workers = [1]
        self.deaths = deaths

    def die(self, t: Fraction, x: int) -> None:
        if x == 1 and self.deaths:
            super().die(t, x)

    def later(self) -> Fraction:
        return Fraction(0)  # as often as worker_min_ttf allows


def test_the_independent_simulation_grows_with_the_acker_workers_deaths_and_not_without() -> None:
    data = json.loads(ACKER_DEATH.read_text())
    for seed in range(2):
        early = AckerWorkerDies(data, seed, 200, True).run().queues["A"]
        late = AckerWorkerDies(data, seed, 600, True).run().queues["A"]
        assert late >= early + 10, (seed, early, late)  # every death breaks the trees in A's queue
        assert AckerWorkerDies(data, seed, 600, False).run().queues["A"] <= 3


def test_a_lasso_without_deaths_needs_no_worker_clock_to_repeat() -> None:
    # A above its capacity grows with no death at all; its loop starts long before worker_min_ttf (100 s), so a
    # worker's time since time 0 differs at the loop's ends: a worker that never dies in the loop need not repeat
    # it (a death is never forced, docs/model.md 9.5), and the lasso is certified
    data = x_dies()
    data["bolts"][1]["alpha"] = 1.1
    data["storm"]["worker_min_ttf"] = 100
    result = verify(parse_topology(data), SearchOptions(timeout_s=60))
    assert result.bolts["A"].verdict == "counterexample" and not result.worker_death_lassos
    trace = result.traces[0]
    assert Fraction(trace.positions[trace.k + 1].time) < 100 and certify(trace, ["A"]).ok
