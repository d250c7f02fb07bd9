"""The verifier's front: rate-check proof, deepening search over k, certification, verdicts.

`Search(topo, ...).run()` blocks (the GUI calls it in a worker thread); `cancel()`
may be called from any thread and turns the result into `unknown` within 100 ms.
Each Search owns one `z3.Context`; no z3 object leaves this module.
"""

from __future__ import annotations

import threading
import time
from fractions import Fraction
from typing import Any, Callable

import z3

from app.core.formats.trace import format_time
from app.core.rates import margins, rate_check
from app.core.tcn.certify import certify
from app.core.tcn.encode import Cancelled, Encoding
from app.core.tcn.network import build_network
from app.core.tcn.result import Progress, VerifyResult
from app.core.topology import Topology

SOLVER_OPTIONS: dict[str, object] = {"smt.arith.solver": 2}  # measured: 5-10x faster here (docs/verifier.md)
WIDEN_BUDGET_S = 20.0  # after a lasso is found: most time spent looking for one where more checked queues grow
MAX_DEFECTS = 5
RESTART_FIRST_S = 2.0  # first solver budget per bound; doubled with a new random seed on each restart  # certification failures tolerated per bound before giving up on that bound


def deepening_schedule(k_min: int, k_max: int) -> list[int]:
    """Bounds to try, ending at k_max: steps of 4 up to 24, then of 8 (monotone in k, so jumps are safe)."""
    ks: list[int] = []
    k = max(2, min(k_min, k_max))
    while k < k_max:
        ks.append(k)
        k += 4 if k < 24 else 8
    ks.append(k_max)
    return ks


def _stats(solver: z3.Solver) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    try:
        st = solver.statistics()
        for key in st.keys():
            value = st.get_key_value(key)
            if isinstance(value, (int, float)):
                out[key] = value
    except z3.Z3Exception:
        pass
    return out


