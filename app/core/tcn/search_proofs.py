"""Proofs without a lasso's positions, after the simulation: growth proven by rates
(app/core/tcn/rate_growth.py) and no repeating growth proven by the linear program over one loop pass
(app/core/tcn/linear.py), each with its certificate (docs/verifier.md)."""

from __future__ import annotations

import time

from app.core.results import BoltVerdict, LinearCertificate, Progress
from app.core.tcn.certificate_input import semantics_hash
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.rate_growth import growth_message, prove_growth
from app.core.tcn.rate_growth_check import check_growth_certificate
from app.core.tcn.search_run import Run, SearchControl

LINEAR_BUDGET_S = 10.0  # per target: the linear program over one loop pass (measured: 10-100 ms)


def rate_growth_phase(search: SearchControl, run: Run) -> None:
    """Growth proven by rates (app/core/tcn/rate_growth.py, docs/verifier.md): every target still undecided
    that grows under the fixed fastest-upstream, slowest-target schedule gets `counterexample` with the
    schedule's exact rates as its certificate, without writing the lasso's positions."""
    for target in run.targets:
        if target in run.verdicts or search.stop_reason(run.elapsed()):
            continue
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
        if search.progress is not None:
            search.progress(Progress(k=0, elapsed_s=run.elapsed(), message=f"{target}: grows (proven by rates)"))

def linear_phase(search: SearchControl, run: Run) -> None:
    """The linear program over one loop pass (app/core/tcn/linear.py, docs/verifier.md): every target
    still undecided whose rows have no solution in which it grows gets `no-repeating-growth` with the
    Farkas multipliers as its certificate, is not searched, and is held level in the other cones."""
    proven: list[str] = []
    for target in run.targets:
        if target in run.verdicts or search.stop_reason(run.elapsed()):
            continue
        net = run.nets[target]
        started = time.monotonic()
        rows = build_rows(net, target)
        budget = LINEAR_BUDGET_S if search.timeout_s is None else min(LINEAR_BUDGET_S,
                                                                   search.timeout_s - run.elapsed())
        multipliers = farkas(rows, timeout_ms=max(1, int(budget * 1000)), cancelled=search.interrupted)
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
        if search.progress is not None:
            search.progress(Progress(k=0, elapsed_s=run.elapsed(),
                                   message=f"{target}: no repeating run grows (linear program, {took:.2f} s)"))
    if proven:
        run.steady = run.steady | frozenset(proven)
