"""Proven latency bounds of a topology: per bolt the longest sojourn of a tuple, per spout the longest time a
tuple tree takes to complete (Storm's complete latency), against the message timeout (docs/latency.md).

Per bolt j proven bounded (its every-run arrival curve (R, b) has R below c = C/L, docs/boundedness.md):

    sojourn_j = α(1+τ) + (L/C)·(Q₀ + C − 1 + E),   E = sup_w (arrivals(w) − c·w)  (= b for one affine piece)

with L = α(1+τ) + max_idle: the FIFO queue is served C tuples per take, the takes at most L apart while it
waits, and the batch is emitted (and acked) within α(1+τ) of its take ("Per bolt"); a bolt whose arrivals come
at least L apart, each one take, waits at most max_idle ("Spaced arrivals"). With acking and
max.spout.pending P, a second bound holds whatever the rates: no more than Q₀ + Σ_s P·tasks_s·Imp(j, s)
tuples can be ahead of a tuple ("max.spout.pending"). A tree completes when its slowest branch does: per
spout the longest path of sojourns ("Per spout"); a pipeline of σ = 1 bolts is also bounded as one server
(the concatenated rate-latency curves, its burst paid once: app/core/latency/netcalc.py) and the smaller
bound is kept. A spout whose trees reach a cycle, or a bolt not proven bounded, gets no bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

import networkx as nx

from app.core.failures import UNBOUNDED, failure_model, impacts
from app.core.latency.losses import failure_inputs, sharper_losses
from app.core.latency.netcalc import Bucket, RateLatency, concatenate, leftover_fifo
from app.core.latency.replays import Delayed, Lumps, lumps_of
from app.core.latency.spacing import spaced_sojourns
from app.core.latency.waits import GRID, lumped_waits, stepped
from app.core.numbers import exact
from app.core.rates import RateAnalysis, RateFigures
from app.core.rates.arrival import ZERO, Curve
from app.core.rates.joins import join_figures
from app.core.rates.windows import timed_hold
from app.core.storm.flux.ticks import TICK_PREFIX
from app.core.storm.forecast import acking_of
from app.core.topology import DEFAULT_STREAM, Topology, Window
from app.core.words import listed

MAX_SEGMENT = 64  # bolts of one pipeline bounded as one server (any split is sound; this caps the work)
MAX_PENDING = 2**31 - 1  # topology.max.spout.pending is a Java int


@dataclass(frozen=True)
class BoltLatency:
    """One bolt's sojourn bound (None: not proven) and the figures behind it."""

    ident: str
    name: str
    sojourn: Fraction | None  # arrival -> the emit that ends its processing, in every run (s)
    service: RateLatency  # c tuples/s after a latency α(1+τ) + L: its rate-latency service curve
    excess: Fraction | None  # E: the most its arrivals exceed c·w in a window of length w
    arrival: Curve | None  # its arrival curve in every run
    reason: str  # why there is no bound ("" when there is one)


@dataclass
class SpoutLatency:
    """One spout's complete-latency bound and the path that makes it."""

    ident: str
    name: str
    bound: Fraction | None  # every tree completes within this many seconds (None: not proven)
    path: list[str] = field(default_factory=list)  # the critical path: bolt ids from the spout on
    hops: list[Fraction] = field(default_factory=list)  # what each bolt of the path adds (s)
    paid_once: list[list[str]] = field(default_factory=list)  # pipelines of the path bounded as one server
    reason: str = ""


@dataclass(frozen=True)
class PendingAdvice:
    """max.spout.pending against a latency target, with acking (None: the bound does not depend on it)."""

    target: Fraction
    largest: int | None  # the largest P whose bound keeps every spout within the target (0: none does)
    unlimited: bool  # every spout is within the target whatever P (the rates alone bound it)
    current: int | None  # the topology's max.spout.pending
    current_bound: dict[str, Fraction | None]  # per spout name: the proven bound at the current P
    little: dict[str, Fraction]  # per spout name: Little's law estimate P × tasks / rate at the current P


