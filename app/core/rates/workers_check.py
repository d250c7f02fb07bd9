"""The rate check under worker deaths: does every bolt stay bounded when workers die and Storm replays at the timeout?

docs/model.md section 9 defines a worker's death (its executors, spouts and ackers included, stop at once; the lost
trees are replayed when their message timeout T expires; a restarted spout re-emits what it had pending);
docs/boundedness.md, "Worker deaths", proves the bounds. The pass is the one of the failure check
(app/core/rates/curves.py) with every bolt failing (each of its executors runs in a worker that may die), and one
assumption about the replays that needs no fixpoint: a death replays at most the trees pending at that moment, and
a spout's pending trees are at most what it emitted in the last 2T (or max.spout.pending per task).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import networkx as nx

from app.core.failures import FailureModel, impacts
from app.core.numbers import exact
from app.core.rates.arrival import ZERO, Curve
from app.core.rates.curves import Bounds, Component, FailureBounds
from app.core.rates.failures_check import BoltFailures, failure_components, nominal_replays
from app.core.rates.flows import RateFigures, keeps_up
from app.core.rates.verdicts import fmt
from app.core.rates.windows import timer_bounded_note
from app.core.storm.flux.ticks import TICK_PREFIX
from app.core.workers import ACKER, WorkerModel

if TYPE_CHECKING:
    from app.core.rates.verdicts import Status
    from app.core.topology import Topology


@dataclass(frozen=True)
class WorkerCheck:
    """Every bolt's verdict with worker deaths, and what one death costs.

    `survives`: True when every bolt is proven bounded and no tree can outlive the timeout; False when a bolt
    grows (nominal estimate, or without deaths already); None when neither is shown (`reason` says why)."""

    model: WorkerModel
    bolts: dict[str, BoltFailures]  # by bolt id
    pending: dict[str, Fraction | None]  # spout id -> trees pending at any instant at most (None: no bound)
    replay_rate: dict[str, Fraction | None]  # spout id -> replays added per second at most (long run)
    loss: list[Fraction | None]  # per worker: tuples one of its deaths loses at most (queues, work, restart)
    completion: dict[str, Fraction | None]  # spout id -> the longest a tree of it takes (None: no bound)
    survives: bool | None
    reason: str
    bounds: Bounds | None
    names: dict[str, str]  # component id -> name
    windowed: bool = False  # some bolt has a window: a death loses what its windows hold unacked too

    def to_json(self) -> dict[str, Any]:
        """By component name; exact values as strings ("p/q") beside their decimals."""
        def num(x: Fraction | None) -> dict[str, Any] | None:
            return None if x is None else {"value": float(x), "exact": f"{x.numerator}/{x.denominator}"}
        wm, n = self.model, self.names
        return {
            "survives": self.survives, "reason": self.reason or None,
            "decided_by": "rate check",
            "workers": wm.workers, "min_ttf": num(wm.min_ttf), "restart": [num(wm.min_restart), num(wm.max_restart)],
            "message_timeout_secs": num(wm.timeout), "replays": wm.replays,
            "assignment": {n.get(c, c): list(row) for c, row in wm.assignment.items()},
            "loss_per_death": [num(x) for x in self.loss],
            "spouts": {n[s]: {"pending_trees": num(self.pending[s]), "replay_rate": num(self.replay_rate.get(s)),
                              "longest_tree_s": num(self.completion[s])} for s in self.pending},
            "bolts": {n[j]: {"status": v.status, "queue_bound": num(v.queue), "inflow": num(v.inflow),
                             "replays": num(v.added), "note": v.note} for j, v in self.bolts.items()},
        }


def _failure_model(topo: Topology, wm: WorkerModel) -> FailureModel:
    """Every bolt fails (a worker runs some of its executors) every period at most, down up to max_restart."""
    return FailureModel({b.id: wm.min_ttf for b in topo.bolts}, wm.min_restart, wm.max_restart,
                        topo.settings.replay if wm.replays else "none", impacts(topo))


def _pending(topo: Topology, wm: WorkerModel, spout: Component, mode: str) -> Fraction | None:
    """Trees of a spout pending at any instant: emitted in the last 2T at most (a tree times out by then), so at
    most its emissions in a window of 2T: twice its fresh tuples when paced; and max.spout.pending per task."""
    found: list[Fraction] = []
    if mode == "paced":
        found.append(_emitted(spout, 2 * wm.timeout))
    msp = topo.storm.max_spout_pending
    if msp is not None:
        (s,) = [s for s in topo.spouts if s.id == spout.ident]
        found.append(Fraction(msp * (s.executors or 1)))
    return min(found) if found else None


def _emitted(spout: Component, w: Fraction) -> Fraction:
    """A paced spout's emissions in a window of length w: at most twice its fresh tuples."""
    return 2 * (spout.rate_max * w + spout.take)


