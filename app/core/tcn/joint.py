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

import functools
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
    others: tuple[JointFailure, ...]
    per_cycle: Fraction


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _others(net: Network, cone: Topology, failing: BoltParams, spout: str) -> list[BoltParams]:
    """The other failing bolts that receive `spout`'s default stream, ordinary ones (no window, join or threads)."""
    fm = net.failures
    assert fm is not None
    return [b for b in net.bolts if b.name != failing.name and b.name in fm.min_ttf and not b.join
            and (spout, "default") in b.sources and cone.bolt_by_name(b.name).window is None
            and cone.bolt_by_name(b.name).threads is None]


@functools.lru_cache(maxsize=4096)
def _losses(g: Fraction, own_reboot: Fraction, fastest: Fraction, low: Fraction,
            high: Fraction) -> tuple[Fraction, tuple[tuple[Fraction, int], ...]]:
    """G's offset (half its fastest batch, or half a gap) and, per reboot worth trying (the bounds and every whole
    number of gaps between), the tuples one failure loses at its first emission after F's recovery."""
    offset = min(fastest, g) / 2
    held = 2 if math.floor(own_reboot / g) - 1 >= 1 else 1
    reboots = {high, low} | {i * g for i in range(math.ceil(low / g), math.floor(high / g) + 1)}
    return offset, tuple((r, held + 2 * (math.ceil((offset + r) / g) - 1)) for r in sorted(reboots)
                         if low <= r <= high)


def _best_failure(net: Network, g: Fraction, cycle: Fraction, own_reboot: Fraction,
                  b: BoltParams) -> tuple[Fraction, int, int, Fraction] | None:
    """G's failure plan with the most tuples lost per cycle of F (`_losses`): (reboot, every, loss, offset)."""
    fm = net.failures
    assert fm is not None
    if b.alpha * (1 - net.tolerance) <= 0:
        return None
    offset, losses = _losses(g, own_reboot, b.alpha * (1 - net.tolerance), fm.min_reboot, fm.max_reboot)
    best: tuple[Fraction, int, int, Fraction] | None = None
    for reboot, loss in losses:
        every = max(1, math.ceil((fm.min_ttf[b.name] + reboot) / cycle))
        if best is None or loss * best[1] > best[2] * every:
            best = (reboot, every, loss, offset)
    return best


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
    for m in range(first, first + MAX_JOINT_EMISSIONS):
        g = max(lo, (ttf + reboot) / m)
        up = m * g - reboot
        if g > hi or g > up:
            continue
        k = math.floor((up - g) / slowest) if waits else math.ceil(up / slowest) - 1
        own = m - failing.take_max * k
        failures = {b.name: f for b in others if (f := _best_failure(net, g, m * g, reboot, b)) is not None}
        per_cycle = own + sum((Fraction(f[2], f[1]) for f in failures.values()), Fraction(0))
        if per_cycle > 0:
            yield JointPlan(StormPlan(failing.name, spout, reboot, m, g, waits, k, own), up, tuple(
                JointFailure(bolt=name, reboot=_text(r), every=every, emission=1, offset=_text(offset), loss=loss)
                for name, (r, every, loss, offset) in failures.items()), per_cycle)
