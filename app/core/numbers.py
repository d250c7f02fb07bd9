"""Exact numbers from a document's values: the decimal a user typed, not its binary float.

The one home of this conversion (`exact`) and of its inverse (`exact_text`, how traces, certificates and
messages write an exact figure) for the whole product: the rate check, the failure model, the network the
encoder and the simulation read, the CLI, and the checker room too. The checkers share no *builder* with what they
check (docs/verifier.md, "The checker room"); this module builds nothing: it reads a decimal as the fraction it
denotes, which tests/unit/test_numbers.py pins on its own. (app/spark/tasks.py keeps `Fraction(str(x))`: Spark
ships it to its workers alone, with nothing of app.)
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache
from typing import Any


def exact(value: float | int | str | Fraction) -> Fraction:
    """The decimal a user typed, as an exact fraction (0.01 -> 1/100, not a binary float; "0.01" and "1/100" too)."""
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


def exact_text(value: Fraction) -> str:
    """The inverse of `exact`: an exact decimal when the fraction has one ("0.25"), else "p/q" ("20/9")."""
    value = Fraction(value)
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = max(twos, fives)
    if digits == 0:
        return str(value.numerator)
    scaled = value * 10**digits
    sign = "-" if scaled < 0 else ""
    text = str(abs(scaled.numerator)).rjust(digits + 1, "0")
    return f"{sign}{text[:-digits]}.{text[-digits:]}"
