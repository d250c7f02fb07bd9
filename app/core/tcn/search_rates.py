"""The rate check's phase of a verification (docs/boundedness.md): every checked bolt it proves bounded or
free of growing lassos gets that verdict, and the plan of what is left to search: one target per bolt, each
on its own cone of influence, in the order the other phases (app/core/tcn/search.py) take them."""

from __future__ import annotations

import time
from typing import Any

from app.core.formats.trace import format_time
from app.core.rates import RateAnalysis
from app.core.results import BoltVerdict, VerifyResult
from app.core.tcn.cones import bounded_in_cones
from app.core.tcn.network import build_network
from app.core.tcn.search_run import Run, SearchControl, deepening_schedule
from app.core.words import Exactly, Figure, Words


def rate_phase(search: SearchControl) -> Run | VerifyResult:
    """The rate check: every checked bolt it proves bounded (in every run) or free of growing lassos gets
    that verdict (growth property, unless forcing the search); a result when that is all of them."""
    start = time.monotonic()
    search.deadline = None if search.timeout_s is None else start + search.timeout_s
    topo = search.topo
    checked = [b.name for b in topo.checked_bolts()]
    rates = search.rates if search.rates is not None else RateAnalysis(topo)  # the figures and failures, once
    search.rates = rates
    search.failing = rates.model is not None
    report = rates.report(suggest=False)  # statuses only; with a failure model they cover the replays
    # bounded when nothing fails but not with failures: a lasso, if any, needs failures (the long ones)
    free = rates.fluid_report() if search.failing else report
    exact = rates.margins()
    with_failures = rates.failure_margins() or {}
    report, on_cones = bounded_in_cones(topo, report, checked)  # a cycle elsewhere hides no bound (failures)
    with_failures.update(on_cones)
    rate_json: dict[str, Any] = {
        "bolts": {n: {"status": report.bolts[n].status, "inflow_max": format_time(exact[n][0]),
                      "capacity_min": format_time(exact[n][1]),
                      "sigma_effective": list(report.bolts[n].sigma_effective),
                      "queue_bound": report.bolts[n].queue_bound,
                      "explanation": report.bolts[n].explanation}
                  for n in checked},
        "all_checked_bounded": report.all_bounded(checked),
    }
    prop = "growth" if search.threshold is None else "threshold"
    run = Run(start=start, checked=checked, report=report,
               base=dict(property=prop, checked=checked, threshold=search.threshold, rate_check=rate_json),
               downgraded=frozenset(n for n, b in report.bolts.items()
                                    if b.status != "bounded" and free.bolts[n].status == "bounded"))
    if prop == "growth" and not search.force_search:
        repeating = rates.repeating_margins()
        for n in checked:
            status = report.bolts[n].status
            if status == "bounded" and report.bolts[n].window_timer is not None:  # a timer: no capacity (10.3)
                bound = report.bolts[n].queue_bound
                run.verdicts[n] = BoltVerdict.said(
                    Words.of(f"{n}'s window timer runs every {report.bolts[n].window_timer:g} s on whatever "
                             "arrived (at most (1+τ)·max(S, α) apart), whatever it receives, so its queue stays below "
                             f"{bound:.4g} tuples"), verdict="bounded", method="rate check", queue_bound=bound)
            elif status == "bounded" and report.bolts[n].failures_cycle:  # paced, per failure cycle
                bound = report.bolts[n].queue_bound
                run.verdicts[n] = BoltVerdict.said(
                    Words.of(f"{n} may receive more than it processes while its spout replays, but "
                             f"{report.bolts[n].failures_cycle}; its queue stays below {bound:.4g} tuples"),
                    verdict="bounded", method="rate check", queue_bound=bound)
            elif status == "bounded":
                inflow, capacity = with_failures.get(n, exact[n]) if report.failures else exact[n]
                bound = report.bolts[n].queue_bound
                run.verdicts[n] = BoltVerdict.said(
                    Words.of(f"{n} receives at most ", Figure(inflow), " tuples/s", Exactly(inflow),
                             f"{' with failures' if report.failures and n in with_failures else ''} in any long "
                             "window of any run and processes at least ", capacity,
                             f", so its queue stays below {bound:.4g} tuples" + _cache_words(report.bolts[n])
                             + (f"; {report.bolts[n].failures_replays}" if report.failures and n in with_failures
                                and report.bolts[n].failures_replays else "")),
                    verdict="bounded", method="rate check", queue_bound=bound)
            elif status == "no-repeating-growth":
                inflow, capacity = repeating[n]
                upstream = ", ".join(report.bolts[n].flooded_by) or "an upstream bolt"
                run.verdicts[n] = BoltVerdict.said(
                    Words.of(f"in the long run of any lasso {n} receives at most ", Figure(inflow), " tuples/s",
                             Exactly(inflow), " and processes at least ", capacity,
                             ", so no repeating run makes its queue grow; it "
                             f"is not proven bounded in every run: {upstream} may back up and then flood it"),
                    verdict="no-repeating-growth", method="rate check")
    if prop == "growth" and len(run.verdicts) == len(checked):
        cited = Words.joined("; ", (run.verdicts[n].words() for n in checked))
        if all(v.verdict == "bounded" for v in run.verdicts.values()):
            return VerifyResult.said(Words.of("bounded: every checked bolt's queue stays below a bound in every run "
                                              "(docs/boundedness.md): ", cited, "."),
                                     verdict="bounded", elapsed_s=run.elapsed(),
                                     kept=[c.name for c in topo.components], bolts=run.verdicts, **run.base)
        return VerifyResult.said(Words.of("no repeating run grows: no lasso of any length makes a checked bolt's "
                                          "queue grow, but not every checked bolt is bounded in every run "
                                          "(docs/boundedness.md): ", cited, "."),
                                 verdict="no-repeating-growth", elapsed_s=run.elapsed(),
                                 kept=[c.name for c in topo.components], bolts=run.verdicts, **run.base)
    return run

