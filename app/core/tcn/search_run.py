"""What every phase of a verification shares: `SearchControl`, the settings of one search (resolved
from its `SearchOptions` and the document), its z3 context, how it stops (cancelled or out of time),
its progress reports and how a certified lasso becomes verdicts; `Run`, what the verification has
found so far, passed from phase to phase (app/core/tcn/search.py runs them: the rate check,
app/core/tcn/search_rates.py; proofs, app/core/tcn/search_proofs.py; lassos by simulation,
app/core/tcn/search_lassos.py; the solver, app/core/tcn/search_solver.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import z3

from app.core.formats import limits
from app.core.formats.trace import AnyTrace, trace_positions
from app.core.rates import RateAnalysis
from app.core.results import BoltVerdict, Progress
from app.core.tcn.failing import failures_read
from app.core.tcn.options import LoopClocks, SearchOptions
from app.core.tcn.schedule_order import ScheduleOrder
from app.core.tcn.simulate import Lasso
from app.core.topology import Problem, Topology

# Past the time limit, a lasso found before it may still be certified and recorded for at most this long:
# max(OVERTIME_MIN_S, OVERTIME_SHARE × the limit) (docs/verifier.md, "The time limit"), so a verification ends
# within its limit plus that margin; the simulation leaves the time its certification will take (search_lassos.py)
OVERTIME_MIN_S = 1.0
OVERTIME_SHARE = 0.05
# of the overtime, this share is kept for what follows a certification stopped at its end: the certifier's last poll,
# dropping the lasso it held (random #188's 81,498 positions: 0.2 s under load, bench/RESULTS.md), the unbounded
# proofs after the search and the summary; a certification and those proofs stop at the rest (`end`)
WRAP_UP_SHARE = 0.25


def deepening_schedule(k_min: int, k_max: int) -> list[int]:
    """Bounds to try, ending at k_max: steps of 4 up to 24, then of 8 (monotone in k, so jumps are safe)."""
    ks: list[int] = []
    k = max(2, min(k_min, k_max))
    while k < k_max:
        ks.append(k)
        k += 4 if k < 24 else 8
    ks.append(k_max)
    return ks


def solver_stats(solver: z3.Solver) -> dict[str, float | int]:
    """The solver's statistics that are numbers (for progress reports)."""
    out: dict[str, float | int] = {}
    try:
        st = solver.statistics()
        for key in st.keys():  # noqa: SIM118 -- z3's Statistics has keys() but no __iter__/__contains__
            value = st.get_key_value(key)
            if isinstance(value, (int, float)):
                out[key] = value
    except z3.Z3Exception:
        pass
    return out


