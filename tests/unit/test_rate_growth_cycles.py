"""Growth proven by rates through cycles (docs/verifier.md, "Growth proven by rates", "With a cycle"): the rounds
of the iteration from below and from above, the certificate's `rounds`, the independent checker, and the
schedule played by an independent simulator (tests/adversary.py) on cones whose lasso needs the least common
multiple of the periods (τ = 0: out of the simulation's reach)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.tcn.check.content import content_hash
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.network import build_network
from app.core.topology import parse_topology
from tests.rate_growth_documents import growth_certificate, growth_doc, played_growth, proven_targets

# the sweep's random topology #23 (bench/verdict_sweep.py, seed 46): B0 ⇄ B2 amplify (σ 1 both ways), τ = 0, so a
# lasso needs the least common multiple of 1, 0.704, 0.81 and 0.781 s
SWEEP_23 = growth_doc([("B0", 0.704, 1.0, 1), ("B1", 0.769, 2.0, 1), ("B2", 0.81, 1.0, 1), ("B3", 0.775, 1.0, 1),
                 ("B4", 0.781, 2.0, 1)], [("B0", "B2"), ("B0", "B4"), ("B1", "B3"), ("B2", "B0"), ("S", "B0"),
                                          ("S", "B1")], idle=0.05)
# U keeps up inside a cycle, B (the target, on the cycle) saturates
# U ⇄ B with gain 4, fed only through F's stream of σ 0, which carries nothing: nothing ever reaches the cycle
UNFED = growth_doc([("U", 0.5, 2.0, 1), ("B", 1.5, 2.0, 1), ("F", 0.1, 0.0, 1)],
             [("S", "F"), ("F", "U"), ("U", "B"), ("B", "U")])
KEEPS_UP = growth_doc([("U", 0.5, 1.0, 1), ("B", 1.5, 0.5, 1)], [("S", "U"), ("U", "B"), ("B", "U")])





@pytest.mark.parametrize("target", ["B0", "B2", "B4"])
def test_a_cycle_that_amplifies_is_proven_by_rounds_and_played(target: str) -> None:
    cone, cert = growth_certificate(SWEEP_23, target)
    assert cert is not None and cert.rounds is not None and cert.rounds >= 2
    assert cert.bolts[target].role == "target"
    assert check_growth_certificate(cone, cert) == []
    played_growth(SWEEP_23, target, cert)


def test_a_member_that_keeps_up_inside_a_cycle() -> None:
    cone, cert = growth_certificate(KEEPS_UP, "B")
    assert cert is not None and cert.bolts["U"].role == "keeps up"
    assert Fraction(cert.bolts["U"].inflow_high) < 2 and check_growth_certificate(cone, cert) == []
    played_growth(KEEPS_UP, "B", cert)


def test_a_tie_or_too_little_inflow_in_a_cycle_proves_nothing() -> None:
    # B's least inflow tends to its capacity 1 from below (2/3 · (1 + ½ · its throughput)): never strictly above
    tie = growth_doc([("U", 0.25, 2 / 3, 1), ("B", 1.0, 0.5, 1)], [("S", "U"), ("U", "B"), ("B", "U")])
    assert growth_certificate(tie, "B")[1] is None
    # a cycle fed by nothing: from below nothing flows, whatever the gain (the fixpoint 0 is the least)
    assert growth_certificate(UNFED, "B")[1] is None


MUTATIONS = {
    "too few rounds": lambda c: c.update(rounds=1),
    "no rounds on a cycle": lambda c: c.update(rounds=None),
    "rounds past the checker's limit": lambda c: c.update(rounds=10**9),
    "a saturated member's least inflow raised": lambda c: c["bolts"]["B2"].update(inflow_low="3/1"),
    "the target's least inflow raised": lambda c: c["bolts"]["B4"].update(inflow_low="3/1"),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_checker_rejects_a_mutated_cycle_certificate(mutation: str) -> None:
    cone, cert = growth_certificate(SWEEP_23, "B4")
    assert cert is not None and cert.rounds is not None
    data = cert.model_dump()
    MUTATIONS[mutation](data)
    assert check_growth_certificate(cone, data) != []


def test_rounds_claimed_from_an_unfed_cycle_are_rejected() -> None:
    """A post-fixpoint is no proof: the unfed cycle's members would satisfy 'saturated' at their capacities, but
    the checker's rounds start from 0 and never reach them."""
    cone = build_network(parse_topology(UNFED), ["B"]).document()
    cert = {"target": "B", "content_hash": content_hash(parse_topology(cone)), "spouts": {"S": "1/1"}, "rounds": 50,
            "bolts": {"U": {"role": "saturated", "inflow_low": "4/1", "inflow_high": "4/1", "capacity": "2/1"},
                      "B": {"role": "target", "inflow_low": "4/1", "inflow_high": "4/1", "capacity": "2/3"},
                      "F": {"role": "keeps up", "inflow_low": "1/1", "inflow_high": "1/1", "capacity": "10/1"}}}
    problems = check_growth_certificate(cone, cert)
    assert any("inflow_low" in p for p in problems), problems


def _random_cycle(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 3)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, rng.choice([0.2, 0.45, 0.6, 0.9, 1.3]), rng.choice([0.5, 1.0, 1.0, 2.0]), rng.choice([1, 1, 2]))
             for name in names]
    subs = {("S", names[0])} | {(rng.choice(["S", *names[:i]]), name) for i, name in enumerate(names[1:], start=1)}
    back = rng.randrange(1, n)
    subs.add((names[back], names[rng.randrange(0, back + 1)]))  # a back edge (or a loop on itself)
    return growth_doc(bolts, sorted(subs), rate=rng.choice([1.0, 2.0]), tolerance=rng.choice([0.0, 0.1]),
                idle=rng.choice([0.0, 0.05]))


def test_cycle_certificates_are_checked_never_refuted_and_grow_when_played() -> None:
    rng = random.Random(2026_11_29)
    proofs = played = 0
    for doc, target, cert in proven_targets(_random_cycle(rng) for _ in range(20)):
        proofs += 1
        line = cert.bolts[target]
        if Fraction(line.inflow_low) - Fraction(line.capacity) < Fraction(1, 20) or played >= 4:
            continue
        played_growth(doc, target, cert)
        played += 1
    assert proofs >= 10 and played >= 4, (proofs, played)
