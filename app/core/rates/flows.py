"""The rate check's exact figures of one topology (section 5 of the timed-counter-network semantics).

Per bolt j, with C = C_TAKE (parallelism, × threads for an asynchronous bolt: docs/model.md section 8), α,
τ = tolerance, idle = max_idle_time:

* capacity_j ∈ [C / (α(1+τ) + idle), C / (α(1−τ))]
* a spout with period a = 1/rate emits n ≤ burst tuples then waits n·a ± τ·a, so its long-run
  rate lies in [1/(a(1+τ)), 1/(a(1−τ))] (both extremes are reached with bursts of one tuple)
* a bolt passes on σ_lo..σ_hi per processed tuple on each stream, its exact long-run output
  ratios under the topology's emission rule (app/core/emission.py)

Two kinds of largest inflow are computed, because they answer two questions
(docs/boundedness.md):

* `in_max`, over long windows of **every** run: an upstream bolt passes on at most σ_hi times
  its own inflow only when its own queue is proven bounded; any other upstream bolt may drain
  an arbitrarily large backlog at its largest capacity, so σ_hi·capacity_max is passed on.
  With the bursts this gives every bolt below its smallest capacity a queue bound
  (`queue_bound`): the every-run proof behind "bounded".
* `in_long`, in the long run of a **repeating** run (a lasso): a bolt passes on at most σ_hi ·
  min(inflow, capacity_max) per loop pass. Below the smallest capacity no lasso makes the
  queue grow ("no repeating run grows"), a weaker answer than bounded.

Cycles are handled per strongly connected component (app/core/rates/cycles.py); a stream
that carries nothing (σ = 0) closes no cycle. Everything is an exact fraction.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property

import networkx as nx

from app.core.emission import sigma_bounds
from app.core.numbers import exact, exact_sum
from app.core.rates.curves import stream_excess
from app.core.rates.cycles import Weights, amplifies, cycle_fixpoint, solve_linear
from app.core.topology import DEFAULT_STREAM, STORM_MAX_INT, Bolt, Topology, require_annotated

CYCLE_ROUNDS = 60
_ZERO = Fraction(0)
#: what a duration-windowed bolt's capacity reads as outside this module (headroom, suggestions: it never limits);
#: the flows here never cap it (`RateFigures.timed`), so the figure itself enters no bound
TIMED_CAPACITY = Fraction(2**62)
_LAZY = ("_every", "in_long", "in_min", "in_nominal")  # RateFigures' flows, computed when first read
Key = tuple[str, str]  # (component id, stream name)


def keeps_up(inflow: Fraction, capacity: Fraction) -> bool:
    """The one comparison behind every proof of the rate check: an inflow strictly below a capacity.

    Equal is not enough: a bolt that receives exactly what it can process may drift without bound."""
    return inflow < capacity


def _stream_bounds(ratios: dict[str, float | None], take_max: int, rule: str
                   ) -> dict[str, tuple[Fraction, Fraction, Fraction]]:
    """Per output stream with a value: (σ or ratio, σ_lo, σ_hi), each distinct value worked out once."""
    done: dict[float, tuple[Fraction, Fraction, Fraction]] = {}
    out: dict[str, tuple[Fraction, Fraction, Fraction]] = {}
    for name, value in ratios.items():
        if value is None:
            continue
        found = done.get(value)
        if found is None:
            ratio = exact(value)
            found = done[value] = (ratio, *sigma_bounds(ratio, take_max, rule))
        out[name] = found
    return out


class RateFigures:
    """Exact per-bolt figures used by the report, the proofs, the headroom and the suggestions."""

    def __init__(self, topo: Topology, parallelism: dict[str, int] | None = None):
        tau = exact(topo.settings.tolerance)
        idle = exact(topo.settings.max_idle_time)
        require_annotated(topo)  # placeholder values from an import would give meaningless figures
        par = parallelism or {}
        self.topo = topo
        self.names = {c.id: c.name for c in topo.components}  # component id -> name
        self.by_id = {c.id: c for c in topo.components}  # component id -> spout or bolt
        self.tau = tau
        self.q0 = Fraction(topo.settings.init_queues)
        self.spout_min: dict[str, Fraction] = {}
        self.spout_max: dict[str, Fraction] = {}
        self.spout_nominal: dict[str, Fraction] = {}
        self.burst: dict[str, int] = {}  # C_EMIT of a spout, C_TAKE of a bolt
        self.q_start: dict[str, Fraction] = {}  # per bolt: Q₀, or for a count window max(Q₀, C − 1)
        self.timed: dict[str, Fraction] = {}  # a duration window's G = (1+τ)·max(S, α) (docs/model.md 10.3)
        for s in topo.spouts:
            period = 1 / exact(s.rate)
            self.spout_min[s.id] = 1 / (period * (1 + tau))
            self.spout_max[s.id] = 1 / (period * (1 - tau))
            self.spout_nominal[s.id] = exact(s.rate)
            self.burst[s.id] = s.burst
        self.cap_min: dict[str, Fraction] = {}
        self.cap_max: dict[str, Fraction] = {}
        self.cap_nominal: dict[str, Fraction] = {}
        self.slowest_take: dict[str, Fraction] = {}  # L = α(1+τ) + max_idle: the longest time between takes
        self.longest_phase: dict[str, Fraction] = {}  # α(1+τ)
        self.sigma: dict[str, Fraction] = {}
        self.sigma_lo: dict[str, Fraction] = {}
        self.sigma_hi: dict[str, Fraction] = {}
        # per component, per output stream: (σ or ratio, σ_lo, σ_hi); a spout's default stream is its emissions
        self.streams: dict[str, dict[str, tuple[Fraction, Fraction, Fraction]]] = {}
        rule = topo.settings.emission
        for s in topo.spouts:
            self.streams[s.id] = _stream_bounds(s.output_streams(), s.burst, rule)
        for b in topo.bolts:
            # C_TAKE (an asynchronous bolt: × threads; a count window: × its sliding interval)
            c = par.get(b.id, b.parallelism) * b.per_executor
            alpha = exact(b.alpha)
            self.burst[b.id] = c
            # the most a bolt may hold while no full batch waits: Q₀, and a count window's unfinished slides
            # (up to C − 1 tuples no evaluation takes yet: docs/boundedness.md, "Windows")
            self.q_start[b.id] = max(self.q0, Fraction(c - 1)) if b.count_window is not None else self.q0
            self.cap_min[b.id] = c / (alpha * (1 + tau) + idle)
            self.cap_max[b.id] = c / (alpha * (1 - tau))
            self.cap_nominal[b.id] = c / alpha
            self.slowest_take[b.id] = alpha * (1 + tau) + idle
            self.longest_phase[b.id] = alpha * (1 + tau)
            c = _as_timer(self, b, tau, c)  # a duration window: a timer, no capacity limit (docs/model.md 10.3)
            self.streams[b.id] = _stream_bounds(b.output_streams(), c, rule)
            self.sigma[b.id], self.sigma_lo[b.id], self.sigma_hi[b.id] = self.streams[b.id][DEFAULT_STREAM]
        # what each bolt receives: its input streams, each once (Topology.inputs, shared with the network)
        received = topo.inputs()
        self.inputs: dict[str, list[Key]] = {b.id: received.get(b.id, []) for b in topo.bolts}
        self.joins = frozenset(b.id for b in topo.bolts if b.waits_for_all)  # docs/model.md section 11
        graph = nx.DiGraph()
        graph.add_nodes_from(c.id for c in topo.components)
        # an edge only for a stream that carries something: a σ = 0 stream closes no cycle
        graph.add_edges_from(dict.fromkeys((src, b) for b, ins in self.inputs.items() for src, stream in ins
                                           if self.carries(src, stream)))  # each edge once, in order
        self.graph = graph
        self.cyclic = not nx.is_directed_acyclic_graph(graph)
        self._order = [condensed_members(graph, node) for node in _topological_components(graph)]
        # every cycle solved exactly (no fallback to the finite iteration): the flows below the caps are then
        # linear in the spout rates (docs/boundedness.md, "Cycles"; app/core/headroom.py relies on it)
        self.cycles_solved = True

    def with_streams_kept(self, keep: dict[str, Fraction]) -> RateFigures:
        """These figures with every output stream of each component in `keep` carrying only that share (> 0) of
        what it carries here: a sibling whose flows are computed afresh (this one is not changed; the graph is
        the same, a positive share closes the same cycles)."""
        sibling = object.__new__(RateFigures)
        sibling.__dict__.update({k: v for k, v in self.__dict__.items() if k not in _LAZY})
        sibling.streams = {**self.streams, **{j: {name: (sigma * share, lo * share, hi * share)
                                                  for name, (sigma, lo, hi) in self.streams[j].items()}
                                              for j, share in keep.items()}}
        sibling.cycles_solved = True
        return sibling

    @cached_property
    def _every(self) -> _EveryRun:
        return _EveryRun(self)

    @property
    def in_max(self) -> dict[str, Fraction]:
        """Largest inflow rate over long windows of every run (with `queue_bound`, `in_burst`, `pinned`)."""
        return self._every.in_max

    @property
    def pinned(self) -> set[str]:
        """Bolts not proven bounded: they pass on σ_hi · capacity_max (every run)."""
        return self._every.pinned

    @property
    def queue_bound(self) -> dict[str, Fraction | None]:
        """Per bolt id, its every-run queue bound (None: not bounded)."""
        return self._every.queue_bound

    @property
    def in_burst(self) -> dict[str, Fraction]:
        """Per bolt id, the burst of its every-run arrival curve (beside the rate in_max)."""
        return self._every.in_burst

    @property
    def stream_windows(self) -> dict[Key, tuple[Fraction, Fraction]]:
        """Per output stream (component id, stream): the affine curve (rate, burst) of what it carries in every
        window of every run (the terms of in_max and in_burst; docs/boundedness.md, "Every run")."""
        return self._every.stream_windows

    @cached_property
    def in_long(self) -> dict[str, Fraction]:
        """Largest long-run inflow of a repeating run (equal to in_max when every bolt is bounded)."""
        if "_every" in self.__dict__ and not self._every.pinned:  # computed already, nothing pinned: same flows
            return self.in_max
        return self.inflows(self.spout_max, self.cap_max, from_above=True)

    @cached_property
    def in_min(self) -> dict[str, Fraction]:
        """Smallest long-run inflow (the slowest spouts and bolts, σ_lo)."""
        return self.inflows(self.spout_min, self.cap_min, from_above=False)

    @cached_property
    def in_nominal(self) -> dict[str, Fraction]:
        """Long-run inflow at nominal timing (τ = 0, no idling, σ_lo)."""
        return self.inflows(self.spout_nominal, self.cap_nominal, from_above=False)

    def carries(self, source: str, stream: str) -> bool:
        """Whether `source`'s `stream` can carry a tuple (declared, and σ_hi > 0)."""
        ratios = self.streams.get(source, {}).get(stream)
        return ratios is not None and ratios[2] > 0

    def bounded(self, ident: str) -> bool:
        """Proven bounded in every run: a queue bound was derived (the every-run inflow at most the smallest
        capacity, a tie included: docs/boundedness.md, "Every run", step 3)."""
        return self.queue_bound[ident] is not None

    def no_repeating_growth(self, ident: str) -> bool:
        """No lasso makes the queue grow: the long-run inflow of a repeating run is below the smallest capacity."""
        return keeps_up(self.in_long[ident], self.cap_min[ident])

    @cached_property
    def amplifying(self) -> frozenset[str]:
        """The members of every cycle fed from a spout whose gain with σ_hi is 1 or more (`cycles.amplifies`):
        at any spout rates and any parallelism some member's long-run inflow reaches its largest capacity
        (docs/boundedness.md, "Cycles that amplify"). A cycle too dense to tell is left out (never assumed)."""
        fed: set[str] = set()
        for s in self.spout_max:
            fed |= nx.descendants(self.graph, s)
        found: set[str] = set()
        for members in self._order:
            if len(members) < 2 and not self.graph.has_edge(members[0], members[0]) or members[0] not in fed:
                continue
            inside = set(members)
            weights: Weights = {m: {} for m in members}
            for m in members:
                for source, stream in self.inputs.get(m, []):
                    if source in inside and stream in self.streams[source]:
                        weights[m][source] = weights[m].get(source, Fraction(0)) + self.streams[source][stream][2]
            if amplifies(members, weights):
                found |= inside
        return frozenset(found)

    # ---- long-run flows ------------------------------------------------------------------------------------
    def _ratios(self, ident: str, high: bool) -> list[tuple[Key, Fraction]]:
        """Per output stream of `ident` (its key) the ratio `_outflows` multiplies: σ_hi (high) or σ_lo."""
        return [((ident, name), hi if high else lo) for name, (_, lo, hi) in self.streams[ident].items()]

    def _outflows(self, ident: str, processed: Fraction, high: bool) -> dict[Key, Fraction]:
        """Per output stream of `ident`: σ_hi (high) or σ_lo times the tuples it processes (or emits)."""
        # one multiplication per distinct ratio (20,000 streams of σ 1 share one ratio object: `_stream_bounds`)
        products: dict[int, Fraction] = {}
        out: dict[Key, Fraction] = {}
        for name, (_, lo, hi) in self.streams[ident].items():
            ratio = hi if high else lo
            product = products.get(id(ratio))
            if product is None:
                product = products[id(ratio)] = ratio * processed
            out[(ident, name)] = product
        return out

    def inflows(self, spout_out: dict[str, Fraction], cap: dict[str, Fraction], from_above: bool,
                 high: bool | None = None, saturated: frozenset[str] = frozenset()) -> dict[str, Fraction]:
        """Long-run inflow per bolt id; outflows use σ_hi from above, σ_lo from below (or σ_hi when `high`).
        The members of a cycle in `saturated` process their capacity, without iterating (the suggestion's
        probe: a cycle that amplifies has no finite uncapped flows)."""
        high = from_above if high is None else high
        out: dict[Key, Fraction] = {}
        for ident, rate in spout_out.items():
            out.update(self._outflows(ident, rate, high))
        inflow: dict[str, Fraction] = {}
        for members in self._order:
            members = [m for m in members if m in cap]
            if not members:
                continue
            if self._is_cycle(members) and members[0] in saturated:
                for m in members:
                    out.update(self._outflows(m, cap[m], high))
                for m in members:
                    inflow[m] = self._received(m, out)
                continue
            if self._is_cycle(members):
                self._cycle_flows(members, out, inflow, cap, from_above, high)
                continue
            m = members[0]
            inflow[m] = self._received(m, out)
            out.update(self._outflows(m, inflow[m] if m in self.timed else min(inflow[m], cap[m]), high))
        return inflow

    def _received(self, m: str, out: dict[Key, Fraction]) -> Fraction:
        """What m receives in the long run: its input streams' sum, a join's least branch (model.md section 11)."""
        keys = self.inputs[m]
        if len(keys) == 1:  # one input: its value (exact_sum of one value is that value)
            return out.get(keys[0], _ZERO)
        if m in self.joins:
            return min(out.get(key, _ZERO) for key in keys)
        return exact_sum(out.get(key, _ZERO) for key in keys)

    def _is_cycle(self, members: list[str]) -> bool:
        return len(members) > 1 or self.graph.has_edge(members[0], members[0])

    def _cycle_flows(self, members: list[str], out: dict[Key, Fraction], inflow: dict[str, Fraction],
                     cap: dict[str, Fraction], from_above: bool, high: bool,
                     pinned: frozenset[str] = frozenset()) -> bool:
        """The flows of one cycle into `out` and `inflow`; True when solved exactly (with a certificate that
        the part not pinned shrinks around its cycles), False when iterated CYCLE_ROUNDS rounds."""
        weights, ext = self._cycle_system(members, out, high)
        processed = cycle_fixpoint(self.graph, members, weights, ext, cap, from_above, pinned)
        if processed is not None:
            for m in members:
                out.update(self._outflows(m, processed[m], high))
            for m in members:
                inflow[m] = self._received(m, out)
            return True
        self.cycles_solved = False
        through: dict[str, Fraction] = {}  # per member the tuples it processes in the iteration
        for m in members:
            through[m] = cap[m] if from_above or m in pinned else Fraction(0)
            out.update(self._outflows(m, through[m], high))
        # per member its output streams with their ratio (σ_hi or σ_lo), each distinct ratio object once, and
        # whether it is 1 (then the product is the tuples processed: no multiplication)
        ratios = {m: [(key, ratio, ratio == 1) for key, ratio in self._ratios(m, high)] for m in members}
        for _ in range(CYCLE_ROUNDS):
            changed = False
            for m in members:
                total = self._received(m, out)
                inflow[m] = total
                if m in pinned:
                    continue
                now = min(total, cap[m])
                if now == through[m]:
                    continue  # the same tuples processed: the same outflows (a function of them), nothing changes
                through[m] = now
                products: dict[int, Fraction] = {}  # as `_outflows`: one product per distinct ratio
                for key, ratio, one in ratios[m]:
                    product = products.get(id(ratio))
                    if product is None:
                        product = products[id(ratio)] = now if one else ratio * now
                    changed = changed or out.get(key) != product
                    out[key] = product
            if not changed:
                break
        for m in members:  # one more pass so inflow reflects the final (still sound) outflows
            inflow[m] = self._received(m, out)
        return False

    def _cycle_system(self, members: list[str], out: dict[Key, Fraction], high: bool) -> tuple[Weights,
                                                                                                dict[str, Fraction]]:
        """One strongly connected component as y = min(e + W·y, c) in the tuples each member processes:
        W[m][u] = Σ of the ratios (σ_hi when `high`, else σ_lo) of u's streams that m receives, e[m] what m
        receives from outside the component (final already: components come in topological order)."""
        inside = set(members)
        weights: Weights = {m: {} for m in members}
        ext: dict[str, Fraction] = {}
        for m in members:
            outside = Fraction(0)
            for key in self.inputs[m]:
                source, stream = key
                if source not in inside:
                    outside += out.get(key, Fraction(0))
                elif stream in self.streams[source]:
                    _, lo, hi = self.streams[source][stream]
                    if hi if high else lo:
                        weights[m][source] = weights[m].get(source, Fraction(0)) + (hi if high else lo)
            ext[m] = outside
        return weights, ext

    # ---- every run: rates and bursts over windows (docs/boundedness.md, "Every run") --------------------------
    def excess_of(self, ident: str, stream: str) -> Fraction:
        """H of one output stream (docs/boundedness.md, "Failures" step 6)."""
        return self._excess(ident, stream)

    def _excess(self, ident: str, stream: str) -> Fraction:
        """H of one output stream: emitted ≤ σ_hi · processed + H over any stretch (0 for a spout's emissions)."""
        sigma, _, hi = self.streams[ident][stream]
        if ident in self.spout_max and stream == DEFAULT_STREAM:
            return Fraction(0)
        return stream_excess(sigma, hi, self.burst[ident], self.topo.settings.emission)


