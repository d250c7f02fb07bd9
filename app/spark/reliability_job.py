"""`reliability` on Spark: the queries of app/measure/sql/reliability.py run by Spark SQL.

The definition is the one the embedded engine (DuckDB) runs; here the events DataFrame
(app.spark.frames, with its log order as `seq`) is registered as a temporary view, each
intermediate fact is computed once and kept with its lineage cut (`localCheckpoint`,
memory then disk) as a temporary view, released at the end. The first job also counts
the rows a reader would refuse (frames.checked_job).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from typing import Any

from app.measure.reliability import ReliabilityConfig, ReliabilityReport
from app.measure.sql.dialect import Dialect
from app.measure.sql.reliability import check_reliability_sql


class SparkSQL:
    """The engine app.measure.sql.reliability asks for, on a Spark session."""

    dialect: Dialect = "spark"

    def __init__(self, spark: Any, events: Any) -> None:
        self.spark = spark
        self.events = events
        self.kept: dict[str, object] = {}

    def run(self, sql: str) -> Sequence[Sequence[Any]]:
        from app.spark.frames import checked_job

        if "_bad_n" in sql:  # the first pass: the log's check rides along
            return [tuple(r) for r in checked_job(self.events, lambda: self.spark.sql(sql).collect())]
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def materialize(self, name: str, sql: str) -> None:
        """The query's rows computed now and kept (memory, then disk) with their lineage cut, so that the
        next queries plan over a small table rather than over every query before them."""
        frame = self.spark.sql(sql).localCheckpoint(eager=True)
        frame.createOrReplaceTempView(name)
        self.kept[name] = frame

    def drop(self, name: str) -> None:
        frame = self.kept.pop(name, None)
        with contextlib.suppress(Exception):  # a session that no longer answers holds nothing
            self.spark.catalog.dropTempView(name)
            if frame is not None:
                frame.unpersist()  # type: ignore[attr-defined]  # a DataFrame


def check_reliability(spark: Any, events: Any, config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The reliability report of an events DataFrame (schema EVENT_DDL, in log order) by Spark SQL;
    running out of memory is reported as such, not as an internal error."""
    from pyspark.sql import functions as F

    from app.spark.session import raise_if_out_of_memory

    suffix = uuid.uuid4().hex[:12]
    view = f"stormbound_events_{suffix}"
    ordered = events.withColumn("seq", F.monotonically_increasing_id())  # file order, for equal times
    for name in ("_stormbound_check", "_stormbound_local_path"):  # the deferred check of frames.load_frames
        if hasattr(events, name):
            with contextlib.suppress(AttributeError):
                setattr(ordered, name, getattr(events, name))
    ordered.createOrReplaceTempView(view)
    engine = SparkSQL(spark, ordered)
    try:
        return check_reliability_sql(engine, view, config, limit, prefix=f"stormbound_rel_{suffix}")
    except Exception as err:
        raise_if_out_of_memory(err, spark)
        raise
    finally:
        with contextlib.suppress(Exception):
            spark.catalog.dropTempView(view)
