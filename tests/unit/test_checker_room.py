"""The checker room (app/core/tcn/check/, docs/verifier.md "The checker room"): tests that pin each checker's
acceptance rule, each killing a mutation the other tests let through (bench/mutate_checkers.py applies them and
runs this file): a negative multiplier on an inequality, a certificate with no rows, the least inflow compared
with the derived most, a bolt that "keeps up" with an inflow equal to its capacity, and the fine-σ fallback of
app/core/emission.py narrowed to [σ, σ]. With τ > 0, the `"dvert"` rule, failures and ties."""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
import z3

from app.core.emission import sigma_bounds
from app.core.formats import load_topology
from app.core.formats.verified import content_hash as verified_hash
from app.core.results import LinearCertificate, RateGrowthCertificate, RateGrowthLine
from app.core.tcn import search_proofs
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate, pass_rows
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.check.ratios import ratio_bounds
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology

DVERT = Path(__file__).resolve().parents[1] / "data" / "dvert"


def _fraction(value: z3.ExprRef) -> Fraction:
    assert isinstance(value, z3.RatNumRef)
    return Fraction(value.numerator_as_long(), value.denominator_as_long())


def multipliers_of_any_sign(topo: Topology, target: str) -> dict[str, Fraction] | None:
    """Multipliers of the checker's rows with every variable's coefficient ≤ 0 and the constant −1, but with
    no sign asked of an inequality's multiplier: what a wrong builder could write for a bolt that grows."""
    rows = pass_rows(topo, target)
    ctx = z3.Context()
    y = {n: z3.Real(f"y{i}", ctx) for i, n in enumerate(rows)}
    solver = z3.Solver(ctx=ctx)
    for v in sorted({v for _, cs, _ in rows.values() for v in cs}):
        solver.add(z3.Sum([y[n] * z3.RealVal(str(cs[v]), ctx) for n, (_, cs, _) in rows.items() if v in cs]) <= 0)
    solver.add(z3.Sum([y[n] * z3.RealVal(str(c0), ctx) for n, (_, _, c0) in rows.items() if c0]) == -1)
    if solver.check() != z3.sat:
        return None
    model = solver.model()
    values = {n: _fraction(model.eval(y[n], model_completion=True)) for n in rows}
    return {n: v for n, v in values.items() if v}


# ---- the linear program's checker ----------------------------------------------------------------------


def test_a_negative_multiplier_on_an_inequality_is_rejected_for_a_bolt_that_grows() -> None:
    """B2 of simple-DIA-cfg-1 grows (τ 0.1, "dvert"); multipliers that flip an inequality prove anything."""
    topo = build_network(load_topology(DVERT / "icfem-simple-DIA-cfg-1.json"), ["B2"]).topology
    assert topo.settings.tolerance > 0 and topo.settings.emission == "dvert"
    rows = pass_rows(topo, "B2")
    y = multipliers_of_any_sign(topo, "B2")
    assert y is not None and any(v < 0 and rows[n][0] == "ge" for n, v in y.items())
    cert = LinearCertificate(target="B2", content_hash=content_hash(topo), rows={n: str(v) for n, v in y.items()})
    problems = check_certificate(topo, cert)
    assert problems and all("must be ≥ 0" in p for p in problems), problems


def test_a_certificate_with_no_rows_or_only_zero_multipliers_is_rejected() -> None:
    """The weighted sum of no rows is 0 ≥ 0: no contradiction (its constant must be negative, not merely ≤ 0)."""
    topo = build_network(load_topology(DVERT / "icfem-simple-DIA-cfg-1.json"), ["B2"]).topology
    for rows in ({}, {"grows[B2]": "0"}, {"grows[B2]": "0", "full[B2]": "0/1"}):
        cert = LinearCertificate(target="B2", content_hash=content_hash(topo), rows=rows)
        problems = check_certificate(topo, cert)
        assert any("not negative" in p for p in problems), (rows, problems)


# ---- growth proven by rates: its checker ---------------------------------------------------------------


