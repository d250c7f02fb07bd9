"""Storm's delivery guarantees checked as Spark jobs over a run's events DataFrame.

The same properties and report as the one-process check of app/measure/reliability.py
(its config, report and `build_report`); the Spark host (app/spark/host.py) runs it for
logs too large for one process or stored where Spark reads them.
tests/spark/test_engines_agree.py checks that both give the same report.
"""

from __future__ import annotations

from collections import defaultdict

from app.measure.reliability import (
    P1,
    P2,
    P3,
    P4,
    PENDING,
    TREE_EVENTS,
    ReliabilityConfig,
    ReliabilityReport,
    build_report,
)


def check_reliability(spark, events, config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The same check as Spark jobs over an events DataFrame (schema EVENT_DDL, any order); see
    _check_reliability. Running out of memory is reported as such, not as an internal error."""
    from app.spark.session import raise_if_out_of_memory

    try:
        return _check_reliability(spark, events, config, limit)
    except Exception as err:
        raise_if_out_of_memory(err, spark)
        raise


def _check_reliability(spark, events, config: ReliabilityConfig, limit: int) -> ReliabilityReport:
    """The same check as Spark jobs over an events DataFrame (schema EVENT_DDL, any order).

    The events are read by a few aggregations that reduce them to facts, and only facts are
    joined: the attempts (spout events grouped by spout task and message, paired in time
    order inside each group), per (component, tuple) its first emit, last take, last
    ack/fail and last tree event, per tuple its emitter, and the trees (anchor edges joined
    from the roots, one round per component that emits anchored tuples, then one test that
    nothing deeper exists). Events are read again only for the few tuples with an unfinished
    take (P2) or an event after their root's ack (P4). Nothing but small results reaches
    the driver; intermediate facts are persisted (memory, then disk) and released at the end."""
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from app.spark.frames import check_columns, checked_job

    two_t = 2 * config.message_timeout_s
    ev_col = F.col("ev")
    ev = events.select("t", "ev", "comp", "task", "tuple", "msg", "anchors")
    anchored = (ev_col == "bolt_emit") & (F.size("anchors") > 0)
    per_comp = checked_job(events, lambda: ev.groupBy("comp").agg(
        F.count("*").alias("n"), F.max("t").alias("end"), F.max((ev_col == "bolt_emit").cast("int")).alias("emits"),
        *check_columns()).collect())
    n_events = sum(int(r["n"]) for r in per_comp)
    ends = [r["end"] for r in per_comp if r["end"] is not None]
    log_end = float(max(ends)) if ends else 0.0
    emitters = [r["comp"] for r in per_comp if r["emits"]]  # bounds the depth of an acyclic topology
    end = F.lit(log_end)
    cached: list = []

    def hold(df):
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        cached.append(df)
        return df

    def viol(df, prop: str, kind=None, x=None, other=None, msg="msg", task="task"):
        def col(value, name, kind_):
            if value is None:
                return F.lit(None).cast(kind_).alias(name)
            return (F.col(value) if isinstance(value, str) else value).cast(kind_).alias(name)
        return df.select(F.col("t").cast("double").alias("t"), F.lit(prop).alias("prop"), F.col("comp"),
                         col(task, "task", "bigint"), F.col("tuple"), col(msg, "msg", "string"),
                         col(other, "other", "string"), col(kind, "kind", "string"), col(x, "x", "double"))

    parts = []
    undecided: dict[str, int] = defaultdict(int)

    # attempts: spout events grouped by (spout, task, msg); the k-th emit pairs with the k-th close
    spout = ev.where(ev_col.isin("spout_emit", "spout_ack", "spout_fail")).withColumn(
        "seq", F.monotonically_increasing_id())  # file order, for equal times
    grouped = spout.groupBy("comp", "task", "msg").agg(
        F.array_sort(F.collect_list(F.when(ev_col == "spout_emit", F.struct("t", "seq", "tuple")))).alias("E"),
        F.array_sort(F.collect_list(F.when(ev_col != "spout_emit", F.struct("t", "seq", "ev")))).alias("C"))
    attempts = hold(grouped.select("comp", "task", "msg", "C", F.posexplode("E").alias("k", "e")).select(
        "comp", "task", "msg", F.col("e.t").alias("t"), F.col("e.seq").alias("seq"), F.col("e.tuple").alias("tuple"),
        F.get("C", F.col("k")).alias("c")).select(
        "comp", "task", "msg", "t", "seq", "tuple", F.col("c.t").alias("close_t"), F.col("c.seq").alias("close_seq"),
        F.col("c.ev").alias("close_ev")))
    if config.ackers > 0:
        late = attempts.where(F.col("close_t").isNotNull() & (F.col("close_t") - F.col("t") > two_t))
        parts.append(viol(late, P1, kind="close_ev", x=F.col("close_t") - F.col("t")))
        parts.append(viol(attempts.where(F.col("close_t").isNull() & (end - F.col("t") > two_t)), P1))
        undecided[P1] += attempts.where(F.col("close_t").isNull() & (end - F.col("t") <= two_t)).count()
    if config.max_spout_pending is not None:
        steps = (attempts.select("comp", "task", "t", "seq", "tuple", "msg", F.lit(1).alias("step"))
                 .unionByName(attempts.where(F.col("close_t").isNotNull()).select(
                     "comp", "task", F.col("close_t").alias("t"), F.col("close_seq").alias("seq"),
                     "tuple", "msg", F.lit(-1).alias("step"))))
        running = Window.partitionBy("comp", "task").orderBy("t", "seq").rowsBetween(Window.unboundedPreceding, -1)
        steps = steps.withColumn("pending", F.coalesce(F.sum("step").over(running), F.lit(0)))
        over = steps.where((F.col("step") == 1) & (F.col("pending") >= config.max_spout_pending))
        parts.append(viol(over, PENDING, kind=F.lit(str(config.max_spout_pending)), x="pending"))

    # per (component, tuple): first emit, last take, last ack/fail, failed, last tree event
    is_emit = ev_col.isin("spout_emit", "bolt_emit")
    tuple_events = ev.where(ev_col.isin("spout_emit", "bolt_emit", "take", "bolt_ack", "bolt_fail")).withColumn(
        "seq", F.monotonically_increasing_id())
    facts = hold(tuple_events.groupBy("comp", "tuple").agg(
        F.min(F.when(is_emit, F.struct("t", "seq"))).alias("emit_first"),
        F.max(F.when(ev_col == "take", F.col("t"))).alias("take_last"),
        F.max(F.when(ev_col.isin("bolt_ack", "bolt_fail"), F.col("t"))).alias("done_t"),
        F.max((ev_col == "bolt_fail").cast("int")).alias("failed"),
        F.max(F.when(ev_col != "spout_emit", F.col("t"))).alias("tree_last")))
    # per tuple: its emitter (first emit over all components), failed anywhere, last tree event
    per_tuple = hold(facts.groupBy("tuple").agg(
        F.min(F.when(F.col("emit_first").isNotNull(), F.struct("emit_first", "comp"))).alias("em"),
        F.max("failed").alias("failed"), F.max("tree_last").alias("tree_last")).select(
        "tuple", F.col("em.comp").alias("emitter"), "failed", "tree_last"))

    # trees: (tuple, root) grown from the attempts' root tuples through the anchors
    tree = attempts.select("tuple", F.col("tuple").alias("root")).distinct()
    if emitters:
        edges = hold(ev.where(anchored).select(F.col("tuple").alias("child"), F.explode("anchors").alias("parent"))
                     .where(F.col("parent").isNotNull()))
        frontier = tree
        # an acyclic topology is as deep as the components that emit anchored tuples: that many
        # rounds without a Spark action each, then one test that nothing deeper exists
        rounds, level = len(emitters), 0
        while True:
            for _ in range(rounds):
                level += 1
                frontier = (edges.join(frontier.withColumnRenamed("tuple", "parent"), on="parent")
                            .select(F.col("child").alias("tuple"), "root").distinct())
                if level > 64:  # anchors in a cycle: keep only pairs not seen yet
                    frontier = frontier.join(tree, on=["tuple", "root"], how="left_anti")
                frontier = hold(frontier)
                tree = tree.unionByName(frontier)
            deeper = edges.join(frontier.withColumnRenamed("tuple", "parent"), on="parent")
            if level > 64:
                deeper = deeper.select(F.col("child").alias("tuple"), "root").join(tree, on=["tuple", "root"],
                                                                                    how="left_anti")
            if deeper.isEmpty():
                break
            rounds = 1
    tree = tree.distinct()
    roots = attempts.select(F.col("tuple").alias("root"), "close_t", "close_ev", F.col("msg").alias("root_msg"))
    joined = hold(tree.join(roots, on="root").join(per_tuple, on="tuple", how="left"))

    # P2: takes with no later ack/fail by the same component (only the few candidate tuples are re-read)
    suspects = hold(facts.where(F.col("take_last").isNotNull()
                                & (F.col("done_t").isNull() | (F.col("take_last") > F.col("done_t"))))
                    .select("comp", "tuple", "done_t"))
    if not suspects.isEmpty():
        takes = ev.where(ev_col == "take").select("t", "comp", "task", "tuple")
        unfinished = (takes.join(suspects, on=["comp", "tuple"])
                      .where(F.col("done_t").isNull() | (F.col("t") > F.col("done_t"))))
        open_roots = joined.groupBy("tuple").agg(F.max(F.col("close_t").isNull().cast("int")).alias("any_open"))
        unfinished = hold(unfinished.join(open_roots, on="tuple", how="left").withColumn(
            "wait", (end - F.col("t") <= two_t) & F.coalesce(F.col("any_open") == 1, F.lit(True))))
        parts.append(viol(unfinished.where(~F.col("wait")), P2, msg=None))
        undecided[P2] += unfinished.where(F.col("wait")).count()

    if config.ackers > 0:
        acked = joined.where(F.col("close_ev") == "spout_ack")
        failed_roots = joined.where(F.col("failed") == 1).select("root").distinct()
        clean = acked.join(failed_roots, on="root", how="left_anti")
        took = facts.where(F.col("take_last").isNotNull()).select("tuple", F.col("comp").alias("sub"))
        if config.subscribers is None:
            emitters = per_tuple.where(F.col("emitter").isNotNull()).select("tuple", "emitter")
            subs = took.join(emitters, on="tuple").select("emitter", "sub").distinct()
        else:
            pairs = [(src, dst) for src, dsts in config.subscribers.items() for dst in dsts]
            subs = (spark.createDataFrame(pairs or [("", "")], "emitter STRING, sub STRING")
                    .where(F.col("emitter") != ""))
        expected = clean.where(F.col("emitter").isNotNull()).join(F.broadcast(subs), on="emitter")
        missing = expected.join(took, on=["tuple", "sub"], how="left_anti")
        parts.append(viol(missing.select(F.col("close_t").alias("t"), F.col("emitter").alias("comp"), "tuple",
                                         "root_msg", "sub"), P3, other="sub", msg="root_msg", task=None))
        # P4: events of an acked tree after its root's spout_ack (re-read only for tuples that have some)
        late_trees = hold(acked.where(F.col("tree_last") > F.col("close_t")).select("tuple", "close_t", "root_msg"))
        if not late_trees.isEmpty():
            tree_ev = (ev.where(ev_col.isin(*TREE_EVENTS))
                       .select("t", "comp", "task", "tuple", F.col("ev").alias("kind")))
            after = tree_ev.join(late_trees, on="tuple").where(F.col("t") > F.col("close_t"))
            parts.append(viol(after, P4, kind="kind", x="close_t", msg="root_msg"))

    counts: dict[str, int] = {}
    rows: list[tuple] = []
    if parts:
        everything = parts[0]
        for p in parts[1:]:
            everything = everything.unionByName(p)
        everything = hold(everything)
        counts = {r["prop"]: int(r["count"]) for r in everything.groupBy("prop").count().collect()}
        first = everything.orderBy(F.col("t").asc_nulls_last(), "prop", F.col("comp").asc_nulls_first(),
                                   F.col("task").asc_nulls_first(), F.col("tuple").asc_nulls_first(),
                                   F.col("msg").asc_nulls_first(), F.col("other").asc_nulls_first(),
                                   F.col("x").asc_nulls_first()).limit(limit).collect()
        rows = [(r["t"], r["prop"], r["comp"], r["task"], r["tuple"], r["msg"], r["other"], r["kind"], r["x"])
                for r in first]
    for df in cached:
        df.unpersist()
    return build_report(config, counts, rows, undecided, n_events, log_end, limit)
