"""`stormbound record`, `watch` and `import metrics`, and `analyze`/`compare` of a Storm run folder.

A running cluster measured (docs/storm-runs.md): `record` polls the Storm UI into a run folder
(app/measure/storm_run.py, one JSON line per poll, gaps included), `import metrics` turns a metrics-v2
reporter's receive-queue populations into one, `analyze RUNDIR` / `compare RUNDIR --topology DOC` give
the measured figures beside the model (app/measure/storm_figures.py), `watch` re-checks the model with
the latest figures at every poll (app/measure/storm_record.py).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import EXIT_FOUND, EXIT_OK, UsageError, examples, print_result, table
from app.cli.inputs import read_topology
from app.cli.options import number, positive_seconds
from app.cli.outputs import add_force_option, check_output_file, write_output_file
from app.core.topology import one_line

if TYPE_CHECKING:
    from app.core.storm.ui.client import StormUIClient
    from app.core.topology import Topology
    from app.measure.analysis import Analysis
    from app.measure.model_vs_measured import Comparison
    from app.measure.storm_figures import ModelNow, StormRunFigures


def _connection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", metavar="URL", help="the Storm UI, e.g. http://nimbus.example.org:8080")
    p.add_argument("--topology", required=True, metavar="ID|NAME", help="the running topology's id or name")
    p.add_argument("--every", type=positive_seconds, default=30.0, metavar="S",
                   help="time between polls (seconds or with a unit: 30s, 500ms; default 30 s)")
    p.add_argument("--polls", type=number(int, 1), metavar="N", help="stop after N polls (default: until Ctrl+C)")
    p.add_argument("--duration", type=positive_seconds, metavar="D",
                   help="stop after this long (seconds or with a unit: 10min, 2h)")
    p.add_argument("--user", metavar="USER[:PASSWORD]",
                   help="basic auth (default $STORMBOUND_UI_USER; password from $STORMBOUND_UI_PASSWORD)")
    p.add_argument("--token", help="bearer token (default $STORMBOUND_UI_TOKEN)")
    p.add_argument("--cacert", metavar="FILE", help="trust this CA bundle for https (verification stays on)")
    p.add_argument("--timeout", type=number(float, 0, 3600, above=True, unit="s"), default=10.0, metavar="S",
                   help="how long each request may take in all (default 10 s); a poll that fails is a gap")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `record` and `watch`."""
    p = sub.add_parser(
        "record", help="poll a running topology's Storm UI into a run folder (one JSON line per poll)",
        description="Poll the Storm UI (topology and component pages with all-time counts, the Kafka lag) every "
                    "--every seconds into a run folder: polls.jsonl, one line per poll, a failed poll recorded as a "
                    "gap. Ctrl+C finishes the poll in hand and stops (exit 0). `analyze RUNDIR` reads the folder.",
        epilog=examples("stormbound record http://nimbus:8080 --topology wordcount --every 30s --out runs/prod-1",
                        "stormbound analyze runs/prod-1 --topology wc.storm.json"))
    _connection_options(p)
    p.add_argument("--out", required=True, metavar="RUNDIR",
                   help="the run folder (created; an existing recording of the same topology is continued)")
    p.set_defaults(func=cmd_record, file_args=("url",))

    p = sub.add_parser(
        "watch", help="re-check the model with a running topology's latest measured figures at every poll",
        description="Poll the Storm UI and, at every poll, put the rates, α and σ measured since the previous poll "
                    "into the model and run the rate check: one line per poll (headroom, first to saturate, each "
                    "bolt's status, bolts whose measured growth or latency disagree with the model).",
        epilog=examples("stormbound watch http://nimbus:8080 --topology wordcount --every 30s --doc wc.storm.json "
                        "--fail-on may-grow"))
    _connection_options(p)
    p.add_argument("--doc", metavar="DOC", help="the model (.storm.json); default: the topology as the first poll "
                                                "shows it")
    p.add_argument("--json", action="store_true", help="one JSON document per poll, one per line")
    p.add_argument("--fail-on", choices=["may-grow", "grows"], dest="fail_on",
                   help="exit 1 once --fail-after successive polls have a bolt at this verdict or worse "
                        "(may-grow: may-grow, grows, full or stall; grows: grows, full or stall)")
    p.add_argument("--fail-after", type=number(int, 1), default=3, metavar="N", dest="fail_after",
                   help="successive polls that must agree before --fail-on fires (default 3)")
    p.add_argument("--window", type=number(int, 2), default=6, metavar="N",
                   help="intervals between polls each verdict rests on (default 6)")
    p.add_argument("--lag-window", type=positive_seconds, default=60.0, metavar="S", dest="lag_window",
                   help="seconds of polls the Kafka lag's growth is fitted over, at least two offset commits "
                        "(default 60 s: storm-kafka-client commits every 30 s)")
    p.add_argument("--metrics", metavar="DIR",
                   help="a metrics-v2 reporter's folder (CSV) or Graphite file, read again at every poll: full "
                        "receive queues and backpressure")
    p.add_argument("--growth-floor", type=number(float, 0, unit="tuples/s"), default=0.05, metavar="X",
                   help="tuples/s a bolt must gain to count as growing (default 0.05)")
    p.set_defaults(func=cmd_watch, file_args=("url",))


