"""With failures, decide each checked bolt on its own cone of influence when a cycle elsewhere hides its bound.

The rate check bounds replays only on acyclic topologies (docs/boundedness.md, "Failures"): a cycle anywhere
takes the bound of every bolt that a failure or a replay reaches. But a bolt's queue depends only on its cone of
influence (docs/model.md section 3: its upstream and, with failures, every failing bolt whose losses its spouts
replay, with that bolt's upstream; `network.cone_of_influence`): every run of the whole topology restricted to
the cone is a run of the cone, so a bound the rate check proves on the cone holds in every run of the whole.
"""

from __future__ import annotations

from fractions import Fraction

from app.core.rates import RateAnalysis, RateReport
from app.core.tcn.network import build_network
from app.core.topology import Topology

__all__ = ["bounded_in_cones"]


def bounded_in_cones(topo: Topology, report: RateReport, checked: list[str]) -> tuple[RateReport,
                                                                                       dict[str, tuple[Fraction,
                                                                                                       Fraction]]]:
    """`report` with every checked bolt that it leaves unproven, in a cyclic topology with failures, replaced by
    its status on its own cone of influence when that cone has no cycle and proves it bounded; and those bolts'
    exact (largest inflow with replays, smallest capacity)."""
    if not (report.failures and report.cyclic):
        return report, {}
    bolts, margins = dict(report.bolts), {}
    for name in checked:
        if report.bolts[name].status == "bounded":
            continue
        cone = build_network(topo, [name]).topology
        rates = RateAnalysis(cone)
        if rates.figures.cyclic:
            continue
        mine = rates.report(suggest=False).bolts[name]
        if mine.status != "bounded":
            continue
        kept = ", ".join(c.name for c in cone.components)
        bolts[name] = mine.model_copy(update={"explanation": mine.explanation + (
            f" (on its cone of influence, {kept}: the topology's cycle lies outside it; docs/verifier.md)")})
        margins[name] = (rates.failure_margins() or {}).get(name) or rates.margins()[name]
    return report.model_copy(update={"bolts": bolts}), margins
