"""The network the encoder works on: exact parameters and the cone of influence.

Only the encoder and the search read this module; the certifier recomputes its own
figures from the trace's topology document so that the two share no code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.topology import Topology, parse_topology, require_annotated


def exact(value: float | int) -> Fraction:
    """The decimal a user typed as an exact fraction (0.1 -> 1/10, not a binary float)."""
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


@dataclass(frozen=True)
class StreamParams:
    """One output stream: its σ (a spout's: its ratio), `silent` = carries nothing and keeps no
    buffer (nobody in the network subscribes to it, or σ = 0)."""

    name: str
    sigma: Fraction
    silent: bool


@dataclass(frozen=True)
class SpoutParams:
    """A spout in exact numbers: `period` a = 1/rate, `burst` = C_EMIT; `streams` its declared
    streams besides 'default' (which carries the emissions themselves)."""

    name: str
    period: Fraction
    burst: int
    streams: tuple[StreamParams, ...] = ()


@dataclass(frozen=True)
class BoltParams:
    """A bolt in exact numbers; `sources` are its input streams (component name, stream name), each
    once; `streams` every output stream, 'default' (σ = `sigma`) first; `silent` = every stream is."""

    name: str
    alpha: Fraction
    sigma: Fraction
    take_max: int
    sources: tuple[tuple[str, str], ...]
    silent: bool
    streams: tuple[StreamParams, ...] = ()

    @property
    def source_names(self) -> tuple[str, ...]:
        """The components it receives from, each once."""
        return tuple(dict.fromkeys(name for name, _ in self.sources))


@dataclass
class Network:
    """The (possibly reduced) timed counter network with exact constants."""

    topology: Topology
    spouts: list[SpoutParams]
    bolts: list[BoltParams]
    checked: list[str]
    tolerance: Fraction
    max_idle: Fraction
    init_queue: int
    emission: str = "exact"
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The reduced topology as a JSON document (what a trace embeds)."""
        return self.topology.model_dump(mode="json")


def cone_of_influence(topo: Topology, checked_ids: list[str]) -> Topology:
    """The checked bolts and their transitive upstream, as a valid topology document."""
    keep: set[str] = set()
    todo = list(checked_ids)
    while todo:
        ident = todo.pop()
        if ident in keep:
            continue
        keep.add(ident)
        todo.extend(s.source for s in topo.subscriptions if s.target == ident)
    data = topo.model_dump(mode="json")
    data["spouts"] = [s for s in data["spouts"] if s["id"] in keep]
    data["bolts"] = [b for b in data["bolts"] if b["id"] in keep]
    data["subscriptions"] = [s for s in data["subscriptions"] if s["source"] in keep and s["target"] in keep]
    data["layout"] = {k: v for k, v in data["layout"].items() if k in keep}
    data["verification"]["checked"] = [c for c in checked_ids if c in keep]
    return parse_topology(data)


def build_network(topo: Topology, checked_names: list[str] | None = None, reduce: bool = True) -> Network:
    """Exact parameters of `topo`, reduced to the cone of influence of the checked bolts."""
    require_annotated(topo)
    if checked_names is None:
        checked = [b.id for b in topo.checked_bolts()]
    else:
        checked = [topo.bolt_by_name(n).id for n in checked_names]
    reduced = cone_of_influence(topo, checked) if reduce else topo
    names = {c.id: c.name for c in reduced.components}
    received = reduced.inputs()  # what each bolt receives (the one definition)
    inputs = {b.id: received.get(b.id, []) for b in reduced.bolts}
    subscribed = {pair for pairs in inputs.values() for pair in pairs}

    def streams(c: Any) -> tuple[StreamParams, ...]:
        return tuple(StreamParams(name, exact(v), (c.id, name) not in subscribed or v == 0)
                     for name, v in c.output_streams().items())

    spouts = [SpoutParams(s.name, 1 / exact(s.rate), s.burst, streams(s)[1:]) for s in reduced.spouts]
    bolts: list[BoltParams] = []
    for b in reduced.bolts:
        sources = tuple((names[src], stream) for src, stream in inputs[b.id])
        outs = streams(b)
        bolts.append(BoltParams(b.name, exact(b.alpha), exact(b.sigma), b.parallelism, sources,
                                all(st.silent for st in outs), outs))
    kept = [c.name for c in reduced.components]
    dropped = [c.name for c in topo.components if c.name not in kept]
    return Network(
        topology=reduced,
        spouts=spouts,
        bolts=bolts,
        checked=[names[c] for c in checked],
        tolerance=exact(reduced.settings.tolerance),
        max_idle=exact(reduced.settings.max_idle_time),
        init_queue=reduced.settings.init_queues,
        emission=reduced.settings.emission,
        kept=kept,
        dropped=dropped,
    )


def time_grid(net: Network) -> Fraction:
    """The largest time unit dividing every time constant of the network (1 / LCM of denominators)."""
    tau = net.tolerance
    constants = [net.max_idle]
    for s in net.spouts:
        constants += [s.period, s.period * tau]
    for b in net.bolts:
        constants += [b.alpha * (1 - tau), b.alpha * (1 + tau), b.alpha * (1 + tau) + net.max_idle]
    denominator = 1
    for c in constants:
        denominator = math.lcm(denominator, Fraction(c).denominator)
    return Fraction(1, denominator)


def lasso_lower_bound(net: Network) -> int:
    """A k below which no lasso of `net` makes a queue grow (so deepening may start there).

    With empty initial queues, a bolt first emits tuples at least one position after the first
    tuples reach it, so a bolt d bolts away from every spout (counting itself) emits nothing
    before position d. In a lasso every spout emits inside the loop, so every bolt fed by it
    takes inside the loop (fairness), and one that passes tuples on (σ > 0, a subscriber in the
    network) emits at least σ times what it took over a pass (its carry repeats): it emits
    inside the loop, at a position ≤ k. Hence k ≥ that distance for every such bolt. With
    initial queues a bolt may emit at position 1 whatever its distance: the bound is then 1."""
    if net.init_queue > 0:
        return 1
    dist: dict[str, int] = {s.name: 0 for s in net.spouts}
    frontier = [s.name for s in net.spouts]
    passes_on = {b.name: not b.silent for b in net.bolts}
    carries = {(s.name, "default") for s in net.spouts}  # the streams that carry tuples
    carries |= {(s.name, st.name) for s in net.spouts for st in s.streams if not st.silent}
    carries |= {(b.name, st.name) for b in net.bolts for st in b.streams if not st.silent}
    while frontier:
        reached = []
        for b in net.bolts:
            fed = [src for src, stream in b.sources if src in frontier and (src, stream) in carries]
            if b.name not in dist and fed:
                dist[b.name] = dist[fed[0]] + 1
                reached.append(b.name)
        frontier = reached
    return max([1] + [d for name, d in dist.items() if passes_on.get(name, False)])