class LatencyAnalysis:
    """The latency bounds of one topology snapshot (exact; failures included when a bolt can fail)."""

    def __init__(self, topo: Topology, figures: RateFigures | None = None, *, rates: RateAnalysis | None = None):
        """`figures`, or the whole `rates` analysis, of this snapshot when already made (the failure check is then
        read from it too: app/core/rates/report.py)."""
        self.topo = topo
        self.rates = rates
        self.e = rates.figures if rates is not None else figures or RateFigures(topo)
        e = self.e
        self.tau, self.q0 = e.tau, e.q0
        self.names, self.timeout = {c.id: c.name for c in topo.components}, Fraction(topo.storm.message_timeout)
        self.acking, _ = acking_of(topo)
        self.model = failure_model(topo)
        self.graph = e.graph  # edges of the streams that carry something
        self._impact: dict[str, dict[str, Fraction | float]] | None = None
        self.tasks = {s.id: s.executors or 1 for s in topo.spouts}  # max.spout.pending counts per spout task
        self.idle = exact(topo.settings.max_idle_time)
        self.bolts: dict[str, BoltLatency] = {}
        self.windowed = _window_holds(topo, e)  # windows, such joins: why no sojourn bound (a timer gives one: `_bolt`)
        failures = self._failure_arrivals()
        for second in (False, True):  # a second pass when the bolts' own arrival curves bound the losses more sharply
            for j, spaced in spaced_sojourns(topo, e, self.model, self._bolts_in_order(), self.windowed):
                self.bolts[j] = _sharper(self._bolt(j, self._arrival(j, failures)), spaced)
            if second or not self._relumped():
                break
        self.chained = {b.id: self._chained(b.id) for b in topo.bolts}
        self._pipelines: dict[str, list[str]] = {}  # P-independent, kept across the max.spout.pending bisection
        self._segments: dict[tuple[str, int], Fraction | None] = {}
        self._cycle_reasons: dict[str, str | None] = {}  # per spout id: P-independent too
        self._acyclic_order: list[str] | None = None  # the bolts outside every cycle, last first

    # ---- per bolt ---------------------------------------------------------------------------------------------
    def _failure_arrivals(self) -> dict[str, Curve | None]:
        """With failures: per bolt id reached by a failure or a replay, the arrival curve of the replays' fixpoint
        (None: not bounded; docs/boundedness.md, "Failures"); its stream curves in `_fail_streams`."""
        got = failure_inputs(self.topo, self.e, self.model, self.rates)
        self._fail_streams, self._lost = got.streams, got.lost
        self._lumps = lumps_of(self.topo, self.e, self.model, got.lost)  # by spout
        self._lumped: dict[str, tuple[list[Lumps | Delayed], Curve]] = {}  # by bolt
        return got.inflow

    def _relumped(self) -> bool:
        """True when the bolts' own arrival curves bound some failure's loss more sharply (docs/latency.md, "Losses
        from the bolt's own arrivals"): the lumps are then rebuilt for a second pass."""
        arrivals = {j: b.arrival for j, b in self.bolts.items() if j not in self.windowed}
        sharper = sharper_losses(self._lost, arrivals, self.e, self.model.max_reboot if self.model else Fraction(0),
                                 self.idle, self.q0)
        if not self._lumps or sharper == self._lost:
            return False
        self._lost, self._lumps, self._lumped = sharper, lumps_of(self.topo, self.e, self.model, sharper), {}
        return True

    def _arrival(self, ident: str, failures: dict[str, Curve | None]) -> Curve | None:
        """One bolt's arrival curve in every run (None: not proven bounded): per input stream the smallest of the
        valid curves (docs/latency.md, "Arrival curves"): the rate check's (under failures the replays' fixpoint's),
        one batch per α(1−τ) of its source, and, for a source u with a sojourn bound, its arrivals delayed and its
        output through its service curve; the inputs in lumps kept apart in `_lumped` ("Replays in lumps")."""
        e = self.e
        failing = ident in failures
        if failing and failures[ident] is None or not failing and not e.bounded(ident):
            return None
        windows, total, rest, lumped = e.stream_windows, ZERO, ZERO, list[Lumps | Delayed]()
        for source, stream in e.inputs[ident]:
            if failing:
                piece = self._fail_streams.get(source, {}).get(stream)
                if piece is None or not e.carries(source, stream):
                    continue
            elif (source, stream) not in windows:
                continue
            else:
                piece = Curve.affine(*windows[(source, stream)])
            if source in e.cap_max:
                piece = piece.meet(self._from_bolt(source, stream, failing, windows.get((source, stream))))
            total = total.plus(piece)
            lumps = _term(self._lumps, self._lumped, self.bolts, e, source, stream if failing else "", self.q0)
            lumped, rest = (lumped + [lumps], rest) if lumps else (lumped, rest.plus(piece))
        self._lumped.update({ident: (lumped, rest)} if lumped else {})
        return total

    def _from_bolt(self, source: str, stream: str, failing: bool, window: tuple[Fraction, Fraction] | None
                   ) -> Curve:
        """What `source` (a bolt) sends on `stream`: one batch per phase, and (when it has a sojourn bound) its
        arrivals delayed by it and its output through its service curve (docs/latency.md, "Arrival curves")."""
        e = self.e
        sigma, _, hi = e.streams[source][stream]
        # an integer σ keeps no carry (E = σ·P at every emit, both rules): nothing beyond σ·processed
        h = Fraction(0) if sigma.denominator == 1 else e.excess_of(source, stream)
        out = Curve.affine(hi * e.cap_max[source], hi * e.burst[source] + h)
        upstream = self.bolts.get(source)
        if upstream is None or upstream.arrival is None or upstream.sojourn is None:
            return out
        if failing and self.model is not None and source in self.model.min_ttf and sigma.denominator != 1 \
                and self.topo.settings.emission != "exact":
            return out  # (a failure restarts a fractional carry under the dvert rule: not counted here)
        shifted = upstream.arrival.shifted(upstream.sojourn, self.q0)
        # docs/latency.md, "Arrival curves" 4: through its service curve, per piece of α_u of slope ρ ≤ c_u,
        # processed in a window of length w ≤ ρ·(w + α(1+τ)) + b + max(ρ·L, Q₀ + ρ·max_idle) (a timer: G for max_idle)
        d, slow, first = e.longest_phase[source], e.slowest_take[source], e.timed.get(source, self.idle)
        served = [(r, b + r * d + max(r * slow, self.q0 + r * first)) for r, b in upstream.arrival.pieces
                  if r <= upstream.service.rate]
        if served:
            shifted = shifted.meet(Curve(tuple(served)))
        return out.meet(_rounded_up(shifted.scaled(hi, burst=h)))

    def _bolts_in_order(self) -> list[str]:
        """Bolt ids, every bolt outside a cycle after its sources."""
        condensed = nx.condensation(self.graph)
        order = [m for node in nx.topological_sort(condensed) for m in sorted(condensed.nodes[node]["members"])]
        return [j for j in order if j in self.e.cap_min]

    def _bolt(self, ident: str, arrival: Curve | None) -> BoltLatency:
        """sojourn = α(1+τ) + the smaller of two waits (docs/latency.md, "Per bolt"): W₁ from the last moment the
        queue was empty (full batches at most L apart), and W₂ from the start of the busy period (takes at most L
        apart, the first within max_idle; when the arrivals' long-run rate is at most 1/L)."""
        e = self.e
        c, phase, slow, take = e.cap_min[ident], e.longest_phase[ident], e.slowest_take[ident], e.burst[ident]
        service = RateLatency(c, phase + slow)
        excess = None if arrival is None else arrival.excess(c)
        hold = timed_hold(e, ident)
        if hold is not None:  # a duration window's timer: whatever arrives (docs/latency.md, "Duration windows")
            return BoltLatency(ident, self.names[ident], hold, service, excess, arrival, "")
        if arrival is None or excess is None or ident in self.windowed:
            return BoltLatency(ident, self.names[ident], None, service, None, None, self.windowed.get(
                ident, f"{self.names[ident]} is not proven bounded, so no tuple's wait in its queue is"))
        def full(q0: Fraction) -> Fraction | None:
            return stepped(arrival, q0, slow, c, lambda m: -(-m // take), lambda m: -(-m // take) * take + 1, take)

        # a queue emptied at some position holds no initial tuple any more; the start's first take is within
        # max_idle (the initial tuples are there at time 0): W₁ = max(S(0), S(Q₀) − L + max_idle)
        later, start = full(Fraction(0)), full(self.q0) if self.q0 else None
        if ident in self._lumped:  # (docs/latency.md, "Replays in lumps")
            later, start = lumped_waits(*self._lumped[ident], arrival, later, start, self.q0, slow, c, take)
        wait = None if later is None or (self.q0 and start is None) else \
            later if start is None else max(later, start - slow + self.idle)
        if wait is None:  # (a burst too large to step through: the same bound without the integer counts)
            wait = slow * (self.q0 + take - 1 + excess) / take
        if arrival.excess(1 / slow) is not None:
            busy = stepped(arrival, self.q0, slow, 1 / slow, lambda m: m - 1, lambda m: m + 1, 1)
            if busy is not None:
                wait = min(wait, self.idle + busy)
        return BoltLatency(ident, self.names[ident], phase + wait, service, excess, arrival, "")

    def pending_sojourn(self, ident: str, pending: int) -> Fraction | None:
        """With acking and max.spout.pending `pending`: a tuple waits behind at most Q₀ + Σ_s P·tasks·Imp(j, s)
        − 1 tuples (None: a tick or a cycle's tree reaches it, or acking is off)."""
        if not self.acking or ident in self.windowed:  # (a window's hold is not a wait behind pending tuples)
            return None
        if self._impact is None:
            self._impact = dict(impacts(self.topo))
        ahead = self.q0
        for source, imp in self._impact.get(ident, {}).items():
            if imp == UNBOUNDED or self.names[source].startswith(TICK_PREFIX):
                return None
            ahead += pending * self.tasks[source] * Fraction(imp)
        return self.e.longest_phase[ident] + self.e.slowest_take[ident] * -(-ahead // self.e.burst[ident])

    def hop(self, ident: str, pending: int | None = None) -> Fraction | None:
        """The sojourn bound of one bolt: the rates' bound, or with max.spout.pending the smaller of both."""
        own = self.bolts[ident].sojourn
        if pending is None:
            return own
        other = self.pending_sojourn(ident, pending)
        return other if own is None else own if other is None else min(own, other)

    # ---- pipelines: σ = 1, one input, bounded as one server -----------------------------------------------------
    def _chained(self, ident: str) -> bool:
        """Its only input: one stream of σ exactly 1 from a bolt (either may fail: docs/latency.md, "Pipelines")."""
        inputs = [(s, st) for s, st in self.e.inputs[ident] if self.e.carries(s, st)]
        if len(inputs) != 1 or inputs[0][0] not in self.e.cap_min or {ident, inputs[0][0]} & self.windowed.keys():
            return False
        return self.e.streams[inputs[0][0]][inputs[0][1]] == (Fraction(1),) * 3

    def _pipeline(self, ident: str) -> list[str]:
        """ident and the bolts after it while each has exactly one successor and that successor is chained."""
        line = [ident]
        while len(line) < MAX_SEGMENT:
            succ = list(self.graph.successors(line[-1]))
            if len(succ) != 1 or not self.chained.get(succ[0]) or succ[0] in line:
                break
            line.append(succ[0])
        return line

    def segment(self, line: list[str]) -> Fraction | None:
        """The bolts of `line` as one server: the aggregate entering the first (its arrival curve plus Q₀) through
        the concatenated service curves, the initial tuples of the later ones as FIFO cross traffic."""
        alpha = self.bolts[line[0]].arrival
        if alpha is None or any(self.bolts[j].sojourn is None for j in line):
            return None
        betas = [leftover_fifo(self.bolts[j].service, Bucket(Fraction(0), k * self.q0)) for k, j in enumerate(line)]
        beta = concatenate(betas)
        excess = alpha.excess(beta.rate)  # h(α + Q₀, β) = T + sup_w (α(w) + Q₀ − R·w)/R for a concave α
        return None if excess is None else beta.latency + (excess + self.q0) / beta.rate

    # ---- per spout ----------------------------------------------------------------------------------------------
    def spouts(self, pending: int | None = None) -> dict[str, SpoutLatency]:
        """Per spout id (ticks left out: they start no tree) its complete-latency bound."""
        best = self._longest(pending)
        out: dict[str, SpoutLatency] = {}
        for s in self.topo.spouts:
            if s.name.startswith(TICK_PREFIX):
                continue
            out[s.id] = self._spout(s.id, best)
        return out

    def _spout(self, ident: str, best: dict[str, tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str]
               ) -> SpoutLatency:
        name = self.names[ident]
        first = sorted(set(self.graph.successors(ident)), key=lambda n: (self.names[n], n))  # ids may be random
        if not first:
            return SpoutLatency(ident, name, Fraction(0), reason="no bolt receives its tuples")
        if ident not in self._cycle_reasons:  # the same at every max.spout.pending: found once
            self._cycle_reasons[ident] = _cycle_reason(self.graph, self.names, ident)
        reason = self._cycle_reasons[ident]
        if reason is not None:
            return SpoutLatency(ident, name, None, reason=reason)
        worst: tuple[Fraction, list[str], list[Fraction], list[list[str]]] | None = None
        for j in first:
            got = best[j]
            if isinstance(got, str):
                return SpoutLatency(ident, name, None, reason=got)
            if worst is None or got[0] > worst[0]:
                worst = got
        assert worst is not None
        return SpoutLatency(ident, name, worst[0], worst[1], worst[2], worst[3])

    def _longest(self, pending: int | None) -> dict[str, tuple[Fraction, list[str], list[Fraction],
                                                                list[list[str]]] | str]:
        """Per bolt outside every cycle: the longest bound from a tuple's arrival there to the completion of its
        subtree, with the path, each bolt's share and the pipelines paid once; or why there is none."""
        best: dict[str, tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str] = {}
        if self._acyclic_order is None:  # the same at every max.spout.pending: found once
            acyclic = {n for comp in nx.strongly_connected_components(self.graph) for n in comp
                       if len(comp) == 1 and not self.graph.has_edge(n, n)}
            self._acyclic_order = [n for n in reversed(list(nx.topological_sort(self.graph.subgraph(acyclic))))
                                   if n in self.bolts]
        for j in self._acyclic_order:
            best[j] = self._best_from(j, pending, best)
        return best

    def _after(self, j: str, best: dict[str, tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str]
               ) -> tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str:
        """The worst continuation after bolt j emits: the largest bound among its successors (none: 0)."""
        worst: tuple[Fraction, list[str], list[Fraction], list[list[str]]] = (Fraction(0), [], [], [])
        for w in sorted(self.graph.successors(j), key=lambda n: (self.names[n], n)):  # one answer in every run
            got = best.get(w, f"{self.names[w]} is on a cycle")
            if isinstance(got, str):
                return got
            if got[0] > worst[0]:
                worst = got
        return worst

    def _best_from(self, j: str, pending: int | None,
                   best: dict[str, tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str]
                   ) -> tuple[Fraction, list[str], list[Fraction], list[list[str]]] | str:
        own = self.hop(j, pending)
        if own is None:
            return self.bolts[j].reason
        after = self._after(j, best)
        if isinstance(after, str):
            return after
        chosen = (own + after[0], [j, *after[1]], [own, *after[2]], after[3])
        line = self._pipelines.setdefault(j, self._pipeline(j))
        for m in range(2, len(line) + 1):  # the first m bolts as one server, then the worst continuation
            key = (j, m)
            if key not in self._segments:
                self._segments[key] = self.segment(line[:m])
            bound = self._segments[key]
            tail = self._after(line[m - 1], best)
            if bound is None or isinstance(tail, str):
                break
            if bound + tail[0] < chosen[0]:
                share = [bound, *([Fraction(0)] * (m - 1))]
                chosen = (bound + tail[0], [*line[:m], *tail[1]], [*share, *tail[2]], [line[:m], *tail[3]])
        return chosen

    # ---- against the timeout and max.spout.pending --------------------------------------------------------------
    def advice(self, target: Fraction | None = None) -> PendingAdvice | None:
        """With acking: the largest max.spout.pending keeping every spout's bound within `target` (default: the
        message timeout), the bound at the current setting and Little's law estimate there (None: no acking)."""
        if not self.acking:
            return None
        goal = self.timeout if target is None else target
        current = self.topo.storm.max_spout_pending

        def within(p: int | None) -> bool:
            return all(s.bound is not None and s.bound <= goal for s in self.spouts(p).values())

        unlimited = within(None)
        largest: int | None = None
        if not unlimited:
            largest = _largest(within)
        now = self.spouts(current)
        little: dict[str, Fraction] = {}
        if current is not None:
            for s in self.topo.spouts:
                if s.id in now and exact(s.rate) > 0:
                    little[s.name] = current * (s.executors or 1) / exact(s.rate)
        return PendingAdvice(goal, largest, unlimited, current, {self.names[k]: v.bound for k, v in now.items()},
                             little)


def _sharper(bolt: BoltLatency, spaced: Fraction | None) -> BoltLatency:
    """The bolt with the smaller of its sojourn bound and the one its spaced arrivals give (docs/latency.md, "Spaced
    arrivals"; used only where the rates bound it too)."""
    better = bolt.sojourn is not None and spaced is not None and spaced < bolt.sojourn
    return replace(bolt, sojourn=spaced) if better else bolt


def _cycle_reason(graph: nx.DiGraph, names: dict[str, str], ident: str) -> str | None:
    """Why no tree of the spout `ident` is proven to complete when its trees reach a cycle (None: they reach
    none)."""
    sub = graph.subgraph(nx.descendants(graph, ident))
    if nx.is_directed_acyclic_graph(sub):
        return None
    named = nx.DiGraph()  # nodes and edges in the order of their names: the same cycle in every run
    named.add_nodes_from(sorted(sub.nodes, key=lambda n: (names[n], n)))
    named.add_edges_from(sorted(sub.edges, key=lambda e: (names[e[0]], names[e[1]], e)))
    cycle = [names[n] for n in next(iter(nx.simple_cycles(named)))]
    start = cycle.index(min(cycle))  # from the same member in every run (ids may be random)
    cycle = cycle[start:] + cycle[:start + 1]
    return (f"its trees reach the cycle {listed(cycle, 8, ' → ')}: the model does not bound how often a tuple "
            "goes around it, so no tree is proven to complete")


def _why_held(window: Window) -> str:
    """Why a window's hold has no bound (docs/model.md sections 10.2 and 10.4; a duration window has one, 10.3)."""
    if window.mixed and window.trigger == "count":
        return ("Storm acks a tuple only at the first trigger at least its window's length after it arrived, and a "
                "trigger waits for a slide of tuples whose coming nothing bounds (docs/model.md section 10.4)")
    return ("Storm acks a tuple only when later tuples push it out of its last window, and nothing bounds how long "
            "they take to come (docs/model.md section 10" + (".4)" if window.mixed else ")"))


def _window_holds(topo: Topology, e: RateFigures) -> dict[str, str]:
    """Per bolt with a window (by id), why it has no sojourn bound (docs/model.md section 10): a tuple is held until
    later tuples push it out of its last window, and an arrival curve bounds arrivals from above only. Likewise a
    join whose message may wait for another tree's part (docs/latency.md, "Joins"): any join but one whose cache is
    bounded and whose branches pass each fork tuple on one for one. (A duration window is listed too, for what reads
    this as "not one server": its timer gives it a sojourn bound, `_bolt`.)"""
    held = {b.id: f"{b.name} is a windowed bolt ({b.window.phrase()}): " + _why_held(b.window)
            for b in topo.windowed_bolts() if b.window is not None}
    # a join holds a part until its slowest branch delivers the message's last part (docs/model.md section 11): that
    # wait is the slowest branch's path, which the longest path covers, when the part is of the same tree
    for b in topo.waiting_joins():
        j = join_figures(e, b)
        if j is None or not j.one_for_one:
            held[b.id] = (f"{b.name} is a join waiting for every branch, and a part it holds is not proven to wait "
                          "only for its own tree's other parts (its cache bounded, each branch passing the fork's "
                          "tuples on one for one: docs/latency.md, \"Joins\")")
    return held




def _rounded_up(curve: Curve) -> Curve:
    """The curve with every rate and burst rounded up to the grid 1/GRID: a larger curve still bounds the flow, and
    the fractions of curves shifted along a long path stay small."""
    return Curve(tuple((Fraction(math.ceil(r * GRID), GRID), Fraction(math.ceil(b * GRID), GRID))
                       for r, b in curve.pieces))






def _term(lumps: dict[str, Lumps], lumped: dict[str, tuple[list[Lumps | Delayed], Curve]],
          bolts: dict[str, BoltLatency], e: RateFigures, source: str, stream: str, q0: Fraction
          ) -> Lumps | Delayed | None:
    """An input in lumps (docs/latency.md, "Replays in lumps"): a paced spout's `default` stream (stream "" when the
    bolt is reached by no failure: then none), or a bolt source's lumped arrivals passed on through its sojourn
    bound, on a stream of integer σ ("Passed on"); None otherwise."""
    if stream == DEFAULT_STREAM and source in lumps:
        return lumps[source]
    got, upstream, ratios = lumped.get(source), bolts.get(source), e.streams.get(source, {}).get(stream)
    if got is None or upstream is None or upstream.sojourn is None or ratios is None or ratios[0].denominator != 1:
        return None
    return Delayed(tuple(got[0]), got[1], ratios[0], upstream.sojourn, q0)








def _largest(within: Callable[[int | None], bool]) -> int:
    """The largest P in 1..MAX_PENDING with within(P) (the bound grows with P), 0 when none."""
    if not within(1):
        return 0
    low, high = 1, MAX_PENDING
    while low < high:
        mid = (low + high + 1) // 2
        if within(mid):
            low = mid
        else:
            high = mid - 1
    return low
