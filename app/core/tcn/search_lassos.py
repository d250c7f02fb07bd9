"""Lassos built by simulation (docs/simulation.md), the cheap ones before the solver, the long ones of a failure
cycle after the linear program, and last the lassos of bolts proven to grow by rates (for a trace to show); each is
certified before it is recorded."""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

from app.core.gc_pause import paused_gc
from app.core.results import BoltVerdict, Progress
from app.core.tcn.check.lassos import certified
from app.core.tcn.failing import failure_words
from app.core.tcn.search_run import Run, SearchControl
from app.core.tcn.simulate import Lasso, build_lasso

SIMULATION_BUDGET_S = 5.0  # per target: building a lasso by simulation before any solver call
# per target whose lasso must hold a whole failure cycle (bounded without failures): 10^4 to 10^6 positions that
# only the simulation reaches (StormCrawler's 311,558-position lasso: 49 s on a loaded machine)
FAILURE_CYCLE_BUDGET_S = 300.0
# per target in the first pass, over all its schedules: positions × bolts (about 2.5 KB each at the peak, trace and
# certification included), so that the first pass stays within megabytes; a target it leaves undecided at this
# bound is simulated again with simulate.MAX_CELLS after the proofs by rates and the linear program, which
# answer the large overloaded cones in milliseconds (docs/verifier.md, step 2d)
FIRST_PASS_CELLS = 60_000
# per target proven to grow by rates, right after the proofs: a short lasso for its trace (a few hundred positions
# take milliseconds), before the bolts the proofs leave search; a longer one is tried last, with what time is left
QUICK_TRACE_S = 0.5
# per target flooded before the search from a source proven by rates (search.py, `_early_floods`), in the last pass,
# within the time left: the first pass's simulation (FIRST_PASS_CELLS) for at most this much of its thread's CPU time
# (not wall time: a loaded machine stretches the wall clock four to six times, and the flood must stay the answer of
# the same bolts whatever the load). A lasso found answers instead of the flood, as the search's would have (random
# #10 B1: 2,630 positions in 2.6 CPU s, #100 B1: 11,925 in 6.3), while one only the failure-cycle rounds reach leaves
# the flood the answer (random #54 B1: 70,495 positions, 42 CPU s)
FLOODED_TRACE_CPU_S = 15.0
# the failure-cycle simulation's rounds (step 2d): each undecided target's share in the first, and its growth
ROUNDS_SAID = "the simulation through a failure cycle"
FIRST_ROUND_S = 1.0
ROUND_GROWTH = 2.0
# certifying and recording a simulated lasso takes up to about this many times as long as simulating it (measured on
# lassos of 10^3 to 10^5 positions, bench/RESULTS.md): a schedule is simulated only while what it has taken so far,
# times this, fits before the verification's end, so a lasso it closes is certified in time
CERTIFY_RATIO = 4.0


def simulation_phase(search: SearchControl, run: Run) -> None:
    """Cheap lassos first (docs/simulation.md): one simulation per target not yet answered, but those whose
    lasso must hold a whole failure cycle (their long simulation comes after the linear program)."""
    for target in (t for phase in run.phases for t in phase):
        if target not in run.verdicts and target not in run.downgraded and not search.stop_reason(run.elapsed()):
            search.announce(run, f"{target}: building a lasso by simulation")
            lasso = _searched(search, run, target, FIRST_PASS_CELLS)
            if lasso.trace is None and lasso.capped:
                run.capped.add(target)


