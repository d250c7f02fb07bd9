"""`stormbound run | analyze | reliability | compare`: measured runs, on Spark or in this process.

`run` and large logs go to Spark, in the Spark host process (app.runs.client); small logs
are analysed and checked here (`--engine`, app.runs.engine_choice). This module only parses
arguments, prints and writes files. Missing Java or pyspark, or Spark out of memory ->
exit 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.core.topology import Problem, Topology, TopologyError


def _usage(message: str) -> Exception:
    from app.cli import UsageError

    return UsageError(message)


def _host(args: argparse.Namespace, why: str = ""):
    from app.runs.client import SparkHost
    from app.runs.engine_choice import EngineError, spark_host_env
    from app.runs.session import DEFAULT_MASTER, SPARK_MASTER_ENV, SparkUnavailable

    master = args.master or os.environ.get(SPARK_MASTER_ENV) or DEFAULT_MASTER
    try:
        env = spark_host_env(master, getattr(args, "driver_memory", None), getattr(args, "conf", None))
    except EngineError as err:
        raise _usage(str(err)) from None
    host = SparkHost(master=master, env=env)
    try:
        host.start()
    except SparkUnavailable as err:
        if why:
            raise _usage(f"Spark: {err} (this log needs Spark: {why}; --engine local reads it in this "
                         f"process instead)") from None
        raise _usage(f"Spark: {err}") from None
    return host


def _progress(quiet: bool):
    def show(fraction: float, message: str) -> None:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r{fraction * 100:5.1f}%  {message:<60}")
            sys.stderr.flush()
    return show


def _call(host, op: str, quiet: bool, **params: Any) -> dict[str, Any]:
    from app.runs.client import HostError

    try:
        return host.request(op, on_progress=_progress(quiet), **params)
    except HostError as err:
        if err.kind == "input":
            raise TopologyError([Problem("", str(err))]) from None
        if err.kind == "cancelled":
            raise _usage(str(err)) from None
        from app.runs.engine_choice import is_out_of_memory, out_of_memory_advice

        if is_out_of_memory(str(err), *getattr(host, "_stderr_tail", [])):
            raise _usage(out_of_memory_advice(host.master, host.env)) from None
        raise RuntimeError(str(err)) from None
    finally:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write("\n")


def apply_parallelism(topo: Topology, items: list[str]) -> Topology:
    """`BOLT=N` overrides, or `suggested` for the rate check's smallest bounded parallelism."""
    values: dict[str, int] = {}
    for item in items:
        if item == "suggested":
            from app.core.rates import rate_check

            for name, n in rate_check(topo).suggested_parallelism.items():
                if n is not None:
                    values[name] = n
            continue
        name, sep, number = item.partition("=")
        if not sep or not number.strip().isdigit() or int(number) < 1:
            raise _usage(f"--parallelism {item}: expected BOLT=N with N >= 1, or 'suggested'")
        try:
            topo.bolt_by_name(name)
        except KeyError:
            raise TopologyError([Problem(f"--parallelism {name}", f"no bolt named '{name}'")]) from None
        values[name] = int(number)
    bolts = [b.model_copy(update={"parallelism": values[b.name]}) if b.name in values else b for b in topo.bolts]
    return topo.model_copy(update={"bolts": bolts})


def cmd_run(args: argparse.Namespace) -> int:
    from app.cli import _load, _print_json

    topo = apply_parallelism(_load(args.file), args.parallelism or [])
    if args.duration <= 0:
        raise _usage("--duration must be positive (seconds)")
    for flag, value, least in (("--workers", args.workers, 1), ("--ackers", args.ackers, 0),
                               ("--max-pending", args.max_pending, 1)):
        if value is not None and value < least:
            raise _usage(f"{flag} must be at least {least}")
    if args.timeout <= 0 or args.sample <= 0:
        raise _usage(f"{'--timeout' if args.timeout <= 0 else '--sample'} must be positive (seconds)")
    from app.runs.engine import RunSpec

    spec = RunSpec(topology=topo, duration_s=args.duration, seed=args.seed, workers=args.workers,
                   sample_interval_s=args.sample, acking=args.ackers > 0, message_timeout_s=args.timeout,
                   max_spout_pending=args.max_pending)
    host = _host(args)
    try:
        result = _call(host, "run", args.json, spec=json.loads(spec.model_dump_json()),
                       out=str(Path(args.out).resolve()), format=args.format)
    finally:
        host.close()
    if args.json:
        _print_json(result)
    else:
        print(f"ran {topo.name} for {args.duration:g} s on {result['master']} with {result['workers']} Spark tasks: "
              f"{result['events']} events, {result['queue_samples']} queue samples in {result['out_dir']}")
    return 0


