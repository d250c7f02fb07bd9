"""The rate check under failures: is every bolt still bounded when bolts fail and spouts replay?

docs/model.md section 7 defines the failures; docs/boundedness.md, "Failures", proves the
bounds. Per bolt the verdict is:

* `bounded` when, with the replays of every failure cycle allowed by `min_ttf` and the reboot
  bounds (one replay per lost tuple, the upper end of section 7.3), its inflow rate
  (app/core/rates/curves.py) is at most its smallest capacity (a tie included), the replays' fixpoint exists,
  and it is bounded without failures too (a run without failures is a run);
* `grows` when it grows without failures, or when the *nominal* replays (each failing bolt
  failing every min_ttf + max_reboot s and losing what arrives at its nominal inflow during
  max_reboot) push its nominal inflow above its nominal capacity (an estimate like the
  failure-free `grows`, not a proof; a bolt that itself fails is emptied by its failures
  and is never said to grow from replays);
* `may-grow` otherwise, with the reason.

Only acyclic topologies get bounds from the replays' fixpoint: in a cyclic one (or without a fixpoint) a bolt that
a failure or a replay can reach is `bounded` only when its senders at their fastest pace cannot outrun it
(`curves.fastest_inflow`), else `may-grow` (not proven); the others keep the failure-free verdict;
`check` and `verify` then try each such bolt on its own cone (app/core/tcn/cones.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import networkx as nx

from app.core.emission import sigma_bounds
from app.core.failures import UNBOUNDED, FailureModel
from app.core.numbers import exact
from app.core.rates.curves import (
    Bounds,
    Component,
    FailureBounds,
    StreamBound,
    fastest_inflow,
    storm_words,
    stream_excess,
)
from app.core.rates.flows import RateFigures, keeps_up
from app.core.rates.paced import paced_words
from app.core.rates.windows import timed_hold, timer_bounded_note

if TYPE_CHECKING:
    from app.core.rates.verdicts import Status
    from app.core.topology import Topology

NOMINAL_ROUNDS = 40  # rounds of the nominal replay estimate (from below: every round is a lower bound)


@dataclass(frozen=True)
class BoltFailures:
    """One bolt's figures under failures (exact; None: no bound)."""

    status: Status
    inflow: Fraction | None  # largest inflow rate with replays (tuples/s)
    added: Fraction | None  # of which replays and carry restarts: inflow − the failure-free largest inflow
    queue: Fraction | None  # bound of its queue
    lost: Fraction | None  # tuples one of its failures loses at most (failing bolts only)
    note: str
    reached: bool = True  # False: no failure or replay reaches it (its failure-free figures stand)
    replays: str = ""  # what the failing bolts' losses and the spouts' replays are at most, in words
    cycle: str = ""  # bounded per failure cycle (docs/boundedness.md, "Paced"): what bounds the paced backlog, in words


@dataclass(frozen=True)
class SpoutFailures:
    replay_rate: Fraction | None  # replays added per second at most (long run)
    backlog: Fraction | None  # bound of the replay backlog (None: it may grow)


@dataclass(frozen=True)
class FailureCheck:
    bolts: dict[str, BoltFailures]  # by bolt id
    spouts: dict[str, SpoutFailures]  # by spout id
    rounds: int
    bounds: Bounds | None  # every arrival curve (None: cyclic, or no fixpoint)


def _fmt(x: Fraction | float) -> str:
    return f"{float(x):.3g}"