def _cache_words(bolt: Any) -> str:
    """A bounded join's cache bound, in words (docs/model.md section 11); empty for any other bolt."""
    if bolt.join_cache_bound is None:
        return ""
    return (f", and its cache of parts waiting for their slowest branch ({bolt.join_slowest}) below "
            f"{bolt.join_cache_bound:.4g} messages")


def plan(search: SearchControl, run: Run) -> None:
    """One target per checked bolt that the rate check does not prove bounded, each searched on
    its own cone of influence (a lasso of a cone extends to the whole network): small cones
    solve much faster than the union. Bolts the rate check says `grows` go first, all the way
    up the bounds; a lasso found for one bolt also answers for every checked bolt growing in it."""
    report, topo = run.report, search.topo
    skipped = [n for n in run.verdicts]
    if skipped:
        run.notes.append("not searched, decided by the rate check: "
                         + "; ".join(report.bolts[n].explanation for n in skipped))
    targets = [n for n in run.checked if n not in run.verdicts]
    run.nets = {n: build_network(topo, [n]) for n in targets}
    # a cone with a window (count or duration, docs/model.md sections 10.2 and 10.3): every phase here has its rule
    # a cone with a join that waits for every branch: the simulation, the solver, the certifier, the proofs by rates
    # (without a cycle) and the linear program (below the join, and the join itself as cases) have its rule
    # (docs/model.md section 11)
    # bolts bounded but for failures last: their lassos, if any, are the long ones of a failure cycle
    targets.sort(key=lambda n: (n in run.downgraded, report.bolts[n].status != "grows", len(run.nets[n].kept)))
    run.targets = targets
    run.kept = [c.name for c in topo.components if any(c.name in run.nets[n].kept for n in targets)]
    for n in targets:
        net = run.nets[n]
        run.notes.append(f"cone of influence of {n}: kept {', '.join(net.kept)}"
                         + (f"; dropped {', '.join(net.dropped)}" if net.dropped else ""))
    run.ks = [search.single_k] if search.single_k is not None else deepening_schedule(search.k_min, search.k_max)
    # queues no lasso can make grow stay level in any lasso (not assumed when forcing the search, which
    # exists to test that very proof); sound because the rate check is (docs/boundedness.md)
    bounded = frozenset(n for n, b in report.bolts.items() if b.status in ("bounded", "no-repeating-growth"))
    run.steady = frozenset() if search.force_search else bounded
    first = [n for n in targets if report.bolts[n].status == "grows" and search.threshold is None]
    run.phases = [first, [n for n in targets if n not in first]]
