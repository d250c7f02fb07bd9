"""A paced replay backlog bounded per failure cycle (docs/boundedness.md, "Failures", "Paced: the backlog over a
failure cycle").

A failing bolt F that a paced spout S alone feeds directly may receive up to twice S's fresh tuples while S has a
backlog, more than F processes, so the failure pass's fixpoint over curves has no bound for it. Counted per failure
cycle it has one: Φ = S's backlog + F's queue + F's batch grows only by S's fresh tuples (and the replays other
bolts' losses add at S) and shrinks by what F completes; over a cycle F is up at least min_ttf, and when what it
completes then outweighs what S sends over the cycle (its down time included), Φ cannot pile up from cycle to cycle.
Every count below is a whole number of emissions or batches, exactly as docs/model.md allows them, so a margin of
one tuple per cycle is enough.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

MAX_POINTS = 60_000  # breakpoints of the counts enumerated at most (beyond: no bound claimed)


@dataclass(frozen=True)
class Paced:
    """The bounds of one failing bolt fed by a paced spout, per failure cycle (all in tuples)."""

    spout: str  # S, the paced spout that alone feeds it directly
    drift: Fraction  # δ: Φ at a recovery minus Φ at the one before, at most (≤ 0: no pile-up from cycle to cycle)
    recovered: Fraction  # Φ at every recovery, at most (S's backlog then; the bolt is empty)
    held: Fraction  # Φ while the bolt is up, at most: its queue bound, and S's backlog bound with `recovered`
    lost: Fraction  # what one failure loses at most
    cycle_in: Fraction  # what S may send it over one cycle of min_ttf + max_reboot (fluid, for the words)
    cycle_out: Fraction  # what it completes at least in min_ttf (fluid, for the words)
    via: tuple[str, ...] = ()  # the bolts between S and it ("Paced: through bolts"; none: S feeds it directly)


@dataclass(frozen=True)
class _Counts:
    """The exact counts of the proof: S (E = C_EMIT, least gap g = a(1−τ) per tuple, longest h = a(1+τ),
    A = a(E + τ)); F (C, d₀ = α(1+τ), L); ext ≤ ρ·w + b (other bolts' replays added at S)."""

    e: int
    g: Fraction
    h: Fraction
    a_: Fraction
    c: int
    d0: Fraction
    slow: Fraction
    rho: Fraction

    def fresh_at_most(self, w: Fraction) -> int:
        """S's fresh tuples at positions in a half-open (or open) window of length w."""
        return 0 if w <= 0 else math.ceil(w / self.g) - 1 + self.e


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _sup(n: _Counts, extra: Fraction, bound: Fraction | None) -> Fraction | None:
    """max over a batch P₁ or none, sup over y ≥ 0 of fresh(y + extra) + net(y) + ρ(y + extra) [+ zsup(max(0, bound
    − y)) when `bound` is given] (docs/boundedness.md, "Paced: the backlog over a failure cycle"): net(y) is what F
    completes since its queue was last empty y s ago, negated (with P₁: counted in Φ, cancelled once it is out);
    zsup(z₀) = sup over z ≥ z₀ of ρ·z − M(z), M(z) = ⌈(z − A)/h⌉ S's fresh tuples at least in z (≥ 1 with P₁).
    Every count is a step function: its value at every breakpoint up to where the linear upper bound falls below the
    value at y = bound (None: the counts do not fall, or too many breakpoints). Exact, in integers: times scaled by
    the common denominator D, ρ = p/q."""
    slope = 1 / n.g + n.rho - Fraction(n.c) / n.slow
    if slope >= 0:
        return None
    start = bound if bound is not None else Fraction(0)
    scale = math.lcm(*(x.denominator for x in (n.g, n.h, n.a_, n.d0, n.slow, extra, start)))
    g, h, a_, d0, slow, x, y0 = (int(v * scale) for v in (n.g, n.h, n.a_, n.d0, n.slow, extra, start))
    p, q = n.rho.numerator, n.rho.denominator

    def value(y: int, batch: bool) -> int:  # the value times q·scale
        total = 0 if y + x <= 0 else _ceil(y + x, g) - 1 + n.e
        if not batch:
            total -= n.c * max(0, _ceil(y, slow) - 1)
        else:
            total += n.c if y <= d0 else -n.c * max(0, _ceil(y - d0, slow) - 1)
        if bound is None:
            return total * q * scale + p * (y + x)
        k0 = max(0, _ceil(max(0, y0 - y) - a_, h))
        return max((total - max(k, 1 if batch else 0)) * q * scale + p * (y + x + a_ + k * h) for k in (k0, k0 + 1))

    best = max(value(y0, False), value(y0, True))
    top = n.rho * (n.a_ + n.h) if bound is not None else Fraction(0)
    lin = (start + extra) / n.g + n.e + n.rho * (start + extra) - Fraction(n.c) / n.slow * (start - n.d0) + n.c + top
    end = int((start + max(Fraction(0), lin - Fraction(best, q * scale)) / -slope + 1) * scale) + 1
    steps = [(g, -x), (slow, 0), (slow, d0)] + ([(h, y0 - a_)] if bound is not None else [])
    if sum(end // step + 1 for step, _ in steps) > MAX_POINTS:
        return None
    points = {0, d0, y0}
    for step, offset in steps:  # offset + k·step in [0, end]
        points.update(range(offset + _ceil(-offset, step) * step, end + 1, step))
    return Fraction(max(best, *(max(value(y, False), value(y, True)) for y in points)), q * scale)


@lru_cache(maxsize=512)
def paced_cycle(spout: str, emit: int, fast: Fraction, slow: Fraction, take: int, phase: Fraction,
                wait: Fraction, ttf: Fraction, down: Fraction, q0: Fraction, rho: Fraction, burst: Fraction
                ) -> Paced | None:
    """The per-cycle bounds (None: the drift is positive or a count has no bound). spout S: C_EMIT `emit`,
    rates `fast` = 1/(a(1−τ)), `slow` = 1/(a(1+τ)); bolt F: C `take`, α(1+τ) `phase`, L `wait`; min_ttf `ttf`,
    max_reboot `down`, initial queue `q0`; the replays other bolts' failures add at S: at most ρ·w + b in any
    window of length w."""
    g, h = 1 / fast, 1 / slow
    if rho > slow:  # the others' replays alone could outrun S's slowest pace
        return None
    n = _Counts(emit, g, h, emit * (g + h) / 2 + (h - g) / 2, take, phase, wait, rho)
    drift = _sup(n, down, ttf)  # a cycle of a chain: Φ(r_k) − Φ(r_{k−1})
    if drift is None or drift > 0:
        return None
    first = _sup(n, down, None)  # the cycle that starts a chain (its backlog emptied in it, or the start)
    partial = _sup(n, Fraction(0), None)  # up, the chain starting in this cycle
    after = _sup(n, Fraction(0), Fraction(0))  # up, after a recovery
    failing = _sup(n, Fraction(0), ttf)  # at a failure, at least min_ttf after the recovery
    if first is None or partial is None or after is None or failing is None:
        return None
    start = max(q0, rho * n.a_) + burst  # Φ where a chain starts, before its first cycle's counts
    recovered = start + first
    held = max(start + partial, recovered + after)
    lost = max(start + partial, recovered + failing) + 2 * n.fresh_at_most(down)  # and, while down, fresh + replays
    return Paced(spout, drift, recovered, held, lost, fast * (ttf + down), Fraction(take) / wait * ttf)


def paced_words(p: Paced, bolt: str, spout: str, via: tuple[str, ...] = ()) -> str:
    """How a paced backlog is bounded, in the user's words (docs/boundedness.md, "Paced: the backlog over a failure
    cycle", and "Paced: through bolts" with `via`, the names of the bolts between)."""
    if via:
        between = " and ".join(via)
        return (f"over each failure cycle (min_ttf up, then a reboot) {spout} sends at most "
                f"{float(p.cycle_in):.4g} fresh tuples, which reach {bolt} through {between}, and {bolt} completes at "
                f"least {float(p.cycle_out):.4g} of them while up, so {spout}'s replay backlog plus the queues of "
                f"{between} and {bolt} (each {spout} tuple counted once) cannot pile up from one recovery to the next "
                f"(whichever queue last emptied, it changes by at most {float(p.drift):.3g} a cycle): {spout}'s "
                f"backlog stays below {float(max(p.recovered, p.held)):.4g} tuples and a failure of {bolt} loses at "
                f"most {float(p.lost):.4g}")
    return (f"over each failure cycle (min_ttf up, then a reboot) {spout} sends {bolt} at most "
            f"{float(p.cycle_in):.4g} fresh tuples and {bolt} completes at least {float(p.cycle_out):.4g} while up, "
            f"so {spout}'s replay backlog plus {bolt}'s queue cannot pile up from one recovery to the next (counted "
            f"in whole emissions and batches it changes by at most {float(p.drift):.3g} a cycle): {spout}'s backlog "
            f"stays below {float(max(p.recovered, p.held)):.4g} tuples and a failure of {bolt} loses at most "
            f"{float(p.lost):.4g}")
