"""The paced part of a storm certificate's check: the drain after a paced replay backlog has grown.

It shares no code with the builder (`app/core/tcn/paced.py`): from the target's cone document alone it restates
docs/boundedness.md, "Unbounded: a paced replay backlog", phase 2, and accepts when

* the target is an ordinary bolt (no join, no duration window) that receives a stream of the spout;
* every term is an input stream of the target from a spout, none twice, at least one from the certificate's
  spout; a rate no higher than 2/gap for that spout (a fresh tuple and a replay per gap) and than the least
  rate 1/(a(1+τ)) for any other spout; a ratio no higher than the stream's (1 for a default stream);
* the capacity is the target's smallest, C_TAKE/(α(1+τ) + max_idle) (C_TAKE by the room's own `take_bound`),
  and Σ rate × ratio is strictly above it.

The failure cycle itself (reboot, gap, completions, growth) is checked by `check/storm.py`, as for an at-once
storm: the growth per cycle of the tuples pending in the failing bolt's trees is the same under both modes.
"""

from __future__ import annotations

from fractions import Fraction

from app.core.numbers import exact
from app.core.results import StormCertificate
from app.core.tcn.check.parts import received
from app.core.tcn.check.reading import fraction_of, join_branches, stated_terms, take_bound, timer_bound
from app.core.topology import Topology

__all__ = ["paced_problems"]


_Ceilings = dict[tuple[str, str], tuple[Fraction, Fraction]]  # (sender, stream) -> (highest rate, highest ratio)


def _ceilings(topo: Topology, target: str, spout: str, gap: Fraction) -> _Ceilings:
    """(sender, stream) -> (the highest rate, the highest ratio) a term of the target's may state."""
    tau = exact(topo.settings.tolerance)
    spouts = {s.name: s for s in topo.spouts}
    out: _Ceilings = {}
    for sender, stream in received(topo).get(target, []):
        if sender in spouts:
            rate = 2 / gap if sender == spout else exact(spouts[sender].rate) / (1 + tau)
            out[(sender, stream)] = (rate, exact(spouts[sender].output_streams()[stream] or 0))
    return out


def paced_problems(topo: Topology, cert: StormCertificate) -> list[str]:
    """Why the certificate's drain does not take its target's queue past every N once the spout's backlog holds
    any B; [] when it does."""
    bolts = {b.name: b for b in topo.bolts}
    j, tau = bolts[cert.target], exact(topo.settings.tolerance)
    if join_branches(topo, j) is not None or timer_bound(j, tau) is not None:
        return [f"{cert.target} is a join or a duration window: a paced backlog's drain is an ordinary bolt's"]
    gap, capacity = fraction_of(cert.gap), fraction_of(cert.capacity or "")
    if gap is None or gap <= 0 or capacity is None:
        return ["gap and capacity must be fractions p/q, the gap positive"]
    ceilings = _ceilings(topo, cert.target, cert.spout, gap)
    values, seen, problems = stated_terms(cert.terms, ceilings, cert.target, "a spout")
    inflow = sum(values, Fraction(0))
    if not any(sender == cert.spout for sender, _ in seen):
        problems.append(f"no term from {cert.spout}: {cert.target} must receive its replays")
    derived = take_bound(j) / (exact(j.alpha) * (1 + tau) + exact(topo.settings.max_idle_time))
    if capacity != derived:
        problems.append(f"capacity {cert.capacity} is not {cert.target}'s smallest, {derived}")
    elif not problems and inflow <= derived:
        problems.append(f"the drain {inflow} is not strictly above the capacity {derived}")
    return problems
