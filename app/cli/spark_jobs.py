"""A Spark host process for one command: --master, --driver-memory and --conf, started with them, one
request with its progress on a terminal's stderr, its failures as exit codes."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli.common import UsageError
from app.core.topology import Problem, TopologyError

if TYPE_CHECKING:
    from app.spark.client import SparkHost

log = logging.getLogger("stormbound.cli")


def start_spark_host(master: str | None, driver_memory: str | None = None, conf: list[str] | None = None,
                     why: str = "") -> SparkHost:
    """A started Spark host process with the driver memory and Spark settings asked for; a missing
    Java or pyspark is a one-line UsageError (naming `why` this log needs Spark, when given)."""
    from app.measure.engine_choice import EngineError
    from app.spark.client import SparkHost
    from app.spark.memory import spark_host_env
    from app.spark.session import DEFAULT_MASTER, SPARK_MASTER_ENV, SparkUnavailable

    master = master or os.environ.get(SPARK_MASTER_ENV) or DEFAULT_MASTER
    try:
        env = spark_host_env(master, driver_memory, conf)
    except EngineError as err:
        raise UsageError(str(err)) from None
    host = SparkHost(master=master, env=env)
    log.info("starting the Spark host (master %s)", master)
    try:
        host.start()
    except SparkUnavailable as err:
        if why:
            raise UsageError(f"Spark: {err} (this log needs Spark: {why}; --engine embedded reads it in this "
                             f"process instead)") from None
        raise UsageError(f"Spark: {err}") from None
    return host


def quiet(args: argparse.Namespace) -> bool:
    """No progress on stderr: -q, or --json (a machine reads the output)."""
    return bool(getattr(args, "quiet", False) or getattr(args, "json", False))


def _progress(quiet: bool) -> Callable[[float, str], None]:
    def show(fraction: float, message: str) -> None:
        logging.getLogger("stormbound.spark").debug("%5.1f%%  %s", fraction * 100, message)
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r{fraction * 100:5.1f}%  {message:<60}")
            sys.stderr.flush()
    return show


def call_spark_host(host: SparkHost, op: str, quiet: bool, **params: Any) -> dict[str, Any]:
    """One request to the Spark host with progress on a terminal's stderr; its errors become exit codes."""
    from app.spark.client import HostError

    log.info("Spark job %s on %s", op, getattr(host, "master", "Spark"))
    try:
        return host.request(op, on_progress=_progress(quiet), **params)
    except HostError as err:
        from app.measure.engine_choice import is_out_of_memory
        from app.spark.memory import out_of_memory_advice

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


def spark_request(args: argparse.Namespace, op: str, why: str = "", **params: Any) -> dict[str, Any]:
    """One request to a Spark host started for it from the options of `add_spark_options` (closed after)."""
    host = start_spark_host(args.master, args.driver_memory, args.conf, why)
    try:
        return call_spark_host(host, op, quiet(args), **params)
    finally:
        host.close()


def add_spark_options(p: argparse.ArgumentParser) -> None:
    """--master, --driver-memory, --conf and --json, for the subcommands that run a Spark job."""
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); "
                                    "default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--driver-memory", metavar="SIZE",
                   help="Spark driver memory for a JVM master, e.g. 4g (default $STORMBOUND_SPARK_DRIVER_MEMORY, "
                        "else a quarter of this machine's memory, 1g..8g)")
    p.add_argument("--conf", action="append", metavar="KEY=VALUE",
                   help="a Spark setting for a JVM master (repeatable), e.g. spark.executor.memory=8g")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document on stdout)")
