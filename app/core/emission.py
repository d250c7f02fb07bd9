"""How a bolt turns processed tuples into emitted ones: the two emission rules and their exact output ratios.

A bolt keeps a *carry* (its `buffer`): processed tuples not yet turned into output.
At the end of a batch of P tuples the carry becomes c + P, the bolt emits
E = ⌊σ·(c + P)⌋ tuples and keeps the rest (docs/model.md, section 2):

* ``"dvert"``: the kept carry is rounded *up* to an integer, c' = ⌈c + P − E/σ⌉, as
  the D-VerT prototype modelled it. The long-run ratio emitted/processed then depends
  on the batch sizes and is not σ in general (σ = 3/4 with batches of one emits one
  tuple per batch after the first).
* ``"exact"``: the carry is an exact rational, c' = c + P − E/σ, always in [0, 1/σ),
  so over any stretch the bolt emits σ times what it processed, up to one tuple: the
  behaviour of a real bolt with selectivity σ.

:func:`output_ratio_bounds` gives the smallest and largest long-run ratio
Σ emitted / Σ processed any run can sustain (σ_lo, σ_hi), as exact fractions: the
rate check uses them for its flows (docs/boundedness.md).

The certifier (`app/core/tcn/check/certify.py`) deliberately does not use this module: it
restates the rule itself, so that a mistake here cannot hide in both.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from app.core.topology.settings import Emission as Emission

EMISSIONS: tuple[Emission, ...] = ("dvert", "exact")
LARGEST_CARRY_AUTOMATON = 200_000  # states² × batch sizes of the Bellman-Ford in output_ratio_bounds


def emit(sigma: Fraction, carry: Fraction, batch: int, rule: Emission) -> tuple[int, Fraction]:
    """One EMIT: (tuples emitted, carry kept) for a bolt with selectivity σ > 0."""
    total = carry + batch
    out = math.floor(sigma * total)
    rest = total - out / sigma
    return out, Fraction(math.ceil(rest)) if rule == "dvert" else rest


def carry_limit(sigma: Fraction, rule: Emission) -> Fraction:
    """A strict upper bound on the carry after any emit: 1/σ for ``exact``, ⌈1/σ⌉ + 1 for ``dvert``.

    (total − E/σ = (σ·total − E)/σ lies in [0, 1/σ); ``dvert`` rounds it up, so its
    carry is at most ⌈1/σ⌉.)"""
    return 1 / sigma if rule == "exact" else Fraction(math.ceil(1 / sigma) + 1)


def carry_graph(sigma: Fraction, take_max: int, rule: Emission) -> dict[Fraction, list[tuple[int, int, Fraction]]]:
    """The carry automaton reachable from carry 0: state -> [(batch, emitted, next state)]."""
    edges: dict[Fraction, list[tuple[int, int, Fraction]]] = {}
    todo = [Fraction(0)]
    while todo:
        carry = todo.pop()
        if carry in edges:
            continue
        edges[carry] = []
        for batch in range(1, take_max + 1):
            out, kept = emit(sigma, carry, batch, rule)
            edges[carry].append((batch, out, kept))
            if kept not in edges:
                todo.append(kept)
    return edges


def _better_cycle(edges: dict[Fraction, list[tuple[int, int, Fraction]]], ratio: Fraction,
                  largest: bool) -> list[tuple[int, int]] | None:
    """A cycle whose ratio Σout/Σbatch is strictly beyond `ratio` (above if `largest`), or None.

    Bellman-Ford on edge weights w = ±(ratio·batch − out): a negative cycle is exactly a
    cycle with a better ratio. Returns the cycle's (batch, out) moves."""
    states = list(edges)
    index = {s: i for i, s in enumerate(states)}
    sign = 1 if largest else -1
    dist = [Fraction(0)] * len(states)  # a virtual source at distance 0 to every state
    pred: list[tuple[int, int, int] | None] = [None] * len(states)  # (from state, batch, out)
    changed_at = -1
    for _ in range(len(states) + 1):
        changed_at = -1
        for s in states:
            i = index[s]
            for batch, out, nxt in edges[s]:
                j = index[nxt]
                w = sign * (ratio * batch - out)
                if dist[i] + w < dist[j]:
                    dist[j] = dist[i] + w
                    pred[j] = (i, batch, out)
                    changed_at = j
        if changed_at < 0:
            return None
    # still relaxing after |V| rounds: walk back |V| steps to land on the cycle, then read it
    node = changed_at
    for _ in range(len(states)):
        node = pred[node][0]  # type: ignore[index]  # every relaxed node has a predecessor
    cycle: list[tuple[int, int]] = []
    cur = node
    while True:
        frm, batch, out = pred[cur]  # type: ignore[misc]  # on the cycle every node has one
        cycle.append((batch, out))
        cur = frm
        if cur == node:
            break
    return cycle


