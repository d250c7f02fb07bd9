"""The reliability check's settings and report: the properties, the config, a violation, the report.

Both engines fill these from the rows of the SQL of app/measure/sql/reliability.py
(`build_report`); what the properties mean: app/measure/reliability.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from app.core.topology import Topology

PROPERTIES = (
    "P1_emit_eventually_acked_or_failed",
    "P2_take_has_ack_or_fail",
    "P3_no_failure_implies_take_at_each_subscriber",
    "P4_root_ack_is_last_event_of_tree",
    "max_spout_pending_respected",
)
P1, P2, P3, P4, PENDING = PROPERTIES
TREE_EVENTS = ("take", "bolt_emit", "bolt_ack", "bolt_fail")

# What a kind of log (app.measure.eventlog.log_format) cannot decide, and why. A log that can decide
# none of the properties is refused (exit 2); one that can decide some reports the others as undecidable.
CANNOT_DECIDE: dict[str, tuple[tuple[str, ...], str]] = {
    "storm-events": (PROPERTIES, "a Storm events.log holds sampled emits only (no takes, acks or fails)"),
}


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
    def from_topology(cls, topo: Topology, **settings: Any) -> ReliabilityConfig:
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
    cannot_decide: dict[str, str] = Field(default_factory=dict,
                                          description="property -> why this kind of log cannot decide it")

    @property
    def ok(self) -> bool:
        return all(ok for p, ok in self.properties.items() if p not in self.cannot_decide)

    def summary(self) -> str:
        lines = [f"{self.events} events, log ends at t={self.log_end:.6g} s"]
        lines += [f"n/a   {p}  (this log cannot decide it: {self.cannot_decide[p]})" for p in PROPERTIES
                  if p in self.cannot_decide]
        lines += [f"{'ok  ' if self.properties[p] else 'FAIL'}  {p}"
                  + (f"  ({self.counts.get(p, 0)} violations)" if not self.properties[p] else "")
                  + (f"  [{self.undecided[p]} undecided at end of log]" if self.undecided.get(p) else "")
                  for p in PROPERTIES if p not in self.cannot_decide]
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
def _order(row: tuple[Any, ...]) -> tuple[Any, ...]:
    t, prop, comp, task, tup, msg, other, _kind, x = row
    return (t if t is not None else math.inf, prop, comp or "", -1 if task is None else task, tup or "", msg or "",
            other or "", -math.inf if x is None else x)


def build_report(config: ReliabilityConfig, counts: dict[str, int], rows: list[tuple[Any, ...]],
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
