"""Pictures and reports of the command line: output checks and the HTML report of `analyze --report`.

Not a subcommand: `plot` and `analyze` share these. The report gathers what the other
commands print (the analysis, model versus measured, `reliability`, `cep monitors`),
draws the measured queues with the app's pyqtgraph code (app/gui/trace_plots.py,
offscreen) and writes one self-contained HTML file (app/measure/report.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import UsageError

if TYPE_CHECKING:
    from app.core.topology import Topology
    from app.measure.analysis import Analysis
    from app.measure.log_engine import LogEngine
    from app.measure.model_vs_measured import Comparison
    from app.measure.reliability import ReliabilityReport
    from app.measure.report import PatternSummary, Section

REPORT_SUFFIXES = (".html", ".htm")
FIRST_MATCHES = 20  # matches listed in words; the counts cover them all


def check_output(args: argparse.Namespace, option: str, out: str, suffixes: tuple[str, ...], what: str) -> Path:
    """The output path, refused early (exit 2) for an unknown extension, or by the one writer's checks
    (an input, a folder, a device, an existing file without --force, a place that cannot be written)."""
    from app.cli.outputs import check_output_file
    from app.core.topology import one_line

    path = Path(out)
    if path.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {one_line(out)}: unknown {what} format {path.suffix or '(no extension)'!r}: "
                         f"use {' or '.join(suffixes)}", field=option)
    check_output_file(args, option, out)
    return path


def write_output(args: argparse.Namespace, option: str, path: Path, data: bytes) -> None:
    """Write through the one writer (app/cli/outputs.write_output_file): one line on any refusal (exit 2)."""
    from app.cli.outputs import write_output_file

    write_output_file(args, option, str(path), data)


def add_report_option(p: argparse.ArgumentParser) -> None:
    """`--report OUT.html` (analyze, compare)."""
    p.add_argument("--report", metavar="OUT.html",
                   help="also write one self-contained HTML report: queue plots (measured and the model's "
                        "prediction), model versus measured, reliability, monitor pattern matches")


def _reliability(args: argparse.Namespace, topo: Topology | None, engine: LogEngine) -> ReliabilityReport | Section:
    from app.measure.reliability import ReliabilityConfig, run_settings
    from app.measure.report import Section

    path = Path(args.log)
    settings = run_settings(path)
    if topo is not None:
        storm = topo.storm
        found = {"message_timeout_s": storm.message_timeout_secs, "max_spout_pending": storm.max_spout_pending,
                 "ackers": storm.acker_executors}
        config = ReliabilityConfig.from_topology(topo, **{**{k: v for k, v in found.items() if v is not None},
                                                          **settings})
    else:
        config = ReliabilityConfig(**settings)
    try:
        return engine.reliability(str(path.resolve()), config, time_unit=args.time_unit)
    except (OSError, ValueError) as err:  # an EventLogError (a log that cannot decide) is a ValueError
        return Section(title="Reliability", reason=f"not checked: {err}")


def pattern_events(path: str, time_unit: str) -> list[dict[str, object]]:
    """The log's events and queue samples as pattern events (`type`, `t`, attributes), read as plain tuples.

    The same events `stormbound cep` builds from the pydantic records, a few times faster
    (app/measure/logstream.py), which keeps a report of a large local log affordable.
    """
    from app.measure.logstream import EVENT_FIELDS, QUEUE_FIELDS, batches

    found: list[dict[str, object]] = []
    for events, queues in batches(path, time_unit):  # type: ignore[arg-type]  # "s" or "ms", checked by argparse
        for row in events:
            event = {k: v for k, v in zip(EVENT_FIELDS, row, strict=True) if v is not None}
            event["type"] = event.pop("ev")
            found.append(event)
        for row in queues:
            found.append({"type": "queue", **dict(zip(QUEUE_FIELDS, row, strict=True))})
    found.sort(key=lambda e: float(e["t"]))  # type: ignore[arg-type]  # every row has a numeric t
    return found


def _patterns(args: argparse.Namespace) -> PatternSummary | Section:
    from app.cep import PatternError
    from app.cep.monitors import load_monitors, run_monitors, summarize
    from app.measure.report import PatternCount, PatternSummary, Section

    try:
        patterns = load_monitors()
        events = pattern_events(args.log, args.time_unit)
        matches = run_monitors(events, patterns=patterns)
    except (OSError, ValueError, PatternError) as err:
        return Section(title="Pattern matches", reason=f"not matched: {err}")
    counts = summarize(matches, patterns)
    first = []
    for m in matches[:FIRST_MATCHES]:
        binds = " ".join(f"{k}={v}" for k, v in m.bindings.items())
        first.append(f"{m.pattern} t={m.t_start:g}..{m.t_end:g}" + (f" {binds}" if binds else ""))
    return PatternSummary(events=len(events),
                          counts=[PatternCount(pattern=p.id, text=p.text, matches=counts.get(p.id, 0))
                                  for p in patterns], first=first)


def queue_plots(analysis: Analysis, comparison: Comparison | None) -> dict[str, str]:
    """Inline SVG per component with queue samples: the measured series and, for a bolt the model covers,
    the predicted queue; the intervals in which a killed task was down are shaded."""
    from app.gui.trace_plots import queue_plot, svg_bytes  # Qt: only when a report is asked for
    from app.measure.report import inline_svg, predicted_queue

    predicted = {b.bolt: b for b in comparison.bolts} if comparison is not None else {}
    # a killed task's down intervals shade every queue plot (its losses and the replays reach the others too)
    down = {name: [(a - analysis.start, b - analysis.start) for a, b in comp.down]
            for name, comp in analysis.components.items() if comp.down}
    plots: dict[str, str] = {}
    for index, (name, comp) in enumerate(analysis.components.items()):
        if not comp.series:
            continue
        measured = [(t - analysis.start, q) for t, q in comp.series]
        bolt = predicted.get(name)
        model = predicted_queue(comp.series, analysis.start, bolt.predicted_growth) if bolt is not None else []
        verdict = f"measured: {comp.queue.verdict} ({comp.queue.slope:+.3g}/s)" if comp.queue is not None else ""
        if bolt is not None and bolt.predicted_growth is not None:
            verdict += f"; model: {bolt.predicted_growth:.3g}/s"
        canvas = queue_plot(name, measured, model, f"{name}" + (f" — {verdict}" if verdict else ""), down=down)
        plots[name] = inline_svg(svg_bytes(canvas).decode("utf-8"), f"q{index}")
        canvas.close()
    return plots


def write_run_report(args: argparse.Namespace, analysis: Analysis, comparison: Comparison | None,
                     topo: Topology | None) -> Path:
    """Write the HTML report of `args.report` (checked by `check_output` before the analysis ran)."""
    from app.cli.engine import in_this_process
    from app.core.topology import unannotated_problems
    from app.measure.report import Section, render_report

    path = Path(args.report)
    engine = in_this_process(args)
    notes: list[str] = []
    if not isinstance(engine, str):
        reliability: ReliabilityReport | Section = _reliability(args, topo, engine)
        patterns: PatternSummary | Section = _patterns(args)
    else:
        why = f"not checked in this process ({engine}): run `stormbound %s` on the log"
        reliability = Section(title="Reliability", reason=why % "reliability")
        patterns = Section(title="Pattern matches", reason=why % "cep monitors")
    if topo is not None and comparison is None:
        notes.append("the topology has unannotated parameters: no model prediction (calibrate it with "
                     "`stormbound analyze --calibrate OUT`)")
    capacity: list[str] = []
    if topo is not None and not unannotated_problems(topo):
        from app.core.headroom import headroom
        from app.core.latency.report import latency_report
        from app.core.storm.lines import capacity_lines

        # the proofs rule out timeout risks
        sojourns = latency_report(topo, witnesses=False, pending=False).sojourn_exact
        capacity = capacity_lines(headroom(topo).within_sojourns(sojourns))
    title = topo.name if topo is not None and topo.name else Path(args.log).name
    text = render_report(analysis, comparison, queue_plots(analysis, comparison), reliability, patterns,
                         title=title, notes=notes, source=args.log, capacity=capacity)
    write_output(args, "--report", path, text.encode("utf-8"))
    return path
