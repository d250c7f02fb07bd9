"""`stormbound check FILE [--json] [--fail-on grows|may-grow|timeout]`: validate a topology and print the rate check
and, per spout, whether a tuple tree can outlast the message timeout (docs/latency.md).

Exit 0 (valid), 1 with --fail-on when some bolt has that status or a worse one
(may-grow < grows), or with --fail-on timeout when some spout is not proven free of timeouts,
2 bad input. A max_idle_time large against some bolt's α is a
warning on stderr (and under `warnings` in --json), never an error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from app.cli.common import EXIT_FOUND, EXIT_OK, examples, print_result, table
from app.cli.inputs import read_topology
from app.cli.options import (
    add_failures_option,
    add_latency_options,
    add_storm_version_option,
    add_target_option,
    latency_of,
    with_failures,
    with_storm_version,
)

if TYPE_CHECKING:
    from app.core.latency.report import LatencyReport
    from app.core.rates import BoltRates, RateReport
    from app.core.topology import Topology


log = logging.getLogger("stormbound.check")

# How bad each status is: --fail-on S fails on S and on every status worse than S.
SEVERITY = {"bounded": 0, "no-repeating-growth": 1, "may-grow": 1, "grows": 2}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `check` to the `stormbound` command line."""
    p = sub.add_parser(
        "check", help="validate a topology and print the rate check",
        description="Validate a topology and print the instant rate check: per bolt its capacity and inflow "
                    "(tuples/s), utilisation ρ and status (bounded: below its queue bound in every run; "
                    "no-repeating-growth: no repeating run grows, but a backed-up upstream bolt may flood it; "
                    "may-grow; grows); the bolts proven unbounded without a search (a bolt whose growth the rates "
                    "prove floods them: docs/boundedness.md) and the joins whose growth the rates prove, "
                    "certified (docs/verifier.md); then the headroom (by how "
                    "much the spouts' rates may grow), the first bolt to saturate and, when overloaded, what Storm "
                    "does (backpressure, receive queues, max.spout.pending; docs/storm.md).",
        epilog=examples("stormbound check models/simple-DIA-cfg-1.storm.json --fail-on grows   # exit 1: B2 grows"))
    p.add_argument("file", help="a .storm.json document or a D-VerT JSON configuration")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document on stdout)")
    p.add_argument("--fail-on", choices=["grows", "may-grow", "timeout"], dest="fail_on",
                   help="exit 1 when some bolt has this status or a worse one (may-grow includes grows and "
                        "no-repeating-growth: every status but bounded); timeout: when some spout's tuple trees "
                        "are not proven to complete within the message timeout (docs/latency.md)")
    add_target_option(p)
    add_latency_options(p)
    add_failures_option(p)
    add_storm_version_option(p, "for this run")
    p.set_defaults(func=cmd_check, file_args=("file",))
    w = sub.add_parser(
        "check-witness", help="check timeout witnesses (check/verify --witness-out) independently",
        description="For each witness: certify its lasso as a legal run, then recompute from the lasso's positions "
                    "alone, in FIFO order, when the claimed tuple arrives and when it is taken, and accept only a "
                    "wait longer than the timeout (docs/latency.md). Exit 0 every witness accepted, 1 some "
                    "rejected, 2 bad input.",
        epilog=examples("stormbound check models/getting-started.storm.json --witness-out w.json",
                        "stormbound check-witness w.json"))
    w.add_argument("file", help="a witness file written by check or verify --witness-out")
    w.set_defaults(func=cmd_check_witness, file_args=("file",))


def failure_line(name: str, b: BoltRates) -> str:
    """One bolt under failures in one line: its inflow with replays against its service rate, its queue bound and
    what one of its failures loses (the figures of the rate check; the reasons are its failures_note)."""
    inflow = "no bound on its inflow" if b.inflow_failures is None else \
        f"receives at most {b.inflow_failures:.3g} tuples/s with replays"
    added = f" ({b.added_load:.3g} of them replays)" if b.added_load else ""
    queue = f"; queue below {b.queue_bound:.3g} tuples" if b.queue_bound is not None else ""
    lost = f"; a failure of it loses at most {b.lost_per_failure:.3g} tuples" if b.lost_per_failure else ""
    serves = (f"processes at least {b.capacity_min:.3g}" if b.window_timer is None else
              f"its timer takes whatever arrived every {b.window_timer:g} s")  # (a duration window: no capacity)
    return f"{name} ({b.status}): {inflow}{added}, {serves}{queue}{lost}"


