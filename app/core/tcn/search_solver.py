"""The solver's deepening search (docs/verifier.md): bound by bound, each target on its own cone, restarts
with new seeds, certification of every lasso found, widening to lassos in which more checked queues grow
together, and the verdicts of what is left undecided."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from app.core.formats.trace import Trace
from app.core.results import BoltVerdict
from app.core.tcn.check.certify import certify
from app.core.tcn.decode import decode
from app.core.tcn.encode import Cancelled, Encoding
from app.core.tcn.network import build_network, lasso_lower_bound
from app.core.tcn.search_run import Run, SearchControl, deepening_schedule
from app.core.tcn.summary import what_would_decide

SOLVER_OPTIONS: dict[str, object] = {"smt.arith.solver": 2}  # measured: 5-10x faster here (docs/verifier.md)
WIDEN_BUDGET_S = 20.0  # after a lasso is found: most time spent looking for one where more checked queues grow
MAX_DEFECTS = 5
RESTART_FIRST_S = 2.0  # first solver budget per bound; doubled with a new random seed on each restart


def deepening_phase(search: SearchControl, run: Run) -> None:
    """The solver, bound by bound (grows-targets first, each all the way up), until every target is
    answered or the search must stop (`run.stop`)."""
    # the bound's argument (every bolt that passes tuples on emits inside the loop) fails when a bolt may
    # fail before each emit (docs/model.md 7.2): with failures no bound is assumed
    shortest = ({n: lasso_lower_bound(run.nets[n]) for n in run.targets if run.nets[n].failures is None}
                if search.threshold is None else {})
    for k, target in ((k, t) for phase in run.phases for k in run.ks for t in phase):
        if target in run.verdicts:
            continue
        run.stop = search.stop_reason(run.elapsed())
        if run.stop:
            break
        if k < shortest.get(target, 0):  # provably no lasso this short: no solver call
            run.proven[target] = k
            continue
        search.announce(run, f"{target}: the solver at k = {k}", k)
        outcome = _solve(search, run.nets[target], k, target, run.targets, run.steady, run.notes, run.elapsed)
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
        search.record(trace, growth, len(run.traces) - 1, run.checked, run.verdicts)

def close_undecided(search: SearchControl, run: Run) -> None:
    """Targets without an answer: unknown when the search stopped, else none up to the bound reached."""
    for n in [n for n in run.targets if n not in run.verdicts]:
        if run.stop:
            tried = list(run.tried.get(n, []))
            if n in run.proven:
                tried.append(f"the solver found no growing lasso up to k = {run.proven[n]}")
            missing = ("missing: a growing lasso (certified) or a proof that none grows; " + "; ".join(tried) if tried
                       else "nothing was tried for it: the time went to the bolts searched before it")
            run.verdicts[n] = BoltVerdict(verdict="unknown", k=run.proven.get(n), message=f"{run.stop}: {missing}")
        else:
            k_done = run.proven.get(n, run.ks[-1])
            message = f"no lasso makes {n}'s queue grow within {k_done} positions"
            decide = what_would_decide(n, k_done, run.nets, run.downgraded)
            if search.threshold is None and not decide.startswith("try a larger k"):
                message += "; " + decide
            run.verdicts[n] = BoltVerdict(verdict="none-up-to-k", k=k_done, method="solver", message=message)


def _solve(search: SearchControl, net: Any, k: int, target: str, targets: list[str], steady: frozenset[str],
           notes: list[str], elapsed: Callable[[], float]) -> tuple[Trace, dict[str, int]] | str:
    """Search one bound for one target: a certified lasso (widened within its cone) and its
    growth, or "unsat", "defects", or why it stopped ("cancelled", "time limit reached")."""

    def build(attempt: int) -> Encoding:
        options = {**SOLVER_OPTIONS, "random_seed": attempt}
        return Encoding(net, k, search.ctx, threshold=search.threshold, solver_options=options,
                        steady=steady, loop_clocks=search.loop_clocks, cancelled=search.interrupted)

    attempt, budget = 0, RESTART_FIRST_S
    try:
        enc = build(attempt)
    except Cancelled:
        return search.stop_reason(elapsed()) or "cancelled"
    defects = 0
    while True:
        remaining = None if search.timeout_s is None else search.timeout_s - elapsed()
        this_try = budget if remaining is None else min(budget, remaining)
        enc.solver.set("timeout", max(1, int(this_try * 1000)))
        if search.cancelled:
            return "cancelled"
        answer = enc.solver.check()
        said = ("lasso found" if answer == z3.sat else "no lasso" if answer == z3.unsat
                else f"no answer within {this_try:.0f} s")
        search.report(k, elapsed(), enc.solver, f"k = {k}, {target}: {said}")
        if answer == z3.sat:
            try:
                model = enc.solver.model()
                trace = decode(enc, model)
            except z3.Z3Exception:  # a cancel that lands while the model is read interrupts z3 there too
                if search.cancelled:
                    return "cancelled"
                raise
            cert = certify(trace, checked=[target], threshold=search.threshold)
            if cert.ok:
                if search.threshold is not None:
                    return trace, cert.growth_per_loop
                checked = [b.name for b in search.topo.checked_bolts()]
                return _widen_all(search, enc, trace, cert.growth_per_loop, checked, targets, steady, elapsed)
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
        stop = search.stop_reason(elapsed())
        if stop or (remaining is not None and remaining <= 0.05):
            return stop or "time limit reached"
        # run times are heavy-tailed: restart with another seed and twice the budget
        attempt, budget = attempt + 1, budget * 2
        try:
            enc = build(attempt)
        except Cancelled:
            return search.stop_reason(elapsed()) or "cancelled"


def _widen(search: SearchControl, enc: Encoding, trace: Any, growth: dict[str, int], checked: list[str],
           deadline: float, elapsed: Callable[[], float]) -> tuple[Any, dict[str, int], bool]:
    """Ask `enc` for lassos in which more checked queues grow together, until `deadline`.

    Returns the best certified trace, its growth, and whether the bound was exhausted
    (UNSAT: no wider lasso at this k) rather than the time.
    """
    while not search.cancelled and deadline - elapsed() > 0.05:
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

def _widen_all(search: SearchControl, enc: Encoding, trace: Any, growth: dict[str, int], checked: list[str],
               targets: list[str], steady: frozenset[str],
               elapsed: Callable[[], float]) -> tuple[Any, dict[str, int]]:
    """After a first lasso: more checked queues growing together, first in its cone at its k,
    then (with `widen_s`) on the union of the targets' cones, deepening up to k_max."""
    budget = min(WIDEN_BUDGET_S, max(1.0, elapsed())) if search.widen_s is None else search.widen_s
    if search.timeout_s is not None:
        budget = min(budget, search.timeout_s - elapsed())
    deadline = elapsed() + budget
    in_cone = [c for c in checked if c in enc.growing]
    trace, growth, _ = _widen(search, enc, trace, growth, in_cone, deadline, elapsed)
    if search.widen_s is None or len(targets) < 2:
        return trace, growth
    union = build_network(search.topo, targets)
    for k in [trace.k] + [b for b in deepening_schedule(search.k_min, search.k_max) if b > trace.k]:
        if search.cancelled or deadline - elapsed() <= 0.05 or all(growth.get(n, 0) > 0 for n in targets):
            break
        try:
            wide = Encoding(union, k, search.ctx, solver_options={**SOLVER_OPTIONS, "random_seed": k},
                            steady=steady, loop_clocks=search.loop_clocks, cancelled=search.interrupted)
        except Cancelled:
            break
        trace, growth, exhausted = _widen(search, wide, trace, growth, [n for n in checked if n in union.checked],
                                               deadline, elapsed)
        widened = ", ".join(n for n, d in growth.items() if d > 0)
        search.report(k, elapsed(), wide.solver, f"k = {k}: widened to {widened}")
        if not exhausted:
            break
    return trace, growth