def failure_cycle_phase(search: SearchControl, run: Run) -> None:
    """Targets whose first simulation stopped at FIRST_PASS_CELLS and that no proof answered are simulated again up
    to simulate.MAX_CELLS. Then the targets bounded without failures and still undecided after the linear program (a
    lasso in which they grow holds a whole failure cycle, out of the solver's reach) are simulated in rounds: each
    gets FIRST_ROUND_S in the first, ROUND_GROWTH times its last share in the next, and FAILURE_CYCLE_BUDGET_S in
    all at most (the last one waiting gets all it has left); the schedules a round played to their end are not played
    again. So the cheap lassos of every such
    target are found before one long simulation takes the rest of the time limit, and a long one still gets most of
    it once the others are answered (docs/verifier.md, step 2d)."""
    order = [t for phase in run.phases for t in phase]
    for target in order:
        if target in run.capped and target not in run.verdicts and not search.stop_reason(run.elapsed()):
            search.announce(run, f"{target}: a longer simulation")
            _searched(search, run, target)
    ended: dict[str, frozenset[int]] = {}
    spent = dict.fromkeys(order, 0.0)
    done: set[str] = set()  # every schedule played to its end, no lasso
    share = FIRST_ROUND_S
    while True:
        waiting = [t for t in order if t in run.downgraded and t not in run.verdicts and t not in done
                   and spent[t] < FAILURE_CYCLE_BUDGET_S]
        if not waiting or search.stop_reason(run.elapsed()):
            return
        for target in waiting:
            if target in run.verdicts or search.stop_reason(run.elapsed()):
                continue
            search.announce(run, f"{target}: a long simulation through a failure cycle")
            started = time.monotonic()
            left = FAILURE_CYCLE_BUDGET_S - spent[target]  # the last one waiting: no round to share, all it has left
            lasso = _round(search, run, target, left if len(waiting) == 1 else min(share, left),
                           ended.get(target, frozenset()))
            spent[target] += time.monotonic() - started
            ended[target] = lasso.ended
            if lasso.trace is None and lasso.exhausted:
                done.add(target)
        share *= ROUND_GROWTH
        for target in (t for t in waiting if t not in run.verdicts and t in ended):
            played = ("every schedule played to its end" if target in done
                      else f"{len(ended[target])} schedules played to their end")
            run.tried[target] = [w for w in run.tried.get(target, []) if not w.startswith(ROUNDS_SAID)]
            run.attempt(target, f"{ROUNDS_SAID} closed no lasso in which it grows ({spent[target]:.1f} s in rounds of "
                                f"growing shares; {played})")


def trace_phase(search: SearchControl, run: Run, budget_s: float = SIMULATION_BUDGET_S) -> None:
    """The targets proven to grow by rates before the search (app/core/tcn/search_proofs.py), and those flooded from
    such a proof (`Run.early`), get a lasso by simulation when one is found and certified within `budget_s` each, for
    a trace to show; the lasso then answers for them (and for every other such target growing in it), else the proof
    stays their answer. Run twice: right after the proofs with QUICK_TRACE_S (the short lassos, certified within it,
    before the bolts left undecided search), and last with the first pass's budget (a flooded target: what is left of
    the limit, and FLOODED_TRACE_CPU_S of CPU time), certified within what is left of the time limit
    (docs/verifier.md, steps 2a and 2g). The last pass first certifies the lassos the quick one found but could not
    certify within its budget (a machine under load): each may answer for other targets too, as it would have in
    time, and none is simulated again."""
    quick = budget_s < SIMULATION_BUDGET_S
    found: dict[str, Lasso] = {} if quick else run.uncertified
    if not quick:
        run.uncertified = {}
    for target in [*found, *(t for phase in run.phases for t in phase)]:
        proof = run.verdicts.get(target)
        if proof is None or not _traced(run, target, proof) or search.stop_reason(run.elapsed()):
            continue
        search.announce(run, f"{target}: a lasso by simulation, for a trace "
                             f"({'it grows, proven by rates' if proof.method == 'rate proof' else 'it is flooded'})")
        # the lasso answers for every target proven by rates (or flooded from such a proof) and growing in it, as it
        # would have in the first pass
        proven = {n: v for n, v in run.verdicts.items() if n in run.nets and _traced(run, n, v)}
        for n in proven:
            del run.verdicts[n]
        _for_trace(search, run, target, budget_s, quick, proof.method, found.pop(target, None))
        for n, v in proven.items():
            run.verdicts.setdefault(n, v)


def _traced(run: Run, target: str, verdict: BoltVerdict) -> bool:
    """Whether a lasso found for a trace answers for `target` instead of `verdict`: a growth proven by rates, or a
    flood from one answered before the search (`Run.early`; docs/verifier.md, step 2a)."""
    return verdict.method == "rate proof" or (target in run.early and verdict.method == "flood proof")


