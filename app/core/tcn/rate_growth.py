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
* (with a cycle in the network: the figures are those of finitely many rounds of an iteration from below for
  the least inflows and from above for the most, each round a valid bound; a cone with a cycle and a join is
  not proven),
* (a join, docs/model.md section 11: it receives the least of its branches; a target join may grow by its cache,
  `cache grows`, when one branch delivers at least strictly more than another at most, its queue strictly on one
  side of its capacity),

the run is eventually periodic with the target's queue growing by a fixed amount per period: a lasso in
which it grows exists, without writing its positions (there may be 10^4 to 10^5 of them). The figures are
the certificate; `app/core/tcn/check/rate_growth.py` re-derives them without this module.
"""

from __future__ import annotations

from fractions import Fraction

from app.core.rates.flows import RateFigures, keeps_up
from app.core.results import RateGrowthBranch, RateGrowthCertificate, RateGrowthLine
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.network import build_network
from app.core.topology import Topology
from app.core.words import Exactly, Figure, Words

__all__ = ["growth_message", "joins_growing_by_rates", "prove_growth"]


def _text(x: Fraction) -> str:
    """An exact figure as the certificate holds it: always "p/q"."""
    return f"{x.numerator}/{x.denominator}"



def prove_growth(topo: Topology, target: str) -> RateGrowthCertificate | None:
    """The certificate that `target` (a bolt name of `topo`, usually its cone of influence) grows under the
    fixed schedule above, or None when the exact rates do not prove it (a tie, too little inflow, or with a
    cycle, no role for every bolt within the rounds allowed)."""
    ident = next((b.id for b in topo.bolts if b.name == target), None)
    if ident is None:
        return None
    figures = RateFigures(topo)
    if figures.joins and figures.cyclic:  # the rounds have no join rule (docs/verifier.md, "Growth proven by rates")
        return None
    if figures.timed and figures.cyclic:  # a duration window's timer: acyclic networks only (docs/verifier.md)
        return None
    # the schedule's capacities: every bolt its largest, the target its smallest (what it passes on, with failures
    # a failing bolt of the cone may be below it)
    capacities = {**figures.cap_max, ident: figures.cap_min[ident]}
    rounds: int | None = None
    if not figures.cyclic:  # one pass along a topological order gives the limits themselves
        low = figures.inflows(figures.spout_max, capacities, from_above=False)
        high = figures.inflows(figures.spout_max, capacities, from_above=True)
        lines = _lines(topo, figures, ident, low, high, _branches(figures, ident, capacities, low, high))
    else:  # a cycle: rounds of the iteration from below and from above until every bolt has its role
        found = _iterated(topo, figures, ident, capacities)
        rounds, lines = found if found is not None else (None, None)
    if lines is None:
        return None
    name_of = {c.id: c.name for c in topo.components}
    spouts = {name_of[s]: _text(rate) for s, rate in figures.spout_max.items()}
    return RateGrowthCertificate(target=target, content_hash=content_hash(topo), spouts=spouts, bolts=lines,
                                 rounds=rounds)


def _branches(figures: RateFigures, ident: str, capacities: dict[str, Fraction], low: dict[str, Fraction],
              high: dict[str, Fraction]) -> list[RateGrowthBranch]:
    """A target join's branches with the least and most parts each delivers under the schedule (σ_lo, σ_hi times
    what its sender emits or processes, as `RateFigures.inflows` sums them); [] for any other target."""
    if ident not in figures.joins:
        return []
    found: list[RateGrowthBranch] = []
    for source, stream in figures.inputs[ident]:
        _, lo, hi = figures.streams[source].get(stream, (Fraction(0), Fraction(0), Fraction(0)))
        if source in figures.spout_max:
            least = most = figures.spout_max[source]
        else:
            least, most = min(low[source], capacities[source]), min(high[source], capacities[source])
        found.append(RateGrowthBranch(sender=figures.names[source], stream=stream, rate_low=_text(lo * least),
                                      rate_high=_text(hi * most)))
    return found


def _cache_grows(branches: list[RateGrowthBranch]) -> bool:
    """A join's cache grows under the schedule: some branch delivers at least strictly more than another at most."""
    return bool(branches) and max(Fraction(b.rate_low) for b in branches) > min(Fraction(b.rate_high)
                                                                                for b in branches)


