"""Proofs without a lasso's positions: growth proven by rates (app/core/tcn/rate_growth.py), before any search, and
no repeating growth proven by the linear program over one loop pass (app/core/tcn/linear.py), after the simulation,
each with its certificate (docs/verifier.md)."""

from __future__ import annotations

import time
from typing import Any

from app.core.results import BoltVerdict, LinearCertificate, Progress
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.linear import build_rows, farkas, linear_message, loose_losses
from app.core.tcn.network import Network
from app.core.tcn.rate_growth import growth_message, prove_growth
from app.core.tcn.search_run import Run, SearchControl

LINEAR_BUDGET_S = 10.0  # per target: the linear program over one loop pass (measured: 10-100 ms)


def rate_growth_phase(search: SearchControl, run: Run) -> None:
    """Growth proven by rates (app/core/tcn/rate_growth.py, docs/verifier.md): every target still undecided
    that grows under the fixed fastest-upstream, slowest-target schedule gets `counterexample` with the
    schedule's exact rates as its certificate, without writing the lasso's positions."""
    for target in run.targets:
        if target in run.verdicts or search.stop_reason(run.elapsed()):
            continue  # (a count window or a join in the cone: their rules, docs/verifier.md)
        if target in run.downgraded:  # (tried all the same: a proof here would contradict the rate check)
            why = ("without failures the rate check bounds it, so only a run with failures may make it grow, and the "
                   "proof by rates plays none")
        else:
            why = ("its cone has a cycle that does not settle, a bolt whose inflow may equal its capacity, or the "
                   "target may keep up")
        if not growth_by_rates(search, run, target, run.nets[target]):
            run.attempt(target, f"no growth proof by rates ({why})")


def growth_by_rates(search: SearchControl, run: Run, target: str, net: Network) -> bool:
    """One target's proof of growth by rates on its cone `net`, recorded once its checker accepts it (True)."""
    search.announce(run, f"{target}: a proof of growth by rates")
    cert = prove_growth(net.topology, target)
    if cert is None:
        return False
    problems = check_growth_certificate(net.topology, cert)
    if problems:  # the independent checker has the last word, as the certifier has for traces
        run.notes.append(f"defect: a proof of growth by rates for {target} was rejected by its checker "
                         "and discarded: " + "; ".join(problems[:3]))
        return False
    run.verdicts[target] = BoltVerdict.said(growth_message(cert), verdict="counterexample", method="rate proof",
                                            growth_certificate=cert, certified=True,
                                            failures=False if net.failures is not None else None)
    if search.progress is not None:
        search.progress(Progress(k=0, elapsed_s=run.elapsed(), message=f"{target}: grows (proven by rates)"))
    return True

def _unbounded_losses(net: Any, rows: list[Any]) -> str:
    """Which failing bolts' losses the rows bound only by what they receive (docs/verifier.md, "Losses bounded by
    time": no `lost-time` row), in words, or ""."""
    failing, loose = loose_losses(net, rows)
    if not failing:
        return ""
    if not loose:
        return f" (what {', '.join(failing)} may lose is bounded by time, not tightly enough to rule it out)"
    they = "it receives" if len(loose) == 1 else "they receive"
    return (f" (what {', '.join(loose)} may lose is bounded only by what {they}: fed by a spout that replays at "
            "once, or through a window, which has no bound per window)")


def linear_phase(search: SearchControl, run: Run) -> None:
    """The linear program over one loop pass (app/core/tcn/linear.py, docs/verifier.md): every target
    still undecided whose rows have no solution in which it grows gets `no-repeating-growth` with the
    Farkas multipliers as its certificate (accepted by its independent checker, app/core/tcn/check/linear.py,
    before it is recorded), is not searched, and is held level in the other cones."""
    proven: list[str] = []
    for target in run.targets:
        if target in run.verdicts or search.topo.bolt_by_name(target).waits_for_all or search.stop_reason(
                run.elapsed()):
            continue  # (a count window or a join in the cone: their rows hold for their lassos, docs/verifier.md; a
            # join's own growth may be its cache's, which no row says)
        net = run.nets[target]
        search.announce(run, f"{target}: the linear program over one loop pass")
        started = time.monotonic()
        rows = build_rows(net, target)
        budget = LINEAR_BUDGET_S if search.timeout_s is None else min(LINEAR_BUDGET_S,
                                                                   search.timeout_s - run.elapsed())
        multipliers = farkas(rows, timeout_ms=max(1, int(budget * 1000)), cancelled=search.interrupted)
        if multipliers is None:
            if time.monotonic() - started >= budget or search.interrupted():
                run.attempt(target, f"the linear program gave no answer within {budget:.3g} s")
            else:
                run.attempt(target, "the linear program over one loop pass has a solution in which it grows"
                                    + _unbounded_losses(net, rows))
            continue
        took = time.monotonic() - started
        cert = LinearCertificate(target=target, content_hash=content_hash(net.topology),
                                 rows={name: str(y) for name, y in multipliers.items()})
        problems = check_certificate(net.topology, cert)
        if problems:  # the independent checker has the last word, as for every other certificate
            run.notes.append(f"defect: the linear program's certificate for {target} was rejected by its "
                             "checker and discarded: " + "; ".join(problems[:3]))
            continue
        run.verdicts[target] = BoltVerdict(verdict="no-repeating-growth", method="linear program",
                                           certificate=cert, message=linear_message(net, len(rows), cert))
        proven.append(target)
        if search.progress is not None:
            search.progress(Progress(k=0, elapsed_s=run.elapsed(),
                                   message=f"{target}: no repeating run grows (linear program, {took:.2f} s)"))
    if proven:
        run.steady = run.steady | frozenset(proven)
