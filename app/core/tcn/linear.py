"""The linear program that proves "no repeating run grows" for one target bolt, with its certificate.

Summed over one pass of a lasso's loop (positions loop_start..k; the state at k+1 repeats the one at
loop_start, so every carry, backlog, phase and clock repeats) the counts of the cone of influence obey
linear relations that follow from the rules of docs/model.md sections 2, 3 and 7 (each row and its
one-line justification: docs/verifier.md, "Linear program"). Asking for the target's queue to grow
(Δ_t ≥ 1: the rows are homogeneous otherwise, so any growth scales to that) and finding the rows
infeasible proves that no lasso of any length makes it grow.

Every row reads `Σ coefficient·variable + constant ≥ 0` (or `= 0`) over non-negative real variables.
Infeasibility is shown by Farkas multipliers, found by solving the dual with z3 (exact rationals, one
`z3.Context` per call): y ≥ 0 on every inequality, free on every equality, the weighted sum of the rows
has every variable's coefficient ≤ 0 (the variables are ≥ 0) and the constant −1. The multipliers keyed
by row name are the certificate; `app/core/tcn/check/linear.py` checks one without this module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import z3

from app.core.emission import sigma_bounds
from app.core.failures import UNBOUNDED, FailureModel
from app.core.results import LinearCertificate
from app.core.tcn.network import BoltParams, Network, SpoutParams
from app.core.workers import WorkerModel, executors_of, worker_model

__all__ = ["LinearRow", "build_cases", "build_rows", "farkas", "linear_message", "loose_losses", "primal_feasible",
           "prove"]

RowKind = Literal["ge", "eq"]


@dataclass(frozen=True)
class LinearRow:
    """`Σ coefficients[v]·v + constant ≥ 0` (kind "ge") or `= 0` (kind "eq"), named for the certificate."""

    name: str
    kind: RowKind
    coefficients: dict[str, Fraction]
    constant: Fraction = Fraction(0)


@dataclass
class _Rows:
    rows: list[LinearRow] = field(default_factory=list)

    def add(self, name: str, kind: RowKind, terms: dict[str, Fraction | int], constant: Fraction | int = 0) -> None:
        coefficients = {v: Fraction(c) for v, c in terms.items() if c != 0}
        self.rows.append(LinearRow(name, kind, coefficients, Fraction(constant)))


def _sum(*parts: dict[str, Fraction | int]) -> dict[str, Fraction | int]:
    out: dict[str, Fraction | int] = {}
    for part in parts:
        for v, c in part.items():
            out[v] = out.get(v, 0) + c
    return out


def _label(*names: str) -> str:
    """The bracketed part of a variable's or a row's name: `[B1]`, `[B1/default]`; JSON (`["a/b"]`) when a
    name holds a character of the plain form, so that two different components or streams never share
    a variable (the names are injective)."""
    if any(ch in name for name in names for ch in '[]/"\\'):
        return json.dumps(list(names), ensure_ascii=False)
    return "[" + "/".join(names) + "]"


def _excess(sigma: Fraction) -> Fraction:
    """The most one `"dvert"` emit gives beyond σ·(carry + batch − kept carry): σ·(⌈x⌉ − x), x the exact
    remainder frac(σ·total)/σ, a multiple j/num(σ) with j < den(σ); 0 when σ is integral (x = 0) or 1/n
    (x integral), else at most σ·(1 − 1/num(σ))."""
    if sigma.numerator <= 1 or sigma.denominator == 1:
        return Fraction(0)
    return sigma * (1 - Fraction(1, sigma.numerator))


def _replay_sources(net: Network, failing: set[str]) -> dict[str, list[str]]:
    """Per failing bolt, the spouts whose trees reach it and replay its losses (docs/model.md 7.3)."""
    fails = net.failures
    replaying = fails is not None and fails.replay != "none"
    spout_names = {s.name for s in net.spouts}
    sources: dict[str, list[str]] = {}
    for j in sorted(failing):
        row = fails.impact.get(j, {}) if fails is not None and replaying else {}
        sources[j] = sorted(s for s in row if s in spout_names)
    return sources


def _carried(net: Network, replaying: set[str]) -> dict[tuple[str, str], dict[str, Fraction | int]]:
    """What each (component, stream) carries per pass, as terms: a spout's default stream its fresh
    emissions (and its replays), every other stream its own count."""
    carried: dict[tuple[str, str], dict[str, Fraction | int]] = {}
    for s in net.spouts:
        total: dict[str, Fraction | int] = {f"N{_label(s.name)}": 1}
        if s.name in replaying:
            total[f"R{_label(s.name)}"] = 1
        carried[(s.name, "default")] = total
        for st in s.streams:
            carried[(s.name, st.name)] = {f"E{_label(s.name, st.name)}": 1}
    for b in net.bolts:
        for st in b.streams:
            carried[(b.name, st.name)] = {f"E{_label(b.name, st.name)}": 1}
    return carried


def _spout_rows(out: _Rows, s: SpoutParams, tau: Fraction, restarts: list[str]) -> None:
    """A spout's emissions within its bursts and its period; `restarts`: the deaths (X of the workers that may
    run it) after which it may emit at once, and skip emissions while its worker is down (docs/model.md 9.4)."""
    n, m, a = f"N{_label(s.name)}", f"M{_label(s.name)}", s.period
    out.add(f"emissions{_label(s.name)}", "ge", {n: 1, m: -1})
    out.add(f"burst{_label(s.name)}", "ge", {m: s.burst, n: -1})
    out.add(f"period-lo{_label(s.name)}", "ge", {"T": 1, n: -a, m: tau * a, **{x: a * s.burst for x in restarts}})
    if not restarts:
        out.add(f"period-hi{_label(s.name)}", "ge", {n: a, m: tau * a, "T": -1})


def _replay_rows(out: _Rows, s: SpoutParams, replayed_by: list[str], replay: str, deaths: bool = False) -> None:
    """A replaying spout's backlog: the replays it receives from the failing bolts `replayed_by` (and from the
    workers' deaths, Gw, when `deaths`), sent paced (at most one per fresh emission) or at once."""
    n = f"N{_label(s.name)}"
    r, g, grown = f"R{_label(s.name)}", f"G{_label(s.name)}", f"dR{_label(s.name)}"
    out.add(f"backlog{_label(s.name)}", "eq", {grown: 1, g: -1, r: 1})
    out.add(f"replays-in{_label(s.name)}", "eq",
            _sum({g: 1}, {f"r{_label(j, s.name)}": -1 for j in replayed_by},
                 {f"Gw{_label(s.name)}": -1} if deaths else {}))
    if replay == "paced":
        out.add(f"paced{_label(s.name)}", "ge", {n: 1, r: -1})
    else:
        out.add(f"at-once{_label(s.name)}", "eq", {grown: 1})


