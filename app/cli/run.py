"""`stormbound run FILE --duration S --out DIR`: run a topology on Spark with a synthetic workload.

Spark work happens in the Spark host process (:mod:`app.spark.client`); this module
only parses arguments, prints and writes files. Missing Java or pyspark -> exit 2
with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from app.cli.common import UsageError, examples, print_result
from app.cli.inputs import read_topology
from app.cli.options import STORM_MAX_INT, bolt_count, number, positive_seconds
from app.cli.spark_jobs import add_spark_options, log
from app.core.topology import Problem, Topology, TopologyError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `run` to the `stormbound` command line."""
    p = sub.add_parser(
        "run", help="run a topology on Spark with a synthetic workload and record its event log",
        description="Run a topology on Spark (spouts emit at their rate in tuples/s, bolts take α seconds per batch) "
                    "and record its event log and queue samples in a run folder.",
        epilog=examples("stormbound run models/simple-DIA-cfg-1.storm.json --duration 30 --out runs/cfg1"))
    p.add_argument("file", help="a .storm.json document or a D-VerT JSON configuration")
    p.add_argument("--duration", type=positive_seconds, required=True, metavar="S",
                   help="wall-clock time (seconds, or with a unit: 30s, 2min)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for events, queue samples and run.json "
                                                               "(a folder holding a run already: only with --force)")
    p.add_argument("--force", action="store_true", help="replace the run in an --out folder that holds one")
    p.add_argument("--parallelism", nargs="*", metavar="BOLT=N",
                   help="override bolt parallelism ('suggested' = rate check's)")
    p.add_argument("--seed", type=number(int, 0, 2**63 - 1), default=1,
                   help="random seed of the synthetic workload (default 1)")
    p.add_argument("--workers", type=number(int, 1, 100_000),
                   help="Spark tasks hosting the components (default: as many as fit)")
    p.add_argument("--sample", type=positive_seconds, default=0.25, metavar="S",
                   help="queue sampling interval (seconds or with a unit: 250ms; default 0.25 s)")
    p.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="event log format (default jsonl)")
    p.add_argument("--ackers", type=number(int, 0, STORM_MAX_INT), metavar="N",
                   help="topology.acker.executors: 0 = spouts ack at emit, else tuple trees are tracked "
                        "(default: the document's Storm settings, else 1)")
    p.add_argument("--timeout", type=positive_seconds, metavar="S",
                   help="topology.message.timeout.secs: pending trees fail after this "
                        "(default: the document's Storm settings, else 30)")
    p.add_argument("--max-pending", type=number(int, 1, STORM_MAX_INT), metavar="N",
                   help="topology.max.spout.pending per spout (default: the document's Storm settings, else none)")
    p.add_argument("--kill", type=kill_option, action="append", metavar="BOLT@TIME[/DOWN]",
                   help="kill the bolt's task TIME after the start for DOWN (times with a unit like --duration; "
                        "DOWN defaults to the document's min_reboot_time, else 1 s): its queue, batch and the tuples "
                        "reaching it while down are lost, and reliable spouts replay the failed trees (repeatable)")
    add_spark_options(p)
    p.set_defaults(func=cmd_run, file_args=("file",))


