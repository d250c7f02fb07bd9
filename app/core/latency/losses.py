"""What the failure check proves for the latency bounds, and what one failure loses (docs/latency.md, "Replays in lumps"
and "Losses from the bolt's own arrivals").

The failure check's fixpoint (docs/boundedness.md, "Failures") gives every stream's arrival curve under failures and,
per failing bolt j, ℓ_j: what one failure loses at most. The latency pass proves each bolt's arrival curve α_j, and
from it a second loss bound ℓ'_j that does not count the queue twice; the lumps of a second pass use the smaller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from app.core.rates.failures_check import failure_check
from app.core.rates.verdicts import status_of

if TYPE_CHECKING:
    from app.core.failures import FailureModel
    from app.core.rates import RateAnalysis, RateFigures
    from app.core.rates.arrival import Curve
    from app.core.topology import Topology


@dataclass
class FailureInputs:
    """The failure check's curves for the latency pass: per component and stream the fixpoint's curve, per bolt reached
    by a failure or a replay its inflow (None: not bounded), per failing bolt its loss bound (None: none)."""

    streams: dict[str, dict[str, Curve]] = field(default_factory=dict)
    inflow: dict[str, Curve | None] = field(default_factory=dict)
    lost: dict[str, Fraction | None] = field(default_factory=dict)


def failure_inputs(topo: Topology, e: RateFigures, model: FailureModel | None, rates: RateAnalysis | None
                   ) -> FailureInputs:
    """The replays' fixpoint of `rates` (when given: the same bounds) or of a failure check made here."""
    out = FailureInputs()
    if model is None:
        return out
    shared = rates.failure_check() if rates is not None else None
    check = shared if shared is not None else failure_check(
        topo, e, model, {b.id: status_of(e, b.id) for b in topo.bolts}, nominal_estimate=False)
    if check.bounds is not None:
        out.streams, out.lost = check.bounds.stream, dict(check.bounds.lost)
    for b in topo.bolts:
        f = check.bolts[b.id]
        if f.reached:
            out.inflow[b.id] = check.bounds.inflow[b.id] if f.status == "bounded" and check.bounds is not None else None
    return out


def sharper_losses(lost: dict[str, Fraction | None], arrivals: dict[str, Curve | None], e: RateFigures,
                   reboot: Fraction, idle: Fraction, q0: Fraction) -> dict[str, Fraction | None]:
    """Per failing bolt the smaller of ℓ_j and ℓ'_j from its arrival curve (`arrivals`; None or missing: ℓ_j)."""
    out = dict(lost)
    for j, ell in lost.items():
        arrival = arrivals.get(j)
        own = None if arrival is None or ell is None else loss_bound(
            arrival, e.burst[j], e.longest_phase[j], e.slowest_take[j], idle, reboot, q0)
        out[j] = ell if own is None or ell is None else min(ell, own)
    return out


MAX_LOSS_STEPS = 100_000  # takes looked at for one loss bound (then the fixpoint's ℓ alone)


def loss_bound(alpha: Curve, take: int, phase: Fraction, slow: Fraction, idle: Fraction, reboot: Fraction,
               q0: Fraction) -> Fraction | None:
    """What one failure of a bolt loses at most, from its own arrival curve α (docs/latency.md, "Losses from the
    bolt's own arrivals"): the larger of C + max_k (⌊α(m + d + (k+1)·L)⌋ − C·k) (its queue was empty at some
    position before the failure) and Q₀ + max_k (⌊α(m + max_idle + d + k·L)⌋ − C·k) (never since the start),
    k ≥ 0 (None: not found within MAX_LOSS_STEPS takes)."""
    def most(start: Fraction) -> Fraction | None:
        best: Fraction | None = None
        for k in range(MAX_LOSS_STEPS):
            here, there = alpha.at(start + k * slow), alpha.at(start + (k + 1) * slow)
            if here is None or there is None:
                return None
            value = Fraction(math.floor(here) - take * k)
            best = value if best is None else max(best, value)
            if there - here <= take:  # (α concave: no later step gains more than a take; the values only fall)
                return best
        return None

    emptied, never = most(reboot + phase + slow), most(reboot + idle + phase)
    return None if emptied is None or never is None else max(take + emptied, q0 + never)
