"""`stormbound analyze DIR|LOG`: measured rates, α, σ, bursts and queue growth of a run.

A log on this machine is analysed by the embedded engine (DuckDB), a URI (or with --master)
by Spark SQL (`--engine`, app.measure.engine_choice).

With the topology (`--topology`, or the run folder's own) it also prints the
model-versus-measured comparison; `--calibrate OUT` writes the topology with the
measured parameters.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import EXIT_FOUND, EXIT_OK, UsageError, examples, print_result, table
from app.cli.engine import engine_failures, open_engine
from app.cli.inputs import add_log_options, log_arg, require_log, run_topology
from app.cli.options import number, positive_seconds
from app.cli.outputs import add_force_option, check_output_file, write_output_file
from app.cli.report import REPORT_SUFFIXES, add_report_option, check_output, write_run_report
from app.cli.spark_jobs import add_spark_options
from app.core.topology import one_line

if TYPE_CHECKING:
    from app.measure.analysis import Analysis
    from app.measure.model_vs_measured import Comparison


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """The options `analyze` and `compare` share."""
    add_log_options(p)
    p.add_argument("--bin", type=positive_seconds, default=1.0, metavar="S",
                   help="queue series bin width (seconds or with a unit: 500ms; default 1 s)")
    p.add_argument("--growth-floor", type=number(float, 0, unit="tuples/s"), default=0.05, metavar="X",
                   help="tuples/s a queue must gain to count as growing (default 0.05)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `analyze` to the `stormbound` command line."""
    p = sub.add_parser(
        "analyze", help="measured rates, α, σ, bursts and queue growth of a run",
        description="Measure a run's rates (tuples/s), α (s), σ, bursts and queue growth (tuples/s, robust 95 % CI) "
                    "from its event log; with the topology, compare them with the model.",
        epilog=examples("stormbound analyze runs/cfg1 --calibrate cfg1-measured.storm.json",
                        "stormbound analyze runs/prod-1 --calibrate measured.yaml   # a `record`ed Storm cluster: "
                        "docs/storm-runs.md"))
    add_analysis_options(p)
    p.add_argument("--calibrate", metavar="OUT",
                   help="write the topology with measured parameters to OUT (.storm.json)")
    add_report_option(p)
    add_force_option(p)
    add_spark_options(p)
    p.set_defaults(func=cmd_analyze, file_args=("log",))


def _analysis(args: argparse.Namespace) -> Analysis:
    engine = open_engine(args)
    with engine_failures():
        return engine.analyze(log_arg(args.log), time_unit=args.time_unit, bin_s=args.bin,
                              growth_floor=args.growth_floor)


def format_analysis(analysis: Analysis, comparison: Comparison | None = None) -> str:
    """The human report: per-component measurements, then model versus measured when the topology is known."""
    lines = [f"{analysis.source}: {analysis.events} events, {analysis.queue_samples} queue samples, "
             f"{analysis.duration_s:.1f} s"]
    rows = [["component", "in/s", "out/s", "α mean", "σ", "bursts", "queue slope/s (95% robust CI)", "verdict"]]
    for c in analysis.components.values():
        q = c.queue
        out = f"{c.rate_out:.3g}"
        if c.rate_replayed:  # a spout that replayed: its fresh and replayed tuples apart
            out += f" ({c.rate_fresh or 0:.3g} fresh + {c.rate_replayed:.3g} replayed)"
        rows.append([c.name, "unknown" if c.rate_in is None else f"{c.rate_in:.3g}", out,
                     "-" if c.alpha_mean is None else f"{c.alpha_mean:.3g}",
                     "-" if c.sigma is None else f"{c.sigma:.3g}",
                     "-" if not c.bursts else f"{c.burst_mean:.2f} (max {c.burst_max})",
                     "-" if q is None else f"{q.slope:+.3f} ({q.ci_low:+.3f}..{q.ci_high:+.3f})",
                     "-" if q is None else q.verdict])
    lines += ["", table(rows)]
    from app.measure.failures_measured import failure_table, segment_table

    failures = failure_table(analysis)
    if failures:
        lines += ["", "failures and replays:", table(failures)]
    segments = segment_table(analysis)
    if segments:  # the verdict above is the last stretch's
        lines += ["", "queues between failures and recoveries (each verdict above is its last stretch's):",
                  table(segments)]
    notes = [f"- {c.name}: {c.queue.note}" for c in analysis.components.values()
             if c.queue is not None and c.queue.note]
    if notes:
        lines += [""] + notes
    lines += [f"note: {note}" for note in getattr(analysis, "notes", [])]
    if comparison is not None:
        rows = [["bolt", "model", "growth/s annotated", "predicted at measured", "measured slope", "agrees"]]
        for b in comparison.bolts:
            rows.append([b.bolt, b.model_status, f"{b.model_growth:.3g}",
                         "-" if b.predicted_growth is None else f"{b.predicted_growth:.3g}",
                         "-" if b.measured_slope is None else f"{b.measured_slope:+.3g} ({b.measured_verdict})",
                         {True: "yes", False: "NO", None: "-"}[b.agrees]])
        lines += ["", table(rows), ""]
        rows = [["component", "parameter", "annotated", "measured"]]
        rows += [[p.component, p.parameter, f"{p.annotated:g}", "-" if p.measured is None else f"{p.measured:.4g}"]
                 for p in comparison.parameters]
        lines += [table(rows)]
        if comparison.latency:
            rows = [["spout", "complete latency: proven bound (s)", "measured longest (s)", "trees acked", "agrees"]]
            rows += [[x.spout, "not proven" if x.bound is None else f"{x.bound:.4g}",
                      "-" if x.measured_max is None else f"{x.measured_max:.4g}", str(x.completed),
                      {True: "yes", False: "NO: above the proven bound", None: "-"}[x.agrees]]
                     for x in comparison.latency]
            lines += ["", "tuple trees against the proven latency bound (docs/latency.md):", table(rows)]
        if comparison.failures is not None:
            from app.measure.failures_measured import replay_table, window_table

            lines += ["", "around the failures (queues in tuples; forecast: backlog / spare capacity "
                          "of the rate check at measured rates):", table(window_table(comparison.failures))]
            if comparison.failures.replays:
                lines += ["", "replays of the lost tuples (model: ceil(lost / Imp) .. lost):",
                          table(replay_table(comparison.failures))]
    return "\n".join(lines)


