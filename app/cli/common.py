"""What the subcommands of `stormbound` share: exit codes, the usage error and the helpers (public in app.cli)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from app.core.topology import Problem, TopologyError

if TYPE_CHECKING:
    from app.core.topology import Topology
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


def start_spark_host(master: str | None) -> SparkHost:
    """A started Spark host process; a missing Java or pyspark is a one-line UsageError."""
    from app.spark.client import SparkHost
    from app.spark.session import SparkUnavailable

    host = SparkHost(master=master)
    try:
        host.start()
    except SparkUnavailable as err:
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
        if err.kind == "input":
            raise TopologyError([Problem("", str(err))]) from None
        if err.kind == "cancelled":
            raise UsageError(str(err)) from None
        raise RuntimeError(str(err)) from None
    finally:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write("\n")


def add_spark_options(p: argparse.ArgumentParser) -> None:
    """--master and --json, for the subcommands that run a Spark job."""
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); "
                                    "default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_log_options(p: argparse.ArgumentParser) -> None:
    """The log argument, --topology and --time-unit, for the subcommands that read a run's log."""
    p.add_argument("log", metavar="DIR|LOG",
                   help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log)")
    p.add_argument("--topology", help="the topology the log comes from (a run folder has its own)")
    p.add_argument("--time-unit", choices=["s", "ms"], default="s", help="unit of the log's t field")


def run_topology(path: Path, given: str | None) -> Topology | None:
    """The topology a log comes from: `given`, else the run folder's own topology.storm.json, else None."""
    if given:
        return read_topology(given)
    folder = path if path.is_dir() else None
    if folder is not None and (folder / "topology.storm.json").exists():
        return read_topology(str(folder / "topology.storm.json"))
    return None


def require_log(path: Path) -> None:
    """A missing log or run folder is bad input (exit 2)."""
    if not path.exists():
        raise TopologyError([Problem("", "no such file or folder")])
