"""Seeded layered topologies of any size, for the verifier's scale bench and tests.

`layered_topology(n, seed)` builds n components: a few spouts with different rates and
bursts, then bolts created one after another, each subscribing to one or two of the
last few components (so the graph is layered and deep). σ is picked among values that
are mostly not integers, keeping every stream between about 0.5 and 6 tuples/s; each
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
ALPHAS = (0.25, 0.5, 1, 2)
SIGMAS = (0.5, 0.75, 1, 1.25, 1.5, 2)
WINDOW = 5  # a bolt subscribes to components among the last WINDOW created
MARGIN = Fraction(5, 4)  # bounded bolts: capacity_min ≥ MARGIN × inflow_max


def layered_topology(components: int, seed: int = 0, *, spouts: int | None = None, overloaded: int = 2,
                     emission: str = "dvert", tolerance: float = 0.1, max_idle_time: float = 0.01) -> Topology:
    """A seeded layered topology of `components` spouts and bolts (see module docstring)."""
    rng = random.Random(seed)
    n_spouts = spouts if spouts is not None else max(2, components // 25)
    n_bolts = components - n_spouts
    if n_spouts < 1 or n_bolts < max(1, overloaded):
        raise ValueError(f"{components} components cannot hold {n_spouts} spouts and {overloaded} overloaded bolts")
    tau, idle = exact(tolerance), exact(max_idle_time)
    names: list[str] = []
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
        names.append(name)
    # overloaded bolts deep in the graph: spread over the last 40 % of the bolts
    deep = list(range(n_bolts - max(1, (2 * n_bolts) // 5), n_bolts))
    chosen = set(rng.sample(deep, min(overloaded, len(deep))))
    for j in range(n_bolts):
        name = f"B{j + 1}"
        recent = names[-WINDOW:]
        sources = rng.sample(recent, min(len(recent), rng.choice((1, 1, 2))))
        in_max = sum((out_max[s] for s in sources), Fraction(0))
        in_nominal = sum((out_nominal[s] for s in sources), Fraction(0))
        alpha = exact(rng.choice(ALPHAS))
        sigma = _pick_sigma(rng, in_nominal)
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
        names.append(name)
    return parse_topology(doc)


def overloaded_bolts(topo: Topology) -> list[str]:
    """The bolts the rate check says `grows` (the ones a layered topology was built to overload)."""
    from app.core.rates import rate_check

    return [n for n, b in rate_check(topo).bolts.items() if b.status == "grows"]


def _pick_sigma(rng: random.Random, inflow: Fraction) -> Fraction:
    """A σ keeping the stream between about 0.5 and 6 tuples/s (random among those that do)."""
    fits = [s for s in SIGMAS if Fraction(1, 2) <= inflow * exact(s) <= 6]
    if not fits:
        fits = [min(SIGMAS, key=lambda s: abs(math.log(float(inflow * exact(s)) / 2)))]
    return exact(rng.choice(fits))
