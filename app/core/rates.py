"""The fluid rate check (section 5 of the timed-counter-network semantics).

Per bolt j, with C = parallelism, α, τ = tolerance, idle = max_idle_time:

* capacity_j ∈ [C / (α(1+τ) + idle), C / (α(1−τ))]
* inflow_j = Σ_{u ∈ subs(j)} outflow_u, outflow_j ∈ [σ_lo · min(inflow_j, capacity_j), σ_hi · ...]
  where σ_lo, σ_hi are the bolt's exact long-run output ratios under the topology's
  emission rule (app/core/emission.py; σ itself under "exact", possibly more under "dvert")
* spout s with period a = 1/rate emits n ≤ burst tuples then waits n·a ± τ·a, so its
  long-run rate lies in [1/(a(1+τ)), 1/(a(1−τ))] (both extremes are reached with
  bursts of one tuple; the semantics page's lower bound C/(C·a + τ·a) is the rate
  of full bursts only, which is not the smallest possible rate).

Everything is computed with exact fractions. Cycles are handled per strongly
connected component: largest flows are the limit of the iteration *down* from a sound
upper bound (σ · largest capacity), smallest flows the limit *up* from zero; largest
flows use σ_hi, smallest and nominal ones σ_lo. The limit is solved exactly (which
inputs are capped, then one sparse linear system whose elimination certifies that the
solution is that limit: docs/boundedness.md, "Cycles"); when no certificate comes out,
CYCLE_ROUNDS rounds of the iteration itself, sound after any number of rounds.
A bolt is `bounded` when its largest inflow is below its smallest capacity (a proof: see
docs/boundedness.md), `grows` when inflow exceeds capacity at nominal rates (τ = 0, no idling), `may-grow` otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import networkx as nx
from pydantic import BaseModel

from app.core.emission import sigma_bounds as sigma_bounds  # (also re-exported: its former home)
from app.core.topology import DEFAULT_STREAM, Bolt, Topology, require_annotated

Status = Literal["bounded", "may-grow", "grows"]
CYCLE_ROUNDS = 60
GUESS_SWEEPS = 400  # float sweeps that guess which bolts of a cycle are capped (checked exactly after)
FILL_PER_MEMBER = 64  # elimination entries per cycle member before the exact solve gives up (dense cycles)


def exact(value: float | int) -> Fraction:
    """The decimal a user typed, as an exact fraction (0.01 -> 1/100, not a binary float)."""
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


class BoltRates(BaseModel):
    """The rate check's figures for one bolt, in tuples per second."""

    name: str
    capacity_min: float
    capacity_max: float
    capacity_nominal: float
    inflow_min: float
    inflow_max: float
    inflow_nominal: float
    utilisation: float
    growth_nominal: float  # tuples/s the queue gains at nominal rates (0 when it keeps up)
    sigma: str = "1"  # the annotated σ, exactly
    sigma_effective: tuple[str, str] = ("1", "1")  # (σ_lo, σ_hi): exact long-run output ratios
    status: Status
    explanation: str
    # under failures (RateReport.failures; docs/boundedness.md, "Failures"), None: no bound
    inflow_failures: float | None = None  # largest inflow rate with replays (tuples/s)
    added_load: float | None = None  # of which replays add (tuples/s) over the failure-free largest inflow
    queue_bound: float | None = None  # the queue never exceeds this (tuples)
    lost_per_failure: float | None = None  # tuples one failure of this bolt loses at most (failing bolts)
    failures_note: str = ""  # one sentence about failures (empty when failures are off)


