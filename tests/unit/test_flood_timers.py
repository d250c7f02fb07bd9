"""Flood proofs through a duration window (docs/boundedness.md, "Unbounded: a backlog that floods", "Duration
windows"): a timer among J's other senders passes on its whole least inflow while U drains (no capacity limits it,
its ratio is over batches of any size); a timer is never the source nor the target. The builder (`flood.py`) and
the independent checker (check/flood.py) each have the rule; the threshold run through the timer is certified."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from app.core.results import BoltVerdict, FloodCertificate
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.flood import prove_flood
from app.core.tcn.flood_run import build_threshold_run
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.topology import Topology, parse_topology


def _doc(subs: list[tuple[str, str]], window: dict[str, Any] | None = None) -> dict[str, Any]:
    """U may back up (max_idle 1 s) and drains at 50/9 tuples/s, below J's smallest capacity 700/111; X, fed by S,
    evaluates a duration window every 6 s (α 4 s, two executors: an ordinary bolt of that α passes on at most 5/9
    tuples/s, too few) and passes on S's least rate 10/11 whatever its α: with U's drain 640/99 > 700/111."""
    x: dict[str, Any] = {"name": "X", "alpha": 4.0, "sigma": 1.0, "parallelism": 2}
    if window is not None:
        x["window"] = window
    return {"schema_version": 5, "name": "timer-flood", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
            "bolts": [{"name": "U", "alpha": 0.2, "sigma": 1.0, "parallelism": 1}, x,
                      {"name": "J", "alpha": 0.1, "sigma": 0.0, "parallelism": 7}],
            "subscriptions": [{"source": a, "target": b} for a, b in subs],
            "settings": {"tolerance": 0.1, "max_idle_time": 1.0, "emission": "exact"}}


WINDOW = {"kind": "duration", "length": 6, "slide": 6}
SUBS = [("S", "U"), ("S", "X"), ("U", "J"), ("X", "J")]
TIMED = _doc(SUBS, WINDOW)


def cone(doc: dict[str, Any], name: str) -> Topology:
    return build_network(parse_topology(doc), [name]).topology


def _flood(doc: dict[str, Any], source: str = "U") -> FloodCertificate | None:
    growth = prove_growth(cone(doc, source), source)
    assert growth is not None
    verdicts = {source: BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                    growth_certificate=growth)}
    return prove_flood(cone(doc, "J"), "J", verdicts, [], lambda n: cone(doc, n))


def test_a_timer_among_the_other_inputs_passes_on_its_least_inflow() -> None:
    assert _flood(_doc(SUBS)) is None  # an ordinary X of α 4 s: 5/9 at most, U's drain and it fall short
    cert = _flood(TIMED)
    assert cert is not None
    terms = {t.sender: (Fraction(t.rate), Fraction(t.ratio)) for t in cert.terms}
    assert terms == {"U": (Fraction(50, 9), 1), "X": (Fraction(10, 11), 1)}
    assert check_flood_certificate(cone(TIMED, "J"), cert) == []
    forged = cert.model_copy(update={"terms": [t if t.sender != "X" else t.model_copy(update={"rate": "11/10"})
                                               for t in cert.terms]})
    assert any("X/default" in p for p in check_flood_certificate(cone(TIMED, "J"), forged))


def test_under_dvert_a_timers_ratio_is_over_batches_of_any_size() -> None:
    """X emits σ = 3/4 under "dvert" with two executors: batches of 1..2 tuples have σ_lo = 1, a timer's batches of
    any size σ_lo = 3/4 (a batch of 4 from carry 0 emits exactly 3). J (α 0.17 s: 7000/1187 tuples/s at its slowest)
    is flooded by U's 50/9 with X's 3/4 · 10/11; a certificate reading X's ratio from batches of 2 is rejected."""
    doc = copy.deepcopy(TIMED)
    doc["settings"]["emission"] = "dvert"
    doc["bolts"][1]["sigma"] = 0.75
    doc["bolts"][2]["alpha"] = 0.17
    cert = _flood(doc)
    assert cert is not None
    assert {t.sender: Fraction(t.ratio) for t in cert.terms}["X"] == Fraction(3, 4)
    assert check_flood_certificate(cone(doc, "J"), cert) == []
    bounded = cert.model_copy(update={"terms": [t if t.sender != "X" else t.model_copy(update={"ratio": "1/1"})
                                                for t in cert.terms]})
    assert any("X/default" in p for p in check_flood_certificate(cone(doc, "J"), bounded))


def test_a_timer_is_neither_source_nor_target() -> None:
    """A timer's runs take all it holds: no backlog to drain, none to flood. A certificate that names one is
    rejected by the checker, and the builder gives none."""
    cert = _flood(TIMED)
    assert cert is not None
    for who in ("source", "target"):
        forged = cert.model_copy(update={who: "X"})
        problems = check_flood_certificate(cone(TIMED, "J"), forged)
        assert any("duration window" in p for p in problems), problems
    into_timer = _doc([("S", "U"), ("U", "J")], WINDOW)
    into_timer["bolts"][2]["window"] = WINDOW  # J itself a timer
    growth = prove_growth(cone(into_timer, "U"), "U")
    assert growth is not None
    verdicts = {"U": BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                 growth_certificate=growth)}
    assert prove_flood(cone(into_timer, "J"), "J", verdicts, [], lambda n: cone(into_timer, n)) is None


def test_evidence_with_another_timer_is_not_part_of_the_document() -> None:
    """X feeds U: U's growth is proven on a cone holding X. Evidence proven with X sliding every 1 s instead of 6 s
    (U grows there too) is about another run: the checker compares each timer's G."""
    subs = [("S", "X"), ("X", "U"), ("U", "J"), ("X", "J")]
    doc = _doc(subs, WINDOW)
    cert = _flood(doc)
    assert cert is not None
    assert check_flood_certificate(cone(doc, "J"), cert) == []
    other = _doc(subs, {"kind": "duration", "length": 6, "slide": 5})
    growth = prove_growth(cone(other, "U"), "U")
    assert growth is not None
    moved = cert.model_copy(update={"evidence": cert.evidence.model_copy(update={
        "topology": cone(other, "U").model_dump(mode="json"), "growth_certificate": growth})})
    problems = check_flood_certificate(cone(doc, "J"), moved)
    assert any("X is not in this document with the same parameters" in p for p in problems), problems


def test_a_certified_threshold_run_through_the_timer() -> None:
    """The threshold run keeps X on its phase-1 timer (a legal pace that passes on all it receives, G late at most)
    and is certified by the certifier's timer rule (a small cell budget: the first schedule tried stalls)."""
    built = build_threshold_run(cone(TIMED, "J"), ["U"], "J", 12, max_cells=20_000)
    assert not isinstance(built, str), built
    _, _, reached = built
    assert reached >= 12