def _replays(topo: Topology, wm: WorkerModel, comps: dict[str, Component], fm: FailureModel
             ) -> tuple[dict[str, Curve], dict[str, Fraction | None], str]:
    """Per spout: the curve of the replays worker deaths add, the pending bound; a reason when one has none.

    A death of a worker x that runs an acker, an executor of s or of a bolt its trees reach breaks only trees of s
    pending at some instant between the death and the restart: those pending at the death (P_s), and those
    emitted while x restarts, unless x runs every executor of s (then s emits nothing meanwhile). Each worker dies
    at most once per period, and a death's replays are added within `delay` of it, so the replays added in a
    window of length w come from at most (w + delay)/period + 1 deaths of each such worker."""
    curves: dict[str, Curve] = {}
    pending: dict[str, Fraction | None] = {}
    reason = ""
    executors = {s.id: s.executors or 1 for s in topo.spouts}
    for s in topo.spouts:
        if not wm.replays or s.name.startswith(TICK_PREFIX):  # a timer's tick tuples belong to no tree
            curves[s.id], pending[s.id] = ZERO, Fraction(0)
            continue
        p = _pending(topo, wm, comps[s.id], fm.replay)
        pending[s.id] = p
        if p is None or fm.replay != "paced":
            curves[s.id] = Curve(())
            reason = (f"{s.name}'s replays of a death have no bound: "
                      + ("its pending trees have none (replays at once and no topology.max.spout.pending)"
                         if p is None else "it replays at once, so the trees it emits while a worker restarts "
                         "have none"))
            continue
        reached = {j for j, row in fm.impact.items() if s.id in row}
        per = Fraction(0)
        for x in range(wm.workers):
            if any(wm.may_run(x, c) for c in (ACKER, s.id, *reached)):
                alone = wm.runs_all(x, s.id, executors[s.id])
                per += p + (0 if alone else _emitted(comps[s.id], wm.max_restart))
        curves[s.id] = Curve.affine(per / wm.period, per * (1 + wm.delay / wm.period))
    return curves, pending, reason


def _completion(topo: Topology, e: RateFigures, comps: dict[str, Component], bounds: Bounds
                ) -> dict[str, Fraction | None]:
    """The longest a tree of each spout takes: along every path, each bolt's sojourn, at most its queue bound over
    its smallest capacity plus two of its longest phases (waiting for its turn, then processed)."""
    out: dict[str, Fraction | None] = {}
    order = list(nx.topological_sort(e.graph))
    for s in topo.spouts:
        done: dict[str, Fraction | None] = {s.id: Fraction(0)}
        worst: Fraction | None = Fraction(0)
        for n in order:
            if n == s.id or n not in comps or comps[n].kind != "bolt":
                continue
            ins = [done[u] for u, _ in comps[n].inputs if u in done]
            if not ins:
                continue
            queue = bounds.queue.get(n)
            if queue is None or any(t is None for t in ins):
                done[n] = None
                worst = None
                continue
            c = comps[n]  # a timer: its hold, the longest until Storm acks a tuple (its children emitted by then)
            stay = queue / c.rate_min + 2 * c.slowest_take if c.gap is None else c.hold
            if stay is None:  # (a count eviction on a timer: no hold bound, docs/model.md 10.4)
                done[n] = worst = None
                continue
            done[n] = max(t for t in ins if t is not None) + stay
            if worst is not None:
                worst = max(worst, done[n])  # type: ignore[type-var]
        out[s.id] = worst
    return out


