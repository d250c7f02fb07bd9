"""Storm's delivery guarantees checked over an event log.

Properties (the names of the reliability vectors in the shared test data folder):

* P1: every `spout_emit` attempt is acked or failed within twice the message timeout.
  Attempts pair each emit of (spout, task, msg) with the next ack/fail of that msg
  (a replay re-uses the msg id). With no ackers Storm acks at once: P1 holds trivially.
* P2: every `take` has a later `bolt_ack`/`bolt_fail` of that tuple by the same
  component. Undecided (not a violation) while the log ends less than 2x timeout after
  the take and the tuple's root is still pending.
* P3: when a root was acked and nothing in its tree failed, every tuple of the tree is
  taken by each component subscribing to its emitter (needs ackers; trees are untracked
  otherwise).
* P4: nothing of an acked root's anchored tree (take, emit, ack, fail) happens after
  its `spout_ack` (needs ackers).
* max spout pending: when a spout task emits, fewer than `max_spout_pending` of its
  attempts are pending.

`check_reliability` is the Spark job; `check_reliability_local` is the same definition
in plain Python (the baseline of bench/runs_pipeline.py and a cross-check in tests).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from app.measure.eventlog import Event, EventLogError

PROPERTIES = (
    "P1_emit_eventually_acked_or_failed",
    "P2_take_has_ack_or_fail",
    "P3_no_failure_implies_take_at_each_subscriber",
    "P4_root_ack_is_last_event_of_tree",
    "max_spout_pending_respected",
)
P1, P2, P3, P4, PENDING = PROPERTIES
TREE_EVENTS = ("take", "bolt_emit", "bolt_ack", "bolt_fail")


def run_settings(path: Path) -> dict[str, Any]:
    """ReliabilityConfig settings recorded in a run folder's run.json (nothing for a plain log)."""
    meta_file = path / "run.json" if path.is_dir() else None
    if meta_file is None or not meta_file.exists():
        return {}
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8")).get("reliability", {})
    except (OSError, ValueError, AttributeError) as err:
        raise EventLogError(str(meta_file), f"cannot be read: {err}") from None
    settings: dict[str, Any] = {"message_timeout_s": meta.get("topology.message.timeout.secs", 30),
                                "ackers": meta.get("topology.acker.executors", 1)}
    if meta.get("topology.max.spout.pending") is not None:
        settings["max_spout_pending"] = meta["topology.max.spout.pending"]
    return settings


class ReliabilityConfig(BaseModel):
    """What the check needs beyond the log: Storm's settings and who subscribes to whom."""

    message_timeout_s: float = Field(default=30.0, gt=0, description="topology.message.timeout.secs")
    max_spout_pending: int | None = Field(default=None, ge=1, description="topology.max.spout.pending per spout task")
    ackers: int = Field(default=1, ge=0, description="topology.acker.executors; 0 = trees untracked")
    subscribers: dict[str, list[str]] | None = Field(
        default=None, description="component -> subscribing components; None = inferred from the log's takes")

    @classmethod
    def from_storm(cls, topology: dict[str, Any] | None = None,
                   config: dict[str, Any] | None = None) -> ReliabilityConfig:
        """From a Storm-style config map and a `{components, subscriptions: [{from, to}]}` topology."""
        config = config or {}
        subs: dict[str, list[str]] | None = None
        if topology is not None:
            subs = defaultdict(list)
            for s in topology.get("subscriptions", []):
                subs[str(s["from"])].append(str(s["to"]))
            subs = dict(subs)
        pending = config.get("topology.max.spout.pending")
        return cls(
            message_timeout_s=float(config.get("topology.message.timeout.secs", 30)),
            max_spout_pending=int(pending) if pending is not None else None,
            ackers=int(config.get("topology.acker.executors", 1)),
            subscribers=subs,
        )

    @classmethod
    def from_topology(cls, topo, **settings: Any) -> ReliabilityConfig:
        """From a Stormbound Topology (its subscriptions, by component name)."""
        subs: dict[str, list[str]] = defaultdict(list)
        for s in topo.subscriptions:
            subs[topo.name_of(s.source)].append(topo.name_of(s.target))
        return cls(subscribers=dict(subs), **settings)


