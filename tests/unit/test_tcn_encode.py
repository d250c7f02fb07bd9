"""The z3 encoding on its own: exact decoding, the integer-time and loop-only options."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import z3

from app.core.formats import load_topology
from app.core.tcn.check.certify import certify
from app.core.tcn.decode import decode
from app.core.tcn.encode import Encoding
from app.core.tcn.network import build_network, time_grid

MODELS = Path(__file__).resolve().parents[2] / "models"


def net_of(name: str, checked: list[str] | None = None):
    return build_network(load_topology(MODELS / f"{name}.storm.json"), checked)


def test_decoded_lasso_has_exact_times_and_certifies() -> None:
    enc = Encoding(net_of("getting-started"), 4, z3.Context())
    assert enc.solver.check() == z3.sat
    trace = decode(enc, enc.solver.model())
    assert len(trace.positions) == 6 and 1 <= trace.loop_start <= 4
    assert all(isinstance(p.exact_time, Fraction) for p in trace.positions)
    assert certify(trace).ok


def test_time_grid_is_the_lcm_of_the_time_constants() -> None:
    # simple-DIA-cfg-1: periods 1, jitter 1/10, α(1±τ) in tenths, max_idle 1/100
    assert time_grid(net_of("simple-DIA-cfg-1")) == Fraction(1, 100)


def test_integer_time_option_finds_genuine_lassos() -> None:
    net = net_of("getting-started")
    enc = Encoding(net, 4, z3.Context(), time_unit=time_grid(net) / 2)
    assert enc.solver.check() == z3.sat
    trace = decode(enc, enc.solver.model())
    unit = time_grid(net) / 2
    assert all((p.exact_time / unit).denominator == 1 for p in trace.positions)
    assert certify(trace).ok


def test_loop_only_relaxation() -> None:
    # a growing loop exists from some state of getting-started; none for a rate-proven bounded cone
    assert Encoding(net_of("getting-started"), 4, z3.Context(), free_start=True).solver.check() == z3.sat
    bounded = Encoding(net_of("focused-crawler-reduced-cfg-6"), 4, z3.Context(), free_start=True)
    assert bounded.solver.check() == z3.unsat


def test_steady_bolts_are_held_level() -> None:
    net = net_of("getting-started")
    enc = Encoding(net, 4, z3.Context(), steady=frozenset({"count"}))
    assert enc.solver.check() == z3.unsat  # count is the only checked bolt that can grow


def test_region_clocks_find_certified_lassos() -> None:
    for unit in (None, time_grid(net_of("getting-started"))):
        enc = Encoding(net_of("getting-started"), 4, z3.Context(), loop_clocks="region", time_unit=unit)
        assert enc.solver.check() == z3.sat
        assert certify(decode(enc, enc.solver.model())).ok


def test_region_clocks_admit_loops_whose_clocks_differ() -> None:
    # a readable clock forced to differ at l and k+1: impossible under equality, a lasso under region
    # equivalence, and the independent certifier accepts it
    net = net_of("getting-started")
    equal = Encoding(net, 4, z3.Context())
    k, t = equal.k, equal.time
    equal.solver.add(z3.Or([z3.And(equal.loop_start[i], z3.Or([t[k + 1] - v.last_time[k] != t[i] - v.last_time[i - 1]
                                                              for v in equal.spouts.values()]))
                            for i in range(1, k + 1)]))
    assert equal.solver.check() == z3.unsat
    region = Encoding(net, 4, z3.Context(), loop_clocks="region")
    region.solver.add(z3.Or([z3.And(on, at_l != at_end) for on, at_l, at_end in region.loop_clocks_at.values()]))
    assert region.solver.check() == z3.sat
    trace = decode(region, region.solver.model())
    cert = certify(trace)
    assert cert.ok, cert.problems


def test_unknown_loop_clock_mode_is_refused() -> None:
    try:
        Encoding(net_of("getting-started"), 4, z3.Context(), loop_clocks="close")
    except ValueError as err:
        assert "loop_clocks" in str(err)
    else:
        raise AssertionError("accepted an unknown loop_clocks mode")
