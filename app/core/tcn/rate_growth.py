"""Growth proven by rates: a fixed legal schedule under which the target's queue grows, and its certificate.

The schedule (docs/verifier.md, "Growth proven by rates", with the proof): every spout emits one tuple at
its shortest period a(1−τ); every other bolt takes the moment tuples wait and
processes for α(1−τ); the target waits max_idle before each take and processes for α(1+τ); nothing fails
(a failure is never forced, docs/model.md 7.2). Under it every long-run flow lies between exact bounds
(σ_lo, σ_hi per stream), and when

* the target receives strictly more than its smallest capacity C/(α(1+τ) + max_idle), and
* every other bolt of the network (the target's cone: its upstream, and with failures the failing bolts
  the spouts feed) either receives strictly more than its largest capacity (it is saturated: always busy
  with full batches) or strictly less (it keeps up: its queue stays bounded),
* with no cycle in the network,

the run is eventually periodic with the target's queue growing by a fixed amount per period: a lasso in
which it grows exists, without writing its positions (there may be 10^4 to 10^5 of them). The figures are
the certificate; `app/core/tcn/check/rate_growth.py` re-derives them without this module.
"""

from __future__ import annotations

from fractions import Fraction

from app.core.rates.flows import RateFigures, keeps_up
from app.core.results import RateGrowthCertificate, RateGrowthLine
from app.core.tcn.check.content import content_hash
from app.core.topology import Topology
from app.core.words import Exactly, Figure, Words

__all__ = ["prove_growth", "growth_message"]


def _text(x: Fraction) -> str:
    """An exact figure as the certificate holds it: always "p/q"."""
    return f"{x.numerator}/{x.denominator}"



def prove_growth(topo: Topology, target: str) -> RateGrowthCertificate | None:
    """The certificate that `target` (a bolt name of `topo`, usually its cone of influence) grows under the
    fixed schedule above, or None when the exact rates do not prove it (a tie, a cycle, too little inflow)."""
    ident = next((b.id for b in topo.bolts if b.name == target), None)
    if ident is None:
        return None
    figures = RateFigures(topo)
    # every component of the network must settle into a period, not only the upstream; a join: the fixed
    # schedule's rates have no join rule (docs/model.md section 11)
    if figures.cyclic or figures.joins:
        return None
    # the schedule's capacities: every bolt its largest, the target its smallest (what it passes on, with failures
    # a failing bolt of the cone may be below it)
    capacities = {**figures.cap_max, ident: figures.cap_min[ident]}
    low = figures.inflows(figures.spout_max, capacities, from_above=False)
    high = figures.inflows(figures.spout_max, capacities, from_above=True)
    if not keeps_up(figures.cap_min[ident], low[ident]):  # it must receive strictly more than it can process
        return None
    name_of = {c.id: c.name for c in topo.components}
    lines: dict[str, RateGrowthLine] = {}
    for b in topo.bolts:
        if b.id == ident:
            role, capacity = "target", figures.cap_min[b.id]
        elif keeps_up(figures.cap_max[b.id], low[b.id]):
            role, capacity = "saturated", figures.cap_max[b.id]
        elif keeps_up(high[b.id], figures.cap_max[b.id]):
            role, capacity = "keeps up", figures.cap_max[b.id]
        else:  # its inflow may equal its capacity: the run need not settle into a period
            return None
        lines[b.name] = RateGrowthLine(role=role, inflow_low=_text(low[b.id]), inflow_high=_text(high[b.id]),
                                       capacity=_text(capacity))
    spouts = {name_of[s]: _text(rate) for s, rate in figures.spout_max.items()}
    return RateGrowthCertificate(target=target, content_hash=content_hash(topo), spouts=spouts, bolts=lines)


def growth_message(cert: RateGrowthCertificate) -> Words:
    """The verdict's words: what the target receives and processes under the schedule, and why that proves growth."""
    line = cert.bolts[cert.target]
    inflow, capacity = Fraction(line.inflow_low), Fraction(line.capacity)
    saturated = [n for n, b in cert.bolts.items() if b.role == "saturated"]
    return Words.of(
        f"{cert.target} grows: in a legal run where the spouts emit as fast as they may, the bolts above it "
        f"process as fast as they may{' (saturated: ' + ', '.join(saturated) + ')' if saturated else ''} and "
        f"{cert.target} as slowly as it may, it receives at least ", Figure(inflow), " tuples/s", Exactly(inflow),
        " and processes at most ", capacity, f", so its queue gains {float(inflow - capacity):.4g} tuples/s; that run "
        "repeats, so a lasso in which it grows exists (growth proven by rates, with a checked certificate; "
        "docs/verifier.md)")
