"""A queue sample with a null queue (a row with neither `ev` nor `queue`) is skipped by every reader and engine,
whatever the file's format: JSON Lines, CSV or Parquet, read by the streaming readers (the Python path) or by
DuckDB over the Parquet files themselves (app/measure/sql/embedded.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.measure import logstream
from app.measure.engines import open_log_engine
from app.measure.sql import embedded

EVENTS = [{"t": 0.0, "ev": "spout_emit", "comp": "s", "task": 1, "tuple": "a", "msg": "m"},
          {"t": 0.5, "ev": "take", "comp": "b", "task": 1, "tuple": "a", "msg": "m"}]
SAMPLES = [{"t": 1.0, "comp": "b", "task": 1, "queue": 3}, {"t": 2.0, "comp": "b", "task": 1, "queue": None},
           {"t": 3.0, "comp": "b", "task": 1, "queue": 5}]


def run_folder(tmp_path: Path, kind: str) -> Path:
    run = tmp_path / kind
    run.mkdir()
    if kind != "parquet":
        (run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    if kind == "jsonl":
        (run / "queues.jsonl").write_text("".join(json.dumps(q) + "\n" for q in SAMPLES), encoding="utf-8")
    elif kind == "csv":
        (run / "queues.csv").write_text("t,comp,task,queue\n1.0,b,1,3\n2.0,b,1,\n3.0,b,1,5\n", encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(EVENTS), run / "events.parquet")  # all Parquet: DuckDB reads it itself
        pq.write_table(pa.Table.from_pylist(SAMPLES), run / "queues.parquet")
    return run


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("path", ["python", "duckdb"])
def test_a_null_queue_is_skipped_by_every_reader_and_engine(tmp_path: Path, kind: str, path: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    run = run_folder(tmp_path, kind)
    streamed = [q for _events, queues in logstream.batches(run, "s") for q in queues]
    assert [(t, queue) for t, _comp, _task, queue in streamed] == [(1.0, 3), (3.0, 5)]
    if path == "python":  # DuckDB never reads the Parquet file itself: the streaming readers fill its tables
        monkeypatch.setattr(embedded.Embedded, "_parquet_columns", lambda self, f: None)
    views: list[object] = []
    real = embedded.Embedded._parquet_views
    monkeypatch.setattr(embedded.Embedded, "_parquet_views", lambda self, *a: (views.append(a), real(self, *a))[1])
    analysis = open_log_engine(run, "embedded").analyze(run)
    assert analysis.queue_samples == 2, (kind, path, analysis.queue_samples)
    assert bool(views) == (kind == "parquet" and path == "duckdb")  # which path read it