def _spout_stream_rows(out: _Rows, s: SpoutParams, total: dict[str, Fraction | int], subscribed: set[tuple[str, str]],
                       rule: str, replayed: bool) -> None:
    """The ratio of each subscribed declared stream of a spout to what its default stream carries (`total`)."""
    n, m = f"N{_label(s.name)}", f"M{_label(s.name)}"
    for st in s.streams:
        if (s.name, st.name) not in subscribed:
            continue
        e, ratio = f"E{_label(s.name, st.name)}", st.sigma
        if rule == "exact":
            out.add(f"ratio{_label(s.name, st.name)}", "eq",
                    _sum({e: 1}, {v: -ratio * c for v, c in total.items()}))
            continue
        out.add(f"ratio-round-lo{_label(s.name, st.name)}", "ge",
                _sum({e: 1}, {v: -ratio * c for v, c in total.items()}))
        out.add(f"ratio-round-hi{_label(s.name, st.name)}", "ge",
                _sum({v: ratio * c for v, c in total.items()}, {m: _excess(ratio), e: -1}))
        if not replayed:  # every emission within the burst: the carry automaton of section 5
            lo, hi = sigma_bounds(ratio, s.burst, rule)
            out.add(f"ratio-lo{_label(s.name, st.name)}", "ge", {e: 1, n: -lo})
            out.add(f"ratio-hi{_label(s.name, st.name)}", "ge", {n: hi, e: -1})


