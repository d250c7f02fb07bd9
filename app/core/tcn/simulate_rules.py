"""Three rules of the simulation (app/core/tcn/simulate.py): whether a repeated state closes a lasso, one stream's
EMIT remembered, and the replays of a loss. No z3 here; nothing in this module is shared with the certifier."""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any

from app.core.emission import Emission
from app.core.emission import emit as emit_rule
from app.core.failures import replay_problem


def closes(start: int, end: int, grown: list[int], queues_at: list[list[int]],
            bad_upto: list[list[int]]) -> str:
    """Whether equal hashed states before positions start and `end` close a lasso start..end−1.

    "lasso": the target's queue (or, for a join, one of its caches: `grown` are their slots) grew, no free queue
    shrank, and every free queue that grew stayed ≥ 1 with full batches at start..end−1 (a growing cache never
    emptied) (so raising it changes no rule's outcome).
    "periodic": every queue is equal too, so the whole state repeats and the run is
    periodic without growth. "no": neither (look further)."""
    first, last = queues_at[start], queues_at[end]
    deltas = [b - a for a, b in zip(first, last, strict=True)]
    if all(d == 0 for d in deltas):
        return "periodic"
    if any(d < 0 for d in deltas) or all(deltas[g] <= 0 for g in grown):
        return "no"
    for m, d in enumerate(deltas):
        if d > 0 and bad_upto[end][m] != bad_upto[start][m]:
            return "no"
    return "lasso"


@functools.lru_cache(maxsize=4096)
def emit_remembered(sigma: Fraction, carry: Fraction | int, batch: int, rule: Emission) -> tuple[int, Fraction | int]:
    """One stream's EMIT (app/core/emission.py), a whole carry kept as an int (it hashes faster);
    pure, so remembered (a long run repeats the same few carries and batches)."""
    out, kept = emit_rule(sigma, Fraction(carry), batch, rule)
    return out, kept.numerator if kept.denominator == 1 else kept


def loss_replays(lost: int, reach: list[int], spouts: list[Any], impact: dict[str, Any], mode: str) -> dict[str, int]:
    """The replays of a loss of `lost` tuples (docs/model.md 7.3), at the upper end: one spout tuple
    per lost tuple, split evenly among the spouts whose trees reach the bolt (`reach`, in the
    network's order; the first ones take the remainder). Checked against the replay rule."""
    if mode == "none" or not reach:
        return {}
    share, extra = divmod(lost, len(reach))
    replays = {spouts[s].name: share + (m < extra) for m, s in enumerate(reach)}
    replays = {name: n for name, n in replays.items() if n > 0}
    problem = replay_problem(lost, replays, impact, mode)
    if problem is not None:  # cannot happen: the upper end always obeys the rule
        raise AssertionError(f"simulated replays break docs/model.md 7.3: {problem}")
    return replays