def cmd_analyze(args: argparse.Namespace) -> int:
    """Analyse a run's log (and compare with the model, and calibrate, when the topology is known)."""
    from app.measure.model_vs_measured import calibrate, compare

    path = Path(args.log)
    from app.measure.storm_run import is_storm_run

    if is_storm_run(path):  # a recording of a real cluster (record, import metrics): docs/storm-runs.md
        from app.cli.storm_live import analyze_storm_run

        return analyze_storm_run(args, format_analysis)
    require_log(args.log)
    if getattr(args, "report", None):
        check_output(args, "--report", args.report, REPORT_SUFFIXES, "report")
    if getattr(args, "calibrate", None):
        check_output_file(args, "--calibrate", args.calibrate)
    topo = run_topology(path, args.topology)
    analysis = _analysis(args)
    from app.core.topology import unannotated_problems

    if topo is not None and unannotated_problems(topo) and args.func is cmd_analyze:
        comparison = None  # placeholder values: no model to compare with, but a calibration can fill them
    else:
        comparison = compare(topo, analysis) if topo is not None else None
    if args.calibrate:
        if topo is None:
            raise UsageError("--calibrate needs the topology: give --topology FILE (a run folder has its own)")
        from app.core.formats.dvert import to_dvert_bytes

        calibrated = calibrate(topo, analysis)
        if getattr(args, "topology", None) and not args.calibrate.endswith(".dvert.json"):
            from app.cli.outputs import rebased_document

            calibrated = rebased_document(calibrated, args.topology, args.calibrate)
        data = to_dvert_bytes(calibrated) if args.calibrate.endswith(".dvert.json") else calibrated.to_json_bytes()
        write_output_file(args, "--calibrate", args.calibrate, data)
    if getattr(args, "report", None):
        write_run_report(args, analysis, comparison, topo)
    disagreeing = [] if comparison is None else [b.bolt for b in comparison.bolts if b.agrees is False] + [
        f"{x.spout} (complete latency)" for x in comparison.latency if x.agrees is False]
    fail = bool(getattr(args, "fail_on_disagreement", False) and disagreeing)
    if args.json:
        out: dict[str, Any] = {"analysis": analysis.model_dump()}
        if comparison is not None:
            out["comparison"] = comparison.model_dump(exclude={"calibrated"})
            out["disagreeing"] = disagreeing
        print_result(args.command if args.command in ("analyze", "compare") else "analyze", out)
    else:
        print(format_analysis(analysis, comparison))
        if args.calibrate:
            print(f"wrote {one_line(str(args.calibrate))}")
        if getattr(args, "report", None):
            print(f"wrote {one_line(str(args.report))}")
        if fail:
            print(f"--fail-on-disagreement: model and measurement disagree on {', '.join(disagreeing)}")
    return EXIT_FOUND if fail else EXIT_OK