def _bolt_rows(out: _Rows, b: BoltParams, carried: dict[tuple[str, str], dict[str, Fraction | int]]) -> None:
    """A bolt's takes within its batches and its arrivals, what its sources carry."""
    j = b.name
    k, p, arrived = f"K{_label(j)}", f"P{_label(j)}", f"A{_label(j)}"
    out.add(f"takes{_label(j)}", "ge", {p: 1, k: -1})
    if b.timer is None:  # (a duration window's run takes every waiting tuple: no bound per batch, section 10.3)
        out.add(f"batch{_label(j)}", "ge", {k: b.take_max, p: -1})
    if b.join:  # docs/model.md section 11: no branch's cache shrinks over a pass, so each delivers ≥ A parts (the
        # rule's "A is what the slowest delivers" left out: a relaxation, which only loosens the rows)
        for src in b.sources:
            out.add(f"cache{_label(j, *src)}", "ge", _sum({v: x for v, x in carried[src].items()}, {arrived: -1}))
        return
    out.add(f"arrivals{_label(j)}", "eq", _sum({arrived: 1}, *({v: -x for v, x in carried[src].items()}
                                                        for src in b.sources)))


def _steady_bolt_rows(out: _Rows, b: BoltParams, tau: Fraction) -> None:
    """The queue and the busy time of a bolt that never fails."""
    j = b.name
    k, p, arrived, grown = f"K{_label(j)}", f"P{_label(j)}", f"A{_label(j)}", f"d{_label(j)}"
    fast = b.alpha * (1 - tau)
    out.add(f"queue{_label(j)}", "eq", {grown: 1, arrived: -1, p: 1})
    out.add(f"busy{_label(j)}", "ge", {"T": 1, k: -fast})
    if b.timer is not None:  # a duration window's runs empty its queue: it never grows in a lasso (section 10.3)
        out.add(f"timer{_label(j)}", "eq", {grown: 1})


def _emitted_curve(sigma: Fraction, per_emit: Fraction, burst: Fraction, gap: Fraction,
                   rule: str) -> tuple[Fraction, Fraction]:
    """(ρ, b): what a stream of ratio σ carries in any window of length w is at most ρ·w + b, when its sender
    emits at least `gap` apart, at most `per_emit` tuples per emit (processed, or a spout's emission) and at
    most `per_emit`·w/gap + `burst` in the window: σ times that, plus the carry (below 1 tuple under
    `"exact"`, σ⌈1/σ⌉ under `"dvert"`) and, under `"dvert"`, the rounding excess of each emit."""
    if sigma == 0:
        return Fraction(0), Fraction(0)
    if rule == "exact":
        return sigma * per_emit / gap, sigma * burst + 1
    extra = _excess(sigma)
    return (sigma * per_emit + extra) / gap, sigma * burst + extra + sigma * math.ceil(1 / sigma)


def _arrival_curve(net: Network, b: BoltParams, replayed_by: dict[str, list[str]]) -> tuple[Fraction, Fraction] | None:
    """(ρ, b): at most ρ·w + b tuples arrive at bolt `b` in any window of length w of any run
    (docs/verifier.md, "Losses bounded by time"), or None when a source has no such curve: a spout that
    replays at once, or a windowed bolt (a windowed `b` too)."""
    tau, rule = net.tolerance, net.emission
    fails = net.failures
    if b.slide != 1 or tau >= 1:
        return None
    spouts = {s.name: s for s in net.spouts}
    bolts = {x.name: x for x in net.bolts}
    rho, burst = Fraction(0), Fraction(0)
    for name, stream in b.sources:
        if name in spouts:
            sp = spouts[name]
            copies = 1
            if replayed_by.get(name):
                if fails is None or fails.replay == "at-once":
                    return None
                copies = 2 if fails.replay == "paced" else 1  # paced: at most one replay per fresh tuple
            gap = sp.period * (1 - tau)
            if stream == "default":
                r, c = Fraction(copies) / gap, Fraction(copies * sp.burst)
            else:
                ratio = next(st.sigma for st in sp.streams if st.name == stream)
                r, c = _emitted_curve(ratio, Fraction(copies), Fraction(copies * sp.burst), gap, rule)
        else:
            u = bolts[name]
            if u.slide != 1 or u.timer is not None:  # (a window: its batches are not per tuple)
                return None
            sigma = next(st.sigma for st in u.streams if st.name == stream)
            size = Fraction(u.take_max)
            r, c = _emitted_curve(sigma, size, size, u.alpha * (1 - tau), rule)
        rho, burst = rho + r, burst + c
    return rho, burst