class Violation(BaseModel):
    """One broken guarantee, with the tuple ids, components and time that show it."""

    prop: str
    t: float | None = None
    comp: str | None = None
    task: int | None = None
    tuple: str | None = None
    msg: str | None = None
    other: str | None = Field(default=None, description="the other component involved (a subscriber)")
    detail: str = ""

    def describe(self) -> str:
        where = ", ".join(f"{k} {v}" for k, v in (("t", self.t), ("comp", self.comp), ("task", self.task),
                                                    ("tuple", self.tuple), ("msg", self.msg)) if v is not None)
        return f"{self.prop}: {self.detail} ({where})"


class ReliabilityReport(BaseModel):
    """Per property: holds or not, the number of violations, and the first violations in time order."""

    properties: dict[str, bool]
    counts: dict[str, int]
    violations: list[Violation]
    undecided: dict[str, int] = Field(default_factory=dict, description="checks the log ended too early to decide")
    events: int = 0
    log_end: float = 0.0
    config: ReliabilityConfig
    notes: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(self.properties.values())

    def summary(self) -> str:
        lines = [f"{self.events} events, log ends at t={self.log_end:.6g} s"]
        lines += [f"{'ok  ' if self.properties[p] else 'FAIL'}  {p}"
                  + (f"  ({self.counts.get(p, 0)} violations)" if not self.properties[p] else "")
                  + (f"  [{self.undecided[p]} undecided at end of log]" if self.undecided.get(p) else "")
                  for p in PROPERTIES]
        lines += [f"- {note}" for note in self.notes]
        lines += [f"  {v.describe()}" for v in self.violations]
        return "\n".join(lines)


def _report(config: ReliabilityConfig, counts: dict[str, int], violations: list[Violation],
            undecided: dict[str, int], events: int, log_end: float, limit: int) -> ReliabilityReport:
    notes = []
    if config.ackers == 0:
        notes.append("no ackers: Storm acks at emit, trees are untracked; P1, P3 and P4 hold trivially")
    if config.subscribers is None:
        notes.append("subscriptions inferred from the log (give the topology to check subscribers that never took)")
    if config.max_spout_pending is None:
        notes.append("max spout pending not set: not limited")
    violations.sort(key=lambda v: (v.t if v.t is not None else float("inf"), v.prop))
    return ReliabilityReport(
        properties={p: counts.get(p, 0) == 0 for p in PROPERTIES},
        counts={p: counts.get(p, 0) for p in PROPERTIES},
        violations=violations[:limit], undecided={k: v for k, v in undecided.items() if v},
        events=events, log_end=log_end, config=config, notes=notes)


# ---- plain Python ----------------------------------------------------------


