"""The rate check's report: every bolt's figures, status and explanation, and the repair suggestion.

One analysis per snapshot: `RateAnalysis(topo)` holds the topology's one `RateFigures` and failure model
and makes each report, failure check, suggestion and table of margins once; the CLI's `check` and `verify`
hand it to the search and the headroom (app/core/headroom.py), the GUI keeps it beside its document's
snapshot (app/gui/document.py, `DocumentModel.rates`). `rate_check` and the functions below are the
one-off forms for a snapshot read once (tests/unit/test_one_analysis.py counts the constructions).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from app.core.failures import failure_model
from app.core.numbers import exact
from app.core.rates.failures_check import FailureCheck, failure_check
from app.core.rates.flows import RateFigures
from app.core.rates.joins import branch_name, join_figures
from app.core.rates.suggest import suggest as suggest_parallelism
from app.core.rates.suggest import suggest_with_failures, uncapped_probe
from app.core.rates.verdicts import Status, explain, flooding, status_of
from app.core.rates.windows import duration_figures, window_figures
from app.core.rates.workers_check import WorkerCheck, worker_check
from app.core.topology import Bolt, Topology
from app.core.workers import worker_model

T = TypeVar("T")

class BoltRates(BaseModel):
    """The rate check's figures for one bolt, in tuples per second."""

    name: str
    capacity_min: float
    capacity_max: float
    capacity_nominal: float
    inflow_min: float
    inflow_max: float  # over long windows of every run (what "bounded" compares)
    inflow_long_run_max: float | None = None  # in the long run of a repeating run (None: equal to inflow_max)
    inflow_nominal: float
    utilisation: float
    growth_nominal: float  # tuples/s the queue gains at nominal rates (0 when it keeps up)
    sigma: str = "1"  # the annotated σ, exactly
    sigma_effective: tuple[str, str] = ("1", "1")  # (σ_lo, σ_hi): exact long-run output ratios
    status: Status
    explanation: str
    queue_bound: float | None = None  # bounded: the queue never exceeds this, in any run (tuples)
    flooded_by: list[str] = []  # upstream bolts not proven bounded: after a backlog they may flood this one
    # under failures (RateReport.failures; docs/boundedness.md, "Failures"), None: no bound
    inflow_failures: float | None = None  # largest inflow rate with replays (tuples/s)
    added_load: float | None = None  # of which replays add (tuples/s) over the failure-free largest inflow
    lost_per_failure: float | None = None  # tuples one failure of this bolt loses at most (failing bolts)
    failures_note: str = ""  # one sentence about failures (empty when failures are off)
    failures_replays: str = ""  # what the failing bolts' losses and the spouts' replays are at most, in words
    failures_cycle: str = ""  # a failing bolt bounded per failure cycle: what bounds the paced backlog, in words
    # a count-windowed bolt (docs/model.md section 10), None for any other: tuples held unacked in every run (None
    # too when not bounded), and a tuple's time in its windows at the nominal inflow (s)
    window_pending: float | None = None
    window_hold_nominal: float | None = None
    # a duration-windowed bolt (docs/model.md section 10.3): its timer's sliding interval (s) and a tuple's longest
    # time in its windows in every run (s); its capacity figures then read 2^62 (a timer takes whatever arrived)
    window_timer: float | None = None
    window_hold_max: float | None = None
    # a join waiting for every branch (docs/model.md section 11), None for any other: its slowest branch, the parts/s
    # its cache gains at nominal timing, the messages its cache holds in every run (None: not proven), and the time a
    # message's parts wait for the slowest branch at nominal timing (s)
    join_slowest: str | None = None
    join_cache_growth: float | None = None
    join_cache_bound: float | None = None
    join_wait_nominal: float | None = None


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

    def to_public_json(self) -> dict[str, Any]:
        """The shape `stormbound check --json` prints (the failure figures only when failures are on)."""
        keys = ("capacity_min", "capacity_max", "inflow_min", "inflow_max", "utilisation", "status", "explanation",
                "queue_bound")
        more = ("inflow_failures", "added_load", "lost_per_failure", "failures_note")
        data: dict[str, Any] = {
            "bolts": {n: {**{k: getattr(b, k) for k in keys}, "sigma_effective": list(b.sigma_effective),
                          **({"inflow_long_run_max": b.inflow_long_run_max}
                             if b.inflow_long_run_max is not None else {}),
                          **({"window_pending": b.window_pending, "window_hold_nominal": b.window_hold_nominal}
                             if b.window_pending is not None or b.window_hold_nominal is not None else {}),
                          **({"window_timer": b.window_timer, "window_hold_max": b.window_hold_max}
                             if b.window_timer is not None else {}),
                          **({k: getattr(b, k) for k in ("join_slowest", "join_cache_growth", "join_cache_bound",
                                                         "join_wait_nominal")} if b.join_slowest is not None else {}),
                          **({k: getattr(b, k) for k in more} if self.failures else {}),
                          **({"failures_cycle": b.failures_cycle} if b.failures_cycle else {})}
                      for n, b in self.bolts.items()},
            "suggested_parallelism": self.suggested_parallelism,
        }
        if self.failures:
            data["failures"] = {"replay_rate": self.replay_rate, "replay_backlog": self.replay_backlog}
        return data

    def all_bounded(self, names: list[str] | None = None) -> bool:
        chosen = names if names is not None else list(self.bolts)
        return all(self.bolts[n].status == "bounded" for n in chosen)