def replay_lines(report: RateReport) -> list[str]:
    """A line per spout that replays: how fast, and whether its backlog of replays is bounded."""
    lines = []
    for spout, rate in report.replay_rate.items():
        backlog = report.replay_backlog.get(spout)
        if rate is None:
            lines.append(f"{spout}: its replays are not bounded")
        elif rate:
            lines.append(f"{spout}: replays up to {rate:.3g} tuples/s; "
                         + ("its backlog of replays may grow" if backlog is None
                            else f"at most {backlog:.3g} replays wait"))
    return lines


def suggestion_text(n: int | None, tasks: int | None) -> str:
    """The suggest column: the executors, and a resubmit when they are more than the bolt's tasks (`storm rebalance`
    cannot raise executors above the tasks fixed at submission)."""
    if n is None:
        return "-"
    return f"{n} (> {tasks} tasks: resubmit)" if tasks is not None and n > tasks else str(n)


def format_rate_table(topo: Topology, report: RateReport, verbose: bool = True,
                      suggested: dict[str, int | None] | None = None, tasks: dict[str, int] | None = None) -> str:
    """The human rate table printed by `check` (and by `make run` without a display); with failures on and not
    `verbose`, one line per bolt about them instead of the reasons in full."""
    # Storm's words: the Storm UI's "capacity" is the fraction of time a bolt's executors are busy, the model's ρ;
    # what the rate check calls a bolt's capacity (JSON: capacity_min, capacity_max) is its service rate in tuples/s
    rows = [["bolt", "service rate min..max (tuples/s)", "inflow min..max (tuples/s)", "capacity ρ", "status",
             "queue bound", "suggest executors"]]
    for name, b in report.bolts.items():
        sugg = (report.suggested_parallelism if suggested is None else suggested).get(name)
        rows.append([
            name,
            f"{b.capacity_min:.3g}..{b.capacity_max:.3g}" if b.window_timer is None
            else f"any, every {b.window_timer:g} s (timer)",
            f"{b.inflow_min:.3g}..{b.inflow_max:.3g}",
            f"{b.utilisation:.2f}",
            b.status,
            "-" if b.queue_bound is None else f"{b.queue_bound:.4g}",
            suggestion_text(sugg, (tasks or {}).get(name)),
        ])
    from app.core.topology import one_line

    lines = [f"{one_line(topo.name)}: valid topology, {len(topo.spouts)} spouts, {len(topo.bolts)} bolts, "
             f"{len(topo.subscriptions)} subscriptions (tolerance {topo.settings.tolerance})", "", table(rows), ""]
    if report.failures and not verbose:  # one line per bolt; the reasons in full under -v
        lines += ["Failures (docs/boundedness.md; -v for the reasons in full):"]
        lines += [f"- {one_line(failure_line(name, b))}" for name, b in report.bolts.items()]
        lines += [f"- {line}" for line in replay_lines(report)]
        return "\n".join(lines)
    lines += [f"- {one_line(b.explanation)}" for b in report.bolts.values()]
    if report.failures:
        lines += ["", "Failures (docs/boundedness.md):"]
        lines += [f"- {name} ({b.status}): {one_line(b.failures_note)}"
                  for name, b in report.bolts.items()]
        lines += [f"- {line}" for line in replay_lines(report)]
    return "\n".join(lines)


def latency_lines(latency: LatencyReport) -> list[str]:
    """Per spout its answer against the message timeout, the max.spout.pending advice, and each bolt's sojourn
    bound (the longest a tuple stays: queue and processing)."""
    from app.core.units import format_duration

    stays = [f"{n} {format_duration(v)}" if v is not None else f"{n} not proven"
             for n, v in latency.sojourn_bound.items()]
    return [*latency.lines(), *(["the longest a tuple stays at each bolt (queue and processing), in every run: "
                                 + ", ".join(stays)] if stays else [])]


