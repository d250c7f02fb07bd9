"""With failures, decide each checked bolt on its own cone of influence when a cycle elsewhere hides its bound.

The rate check bounds replays only on acyclic topologies (docs/boundedness.md, "Failures"): a cycle anywhere
takes the bound of every bolt that a failure or a replay reaches. But a bolt's queue depends only on its cone of
influence (docs/model.md section 3: its upstream and, with failures, every failing bolt whose losses its spouts
replay, with that bolt's upstream; `network.cone_of_influence`): every run of the whole topology restricted to
the cone is a run of the cone, so a bound the rate check proves on the cone holds in every run of the whole.
"""

from __future__ import annotations

from fractions import Fraction

import networkx as nx

from app.core.rates import RateAnalysis, RateReport
from app.core.tcn.network import build_network
from app.core.topology import Topology

__all__ = ["bounded_in_cones", "on_or_below_cycles"]


def bounded_in_cones(topo: Topology, report: RateReport, checked: list[str]) -> tuple[RateReport,
                                                                                       dict[str, tuple[Fraction,
                                                                                                       Fraction]]]:
    """`report` with every checked bolt that it leaves unproven, in a cyclic topology with failures, replaced by
    its status on its own cone of influence when that cone has no cycle and proves it bounded; and those bolts'
    exact (largest inflow with replays, smallest capacity)."""
    if not (report.failures and report.cyclic):
        return report, {}
    bolts, margins = dict(report.bolts), {}
    below = on_or_below_cycles(topo)  # their cones hold a cycle: no cone built for them
    for name in checked:
        if report.bolts[name].status == "bounded" or name in below:
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


def on_or_below_cycles(topo: Topology, larger_than: int = 0) -> set[str]:
    """The names of the components on a cycle of more than `larger_than` members (of streams that carry tuples:
    σ > 0), or below one (a cone built for any of them holds that cycle). One walk: linear in the graph."""
    name_of = {c.id: c.name for c in topo.components}
    graph = nx.DiGraph()
    graph.add_nodes_from(name_of.values())
    sigma = {c.id: c.output_streams() for c in topo.components}
    spouts = {sp.id for sp in topo.spouts}
    for b, pairs in topo.inputs().items():
        for u, stream in pairs:
            if (sigma[u].get(stream) or 0) > 0 or u in spouts:
                graph.add_edge(name_of[u], name_of[b])
    on_cycle: set[str] = set()
    for part in nx.strongly_connected_components(graph):
        first = next(iter(part))
        if (len(part) > 1 or graph.has_edge(first, first)) and len(part) > larger_than:
            on_cycle |= part
    below, todo = set(on_cycle), list(on_cycle)
    while todo:
        for m in graph.successors(todo.pop()):
            if m not in below:
                below.add(m)
                todo.append(m)
    return below
