"""The threshold run of a replay storm: a concrete finite run in which the target's queue passes N.

docs/boundedness.md, "The threshold run of a replay storm", states the construction: on the target's cone, the
storm certificate's cycle played by the product's simulator: the spout one tuple every `gap` seconds, the failing
bolt at its slowest (α(1+τ), then the whole idle allowance), failing `min_ttf` after each recovery and down for
`reboot`; its first failure a little after `min_ttf` when it waits a gap for its first tuple, so that it recovers
just after an emission; the target at its slowest, every other bolt fastest, no other bolt failing. The run stops
at the first position where the target's queue holds N. Nothing here is trusted: the trace must pass the
certifier, and `app/core/tcn/check/storm.py` certifies it again with the certificate it is attached to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from app.core.formats.trace import AnyTrace, Trace
from app.core.results import BoltVerdict, StormCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.network import Network, build_network
from app.core.tcn.recorded import record_checked, storm_run_found
from app.core.tcn.schedule import Schedule, Switch, unaligned_schedule
from app.core.tcn.simulate import MAX_CELLS, Goal, build_finite_run
from app.core.topology import Topology

__all__ = ["RunBuilder", "build_storm_run", "cycle_growth", "storm_runs", "storm_schedule"]

#: a threshold run's builder: (the target's cone, its certificate, N, deadline=) -> (trace, largest queue) or why not
RunBuilder = Callable[..., "tuple[Trace, int] | str"]
NEVER_S = Fraction(10**9)  # a switch that never comes: keeps the finite run going until the threshold


def _offset(cert: StormCertificate, up: Fraction, slowest: Fraction) -> Fraction:
    """How long after min_ttf the first failure comes when the failing bolt waits a gap after each recovery: small
    enough that it completes no more batches than the certificate counts, a power of two of a second."""
    gap = Fraction(cert.gap)
    x = (up - gap) / slowest
    room = min(gap, (math.floor(x) + 1 - x) * slowest) / 2
    eps = Fraction(1)
    while eps > room:
        eps /= 2
    return eps


def cycle_growth(cert: StormCertificate) -> Fraction:
    """The growth of the failing bolt's pending tuples per cycle, the other failing bolts' losses spread over their
    cycles (docs/boundedness.md, "Unbounded: several failing bolts on one paced spout"): a fraction, positive for a
    certificate its checker accepts."""
    return cert.growth + sum((Fraction(o.loss, o.every) for o in cert.others), Fraction(0))


def _others(net: Network, cert: StormCertificate) -> tuple[dict[str, tuple[Fraction, Fraction]], dict[str, Fraction]]:
    """The other failing bolts' failure plans: (up, down) and the first failure, `offset` after the spout's
    `emission`-th emission after a recovery of the failing bolt at least their min_ttf after time 0."""
    fm, cycle, gap = net.failures, cert.emissions * Fraction(cert.gap), Fraction(cert.gap)
    fail: dict[str, tuple[Fraction, Fraction]] = {}
    first: dict[str, Fraction] = {}
    for o in cert.others:
        reboot, after = Fraction(o.reboot), o.emission * gap + Fraction(o.offset)
        ttf = fm.min_ttf[o.bolt] if fm is not None and o.bolt in fm.min_ttf else Fraction(0)
        fail[o.bolt] = (o.every * cycle - reboot, reboot)
        first[o.bolt] = max(1, math.ceil((ttf - after) / cycle)) * cycle + after
    return fail, first


def storm_schedule(net: Network, cert: StormCertificate) -> Schedule | None:
    """The certificate's cycle as a schedule of the simulator on `net` (a cone that holds the failing bolt, its
    spout and the certificate's target, which is slowest), or None. A flood's threshold run uses it as a phase-1
    schedule when its source is unbounded by the storm (`flood_run.threshold_runs`)."""
    bolts = {b.name: b for b in net.bolts}
    if (net.failures is None or cert.failing not in bolts or cert.target not in bolts
            or cert.failing not in net.failures.min_ttf):
        return None
    base = unaligned_schedule(net, cert.target, slow=frozenset({cert.failing}))
    if base is None:
        return None
    up = Fraction(cert.up) if cert.up is not None else net.failures.min_ttf[cert.failing]
    reboot = Fraction(cert.reboot)
    f = bolts[cert.failing]
    slowest = net.max_idle + f.alpha * (1 + net.tolerance)
    first = {cert.failing: up + _offset(cert, up, slowest)} if cert.waits else {}
    target = bolts[cert.target]
    hold = Switch(cert.target, target.alpha * (1 + net.tolerance), net.max_idle, False)
    fail, timed = _others(net, cert)
    if not set(fail) <= set(net.failures.min_ttf):
        return None
    return replace(base, gap={**base.gap, cert.spout: Fraction(cert.gap)}, fail={cert.failing: (up, reboot), **fail},
                   first_fail=first | timed, switch_at=NEVER_S, switches=(hold,))


def build_storm_run(topo: Topology, cert: StormCertificate, threshold: int, *, deadline: float | None = None,
                    max_cells: int = MAX_CELLS) -> tuple[Trace, int] | str:
    """A certified finite run of the target's cone `topo` in which its queue reaches `threshold`: (trace, the
    target's largest queue), or why there is none."""
    net = build_network(topo, [cert.target])
    sched = storm_schedule(net, cert)
    if sched is None:
        return "the storm's cycle is not a schedule of this document"
    goal = Goal(cert.target, threshold, cert.target)
    out = build_finite_run(net, sched, goal, deadline=deadline, max_cells=max_cells)
    if not isinstance(out, Trace):
        return f"the storm's cycle did not take it there ({out}; its queue reached {goal.peak})"
    found = certify(out, checked=[cert.target], threshold=threshold)
    if not found.ok:
        return f"a run the certifier rejected (a defect): {'; '.join(found.problems[:2])}"
    return out, goal.peak


def storm_runs(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace], threshold: int,
               notes: list[str], *, deadline: float | None = None, build: RunBuilder | None = None) -> None:
    """Attach to every verdict unbounded by a storm a threshold run past `threshold` (its trace appended to
    `traces`), in place; a bolt without one gets a note saying what is missing. `build`: the builder of a paced
    backlog's run (`paced_run.build_paced_run`), for the paced certificates; without it, the at-once ones."""
    for name, verdict in verdicts.items():
        cert = verdict.storm_certificate
        if verdict.verdict != "unbounded" or cert is None or (cert.replay == "paced") != (build is not None):
            continue
        cone = build_network(topo, [name]).topology
        built = (build or build_storm_run)(cone, cert, threshold, deadline=deadline)
        found = storm_run_found(name, threshold, built, notes, traces)
        if found is None:
            continue
        trace, run = found
        with_run, reached = cert.model_copy(update={"run": run}), run.reached
        record_checked(verdicts, name, verdict.model_copy(update={
            "storm_certificate": with_run,
            "message": f"{verdict.message}. A certified finite run takes its queue to {reached} (at least "
                       f"{threshold}) under that failure cycle"
                       + (", then no failure while the backlog drains" if cert.replay == "paced" else "")}),
                       check_storm_certificate(cone, with_run, trace), notes, "the threshold run", (traces, trace))