def failure_components(topo: Topology, e: RateFigures, model: FailureModel) -> list[Component]:
    tau = exact(topo.settings.tolerance)
    rule = topo.settings.emission
    result = []
    for s in topo.spouts:
        streams = {}
        for name, r in s.output_streams().items():
            if r is None:
                continue
            ratio = exact(r)
            # with replays an emission may exceed the burst: the ratio bound of any batch size
            size = s.burst if model.replay == "none" else max(s.burst, ratio.denominator)
            hi = sigma_bounds(ratio, size, rule)[1]
            streams[name] = StreamBound(hi, stream_excess(ratio, hi, size, rule), Fraction(0))
        period = 1 / exact(s.rate)
        result.append(Component(s.id, "spout", (), streams, s.burst, e.spout_max[s.id], e.spout_min[s.id],
                                s.burst * period * (1 + tau)))
    for b in topo.bolts:
        streams = {}
        # a timer (docs/model.md 10.3; a mixed window on a timer, 10.4: no hold bound) takes batches of any size
        take = e.burst[b.id] if b.id in e.timed else b.take_max
        for name, (sigma, _, hi) in e.streams[b.id].items():
            h = stream_excess(sigma, hi, take, rule)
            reset = h if rule == "dvert" and sigma.denominator != 1 else Fraction(0)
            streams[name] = StreamBound(hi, h, reset)
        inputs = tuple(k for k in e.inputs[b.id] if e.carries(*k))  # a σ = 0 stream is no input
        result.append(Component(b.id, "bolt", inputs, streams, take, e.cap_max[b.id], e.cap_min[b.id],
                                exact(b.alpha) * (1 + tau), e.slowest_take[b.id], e.q_start[b.id] - e.q0,
                                e.timed.get(b.id), timed_hold(e, b.id),
                                {name: sigma for name, (sigma, _, _) in e.streams[b.id].items()
                                 if rule == "exact" or 1 in (sigma.numerator, sigma.denominator)}))
    return result


def failure_check(topo: Topology, e: RateFigures, model: FailureModel, status: dict[str, Status],
                  *, nominal_estimate: bool = True) -> FailureCheck:
    """The verdict of every bolt under failures; `status` is the failure-free one (by bolt id).
    nominal_estimate=False skips the nominal replays (many rate checks): `bounded` is the same, and
    what is not bounded is `may-grow` unless it grows without failures."""
    names = {c.id: c.name for c in topo.components}
    replaying = set() if model.replay == "none" else {s for j in model.min_ttf for s in model.impact.get(j, {})}
    touched = set(model.min_ttf) | replaying
    affected: set[str] = set()
    for n in touched:
        affected |= nx.descendants(e.graph, n) | {n}
    bounds: Bounds | None = None
    reason = ""
    rounds = 0
    if e.cyclic:
        reason = "the topology has a cycle, and the rate check bounds replays only on acyclic topologies"
    else:
        solver = FailureBounds(failure_components(topo, e, model), e.graph, model, topo.settings.init_queues, names)
        bounds = solver.solve()
        reason, rounds = solver.reason, solver.rounds
    nominal = nominal_replays(topo, e, model) if nominal_estimate else ({}, {})
    culprits = _culprits(topo, e, model)
    bolts: dict[str, BoltFailures] = {}
    comps: dict[str, Component] = {}  # the components of the pass, built when a bolt needs its senders' pace
    for b in topo.bolts:
        j = b.id
        if j not in affected:
            bolts[j] = BoltFailures(status[j], e.in_max[j], Fraction(0), e.queue_bound.get(j), None,
                                    f"no failure or replay reaches {b.name}", reached=False)
            continue
        inflow = None if bounds is None else bounds.inflow[j].rate
        queue = None if bounds is None else bounds.queue[j]
        lost = None if bounds is None else bounds.lost.get(j)
        added = None if inflow is None else max(Fraction(0), inflow - e.in_max[j])
        spare = e.cap_min[j] - e.in_max[j]
        who = culprits.get(j, [])
        replay_txt = _replay_words(who, bounds, names, model.replay == "paced")
        fast = _netted_words(e, bounds, names, j)
        storm = None if bounds is None else bounds.storm.get(j)
        if (status[j] == "bounded" and not (inflow is not None and inflow <= e.cap_min[j] and queue is not None)
                and storm is not None and storm.queue is not None and storm.quiet is not None):
            # its own replays come back once per lost tuple: counted by its pending tuples, not as inflow
            inflow, queue = storm.quiet, storm.queue
            added = max(Fraction(0), inflow - e.in_max[j])
            fast = (", its own replays aside (each tuple it loses is pending until it completes: docs/boundedness.md, "
                    "\"At once: tails that drain over several cycles\")")
        if status[j] == "bounded" and not (inflow is not None and inflow <= e.cap_min[j] and queue is not None):
            local = _fastest(topo, e, model, replaying, j, comps)  # no fixpoint: a cycle or a storm elsewhere
            if local is not None:
                inflow, queue, added = local[0], local[1], max(Fraction(0), local[0] - e.in_max[j])
                fast = (", counting every sender at its fastest pace, whatever the failures elsewhere "
                        "(docs/boundedness.md, \"Bounded by its senders' fastest pace\")")
        paced = None if bounds is None else bounds.paced.get(j)
        cycle = ""
        if status[j] == "bounded" and paced is not None and queue is not None:  # bounded per failure cycle
            verdict: Status = "bounded"
            spout = names[paced.spout]
            cycle = paced_words(paced, b.name, spout, tuple(sorted(names[u] for u in paced.via)))
            note = (f"with failures {b.name} may receive up to {_fmt(2 * e.in_max[j])} tuples/s while {spout} "
                    f"replays, more than the {_fmt(e.cap_min[j])} it processes at least, but only for a while: "
                    f"{cycle}; its queue stays below {_fmt(queue)} tuples{replay_txt}")
        # a tie R = c included: the queue bound of "Failures" step 3 needs a least slope ≤ c (docs/boundedness.md)
        elif status[j] == "bounded" and inflow is not None and inflow <= e.cap_min[j] and queue is not None:
            verdict = "bounded"
            timer = timer_bounded_note(e, j, "failures", inflow, queue)
            note = (f"{timer}{replay_txt}{fast}" if timer is not None else
                    f"with failures {b.name} receives at most {_fmt(inflow)} tuples/s and processes at least "
                    f"{_fmt(e.cap_min[j])}: it has {_fmt(spare)} tuples/s spare{replay_txt}{fast}, so its queue "
                    f"stays below {_fmt(queue)} tuples")
        else:
            grows_nominal = j not in model.min_ttf and keeps_up(e.cap_nominal[j], nominal[0].get(j, Fraction(0)))
            verdict = "grows" if status[j] == "grows" or grows_nominal else "may-grow"
            if status[j] != "bounded":
                note = f"{b.name} is not bounded even without failures"
            elif bounds is None or inflow is None:
                note = f"with failures {b.name} is not proven bounded: {reason or 'its replays have no bound'}"
            else:
                note = (f"with failures {b.name} may receive {_fmt(inflow)} tuples/s, more than the "
                        f"{_fmt(e.cap_min[j])} it processes at least: it has {_fmt(spare)} tuples/s spare"
                        f"{replay_txt}" + (f" ({reason})" if reason else ""))
            if grows_nominal and status[j] != "grows":
                note += (f"; at nominal timing, with every failing bolt failing as often as it may, the replays "
                         f"bring it {_fmt(nominal[0][j])} tuples/s against a capacity of {_fmt(e.cap_nominal[j])}")
        bolts[j] = BoltFailures(verdict, inflow, added, queue, lost, note, replays=replay_txt.removeprefix("; "),
                                cycle=cycle)
    spouts = {}
    for s in topo.spouts:
        if bounds is None or s.id not in bounds.replays:
            spouts[s.id] = SpoutFailures(None if s.id in replaying else Fraction(0),
                                         None if s.id in replaying else Fraction(0))
        else:
            spouts[s.id] = SpoutFailures(bounds.replays[s.id].rate, bounds.backlog[s.id])
    return FailureCheck(bolts, spouts, rounds, bounds)