def kill_option(text: str) -> tuple[str, float, float | None]:
    """argparse type of `--kill BOLT@TIME[/DOWN]` (app.spark.run_job.parse_kill)."""
    from app.spark.run_job import parse_kill

    try:
        return parse_kill(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


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
        name, count = bolt_count(item, "BOLT=N with N >= 1, or 'suggested'")
        try:
            topo.bolt_by_name(name)
        except KeyError:
            raise TopologyError([Problem(f"--parallelism {name}", f"no bolt named '{name}'")]) from None
        values[name] = count
    bolts = [b.model_copy(update={"parallelism": values[b.name]}) if b.name in values else b for b in topo.bolts]
    return topo.model_copy(update={"bolts": bolts})


RUN_FILES = ("events.jsonl", "events.csv", "queues.jsonl", "queues.csv", "topology.storm.json", "run.json")


def check_run_folder(args: argparse.Namespace) -> None:
    """--out DIR through the one writer's checks, file by file (app/cli/outputs.check_output_file): not a
    file, no input of the command among what a run writes there, and a folder that holds a run
    already only with --force."""
    from app.cli.outputs import check_output_file
    from app.core.topology import one_line

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {one_line(args.out)}: is a file; give a folder for the run", field="--out")
    if not out.is_dir():
        return  # a new folder: created by the run
    for name in RUN_FILES:
        if (out / name).exists():
            check_output_file(args, "--out", str(out / name))


def cmd_run(args: argparse.Namespace) -> int:
    """Run FILE on Spark for --duration seconds; the event log goes to --out."""
    check_run_folder(args)
    topo = apply_parallelism(read_topology(args.file), args.parallelism or [])
    from app.core.topology import require_annotated

    require_annotated(topo)
    from app.spark.run_job import windows_problem

    if windows_problem(topo) is not None:
        raise UsageError(str(windows_problem(topo)))
    storm = topo.storm  # Storm's settings kept from Flux or the Storm UI, unless given here
    args.workers = args.workers if args.workers is not None else storm.workers
    args.ackers = args.ackers if args.ackers is not None else \
        (storm.acker_executors if storm.acker_executors is not None else 1)
    args.timeout = args.timeout if args.timeout is not None else float(storm.message_timeout)
    args.max_pending = args.max_pending if args.max_pending is not None else storm.max_spout_pending
    if args.duration <= 0:
        raise UsageError("--duration must be positive (seconds)")
    for flag, value, least in (("--workers", args.workers, 1), ("--ackers", args.ackers, 0),
                               ("--max-pending", args.max_pending, 1)):
        if value is not None and value < least:
            raise UsageError(f"{flag} must be at least {least}")
    if args.timeout <= 0 or args.sample <= 0:
        raise UsageError(f"{'--timeout' if args.timeout <= 0 else '--sample'} must be positive (seconds)")
    from app.spark.run_job import RunSpec, plan_kills

    try:
        kills = plan_kills(topo, args.kill or [], args.duration)
    except ValueError as err:
        raise UsageError(f"--kill {err}", field="--kill") from None
    spec = RunSpec(topology=topo, duration_s=args.duration, seed=args.seed, workers=args.workers,
                   sample_interval_s=args.sample, acking=args.ackers > 0, message_timeout_s=args.timeout,
                   max_spout_pending=args.max_pending, kills=kills,
                   replay=getattr(topo.settings, "replay", None) or "paced")
    from app.cli import spark_jobs  # through the module: tests stand in for the host there
    from app.spark.session import DEFAULT_MASTER, SPARK_MASTER_ENV, shared_connect_url

    # a Spark Connect server: attach to this user's run session there, whose Python workers are up already
    master = shared_connect_url(args.master or os.environ.get(SPARK_MASTER_ENV) or DEFAULT_MASTER)
    began = time.perf_counter()
    host = spark_jobs.start_spark_host(master, args.driver_memory, args.conf)
    host_start = time.perf_counter() - began  # recorded with the run's phases (run.json, docs/spark-runs.md)
    log.debug("Spark host started in %.2f s", host_start)
    try:
        result = spark_jobs.call_spark_host(host, "run", spark_jobs.quiet(args),
                                            spec=json.loads(spec.model_dump_json()),
                                            out=str(Path(args.out).resolve()), format=args.format,
                                            host_start_s=host_start)
    finally:
        closing = time.perf_counter()
        host.close()
        log.debug("Spark host stopped in %.2f s", time.perf_counter() - closing)
    log.info("run phases (s): %s", ", ".join(f"{k} {v:.2f}" for k, v in result.get("phases", {}).items()))
    if args.json:
        print_result("run", result)
    else:
        print(f"ran {topo.name} for {args.duration:g} s on {result['master']} with {result['workers']} Spark tasks: "
              f"{result['events']} events, {result['queue_samples']} queue samples in {result['out_dir']}")
    return 0
