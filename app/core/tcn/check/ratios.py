"""The checkers' own output ratios σ_lo, σ_hi (docs/model.md section 5), restated from the emission rule.

The builders read σ_lo and σ_hi from `app/core/emission.py`; a checker that did too could not see a mistake
there. So the checker room computes them again from the rule itself (E = ⌊σ·(c + P)⌋, `"dvert"` keeps
⌈c + P − E/σ⌉): the carry automaton reachable from carry 0, a move a batch of 1..size tuples, and the
smallest and largest ratio Σ E / Σ P of its cycles by an exact Dinkelbach iteration (raise λ to the ratio of
a cycle with Σ(E − λP) > 0 until there is none; lower it likewise). Every long run's moves are cycles of the
automaton plus fewer moves than it has states, so its ratio tends into [σ_lo, σ_hi]
(docs/boundedness.md, "Output ratios").

Batches above den(σ) reach the carry a batch den(σ) smaller reaches, with a larger rounding excess, so they
never raise σ_hi, and a batch of den(σ) from carry 0 is a cycle of ratio exactly σ, the least possible (the
rule only rounds the carry up): batches up to min(size, den(σ)) suffice, and σ_lo = σ once size ≥ den(σ).
A σ so fine that the automaton is huge gets the sound bounds [σ, 2σ] (every batch's rounding excess is
below σ and a batch has at least one tuple). Under `"exact"`, or for a whole σ, both are σ.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["LARGEST_AUTOMATON", "ratio_bounds"]

#: the size (states² × batch sizes) above which the bounds are [σ, 2σ] (the builders' limit too, restated)
LARGEST_AUTOMATON = 200_000

_Edge = tuple[Fraction, Fraction, int, int]  # carry, next carry, emitted, batch


def _automaton(sigma: Fraction, batches: int) -> tuple[list[Fraction], list[_Edge]]:
    """The `"dvert"` carry automaton reachable from carry 0 with batches of 1..`batches`."""
    edges: list[_Edge] = []
    seen, todo = set(), [Fraction(0)]
    while todo:
        carry = todo.pop()
        if carry in seen:
            continue
        seen.add(carry)
        for p in range(1, batches + 1):
            total = carry + p
            out = math.floor(sigma * total)
            kept = Fraction(math.ceil(total - out / sigma))
            edges.append((carry, kept, out, p))
            todo.append(kept)
    return sorted(seen), edges


def _better_cycle(nodes: list[Fraction], edges: list[_Edge], ratio: Fraction, sign: int) -> list[_Edge] | None:
    """A cycle whose sign·Σ(E − ratio·P) is > 0 (Bellman-Ford for longest paths from every node at 0), or None."""
    dist = {n: Fraction(0) for n in nodes}
    pred: dict[Fraction, _Edge] = {}
    changed: Fraction | None = None
    for _ in range(len(nodes) + 1):
        changed = None
        for e in edges:
            u, v, out, p = e
            w = dist[u] + sign * (out - ratio * p)
            if w > dist[v]:
                dist[v], pred[v], changed = w, e, v
        if changed is None:
            return None
    node = changed
    assert node is not None
    for _ in range(len(nodes)):  # walk back into the cycle
        node = pred[node][0]
    cycle, at = [], node
    while True:
        e = pred[at]
        cycle.append(e)
        at = e[0]
        if at == node:
            return cycle


def _extreme(nodes: list[Fraction], edges: list[_Edge], start: Fraction, sign: int) -> Fraction:
    ratio = start
    while (cycle := _better_cycle(nodes, edges, ratio, sign)) is not None:
        ratio = Fraction(sum(e[2] for e in cycle), sum(e[3] for e in cycle))
    return ratio


def ratio_bounds(sigma: Fraction, size: int, emission: str) -> tuple[Fraction, Fraction]:
    """(σ_lo, σ_hi) of a stream of ratio σ ≥ 0 whose sender processes (or emits) batches of 1..size tuples."""
    sigma = Fraction(sigma)
    if sigma == 0 or emission == "exact" or sigma.denominator == 1:
        return sigma, sigma
    batches = min(size, sigma.denominator)
    if (math.ceil(1 / sigma) + 1) ** 2 * batches > LARGEST_AUTOMATON:
        return sigma, 2 * sigma
    nodes, edges = _automaton(sigma, batches)
    high = _extreme(nodes, edges, Fraction(0), 1)  # every cycle emits ≥ 0 per tuple
    low = sigma if size >= sigma.denominator else _extreme(nodes, edges, high, -1)
    return low, high