def _failing_bolt_rows(out: _Rows, b: BoltParams, tau: Fraction, fails: FailureModel, sources: list[str],
                       hitting: list[str] | None = None, curve: tuple[Fraction, Fraction] | None = None,
                       idle: Fraction = Fraction(0)) -> None:
    """The queue, busy time, failures, downtime and losses of a bolt that may fail; its losses replayed
    by the spouts `sources`. `hitting`: the deaths (X) of the workers that may run it (docs/model.md 9.4): F then
    counts its own failures Fo and those hits, and what it loses is no longer bounded by its replays. With its
    arrival `curve` (ρ, b), what its failures lose bounded by time (none with worker deaths)."""
    j = b.name
    k, p, arrived, grown = f"K{_label(j)}", f"P{_label(j)}", f"A{_label(j)}", f"d{_label(j)}"
    f_, d_, lost = f"F{_label(j)}", f"D{_label(j)}", f"L{_label(j)}"
    own = f"Fo{_label(j)}" if hitting else f_
    c = b.take_max
    fast = b.alpha * (1 - tau)
    batches = f"Lb{_label(j)}"  # tuples of the batches in progress lost at its failures (counted in P too)
    out.add(f"queue{_label(j)}", "eq", {grown: 1, arrived: -1, p: 1, lost: 1, batches: -1})
    out.add(f"batch-lost{_label(j)}", "ge", {f_: c, batches: -1})
    out.add(f"batch-in-lost{_label(j)}", "ge", {lost: 1, batches: -1})
    out.add(f"busy{_label(j)}", "ge", {"T": 1, d_: -1, k: -fast, f_: fast})
    out.add(f"ttf{_label(j)}", "ge", {"T": 1, d_: -1, own: -fails.min_ttf[j]})
    out.add(f"down-lo{_label(j)}", "ge", {d_: 1, own: -fails.min_reboot})
    out.add(f"down-hi{_label(j)}", "ge", {own: fails.max_reboot, d_: -1})
    if hitting:
        out.add(f"hit{_label(j)}", "ge", _sum({f_: -1, own: 1}, {x: 1 for x in hitting}))
    if curve is not None:
        rho, burst = curve
        drains = c / (b.alpha * (1 + tau) + idle)  # the fewest tuples per second it takes while never empty
        piles = max(Fraction(0), rho - drains)
        out.add(f"lost-time{_label(j)}", "ge",
                {"T": piles, d_: rho - piles, f_: 2 * burst + c, lost: -1, batches: 1})
        if rho > drains:  # what piles up is paid for by its takes: at most ρ/c − 1 lost per tuple taken
            out.add(f"lost-takes{_label(j)}", "ge",
                    {p: rho / drains - 1, d_: rho, f_: 2 * burst + c * rho / drains, lost: -1, batches: 1})
    if sources:
        rs = {f"r{_label(j, s)}": 1 for s in sources}
        out.add(f"lost-lo{_label(j)}", "ge", _sum({lost: 1}, {v: -1 for v in rs}))
        impact = fails.impact[j]
        if not hitting and all(impact[s] != UNBOUNDED for s in sources):
            out.add(f"lost-hi{_label(j)}", "ge",
                    _sum({f"r{_label(j, s)}": Fraction(impact[s]) for s in sources}, {lost: -1}))