@paused_gc()  # a long lasso: app/core/gc_pause.py
def _searched(search: SearchControl, run: Run, target: str, total_cells: int | None = None) -> Lasso:
    """The first pass's simulation of `target` (`total_cells` over all its schedules), or the longer one of a target it
    left capped (None: simulate.MAX_CELLS per schedule), within SIMULATION_BUDGET_S: its lasso recorded if it
    certifies by the verification's end; else what was tried, in the notes and the target's words."""
    lasso = _built(search, run, target, _until(search, run, SIMULATION_BUDGET_S), search.end(), total_cells)
    if lasso.trace is None:
        if not search.stop_reason(run.elapsed()):
            then = "searching with the solver" if search.force_search else "trying the linear program, then the solver"
            run.notes.append(f"simulation for {target}: {lasso.message}; {then}")
            tried = (f"{len(lasso.schedules_tried)} schedule{'s' if len(lasso.schedules_tried) != 1 else ''} "
                     f"({lasso.positions} positions)")
            why = ("one stopped at its cell bound" if lasso.capped
                   else "none repeated with it growing" if lasso.schedules_tried else lasso.message)
            run.attempt(target, f"the simulation closed no lasso in which it grows ({tried} played; {why})")
        else:
            run.attempt(target, f"the simulation was stopped in its schedule {len(lasso.schedules_tried)} with no "
                                "growing lasso yet")
    elif _kept(search, run, target, lasso, search.overdue) is None and not search.cancelled:
        _late(search, run, target, lasso)
    return lasso


@paused_gc()
def _round(search: SearchControl, run: Run, target: str, budget_s: float, skip: frozenset[int]) -> Lasso:
    """A round of the failure-cycle simulation (step 2d) for `target`, bounded without failures: its schedules but
    those in `skip`, within `budget_s`; its lasso recorded if it certifies by the verification's end (its phase says
    what its rounds tried)."""
    lasso = _built(search, run, target, _until(search, run, budget_s), search.end(), skip=skip)
    if lasso.trace is not None and _kept(search, run, target, lasso, search.overdue, needs_failures=True) is None \
            and not search.cancelled:
        _late(search, run, target, lasso)
    return lasso


@paused_gc()
def _for_trace(search: SearchControl, run: Run, target: str, budget_s: float, quick: bool, method: str,
               found: Lasso | None = None) -> None:
    """A lasso for the trace of `target`, whose growth is proven by rates already (or that a flood from such a proof
    makes unbounded: `method` "flood proof"; `found`, else simulated now): certified by the time limit, and when
    `quick` (the pass right after the proofs) within `budget_s` too, where a lasso not found is no note (it is tried
    again) and one not certified in time is kept for the last pass."""
    flooded = method != "rate proof" and not quick  # (the time left, and its CPU budget)
    until = _until(search, run, float("inf") if flooded else budget_s)
    cpu = time.thread_time() + FLOODED_TRACE_CPU_S

    def spent() -> bool:
        return search.interrupted() or (flooded and time.thread_time() > cpu)

    lasso = found if found is not None else _built(search, run, target, until, until if quick else search.deadline,
                                                   FIRST_PASS_CELLS, stop=spent)
    stays = "its growth stays proven by rates" if method == "rate proof" else "its flood proof stays its answer"
    if lasso.trace is None:
        if not quick:
            why = (f"no lasso within {FLOODED_TRACE_CPU_S:g} CPU s" if flooded and not search.interrupted()
                   and time.thread_time() > cpu else lasso.message)
            run.notes.append(f"simulation for {target}: {why}; {stays} (no trace)")
        return

    def stop() -> bool:  # the proof answers already, so no certifying past the time limit
        return search.interrupted() or (quick and time.monotonic() >= until)

    if _kept(search, run, target, lasso, stop, needs_failures=target in run.downgraded) is not None \
            or search.cancelled:
        return
    if quick:
        run.uncertified[target] = lasso
    else:
        run.notes.append(f"simulation for {target}: its lasso of {lasso.trace.k} positions was not certified within "
                         f"the time limit; {stays} (no trace)")


def _until(search: SearchControl, run: Run, budget_s: float) -> float:
    """The `time.monotonic()` instant `budget_s` from now, or the time limit when sooner."""
    budget = budget_s if search.timeout_s is None else min(budget_s, search.timeout_s - run.elapsed())
    return time.monotonic() + max(0.0, budget)


