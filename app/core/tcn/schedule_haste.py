"""Haste schedules (docs/simulation.md, "Haste"): the target is slowest, except while a failing bolt K below it is
down, when it works off its queue as fast as allowed into K, which loses all of it.

When the tuples the target sends K multiply on the way (the product of the largest output ratios along the paths
from the target to K, the *gain*, is above 1), each such tuple comes back as several replays (docs/model.md 7.3's
upper end: one spout tuple per lost tuple), more than the target took from its queue for it. Slow otherwise, the
target then backs up by more than the spout's spare per cycle, which no schedule of fixed durations shows (the
target's slowest pace starves K's failures of tuples, its fastest drains the queue). The other failing bolts fail
too, their first failures spread over K's first up stretch, so that their losses keep the spout replaying, and
the target backing up, until its queue is large enough at K's next failure (the published focused-crawler cfg-5
with failures on: WpDeserializer, gain 2 into expander; bench/RESULTS.md, "cfg-5 with failures on").

Every duration lies on a grid aligned with K's failure cycle: the target's slow cycle divides K's first failure
time and its cycle, its hasty batches tile K's reboot, and the spouts' gaps divide K's cycle, so that the run,
once the target's queue never empties, repeats with K's cycle and closes a lasso. Nothing here is trusted: the
simulation's lasso is certified like any other.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction

from app.core.rates import sigma_bounds
from app.core.tcn.network import Network, time_grid
from app.core.tcn.schedule import Haste, Schedule, unaligned_schedule

__all__ = ["HASTE_CELLS", "haste_schedules"]

HASTE_CELLS = 300_000  # positions × bolts per haste schedule at most (a lasso of cfg-5 closes within 170,000)
MAX_HASTE = 2  # haste schedules per target at most, the largest gains first


def _gain(net: Network, target: str, k: str) -> Fraction | None:
    """The sum over the paths from `target` to `k` of the products of the largest output ratios along them (the
    target's own stream included), or None when a cycle lies on the way."""
    bolts = {b.name: b for b in net.bolts}
    memo: dict[str, Fraction] = {}
    on_path: set[str] = set()

    def into(u: str) -> Fraction | None:  # what one tuple processed by u puts at k, at most
        if u in memo:
            return memo[u]
        if u in on_path:
            return None
        on_path.add(u)
        total = Fraction(0)
        for b in net.bolts:
            for src, stream in b.sources:
                if src != u:
                    continue
                st = next(s for s in bolts[u].streams if s.name == stream)
                if st.silent:
                    continue
                hi = sigma_bounds(st.sigma, bolts[u].take_max, net.emission)[1]
                below = Fraction(1) if b.name == k else into(b.name)
                if below is None:
                    return None
                total += hi * below
        on_path.discard(u)
        memo[u] = total
        return total

    return into(target)


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator), a.denominator * b.denominator)


def haste_schedules(net: Network, target: str) -> Iterator[Schedule]:
    """One haste schedule per failing bolt K below `target` with a gain above 1 (at most MAX_HASTE, the largest
    gains first), when replays are paced, the target is an ordinary bolt and the spouts that feed it directly send
    it, at their fastest with a replay per fresh tuple, more than it processes at its slowest;
    `schedule.schedules` yields them first among the runs with failures, and `simulate.build_lasso` plays each up
    to HASTE_CELLS."""
    fm, bolts = net.failures, {b.name: b for b in net.bolts}
    t = bolts.get(target)
    if fm is None or fm.replay != "paced" or t is None or t.timer is not None or t.join or t.slide != 1:
        return
    step, tau, idle = time_grid(net), net.tolerance, net.max_idle
    # the target backs up only while a spout replays: fed directly by spouts whose fresh tuples and replays, at
    # their fastest, outrun its slowest pace
    spouts = {s.name: s for s in net.spouts}
    fed = [spouts[u] for u, stream in t.sources if u in spouts and stream == "default"]
    if sum((2 / (s.period * (1 - tau)) for s in fed), Fraction(0)) * (t.alpha * (1 + tau) + idle) <= t.take_max:
        return
    up = {name: ttf if ttf > 0 else step for name, ttf in fm.min_ttf.items() if name != target and name in bolts}
    down = fm.max_reboot
    gains = {k: _gain(net, target, k) for k in up}
    for k in sorted((k for k, g in gains.items() if g is not None and g > 1), key=lambda k: (-(gains[k] or 0), k))[
            :MAX_HASTE]:
        cycle = up[k] + down
        others = [name for name in sorted(up) if name != k]
        first = {k: up[k]} | {name: max(up[name], up[k] + down + up[k] * (n + 1) / (len(others) + 1))
                              for n, name in enumerate(others)}
        base = unaligned_schedule(net, target, {name: (u, down) for name, u in up.items()})
        fast = math.floor(down / (t.alpha * (1 - tau)))
        if base is None or fast < 1:
            continue
        grid = _gcd(up[k], cycle)  # the target's slow cycle divides K's first failure time and its cycle
        slow = grid / math.ceil(grid / (t.alpha * (1 + tau) + idle))
        processing, delay = min(t.alpha * (1 + tau), slow), slow - min(t.alpha * (1 + tau), slow)
        if processing < t.alpha * (1 - tau):  # (a grid finer than a batch: the target's slowest, unaligned)
            processing, delay = base.processing[target], base.delay[target]
        hasty = down / fast if down / fast <= t.alpha * (1 + tau) else t.alpha * (1 - tau)
        gaps = {}
        for s in net.spouts:
            lo, hi = s.period * (1 - tau), s.period * (1 + tau)
            n = math.floor(cycle / lo)
            gaps[s.name] = cycle / n if n >= 1 and cycle / n <= hi else base.gap[s.name]
        yield replace(base, gap=gaps, processing={**base.processing, target: processing},
                      delay={**base.delay, target: delay}, first_fail=first,
                      haste={target: Haste(k, hasty, Fraction(0))})
