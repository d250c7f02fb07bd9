"""The complete latency of acked trees (docs/latency.md, "Where to read it": `compare` reads each acked tree from
its last `spout_emit` to its `spout_ack`) is the same on DuckDB and on Spark SQL local[2], and the hand-computed one.

The log: two spouts, a message failed and replayed (its latency starts at the replay), a message acked twice (two
trees under one id), a message never acked, an ack written before the emission it closes would be (ignored: no
emission at or before it), lines out of time order.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from app.measure.analysis import analyze_path_local
from app.spark.analysis_job import analyze
from app.spark.frames import load_frames

pytestmark = pytest.mark.spark

ROWS = [
    {"t": 0.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "a", "msg": "m1"},
    {"t": 0.75, "ev": "spout_ack", "comp": "S", "task": 1, "msg": "m1"},  # 0.75
    {"t": 1.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "b", "msg": "m2"},
    {"t": 6.0, "ev": "spout_fail", "comp": "S", "task": 1, "msg": "m2", "reason": "TIMEOUT"},
    {"t": 7.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "b2", "msg": "m2", "reason": "REPLAY"},
    {"t": 9.5, "ev": "spout_ack", "comp": "S", "task": 1, "msg": "m2"},  # 2.5 from the replay, not 8.5
    {"t": 10.0, "ev": "spout_emit", "comp": "S", "task": 2, "tuple": "c", "msg": "m3"},  # never acked
    {"t": 2.0, "ev": "spout_emit", "comp": "T", "task": 1, "tuple": "d", "msg": "n1"},
    {"t": 3.25, "ev": "spout_ack", "comp": "T", "task": 1, "msg": "n1"},  # 1.25
    {"t": 4.0, "ev": "spout_emit", "comp": "T", "task": 1, "tuple": "e", "msg": "n1"},
    {"t": 4.5, "ev": "spout_ack", "comp": "T", "task": 1, "msg": "n1"},  # 0.5: the id used again
    {"t": 0.5, "ev": "spout_ack", "comp": "T", "task": 1, "msg": "n9"},  # no emission before it
    {"t": 1.0, "comp": "B", "task": 3, "queue": 0},
]
EXPECTED = {"S": (2, 2.5, (0.75 + 2.5) / 2), "T": (2, 1.25, (1.25 + 0.5) / 2)}  # completed, longest, mean


def test_duckdb_and_spark_measure_the_same_complete_latencies(spark, tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reversed(ROWS)))
    local = analyze_path_local(path)
    events, queues = load_frames(spark, path)
    remote = analyze(spark, events, queues, source=str(path))
    for spout, (done, longest, mean) in EXPECTED.items():
        for engine, analysis in (("duckdb", local), ("spark", remote)):
            c = analysis.components[spout]
            assert c.completed == done, (engine, spout, c.completed)
            assert c.complete_max is not None and c.complete_mean is not None
            assert math.isclose(c.complete_max, longest, rel_tol=1e-12), (engine, spout, c.complete_max)
            assert math.isclose(c.complete_mean, mean, rel_tol=1e-12), (engine, spout, c.complete_mean)