def _built(search: SearchControl, run: Run, target: str, until: float, end: float | None,
           total_cells: int | None = None, skip: frozenset[int] = frozenset(),
           stop: Callable[[], bool] | None = None) -> Lasso:
    """A lasso for `target` by simulation by `until`, not certified yet: its schedules (generated once per
    verification, `Run.schedule_order`) but those in `skip`, `total_cells` over all of them (None: simulate.MAX_CELLS
    per schedule), each simulated only while, at CERTIFY_RATIO, the lasso it may close could still be certified by
    `end`; `stop` (by default cancelled or past the time limit) ends it early."""

    def cut() -> float:  # a schedule's own deadline: what is left once its lasso's certification is paid
        now = time.monotonic()
        return until if end is None else min(until, now + (end - now) / (1 + CERTIFY_RATIO))

    stopped = stop or search.interrupted
    return build_lasso(run.nets[target], target, cannot_grow=run.steady, cancelled=stopped, deadline=until,
                       total_cells=total_cells, skip=skip, cut=cut, order=run.schedule_order(target).played(stopped))


def _hasty(run: Run, lasso: Lasso, index: int) -> None:
    """The words of a lasso found by a haste schedule (app/core/tcn/schedule_haste.py) on the verdicts it answers."""
    sched = lasso.schedule
    for name, haste in (sched.haste if sched is not None else {}).items():
        run.notes.append(f"the lasso for {name} needs a change of pace: {name} is slowest but runs fastest while "
                         f"{haste.watch} is down, which loses all it sends, each lost tuple replayed "
                         "(docs/simulation.md, \"Haste\")")
        for n, v in run.verdicts.items():
            if v.trace_index == index and v.method == "simulation" and "fastest while" not in v.message:
                run.verdicts[n] = v.model_copy(update={"message": (
                    f"{v.message}. In it {name} is slowest but runs fastest while {haste.watch} is down, which "
                    f"loses all it sends, each lost tuple replayed (more replays than {name} took from its queue: "
                    "docs/simulation.md, \"Haste\")")})


def _late(search: SearchControl, run: Run, target: str, lasso: Lasso) -> None:
    assert lasso.trace is not None
    run.attempt(target, f"a lasso of {lasso.trace.k} positions was found but not certified within the time limit and "
                        f"its overtime ({search.overtime():g} s)")


def _kept(search: SearchControl, run: Run, target: str, lasso: Lasso, stop: Callable[[], bool],
          needs_failures: bool = False) -> bool | None:
    """Certify the simulated lasso (polling `stop`) and record it: True; None when stopped or cancelled first,
    False (a defect, noted) when it fails certification. A lasso with failures is noted in words: one the target
    *needs* when the failure-free rate check proves it bounded (`needs_failures`)."""
    assert lasso.trace is not None
    cert = certified(lasso.trace, [target], cancelled=stop)  # (remembered: a flood's evidence check reuses it)
    if search.cancelled or (not cert.ok and stop()):
        return None
    if not cert.ok:
        run.notes.append(f"defect: a lasso built by simulation for {target} failed certification and was "
                         "discarded (searching with the solver): " + "; ".join(cert.problems[:3]))
        return False
    run.traces.append(lasso.trace)
    if lasso.schedule is not None:  # (a threshold run's first phase 1 for a bolt growing in it: flood_run.py)
        run.played[len(run.traces) - 1] = lasso.schedule
    if cert.loop_duration is not None:  # (a long compressed lasso is not expanded again to say it)
        run.durations[len(run.traces) - 1] = cert.loop_duration
    failures = (cert.fails, failure_words(cert.loop_duration or Fraction(0), cert.loop_failures, cert.loop_replays))
    summary = search.record(lasso.trace, cert.growth_per_loop, len(run.traces) - 1, run.checked, run.verdicts,
                            method="simulation", duration=cert.loop_duration, failures=failures)
    _hasty(run, lasso, len(run.traces) - 1)
    if summary and needs_failures:
        run.notes.append(f"the lasso for {target} needs failures (without them the rate check proves it bounded): "
                         f"{summary}")
    elif summary:
        run.notes.append(f"the lasso for {target} has failures: {summary}")
    elif search.failing:
        run.notes.append(f"the lasso for {target} has no failures: a run in which no bolt fails, so its trace "
                         "carries the topology with failures off (docs/model.md 7.4)")
    if search.progress is not None:
        search.progress(Progress(k=lasso.trace.k, elapsed_s=run.elapsed(),
                                 message=f"{target}: certified lasso of {lasso.trace.k} positions by simulation"))
    return True
