"""Capacity in Storm's terms: how much more load a topology takes, and what Storm does past it.

Two factors by which every spout's rate is multiplied (docs/storm.md, "Headroom"):

* **headroom** H: for every factor below H the rate check proves every bolt bounded; at H
  some bolt's largest inflow reaches its smallest capacity.
* **grows_at** G: for every factor above G some bolt surely grows (its inflow at nominal
  timing exceeds its nominal capacity); at or below G none does at nominal timing.

Both come from the rate check's exact figures (`margins`, `nominal_margins` in
app/core/rates.py) and are exact fractions. Flows scale linearly with the spout rates only
while no bolt saturates: a bolt that passes on σ·min(inflow, capacity) is linear in the
spout rates as long as inflow ≤ capacity. While every bolt is proven bounded (largest
inflow < smallest capacity ≤ largest capacity) no bolt saturates in the largest flows, so
on [0, H] every largest inflow is f·U_j, with U_j read at any factor where all bolts are
bounded, and H = min_j cap_min_j / U_j. Likewise, while no bolt grows at nominal timing no
nominal flow is capped, so G = min_j cap_nominal_j / N_j. A cycle the rate check solves
exactly is linear below its caps as well (docs/boundedness.md, "Cycles"); where it only
iterates a cycle's flows down from a bound that does not scale, H is found by bisection on
the exact check instead, and is the largest factor proven (a sound lower bound of the
supremum, marked not exact).

What Storm does past G: app/core/storm/forecast.py; the words: app/core/storm/lines.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from app.core.rates import LoadMargins, RateAnalysis, duration_figures, load_margins, margins, window_figures
from app.core.rates.joins import join_figures
from app.core.rates.workers_check import WorkerCheck
from app.core.storm.forecast import StormForecast, TimeoutRisk, forecast, saturation_signs, scaled, timeout_risks
from app.core.topology import StormObserved, Topology

_SHRINK_ROUNDS = 200
_BISECTION_ROUNDS = 40


@dataclass
class Headroom:
    """The factors of `docs/storm.md` ("Headroom"); None for a factor that is unlimited."""

    headroom: Fraction | None
    headroom_exact: bool
    limiting_bolts: list[str]
    grows_at: Fraction | None
    first_to_saturate: list[str]
    storm: StormForecast | None  # None unless some bolt grows at the document's rates
    # in a cycle the rate check's nominal flows come from a finite iteration, so grows_at is the factor at which
    # its "grows" verdict flips (close to, not exactly, the fixed point's)
    grows_at_exact: bool = True
    # with failures on, the rate check's statuses include the replays (docs/boundedness.md, "Failures") but
    # these factors, like the suggested parallelism, come from the failure-free flows: they say so
    ignores_failures: bool = False
    # what the Storm UI showed of the running topology (a Storm UI import), and the message timeout it is read against
    observed: StormObserved | None = None
    message_timeout_secs: int | None = None
    # bounded queues that still hold tuples longer than the message timeout (with acking; from the rate check's
    # queue bounds, where it gives them)
    timeout_risks: list[TimeoutRisk] = field(default_factory=list)
    # the document's topology.workers: a worker's death is not in the model (docs/model.md section 9), said so;
    # with one worker, the most its death loses: every bolt's queue bound and batch (None: some bolt has no bound)
    workers: int | None = None
    worker_loss: Fraction | None = None
    # with storm.worker_min_ttf, the rate check with worker deaths (docs/model.md section 9); and whether every bolt
    # is bounded with section 7's per-bolt failures (None: no bolt fails), to say which of the two it survives
    worker_check: WorkerCheck | None = None
    bolt_failures_survived: bool | None = None

    @property
    def overloaded(self) -> bool:
        return self.grows_at is not None and self.grows_at < 1

    def within_sojourns(self, sojourns: Mapping[str, str | None]) -> Headroom:
        """The same figures without the timeout risks the latency analysis rules out: a risk reads the queue bound
        drained at the smallest service rate, one bound on a tuple's stay; the sojourn bound of docs/latency.md
        (`LatencyReport.sojourn_exact`, exact fractions as text) is another, often sharper. Where that proof keeps
        a tuple's stay within the message timeout the bolt is no risk, and the answer must not say it is."""
        kept = [r for r in self.timeout_risks
                if (s := sojourns.get(r.bolt)) is None or Fraction(s) > r.timeout]
        return replace(self, timeout_risks=kept)

    def to_json(self) -> dict[str, Any]:
        """Exact values as strings ("p/q") beside their decimals."""
        out: dict[str, Any] = {
            "headroom": _num(self.headroom), "headroom_exact": self.headroom_exact,
            "limiting_bolts": self.limiting_bolts,
            "grows_at": _num(self.grows_at), "first_to_saturate": self.first_to_saturate,
            "overloaded": self.overloaded,
            "exact": [k for k, ok in (("headroom", self.headroom_exact), ("grows_at", self.grows_at_exact)) if ok],
            "storm": None,
        }
        if self.ignores_failures:
            out["ignores_failures"] = True
        if self.worker_check is not None:  # docs/model.md section 9
            out["worker_deaths_modelled"] = True
            out["worker_deaths"] = {**self.worker_check.to_json(),
                                    "single_bolt_failures_survived": self.bolt_failures_survived,
                                    # the simulation and the solver: with an explicit assignment (model.md 9.5)
                                    "search_plays_worker_deaths": {"linear_program": True,
                                                                   "simulation": self.worker_check.model.explicit,
                                                                   "solver": self.worker_check.model.explicit}}
        elif self.workers is not None:  # no time between deaths: a worker's death is not decided
            out["worker_deaths_modelled"] = False
            if self.worker_loss is not None:
                out["one_worker_loss"] = _num(self.worker_loss)
        if self.timeout_risks:
            out["timeouts"] = [{"bolt": r.bolt, "queue_bound": _num(r.queue_bound),
                                "service_rate": _num(r.service_rate), "wait": _num(r.wait), "timeout": r.timeout}
                               for r in self.timeout_risks]
        if self.observed is not None:
            out["observed"] = {**self.observed.model_dump(mode="json"),
                               "signs": saturation_signs(self.observed, self.message_timeout_secs)}
        f = self.storm
        if f is not None:
            out["storm"] = {
                "estimate": True,
                "backpressure": f.backpressure, "backpressure_source": f.backpressure_source,
                "offered_rate": _num(f.offered_rate), "sustainable_rate": _num(f.sustainable_rate),
                "sustainable_rates": {k: _num(v) for k, v in f.sustainable_rates.items()},
                "backlog_growth": _num(f.backlog_growth),
                "receive_buffer": f.receive_buffer, "receive_buffer_source": f.receive_buffer_source,
                "queues": [{"bolt": q.bolt, "growth": _num(q.growth), "executors": q.executors,
                            "seconds_to_full": _num(q.seconds_to_full), "slots": q.slots,
                            "service_rate": _num(q.service_rate), "pending_bound": _num(q.pending_bound),
                            "never_fills": q.never_fills,
                            "per_tree": {s: {"trees": n, "tuples_per_tree": _num(t)}
                                         for s, (n, t) in q.per_tree.items()},
                            "wait_when_full": _num(q.wait_when_full), "times_out": q.times_out,
                            # asynchronous (docs/model.md section 8): its internal queues grow, not its receive queues
                            **({"threads": q.threads, "seconds_to_timeout": _num(q.seconds_to_timeout)}
                               if q.threads is not None else {})}
                           for q in f.queues],
                "storm_version": f.defaults.version, "storm_version_given": f.defaults.given,
                "receive_buffer_unit": "tuples" if f.receive_buffer_source == "config" else f.defaults.buffer_unit,
                "acking": f.acking, "acking_source": f.acking_source, "throttle": f.throttle,
                "max_spout_pending": f.max_spout_pending,
                "message_timeout_secs": f.message_timeout_secs, "message_timeout_source": f.message_timeout_source,
                "pending": [{"spout": p.spout, "in_flight": p.in_flight, "throughput": _num(p.throughput),
                             "wait": _num(p.wait), "times_out": p.times_out} for p in f.pending],
            }
        return out