class Search:
    """One verification of one property on one topology (see module docstring)."""

    def __init__(self, topo: Topology, *, k: int | None = None, k_max: int | None = None,
                 timeout_s: float | None = None, force_search: bool = False,
                 threshold: int | None = None,
                 progress: Callable[[Progress], None] | None = None, widen_s: float | None = None,
                 loop_clocks: str = "equal") -> None:
        ver = topo.verification
        self.topo = topo
        self.single_k = k
        self.k_min = ver.k_min
        self.k_max = k_max if k_max is not None else (ver.k if ver.k is not None else ver.k_max)
        self.timeout_s = timeout_s if timeout_s is not None else ver.timeout_s
        self.force_search = force_search
        self.threshold = threshold
        self.progress = progress
        # widen_s: after a lasso, seconds to spend on the union of the checked bolts' cones looking for
        # lassos in which more checked queues grow together (None: only a short look inside its cone)
        self.widen_s = widen_s
        # loop_clocks: "equal" (readable clocks equal at l and k+1) or "region" (region-equivalent)
        self.loop_clocks = loop_clocks
        self.ctx = z3.Context()
        self._cancelled = threading.Event()
        self._finished = threading.Event()

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

    # ---- the run ---------------------------------------------------------
    def run(self) -> VerifyResult:
        """Decide the property; blocking."""
        try:
            return self._run()
        finally:
            self._finished.set()

    def _run(self) -> VerifyResult:
        start = time.monotonic()
        topo = self.topo
        checked = [b.name for b in topo.checked_bolts()]
        report = rate_check(topo)
        exact = margins(topo)
        rate_json: dict[str, Any] = {
            "bolts": {n: {"status": report.bolts[n].status, "inflow_max": format_time(exact[n][0]),
                          "capacity_min": format_time(exact[n][1]), "explanation": report.bolts[n].explanation}
                      for n in checked},
            "all_checked_bounded": report.all_bounded(checked),
        }
        prop = "growth" if self.threshold is None else "threshold"
        base = dict(property=prop, checked=checked, threshold=self.threshold, rate_check=rate_json)

        def elapsed() -> float:
            return time.monotonic() - start

        if prop == "growth" and report.all_bounded(checked) and not self.force_search:
            cited = "; ".join(f"{n} receives at most {float(exact[n][0]):.4g} tuples/s "
                              f"(exactly {format_time(exact[n][0])}) and processes at least "
                              f"{float(exact[n][1]):.4g} (exactly {format_time(exact[n][1])})" for n in checked)
            return VerifyResult(verdict="bounded", elapsed_s=elapsed(), kept=[c.name for c in topo.components],
                                message=("bounded: for every checked bolt the largest possible inflow is below the "
                                         f"smallest possible capacity, so no run can make its queue grow without "
                                         f"bound (docs/boundedness.md): {cited}."), **base)
        # One target per checked bolt that the rate check does not prove bounded, each searched on
        # its own cone of influence (a lasso of a cone extends to the whole network): small cones
        # solve much faster than the union. Bolts the rate check says `grows` go first.
        notes: list[str] = []
        targets = [n for n in checked if self.force_search or report.bolts[n].status != "bounded"]
        skipped = [n for n in checked if n not in targets]
        if skipped and self.threshold is None:
            notes.append("not searched, proven bounded by the rate check: "
                         + "; ".join(report.bolts[n].explanation for n in skipped))
        if self.threshold is not None:
            targets = list(checked)
        nets = {n: build_network(topo, [n]) for n in targets}
        targets.sort(key=lambda n: (report.bolts[n].status != "grows", len(nets[n].kept)))
        kept = [c.name for c in topo.components if any(c.name in nets[n].kept for n in targets)]
        for n in targets:
            net = nets[n]
            notes.append(f"cone of influence of {n}: kept {', '.join(net.kept)}"
                         + (f"; dropped {', '.join(net.dropped)}" if net.dropped else ""))
        ks = [self.single_k] if self.single_k is not None else deepening_schedule(self.k_min, self.k_max)
        # queues the rate check proves bounded stay level in any lasso (not assumed when forcing the search,
        # which exists to test that very proof)
        steady = frozenset() if self.force_search else frozenset(n for n, b in report.bolts.items() if b.status == "bounded")
        proven: dict[str, int] = {}
        # bolts the rate check says `grows` are deepened first, all the way; then the others
        first = [n for n in targets if report.bolts[n].status == "grows" and self.threshold is None]
        phases = [first, [n for n in targets if n not in first]]
        for k, target in ((k, t) for phase in phases for k in ks for t in phase):
            proven_k = min(proven.values()) if len(proven) == len(targets) else None
            net = nets[target]
            if self.cancelled:
                return self._unknown(base, kept, notes, elapsed(), proven_k, "cancelled")
            remaining = None if self.timeout_s is None else self.timeout_s - elapsed()
            if remaining is not None and remaining <= 0:
                return self._unknown(base, kept, notes, elapsed(), proven_k, "time limit reached")

            def build(attempt: int, net: Any = net, k: int = k) -> Encoding:
                options = {**SOLVER_OPTIONS, "random_seed": attempt}
                return Encoding(net, k, self.ctx, threshold=self.threshold, solver_options=options,
                                steady=steady, loop_clocks=self.loop_clocks, cancelled=self._cancelled.is_set)

            attempt, budget = 0, RESTART_FIRST_S
            try:
                enc = build(attempt)
            except Cancelled:
                return self._unknown(base, kept, notes, elapsed(), proven_k, "cancelled")
            defects = 0
            while True:
                remaining = None if self.timeout_s is None else self.timeout_s - elapsed()
                this_try = budget if remaining is None else min(budget, remaining)
                enc.solver.set("timeout", max(1, int(this_try * 1000)))
                if self.cancelled:
                    return self._unknown(base, kept, notes, elapsed(), proven_k, "cancelled")
                answer = enc.solver.check()
                said = ("lasso found" if answer == z3.sat else "no lasso" if answer == z3.unsat
                        else f"no answer within {this_try:.0f} s")
                self._report(k, elapsed(), enc.solver, f"k = {k}, {target}: {said}")
                if answer == z3.sat:
                    model = enc.solver.model()
                    trace = enc.decode(model)
                    cert = certify(trace, checked=[target], threshold=self.threshold)
                    if cert.ok:
                        if self.threshold is None:
                            trace, growth = self._widen_all(enc, trace, cert.growth_per_loop, checked, targets,
                                                            steady, elapsed)
                        else:
                            growth = cert.growth_per_loop
                        return self._found(base, list(trace.kept), notes, elapsed(), trace, growth, report,
                                           checked)
                    defects += 1
                    notes.append(f"defect: a trace at k = {k} failed certification and was discarded: "
                                 + "; ".join(cert.problems[:3]))
                    if defects >= MAX_DEFECTS:
                        notes.append(f"gave up on k = {k} after {defects} uncertified traces")
                        return self._unknown(base, kept, notes, elapsed(), proven_k,
                                             "the solver kept producing traces that fail certification")
                    enc.block(model)
                    continue
                if answer == z3.unsat:
                    break
                remaining = None if self.timeout_s is None else self.timeout_s - elapsed()
                if self.cancelled or (remaining is not None and remaining <= 0.05):
                    reason = "cancelled" if self.cancelled else "time limit reached"
                    return self._unknown(base, kept, notes, elapsed(), proven_k, reason)
                # run times are heavy-tailed: restart with another seed and twice the budget
                attempt, budget = attempt + 1, budget * 2
                try:
                    enc = build(attempt)
                except Cancelled:
                    return self._unknown(base, kept, notes, elapsed(), proven_k, "cancelled")
            del enc
            proven[target] = k
        return self._none(base, kept, notes, elapsed(), min(proven.values()) if proven else ks[-1], report, targets)

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
            wider = enc.decode(enc.solver.model())
            cert = certify(wider, checked=[c for c in checked if c in enc.growing])
            if not cert.ok:
                return trace, growth, False
            trace, growth = wider, cert.growth_per_loop
        return trace, growth, False

    def _widen_all(self, enc: Encoding, trace: Any, growth: dict[str, int], checked: list[str],
                   targets: list[str], steady: frozenset[str], elapsed: Callable[[], float]) -> tuple[Any, dict[str, int]]:
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
                                steady=steady, loop_clocks=self.loop_clocks, cancelled=self._cancelled.is_set)
            except Cancelled:
                break
            trace, growth, exhausted = self._widen(wide, trace, growth, [n for n in checked if n in union.checked],
                                                   deadline, elapsed)
            self._report(k, elapsed(), wide.solver, f"k = {k}: widened to {', '.join(n for n, d in growth.items() if d > 0)}")
            if not exhausted:
                break
        return trace, growth

    def _report(self, k: int, elapsed: float, solver: z3.Solver, message: str) -> None:
        if self.progress is not None:
            self.progress(Progress(k=k, elapsed_s=elapsed, stats=_stats(solver), message=message))

    # ---- verdicts --------------------------------------------------------
    def _unknown(self, base: dict[str, Any], kept: list[str], notes: list[str], elapsed: float,
                 proven_k: int | None, reason: str) -> VerifyResult:
        upto = f" (no counterexample up to k = {proven_k} before that)" if proven_k else ""
        return VerifyResult(verdict="unknown", k=proven_k, elapsed_s=elapsed, kept=kept, notes=notes,
                            message=f"unknown: {reason}{upto}.", **base)

    def _none(self, base: dict[str, Any], kept: list[str], notes: list[str], elapsed: float, k: int,
              report: Any, checked: list[str]) -> VerifyResult:
        what = (f"no queue of {', '.join(checked)} reaches {self.threshold}" if self.threshold is not None
                else f"no lasso makes a queue of {', '.join(checked)} grow")
        message = (f"no counterexample up to k = {k}: {what} within {k} positions. This is not a proof of "
                   "boundedness; longer runs were not examined.")
        if self.threshold is None:
            for name in checked:
                status = report.bolts[name].status
                if status in ("grows", "may-grow"):
                    notes.append(f"the rate check says {name} {status.replace('-', ' ')} "
                                 f"({report.bolts[name].explanation}); no lasso up to k = {k}: try a larger k "
                                 f"(e.g. --k-max {2 * k})")
            if report.all_bounded(checked):
                notes.append("as the rate check predicts: every checked bolt is bounded, and the search agrees")
        return VerifyResult(verdict="none-up-to-k", k=k, elapsed_s=elapsed, kept=kept, notes=notes,
                            message=message, **base)

    def _found(self, base: dict[str, Any], kept: list[str], notes: list[str], elapsed: float, trace: Any,
               growth: dict[str, int], report: Any, checked: list[str]) -> VerifyResult:
        if self.threshold is not None:
            reached = sorted({n for p in trace.positions for n, b in p.bolts.items()
                              if n in checked and b.queue >= self.threshold})
            message = (f"counterexample: the queue of {', '.join(reached)} reaches {self.threshold} "
                       f"within {trace.k} positions (certified run)")
            return VerifyResult(verdict="counterexample", k=trace.k, growing=reached, certified=True,
                                elapsed_s=elapsed, kept=kept, notes=notes, message=message, trace=trace, **base)
        growing = [n for n, d in growth.items() if d > 0]
        per_loop = ", ".join(f"{n} by {growth[n]}" for n in growing)
        duration = trace.loop_duration()
        message = (f"counterexample: a certified lasso of {trace.k} positions repeats positions "
                   f"{trace.loop_start}..{trace.k} every {float(duration):.4g} s and each pass grows {per_loop}, "
                   + ("so this queue grows without bound" if len(growing) == 1 else "so these queues grow without bound"))
        if report.all_bounded(checked):
            notes.append("BUG: the rate check proves every checked bolt bounded, yet a certified lasso was found")
        return VerifyResult(verdict="counterexample", k=trace.k, loop_start=trace.loop_start, growing=growing,
                            growth_per_loop={n: growth[n] for n in growing}, certified=True, elapsed_s=elapsed,
                            kept=kept, notes=notes, message=message, trace=trace, **base)


def verify(topo: Topology, *, k: int | None = None, k_max: int | None = None, timeout_s: float | None = None,
           force_search: bool = False, threshold: int | None = None,
           progress: Callable[[Progress], None] | None = None, widen_s: float | None = None,
           loop_clocks: str = "equal") -> VerifyResult:
    """Run one :class:`Search` to the end (convenience for the CLI and tests)."""
    return Search(topo, k=k, k_max=k_max, timeout_s=timeout_s, force_search=force_search,
                  threshold=threshold, progress=progress, widen_s=widen_s, loop_clocks=loop_clocks).run()