def _num(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


class RateAnalysis:
    """The rate check of one topology snapshot: its exact figures and its failure model, each computed once,
    and every report and table of exact margins read from them, each made once and kept (`report`, the
    failure check, the suggestion, the margins). The one analysis of a snapshot that the search, the
    headroom, the forecast, the CLI and the GUI share (the GUI keeps it beside its document's snapshot);
    thread-safe, so that a worker may read what the GUI thread made. What it returns is shared: read it,
    never change it."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.figures = RateFigures(topo)
        self.model = failure_model(topo)  # None: no bolt can fail
        self._lock = threading.RLock()
        self._made: dict[str, Any] = {}

    def of(self, topo: Topology) -> bool:
        """Whether this is the analysis of `topo` (the same snapshot, or one equal to it)."""
        return self.topo is topo or self.topo == topo

    def _once(self, key: str, make: Callable[[], T]) -> T:
        """`make()` the first time, under the lock (the figures' flows are computed by one thread at a time);
        then the kept value, read without waiting for another thread's computation."""
        if key in self._made:
            return cast(T, self._made[key])
        with self._lock:
            if key not in self._made:
                self._made[key] = make()
            return cast(T, self._made[key])

    def fluid_report(self) -> RateReport:
        """The failure-free report (statuses as if nothing failed), without a suggestion."""
        return self._once("fluid", lambda: _fluid_report(self.topo, self.figures))

    def fluid_suggestion(self) -> dict[str, int | None]:
        """The smallest parallelism that keeps every queue bounded without failures (None: no value can)."""
        return self._once("fluid suggestion", lambda: suggest_parallelism(self.topo, self.figures, self.probe()))

    def probe(self) -> RateFigures:
        """The figures with every bolt keeping up (`uncapped_probe`), read by the suggestion and `at_target`."""
        return self._once("probe", lambda: uncapped_probe(self.topo))

    def failure_check(self) -> FailureCheck | None:
        """The verdicts under failures (None when no bolt can fail)."""
        model = self.model
        if model is None:
            return None
        return self._once("failures", lambda: failure_check(
            self.topo, self.figures, model, {b.id: status_of(self.figures, b.id) for b in self.topo.bolts}))

    def worker_check(self) -> WorkerCheck | None:
        """The verdicts with worker deaths (None when the document lets no worker die: docs/model.md section 9)."""
        model = worker_model(self.topo)
        if model is None:
            return None
        return self._once("workers", lambda: worker_check(
            self.topo, self.figures, model, {b.id: status_of(self.figures, b.id) for b in self.topo.bolts}))

    def report(self, suggest: bool = True) -> RateReport:
        """`rate_check`'s report (statuses with failures when a bolt can fail)."""
        return self._once(f"report {suggest}", lambda: self._report(suggest))

    def _report(self, suggest: bool) -> RateReport:
        fluid = self.fluid_report()  # the failure statuses replace entries of `bolts`: a dict of its own
        suggested = self.fluid_suggestion() if suggest else {}
        for b in self.topo.waiting_joins():  # no parallelism bounds a cache its branches fill unequally (model.md 11)
            j = join_figures(self.figures, b)
            if suggested and j is not None and j.open_at_any_rate:
                suggested = {**suggested, b.name: None}
        report = fluid.model_copy(update={"bolts": dict(fluid.bolts), "suggested_parallelism": suggested})
        check = self.failure_check()
        if check is None:
            return report
        return _with_failures(self.topo, check, report, suggest)

    def margins(self) -> dict[str, tuple[Fraction, Fraction]]:
        """Exact (largest inflow in every run, smallest capacity) per bolt name."""
        e = self.figures
        return self._once("margins", lambda: {b.name: (e.in_max[b.id], e.cap_min[b.id]) for b in self.topo.bolts})

    def repeating_margins(self) -> dict[str, tuple[Fraction, Fraction]]:
        """Exact (largest long-run inflow of a repeating run, smallest capacity) per bolt name."""
        e = self.figures
        return self._once("repeating_margins",
                          lambda: {b.name: (e.in_long[b.id], e.cap_min[b.id]) for b in self.topo.bolts})

    def nominal_margins(self) -> dict[str, tuple[Fraction, Fraction]]:
        """Exact (inflow, capacity) per bolt name at nominal timing (τ = 0, no idling)."""
        e = self.figures
        return self._once("nominal_margins",
                          lambda: {b.name: (e.in_nominal[b.id], e.cap_nominal[b.id]) for b in self.topo.bolts})

    def load_margins(self) -> LoadMargins:
        """`LoadMargins` at the snapshot's own rates."""
        return self._once("load", lambda: _load_margins(self.topo, self.figures))

    def failure_margins(self) -> dict[str, tuple[Fraction, Fraction]] | None:
        """Exact (largest inflow with replays, smallest capacity) per bolt name that has a bound under failures
        (None when no bolt can fail)."""
        check = self.failure_check()
        if check is None:
            return None
        e = self.figures
        return {b.name: (inflow, e.cap_min[b.id]) for b in self.topo.bolts
                if (inflow := check.bolts[b.id].inflow) is not None}


def rate_check(topo: Topology, *, suggest: bool = True) -> RateReport:
    """The instant fluid analysis of every bolt, with explanations and a repair suggestion.

    With a failure model (`failure_model(topo)` not None) the statuses account for failures and
    replays (app/core/rates/failures_check.py), `failures` is True and the suggestion is one the
    check proves bounded with failures; without, nothing changes. suggest=False leaves
    `suggested_parallelism` empty (the canvas colours bolts after every edit and needs no
    suggestion: with failures it costs several checks)."""
    return RateAnalysis(topo).report(suggest)


def _with_failures(topo: Topology, check: FailureCheck, report: RateReport, suggest: bool) -> RateReport:
    """The report with the statuses of the failure check (made with the report's failure-free statuses); a
    changed status is explained by its own figures."""
    for b in topo.bolts:
        f, rates = check.bolts[b.id], report.bolts[b.name]
        if not f.reached:  # the failure-free figures are the proof
            words = rates.explanation
        elif f.status == "bounded":
            words = f.note
        elif f.status != rates.status:
            words = f"{f.note} (without failures: {rates.explanation})"
        else:
            words = rates.explanation
        report.bolts[b.name] = rates.model_copy(update=dict(
            status=f.status, inflow_failures=_num(f.inflow), added_load=_num(f.added),
            queue_bound=(_num(f.queue) if f.reached else rates.queue_bound) if f.status == "bounded" else None,
            lost_per_failure=_num(f.lost), failures_note=f.note, failures_replays=f.replays, failures_cycle=f.cycle,
            explanation=words))
    return report.model_copy(update=dict(
        failures=True,
        suggested_parallelism=suggest_with_failures(topo, report.suggested_parallelism) if suggest else {},
        replay_rate={s.name: _num(check.spouts[s.id].replay_rate) for s in topo.spouts},
        replay_backlog={s.name: _num(check.spouts[s.id].backlog) for s in topo.spouts}))


def failure_margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]] | None:
    """Exact (largest inflow with replays, smallest capacity) per bolt name that has a bound under failures,
    for proofs that cite the numbers (None when no bolt can fail: then `margins` is the one)."""
    return RateAnalysis(topo).failure_margins()