def _num(x: Fraction | None) -> dict[str, Any] | None:
    return None if x is None else {"exact": str(x), "value": float(x)}


def _linear_factor(figures: Callable[[Fraction], dict[str, tuple[Fraction, Fraction]]], within: Any,
                   slack: Fraction = Fraction(0)) -> tuple[Fraction | None, list[str], bool]:
    """min_j capacity_j / (inflow_j per unit factor), read where flows are linear.

    `figures(f)` gives {bolt: (inflow, capacity)} at load factor f; `within(inflow, capacity)` says the bolt
    is in the linear regime. Returns (factor, the bolts reaching it, whether a linear point was found)."""
    f = Fraction(1)
    for _ in range(_SHRINK_ROUNDS):
        m = figures(f)
        outside = [(i, c) for i, c in m.values() if not within(i, c)]
        if not outside:
            break
        f = f * min(c / i for i, c in outside) / 2
    else:
        return Fraction(0), [], False
    ratios = {n: c / (i / f) for n, (i, c) in m.items() if i > 0}
    if not ratios:
        return None, [], True
    best = min(ratios.values())
    return best, [n for n, r in ratios.items() if r <= best * (1 + slack)], True


def _all_bounded(topo: Topology, factor: Fraction) -> bool:
    return all(i < c for i, c in margins(scaled(topo, factor)).values())


