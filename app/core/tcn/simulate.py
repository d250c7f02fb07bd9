"""Lassos built by simulation: an exact-time run under an adversarial schedule, closed at a repeated state.

For a target bolt that the rate check says may grow, run its cone of influence
(`network.py`) forward under one legal, deterministic schedule (docs/simulation.md):

* every spout emits one tuple per gap, the gap at the fast end of its window;
* the target processes as slowly as the rules allow (processing α(1+τ), then waits
  the whole idle allowance before its next take);
* every other bolt takes arriving tuples at once and processes as fast as allowed.

Durations are exact fractions, scaled to integers on the schedule's own grid, so
every event time is an integer and every clock relative to the last events takes
finitely many values. Before each position the discrete state is hashed: clocks,
phases, batches, carries, the queues of the bolts that cannot grow, and the queues
of the others capped at a level above which the rules read them the same way.
When a state repeats and, between the two positions, the target's queue grew, no
other queue shrank and every growing queue only saw full batches and never emptied,
the run from 0 to the repetition is a lasso: the state at k+1 is that at l, so the
same actions follow (section 3 of the semantics). It is returned as an ordinary
trace; the caller certifies it (`certify.py`) like any solver trace.

To keep loops short, the schedule is first *aligned*: a period T is chosen as a
multiple of the target's slowest cycle, every spout's gap is T/n (the most emissions
per T its window allows) and every other bolt's cycle divides T, so that the free
running components return to the same relative phase after each T.

No z3 here; nothing in this module is shared with the certifier.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pydantic import TypeAdapter

from app.core.emission import emit as emit_rule
from app.core.formats.trace import Trace, TracePosition, format_carry, format_time
from app.core.rates import sigma_bounds
from app.core.tcn.network import Network, time_grid

MAX_PERIODS = 200  # multiples of the target's slowest cycle tried as the aligned period T
MAX_MULTIPLE = 64  # largest number of tuples per period a spout is rounded to for whole flows
MAX_ALIGNED_TRIES = 4  # aligned schedules simulated before the unaligned one
MAX_CELLS = 3_000_000  # positions × bolts simulated per schedule (memory and time bound)
CHECK_EVERY = 64  # positions between two looks at the wall clock
MAX_CANDIDATES = 8  # earlier positions with the same hashed state examined per position


@dataclass(frozen=True)
class Schedule:
    """The durations one simulation uses, exact, per component name.

    `gap`: a spout's time between two emissions of one tuple; `processing`: a bolt's
    time from take to emit; `delay`: a bolt's time from tuples becoming available (an
    emit leaving some, or an arrival while it waits for none) to its take; `eager`:
    the bolt takes tuples arriving while it is idle with nothing waiting at once,
    instead of after `delay`. `period`: the aligned period T, None when not aligned."""

    period: Fraction | None
    gap: dict[str, Fraction]
    processing: dict[str, Fraction]
    delay: dict[str, Fraction]
    eager: dict[str, bool]

    def describe(self) -> str:
        if self.period is None:
            return "unaligned schedule (every duration at its extreme)"
        return f"schedule aligned to a period of {format_time(self.period)} s"


@dataclass
class Lasso:
    """What a simulation gives back: a trace (to be certified) or why there is none."""

    trace: Trace | None
    message: str
    positions: int = 0
    schedules_tried: list[str] = field(default_factory=list)


class _Stop(Exception):
    """Cancelled or out of time."""


def _window(net: Network, alpha: Fraction) -> tuple[Fraction, Fraction]:
    return alpha * (1 - net.tolerance), alpha * (1 + net.tolerance)


def _split_slow(cycle: Fraction, lo: Fraction, hi: Fraction, idle: Fraction) -> tuple[Fraction, Fraction] | None:
    """(processing, delay) summing to `cycle`, waiting as long as allowed; None if impossible."""
    delay = min(idle, cycle - lo)
    processing = cycle - delay
    if delay < 0 or (delay == 0 and idle > 0) or not lo <= processing <= hi:
        return None
    return processing, delay


def _split_fast(cycle: Fraction, lo: Fraction, hi: Fraction, idle: Fraction) -> tuple[Fraction, Fraction] | None:
    """(processing, delay) summing to `cycle`, processing as fast as allowed; None if impossible."""
    processing = max(lo, cycle - idle)
    delay = cycle - processing
    if delay < 0 or (delay == 0 and idle > 0) or processing > hi:
        return None
    return processing, delay


def aligned_schedule(net: Network, target: str, period: Fraction,
                     multiple: dict[str, int] | None = None) -> Schedule | None:
    """The schedule aligned to `period` T, or None when some component cannot fit T.

    Spout: n emissions per T, the largest multiple of `multiple[spout]` (default 1) with
    n ≤ T / (a(1−τ)), gap T/n (legal when ≤ a(1+τ)). Target: the fewest cycles per T with a
    cycle no longer than α(1+τ) + max_idle. Any other bolt: the most cycles per T with a cycle
    longer than α(1−τ) (or, for a slow bolt, one cycle of a multiple of T)."""
    idle = net.max_idle
    gap: dict[str, Fraction] = {}
    for s in net.spouts:
        lo, hi = _window(net, s.period)
        step = (multiple or {}).get(s.name, 1)
        n = math.floor(period / lo / step) * step
        if n < 1 or period / n > hi:
            return None
        gap[s.name] = period / n
    processing: dict[str, Fraction] = {}
    delay: dict[str, Fraction] = {}
    eager: dict[str, bool] = {}
    for b in net.bolts:
        lo, hi = _window(net, b.alpha)
        if b.name == target:
            cycles = math.ceil(period / (hi + idle))
            split = _split_slow(period / cycles, lo, hi, idle)
        else:
            cycles = math.ceil(period / lo) - 1
            if cycles >= 1:
                split = _split_fast(period / cycles, lo, hi, idle)
            else:  # slower than T: one cycle of the smallest multiple of T longer than α(1−τ)
                split = _split_fast(period * (math.floor(lo / period) + 1), lo, hi, idle)
        if split is None:
            return None
        processing[b.name], delay[b.name] = split
        eager[b.name] = b.name != target
    return Schedule(period, gap, processing, delay, eager)


def whole_flow_multiples(net: Network, target: str) -> dict[str, int]:
    """Per spout, a number of tuples m such that m times the product of σ along any path from the
    spout (through bolts other than the target) is a whole number: with spout counts per period
    that are multiples of these, every stream carries whole tuples per period, which a lasso
    needs wherever queues cannot grow (docs/simulation.md). 1 when above MAX_MULTIPLE or when the
    cone has a cycle."""
    order = _topological(net)
    if order is None:
        return {s.name: 1 for s in net.spouts}
    carrying = [st for s in net.spouts for st in s.streams if not st.silent]
    carrying += [st for b in net.bolts for st in b.streams if not st.silent]
    primes = sorted({p for st in carrying for p in _primes(st.sigma.denominator)})
    out: dict[str, int] = {}
    for s in net.spouts:
        need = 1
        for p in primes:
            # smallest valuation of a σ product reaching each output stream
            lowest: dict[tuple[str, str], int] = {(s.name, "default"): 0}
            lowest.update({(s.name, st.name): _valuation(st.sigma, p) for st in s.streams if not st.silent})
            deficit = max([0] + [-v for v in lowest.values()])
            for b in order:
                reached = [lowest[u] for u in b.sources if u in lowest]
                if not reached or b.name == target or b.silent:
                    continue
                for st in b.streams:
                    if not st.silent:
                        lowest[(b.name, st.name)] = min(reached) + _valuation(st.sigma, p)
                        deficit = max(deficit, -lowest[(b.name, st.name)])
            need *= p ** deficit
        out[s.name] = need if need <= MAX_MULTIPLE else 1
    return out


def whole_flows(net: Network, sched: Schedule) -> bool:
    """Whether, in the fluid picture, every stream carries a whole number of tuples per period
    (each bolt passing on σ times what it processes, min(inflow, C × its cycles per period))."""
    if sched.period is None:
        return False
    out = _spout_flows(net, {s.name: sched.period / sched.gap[s.name] for s in net.spouts}, None)
    order = _topological(net)
    if order is None or any(v.denominator != 1 for v in out.values()):
        return False
    for b in order:
        inflow = sum((out[u] for u in b.sources), Fraction(0))
        cycles = sched.period / (sched.processing[b.name] + sched.delay[b.name])
        processed = min(inflow, b.take_max * cycles)
        for st in b.streams:
            out[(b.name, st.name)] = Fraction(0) if st.silent else st.sigma * processed
        if inflow.denominator != 1 or any(out[(b.name, st.name)].denominator != 1 for st in b.streams):
            return False
    return True


def _spout_flows(net: Network, rate: dict[str, Fraction], optimistic: bool | None) -> dict[tuple[str, str], Fraction]:
    """Each spout stream's flow for spout emission rates `rate`: the default stream carries the emissions,
    a declared one its ratio of them (σ itself when `optimistic` is None, else σ_hi / σ_lo)."""
    out: dict[tuple[str, str], Fraction] = {}
    for s in net.spouts:
        out[(s.name, "default")] = rate[s.name]
        for st in s.streams:
            lo, hi = sigma_bounds(st.sigma, s.burst, net.emission)
            ratio = st.sigma if optimistic is None else hi if optimistic else lo
            out[(s.name, st.name)] = Fraction(0) if st.silent else ratio * rate[s.name]
    return out


def _topological(net: Network) -> list | None:
    """The bolts in an order where every source comes first, or None if the network has a cycle."""
    placed: set[str] = {s.name for s in net.spouts}
    order, left = [], list(net.bolts)
    while left:
        ready = [b for b in left if all(u in placed for u in b.source_names)]
        if not ready:
            return None
        order += ready
        placed.update(b.name for b in ready)
        left = [b for b in left if b.name not in placed]
    return order


def _primes(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def _valuation(x: Fraction, p: int) -> int:
    """The exponent of p in x (negative when p divides the denominator)."""
    v, num, den = 0, x.numerator, x.denominator
    while num and num % p == 0:
        num, v = num // p, v + 1
    while den % p == 0:
        den, v = den // p, v - 1
    return v


def unaligned_schedule(net: Network, target: str) -> Schedule | None:
    """Every duration at its extreme: spouts and other bolts fastest, the target slowest.

    A bolt other than the target takes one grid step (the largest time unit dividing every
    constant) after an emit that leaves tuples; with max_idle_time 0 every bolt takes at the
    emit's own position (back-to-back)."""
    idle = net.max_idle
    step = time_grid(net)
    gap = {s.name: _window(net, s.period)[0] for s in net.spouts}
    processing: dict[str, Fraction] = {}
    delay: dict[str, Fraction] = {}
    for b in net.bolts:
        lo, hi = _window(net, b.alpha)
        processing[b.name], delay[b.name] = (hi, idle) if b.name == target else (lo, min(step, idle))
    return Schedule(None, gap, processing, delay, {b.name: b.name != target for b in net.bolts})


