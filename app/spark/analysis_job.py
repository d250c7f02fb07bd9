"""`analyze` on Spark: the queries of app/measure/sql/analysis.py run by Spark SQL over the log's DataFrames.

The definition is the one the embedded engine (DuckDB) runs; here the events and queue
DataFrames (app.spark.frames) are registered as temporary views and each query is one
Spark job collecting a few rows. The first job also counts the rows a reader would
refuse (frames.checked_job), so a bad log read by Spark itself fails with one line.
Nothing is cached: a log larger than memory streams through each job.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from app.measure.analysis_model import Analysis
from app.measure.sql.analysis import analyze_sql


def analyze(spark: Any, events: Any, queues: Any, bin_s: float = 1.0, growth_floor: float = 0.05,
            burst_gap: float = 0.005, source: str = "") -> Analysis:
    """The analysis of the events and queue-sample DataFrames by Spark SQL; running out of memory is
    reported as such (app.spark.session.raise_if_out_of_memory)."""
    from app.spark.frames import checked_job
    from app.spark.session import raise_if_out_of_memory

    suffix = uuid.uuid4().hex[:12]
    names = (f"stormbound_events_{suffix}", f"stormbound_queues_{suffix}")
    events.createOrReplaceTempView(names[0])
    queues.createOrReplaceTempView(names[1])

    def run(sql: str) -> list[tuple[Any, ...]]:
        if "_bad_n" in sql and names[0] in sql:  # the first pass: the log's check rides along (frames.checked_job)
            return [tuple(r) for r in checked_job(events, lambda: spark.sql(sql).collect())]
        return [tuple(r) for r in spark.sql(sql).collect()]

    try:
        return analyze_sql(run, "spark", names[0], names[1], bin_s, growth_floor, burst_gap, source)
    except Exception as err:
        raise_if_out_of_memory(err, spark)
        raise
    finally:
        for name in names:
            with contextlib.suppress(Exception):  # a session that no longer answers has no views to drop
                spark.catalog.dropTempView(name)