class RateReport(BaseModel):
    """The whole rate check; `suggested_parallelism` is None for a bolt no parallelism can fix (with
    failures on: none the check proves bounded with failures, `no_parallelism_reason`)."""

    bolts: dict[str, BoltRates]
    spout_rate_min: dict[str, float]
    spout_rate_max: dict[str, float]
    suggested_parallelism: dict[str, int | None]
    cyclic: bool
    # True when the statuses account for failures and replays (docs/model.md section 7): then
    # "bounded" holds in every run with failures, and the figures below are filled
    failures: bool = False
    replay_rate: dict[str, float | None] = {}  # spout -> replays added per second at most (None: no bound)
    replay_backlog: dict[str, float | None] = {}  # spout -> replays waiting at most (None: may grow)

    def to_public_json(self) -> dict:
        """The shape `stormbound check --json` prints (the failure figures only when failures are on)."""
        keys = ("capacity_min", "capacity_max", "inflow_min", "inflow_max", "utilisation", "status", "explanation")
        more = ("inflow_failures", "added_load", "queue_bound", "lost_per_failure", "failures_note")
        data: dict = {
            "bolts": {n: {**{k: getattr(b, k) for k in keys}, "sigma_effective": list(b.sigma_effective),
                          **({k: getattr(b, k) for k in more} if self.failures else {})}
                      for n, b in self.bolts.items()},
            "suggested_parallelism": self.suggested_parallelism,
        }
        if self.failures:
            data["failures"] = {"replay_rate": self.replay_rate, "replay_backlog": self.replay_backlog}
        return data

    def all_bounded(self, names: list[str] | None = None) -> bool:
        chosen = names if names is not None else list(self.bolts)
        return all(self.bolts[n].status == "bounded" for n in chosen)