def _bolt_stream_rows(out: _Rows, b: BoltParams, subscribed: set[tuple[str, str]], rule: str, may_fail: bool) -> None:
    """The ratio of each subscribed stream of a bolt to the tuples it took."""
    j = b.name
    k, p, f_ = f"K{_label(j)}", f"P{_label(j)}", f"F{_label(j)}"
    c = b.take_max
    for st in b.streams:
        if (j, st.name) not in subscribed:
            continue
        e, sigma = f"E{_label(j, st.name)}", st.sigma
        tag = _label(j, st.name)
        if may_fail:  # only the batches it completes emit: P - Lb of them
            batches = f"Lb{_label(j)}"
            keep = Fraction(1) if rule == "exact" else sigma * math.ceil(1 / sigma) if sigma else Fraction(0)
            if rule == "exact":
                out.add(f"ratio-hi{tag}", "ge", {p: sigma, batches: -sigma, e: -1})
            else:
                out.add(f"ratio-round{tag}", "ge", {p: sigma, batches: -sigma, k: _excess(sigma), e: -1})
            if sigma:
                out.add(f"ratio-lo{tag}", "ge", {e: 1, p: -sigma, batches: sigma, f_: keep})
        elif rule == "exact":
            out.add(f"ratio{tag}", "eq", {e: 1, p: -sigma})
        elif b.timer is not None:  # batches of any size: the carry, rounded up, is at least the exact one (10.3)
            out.add(f"ratio-lo{tag}", "ge", {e: 1, p: -sigma})
            out.add(f"ratio-round{tag}", "ge", {p: sigma, k: _excess(sigma), e: -1})
        else:
            lo, hi = sigma_bounds(sigma, c, rule)
            out.add(f"ratio-lo{tag}", "ge", {e: 1, p: -lo})
            out.add(f"ratio-hi{tag}", "ge", {p: hi, e: -1})
            out.add(f"ratio-round{tag}", "ge", {p: sigma, k: _excess(sigma), e: -1})


def _growth_rows(out: _Rows, b: BoltParams, tau: Fraction, idle: Fraction, hit: bool) -> None:
    """The target grows, takes full batches and is never idle longer than allowed (but while a worker that may
    run it is down: D, when `hit`)."""
    j = b.name
    k, p, grown = f"K{_label(j)}", f"P{_label(j)}", f"d{_label(j)}"
    out.add(f"grows{_label(j)}", "ge", {grown: 1}, -1)
    if b.timer is not None:  # (its `timer` row: it never grows)
        return
    out.add(f"full{_label(j)}", "eq", {p: 1, k: -b.take_max})
    late = {f"D{_label(j)}": 1} if hit else {}
    out.add(f"never-idle{_label(j)}", "ge", {k: b.alpha * (1 + tau) + idle, "T": -1, **late})


@dataclass(frozen=True)
class _Deaths:
    """Worker deaths as the rows read them (docs/model.md 9.4), by component name: per worker the components it
    may run, the workers that surely run every executor of the target, and per spout and worker the most trees
    one death makes it replay (None: no bound)."""

    model: WorkerModel
    runs: list[set[str]]
    whole: list[int]
    replays: dict[str, list[Fraction | None]]


def _fresh(s: SpoutParams, window: Fraction, tau: Fraction) -> Fraction:
    """The most fresh tuples a spout emits in a window: w / (a(1 − τ)) + C_EMIT (docs/model.md 2.1)."""
    return window / (s.period * (1 - tau)) + s.burst


def _deaths(net: Network, target: str) -> _Deaths | None:
    """The worker deaths of the cone's document, or None when no worker may die."""
    wm = worker_model(net.topology)
    if wm is None:
        return None
    topo, tau = net.topology, net.tolerance
    ids = {c.name: c.id for c in topo.components}
    size = executors_of(topo)
    runs = [{n for n in ids if wm.may_run(x, ids[n])} for x in range(wm.workers)]
    whole = [x for x in range(wm.workers) if wm.runs_all(x, ids[target], size[ids[target]])]
    mode = topo.settings.replay
    replays: dict[str, list[Fraction | None]] = {}
    for s in net.spouts:
        if not wm.replays:
            continue
        found = [2 * _fresh(s, 2 * wm.timeout, tau)] if mode == "paced" else []
        if topo.storm.max_spout_pending is not None:
            found.append(Fraction(topo.storm.max_spout_pending * size[ids[s.name]]))
        pending = min(found) if found else None
        row: list[Fraction | None] = []
        for x in range(wm.workers):
            during = (Fraction(0) if wm.runs_all(x, ids[s.name], size[ids[s.name]])
                      else 2 * _fresh(s, wm.max_restart, tau) if mode == "paced" else None)
            row.append(None if pending is None or during is None else pending + during)
        replays[s.name] = row
    return _Deaths(wm, runs, whole, replays)


