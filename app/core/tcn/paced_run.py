"""The threshold run of a paced replay backlog: a concrete finite run in which the target's queue passes N.

docs/boundedness.md, "The threshold run of a paced replay backlog", states the construction: on the target's cone,
the certificate's storm cycle played by the product's simulator (`storm_run.storm_schedule`: the spout one tuple
every `gap` seconds, the failing bolt at its slowest, failing `min_ttf` after each recovery and down for
`reboot`, the target at its slowest, every other bolt fastest, no other bolt failing) for n cycles, after which
the failing bolt fails no more (`Schedule.fail_until`); the spout's backlog then comes out one replay per fresh
tuple. The run stops at the first position where the target's queue holds N. n starts from the certificate's
figures and is doubled until a run gets there. Nothing here is trusted: the trace must pass the certifier, and
`app/core/tcn/check/storm.py` certifies it again with the certificate it is attached to (`storm_run.storm_runs`
attaches it).
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from app.core.formats.trace import Trace
from app.core.results import StormCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.network import Network, build_network
from app.core.tcn.schedule import Schedule
from app.core.tcn.simulate import MAX_CELLS, Goal, build_finite_run
from app.core.tcn.storm_run import cycle_growth, storm_schedule
from app.core.topology import Topology

__all__ = ["MAX_DOUBLINGS", "build_paced_run", "paced_phase_one", "paced_schedule"]

MAX_DOUBLINGS = 5  # cycle counts tried per run, each twice the one before


def _first_failure(sched: Schedule, cert: StormCertificate) -> Fraction:
    return sched.first_fail.get(cert.failing, sched.fail[cert.failing][0])


def paced_schedule(net: Network, cert: StormCertificate, cycles: int) -> Schedule | None:
    """The certificate's cycle for `cycles` failures of the failing bolt, then none (its recovery after the last
    one computes a next failure at or after `fail_until`), on `net`; None when the cycle is not a schedule there."""
    base = storm_schedule(net, cert)
    if base is None:
        return None
    cycle = cert.emissions * Fraction(cert.gap)
    until = _first_failure(base, cert) + cycles * cycle
    return replace(base, fail_until=dict.fromkeys(base.fail, until))


def paced_phase_one(net: Network, cert: StormCertificate, slow: Fraction) -> Schedule | None:
    """A flood's phase 1 of `slow` seconds whose source backs up by this paced backlog (`flood_run`, a chain): the
    cycle until u, then no failure while the spout's backlog, about δ·u/T tuples, drains one replay a gap into the
    certificate's target (slowest) until `slow` = u + (δ·u/T)·gap."""
    cycle = cert.emissions * Fraction(cert.gap)
    until = slow * cycle / (cycle + cycle_growth(cert) * Fraction(cert.gap))
    base = storm_schedule(net, cert)
    return None if base is None else replace(base, fail_until=dict.fromkeys(base.fail, until))


def _cycles(cert: StormCertificate, threshold: int) -> int:
    """The failure cycles whose backlog, at the certificate's drain, takes the target's queue to about twice
    `threshold` (the constants of the proof left out: the runs double it when short)."""
    spare = sum((Fraction(t.rate) * Fraction(t.ratio) for t in cert.terms), Fraction(0)) - Fraction(cert.capacity or 0)
    backlog = 2 * threshold / (max(spare, Fraction(1, 100)) * Fraction(cert.gap))
    # (other failing bolts: their first failure comes after their min_ttf, about `every` cycles)
    return math.ceil(backlog / cycle_growth(cert)) + 2 + max((o.every for o in cert.others), default=0)


def build_paced_run(topo: Topology, cert: StormCertificate, threshold: int, *, deadline: float | None = None,
                    max_cells: int = MAX_CELLS) -> tuple[Trace, int] | str:
    """A certified finite run of the target's cone `topo` in which its queue reaches `threshold`: (trace, the
    target's largest queue), or why there is none."""
    net = build_network(topo, [cert.target])
    cycles, best, tried = _cycles(cert, threshold), -1, ""
    for _ in range(MAX_DOUBLINGS):
        sched = paced_schedule(net, cert, cycles)
        if sched is None:
            return "the paced backlog's cycle is not a schedule of this document"
        goal = Goal(cert.target, threshold, cert.target)
        out = build_finite_run(net, sched, goal, deadline=deadline, max_cells=max_cells)
        if isinstance(out, Trace):
            found = certify(out, checked=[cert.target], threshold=threshold)
            if not found.ok:
                return f"a run the certifier rejected (a defect): {'; '.join(found.problems[:2])}"
            return out, goal.peak
        if out in ("cancelled", "time limit reached"):
            return out
        best, tried = max(best, goal.peak), out
        cycles *= 2
    return f"{MAX_DOUBLINGS} cycle counts up to {cycles // 2} did not take it there ({tried}; its queue reached {best})"