class _Exact:
    """Exact per-bolt figures used by the report and by the boundedness proof."""

    def __init__(self, topo: Topology, parallelism: dict[str, int] | None = None):
        tau = exact(topo.settings.tolerance)
        idle = exact(topo.settings.max_idle_time)
        require_annotated(topo)  # placeholder values from an import would give meaningless figures
        par = parallelism or {}
        self.topo = topo
        self.spout_min: dict[str, Fraction] = {}
        self.spout_max: dict[str, Fraction] = {}
        self.spout_nominal: dict[str, Fraction] = {}
        for s in topo.spouts:
            period = 1 / exact(s.rate)
            self.spout_min[s.id] = 1 / (period * (1 + tau))
            self.spout_max[s.id] = 1 / (period * (1 - tau))
            self.spout_nominal[s.id] = exact(s.rate)
        self.cap_min: dict[str, Fraction] = {}
        self.cap_max: dict[str, Fraction] = {}
        self.cap_nominal: dict[str, Fraction] = {}
        self.sigma: dict[str, Fraction] = {}
        self.sigma_lo: dict[str, Fraction] = {}
        self.sigma_hi: dict[str, Fraction] = {}
        # per component, per output stream: (σ or ratio, σ_lo, σ_hi); a spout's default stream is its emissions
        self.streams: dict[str, dict[str, tuple[Fraction, Fraction, Fraction]]] = {}
        for s in topo.spouts:
            self.streams[s.id] = {name: (exact(r), *sigma_bounds(exact(r), s.burst, topo.settings.emission))
                                  for name, r in s.output_streams().items() if r is not None}
        for b in topo.bolts:
            c = par.get(b.id, b.parallelism)
            alpha = exact(b.alpha)
            self.cap_min[b.id] = c / (alpha * (1 + tau) + idle)
            self.cap_max[b.id] = c / (alpha * (1 - tau))
            self.cap_nominal[b.id] = c / alpha
            self.streams[b.id] = {name: (exact(v), *sigma_bounds(exact(v), c, topo.settings.emission))
                                  for name, v in b.output_streams().items() if v is not None}
            self.sigma[b.id], self.sigma_lo[b.id], self.sigma_hi[b.id] = self.streams[b.id][DEFAULT_STREAM]
        # what each bolt receives: its input streams, each once (Topology.inputs, shared with the network)
        received = topo.inputs()
        self.inputs: dict[str, list[tuple[str, str]]] = {b.id: received.get(b.id, []) for b in topo.bolts}
        graph = nx.DiGraph()
        graph.add_nodes_from(c.id for c in topo.components)
        graph.add_edges_from((src, b) for b, ins in self.inputs.items() for src, _ in ins)
        self.graph = graph
        self.cyclic = not nx.is_directed_acyclic_graph(graph)
        # every cycle solved exactly (no fallback to the finite iteration): the flows below the caps are then
        # linear in the spout rates (docs/boundedness.md, "Cycles"; app/core/headroom.py relies on it)
        self.cycles_solved = True
        self.in_max = self._inflows(self.spout_max, self.cap_max, from_above=True)
        self.in_min = self._inflows(self.spout_min, self.cap_min, from_above=False)
        self.in_nominal = self._inflows(self.spout_nominal, self.cap_nominal, from_above=False)

    def _outflows(self, ident: str, processed: Fraction, high: bool) -> dict[tuple[str, str], Fraction]:
        """Per output stream of `ident`: σ_hi (high) or σ_lo times the tuples it processes (or emits)."""
        return {(ident, name): (hi if high else lo) * processed for name, (_, lo, hi) in self.streams[ident].items()}

    def _inflows(self, spout_out: dict[str, Fraction], cap: dict[str, Fraction], from_above: bool,
                 high: bool | None = None) -> dict[str, Fraction]:
        """Inflow per bolt id; outflows use σ_hi from above, σ_lo from below (or σ_hi when `high`)."""
        high = from_above if high is None else high
        out: dict[tuple[str, str], Fraction] = {}
        for ident, rate in spout_out.items():
            out.update(self._outflows(ident, rate, high))
        inflow: dict[str, Fraction] = {}

        def received(m: str) -> Fraction:
            return sum((out.get(key, Fraction(0)) for key in self.inputs[m]), Fraction(0))

        condensed = nx.condensation(self.graph)
        for node in nx.topological_sort(condensed):
            members = [m for m in condensed.nodes[node]["members"] if m in cap]
            if not members:
                continue
            cyclic = len(members) > 1 or self.graph.has_edge(members[0], members[0])
            if cyclic:
                weights, ext = self._cycle_system(members, out, high)
                processed = _cycle_fixpoint(self.graph, members, weights, ext, cap, from_above)
                if processed is not None:
                    for m in members:
                        out.update(self._outflows(m, processed[m], high))
                    for m in members:
                        inflow[m] = received(m)
                    continue
            if cyclic:
                for m in members:
                    out.update(self._outflows(m, cap[m] if from_above else Fraction(0), high))
            if cyclic:
                self.cycles_solved = False
            rounds = CYCLE_ROUNDS if cyclic else 1
            for _ in range(rounds):
                changed = False
                for m in members:
                    total = received(m)
                    new_out = self._outflows(m, min(total, cap[m]), high)
                    inflow[m] = total
                    if any(out.get(key) != value for key, value in new_out.items()):
                        changed = True
                    out.update(new_out)
                if not changed:
                    break
            if cyclic and from_above:
                # one more pass so inflow reflects the final (still sound) outflows
                for m in members:
                    inflow[m] = received(m)
        return inflow

    def _cycle_system(self, members: list[str], out: dict[tuple[str, str], Fraction], high: bool
                      ) -> tuple[dict[str, dict[str, Fraction]], dict[str, Fraction]]:
        """One strongly connected component as y = min(e + W·y, c) in the tuples each member processes:
        W[m][u] = Σ of the ratios (σ_hi when `high`, else σ_lo) of u's streams that m receives, e[m] what m
        receives from outside the component (final already: components come in topological order)."""
        inside = set(members)
        weights: dict[str, dict[str, Fraction]] = {m: {} for m in members}
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


def _cycle_fixpoint(graph: nx.DiGraph, members: list[str], weights: dict[str, dict[str, Fraction]],
                    ext: dict[str, Fraction], cap: dict[str, Fraction], from_above: bool) -> dict[str, Fraction] | None:
    """The exact limit of the iteration of one strongly connected component, or None: per member, the
    tuples it processes per second.

    They are the fixpoint of y_m = min(e_m + Σ_u W_mu · y_u, c_m) (`_Exact._cycle_system`). A float
    iteration guesses which members are capped; the uncapped ones then solve a linear system exactly
    by elimination. The result is used only when it is a fixpoint (checked exactly) and the
    elimination's pivots are all positive, which proves that the fixpoint is the limit the iteration
    from above (`from_above`) or from zero would reach (docs/boundedness.md, "Cycles"). None: the
    caller iterates instead.
    """
    order = _sweep_order(graph, members, set(members))
    capped = _guess_capped(order, weights, ext, cap, from_above)
    if capped is None:
        return None
    if not from_above and _solve(order, weights, {m: Fraction(0) for m in order}, set(), cap) is None:
        return None  # the fixpoint may not be unique: only the iteration from zero is known to be sound
    for _ in range(4):  # a wrong guess (a float tie) is corrected from the exact solution
        y = _solve(order, weights, ext, capped, cap)
        if y is None:
            return None
        lin = {m: ext[m] + sum((w * y[u] for u, w in weights[m].items()), Fraction(0)) for m in order}
        over = {m for m in order if lin[m] > cap[m]}
        under = {m for m in capped if lin[m] < cap[m]}
        if not over - capped and not under:
            return y
        capped = (capped | over) - under
    return None


