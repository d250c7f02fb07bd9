"""Where `analyze`, `compare` and `reliability` run: the one place that chooses the engine.

Two engines run the same definition (the SQL of app/measure/sql): `embedded`, DuckDB in
this process (no JVM; it spills to disk beyond memory), and `spark`, Spark SQL on a
Spark session (`--master`, a cluster's storage, Spark Connect). `--engine auto` (the
default) reads a log on this machine with the embedded engine, whatever its size, and a
log named by a URI (`hdfs://`, `s3a://`, ...) or any command given `--master` with
Spark. Optional limits send larger local logs to Spark too: `--local-max-events` /
`STORMBOUND_LOCAL_MAX_EVENTS` records, `--local-max-mb` / `STORMBOUND_LOCAL_MAX_MB`
megabytes on disk (no limit by default). `--engine local` is the former name of `embedded`.

The CLI (app.cli.common.choose_log_engine) and the Runs panel (app/gui/panels/runs_controller.py)
both ask `choose_engine`; `engine_failure` turns a failure of either engine (out of memory,
DuckDB or Java missing) into one line.

The Spark host gets its memory here too: a JVM master (`local[N]`, `spark://`, `yarn`,
`k8s://`) starts with `--driver-memory` (default `STORMBOUND_SPARK_DRIVER_MEMORY`, else a
quarter of this machine's memory, between 1g and 8g) and any `--conf KEY=VALUE`,
passed through PYSPARK_SUBMIT_ARGS, which spark-submit reads when pyspark starts the JVM.
A Spark Connect server (`sc://`) has its own memory settings. An out-of-memory failure
becomes one line saying what to raise (`out_of_memory_advice`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Engine = Literal["auto", "embedded", "spark", "local"]
ENGINES: tuple[str, ...] = ("auto", "embedded", "spark", "local")
MAX_EVENTS_ENV = "STORMBOUND_LOCAL_MAX_EVENTS"
MAX_MB_ENV = "STORMBOUND_LOCAL_MAX_MB"
DRIVER_MEMORY_ENV = "STORMBOUND_SPARK_DRIVER_MEMORY"
SUBMIT_ARGS_ENV = "PYSPARK_SUBMIT_ARGS"

SPARK_INSTALL = "pip install 'pyspark[connect]>=4.0,<4.1'"


class EngineError(ValueError):
    """A setting that cannot be used (bad threshold or memory size); one line."""


@dataclass(frozen=True)
class Choice:
    """The engine picked for a log, and why."""

    engine: Literal["embedded", "spark"]
    reason: str
    records: int | None
    bytes: int


def _number(value: str | float | int | None, name: str, kind: type) -> float | int | None:
    if value is None or value == "":
        return None
    try:
        number = kind(str(value).replace("_", "").replace(",", ""))
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


# ---- Spark memory ---------------------------------------------------------------


def physical_memory() -> int | None:
    """Bytes of memory of this machine (None when the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_driver_memory(env: Mapping[str, str] | None = None) -> str:
    """$STORMBOUND_SPARK_DRIVER_MEMORY, else a quarter of this machine's memory between 1g and 8g."""
    env = os.environ if env is None else env
    if env.get(DRIVER_MEMORY_ENV):
        return check_memory_size(env[DRIVER_MEMORY_ENV], DRIVER_MEMORY_ENV)
    total = physical_memory()
    gigabytes = 2 if total is None else max(1, min(8, int(total / 4 / 2**30)))
    return f"{gigabytes}g"


def check_memory_size(value: str, name: str = "--driver-memory") -> str:
    """A JVM memory size such as 4g or 3072m."""
    text = value.strip().lower()
    if not text or not (text[:-1].isdigit() if text[-1] in "kmgt" else text.isdigit()):
        raise EngineError(f"{name}: expected a size such as 4g or 3072m, got '{value}'")
    return text


def spark_host_env(master: str, driver_memory: str | None = None, conf: list[str] | None = None,
                   env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the Spark host process: PYSPARK_SUBMIT_ARGS with the driver memory and
    `--conf` settings for a JVM master (left alone for Spark Connect, or when already set)."""
    out = dict(os.environ if env is None else env)
    if master.startswith("sc://") or out.get(SUBMIT_ARGS_ENV):
        return out
    memory = check_memory_size(driver_memory) if driver_memory else default_driver_memory(out)
    args = ["--driver-memory", memory]
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise EngineError(f"--conf {item}: expected KEY=VALUE")
        args += ["--conf", f"{key.strip()}={value}"]
    out[SUBMIT_ARGS_ENV] = " ".join(shlex.quote(a) for a in args) + " pyspark-shell"
    return out


def driver_memory_of(env: Mapping[str, str]) -> str | None:
    """The --driver-memory in an environment's PYSPARK_SUBMIT_ARGS."""
    words = shlex.split(env.get(SUBMIT_ARGS_ENV, ""))
    for i, word in enumerate(words[:-1]):
        if word == "--driver-memory":
            return words[i + 1]
    return None


_OOM_MARKS = ("OutOfMemoryError", "No enough memory for aggregation", "Java heap space",
              "GC overhead limit exceeded", "Unable to acquire", "Not enough memory", "ran out of memory")


def is_out_of_memory(*texts: str) -> bool:
    """Whether a Spark failure (its message, the host's stderr) is an out-of-memory error."""
    return any(mark in text for text in texts for mark in _OOM_MARKS)


def out_of_memory_advice(master: str, env: Mapping[str, str]) -> str:
    """One line: Spark ran out of memory, and what to raise."""
    if master.startswith("sc://"):
        return ("Spark ran out of memory on the Spark Connect server: raise the server's spark.driver.memory / "
                "spark.executor.memory (or use --engine embedded for a log that fits this machine)")
    now = driver_memory_of(env) or "its default"
    if master.startswith("local"):
        return (f"Spark ran out of memory (driver memory {now}, master {master}): raise it with "
                f"--driver-memory (e.g. --driver-memory 8g) or ${DRIVER_MEMORY_ENV}")
    return (f"Spark ran out of memory (driver memory {now}, master {master}): raise the executors' memory with "
            f"--conf spark.executor.memory=8g, or the driver's with --driver-memory")
