"""J's other inputs in a flood proof (docs/boundedness.md, "Unbounded: a backlog that floods", "J's other
inputs"): while U drains, every other bolt takes at once at its fastest, so it passes on at least σ_lo ·
min(its least inflow, its largest capacity); the builder counts those terms (`flood.least_through`) and the
independent checker (check/flood.py) recomputes them with its own walk. Played by the independent simulator."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from app.core.results import BoltVerdict, FloodCertificate, FloodTerm
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.flood import prove_flood
from app.core.tcn.flood_run import build_threshold_run
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.topology import Topology, parse_topology
from tests.adversary import play, slow_then_fast


def _doc(subs: list[tuple[str, str]], x_sigma: float = 1.0) -> dict[str, Any]:
    """U may back up (max_idle 1 s) and drains at 50/9 tuples/s, less than J's smallest capacity 700/111; X, fed by
    S, adds at least S's least rate 10/11 while U drains: together 640/99 > 700/111."""
    return {"schema_version": 1, "name": "others",
            "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": 1.0, "burst": 1}],
            "bolts": [{"kind": "bolt", "id": "U", "name": "U", "alpha": 0.2, "sigma": 1.0, "parallelism": 1},
                      {"kind": "bolt", "id": "X", "name": "X", "alpha": 0.2, "sigma": x_sigma, "parallelism": 2},
                      {"kind": "bolt", "id": "J", "name": "J", "alpha": 0.1, "sigma": 0.0, "parallelism": 7}],
            "subscriptions": [{"id": f"e{i}", "source": a, "target": b} for i, (a, b) in enumerate(subs)],
            "settings": {"tolerance": 0.1, "max_idle_time": 1.0, "emission": "exact"}}


OTHERS = _doc([("S", "U"), ("S", "X"), ("U", "J"), ("X", "J")])
WITHOUT_X = _doc([("S", "U"), ("S", "X"), ("U", "J")])


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def _flood(doc: dict[str, Any]) -> FloodCertificate | None:
    growth = prove_growth(cone(doc, "U"), "U")
    assert growth is not None
    verdicts = {"U": BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                 growth_certificate=growth)}
    return prove_flood(cone(doc, "J"), "J", verdicts, [], lambda n: cone(doc, n))


def test_another_input_turns_a_shortfall_into_a_flood() -> None:
    assert _flood(WITHOUT_X) is None  # U's drain alone, 50/9, is below J's 700/111
    cert = _flood(OTHERS)
    assert cert is not None
    terms = {t.sender: (Fraction(t.rate), Fraction(t.ratio)) for t in cert.terms}
    assert terms == {"U": (Fraction(50, 9), 1), "X": (Fraction(10, 11), 1)}
    assert check_flood_certificate(cone(OTHERS, "J"), cert) == []


def _with_x(cert: FloodCertificate, **term: str) -> FloodCertificate:
    return cert.model_copy(update={"terms": [t if t.sender != "X" else t.model_copy(update=term) for t in cert.terms]})


@pytest.mark.parametrize("mutation", ["rate at X's largest capacity", "ratio above σ_lo", "X dropped",
                                      "a term from J itself"])
def test_the_checker_recomputes_the_other_inputs(mutation: str) -> None:
    cert = _flood(OTHERS)
    assert cert is not None
    changed = {"rate at X's largest capacity": lambda: _with_x(cert, rate="100/9"),
               "ratio above σ_lo": lambda: _with_x(cert, ratio="2/1"),
               "X dropped": lambda: cert.model_copy(update={"terms": [t for t in cert.terms if t.sender != "X"]}),
               "a term from J itself": lambda: cert.model_copy(update={"terms": [
                   *cert.terms, FloodTerm(sender="J", stream="default", rate="1/1", ratio="1/1")]})}[mutation]()
    assert check_flood_certificate(cone(OTHERS, "J"), changed) != []


def test_an_input_on_a_cycle_counts_zero() -> None:
    """X on a cycle (it feeds itself): neither the builder nor the checker can order it, so it counts 0 and U's
    drain alone is short; a certificate that counts X anyway is rejected."""
    looped = _doc([("S", "U"), ("S", "X"), ("U", "J"), ("X", "J"), ("X", "X")], x_sigma=0.5)
    assert _flood(looped) is None
    cert = _flood(OTHERS)
    assert cert is not None
    moved = cert.model_copy(update={"content_hash": content_hash(cone(looped, "J")),
                                    "terms": [t if t.sender != "X" else t.model_copy(update={"ratio": "1/2"})
                                              for t in cert.terms]})
    problems = check_flood_certificate(cone(looped, "J"), moved)
    assert any("X/default" in p for p in problems), problems


def test_played_independently_and_as_a_certified_threshold_run() -> None:
    """U slow for T s, then fastest; X fastest; J slowest: J's largest queue grows with T (the simulator shares no
    code with the product), and the product's threshold run reaches 20 and is certified with the flood."""
    def largest(doc: dict[str, Any]) -> list[int]:
        return [play(doc, slow_then_fast({"U": Fraction(slow)}, {"J"}), Fraction(slow + 200)).largest["J"]
                for slow in (100, 400)]

    with_x, without = largest(OTHERS), largest(WITHOUT_X)
    assert with_x[1] >= with_x[0] + 4, with_x  # measured: 10, 16 (and 45 after 1,600 s)
    assert without[1] <= without[0] + 1 < with_x[1] - 4, without  # U's drain alone does not beat J: 7, 7
    cert = _flood(OTHERS)
    assert cert is not None
    built = build_threshold_run(cone(OTHERS, "J"), ["U"], "J", 20)
    assert not isinstance(built, str), built
    trace, _, reached = built
    assert reached >= 20
