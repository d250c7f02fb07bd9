"""A paced replay backlog bounded per failure cycle through bolts (docs/boundedness.md, "Failures", "Paced: through
bolts").

A failing bolt F fed by bolts U_i that a paced spout S alone feeds (exact ratios σ_i into F, κ = Σ σ_i ≤ 1) may see
its backlog in S's replays, in a U_i's queue or in its own. The potential Φ = R_S + Σ (σ_i/κ)(U_i's queue, batch and
carry) + (F's queue and batch)/κ counts each S tuple once: S's emits and U_i's emits leave it unchanged (exact: E =
σ(c + P − c′)), F's failures do not raise it (one replay per lost tuple at most, κ ≤ 1); it grows by S's fresh
tuples and the other failing bolts' replays, and falls by what F completes. Over a cycle each branch U_i is counted
by which queue last emptied: S's backlog (then U_i and F drain it in turn), U_i's (then F), or none (U_i busy
throughout); each case bounds the branch's share of Φ at the next recovery by a constant or by its share at this
one plus a drift. Every count is an affine bound of a whole count (a ceiling of a time over a gap), so a margin
of a few tuples per cycle is lost; the spout's and the bolts' rates must all beat S's fresh rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.rates.paced import Paced


@dataclass(frozen=True)
class Stage:
    """A bolt U between S and F: its weight σ/κ in Φ, its batch C, its longest phase α(1+τ) and its longest wait L."""

    weight: Fraction
    take: int
    phase: Fraction
    wait: Fraction


def through_cycle(spout: str, emit: int, fast: Fraction, slow: Fraction, stages: tuple[Stage, ...],
                  via: tuple[str, ...], kappa: Fraction, take: int, phase: Fraction, wait: Fraction, ttf: Fraction,
                  down: Fraction, rho: Fraction, burst: Fraction, reach: Fraction) -> Paced | None:
    """The per-cycle bounds (None: a rate does not beat S's fresh rate, or the drift is positive). S: C_EMIT `emit`,
    rates `fast` = 1/(a(1−τ)), `slow` = 1/(a(1+τ)); F: C `take`, α(1+τ) `phase`, L `wait`, min_ttf `ttf`;
    max_reboot `down`; the other bolts' replays added at S at most ρ·w + b in any window of w; `reach`: what F may
    receive in a window of max_reboot; `via`: the bolts U_i. Every queue starts empty."""
    if not stages or not 0 < kappa <= 1 or rho > slow:
        return None
    g, h = 1 / fast, 1 / slow
    a_ = emit * (g + h) / 2 + (h - g) / 2  # A = a(E + τ): the longest stretch before a fresh tuple is sure
    y_slope = 1 / g + rho - Fraction(take) / wait / kappa  # F busy: its batches C/κ in Φ, one per L at least
    y_int = (Fraction(take) / wait * phase + take) / kappa
    tail = down / g + emit + rho * down + burst  # fresh tuples and others' replays: the bursts and the down time
    tail0 = emit + burst  # the same, up to a position while F is up
    if y_slope >= 0:
        return None
    recovered_sum, held_sum, margins = Fraction(0), Fraction(0), []
    for st in stages:
        z_slope = 1 / g + rho - Fraction(st.take) / st.wait
        if z_slope >= 0:
            return None
        z_int = Fraction(st.take) / st.wait * st.phase + st.take
        slope = max(rho - 1 / h, z_slope, y_slope)  # the least steep fall over the up time, which is at least ttf
        emptied = tail + a_ / h + z_int + y_int + ttf * slope  # (a): S's backlog never emptied, U_i's did
        busy = tail + z_int + y_int + ttf * max(z_slope, y_slope)  # (c): U_i never emptied
        settled = tail + rho * a_ + z_int + y_int  # (b): S's backlog emptied, then U_i's
        recovered_sum += st.weight * settled
        margins.append(st.weight * (max(emptied, busy) - settled))
        up = max(tail0 + rho * a_, tail0 + a_ / h) + z_int + y_int  # the same, F up, no least time
        held_sum += st.weight * up
    carries = len(stages) / kappa  # σ_i·c_i < 1 each, in Φ: 1/κ
    positive = [m for m in margins if m > 0]
    drift = carries + recovered_sum + (sum(positive) if positive else max(margins))
    if drift > 0:
        return None
    recovered = max(Fraction(0), carries + recovered_sum)
    held = recovered + carries + held_sum
    return Paced(spout, drift, recovered, held, kappa * held + reach, fast * (ttf + down),
                 Fraction(take) / wait * ttf / kappa, via)
