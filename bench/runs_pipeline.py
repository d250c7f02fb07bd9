"""Throughput of the measured-runs pipeline: analysis and reliability check, Spark against one process.

Generates a synthetic event log of `--events` events (default 10 million) once, as
Parquet in a temporary folder, with Spark: every root tuple r (1000 roots/s) is emitted
by spout S, taken by bolt A, which emits two anchored children and acks; bolt B takes
and acks each child; the spout acks the root. About 1 % of B's children fail (the root
then fails), 0.5 % are never acked (the root times out), so the reliability check has
violations to find; B's queue grows slowly. (`--log DIR` reuses a folder written before.)

Then, over that one Parquet log:

* Spark: a Spark host started exactly as `stormbound analyze/reliability --master M` starts
  it (app.cli.spark_jobs.start_spark_host: same environment, driver memory and settings, no tuning of our
  own), and the same requests (`analyze`, `reliability`) the CLI sends. Reported: wall
  time, CPU time of the JVM, and the JVM's peak resident memory (VmHWM).
* one process: the embedded engine (`--engine embedded`, DuckDB: app.measure.analysis.analyze_path_local,
  app.measure.reliability.check_reliability_path_local) in a child process, over the same
  Parquet log. Reported: wall and CPU time and peak resident memory. (bench/engines_bench.py
  compares it with the code before it, end to end through the CLI.)
* a 10-event log: `stormbound reliability` with the default engine (no JVM) and with
  `--engine spark`, end to end as a user runs it.
* `--cli`: also `stormbound analyze` and `stormbound reliability` end to end on the big log
  with `--master M` and nothing else (the defaults a user gets).

Prints a markdown table; `--json` for machine output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVENTS_PER_ROOT = 10
CONFIG = {"message_timeout_s": 30, "max_spout_pending": 100_000, "ackers": 1,
          "subscribers": {"S": ["A"], "A": ["B"]}}


def generate(spark, roots: int, folder: Path) -> tuple[Path, Path]:
    """Write events.parquet and queues.parquet for `roots` roots (10 events each) with Spark only."""
    from pyspark.sql import functions as F

    r = spark.range(roots).withColumnRenamed("id", "r")
    t0 = F.col("r") / F.lit(1000.0)
    root = F.concat(F.lit("r"), F.col("r").cast("string"))
    h = F.abs(F.hash("r")) % 1000

    def child(k: int) -> Any:
        return F.concat(root, F.lit(f".{k}"))

    rows = F.array(
        F.struct(t0.alias("t"), F.lit("spout_emit").alias("ev"), F.lit("S").alias("comp"),
                 F.lit(1).cast("long").alias("task"), root.alias("tuple"), root.alias("msg"),
                 F.lit(None).cast("array<string>").alias("anchors"), F.lit(None).cast("string").alias("reason")),
        F.struct((t0 + 0.010).alias("t"), F.lit("take").alias("ev"), F.lit("A").alias("comp"),
                 F.lit(2).cast("long").alias("task"), root.alias("tuple"), F.lit(None).cast("string").alias("msg"),
                 F.lit(None).cast("array<string>").alias("anchors"), F.lit(None).cast("string").alias("reason")),
        *[F.struct((t0 + 0.020).alias("t"), F.lit("bolt_emit").alias("ev"), F.lit("A").alias("comp"),
                   F.lit(2).cast("long").alias("task"), child(k).alias("tuple"),
                   F.lit(None).cast("string").alias("msg"), F.array(root).alias("anchors"),
                   F.lit(None).cast("string").alias("reason")) for k in (0, 1)],
        F.struct((t0 + 0.021).alias("t"), F.lit("bolt_ack").alias("ev"), F.lit("A").alias("comp"),
                 F.lit(2).cast("long").alias("task"), root.alias("tuple"), F.lit(None).cast("string").alias("msg"),
                 F.lit(None).cast("array<string>").alias("anchors"), F.lit(None).cast("string").alias("reason")),
        *[F.struct((t0 + 0.030 + 0.005 * k + (F.col("r") % 7) * 0.001).alias("t"), F.lit("take").alias("ev"),
                   F.lit("B").alias("comp"), F.lit(3 + k).cast("long").alias("task"), child(k).alias("tuple"),
                   F.lit(None).cast("string").alias("msg"), F.lit(None).cast("array<string>").alias("anchors"),
                   F.lit(None).cast("string").alias("reason")) for k in (0, 1)],
        *[F.struct((t0 + 0.050 + 0.005 * k).alias("t"),
                   F.when((h < 10) & F.lit(k == 1), "bolt_fail").otherwise("bolt_ack").alias("ev"),
                   F.lit("B").alias("comp"), F.lit(3 + k).cast("long").alias("task"), child(k).alias("tuple"),
                   F.lit(None).cast("string").alias("msg"), F.lit(None).cast("array<string>").alias("anchors"),
                   F.lit(None).cast("string").alias("reason")) for k in (0, 1)],
        F.struct(F.when(h.between(10, 14), t0 + 45.0).otherwise(t0 + 0.070).alias("t"),
                 F.when(h < 15, "spout_fail").otherwise("spout_ack").alias("ev"), F.lit("S").alias("comp"),
                 F.lit(1).cast("long").alias("task"), F.lit(None).cast("string").alias("tuple"), root.alias("msg"),
                 F.lit(None).cast("array<string>").alias("anchors"),
                 F.when(h < 10, "FAILED").when(h < 15, "TIMEOUT").alias("reason")),
    )
    events = r.select(F.explode(rows).alias("e")).select("e.*")
    # the 0.5 % timed-out roots: drop B's ack of the second child (h in 10..14)
    events = events.where(~((F.col("ev") == "bolt_ack") & (F.col("comp") == "B") & (F.col("task") == 4)
                            & F.col("tuple").rlike(r"^r\d+\.1$")
                            & (F.abs(F.hash(F.regexp_extract("tuple", r"^r(\d+)", 1).cast("long"))) % 1000)
                            .between(10, 14)))
    events_path = folder / "events.parquet"
    events.write.mode("overwrite").parquet(str(events_path))
    span = roots / 1000.0
    samples = spark.range(int(span * 10)).select(
        (F.col("id") / 10.0).alias("t"), F.lit("B").alias("comp"), F.lit(3).cast("long").alias("task"),
        (F.col("id") / 100).cast("long").alias("queue"))
    queues_path = folder / "queues.parquet"
    samples.write.mode("overwrite").parquet(str(queues_path))
    return events_path, queues_path


# ---- measuring processes --------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        children = Path(f"/proc/{current}/task/{current}/children")
        try:
            kids = [int(x) for x in children.read_text().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


def _java_of(pid: int) -> int | None:
    for child in _descendants(pid):
        try:
            if b"java" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]:
                return child
        except OSError:
            continue
    return None


def _peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _load() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return float("nan")


def spark_steps(master: str, log: Path, steps: list[str]) -> dict[str, dict[str, Any]]:
    """Time `analyze` and `reliability` through a Spark host started as the CLI starts it."""
    from app.cli.spark_jobs import start_spark_host

    out: dict[str, dict[str, Any]] = {}
    began = time.perf_counter()
    host = start_spark_host(master)
    attach = time.perf_counter() - began
    java = _java_of(host.process.pid)
    from app.spark.memory import driver_memory_of

    out["attach"] = {"seconds": attach, "driver_memory": driver_memory_of(host.env), "load": _load()}
    try:
        for step in steps:
            cpu0 = _cpu_s(java) if java else None
            began = time.perf_counter()
            if step == "analysis":
                result = host.request("analyze", path=str(log), time_unit="s", bin_s=1.0, growth_floor=0.05)
                extra = {"B_slope": result["components"]["B"]["queue"]["slope"], "events": result["events"]}
            else:
                result = host.request("reliability", path=str(log), time_unit="s", config=CONFIG, limit=200)
                extra = {"violations": result["counts"], "events": result["events"]}
            seconds = time.perf_counter() - began
            cpu1 = _cpu_s(java) if java else None
            out[step] = {"seconds": seconds, "cpu_s": None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
                         "peak_mb": _peak_rss_mb(java) if java else None, "load": _load(), **extra}
    finally:
        host.close()
    return out


_BASELINE = r"""
import json, resource, sys, time
from app.measure.analysis import analyze_path_local
from app.measure.reliability import ReliabilityConfig, check_reliability_path_local
step, path, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
began, cpu = time.perf_counter(), time.process_time()
if step == "analysis":
    a = analyze_path_local(path)
    extra = {"B_slope": a.components["B"].queue.slope, "events": a.events}
