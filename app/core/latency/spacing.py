"""Spaced arrivals: a bolt that finds itself idle with an empty queue at every arrival (docs/latency.md, "Spaced
arrivals: one batch at a time").

The tuples a bolt j receives come at positions: an emission of its source. When consecutive arrival positions are at
least L_j = α(1+τ) + max_idle apart and each brings at most C_TAKE tuples (and there are no initial tuples), every
arrival finds j idle with an empty queue, is taken whole within max_idle and emitted within α(1+τ) of that take: its
sojourn is at most L_j, however many tuples the bolt's arrival curve allows over longer windows. The spacing passes
down a line of such bolts (one input stream each, integer σ): each emit follows one arrival by a delay in
[α(1−τ), max_idle + α(1+τ)], so consecutive emits are at least the arrivals' spacing minus max_idle + 2τα apart.
"""

from __future__ import annotations

from collections.abc import Collection
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.failures import FailureModel
    from app.core.rates import RateFigures
    from app.core.topology import Topology


def spaced_sojourns(topo: Topology, e: RateFigures, model: FailureModel | None, order: list[str],
                    excluded: Collection[str]) -> list[tuple[str, Fraction | None]]:
    """Per bolt id of `order` (each after its sources outside cycles): the sojourn bound L = α(1+τ) + max_idle when
    its arrivals are spaced, else None. `excluded`: bolts that do not take and emit batch by batch (windows, joins)."""
    if e.q0 != 0 or e.tau >= 1:
        return [(j, None) for j in order]
    spacing: dict[str, tuple[Fraction, Fraction]] = {}  # component -> (the least time between its emits, the
    # most tuples one emit sends, before its stream's ratio)
    replaying = set() if model is None or model.replay == "none" else \
        {s for j in model.min_ttf for s in model.impact.get(j, {})}
    for s in topo.spouts:
        # an emission of n ≥ 1 fresh tuples is followed by the next one at least (n − τ)·a ≥ (1 − τ)·a later
        # (docs/model.md 2.1); paced replays add at most n, at-once ones the whole backlog (section 7.3)
        if s.id not in replaying or model is None or model.replay == "paced":
            spacing[s.id] = ((1 - e.tau) / Fraction(e.spout_nominal[s.id]),
                             Fraction(e.burst[s.id] * (2 if s.id in replaying else 1)))
    out: dict[str, Fraction] = {}
    for j in order:
        if j in excluded or j in e.timed:
            continue
        inputs = [(src, stream) for src, stream in e.inputs[j] if e.carries(src, stream)]
        if len(inputs) != 1 or inputs[0][0] not in spacing:
            continue
        src, stream = inputs[0]
        sigma, lo, hi = e.streams[src][stream]
        if not lo == sigma == hi or sigma.denominator != 1:
            continue
        gap, size = spacing[src]
        size *= sigma
        slow = e.slowest_take[j]
        if size > e.burst[j] or gap < slow:
            continue
        out[j] = slow
        # its emits: one per arrival (taken within max_idle, emitted α(1−τ)..α(1+τ) after its take), or none (lost)
        alpha = e.longest_phase[j] / (1 + e.tau)
        spacing[j] = (gap - (slow - e.longest_phase[j]) - 2 * e.tau * alpha, size)
    return [(j, out.get(j)) for j in order]