def dvert_chain(u_alpha: float = 0.1, u_sigma: float = 0.6, tolerance: float = 0.1) -> Topology:
    """S (1/s) → U (σ 0.6, three tuples a batch: σ_lo 2/3 < σ_hi 1 under "dvert") → J (α 2, slow)."""
    return parse_topology({
        "schema_version": 1, "name": "dvert-chain", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "U", "alpha": u_alpha, "sigma": u_sigma, "parallelism": 3},
                  {"name": "J", "alpha": 2, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "U"}, {"source": "U", "target": "J"}],
        "settings": {"tolerance": tolerance, "max_idle_time": 0.05, "emission": "dvert"}})


def test_a_claimed_least_inflow_above_the_derived_least_is_rejected_even_below_the_derived_most() -> None:
    topo = dvert_chain()
    cert = prove_growth(topo, "J")
    assert cert is not None and check_growth_certificate(topo, cert) == []
    low, high = Fraction(cert.bolts["J"].inflow_low), Fraction(cert.bolts["J"].inflow_high)
    assert low < high  # τ > 0 and "dvert": the least and the most inflow differ
    for claimed in (high, (low + high) / 2):
        line = cert.bolts["J"].model_copy(update={"inflow_low": f"{claimed.numerator}/{claimed.denominator}"})
        wrong = cert.model_copy(update={"bolts": {**cert.bolts, "J": line}})
        problems = check_growth_certificate(topo, wrong)
        assert any("above the derived least inflow" in p for p in problems), problems


def test_a_claimed_most_inflow_below_the_derived_most_is_rejected() -> None:
    topo = dvert_chain()
    cert = prove_growth(topo, "J")
    assert cert is not None
    low = Fraction(cert.bolts["J"].inflow_low)
    line = cert.bolts["J"].model_copy(update={"inflow_high": f"{low.numerator}/{low.denominator}"})
    problems = check_growth_certificate(topo, cert.model_copy(update={"bolts": {**cert.bolts, "J": line}}))
    assert any("below the derived most inflow" in p for p in problems), problems


def test_a_bolt_that_keeps_up_with_an_inflow_equal_to_its_capacity_is_rejected() -> None:
    """A tie: U (α 2, τ 0.5) may process one tuple per α(1−τ) = 1 s and receives exactly 1 tuple/s. Its run need
    not settle into a period, so the schedule proves nothing; the builder writes no certificate, and the checker
    refuses one written by hand."""
    topo = parse_topology({
        "schema_version": 1, "name": "tie", "spouts": [{"name": "S", "rate": 0.5, "burst": 1}],
        "bolts": [{"name": "U", "alpha": 2, "sigma": 1, "parallelism": 1},
                  {"name": "J", "alpha": 2, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "U"}, {"source": "U", "target": "J"}],
        "settings": {"tolerance": 0.5, "max_idle_time": 0, "emission": "exact"}})
    assert prove_growth(topo, "J") is None
    one, third = "1/1", "1/3"
    cert = RateGrowthCertificate(
        target="J", content_hash=content_hash(topo), spouts={"S": one},
        bolts={"U": RateGrowthLine(role="keeps up", inflow_low=one, inflow_high=one, capacity=one),
               "J": RateGrowthLine(role="target", inflow_low=one, inflow_high=one, capacity=third)})
    problems = check_growth_certificate(topo, cert)
    assert problems == ["U: keeps up, yet its most inflow 1 is not below its capacity 1"], problems
    saturated = cert.model_copy(update={"bolts": {**cert.bolts, "U": cert.bolts["U"].model_copy(
        update={"role": "saturated"})}})
    assert check_growth_certificate(topo, saturated) == [
        "U: saturated, yet its least inflow 1 is not above its capacity 1"]


def test_growth_certificates_with_failures_on_are_checked_on_the_cone_with_its_failing_bolts() -> None:
    """With failures on, the cone keeps a failing bolt the spouts feed; the checker derives its figures too."""
    data = json.loads((Path(__file__).resolve().parents[2] / "models" / "failover.storm.json").read_text())
    data["bolts"][0]["alpha"] = 2.5  # A cannot keep up with S at all
    data["settings"]["failures"] = True
    topo = build_network(parse_topology(data), ["A"]).topology
    cert = prove_growth(topo, "A")
    assert cert is not None and set(cert.bolts) == {"A", "C"}
    assert check_growth_certificate(topo, cert) == []
    line = cert.bolts["C"].model_copy(update={"capacity": "1/1"})
    assert check_growth_certificate(topo, cert.model_copy(update={"bolts": {**cert.bolts, "C": line}}))


