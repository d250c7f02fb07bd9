"""Section 2.3's EMIT as z3 constraints (docs/model.md), for app/core/tcn/encode.py: one stream's emit
rule at a position (`emit_rule`), any carry a run could hold at a free start (`free_carry`), and a
stream's tuples per loop pass against the tuples that fed it (`loop_ratio`). Each reads the emission rule
of the network (`"exact"` or `"dvert"`) and makes its terms in the order the encoder always made them."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import z3

from app.core.emission import Emission


def emit_rule(emission: Emission, sigma: Fraction, take_max: int | None, total: z3.ArithRef, prev_buffer: z3.ArithRef,
              prev_batch: z3.ArithRef, e: z3.ArithRef, keep: z3.ArithRef) -> list[tuple[z3.BoolRef | None, z3.BoolRef]]:
    """What an EMIT does to the carry `buffer` of a non-silent bolt with σ = num/den, as
    (guard, constraint) pairs that hold when the bolt emits and the guard holds.

    "exact": the variable holds the carry times num (an integer m in [0, den)); the bolt
    emits E = ⌊(m + num·P)/den⌋ and keeps m' = m + num·P − den·E, i.e. c' = c + P − E/σ.
    "dvert": the carry is rounded up, E = ⌊σ·total⌋, keep ⌈total − E/σ⌉, as a small
    table over the possible totals (no integer division for the solver), or, when the batches have no bound
    (`take_max` None), the same rule as linear constraints."""
    num, den = sigma.numerator, sigma.denominator
    if emission == "exact":
        scaled = prev_buffer + num * prev_batch
        return [(None, z3.And(scaled == den * e + keep, keep >= 0, keep < den))]
    if den == 1:  # integer σ: everything is emitted, nothing kept
        return [(None, z3.And(e == num * total, keep == 0))]
    if take_max is None:  # batches of any size (a duration window, docs/model.md 10.3): E = ⌊σ·total⌋, keep
        # ⌈total − E/σ⌉, stated linearly: den·E ≤ num·total < den·(E + 1), num·keep ≥ num·total − den·E > num·(keep − 1)
        rest = num * total - den * e
        return [(None, z3.And(total >= 1, rest >= 0, rest < den, num * keep >= rest, num * keep < rest + num))]
    most = take_max + math.ceil(Fraction(den, num)) + 1
    cases: list[tuple[z3.BoolRef | None, z3.BoolRef]] = [(None, z3.And(total >= 1, total <= most))]
    for value in range(1, most + 1):
        out = math.floor(sigma * value)
        cases.append((total == value, z3.And(e == out, keep == math.ceil(value - out / sigma))))
    return cases


def free_carry(add: Callable[..., Any], emission: Emission, sigma: Fraction, silent: bool,
               buffer: z3.ArithRef) -> None:
    """Any carry a run could hold after an emit (position 0 of a loop-only encoding)."""
    if silent:
        add(buffer == 0)
    elif emission == "exact":  # the carry times num, below den (carry < 1/σ)
        add(buffer >= 0, buffer < sigma.denominator)
    else:  # after an emit the buffer keeps less than 1/σ + 1 tuples
        add(buffer >= 0, buffer * sigma.numerator < sigma.denominator + sigma.numerator)


def loop_ratio(add: Callable[..., Any], emission: Emission, out: z3.ArithRef, sigma: Fraction, taken: z3.ArithRef,
               emits: z3.ArithRef, quiet: z3.BoolRef | None = None) -> None:
    """Tuples out on one stream per loop pass against the tuples that fed it (its carry repeats);
    `quiet` set: only in a loop without the bolt's failure (a failure resets the carry)."""
    num, den = sigma.numerator, sigma.denominator
    if emission == "exact":  # the carry repeats, so emitted = σ·taken exactly
        facts = [out * den == num * taken]
    else:  # the buffer repeats, so σ·taken <= emitted < σ·(taken + emits)
        facts = [out * den >= num * taken, out * den < num * (taken + emits)]
    add(*(facts if quiet is None else [z3.Implies(quiet, fact) for fact in facts]))
