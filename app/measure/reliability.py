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

`check_reliability_local` and `check_reliability_path_local` check in this process; the
Spark job with the same definition is `app.spark.reliability_job.check_reliability`
(app/spark/reliability_job.py), which the tests cross-check against these.
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
    settings: dict[str, Any] = {
        "message_timeout_s": _setting(meta, "topology.message.timeout.secs", 30, float, 0, meta_file),
        "ackers": _setting(meta, "topology.acker.executors", 1, int, 0, meta_file)}
    if meta.get("topology.max.spout.pending") is not None:
        settings["max_spout_pending"] = _setting(meta, "topology.max.spout.pending", None, int, 1, meta_file)
    return settings


def _setting(meta: dict[str, Any], key: str, default: Any, kind: type, least: int, where: Path) -> Any:
    """One Storm setting of run.json's `reliability`: a finite number (a whole one for `int`), at least
    `least` (above 0 for a timeout), at most 2^31-1 as Storm takes it; else one EventLogError naming it."""
    import math

    value = meta.get(key, default)
    field = f"reliability.{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventLogError(where.name, f"{field}: must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or (kind is int and value != int(value)):
        raise EventLogError(where.name, f"{field}: must be a {'whole ' if kind is int else 'finite '}number, "
                                        f"not {value!r}")
    if value < least or (kind is float and value <= 0) or value > 2**31 - 1:
        raise EventLogError(where.name, f"{field}: {value!r} is out of range "
                                        f"({'above 0' if kind is float else least}..{2**31 - 1})")
    return kind(value)


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


def build_report(config: ReliabilityConfig, counts: dict[str, int], rows: list[tuple],
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
    return check_reliability_stream(event_source(path, time_unit), config, limit)  # type: ignore[arg-type]  # a str time unit, checked by the reader


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
    return build_report(config, counts, kept.first(), undecided, n, log_end, limit)


def load_vectors(path: str | Path) -> list[dict[str, Any]]:
    """The reliability test vectors (each: name, topology with config, trace in ms, expected)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise EventLogError(str(path), f"cannot read the vectors: {err}") from None
    return list(data)
