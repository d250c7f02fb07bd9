"""Exact numbers from a document's values: the decimal a user typed, not its binary float.

The one home of this conversion for the product (the rate check, the failure model, the
network the encoder and the simulation read). The certifiers keep their own copy on purpose:
they share no code with what they check (docs/verifier.md).
"""

from __future__ import annotations

from fractions import Fraction


def exact(value: float | int | Fraction) -> Fraction:
    """The decimal a user typed, as an exact fraction (0.01 -> 1/100, not a binary float)."""
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)
