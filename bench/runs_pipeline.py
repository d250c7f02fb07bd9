"""Throughput of the measured-runs pipeline: analysis and reliability check on local[2].

Generates a synthetic event log of `--events` events (default 10 million) once, as
Parquet in a temporary folder, with Spark: every root tuple r (1000 roots/s) is emitted
by spout S, taken by bolt A, which emits two anchored children and acks; bolt B takes
and acks each child; the spout acks the root. About 1 % of B's children fail (the root
then fails), 0.5 % are never acked (the root times out), so the reliability check has
violations to find; B's queue grows slowly. Then it times, on local[2]:

* `analyze` (app.measure.analysis) over the Parquet log,
* `check_reliability` (app.measure.reliability) over the same log,

and, in the same run, the single-process pure-Python twins (`analyze_local`,
`check_reliability_local`) over the first `--baseline-events` events (they hold the log
in memory as pydantic objects, so the whole log would not fit; both are linear in the
events, so events/s compare). Prints a markdown table; `--json` for machine output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.spark.session import build_session  # noqa: E402  # after the sys.path line

EVENTS_PER_ROOT = 10


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--baseline-events", type=int, default=400_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from app.measure.analysis import analyze, analyze_local
    from app.measure.eventlog import Event, QueueSample
    from app.measure.reliability import ReliabilityConfig, check_reliability, check_reliability_local
    from app.spark.frames import load_frames

    spark = build_session(args.master, "stormbound-bench", {"spark.driver.memory": "3g",
                                                            "spark.sql.shuffle.partitions": "8"})
    folder = Path(tempfile.mkdtemp(prefix="stormbound-bench-"))
    config = ReliabilityConfig(message_timeout_s=30, max_spout_pending=100_000, ackers=1,
                               subscribers={"S": ["A"], "A": ["B"]})
    results: dict[str, dict[str, float]] = {}
    try:
        roots = args.events // EVENTS_PER_ROOT
        began = time.perf_counter()
        generate(spark, roots, folder)
        gen_s = time.perf_counter() - began

        events, queues = load_frames(spark, folder, check=False)
        n = events.count()
        began = time.perf_counter()
        analysis = analyze(spark, events, queues)
        results["analysis (Spark, local[2])"] = {"events": n, "seconds": time.perf_counter() - began}
        began = time.perf_counter()
        report = check_reliability(spark, events, config)
        results["reliability (Spark, local[2])"] = {"events": n, "seconds": time.perf_counter() - began}

        base_roots = args.baseline_events // EVENTS_PER_ROOT
        rows = (events.where(events.t < base_roots / 1000.0).orderBy("t").collect())
        began = time.perf_counter()
        sample = [Event(t=r["t"], ev=r["ev"], comp=r["comp"], task=r["task"], tuple=r["tuple"], msg=r["msg"],
                        anchors=r["anchors"], reason=r["reason"]) for r in rows]
        qrows = queues.where(queues.t < base_roots / 1000.0).collect()
        qsample = [QueueSample(t=r["t"], comp=r["comp"], task=r["task"], queue=r["queue"]) for r in qrows]
        build_s = time.perf_counter() - began
        began = time.perf_counter()
        local_analysis = analyze_local(sample, qsample)
        results["analysis (pure Python, 1 process)"] = {"events": len(sample), "seconds": time.perf_counter() - began}
        began = time.perf_counter()
        local_report = check_reliability_local(sample, config)
        results["reliability (pure Python, 1 process)"] = {"events": len(sample),
                                                           "seconds": time.perf_counter() - began}
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)

    for name, row in results.items():
        row["events_per_s"] = row["events"] / row["seconds"]
        if "pure Python" in name:  # the same figure counting the time to build the in-memory log
            row["events_per_s_with_build"] = row["events"] / (row["seconds"] + build_s)
    out = {"generated_s": gen_s, "baseline_build_s": build_s, "results": results,
           "violations": report.counts, "baseline_violations": local_report.counts,
           "B_slope": analysis.components["B"].queue.slope if analysis.components["B"].queue else None,
           "baseline_B_alpha": local_analysis.components["B"].alpha_mean}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"generated {args.events:,} events as Parquet in {gen_s:.1f} s")
    print(f"pure-Python baseline: {build_s:.1f} s to build its {len(sample):,} Event objects (not in 'seconds')")
    print("| step | events | seconds | events/s | events/s incl. building the log |")
    print("|---|---:|---:|---:|---:|")
    for name, row in results.items():
        with_build = row.get("events_per_s_with_build")
        print(f"| {name} | {int(row['events']):,} | {row['seconds']:.1f} | {row['events_per_s']:,.0f} | "
              + ("-" if with_build is None else f"{with_build:,.0f}") + " |")
    print(f"violations found (Spark, full log): {report.counts}")
    print(f"violations found (Python, first {len(sample):,} events): {local_report.counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
