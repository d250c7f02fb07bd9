"""Event-log readers and writers (no Spark): JSON Lines, JSON, CSV, Storm metrics lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.measure.eventlog import (
    Event,
    EventLog,
    EventLogError,
    QueueSample,
    parse_metrics_line,
    read_log,
    write_log,
    write_records,
)

EVENTS = [
    Event(t=0.0, ev="spout_emit", comp="S", task=1, tuple="t1", msg="m1"),
    Event(t=0.5, ev="take", comp="B", task=2, tuple="t1"),
    Event(t=1.0, ev="bolt_emit", comp="B", task=2, tuple="t2", anchors=["t1"]),
    Event(t=1.0, ev="bolt_emit", comp="B", task=2, tuple="t3", anchors=[]),
    Event(t=1.1, ev="bolt_ack", comp="B", task=2, tuple="t1"),
    Event(t=1.2, ev="spout_fail", comp="S", task=1, msg="m1", reason="TIMEOUT"),
]
QUEUES = [QueueSample(t=0.0, comp="B", task=2, queue=0), QueueSample(t=0.5, comp="B", task=2, queue=3)]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_round_trip(tmp_path: Path, fmt: str) -> None:
    log = EventLog(events=EVENTS, queues=QUEUES)
    write_log(tmp_path, log, fmt)
    back = read_log(tmp_path)
    assert back.events == EVENTS
    assert back.queues == QUEUES
    assert back.components() == ["S", "B"]


def test_mixed_jsonl_and_ms(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"t": 1500, "ev": "take", "comp": "B", "tuple": 7}\n\n{"t": 2000, "comp": "B", "queue": 4}\n')
    log = read_log(path, time_unit="ms")
    assert log.events[0].t == pytest.approx(1.5) and log.events[0].tuple == "7"
    assert log.queues == [QueueSample(t=2.0, comp="B", queue=4)]


def test_json_array_like_vectors(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"trace": [e.model_dump(exclude_none=True) for e in EVENTS]}))
    assert read_log(path).events == EVENTS


@pytest.mark.parametrize(
    ("line", "where", "words"),
    [
        ('{"t": 1, "ev": "explode", "comp": "B", "tuple": "x"}', "log.jsonl line 1.ev", "unknown event 'explode'"),
        ('{"t": 1, "ev": "take", "comp": "B"}', "log.jsonl line 1.tuple", "needs a tuple id"),
        ('{"t": 1, "ev": "spout_ack", "comp": "S"}', "log.jsonl line 1.msg", "needs a message id"),
        ('{"t": "soon", "ev": "take", "comp": "B", "tuple": "x"}', "log.jsonl line 1.t", "not a number"),
        ('{"t": 1, "ev": "take", "comp": "B", "tuple": "x", "colour": 1}', "log.jsonl line 1.colour", "unknown field"),
        ('{"t": 1, "comp": "B", "queue": -2}', "log.jsonl line 1.queue", "greater than or equal to 0"),
        ('{"t": 1, "comp": "B"}', "log.jsonl line 1", "neither an event"),
        ("{oops", "log.jsonl line 1", "not valid JSON"),
    ],
)
def test_bad_records_name_the_field(tmp_path: Path, line: str, where: str, words: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(EventLogError) as err:
        read_log(path)
    assert err.value.problems[0].path == where
    assert words in err.value.problems[0].message


def test_csv_unknown_column(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("t,ev,comp,tuple,size\n1,take,B,x,3\n")
    with pytest.raises(EventLogError, match="unknown column 'size'"):
        read_log(path)


def test_missing_and_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(EventLogError, match="no such file"):
        read_log(tmp_path / "nope.jsonl")
    (tmp_path / "log.xyz").write_text("1")
    with pytest.raises(EventLogError, match="unknown log format"):
        read_log(tmp_path / "log.xyz")
    with pytest.raises(EventLogError, match="no event log in this folder"):
        read_log(tmp_path)


_SPLIT = "6345     {ts}    worker1:6700      4:split       "  # log4j's thread, then the metrics consumer's columns
METRICS = "".join(line + "\n" for line in (
    "2024-03-01 10:00:01,100 " + _SPLIT.format(ts=1709287201)
    + "__receive      {arrival_rate_secs=12.5, overflow=0, capacity=1024, population=3}",
    "2024-03-01 10:00:01,101 " + _SPLIT.format(ts=1709287201) + "__execute-count {sentences:default=120}",
    "2024-03-01 10:00:01,102 " + _SPLIT.format(ts=1709287201) + "__execute-latency {sentences:default=0.75}",
    "2024-03-01 10:00:02,000 o.a.s.d.executor [INFO] not a metrics line",
    "2024-03-01 10:01:01,100 " + _SPLIT.format(ts=1709287261)
    + "__receive      {arrival_rate_secs=13.0, overflow=0, capacity=1024, population=9}",
    "2024-03-01 10:01:01,100 6345     1709287261    worker1:6700      1:__system    memory/heap    "
    "{unusedBytes=100, usedBytes=5}",
))


def test_storm_metrics_log(tmp_path: Path) -> None:
    path = tmp_path / "metrics.log"
    path.write_text(METRICS)
    log = read_log(path)
    assert [(q.t, q.comp, q.task, q.queue) for q in log.queues] == [(0.0, "split", 4, 3), (60.0, "split", 4, 9)]
    counts = [m for m in log.metrics if m.name == "__execute-count"]
    assert counts[0].key == "sentences:default" and counts[0].value == 120
    latency = [m for m in log.metrics if m.name == "__execute-latency"][0]
    assert latency.value == 0.75 and latency.worker == "worker1:6700"


def test_metrics_line_without_data_is_ignored() -> None:
    assert parse_metrics_line("just some log output") == []
    points = parse_metrics_line("1709287201 host:6700 3:count __ack-count 17")
    assert [(p.comp, p.name, p.value) for p in points] == [("count", "__ack-count", 17.0)]


def test_metrics_log_without_metrics(tmp_path: Path) -> None:
    path = tmp_path / "worker.log"
    path.write_text("hello\n")
    with pytest.raises(EventLogError, match="no LoggingMetricsConsumer lines"):
        read_log(path)


def test_write_records_refuses_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(EventLogError, match="unknown log format"):
        write_records(tmp_path / "x.bin", EVENTS)


def test_storm_metrics_give_rates_and_latency(tmp_path: Path) -> None:
    from app.measure.analysis import analyze_local, apply_storm_metrics

    path = tmp_path / "metrics.log"
    path.write_text(METRICS + "2024-03-01 10:02:01,100 6345     1709287321    worker1:6700      4:split       "
                              "__execute-count {sentences:default=240}\n"
                              "2024-03-01 10:02:01,100 6345     1709287321    worker1:6700      4:split       "
                              "__execute-latency {sentences:default=1.25}\n")
    log = read_log(path)
    analysis = apply_storm_metrics(analyze_local(log.events, log.queues), log.metrics)
    split = analysis.components["split"]
    assert split.taken == 360 and split.rate_in == pytest.approx(360 / (2 * 120))  # 2 reports, 120-s buckets
    assert split.alpha_mean == pytest.approx((0.75 * 120 + 1.25 * 240) / 360 / 1000)