def _ratio(cycle: list[tuple[int, int]]) -> Fraction:
    return Fraction(sum(out for _, out in cycle), sum(batch for batch, _ in cycle))


@lru_cache(maxsize=4096)
def output_ratio_bounds(sigma: Fraction, take_max: int, rule: Emission) -> tuple[Fraction, Fraction]:
    """(σ_lo, σ_hi): the smallest and largest long-run Σ emitted / Σ processed over every run.

    Exactly σ for ``exact`` (the carry stays below 1/σ). For ``dvert`` the minimum and
    maximum ratio cycles of the carry automaton reachable from carry 0 (Dinkelbach
    iteration with exact fractions from any cycle: each step finds a strictly better
    cycle, so it ends at the extreme). Every long run's moves decompose into cycles of
    the automaton plus fewer moves than it has states, so its ratio tends into
    [σ_lo, σ_hi] (docs/boundedness.md)."""
    sigma = Fraction(sigma)
    if sigma == 0:
        return Fraction(0), Fraction(0)
    if rule == "exact":
        return sigma, sigma
    edges = carry_graph(sigma, take_max, rule)
    seed = _better_cycle(edges, Fraction(-1), largest=True)  # every cycle's ratio beats -1
    assert seed is not None  # every state has a move, so the finite automaton has a cycle
    lo = hi = _ratio(seed)
    while (cycle := _better_cycle(edges, hi, largest=True)) is not None:
        hi = _ratio(cycle)
    while (cycle := _better_cycle(edges, lo, largest=False)) is not None:
        lo = _ratio(cycle)
    return lo, hi


@lru_cache(maxsize=4096)  # a document repeats its ratios (20,000 streams of σ 1): each pair is worked out once
def sigma_bounds(sigma: Fraction, take_max: int, emission: str) -> tuple[Fraction, Fraction]:
    """(σ_lo, σ_hi) of a bolt with batches of 1..take_max (`output_ratio_bounds`, made cheap).

    Under "dvert" a batch of P and one of P + den(σ) reach the same carry with the same
    rounding excess, so batches above den(σ) never raise the largest ratio, and a batch of
    den(σ) from carry 0 is a cycle of ratio exactly σ, the smallest possible (the rule only
    rounds up): the automaton needs batches up to min(take_max, den(σ)) only
    (docs/boundedness.md). A very fine σ (a huge automaton) gets the sound bounds [σ, 2σ]."""
    if sigma == 0:
        return Fraction(0), Fraction(0)
    if emission == "exact" or sigma.denominator == 1:
        return sigma, sigma
    batches = min(take_max, sigma.denominator)
    states = math.ceil(1 / sigma) + 1
    if states * states * batches > LARGEST_CARRY_AUTOMATON:
        return sigma, 2 * sigma
    low, high = output_ratio_bounds(sigma, batches, "dvert")
    return (sigma if take_max >= sigma.denominator else low), high
