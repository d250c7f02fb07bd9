"""The threshold run of a flooded bolt: a concrete finite legal run in which its queue passes N.

docs/boundedness.md, "The threshold run", states the construction: run J's cone of influence under a schedule in
which the flood's source U backs up (phase 1, `slow_s` seconds), then switch U to its fastest pace (one full batch
per α_U(1−τ), taken back-to-back) and J to its slowest (α_J(1+τ), then the whole idle allowance) at their next
emit (phase 2), and stop at the first position where J's queue holds N. The phase-1 schedules tried are the ones
growth by rates and the simulation use for U (spouts and every other bolt fastest, U slowest; the aligned ones,
with their failure plans; J stops failing at the switch); the slow stretch is doubled until J's queue passes N.

Nothing here is trusted: the run is a trace that the certifier (`app/core/tcn/check/certify.py`, threshold
witness, loop_start k+1) must accept, and `app/core/tcn/check/flood.py` certifies it again when it checks the
flood certificate it is attached to.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any

from app.core.formats.trace import AnyTrace, Trace
from app.core.formats.trace_numbers import format_time
from app.core.results import BoltVerdict, FloodCertificate, FloodRun, StormCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.network import Network, build_network
from app.core.tcn.paced_run import paced_phase_one
from app.core.tcn.recorded import record_checked
from app.core.tcn.schedule import Schedule, Switch, schedules, unaligned_schedule
from app.core.tcn.schedule_haste import haste_schedules
from app.core.tcn.simulate import MAX_CELLS, Goal, build_finite_run
from app.core.tcn.storm_run import cycle_growth, storm_schedule
from app.core.topology import Topology

__all__ = ["MAX_DOUBLINGS", "PHASE_ONE_SCHEDULES", "build_lost_run", "build_threshold_run", "chain_of", "phase_one",
           "switched", "threshold_runs"]

MAX_DOUBLINGS = 16  # slow stretches tried per phase-1 schedule, each twice the one before
PHASE_ONE_SCHEDULES = 6  # phase-1 schedules tried (the fastest-others one first, then the simulation's)
STALLED = 3  # doublings in a row without a larger backlog of U at the switch: that schedule does not back U up


def phase_one(net: Network, source: str, target: str, lead: Schedule | None = None) -> list[Schedule]:
    """The schedules under which `source` may back up: the one its certified lasso was simulated under (`lead`,
    when known, fitted to this cone: `_fitted`), every other bolt fastest with no delay (growth by rates'
    schedule), its haste schedules, then the simulation's for `source` (docs/simulation.md), failure plans included
    (the target may fail in phase 1; it stops failing when it switches to its slowest pace)."""
    out: list[Schedule] = []
    rates = unaligned_schedule(net, source)
    if rates is not None:
        rates = replace(rates, delay={n: d if n == source else Fraction(0) for n, d in rates.delay.items()},
                        eager={n: n != source for n in rates.eager})
        out.append(rates)
    out += list(haste_schedules(net, source))  # (a source that backs up only by changing pace: docs/simulation.md)
    out += list(itertools.islice(schedules(net, source), PHASE_ONE_SCHEDULES))
    first = [_fitted(net, lead, rates)] if lead is not None and rates is not None else []
    return (first + out)[:PHASE_ONE_SCHEDULES]


def _fitted(net: Network, lead: Schedule, rates: Schedule) -> Schedule:
    """`lead` (a schedule of another cone, under which the source grows in its lasso) on `net`: its durations and
    failures for the components both have, growth by rates' phase 1 (`rates`) for the others. Nothing here is
    trusted: the run must pass the certifier."""
    failing = set(net.failures.min_ttf) if net.failures is not None else set()

    def over(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
        return {n: theirs.get(n, v) for n, v in ours.items()}

    return replace(rates, period=lead.period, gap=over(rates.gap, lead.gap),
                   processing=over(rates.processing, lead.processing), delay=over(rates.delay, lead.delay),
                   eager=over(rates.eager, lead.eager), fail={n: f for n, f in lead.fail.items() if n in failing},
                   first_fail={n: t for n, t in lead.first_fail.items() if n in failing},
                   fail_until={n: t for n, t in lead.fail_until.items() if n in failing}, cells=None,
                   haste={n: h for n, h in lead.haste.items() if n in rates.processing and h.watch in failing})


def switched(net: Network, sched: Schedule, chain: list[str], target: str, slow: Fraction) -> Schedule:
    """`sched` until `slow` seconds, then the chain's first bolt fastest (back-to-back, α(1−τ)); each next bolt of
    the chain slowest, then fastest once the one before it has drained; the target slowest; every other bolt
    fastest, taking at once (what the flood proof counts J's other inputs at, docs/boundedness.md)."""
    tau, idle = net.tolerance, net.max_idle
    alpha = {b.name: b.alpha for b in net.bolts}

    def fastest(name: str, after: str | None = None) -> Switch:
        return Switch(name, alpha[name] * (1 - tau), Fraction(0), True, after)

    def slowest(name: str) -> Switch:
        return Switch(name, alpha[name] * (1 + tau), idle, False)

    switches = [fastest(chain[0])]
    for before, name in zip(chain, chain[1:], strict=False):
        switches += [slowest(name), fastest(name, before)]
    # (a duration window keeps its phase-1 timer: its runs take all it holds, so it passes on its whole inflow at
    # any legal pace, G late at most; docs/boundedness.md, "Duration windows" under the flood)
    others = [fastest(b.name) for b in net.bolts if b.name not in chain and b.name != target and b.timer is None]
    return replace(sched, switch_at=slow, switches=(*switches, *others, slowest(target)))


def chain_of(cert: FloodCertificate) -> list[str]:
    """The bolts that back up in turn, innermost first: a source that grows, then each bolt it floods that
    floods the next (a chain of flood certificates), ending with `cert.source`."""
    return [c.source for c in _nested(cert)]


def _nested(cert: FloodCertificate) -> list[FloodCertificate]:
    """`cert` and the flood certificates nested in its evidence (a chain), innermost first."""
    chain = [cert]
    while chain[0].evidence.flood_certificate is not None:
        chain.insert(0, chain[0].evidence.flood_certificate)
    return chain


def build_threshold_run(topo: Topology, chain: list[str], target: str, threshold: int, *,
                        cancelled: Callable[[], bool] = lambda: False, deadline: float | None = None,
                        max_cells: int = MAX_CELLS, storm: StormCertificate | None = None,
                        lead: Schedule | None = None) -> tuple[Trace, Fraction, int] | str:
    """A certified finite run of `target`'s cone in which its queue reaches `threshold` while the last bolt of
    `chain` (`chain_of`) drains a backlog: (trace, slow stretch in seconds, the target's largest queue), or why
    there is none. `storm`: the chain's first bolt is unbounded by this replay storm, whose cycle is then the first
    phase-1 schedule tried (docs/boundedness.md, "The threshold run of a replay storm"); `lead`: the schedule of the
    lasso the chain's first bolt grows in, tried first (`phase_one`)."""
    net = build_network(topo, [target])
    names = {b.name for b in net.bolts}
    if not set(chain) | {target} <= names:
        return f"{', '.join(chain)} not all in {target}'s cone of influence"
    first, source = chain[0], chain[-1]
    slowest = next(b.alpha for b in net.bolts if b.name == first) * (1 + net.tolerance) + net.max_idle
    tried = []
    stormy = storm_schedule(net, storm) if storm is not None else None
    for sched in ([stormy] if stormy is not None else []) + phase_one(net, first, target, lead):
        slow, best, backlog, stalled = slowest * threshold, -1, -1, 0
        if sched is stormy and storm is not None:  # past the failure cycles that fill the source with N tuples
            cycle = storm.emissions * Fraction(storm.gap)
            slow = max(slow, cycle * (math.ceil(threshold / cycle_growth(storm)) + 2))
        for _ in range(MAX_DOUBLINGS):
            goal = Goal(target, threshold, source)
            # a paced backlog fills the source once the failures stop (docs/boundedness.md, "The threshold run of a
            # paced replay backlog")
            paced = (paced_phase_one(net, storm, slow)
                     if sched is stormy and storm is not None and storm.replay == "paced" else None)
            out = build_finite_run(net, switched(net, paced or sched, chain, target, slow), goal,
                                   cancelled=cancelled, deadline=deadline, max_cells=max_cells)
            if isinstance(out, Trace):
                cert = certify(out, checked=[target], threshold=threshold, cancelled=cancelled)
                if cert.ok:
                    return out, slow, goal.peak
                tried.append(f"a run the certifier rejected (a defect): {'; '.join(cert.problems[:2])}")
                break
            if out in ("cancelled", "time limit reached"):
                return out
            stalled = stalled + 1 if goal.backlog <= backlog else 0
            best, backlog = max(best, goal.peak), max(backlog, goal.backlog)
            if stalled >= STALLED or out.startswith("no repeated state"):  # no backlog, or out of cells
                tried.append(f"{sched.describe()}: {target}'s queue reached {best} at most ({source}'s backlog "
                             f"{backlog} at most)")
                break
            slow *= 2
        else:
            tried.append(f"{sched.describe()}: {target}'s queue reached {best} after a slow stretch of "
                         f"{format_time(slow)} s")
    return "no phase-1 schedule took it there: " + "; ".join(tried) if tried else "no phase-1 schedule"


def build_lost_run(topo: Topology, cert: FloodCertificate, threshold: int, *,
                   cancelled: Callable[[], bool] = lambda: False, deadline: float | None = None,
                   max_cells: int = MAX_CELLS) -> tuple[Trace, Fraction, int] | str:
    """The threshold run of a lost backlog (docs/boundedness.md, "The threshold run of a lost backlog"): on the
    target's cone, the source and the target slowest, spouts and every other bolt fastest, nothing failing until
    `slow` s; then the source fails once (down max_reboot) and never again, and its loss comes back one replay per
    fresh tuple. `slow` is doubled until the target's queue reaches `threshold`: (trace, slow, largest queue)."""
    net = build_network(topo, [cert.target])
    if net.failures is None or cert.source not in net.failures.min_ttf:
        return f"{cert.source} may not fail in {cert.target}'s cone"
    base = unaligned_schedule(net, cert.target, slow=frozenset({cert.source}))
    if base is None:
        return "no schedule of this document"
    up = net.failures.min_ttf[cert.source]
    target = next(b for b in net.bolts if b.name == cert.target)
    hold = Switch(cert.target, target.alpha * (1 + net.tolerance), net.max_idle, False)
    slow, best = max(up + 1, Fraction(threshold) * (target.alpha + 1)), -1
    per_second = sum(2 / g for g in base.gap.values()) + sum(2 / p for p in base.processing.values() if p > 0)
    for _ in range(MAX_DOUBLINGS):
        sched = replace(base, fail={cert.source: (up, net.failures.max_reboot)}, first_fail={cert.source: slow},
                        fail_until={cert.source: slow + 1}, switch_at=Fraction(10**9), switches=(hold,))
        goal = Goal(cert.target, threshold, cert.target)
        # (the run has no end of its own: positions for 4·slow s and the reboots, at most every clock's pace)
        cells = len(net.bolts) * 2 * per_second * (4 * slow + 10 * net.failures.max_reboot)
        out = build_finite_run(net, sched, goal, cancelled=cancelled, deadline=deadline,
                               max_cells=min(max_cells, math.ceil(cells)))
        if isinstance(out, Trace):
            found = certify(out, checked=[cert.target], threshold=threshold, cancelled=cancelled)
            if found.ok:
                return out, slow, goal.peak
            return f"a run the certifier rejected (a defect): {'; '.join(found.problems[:2])}"
        if out in ("cancelled", "time limit reached"):
            return out
        best, slow = max(best, goal.peak), slow * 2
    return f"{cert.target}'s queue reached {best} at most after {cert.source} backed up for {format_time(slow / 2)} s"


def threshold_runs(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace], threshold: int,
                   notes: list[str], *, cancelled: Callable[[], bool] = lambda: False,
                   deadline: float | None = None, played: dict[str, Schedule] | None = None) -> None:
    """Attach to every `unbounded` verdict a threshold run past `threshold` (its trace appended to `traces`), in
    place; a bolt without one gets a note saying what is missing. `played`: per bolt growing in a lasso found by
    simulation, the schedule that closed it (the first phase 1 tried for a chain from that bolt)."""
    for name, verdict in verdicts.items():
        cert = verdict.flood_certificate
        if verdict.verdict != "unbounded" or cert is None:
            continue
        found = (build_lost_run(topo, cert, threshold, cancelled=cancelled, deadline=deadline)
                 if cert.via is not None else
                 build_threshold_run(topo, chain_of(cert), name, threshold, cancelled=cancelled, deadline=deadline,
                                     storm=_nested(cert)[0].evidence.storm_certificate,
                                     lead=(played or {}).get(chain_of(cert)[0])))
        if isinstance(found, str):
            notes.append(f"no threshold run past {threshold} for {name}: {found}")
            continue
        trace, slow, reached = found
        run = FloodRun(threshold=threshold, slow_s=f"{slow.numerator}/{slow.denominator}", reached=reached,
                       trace_index=len(traces))
        with_run = cert.model_copy(update={"run": run})
        index = cert.evidence.trace_index
        record_checked(verdicts, name, verdict.model_copy(update={
            "flood_certificate": with_run,
            "message": _with_run(verdict.message, f"A certified finite run takes its queue to {reached} (at least "
                                                  f"{threshold}): {cert.source} slow for {float(slow):.4g} s, then "
                                                  + (f"failing once, its loss replayed by {cert.via}"
                                                     if cert.via is not None else "draining"))}),
                       check_flood_certificate(build_network(topo, [name]).topology, with_run,
                                               traces[index] if index is not None else None, trace),
                       notes, "the threshold run", (traces, trace))


def _with_run(message: str, run: str) -> str:
    """The flood's message with the run's sentence before the earlier answer ("Before that: ...")."""
    head, sep, before = message.partition(". Before that: ")
    return f"{head}. {run}{sep}{before}" if sep else f"{message}. {run}"
