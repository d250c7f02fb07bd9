"""Several failing bolts on one paced spout: the joint cycle whose replay backlog grows although no one bolt's does.

docs/boundedness.md, "Unbounded: several failing bolts on one paced spout", proves it. A failing bolt F fed by a
spout s's default stream runs the storm's cycle (`storm.storm_cycles`) with up ≥ min_ttf: m emissions a gap g
apart per cycle, F at its slowest completing at most C_F·k tuples while up, its own growth δ = m − C_F·k per cycle,
which may be zero or negative. Every other failing bolt G that receives s's default stream fails once every q_G
of F's cycles, `offset` after the first emission after F's recovery (while s still replays F's own losses, so that
emission carries a fresh tuple and a replay), down r_G: it loses at least ℓ_G = 2 + 2·(⌈(offset + r_G)/g⌉ − 1)
tuples (the two it holds, and two per emission while down), which s replays into F's trees. The tuples pending in
F's trees grow by δ + Σ_G ℓ_G/q_G per cycle; when that is positive, s's backlog passes any B, and the paced drain
(app/core/tcn/paced.py) follows. This module only finds the cycle; `app/core/tcn/check/joint.py` checks it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from app.core.results import JointFailure
from app.core.tcn.network import BoltParams, Network
from app.core.tcn.storm import StormPlan
from app.core.topology import Topology

__all__ = ["JointPlan", "joint_cycles"]

MAX_JOINT_EMISSIONS = 200  # cycles tried per failing bolt: m from the shortest legal cycle on


@dataclass(frozen=True)
class JointPlan:
    """F's cycle (`plan`, up for `up` seconds), the other failing bolts' failures, and the growth of F's pending
    tuples per cycle (`per_cycle`, positive)."""

    plan: StormPlan
    up: Fraction
    others: tuple[tuple[str, Fraction, int, int, Fraction], ...]  # per G: name, reboot, every, loss, offset
    per_cycle: Fraction

    def failures(self) -> list[JointFailure]:
        """The other bolts' failures as the certificate states them (each at s's first emission after F's
        recovery)."""
        return [JointFailure(bolt=name, reboot=_text(r), every=every, emission=1, offset=_text(offset), loss=loss)
                for name, r, every, loss, offset in self.others]


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _others(net: Network, cone: Topology, failing: BoltParams, spout: str) -> list[BoltParams]:
    """The other failing bolts that receive `spout`'s default stream, ordinary ones (no window, join or threads)."""
    fm = net.failures
    assert fm is not None
    return [b for b in net.bolts if b.name != failing.name and b.name in fm.min_ttf and not b.join
            and (spout, "default") in b.sources and cone.bolt_by_name(b.name).window is None
            and cone.bolt_by_name(b.name).threads is None]


_Table = list[tuple[str, Fraction, list[tuple[Fraction, int, Fraction]]]]  # per G: offset, (reboot, loss, need/g)


def _table(net: Network, g: Fraction, own_reboot: Fraction, others: list[BoltParams]) -> _Table:
    """Per other failing bolt G: its offset (half its fastest batch, or half a gap) and, per reboot worth trying
    (the bounds and every whole number of gaps between), the tuples one failure loses at s's first emission after
    F's recovery and the least time between two failures in gaps (max(min_ttf, offset) + reboot)/g."""
    fm = net.failures
    assert fm is not None
    held = 2 if math.floor(own_reboot / g) - 1 >= 1 else 1
    low, high = fm.min_reboot, fm.max_reboot
    reboots = sorted({high, low} | {i * g for i in range(math.ceil(low / g), math.floor(high / g) + 1)})
    out: _Table = []
    for b in others:
        offset = min(b.alpha * (1 - net.tolerance), g) / 2
        if offset > 0:
            out.append((b.name, offset, [(r, held + 2 * (math.ceil((offset + r) / g) - 1),
                                          (max(fm.min_ttf[b.name], offset) + r) / g) for r in reboots]))
    return out


def _best(table: _Table, m: int) -> list[tuple[str, Fraction, int, int, Fraction]]:
    """Per G, for F's cycles of m gaps: (name, reboot, every, loss, offset) with the most loss per cycle."""
    out = []
    for name, offset, options in table:
        best: tuple[str, Fraction, int, int, Fraction] | None = None
        for reboot, loss, need in options:
            every = max(1, -(-need.numerator // (need.denominator * m)))
            if best is None or loss * best[2] > best[3] * every:
                best = (name, reboot, every, loss, offset)
        if best is not None:
            out.append(best)
    return out


def joint_cycles(net: Network, cone: Topology, failing: BoltParams, spout: str) -> Iterator[JointPlan]:
    """Every joint cycle that grows for `failing` fed by `spout`'s default stream under paced replays, one per count
    m of emissions (the shortest legal gap, the longest reboot, up = m·g − r ≥ min_ttf); none when no other failing
    bolt receives that stream or the storm's rules do not hold."""
    fm = net.failures
    if (fm is None or fm.replay != "paced" or failing.name not in fm.min_ttf or failing.timer is not None
            or failing.join or failing.slide != 1 or (spout, "default") not in failing.sources):
        return
    others = _others(net, cone, failing, spout)
    if not others:
        return
    period = next(s.period for s in net.spouts if s.name == spout)
    tau, ttf, reboot = net.tolerance, fm.min_ttf[failing.name], fm.max_reboot
    lo, hi = period * (1 - tau), period * (1 + tau)
    slowest = net.max_idle + failing.alpha * (1 + tau)
    waits = all(name == spout for name, _ in failing.sources)
    first = max(1, math.ceil((ttf + reboot) / hi))
    table, table_gap, most = [], Fraction(0), 0
    for m in range(first, first + MAX_JOINT_EMISSIONS):
        g = max(lo, (ttf + reboot) / m)
        up = m * g - reboot
        if g > hi or g > up:
            continue
        k = math.floor((up - g) / slowest) if waits else math.ceil(up / slowest) - 1
        own = m - failing.take_max * k
        if g != table_gap:
            table, table_gap = _table(net, g, reboot, others), g
            most = sum(max(loss for _, loss, _ in options) for _, _, options in table)
        if own + most <= 0:
            continue  # (each G fails at most once per cycle of F)
        failures = _best(table, m)
        per_cycle = own + sum((Fraction(f[3], f[2]) for f in failures), Fraction(0))
        if per_cycle > 0:
            yield JointPlan(StormPlan(failing.name, spout, reboot, m, g, waits, k, own), up, tuple(failures),
                            per_cycle)