def headroom(topo: Topology, rates: RateAnalysis | None = None) -> Headroom:
    """The headroom, the factor at which some bolt grows, and (when overloaded) Storm's response.

    `rates` is the document's rate analysis when already made (else it is made here); the figures at the
    document's own rates are read from it, those at other load factors from rate checks of scaled copies."""
    rates = rates if rates is not None else RateAnalysis(topo)
    if not rates.of(topo):
        raise ValueError("headroom: the rate analysis is of another topology")
    report = rates.report(suggest=False)  # statuses and queue bounds (the suggestion, below, only for a cycle)
    cyclic = report.cyclic
    read: dict[Fraction, LoadMargins] = {}
    solved: dict[str, bool] = {}  # whether the cycles were solved exactly where each factor was read

    def at(f: Fraction) -> LoadMargins:
        if f not in read:
            read[f] = rates.load_margins() if f == 1 else load_margins(scaled(topo, f))
        return read[f]

    def largest(f: Fraction) -> dict[str, tuple[Fraction, Fraction]]:
        solved["largest"] = at(f).cycles_solved
        return at(f).largest

    def nominal(f: Fraction) -> dict[str, tuple[Fraction, Fraction]]:
        solved["nominal"] = at(f).cycles_solved
        return at(f).nominal

    h: Fraction | None
    limiting: list[str]
    # a join whose cache no rate bounds (docs/model.md section 11: its branches deliver unequally, or are not proven
    # to deliver alike): no factor is proven, whatever the queues'
    open_joins = [b.name for b in topo.waiting_joins() if (j := join_figures(rates.figures, b)) and j.open_at_any_rate]
    if rates.figures.amplifying:  # at every factor a member of the cycle saturates: none is proven (decided
        h, limiting, found = Fraction(0), [], False  # as the shrinking would end; docs/boundedness.md)
    elif open_joins:
        h, limiting, found = Fraction(0), open_joins, False
    else:
        h, limiting, found = _linear_factor(largest, lambda i, c: i < c)
    # a cycle solved exactly is linear below the caps as an acyclic topology is; one iterated is not
    h_exact = found and (not cyclic or solved.get("largest", False))
    if found and not h_exact and h is not None:
        lo = Fraction(0)
        m = rates.margins()
        if all(i < c for i, c in m.values()):
            lo = Fraction(1)
        hi = max(h, lo * 2, Fraction(1, 10**6))
        for _ in range(_SHRINK_ROUNDS):  # an iterated cycle is not linear: find a factor not proven
            if not _all_bounded(topo, hi):
                break
            lo, hi = hi, hi * 2
        for _ in range(_BISECTION_ROUNDS):
            mid = (lo + hi) / 2
            if _all_bounded(topo, mid):
                lo = mid
            else:
                hi = mid
        h = lo.limit_denominator(10**9) if _all_bounded(topo, lo.limit_denominator(10**9)) else lo
        worst = margins(scaled(topo, hi))
        limiting = [n for n, (i, c) in worst.items() if not i < c]
    # a cycle whose gain is at least one amplifies any inflow without bound: the rate check says no parallelism
    # can fix such a bolt, and its finite iteration would give a tiny factor instead of none (the failure-free
    # suggestion: with failures on, None also means "not proven with failures")
    amplified = [n for n, p in rates.fluid_suggestion().items() if p is None] if cyclic else []
    g: Fraction | None
    if amplified:
        g, first, g_exact = Fraction(0), amplified, False
    else:
        g, first, _ = _linear_factor(nominal, lambda i, c: i <= c)
        g_exact = not cyclic or solved.get("nominal", False)
        if not g_exact:
            # in an iterated cycle the finite iteration leaves tied bolts a hair apart (in an order that varies)
            g, first, _ = _linear_factor(nominal, lambda i, c: i <= c, Fraction(1, 10**9))
    storm = forecast(topo, g, first, rates.nominal_margins()) if g is not None and g < 1 else None
    return Headroom(h, h_exact, limiting, g, first, storm, grows_at_exact=g_exact, ignores_failures=report.failures,
                    observed=topo.storm.observed, message_timeout_secs=topo.storm.message_timeout_secs,
                    timeout_risks=timeout_risks(topo, report), workers=topo.storm.workers,
                    worker_loss=_one_worker_loss(topo, rates) if topo.storm.workers == 1 else None,
                    worker_check=rates.worker_check(),
                    bolt_failures_survived=all(b.status == "bounded" for b in report.bolts.values())
                    if report.failures else None)


def _one_worker_loss(topo: Topology, rates: RateAnalysis) -> Fraction | None:
    """The most tuples the death of a topology's only worker loses (docs/model.md section 9): it runs every executor,
    so every bolt's queue and batch, each at most its queue bound (every run, until the death) plus its C_TAKE."""
    total = Fraction(0)
    for b in topo.bolts:
        bound = rates.figures.queue_bound[b.id]
        if bound is None:
            return None
        timed = duration_figures(rates.figures, b)  # a duration window: every tuple it holds unacked (its queue too)
        if timed is not None:
            if timed.pending is None:
                return None
            total += timed.pending
            continue
        window = window_figures(rates.figures, b)  # a count window: its windows' tuples too (the batch among them)
        if window is not None and window.timed_eviction and window.pending is not None:
            total += window.pending  # (a duration length on a count slide: docs/boundedness.md, "Mixed windows")
            continue
        total += bound + (b.take_max if window is None else max(Fraction(b.take_max), window.executors * window.length))
    return total
