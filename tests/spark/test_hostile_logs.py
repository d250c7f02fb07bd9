"""Bad local logs read over Spark get the in-process readers' one-line messages (docs/limits.md):
the start of a file is checked before Spark reads it, and a line Spark cannot parse further
in is named by reading the file again in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.measure.eventlog import EventLogError
from app.spark.analysis_job import analyze
from app.spark.frames import load_frames, spark_reason

pytestmark = pytest.mark.spark


def rows(n: int) -> list[str]:
    return [json.dumps({"t": i * 0.01, "ev": "take", "comp": "B", "task": 1, "tuple": f"x{i}"}) for i in range(n)]


def test_a_bad_start_is_named_before_spark_reads_the_log(spark, tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(("\n".join(rows(3)) + '\n{"t": 1, "ev": "take", "comp": "Bé", "tuple": "y"}\n').encode("latin-1"))
    with pytest.raises(EventLogError, match=r"latin\.jsonl line 4: is not UTF-8 text"):
        load_frames(spark, path)


def test_a_bad_line_past_the_start_is_named_by_line(spark, tmp_path: Path) -> None:
    path = tmp_path / "late.jsonl"
    path.write_text("\n".join(rows(1500)) + '\n{"t": 99, "ev": "take", oops}\n', encoding="utf-8")
    events, queues = load_frames(spark, path)  # the first rows are sound: Spark reads it
    with pytest.raises(EventLogError) as err:
        analyze(spark, events, queues)
    assert "late.jsonl line 1501: not valid JSON" in str(err.value)
    assert "\n" not in str(err.value)


def test_spark_reason_prefers_the_telling_line() -> None:
    err = RuntimeError("An error occurred while calling o123.collectToPython.\n: org.apache.spark.SparkException: "
                       "Malformed records are detected in record parsing. Parse Mode: FAILFAST.\n\tat x.y(Z.java:1)")
    assert spark_reason(err).startswith("Malformed records are detected")


def test_a_time_beyond_the_largest_past_the_start_is_refused_over_spark(spark, tmp_path: Path) -> None:
    """The readers' time limit (app.measure.eventlog.MAX_TIME) holds when Spark reads the log itself."""
    path = tmp_path / "far.jsonl"
    path.write_text("\n".join(rows(1500)) + '\n{"t": 1e19, "ev": "take", "comp": "B", "task": 1, "tuple": "z"}\n',
                    encoding="utf-8")
    events, queues = load_frames(spark, path)
    with pytest.raises(EventLogError) as err:
        analyze(spark, events, queues)
    assert ".t: 1e+19 s is not a finite time within 1e+13 s" in str(err.value) and "\n" not in str(err.value)
