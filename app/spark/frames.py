"""Event logs as Spark DataFrames: the loaders the analysis and reliability jobs share.

Large logs are read by Spark itself (JSON Lines, CSV, Parquet) with the fixed schema of
:mod:`app.measure.eventlog`; small ones (a JSON array, Storm metrics lines) go through the
Python readers, and so does every log sent to a Spark Connect server on another machine
(which cannot open this machine's files). Events and queue samples come back as two DataFrames.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from app.measure.eventlog import (
    ANCHOR_SEP,
    EVENT_KINDS,
    FLAT_DDL,
    MAX_TIME,
    QUEUE_DDL,
    Event,
    EventLog,
    EventLogError,
    QueueSample,
    TimeUnit,
    find_run_files,
    flat_rows,
    is_uri,
    log_format,
    read_log,
)
from app.measure.records import NEEDS_MSG, NEEDS_TUPLE


def records_to_frame(spark: Any, records: Iterable[Event | QueueSample]) -> Any:
    """One flat DataFrame (FLAT_DDL) holding events and queue samples."""
    return spark.createDataFrame(flat_rows(records), FLAT_DDL)


def log_to_frames(spark: Any, log: EventLog) -> Any:
    """(events, queues) DataFrames of an in-memory log."""

    flat = records_to_frame(spark, [*log.events, *log.queues])
    return _split(flat)


def _split(flat: Any) -> Any:
    """(events, queues) of a flat frame; a missing task is task 0 (as the Python readers have it)."""
    from pyspark.sql import functions as F

    task = F.coalesce(F.col("task"), F.lit(0).cast("bigint")).alias("task")
    events = flat.where(F.col("ev").isNotNull()).select("t", "ev", "comp", task, "tuple", "msg", "anchors", "reason")
    queues = flat.where(F.col("ev").isNull() & F.col("queue").isNotNull()).select("t", "comp", task, "queue")
    return events, queues


def _read_flat(spark: Any, path: Path | str, fmt: str) -> Any:
    from pyspark.sql import functions as F

    if fmt == "jsonl":
        return spark.read.schema(FLAT_DDL).option("mode", "FAILFAST").json(str(path))
    if fmt == "csv":
        ddl = FLAT_DDL.replace("anchors ARRAY<STRING>", "anchors STRING")
        df = spark.read.schema(ddl).option("header", "true").option("mode", "FAILFAST").csv(str(path))
        return df.withColumn(
            "anchors",
            F.when(F.col("ev") == "bolt_emit",
                   F.filter(F.split(F.coalesce(F.col("anchors"), F.lit("")), ANCHOR_SEP), lambda a: a != "")))
    if fmt == "parquet":
        df = spark.read.parquet(str(path))
        for name, kind in (c.split(" ", 1) for c in FLAT_DDL.split(", ")):
            if name not in df.columns:
                df = df.withColumn(name, F.lit(None).cast(kind))
            else:
                df = df.withColumn(name, F.col(name).cast(kind))
        return df.select(*(c.split(" ", 1)[0] for c in FLAT_DDL.split(", ")))
    raise EventLogError(Path(path).name, f"Spark cannot read {fmt} logs directly")


def _server_sees_files(spark: Any) -> bool:
    """Whether Spark reads paths on this machine: a classic session, or a Spark Connect server on
    this host. A remote Connect server gets the records uploaded instead (read here, sent as Arrow)."""
    from app.spark.session import connect_address, is_connect, is_local_host, master_of

    if not is_connect(spark):
        return True
    master = master_of(spark)
    return not master.startswith("sc://") or is_local_host(connect_address(master)[0])


def _check(events: Any, where: str) -> None:
    """Fail with one line when an event kind is unknown or a needed field is empty."""

    bad = events.where(_bad_condition()).limit(1).collect()
    if bad:
        _raise_bad(bad[0].asDict(), where)


_DEFERRED = "_stormbound_check"


def _bad_condition() -> Any:
    from pyspark.sql import functions as F

    return (~F.col("ev").isin(*EVENT_KINDS)
            | F.col("t").isNull() | F.col("comp").isNull()
            | F.isnan("t") | (F.abs(F.col("t")) > MAX_TIME)  # as the readers refuse it (eventlog.MAX_TIME)
            | (F.col("ev").isin(*NEEDS_TUPLE) & F.col("tuple").isNull())
            | (F.col("ev").isin(*NEEDS_MSG) & F.col("msg").isNull()))


def _raise_bad(row: dict[str, Any], where: str) -> None:
    if row["ev"] not in EVENT_KINDS:
        from app.core.formats.limits import escape

        raise EventLogError(f"{where}.ev", f"unknown event '{escape(str(row['ev']))}' at t={row['t']}")
    t = row.get("t")
    if t is not None and not -MAX_TIME <= t <= MAX_TIME:  # NaN fails the comparison too
        raise EventLogError(f"{where}.t", f"{t:g} s is not a finite time within {MAX_TIME:g} s (300,000 years)")
    needed = ("t", "comp") + (("tuple",) if row["ev"] in NEEDS_TUPLE else ()) + (("msg",) if row["ev"] in NEEDS_MSG
                                                                                else ())
    missing = next(k for k in needed if row.get(k) is None)
    raise EventLogError(f"{where}.{missing}", f"a {row['ev']} event at t={row['t']} has no {missing}")


def check_columns() -> list[Any]:
    """An aggregate that counts bad event rows in the same job as other figures (see `checked_job`)."""
    from pyspark.sql import functions as F

    return [F.sum(_bad_condition().cast("long")).alias("_bad_n")]


def checked_job(events: Any, run: Callable[[], list[Any]]) -> list[Any]:
    """Run the first job over a log's events, `run()` -> collected rows whose aggregates include
    `check_columns()`; raise EventLogError when load_frames deferred its check to this job and a
    row is bad (a second job then fetches one), or when Spark cannot parse the file (FAILFAST)."""
    where = getattr(events, _DEFERRED, None)
    try:
        rows = run()
    except Exception as err:  # noqa: BLE001 - parse errors of the file: named in this process when cheap
        if where is None or "Malformed" not in str(err) and "FAILFAST" not in str(err) and "PARSE" not in str(err):
            raise
        recheck_locally(getattr(events, _LOCAL, None))
        raise EventLogError(where, f"cannot be read: {spark_reason(err)}") from None
    if where is not None and any(r["_bad_n"] for r in rows):
        _check(events, where)
    return rows


def load_frames(spark: Any, path: str | os.PathLike[str], time_unit: TimeUnit = "s",
                check: bool | str = True) -> Any:
    """(events, queues) DataFrames of a log file or run folder, times in seconds.

    `check` validates every event (known kind; t, comp, and tuple or msg where the kind needs
    them). The check runs inside the first job of `analyze` or `check_reliability` over these
    frames (app.spark.frames.checked_job), which saves a pass over the log; any other use of the
    frames runs it here, as its own job (`check="now"`)."""

    if is_uri(path):  # on the cluster's storage: Spark reads it, whatever the master
        fmt = log_format(str(path))
        if fmt not in ("jsonl", "csv", "parquet"):
            raise EventLogError(str(path), "a log given as a URI must be a .jsonl, .csv or .parquet file or folder")
        events, queues = _split(_read_flat(spark, str(path), fmt))
        return _finish_frames(events, queues, time_unit, check, str(path).rstrip("/").rsplit("/", 1)[-1])
    p = Path(path).resolve()  # Spark (or a Spark Connect server) has a working folder of its own
    if not p.exists():
        raise EventLogError(str(p), "no such file or folder")
    fmt = log_format(p)
    if fmt in ("json", "storm-metrics", "storm-events") or not _server_sees_files(spark):
        return log_to_frames(spark, read_log(p, time_unit))
    from app.measure.logstream import sniff

    sniff(p, time_unit)  # a bad start of the file named here, not as a failed Spark job
    if fmt == "run-dir":
        events_path, queues_path = find_run_files(p)
        events, _ = _split(_read_flat(spark, events_path, log_format(events_path)))
        if queues_path is not None:
            _, queues = _split(_read_flat(spark, queues_path, log_format(queues_path)))
        else:
            queues = spark.createDataFrame([], QUEUE_DDL)
    else:
        events, queues = _split(_read_flat(spark, p, fmt))
    return _finish_frames(events, queues, time_unit, check, p.name, local=str(p))


_LOCAL = "_stormbound_local_path"
RECHECK_BYTES = 256 * 1024 * 1024  # a log Spark cannot parse is read here again, to name the line, up to this size


def recheck_locally(path: str | None) -> None:
    """After Spark failed to parse a local log: read it in this process, whose readers name the file,
    line and field (EventLogError); nothing when it is not local, too large, or reads fine here."""
    if path is None or not os.path.exists(path):
        return
    from app.measure.logstream import batches, log_bytes

    if log_bytes(path) <= RECHECK_BYTES:
        for _ in batches(path):
            pass


def spark_reason(err: BaseException) -> str:
    """The most telling line of a Spark failure (Py4J's first line is only "An error occurred while calling
    o123.collectToPython."), one line, escaped."""
    from app.core.formats.limits import escape

    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    telling = [line for line in lines if any(word in line for word in ("Malformed", "FAILFAST", "PARSE", "Cause"))]
    line = (telling or lines or [type(err).__name__])[0]
    return escape(line.split("Exception: ", 1)[-1], 200)


def _finish_frames(events: Any, queues: Any, time_unit: TimeUnit, check: bool | str, where: str,
                   local: str | None = None) -> Any:
    from pyspark.sql import functions as F

    if time_unit == "ms":
        events = events.withColumn("t", F.col("t") / 1000.0)
        queues = queues.withColumn("t", F.col("t") / 1000.0)
    if local is not None:
        with contextlib.suppress(AttributeError):  # a bad line named in this process if Spark cannot parse it
            setattr(events, _LOCAL, local)
    if check and check != "now":
        try:
            setattr(events, _DEFERRED, where)
            return events, queues
        except AttributeError:
            pass
    if check:
        try:
            _check(events, where)
        except EventLogError:
            raise
        except Exception as err:  # FAILFAST parse errors: named here when cheap, else Spark's telling line
            recheck_locally(getattr(events, _LOCAL, None))
            raise EventLogError(where, f"cannot be read: {spark_reason(err)}") from None
    return events, queues