# ---- the output ratios, computed twice ----------------------------------------------------------------


def played_cycle_ratio(sigma: Fraction, batch: int) -> Fraction:
    """Σ emitted / Σ processed over the cycle that batches of `batch` tuples reach under the `"dvert"` rule
    (docs/model.md 2.3, played here: E = ⌊σ(c + P)⌋, kept ⌈c + P − E/σ⌉), from carry 0 until a carry repeats."""
    carry, seen, moves = Fraction(0), {}, []
    while carry not in seen:
        seen[carry] = len(moves)
        total = carry + batch
        e = math.floor(sigma * total)
        carry = Fraction(math.ceil(total - e / sigma))
        moves.append(e)
    cycle = moves[seen[carry]:]
    return Fraction(sum(cycle), batch * len(cycle))


@pytest.mark.parametrize("sigma", [Fraction(2, 1999), Fraction(3, 2000), Fraction(5, 4001)])
def test_the_fine_sigma_fallback_bounds_a_played_run(sigma: Fraction) -> None:
    """A σ so fine that the carry automaton is too big gets [σ, 2σ]: batches of one tuple already emit more
    than σ per tuple (σ = 2/1999: one tuple per 999), so [σ, σ] would let the rate check undercount."""
    for size in (1, 2):
        lo, hi = sigma_bounds(sigma, size, "dvert")
        assert (lo, hi) == ratio_bounds(sigma, size, "dvert")
        played = played_cycle_ratio(sigma, 1)
        assert lo <= sigma < played <= hi, (sigma, size, played, hi)


# ---- one content hash ---------------------------------------------------------------------------------


def test_the_content_hash_is_recomputed_from_its_documented_recipe() -> None:
    """docs/verifier.md, "Content hash": SHA-256 of json.dumps(semantics, sort_keys, (",", ":"), no ASCII
    escapes) in UTF-8; the verified export and the certificates use the one definition."""
    topo = load_topology(DVERT / "icfem-focused-crawler-complete.json")
    text = json.dumps(topo.semantics(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert content_hash(topo) == hashlib.sha256(text.encode("utf-8")).hexdigest() == verified_hash(topo)
    assert verified_hash is content_hash


# ---- the linear program's verdict is checked before it is recorded ------------------------------------


def test_a_linear_certificate_the_checker_rejects_is_not_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two failing bolts on one paced spout (the sweep's random #182, bench/verdict_sweep.py): the rate check
    leaves B0 open and the program proves it free of repeating growth; with the multipliers doctored (every one
    halved but the target's growth row) the checker rejects them, the verdict is not recorded, and a defect is
    noted."""
    topo = parse_topology({
        "schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
        "bolts": [{"name": "B0", "alpha": 0.433, "sigma": 1.0, "parallelism": 1, "min_ttf": 20.0},
                  {"name": "B1", "alpha": 0.42, "sigma": 0.5, "parallelism": 2, "min_ttf": 200.0}],
        "settings": {"tolerance": 0.0, "max_idle_time": 0, "emission": "dvert", "failures": True,
                     "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced"},
        "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}]})
    real = search_proofs.farkas

    def doctored(*args: object, **kwargs: object) -> dict[str, Fraction] | None:
        y = real(*args, **kwargs)  # type: ignore[arg-type]
        return None if y is None else {n: (v if n.startswith("grows[") else v / 2) for n, v in y.items()}

    monkeypatch.setattr(search_proofs, "farkas", doctored)
    result = verify(topo, SearchOptions(timeout_s=8, simulate=False))
    assert result.bolts["B0"].method != "linear program"
    assert any("certificate for B0 was rejected by its checker" in n for n in result.notes), result.notes