def _run_topology(path: Path, given: str | None) -> Topology | None:
    from app.cli import _load

    if given:
        return _load(given)
    folder = path if path.is_dir() else None
    if folder is not None and (folder / "topology.storm.json").exists():
        return _load(str(folder / "topology.storm.json"))
    return None


def _log_arg(args: argparse.Namespace) -> str:
    """The log as the engines take it: a URI as given (Spark reads it), else an absolute path."""
    from app.runs.frames import is_uri

    return args.log if is_uri(args.log) else str(Path(args.log).resolve())


def _check_exists(args: argparse.Namespace) -> Path:
    from app.runs.frames import is_uri

    path = Path(args.log)
    if not is_uri(args.log) and not path.exists():
        raise TopologyError([Problem("", "no such file or folder")])
    return path


def _choice(args: argparse.Namespace):
    from app.runs.engine_choice import EngineError, choose_engine

    try:
        choice = choose_engine(args.log, args.engine, spark_requested=args.master is not None,
                               max_events=args.local_max_events, max_mb=args.local_max_mb)
    except EngineError as err:
        raise _usage(str(err)) from None
    if not args.json and sys.stderr.isatty():
        where = "this process" if choice.engine == "local" else "Spark"
        sys.stderr.write(f"engine: {where} ({choice.reason})\n")
    return choice


def _analysis(args: argparse.Namespace):
    from app.runs.analysis import Analysis, analyze_path_local

    choice = _choice(args)
    if choice.engine == "local":
        return analyze_path_local(_log_arg(args), args.time_unit, bin_s=args.bin, growth_floor=args.growth_floor)
    host = _host(args, choice.reason)
    try:
        data = _call(host, "analyze", args.json, path=_log_arg(args), time_unit=args.time_unit,
                     bin_s=args.bin, growth_floor=args.growth_floor)
    finally:
        host.close()
    return Analysis.model_validate(data)


def format_analysis(analysis, comparison=None) -> str:
    from app.cli import _table

    lines = [f"{analysis.source}: {analysis.events} events, {analysis.queue_samples} queue samples, "
             f"{analysis.duration_s:.1f} s"]
    rows = [["component", "in/s", "out/s", "α mean", "σ", "bursts", "queue slope/s (95% robust CI)", "verdict"]]
    for c in analysis.components.values():
        q = c.queue
        rows.append([c.name, f"{c.rate_in:.3g}", f"{c.rate_out:.3g}",
                     "-" if c.alpha_mean is None else f"{c.alpha_mean:.3g}",
                     "-" if c.sigma is None else f"{c.sigma:.3g}",
                     "-" if not c.bursts else f"{c.burst_mean:.2f} (max {c.burst_max})",
                     "-" if q is None else f"{q.slope:+.3f} ({q.ci_low:+.3f}..{q.ci_high:+.3f})",
                     "-" if q is None else q.verdict])
    lines += ["", _table(rows)]
    notes = [f"- {c.name}: {c.queue.note}" for c in analysis.components.values() if c.queue is not None and c.queue.note]
    if notes:
        lines += [""] + notes
    if comparison is not None:
        rows = [["bolt", "model", "growth/s annotated", "predicted at measured", "measured slope", "agrees"]]
        for b in comparison.bolts:
            rows.append([b.bolt, b.model_status, f"{b.model_growth:.3g}",
                         "-" if b.predicted_growth is None else f"{b.predicted_growth:.3g}",
                         "-" if b.measured_slope is None else f"{b.measured_slope:+.3g} ({b.measured_verdict})",
                         {True: "yes", False: "NO", None: "-"}[b.agrees]])
        lines += ["", _table(rows), ""]
        rows = [["component", "parameter", "annotated", "measured"]]
        rows += [[p.component, p.parameter, f"{p.annotated:g}", "-" if p.measured is None else f"{p.measured:.4g}"]
                 for p in comparison.parameters]
        lines += [_table(rows)]
    return "\n".join(lines)


