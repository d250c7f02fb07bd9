"""Arrival curves: how many tuples a component can emit in any window, under failures and replays.

The rate check without failures only needs long-run rates (docs/boundedness.md). With failures
(docs/model.md section 7) a bolt's losses depend on its queue at the failure, so bounds on
bursts are needed too. Every flow here is an *arrival curve*: in every closed window of length
w ≥ 0, at most min_k (ρ_k·w + b_k) tuples, a minimum of affine pieces (ρ_k, b_k), exact
fractions (app/core/rates/arrival.py). `FailureBounds` derives, in one pass over an acyclic topology,
the curve of every spout and bolt stream, each bolt's queue bound, and what one failure of a bolt
loses, and nets what a failing bolt passes on against its losses (app/core/rates/netting.py); the
replays those losses add to the spouts feed back into the spouts' curves, so the pass is
iterated until the replays it assumes are at least those it derives (a post-fixpoint, which
makes every bound hold in every run by induction over positions). docs/boundedness.md,
"Failures", proves each step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import TypeVar

import networkx as nx

from app.core.emission import carry_graph, carry_limit
from app.core.failures import FailureModel
from app.core.rates.arrival import UNBOUNDED_CURVE, ZERO, Curve, pruned
from app.core.rates.netting import Net, Netting
from app.core.rates.paced import Paced, paced_cycle
from app.core.rates.tails import held_over_cycles, own_queue, storm_loss
from app.core.rates.through import Stage, through_cycle

_Flow = TypeVar("_Flow", Curve, Net)  # a flow's curve, or its net form (step 7)
ROUNDS = 200  # iterations of the replay fixpoint before giving up (then nothing it feeds is proven)
_GRID = 2**32  # candidates of the fixpoint are rounded up to this grid to keep the fractions small


def stream_excess(sigma: Fraction, hi: Fraction, take_max: int, rule: str) -> Fraction:
    """H: over any stretch of a run without a reset, emitted ≤ σ_hi·processed + H on a stream of ratio σ.

    "exact": Σ E = σ(Σ P + c_start − c_end) with σ·c < 1, so H = 1. "dvert": H = the largest excess
    of a path of the carry automaton, max_c h(c) with h(c) = max(0, max over moves (E − σ_hi·P + h(c'))),
    finite because no cycle has a ratio above σ_hi; batches above den(σ) have a smaller twin with
    as large an excess (docs/boundedness.md, "Failures"). When σ_hi is the coarse 2σ (automaton too
    large), Σ E < σ·c_start + 2σ·Σ P, so H = σ·(⌈1/σ⌉ + 1)."""
    if sigma == 0:
        return Fraction(0)
    if rule == "exact" or sigma.denominator == 1:
        return Fraction(1)
    if hi == 2 * sigma:
        return sigma * carry_limit(sigma, "dvert")
    edges = carry_graph(sigma, min(take_max, sigma.denominator), "dvert")
    h = {c: Fraction(0) for c in edges}
    for _ in range(len(edges) + 1):
        new = {c: max([Fraction(0), *(out - hi * batch + h[nxt] for batch, out, nxt in moves)])
               for c, moves in edges.items()}
        if new == h:
            return max(h.values())
        h = new
    return sigma * carry_limit(sigma, "dvert")  # (not reached: longest paths settle within |states| rounds)


@dataclass(frozen=True)
class StreamBound:
    """One output stream: emitted ≤ hi·(what it processes or receives) + H, plus H per reset (dvert)."""

    hi: Fraction
    excess: Fraction
    reset_cost: Fraction  # added by each failure of the bolt (the carry restarts from 0); 0 under "exact"


@dataclass
class Bounds:
    """One pass: every curve and bound, given the replays each spout may receive."""

    stream: dict[str, dict[str, Curve]] = field(default_factory=dict)  # component -> stream -> curve
    inflow: dict[str, Curve] = field(default_factory=dict)  # bolt -> what it receives
    queue: dict[str, Fraction | None] = field(default_factory=dict)  # bolt -> queue bound (None: none)
    lost: dict[str, Fraction | None] = field(default_factory=dict)  # failing bolt -> tuples one failure loses
    backlog: dict[str, Fraction | None] = field(default_factory=dict)  # spout -> replay backlog bound
    replays: dict[str, Curve] = field(default_factory=dict)  # spout -> replays added (the assumption)
    storm: dict[str, Storm] = field(default_factory=dict)  # failing bolt -> its storm, where that bounds `lost`
    netted: set[str] = field(default_factory=set)  # failing bolts whose output rate step 7 (netting) lowered
    paced: dict[str, Paced] = field(default_factory=dict)  # failing bolt -> its paced cycle bound, where it applies


@dataclass(frozen=True)
class Storm:
    """One failure of a bolt fed directly by an at-once spout, replays lost again included (docs/boundedness.md,
    "Failures", "At once: a failure's storm")."""

    spout: str  # the spout whose emissions it receives directly
    emissions: int  # m: the spout's emissions at most while the bolt is down
    held: Fraction | None  # X: its queue and batch at a failure, at most (None: only counted with the others' replays)
    lost: Fraction  # everything one failure loses, the storm included
    queue: Fraction | None = None  # its own queue, at most: its pending tuples (own replays counted once)
    quiet: Fraction | None = None  # the long-run rate of what it receives, its own replays aside


@dataclass(frozen=True)
class Component:
    """What the pass needs of one component (exact figures from the rate check)."""

    ident: str
    kind: str
    inputs: tuple[tuple[str, str], ...]
    streams: dict[str, StreamBound]
    take: int  # C_TAKE of a bolt, C_EMIT of a spout
    rate_max: Fraction  # spout: 1/(a(1−τ)); bolt: C/(α(1−τ))
    rate_min: Fraction  # spout: 1/(a(1+τ)); bolt: C/(α(1+τ) + max_idle)
    busy: Fraction  # spout: the longest gap C_EMIT·a(1+τ); bolt: the longest phase α(1+τ)
    slowest_take: Fraction = Fraction(0)  # bolt: L = α(1+τ) + max_idle, the longest wait between takes
    held: Fraction = Fraction(0)  # bolt: what a count window holds below a full batch beyond Q₀ (max(Q₀, C−1) − Q₀)
    gap: Fraction | None = None  # a duration window's timer: G, the longest time from an arrival to its take
    hold: Fraction | None = None  # a timer: L − S + 2G, the longest a tuple stays unacked (None: no bound, mixed)
    exact: dict[str, Fraction] = field(default_factory=dict)  # bolt: stream -> σ where E = σ(c + P − c′) holds


class FailureBounds:
    """The bounds of docs/boundedness.md, "Failures", for an acyclic topology."""

    def __init__(self, components: list[Component], graph: nx.DiGraph, model: FailureModel, init_queue: int,
                 names: dict[str, str] | None = None):
        self.names = names or {}
        self.order = [c for c in nx.topological_sort(graph)]
        self.comp = {c.ident: c for c in components}
        self.model = model
        self.q0 = Fraction(init_queue)
        self.period = {j: ttf + model.min_reboot for j, ttf in model.min_ttf.items()}
        self.fed: dict[str, list[str]] = {c.ident: [] for c in components if c.kind == "spout"}
        for j in model.min_ttf:
            for s in model.impact.get(j, {}):
                self.fed[s].append(j)
        self.rounds = 0
        self.reason = ""

    def solve(self) -> Bounds | None:
        """The pass at a post-fixpoint of the replays (None: none found; `reason` says why). Paced, a failing bolt
        that only the curves leave without a loss bound gets one per failure cycle, over the losses' fixpoint."""
        if self.model.replay == "none":
            return self.run({s: ZERO for s in self.fed})
        if self.model.replay == "at-once":
            return self._solve_losses()
        return _solve_paced(self)

    def _solve_curves(self) -> Bounds | None:
        """Paced: the fixpoint over the spouts' replay curves."""
        replays = {s: ZERO for s in self.fed}
        for self.rounds in range(1, ROUNDS + 1):
            derived = self.derive(replays)
            inflated = {s: _round_up(c.scaled(1 + Fraction(1, 256), Fraction(1, 256), Fraction(1, 256)))
                        for s, c in derived.items()}
            for candidate in (derived, inflated):  # a post-fixpoint above the iterates (they rise towards it)
                if _below(self.derive(candidate), candidate):
                    return _netted(self, candidate)
            if _below(derived, replays):  # (no assumption is ever needed above "no bound": it is one)
                return _netted(self, replays)
            replays = {s: _round_up(c) for s, c in derived.items()}
        self.reason = f"the replays found no fixpoint in {ROUNDS} rounds (their feedback does not settle)"
        return None

    def _solve_losses(self) -> Bounds | None:
        """The same fixpoint over the loss per failure of each failing bolt (the replays added follow from it, step 5),
        netted with them (step 7); at once, so that a failure's storm can be bounded apart from the others'
        (docs/boundedness.md, "Failures", "At once: a failure's storm")."""
        losses: dict[str, Fraction | None] = {j: Fraction(0) for j in self.model.min_ttf}
        for self.rounds in range(1, ROUNDS + 1):
            derived = self._lost(losses)
            inflated = {j: None if v is None else _grid_up(v * (1 + Fraction(1, 256)) + Fraction(1, 256))
                        for j, v in derived.items()}
            for candidate in (derived, inflated):
                if _at_most(self._lost(candidate), candidate):
                    return self.run(self.added(candidate), candidate, candidate)
            if _at_most(derived, losses):
                return self.run(self.added(losses), losses, losses)
            losses = {j: None if v is None else _grid_up(v) for j, v in derived.items()}
        self.reason = f"the replays found no fixpoint in {ROUNDS} rounds (their feedback does not settle)"
        return None

    def _lost(self, losses: dict[str, Fraction | None]) -> dict[str, Fraction | None]:
        """The loss per failure of every failing bolt in a pass that assumes `losses`."""
        run = self.run(self.added(losses), losses, losses)
        for j in self.model.min_ttf:
            if run.lost[j] is None and any(j in fed for fed in self.fed.values()):
                self.reason = (f"the queue of {self.names.get(j, j)} is not bounded, so neither is what one of "
                               "its failures loses")
        return dict(run.lost)

    def added(self, losses: dict[str, Fraction | None], but: str | None = None) -> dict[str, Curve]:
        """Step 5: the replays added at each spout when every failure of each failing bolt j loses at most
        losses[j] (None: no bound); `but`: leave that bolt's failures out."""
        result: dict[str, Curve] = {}
        for s, failing in self.fed.items():
            rate, burst = Fraction(0), Fraction(0)
            for j in failing:
                if j == but:
                    continue
                lost = losses[j]
                if lost is None:
                    break
                rate += lost / self.period[j]
                burst += lost * (1 + self.model.max_reboot / self.period[j])
            else:
                result[s] = Curve.affine(rate, burst)
                continue
            result[s] = UNBOUNDED_CURVE
        return result

    def derive(self, replays: dict[str, Curve]) -> dict[str, Curve]:
        """The replays the losses of a pass under `replays` add to each spout (no pieces: no bound, when
        a failing bolt whose trees reach the spout has no queue bound; a paced spout still emits at most
        twice its fresh tuples)."""
        run = self.run(replays)
        for failing in self.fed.values():
            unbounded = [j for j in failing if run.lost[j] is None]
            if unbounded:
                j = unbounded[0]
                self.reason = (f"the queue of {self.names.get(j, j)} is not bounded, so neither is what one of "
                               "its failures loses")
        return self.added(run.lost)

    def run(self, replays: dict[str, Curve], losses: dict[str, Fraction | None] | None = None,
            nets: dict[str, Fraction | None] | None = None) -> Bounds:
        """Every curve and bound of one pass, assuming each spout's added replays obey `replays`; `losses`: the loss
        per failure that `replays` follows from (a failure's storm, a paced cycle); `nets`: losses per failure that
        hold with `replays`, to net what failing bolts pass on (step 7, app/core/rates/netting.py)."""
        out = Bounds(replays=replays)
        mode = self.model.replay
        net = None if nets is None or mode == "none" else Netting(self.fed, nets, self.period, self.model.max_reboot,
                                                                   out.backlog)
        for ident in self.order:
            c = self.comp[ident]
            if c.kind == "spout":
                total, out.backlog[ident] = self._spout(c, replays[ident], mode)
                out.stream[ident] = _spouted(c, total)
                if net is not None:
                    net.streams[ident] = _spouted(c, net.spout(ident, Curve.affine(c.rate_max, c.take)))
                continue
            inflow = ZERO
            for src, stream in c.inputs:
                inflow = inflow.plus(out.stream[src].get(stream, ZERO))
            if net is not None:
                inflow = inflow.meet(net.inflow(ident, c.inputs, out.stream))
            out.inflow[ident] = inflow
            if c.gap is not None:  # a timer (docs/boundedness.md, "Failures through a timer")
                out.stream[ident] = self._streams(c, self._timer(c, inflow, out))
                continue
            excess = inflow.excess(c.rate_min)
            queue = None if excess is None else self.q0 + c.held + excess + c.take
            out.queue[ident] = queue
            if ident in self.model.min_ttf:
                reach = inflow.at(self.model.max_reboot)
                lost = None if queue is None or reach is None else queue + c.take + reach
                sharp = self.sharp(c, out, inflow)
                if sharp is not None and (lost is None or sharp < lost):
                    lost = sharp
                storm = None if losses is None or mode != "at-once" else self.storm(c, out, losses)
                if storm is not None and (lost is None or storm.lost < lost):
                    lost, out.storm[ident] = storm.lost, storm
                paced = None if losses is None or mode != "paced" else self.paced(c, losses, inflow)
                if paced is not None:
                    out.paced[ident], lost = paced, paced.lost if lost is None else min(lost, paced.lost)
                    queue = paced.held if queue is None else min(queue, paced.held)
                    out.queue[ident] = queue
                    backlog = out.backlog.get(paced.spout)
                    cap = max(paced.recovered, paced.held)
                    out.backlog[paced.spout] = cap if backlog is None else min(backlog, cap)
                out.lost[ident] = lost
            processed = Curve.affine(c.rate_max, c.take)  # one batch per phase of at least α(1−τ)
            fails = ident in self.model.min_ttf
            if queue is not None and fails:  # the queue at the window's start, then what arrives
                processed = processed.meet(inflow.shifted(c.busy, queue))
            elif queue is not None:  # never fails: the burst counts once (docs/boundedness.md, "Every run" 4)
                processed = processed.meet(pruned(
                    (r, b + self.q0 + c.held + c.take + r * c.slowest_take) for r, b in inflow.pieces
                    if r <= c.rate_min
                ).shifted(c.busy))
            out.stream[ident] = self._streams(c, processed)
            if net is not None and queue is not None and not c.held:  # step 7: what it passes on, netted
                net.streams[ident] = self._streams(c, net.processed(ident, queue + c.take, fails))
                out.stream[ident] = net.passed(ident, out.stream[ident], out.netted if fails else None)
        return out

    def _streams(self, c: Component, processed: _Flow) -> dict[str, _Flow]:
        """A bolt's output curves from what it processes (step 6: σ_hi·processed + H, and H per failure)."""
        period = self.period.get(c.ident)
        return {name: _emitted(processed, sb, period) for name, sb in c.streams.items()}

    def _timer(self, c: Component, inflow: Curve, out: Bounds) -> Curve:
        """A duration window's queue, loss per failure (worker deaths) and what it processes: every tuple is taken
        within G of its arrival and emitted within α(1+τ) more, acked within its hold; no capacity enters."""
        assert c.gap is not None
        reach = inflow.at(c.gap)
        out.queue[c.ident] = None if reach is None else self.q0 + reach
        if c.ident in self.model.min_ttf:  # all it holds unacked (queue, run, windows), then what arrives while down
            held = None if c.hold is None else inflow.at(c.hold + self.model.max_reboot)
            out.lost[c.ident] = None if held is None else self.q0 + held
        return inflow.shifted(c.gap + c.busy, self.q0)

    def _spout(self, c: Component, added: Curve, mode: str) -> tuple[Curve, Fraction | None]:
        """A spout's emissions (fresh and replayed) and the bound of its replay backlog."""
        fresh = Curve.affine(c.rate_max, c.take)
        if mode == "none" or added == ZERO:
            return fresh, Fraction(0)
        if mode == "paced":  # a replay per fresh tuple at most; the backlog drains below the slowest rate
            total = fresh.scaled(Fraction(2))
            drain = added.excess(c.rate_min)
            if drain is None:
                return total, None
            # replayed in a window <= added since the backlog last emptied - the fresh tuples since then + C_EMIT
            (rate, burst), = added.pieces
            return total.meet(fresh.plus(Curve.affine(rate, burst + c.take))), c.take + drain
        if not added.bounded:  # at-once: the whole backlog, added since the previous emission, goes out
            return UNBOUNDED_CURVE, None
        return fresh.plus(added.shifted(c.busy)), added.at(c.busy)

    def sharp(self, c: Component, out: Bounds, inflow: Curve) -> Fraction | None:
        """What one failure of bolt c loses, counted by emissions where paced or non-replaying spouts feed it directly
        (None: the argument does not apply). docs/boundedness.md, "Failures", "Loss per failure, by emissions": its
        queue and batch X at the failure, then at most m_s = ⌈max_reboot/(a(1−τ))⌉ emissions of each such spout s
        while it is down, each of at most C_EMIT fresh tuples (and as many replays, paced), and what its other inputs
        bring in max_reboot."""
        # (c takes as docs/model.md 2.2 says: a count window (held) takes otherwise; a duration window's timer has its
        # own branch in `run`, `_timer`, and never comes here)
        if c.held or self.model.replay == "at-once":
            return None
        per = 2 if self.model.replay == "paced" else 1
        direct = [(src, st) for src, st in c.inputs if self.comp[src].kind == "spout"]
        if not direct or any(st != "default" for _, st in direct):
            return None
        others = _others(c, out, direct)
        if not others.bounded:
            return None

        def spouts(w: Fraction, closed: bool) -> Fraction:  # emissions at least a(1−τ) apart, in a window of w
            count = 0
            for s, _ in direct:
                r = w * self.comp[s].rate_max
                count += per * self.comp[s].take * (math.floor(r) + 1 if closed else math.ceil(r))
            return Fraction(count)

        def arrivals(w: Fraction) -> Fraction:
            stairs, at = spouts(w, True) + (others.at(w) or 0), inflow.at(w)
            return stairs if at is None else min(at, stairs)

        held = inflow.shifted(c.busy).excess(c.rate_min)
        found = [] if held is None else [Fraction(math.floor(self.q0 + c.take + held))]
        if self.q0 == 0 and arrivals(c.slowest_take) < c.take + 1:  # every take clears the queue
            found.append(Fraction(math.floor(arrivals(c.slowest_take + c.busy))))
        reach = others.at(self.model.max_reboot)
        if not found or reach is None:
            return None
        return min(found) + spouts(self.model.max_reboot, False) + reach

    def paced(self, c: Component, losses: dict[str, Fraction | None], inflow: Curve = ZERO) -> Paced | None:
        """Failing bolt c's bounds per failure cycle when a paced spout alone feeds it, directly on its `default`
        stream or through bolts (`inflow`: what c receives), None when the argument does not apply or proves nothing
        (docs/boundedness.md, "Failures", "Paced: the backlog over a failure cycle", "Paced: through bolts")."""
        if c.held or c.gap is not None or c.ident not in self.model.min_ttf:
            return None
        through = len(c.inputs) != 1 or self.comp[c.inputs[0][0]].kind != "spout"
        return _through(self, c, losses, inflow) if through else _direct(self, c, losses)

    def storm(self, c: Component, out: Bounds, losses: dict[str, Fraction | None]) -> Storm | None:
        """What one failure of bolt c loses when an at-once spout s feeds it directly, the replays it loses again
        while down included (None: the argument does not apply). docs/boundedness.md, "Failures", "At once: a
        failure's storm", proves each figure: m emissions of s while c is down, each re-sending what c lost since
        the one before; c's queue and batch at a failure X, drained since the last failure's tail; the others'
        replays ext and c's other inputs reach, counted in full."""
        direct = [(src, st) for src, st in c.inputs if self.comp[src].kind == "spout"]
        if len(direct) != 1 or direct[0][1] != "default" or c.held:
            return None
        s = direct[0][0]
        sp = self.comp[s]
        gap = self.model.min_ttf[c.ident] - sp.busy  # w0: a failure comes at least this long after the tail
        if gap < c.busy:
            return None
        others = _others(c, out, direct)
        ext = self.added(losses, but=c.ident).get(s, ZERO)  # the replays of every other bolt's failures at s
        if not others.bounded or not ext.bounded:
            return None
        down = self.model.max_reboot
        quiet = others.plus(Curve.affine(sp.rate_max, sp.take)).plus(ext.shifted(sp.busy))  # c's inflow, no own replays
        m = math.ceil(down * sp.rate_max)  # emissions of s at most in a half-open window of length max_reboot
        reach, ext_in = others.at(down), ext.at(sp.busy + down)
        held = quiet.shifted(c.busy).excess(c.rate_min)  # sup over D ≥ α(1+τ) of quiet(D) − c·(D − α(1+τ))
        after = quiet.shifted(gap).excess(c.rate_min)
        if held is None or after is None or reach is None or ext_in is None:
            return None
        rest = self.q0 + c.take + reach + m * sp.take + ext_in  # the tail of a failure is at most X + rest − q0 − C
        found = []
        x = Fraction(math.floor(self.q0 + c.take + held))  # X: an integer
        if rest + x + after - c.rate_min * (gap - c.busy) <= x:  # the last failure's tail drained by the next one
            found.append(x)
        span = c.slowest_take + c.busy  # a tuple is out within L + α(1+τ) once every take clears the queue
        few = quiet.at(c.slowest_take)
        if self.q0 == 0 and few is not None and few < c.take + 1 and gap >= c.busy + span:
            tight = Fraction(math.floor(quiet.at(span) or 0))
            late = quiet.shifted(gap - span).excess(c.rate_min)
            if late is not None and rest + tight + late - c.rate_min * (gap - span - c.busy) < 1:
                found.append(tight)  # every take clears the queue well before each failure
        base = self.q0 + c.take  # over several cycles, no drained tail ("At once: tails that drain over ...")
        over = partial(held_over_cycles, rate=c.rate_min, busy=c.busy, cycle=self.model.min_ttf[c.ident] + down,
                       gain=c.rate_min * (gap - c.busy) - c.take, base=base)
        found += [x for x in (over(quiet),) if x is not None]
        joint = over(others.plus(Curve.affine(sp.rate_max, sp.take)).plus(ext.shifted(sp.busy + down)))
        lost = storm_loss(found, joint, m, reach, ext_in, sp.take)
        at_failure = min(found, default=None)
        queue = None if at_failure is None else own_queue(quiet, c.rate_min, base + held, at_failure,
                                                          down + sp.busy + c.busy + c.slowest_take)
        return None if lost is None else Storm(s, m, at_failure, lost, queue, quiet.rate)


def _direct(fb: FailureBounds, c: Component, losses: dict[str, Fraction | None]) -> Paced | None:
    """"Paced: the backlog over a failure cycle": a paced spout S feeds failing bolt c directly."""
    (s, stream), = c.inputs
    sp = fb.comp[s]
    ext = fb.added(losses, but=c.ident).get(s, ZERO)  # the replays of every other bolt's failures at s
    if sp.kind != "spout" or stream != "default" or len(ext.pieces) != 1:
        return None
    (rho, burst), = ext.pieces
    return paced_cycle(s, sp.take, sp.rate_max, sp.rate_min, c.take, c.busy, c.slowest_take,
                       fb.model.min_ttf[c.ident], fb.model.max_reboot, fb.q0, rho, burst)


def _through(fb: FailureBounds, c: Component, losses: dict[str, Fraction | None], inflow: Curve) -> Paced | None:
    """"Paced: through bolts": c's inputs are one stream each of distinct bolts U_i that do not fail, have no
    window and whose only input is one paced spout S's `default` stream, every ratio into c exact, Σ σ_i ≤ 1,
    every queue empty at the start."""
    spouts, sigmas = set(), {}
    for u, stream in c.inputs:
        b = fb.comp[u]
        if (b.kind != "bolt" or u in sigmas or u in fb.model.min_ttf or b.held or b.gap is not None
                or stream not in b.exact or len(b.inputs) != 1 or b.inputs[0][1] != "default"
                or fb.comp[b.inputs[0][0]].kind != "spout"):
            return None
        sigmas[u] = b.exact[stream]
        spouts.add(b.inputs[0][0])
    kappa = sum(sigmas.values(), Fraction(0))
    reach = inflow.at(fb.model.max_reboot)
    if len(spouts) != 1 or fb.q0 or not 0 < kappa <= 1 or reach is None:
        return None
    s = spouts.pop()
    sp, ext = fb.comp[s], fb.added(losses, but=c.ident).get(s, ZERO)
    if len(ext.pieces) != 1:
        return None
    (rho, burst), = ext.pieces
    via = tuple(sorted(sigmas))
    stages = tuple(Stage(sigmas[u] / kappa, fb.comp[u].take, fb.comp[u].busy, fb.comp[u].slowest_take)
                   for u in via)
    return through_cycle(s, sp.take, sp.rate_max, sp.rate_min, stages, via, kappa, c.take, c.busy, c.slowest_take,
                         fb.model.min_ttf[c.ident], fb.model.max_reboot, rho, burst, reach)


def _spouted(c: Component, total: _Flow) -> dict[str, _Flow]:
    """A spout's streams from its emissions: `default` carries them, a declared stream σ_hi times them plus H."""
    return {name: total.scaled(sb.hi, burst=sb.excess) if name != "default" else total
            for name, sb in c.streams.items()}


def _solve_paced(fb: FailureBounds) -> Bounds | None:
    """Paced: the curves' fixpoint; then the losses' fixpoint, per failure cycle (docs/boundedness.md, "Paced: the
    backlog ...") and netted inside (step 7), for the failing bolts the curves leave without a loss bound that a
    paced cycle may bound, or for spouts the curves leave without a replay bound."""
    found = fb._solve_curves()
    none: dict[str, Fraction | None] = {k: Fraction(0) for k in fb.model.min_ttf}
    eligible = [j for j in fb.model.min_ttf
                if (found is None or found.lost.get(j) is None) and fb.paced(fb.comp[j], none)]
    unbounded = found is None or not all(c.bounded for c in found.replays.values())
    if not eligible and not unbounded:
        return found
    reason, rounds = fb.reason, fb.rounds
    cycled = fb._solve_losses()
    if cycled is not None and (any(cycled.lost.get(j) is not None for j in eligible)
                               or unbounded and all(c.bounded for c in cycled.replays.values())):
        return cycled
    fb.reason, fb.rounds = reason, rounds
    return found


def _netted(fb: FailureBounds, replays: dict[str, Curve]) -> Bounds:
    """The pass under `replays`, netted (step 7) with the losses per failure the same pass proves without it."""
    base = fb.run(replays)
    out = fb.run(replays, nets=base.lost)
    for j, lost in base.lost.items():  # both hold: keep the smaller
        netted = out.lost[j]
        out.lost[j] = lost if netted is None or (lost is not None and lost < netted) else netted
    return out


def _others(c: Component, out: Bounds, direct: list[tuple[str, str]]) -> Curve:
    """What bolt c receives on its inputs other than `direct` (the spouts' streams feeding it directly)."""
    others = ZERO
    for src, st in c.inputs:
        if (src, st) not in direct:
            others = others.plus(out.stream[src].get(st, ZERO))
    return others


def storm_words(bounds: Bounds, bolt: str, names: dict[str, str]) -> str:
    """How a bolt's storm bounds its loss per failure, in the user's words (empty when no storm bound it)."""
    storm = bounds.storm.get(bolt)
    if storm is None:
        return ""
    j, s = names.get(bolt, bolt), names.get(storm.spout, storm.spout)
    held = "" if storm.held is None else (f"; {j} holds at most {storm.held} tuple"
                                          + ("" if storm.held == 1 else "s") + " when it fails")
    return (f" (while {j} is down {s} emits at most {storm.emissions} times, each re-sending at once what {j} lost "
            f"since the one before, which {j} loses again{held})")


def _at_most(a: dict[str, Fraction | None], b: dict[str, Fraction | None]) -> bool:
    """Every loss of a at most the one of b (None: no bound, above every number)."""
    pairs = [(a[j], b[j]) for j in a]
    return all(y is None or (x is not None and x <= y) for x, y in pairs)


def _grid_up(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x * _GRID), _GRID)


def _below(a: dict[str, Curve], b: dict[str, Curve]) -> bool:
    """Every single-piece curve of a at most the one of b (both rate and burst; no pieces: no bound)."""
    return all(not b[s].bounded or (a[s].bounded and a[s].pieces[0][0] <= b[s].pieces[0][0]
                                    and a[s].pieces[0][1] <= b[s].pieces[0][1]) for s in a)


def _round_up(c: Curve) -> Curve:
    return Curve(tuple((Fraction(math.ceil(r * _GRID), _GRID), Fraction(math.ceil(b * _GRID), _GRID))
                       for r, b in c.pieces))


def fastest_inflow(comp: dict[str, Component], model: FailureModel, replaying: set[str], j: str) -> Curve:
    """What bolt `j` receives at most in any window whatever its senders hold (docs/boundedness.md, "Failures",
    "Bounded by its senders' fastest pace"): a bolt sender emits from at most one batch per α(1−τ) (step 6, with a
    carry restart per failure), a spout its fresh tuples (step 1), twice them when failures reach it and it replays
    paced (step 2); at once, no bound. It assumes no other bound, so it needs no fixpoint and holds on cycles too."""
    inflow = ZERO
    for src, stream in comp[j].inputs:
        c = comp[src]
        sb = c.streams.get(stream)
        if sb is None:
            continue
        if c.kind == "spout":
            total = Curve.affine(c.rate_max, c.take)
            if src in replaying:
                total = total.scaled(Fraction(2)) if model.replay == "paced" else UNBOUNDED_CURVE
            flow = total.scaled(sb.hi, burst=sb.excess) if stream != "default" else total
        else:
            period = model.min_ttf[src] + model.min_reboot if src in model.min_ttf else None
            flow = _emitted(Curve.affine(c.rate_max, c.take), sb, period)
        inflow = inflow.plus(flow)
    return inflow


def _emitted(processed: _Flow, sb: StreamBound, period: Fraction | None) -> _Flow:
    """Step 6: what a bolt emits on a stream from what it processes, σ_hi·processed + H, and H more per failure
    when it fails once per `period` at most (None: it does not fail)."""
    per = Fraction(0) if period is None else sb.reset_cost
    rate = Fraction(0) if period is None else per / period
    return processed.scaled(sb.hi, rate, sb.excess + per)
