"""Exact numbers from a document's values: the decimal a user typed, not its binary float.

The one home of this conversion for the product (the rate check, the failure model, the
network the encoder and the simulation read). The certifiers keep their own copy on purpose:
they share no code with what they check (docs/verifier.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache
from typing import Any


def exact(value: float | int | Fraction) -> Fraction:
    """The decimal a user typed, as an exact fraction (0.01 -> 1/100, not a binary float)."""
    return _exact_float(value) if isinstance(value, float) else Fraction(value)


@lru_cache(maxsize=65536)
def _exact_float(value: float) -> Fraction:
    """`exact` of a float, remembered: a document repeats its values (20,000 stream ratios of 1.0)."""
    return Fraction(str(value))


def exact_sum(values: Iterable[Fraction]) -> Fraction:
    """The exact sum of fractions, adding the numerators of each denominator as integers first (each value once,
    times how often it comes) (a bolt's
    20,000 inputs of one denominator: one Fraction addition, not 20,000)."""
    seen: dict[int, list[Any]] = {}  # the same object many times (one product for many streams): counted
    for value in values:
        entry = seen.get(id(value))
        if entry is None:
            seen[id(value)] = [value, 1]  # kept alive here, so its id is not reused by another value
        else:
            entry[1] += 1
    by_denominator: dict[int, int] = {}
    for value, times in seen.values():
        by_denominator[value.denominator] = by_denominator.get(value.denominator, 0) + value.numerator * times
    return sum((Fraction(n, d) for d, n in by_denominator.items()), Fraction(0))
