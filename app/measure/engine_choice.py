"""Where `analyze`, `compare` and `reliability` run: the rules that choose the engine.

Two engines run the same definition (the SQL of app/measure/sql): `embedded`, DuckDB in
this process (no JVM; it spills to disk beyond memory), and `spark`, Spark SQL on a
Spark session (`--master`, a cluster's storage, Spark Connect). `--engine auto` (the
default) reads a log on this machine with the embedded engine, whatever its size, and a
log named by a URI (`hdfs://`, `s3a://`, ...) or any command given `--master` with
Spark. Optional limits send larger local logs to Spark too: `--local-max-events` /
`STORMBOUND_LOCAL_MAX_EVENTS` records, `--local-max-mb` / `STORMBOUND_LOCAL_MAX_MB`
megabytes on disk (no limit by default). `--engine local` is the former name of `embedded`.

`choose_engine` holds the rules; the one factory, app/measure/engines.py's `open_log_engine`, applies them
and returns the engine (app/measure/log_engine.py's `LogEngine`) the CLI (app/cli/engine.py) and the
Runs panel (app/gui/panels/runs_controller.py) both use; `engine_failure` turns a failure of either
engine (out of memory, DuckDB or Java missing) into one line.

Whether a failure of either engine is an out-of-memory error is said here (`is_out_of_memory`);
the Spark host's JVM memory settings and the advice on what to raise are app/spark/memory.py's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.core.errors import BadInput

Engine = Literal["auto", "embedded", "spark", "local"]
ENGINES: tuple[str, ...] = ("auto", "embedded", "spark", "local")
MAX_EVENTS_ENV = "STORMBOUND_LOCAL_MAX_EVENTS"
MAX_MB_ENV = "STORMBOUND_LOCAL_MAX_MB"

SPARK_INSTALL = "pip install 'pyspark[connect]>=4.0,<4.1'"


class EngineError(BadInput, ValueError):
    """A setting that cannot be used (bad threshold or memory size); one line."""


@dataclass(frozen=True)
class Choice:
    """The engine picked for a log, and why."""

    engine: Literal["embedded", "spark"]
    reason: str
    records: int | None
    bytes: int


def _number(value: str | float | int | None, name: str, kind: type[float] | type[int]) -> float | int | None:
    if value is None or value == "":
        return None
    try:
        number: float | int = kind(str(value).replace("_", "").replace(",", ""))
    except ValueError:
        raise EngineError(f"{name}: expected a number, got '{value}'") from None
    if number < 0:
        raise EngineError(f"{name}: must not be negative")
    return number


def local_limits(max_events: int | None = None, max_mb: float | None = None,
                 env: Mapping[str, str] | None = None) -> tuple[int | None, float | None]:
    """(records, megabytes) beyond which `auto` sends a local log to Spark: the arguments, else the
    environment, else None (no limit: the embedded engine spills to disk)."""
    env = os.environ if env is None else env
    events = max_events if max_events is not None else _number(env.get(MAX_EVENTS_ENV), MAX_EVENTS_ENV, int)
    mb = max_mb if max_mb is not None else _number(env.get(MAX_MB_ENV), MAX_MB_ENV, float)
    return (None if events is None else int(events), None if mb is None else float(mb))


def engine_name(engine: str) -> str:
    """The engine asked for, checked; `local` (the former name) is `embedded`."""
    if engine not in ENGINES:
        raise EngineError(f"--engine {engine}: expected one of auto, embedded, spark")
    return "embedded" if engine == "local" else engine


def choose_engine(path: str | os.PathLike[str], engine: str = "auto", *, spark_requested: bool = False,
                  max_events: int | None = None, max_mb: float | None = None,
                  env: Mapping[str, str] | None = None) -> Choice:
    """The engine for a log: `embedded`/`spark` as asked; `auto`: Spark for a URI or a given master,
    or beyond the optional size limits, else embedded."""
    from app.measure.eventlog import is_uri
    from app.measure.logstream import count_records, log_bytes

    engine = engine_name(engine)
    if is_uri(path):
        if engine == "embedded":
            raise EngineError(f"{path}: --engine embedded reads files on this machine; a URI is read by Spark")
        return Choice("spark", "a URI, read by Spark", None, 0)
    p = Path(path)
    size = log_bytes(p)
    if engine == "embedded":
        return Choice("embedded", "--engine embedded", None, size)
    if engine == "spark":
        return Choice("spark", "--engine spark", None, size)
    if spark_requested:
        return Choice("spark", "a Spark master was given", None, size)
    limit_events, limit_mb = local_limits(max_events, max_mb, env)
    if limit_mb is not None and size > limit_mb * 1e6:
        return Choice("spark", f"{size / 1e6:,.0f} MB on disk, more than {limit_mb:,.0f} MB", None, size)
    records = count_records(p) if limit_events is not None or size < 64e6 else None
    if limit_events is not None and records is not None and records > limit_events:
        return Choice("spark", f"{records:,} records, more than {limit_events:,}", records, size)
    described = f"{records:,} records" if records is not None else f"{size / 1e6:,.1f} MB"
    return Choice("embedded", f"{described} on this machine", records, size)


def engine_failure(err: BaseException) -> str | None:
    """One line for a failure of an engine (the embedded engine out of memory or missing; Spark out
    of memory), None for any other error."""
    from app.measure.sql.embedded import EmbeddedError

    if isinstance(err, EmbeddedError):
        return str(err)
    if is_out_of_memory(str(err)):
        return "the engine ran out of memory: " + str(err).strip().splitlines()[0][:160]
    return None


_OOM_MARKS = ("OutOfMemoryError", "No enough memory for aggregation", "Java heap space",
              "GC overhead limit exceeded", "Unable to acquire", "Not enough memory", "ran out of memory")


def is_out_of_memory(*texts: str) -> bool:
    """Whether a Spark failure (its message, the host's stderr) is an out-of-memory error."""
    return any(mark in text for text in texts for mark in _OOM_MARKS)