def expected_growth(net: Network, target: str, sched: Schedule, optimistic: bool) -> Fraction:
    """Fluid estimate of the target's queue growth per second under `sched`.

    Each bolt passes on min(inflow, C / cycle) times its long-run output ratio (σ_hi when
    `optimistic`, else σ_lo); around cycles the flows are iterated up from zero."""
    out = _spout_flows(net, {s.name: 1 / sched.gap[s.name] for s in net.spouts}, optimistic)
    capacity = {b.name: b.take_max / (sched.processing[b.name] + sched.delay[b.name]) for b in net.bolts}
    ratio: dict[tuple[str, str], Fraction] = {}
    for b in net.bolts:
        for st in b.streams:
            lo, hi = sigma_bounds(st.sigma, b.take_max, net.emission)
            ratio[(b.name, st.name)] = Fraction(0) if st.silent else (hi if optimistic else lo)
    inflow: dict[str, Fraction] = {}
    for _ in range(len(net.bolts) + 1):
        changed = False
        for b in net.bolts:
            total = sum((out.get(src, Fraction(0)) for src in b.sources), Fraction(0))
            inflow[b.name] = total
            for st in b.streams:
                new = ratio[(b.name, st.name)] * min(total, capacity[b.name])
                if out.get((b.name, st.name)) != new:
                    out[(b.name, st.name)], changed = new, True
        if not changed:
            break
    return inflow[target] - capacity[target]


