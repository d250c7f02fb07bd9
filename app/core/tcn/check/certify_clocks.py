"""The certifier's region test of section 3 item 2 (docs/model.md): readable clocks at loop_start and k+1
equal up to regions, on clocks scaled by the LCM D of every constant's denominator, each clock compared
with its own largest constant c_max (with failures, section 7.4, also a bolt's time since its recovery,
below min_ttf, and since its failure, below max_reboot_time). Part of app/core/tcn/check/certify.py, which
names the clocks (its `_clocks`)."""

from __future__ import annotations

import math
from fractions import Fraction

from app.core.tcn.check.certify_rules import Rules


def clock_limits(rules: Rules) -> tuple[int, dict[str, Fraction]]:
    """The scale D (LCM of every constant's denominator) and each clock's c_max in seconds."""
    constants = [rules.idle]
    limits: dict[str, Fraction] = {}
    for n, a in rules.period.items():
        constants += [a, a * rules.tau]
        limits[f"spout {n}: its clock"] = rules.burst[n] * a + a * rules.tau
    for n, alpha in rules.alpha.items():
        hi = alpha * (1 + rules.tau)
        constants += [alpha * (1 - rules.tau), hi, *([rules.timer[n]] if n in rules.timer else [])]
        limits[f"bolt {n}: its processing clock"] = hi
        limits[f"bolt {n}: its idle deadline clock"] = rules.timer.get(n, rules.idle)  # a timer's: G (10.3)
    if rules.fail is not None:  # section 7.4: the two clocks of a bolt that may fail
        constants += rules.fail.constants()
        for n, ttf in rules.fail.min_ttf.items():
            limits[f"bolt {n}: its time since recovery"] = ttf
            limits[f"bolt {n}: its time since failure"] = rules.fail.max_reboot
    if rules.deaths is not None:  # section 9.5: a dying worker's clocks, since its restart and since its death
        constants += rules.deaths.constants()
        for w in rules.deaths.workers:
            limits[f"worker {w}: its time since its restart"] = rules.deaths.min_ttf
            limits[f"worker {w}: its time since its death"] = max(rules.deaths.max_reboot, rules.deaths.timeout)
    return math.lcm(*(Fraction(c).denominator for c in constants)), limits


def region_problems(rules: Rules, first: dict[str, Fraction | None], last: dict[str, Fraction | None],
                     loop_start: int, end: int) -> list[str]:
    """Section 3 item 2: readable clocks region-equivalent at loop_start and k+1 (on clocks scaled by D)."""
    scale, limits = clock_limits(rules)
    problems: list[str] = []
    below: dict[str, tuple[Fraction, Fraction]] = {}  # fractional parts at loop_start and at k+1
    for name, x in first.items():
        y = last.get(name)
        if x is None and y is None:
            continue
        if x is None or y is None:
            problems.append(f"{name} does not repeat (readable at only one of {loop_start} and {end})")
            continue
        limit = limits[name] * scale
        sx, sy = x * scale, y * scale
        if sx > limit and sy > limit:
            continue
        if math.floor(sx) != math.floor(sy) or (sx.denominator == 1) != (sy.denominator == 1):
            problems.append(f"{name} does not repeat up to regions ({x} s at {loop_start}, {y} s at {end}; "
                            f"scaled by {scale}: integer parts or integrality differ, c_max {limit})")
            continue
        below[name] = (sx - math.floor(sx), sy - math.floor(sy))
    names = sorted(below)
    for m, a in enumerate(names):
        for c in names[m + 1:]:
            (fa, ga), (fc, gc) = below[a], below[c]
            if (fa < fc, fa == fc) != (ga < gc, ga == gc):
                problems.append(f"{a} and {c.split(': ')[0]}: the order of their fractional parts "
                                f"does not repeat at {loop_start} and {end}, so the clocks do not repeat up to regions")
    return problems