else:
    r = check_reliability_path_local(path, ReliabilityConfig(**config))
    extra = {"violations": r.counts, "events": r.events}
print(json.dumps({"seconds": time.perf_counter() - began, "cpu_s": time.process_time() - cpu,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))
"""


def baseline_step(step: str, log: Path) -> dict[str, Any]:
    """The in-process engine over the whole Parquet log, in a child process of its own (its memory alone)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    done = subprocess.run([sys.executable, "-c", _BASELINE, step, str(log), json.dumps(CONFIG)], capture_output=True,
                          text=True, env=env, check=True)
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["load"] = _load()
    return row


def cli(args: list[str]) -> dict[str, Any]:
    """A `stormbound` command end to end, as a user runs it."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, env=env)
    return {"seconds": time.perf_counter() - began, "exit": done.returncode,
            "stderr": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "", "load": _load()}


TEN_EVENTS = [
    {"t": 0.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "r1", "msg": "m1"},
    {"t": 0.01, "ev": "take", "comp": "A", "task": 2, "tuple": "r1"},
    {"t": 0.02, "ev": "bolt_emit", "comp": "A", "task": 2, "tuple": "c1", "anchors": ["r1"]},
    {"t": 0.021, "ev": "bolt_ack", "comp": "A", "task": 2, "tuple": "r1"},
    {"t": 0.03, "ev": "take", "comp": "B", "task": 3, "tuple": "c1"},
    {"t": 0.04, "ev": "bolt_ack", "comp": "B", "task": 3, "tuple": "c1"},
    {"t": 0.05, "ev": "spout_ack", "comp": "S", "task": 1, "msg": "m1"},
    {"t": 1.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "r2", "msg": "m2"},
    {"t": 1.01, "ev": "take", "comp": "A", "task": 2, "tuple": "r2"},
    {"t": 1.02, "ev": "bolt_ack", "comp": "A", "task": 2, "tuple": "r2"},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--log", type=Path, help="a folder written by an earlier run (events.parquet, queues.parquet)")
    parser.add_argument("--keep", type=Path, help="write the generated log here and keep it")
    parser.add_argument("--only", choices=["spark", "baseline", "tiny", "cli"], action="append",
                        help="run only these parts (repeatable; default: spark, baseline, tiny)")
    parser.add_argument("--cli", action="store_true", help="also run the CLI end to end on the big log")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the results as JSON to this file, after every part")
    args = parser.parse_args()
    parts = set(args.only or ["spark", "baseline", "tiny"] + (["cli"] if args.cli else []))

    out: dict[str, Any] = {"master": args.master, "load_start": _load()}
    folder = args.log
    temporary = None
    if folder is None:
        from app.spark.session import build_session

        folder = args.keep or Path(tempfile.mkdtemp(prefix="stormbound-bench-"))
        temporary = None if args.keep else folder
        folder.mkdir(parents=True, exist_ok=True)
        spark = build_session(args.master, "stormbound-bench-generate")
        began = time.perf_counter()
        generate(spark, args.events // EVENTS_PER_ROOT, folder)
        out["generated_s"] = time.perf_counter() - began
        spark.stop()
    log = folder.resolve()
    from app.measure.logstream import count_records, log_bytes

    out["records"] = count_records(log)
    out["parquet_mb"] = log_bytes(log) / 1e6
    def save() -> None:
        if args.out is not None:
            args.out.write_text(json.dumps(out, indent=2))

    try:
        if "spark" in parts:
            out["spark"] = spark_steps(args.master, log, ["analysis", "reliability"])
            save()
        if "baseline" in parts:
            out["baseline"] = {}
            for step in ("analysis", "reliability"):
                out["baseline"][step] = baseline_step(step, log)
                save()
        if "tiny" in parts:
            tiny = Path(tempfile.mkdtemp(prefix="stormbound-tiny-")) / "ten.jsonl"
            tiny.write_text("".join(json.dumps(r) + "\n" for r in TEN_EVENTS))
            out["tiny"] = {"auto": cli(["reliability", str(tiny)]),
                           "spark": cli(["reliability", str(tiny), "--engine", "spark", "--master", args.master])}
            shutil.rmtree(tiny.parent, ignore_errors=True)
            save()
        if "cli" in parts:
            out["cli"] = {"analyze": cli(["analyze", str(log), "--master", args.master, "--json"])}
            save()
            out["cli"]["reliability"] = cli(["reliability", str(log), "--master", args.master, "--json",
                                             "--timeout", "30", "--max-pending", "100000"])
            save()
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    out["load_end"] = _load()
    save()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{out['records']:,} records ({out['parquet_mb']:.0f} MB of Parquet), master {args.master}, "
          f"load average {out['load_start']:.1f} at the start")
    print("| step | engine | events | seconds | events/s | CPU s | events per CPU s | peak memory (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for engine, key in (("Spark " + args.master, "spark"), ("one process (streaming Parquet)", "baseline")):
        for step in ("analysis", "reliability"):
            row = out.get(key, {}).get(step)
            if not row:
                continue
            n = row["events"]
            cpu = row.get("cpu_s")
            print(f"| {step} | {engine} | {n:,} | {row['seconds']:.1f} | {n / row['seconds']:,.0f} | "
                  + ("-" if cpu is None else f"{cpu:.1f}") + " | "
                  + ("-" if not cpu else f"{n / cpu:,.0f}") + " | "
                  + ("-" if row.get("peak_mb") is None else f"{row['peak_mb']:,.0f}") + " |")
    if "spark" in out:
        print(f"Spark host attach: {out['spark']['attach']['seconds']:.1f} s, driver memory "
              f"{out['spark']['attach']['driver_memory']}")
        print(f"violations (Spark): {out['spark']['reliability']['violations']}")
    if "baseline" in out:
        print(f"violations (one process): {out['baseline']['reliability']['violations']}")
    if "tiny" in out:
        print(f"`stormbound reliability` on 10 events: default engine {out['tiny']['auto']['seconds']:.2f} s "
              f"(exit {out['tiny']['auto']['exit']}), --engine spark {out['tiny']['spark']['seconds']:.1f} s "
              f"(exit {out['tiny']['spark']['exit']})")
    if "cli" in out:
        for name, row in out["cli"].items():
            print(f"`stormbound {name} LOG --master {args.master}`: {row['seconds']:.1f} s, exit {row['exit']}"
                  + (f" ({row['stderr']})" if row["exit"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