def schedules(net: Network, target: str, cancelled: Callable[[], bool] = lambda: False) -> Iterator[Schedule]:
    """The schedules to simulate, in order: aligned ones whose fluid estimate lets the target grow,
    those whose streams carry whole tuples per period first, then those that grow even with σ_lo,
    then shorter periods; finally the unaligned one."""
    idle = net.max_idle
    tb = next(b for b in net.bolts if b.name == target)
    slowest = tb.alpha * (1 + net.tolerance) + idle
    multiple = whole_flow_multiples(net, target)
    ranked: list[tuple[bool, bool, int, Schedule]] = []
    best = 0
    for m in range(1, MAX_PERIODS + 1):
        if cancelled():
            return
        whole_counts = aligned_schedule(net, target, m * slowest, multiple)
        fastest = aligned_schedule(net, target, m * slowest)
        for sched in [whole_counts] + ([fastest] if fastest != whole_counts else []):
            if sched is None or expected_growth(net, target, sched, optimistic=True) <= 0:
                continue
            whole = whole_flows(net, sched)
            sure = expected_growth(net, target, sched, optimistic=False) > 0
            ranked.append((not whole, not sure, m, sched))
            best += whole and sure
        if best >= MAX_ALIGNED_TRIES:
            break
    ranked.sort(key=lambda r: r[:3])
    yield from (r[3] for r in ranked[:MAX_ALIGNED_TRIES])
    natural = unaligned_schedule(net, target)
    if natural is not None:
        yield natural


