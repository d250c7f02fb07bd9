"""`stormbound reliability DIR|LOG`: check Storm's delivery guarantees over an event log.

A log on this machine is checked by the embedded engine (DuckDB, in this process), a URI
(or with --master) by Spark SQL (`--engine`, app.measure.engine_choice).

Exit 0 when every guarantee holds, 1 when some is violated, 2 for a log that can decide
none of them (Storm's events.log).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import examples, print_result
from app.cli.engine import engine_failures, open_engine
from app.cli.inputs import add_log_options, log_arg, read_topology, require_log, run_topology
from app.cli.options import STORM_MAX_INT, number, positive_seconds
from app.cli.spark_jobs import add_spark_options

if TYPE_CHECKING:
    from app.measure.reliability import ReliabilityConfig


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `reliability` to the `stormbound` command line."""
    p = sub.add_parser(
        "reliability", help="check Storm's delivery guarantees over an event log",
        description="Check Storm's delivery guarantees (acking, timeouts, max pending) over a run's event log. "
                    "Exit 0 when every guarantee holds, 1 when some is violated, 2 when the log cannot decide them "
                    "(Storm's events.log: emits only).",
        epilog=examples("stormbound reliability runs/cfg1 --timeout 30 --max-pending 100"))
    add_log_options(p)
    p.add_argument("--timeout", type=positive_seconds, metavar="S",
                   help="topology.message.timeout.secs in seconds (default: the run's settings, else 30)")
    p.add_argument("--max-pending", type=number(int, 1, STORM_MAX_INT), metavar="N",
                   help="topology.max.spout.pending (tuples per spout task)")
    p.add_argument("--ackers", type=number(int, 0, STORM_MAX_INT), metavar="N",
                   help="topology.acker.executors (0: trees untracked)")
    p.add_argument("--limit", type=number(int, 0), default=200, metavar="N",
                   help="violations listed at most (default 200)")
    add_spark_options(p)
    p.set_defaults(func=cmd_reliability, file_args=("log",))


def _reliability_config(args: argparse.Namespace, path: Path) -> ReliabilityConfig:
    from app.measure.reliability import ReliabilityConfig, run_settings

    settings = run_settings(path)
    config = ReliabilityConfig(**settings)

    def with_storm(topo: Any) -> dict[str, Any]:  # the document's Storm settings where the run recorded none
        storm = topo.storm
        found = {"message_timeout_s": storm.message_timeout_secs, "max_spout_pending": storm.max_spout_pending,
                 "ackers": storm.acker_executors}
        return {**{k: v for k, v in found.items() if v is not None}, **settings}

    if args.topology:
        from app.core.formats import read_json

        data = read_json(args.topology)
        if isinstance(data, dict) and "components" in data:  # Storm style: {components, subscriptions, config}
            config = ReliabilityConfig.from_storm(data, data.get("config"))
        else:
            given = read_topology(args.topology)
            config = ReliabilityConfig.from_topology(given, **with_storm(given))
    else:
        topo = run_topology(path, None)
        if topo is not None:
            config = ReliabilityConfig.from_topology(topo, **with_storm(topo))
    update: dict[str, Any] = {}
    if args.timeout is not None:
        update["message_timeout_s"] = args.timeout
    if args.max_pending is not None:
        update["max_spout_pending"] = args.max_pending
    if args.ackers is not None:
        update["ackers"] = args.ackers
    return ReliabilityConfig.model_validate({**config.model_dump(), **update})


def cmd_reliability(args: argparse.Namespace) -> int:
    """Check the log against the guarantees of its topology's settings (or the options)."""

    path = Path(args.log)
    require_log(args.log)
    config = _reliability_config(args, path)
    from app.measure.reliability import undecidable

    undecidable(log_arg(args.log))  # a log that can decide nothing: one line, exit 2 (before any engine starts)
    engine = open_engine(args)
    with engine_failures():
        report = engine.reliability(log_arg(args.log), config, time_unit=args.time_unit, limit=args.limit)
    if args.json:
        print_result("reliability", report.model_dump())
    else:
        print(report.summary())
    return 0 if report.ok else 1
