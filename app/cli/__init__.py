"""The headless front door: `stormbound COMMAND ...`, one module of app/cli per subcommand.

Exit codes for every command: 0 done, 2 bad input or usage (one line on stderr,
`FILE: element.field: problem`), 3 internal error. `verify` adds 1 for a
counterexample and uses 3 for `unknown`; `diff` and `reliability` use 1 for "not
equivalent" / "violations found". Heavy modules (z3, Qt, Spark) are imported
inside the command that needs them, so `check` starts fast. The helpers below
are what subcommands share; no subcommand imports another one's private names.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

from app import __version__
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


class _Parser(argparse.ArgumentParser):
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
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


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
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def add_log_options(p: argparse.ArgumentParser) -> None:
    """The log argument, --topology and --time-unit, for the subcommands that read a run's log."""
    p.add_argument("log", metavar="DIR|LOG", help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log)")
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


# ---- the parser and main ---------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The `stormbound` parser with every subcommand (each module's `register`)."""
    from app.cli import (analyze, cep, check, compare, connect_server, convert, diff, gui, reliability, run, schema,
                         verify)

    parser = _Parser(prog="stormbound", description="Verify Storm topologies for unbounded queue growth.")
    parser.add_argument("--version", action="version", version=f"stormbound {__version__}")
    parser.add_argument("--selftest", action="store_true",
                        help="headless check of an installation: example, rate check, verification, trace PNG")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for module in (check, schema, convert, verify, run, analyze, compare, connect_server, reliability, diff, cep,
                   gui):
        module.register(sub)
    return parser


def _input_name(args: argparse.Namespace) -> str:
    for attr in getattr(args, "file_args", ()):
        value = getattr(args, attr, None)
        if value:
            return str(value)
    return "stormbound"


def main(argv: list[str] | None = None) -> int:
    """Run one `stormbound` command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv or ["gui"])
        if args.selftest:
            from app.selftest import run_selftest

            return run_selftest()
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        return int(args.func(args))
    except TopologyError as err:
        name = _input_name(args) if args is not None else "stormbound"
        for problem in err.problems:
            print(f"{name}: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UsageError as err:
        print(f"stormbound: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("stormbound: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit as err:  # --help / --version
        return int(err.code or 0)
    except Exception as err:  # an internal error: one line, no traceback, exit 3
        print(f"stormbound: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        if "STORMBOUND_DEBUG" in os.environ:
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