def _fastest(topo: Topology, e: RateFigures, model: FailureModel, replaying: set[str], j: str,
             comps: dict[str, Component]) -> tuple[Fraction, Fraction] | None:
    """Bolt `j`'s largest inflow rate and queue bound from its senders' fastest pace alone (`fastest_inflow`), or
    None when that inflow exceeds its smallest capacity, has no bound, or a timer is involved (the pass has no
    timer: docs/model.md section 10.3)."""
    timed = {b.id for b in topo.bolts if b.duration_window is not None}
    if j in timed or any(u in timed for u, _ in e.inputs[j]):
        return None
    if not comps:
        comps.update((c.ident, c) for c in failure_components(topo, e, model))
    curve = fastest_inflow(comps, model, replaying, j)
    excess = curve.excess(e.cap_min[j])
    rate = curve.rate
    if excess is None or rate is None:
        return None
    c = comps[j]
    return rate, e.q0 + c.held + excess + c.take


def _culprits(topo: Topology, e: RateFigures, model: FailureModel) -> dict[str, list[str]]:
    """Per bolt, the failing bolts whose replays reach it (through a spout that replays their losses)."""
    result: dict[str, list[str]] = {}
    if model.replay == "none":
        return result
    for j in model.min_ttf:
        for s in model.impact.get(j, {}):
            for k in nx.descendants(e.graph, s):
                if j not in result.setdefault(k, []):
                    result[k].append(j)
    return result


