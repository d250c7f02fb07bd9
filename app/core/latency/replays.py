"""A paced spout's emissions with its replays kept in lumps (docs/latency.md, "Replays in lumps").

The failure check's fixpoint (docs/boundedness.md, "Failures") proves, for every failing bolt j, that one failure
loses at most ℓ_j tuples, all within max_reboot m of the failure, and j fails at most once per T_j = min_ttf +
min_reboot. So the replays added to a spout in any closed window of length x are at most the staircase

    A(x) = Σ_j ℓ_j·(⌊(x + m)/T_j⌋ + 1),

and a paced spout replays at most one tuple per fresh one, greedily (min(R, n) at each emission). Its emissions in
any closed window of length w are then at most

    ε(w) = γ(w) + min(γ(w), G(w)),   γ(w) = f⁺·w + C_EMIT,
    G(w) = sup_{u ≥ 0} inf_{φ ∈ [0, w]} [ A(u + φ) − (f⁻·u − C_EMIT)⁺ + γ(w − φ) ],

f⁺ = 1/(a(1−τ)), f⁻ = 1/(a(1+τ)). ε is not concave (a lump added late in a window cannot be replayed in it), so it
is kept as a function, evaluated exactly at the points the wait bound needs (`Lumps.emitted`), with a float twin
used only to find where to look (`Lumps.emitted_float`; every figure that enters a bound is exact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.failures import FailureModel
    from app.core.rates import RateFigures
    from app.core.rates.arrival import Curve
    from app.core.topology import Topology

MAX_JUMPS = 64  # jumps of A looked at for one window (beyond: no refinement, ε = 2γ, always valid)

Number = Fraction | float


@dataclass(frozen=True)
class Lumps:
    """One paced spout: its fresh rates and burst, and per failing bolt whose losses it replays (ℓ_j, T_j)."""

    fast: Fraction  # f⁺: the most fresh tuples per second
    slow: Fraction  # f⁻: the fewest fresh tuples per second (the backlog's drain)
    burst: Fraction  # C_EMIT
    losses: tuple[tuple[Fraction, Fraction], ...]  # (ℓ_j, T_j)
    reboot: Fraction  # m = max_reboot
    first: tuple[Fraction, ...] = ()  # min_ttf_j, in the order of `losses`: no failure of j before it

    def from_start(self, w: Fraction) -> Fraction:
        """The emissions in [0, w], w ≥ 0: γ(w) + min(γ(w), A₀(w)), A₀ the losses of the failures by w (none
        before min_ttf_j, then T_j apart), whether or not the backlog drains (docs/latency.md, "From the start")."""
        g = self.fast * w + self.burst
        lost = sum((ell * (math.floor((w - ttf) / period) + 1) for (ell, period), ttf in zip(self.losses, self.first,
                    strict=True) if w >= ttf), Fraction(0))
        return g + min(g, lost)

    @property
    def drains(self) -> bool:
        """The lumps' long-run rate Σ ℓ_j/T_j is below f⁻ (else G is infinite: only 2γ holds)."""
        return sum((lost / period for lost, period in self.losses), Fraction(0)) < self.slow

    def emitted(self, w: Fraction) -> Fraction:
        """ε(w), exact."""
        g = self.fast * w + self.burst
        r = _replayed(_Figures(self.fast, self.slow, self.burst, self.losses, self.reboot), w) if self.drains \
            else None
        return g + (g if r is None else min(g, Fraction(r)))

    def emitted_float(self, w: float) -> float:
        """ε(w) in floats: only to find where ε reaches a count (the bound checks it exactly)."""
        g = float(self.fast) * w + float(self.burst)
        figures = _Figures(float(self.fast), float(self.slow), float(self.burst),
                           tuple((float(a), float(b)) for a, b in self.losses), float(self.reboot))
        r = _replayed(figures, w) if self.drains else None
        return g + (g if r is None else min(g, float(r)))


@dataclass(frozen=True)
class Delayed:
    """What a bolt u passes on, on a stream of integer σ, from arrivals partly in lumps: σ·(its arrivals in a window
    S_u longer + Q₀) (curve 3 of docs/latency.md, "Arrival curves"; windows from time 0 need no shift: nothing
    arrives before 0). Its arrivals: the lumped `terms` plus the concave `rest` of its other inputs."""

    terms: tuple[Lumps | Delayed, ...]
    rest: Curve
    sigma: Fraction
    shift: Fraction  # S_u
    q0: Fraction

    @property
    def drains(self) -> bool:
        return all(t.drains for t in self.terms)

    def _rest(self, w: Fraction) -> Fraction:
        value = self.rest.at(w)
        assert value is not None  # (bounded: else u has no arrival curve, and no sojourn bound to shift by)
        return value

    def emitted(self, w: Fraction) -> Fraction:
        v = w + self.shift
        return self.sigma * (sum((t.emitted(v) for t in self.terms), self._rest(v)) + self.q0)

    def emitted_float(self, w: float) -> float:
        v = w + float(self.shift)
        return float(self.sigma) * (sum((t.emitted_float(v) for t in self.terms), float(self._rest(Fraction(v))))
                                    + float(self.q0))

    def from_start(self, w: Fraction) -> Fraction:
        return self.sigma * (sum((min(t.from_start(w), t.emitted(w)) for t in self.terms), self._rest(w)) + self.q0)


