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

import heapq
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
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
    from app.core.fileio import read_text
    from app.measure.records import json_value

    data = json_value(read_text(meta_file, lambda reason: EventLogError(str(meta_file), reason)), str(meta_file))
    meta = data.get("reliability", {}) if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        raise EventLogError(f"{meta_file}", "expected an object with a 'reliability' object")
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


def violation_detail(prop: str, kind: str | None, x: float | None, comp: str | None, other: str | None) -> str:
    """The sentence of a violation, from its kind (an event kind) and number; both engines use it."""
    if prop == P1:
        if kind is None:
            return "never acked or failed within twice the timeout"
        return f"{kind} came {x:.6g} s after the emit, later than twice the timeout"
    if prop == PENDING:
        return f"emitted while {int(x or 0)} attempts were pending (max {kind})"
    if prop == P2:
        return f"{comp} took the tuple but never acked or failed it"
    if prop == P3:
        return f"root acked without failure but {other} never took this tuple of {comp}"
    return f"{kind} after the root's spout_ack at t={x:.6g}"


# A violation row: (t, prop, comp, task, tuple, msg, other, kind, x); listed in this total order
# (t first, missing t last), so both engines list the same `limit` violations.
def _order(row: tuple) -> tuple:
    t, prop, comp, task, tup, msg, other, _kind, x = row
    return (t if t is not None else math.inf, prop, comp or "", -1 if task is None else task, tup or "", msg or "",
            other or "", -math.inf if x is None else x)


class _Kept:
    """The `limit` first violation rows in _order, in bounded memory."""

    def __init__(self, limit: int):
        self.limit = limit
        self.rows: list[tuple] = []

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) > 4 * self.limit + 1000:
            self.rows = heapq.nsmallest(self.limit, self.rows, key=_order)

    def first(self) -> list[tuple]:
        return heapq.nsmallest(self.limit, self.rows, key=_order)


def _report(config: ReliabilityConfig, counts: dict[str, int], rows: list[tuple],
            undecided: dict[str, int], events: int, log_end: float, limit: int) -> ReliabilityReport:
    notes = []
    if config.ackers == 0:
        notes.append("no ackers: Storm acks at emit, trees are untracked; P1, P3 and P4 hold trivially")
    if config.subscribers is None:
        notes.append("subscriptions inferred from the log (give the topology to check subscribers that never took)")
    if config.max_spout_pending is None:
        notes.append("max spout pending not set: not limited")
    rows = sorted(rows, key=_order)[:limit]
    violations = [Violation(prop=prop, t=t, comp=comp, task=task, tuple=tup, msg=msg, other=other,
                            detail=violation_detail(prop, kind, x, comp, other))
                  for t, prop, comp, task, tup, msg, other, kind, x in rows]
    return ReliabilityReport(
        properties={p: counts.get(p, 0) == 0 for p in PROPERTIES},
        counts={p: counts.get(p, 0) for p in PROPERTIES},
        violations=violations, undecided={k: v for k, v in undecided.items() if v},
        events=events, log_end=log_end, config=config, notes=notes)


# ---- plain Python ----------------------------------------------------------