def build_lasso(net: Network, target: str, *, cannot_grow: frozenset[str] = frozenset(),
                cancelled: Callable[[], bool] = lambda: False, deadline: float | None = None,
                max_cells: int | None = None) -> Lasso:
    """Simulate the schedules of :func:`schedules` until one closes a lasso in which `target` grows.

    `cannot_grow`: bolts whose queues the rate check proves bounded (hashed exactly; the
    others are capped). `deadline`: a `time.monotonic()` instant. `max_cells`: positions × bolts
    simulated per schedule (default MAX_CELLS). The trace is not certified here."""
    max_cells = MAX_CELLS if max_cells is None else max_cells
    tried: list[str] = []
    positions = 0
    try:
        for sched in schedules(net, target, cancelled):
            tried.append(sched.describe())
            outcome = _simulate(net, target, sched, cannot_grow, cancelled, deadline, max_cells)
            if isinstance(outcome, Trace):
                return Lasso(outcome, f"{sched.describe()}: lasso of {outcome.k} positions",
                             positions + len(outcome.positions), tried)
            positions += outcome[1]
            tried[-1] += f": {outcome[0]}"
    except _Stop as stop:
        return Lasso(None, str(stop), positions, tried)
    if cancelled():
        return Lasso(None, "cancelled", positions, tried)
    if not tried:
        return Lasso(None, "no legal schedule lets the target grow", positions, tried)
    return Lasso(None, "no schedule closed a lasso in which the target grows: " + "; ".join(tried), positions, tried)