def _netted_words(e: RateFigures, bounds: Bounds | None, names: dict[str, str], j: str) -> str:
    """Which failing bolts above bolt j pass on fewer tuples than they receive, netted (step 7)."""
    netted = [] if bounds is None else sorted(names[u] for u in nx.ancestors(e.graph, j) if u in bounds.netted)
    if not netted:
        return ""
    return (f" ({', '.join(netted)} passing on the replays of its own losses only in place of what it lost: "
            "docs/boundedness.md, \"Failures\", step 7, netting)")


def _replay_words(who: list[str], bounds: Bounds | None, names: dict[str, str], paced: bool) -> str:
    if not who or bounds is None:
        return ""
    parts = []
    for j in who:
        lost = bounds.lost.get(j)
        if lost is None:
            continue
        parts.append(f"{names[j]}'s failures lose at most {_fmt(lost)} tuples each" + storm_words(bounds, j, names))
    rates = [f"{names[s]} replays up to {_fmt(c.rate)} tuples/s" if c.rate is not None
             else f"{names[s]}'s replays have no bound" + (", but paced it re-emits at most one per fresh tuple"
                                                            if paced else "")
             for s, c in bounds.replays.items() if c.rate != 0]
    if not parts and not rates:
        return ""
    return "; " + ", ".join(parts) + (" and " if parts and rates else "") + ", ".join(rates)


def _lossy(e: RateFigures, model: FailureModel) -> RateFigures:
    """The figures when each failing bolt j loses the share max_reboot / (min_ttf + max_reboot) of what it
    receives (down that share of the time): what it passes on shrinks by as much."""
    return e.with_streams_kept({j: ttf / (ttf + model.max_reboot) for j, ttf in model.min_ttf.items()})


def nominal_replays(topo: Topology, e: RateFigures, model: FailureModel
                    ) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """Nominal inflows with nominal failures and replays (by bolt id) and the spouts' nominal replay rates.

    Each failing bolt j fails every min_ttf + max_reboot s and loses what arrives at its nominal inflow in
    max_reboot, so it passes on only the rest; each loss replays one spout tuple per lost tuple, split among
    the spouts whose trees reach j in proportion to rate × Imp(j, s). Replays make up for the losses: a bolt
    below a failing one receives the fresh tuples once in the long run, not the replays on top of them.
    Iterated up from no replays (every round a lower bound of the limit)."""
    base = {s.id: e.spout_nominal[s.id] for s in topo.spouts}
    replays = {s: Fraction(0) for s in base}
    lossy = _lossy(e, model)  # its nominal inflows (by bolt id) at the spouts' nominal rates with the replays:
    inflow = lossy.inflows(lossy.spout_nominal, lossy.cap_nominal, from_above=False)
    if model.replay == "none":
        return inflow, replays
    for _ in range(NOMINAL_ROUNDS):
        new = {s: Fraction(0) for s in base}
        for j, ttf in model.min_ttf.items():
            imp = {s: i for s, i in model.impact.get(j, {}).items() if i != UNBOUNDED}
            if not imp or len(imp) != len(model.impact.get(j, {})):
                continue
            lost = inflow[j] * model.max_reboot / (ttf + model.max_reboot)
            weight = {s: (base[s] + replays[s]) * Fraction(i) for s, i in imp.items()}
            total = sum(weight.values(), Fraction(0))
            for s, w in weight.items():
                new[s] += lost * w / total if total else Fraction(0)
        if model.replay == "paced":
            new = {s: min(r, base[s]) for s, r in new.items()}
        new = {s: Fraction(math.floor(r * 10**12), 10**12) for s, r in new.items()}  # down: still a lower bound
        if all(abs(new[s] - replays[s]) <= base[s] / 10**9 for s in new):
            break  # (settled: an earlier stop is still a lower bound of the limit)
        replays = new
        inflow = lossy.inflows({s: base[s] + replays[s] for s in base}, lossy.cap_nominal, from_above=False)
    return inflow, replays
