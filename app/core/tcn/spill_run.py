"""The threshold run of a spill: a concrete finite run in which the target's queue passes N.

docs/boundedness.md, "Unbounded: a backlog replayed at once", states the construction; here, on the target's cone,
with the product's simulator: a schedule under which the failing bolt G backs up (the phase-1 schedules of a flood
whose source is G, `flood_run.phase_one`, and a replay storm's cycle when that is G's evidence), G failing once at
a time t (at least its min_ttf, doubled until the run gets there), the target slowest; the run stops at the first
position where the target's queue holds N. Nothing here is trusted: the trace must pass the certifier, and
`app/core/tcn/check/spill.py` certifies it again with the certificate it is attached to.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from app.core.formats.trace import AnyTrace, Trace
from app.core.results import BoltVerdict, SpillCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.spill import check_spill_certificate
from app.core.tcn.flood_run import MAX_DOUBLINGS, chain_of, phase_one, switched
from app.core.tcn.network import Network, build_network
from app.core.tcn.recorded import record_checked, storm_run_found
from app.core.tcn.schedule import Schedule, Switch
from app.core.tcn.simulate import MAX_CELLS, Goal, build_finite_run
from app.core.tcn.storm_run import NEVER_S, storm_schedule
from app.core.topology import Topology

__all__ = ["build_spill_run", "spill_runs"]

STALLED = 3  # failure times in a row without a larger queue of the target: that schedule does not back G up


def build_spill_run(topo: Topology, cert: SpillCertificate, threshold: int, *, deadline: float | None = None,
                    max_cells: int = MAX_CELLS, played: dict[str, Schedule] | None = None) -> tuple[Trace, int] | str:
    """A certified finite run of the target's cone `topo` in which its queue reaches `threshold`: (trace, the
    target's largest queue), or why there is none. `played`: per bolt growing in a lasso found by simulation, the
    schedule that closed it (tried first for the bolt that backs up: `flood_run.phase_one`)."""
    played = played or {}
    # (the failing bolt checked too: its schedules' failure-free variants keep it, `schedule.schedules`)
    net = build_network(topo, [cert.target, cert.failing])
    bolts = {b.name: b for b in net.bolts}
    if net.failures is None or cert.failing not in net.failures.min_ttf or cert.target not in bolts:
        return f"{cert.failing} does not fail in {cert.target}'s cone"
    j = bolts[cert.target]
    hold = Switch(cert.target, j.alpha * (1 + net.tolerance), net.max_idle, False)  # (keeps the run going)
    storm = cert.evidence.storm_certificate
    stormy = storm_schedule(net, storm) if storm is not None else None
    tried = []
    if cert.evidence.flood_certificate is not None:  # G backs up while a flood drains into it
        flooded = _flooded(net, cert, threshold + j.take_max + bolts[cert.failing].take_max, deadline, max_cells,
                           played)
        if isinstance(flooded, str):
            tried.append(flooded)
        else:
            sched, at, source = flooded
            sched = replace(sched, fail={**sched.fail, cert.failing: (NEVER_S, net.failures.max_reboot)},
                            first_fail={**sched.first_fail, cert.failing: at})
            goal = Goal(cert.target, threshold, source)
            out = build_finite_run(net, sched, goal, deadline=deadline, max_cells=max_cells)
            if isinstance(out, Trace) and certify(out, checked=[cert.target], threshold=threshold).ok:
                return out, goal.peak
            tried.append(f"the flood into {cert.failing}, then its failure at {float(at):.4g} s: {cert.target}'s "
                         f"queue reached {goal.peak}")
    # positions per second at most (every emission, take and emit at its fastest; failures and recoveries twice
    # over): a run is cut a little after the failure, when the burst has reached the target or never will
    rate = sum(1 / (s.period * (1 - net.tolerance)) for s in net.spouts) \
        + sum(4 / (b.alpha * (1 - net.tolerance)) for b in net.bolts)
    for base in ([stormy] if stormy is not None else []) + phase_one(net, cert.failing, cert.target,
                                                                     played.get(cert.failing)):
        at, best, stalled = net.failures.min_ttf[cert.failing] + 1, -1, 0
        for _ in range(MAX_DOUBLINGS):
            sched = replace(base, fail={**base.fail, cert.failing: (NEVER_S, net.failures.max_reboot)},
                            first_fail={**base.first_fail, cert.failing: at}, switch_at=NEVER_S, switches=(hold,))
            goal = Goal(cert.target, threshold, cert.target)
            cells = int((at + 4 * net.failures.max_reboot + 10) * rate + 100) * len(net.bolts)
            out = build_finite_run(net, sched, goal, deadline=deadline, max_cells=min(max_cells, cells))
            if isinstance(out, Trace):
                found = certify(out, checked=[cert.target], threshold=threshold)
                if found.ok:
                    return out, goal.peak
                tried.append(f"a run the certifier rejected (a defect): {'; '.join(found.problems[:2])}")
                break
            if out in ("cancelled", "time limit reached"):
                return out
            stalled = stalled + 1 if goal.peak <= best else 0
            best = max(best, goal.peak)
            if stalled >= STALLED:
                break
            at *= 2
        tried.append(f"{base.describe()}: {cert.target}'s queue reached {best} at most, {cert.failing} failing once "
                     f"as late as {float(at):.4g} s")
    return "no schedule took it there: " + "; ".join(tried) if tried else "no schedule"


def _flooded(net: Network, cert: SpillCertificate, held: int, deadline: float | None, max_cells: int,
             played: dict[str, Schedule]) -> tuple[Schedule, Fraction, str] | str:
    """A flood threshold run of the failing bolt G (its evidence's chain drains into it) to `held` tuples: its
    schedule, the time G holds them (G fails there), and the chain's last bolt (whose drain ends the run), or why
    there is none."""
    assert cert.evidence.flood_certificate is not None and net.failures is not None
    chain, g = chain_of(cert.evidence.flood_certificate), cert.failing
    first = next(b for b in net.bolts if b.name == chain[0])
    for base in phase_one(net, chain[0], g, played.get(chain[0])):
        slow = (first.alpha * (1 + net.tolerance) + net.max_idle) * held
        for _ in range(MAX_DOUBLINGS):
            sched = switched(net, base, chain, g, slow)  # (G keeps its slow phase-1 pace: a switched bolt never fails)
            sched = replace(sched, switches=tuple(w for w in sched.switches if w.bolt != g))
            goal = Goal(g, held, chain[-1])
            out = build_finite_run(net, sched, goal, deadline=deadline, max_cells=max_cells)
            if isinstance(out, Trace):
                at = out.positions[-1].exact_time
                if at >= net.failures.min_ttf[g]:  # (G never failed before: the schedules' target never fails)
                    return sched, at, chain[-1]
            elif out in ("cancelled", "time limit reached"):
                return out
            slow *= 2
    return f"no flood took {g} to {held} tuples"


def spill_runs(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace], threshold: int,
               notes: list[str], *, deadline: float | None = None, played: dict[str, Schedule] | None = None) -> None:
    """Attach to every verdict unbounded by a spill a threshold run past `threshold` (its trace appended to
    `traces`), in place; a bolt without one gets a note saying what is missing. `played`: as `build_spill_run`."""
    for name, verdict in verdicts.items():
        cert = verdict.spill_certificate
        if verdict.verdict != "unbounded" or cert is None:
            continue
        cone = build_network(topo, [name]).topology
        found = storm_run_found(name, threshold, build_spill_run(cone, cert, threshold, deadline=deadline,
                                                                 played=played), notes, traces)
        if found is None:
            continue
        trace, run = found
        with_run, reached = cert.model_copy(update={"run": run}), run.reached
        index = cert.evidence.trace_index
        record_checked(verdicts, name, verdict.model_copy(update={
            "spill_certificate": with_run,
            "message": f"{verdict.message}. A certified finite run takes its queue to {reached} (at least "
                       f"{threshold}): {cert.failing} backs up, then fails once"}),
                       check_spill_certificate(cone, with_run, traces[index] if index is not None else None, trace),
                       notes, "the threshold run", (traces, trace))