def _fluid_report(topo: Topology, e: RateFigures) -> RateReport:
    """The failure-free report, without a suggestion."""
    bolts: dict[str, BoltRates] = {}
    for b in topo.bolts:
        status = status_of(e, b.id)
        cap_nominal = e.cap_nominal[b.id]
        bound = e.queue_bound[b.id]
        long_run = e.in_long[b.id]
        bolts[b.name] = BoltRates(
            name=b.name,
            capacity_min=float(e.cap_min[b.id]),
            capacity_max=float(e.cap_max[b.id]),
            capacity_nominal=float(cap_nominal),
            inflow_min=float(e.in_min[b.id]),
            inflow_max=float(e.in_max[b.id]),
            inflow_long_run_max=None if long_run == e.in_max[b.id] else float(long_run),
            inflow_nominal=float(e.in_nominal[b.id]),
            utilisation=float(_utilisation(e, b)),
            growth_nominal=float(max(Fraction(0), e.in_nominal[b.id] - cap_nominal)),
            sigma=str(e.sigma[b.id]),
            sigma_effective=(str(e.sigma_lo[b.id]), str(e.sigma_hi[b.id])),
            status=status,
            explanation=explain(b.name, e, b.id, status),
            queue_bound=None if bound is None else float(bound),
            flooded_by=flooding(e, b.id),
            **_window_fields(e, b),
            **_join_fields(e, b),
        )
    return RateReport(
        bolts=bolts,
        spout_rate_min={s.name: float(e.spout_min[s.id]) for s in topo.spouts},
        spout_rate_max={s.name: float(e.spout_max[s.id]) for s in topo.spouts},
        suggested_parallelism={},
        cyclic=e.cyclic,
    )