def _death_rows(out: _Rows, deaths: _Deaths) -> None:
    """Per worker x: X deaths in the pass, Y down time, each death min_ttf after the last restart, each restart
    between the bounds; per spout s: the replays Gw its deaths add, at most Σ_x cap(s, x)·X_x."""
    wm = deaths.model
    for x in range(wm.workers):
        w, y = f"X{_label(f'w{x}')}", f"Y{_label(f'w{x}')}"
        out.add(f"worker-ttf{_label(f'w{x}')}", "ge", {"T": 1, y: -1, w: -wm.min_ttf})
        out.add(f"worker-down-lo{_label(f'w{x}')}", "ge", {y: 1, w: -wm.min_restart})
        out.add(f"worker-down-hi{_label(f'w{x}')}", "ge", {w: wm.max_restart, y: -1})
    for x in deaths.whole:  # a death of x empties the target: it does not grow in a loop with one (7.4)
        out.add(f"worker-whole{_label(f'w{x}')}", "eq", {f"X{_label(f'w{x}')}": 1})
    for s, caps in deaths.replays.items():
        if all(c is not None for c in caps):
            out.add(f"death-replays{_label(s)}", "ge",
                    {f"Gw{_label(s)}": -1, **{f"X{_label(f'w{x}')}": c for x, c in enumerate(caps) if c}})


def _hit_bolt_rows(out: _Rows, b: BoltParams, tau: Fraction, deaths: _Deaths, target: bool) -> None:
    """A bolt some worker that may die may run: a death of such a worker may lose any of its tuples (L) and a
    batch in progress (Lb ≤ C per death, F ≤ the deaths), and while that worker is down the bolt may take late."""
    j = b.name
    k, p, arrived, grown = f"K{_label(j)}", f"P{_label(j)}", f"A{_label(j)}", f"d{_label(j)}"
    f_, lost, batches = f"F{_label(j)}", f"L{_label(j)}", f"Lb{_label(j)}"
    hitting = [x for x, names in enumerate(deaths.runs) if j in names]
    out.add(f"queue{_label(j)}", "eq", {grown: 1, arrived: -1, p: 1, lost: 1, batches: -1})
    if b.timer is None:  # (a duration window's run in progress holds any number of tuples)
        out.add(f"batch-lost{_label(j)}", "ge", {f_: b.take_max, batches: -1})
    else:  # each run or death empties a duration window's queue: it never grows in a lasso (section 10.3)
        out.add(f"timer{_label(j)}", "eq", {grown: 1})
    out.add(f"batch-in-lost{_label(j)}", "ge", {lost: 1, batches: -1})
    out.add(f"busy{_label(j)}", "ge", {"T": 1, k: -b.alpha * (1 - tau), f_: b.alpha * (1 - tau)})
    out.add(f"hit{_label(j)}", "ge", _sum({f_: -1}, {f"X{_label(f'w{x}')}": 1 for x in hitting}))
    if target:
        d_ = f"D{_label(j)}"
        out.add(f"hit-down{_label(j)}", "ge", _sum({d_: -1}, {f"Y{_label(f'w{x}')}": 1 for x in hitting}))


def _cache_case_rows(out: _Rows, b: BoltParams, carried: dict[tuple[str, str], dict[str, Fraction | int]],
                     slowest: tuple[str, str]) -> None:
    """A target join whose cache grows in the pass, with `slowest` the branch whose cache does not (docs/verifier.md,
    "A join as the target"): that branch delivers exactly the A messages completed, the others' caches gain ≥ 1."""
    j, arrived = b.name, f"A{_label(b.name)}"
    out.add(f"slowest{_label(j, *slowest)}", "eq", _sum(carried[slowest], {arrived: -1}))
    others = [src for src in b.sources if src != slowest]
    out.add(f"caches-grow{_label(j)}", "ge", _sum(*(carried[src] for src in others), {arrived: -len(others)}), -1)


