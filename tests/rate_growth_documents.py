"""What the growth-by-rates tests share (tests/unit/test_rate_growth.py, tests/unit/test_rate_growth_cycles.py): a
one-spout document, the certificate proven on a target's cone, and that certificate checked by the independent
checker and never refuted by the linear program, and its schedule played by the independent simulator."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Any

from app.core.results import RateGrowthCertificate
from app.core.tcn.check.certify import certify
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.topology import parse_topology
from tests.adversary import play, slow_then_fast


def growth_doc(bolts: list[tuple[str, float, float, int]], subs: list[tuple[str, str]], *, rate: float = 1.0,
         tolerance: float = 0.0, idle: float = 0.0, emission: str = "exact") -> dict[str, Any]:
    """S (rate, burst 1) feeding `bolts` (name, α, σ, executors) along `subs` (source, target)."""
    return {
        "schema_version": 1, "name": "t",
        "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": rate, "burst": 1}],
        "bolts": [{"kind": "bolt", "id": n, "name": n, "alpha": a, "sigma": s, "parallelism": c}
                  for n, a, s, c in bolts],
        "subscriptions": [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(subs)],
        "settings": {"tolerance": tolerance, "max_idle_time": idle, "emission": emission},
    }


def growth_certificate(doc: dict[str, Any], target: str) -> tuple[dict[str, Any], RateGrowthCertificate | None]:
    """The target's cone as a document, and the growth proof by rates on it (None: none)."""
    cone = build_network(parse_topology(doc), [target]).document()
    return cone, prove_growth(parse_topology(cone), target)


def checked_certificate(doc: dict[str, Any], target: str) -> tuple[dict[str, Any], RateGrowthCertificate] | None:
    """`growth_certificate`, when there is one, after asserting that the independent checker accepts it and that
    the linear program proves no freedom from growth for the target (never refuted)."""
    cone, cert = growth_certificate(doc, target)
    if cert is None:
        return None
    assert check_growth_certificate(cone, cert) == [], (doc, target)
    assert farkas(build_rows(build_network(parse_topology(doc), [target]), target), timeout_ms=5000) is None, \
        (doc, target)
    return cone, cert


def proven_targets(docs: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str, RateGrowthCertificate]]:
    """Each (document, target bolt, certificate) of `docs` that growth by rates proves (`checked_certificate`)."""
    for doc in docs:
        for target in [b["name"] for b in doc["bolts"]]:
            proven = checked_certificate(doc, target)
            if proven is not None:
                yield doc, target, proven[1]


def played_growth(doc: dict[str, Any], target: str, cert: RateGrowthCertificate) -> None:
    """The independent simulator plays the schedule: the target's queue grows at least at the certified rate
    between two horizons, in a run the product's certifier accepts as legal."""
    line = cert.bolts[target]
    gain = Fraction(line.inflow_low) - Fraction(line.capacity)
    doc = copy.deepcopy(doc)  # a stream nobody listens to is silent (docs/model.md section 1): the simulator
    listened = {s["source"] for s in doc["subscriptions"]}  # keeps no such rule
    for b in doc["bolts"]:
        b["sigma"] = b["sigma"] if b["name"] in listened else 0.0
    schedule = slow_then_fast({}, {target})
    short, long = play(doc, schedule, Fraction(60)), play(doc, schedule, Fraction(160), max_positions=60_000)
    grew = long.largest[target] - short.largest[target]
    assert grew >= gain * 100 * Fraction(4, 5) - 4, (doc, target, grew, gain)
    reached = max(p["bolts"][target]["queue"] for p in long.positions)
    witness = certify(long.trace(doc), checked=[target], threshold=reached)
    assert witness.ok, witness.problems[:3]