def _sweep_order(graph: nx.DiGraph, members: list[str], inside: set[str]) -> list[str]:
    """The members in depth-first order from one fed from outside, so one sweep follows the edges."""
    entry = next((m for m in members if any(p not in inside for p in graph.predecessors(m))), members[0])
    order = list(nx.dfs_preorder_nodes(graph.subgraph(members), source=entry))
    seen = set(order)
    return order + [m for m in members if m not in seen]


def _guess_capped(order: list[str], weights: dict[str, dict[str, Fraction]], ext: dict[str, Fraction],
                  cap: dict[str, Fraction], from_above: bool) -> set[str] | None:
    """The members whose inflow reaches their capacity at the limit, guessed with float sweeps (None: no guess)."""
    index = {m: i for i, m in enumerate(order)}
    try:
        rows = [([(index[u], float(w)) for u, w in weights[m].items()], float(ext[m]), float(cap[m])) for m in order]
    except OverflowError:
        return None
    y = [row[2] if from_above else 0.0 for row in rows]
    scale = max([*y, *(row[1] for row in rows), 1e-300])
    for _ in range(GUESS_SWEEPS):
        delta = 0.0
        for i, (into, ei, ci) in enumerate(rows):
            total = ei
            for j, w in into:
                total += w * y[j]
            new = total if total < ci else ci
            if abs(new - y[i]) > delta:
                delta = abs(new - y[i])
            y[i] = new
        if delta <= 1e-13 * scale:
            break
    return {m for m, (into, ei, ci) in zip(order, rows, strict=True)
            if ei + sum(w * y[j] for j, w in into) >= ci * (1 - 1e-12)}


def _solve(order: list[str], weights: dict[str, dict[str, Fraction]], const: dict[str, Fraction],
           capped: set[str], cap: dict[str, Fraction]) -> dict[str, Fraction] | None:
    """y_m = c_m for capped m, y_m = const_m + Σ_u W_mu · y_u for the others, exactly.

    Gaussian elimination in `order` on the sparse system; None when a pivot 1 − (self weight) is
    not positive (then I − W is not a nonsingular M-matrix: the uncapped part does not shrink
    around its cycles) or the elimination would fill in too much."""
    fixed = {m: cap[m] for m in capped}
    rows: dict[str, dict[str, Fraction]] = {}
    rhs: dict[str, Fraction] = {}
    users: dict[str, set[str]] = {m: set() for m in order}
    for m in order:
        if m in fixed:
            continue
        row: dict[str, Fraction] = {}
        rhs[m] = const[m]
        for u, w in weights[m].items():
            if u in fixed:
                rhs[m] += w * fixed[u]
            elif w:
                row[u] = row.get(u, Fraction(0)) + w
                users[u].add(m)
        rows[m] = row
    budget = FILL_PER_MEMBER * len(order) + 1000
    done: set[str] = set()
    eliminated: list[str] = []
    for v in order:
        if v in fixed:
            continue
        row = rows[v]
        pivot = 1 - row.pop(v, Fraction(0))
        if pivot <= 0:
            return None
        if pivot != 1:
            row = rows[v] = {p: w / pivot for p, w in row.items()}
            rhs[v] /= pivot
        done.add(v)
        eliminated.append(v)
        for u in users[v] - done:
            urow = rows[u]
            w = urow.pop(v)
            for p, wp in row.items():
                urow[p] = urow.get(p, Fraction(0)) + w * wp
                users[p].add(u)
                budget -= 1
            rhs[u] += w * rhs[v]
        if budget < 0:
            return None
    y = dict(fixed)
    for v in reversed(eliminated):
        y[v] = rhs[v] + sum((w * y[p] for p, w in rows[v].items()), Fraction(0))
    return y


