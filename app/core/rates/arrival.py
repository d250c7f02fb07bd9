"""Arrival curves: at most min_k (rate_k·w + burst_k) tuples in every closed window of length w ≥ 0, a minimum of
affine pieces, exact fractions (docs/boundedness.md, "Failures", "Arrival curves"). app/core/rates/curves.py derives
them for every flow of a topology under failures; app/core/rates/netting.py nets a failing bolt's replays."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

MAX_PIECES = 6  # pieces kept per curve (dropping a piece of a minimum only loosens it: always sound)


@dataclass(frozen=True)
class Curve:
    """At most min_k (rate_k·w + burst_k) tuples in any window of length w; no pieces: no bound."""

    pieces: tuple[tuple[Fraction, Fraction], ...]

    @staticmethod
    def affine(rate: Fraction | int, burst: Fraction | int) -> Curve:
        return Curve(((Fraction(rate), Fraction(burst)),))

    @property
    def bounded(self) -> bool:
        return bool(self.pieces)

    @property
    def rate(self) -> Fraction | None:
        """The long-run rate: the smallest slope (None: unbounded)."""
        return min(r for r, _ in self.pieces) if self.pieces else None

    def at(self, w: Fraction) -> Fraction | None:
        return min(r * w + b for r, b in self.pieces) if self.pieces else None

    def plus(self, other: Curve) -> Curve:
        if not self.pieces or not other.pieces:
            return UNBOUNDED_CURVE
        return pruned((r1 + r2, b1 + b2) for r1, b1 in self.pieces for r2, b2 in other.pieces)

    def scaled(self, k: Fraction, rate: Fraction = Fraction(0), burst: Fraction = Fraction(0)) -> Curve:
        """k·curve + rate·w + burst."""
        if not self.pieces:
            return UNBOUNDED_CURVE
        return pruned((k * r + rate, k * b + burst) for r, b in self.pieces)

    def shifted(self, d: Fraction, burst: Fraction = Fraction(0)) -> Curve:
        """The curve of windows d longer, plus a constant: w -> curve(w + d) + burst."""
        return pruned((r, b + r * d + burst) for r, b in self.pieces) if self.pieces else UNBOUNDED_CURVE

    def meet(self, other: Curve) -> Curve:
        """The minimum of two valid curves (both bound the same flow)."""
        if not self.pieces:
            return other
        if not other.pieces:
            return self
        return pruned([*self.pieces, *other.pieces])

    def excess(self, rate: Fraction) -> Fraction | None:
        """sup over w ≥ 0 of curve(w) − rate·w (None: infinite, the curve outgrows the rate).

        Walks the lower envelope from w = 0 (the piece of the smallest burst) along its breakpoints
        while its slope is above `rate`: the curve is concave, so the first piece with a slope at most
        `rate` starts where the difference is largest."""
        if not self.pieces or min(r for r, _ in self.pieces) > rate:
            return None
        r, b = min(self.pieces, key=lambda p: (p[1], p[0]))
        w = Fraction(0)
        while r > rate:
            # the next envelope piece: the flatter one whose line crosses the current one first
            r, b, w = min(((r2, b2, (b2 - b) / (r - r2)) for r2, b2 in self.pieces if r2 < r),
                          key=lambda p: (p[2], p[0]))
        return r * w + b - rate * w


UNBOUNDED_CURVE = Curve(())
ZERO = Curve.affine(0, 0)


def pruned(pieces: Iterable[tuple[Fraction, Fraction]]) -> Curve:
    """Drop dominated pieces (rate and burst both no smaller than another's); keep at most MAX_PIECES."""
    kept: list[tuple[Fraction, Fraction]] = []
    for r, b in sorted(pieces):  # by rate, then burst: a piece is kept when its burst is below every earlier one
        if not kept or b < kept[-1][1]:  # (the kept bursts fall, so the last is the smallest)
            kept.append((r, b))
    if len(kept) > MAX_PIECES:  # keep the smallest rate (the long run) and the smallest bursts
        kept = [kept[0], *sorted(kept[1:], key=lambda p: p[1])[:MAX_PIECES - 1]]
    return Curve(tuple(kept))