def cmd_check_witness(args: argparse.Namespace) -> int:
    """Check every witness of a `stormbound-latency-witness/1` file with the independent checker."""

    from app.cli.common import UsageError
    from app.core.formats.jsonfile import FormatError, read_json
    from app.core.latency.witness import WITNESS_FORMAT
    from app.core.numbers import exact
    from app.core.tcn.check.latency_witness import check_witness
    from app.core.topology import one_line

    try:
        data = read_json(args.file)
    except (FormatError, ValueError) as exc:
        raise UsageError(f"{args.file}: {exc}", file=args.file) from None
    witnesses = data.get("witnesses") if isinstance(data, dict) else None
    if not isinstance(witnesses, list) or data.get("format") != WITNESS_FORMAT:
        raise UsageError(f"{args.file}: not a {WITNESS_FORMAT} file", field="format", file=args.file)
    try:
        timeout = exact(data["timeout"])
        claims = [(w["bolt"], int(w["loop_pass"]), int(w["position"]), w["trace"], w.get("spout", "?"), w)
                  for w in witnesses]
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise UsageError(f"{args.file}: a witness lacks {exc}", field="witnesses", file=args.file) from None
    rejected = 0
    for bolt, loop_pass, position, trace, spout, stated in claims:
        # the file's own figures (wait, arrival and take, the tree's spout, the timeout) must be the recomputed ones
        chain = stated.get("chain") or None
        result = check_witness(trace, bolt, loop_pass, position, timeout, chain=chain, stated=stated,
                               branch=stated.get("branch"))
        if result.ok and spout != "?" and stated.get("root") is not None and spout != result.root:
            result.ok = False
            result.problems.append(f"the witness is listed for {spout} but its tuple is in a tree of {result.root}")
        rejected += not result.ok
        whose = f" of a tree of {result.root}" if result.root else ""
        what = "a part in its cache" if stated.get("branch") else "a tuple"
        print(one_line(f"{spout} at {bolt}: " + (f"accepted: {what}{whose} waits {float(result.wait or 0):.6g} s > "
                                                 f"{float(timeout):g} s" if result.ok else
                                                 "rejected: " + "; ".join(result.problems))))
    return EXIT_FOUND if rejected else EXIT_OK


def latency_block(latency: LatencyReport) -> str:
    """The Latency block `check` and `verify` print."""
    from app.core.topology import one_line

    return "\n".join(["", "Latency (docs/latency.md):", *(f"- {one_line(line)}" for line in latency_lines(latency))])


