"""`stormbound check FILE [--json]`: validate a topology and print the rate check."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.common import EXIT_OK, print_json, read_topology, table

if TYPE_CHECKING:
    from app.core.rates import RateReport
    from app.core.topology import Topology


def register(sub: argparse._SubParsersAction) -> None:
    """Add `check` to the `stormbound` command line."""
    p = sub.add_parser("check", help="validate a topology and print the rate check")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_check, file_args=("file",))


def format_rate_table(topo: Topology, report: RateReport) -> str:
    """The human rate table printed by `check` (and by `make run` without a display)."""
    rows = [["bolt", "capacity min..max", "inflow min..max", "ρ", "status", "suggest"]]
    for name, b in report.bolts.items():
        sugg = report.suggested_parallelism.get(name)
        rows.append([
            name,
            f"{b.capacity_min:.3g}..{b.capacity_max:.3g}",
            f"{b.inflow_min:.3g}..{b.inflow_max:.3g}",
            f"{b.utilisation:.2f}",
            b.status,
            "-" if sugg is None else str(sugg),
        ])
    lines = [f"{topo.name}: valid topology, {len(topo.spouts)} spouts, {len(topo.bolts)} bolts, "
             f"{len(topo.subscriptions)} subscriptions (tolerance {topo.settings.tolerance})", "", table(rows), ""]
    lines += [f"- {b.explanation}" for b in report.bolts.values()]
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    """Print the rate check of FILE (a table, or JSON with --json)."""
    from app.core.rates import rate_check

    topo = read_topology(args.file)
    report = rate_check(topo)
    if args.json:
        print_json(report.to_public_json())
    else:
        print(format_rate_table(topo, report))
    return EXIT_OK