def _fmt(x: Fraction | float) -> str:
    return f"{float(x):.3g}"


def _ratio_note(e: _Exact, ident: str) -> str:
    """Says which upstream bolts pass on more (or less) than σ per processed tuple."""
    notes = []
    for p, stream in e.inputs[ident]:
        sigma, lo, hi = e.streams[p].get(stream, (Fraction(0),) * 3)
        if p in e.sigma and (lo, hi) != (sigma, sigma):
            span = str(hi) if lo == hi else f"{lo}..{hi}"
            on = "" if stream == DEFAULT_STREAM else f" on stream '{stream}'"
            notes.append(f"{e.topo.component(p).name} emits {span}{on} per processed tuple in the long run, not its "
                         f"σ = {sigma} (emission 'dvert' rounds its carry up)")
    return ("; " + "; ".join(notes)) if notes else ""


def _own_ratio(name: str, e: _Exact, ident: str) -> str:
    lo, hi = e.sigma_lo[ident], e.sigma_hi[ident]
    if lo == hi == e.sigma[ident]:
        return ""
    span = str(hi) if lo == hi else f"{lo}..{hi}"
    return (f"; it passes on {span} tuples per processed tuple in the long run, not σ = {e.sigma[ident]} "
            "(emission 'dvert' rounds its carry up)")


def _explain(name: str, e: _Exact, ident: str, status: Status) -> str:
    return _explain_rates(name, e, ident, status) + _ratio_note(e, ident) + _own_ratio(name, e, ident)


def _explain_rates(name: str, e: _Exact, ident: str, status: Status) -> str:
    if status == "bounded":
        return (f"{name} can process at least {_fmt(e.cap_min[ident])} tuples/s and receives at most "
                f"{_fmt(e.in_max[ident])}, so its queue cannot grow without bound")
    if status == "grows":
        return (f"{name} can process {_fmt(e.cap_nominal[ident])} tuples/s at nominal timing but receives "
                f"{_fmt(e.in_nominal[ident])}: its queue grows by about "
                f"{_fmt(e.in_nominal[ident] - e.cap_nominal[ident])} tuples/s")
    return (f"{name} can process at most {_fmt(e.cap_min[ident])} tuples/s in its slowest timing "
            f"but may receive {_fmt(e.in_max[ident])}: some timings let its queue grow")


def _status(e: _Exact, ident: str) -> Status:
    if e.in_max[ident] < e.cap_min[ident]:
        return "bounded"
    if e.in_nominal[ident] > e.cap_nominal[ident]:
        return "grows"
    return "may-grow"


def bounded_bolts(topo: Topology, parallelism: dict[str, int] | None = None) -> dict[str, bool]:
    """Exact test, per bolt name: largest possible inflow < smallest possible capacity."""
    e = _Exact(topo, parallelism)
    return {b.name: e.in_max[b.id] < e.cap_min[b.id] for b in topo.bolts}


def margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]]:
    """Exact (largest inflow, smallest capacity) per bolt name, for proofs that cite the numbers."""
    e = _Exact(topo)
    return {b.name: (e.in_max[b.id], e.cap_min[b.id]) for b in topo.bolts}


@dataclass(frozen=True)
class LoadMargins:
    """The exact (inflow, capacity) pairs per bolt name that load factors are read from: `largest` (largest
    inflow, smallest capacity: bounded when below) and `nominal` (τ = 0, no idling: grows when above), and
    whether every cycle's flows were solved exactly (then every flow below the caps is linear in the spout
    rates: docs/boundedness.md, "Cycles")."""

    largest: dict[str, tuple[Fraction, Fraction]]
    nominal: dict[str, tuple[Fraction, Fraction]]
    cycles_solved: bool