def cmd_analyze(args: argparse.Namespace) -> int:
    from app.cli import _print_json
    from app.runs.compare import calibrate, compare

    path = _check_exists(args)
    topo = _run_topology(path, args.topology)
    analysis = _analysis(args)
    comparison = compare(topo, analysis) if topo is not None else None
    if args.calibrate:
        if topo is None:
            raise _usage("--calibrate needs the topology: give --topology FILE (a run folder has its own)")
        from app.core.formats import save_topology

        save_topology(calibrate(topo, analysis), args.calibrate)
    if args.json:
        out: dict[str, Any] = {"analysis": analysis.model_dump()}
        if comparison is not None:
            out["comparison"] = comparison.model_dump(exclude={"calibrated"})
        _print_json(out)
    else:
        print(format_analysis(analysis, comparison))
        if args.calibrate:
            print(f"wrote {args.calibrate}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    args.calibrate = None
    path = Path(args.log)
    if _run_topology(path, args.topology) is None:
        raise _usage("compare needs the topology: give --topology FILE (a run folder has its own)")
    return cmd_analyze(args)


def _reliability_config(args: argparse.Namespace, path: Path):
    from app.runs.reliability import ReliabilityConfig, run_settings

    settings = run_settings(path)
    config = ReliabilityConfig(**settings)
    if args.topology:
        from app.core.formats import read_json

        data = read_json(args.topology)
        if isinstance(data, dict) and "components" in data:  # Storm style: {components, subscriptions, config}
            config = ReliabilityConfig.from_storm(data, data.get("config"))
        else:
            from app.cli import _load

            config = ReliabilityConfig.from_topology(_load(args.topology), **settings)
    else:
        topo = _run_topology(path, None)
        if topo is not None:
            config = ReliabilityConfig.from_topology(topo, **settings)
    update: dict[str, Any] = {}
    if args.timeout is not None:
        update["message_timeout_s"] = args.timeout
    if args.max_pending is not None:
        update["max_spout_pending"] = args.max_pending
    if args.ackers is not None:
        update["ackers"] = args.ackers
    return ReliabilityConfig.model_validate({**config.model_dump(), **update})


def cmd_reliability(args: argparse.Namespace) -> int:
    from app.cli import _print_json
    from app.runs.reliability import ReliabilityReport

    path = _check_exists(args)
    config = _reliability_config(args, path)
    choice = _choice(args)
    if choice.engine == "local":
        from app.runs.reliability import check_reliability_path_local

        report = check_reliability_path_local(_log_arg(args), config, args.time_unit, limit=args.limit)
    else:
        host = _host(args, choice.reason)
        try:
            data = _call(host, "reliability", args.json, path=_log_arg(args), time_unit=args.time_unit,
                         config=config.model_dump(), limit=args.limit)
        finally:
            host.close()
        report = ReliabilityReport.model_validate(data)
    if args.json:
        _print_json(report.model_dump())
    else:
        print(report.summary())
    return 0 if report.ok else 1


def cmd_connect_server(args: argparse.Namespace) -> int:
    """Run a local Spark Connect server in the foreground until Ctrl+C."""
    from app.runs.connect_server import start_connect_server, stop_connect_server, wait_until_listening
    from app.runs.session import SparkUnavailable

    if not 0 < args.port < 65536:
        raise _usage("--port must be between 1 and 65535")
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    log = open(args.log, "a", encoding="utf-8") if args.log else subprocess.DEVNULL
    server = None
    try:
        server = start_connect_server(args.port, args.master, log=log)
        wait_until_listening(server, args.port)
        print(f"Spark Connect server at sc://localhost:{args.port} (master {args.master}); Ctrl+C stops it", flush=True)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):  # SIGINT too: a background job may ignore it
            signal.signal(signum, interrupt)
        code = server.wait()
        server = None  # exited by itself
        return code
    except SparkUnavailable as err:
        raise _usage(f"Spark: {err}" + ("" if args.log else " (--log FILE keeps the server's output)")) from None
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            stop_connect_server(server)
        if args.log:
            log.close()


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--driver-memory", metavar="SIZE",
                   help="Spark driver memory for a JVM master, e.g. 4g (default $STORMBOUND_SPARK_DRIVER_MEMORY, "
                        "else a quarter of this machine's memory, 1g..8g)")
    p.add_argument("--conf", action="append", metavar="KEY=VALUE",
                   help="a Spark setting for a JVM master (repeatable), e.g. spark.executor.memory=8g")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _log_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", metavar="DIR|LOG", help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log); "
                                                  "or a URI Spark reads (hdfs://, s3a://, ...): a .jsonl, .csv or .parquet log")
    p.add_argument("--topology", help="the topology the log comes from (a run folder has its own)")
    p.add_argument("--time-unit", choices=["s", "ms"], default="s", help="unit of the log's t field")
    p.add_argument("--engine", choices=["auto", "local", "spark"], default="auto",
                   help="auto (default): this process for a small log, Spark for a large one or when --master "
                        "is given; local: always this process (no Java); spark: always Spark")
    p.add_argument("--local-max-events", type=int, metavar="N",
                   help="auto: largest log (records) read in this process (default $STORMBOUND_LOCAL_MAX_EVENTS or 1000000)")
    p.add_argument("--local-max-mb", type=float, metavar="MB",
                   help="auto: largest log on disk (MB) read in this process (default $STORMBOUND_LOCAL_MAX_MB or 200)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a topology on Spark with a synthetic workload and record its event log")
    p.add_argument("file")
    p.add_argument("--duration", type=float, required=True, metavar="S", help="seconds of wall-clock time")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for events, queue samples and run.json")
    p.add_argument("--parallelism", nargs="*", metavar="BOLT=N", help="override bolt parallelism ('suggested' = rate check's)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, help="Spark tasks hosting the components (default: as many as fit)")
    p.add_argument("--sample", type=float, default=0.25, metavar="S", help="queue sampling interval")
    p.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    p.add_argument("--ackers", type=int, default=1, metavar="N",
                   help="topology.acker.executors: 0 = spouts ack at emit, else tuple trees are tracked (default 1)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="S",
                   help="topology.message.timeout.secs: pending trees fail after this (default 30)")
    p.add_argument("--max-pending", type=int, metavar="N", help="topology.max.spout.pending per spout (default none)")
    _common(p)
    p.set_defaults(func=cmd_run, file_args=("file",))

    for name, func, helptext in (("analyze", cmd_analyze, "measured rates, α, σ, bursts and queue growth of a run"),
                                 ("compare", cmd_compare, "model (rate check) versus measured queue growth per bolt")):
        p = sub.add_parser(name, help=helptext)
        _log_options(p)
        p.add_argument("--bin", type=float, default=1.0, metavar="S", help="queue series bin width")
        p.add_argument("--growth-floor", type=float, default=0.05, metavar="X",
                       help="tuples/s a queue must gain to count as growing")
        if name == "analyze":
            p.add_argument("--calibrate", metavar="OUT", help="write the topology with measured parameters (.storm.json)")
        _common(p)
        p.set_defaults(func=func, file_args=("log",))

    p = sub.add_parser("connect-server", help="run a local Spark Connect server (from pyspark) until Ctrl+C")
    p.add_argument("--port", type=int, default=15002, help="gRPC port (default 15002, Spark Connect's own)")
    p.add_argument("--master", default="local[*]", help="the server's Spark master (default local[*])")
    p.add_argument("--log", metavar="FILE", help="append the server's output to FILE")
    p.set_defaults(func=cmd_connect_server, file_args=())

    p = sub.add_parser("reliability", help="check Storm's delivery guarantees over an event log")
    _log_options(p)
    p.add_argument("--timeout", type=float, metavar="S", help="topology.message.timeout.secs (default 30)")
    p.add_argument("--max-pending", type=int, metavar="N", help="topology.max.spout.pending")
    p.add_argument("--ackers", type=int, metavar="N", help="topology.acker.executors (0: trees untracked)")
    p.add_argument("--limit", type=int, default=200, help="violations listed at most")
    _common(p)
    p.set_defaults(func=cmd_reliability, file_args=("log",))
