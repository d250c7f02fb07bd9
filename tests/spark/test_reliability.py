"""Every case of storm-reliability-vectors.json (shared test data folder), as a Spark job and in plain Python."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.measure.eventlog import Event, EventLog, record_from_dict
from app.measure.reliability import (
    PROPERTIES,
    ReliabilityConfig,
    check_reliability_local,
    load_vectors,
)
from app.spark.frames import log_to_frames
from app.spark.reliability_job import check_reliability
from tests.conftest import VECTORS as VECTORS_DIR

VECTORS_FILE = VECTORS_DIR / "storm-reliability-vectors.json"
VECTORS = load_vectors(VECTORS_FILE)


def _case(vector) -> tuple[list[Event], ReliabilityConfig]:
    # the vectors' times are milliseconds: the timeout fail at 45000 is "45 s after emit"
    events = [record_from_dict(r, f"{vector['name']}[{i}]", "ms") for i, r in enumerate(vector["trace"])]
    return events, ReliabilityConfig.from_storm(vector["topology"], vector["topology"]["config"])


def _prefixed(vector, offset: float) -> list[Event]:
    """A vector's events with case-prefixed components, tuples and messages, shifted in time."""
    name = vector["name"]
    events, _ = _case(vector)
    return [e.model_copy(update={
        "t": e.t + offset, "comp": f"{name}/{e.comp}",
        "tuple": f"{name}/{e.tuple}" if e.tuple else None, "msg": f"{name}/{e.msg}" if e.msg else None,
        "anchors": [f"{name}/{a}" for a in e.anchors] if e.anchors is not None else None}) for e in events]


def test_every_vector_in_one_spark_job(spark) -> None:
    """Spark startup dominates: the vectors sharing a config run as one log, one job per config."""
    groups: dict[str, list] = {}
    for v in VECTORS:
        groups.setdefault(json.dumps(v["topology"]["config"], sort_keys=True), []).append(v)
    assert len(VECTORS) == 9 and len(groups) == 2
    for cases in groups.values():
        events: list[Event] = []
        subscribers: dict[str, list[str]] = {}
        for i, v in enumerate(cases):
            events += _prefixed(v, 1000.0 * i)
            for s in v["topology"]["subscriptions"]:
                subscribers.setdefault(f"{v['name']}/{s['from']}", []).append(f"{v['name']}/{s['to']}")
        config = ReliabilityConfig.from_storm(None, cases[0]["topology"]["config"]).model_copy(
            update={"subscribers": subscribers})
        frame, _ = log_to_frames(spark, EventLog(events=events))
        report = check_reliability(spark, frame, config, limit=1000)
        assert sum(report.counts.values()) == len(report.violations)
        for v in cases:
            broken = {x.prop for x in report.violations if x.comp.startswith(v["name"] + "/")}
            assert {p: p not in broken for p in PROPERTIES} == v["expected"], v["name"]
            if v["name"] == "spout_ack_before_bolt_ack":  # a violation names tuple, components and time
                (x,) = [x for x in report.violations if x.comp.startswith(v["name"] + "/")]
                assert (x.prop, x.comp, x.task, x.tuple, x.msg) == (
                    "P4_root_ack_is_last_event_of_tree", f"{v['name']}/count", 6, f"{v['name']}/t3", f"{v['name']}/m1")
                assert x.t == pytest.approx(1000.0 * cases.index(v) + 0.009)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_local(vector) -> None:
    events, config = _case(vector)
    assert check_reliability_local(events, config).properties == vector["expected"]


def _random_log(seed: int) -> list[Event]:
    """A messy random log: drops, late acks, replays, orphan closes."""
    rng = random.Random(seed)
    events: list[Event] = []
    t = 0.0
    for m in range(30):
        t += rng.random()
        root = f"r{m}"
        events.append(Event(t=t, ev="spout_emit", comp="S", task=rng.choice([1, 2]), tuple=root, msg=f"m{m % 20}"))
        frontier = [root]
        for comp in ("A", "B"):
            nxt = []
            for tup in frontier:
                if rng.random() < 0.1:
                    continue
                t2 = t + rng.random() * 5
                events.append(Event(t=t2, ev="take", comp=comp, task=3, tuple=tup))
                for j in range(rng.choice([0, 1, 2])):
                    child = f"{tup}.{comp}{j}"
                    events.append(Event(t=t2 + 0.1, ev="bolt_emit", comp=comp, task=3, tuple=child,
                                        anchors=[tup] if rng.random() < 0.9 else []))
                    nxt.append(child)
                if rng.random() < 0.9:
                    events.append(Event(t=t2 + 0.2, ev=rng.choice(["bolt_ack", "bolt_ack", "bolt_fail"]),
                                        comp=comp, task=3, tuple=tup))
            frontier = nxt
        src = events[-1] if events else None
        if rng.random() < 0.85:
            events.append(Event(t=t + rng.random() * 90, ev=rng.choice(["spout_ack", "spout_fail"]),
                                comp="S", task=src.task if src and src.comp == "S" else 1, msg=f"m{m % 20}"))
    return events


@pytest.mark.parametrize("seed", [1])
def test_spark_and_python_agree_on_messy_logs(spark, seed: int) -> None:
    events = _random_log(seed)
    config = ReliabilityConfig(message_timeout_s=20, max_spout_pending=3,
                               subscribers={"S": ["A"], "A": ["B"]})
    frame, _ = log_to_frames(spark, EventLog(events=events))
    fast = check_reliability(spark, frame, config, limit=10_000)
    slow = check_reliability_local(EventLog(events=events).events, config, limit=10_000)
    assert fast.counts == slow.counts
    assert fast.undecided == slow.undecided
    assert sum(fast.counts.values()) > 0  # the random log does break something

    def key(v: Any) -> tuple[Any, ...]:
        return v.prop, v.tuple or "", v.comp or "", v.other or "", round(v.t or 0, 9)

    assert sorted(map(key, fast.violations)) == sorted(map(key, slow.violations))
