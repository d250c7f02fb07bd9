"""A failing bolt's storm over several failure cycles: what it holds at a failure, and its own queue, when the
replays one failure leaves behind may take several up stretches to drain.

docs/boundedness.md, "Failures", "At once: tails that drain over several cycles", proves it. Count the tuples of
bolt j's own trees that are pending (its queue and batch, and the replays of its own losses waiting at its spout):
every tuple that arrives at j is counted once when it arrives, and a lost tuple stays pending (it is replayed once
at most), so over a stretch in which j's queue never empties for good, what it holds at the end is at most what
arrived without its own replays, minus what it completed. Completions lag only while j is down (at most
max_reboot), while it waits for its tail (at most the spout's longest gap β_s after a recovery) and by a batch per
up stretch, and every up stretch lasts at least min_ttf; so each extra failure cycle inside the stretch adds at
most the arrivals of min_ttf + max_reboot seconds and removes at least c·(min_ttf − β_s − α(1+τ)) − C.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Protocol

__all__ = ["Flow", "held_over_cycles", "over_cycles", "own_queue", "storm_loss"]


class Flow(Protocol):
    """An arrival curve (`app.core.rates.curves.Curve`, which calls this module: so it is named by its shape)."""

    @property
    def pieces(self) -> tuple[tuple[Fraction, Fraction], ...]: ...

    @property
    def rate(self) -> Fraction | None: ...

    def shifted(self, d: Fraction, burst: Fraction = ...) -> Flow: ...

    def excess(self, rate: Fraction) -> Fraction | None: ...


def _crossings(flow: Flow) -> list[Fraction]:
    """Every window length w > 0 at which two pieces of `flow` cross (the envelope's breakpoints among them)."""
    out = []
    for i, (r1, b1) in enumerate(flow.pieces):
        for r2, b2 in flow.pieces[i + 1:]:
            if r1 != r2 and (b2 - b1) / (r1 - r2) > 0:
                out.append((b2 - b1) / (r1 - r2))
    return out


def over_cycles(flow: Flow, rate: Fraction, busy: Fraction, cycle: Fraction, gain: Fraction) -> Fraction | None:
    """max over n ≥ 1 of h((n − 1)·cycle) − (n − 1)·gain, h(x) = sup over D ≥ x + busy of flow(D) − rate·(D − x − busy)
    (docs/boundedness.md, "At once: tails that drain over several cycles": n − 1 failures inside the stretch, each
    cycle at most `cycle` = min_ttf + max_reboot long and draining at least `gain`); None when there is no maximum
    (the flow outgrows the bolt, or what a cycle brings outgrows what it drains).

    h is concave (a supremum over z ≥ 0 of flow(x + busy + z) − rate·z, with flow concave), so is the function of n,
    and it is linear between the points where x + busy meets a breakpoint of flow: its largest value at a whole n
    is at n = 1 or next to one of those points."""
    least = flow.rate
    if least is None or least > rate or least * cycle > gain:
        return None

    def at(n: int) -> Fraction:
        h = flow.shifted((n - 1) * cycle + busy).excess(rate)
        assert h is not None  # (the least slope is at most `rate`)
        return h - (n - 1) * gain

    candidates = {1}
    for w in _crossings(flow):
        x = (w - busy) / cycle + 1
        candidates |= {n for n in (math.floor(x), math.ceil(x)) if n >= 1}
    return max(at(n) for n in sorted(candidates))


def held_over_cycles(flow: Flow, *, rate: Fraction, busy: Fraction, cycle: Fraction, gain: Fraction,
                     base: Fraction) -> Fraction | None:
    """What the failing bolt holds at a failure, a whole number: ⌊base + over_cycles(...)⌋ with base = Q₀ + C (None:
    no maximum)."""
    top = over_cycles(flow, rate, busy, cycle, gain)
    return None if top is None else Fraction(math.floor(base + top))


def own_queue(flow: Flow, rate: Fraction, held: Fraction, at_failure: Fraction, stretch: Fraction) -> Fraction | None:
    """A bound of the failing bolt's own queue from its pending tuples: from its last empty moment within the up
    stretch (Q₀ + C + the largest excess `held`), or what it held at its last failure (`at_failure`) and what
    arrived since, less its completions once its tail arrived: sup over y ≥ 0 of flow(stretch + y) −
    max(0, c·(y − α(1+τ)) − C), i.e. flow's excess over c from `stretch` = max_reboot + β_s + α(1+τ) + L on."""
    later = flow.shifted(stretch).excess(rate)
    if later is None:
        return None
    return max(held, at_failure + later)


def storm_loss(found: list[Fraction], joint: Fraction | None, m: int, reach: Fraction, ext_in: Fraction,
               emit: int) -> Fraction | None:
    """What one failure loses (docs/boundedness.md, "At once: a failure's storm" and "At once: tails that drain over
    several cycles"): (m+1)(X + O) + m·E with X the least of `found`, or (m+1)(`joint` + O) with the others' replays
    counted once with X, the smaller, plus C_EMIT·m(m+1)/2 for the fresh tuples; None when neither bounds it."""
    each = [(m + 1) * (min(found) + reach) + m * ext_in] if found else []
    each += [] if joint is None else [(m + 1) * (joint + reach)]
    return min(each) + emit * Fraction(m * (m + 1), 2) if each else None