def load_margins(topo: Topology) -> LoadMargins:
    """`margins` and `nominal_margins` from one exact rate check, with whether its cycles were solved exactly."""
    e = _Exact(topo)
    return LoadMargins({b.name: (e.in_max[b.id], e.cap_min[b.id]) for b in topo.bolts},
                       {b.name: (e.in_nominal[b.id], e.cap_nominal[b.id]) for b in topo.bolts}, e.cycles_solved)


def nominal_margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]]:
    """Exact (inflow, capacity) per bolt name at nominal timing (τ = 0, no idling): it grows when inflow > capacity."""
    e = _Exact(topo)
    return {b.name: (e.in_nominal[b.id], e.cap_nominal[b.id]) for b in topo.bolts}


def _needed(topo: Topology, bolt: Bolt, inflow: Fraction) -> int:
    """The fewest executors whose smallest capacity, p / (α(1+τ) + max_idle), exceeds `inflow`."""
    slow = exact(bolt.alpha) * (1 + exact(topo.settings.tolerance)) + exact(topo.settings.max_idle_time)
    return math.floor(inflow * slow) + 1


def _suggest(topo: Topology) -> dict[str, int | None]:
    """Smallest parallelism per bolt that makes every queue bounded (None: no value can)."""
    # Once every bolt is bounded, each passes on σ·inflow: flows no longer depend on
    # parallelism, so the needed capacity of each bolt follows from the uncapped flows.
    probe = _Exact(topo, {b.id: 10**12 for b in topo.bolts})
    uncapped = probe._inflows(probe.spout_max, probe.cap_max, from_above=False, high=True)
    suggestion: dict[str, int | None] = {}
    parallelism: dict[str, int] = {}
    for b in topo.bolts:
        needed = _needed(topo, b, uncapped[b.id])
        if needed >= 10**9:
            suggestion[b.name] = None
            parallelism[b.id] = b.parallelism
        else:
            suggestion[b.name] = max(1, needed)
            parallelism[b.id] = max(1, needed)
    # confirm exactly; inside cycles the estimate comes from below, so raise until proven
    ok = bounded_bolts(topo, parallelism)
    for round_ in range(60):
        failing = [b for b in topo.bolts if suggestion[b.name] is not None and not ok[b.name]]
        if not failing:
            break
        for b in failing:  # small steps first (keeps the answer minimal), then faster
            step = 1 if round_ < 30 else math.ceil(parallelism[b.id] * 0.1)
            parallelism[b.id] += step
            suggestion[b.name] = parallelism[b.id]
        ok = bounded_bolts(topo, parallelism)
    for b in topo.bolts:
        if suggestion[b.name] is not None and not ok[b.name]:
            suggestion[b.name] = None
    return suggestion


FAILURE_SUGGEST_ROUNDS = 24  # raises of the failure-free suggestion (each by a quarter) before giving up