def check_reliability_local(events: Iterable[Event], config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The reference check in one process; events in log order (stable-sorted by time here)."""
    evs = sorted(enumerate(events), key=lambda p: (p[1].t, p[0]))
    two_t = 2 * config.message_timeout_s
    log_end = evs[-1][1].t if evs else 0.0
    counts: dict[str, int] = defaultdict(int)
    undecided: dict[str, int] = defaultdict(int)
    out: list[Violation] = []

    def bad(prop: str, **fields: Any) -> None:
        counts[prop] += 1
        if len(out) < 50 * limit:
            out.append(Violation(prop=prop, **fields))

    # attempts: k-th emit of (comp, task, msg) pairs with its k-th ack/fail
    emits: dict[tuple, list[Event]] = defaultdict(list)
    closes: dict[tuple, list[Event]] = defaultdict(list)
    for _, e in evs:
        if e.ev == "spout_emit":
            emits[(e.comp, e.task, e.msg)].append(e)
        elif e.ev in ("spout_ack", "spout_fail"):
            closes[(e.comp, e.task, e.msg)].append(e)
    attempt_close: dict[str | None, Event | None] = {}  # root tuple -> its ack/fail
    pending_steps: dict[tuple, list[tuple[float, int, int, Event]]] = defaultdict(list)
    order = {id(e): i for i, e in evs}
    for key, lst in emits.items():
        cl = closes.get(key, [])
        for k, e in enumerate(lst):
            c = cl[k] if k < len(cl) else None
            attempt_close[e.tuple] = c
            pending_steps[key[:2]].append((e.t, order[id(e)], +1, e))
            if c is not None:
                pending_steps[key[:2]].append((c.t, order[id(c)], -1, c))
            if config.ackers > 0:
                if c is not None and c.t - e.t > two_t:
                    bad(P1, t=e.t, comp=e.comp, task=e.task, tuple=e.tuple, msg=e.msg,
                        detail=f"{c.ev} came {c.t - e.t:.6g} s after the emit, later than twice the timeout")
                elif c is None and log_end - e.t > two_t:
                    bad(P1, t=e.t, comp=e.comp, task=e.task, tuple=e.tuple, msg=e.msg,
                        detail="never acked or failed within twice the timeout")
                elif c is None:
                    undecided[P1] += 1
    if config.max_spout_pending is not None:
        for (comp, task), steps in pending_steps.items():
            steps.sort(key=lambda s: (s[0], s[1]))
            pending = 0
            for t, _, step, e in steps:
                if step > 0 and pending >= config.max_spout_pending:
                    bad(PENDING, t=t, comp=comp, task=task, tuple=e.tuple, msg=e.msg,
                        detail=f"emitted while {pending} attempts were pending (max {config.max_spout_pending})")
                pending += step

    # trees: tuple -> roots (root tuples of attempts)
    anchors: dict[str | None, list[str]] = defaultdict(list)
    emitter: dict[str | None, str] = {}
    for _, e in evs:
        if e.ev == "bolt_emit":
            anchors[e.tuple].extend(e.anchors or [])
        if e.ev in ("spout_emit", "bolt_emit"):
            emitter.setdefault(e.tuple, e.comp)
    roots: dict[str | None, set[str | None]] = {r: {r} for r in attempt_close}
    changed = True
    while changed:  # fixed point: fine for the depth of real topologies
        changed = False
        for child, parents in anchors.items():
            found = set().union(*(roots.get(p, set()) for p in parents)) if parents else set()
            if found - roots.get(child, set()):
                roots.setdefault(child, set()).update(found)
                changed = True

    def root_open(tuple_id: str | None) -> bool:
        rs = roots.get(tuple_id, set())
        return not rs or any(attempt_close.get(r) is None for r in rs)

    # P2
    finished: dict[tuple[str, str | None], list[float]] = defaultdict(list)
    for _, e in evs:
        if e.ev in ("bolt_ack", "bolt_fail"):
            finished[(e.comp, e.tuple)].append(e.t)
    takes: dict[tuple[str | None, str], list[str]] = defaultdict(list)
    for _, e in evs:
        if e.ev != "take":
            continue
        takes[(e.tuple, e.comp)].append(e.comp)
        if any(t >= e.t for t in finished.get((e.comp, e.tuple), [])):
            continue
        if log_end - e.t <= two_t and root_open(e.tuple):
            undecided[P2] += 1
            continue
        bad(P2, t=e.t, comp=e.comp, task=e.task, tuple=e.tuple,
            detail=f"{e.comp} took the tuple but never acked or failed it")

    if config.ackers > 0:
        members: dict[str | None, list[str | None]] = defaultdict(list)
        for tuple_id, rs in roots.items():
            for r in rs:
                members[r].append(tuple_id)
        failed_tuples = {e.tuple for _, e in evs if e.ev == "bolt_fail"}
        subs = config.subscribers
        if subs is None:
            inferred: dict[str, set[str]] = defaultdict(set)
            for (tuple_id, comp) in takes:
                if tuple_id in emitter:
                    inferred[emitter[tuple_id]].add(comp)
            subs = {k: sorted(v) for k, v in inferred.items()}
        tree_events: dict[str | None, list[Event]] = defaultdict(list)
        for _, e in evs:
            if e.ev in TREE_EVENTS:
                tree_events[e.tuple].append(e)
        for root, close in attempt_close.items():
            if close is None or close.ev != "spout_ack":
                continue
            tree = members.get(root, [root])
            if not any(t in failed_tuples for t in tree):
                for tuple_id in tree:
                    comp = emitter.get(tuple_id)
                    for sub in subs.get(comp, []) if comp else []:
                        if (tuple_id, sub) not in takes:
                            bad(P3, t=close.t, comp=comp, tuple=tuple_id, msg=close.msg, other=sub,
                                detail=f"root acked without failure but {sub} never took this tuple of {comp}")
            for tuple_id in tree:
                for e in tree_events.get(tuple_id, []):
                    if e.t > close.t:
                        bad(P4, t=e.t, comp=e.comp, task=e.task, tuple=e.tuple, msg=close.msg,
                            detail=f"{e.ev} after the root's spout_ack at t={close.t:.6g}")
    return _report(config, counts, out, undecided, len(evs), log_end, limit)


# ---- Spark -----------------------------------------------------------------


def check_reliability(spark, events, config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The same check as a Spark job over an events DataFrame (schema EVENT_DDL, any order)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    two_t = 2 * config.message_timeout_s
    ev = events.withColumn("seq", F.monotonically_increasing_id()).localCheckpoint()
    stats = ev.agg(F.count("*").alias("n"), F.max("t").alias("end"),
                   F.countDistinct(F.when(F.col("ev") == "bolt_emit", F.col("comp"))).alias("emitters")).collect()[0]
    n_events, log_end, n_emitters = int(stats["n"]), float(stats["end"] or 0.0), int(stats["emitters"])
    end = F.lit(log_end)

    def viol(df, prop: str, detail, other=None):
        return df.select(F.lit(prop).alias("prop"), F.col("t").cast("double").alias("t"), F.col("comp"),
                         F.col("task").cast("bigint").alias("task"), F.col("tuple"), F.col("msg"),
                         (other if other is not None else F.lit(None).cast("string")).alias("other"),
                         detail.alias("detail"), F.lit(0).alias("undecided"))

    def undecided_rows(df, prop: str):
        return df.select(F.lit(prop).alias("prop"), F.lit(None).cast("double").alias("t"),
                         F.lit(None).cast("string").alias("comp"), F.lit(None).cast("bigint").alias("task"),
                         F.lit(None).cast("string").alias("tuple"), F.lit(None).cast("string").alias("msg"),
                         F.lit(None).cast("string").alias("other"), F.lit("").alias("detail"),
                         F.lit(1).alias("undecided"))

    key = ["comp", "task", "msg"]
    by_key = Window.partitionBy(*key).orderBy("t", "seq")
    emits = (ev.where(F.col("ev") == "spout_emit")
             .withColumn("k", F.row_number().over(by_key))
             .select(*key, "k", "t", "seq", "tuple"))
    closes = (ev.where(F.col("ev").isin("spout_ack", "spout_fail"))
              .withColumn("k", F.row_number().over(by_key))
              .select(*key, "k", F.col("t").alias("close_t"), F.col("seq").alias("close_seq"),
                      F.col("ev").alias("close_ev")))
    attempts = emits.join(closes, on=[*key, "k"], how="left").localCheckpoint()
    parts = []
    if config.ackers > 0:
        late = attempts.where(F.col("close_t").isNotNull() & (F.col("close_t") - F.col("t") > two_t))
        late_by = F.format_number(F.col("close_t") - F.col("t"), 3)
        parts.append(viol(late, P1, F.format_string("%s came %s s after the emit, later than twice the timeout",
                                                     F.col("close_ev"), late_by)))
        lost = attempts.where(F.col("close_t").isNull() & (end - F.col("t") > two_t))
        parts.append(viol(lost, P1, F.lit("never acked or failed within twice the timeout")))
        parts.append(undecided_rows(attempts.where(F.col("close_t").isNull() & (end - F.col("t") <= two_t)), P1))
    if config.max_spout_pending is not None:
        steps = (attempts.select("comp", "task", "t", "seq", "tuple", "msg", F.lit(1).alias("step"))
                 .unionByName(attempts.where(F.col("close_t").isNotNull()).select(
                     "comp", "task", F.col("close_t").alias("t"), F.col("close_seq").alias("seq"),
                     "tuple", "msg", F.lit(-1).alias("step"))))
        running = Window.partitionBy("comp", "task").orderBy("t", "seq").rowsBetween(Window.unboundedPreceding, -1)
        steps = steps.withColumn("pending", F.coalesce(F.sum("step").over(running), F.lit(0)))
        over = steps.where((F.col("step") == 1) & (F.col("pending") >= config.max_spout_pending))
        parts.append(viol(over, PENDING, F.format_string("emitted while %d attempts were pending (max %d)",
                                                          F.col("pending"), F.lit(config.max_spout_pending))))

    # trees: (tuple, root) pairs grown from the spout emits through the anchors
    edges = (ev.where(F.col("ev") == "bolt_emit")
             .select(F.col("tuple").alias("child"), F.explode_outer("anchors").alias("anchor"))
             .where(F.col("anchor").isNotNull()).distinct().persist())
    # as many rounds as there are emitting bolts reaches every tuple of an acyclic topology
    # without a Spark action per round; one emptiness test confirms (cycles go on)
    tree = attempts.select("tuple", F.col("tuple").alias("root"))
    frontier = tree
    rounds = max(1, n_emitters)
    while True:
        for _ in range(rounds):
            frontier = (edges.join(frontier.withColumnRenamed("tuple", "anchor"), on="anchor")
                        .select(F.col("child").alias("tuple"), "root").distinct())
            tree = tree.unionByName(frontier)
        frontier = frontier.localCheckpoint()
        if frontier.isEmpty() or rounds > 1000:
            break
        rounds *= 2
    tree = tree.distinct().persist()
    tree = tree.persist()
    root_state = tree.join(attempts.select(F.col("tuple").alias("root"), "close_t", "close_ev", "msg"), on="root")

    # P2
    takes = ev.where(F.col("ev") == "take").select("t", "comp", "task", "tuple")
    done = ev.where(F.col("ev").isin("bolt_ack", "bolt_fail")).select(
        F.col("comp").alias("d_comp"), F.col("tuple").alias("d_tuple"), F.col("t").alias("d_t"))
    unfinished = takes.join(done, (takes.comp == done.d_comp) & (takes.tuple == done.d_tuple) & (done.d_t >= takes.t),
                            how="left_anti")
    open_roots = (tree.join(attempts.select(F.col("tuple").alias("root"), "close_t"), on="root")
                  .groupBy("tuple").agg(F.max(F.col("close_t").isNull().cast("int")).alias("any_open")))
    unfinished = unfinished.join(open_roots, on="tuple", how="left").withColumn(
        "wait", (end - F.col("t") <= two_t) & F.coalesce(F.col("any_open") == 1, F.lit(True)))
    parts.append(viol(unfinished.where(~F.col("wait")).withColumn("msg", F.lit(None).cast("string")), P2,
                      F.format_string("%s took the tuple but never acked or failed it", F.col("comp"))))
    parts.append(undecided_rows(unfinished.where(F.col("wait")), P2))

    if config.ackers > 0:
        acked = root_state.where(F.col("close_ev") == "spout_ack")
        failed_roots = (tree.join(ev.where(F.col("ev") == "bolt_fail").select("tuple").distinct(), on="tuple")
                        .select("root").distinct())
        clean = acked.join(failed_roots, on="root", how="left_anti")
        emitter = (ev.where(F.col("ev").isin("spout_emit", "bolt_emit"))
                   .groupBy("tuple").agg(F.min_by("comp", F.struct("t", "seq")).alias("emitter")))
        taken = takes.select("tuple", F.col("comp").alias("sub")).distinct()
        if config.subscribers is None:
            subs = taken.join(emitter, on="tuple").select(F.col("emitter"), "sub").distinct()
        else:
            pairs = [(src, dst) for src, dsts in config.subscribers.items() for dst in dsts]
            subs = spark.createDataFrame(pairs, "emitter STRING, sub STRING")
        expected = clean.join(emitter, on="tuple").join(subs, on="emitter")
        missing = expected.join(taken, on=["tuple", "sub"], how="left_anti")
        parts.append(viol(missing.select(F.col("close_t").alias("t"), F.col("emitter").alias("comp"),
                                         F.lit(None).cast("bigint").alias("task"), "tuple", "msg", "sub"), P3,
                          F.format_string("root acked without failure but %s never took this tuple of %s",
                                          F.col("sub"), F.col("comp")), other=F.col("sub")))
        tree_ev = (ev.where(F.col("ev").isin(*TREE_EVENTS))
                   .select("t", "comp", "task", "tuple", F.col("ev").alias("kind")))
        after = (tree_ev.join(acked.select("tuple", "close_t", "msg"), on="tuple")
                 .where(F.col("t") > F.col("close_t")))
        parts.append(viol(after, P4, F.format_string("%s after the root's spout_ack at t=%s",
                                                      F.col("kind"), F.format_number(F.col("close_t"), 3))))

    everything = parts[0]
    for p in parts[1:]:
        everything = everything.unionByName(p)
    everything = everything.persist()
    tallies = everything.groupBy("prop", "undecided").count().collect()
    counts = {r["prop"]: int(r["count"]) for r in tallies if r["undecided"] == 0}
    undecided = {r["prop"]: int(r["count"]) for r in tallies if r["undecided"] == 1}
    rows = (everything.where(F.col("undecided") == 0).orderBy(F.col("t").asc_nulls_last(), "prop")
            .limit(limit).collect())
    violations = [Violation(prop=r["prop"], t=r["t"], comp=r["comp"], task=r["task"], tuple=r["tuple"],
                            msg=r["msg"], other=r["other"], detail=r["detail"]) for r in rows]
    for df in (everything, tree, edges):
        df.unpersist()
    return _report(config, counts, violations, undecided, n_events, log_end, limit)


def load_vectors(path: str | Path) -> list[dict[str, Any]]:
    """The reliability test vectors (each: name, topology with config, trace in ms, expected)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise EventLogError(str(path), f"cannot read the vectors: {err}") from None
    return list(data)
