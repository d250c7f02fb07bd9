"""`stormbound compare DIR|LOG`: model (rate check) versus measured queue growth per bolt.

Exit 0, or 1 with --fail-on-disagreement when the model and the measurement disagree on some bolt.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.analyze import add_analysis_options, cmd_analyze
from app.cli.common import UsageError, examples
from app.cli.inputs import run_topology
from app.cli.outputs import add_force_option
from app.cli.report import add_report_option
from app.cli.spark_jobs import add_spark_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `compare` to the `stormbound` command line."""
    p = sub.add_parser(
        "compare", help="model (rate check) versus measured queue growth per bolt",
        description="Compare the model's rate check with the queue growth measured in a run, bolt by bolt.",
        epilog=examples("stormbound compare runs/cfg1 --fail-on-disagreement   # exit 1 when some bolt disagrees"))
    add_analysis_options(p)
    p.add_argument("--fail-on-disagreement", action="store_true", dest="fail_on_disagreement",
                   help="exit 1 when the model and the measurement disagree on some bolt (agrees: NO)")
    add_report_option(p)
    add_force_option(p)
    add_spark_options(p)
    p.set_defaults(func=cmd_compare, file_args=("log",))


def cmd_compare(args: argparse.Namespace) -> int:
    """`analyze` with the topology required and nothing written."""
    args.calibrate = None
    if run_topology(Path(args.log), args.topology) is None:
        raise UsageError("compare needs the topology: give --topology FILE (a run folder has its own)")
    return cmd_analyze(args)
