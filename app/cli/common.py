"""What the subcommands of `stormbound` share: exit codes, the usage error and the helpers (public in app.cli)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from app.core.topology import Problem, TopologyError

if TYPE_CHECKING:
    from app.core.topology import Topology
    from app.measure.engine_choice import Choice
    from app.spark.client import SparkHost

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class UsageError(Exception):
    """Bad arguments or input that is not a topology problem; exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting."""

    def error(self, message: str) -> NoReturn:  # raises instead of exiting with argparse's own code
        raise UsageError(message)


# ---- helpers the subcommands share -----------------------------------------


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def read_topology(path: str) -> Topology:
    """A topology file of any supported format; bad input raises TopologyError (exit 2)."""
    from app.core.formats import load_topology

    return load_topology(path)


def table(rows: list[list[str]]) -> str:
    """Rows as left-aligned text columns (the first row is the header)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def start_spark_host(master: str | None, driver_memory: str | None = None, conf: list[str] | None = None,
                     why: str = "") -> SparkHost:
    """A started Spark host process with the driver memory and Spark settings asked for; a missing
    Java or pyspark is a one-line UsageError (naming `why` this log needs Spark, when given)."""
    from app.measure.engine_choice import EngineError, spark_host_env
    from app.spark.client import SparkHost
    from app.spark.session import DEFAULT_MASTER, SPARK_MASTER_ENV, SparkUnavailable

    master = master or os.environ.get(SPARK_MASTER_ENV) or DEFAULT_MASTER
    try:
        env = spark_host_env(master, driver_memory, conf)
    except EngineError as err:
        raise UsageError(str(err)) from None
    host = SparkHost(master=master, env=env)
    try:
        host.start()
    except SparkUnavailable as err:
        if why:
            raise UsageError(f"Spark: {err} (this log needs Spark: {why}; --engine local reads it in this "
                             f"process instead)") from None
        raise UsageError(f"Spark: {err}") from None
    return host


def _progress(quiet: bool) -> Callable[[float, str], None]:
    def show(fraction: float, message: str) -> None:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r{fraction * 100:5.1f}%  {message:<60}")
            sys.stderr.flush()
    return show


def call_spark_host(host: SparkHost, op: str, quiet: bool, **params: Any) -> dict[str, Any]:
    """One request to the Spark host with progress on a terminal's stderr; its errors become exit codes."""
    from app.spark.client import HostError

    try:
        return host.request(op, on_progress=_progress(quiet), **params)
    except HostError as err:
        from app.measure.engine_choice import is_out_of_memory, out_of_memory_advice

        if err.kind == "cancelled":
            raise UsageError(str(err)) from None
        if is_out_of_memory(str(err), *getattr(host, "_stderr_tail", [])):
            raise UsageError(out_of_memory_advice(host.master, host.env)) from None
        if err.kind == "input":
            raise TopologyError([Problem("", str(err))]) from None
        raise RuntimeError(str(err)) from None
    finally:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write("\n")


def add_spark_options(p: argparse.ArgumentParser) -> None:
    """--master, --driver-memory, --conf and --json, for the subcommands that run a Spark job."""
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); "
                                    "default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--driver-memory", metavar="SIZE",
                   help="Spark driver memory for a JVM master, e.g. 4g (default $STORMBOUND_SPARK_DRIVER_MEMORY, "
                        "else a quarter of this machine's memory, 1g..8g)")
    p.add_argument("--conf", action="append", metavar="KEY=VALUE",
                   help="a Spark setting for a JVM master (repeatable), e.g. spark.executor.memory=8g")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_log_options(p: argparse.ArgumentParser) -> None:
    """The log argument, --topology, --time-unit and the engine options, for the subcommands that read a run's log."""
    p.add_argument("log", metavar="DIR|LOG",
                   help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log); "
                        "or a URI Spark reads (hdfs://, s3a://, ...): a .jsonl, .csv or .parquet log")
    p.add_argument("--topology", help="the topology the log comes from (a run folder has its own)")
    p.add_argument("--time-unit", choices=["s", "ms"], default="s", help="unit of the log's t field")
    p.add_argument("--engine", choices=["auto", "local", "spark"], default="auto",
                   help="auto (default): this process for a small log, Spark for a large one or when --master "
                        "is given; local: always this process (no Java); spark: always Spark")
    p.add_argument("--local-max-events", type=int, metavar="N",
                   help="auto: largest log (records) read in this process "
                        "(default $STORMBOUND_LOCAL_MAX_EVENTS or 1000000)")
    p.add_argument("--local-max-mb", type=float, metavar="MB",
                   help="auto: largest log on disk (MB) read in this process (default $STORMBOUND_LOCAL_MAX_MB or 200)")


def run_topology(path: Path, given: str | None) -> Topology | None:
    """The topology a log comes from: `given`, else the run folder's own topology.storm.json, else None."""
    if given:
        return read_topology(given)
    folder = path if path.is_dir() else None
    if folder is not None and (folder / "topology.storm.json").exists():
        return read_topology(str(folder / "topology.storm.json"))
    return None


def require_log(log: str | Path) -> None:
    """A missing log or run folder is bad input (exit 2); a URI (hdfs://, s3a://, ...) is Spark's to find."""
    from app.measure.eventlog import is_uri

    if not (isinstance(log, str) and is_uri(log)) and not Path(log).exists():
        raise TopologyError([Problem("", "no such file or folder")])


def log_arg(log: str) -> str:
    """The log as the engines take it: a URI as given (Spark reads it), else an absolute path."""
    from app.measure.eventlog import is_uri

    return log if is_uri(log) else str(Path(log).resolve())


def choose_log_engine(args: argparse.Namespace) -> Choice:
    """The engine for the log of `args` (--engine, --master, --local-max-events/--local-max-mb); says
    which on a terminal's stderr."""
    from app.measure.engine_choice import EngineError, choose_engine

    try:
        choice = choose_engine(args.log, args.engine, spark_requested=args.master is not None,
                               max_events=args.local_max_events, max_mb=args.local_max_mb)
    except EngineError as err:
        raise UsageError(str(err)) from None
    if not args.json and sys.stderr.isatty():
        where = "this process" if choice.engine == "local" else "Spark"
        sys.stderr.write(f"engine: {where} ({choice.reason})\n")
    return choice


def add_limit_option(p: argparse.ArgumentParser) -> None:
    """`--limit NAME=N` (repeatable): raise a limit of the pattern/expression/stream readers (docs/limits.md)."""
    from app.expr.limits import LIMITS

    p.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                   help="raise a reader limit for this run (repeatable; docs/limits.md): " + ", ".join(LIMITS))


def apply_limits(args: argparse.Namespace) -> None:
    """Check STORMBOUND_LIMITS and apply `--limit` values; a bad one is a UsageError naming it."""
    from app.expr.limits import LimitSettingError, check_env, parse_settings, set_limits

    values: dict[str, int] = {}
    try:
        check_env()
        for entry in getattr(args, "limit", None) or []:
            values.update(parse_settings(entry, "--limit"))
    except LimitSettingError as err:
        raise UsageError(str(err)) from None
    set_limits(values)
