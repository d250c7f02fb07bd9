"""The waits of docs/latency.md, "Per bolt", computed exactly: suprema over window lengths of L·(takes) − D, stepped
count by count along a concave arrival curve (`stepped`), or along the minimum of one and a non-concave curve of
replays in lumps (`walk`, "Replays in lumps")."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from app.core.latency.replays import Delayed, Lumps
from app.core.rates.arrival import Curve

GRID = 2**20  # the shifted arrival curves are rounded up to multiples of 1/GRID (sound: only larger)
MAX_STEPS = 20_000  # tuple counts stepped through for one wait bound (then the bound without integer counts)


def reach(alpha: Curve, y: Fraction) -> Fraction | None:
    """The shortest window in which the curve allows y tuples (None: never)."""
    d = Fraction(0)
    for r, b in alpha.pieces:
        if b < y:
            if r == 0:
                return None
            d = max(d, (y - b) / r)
    return d


def slope_turn(alpha: Curve, threshold: Fraction) -> Fraction:
    """The window at which the concave curve's slope falls to `threshold` or below (0: from the start)."""
    r, b = min(alpha.pieces, key=lambda p: (p[1], p[0]))
    w = Fraction(0)
    while r > threshold:
        flatter = [(r2, b2, (b2 - b) / (r - r2)) for r2, b2 in alpha.pieces if r2 < r]
        if not flatter:
            break
        r, b, w = min(flatter, key=lambda p: (p[2], p[0]))
    return w


def stepped(alpha: Curve, q0: Fraction, slow: Fraction, threshold: Fraction, takes: Callable[[int], int],
             next_count: Callable[[int], int], spacing: int) -> Fraction | None:
    """sup over D ≥ 0 of L·takes(M) − D, M = ⌊Q₀ + α(D)⌋ the most tuples a window of length D holds (an integer).
    Between two counts the value falls, so only D = 0 and the D at which M reaches each `next_count` matter.
    Along the counts the value changes by L·Δtakes − ΔD: it rises while α's slope is above `threshold` (c for
    W₁, 1/L for W₂) and never rises after (α is concave; a slope equal to the threshold keeps it level), so the
    walk starts a little before the count at the turn and stops at the first fall or at the first count past the
    turn (None: MAX_STEPS counts without either)."""
    start = alpha.at(Fraction(0))
    turn_at = slope_turn(alpha, threshold)
    turn = alpha.at(turn_at)
    assert start is not None and turn is not None
    first = int(q0 + start)  # floor: both are non-negative
    best = slow * takes(first)
    m = max(first, int(q0 + turn) - 2 * spacing - 2)
    prev: Fraction | None = None
    for _ in range(MAX_STEPS):
        m = next_count(m)
        d = reach(alpha, m - q0)
        if d is None:
            return best
        value = slow * takes(m) - d
        if prev is not None and value < prev:
            return best
        best = max(best, value)
        if d >= turn_at:  # from here on every step spans slopes at most the threshold: the value never rises
            return best
        prev = value
    return None


def lumped_waits(lumps: list[Lumps | Delayed], rest: Curve, arrival: Curve, later: Fraction | None,
                  start: Fraction | None, q0: Fraction, slow: Fraction, c: Fraction, take: int
                  ) -> tuple[Fraction | None, Fraction | None]:
    """W₁'s two suprema, S(0) and S(Q₀), again with the arrival curve min(α, Σ ε_s + the other inputs' curves), ε_s a
    spout's emissions with its replays in lumps, and for S(Q₀) (windows from time 0) also min(α, Σ ε₀_s + the rest)
    (docs/latency.md, "Replays in lumps"; not concave: walked count by count, `_walk`); each the smaller."""
    def other(w: Fraction) -> Fraction:
        value = rest.at(w)
        assert value is not None  # (bounded: else so is not the bolt's arrival curve, and no wait is computed)
        return value

    def total(curve: Callable[[Lumps | Delayed, Fraction], Fraction]) -> Callable[[Fraction], Fraction]:
        return lambda w: sum((curve(x, w) for x in lumps), other(w))

    def rough(w: float) -> float:
        return sum((x.emitted_float(w) for x in lumps), float(other(Fraction(w))))

    def rough_start(w: float) -> float:
        return float(total(lambda x, v: x.from_start(v))(Fraction(w)))

    def smaller(a: Fraction | None, b: Fraction | None) -> Fraction | None:
        return b if a is None else a if b is None else min(a, b)

    drains = all(x.drains for x in lumps)
    if drains:
        later = smaller(later, walk(arrival, total(lambda x, v: x.emitted(v)), rough, Fraction(0), slow, c, take))
    if q0:
        start = smaller(start, walk(arrival, total(lambda x, v: x.from_start(v)), rough_start, q0, slow, c, take))
        if drains:
            start = smaller(start, walk(arrival, total(lambda x, v: x.emitted(v)), rough, q0, slow, c, take))
    return later, start


def walk(alpha: Curve, exact: Callable[[Fraction], Fraction], rough: Callable[[float], float], q0: Fraction,
          slow: Fraction, threshold: Fraction, take: int) -> Fraction | None:
    """sup over D ≥ 0 of L·⌈M/C⌉ − D, M = ⌊Q₀ + min(α(D), ε(D))⌋, α concave and ε only non-decreasing
    (docs/latency.md, "Replays in lumps"). Per count k·C + 1 the first D at which both curves allow it is at least
    α's (exact) and at least any D₀ with ε(D₀) below the count, checked exactly (found in floats): such a D₀ stays
    valid for every larger count. A count is looked at closely only when the bound could rise there. α alone
    bounds every later value from above, and past its turn (slope at most c) that never rises: the walk stops when
    it falls to the best value found (None: MAX_STEPS counts without)."""
    first = alpha.at(Fraction(0))
    assert first is not None
    k = -(-int(q0 + min(first, exact(Fraction(0)))) // take)
    best = slow * k
    turn_at = slope_turn(alpha, threshold)
    below = Fraction(0)  # ε(below) < every count from here on (exact), 0 at first (ε(0) ≥ 0: only α's D counts)
    for _ in range(MAX_STEPS):
        need = k * take + 1 - q0
        d = reach(alpha, need)
        if d is None:
            return best
        if d >= turn_at and slow * (k + 1) - d <= best:
            return best
        d = max(d, below)
        if slow * (k + 1) - d > best and rough(float(d)) < need:  # (the bound may rise: find where ε allows it)
            found = first_below(exact, rough, need, d, slow)
            if found > d:
                d = below = found
        best = max(best, slow * (k + 1) - d)
        k += 1
    return None


def first_below(exact: Callable[[Fraction], Fraction], rough: Callable[[float], float], need: Fraction,
                 start: Fraction, step: Fraction) -> Fraction:
    """A D ≥ start with ε(D) < need, checked exactly (start itself when the check fails): ε is non-decreasing, so
    it reaches need only after D. Found in floats: steps of `step` (doubling), then halving."""
    low, width = float(start), float(step)
    high = low + width
    while rough(high) < need and high < 1e9:
        low, width = high, 2 * width
        high = low + width
    for _ in range(20):
        mid = (low + high) / 2
        if rough(mid) < need:
            low = mid
        else:
            high = mid
    guess = Fraction(math.floor(low * GRID) - 1, GRID)
    return guess if guess > start and exact(guess) < need else start  # (the exact check makes it sound)