def _lines(topo: Topology, figures: RateFigures, ident: str, low: dict[str, Fraction],
           high: dict[str, Fraction], branches: list[RateGrowthBranch] | None = None
           ) -> dict[str, RateGrowthLine] | None:
    """Each bolt's role and figures when the least and most inflows `low`, `high` give every bolt one (strictly),
    else None (a tie, or too little inflow at the target). A target join (`branches`, its branches' figures)
    whose queue does not grow may grow by its cache: its queue then keeps up, strictly."""
    grows = keeps_up(figures.cap_min[ident], low[ident])  # it must receive strictly more than it can process
    by_cache = not grows and _cache_grows(branches or []) and keeps_up(high[ident], figures.cap_min[ident])
    if not grows and not by_cache:
        return None
    lines: dict[str, RateGrowthLine] = {}
    for b in topo.bolts:
        if b.id == ident:
            role, capacity = "cache grows" if by_cache else "target", figures.cap_min[b.id]
        elif keeps_up(figures.cap_max[b.id], low[b.id]):
            role, capacity = "saturated", figures.cap_max[b.id]
        elif keeps_up(high[b.id], figures.cap_max[b.id]):
            role, capacity = "keeps up", figures.cap_max[b.id]
        else:  # its inflow may equal its capacity: the run need not settle into a period
            return None
        lines[b.name] = RateGrowthLine(role=role, inflow_low=_text(low[b.id]), inflow_high=_text(high[b.id]),
                                       capacity=_text(capacity), branches=list(branches or []) if by_cache
                                       and b.id == ident else [])
    return lines


#: at most this many rounds of the iteration, and rounds × bolts (a cone with a cycle; `check` stays instant)
MAX_ROUNDS = 1_000
MAX_ROUND_WORK = 100_000


