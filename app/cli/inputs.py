"""What the subcommands read: a topology file, and a run's log (its argument and options, the checks
before an engine reads it, the topology it comes from)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.options import number
from app.core.topology import Problem, TopologyError, one_line

if TYPE_CHECKING:
    from app.core.topology import Topology

log = logging.getLogger("stormbound.cli")


def read_topology(path: str) -> Topology:
    """A topology file of any supported format; bad input raises TopologyError (exit 2)."""
    from app.core.formats import FormatError, load_topology_kind

    try:
        topo, kind = load_topology_kind(path)
    except FormatError as err:
        problems = getattr(err, "problems", [])
        if problems and "is a Flux (YAML) file" in problems[0].message:  # the command with what the file needs
            from app.core.storm.flux.origin import import_command

            raise FormatError([Problem("file", "is a Flux (YAML) file, not JSON: import it first with "
                                               f"`{import_command(path)}`")]) from None
        raise
    if kind == "trace":  # said, so that "valid topology" is not taken for a word on the trace
        print(f"{one_line(path)}: a trace file: reading the topology it runs on", file=sys.stderr)
    for note in topo.read_notes:  # an earlier version's document: what reading it assumed, once
        print(f"note: {path}: {note}", file=sys.stderr)
    for b in topo.bolts:  # a window or a join the model does not have: never read silently as an ordinary bolt
        if b.not_modelled is not None:
            print(f"note: {path}: bolts.{one_line(b.name)} is {one_line(b.not_modelled)}: the model has no windows or "
                  "joins yet, so every verdict on it reads it as an ordinary bolt (docs/model.md section 10)",
                  file=sys.stderr)
        elif b.window is not None and b.window.mixed:
            print(f"note: {path}: bolts.{one_line(b.name)} has a mixed window ({b.window.phrase()}): its "
                  + ("trigger is whole slides of tuples, as a count window's" if b.window.trigger == "count" else
                     "trigger is a timer, as a duration window's")
                  + ", in the rate check, the simulation, the solver, growth by rates, the linear program and the "
                  "certifier; its eviction decides its acks, for which no bound holds in every run, so a spout tree "
                  "through it gets no latency bound (docs/model.md section 10.4)", file=sys.stderr)
        elif b.count_window is not None:
            print(f"note: {path}: bolts.{one_line(b.name)} has a count window ({b.count_window.phrase()}): the rate "
                  "check, the simulation, the solver, growth by rates, the linear program and the certifier have its "
                  "window rule, and so do the flood proofs and the timeout witnesses of the bolts below it; the "
                  "latency bounds do not (docs/model.md section 10)",
                  file=sys.stderr)
        elif b.duration_window is not None:
            print(f"note: {path}: bolts.{one_line(b.name)} has a duration window ({b.duration_window.phrase()}): the "
                  "rate check (with failures and worker deaths too), the latency bounds, growth by rates, the flood "
                  "proofs, the simulation, the solver, the linear program, the certifier and the timeout witnesses "
                  "of the bolts below it have its timer rule (docs/model.md section 10.3)", file=sys.stderr)
        if b.waits_for_all:
            print(f"note: {path}: bolts.{one_line(b.name)} is a join waiting for every branch: the rate check, the "
                  "simulation, the solver, the certifier, the linear program, the proofs of growth by rates "
                  "(without a cycle) and the flood proofs (never from a join) have its join rule; the latency bounds "
                  "only when its cache is bounded and its branches pass each tuple on one for one (docs/model.md "
                  "section 11)", file=sys.stderr)
    log.info("read %s: %s, %d spouts, %d bolts, %d subscriptions", path, topo.name, len(topo.spouts), len(topo.bolts),
             len(topo.subscriptions))
    return topo

def add_log_options(p: argparse.ArgumentParser) -> None:
    """The log argument, --topology, --time-unit and the engine options, for the subcommands that read a run's log."""
    p.add_argument("log", metavar="DIR|LOG",
                   help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log); "
                        "or a URI Spark reads (hdfs://, s3a://, ...): a .jsonl, .csv or .parquet log")
    p.add_argument("--topology", help="the topology the log comes from (a run folder has its own)")
    p.add_argument("--time-unit", choices=["s", "ms"], default="s",
                   help="unit of the log's t field: seconds (default) or milliseconds")
    p.add_argument("--engine", choices=["auto", "embedded", "spark", "local"], default="auto",
                   help="auto (default): the embedded engine (DuckDB, in this process, no Java) for a log on this "
                        "machine, Spark for a URI or when --master is given; embedded or spark: always that one "
                        "(local: the former name of embedded)")
    p.add_argument("--local-max-events", type=number(int, 1), metavar="N",
                   help="auto: send logs of more records than N to Spark (default $STORMBOUND_LOCAL_MAX_EVENTS, "
                        "else no limit)")
    p.add_argument("--local-max-mb", type=number(float, 0, above=True, unit="MB"), metavar="MB",
                   help="auto: send logs larger than MB on disk to Spark (default $STORMBOUND_LOCAL_MAX_MB, "
                        "else no limit)")


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

    if isinstance(log, str) and is_uri(log):
        return
    path = Path(log)
    if not path.exists():
        raise TopologyError([Problem("", "no such file or folder")])
    if path.is_file() and path.stat().st_size == 0:
        raise TopologyError([Problem("", "is empty: a log has at least one event or queue sample")])
    from app.measure.eventlog import log_format, parquet_failures, parquet_row_count

    if log_format(path) == "parquet":
        try:
            rows: int | None = parquet_row_count(path)
        except ModuleNotFoundError:
            rows = None
        except parquet_failures():
            rows = None  # the reader names what is wrong with it
        if rows == 0:
            raise TopologyError([Problem("", "is empty (0 rows): a log has at least one event or queue sample")])
    if path.is_dir():
        logs = [p for p in path.iterdir() if p.is_file() and p.name.startswith(("events", "queues"))]
        if logs and all(p.stat().st_size == 0 for p in logs):
            raise TopologyError([Problem("", "the run's logs are empty: a log has at least one event or queue "
                                             "sample")])


def log_arg(log: str) -> str:
    """The log as the engines take it: a URI as given (Spark reads it), else an absolute path."""
    from app.measure.eventlog import is_uri

    return log if is_uri(log) else str(Path(log).resolve())
