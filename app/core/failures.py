"""The failure model's constants: which bolts may fail, for how long, and what their losses replay.

docs/model.md section 7 is the reference. A bolt with `min_ttf` may fail (when
`settings.failures` is on); a failure lasts between the topology's reboot bounds; the
tuples a failed bolt loses are replayed by the spouts whose tuple trees they belong to.
One lost tuple at bolt j belongs to exactly one spout tuple's tree, so a loss of L_s
tuples of spout s's trees replays between ⌈L_s / Imp(j, s)⌉ and L_s spout tuples, where
Imp(j, s) is the most tuples one tree of s puts at j: the sum over the paths from s to j
of the product of the largest output ratios along them (at least 1; unbounded when a
path runs through a cycle). This module computes those figures once for the encoder, the
simulation, the rate check and `compare`; the certifier recomputes its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import networkx as nx

from app.core.emission import sigma_bounds
from app.core.numbers import exact
from app.core.topology import DEFAULT_STREAM, Topology, TopologyError, failure_problems

#: Imp(j, s) when a path from s to j runs through a cycle: a tree may put any number of tuples at j
UNBOUNDED = math.inf

Impact = Fraction | float  # a Fraction >= 1, or UNBOUNDED


@dataclass(frozen=True)
class FailureModel:
    """The failure settings of a topology in exact numbers, keyed by component id (the network's copy,
    `renamed`, by component name).

    `min_ttf`: the bolts that may fail; `impact[j][s]`: Imp(j, s) for every spout s whose
    trees reach bolt j (a spout missing there never replays j's losses)."""

    min_ttf: dict[str, Fraction]
    min_reboot: Fraction
    max_reboot: Fraction
    replay: str
    impact: dict[str, dict[str, Impact]]

    def renamed(self, names: dict[str, str]) -> FailureModel:
        """The same model keyed by other names (the network's component names instead of ids)."""
        return FailureModel({names[j]: v for j, v in self.min_ttf.items()}, self.min_reboot, self.max_reboot,
                            self.replay, {names[j]: {names[s]: v for s, v in row.items()}
                                          for j, row in self.impact.items()})


def failure_model(topo: Topology) -> FailureModel | None:
    """The topology's failure model, or None when no bolt can fail (no `min_ttf`, or
    `settings.failures` off). Validation has already checked the reboot bounds."""
    s = topo.settings
    ttf = {b.id: exact(b.min_ttf) for b in topo.bolts if b.min_ttf is not None}
    if not ttf or not s.failures or s.min_reboot_time is None or s.max_reboot_time is None:
        return None
    return FailureModel(ttf, exact(s.min_reboot_time), exact(s.max_reboot_time), s.replay, impacts(topo))


def with_failures(topo: Topology, on: bool) -> Topology:
    """`topo` with `settings.failures` set to `on` (its `min_ttf` and reboot bounds kept): the one way the
    product switches the failure model for a run. Raises TopologyError when on lacks the reboot bounds."""
    view = topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": on})})
    problems = failure_problems(view) if on else []
    if problems:
        raise TopologyError(problems)
    return view


def failures_off(topo: Topology) -> Topology:
    """`topo` with `settings.failures` off: the failure-free view (its `min_ttf` and reboot bounds kept)."""
    return with_failures(topo, False)


def _gains(topo: Topology) -> nx.DiGraph:
    """Components as nodes; an edge u -> j weighted by the most tuples one tuple processed by u
    (for a spout: one tuple it emits) puts at j, over every stream of u that j receives."""

    rule = topo.settings.emission
    graph = nx.DiGraph()
    graph.add_nodes_from(c.id for c in topo.components)
    comps = {c.id: c for c in topo.components}
    declared: dict[str, dict[str, float | None]] = {}  # each component's streams once (20,000 of them: not per edge)
    for target, streams in topo.inputs().items():
        for source, stream in streams:
            c = comps[source]
            if source not in declared:
                declared[source] = c.output_streams()
            value = declared[source].get(stream)
            if c.kind == "spout" and stream == DEFAULT_STREAM:
                gain = Fraction(1)
            elif value is None:
                raise ValueError(f"{c.kind}s.{c.name}: stream '{stream}' is not annotated")
            else:
                size = c.burst if c.kind == "spout" else c.take_max
                gain = sigma_bounds(exact(value), size, rule)[1]
            if gain > 0:
                old = graph.get_edge_data(source, target, {}).get("gain", Fraction(0))
                graph.add_edge(source, target, gain=old + gain)
    return graph


def impacts(topo: Topology) -> dict[str, dict[str, Impact]]:
    """Imp(j, s) for every bolt j and every spout s whose trees reach j (docs/model.md section 7)."""
    graph = _gains(topo)
    cyclic = {n for comp in nx.strongly_connected_components(graph) for n in comp
              if len(comp) > 1 or graph.has_edge(n, n)}
    spouts = [s.id for s in topo.spouts]
    result: dict[str, dict[str, Impact]] = {b.id: {} for b in topo.bolts}
    for s in spouts:
        reach = nx.descendants(graph, s) | {s}
        through_cycle = set(reach & cyclic)  # and everything below them: one walk from all of them at once
        stack = list(through_cycle)
        while stack:
            for m in graph.successors(stack.pop()):
                if m not in through_cycle:
                    through_cycle.add(m)
                    stack.append(m)
        sub = graph.subgraph(reach - through_cycle)
        paths: dict[str, Fraction] = {s: Fraction(1)}
        for n in nx.topological_sort(sub):
            if n == s:
                continue
            paths[n] = sum((paths[u] * graph[u][n]["gain"] for u in sub.predecessors(n) if u in paths),
                           Fraction(0))
        for n in reach - {s}:
            if n not in result:
                continue
            if n in through_cycle:
                result[n][s] = UNBOUNDED
            elif paths.get(n, 0) > 0:
                result[n][s] = max(Fraction(1), paths[n])
    return result


def replay_range(lost: int, impact: Impact) -> tuple[int, int]:
    """Spout tuples replayed for `lost` tuples of one spout's trees lost at one bolt."""
    if lost <= 0:
        return 0, 0
    if impact == UNBOUNDED:
        return 1, lost
    return math.ceil(Fraction(lost) / Fraction(impact)), lost


def replay_problem(lost: int, replays: dict[str, int], impact: dict[str, Impact], mode: str) -> str | None:
    """Why `replays` (spout -> tuples) cannot be what a loss of `lost` tuples at a bolt with
    these impacts (spout -> Imp) replays, or None when some split of the loss among the spouts
    allows it: Σ_s r_s ≤ lost ≤ Σ_s cap_s, cap_s = ⌊r_s · Imp(j, s)⌋ (0 when r_s = 0)."""
    if any(n < 0 for n in replays.values()):
        return "a negative replay count"
    given = {s: n for s, n in replays.items() if n > 0}
    if mode == "none" or not impact:
        return f"replays {given} where nothing is replayed" if given else None
    strangers = sorted(set(given) - set(impact))
    if strangers:
        return f"{', '.join(strangers)} replay(s) tuples of trees that never reach this bolt"
    total = sum(given.values())
    if total > lost:
        return f"{total} replays for {lost} lost tuples (at most one replay per lost tuple)"
    cap: float = 0
    for s, n in given.items():
        cap += UNBOUNDED if impact[s] == UNBOUNDED else math.floor(n * Fraction(impact[s]))
    if lost > cap:
        return (f"{total} replays for {lost} lost tuples: too few (a spout tuple's tree puts at most Imp "
                "tuples at this bolt)")
    return None