def cmd_check(args: argparse.Namespace) -> int:
    """Print the rate check of FILE (a table, or JSON with --json)."""
    from app.core.headroom import headroom
    from app.core.rates import RateAnalysis, at_target, idle_warning
    from app.core.results import FloodCertificate, SpillCertificate, StormCertificate
    from app.core.storm.lines import capacity_lines
    from app.core.storm.rebalance import as_it_runs, rebalance_lines, running_from_document
    from app.core.tcn.cones import bounded_in_cones
    from app.core.tcn.flood import flood_message, unbounded_words
    from app.core.tcn.rate_growth import growth_message, joins_growing_by_rates
    from app.core.tcn.unbounded import instant_unbounded
    from app.core.topology import one_line

    topo = with_storm_version(with_failures(read_topology(args.file), args.failures, args.file), args.storm_version)
    rates = RateAnalysis(topo)  # the one analysis of this document: the report, the headroom
    # with failures, a cycle elsewhere hides no bolt's bound: each bolt it leaves unproven is tried on its own cone
    report, _ = bounded_in_cones(topo, rates.report(), [b.name for b in topo.bolts])
    log.info("rate check: %s", ", ".join(f"{n} {b.status}" for n, b in report.bolts.items()))
    warning = idle_warning(topo)
    latency = latency_of(topo, args, rates=rates)
    statuses: dict[str, str] = {n: b.status for n, b in report.bolts.items()}
    joins = joins_growing_by_rates(topo, statuses)
    unbounded = instant_unbounded(topo, statuses)  # a flood, else a storm (at once or paced), else a spill
    floods = {n: c for n, c in unbounded.items() if isinstance(c, FloodCertificate)}
    storms = {n: c for n, c in unbounded.items() if isinstance(c, StormCertificate)}
    spills = {n: c for n, c in unbounded.items() if isinstance(c, SpillCertificate)}
    failing: list[str] = []
    if args.fail_on == "timeout":
        failing = latency.not_proven()
    elif args.fail_on:
        failing = [n for n, b in report.bolts.items()
                   if SEVERITY[b.status] >= SEVERITY[args.fail_on] or n in floods or n in storms or n in spills]
    if warning is not None:
        log.info("%s", warning.message)
        print(f"{args.file}: warning: {warning.field}: {warning.message}", file=sys.stderr)
    suggested = at_target(topo, report.suggested_parallelism, args.target_capacity, rates.probe())
    running = running_from_document(topo)
    runs, differs = as_it_runs(topo, running)
    room = headroom(runs, RateAnalysis(runs) if differs else rates)  # from what runs (the --onto figures)
    if not differs:  # the latency proofs are the document's: they rule out the timeout risks they bound
        room = room.within_sojourns(latency.sojourn_exact)
    wanted = {n: s for n, s in suggested.items() if s is not None}
    commands = rebalance_lines(topo.name, running, wanted)
    if args.json:
        data = report.to_public_json()
        data["headroom"] = room.to_json()
        data["headroom_executors"] = {b.name: b.parallelism for b in runs.bolts}
        data["least_bounded_parallelism"] = data["suggested_parallelism"]
        data["suggested_parallelism"] = suggested
        data["target_capacity"] = args.target_capacity
        data["rebalance"] = commands
        data["warnings"] = [] if warning is None else [warning.model_dump()]
        data["latency"] = latency.model_dump()
        data["unbounded"] = {n: {"source": c.source, "message": flood_message(c).text(),
                                 "flood_certificate": c.model_dump(mode="json")} for n, c in floods.items()}
        data["unbounded_by_storm"] = {n: {"failing": c.failing, "message": unbounded_words(c),
                                          "storm_certificate": c.model_dump(mode="json")} for n, c in storms.items()}
        data["unbounded_by_spill"] = {n: {"failing": c.failing, "message": unbounded_words(c),
                                          "spill_certificate": c.model_dump(mode="json")} for n, c in spills.items()}
        data["grows_by_rates"] = {n: {"message": growth_message(c).text(), "growth_certificate": c.model_dump(
            mode="json")} for n, c in joins.items()}
        if args.fail_on == "timeout":
            data["fail_on"] = {"status": "timeout", "spouts": failing}
        elif args.fail_on:
            data["fail_on"] = {"status": args.fail_on, "bolts": failing}
        print_result("check", data)
    else:
        print(format_rate_table(topo, report, verbose=getattr(args, "verbose", 0) > 0, suggested=suggested,
                                tasks={n: r.tasks for n, r in running.items()}))
        print(f"\n(suggested executors: capacity {args.target_capacity:g} or less at nominal rates "
              "(--target-capacity), never fewer than proven bounded)")
        if floods:
            print("\n".join(["", "Unbounded (a flood whose source grows by rates, no search; docs/boundedness.md):",
                             *(f"- {n}: {one_line(flood_message(c).text())}" for n, c in floods.items())]))
        if storms:
            print("\n".join(["", "Unbounded (a replay storm, at once or a paced backlog, no search; "
                                 "docs/boundedness.md):",
                             *(f"- {n}: {one_line(unbounded_words(c))}" for n, c in storms.items())]))
        if spills:
            print("\n".join(["", "Unbounded (a failing bolt that grows by rates, replayed at once, no search; "
                                 "docs/boundedness.md):", *(f"- {n}: {one_line(unbounded_words(c))}"
                                                            for n, c in spills.items())]))
        if joins:
            print("\n".join(["", "Grows (a join, proven by rates with a checked certificate, no search; "
                                 "docs/verifier.md):", *(f"- {one_line(growth_message(c).text())}"
                                                         for c in joins.values())]))
        print("\n".join(["", "Capacity:", *(f"- {line}" for line in capacity_lines(room))]))
        if differs:
            print("- with the executors that run on the cluster ("
                  + ", ".join(f"{b.name} {b.parallelism}" for b in runs.bolts) + "; the document says "
                  + ", ".join(f"{b.name} {b.parallelism}" for b in topo.bolts) + "), as the rebalance lines")
        print(latency_block(latency))
        if commands:
            print("\n".join(["", "The suggested parallelism on the running topology:", *(f"  {c}" for c in commands)]))
        if failing:
            print(one_line(f"--fail-on {args.fail_on}: {', '.join(failing)}"))
    return EXIT_FOUND if failing else EXIT_OK