def _suggest_with_failures(topo: Topology, base: dict[str, int | None]) -> dict[str, int | None]:
    """With failures on: the failure-free suggestion `base`, raised (the bolts the check does not yet
    prove, by a quarter each round) until the rate check under failures proves every bolt bounded
    (app/core/replay_check.py), then lowered to what the proven inflows with replays need, for as
    long as the check still proves it; None for a bolt it proves with no value tried. Each answer
    is one the check proved, not always the smallest: a larger batch loses more at a failure, so
    the proof is not monotone in the parallelism."""
    from app.core.failures import failure_model
    from app.core.replay_check import failure_check

    def checked(parallelism: dict[str, int]) -> tuple[list[str], bool, dict[str, int]]:
        """(the bolts not proven, cyclic, the parallelism each proven inflow with replays needs)."""
        trial = topo.model_copy(update={"bolts": [b.model_copy(update={"parallelism": parallelism[b.name]})
                                                  for b in topo.bolts]})
        e, model = _Exact(trial), failure_model(trial)
        assert model is not None  # parallelism leaves min_ttf and the settings alone
        check = failure_check(trial, e, model, {b.id: _status(e, b.id) for b in trial.bolts},
                              lambda t: _Exact(t).in_nominal, nominal_estimate=False)  # bounded or not is all we read
        needed = {b.name: _needed(trial, b, inflow) for b in trial.bolts
                  if (inflow := check.bolts[b.id].inflow) is not None}  # as in _suggest, with the replays
        return [b.name for b in trial.bolts if check.bolts[b.id].status != "bounded"], e.cyclic, needed

    start = {b.name: base[b.name] or b.parallelism for b in topo.bolts}
    parallelism = dict(start)
    for _ in range(FAILURE_SUGGEST_ROUNDS):
        short, cyclic, needed = checked(parallelism)
        if not short or any(base[n] is None for n in short) or cyclic:
            break  # proven; or a bolt no parallelism bounds, or a cycle (never proven with failures)
        for name in short:
            parallelism[name] += max(1, parallelism[name] // 4)
    if short:
        return {b.name: None if base[b.name] is None or b.name in short else parallelism[b.name] for b in topo.bolts}
    for _ in range(FAILURE_SUGGEST_ROUNDS):  # down to what the proven inflows need, while still proven
        lower = {n: max(start[n], min(p, needed.get(n, p))) for n, p in parallelism.items()}
        if lower == parallelism:
            break
        short, _cyclic, lower_needs = checked(lower)
        if not short:
            parallelism, needed = lower, lower_needs
            continue
        lowered = False  # all at once loses the proof: one bolt at a time
        for name in [n for n in parallelism if lower[n] < parallelism[n]]:
            short, _cyclic, trial_needs = checked({**parallelism, name: lower[name]})
            if not short:
                parallelism, needed, lowered = {**parallelism, name: lower[name]}, trial_needs, True
        if not lowered:
            break
    return {b.name: parallelism[b.name] if base[b.name] is not None else None for b in topo.bolts}


def no_parallelism_reason(report: RateReport) -> str:
    """Why a bolt's suggestion is None, in the words `check`, `repair` and the GUI use."""
    if report.failures:
        return ("σ or a cycle amplifies its inflow, or with failures the rate check proves no parallelism "
                "tried bounded: docs/boundedness.md, \"Failures\"")
    return "σ or a cycle amplifies its inflow"


def rate_check(topo: Topology, *, suggest: bool = True) -> RateReport:
    """The instant fluid analysis of every bolt, with explanations and a repair suggestion.

    With a failure model (`failure_model(topo)` not None) the statuses account for failures and
    replays (app/core/replay_check.py), `failures` is True and the suggestion is one the check
    proves bounded with failures; without, nothing changes. suggest=False leaves
    `suggested_parallelism` empty (the canvas colours bolts after every edit and needs no
    suggestion: with failures it costs several checks)."""
    from app.core.failures import failure_model

    e = _Exact(topo)
    model = failure_model(topo)
    report = _fluid_report(topo, e, suggest)
    if model is None:
        return report
    from app.core.replay_check import failure_check

    check = failure_check(topo, e, model, {b.id: report.bolts[b.name].status for b in topo.bolts},
                          lambda t: _Exact(t).in_nominal)

    def num(x: Fraction | None) -> float | None:
        return None if x is None else float(x)

    for b in topo.bolts:
        f, rates = check.bolts[b.id], report.bolts[b.name]
        report.bolts[b.name] = rates.model_copy(update=dict(
            status=f.status, inflow_failures=num(f.inflow), added_load=num(f.added), queue_bound=num(f.queue),
            lost_per_failure=num(f.lost), failures_note=f.note,
            explanation=(rates.explanation if f.status == rates.status
                         else f"{f.note} (without failures: {rates.explanation})")))
    return report.model_copy(update=dict(
        failures=True,
        suggested_parallelism=_suggest_with_failures(topo, report.suggested_parallelism) if suggest else {},
        replay_rate={s.name: num(check.spouts[s.id].replay_rate) for s in topo.spouts},
        replay_backlog={s.name: num(check.spouts[s.id].backlog) for s in topo.spouts}))


def failure_margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]] | None:
    """Exact (largest inflow with replays, smallest capacity) per bolt name that has a bound under failures,
    for proofs that cite the numbers (None when no bolt can fail: then `margins` is the one)."""
    from app.core.failures import failure_model
    from app.core.replay_check import failure_check

    model = failure_model(topo)
    if model is None:
        return None
    e = _Exact(topo)
    status = {b.id: _status(e, b.id) for b in topo.bolts}
    check = failure_check(topo, e, model, status, lambda t: _Exact(t).in_nominal)
    return {b.name: (inflow, e.cap_min[b.id]) for b in topo.bolts
            if (inflow := check.bolts[b.id].inflow) is not None}


