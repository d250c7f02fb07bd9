"""One session-scoped local[2] SparkSession shared by every Spark test (startup is the cost)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from app.runs.session import SparkUnavailable, build_session

    try:
        session = build_session("local[2]", "stormbound-tests", {
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.adaptive.enabled": "false",
        })
    except SparkUnavailable as err:
        pytest.skip(str(err))
    yield session
    session.stop()