def _simulate(net: Network, target: str, sched: Schedule, cannot_grow: frozenset[str],
              cancelled: Callable[[], bool], deadline: float | None, max_cells: int) -> Trace | tuple[str, int]:
    """One deterministic run under `sched`; a lasso trace, or (why not, positions simulated)."""
    durations = [*sched.gap.values(), *sched.processing.values(), *sched.delay.values()]
    scale = math.lcm(*(d.denominator for d in durations))  # time unit 1/scale: every duration an integer
    spouts, bolts = net.spouts, net.bolts
    n_s, n_b = len(spouts), len(bolts)
    # one slot per output stream: each component's default stream first, then the declared ones
    index = {(s.name, "default"): i for i, s in enumerate(spouts)}
    index |= {(b.name, "default"): n_s + j for j, b in enumerate(bolts)}
    extra_spout: list[list[tuple[int, Fraction]]] = []  # per spout: (slot, ratio) of its carrying streams
    for sp in spouts:
        extra_spout.append([])
        for st in sp.streams:
            index[(sp.name, st.name)] = len(index)
            if not st.silent:
                extra_spout[-1].append((index[(sp.name, st.name)], st.sigma))
    extra_bolt: list[list[tuple[int, Fraction, bool]]] = []  # per bolt: (slot, σ, silent) of its other streams
    for b in bolts:
        extra_bolt.append([])
        for st in b.streams[1:]:
            index[(b.name, st.name)] = len(index)
            extra_bolt[-1].append((index[(b.name, st.name)], st.sigma, st.silent))
    extras = list(range(n_s + n_b, len(index)))
    xcarry: dict[int, Fraction | int] = dict.fromkeys(extras, 0)  # the declared streams' carries
    gap = [int(sched.gap[s.name] * scale) for s in spouts]
    proc = [int(sched.processing[b.name] * scale) for b in bolts]
    delay = [int(sched.delay[b.name] * scale) for b in bolts]
    eager = [sched.eager[b.name] for b in bolts]
    take_max = [b.take_max for b in bolts]
    sources = [[index[src] for src in b.sources] for b in bolts]
    silent = [b.streams[0].silent for b in bolts]  # the default stream's
    sigma = [b.sigma for b in bolts]
    rule = net.emission
    tgt = next(j for j, b in enumerate(bolts) if b.name == target)
    # queues that may grow are hashed capped: above `cap` the rules read them the same way
    free = [j for j, b in enumerate(bolts) if b.name not in cannot_grow or j == tgt]
    slot = {j: m for m, j in enumerate(free)}
    cap = [2 * c for c in take_max]

    next_emit = [0] * n_s
    last_emit: list[int | None] = [None] * n_s
    processing = [False] * n_b
    batch = [0] * n_b
    take_time = [0] * n_b
    carry: list[Fraction | int] = [0] * n_b
    queue = [net.init_queue] * n_b
    waiting_since: list[int | None] = [None] * n_b

    rows: list[tuple] = []  # per position: time, spout emissions, then per bolt its step
    seen: dict[tuple, list[int]] = {}
    queues_at: list[list[int]] = []  # free queues before each position
    bad_upto: list[list[int]] = [[0] * len(free)]  # per free bolt: loop-condition breaches before position i
    t = 0
    i = 0
    limit = max(16, max_cells // max(1, n_b))
    while True:
        if cancelled():
            raise _Stop("cancelled")
        if i % CHECK_EVERY == 0 and deadline is not None and time.monotonic() > deadline:
            raise _Stop("time limit reached")
        if i >= limit:
            return f"no repeated state within {limit} positions", i
        # ---- the state before position i, and the loop it may close
        key = None
        if i >= 1:
            state = [t - e if e is not None else -1 for e in last_emit]
            for j in range(n_b):  # one flat tuple: fewer objects to keep per position
                state += (batch[j] if processing[j] else -1, carry[j],
                          t - take_time[j] if processing[j] else -1,
                          t - waiting_since[j] if waiting_since[j] is not None else -1,
                          min(queue[j], cap[j]) if j in slot else queue[j])
            state += tuple(xcarry[x] for x in extras)  # type: ignore[misc]  # carries hash like the rest
            key = tuple(state)
        queues_at.append([queue[j] for j in free])
        loop_start = None
        if key is not None and key in seen:
            for start in reversed(seen[key][-MAX_CANDIDATES:]):
                verdict = _closes(start, i, slot[tgt], queues_at, bad_upto)
                if verdict == "periodic":
                    return "the run became periodic without the target growing", i
                if verdict == "lasso":
                    loop_start = start
                    break
        # ---- the actions at position i (time t)
        emitted = [0] * len(index)
        for s in range(n_s):
            if next_emit[s] == t:
                emitted[s] = 1
                last_emit[s] = t
                next_emit[s] = t + gap[s]
                for x, ratio in extra_spout[s]:
                    emitted[x], xcarry[x] = _emit(ratio, xcarry[x], 1, rule)
        emits = [False] * n_b
        for j in range(n_b):
            if processing[j] and take_time[j] + proc[j] == t:
                emits[j] = True
                if silent[j]:
                    out, keep = 0, 0
                else:
                    out, kept = emit_rule(sigma[j], Fraction(carry[j]), batch[j], rule)
                    keep = kept.numerator if kept.denominator == 1 else kept  # an int hashes faster
                emitted[n_s + j], carry[j] = out, keep
                for x, ratio, quiet in extra_bolt[j]:
                    if not quiet:
                        emitted[x], xcarry[x] = _emit(ratio, xcarry[x], batch[j], rule)
        step = []
        breaches = bad_upto[-1][:]
        for j in range(n_b):
            arrivals = sum(emitted[u] for u in sources[j])
            before = queue[j]
            was_waiting = waiting_since[j] is not None
            took = 0
            if emits[j]:  # the EMIT ends the phase first; a zero delay takes at once (back-to-back)
                processing[j], batch[j] = False, 0
            # due: the idle allowance is spent, or tuples just became available and the bolt takes at once
            due = (waiting_since[j] + delay[j] == t if was_waiting
                   else delay[j] == 0 or (eager[j] and not emits[j]))
            if not processing[j] and before + arrivals > 0 and due:
                took = min(take_max[j], before + arrivals)
            if took:
                processing[j], batch[j], take_time[j] = True, took, t
            queue[j] = before + arrivals - took
            waiting = not processing[j] and queue[j] > 0
            if not waiting:
                waiting_since[j] = None
            elif emits[j] or not was_waiting:
                waiting_since[j] = t
            step.append((before, arrivals, took > 0, batch[j], emits[j], emitted[n_s + j], carry[j], processing[j]))
            if j in slot and (before < 1 or (0 < took < take_max[j])):
                breaches[slot[j]] += 1
        bad_upto.append(breaches)
        rows.append((t, emitted[:n_s], step, {x: (emitted[x], xcarry[x]) for x in extras} if extras else None))
        if loop_start is not None:
            return _trace(net, rows, loop_start, scale, index, cancelled)
        if key is not None:
            seen.setdefault(key, []).append(i)
        # ---- the next position: the earliest pending event
        pending = list(next_emit)
        pending += [take_time[j] + proc[j] for j in range(n_b) if processing[j]]
        pending += [waiting_since[j] + delay[j] for j in range(n_b) if waiting_since[j] is not None]
        t = min(pending)
        i += 1


def _closes(start: int, end: int, tgt: int, queues_at: list[list[int]],
            bad_upto: list[list[int]]) -> str:
    """Whether equal hashed states before positions start and `end` close a lasso start..end−1.

    "lasso": the target's queue grew, no free queue shrank, and every free queue that grew
    stayed ≥ 1 with full batches at start..end−1 (so raising it changes no rule's outcome).
    "periodic": every queue is equal too, so the whole state repeats and the run is
    periodic without growth. "no": neither (look further)."""
    first, last = queues_at[start], queues_at[end]
    deltas = [b - a for a, b in zip(first, last, strict=True)]
    if all(d == 0 for d in deltas):
        return "periodic"
    if any(d < 0 for d in deltas) or deltas[tgt] <= 0:
        return "no"
    for m, d in enumerate(deltas):
        if d > 0 and bad_upto[end][m] != bad_upto[start][m]:
            return "no"
    return "lasso"


def _emit(sigma: Fraction, carry: Fraction | int, batch: int, rule: str) -> tuple[int, Fraction | int]:
    """One stream's EMIT (app/core/emission.py), a whole carry kept as an int (it hashes faster)."""
    out, kept = emit_rule(sigma, Fraction(carry), batch, rule)
    return out, kept.numerator if kept.denominator == 1 else kept


def _trace(net: Network, rows: list[tuple], loop_start: int, scale: int, index: dict[tuple[str, str], int],
           cancelled: Callable[[], bool] = lambda: False) -> Trace:
    """Positions 0..k+1 of the simulated run as a `stormbound-trace/1` lasso (k+1 repeats loop_start),
    validated a block of positions at a time (far cheaper than one model per step on a long
    trace, and a cancel is seen between blocks)."""
    exact = net.emission == "exact"
    names = [b.name for b in net.bolts]
    spout_names = [s.name for s in net.spouts]
    positions: list[TracePosition] = []
    block: list[dict] = []
    def carry_text(carry: Fraction | int) -> int | str:
        return format_carry(Fraction(carry)) if exact else int(carry)

    def by_stream(comp: Any, step: dict[str, Any], extra: dict[int, tuple[int, Any]], spout: bool) -> None:
        """Record a component's declared streams (emitted_by_stream, buffer_by_stream; `emitted` their sum)."""
        counts = {"default": step["emitted"]}
        carries = {} if spout else {"default": step["buffer"]}  # a spout's default stream is its emission
        for st in comp.streams if spout else comp.streams[1:]:
            e, c = extra[index[(comp.name, st.name)]]
            counts[st.name], carries[st.name] = e, carry_text(c)
        step.update(emitted=sum(counts.values()), emitted_by_stream=counts, buffer_by_stream=carries)

    for n, (t, spout_emitted, step, extra) in enumerate(rows, start=1):
        spouts = {name: {"emit": e > 0, "emitted": e} for name, e in zip(spout_names, spout_emitted, strict=True)}
        bolts = {}
        for name, (queue, arrivals, take, batch, emit, emitted, carry, busy) in zip(names, step, strict=True):
            bolts[name] = {"queue": queue, "arrivals": arrivals, "take": take, "batch": batch, "emit": emit,
                           "emitted": emitted, "buffer": carry_text(carry),
                           "phase": "processing" if busy else "idle"}
        if extra is not None:
            for sp in net.spouts:
                if sp.streams:
                    by_stream(sp, spouts[sp.name], extra, spout=True)
            for b in net.bolts:
                if len(b.streams) > 1:
                    by_stream(b, bolts[b.name], extra, spout=False)
        block.append({"time": format_time(Fraction(t, scale)), "spouts": spouts, "bolts": bolts})
        if len(block) == CHECK_EVERY or n == len(rows):
            if cancelled():
                raise _Stop("cancelled")
            positions += _POSITIONS.validate_python(block)
            block = []
    return Trace(topology=net.document(), k=len(rows) - 2, loop_start=loop_start, positions=positions,
                 kept=list(net.kept))


_POSITIONS = TypeAdapter(list[TracePosition])