def check_reliability_local(events: Iterable[Event], config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The reference check in one process over Event records (or their plain rows), in log order."""
    from app.measure.logstream import event_row

    rows = [event_row(e) if isinstance(e, Event) else e for e in events]
    return check_reliability_stream(lambda: rows, config, limit)


def check_reliability_path_local(path, config: ReliabilityConfig, time_unit: str = "s",
                                 limit: int = 200) -> ReliabilityReport:
    """The check of a log file or run folder in this process, reading it twice in batches (no Spark)."""
    from app.measure.eventlog import log_format
    from app.measure.logstream import event_source

    if log_format(path) == "storm-metrics":
        raise EventLogError(str(path), "a Storm metrics log has no per-tuple events; "
                                       "the reliability check needs an event log")
    return check_reliability_stream(event_source(path, time_unit), config, limit)  # type: ignore[arg-type]


def check_reliability_stream(source: Callable[[], Iterable[tuple]], config: ReliabilityConfig,
                             limit: int = 200) -> ReliabilityReport:
    """The check over event rows (t, ev, comp, task, tuple, msg, anchors, reason) that `source()` yields
    in log order, twice. Memory holds per-tuple state (its emitter, anchors, roots, acks), not events:
    the first pass pairs attempts and grows the trees, the second checks every take (P2) and every
    event of an acked tree (P4). Ties in time are broken by the order in the log."""
    two_t = 2 * config.message_timeout_s
    counts: dict[str, int] = defaultdict(int)
    undecided: dict[str, int] = defaultdict(int)
    kept = _Kept(limit)

    def bad(row: tuple) -> None:
        counts[row[1]] += 1
        kept.add(row)

    ids: dict[str, str] = {}  # one string object per tuple id, shared by every map below
    emits: dict[tuple, list[tuple[float, int, str]]] = defaultdict(list)
    closes: dict[tuple, list[tuple[float, int, str]]] = defaultdict(list)
    anchors: dict[str, list[str]] = {}
    emitter: dict[str, tuple[float, str]] = {}
    finished: dict[str, dict[str, float]] = defaultdict(dict)
    taken: dict[str, set[str]] = defaultdict(set)
    failed: set[str] = set()
    n, log_end = 0, -math.inf
    for t, ev, comp, task, tup, msg, anc, _reason in source():
        n += 1
        if t > log_end:
            log_end = t
        if tup is not None:
            tup = ids.setdefault(tup, tup)
        if ev == "take":
            taken[comp].add(tup)
        elif ev == "bolt_ack" or ev == "bolt_fail":
            d = finished[comp]
            old = d.get(tup)
            if old is None or t > old:
                d[tup] = t
            if ev == "bolt_fail":
                failed.add(tup)
        elif ev == "bolt_emit":
            if anc:
                have = anchors.get(tup)
                parents = [ids.setdefault(a, a) for a in anc]
                anchors[tup] = parents if have is None else have + parents
            first = emitter.get(tup)
            if first is None or t < first[0]:  # the first emit; equal times: the earlier in the log
                emitter[tup] = (t, comp)
        elif ev == "spout_emit":
            emits[(comp, task, msg)].append((t, n, tup))
            first = emitter.get(tup)
            if first is None or t < first[0]:
                emitter[tup] = (t, comp)
        elif ev == "spout_ack" or ev == "spout_fail":
            closes[(comp, task, msg)].append((t, n, ev))
    if n == 0:
        log_end = 0.0

    # attempts: the k-th emit of (spout, task, msg) pairs with its k-th ack/fail
    attempt_close: dict[str, tuple[float, str, str] | None] = {}  # root tuple -> (t, ev, msg) of its ack/fail
    pending_steps: dict[tuple, list[tuple[float, int, int, str, str]]] = defaultdict(list)
    for key, lst in emits.items():
        lst.sort()
        cl = sorted(closes.get(key, []))
        steps = pending_steps[key[:2]]
        for k, (t, seq, tup) in enumerate(lst):
            c = cl[k] if k < len(cl) else None
            attempt_close[tup] = (c[0], c[2], key[2]) if c is not None else None
            steps.append((t, seq, 1, tup, key[2]))
            if c is not None:
                steps.append((c[0], c[1], -1, tup, key[2]))
            if config.ackers > 0:
                if c is not None and c[0] - t > two_t:
                    bad((t, P1, key[0], key[1], tup, key[2], None, c[2], c[0] - t))
                elif c is None and log_end - t > two_t:
                    bad((t, P1, key[0], key[1], tup, key[2], None, None, None))
                elif c is None:
                    undecided[P1] += 1
    if config.max_spout_pending is not None:
        for (comp, task), steps in pending_steps.items():
            steps.sort(key=lambda s: (s[0], s[1]))
            pending = 0
            for t, _seq, step, tup, msg in steps:
                if step > 0 and pending >= config.max_spout_pending:
                    bad((t, PENDING, comp, task, tup, msg, None, str(config.max_spout_pending), float(pending)))
                pending += step
    del emits, closes, pending_steps

    # trees: tuple -> the roots it belongs to (one root as the string itself, several as a set),
    # grown through the anchors to a fixed point
    roots: dict[str, str | set[str]] = {r: r for r in attempt_close}
    changed = True
    while changed:
        changed = False
        for child, parents in anchors.items():
            for p in parents:
                theirs = roots.get(p)
                if theirs is None:
                    continue
                mine = roots.get(child)
                if mine is None:
                    roots[child] = theirs if isinstance(theirs, str) else set(theirs)
                    changed = True
                elif isinstance(theirs, str):
                    if isinstance(mine, str):
                        if mine != theirs:
                            roots[child] = {mine, theirs}
                            changed = True
                    elif theirs not in mine:
                        mine.add(theirs)
                        changed = True
                else:
                    known = {mine} if isinstance(mine, str) else mine
                    if not theirs <= known:
                        roots[child] = known | theirs
                        changed = True
    del anchors

    def roots_of(tuple_id: str) -> tuple[str, ...] | set[str]:
        found = roots.get(tuple_id)
        return () if found is None else (found,) if isinstance(found, str) else found

    def root_open(tuple_id: str) -> bool:
        rs = roots_of(tuple_id)
        return not rs or any(attempt_close.get(r) is None for r in rs)

    acked = ({r: c for r, c in attempt_close.items() if c is not None and c[1] == "spout_ack"}
             if config.ackers > 0 else {})
    if acked:  # P3: every tuple of a clean acked tree is taken by each subscriber of its emitter
        failed_roots: set[str] = set()
        for tup in failed:
            failed_roots.update(roots_of(tup))
        subs = config.subscribers
        if subs is None:
            inferred: dict[str, set[str]] = defaultdict(set)
            for comp, tuples in taken.items():
                for tup in tuples:
                    if tup in emitter:
                        inferred[emitter[tup][1]].add(comp)
            subs = {k: sorted(v) for k, v in inferred.items()}
        for tup, rs in roots.items():
            found = emitter.get(tup)
            if found is None or not subs.get(found[1]):
                continue
            comp = found[1]
            for r in ((rs,) if isinstance(rs, str) else rs):
                close = acked.get(r)
                if close is None or r in failed_roots:
                    continue
                for sub in subs[comp]:
                    if tup not in taken.get(sub, ()):
                        bad((close[0], P3, comp, None, tup, close[2], sub, None, None))

    # second pass: P2 for every take, P4 for every event of an acked tree
    for t, ev, comp, task, tup, _msg, _anc, _reason in source():
        if ev == "take":
            done = finished.get(comp, {}).get(tup)
            if done is None or done < t:
                if log_end - t <= two_t and root_open(tup):
                    undecided[P2] += 1
                else:
                    bad((t, P2, comp, task, tup, None, None, None, None))
        if acked and ev in TREE_EVENTS:
            for r in roots_of(tup):
                close = acked.get(r)
                if close is not None and t > close[0]:
                    bad((t, P4, comp, task, tup, close[2], None, ev, close[0]))
    return _report(config, counts, kept.first(), undecided, n, log_end, limit)


# ---- Spark -----------------------------------------------------------------


def check_reliability(spark, events, config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The same check as Spark jobs over an events DataFrame (schema EVENT_DDL, any order); see
    _check_reliability. Running out of memory is reported as such, not as an internal error."""
    from app.measure.engine_choice import raise_if_out_of_memory

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
    return _report(config, counts, rows, undecided, n_events, log_end, limit)


def load_vectors(path: str | Path) -> list[dict[str, Any]]:
    """The reliability test vectors (each: name, topology with config, trace in ms, expected)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise EventLogError(str(path), f"cannot read the vectors: {err}") from None
    return list(data)
