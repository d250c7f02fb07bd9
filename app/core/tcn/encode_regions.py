"""Region equivalence of the readable clocks at the loop start and at k+1 (docs/model.md section 3
item 2), for the encoder's `loop_clocks="region"`: clocks scaled by the LCM D of the constants'
denominators, an integer part per clock, "both above c_max, or the same integer part and both
integral or both not", and the same order of fractional parts for every pair below c_max.
"""

from __future__ import annotations

import math
from fractions import Fraction

import z3

from app.core.tcn.encode_vars import EncoderParts, real


def clock_limits(enc: EncoderParts, failure_limits: tuple[list[Fraction], dict[str, Fraction]]
                 ) -> tuple[int, dict[str, int]]:
    """The scale D (LCM of the constants' denominators, in seconds) and each clock's c_max·D;
    `failure_limits`: the failure constants and clocks' c_max (`Failures.clock_limits`, none without failures)."""
    net, tau = enc.net, enc.net.tolerance
    limits: dict[str, Fraction] = {}
    constants: list[Fraction] = [Fraction(net.max_idle)]
    for s in net.spouts:
        a = Fraction(s.period)
        constants += [a, a * tau]
        limits[f"s:{s.name}"] = s.burst * a + a * tau
    for b in net.bolts:
        lo, hi = Fraction(b.alpha) * (1 - tau), Fraction(b.alpha) * (1 + tau)
        constants += [lo, hi]
        limits[f"take:{b.name}"] = hi
        limits[f"wait:{b.name}"] = Fraction(net.max_idle if b.timer is None else b.timer)  # (a timer's G: 10.3)
        constants += [] if b.timer is None else [Fraction(b.timer)]
    more, clocks = failure_limits
    constants += more
    limits.update(clocks)
    scale = math.lcm(*(c.denominator for c in constants))
    return scale, {name: int(c * scale) for name, c in limits.items()}


def region_constraints(enc: EncoderParts, at_l: dict[str, z3.ArithRef], at_end: dict[str, z3.ArithRef],
                       readable: dict[str, z3.BoolRef],
                       failure_limits: tuple[list[Fraction], dict[str, Fraction]]) -> None:
    """Every readable clock region-equivalent at l and k+1 (section 3 item 2), on scaled clocks."""
    add, ctx = enc.add, enc.ctx
    scale, limits = clock_limits(enc, failure_limits)
    unit = enc.time_unit if enc.time_unit is not None else Fraction(1)
    factor = real(ctx, unit * scale)

    def scaled(x: z3.ArithRef) -> z3.ArithRef:
        return (z3.ToReal(x) if x.is_int() else x) * factor

    always = z3.BoolVal(True, ctx)
    below: dict[str, z3.BoolRef] = {}
    frac: dict[str, tuple[z3.ArithRef, z3.ArithRef]] = {}
    for name in at_l:
        x, y = scaled(at_l[name]), scaled(at_end[name])
        nx, ny = enc.int_var(f"int[{name}]l"), enc.int_var(f"int[{name}]e")  # integer parts
        rx, ry = z3.ToReal(nx), z3.ToReal(ny)
        add(rx <= x, x < rx + 1, ry <= y, y < ry + 1)
        limit = z3.RealVal(limits[name], ctx)
        equivalent = z3.Or(z3.And(x > limit, y > limit), z3.And(nx == ny, (x == rx) == (y == ry)))
        on = readable.get(name, always)
        add(z3.Implies(on, equivalent))
        below[name] = z3.And(on, x <= limit)
        frac[name] = (x - rx, y - ry)
    names = list(at_l)
    for m, a in enumerate(names):
        for c in names[m + 1:]:
            (fa, ga), (fc, gc) = frac[a], frac[c]
            add(z3.Implies(z3.And(below[a], below[c]), z3.And((fa <= fc) == (ga <= gc), (fc <= fa) == (gc <= ga))))