def _fluid_report(topo: Topology, e: _Exact, suggest: bool = True) -> RateReport:
    bolts: dict[str, BoltRates] = {}
    for b in topo.bolts:
        status = _status(e, b.id)
        cap_nominal = e.cap_nominal[b.id]
        bolts[b.name] = BoltRates(
            name=b.name,
            capacity_min=float(e.cap_min[b.id]),
            capacity_max=float(e.cap_max[b.id]),
            capacity_nominal=float(cap_nominal),
            inflow_min=float(e.in_min[b.id]),
            inflow_max=float(e.in_max[b.id]),
            inflow_nominal=float(e.in_nominal[b.id]),
            utilisation=float(e.in_nominal[b.id] / cap_nominal),
            growth_nominal=float(max(Fraction(0), e.in_nominal[b.id] - cap_nominal)),
            sigma=str(e.sigma[b.id]),
            sigma_effective=(str(e.sigma_lo[b.id]), str(e.sigma_hi[b.id])),
            status=status,
            explanation=_explain(b.name, e, b.id, status),
        )
    return RateReport(
        bolts=bolts,
        spout_rate_min={s.name: float(e.spout_min[s.id]) for s in topo.spouts},
        spout_rate_max={s.name: float(e.spout_max[s.id]) for s in topo.spouts},
        suggested_parallelism=_suggest(topo) if suggest else {},
        cyclic=e.cyclic,
    )


# A bolt may wait up to max_idle_time before taking waiting tuples, so its smallest capacity is
# C / (α(1+τ) + max_idle). Above α/10 the idle wait costs the bolt more capacity than the default
# tolerance τ = 0.1 does (docs/model.md, "Choosing max_idle_time").
IDLE_SHARE_LIMIT = Fraction(1, 10)


class IdleWarning(BaseModel):
    """`settings.max_idle_time` is large against the α of some bolts (`check` says so on stderr and in --json)."""

    field: str = "settings.max_idle_time"
    max_idle_time: float
    threshold_s: float  # IDLE_SHARE_LIMIT × the smallest α: the largest max_idle_time that does not warn
    bolts: list[str]  # the bolts whose α/10 is below max_idle_time, fastest first
    message: str


def idle_warning(topo: Topology) -> IdleWarning | None:
    """A warning when max_idle_time exceeds α/10 of some bolt (None when it does not)."""
    idle = exact(topo.settings.max_idle_time)
    alphas = {b.name: exact(b.alpha) for b in topo.bolts if "alpha" not in b.unannotated}
    fast = sorted((a, n) for n, a in alphas.items() if idle > a * IDLE_SHARE_LIMIT)
    if not fast:
        return None
    alpha, name = fast[0]
    threshold = alpha * IDLE_SHARE_LIMIT
    tau = exact(topo.settings.tolerance)
    lost = idle / (alpha * (1 + tau) + idle)
    more = f" and {len(fast) - 5} more" if len(fast) > 5 else ""
    named = ", ".join(f"{n} (α = {_fmt(a)} s)" for a, n in fast[:5]) + more
    message = (f"max_idle_time = {_fmt(idle)} s is more than α/10 of {named}: the model lets {name} wait that long "
               f"before each batch, which costs it {float(lost):.0%} of its smallest capacity; unless it really "
               f"idles that long, set max_idle_time to at most {_fmt(threshold)} s (α/10 of the fastest bolt; "
               f"docs/model.md)")
    return IdleWarning(max_idle_time=float(idle), threshold_s=float(threshold), bolts=[n for _, n in fast],
                       message=message)