def _nominal(topo: Topology, wm: WorkerModel, fm: FailureModel) -> dict[str, Fraction]:
    """The nominal inflows with worker deaths (an estimate from below, like section 7's): every bolt loses what
    arrives while its workers restart (`nominal_replays`), and every spout emits only while its workers are up:
    the share min_ttf / (min_ttf + max_restart) of its rate, each worker running its share of the executors."""
    up = wm.min_ttf / (wm.min_ttf + wm.max_restart)
    slowed = topo.model_copy(update={"spouts": [s.model_copy(update={"rate": float(exact(s.rate) * up)})
                                                for s in topo.spouts]})
    return nominal_replays(slowed, RateFigures(slowed), fm)[0]


def worker_check(topo: Topology, e: RateFigures, wm: WorkerModel, status: dict[str, Status]) -> WorkerCheck:
    """The verdict of every bolt with worker deaths; `status` is the failure-free one (by bolt id)."""
    names = {c.id: c.name for c in topo.components}
    fm = _failure_model(topo, wm)
    comp_list = failure_components(topo, e, fm)
    comps = {c.ident: c for c in comp_list}
    bounds: Bounds | None = None
    completion: dict[str, Fraction | None] = {s.id: None for s in topo.spouts}
    pending: dict[str, Fraction | None] = {s.id: None for s in topo.spouts}
    if e.cyclic:
        reason = "the topology has a cycle, and the rate check bounds replays only on acyclic topologies"
    else:
        replays, pending, reason = _replays(topo, wm, comps, fm)
        bounds = FailureBounds(comp_list, e.graph, fm, topo.settings.init_queues, names).run(replays)
        completion = _completion(topo, e, comps, bounds)
    ticks = {s.id for s in topo.spouts if s.name.startswith(TICK_PREFIX)}  # a timer's tuples time out in no tree
    late = {s: t for s, t in completion.items()
            if wm.replays and s not in ticks and (t is None or t >= wm.timeout)}
    made: dict[str, dict[str, Fraction]] = {}

    def nominal() -> dict[str, Fraction]:  # (made once, when some bolt is not proven bounded)
        if "n" not in made:
            made["n"] = _nominal(topo, wm, fm)
        return made["n"]

    slow: dict[str, list[str]] = {}  # bolt -> the spouts reaching it whose trees may outlive the timeout
    for s in late:
        for d in nx.descendants(e.graph, s):
            slow.setdefault(d, []).append(s)
    emptied = {b.id for b in topo.bolts  # (one executor, or all in one worker: its deaths empty the bolt)
               if b.parallelism == 1 or any(wm.runs_all(x, b.id, b.parallelism) for x in range(wm.workers))}
    bolts: dict[str, BoltFailures] = {}
    for b in topo.bolts:
        bolts[b.id] = _verdict(b.id, names, e, bounds, status[b.id], nominal, emptied,
                               (slow.get(b.id, []), late), wm, reason)
    loss: list[Fraction | None] = []
    for x in range(wm.workers):
        total: Fraction | None = Fraction(0)
        for b in topo.bolts:
            k = wm.at_most(x, b.id, b.parallelism)
            lost = None if bounds is None else bounds.lost.get(b.id)
            window = b.count_window  # its executors' windows: L tuples each, unacked ("Windows" 4); mixed: no bound
            if k and (lost is None or total is None or window is not None and window.mixed):
                total = None
            elif k and total is not None and lost is not None:
                total += lost * k / b.parallelism + (k * int(window.length) if window is not None else 0)
        loss.append(total)
    verdicts = [v.status for v in bolts.values()]
    if "grows" in verdicts:
        survives: bool | None = False
    elif all(v == "bounded" for v in verdicts):
        survives = True
    else:
        survives = None
    if survives is None and not reason:  # the first bolt without a bound (what the others' notes follow from)
        unproven = sorted((v for v in bolts.values() if v.status != "bounded"), key=lambda v: v.queue is not None)
        reason = unproven[0].note if unproven else ""
    rate = {s: (None if bounds is None or not c.bounded else c.rate) for s, c in
            (bounds.replays.items() if bounds is not None else ((s.id, Curve(())) for s in topo.spouts))}
    return WorkerCheck(wm, bolts, pending, rate, loss, completion, survives, reason, bounds, names,
                       any(b.window is not None for b in topo.bolts))


