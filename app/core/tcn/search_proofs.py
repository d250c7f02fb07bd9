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
from app.core.tcn.linear import LinearRow, build_cases, farkas, linear_message, loose_losses
from app.core.tcn.network import Network
from app.core.tcn.rate_growth import growth_message, prove_growth
from app.core.tcn.recorded import record_checked
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
    if not record_checked(run.verdicts, target, BoltVerdict.said(
            growth_message(cert), verdict="counterexample", method="rate proof", growth_certificate=cert,
            certified=True, failures=False if net.failures is not None else None),
            check_growth_certificate(net.topology, cert), run.notes, "a proof of growth by rates"):
        return False  # (the independent checker has the last word, as the certifier has for traces)
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
    before it is recorded), is not searched, and is held level in the other cones. A join goes last: its cache's
    cases hold every other bolt of its cone level, so they count only once each of those has its own proof."""
    proven: list[str] = []
    joins = sorted((t for t in run.targets if search.topo.bolt_by_name(t).waits_for_all),
                   key=lambda t: len(run.nets[t].kept))  # (a join above another comes first: its cone is smaller)
    for target in [t for t in run.targets if t not in joins] + joins:
        if target in run.verdicts or search.stop_reason(run.elapsed()):
            continue  # (a count window, a duration window or a join in the cone: their rows, docs/verifier.md)
        net = run.nets[target]
        if target in joins:
            why = join_not_ready(search, run, net, target, proven)
            if why:
                run.attempt(target, why)
                continue
        search.announce(run, f"{target}: the linear program over one loop pass")
        started = time.monotonic()
        budget = LINEAR_BUDGET_S if search.timeout_s is None else min(LINEAR_BUDGET_S,
                                                                   search.timeout_s - run.elapsed())
        cases = build_cases(net, target)
        found = _solve_cases(search, cases, started, budget)
        if isinstance(found, str):
            run.attempt(target, found + (_unbounded_losses(net, cases["queue"]) if found.endswith("grows") else ""))
            continue
        took = time.monotonic() - started
        cert = LinearCertificate(target=target, content_hash=content_hash(net.topology), rows=found.pop("queue"),
                                 cases=found)
        if not record_checked(run.verdicts, target, BoltVerdict(
                verdict="no-repeating-growth", method="linear program", certificate=cert,
                message=linear_message(net, len(cases["queue"]), cert)),
                check_certificate(net.topology, cert), run.notes, "the linear program's certificate"):
            continue
        proven.append(target)
        if search.progress is not None:
            search.progress(Progress(k=0, elapsed_s=run.elapsed(),
                                   message=f"{target}: no repeating run grows (linear program, {took:.2f} s)"))
    if proven:
        run.steady = run.steady | frozenset(proven)


def _solve_cases(search: SearchControl, cases: dict[str, list[LinearRow]], started: float,
                 budget: float) -> dict[str, dict[str, str]] | str:
    """Each case's multipliers (as "p/q" by row name), or why the program proves nothing."""
    found: dict[str, dict[str, str]] = {}
    for key, rows in cases.items():
        left = budget - (time.monotonic() - started)
        multipliers = farkas(rows, timeout_ms=max(1, int(left * 1000)), cancelled=search.interrupted)
        if multipliers is None:
            if time.monotonic() - started >= budget or search.interrupted():
                return f"the linear program gave no answer within {budget:.3g} s"
            if key == "queue":
                return "the linear program over one loop pass has a solution in which it grows"
            return (f"the linear program over one loop pass has a solution in which its cache grows, {key} "
                    "the slowest branch, every other bolt of its cone level")
        found[key] = {name: str(y) for name, y in multipliers.items()}
    return found


def join_not_ready(search: SearchControl, run: Run, net: Network, target: str, proven: list[str]) -> str:
    """Why a join target's cache cases cannot count yet (docs/verifier.md, "A join as the target"), or ""."""
    open_ = [b.name for b in net.bolts if b.name != target and b.name not in run.steady and b.name not in proven
             and (b.name not in run.verdicts or run.verdicts[b.name].verdict not in ("bounded", "no-repeating-growth"))]
    if open_:
        return (f"the linear program proves a join only with every other bolt of its cone proven not to grow, and "
                f"{', '.join(open_)} {'is' if len(open_) == 1 else 'are'} not")
    fails = net.failures
    if fails is not None and target in fails.min_ttf and any(src == target for b in net.bolts for src, _ in b.sources):
        return "the linear program has no rows for a join that may fail and feeds its own cone"
    return ""