def _utilisation(e: RateFigures, bolt: Bolt) -> Fraction:
    """ρ at nominal timing: the inflow over the capacity; a duration window's share of its timer's interval that an
    evaluation takes, α / S (its evaluations do not follow the inflow: docs/model.md section 10.3)."""
    window = bolt.duration_window
    if window is not None:
        return exact(bolt.alpha) / exact(window.interval)
    return e.in_nominal[bolt.id] / e.cap_nominal[bolt.id]


def _window_fields(e: RateFigures, bolt: Bolt) -> dict[str, float | None]:
    """A windowed bolt's pending tuples and hold times (app/core/rates/windows.py); nothing for another."""
    timed = duration_figures(e, bolt)
    if timed is not None:
        return {"window_pending": None if timed.pending is None else float(timed.pending),
                "window_hold_nominal": None if timed.hold_nominal is None else float(timed.hold_nominal),
                "window_timer": float(timed.slide),
                "window_hold_max": None if timed.hold_max is None else float(timed.hold_max)}
    w = window_figures(e, bolt)
    if w is None:
        return {}
    return {"window_pending": None if w.pending is None else float(w.pending),
            "window_hold_nominal": None if w.hold_nominal is None else float(w.hold_nominal)}


def _join_fields(e: RateFigures, bolt: Bolt) -> dict[str, float | str | None]:
    """A join's slowest branch and cache figures (app/core/rates/joins.py); nothing for another bolt."""
    j = join_figures(e, bolt)
    if j is None:
        return {}
    return {"join_slowest": branch_name(e, j.slowest), "join_cache_growth": float(j.growth),
            "join_cache_bound": None if j.cache_bound is None else float(j.cache_bound),
            "join_wait_nominal": None if j.wait_nominal is None else float(j.wait_nominal)}


def bounded_bolts(topo: Topology, parallelism: dict[str, int] | None = None) -> dict[str, bool]:
    """Per bolt name: proven bounded in every run (failure-free)."""
    e = RateFigures(topo, parallelism)
    return {b.name: e.bounded(b.id) for b in topo.bolts}


def margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]]:
    """Exact (largest inflow in every run, smallest capacity) per bolt name, for proofs that cite the numbers."""
    return RateAnalysis(topo).margins()


def repeating_margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]]:
    """Exact (largest long-run inflow of a repeating run, smallest capacity) per bolt name: no lasso makes a
    bolt grow when the first is below the second."""
    return RateAnalysis(topo).repeating_margins()


def queue_bounds(topo: Topology) -> dict[str, Fraction | None]:
    """Exact every-run queue bound per bolt name (None: not proven bounded), failure-free."""
    e = RateFigures(topo)
    return {b.name: e.queue_bound[b.id] for b in topo.bolts}


@dataclass(frozen=True)
class LoadMargins:
    """The exact (inflow, capacity) pairs per bolt name that load factors are read from: `largest` (long-run
    largest inflow, smallest capacity: every bolt is bounded when each is below, and these flows are linear in
    the spout rates below the caps) and `nominal` (τ = 0, no idling: grows when above), and whether every
    cycle's flows were solved exactly (docs/boundedness.md, "Cycles")."""

    largest: dict[str, tuple[Fraction, Fraction]]
    nominal: dict[str, tuple[Fraction, Fraction]]
    cycles_solved: bool


def load_margins(topo: Topology) -> LoadMargins:
    """`largest` and `nominal_margins` from one exact rate check, with whether its cycles were solved exactly."""
    return _load_margins(topo, RateFigures(topo))


def _load_margins(topo: Topology, e: RateFigures) -> LoadMargins:
    largest = {b.name: (e.in_long[b.id], e.cap_min[b.id]) for b in topo.bolts}
    nominal = {b.name: (e.in_nominal[b.id], e.cap_nominal[b.id]) for b in topo.bolts}
    return LoadMargins(largest, nominal, e.cycles_solved)


def nominal_margins(topo: Topology) -> dict[str, tuple[Fraction, Fraction]]:
    """Exact (inflow, capacity) per bolt name at nominal timing (τ = 0, no idling): it grows when inflow > capacity."""
    return RateAnalysis(topo).nominal_margins()


def no_parallelism_reason(report: RateReport) -> str:
    """Why a bolt's suggestion is None, in the words `check`, `repair` and the GUI use."""
    if report.failures:
        return ("σ or a cycle amplifies its inflow, or with failures the rate check proves no parallelism "
                "tried bounded: docs/boundedness.md, \"Failures\"")
    return "σ or a cycle amplifies its inflow, or a join's branches fill its cache unequally"