def _verdict(j: str, names: dict[str, str], e: RateFigures, bounds: Bounds | None, status: Status,
             nominal: Callable[[], dict[str, Fraction]], emptied: set[str],
             slowness: tuple[list[str], dict[str, Fraction | None]], wm: WorkerModel,
             reason: str) -> BoltFailures:
    name = names[j]
    inflow = None if bounds is None else bounds.inflow[j].rate
    queue = None if bounds is None else bounds.queue[j]
    lost = None if bounds is None else bounds.lost.get(j)
    added = None if inflow is None else max(Fraction(0), inflow - e.in_max[j])
    spare = e.cap_min[j] - e.in_max[j]
    slow, late = slowness
    if status == "bounded" and inflow is not None and keeps_up(inflow, e.cap_min[j]) and queue is not None \
            and not slow:
        note = timer_bounded_note(e, j, "worker deaths", inflow, queue) or (
            f"with worker deaths {name} receives at most {fmt(inflow)} tuples/s and processes at least "
            f"{fmt(e.cap_min[j])}: the replays add {fmt(added or 0)} tuples/s, within its {fmt(spare)} tuples/s "
            f"spare, so its queue stays below {fmt(queue)} tuples")
        return BoltFailures("bounded", inflow, added, queue, lost, note)
    # a bolt that keeps up with its largest inflow keeps up with the nominal one (a run's): no estimate needed
    fits = status == "bounded" and inflow is not None and keeps_up(inflow, e.cap_min[j])
    grows_nominal = not fits and j not in emptied and keeps_up(e.cap_nominal[j], nominal().get(j, Fraction(0)))
    verdict: Status = "grows" if status == "grows" or grows_nominal else "may-grow"
    if status != "bounded":
        note = f"{name} is not bounded even without worker deaths"
    elif bounds is None or inflow is None:
        note = f"with worker deaths {name} is not proven bounded: {reason or 'its replays have no bound'}"
    elif queue is not None and keeps_up(inflow, e.cap_min[j]):
        t = late[slow[0]]
        took = ("have no time bound (a queue on their way has none, or a window whose count eviction waits for "
                "later tuples), so they may outlive" if t is None
                else f"may take up to {fmt(t)} s, not less than")
        note = (f"with worker deaths {name}'s queue stays below {fmt(queue)} tuples, but the trees of "
                f"{names[slow[0]]} {took} the message timeout ({fmt(wm.timeout)} s): Storm replays such trees "
                "too, although nothing was lost, and this bound does not count them")
    else:
        note = (f"with worker deaths {name} may receive {fmt(inflow)} tuples/s, more than the {fmt(e.cap_min[j])} "
                f"it processes at least: the replays add {fmt(added or 0)} tuples/s, beyond its {fmt(spare)} "
                "tuples/s spare")
    if grows_nominal and status != "grows":
        note += (f"; at nominal timing, with every worker dying as often as it may, the replays of what its deaths "
                 f"lose bring {name} {fmt(nominal()[j])} tuples/s against a capacity of {fmt(e.cap_nominal[j])}")
    return BoltFailures(verdict, inflow, added, queue, lost, note)