def _as_timer(f: RateFigures, b: Bolt, tau: Fraction, c: int) -> int:
    """A duration-windowed bolt's figures (docs/model.md section 10.3), and the batch its output ratios read (`c`
    unchanged for any other bolt): G = (1+τ)·max(S, α), the longest time between two of an executor's evaluations
    (its timer, or back to back once they fall behind); no capacity limits it (the flows never cap it;
    TIMED_CAPACITY where a figure is read); its batches are any size (σ's rounding as for the largest)."""
    window = b.duration_window
    if window is None:
        return c
    ident = b.id
    gap = (1 + tau) * max(exact(window.interval), exact(b.alpha))
    f.timed[ident] = gap
    f.cap_min[ident] = f.cap_max[ident] = f.cap_nominal[ident] = TIMED_CAPACITY
    f.burst[ident] = STORM_MAX_INT
    f.slowest_take[ident] = gap
    return STORM_MAX_INT


class _EveryRun:
    """The every-run bounds of `RateFigures` (docs/boundedness.md, "Every run"): per bolt its largest inflow rate
    over long windows (`in_max`), the burst of its arrival curve (`in_burst`) and its queue bound (`queue_bound`;
    None: not bounded, then `pinned`: it passes on σ_hi · capacity_max), and per output stream the affine curve
    (rate, burst) of what it carries in every window (`stream_windows`). The long-run flows stay in RateFigures."""

    def __init__(self, figures: RateFigures) -> None:
        self.f = figures
        self.pinned: set[str] = set()
        self.queue_bound: dict[str, Fraction | None] = {}
        self.in_burst: dict[str, Fraction] = {}
        self.stream_windows: dict[Key, tuple[Fraction, Fraction]] = {}
        self.in_max = self._solve()

    def _received(self, m: str, out: dict[Key, Fraction]) -> Fraction:
        """What m receives in any window of every run (a rate or a burst of its arrival curve): the sum of its input
        streams, or for a join the largest branch: a message completes when its last part comes, so the completions
        in a window are at most what the branch that was last carries in it (docs/model.md section 11)."""
        if m in self.f.joins:
            return max((out.get(key, _ZERO) for key in self.f.inputs[m]), default=_ZERO)
        return self.f._received(m, out)

    def _spout_windows(self, rate: dict[Key, Fraction], burst: dict[Key, Fraction]) -> None:
        f = self.f
        for s, top in f.spout_max.items():
            done: dict[tuple[int, bool], tuple[Fraction, Fraction]] = {}  # per distinct ratios (`_stream_bounds`)
            for name, ratios in f.streams[s].items():
                key = (id(ratios), name == DEFAULT_STREAM)  # a spout's default stream has no excess
                found = done.get(key)
                if found is None:
                    hi = ratios[2]
                    found = done[key] = (hi * top, hi * f.burst[s] + f._excess(s, name))
                rate[(s, name)], burst[(s, name)] = found

    def _bolt_windows(self, m: str, r: Fraction, rate: dict[Key, Fraction], burst: dict[Key, Fraction]) -> None:
        """The curves of m's output streams from its inflow curve (in_max, in_burst) and whether it is bounded.

        Bounded (inflow rate R at most the smallest capacity): its takes in any window of length v are at most
        R·v + b + Q0 + C + R·L, so its emits in a window w at most that over w + α(1+τ). Not bounded: at most
        one batch per α(1−τ), capacity_max·w + C."""
        f = self.f
        queue = self.queue_bound.get(m)
        done: dict[int, tuple[Fraction, Fraction]] = {}  # per distinct ratios (`_stream_bounds` shares them)
        for name, ratios in f.streams[m].items():
            found = done.get(id(ratios))
            if found is None:
                hi, h = ratios[2], f._excess(m, name)
                if queue is None:
                    found = (hi * f.cap_max[m], hi * f.burst[m] + h)
                elif m in f.timed:  # emitted by an evaluation begun ≤ G after the tuple came, ≤ α(1+τ) long
                    found = (hi * r, hi * (self.in_burst[m] + f.q0 + r * (f.timed[m] + f.longest_phase[m])) + h)
                else:
                    found = (hi * r, hi * (self.in_burst[m] + f.q_start[m] + f.burst[m]
                                           + r * (f.slowest_take[m] + f.longest_phase[m])) + h)
                done[id(ratios)] = found
            rate[(m, name)], burst[(m, name)] = found

    def _solve(self) -> dict[str, Fraction]:
        """in_max, in_burst and queue_bound of every bolt (docs/boundedness.md, "Every run")."""
        f = self.f
        rate: dict[Key, Fraction] = {}
        burst: dict[Key, Fraction] = {}
        in_max: dict[str, Fraction] = {}
        self._spout_windows(rate, burst)
        for members in f._order:
            members = [m for m in members if m in f.cap_max]
            if not members:
                continue
            if f._is_cycle(members):
                self._cycle_windows(members, rate, burst, in_max)
                continue
            m = members[0]
            in_max[m] = self._received(m, rate)
            self.in_burst[m] = self._received(m, burst)
            if m in f.timed:  # what arrived since its executor's last evaluation began, at most G ago (10.3)
                self.queue_bound[m] = f.q0 + self.in_burst[m] + in_max[m] * f.timed[m]
            elif in_max[m] <= f.cap_min[m]:  # a tie too: Q ≤ Q₀ + C + b − (c − R)·D needs only R ≤ c (step 3)
                self.queue_bound[m] = f.q_start[m] + f.burst[m] + self.in_burst[m]
            else:
                self.queue_bound[m] = None
                self.pinned.add(m)
            self._bolt_windows(m, in_max[m], rate, burst)
        self.stream_windows = {key: (r, burst[key]) for key, r in rate.items()}
        return in_max

    def _cycle_windows(self, members: list[str], rate: dict[Key, Fraction], burst: dict[Key, Fraction],
                       in_max: dict[str, Fraction]) -> None:
        """One cycle's every-run rates and bursts: members not proven bounded are pinned at their largest
        capacity until no more are found; the rest (S) get their bursts from b = k + W_SS·b, whose
        elimination succeeds only when W_SS shrinks around its cycles (else nobody in it is proven)."""
        f = self.f
        # a duration window inside a cycle: its timer's bound is not carried around cycles (docs/model.md 10.3); a
        # join inside one is read as the sum of its branches, above the largest branch its every-run curve is
        # (docs/boundedness.md, "Cycles", a join inside a cycle)
        pinned: frozenset[str] = frozenset(m for m in members if m in f.timed)
        inside = set(members)
        while True:
            out = dict(rate)
            inflow: dict[str, Fraction] = {}
            solved = f._cycle_flows(members, out, inflow, f.cap_max, True, True, pinned)
            for m in f.joins & inside:  # (its long-run least branch, which `_cycle_flows` gives, is no every-run rate)
                inflow[m] = self._received(m, out)
            # above the smallest capacity: pinned; a tie R = c is not (steps 3-4 need only R ≤ c, docs/boundedness.md)
            short = frozenset(m for m in members if inflow[m] > f.cap_min[m])
            if short - pinned:
                pinned |= short
                continue
            kept = [m for m in members if m not in pinned]
            weights, _ = f._cycle_system(members, out, high=True)
            inner: Weights = {m: {u: w for u, w in weights[m].items() if u in kept} for m in kept}
            if kept and not solved and solve_linear(kept, inner, {m: Fraction(0) for m in kept}, set(),
                                                    f.cap_max) is None:
                pinned = frozenset(members)  # no certificate that the bursts settle around the cycle
                continue
            for m in members:
                in_max[m] = inflow[m]
            const: dict[str, Fraction] = {}
            for m in kept:
                const[m] = Fraction(0)
                for source, stream in f.inputs[m]:
                    if source not in inside:
                        const[m] += burst.get((source, stream), Fraction(0))
                    elif stream in f.streams[source]:
                        _, _, hi = f.streams[source][stream]
                        own = f.burst[source]
                        const[m] += f._excess(source, stream) + hi * (
                            own if source in pinned else
                            f.q_start[source] + own + inflow[source] * (f.slowest_take[source]
                                                                          + f.longest_phase[source]))
            bursts = solve_linear(kept, inner, const, set(), f.cap_max) if kept else {}
            if bursts is None:
                pinned = frozenset(members)
                continue
            for m in members:
                if m in pinned:
                    self.queue_bound[m] = None
                    self.pinned.add(m)
                    self.in_burst[m] = Fraction(0)
                else:
                    self.in_burst[m] = bursts[m]
                    self.queue_bound[m] = f.q_start[m] + f.burst[m] + bursts[m]
            for m in members:
                self._bolt_windows(m, inflow[m], rate, burst)
            return


def _topological_components(graph: nx.DiGraph) -> list[frozenset[str]]:
    condensed = nx.condensation(graph)
    return [frozenset(condensed.nodes[node]["members"]) for node in nx.topological_sort(condensed)]


def condensed_members(graph: nx.DiGraph, members: frozenset[str]) -> list[str]:
    """A component's members in the graph's node order (deterministic sweeps)."""
    return [n for n in graph.nodes if n in members] if len(members) > 1 else list(members)
