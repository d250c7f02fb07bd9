"""A target's schedules are generated once per verification and replayed to each of its simulations
(app/core/tcn/schedule_order.py): the same schedules in the same order as `schedules` gives, a cancelled generation
never replayed, and a verification whose trace passes simulate a target twice gives the same verdicts and traces
with one generation as with one per simulation (tests/data/schedule-order/README.md). Also: a lasso the quick trace
pass found but could not certify in time is certified by the last pass, not simulated again
(app/core/tcn/search_lassos.py, `trace_phase`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import app.core.tcn.schedule_order as schedule_order
from app.cli.inputs import read_topology
from app.core.results import VerifyResult
from app.core.tcn import search, search_lassos
from app.core.tcn.network import build_network
from app.core.tcn.schedule import Schedule, schedules
from app.core.tcn.schedule_haste import haste_schedules
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.search_run import Run

DATA = Path(__file__).resolve().parents[1] / "data" / "schedule-order"


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each target's schedules are generated."""
    count: Counter[str] = Counter()

    def counted(net: Any, target: str, *args: Any, **kwargs: Any) -> Iterator[Schedule]:
        count[target] += 1
        return schedules(net, target, *args, **kwargs)

    monkeypatch.setattr(schedule_order, "schedules", counted)
    return count


@pytest.mark.parametrize("name", ["sweep-2", "sweep-10"])
def test_replayed_in_the_order_generated(name: str, generated: Counter[str]) -> None:
    topo = read_topology(str(DATA / f"{name}.storm.json"))
    for bolt in (b.name for b in topo.bolts):
        net = build_network(topo, [bolt])
        fresh = list(schedules(net, bolt, haste=haste_schedules(net, bolt)))  # (as the search asks for them)
        order = schedule_order.ScheduleOrder(net, bolt)
        first = order.played()
        head = [next(first) for _ in range(min(3, len(fresh)))]  # a simulation that stops early (a lasso found)
        assert head == fresh[:len(head)]
        assert list(order.played()) == fresh  # the next one pulls the rest from the same generation
        assert list(order.played()) == fresh
        assert generated[bolt] == 1
    if name == "sweep-10":
        assert len(fresh) > 50  # several failure plans


def test_a_cancelled_generation_is_not_replayed(generated: Counter[str]) -> None:
    topo = read_topology(str(DATA / "sweep-10.storm.json"))
    net = build_network(topo, ["B1"])
    fresh = list(schedules(net, "B1"))
    order = schedule_order.ScheduleOrder(net, "B1")
    cut = list(order.played(lambda: True))
    assert cut != fresh  # cancelled at its first poll: the ranking cut short
    assert list(order.played()) == fresh
    assert list(order.played()) == fresh
    assert generated["B1"] == 2


def _answers(result: VerifyResult) -> tuple[Any, ...]:
    return (tuple((n, v.verdict, v.method, v.k, v.loop_start, v.growth_per_loop, v.trace_index)
                  for n, v in result.bolts.items()),
            tuple(t.model_dump_json() for t in result.traces))


def test_both_trace_passes_play_one_generation(monkeypatch: pytest.MonkeyPatch, generated: Counter[str]) -> None:
    """B1 grows, proven by rates; with no time for the quick trace pass its lasso comes from the last one, so B1 is
    simulated twice: its schedules are generated once, and the answers are those of a generation per simulation."""
    topo = read_topology(str(DATA / "sweep-2.storm.json"))
    monkeypatch.setattr(search, "QUICK_TRACE_S", 0.0)
    once = verify(topo, SearchOptions(timeout_s=60))
    assert generated == {"B1": 1}
    assert once.bolts["B1"].verdict == "counterexample" and once.bolts["B1"].method == "simulation"
    generated.clear()
    monkeypatch.setattr(Run, "schedule_order", lambda run, t: schedule_order.ScheduleOrder(run.nets[t], t))
    each = verify(topo, SearchOptions(timeout_s=60))
    assert generated == {"B1": 2}  # as before: generated again by the last pass
    assert _answers(once) == _answers(each)


def test_a_lasso_the_quick_pass_could_not_certify_is_not_simulated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick trace pass finds B1's lasso but its budget ends during the certification (a loaded machine; here its
    first certification reports itself stopped): the last pass certifies that lasso, first, instead of simulating B1
    again, and the answers are those of a quick pass that certified in time."""
    topo = read_topology(str(DATA / "sweep-2.storm.json"))
    in_time = verify(topo, SearchOptions(timeout_s=60))
    built: list[str] = []
    real_built, real_kept = search_lassos._built, search_lassos._kept

    def counted(search: Any, run: Any, target: str, *args: Any, **kwargs: Any) -> Any:
        built.append(target)
        return real_built(search, run, target, *args, **kwargs)

    def late_once(*args: Any, **kwargs: Any) -> bool | None:
        if not hasattr(late_once, "stopped"):
            late_once.stopped = True  # type: ignore[attr-defined]
            return None  # stopped by the quick pass's budget
        return real_kept(*args, **kwargs)

    monkeypatch.setattr(search_lassos, "_built", counted)
    monkeypatch.setattr(search_lassos, "_kept", late_once)
    late = verify(topo, SearchOptions(timeout_s=60))
    assert built == ["B1"] and getattr(late_once, "stopped", False)
    assert late.bolts["B1"].method == "simulation"
    assert _answers(late) == _answers(in_time)
