"""Seeded layered topologies of any size, for the verifier's scale bench and tests (not shipped: the tests
import it from tests/, bench/verify_scale.py puts tests/ on its path).

`layered_topology(n, seed)` builds n components: a few spouts with different rates and
bursts, then about √n layers of bolts, each bolt subscribing to one or two components
of the layer before (now and then of the one before that), streams no bolt consumes yet
first: layered, with joins and some fan-out. σ is picked among values that
are mostly not integers, keeping every stream between about 0.5 and 6 tuples/s and, by
default, every stream a whole number per `flow_denominator` spout tuples (a product of
σ along any path times `flow_denominator` is an integer): a lasso must carry a whole
number of tuples through every bolt whose queue cannot grow, so without that bound the
shortest lasso of a deep topology is exponentially long in its depth (docs/simulation.md,
"How long a lasso must be"); `flow_denominator=None` lifts it. Each
bolt's parallelism is the smallest that the rate check proves bounded with a 25 %
margin, except `overloaded` bolts deep in the graph, sized (and slowed) so that their
nominal inflow exceeds their nominal capacity: the rate check says they `grow`.

The flows are computed here with the rate check's own formulas (largest flows with
σ_hi and the largest capacities, nominal flows with σ_lo), so the statuses come out as
intended; `tests/unit/test_tcn_simulate.py` checks that against `rate_check`.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

from app.core.rates import exact, sigma_bounds
from app.core.topology import Topology, parse_topology

RATES = (1, 1.5, 2, 2.5, 3, 4)
SECOND_SOURCE = 0.3  # chance that a bolt joins two streams
SHARED = 0.2  # chance that a bolt may pick a stream another bolt already consumes
SKIP_LAYER = 0.2  # chance that a source comes from two layers up
ALPHAS = (0.25, 0.5, 1, 2)
SIGMAS = (0.5, 0.75, 1, 1.25, 1.5, 2)
MARGIN = Fraction(5, 4)  # bounded bolts: capacity_min ≥ MARGIN × inflow_max


def layered_topology(components: int, seed: int = 0, *, spouts: int | None = None, overloaded: int = 2,
                     emission: str = "dvert", tolerance: float = 0.1, max_idle_time: float = 0.01,
                     flow_denominator: int | None = 8) -> Topology:
    """A seeded layered topology of `components` spouts and bolts (see module docstring)."""
    rng = random.Random(seed)
    n_spouts = spouts if spouts is not None else max(2, components // 25)
    n_bolts = components - n_spouts
    if n_spouts < 1 or n_bolts < max(1, overloaded):
        raise ValueError(f"{components} components cannot hold {n_spouts} spouts and {overloaded} overloaded bolts")
    tau, idle = exact(tolerance), exact(max_idle_time)
    depth = max(2, min(n_bolts, round(math.sqrt(n_bolts))))
    layer_of = [min(depth - 1, (j * depth) // n_bolts) for j in range(n_bolts)]
    layers: list[list[str]] = [[] for _ in range(depth + 1)]  # layer 0: the spouts
    consumed: set[str] = set()  # components some bolt already subscribes to
    # per component and prime: the smallest p-adic valuation of a σ product along a path from a spout
    valuation: dict[str, dict[int, int]] = {}
    allowed = _prime_powers(flow_denominator)
    out_max: dict[str, Fraction] = {}
    out_nominal: dict[str, Fraction] = {}
    doc: dict[str, Any] = {"name": f"layered-{components}-seed{seed}", "spouts": [], "bolts": [], "subscriptions": [],
                           "settings": {"tolerance": tolerance, "max_idle_time": max_idle_time, "emission": emission}}
    for i in range(n_spouts):
        name = f"S{i + 1}"
        rate = RATES[(i + rng.randrange(len(RATES))) % len(RATES)]
        doc["spouts"].append({"name": name, "rate": rate, "burst": rng.choice((1, 1, 2))})
        period = 1 / exact(rate)
        out_max[name], out_nominal[name] = 1 / (period * (1 - tau)), exact(rate)
        valuation[name] = {p: 0 for p in PRIMES}
        layers[0].append(name)
    # overloaded bolts deep in the graph: in the last third of the layers
    deep = [j for j in range(n_bolts) if layer_of[j] >= (2 * depth) // 3] or list(range(n_bolts))
    chosen = set(rng.sample(deep, min(overloaded, len(deep))))
    for j in range(n_bolts):
        name = f"B{j + 1}"
        layer = layer_of[j] + 1
        sources = _pick_sources(rng, layers[layer - 1], layers[max(0, layer - 2)], consumed)
        consumed.update(sources)
        in_max = sum((out_max[s] for s in sources), Fraction(0))
        in_nominal = sum((out_nominal[s] for s in sources), Fraction(0))
        alpha = exact(rng.choice(ALPHAS))
        arriving = {p: min(valuation[s][p] for s in sources) for p in PRIMES}
        sigma = _pick_sigma(rng, in_nominal, arriving, allowed)
        valuation[name] = {p: arriving[p] + _valuation(sigma, p) for p in PRIMES}
        if j in chosen:
            # nominal capacity at most 3/4 of the nominal inflow: slow the bolt down if one tuple is too many
            alpha = max(alpha, Fraction(math.ceil(Fraction(3, 2) / in_nominal * 4), 4))
            parallelism = max(1, math.floor(in_nominal * alpha * Fraction(3, 4)))
        else:
            slowest = alpha * (1 + tau) + idle
            parallelism = math.floor(in_max * MARGIN * slowest) + 1
        lo, hi = sigma_bounds(sigma, parallelism, emission)
        out_max[name] = hi * min(in_max, parallelism / (alpha * (1 - tau)))
        out_nominal[name] = lo * min(in_nominal, parallelism / alpha)
        doc["bolts"].append({"name": name, "alpha": float(alpha), "sigma": float(sigma), "parallelism": parallelism})
        doc["subscriptions"] += [{"source": s, "target": name} for s in sources]
        layers[layer].append(name)
    return parse_topology(doc)


def overloaded_bolts(topo: Topology) -> list[str]:
    """The bolts the rate check says `grows` (the ones a layered topology was built to overload)."""
    from app.core.rates import rate_check

    return [n for n, b in rate_check(topo, suggest=False).bolts.items() if b.status == "grows"]


def _pick_sources(rng: random.Random, previous: list[str], before: list[str], consumed: set[str]) -> list[str]:
    """One or two components of the previous layer (now and then one of the layer before), streams
    no bolt consumes yet first: a stream feeding several bolts is copied to each, so fan-out
    multiplies the flows downstream."""
    everyone = list(dict.fromkeys(previous + before))
    want = 2 if rng.random() < SECOND_SOURCE and len(everyone) > 1 else 1
    chosen: list[str] = []
    for _ in range(want):
        layer = before if before is not previous and before and rng.random() < SKIP_LAYER else previous
        pool = [c for c in layer if c not in chosen] or [c for c in everyone if c not in chosen]
        fresh = [c for c in pool if c not in consumed]
        chosen.append(rng.choice(fresh if fresh and rng.random() >= SHARED else pool))
    return chosen


PRIMES = (2, 3, 5)


def _valuation(x: Fraction, p: int) -> int:
    """The exponent of p in x (negative when p divides the denominator)."""
    v, num, den = 0, x.numerator, x.denominator
    while num % p == 0:
        num, v = num // p, v + 1
    while den % p == 0:
        den, v = den // p, v - 1
    return v


def _prime_powers(denominator: int | None) -> dict[int, int] | None:
    """How far below zero each prime's valuation may go (None: no bound)."""
    if denominator is None:
        return None
    left = denominator
    powers = {p: 0 for p in PRIMES}
    for p in PRIMES:
        while left % p == 0:
            left, powers[p] = left // p, powers[p] + 1
    if left != 1:
        raise ValueError(f"flow_denominator must be a product of {PRIMES}, not {denominator}")
    return powers


def _pick_sigma(rng: random.Random, inflow: Fraction, arriving: dict[int, int],
                allowed: dict[int, int] | None) -> Fraction:
    """A σ keeping the stream between about 0.5 and 6 tuples/s (random among those that do) and
    its flow a whole number per `flow_denominator` spout tuples."""
    def whole(s: float) -> bool:
        return allowed is None or all(arriving[p] + _valuation(exact(s), p) >= -allowed[p] for p in PRIMES)

    candidates = [s for s in SIGMAS if whole(s)] or [1]  # σ = 1 keeps whatever the inflow has
    fits = [s for s in candidates if Fraction(1, 2) <= inflow * exact(s) <= 6]
    if not fits:
        fits = [min(candidates, key=lambda s: abs(math.log(float(inflow * exact(s)) / 2)))]
    return exact(rng.choice(fits))
