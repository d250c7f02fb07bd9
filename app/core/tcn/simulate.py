"""Lassos built by simulation: an exact-time run under an adversarial schedule, closed at a repeated state.

For a target bolt that the rate check says may grow, run its cone of influence (`network.py`) forward under one
legal, deterministic schedule (docs/simulation.md):

* every spout emits one tuple per gap, the gap at the fast end of its window;
* the target processes as slowly as the rules allow (processing α(1+τ), then waits the whole idle allowance);
* every other bolt takes arriving tuples at once and processes as fast as allowed.

Durations are exact fractions, scaled to integers on the schedule's own grid, so every event time is an integer
and every clock relative to the last events takes finitely many values. Before each position the discrete state is
hashed: clocks, phases, batches, carries, the queues of the bolts that cannot grow, and the queues of the others
capped at a level above which the rules read them the same way. When a state repeats and, between the two
positions, the target's queue grew, no other queue shrank and every growing queue only saw full batches and never
emptied, the run from 0 to the repetition is a lasso: the state at k+1 is that at l, so the same actions follow
(section 3 of the semantics). It is returned as an ordinary trace; the caller certifies it (`certify.py`).

To keep loops short, the schedule is first *aligned*: a period T is chosen as a multiple of the target's slowest
cycle, every spout's gap is T/n (the most emissions per T its window allows) and every other bolt's cycle divides
T, so that the free running components return to the same relative phase after each T.

No z3 here; nothing in this module is shared with the certifier.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from app.core.emission import Emission
from app.core.failures import FailureModel
from app.core.formats.trace import CompressedTrace, Trace
from app.core.gc_pause import paused_gc
from app.core.tcn.network import Network, SpoutParams, only_failing
from app.core.tcn.schedule import Schedule, schedules, unaligned_schedule
from app.core.tcn.schedule_haste import HASTE_CELLS
from app.core.tcn.schedule_order import ScheduleOrder
from app.core.tcn.simulate_deaths import NEVER, DeathPlan, Deaths
from app.core.tcn.simulate_pace import Switcher
from app.core.tcn.simulate_rules import closes, emit_remembered, loss_replays
from app.core.tcn.simulate_trace import CHECK_EVERY, BoltStep, Resumable, Row, Stopped, rows_lasso, rows_trace

__all__ = ["CHECK_EVERY", "MAX_CANDIDATES", "MAX_CELLS", "Goal", "Lasso", "Resumable", "Schedule", "build_finite_run",
           "build_lasso", "schedules", "simulation", "unaligned_schedule"]

MAX_CELLS = 3_000_000  # positions × bolts simulated per schedule (memory and time bound)
PROBE_TOTAL_CELLS = 400_000  # positions × bolts of all probes of one target (docs/simulation.md, "Probes")
MAX_CANDIDATES = 8  # earlier positions with the same hashed state examined per position
# a run stopped by its deadline is kept to go on (`build_lasso(paused=...)`) up to this many positions × bolts (each
# target of the failure-cycle rounds may keep one: their memory), a longer one is simulated again from time 0
PAUSED_CELLS = 1_000_000


@dataclass
class Lasso:
    """What a simulation gives back: a trace (to be certified) or why there is none."""

    trace: Trace | CompressedTrace | None  # compressed when long (simulate_trace.rows_lasso)
    message: str
    positions: int = 0
    schedules_tried: list[str] = field(default_factory=list)
    capped: bool = False  # a schedule stopped at the cell bound (a larger bound might close a lasso)
    ended: frozenset[int] = frozenset()  # the schedules (by number) played to their end, `skip` of a later call
    exhausted: bool = False  # every schedule played to its end (none closed a lasso)
    schedule: Schedule | None = None  # the one that closed the lasso (a threshold run's first phase 1: flood_run.py)


@dataclass
class Goal:
    """A finite run's goal: `target`'s queue reaching `threshold` while `source` drains (docs/boundedness.md,
    "The threshold run"); `peak` is the target's largest queue so far, `backlog` the source's queue when it
    switched (-1: not yet)."""

    target: str
    threshold: int
    source: str
    peak: int = 0
    backlog: int = -1


@paused_gc()  # a long lasso: app/core/gc_pause.py
def build_lasso(net: Network, target: str, *, cannot_grow: frozenset[str] = frozenset(),
                cancelled: Callable[[], bool] = lambda: False, deadline: float | None = None,
                max_cells: int | None = None, total_cells: int | None = None, deaths: DeathPlan | None = None,
                skip: frozenset[int] = frozenset(), cut: Callable[[float], float] | None = None,
                paused: dict[int, Resumable[_Outcome]] | None = None, order: Iterable[Schedule] | None = None
                ) -> Lasso:
    """Simulate the schedules of :func:`schedules` until one closes a lasso in which `target` grows.

    `cannot_grow`: bolts whose queues the rate check proves bounded (hashed exactly; the others are capped).
    `deadline`: a `time.monotonic()` instant. `max_cells`: positions × bolts simulated per schedule (default
    MAX_CELLS); `total_cells`: over all schedules (none by default), the schedules left once it is spent are not
    simulated (`capped`); a probe (`Schedule.cells`) has its own bound instead, outside that total. `deaths`: the
    workers that die in every schedule (docs/model.md 9.5; `net` then has section 7's failures off). The trace is
    not certified here. `skip`: schedules (numbered in the order of `schedules`) an earlier call played to their end
    (`Lasso.ended`). `cut`: asked as each schedule starts, given the seconds an earlier call simulated it (0 for a
    fresh one), its own deadline (before `deadline`): a schedule it stops is left unfinished and the next one is
    played (the search leaves time to certify a lasso: docs/verifier.md). `paused`: where a schedule stopped by its
    deadline is kept, by number, and where a later call given the same dict takes it up again, from the position it
    stopped before, instead of simulating it from time 0 (the same run: `simulation`). `order`: the schedules of
    :func:`schedules`, generated once by the caller (app/core/tcn/schedule_order.py); None: the target's own
    `ScheduleOrder`, the one place its schedules and its haste schedules are put together."""
    max_cells, tried, positions, ended = MAX_CELLS if max_cells is None else max_cells, list[str](), 0, set(skip)
    capped = unfinished = False
    probed = hasted = 0  # positions of probes and of haste schedules: bounded each by its own cells, not by
    # `total_cells` (schedule.probe_cells, schedule_haste.HASTE_CELLS)
    settled: list[Schedule] = []  # probes that ended below their bound: played in full, they would end the same
    runs_on: dict[frozenset[str], Network] = {}  # per failure plan: the network only its bolts fail in
    try:
        for number, sched in enumerate(ScheduleOrder(net, target).played(cancelled) if order is None else order):
            if sched.cells is None and sched in settled:
                continue
            if sched.cells is not None and probed * max(1, len(net.bolts)) >= PROBE_TOTAL_CELLS:
                continue
            left = None if total_cells is None else total_cells - (positions - probed - hasted) * max(1, len(net.bolts))
            if sched.cells is not None or sched.haste:  # a probe's or a haste schedule's own bound
                left = sched.cells or HASTE_CELLS
            elif left is not None and left <= 0:
                capped = True
                break
            if number in skip:
                continue
            tried.append(sched.describe() + (f" with {deaths.describe()}" if deaths is not None else ""))
            plan = frozenset(sched.fail)
            if plan not in runs_on:  # the bolts the plan leaves up never fail (docs/model.md 7.4)
                runs_on[plan] = only_failing(net, plan)
            sim = paused.pop(number, None) if paused is not None else None
            if sim is None:
                sim = simulation(runs_on[plan], target, sched, cannot_grow, cancelled,
                                max_cells if left is None else min(max_cells, left), deaths=deaths)
            try:
                outcome = sim.advance(deadline if cut is None else cut(sim.spent))
            except Stopped:
                if paused is not None and not sim.done and sim.cells <= PAUSED_CELLS:  # stopped by its deadline:
                    paused[number] = sim                                                 # a later call goes on
                if cut is None or cancelled() or (deadline is not None and time.monotonic() >= deadline):
                    raise
                tried[-1] += ": stopped to leave time to certify a lasso"
                unfinished = True
                continue
            if isinstance(outcome, Trace | CompressedTrace):
                return Lasso(outcome, f"{tried[-1]}: lasso of {outcome.k} positions",
                             positions + outcome.k + 2, tried, ended=frozenset(ended), schedule=sched)
            positions += outcome[1]
            probed += outcome[1] if sched.cells is not None else 0
            hasted += outcome[1] if sched.haste else 0
            if sched.cells is not None and not outcome[2]:
                settled.append(replace(sched, cells=None))
            capped = capped or (outcome[2] and sched.cells is None and not sched.haste)  # (nor a haste schedule)
            if left is None or not outcome[2] or sched.cells is not None or sched.haste:  # (capped by
                ended.add(number)  # `total_cells`: a larger share might close it; a haste schedule has its own bound)
            tried[-1] += f": {outcome[0]}"
    except Stopped as stop:
        return Lasso(None, str(stop), positions, tried, capped, frozenset(ended))
    if cancelled():
        return Lasso(None, "cancelled", positions, tried, capped, frozenset(ended))
    if not tried and not skip:
        return Lasso(None, "no legal schedule lets the target grow", positions, tried)
    return Lasso(None, "no schedule closed a lasso in which the target grows: " + "; ".join(tried), positions, tried,
                 capped, frozenset(ended), not capped and not unfinished)


@paused_gc()
def build_finite_run(net: Network, sched: Schedule, goal: Goal, *, cancelled: Callable[[], bool] = lambda: False,
                     deadline: float | None = None, max_cells: int = MAX_CELLS) -> Trace | str:
    """A finite run of `net` under `sched` (its failure plan's bolts fail, no other) that takes `goal.target`'s
    queue to `goal.threshold` (a trace with loop_start k+1, to be certified as a threshold witness), or why not;
    `goal.peak` is then the target's largest queue in the run."""
    try:
        out = simulation(only_failing(net, frozenset(sched.fail)), goal.source, sched, frozenset(), cancelled,
                        max_cells, goal).advance(deadline)
    except Stopped as stop:
        return str(stop)
    if isinstance(out, tuple):
        return out[0]
    assert isinstance(out, Trace)  # a finite run is never compressed (simulate_trace.rows_trace)
    return out


_Outcome = Trace | CompressedTrace | tuple[str, int, bool]


def simulation(net: Network, target: str, sched: Schedule, cannot_grow: frozenset[str],
               cancelled: Callable[[], bool], max_cells: int, goal: Goal | None = None,
               deaths: DeathPlan | None = None) -> Resumable[_Outcome]:
    """One deterministic run under `sched`, advanced to a deadline at a time (`Resumable.advance`: a run its
    deadline stopped goes on from the very position it stopped before, so its outcome is the run's in one go); its
    outcome a lasso trace, or (why not, positions simulated, stopped at the cell bound). With a `goal`, no state is
    hashed: the run is a finite one, stopped at the first position where the goal's bolt holds its threshold (its
    trace), or when the goal's source has made all its switches (`sched.switches`) and drained its queue.

    With a failure plan (`sched.fail`, docs/model.md section 7) the planned bolts fail and
    recover on their clocks; each loss replays one spout tuple per lost tuple, split evenly
    among the spouts of the bolt's impact table (the upper end of section 7.3), and the
    replays wait in the spouts' backlogs until the replay mode lets them out. In `net` no other
    bolt may fail (`only_failing`).

    Each position: the hashed state before it (`_state_key`) and the loop it may close (`_closes`),
    then the actions at its time, in the rules' order: the spouts' emissions and replays
    (`_spout_actions`), the failures, recoveries and EMITs (`_emit_actions`), the bolts' arrivals,
    losses and TAKEs (`_bolt_actions`); then the next position's time."""
    return Resumable(_positions(net, target, sched, cannot_grow, cancelled, max_cells, goal, deaths))


def _positions(net: Network, target: str, sched: Schedule, cannot_grow: frozenset[str],
               cancelled: Callable[[], bool], max_cells: int, goal: Goal | None, deaths: DeathPlan | None
               ) -> Generator[int, float | None, _Outcome]:
    """The run of `simulation`: it pauses (yields) at the first look at the clock past its deadline, and is sent
    the next deadline when it goes on; the state lives in this frame, so nothing is replayed."""
    deadline = yield 0
    run = _Run.start(net, target, sched, cannot_grow, deaths)
    dying = Deaths(deaths, net, run.scale, run) if deaths is not None else None  # docs/model.md 9.5
    run.cut, run.cuts = (dying.cut, dying.cuts) if dying is not None else (None, frozenset())
    state_key, spout_actions, emit_actions = _state_key(run), _spout_actions(run), _emit_actions(run)
    bolt_actions, switch = _bolt_actions(run), Switcher(run, sched)
    watch = run.bolt_names.index(goal.target) if goal is not None else -1
    drains = run.bolt_names.index(goal.source) if goal is not None else -1
    queue, backlog, down, xcarry = run.queue, run.backlog, run.down, run.xcarry
    next_emit, take_time, proc, processing, delay, waiting_since, recover_at, next_fail = (
        run.next_emit, run.take_time, run.proc, run.processing, run.delay, run.waiting_since, run.recover_at,
        run.next_fail)
    free, growing_backlog, spout_pos, plan, extras = run.free, run.growing_backlog, run.spout_pos, run.plan, run.extras
    n_s, n_b, slot, tgt, slots = len(net.spouts), len(net.bolts), run.slot, run.tgt, len(run.index)
    rows: list[Row] = []
    seen: dict[tuple[int | Fraction, ...], list[int]] = {}
    queues_at: list[list[int]] = []  # free queues (growing backlogs, joins' caches) before each position
    bad_upto: list[list[int]] = [[0] * (len(free) + len(growing_backlog) + len(run.cslot))]  # breaches before i
    cache_of = list(run.cache.values())
    grown = ([slot[tgt]] if tgt in slot else []) + [c for (j, _), c in run.cslot.items() if j == tgt]  # (a storm)
    t = 0
    i = 0
    limit = max(16, max_cells // max(1, n_b))
    resumed = False  # (a run sent a deadline already past goes on to its next look at the clock)
    while True:
        if cancelled():
            raise Stopped("cancelled")
        if i % CHECK_EVERY == 0 and not resumed and deadline is not None and time.monotonic() > deadline:
            deadline, resumed = (yield i * max(1, n_b)), True  # paused before position i (its cells so far)
            continue
        resumed = False
        if i >= limit:
            return f"no repeated state within {limit} positions", i, True
        # ---- the state before position i, and the loop it may close
        key = state_key(t) + (dying.key(t) if dying else ()) + switch.haste.key() if i >= 1 and goal is None else None
        if goal is None:
            queues_at.append([queue[j] for j in free] + [backlog[s] for s in growing_backlog]
                             + [k for parts in cache_of for k in parts])
        loop_start = None
        if key is not None and key in seen:
            for start in reversed(seen[key][-MAX_CANDIDATES:]):
                verdict = closes(start, i, grown, queues_at, bad_upto)
                if verdict == "periodic":
                    return "the run became periodic without the target growing", i, False
                if verdict == "lasso":
                    loop_start = start
                    break
        # ---- the actions at position i (time t)
        emitted = [0] * slots
        backlog_before = backlog[:]
        breaches = bad_upto[-1][:]
        replayed = spout_actions(t, emitted, breaches)
        batch_before = dying.decide(t) if dying else []  # (a death may wait for a batch in progress)
        fails, recovers, emits = emit_actions(t, emitted)
        switch(t, fails, recovers, emits)
        if goal is not None and goal.backlog < 0 and switch.done(drains):
            goal.backlog = queue[drains]  # the source's backlog when it starts draining
        step, losses = bolt_actions(t, emitted, fails, recovers, emits, breaches)
        for _, replays in losses.values():
            for name, r in replays.items():
                backlog[spout_pos[name]] += r
        workers = dying.act(t, step, batch_before, backlog) if dying is not None else None
        if goal is None:
            bad_upto.append(breaches)
        failure_row = (backlog_before, replayed, fails, recovers, losses, down[:]) if plan or dying else None
        rows.append((t, emitted[:n_s], step, {x: (emitted[x], xcarry[x]) for x in extras} if extras else None,
                     failure_row, workers))
        if loop_start is not None:
            return rows_lasso(net, rows, loop_start, run.scale, run.index, cancelled)
        if goal is not None:
            goal.peak = max(goal.peak, step[watch][0])
            if goal.peak >= goal.threshold and len(rows) >= 3:  # positions 0..k+1, k ≥ 1, loop_start k+1
                return rows_trace(net, rows, len(rows) - 1, run.scale, run.index, cancelled)
            if switch.done(drains) and queue[drains] == 0:
                return f"{goal.source} drained its backlog by {Fraction(t, run.scale)} s", i, False
        if key is not None:
            seen.setdefault(key, []).append(i)
        # ---- the next position: the earliest pending event
        pending = list(next_emit)
        pending += [take_time[j] + proc[j] for j in range(n_b) if processing[j]]
        pending += [since + delay[j] for j, since in enumerate(waiting_since) if since is not None]
        pending += [recover_at[j] if down[j] else next_fail[j] for j in plan]
        pending += dying.events() if dying is not None else []
        t = min(pending)
        i += 1


@dataclass
class _Run:
    """One run under a schedule: its constants (durations as integers on the schedule's grid of 1/`scale` s,
    per spout and per bolt in the network's order) and the state it updates in place."""

    scale: int
    index: dict[tuple[str, str], int]  # one slot per output stream: the default streams first, then declared ones
    extra_spout: list[list[tuple[int, Fraction]]]  # per spout: (slot, ratio) of its carrying streams
    extra_bolt: list[list[tuple[int, Fraction, bool]]]  # per bolt: (slot, σ, silent) of its other streams
    extras: list[int]
    gap: list[int]
    proc: list[int]
    delay: list[int]
    eager: list[bool]
    take_max: list[int]
    slide: list[int]  # a count window's sliding interval (1 for any other bolt): whole slides only
    join: list[bool]  # waits for a part from every branch (docs/model.md section 11)
    timer: list[bool]  # a duration window: takes every waiting tuple, its clock from its last run (section 10.3)
    sources: list[list[int]]
    silent: list[bool]  # the default stream's
    sigma: list[Fraction]
    rule: Emission
    tgt: int
    plan: dict[int, tuple[int, int]]  # the planned bolts' (up, down) durations; no other bolt may fail
    mode: str
    spout_pos: dict[str, int]
    reach: dict[int, list[int]]
    spouts: list[SpoutParams]
    bolt_names: list[str]
    failures: FailureModel | None
    free: list[int]  # the bolts whose queues are hashed capped
    slot: dict[int, int]
    cap: list[int]
    growing_backlog: list[int]
    bslot: dict[int, int]
    cslot: dict[tuple[int, int], int]  # per join and branch (its index in `sources`): the slot of its cache
    ccap: int  # a join's cache is hashed capped here: above it the min reads it the same way
    # the state
    xcarry: dict[int, Fraction | int]  # the declared streams' carries
    next_emit: list[int]
    last_emit: list[int | None]
    processing: list[bool]
    batch: list[int]
    take_time: list[int]
    carry: list[Fraction | int]
    queue: list[int]
    waiting_since: list[int | None]
    down: list[bool]
    next_fail: dict[int, int]  # while up: when it fails next
    recover_at: dict[int, int]  # while down: when it comes back
    backlog: list[int]
    cache: dict[int, list[int]]  # per join: per branch, its parts whose message is not complete (section 11)
    cut: Callable[[int, int, int, int], tuple[int, int]] | None = None  # 9.5: a bolt run in part by a dying worker
    cuts: frozenset[int] = frozenset()
    until: dict[int, int] = field(default_factory=dict)  # per planned bolt: after a recovery, no failure due past it

    @staticmethod
    def start(net: Network, target: str, sched: Schedule, cannot_grow: frozenset[str],
              deaths: DeathPlan | None = None) -> _Run:
        """The run's constants and its state at time 0 (a dying worker's bolts in the failure plan, on its clock)."""
        fm = net.failures
        failing = sched.fail | (deaths.bolt_plan() if deaths is not None else {})
        plan_times = [t for pair in failing.values() for t in pair] + list(sched.first_fail.values())
        plan_times += deaths.durations() if deaths is not None else []
        durations = [*sched.gap.values(), *sched.processing.values(), *sched.delay.values(), *plan_times,
                     *(d for w in sched.switches for d in (w.processing, w.delay)),
                     *(d for h in sched.haste.values() for d in (h.processing, h.delay))]
        scale = math.lcm(*(Fraction(d).denominator for d in durations))  # every duration an integer
        spouts, bolts = net.spouts, net.bolts
        n_s, n_b = len(spouts), len(bolts)
        index = {(s.name, "default"): i for i, s in enumerate(spouts)}
        index |= {(b.name, "default"): n_s + j for j, b in enumerate(bolts)}
        extra_spout: list[list[tuple[int, Fraction]]] = []
        for sp in spouts:
            extra_spout.append([])
            for st in sp.streams:
                index[(sp.name, st.name)] = len(index)
                if not st.silent:
                    extra_spout[-1].append((index[(sp.name, st.name)], st.sigma))
        extra_bolt: list[list[tuple[int, Fraction, bool]]] = []
        for b in bolts:
            extra_bolt.append([])
            for st in b.streams[1:]:
                index[(b.name, st.name)] = len(index)
                extra_bolt[-1].append((index[(b.name, st.name)], st.sigma, st.silent))
        extras = list(range(n_s + n_b, len(index)))
        tgt = next(j for j, b in enumerate(bolts) if b.name == target)
        plan = {j: (int(failing[b.name][0] * scale), int(failing[b.name][1] * scale))
                for j, b in enumerate(bolts) if b.name in failing}
        mode = fm.replay if fm is not None else deaths.mode if deaths is not None else "none"
        spout_pos = {sp.name: m for m, sp in enumerate(spouts)}
        reach = {j: [spout_pos[name] for name in (sp.name for sp in spouts) if name in fm.impact.get(bolts[j].name, {})]
                 for j in plan} if fm is not None else dict.fromkeys(plan, [])  # a worker's bolts: its replays
        # queues that may grow are hashed capped: above `cap` the rules read them the same way; a bolt that
        # fails in the run is emptied at each failure and hashed exactly (it cannot grow in a lasso)
        free = [j for j, b in enumerate(bolts) if (b.name not in cannot_grow or j == tgt) and j not in plan]
        take_max = [b.take_max if b.timer is None else NEVER for b in bolts]  # a timer takes all (section 10.3)
        # a paced backlog may grow like a queue (hashed capped, a loop condition per emission); an
        # at-once backlog empties at every emission and is hashed exactly
        growing_backlog = [s for s in range(n_s) if mode == "paced" and (
            deaths is not None or any(s in r for r in reach.values()))]
        joins = [j for j, b in enumerate(bolts) if b.join]
        cslot = {(j, m): len(free) + len(growing_backlog) + n
                 for n, (j, m) in enumerate((j, m) for j in joins for m in range(len(bolts[j].sources)))}
        most = max([s.burst for s in spouts]
                   + [math.ceil(st.sigma * b.take_max) + 1 for b in bolts for st in b.streams if b.timer is None])
        first_fail = {j: int(sched.first_fail[bolts[j].name] * scale) if bolts[j].name in sched.first_fail else up
                      for j, (up, _) in plan.items()}  # a timed failure's first (docs/simulation.md)
        return _Run(
            scale, index, extra_spout, extra_bolt, extras, [int(sched.gap[s.name] * scale) for s in spouts],
            [int(sched.processing[b.name] * scale) for b in bolts], [int(sched.delay[b.name] * scale) for b in bolts],
            [sched.eager[b.name] for b in bolts], take_max, [b.slide for b in bolts], [b.join for b in bolts],
            [b.timer is not None for b in bolts],
            [[index[src] for src in b.sources] for b in bolts],
            [b.streams[0].silent for b in bolts], [b.sigma for b in bolts], net.emission, tgt, plan, mode,
            spout_pos, reach, spouts, [b.name for b in bolts], fm, free,
            {j: m for m, j in enumerate(free)}, [max(2 * c, deaths.most if deaths else 0) for c in take_max],
            growing_backlog,
            {s: len(free) + m for m, s in enumerate(growing_backlog)}, cslot, 2 * most + 2,
            dict.fromkeys(extras, 0), [0] * n_s, [None] * n_s, [False] * n_b, [0] * n_b, [0] * n_b, [0] * n_b,
            [net.init_queue] * n_b, [None] * n_b, [False] * n_b, first_fail, {},
            [0] * n_s, {j: [0] * len(bolts[j].sources) for j in joins},
            until={j: math.ceil(sched.fail_until[u] * scale) for j in plan if (u := bolts[j].name) in sched.fail_until})


def _state_key(run: _Run) -> Callable[[int], tuple[int | Fraction, ...]]:
    """The hashed discrete state before a position at time t: clocks, phases, batches, carries, the queues
    (capped for the free ones), the declared streams' carries, and with failures the failure clocks and
    the backlogs (a growing one capped)."""
    last_emit, waiting_since, batch, processing, carry = (
        run.last_emit, run.waiting_since, run.batch, run.processing, run.carry)
    take_time, queue, cap, slot, xcarry, extras = run.take_time, run.queue, run.cap, run.slot, run.xcarry, run.extras
    plan, down, recover_at, next_fail, bslot, backlog = (
        run.plan, run.down, run.recover_at, run.next_fail, run.bslot, run.backlog)
    cache, ccap = run.cache, run.ccap
    n_b = len(queue)

    def state_key(t: int) -> tuple[int | Fraction, ...]:
        state: list[int | Fraction] = [t - e if e is not None else -1 for e in last_emit]
        for j in range(n_b):  # one flat tuple: fewer objects to keep per position
            since = waiting_since[j]
            state += (batch[j] if processing[j] else -1, carry[j],
                      t - take_time[j] if processing[j] else -1,
                      t - since if since is not None else -1,
                      min(queue[j], cap[j]) if j in slot else queue[j])
        state += tuple(xcarry[x] for x in extras)
        for parts in cache.values():  # a join's caches, capped: above ccap they never set the min
            state += [min(k, ccap) for k in parts]
        if plan:
            state += [(recover_at[j] - t) if down[j] else -(next_fail[j] - t) - 1 for j in plan]  # sign: failed
            state += [min(r, 2) if s in bslot else r for s, r in enumerate(backlog)]
        return tuple(state)

    return state_key


def _spout_actions(run: _Run) -> Callable[[int, list[int], list[int]], list[int]]:
    """The spouts at time t: each due spout emits one fresh tuple and the replays its mode lets out of its
    backlog (a growing backlog must replay at every emission: a breach otherwise), and its declared
    streams; gives the replayed tuples per spout."""
    next_emit, last_emit, backlog, gap, bslot, mode = (
        run.next_emit, run.last_emit, run.backlog, run.gap, run.bslot, run.mode)
    extra_spout, xcarry, rule = run.extra_spout, run.xcarry, run.rule
    n_s = len(next_emit)

    def spout_actions(t: int, emitted: list[int], breaches: list[int]) -> list[int]:
        replayed = [0] * n_s
        for s in range(n_s):
            if next_emit[s] == t:
                if mode == "paced":
                    replayed[s] = min(backlog[s], 1)
                elif mode == "at-once":
                    replayed[s] = backlog[s]
                if s in bslot and backlog[s] < 1:  # a growing backlog must replay at every emission
                    breaches[bslot[s]] += 1
                backlog[s] -= replayed[s]
                emitted[s] = 1 + replayed[s]
                last_emit[s] = t
                next_emit[s] = t + gap[s]
                for x, ratio in extra_spout[s]:
                    emitted[x], xcarry[x] = emit_remembered(ratio, xcarry[x], emitted[s], rule)
        return replayed

    return spout_actions


def _emit_actions(run: _Run) -> Callable[[int, list[int]], tuple[list[bool], list[bool], list[bool]]]:
    """The bolts' failures and recoveries due at time t, and their EMITs (a bolt whose processing ends at
    t emits, unless it fails there); gives (fails, recovers, emits) per bolt."""
    plan, down, next_fail, recover_at, processing, take_time, proc = (
        run.plan, run.down, run.next_fail, run.recover_at, run.processing, run.take_time, run.proc)
    silent, sigma, carry, batch, extra_bolt, xcarry, rule = (
        run.silent, run.sigma, run.carry, run.batch, run.extra_bolt, run.xcarry, run.rule)
    n_b, n_s = len(down), len(run.next_emit)

    def emit_actions(t: int, emitted: list[int]) -> tuple[list[bool], list[bool], list[bool]]:
        fails = [j in plan and not down[j] and next_fail[j] == t for j in range(n_b)]
        recovers = [down[j] and recover_at[j] == t for j in range(n_b)]
        emits = [False] * n_b
        for j in range(n_b):
            if processing[j] and take_time[j] + proc[j] == t and not fails[j]:
                emits[j] = True
                keep: Fraction | int
                if silent[j]:
                    out, keep = 0, 0
                else:
                    out, keep = emit_remembered(sigma[j], carry[j], batch[j], rule)
                emitted[n_s + j], carry[j] = out, keep
                for x, ratio, quiet in extra_bolt[j]:
                    if not quiet:
                        emitted[x], xcarry[x] = emit_remembered(ratio, xcarry[x], batch[j], rule)
        return fails, recovers, emits

    return emit_actions


_Losses = dict[int, tuple[int, dict[str, int]]]  # per bolt that lost tuples: (lost, replays per spout)


def _bolt_actions(run: _Run) -> Callable[[int, list[int], list[bool], list[bool], list[bool], list[int]],
                                         tuple[list[BoltStep], _Losses]]:
    """The bolts at time t, after the EMITs: arrivals (each input stream once); a failing or failed bolt
    loses them (and, failing, its queue and batch) and replays what it lost; an up bolt takes when due
    (its idle allowance spent, or at once), and its queue and idle clock follow. A free queue that is
    empty or sees a partial batch breaches the loop conditions. Gives the bolts' steps and losses."""
    sources, queue, processing, batch, carry, waiting_since, down, recover_at, next_fail = (
        run.sources, run.queue, run.processing, run.batch, run.carry, run.waiting_since, run.down,
        run.recover_at, run.next_fail)
    plan, extra_bolt, xcarry, reach, mode, delay, eager, take_max, take_time, slot, slide = (
        run.plan, run.extra_bolt, run.xcarry, run.reach, run.mode, run.delay, run.eager,
        run.take_max, run.take_time, run.slot, run.slide)
    spouts, names, fm = run.spouts, run.bolt_names, run.failures
    join, cache, cslot, timer = run.join, run.cache, run.cslot, run.timer
    n_b, n_s = len(queue), len(spouts)

    def completed(j: int, emitted: list[int], breaches: list[int]) -> int:
        """A join's arrivals (docs/model.md section 11): the messages its branches have all delivered; each
        branch keeps the rest in its cache, and a cache that ends empty (its branch set the min) breaches a
        growing cache's loop condition."""
        parts = cache[j]
        totals = [k + emitted[u] for k, u in zip(parts, sources[j], strict=True)]
        done = min(totals)
        for m, total in enumerate(totals):
            parts[m] = total - done
            if total == done:
                breaches[cslot[(j, m)]] += 1
        return done

    def bolt_actions(t: int, emitted: list[int], fails: list[bool], recovers: list[bool], emits: list[bool],
                     breaches: list[int]) -> tuple[list[BoltStep], _Losses]:
        step: list[BoltStep] = []
        losses: _Losses = {}
        for j in range(n_b):
            arrivals = completed(j, emitted, breaches) if join[j] else sum(emitted[u] for u in sources[j])
            before = queue[j]
            if fails[j] or (down[j] and not recovers[j]):
                lost = arrivals + (before + (batch[j] if processing[j] else 0) if fails[j] else 0)
                if fails[j]:  # a restarted executor keeps nothing
                    down[j], recover_at[j] = True, t + plan[j][1]
                    processing[j], batch[j], carry[j], queue[j], waiting_since[j] = False, 0, 0, 0, None
                    for x, _, _ in extra_bolt[j]:
                        xcarry[x] = 0
                if lost:
                    losses[j] = (lost, loss_replays(lost, reach[j], spouts, fm.impact[names[j]] if fm else {}, mode))
                step.append((before, arrivals, False, 0, False, 0, 0, False))
                continue
            if recovers[j]:  # up again, idle with an empty queue: what arrives now may be taken now
                down[j], next_fail[j] = False, t + plan[j][0] if t + plan[j][0] < run.until.get(j, NEVER) else NEVER
            since, was_processing = waiting_since[j], processing[j]
            took = 0
            if emits[j]:  # the EMIT ends the phase first; a zero delay takes at once (back-to-back)
                processing[j], batch[j] = False, 0
            # due: the idle allowance is spent, or tuples just became available and the bolt takes at once
            due = (since + delay[j] == t if since is not None
                   else delay[j] == 0 or (eager[j] and not emits[j]))
            lost, cap = run.cut(j, t, before, arrivals) if j in run.cuts and run.cut else (0, take_max[j])
            if lost:  # docs/model.md 9.5: the share of its executors in a dead worker
                losses[j] = (lost, {})
            avail = before + arrivals - lost  # a count window takes whole slides only (docs/model.md section 10)
            if not processing[j] and avail >= slide[j] and due:
                took = min(cap, avail - avail % slide[j])
            if took:
                processing[j], batch[j], take_time[j] = True, took, t
            queue[j] = avail - took
            if timer[j]:  # a timer's tuples wait from its last run, or from their arrival at an idle bolt (10.3)
                waiting_since[j] = None if queue[j] == 0 else since if since is not None else \
                    take_time[j] if was_processing else t
            elif not (not processing[j] and queue[j] >= slide[j]):
                waiting_since[j] = None
            elif emits[j] or since is None:
                waiting_since[j] = t
            step.append((before, arrivals, took > 0, batch[j], emits[j], emitted[n_s + j], carry[j], processing[j]))
            if j in slot and (before < slide[j] or (0 < took < take_max[j])):
                breaches[slot[j]] += 1
        return step, losses

    return bolt_actions

