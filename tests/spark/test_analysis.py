"""The analysis on a small generated log with known answers, as Spark job and in plain Python."""

from __future__ import annotations

import pytest

from app.core.topology import Topology
from app.measure.analysis import analyze_local, fit_trend, t_quantile_975
from app.measure.eventlog import Event, EventLog, QueueSample
from app.measure.model_vs_measured import calibrate, compare
from app.spark.analysis_job import analyze
from app.spark.frames import log_to_frames


def known_log() -> EventLog:
    """Spout S: bursts of 2 every second (rate 2/s); bolt B: α = 0.5, σ = 0.5; B's queue = 3t + 1, C's = 2."""
    events: list[Event] = []
    n = 0
    for k in range(10):
        for j in range(2):
            n += 1
            tup = f"s{n}"
            t = k + 0.001 * j
            events.append(Event(t=t, ev="spout_emit", comp="S", task=1, tuple=tup, msg=tup))
            events.append(Event(t=t + 0.1, ev="take", comp="B", task=2, tuple=tup))
            if n % 2 == 0:
                events.append(Event(t=t + 0.6, ev="bolt_emit", comp="B", task=2, tuple=f"b{n}", anchors=[tup]))
            events.append(Event(t=t + 0.6, ev="bolt_ack", comp="B", task=2, tuple=tup))
    queues = [QueueSample(t=i / 2, comp="B", task=2, queue=int(3 * i / 2 + 1)) for i in range(0, 20, 2)]
    queues += [QueueSample(t=i / 2 + 0.5, comp="B", task=2, queue=int(3 * i / 2 + 1)) for i in range(0, 20, 2)]
    queues += [QueueSample(t=i / 2, comp="C", task=3, queue=2) for i in range(20)]
    return EventLog(events=events, queues=queues)


def _check_known(a) -> None:
    s, b, c = a.components["S"], a.components["B"], a.components["C"]
    assert s.kind == "spout" and s.emitted == 20 and s.rate_out == pytest.approx(2.0)
    assert (s.bursts, s.burst_mean, s.burst_max) == (10, 2.0, 2)
    assert b.kind == "bolt" and b.taken == 20 and b.sigma == pytest.approx(0.5)
    assert b.alpha_mean == pytest.approx(0.5) and b.alpha_std == pytest.approx(0.0, abs=1e-9)
    assert b.queue.slope == pytest.approx(3.0) and b.queue.verdict == "grows"
    assert b.queue.ci_low == pytest.approx(3.0) and b.queue.points == 10
    assert c.queue.slope == pytest.approx(0.0, abs=1e-12) and c.queue.verdict == "stable"
    assert a.events == 70 and a.queue_samples == 40


def test_known_answers_spark(spark) -> None:
    events, queues = log_to_frames(spark, known_log())
    spark_result = analyze(spark, events, queues)
    _check_known(spark_result)
    local = analyze_local(known_log().events, known_log().queues)
    _check_known(local)
    for name, comp in spark_result.components.items():
        other = local.components[name]
        assert comp.series == other.series and comp.taken == other.taken
        assert comp.rate_out == pytest.approx(other.rate_out)


def test_known_answers_compare_and_calibrate() -> None:
    topo = Topology.model_validate({
        "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
        "bolts": [{"name": "B", "alpha": 0.25, "sigma": 1.0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "B"}],
        "settings": {"tolerance": 0.0, "max_idle_time": 0.0}})
    measured = analyze_local(known_log().events, known_log().queues)
    fitted = calibrate(topo, measured)
    assert (fitted.spouts[0].rate, fitted.spouts[0].burst) == (2.0, 2)
    assert (fitted.bolts[0].alpha, fitted.bolts[0].sigma, fitted.bolts[0].parallelism) == (0.5, 0.5, 1)
    (row,) = compare(topo, measured).bolts
    assert row.model_status == "bounded" and row.predicted_growth == pytest.approx(0.0)  # 2/s in, 1/0.5 = 2/s out
    assert row.measured_verdict == "grows" and row.agrees is False
    params = {(p.component, p.parameter): p.measured for p in compare(topo, measured).parameters}
    assert params[("B", "alpha")] == pytest.approx(0.5) and params[("S", "rate")] == pytest.approx(2.0)


def test_trend_interval() -> None:
    assert t_quantile_975(10) == pytest.approx(2.228, abs=2e-3)
    assert t_quantile_975(30) == pytest.approx(2.042, abs=1e-3)
    noisy = [(x, 0.5 * x + (1 if x % 2 else -1)) for x in range(40)]
    trend = fit_trend(noisy, growth_floor=0.05)
    assert trend.ci_low < 0.5 < trend.ci_high and trend.verdict == "grows"
    assert fit_trend([(0, 1), (1, 2)], 0.05) is None
    flat = fit_trend([(x, 5 + (1 if x % 2 else -1)) for x in range(60)], 0.05)
    assert flat.verdict == "stable"
