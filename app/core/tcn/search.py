"""The verifier's front: rate-check proof, deepening search over k, certification, verdicts.

`Search(topo, SearchOptions(...)).run()` blocks (the GUI calls it in a worker thread);
`cancel()` may be called from any thread and turns the result into `unknown` within 100 ms.
Each Search owns one `z3.Context`; no z3 object leaves this module. `SearchOptions` is the
one description of what to search that the CLI's `verify`, the GUI's worker and the tests
build (app/core/tcn/options.py, free of z3 so that the GUI builds it without loading the solver).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import z3

from app.core.formats import limits
from app.core.formats.trace import Trace, format_time
from app.core.gc_pause import paused_gc
from app.core.rates import RateAnalysis
from app.core.results import BoltVerdict, LinearCertificate, Progress, VerifyResult
from app.core.tcn.certificate_input import semantics_hash
from app.core.tcn.certify import certify
from app.core.tcn.decode import decode
from app.core.tcn.encode import Cancelled, Encoding
from app.core.tcn.failing import failure_summary, has_failures
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network, lasso_lower_bound
from app.core.tcn.options import LoopClocks, SearchOptions, deepening_schedule
from app.core.tcn.rate_growth import growth_message, prove_growth
from app.core.tcn.rate_growth_check import check_growth_certificate
from app.core.tcn.simulate import build_lasso
from app.core.tcn.summary import summarise, what_would_decide
from app.core.topology import Problem, Topology

__all__ = ["SOLVER_OPTIONS", "Search", "SearchOptions", "deepening_schedule", "verify"]

SOLVER_OPTIONS: dict[str, object] = {"smt.arith.solver": 2}  # measured: 5-10x faster here (docs/verifier.md)
WIDEN_BUDGET_S = 20.0  # after a lasso is found: most time spent looking for one where more checked queues grow
MAX_DEFECTS = 5
SIMULATION_BUDGET_S = 5.0  # per target: building a lasso by simulation before any solver call
RESTART_FIRST_S = 2.0  # first solver budget per bound; doubled with a new random seed on each restart
# per target whose lasso must hold a whole failure cycle (bounded without failures): 10^4 to 10^6 positions that
# only the simulation reaches (StormCrawler's 311,558-position lasso: 49 s on a loaded machine)
FAILURE_CYCLE_BUDGET_S = 300.0
LINEAR_BUDGET_S = 10.0  # per target: the linear program over one loop pass (measured: 10-100 ms)


def _stats(solver: z3.Solver) -> dict[str, float | int]:
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
class _Run:
    """What one verification has found so far, passed from phase to phase of `Search._run`."""

    start: float
    checked: list[str]
    report: Any  # the rate check's RateReport
    base: dict[str, Any]  # the result's property, checked bolts, threshold and rate-check figures
    verdicts: dict[str, BoltVerdict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    traces: list[Trace] = field(default_factory=list)
    proven: dict[str, int] = field(default_factory=dict)  # per target: the largest k proven to have no lasso
    targets: list[str] = field(default_factory=list)
    nets: dict[str, Any] = field(default_factory=dict)  # per target: its cone of influence
    kept: list[str] = field(default_factory=list)
    ks: list[int] = field(default_factory=list)
    steady: frozenset[str] = frozenset()
    downgraded: frozenset[str] = frozenset()  # bounded without failures, searched because bolts may fail
    phases: list[list[str]] = field(default_factory=list)
    stop: str | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.start


class Search:
    """One verification of one property on one topology (see module docstring)."""

    def __init__(self, topo: Topology, options: SearchOptions | None = None, *,
                 progress: Callable[[Progress], None] | None = None) -> None:
        options = SearchOptions() if options is None else options
        ver = topo.verification
        self.topo = topo
        self.options = options
        self.single_k = options.k
        self.k_min = ver.k_min
        self.k_max = options.k_max if options.k_max is not None else (ver.k if ver.k is not None else ver.k_max)
        self.timeout_s = options.timeout_s if options.timeout_s is not None else ver.timeout_s
        self.force_search = options.force_search
        self.threshold = options.threshold
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
        self._deadline: float | None = None
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

    def _interrupted(self) -> bool:
        """Cancelled, or past the time limit: what long loops (building an encoding) poll."""
        return self._cancelled.is_set() or (self._deadline is not None and time.monotonic() >= self._deadline)

    # ---- the run ---------------------------------------------------------
    def run(self) -> VerifyResult:
        """Decide the property; blocking."""
        try:
            return self._run()
        finally:
            self._finished.set()

    def _run(self) -> VerifyResult:
        """The phases of a verification: the rate check (which may prove everything bounded), the
        targets and their cones, lassos built by simulation, the solver's deepening search, and the
        verdicts of what is left undecided."""
        run = self._rate_phase()
        if isinstance(run, VerifyResult):
            return run
        self._plan(run)
        self._announce(run, f"searching {', '.join(run.targets)}")
        simulating = self.simulate and self.threshold is None and self.single_k is None
        if simulating:
            self._simulation_phase(run)
        if self.threshold is None and not self.force_search:
            if simulating:  # --no-simulate and --k ask for the solver's own lassos
                self._rate_growth_phase(run)
            self._linear_phase(run)
        if simulating:
            self._failure_cycle_phase(run)
        self._deepening_phase(run)
        self._close_undecided(run)
        ordered = {n: run.verdicts[n] for n in run.checked}
        return summarise(run.base, run.kept, run.notes, run.elapsed(), ordered, run.traces, run.report, run.stop,
                         self.threshold, run.nets, run.downgraded)

    def _rate_phase(self) -> _Run | VerifyResult:
        """The rate check: every checked bolt it proves bounded (in every run) or free of growing lassos gets
        that verdict (growth property, unless forcing the search); a result when that is all of them."""
        start = time.monotonic()
        self._deadline = None if self.timeout_s is None else start + self.timeout_s
        topo = self.topo
        checked = [b.name for b in topo.checked_bolts()]
        rates = RateAnalysis(topo)  # the exact figures and the failure model, once
        self.failing = rates.model is not None
        report = rates.report(suggest=False)  # statuses only; with a failure model they cover the replays
        # bounded when nothing fails but not with failures: a lasso, if any, needs failures (the long ones)
        free = rates.fluid_report() if self.failing else report
        exact = rates.margins()
        with_failures = rates.failure_margins() or {}
        rate_json: dict[str, Any] = {
            "bolts": {n: {"status": report.bolts[n].status, "inflow_max": format_time(exact[n][0]),
                          "capacity_min": format_time(exact[n][1]),
                          "sigma_effective": list(report.bolts[n].sigma_effective),
                          "queue_bound": report.bolts[n].queue_bound,
                          "explanation": report.bolts[n].explanation}
                      for n in checked},
            "all_checked_bounded": report.all_bounded(checked),
        }
        prop = "growth" if self.threshold is None else "threshold"
        run = _Run(start=start, checked=checked, report=report,
                   base=dict(property=prop, checked=checked, threshold=self.threshold, rate_check=rate_json),
                   downgraded=frozenset(n for n, b in report.bolts.items()
                                        if b.status != "bounded" and free.bolts[n].status == "bounded"))
        if prop == "growth" and not self.force_search:
            repeating = rates.repeating_margins()
            for n in checked:
                status = report.bolts[n].status
                if status == "bounded":
                    inflow, capacity = with_failures.get(n, exact[n]) if report.failures else exact[n]
                    bound = report.bolts[n].queue_bound
                    run.verdicts[n] = BoltVerdict(
                        verdict="bounded", method="rate check", queue_bound=bound,
                        message=(f"{n} receives at most {float(inflow):.4g} tuples/s (exactly {format_time(inflow)})"
                                 f"{' with failures' if report.failures and n in with_failures else ''} in any long "
                                 f"window of any run and processes at least {float(capacity):.4g} (exactly "
                                 f"{format_time(capacity)}), so its queue stays below {bound:.4g} tuples"))
                elif status == "no-repeating-growth":
                    inflow, capacity = repeating[n]
                    upstream = ", ".join(report.bolts[n].flooded_by) or "an upstream bolt"
                    run.verdicts[n] = BoltVerdict(
                        verdict="no-repeating-growth", method="rate check",
                        message=(f"in the long run of any lasso {n} receives at most {float(inflow):.4g} tuples/s "
                                 f"(exactly {format_time(inflow)}) and processes at least {float(capacity):.4g} "
                                 f"(exactly {format_time(capacity)}), so no repeating run makes its queue grow; it "
                                 f"is not bounded in every run: {upstream} may back up and then flood it"))
        if prop == "growth" and len(run.verdicts) == len(checked):
            cited = "; ".join(run.verdicts[n].message for n in checked)
            if all(v.verdict == "bounded" for v in run.verdicts.values()):
                return VerifyResult(verdict="bounded", elapsed_s=run.elapsed(), kept=[c.name for c in topo.components],
                                    bolts=run.verdicts,
                                    message=("bounded: every checked bolt's queue stays below a bound in every run "
                                             f"(docs/boundedness.md): {cited}."), **run.base)
            return VerifyResult(verdict="no-repeating-growth", elapsed_s=run.elapsed(),
                                kept=[c.name for c in topo.components], bolts=run.verdicts,
                                message=("no repeating run grows: no lasso of any length makes a checked bolt's queue "
                                         "grow, but not every checked bolt is bounded in every run "
                                         f"(docs/boundedness.md): {cited}."), **run.base)
        return run

    def _plan(self, run: _Run) -> None:
        """One target per checked bolt that the rate check does not prove bounded, each searched on
        its own cone of influence (a lasso of a cone extends to the whole network): small cones
        solve much faster than the union. Bolts the rate check says `grows` go first, all the way
        up the bounds; a lasso found for one bolt also answers for every checked bolt growing in it."""
        report, topo = run.report, self.topo
        skipped = [n for n in run.verdicts]
        if skipped:
            run.notes.append("not searched, decided by the rate check: "
                             + "; ".join(report.bolts[n].explanation for n in skipped))
        targets = [n for n in run.checked if n not in run.verdicts]
        run.nets = {n: build_network(topo, [n]) for n in targets}
        # bolts bounded but for failures last: their lassos, if any, are the long ones of a failure cycle
        targets.sort(key=lambda n: (n in run.downgraded, report.bolts[n].status != "grows", len(run.nets[n].kept)))
        run.targets = targets
        run.kept = [c.name for c in topo.components if any(c.name in run.nets[n].kept for n in targets)]
        for n in targets:
            net = run.nets[n]
            run.notes.append(f"cone of influence of {n}: kept {', '.join(net.kept)}"
                             + (f"; dropped {', '.join(net.dropped)}" if net.dropped else ""))
        run.ks = [self.single_k] if self.single_k is not None else deepening_schedule(self.k_min, self.k_max)
        # queues no lasso can make grow stay level in any lasso (not assumed when forcing the search, which
        # exists to test that very proof); sound because the rate check is (docs/boundedness.md)
        bounded = frozenset(n for n, b in report.bolts.items() if b.status in ("bounded", "no-repeating-growth"))
        run.steady = frozenset() if self.force_search else bounded
        first = [n for n in targets if report.bolts[n].status == "grows" and self.threshold is None]
        run.phases = [first, [n for n in targets if n not in first]]

    def _simulation_phase(self, run: _Run) -> None:
        """Cheap lassos first (docs/simulation.md): one simulation per target not yet answered, but those whose
        lasso must hold a whole failure cycle (their long simulation comes after the linear program)."""
        for target in (t for phase in run.phases for t in phase):
            if target not in run.verdicts and target not in run.downgraded and not self._stop_reason(run.elapsed()):
                self._announce(run, f"{target}: building a lasso by simulation")
                self._simulated(run.nets[target], target, run.checked, run.steady, run.notes, run.traces,
                                run.verdicts, run.elapsed)

    def _failure_cycle_phase(self, run: _Run) -> None:
        """Targets bounded without failures and still undecided after the linear program: a lasso in which they
        grow holds a whole failure cycle, out of the solver's reach; the simulation gets up to
        FAILURE_CYCLE_BUDGET_S for each (or what is left of the time limit)."""
        for target in (t for phase in run.phases for t in phase):
            if target in run.downgraded and target not in run.verdicts and not self._stop_reason(run.elapsed()):
                self._announce(run, f"{target}: a long simulation through a failure cycle")
                self._simulated(run.nets[target], target, run.checked, run.steady, run.notes, run.traces,
                                run.verdicts, run.elapsed, bounded_without_failures=True,
                                budget_s=FAILURE_CYCLE_BUDGET_S)

    def _rate_growth_phase(self, run: _Run) -> None:
        """Growth proven by rates (app/core/tcn/rate_growth.py, docs/verifier.md): every target still undecided
        that grows under the fixed fastest-upstream, slowest-target schedule gets `counterexample` with the
        schedule's exact rates as its certificate, without writing the lasso's positions."""
        for target in run.targets:
            if target in run.verdicts or self._stop_reason(run.elapsed()):
                continue
            self._announce(run, f"{target}: a proof of growth by rates")
            cert = prove_growth(run.nets[target].topology, target)
            if cert is None:
                continue
            problems = check_growth_certificate(run.nets[target].topology, cert)
            if problems:  # the independent checker has the last word, as the certifier has for traces
                run.notes.append(f"defect: a proof of growth by rates for {target} was rejected by its checker "
                                 "and discarded: " + "; ".join(problems[:3]))
                continue
            run.verdicts[target] = BoltVerdict(verdict="counterexample", method="rate proof", growth_certificate=cert,
                                               certified=True,
                                               failures=False if run.nets[target].failures is not None else None,
                                               message=growth_message(cert))
            if self.progress is not None:
                self.progress(Progress(k=0, elapsed_s=run.elapsed(), message=f"{target}: grows (proven by rates)"))

    def _linear_phase(self, run: _Run) -> None:
        """The linear program over one loop pass (app/core/tcn/linear.py, docs/verifier.md): every target
        still undecided whose rows have no solution in which it grows gets `no-repeating-growth` with the
        Farkas multipliers as its certificate, is not searched, and is held level in the other cones."""
        proven: list[str] = []
        for target in run.targets:
            if target in run.verdicts or self._stop_reason(run.elapsed()):
                continue
            net = run.nets[target]
            self._announce(run, f"{target}: the linear program over one loop pass")
            started = time.monotonic()
            rows = build_rows(net, target)
            budget = LINEAR_BUDGET_S if self.timeout_s is None else min(LINEAR_BUDGET_S,
                                                                       self.timeout_s - run.elapsed())
            multipliers = farkas(rows, timeout_ms=max(1, int(budget * 1000)), cancelled=self._interrupted)
            if multipliers is None:
                continue
            took = time.monotonic() - started
            failing = net.failures is not None
            run.verdicts[target] = BoltVerdict(
                verdict="no-repeating-growth", method="linear program",
                certificate=LinearCertificate(target=target, content_hash=semantics_hash(net.topology),
                                              rows={name: str(y) for name, y in multipliers.items()}),
                message=(f"no lasso of any length makes {target}'s queue grow: summed over one pass of a loop, "
                         f"the counts of its cone ({', '.join(net.kept)}) obey {len(rows)} linear relations"
                         + (" (failures and replays included)" if failing else "")
                         + f" that have no solution in which it grows; {len(multipliers)} of them, weighted by "
                         "exact Farkas multipliers, add up to the contradiction -1 ≥ 0 (the certificate; "
                         "docs/verifier.md). It is not bounded in every run"))
            proven.append(target)
            if self.progress is not None:
                self.progress(Progress(k=0, elapsed_s=run.elapsed(),
                                       message=f"{target}: no repeating run grows (linear program, {took:.2f} s)"))
        if proven:
            run.steady = run.steady | frozenset(proven)

    def _deepening_phase(self, run: _Run) -> None:
        """The solver, bound by bound (grows-targets first, each all the way up), until every target is
        answered or the search must stop (`run.stop`)."""
        # the bound's argument (every bolt that passes tuples on emits inside the loop) fails when a bolt may
        # fail before each emit (docs/model.md 7.2): with failures no bound is assumed
        shortest = ({n: lasso_lower_bound(run.nets[n]) for n in run.targets if run.nets[n].failures is None}
                    if self.threshold is None else {})
        for k, target in ((k, t) for phase in run.phases for k in run.ks for t in phase):
            if target in run.verdicts:
                continue
            run.stop = self._stop_reason(run.elapsed())
            if run.stop:
                break
            if k < shortest.get(target, 0):  # provably no lasso this short: no solver call
                run.proven[target] = k
                continue
            self._announce(run, f"{target}: the solver at k = {k}", k)
            outcome = self._solve(run.nets[target], k, target, run.targets, run.steady, run.notes, run.elapsed)
            if isinstance(outcome, str):
                if outcome == "unsat":
                    run.proven[target] = k
                    continue
                if outcome == "defects":
                    run.verdicts[target] = BoltVerdict(
                        verdict="unknown", k=run.proven.get(target),
                        message=f"the solver kept producing traces that fail certification at k = {k}")
                    continue
                run.stop = outcome
                break
            trace, growth = outcome
            run.traces.append(trace)
            self._record(trace, growth, len(run.traces) - 1, run.checked, run.verdicts)

    def _close_undecided(self, run: _Run) -> None:
        """Targets without an answer: unknown when the search stopped, else none up to the bound reached."""
        for n in [n for n in run.targets if n not in run.verdicts]:
            if run.stop:
                upto = f" (no counterexample up to k = {run.proven[n]} before that)" if n in run.proven else ""
                run.verdicts[n] = BoltVerdict(verdict="unknown", k=run.proven.get(n), message=f"{run.stop}{upto}")
            else:
                k_done = run.proven.get(n, run.ks[-1])
                message = f"no lasso makes {n}'s queue grow within {k_done} positions"
                decide = what_would_decide(n, k_done, run.nets, run.downgraded)
                if self.threshold is None and not decide.startswith("try a larger k"):
                    message += "; " + decide
                run.verdicts[n] = BoltVerdict(verdict="none-up-to-k", k=k_done, method="solver", message=message)

    def _stop_reason(self, elapsed: float) -> str | None:
        if self.cancelled:
            return "cancelled"
        if self.timeout_s is not None and self.timeout_s - elapsed <= 0:
            return "time limit reached"
        return None

    def _solve(self, net: Any, k: int, target: str, targets: list[str], steady: frozenset[str], notes: list[str],
               elapsed: Callable[[], float]) -> tuple[Trace, dict[str, int]] | str:
        """Search one bound for one target: a certified lasso (widened within its cone) and its
        growth, or "unsat", "defects", or why it stopped ("cancelled", "time limit reached")."""

        def build(attempt: int) -> Encoding:
            options = {**SOLVER_OPTIONS, "random_seed": attempt}
            return Encoding(net, k, self.ctx, threshold=self.threshold, solver_options=options,
                            steady=steady, loop_clocks=self.loop_clocks, cancelled=self._interrupted)

        attempt, budget = 0, RESTART_FIRST_S
        try:
            enc = build(attempt)
        except Cancelled:
            return self._stop_reason(elapsed()) or "cancelled"
        defects = 0
        while True:
            remaining = None if self.timeout_s is None else self.timeout_s - elapsed()
            this_try = budget if remaining is None else min(budget, remaining)
            enc.solver.set("timeout", max(1, int(this_try * 1000)))
            if self.cancelled:
                return "cancelled"
            answer = enc.solver.check()
            said = ("lasso found" if answer == z3.sat else "no lasso" if answer == z3.unsat
                    else f"no answer within {this_try:.0f} s")
            self._report(k, elapsed(), enc.solver, f"k = {k}, {target}: {said}")
            if answer == z3.sat:
                try:
                    model = enc.solver.model()
                    trace = decode(enc, model)
                except z3.Z3Exception:  # a cancel that lands while the model is read interrupts z3 there too
                    if self.cancelled:
                        return "cancelled"
                    raise
                cert = certify(trace, checked=[target], threshold=self.threshold)
                if cert.ok:
                    if self.threshold is not None:
                        return trace, cert.growth_per_loop
                    checked = [b.name for b in self.topo.checked_bolts()]
                    return self._widen_all(enc, trace, cert.growth_per_loop, checked, targets, steady, elapsed)
                defects += 1
                notes.append(f"defect: a trace at k = {k} failed certification and was discarded: "
                             + "; ".join(cert.problems[:3]))
                if defects >= MAX_DEFECTS:
                    notes.append(f"gave up on k = {k} for {target} after {defects} uncertified traces")
                    return "defects"
                enc.block(model)
                continue
            if answer == z3.unsat:
                return "unsat"
            stop = self._stop_reason(elapsed())
            if stop or (remaining is not None and remaining <= 0.05):
                return stop or "time limit reached"
            # run times are heavy-tailed: restart with another seed and twice the budget
            attempt, budget = attempt + 1, budget * 2
            try:
                enc = build(attempt)
            except Cancelled:
                return self._stop_reason(elapsed()) or "cancelled"

    @paused_gc()  # a long lasso: app/core/gc_pause.py
    def _simulated(self, net: Any, target: str, checked: list[str], steady: frozenset[str], notes: list[str],
                   traces: list[Trace], verdicts: dict[str, BoltVerdict], elapsed: Callable[[], float], *,
                   bounded_without_failures: bool = False, budget_s: float | None = None) -> None:
        """Build a lasso for `target` by simulation; record it if it certifies, else note a defect.
        A lasso with failures is noted in words: one the target *needs* when the failure-free rate
        check proves it bounded (`bounded_without_failures`)."""
        budget = SIMULATION_BUDGET_S if budget_s is None else budget_s
        budget = budget if self.timeout_s is None else min(budget, self.timeout_s - elapsed())
        lasso = build_lasso(net, target, cannot_grow=steady, cancelled=self._interrupted,
                            deadline=time.monotonic() + max(0.0, budget))
        if lasso.trace is None:
            if not self._stop_reason(elapsed()):
                then = ("searching with the solver" if self.force_search or budget_s is not None
                        else "trying rates and the linear program, then the solver")
                notes.append(f"simulation for {target}: {lasso.message}; {then}")
            return
        cert = certify(lasso.trace, checked=[target], cancelled=self._cancelled.is_set)
        if self.cancelled:
            return
        if not cert.ok:
            notes.append(f"defect: a lasso built by simulation for {target} failed certification and was "
                         "discarded (searching with the solver): " + "; ".join(cert.problems[:3]))
            return
        traces.append(lasso.trace)
        self._record(lasso.trace, cert.growth_per_loop, len(traces) - 1, checked, verdicts, method="simulation")
        summary = failure_summary(lasso.trace)
        if summary and bounded_without_failures:
            notes.append(f"the lasso for {target} needs failures (without them the rate check proves it bounded): "
                         f"{summary}")
        elif summary:
            notes.append(f"the lasso for {target} has failures: {summary}")
        elif self.failing:
            notes.append(f"the lasso for {target} has no failures: a run in which no bolt fails, so its trace "
                         "carries the topology with failures off (docs/model.md 7.4)")
        if self.progress is not None:
            self.progress(Progress(k=lasso.trace.k, elapsed_s=elapsed(),
                                   message=f"{target}: certified lasso of {lasso.trace.k} positions by simulation"))

    def _record(self, trace: Trace, growth: dict[str, int], index: int, checked: list[str],
                verdicts: dict[str, BoltVerdict], method: str = "solver") -> None:
        """Every checked bolt this certified lasso answers for, and not yet answered, gets it."""
        if self.threshold is not None:
            reached = {n for p in trace.positions for n, b in p.bolts.items()
                       if n in checked and b.queue >= self.threshold}
            for n in sorted(reached):
                if n not in verdicts:
                    verdicts[n] = BoltVerdict(verdict="counterexample", k=trace.k, certified=True, trace_index=index,
                                              method=method,
                                              message=f"its queue reaches {self.threshold} within {trace.k} positions")
            return
        built = ", built by simulation," if method == "simulation" else ""
        failing = has_failures(trace) if self.failing else None
        summary = failure_summary(trace) if failing else None
        for n in checked:
            if growth.get(n, 0) > 0 and n not in verdicts:
                verdicts[n] = BoltVerdict(
                    verdict="counterexample", k=trace.k, loop_start=trace.loop_start, growth_per_loop=growth[n],
                    certified=True, trace_index=index, method=method, failures=failing,
                    message=(f"a certified lasso of {trace.k} positions{built} repeats "
                             f"{trace.loop_start}..{trace.k} every {float(trace.loop_duration()):.4g} s "
                             f"and {n}'s queue gains {growth[n]} per pass"
                             + (f", with failures: {summary}" if summary else "")))

    def _widen(self, enc: Encoding, trace: Any, growth: dict[str, int], checked: list[str],
               deadline: float, elapsed: Callable[[], float]) -> tuple[Any, dict[str, int], bool]:
        """Ask `enc` for lassos in which more checked queues grow together, until `deadline`.

        Returns the best certified trace, its growth, and whether the bound was exhausted
        (UNSAT: no wider lasso at this k) rather than the time.
        """
        while not self.cancelled and deadline - elapsed() > 0.05:
            others = [enc.growing[n] for n in checked if n in enc.growing and growth.get(n, 0) <= 0]
            if not others:
                return trace, growth, True
            enc.solver.add(z3.Or(others))
            enc.solver.add(*[enc.growing[n] for n in checked if growth.get(n, 0) > 0 and n in enc.growing])
            enc.solver.set("timeout", max(1, int((deadline - elapsed()) * 1000)))
            answer = enc.solver.check()
            if answer != z3.sat:
                return trace, growth, answer == z3.unsat
            wider = decode(enc, enc.solver.model())
            cert = certify(wider, checked=[c for c in checked if c in enc.growing])
            if not cert.ok:
                return trace, growth, False
            trace, growth = wider, cert.growth_per_loop
        return trace, growth, False

    def _widen_all(self, enc: Encoding, trace: Any, growth: dict[str, int], checked: list[str],
                   targets: list[str], steady: frozenset[str],
                   elapsed: Callable[[], float]) -> tuple[Any, dict[str, int]]:
        """After a first lasso: more checked queues growing together, first in its cone at its k,
        then (with `widen_s`) on the union of the targets' cones, deepening up to k_max."""
        budget = min(WIDEN_BUDGET_S, max(1.0, elapsed())) if self.widen_s is None else self.widen_s
        if self.timeout_s is not None:
            budget = min(budget, self.timeout_s - elapsed())
        deadline = elapsed() + budget
        in_cone = [c for c in checked if c in enc.growing]
        trace, growth, _ = self._widen(enc, trace, growth, in_cone, deadline, elapsed)
        if self.widen_s is None or len(targets) < 2:
            return trace, growth
        union = build_network(self.topo, targets)
        for k in [trace.k] + [b for b in deepening_schedule(self.k_min, self.k_max) if b > trace.k]:
            if self.cancelled or deadline - elapsed() <= 0.05 or all(growth.get(n, 0) > 0 for n in targets):
                break
            try:
                wide = Encoding(union, k, self.ctx, solver_options={**SOLVER_OPTIONS, "random_seed": k},
                                steady=steady, loop_clocks=self.loop_clocks, cancelled=self._interrupted)
            except Cancelled:
                break
            trace, growth, exhausted = self._widen(wide, trace, growth, [n for n in checked if n in union.checked],
                                                   deadline, elapsed)
            widened = ", ".join(n for n, d in growth.items() if d > 0)
            self._report(k, elapsed(), wide.solver, f"k = {k}: widened to {widened}")
            if not exhausted:
                break
        return trace, growth

    def _report(self, k: int, elapsed: float, solver: z3.Solver, message: str) -> None:
        if self.progress is not None:
            self.progress(Progress(k=k, elapsed_s=elapsed, stats=_stats(solver), message=message))

    def _announce(self, run: _Run, doing: str, k: int = 0) -> None:
        """Every verdict known so far and what the search does next (a progress report without a message)."""
        if self.progress is not None:
            self.progress(Progress(k=k, elapsed_s=run.elapsed(), doing=doing, verdicts=dict(run.verdicts)))


def verify(topo: Topology, options: SearchOptions | None = None, *,
           progress: Callable[[Progress], None] | None = None) -> VerifyResult:
    """Run one :class:`Search` to the end (convenience for the CLI and tests)."""
    return Search(topo, options, progress=progress).run()