@dataclass
class Run:
    """What one verification has found so far, passed from phase to phase of `Search.run`."""

    start: float
    checked: list[str]
    report: Any  # the rate check's RateReport
    base: dict[str, Any]  # the result's property, checked bolts, threshold and rate-check figures
    verdicts: dict[str, BoltVerdict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    traces: list[AnyTrace] = field(default_factory=list)
    durations: dict[int, Fraction] = field(default_factory=dict)  # per trace: its loop's, as certified (when known)
    proven: dict[str, int] = field(default_factory=dict)  # per target: the largest k proven to have no lasso
    targets: list[str] = field(default_factory=list)
    nets: dict[str, Any] = field(default_factory=dict)  # per target: its cone of influence
    kept: list[str] = field(default_factory=list)
    ks: list[int] = field(default_factory=list)
    steady: frozenset[str] = frozenset()
    downgraded: frozenset[str] = frozenset()  # bounded without failures, searched because bolts may fail
    capped: set[str] = field(default_factory=set)  # targets whose first simulation stopped at its cell bound
    phases: list[list[str]] = field(default_factory=list)
    stop: str | None = None
    tried: dict[str, list[str]] = field(default_factory=dict)  # per target: what each phase tried and why it failed
    # targets answered `unbounded` before the search by a flood from a source proven to grow by rates (search.py,
    # `_early_floods`): like a growth proven by rates, a lasso the trace passes find answers for them instead
    early: set[str] = field(default_factory=set)
    played: dict[int, Any] = field(default_factory=dict)  # per trace simulated: the Schedule that closed its lasso
    orders: dict[str, ScheduleOrder] = field(default_factory=dict)  # per target: its schedules, generated once
    # per target proven to grow by rates: the lasso the quick trace pass found but did not certify within its budget
    uncertified: dict[str, Lasso] = field(default_factory=dict)

    def attempt(self, target: str, what: str) -> None:
        """Record what a phase tried for `target` without deciding it (its words for an undecided bolt)."""
        self.tried.setdefault(target, []).append(what)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def schedule_order(self, target: str) -> ScheduleOrder:
        """The schedules every simulation of `target` plays, on its cone (app/core/tcn/schedule_order.py)."""
        order = self.orders.get(target)
        if order is None or order.net is not self.nets[target]:
            order = self.orders[target] = ScheduleOrder(self.nets[target], target)
        return order


class SearchControl:
    """The settings, z3 context, stop signals and progress of one search (see module docstring)."""

    def __init__(self, topo: Topology, options: SearchOptions | None = None, *,
                 progress: Callable[[Progress], None] | None = None, rates: RateAnalysis | None = None) -> None:
        options = SearchOptions() if options is None else options
        if rates is not None and not rates.of(topo):
            raise ValueError("Search: the rate analysis is of another topology")
        # the topology's rate analysis when its caller has one (the CLI, the GUI's document), else made by the
        # rate phase
        self.rates = rates
        ver = topo.verification
        self.topo = topo
        self.options = options
        self.single_k = options.k
        self.k_min = ver.k_min
        self.k_max = options.k_max if options.k_max is not None else (ver.k if ver.k is not None else ver.k_max)
        self.timeout_s = options.timeout_s if options.timeout_s is not None else ver.timeout_s
        self.force_search = options.force_search
        self.threshold = options.threshold
        self.flood_run = options.flood_run
        self.progress = progress
        self.widen_s = options.widen_s
        self.loop_clocks: LoopClocks = options.loop_clocks
        self.simulate = options.simulate
        # max_k: the largest bound encoded (docs/limits.md); an encoding grows linearly in k
        self.max_k = limits.MAX_K if options.max_k is None else options.max_k
        k, k_max = options.k, options.k_max
        bound, field = ((k, "k") if k is not None else (k_max, "k_max") if k_max is not None
                        else (ver.k, "verification.k") if ver.k is not None else (ver.k_max, "verification.k_max"))
        if bound > self.max_k:
            raise limits.FormatError([Problem(field, f"{bound} is over the limit of {self.max_k} positions "
                                                     "(raise it with verify --max-k N or STORMBOUND_MAX_K; "
                                                     "docs/limits.md)")])
        self.deadline: float | None = None
        self.ctx = z3.Context()
        # z3 objects of this context may be freed by the garbage collector of another thread (the GUI's,
        # while this search runs in a worker): make those reference decrements thread-safe
        z3.Z3_enable_concurrent_dec_ref(self.ctx.ref())
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self.failing = False  # whether a bolt can fail (the rate phase reads the failure model, once)

    # ---- control ---------------------------------------------------------
    def cancel(self) -> None:
        """Stop the search from any thread; z3 is interrupted until the run returns."""
        self._cancelled.set()

        def keep_interrupting() -> None:
            # an interrupt that arrives between two checks is lost, so repeat it
            for _ in range(250):
                if self._finished.is_set():
                    return
                self.ctx.interrupt()
                if self._finished.wait(0.02):
                    return

        threading.Thread(target=keep_interrupting, name="stormbound-cancel", daemon=True).start()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def interrupted(self) -> bool:
        """Cancelled, or past the time limit: what long loops (building an encoding) poll."""
        return self._cancelled.is_set() or (self.deadline is not None and time.monotonic() >= self.deadline)

    def overtime(self) -> float:
        """How long past the time limit a lasso found before it may still be certified (0 without a limit)."""
        return 0.0 if self.timeout_s is None else max(OVERTIME_MIN_S, OVERTIME_SHARE * self.timeout_s)

    def end(self) -> float | None:
        """The `time.monotonic()` instant by which certifying a lasso found before the limit, and the proofs after
        the search, stop: the time limit and its overtime but WRAP_UP_SHARE of it, which is left for dropping what a
        stopped certification held and for the summary, so that the verification ends within its limit and
        overtime."""
        return None if self.deadline is None else self.deadline + self.overtime() * (1 - WRAP_UP_SHARE)

    def overdue(self) -> bool:
        """Cancelled, or past the time limit and its overtime: what certifying a lasso found before the limit polls."""
        end = self.end()
        return self._cancelled.is_set() or (end is not None and time.monotonic() >= end)

    def finished(self) -> None:
        """The run has returned: no more interrupts."""
        self._finished.set()

    def stop_reason(self, elapsed: float) -> str | None:
        """Why the search must stop now ("cancelled", "time limit reached"), or None."""
        if self.cancelled:
            return "cancelled"
        if self.timeout_s is not None and self.timeout_s - elapsed <= 0:
            return "time limit reached"
        return None

    def report(self, k: int, elapsed: float, solver: z3.Solver, message: str) -> None:
        """A progress report with the solver's statistics, when someone listens."""
        if self.progress is not None:
            self.progress(Progress(k=k, elapsed_s=elapsed, stats=solver_stats(solver), message=message))

    def announce(self, run: Run, doing: str, k: int = 0) -> None:
        """Every verdict known so far and what the search does next: a progress report without a message."""
        if self.progress is not None:
            self.progress(Progress(k=k, elapsed_s=run.elapsed(), doing=doing, verdicts=dict(run.verdicts)))

    def record(self, trace: AnyTrace, growth: dict[str, int], index: int, checked: list[str],
               verdicts: dict[str, BoltVerdict], method: str = "solver", duration: Fraction | None = None,
               failures: tuple[bool, str | None] | None = None) -> str | None:
        """Every checked bolt this certified lasso answers for, and not yet answered, gets it; the failures of its
        loop in words (`failure_summary`), when bolts may fail. `duration` and `failures` (whether some bolt fails,
        and the words): as its certificate read them (else read from the trace: a long compressed one is expanded
        for them, seconds for 10^5 positions)."""
        if self.threshold is not None:
            reached = {n for p in trace_positions(trace) for n, b in p.bolts.items()
                       if n in checked and b.queue >= self.threshold}
            for n in sorted(reached):
                if n not in verdicts:
                    verdicts[n] = BoltVerdict(verdict="counterexample", k=trace.k, certified=True, trace_index=index,
                                              method=method,
                                              message=f"its queue reaches {self.threshold} within {trace.k} positions")
            return None
        built = ", built by simulation," if method == "simulation" else ""
        failing, summary = (None, None) if not self.failing else failures_read(trace) if failures is None else failures
        loop = trace.loop_duration() if duration is None else duration
        for n in checked:
            if growth.get(n, 0) > 0 and n not in verdicts:
                # a join's growth is what it holds more: its queue and its cache (docs/model.md section 11)
                held = "queue and cache" if self.topo.bolt_by_name(n).waits_for_all else "queue"
                verdicts[n] = BoltVerdict(
                    verdict="counterexample", k=trace.k, loop_start=trace.loop_start, growth_per_loop=growth[n],
                    certified=True, trace_index=index, method=method, failures=failing,
                    message=(f"a certified lasso of {trace.k} positions{built} repeats "
                             f"{trace.loop_start}..{trace.k} every {float(loop):.4g} s "
                             f"and {n}'s {held} gain{'s' if held == 'queue' else ''} {growth[n]} per pass"
                             + (f", with failures: {summary}" if summary else "")))
        return summary
