"""The analysis of a run as Spark jobs over its events and queue-sample DataFrames.

The same definition as the one-process analysis of app/measure/analysis.py (whose models
it fills and whose `finish_queues` fits the queue trends); the Spark host
(app/spark/host.py) runs it for logs too large for one process or stored where Spark
reads them. tests/spark/test_engines_agree.py checks that both give the same figures.
"""

from __future__ import annotations

from collections import defaultdict

from app.measure.analysis import Analysis, ComponentStats, finish_queues


def analyze(spark, events, queues, bin_s: float = 1.0, growth_floor: float = 0.05, burst_gap: float = 0.005,
            source: str = "") -> Analysis:
    """The analysis as Spark jobs over the events and queue-sample DataFrames (see _analyze);
    running out of memory is reported as such (app.measure.engine_choice.raise_if_out_of_memory)."""
    from app.measure.engine_choice import raise_if_out_of_memory

    try:
        return _analyze(spark, events, queues, bin_s, growth_floor, burst_gap, source)
    except Exception as err:
        raise_if_out_of_memory(err, spark)
        raise


def _analyze(spark, events, queues, bin_s: float, growth_floor: float, burst_gap: float, source: str) -> Analysis:
    """The analysis as Spark jobs over the events and queue-sample DataFrames.

    Four jobs, each reading only the columns it needs and collecting a few rows: counts and
    time span per (component, task, kind), with the log's validity check (frames.checked_job);
    α per taken tuple, one aggregation keyed by
    (component, tuple) (an emit counts for each tuple it is anchored to) then per component;
    bursts per spout task (a window over the spout emits only); the binned queue series.
    Nothing is cached: a log larger than memory streams through each job."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from app.spark.frames import check_columns, checked_job

    ev = F.col("ev")
    kinds = ("spout_emit", "bolt_emit", "take", "bolt_ack", "bolt_fail", "spout_ack", "spout_fail")
    per_task = checked_job(events, lambda: events.groupBy("comp", "task").agg(
        F.count("*").alias("n"), F.min("t").alias("a"), F.max("t").alias("b"),
        *[F.sum((ev == k).cast("long")).alias(k) for k in kinds], *check_columns()).collect())
    qspan = queues.agg(F.min("t").alias("a"), F.max("t").alias("b"), F.count("*").alias("n")).collect()[0]
    starts = [r["a"] for r in per_task if r["a"] is not None] + ([qspan["a"]] if qspan["a"] is not None else [])
    ends = [r["b"] for r in per_task if r["b"] is not None] + ([qspan["b"]] if qspan["b"] is not None else [])
    start, end = (min(starts), max(ends)) if starts else (0.0, 0.0)
    duration = max(end - start, 1e-9)
    n_events = sum(int(r["n"]) for r in per_task)

    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    tasks: dict[str, set] = defaultdict(set)
    for r in per_task:
        tasks[r["comp"]].add(r["task"])
        for k in kinds:
            totals[r["comp"]][k] += int(r[k])
    components: dict[str, ComponentStats] = {}
    for comp, n in totals.items():
        kind = "spout" if n["spout_emit"] > 0 else "bolt"
        emitted = n["spout_emit"] + n["bolt_emit"]
        components[comp] = ComponentStats(
            name=comp, kind=kind, tasks=len(tasks[comp]), emitted=emitted, taken=n["take"],
            acked=n["bolt_ack"] + n["spout_ack"], failed=n["bolt_fail"] + n["spout_fail"],
            rate_in=n["take"] / duration, rate_out=emitted / duration,
            sigma=(n["bolt_emit"] / n["take"]) if kind == "bolt" and n["take"] else None)

    # α: first take of (comp, tuple) -> first emit anchored to it, else its first ack/fail
    keyed = (events.where(ev.isin("take", "bolt_emit", "bolt_ack", "bolt_fail"))
             .select("comp", "t", "ev", F.explode(F.when(ev == "bolt_emit", F.col("anchors"))
                                                    .otherwise(F.array(F.col("tuple")))).alias("key")))
    firsts = keyed.groupBy("comp", "key").agg(
        F.min(F.when(ev == "take", F.col("t"))).alias("take_t"),
        F.min(F.when(ev == "bolt_emit", F.col("t"))).alias("emit_t"),
        F.min(F.when(ev != "take", F.when(ev != "bolt_emit", F.col("t")))).alias("ack_t"))
    work = (firsts.where(F.col("take_t").isNotNull())
            .withColumn("end_t", F.coalesce("emit_t", "ack_t")).where(F.col("end_t") >= F.col("take_t"))
            .withColumn("alpha", F.col("end_t") - F.col("take_t")))
    for r in work.groupBy("comp").agg(F.avg("alpha").alias("m"), F.min("alpha").alias("lo"), F.max("alpha").alias("hi"),
                                      F.stddev_pop("alpha").alias("sd")).collect():
        if r["comp"] in components:
            c = components[r["comp"]]
            c.alpha_mean, c.alpha_min, c.alpha_max, c.alpha_std = r["m"], r["lo"], r["hi"], r["sd"]

    # bursts: emits of one spout task closer than burst_gap
    if any(n["spout_emit"] for n in totals.values()):
        order = Window.partitionBy("comp", "task").orderBy("t")
        emits = (events.where(ev == "spout_emit").select("comp", "task", "t")
                 .withColumn("gap", F.col("t") - F.lag("t").over(order))
                 .withColumn("new", F.when(F.col("gap").isNull() | (F.col("gap") > burst_gap), 1).otherwise(0))
                 .withColumn("burst", F.sum("new").over(order.rowsBetween(Window.unboundedPreceding, 0))))
        sizes = emits.groupBy("comp", "task", "burst").agg(F.count("*").alias("size"), F.min("t").alias("at"))
        by_task = sizes.groupBy("comp", "task").agg(
            F.count("*").alias("n"), F.sum("size").alias("tuples"), F.max("size").alias("mx"),
            F.min("at").alias("first"), F.max("at").alias("last"), F.max_by("size", "at").alias("last_size"))
        for r in by_task.groupBy("comp").agg(
                F.sum("n").alias("n"), F.sum("tuples").alias("tuples"), F.max("mx").alias("mx"),
                F.sum(F.when(F.col("last") > F.col("first"),
                             (F.col("tuples") - F.col("last_size")) / (F.col("last") - F.col("first")))).alias("rate")
        ).collect():
            if r["comp"] in components:
                c = components[r["comp"]]
                c.bursts, c.burst_mean, c.burst_max = r["n"], r["tuples"] / r["n"], r["mx"]
                if r["rate"] is not None:
                    c.rate_out = r["rate"]

    # queue series: mean per task and bin, summed over tasks
    bins: dict[str, list[tuple[float, float]]] = defaultdict(list)
    if qspan["n"]:
        binned = (queues.withColumn("bin", F.floor((F.col("t") - F.lit(start)) / bin_s))
                  .groupBy("comp", "task", "bin").agg(F.avg("queue").alias("q"))
                  .groupBy("comp", "bin").agg(F.sum("q").alias("q")))
        for r in binned.collect():
            bins[r["comp"]].append((start + (r["bin"] + 0.5) * bin_s, float(r["q"])))
    finish_queues(components, bins, growth_floor, bin_s)
    return Analysis(source=source, start=start, end=end, events=n_events, queue_samples=int(qspan["n"]),
                    bin_s=bin_s, growth_floor=growth_floor, components=components)


# ---- plain Python ----------------------------------------------------------
