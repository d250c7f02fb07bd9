"""The network the encoder works on: exact parameters and the cone of influence.

Only the encoder and the search read this module; the certifier recomputes its own
figures from the trace's topology document so that the two share no code.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.emission import Emission
from app.core.failures import FailureModel, failure_model, failures_off
from app.core.numbers import exact
from app.core.topology import Topology, parse_topology, require_annotated


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
    slide: int = 1  # a count window's sliding interval: it takes only whole slides (docs/model.md section 10)
    join: bool = False  # waits for a part from every input stream (a branch) per message (docs/model.md section 11)
    # a duration window's G = (1+τ)·max(S, α): a timer takes every waiting tuple, at most G after its last run
    # (docs/model.md section 10.3); None for any other bolt
    timer: Fraction | None = None

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
    emission: Emission = "exact"
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    failures: FailureModel | None = None  # keyed by component name; None: no bolt of the network can fail

    def document(self) -> dict[str, Any]:
        """The reduced topology as a JSON document (what a trace embeds)."""
        return self.topology.model_dump(mode="json")


def cone_of_influence(topo: Topology, checked_ids: list[str], keep: set[str] | None = None) -> Topology:
    """The checked bolts and their transitive upstream, as a valid topology document (`keep`: their ids, when
    `cone_ids` found them already)."""
    keep = cone_ids(topo, checked_ids) if keep is None else keep
    data = topo.model_dump(mode="json")
    data["spouts"] = [s for s in data["spouts"] if s["id"] in keep]
    data["bolts"] = [b for b in data["bolts"] if b["id"] in keep]
    data["subscriptions"] = [s for s in data["subscriptions"] if s["source"] in keep and s["target"] in keep]
    data["layout"] = {k: v for k, v in data["layout"].items() if k in keep}
    if (data.get("storm") or {}).get("assignment"):  # the assignment of the components kept (docs/model.md 9.1)
        names = {c.name for c in topo.components if c.id in keep} | {"__acker"}
        data["storm"]["assignment"] = {n: row for n, row in data["storm"]["assignment"].items() if n in names}
    data["verification"]["checked"] = [c for c in checked_ids if c in keep]
    return parse_topology(data)


def cone_ids(topo: Topology, checked_ids: list[str]) -> set[str]:
    """The ids of the checked bolts and their transitive upstream (`cone_of_influence`'s components).

    With failures (docs/model.md section 7) a bolt that may fail downstream of a kept spout
    makes that spout replay, so it is kept too, with its own upstream, until nothing changes."""
    failing = {b.id for b in topo.bolts if b.min_ttf is not None} if failure_model(topo) else set()
    downstream: dict[str, list[str]] = {}
    upstream: dict[str, list[str]] = {}  # per target, its sources in subscription order (one pass, not one per bolt)
    for sub in topo.subscriptions:
        downstream.setdefault(sub.source, []).append(sub.target)
        upstream.setdefault(sub.target, []).append(sub.source)
    keep: set[str] = set()
    todo = list(checked_ids)
    while todo:
        while todo:
            ident = todo.pop()
            if ident in keep:
                continue
            keep.add(ident)
            todo.extend(upstream.get(ident, []))
        if failing:
            reached: set[str] = set()
            frontier = [s.id for s in topo.spouts if s.id in keep]
            while frontier:
                node = frontier.pop()
                for nxt in downstream.get(node, []):
                    if nxt not in reached:
                        reached.add(nxt)
                        frontier.append(nxt)
            todo = sorted((reached & failing) - keep)
    return keep


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
        bolts.append(BoltParams(b.name, exact(b.alpha), exact(b.sigma), b.take_max, sources,
                                all(st.silent for st in outs), outs,
                                b.per_executor if b.count_window is not None else 1, b.waits_for_all,
                                _timer(b, exact(reduced.settings.tolerance))))
    kept = [c.name for c in reduced.components]
    dropped = [c.name for c in topo.components if c.name not in kept]
    model = failure_model(reduced)
    failures = None if model is None else model.renamed(names)
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
        failures=failures,
    )


def _timer(b: Any, tau: Fraction) -> Fraction | None:
    """A duration window's G = (1+τ)·max(S, α) (docs/model.md section 10.3); None for any other bolt."""
    window = b.duration_window
    return None if window is None else (1 + tau) * max(exact(window.interval), exact(b.alpha))


def only_failing(net: Network, failing: Collection[str]) -> Network:
    """`net` in which only the bolts named in `failing` may fail (docs/model.md 7.4): the others lose
    their `min_ttf`, and with none left the document has failures off; the cone is recomputed (bolts
    kept only because their losses would be replayed drop out). A run of the result is a run of
    `net` in which the other bolts never fail (a FAIL is never forced; the time since recovery is
    read by nothing else), so its lassos are lassos of `net` too, without the loop having to repeat
    the clocks of bolts that do not fail. `net` itself when nothing changes."""
    if net.failures is None or set(net.failures.min_ttf) <= set(failing):
        return net
    topo = net.topology
    if not set(failing) & set(net.failures.min_ttf):
        topo = failures_off(topo)
    else:
        topo = topo.model_copy(update={"bolts": [b if b.name in failing else b.model_copy(update={"min_ttf": None})
                                                 for b in topo.bolts]})
    reduced = build_network(topo, list(net.checked))
    reduced.dropped = list(net.dropped) + [n for n in net.kept if n not in reduced.kept]
    return reduced


def time_grid(net: Network) -> Fraction:
    """The largest time unit dividing every time constant of the network (1 / LCM of denominators)."""
    tau = net.tolerance
    constants = [net.max_idle]
    for s in net.spouts:
        constants += [s.period, s.period * tau]
    for b in net.bolts:
        constants += [b.alpha * (1 - tau), b.alpha * (1 + tau), b.alpha * (1 + tau) + net.max_idle]
        if b.timer is not None:
            constants.append(b.timer)
    if net.failures is not None:
        constants += [net.failures.min_reboot, net.failures.max_reboot, *net.failures.min_ttf.values()]
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
    initial queues a bolt may emit at position 1 whatever its distance: the bound is then 1.
    With failures (docs/model.md section 7) a bolt that may fail can lose every batch of a pass,
    so only the bolts that cannot fail and are fed through such bolts must emit in the loop."""
    if net.init_queue > 0:
        return 1
    dist: dict[str, int] = {s.name: 0 for s in net.spouts}
    frontier = [s.name for s in net.spouts]
    passes_on = {b.name: not b.silent for b in net.bolts}
    carries = {(s.name, "default") for s in net.spouts}  # the streams that carry tuples
    carries |= {(s.name, st.name) for s in net.spouts for st in s.streams if not st.silent}
    carries |= {(b.name, st.name) for b in net.bolts for st in b.streams if not st.silent}
    followers: dict[str, list[str]] = {}  # a breadth-first walk: linear in the network's size
    for b in net.bolts:
        for src, stream in b.sources:
            if (src, stream) in carries:
                followers.setdefault(src, []).append(b.name)
    while frontier:
        reached = []
        for src in frontier:
            for name in followers.get(src, []):
                if name not in dist:
                    dist[name] = dist[src] + 1
                    reached.append(name)
        frontier = reached
    if net.failures is not None:
        forced = {s.name for s in net.spouts}  # components that emit in every loop
        grown = True
        while grown:
            grown = False
            for b in net.bolts:
                if b.name not in forced and b.name not in net.failures.min_ttf and passes_on[b.name] \
                        and any(src in forced and (src, stream) in carries for src, stream in b.sources):
                    forced.add(b.name)
                    grown = True
        passes_on = {name: name in forced for name in passes_on}
    return max([1] + [d for name, d in dist.items() if passes_on.get(name, False)])