def lumps_of(topo: Topology, e: RateFigures, model: FailureModel | None, lost: dict[str, Fraction | None]
             ) -> dict[str, Lumps]:
    """Per paced spout whose every failing bolt has a loss bound ℓ_j (the failure fixpoint's `lost`): its replays
    in lumps, by spout id."""
    if model is None or model.replay != "paced":
        return {}
    out: dict[str, Lumps] = {}
    for s in topo.spouts:
        fed = [j for j in model.min_ttf if s.id in model.impact.get(j, {})]
        losses = [(lost.get(j), model.min_ttf[j] + model.min_reboot) for j in fed]
        if fed and all(ell is not None for ell, _ in losses):
            out[s.id] = Lumps(e.spout_max[s.id], e.spout_min[s.id], Fraction(s.burst),
                              tuple((Fraction(ell), t) for ell, t in losses if ell is not None), model.max_reboot,
                              tuple(model.min_ttf[j] for j in fed))
    return out


@dataclass(frozen=True)
class _Figures:
    """The figures of `Lumps`, all exact or all floats."""

    fast: Number
    slow: Number
    burst: Number
    losses: tuple[tuple[Number, Number], ...]
    reboot: Number


def _added(lumps: _Figures, x: Number, left: bool) -> Number:
    """A(x) (left: the limit from below, x > 0: the jumps at x not yet counted)."""
    total: Number = 0
    for lost, period in lumps.losses:
        k = (x + lumps.reboot) / period
        total += lost * (math.ceil(k) if left else math.floor(k) + 1)
    return total


def _jumps(lumps: _Figures, upto: Number) -> list[Number]:
    """The window lengths x in (0, upto] at which A jumps: k·T_j − m (None of them: no lump in reach)."""
    out: set[Number] = set()
    for _, period in lumps.losses:
        k = max(1, math.floor(lumps.reboot / period) + 1)
        while k * period - lumps.reboot <= upto:
            out.add(k * period - lumps.reboot)
            k += 1
            if len(out) > MAX_JUMPS:
                raise OverflowError
    return sorted(out)


def _replayed(lumps: _Figures, w: Number) -> Number | None:
    """G(w): the most replays at the emissions of a closed window of length w (None: not bounded this way).

    V(u) = h_u(w) − F⁻(u), with h_u(w) = min( A(u + w) + C, min over jumps x ∈ (u, u + w] of A(x⁻) + f⁺(w − x + u)
    + C ) (the infimum over φ of a staircase plus a falling line sits just before a jump, or at φ = w). Between two
    consecutive points of {0, C/f⁻, x − w, x, U}, V is the minimum of a non-increasing term (A(u + w) + C − F⁻(u))
    and non-decreasing ones (slope f⁺ − F⁻′ ≥ 0), so its supremum there is at an end (approached from inside: both
    one-sided values are taken) or where the first meets one of the others, u = (A(u + w) − A(x⁻) − f⁺(w − x))/f⁺.
    Beyond U the affine bound A(x) ≤ ρ_A·x + b_A makes V fall, and its value at U is taken as well."""
    fast, slow, burst, reboot = lumps.fast, lumps.slow, lumps.burst, lumps.reboot
    zero = fast * 0
    rate = sum((lost / period for lost, period in lumps.losses), zero)
    base = sum((lost * (1 + reboot / period) for lost, period in lumps.losses), zero)

    def drained(u: Number) -> Number:
        return max(zero, slow * u - burst)

    def value(u: Number, jumps: list[Number], left: bool) -> Number:
        if left:  # the limit from below at u > 0: jumps in [u, u + w), A at (u + w)⁻
            best = _added(lumps, u + w, True) + burst if u + w > 0 else _added(lumps, u + w, False) + burst
            inside = [x for x in jumps if u <= x < u + w]
        else:
            best = _added(lumps, u + w, False) + burst
            inside = [x for x in jumps if u < x <= u + w]
        for x in inside:
            best = min(best, _added(lumps, x, True) + fast * (w - x + u) + burst)
        return best - drained(u)

    start = value(zero, _jumps(lumps, w) if w > 0 else [], False)
    far = max(burst / slow, (rate * w + base + 2 * burst - start) / (slow - rate))
    try:
        jumps = _jumps(lumps, far + w)
    except OverflowError:
        return None
    points = sorted({zero, burst / slow, far, *(x - w for x in jumps if 0 <= x - w <= far),
                     *(x for x in jumps if x <= far)})
    best = max(start, rate * (far + w) + base + 2 * burst - slow * far)  # (u ≥ far: the affine tail)
    for a, b in zip(points, points[1:], strict=False):
        best = max(best, value(b, jumps, False), value(b, jumps, True))
        mid = (a + b) / 2
        top = _added(lumps, mid + w, False) + burst
        for x in jumps:
            if mid < x <= mid + w:
                cross = (top - _added(lumps, x, True) - fast * (w - x) - burst) / fast
                if a < cross < b:
                    best = max(best, value(cross, jumps, False))
    return best