def build_cases(net: Network, target: str) -> dict[str, list[LinearRow]]:
    """The programs whose infeasibility together proves that no lasso grows `target` (docs/verifier.md): "queue"
    (its queue grows, `build_rows`) and, for a join, one per branch (keyed `_label(component, stream)`) in which that
    branch's cache stays level, another's grows and every other bolt of the cone is held level."""
    join = next((b for b in net.bolts if b.join and b.name == target), None)
    cases = {"queue": _pass_rows(net, target, None)}
    for src in join.sources if join is not None else ():
        cases[_label(*src)] = _pass_rows(net, target, src)
    return cases


def build_rows(net: Network, target: str) -> list[LinearRow]:
    """The rows of one loop pass on `net` (the target's cone) with the target's queue growing (docs/verifier.md):
    per spout its emission rows, its replay rows and its streams' ratios; per bolt its takes and arrivals,
    its queue (with failures and losses when it may fail) and its streams' ratios; the target's growth. A join's
    growth may be its cache's too: `build_cases`."""
    if any(b.join and b.name == target for b in net.bolts):
        raise ValueError(f"a join's cache may grow too: its programs are build_cases' (docs/model.md section 11): "
                         f"{target}")
    return _pass_rows(net, target, None)


def _pass_rows(net: Network, target: str, slowest: tuple[str, str] | None) -> list[LinearRow]:
    """`build_rows`, or with `slowest` a target join's case in which its cache grows and that branch's does not."""
    tau, idle = net.tolerance, net.max_idle
    rule = net.emission
    fails = net.failures
    failing = set() if fails is None else set(fails.min_ttf) - {target}  # the target never fails in its loop
    sources = _replay_sources(net, failing)
    spout_names = {s.name for s in net.spouts}
    replayed_by = {s: sorted(j for j, src in sources.items() if s in src) for s in spout_names}
    deaths = _deaths(net, target)
    replaying = {s for s, js in replayed_by.items() if js} | set(deaths.replays if deaths is not None else ())
    carried = _carried(net, replaying)
    subscribed = {src for b in net.bolts for src in b.sources}
    out = _Rows()
    if deaths is not None:
        _death_rows(out, deaths)

    def hitting(name: str) -> list[str]:  # the deaths of the workers that may run the component
        return [] if deaths is None else [f"X{_label(f'w{x}')}" for x, ns in enumerate(deaths.runs) if name in ns]

    for s in net.spouts:
        _spout_rows(out, s, tau, hitting(s.name))
        if s.name in replaying:
            died = deaths is not None and s.name in deaths.replays
            _replay_rows(out, s, replayed_by[s.name], net.topology.settings.replay, died)
        _spout_stream_rows(out, s, carried[(s.name, "default")], subscribed, rule, s.name in replaying)
    for b in net.bolts:
        hit = deaths is not None and bool(hitting(b.name))
        may_fail = b.name in failing
        _bolt_rows(out, b, carried)
        if may_fail:
            assert fails is not None
            curve = None if deaths is not None else _arrival_curve(net, b, replayed_by)  # section 7's failures only
            _failing_bolt_rows(out, b, tau, fails, sources[b.name], hitting(b.name), curve, idle)
        elif hit:
            assert deaths is not None
            _hit_bolt_rows(out, b, tau, deaths, b.name == target)
        else:
            _steady_bolt_rows(out, b, tau)
        _bolt_stream_rows(out, b, subscribed, rule, may_fail or hit)
        if b.name == target and slowest is None:
            _growth_rows(out, b, tau, idle, hit)
        elif b.name == target and slowest is not None:
            _cache_case_rows(out, b, carried, slowest)
        elif slowest is not None:  # a bolt of the cone that grows has its own verdict (docs/verifier.md)
            out.add(f"level{_label(b.name)}", "eq", {f"d{_label(b.name)}": 1})
    return out.rows


def loose_losses(net: Network, rows: list[LinearRow]) -> tuple[list[str], list[str]]:
    """(the failing bolts of `rows`, those of them without a `lost-time` row: what they lose is bounded only by
    what they receive)."""
    names = {row.name for row in rows}
    failing = [b.name for b in net.bolts if f"ttf{_label(b.name)}" in names]
    return failing, [n for n in failing if f"lost-time{_label(n)}" not in names]


