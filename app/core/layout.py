"""Layered auto-layout (networkx) for imported or generated topologies."""

from __future__ import annotations

import networkx as nx

from app.core.topology import Position, Topology

COLUMN_GAP = 220.0
ROW_GAP = 120.0


def layered_layout(topo: Topology) -> dict[str, Position]:
    """Spouts on the left, each bolt one column right of its deepest source; cycles condensed."""
    graph = nx.DiGraph()
    graph.add_nodes_from(c.id for c in topo.components)
    graph.add_edges_from((s.source, s.target) for s in topo.subscriptions)
    condensed = nx.condensation(graph)
    depth: dict[int, int] = {}
    for node in nx.topological_sort(condensed):
        preds = list(condensed.predecessors(node))
        depth[node] = 1 + max((depth[p] for p in preds), default=-1)
    column_of = {member: depth[n] for n, data in condensed.nodes(data=True) for member in data["members"]}
    spout_ids = {s.id for s in topo.spouts}
    for sid in spout_ids:
        column_of[sid] = 0
    for c in topo.bolts:
        column_of[c.id] = max(column_of[c.id], 1)
    order = [c.id for c in topo.components]
    columns: dict[int, list[str]] = {}
    for ident in order:
        columns.setdefault(column_of[ident], []).append(ident)
    tallest = max((len(v) for v in columns.values()), default=1)
    positions: dict[str, Position] = {}
    for col, members in columns.items():
        offset = (tallest - len(members)) * ROW_GAP / 2
        for row, ident in enumerate(members):
            positions[ident] = Position(x=col * COLUMN_GAP, y=offset + row * ROW_GAP)
    return positions


def with_layout(topo: Topology) -> Topology:
    """The topology with a layered layout when some component has no position (imports)."""
    missing = [c.id for c in topo.components if c.id not in topo.layout]
    if not missing:
        return topo
    computed = layered_layout(topo)
    layout = dict(topo.layout) if len(missing) < len(topo.components) else {}
    for ident in missing if layout else computed:
        layout[ident] = computed[ident]
    return topo.model_copy(update={"layout": layout})