def register_import(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `import metrics` under `import`."""
    q = kinds.add_parser(
        "metrics", help="read a metrics-v2 reporter's output (CSV folder or Graphite lines) into a run folder",
        description="Read the receive-queue populations of a Storm metrics-v2 reporter (CsvStormReporter's "
                    "folder: one NAME.csv per metric; or Graphite plaintext lines) into a Storm run folder "
                    "(queues.jsonl): per component and executor, over time.",
        epilog=examples("stormbound import metrics /var/storm/csv-metrics --out runs/prod-1"))
    q.add_argument("source", metavar="DIR", help="the reporter's folder (or one Graphite plaintext file)")
    q.add_argument("--out", required=True, metavar="RUNDIR", help="the run folder (a recording's own is fine)")
    q.add_argument("--json", action="store_true", help="what was read, as JSON")
    add_force_option(q)
    q.set_defaults(func=cmd_import_metrics, file_args=("source",))


def _client(args: argparse.Namespace) -> StormUIClient:
    from app.core.storm.ui.client import Credentials, StormUIClient, StormUIError

    try:
        return StormUIClient(args.url, Credentials.resolve(args.user, None, args.token), timeout_s=args.timeout,
                             cafile=args.cacert)
    except StormUIError as err:
        raise UsageError(str(err)) from None


def _resolve(client: StormUIClient, topology: str) -> str:
    from app.core.storm.ui.client import StormUIError
    from app.core.storm.ui.fetch import find_topology

    try:
        return find_topology(client, topology)
    except StormUIError as err:
        raise UsageError(str(err)) from None


class _Stopper:
    """Ctrl+C (and SIGTERM) set `event`: the poll in hand is finished and written, then the loop ends.
    A second Ctrl+C interrupts at once."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, frame: object) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()

    def __enter__(self) -> _Stopper:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._old[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, old in self._old.items():
            signal.signal(signum, old)


def _progress(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(one_line(text), file=sys.stderr, flush=True)


def cmd_record(args: argparse.Namespace) -> int:
    """Record polls of the Storm UI into a run folder."""
    from app.measure.storm_record import poll_loop
    from app.measure.storm_run import (
        PollWriter,
        StormRunError,
        StormRunHeader,
        is_storm_run,
        next_poll_number,
        read_header,
        write_header,
    )

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder", field="--out")
    if out.is_dir() and any(out.iterdir()) and not is_storm_run(out):
        raise UsageError(f"--out {out}: holds other files (not a Storm recording): give a new folder", field="--out")
    client = _client(args)
    ident = _resolve(client, args.topology)
    header = StormRunHeader(source="storm-ui", url=client.base, topology=args.topology, topology_id=ident,
                            every_s=args.every)
    if is_storm_run(out):
        try:
            old = read_header(out)
        except StormRunError as err:
            raise UsageError(str(err)) from None
        if old.topology_id and old.topology_id != ident:
            raise UsageError(f"--out {out}: holds a recording of {old.topology_id}, not {ident}: give another folder",
                             field="--out")
        header = old.model_copy(update={"url": client.base, "topology": args.topology, "topology_id": ident,
                                        "every_s": args.every, "source": "storm-ui"})
    out.mkdir(parents=True, exist_ok=True)
    first = next_poll_number(out)
    state = {"header": header}

    def keep_configuration(configuration: dict[str, Any]) -> None:
        h = state["header"]
        version = configuration.get("storm.version") if isinstance(configuration.get("storm.version"), str) else None
        if h.configuration != configuration:
            state["header"] = h.model_copy(update={"configuration": configuration,
                                                   "storm_version": h.storm_version or version})
            write_header(out, state["header"])

    write_header(out, header)
    ok = gaps = 0
    _progress(args, f"recording {ident} from {client.base} every {args.every:g} s into {out} (Ctrl+C stops)")
    with _Stopper() as stopper, PollWriter(out) as writer:
        for poll in poll_loop(client, ident, args.every, polls=args.polls, duration=args.duration,
                              stop=stopper.event, first=first, on_configuration=keep_configuration):
            writer.append(poll)
            if poll.ok and state["header"].started is None:
                state["header"] = state["header"].model_copy(update={"started": poll.t})
                write_header(out, state["header"])
            if poll.ok and not (out / RUN_TOPOLOGY).exists():
                _write_run_topology(out)
            if poll.ok:
                ok += 1
                _progress(args, f"poll {poll.poll}: ok ({len(poll.components)} components"
                                + ("" if poll.lag_error is None else ", no lag") + ")")
            else:
                gaps += 1
                _progress(args, f"poll {poll.poll}: gap: {poll.gap}")
        stopped = stopper.event.is_set()
    _progress(args, f"{'stopped: ' if stopped else ''}{ok} polls, {gaps} gaps in {out / 'polls.jsonl'}")
    return EXIT_OK


RUN_TOPOLOGY = "topology.storm.json"  # what runs, as the first successful poll showed it (as a Spark run folder's)


def _write_run_topology(out: Path) -> None:
    from app.core.fileio import write_output
    from app.measure.storm_figures import model_of_run

    model = model_of_run(str(out))
    if model is not None:
        write_output(out / RUN_TOPOLOGY, model.to_json_bytes(), force=True)


def cmd_watch(args: argparse.Namespace) -> int:
    """Judge every poll over a window of polls; exit 1 once --fail-after successive polls agree on --fail-on."""
    from app.measure.storm_record import poll_loop
    from app.measure.storm_run import components_mismatch, follow_metrics
    from app.measure.storm_watch import Judge, format_watch_line

    model: Topology | None = read_topology(args.doc) if args.doc else None
    client = _client(args)
    ident = _resolve(client, args.topology)
    judge = Judge(model, args.every, fail_on=args.fail_on, fail_after=args.fail_after, window=args.window,
                  lag_window=args.lag_window, growth_floor=args.growth_floor)
    configuration: dict[str, Any] = {}
    if args.metrics and not Path(args.metrics).exists():
        raise UsageError(f"--metrics {one_line(args.metrics)}: no such file or folder", field="--metrics")

    def keep(c: dict[str, Any]) -> None:
        configuration.clear()
        configuration.update(c)

    with _Stopper() as stopper:
        for poll in poll_loop(client, ident, args.every, polls=args.polls, duration=args.duration,
                              stop=stopper.event, on_configuration=keep, refuse_bad=True):
            if poll.ok and args.doc and model is not None:
                wrong = components_mismatch(model, poll)
                if wrong is not None:
                    raise UsageError(f"--doc {one_line(args.doc)}: {wrong}: give the document of {ident}",
                                     field="--doc")
            if poll.ok and judge.model is None:
                judge.model = _first_model(client.base, ident, poll, configuration)
            line = judge.add(poll, follow_metrics(args.metrics) if args.metrics else None)
            if args.json:
                print(json.dumps(line.model_dump(mode="json"), separators=(",", ":")), flush=True)
            else:
                print(format_watch_line(line, args.fail_on, args.fail_after), flush=True)
            if line.fail:
                if not args.json:
                    failing = [n for n, v in line.statuses.items() if judge.alarm(v)]
                    print(f"--fail-on {args.fail_on}: poll {poll.poll}, {args.fail_after} successive polls "
                          f"({', '.join(failing)})", file=sys.stderr)
                return EXIT_FOUND
    return EXIT_OK


def _first_model(url: str, ident: str, poll: Any, configuration: dict[str, Any]) -> Topology | None:
    """The topology as this poll shows it, None while it has processed nothing (unannotated values)."""
    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot
    from app.core.topology import unannotated_problems

    snapshot = StormUISnapshot(url=url, topology_id=ident, window="all",
                               topology={**poll.topology, "configuration": configuration}, components=poll.components)
    model = from_storm_ui(snapshot).topology
    return None if unannotated_problems(model) else model


def cmd_import_metrics(args: argparse.Namespace) -> int:
    from app.measure.storm_run import StormRunError, write_metrics_run

    try:
        result = write_metrics_run(args.source, args.out, force=args.force)
    except StormRunError as err:
        raise UsageError(str(err)) from None
    if args.json:
        print_result("import-metrics", result)
    else:
        print(f"{result['samples']} queue samples of {result['executors']} executors "
              f"({', '.join(result['components'])}) into {one_line(str(Path(result['output']) / 'queues.jsonl'))}")
    return EXIT_OK


# ---- analyze / compare of a Storm run folder -----------------------------------------------


def _fmt(x: float | None, spec: str = ".4g") -> str:
    return "-" if x is None else format(x, spec)


def format_storm_figures(figures: StormRunFigures, now: dict[str, ModelNow] | None = None) -> str:
    """The Storm-specific part of the report: spouts (fresh, replayed, lag), bolts (capacity, growth and where
    it comes from, the model's verdict with the later half's figures)."""
    now = now or {}
    h = figures.header
    lines = [f"{figures.folder}: Storm run of {h.topology_id or h.topology or '?'}"
             + (f" from {h.url}" if h.url else "")
             + f": {figures.polls} polls, {figures.gaps} gaps, {figures.span_s:.3g} s"]
    lines += [f"gap: {g}" for g in figures.gap_lines[:10]]
    if figures.spouts:
        rows = [["spout", "emitted/s", "fresh/s", "replayed/s (≈failed)", "acked/s", "lag", "lag growth/s",
                 "offered/s"]]
        rows += [[s.name, _fmt(s.emitted_rate), _fmt(s.fresh_rate), _fmt(s.replayed_rate), _fmt(s.acked_rate),
                  "-" if s.lag_last is None else str(s.lag_last), _fmt(s.lag_growth, "+.4g"), _fmt(s.offered_rate)]
                 for s in figures.spouts]
        lines += ["", table(rows)]
    if figures.bolts:
        rows = [["bolt", "arrived/s", "executed/s", "α ms", "σ", "capacity (last, max)", "growth/s (95% CI)",
                 "recent growth/s", "verdict", "from", "model now (ρ, growth/s)"]]
        for b in figures.bolts:
            q = b.queue
            rows.append([b.name, _fmt(b.arrival_rate), _fmt(b.executed_rate),
                         _fmt(None if b.alpha_s is None else b.alpha_s * 1000), _fmt(b.sigma),
                         f"{_fmt(b.capacity_last, '.3f')}, {_fmt(b.capacity_max, '.3f')}",
                         "-" if q is None else f"{q.slope:+.4g} ({q.ci_low:+.4g}..{q.ci_high:+.4g})",
                         _fmt(b.recent_growth, "+.4g"), "full" if b.full else "-" if q is None else q.verdict,
                         b.growth_from,
                         "-" if b.name not in now else
                         f"{now[b.name].status} ({now[b.name].utilisation:.3g}, {now[b.name].growth:+.4g})"
                         + ("" if now[b.name].queue_bound is None else f" < {now[b.name].queue_bound:.4g}")])
        lines += ["", table(rows)]
    if now and figures.recent_from_s is not None:
        lines.append(f"model now: the rate check with the rates, α and σ measured from t={figures.recent_from_s:.4g} s "
                     "(the later half of the polls) on")
    lines += [f"note: {n}" for n in figures.notes]
    return "\n".join(lines)


def timings_yaml(figures: StormRunFigures, analysis: Analysis, model: Topology | None) -> bytes:
    """A timings file (`annotate DOC --from FILE`) with the measured rates (offered), α and σ: those the
    comparison uses (from a growth onset on, when a bolt started to grow), and the declared streams' σ."""
    declared = {b.name: set(b.streams) for b in model.bolts} if model is not None else None
    out = [f"# measured by stormbound from {figures.folder} ({figures.polls} polls, {figures.span_s:.4g} s"
           + ("" if figures.compared_from_s is None else f"; from t={figures.compared_from_s:.4g} s on")
           + "): stormbound annotate DOC --from THIS_FILE"]
    for s in figures.spouts:
        stats = analysis.components.get(s.name)
        if stats is not None and stats.rate_out:
            out.append(f"{json.dumps(s.name)}: {{rate: {stats.rate_out:.6g}/s}}")
    for b in figures.bolts:
        stats = analysis.components.get(b.name)
        values = []
        threads = next((m.threads for m in model.bolts if m.name == b.name), None) if model is not None else None
        alpha = stats.alpha_for(threads) if stats is not None else None  # asynchronous: the process latency
        if alpha:
            values.append(f"alpha: {alpha * 1000:.6g}ms")
        if stats is not None and stats.sigma is not None:
            values.append(f"sigma: {stats.sigma:.6g}")
        for stream, v in sorted(b.stream_sigma.items()):
            if declared is None or stream in declared.get(b.name, set()):
                values.append(f"sigma.{stream}: {v:.6g}")
        if values:
            out.append(f"{json.dumps(b.name)}: {{{', '.join(values)}}}")
    return ("\n".join(out) + "\n").encode()


def analyze_storm_run(args: argparse.Namespace,
                      format_analysis: Callable[[Analysis, Comparison | None], str]) -> int:
    """`analyze RUNDIR` / `compare RUNDIR` of a folder `record` or `import metrics` wrote (`format_analysis`:
    analyze's report of the figures and the comparison, handed in so that neither module imports the other)."""
    from app.core.topology import unannotated_problems
    from app.measure.model_vs_measured import calibrate, compare
    from app.measure.storm_figures import model_now, model_of_run, storm_run_figures
    from app.measure.storm_run import StormRunError

    calibrate_to = getattr(args, "calibrate", None)
    if calibrate_to:
        check_output_file(args, "--calibrate", calibrate_to)
    if getattr(args, "report", None):
        from app.cli.report import REPORT_SUFFIXES, check_output

        check_output(args, "--report", args.report, REPORT_SUFFIXES, "report")
    try:
        figures, analysis = storm_run_figures(str(Path(args.log).resolve()), None if args.bin == 1.0 else args.bin,
                                              args.growth_floor)
    except StormRunError as err:
        raise UsageError(str(err)) from None
    own = Path(args.log) / RUN_TOPOLOGY
    if getattr(args, "topology", None):
        topo: Topology | None = read_topology(args.topology)
        _refuse_another_topology(args, topo)
    else:
        topo = read_topology(str(own)) if own.is_file() else model_of_run(str(args.log))
    comparison: Comparison | None = None
    now = {}
    if topo is not None and not unannotated_problems(topo):
        comparison = compare(topo, analysis)
        now = model_now(topo, figures)
        for name, m in now.items():  # a measured queue above the bound the model proves disagrees with it
            stats = analysis.components.get(name)
            bolt = next((b for b in figures.bolts if b.name == name), None)
            if m.queue_bound is not None and stats is not None and bolt is not None and bolt.growth_from == "metrics" \
                    and stats.series and max(q for _, q in stats.series) > m.queue_bound:
                figures.notes.append(f"{name}: its receive queues held {max(q for _, q in stats.series):.4g} tuples, "
                                     f"above the {m.queue_bound:.4g} the model proves at the measured figures")
    elif topo is not None:
        analysis.notes.append("the topology has unannotated values: calibrate it with --calibrate OUT.yaml and "
                              "`annotate DOC --from OUT.yaml`")
    if calibrate_to:
        if calibrate_to.endswith((".yaml", ".yml")):
            data = timings_yaml(figures, analysis, topo)
        elif topo is None:
            raise UsageError("--calibrate OUT.storm.json needs the topology: give --topology DOC, or write a "
                             "timings file (OUT.yaml)")
        else:
            data = calibrate(topo, analysis).to_json_bytes()
        write_output_file(args, "--calibrate", calibrate_to, data)
    if getattr(args, "report", None):
        _report(args, analysis, comparison, topo, format_storm_figures(figures, now))
    disagreeing = [] if comparison is None else [b.bolt for b in comparison.bolts if b.agrees is False]
    fail = bool(getattr(args, "fail_on_disagreement", False) and disagreeing)
    if args.json:
        out: dict[str, Any] = {"storm_run": figures.model_dump(mode="json"), "analysis": analysis.model_dump(),
                               "model_now": {k: v.model_dump() for k, v in now.items()}}
        if comparison is not None:
            out["comparison"] = comparison.model_dump(exclude={"calibrated"})
            out["disagreeing"] = disagreeing
        print_result(args.command if args.command in ("analyze", "compare") else "analyze", out)
    else:
        print(format_storm_figures(figures, now))
        print()
        print(format_analysis(analysis, comparison))
        for path in (calibrate_to, getattr(args, "report", None)):
            if path:
                print(f"wrote {one_line(str(path))}")
        if fail:
            print(f"--fail-on-disagreement: model and measurement disagree on {', '.join(disagreeing)}")
    return EXIT_FOUND if fail else EXIT_OK


def _refuse_another_topology(args: argparse.Namespace, topo: Topology | None) -> None:
    """--topology DOC of another topology than the one recorded (compared with the first successful poll): exit 2
    naming the names that differ."""
    from app.measure.storm_run import components_mismatch, read_polls

    first = next((p for p in read_polls(args.log)[0] if p.ok), None)
    wrong = None if first is None or topo is None else components_mismatch(topo, first)
    if wrong is not None:
        raise UsageError(f"--topology {one_line(args.topology)}: {wrong}: give the document of the recorded "
                         "topology", field="--topology")


def _report(args: argparse.Namespace, analysis: Analysis, comparison: Comparison | None, topo: Topology | None,
            storm_text: str) -> None:
    from app.cli.report import queue_plots, write_output
    from app.measure.report import Section, render_report

    why = "not checked: a Storm UI recording has counts, not per-tuple events"
    text = render_report(analysis, comparison, queue_plots(analysis, comparison),
                         Section(title="Reliability", reason=why), Section(title="Pattern matches", reason=why),
                         title=(topo.name if topo is not None else Path(args.log).name),
                         notes=storm_text.splitlines(), source=args.log)
    write_output(args, "--report", Path(args.report), text.encode("utf-8"))