def _real(ctx: z3.Context, value: Fraction) -> z3.ArithRef:
    return z3.RealVal(f"{value.numerator}/{value.denominator}", ctx)


def _fraction(value: z3.ExprRef) -> Fraction:
    assert isinstance(value, z3.RatNumRef)
    return Fraction(value.numerator_as_long(), value.denominator_as_long())


def primal_feasible(rows: list[LinearRow], timeout_ms: int = 10_000) -> bool | None:
    """Whether some non-negative point satisfies every row (None: no answer within the time)."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", timeout_ms)
    variables: dict[str, z3.ArithRef] = {}
    for row in rows:
        for v in row.coefficients:
            if v not in variables:
                variables[v] = z3.Real(v, ctx)
                solver.add(variables[v] >= 0)
        expr = z3.Sum([_real(ctx, c) * variables[v] for v, c in row.coefficients.items()] + [_real(ctx, row.constant)])
        solver.add(expr >= 0 if row.kind == "ge" else expr == 0)
    answer = solver.check()
    return None if answer == z3.unknown else answer == z3.sat


def farkas(rows: list[LinearRow], timeout_ms: int = 10_000,
           cancelled: Callable[[], bool] | None = None) -> dict[str, Fraction] | None:
    """Multipliers proving the rows infeasible (keyed by row name, zeros left out), or None when none exist
    (the rows have a solution) or z3 gave no answer in time."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", timeout_ms)
    y = {row.name: z3.Real(f"y:{row.name}", ctx) for row in rows}
    columns: dict[str, list[z3.ArithRef]] = {}
    constant: list[z3.ArithRef] = []
    for row in rows:
        if row.kind == "ge":
            solver.add(y[row.name] >= 0)
        for v, c in row.coefficients.items():
            columns.setdefault(v, []).append(_real(ctx, c) * y[row.name])
        if row.constant:
            constant.append(_real(ctx, row.constant) * y[row.name])
    for terms in columns.values():
        solver.add(z3.Sum(terms) <= 0)
    if not constant:
        return None
    solver.add(z3.Sum(constant) == -1)
    if cancelled is not None and cancelled():
        return None
    if solver.check() != z3.sat:
        return None
    model = solver.model()
    out: dict[str, Fraction] = {}
    for name, var in y.items():
        value = _fraction(model.eval(var, model_completion=True))
        if value != 0:
            out[name] = value
    return out


def prove(net: Network, target: str, timeout_ms: int = 10_000,
          cancelled: Callable[[], bool] | None = None) -> dict[str, Fraction] | None:
    """Farkas multipliers showing that no lasso of `net` makes `target`'s queue grow, or None."""
    return farkas(build_rows(net, target), timeout_ms, cancelled)


def linear_message(net: Network, rows: int, cert: LinearCertificate) -> str:
    """The verdict's words for a target the program proves free of repeating growth, with `rows` rows."""
    return (f"no lasso of any length makes {cert.target}'s queue grow: summed over one pass of a loop, the counts "
            f"of its cone ({', '.join(net.kept)}) obey {rows} linear relations"
            + (" (failures and replays included)" if net.failures is not None else "")
            + (" (worker deaths and their replays at the timeout included, docs/model.md 9.4)"
               if _deaths(net, cert.target) is not None else "")
            + f" that have no solution in which it grows; {len(cert.rows)} of them, weighted by exact Farkas "
            "multipliers, add up to the contradiction -1 ≥ 0 (the certificate; docs/verifier.md)"
            + _cache_words(net, cert) + ". It is not proven bounded in every run")


def _cache_words(net: Network, cert: LinearCertificate) -> str:
    """A join target's cases in words (docs/verifier.md, "A join as the target"), or ""."""
    if not cert.cases:
        return ""
    others = [b.name for b in net.bolts if b.name != cert.target]
    return (f"; nor its cache of parts waiting for the slowest branch: for each of its {len(cert.cases)} branches "
            "taken as the slowest, the rows with another branch's cache growing"
            + (f" and {', '.join(others)} held level (each proven not to grow, its own verdict)" if others else "")
            + " have no solution either")