def _iterated(topo: Topology, figures: RateFigures, ident: str, capacities: dict[str, Fraction]
              ) -> tuple[int, dict[str, RateGrowthLine]] | None:
    """With a cycle in the cone (docs/verifier.md, "Growth proven by rates", cycles): rounds r = 1, 2, … of
    in_lo^r(m) = Σ σ_lo · p_lo^(r−1)(sender) and in_hi^r(m) = Σ σ_hi · p_hi^(r−1)(sender) (a spout's stream: σ
    times its rate), p_lo^r = min(in_lo^r, capacity), p_hi^r = min(in_hi^r, capacity), from p_lo^0 = 0 and
    p_hi^0 = capacity, every bolt from the previous round's figures; the first round whose figures give every bolt
    its role, with those roles and figures. None: the iteration settles, or runs out of rounds, first."""
    bolts = [b.id for b in topo.bolts]
    limit = min(MAX_ROUNDS, MAX_ROUND_WORK // max(len(bolts), 1))
    spout_in: dict[str, tuple[Fraction, Fraction]] = {}  # per bolt, what the spouts send it (least, most)
    inner: dict[str, list[tuple[str, Fraction, Fraction]]] = {}  # per bolt, (sending bolt, σ_lo, σ_hi)
    for m in bolts:
        lo = hi = Fraction(0)
        inner[m] = []
        for source, stream in figures.inputs[m]:
            ratios = figures.streams[source].get(stream)
            if ratios is None or ratios[2] == 0:
                continue
            if source in figures.spout_max:
                lo, hi = lo + ratios[1] * figures.spout_max[source], hi + ratios[2] * figures.spout_max[source]
            else:
                inner[m].append((source, ratios[1], ratios[2]))
        spout_in[m] = (lo, hi)
    p_lo = {m: Fraction(0) for m in bolts}
    p_hi = {m: capacities[m] for m in bolts}
    for r in range(1, limit + 1):
        low = {m: spout_in[m][0] + sum((lo * p_lo[u] for u, lo, _ in inner[m]), Fraction(0)) for m in bolts}
        high = {m: spout_in[m][1] + sum((hi * p_hi[u] for u, _, hi in inner[m]), Fraction(0)) for m in bolts}
        lines = _lines(topo, figures, ident, low, high)
        if lines is not None:
            return r, lines
        new_lo = {m: min(low[m], capacities[m]) for m in bolts}
        new_hi = {m: min(high[m], capacities[m]) for m in bolts}
        if new_lo == p_lo and new_hi == p_hi:
            return None  # settled without a role for every bolt: a tie, or too little inflow
        p_lo, p_hi = new_lo, new_hi
    return None


def growth_message(cert: RateGrowthCertificate) -> Words:
    """The verdict's words: what the target receives and processes under the schedule, and why that proves growth."""
    line = cert.bolts[cert.target]
    inflow, capacity = Fraction(line.inflow_low), Fraction(line.capacity)
    saturated = [n for n, b in cert.bolts.items() if b.role == "saturated"]
    if line.role == "cache grows":
        return _cache_message(cert, saturated)
    return Words.of(
        f"{cert.target} grows: in a legal run where the spouts emit as fast as they may, the bolts above it "
        f"process as fast as they may{' (saturated: ' + ', '.join(saturated) + ')' if saturated else ''} and "
        f"{cert.target} as slowly as it may, it receives at least ", Figure(inflow), " tuples/s", Exactly(inflow),
        " and processes at most ", capacity, f", so its queue gains {float(inflow - capacity):.4g} tuples/s; that run "
        "repeats, so a lasso in which it grows exists (growth proven by rates, with a checked certificate; "
        "docs/verifier.md)")


def _cache_message(cert: RateGrowthCertificate, saturated: list[str]) -> Words:
    """The words of a join whose cache grows: its slowest branch at most, a faster one at least, the difference."""
    branches = cert.bolts[cert.target].branches
    slow = min(branches, key=lambda b: Fraction(b.rate_high))
    fast = max(branches, key=lambda b: Fraction(b.rate_low))
    least, most = Fraction(fast.rate_low), Fraction(slow.rate_high)

    def named(b: RateGrowthBranch) -> str:
        return b.sender + ("" if b.stream == "default" else f" (stream '{b.stream}')")

    return Words.of(
        f"{cert.target}'s cache grows: in a legal run where the spouts emit as fast as they may and the bolts above "
        f"it process as fast as they may{' (saturated: ' + ', '.join(saturated) + ')' if saturated else ''}, the "
        f"join's branch {named(fast)} delivers at least ", Figure(least), " parts/s", Exactly(least),
        f" and its slowest branch {named(slow)} at most ", most, f", so the parts waiting in its cache for "
        f"{named(slow)} gain {float(least - most):.4g} per second, while its queue keeps up; that run repeats, so a "
        "lasso in which its cache grows exists (growth proven by rates, with a checked certificate; docs/verifier.md)")


def joins_growing_by_rates(topo: Topology, statuses: dict[str, str]) -> dict[str, RateGrowthCertificate]:
    """Without any search (`stormbound check`): every join waiting for every branch whose rate-check status is
    `grows` (at nominal timing), proven to grow on its cone by the schedule's rates, the certificate accepted by its
    independent checker: a certified counterexample in place of the nominal figure (docs/verifier.md)."""
    found: dict[str, RateGrowthCertificate] = {}
    for join in topo.waiting_joins():
        if statuses.get(join.name) != "grows":
            continue
        cone = build_network(topo, [join.name]).topology
        cert = prove_growth(cone, join.name)
        if cert is not None and not check_growth_certificate(cone, cert):
            found[join.name] = cert
    return found
