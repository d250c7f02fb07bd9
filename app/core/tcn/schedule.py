"""The schedules a simulated lasso runs under (docs/simulation.md, "The schedule"): every duration,
per component, of one legal adversarial run, aligned to a common period when possible.

A spout emits one tuple per gap at the fast end of its window; the target processes as slowly
as the rules allow; every other bolt as fast as they allow. With failures (docs/model.md
section 7) a bolt that may fail, other than the target, fails as early and as often as allowed:
at min_ttf, then min_ttf after each recovery, and stays down `reboot` (max_reboot_time, or
min_reboot_time in a second variant); an aligned period is then a multiple of every such
failure cycle; later schedules time the first failure between two emissions (`timed_failures`). The target
never fails (a failure empties its queue).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from app.core.formats.trace import format_time
from app.core.rates import sigma_bounds
from app.core.tcn.network import BoltParams, Network, only_failing, time_grid

MAX_PERIODS = 200  # multiples of the target's slowest cycle tried as the aligned period T
MAX_MULTIPLE = 64  # largest number of tuples per period a spout is rounded to for whole flows
MAX_ALIGNED_TRIES = 4  # aligned schedules simulated before the unaligned one
# rounds of the fluid estimate's replays (lost, replayed, lost again): enough for an overloaded failing bolt whose
# losses, replayed, raise its own inflow until paced replays reach one per fresh tuple (docs/simulation.md)
MAX_REPLAY_ROUNDS = 16
# probes (docs/simulation.md, "Probes"): aligned schedules of a failure plan the ranking left out, tried briefly before
# the unaligned ones: periods m × the failure cycles' LCM for m up to PROBE_PERIODS, each untimed and timed
PROBE_PERIODS = 2
PROBE_TRIES = 32  # probes per target at most
PROBE_CELLS = 40_000  # positions × bolts per probe at most (an aligned run repeats within a few periods or never)


@dataclass(frozen=True)
class Switch:
    """A bolt's change of pace in a threshold run: from `switch_at` on, once `after` (a bolt, if any) has made
    all its switches and emptied its queue, and once its own earlier switches are made, `bolt` takes this
    (processing, delay, eager) at its first emit, or at its first position idle with an empty queue, while up:
    no clock then reads the old durations. A bolt that switches never fails again."""

    bolt: str
    processing: Fraction
    delay: Fraction
    eager: bool
    after: str | None = None


@dataclass(frozen=True)
class Haste:
    """A bolt's pace while the failing bolt `watch` is down (docs/simulation.md, "Haste"): it takes at once
    (eager, after `delay`) and processes for `processing`, and goes back to its schedule's durations once `watch`
    is up; each change at its EMIT or while it is idle with an empty queue (`simulate_pace.Hasting`)."""

    watch: str
    processing: Fraction
    delay: Fraction


@dataclass(frozen=True)
class Schedule:
    """The durations one simulation uses, exact, per component name.

    `gap`: a spout's time between two emissions of one tuple; `processing`: a bolt's
    time from take to emit; `delay`: a bolt's time from tuples becoming available (an
    emit leaving some, or an arrival while it waits for none) to its take; `eager`:
    the bolt takes tuples arriving while it is idle with nothing waiting at once,
    instead of after `delay`. `period`: the aligned period T, None when not aligned.
    `fail`: per bolt that fails in this run, (up, down): it fails `up` after time 0 and after
    each recovery, and recovers `down` after each failure (empty: nothing fails). `switches`: the
    changes of pace of a threshold run from `switch_at` on (docs/boundedness.md, "The threshold run").
    `first_fail`: per bolt of `fail`, the time of its first failure when it is later than `up` (a *timed*
    failure: its failures then keep that phase in an aligned period, docs/simulation.md, "Timed failures").
    `fail_until`: per bolt of `fail`, a time after which it fails no more (a failure is never forced).
    `haste`: per bolt, its pace while a failing bolt is down (:class:`Haste`)."""

    period: Fraction | None
    gap: dict[str, Fraction]
    processing: dict[str, Fraction]
    delay: dict[str, Fraction]
    eager: dict[str, bool]
    fail: dict[str, tuple[Fraction, Fraction]] = field(default_factory=dict)
    switch_at: Fraction | None = None
    switches: tuple[Switch, ...] = ()
    first_fail: dict[str, Fraction] = field(default_factory=dict)
    fail_until: dict[str, Fraction] = field(default_factory=dict)
    cells: int | None = None  # a probe's own bound on positions × bolts (docs/simulation.md, "Probes")
    haste: dict[str, Haste] = field(default_factory=dict)

    def describe(self) -> str:
        text = ("unaligned schedule (every duration at its extreme)" if self.period is None
                else f"schedule aligned to a period of {format_time(self.period)} s")
        if self.fail:
            text += " with failures (" + ", ".join(
                f"{name} fails every {format_time(up + down)} s, down {format_time(down)} s"
                + (f", first at {format_time(self.first_fail[name])} s" if name in self.first_fail else "")
                for name, (up, down) in self.fail.items()) + ")"
        text += "".join(f", {name} fastest while {h.watch} is down" for name, h in self.haste.items())
        return text + (", briefly (a probe)" if self.cells is not None else "")


def _window(net: Network, alpha: Fraction) -> tuple[Fraction, Fraction]:
    return _window_of(net.tolerance, alpha)


@functools.lru_cache(maxsize=65536)
def _window_of(tau: Fraction, alpha: Fraction) -> tuple[Fraction, Fraction]:
    """α(1−τ), α(1+τ): remembered (the ranking builds every component's window for each of 200 periods)."""
    return alpha * (1 - tau), alpha * (1 + tau)


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


def aligned_schedule(net: Network, target: str, period: Fraction, multiple: dict[str, int] | None = None,
                     fail: dict[str, tuple[Fraction, Fraction]] | None = None,
                     slow: frozenset[str] = frozenset()) -> Schedule | None:
    """The schedule aligned to `period` T, or None when some component cannot fit T.

    Spout: n emissions per T, the largest multiple of `multiple[spout]` (default 1) with
    n ≤ T / (a(1−τ)), gap T/n (legal when ≤ a(1+τ)). Target, and the bolts of `slow`: the fewest
    cycles per T with a cycle no longer than α(1+τ) + max_idle. Any other bolt: the most cycles per T
    with a cycle longer than α(1−τ) (or, for a slow bolt, one cycle of a multiple of T). `fail`: the
    failure plan (:func:`failure_plans`), whose cycles the caller makes divide T."""
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
        if b.timer is not None:  # a duration window (docs/model.md 10.3): runs every T/n ≤ G, or a multiple of T
            split = _timer_split(period, lo, b.timer)
        elif b.name == target or b.name in slow:
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
        eager[b.name] = b.name != target and b.name not in slow and b.timer is None
    return Schedule(period, gap, processing, delay, eager, dict(fail or {}))


def _timer_split(period: Fraction, lo: Fraction, timer: Fraction) -> tuple[Fraction, Fraction] | None:
    """A duration window's (processing, delay) for an aligned period T (docs/model.md 10.3): it evaluates as fast
    as allowed and runs again `delay` after each run while tuples wait, delay ≥ processing (a run starts when the
    last one has ended) and ≤ G: the fewest runs per T, or one run per multiple of T; None when none fits."""
    runs = math.ceil(period / timer)
    delay = period / runs if period / runs >= lo else period * math.ceil(lo / period)
    return (lo, delay) if lo <= delay <= timer else None


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
        processed = inflow if b.timer is not None else min(inflow, b.take_max * cycles)  # a timer takes all
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


def _topological(net: Network) -> list[BoltParams] | None:
    """The bolts in an order where every source comes first, or None if the network has a cycle (Kahn's walk:
    linear in the network's size, so a chain of thousands of bolts is ordered at once)."""
    bolts = {b.name: b for b in net.bolts}
    waiting = {b.name: {u for u in b.source_names if u in bolts} for b in net.bolts}
    followers: dict[str, list[str]] = {}
    for name, sources in waiting.items():
        for u in sources:
            followers.setdefault(u, []).append(name)
    ready = [b.name for b in net.bolts if not waiting[b.name]]
    for name in ready:  # the list grows while it is walked: first in, first out
        for f in followers.get(name, []):
            waiting[f].discard(name)
            if not waiting[f]:
                ready.append(f)
    return [bolts[name] for name in ready] if len(ready) == len(bolts) else None


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


def unaligned_schedule(net: Network, target: str, fail: dict[str, tuple[Fraction, Fraction]] | None = None,
                       slow: frozenset[str] = frozenset()) -> Schedule | None:
    """Every duration at its extreme: spouts and other bolts fastest, the target and the bolts of `slow`
    slowest.

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
        slowest = b.name == target or b.name in slow
        processing[b.name], delay[b.name] = (hi, idle) if slowest else (lo, min(step, idle))
        if b.timer is not None:  # a duration window's runs at most G apart (docs/model.md 10.3)
            processing[b.name], delay[b.name] = lo, b.timer
    return Schedule(None, gap, processing, delay,
                    {b.name: b.name != target and b.name not in slow and b.timer is None for b in net.bolts},
                    dict(fail or {}))


def failure_plans(net: Network, target: str) -> list[dict[str, tuple[Fraction, Fraction]]]:
    """The failure plans to try (docs/model.md section 7), each a set of bolts that fail as early
    and as often as allowed (at min_ttf after time 0 and after each recovery; a min_ttf of 0 is
    one grid step, since a failure and a recovery are never at one position) and stay down
    max_reboot_time, then, if different, min_reboot_time. First only the bolts off the target's
    upstream (their losses come back as extra replays; a failure upstream also starves the target
    while it lasts), then every bolt that may fail but the target (a failure empties its queue).
    Empty when nothing but the target may fail."""
    fm = net.failures
    if fm is None:
        return []
    step = time_grid(net)
    up = {name: ttf if ttf > 0 else step for name, ttf in fm.min_ttf.items() if name != target}
    upstream = _upstream(net, target)
    downs = [fm.max_reboot] + ([fm.min_reboot] if fm.min_reboot != fm.max_reboot else [])
    plans: list[dict[str, tuple[Fraction, Fraction]]] = []
    for chosen in ({n: u for n, u in up.items() if n not in upstream}, up):
        for down in downs:
            plan = {name: (u, down) for name, u in chosen.items()}
            if plan and plan not in plans:
                plans.append(plan)
    return plans


def _upstream(net: Network, target: str) -> set[str]:
    """The components `target` receives from, directly or not."""
    feeds = {b.name: set(b.source_names) for b in net.bolts}
    upstream: set[str] = set()
    todo = [target]
    while todo:
        for src in feeds.get(todo.pop(), set()):
            if src not in upstream:
                upstream.add(src)
                todo.append(src)
    return upstream


def _lcm(values: list[Fraction]) -> Fraction:
    """The least common multiple of positive fractions: lcm of numerators over gcd of denominators."""
    return Fraction(math.lcm(*(v.numerator for v in values)), math.gcd(*(v.denominator for v in values)))


def _replay_rates(net: Network, sched: Schedule, rate: dict[str, Any], inflow: dict[str, Any],
                  capacity: dict[str, Any], number: Callable[[Fraction], Any], bursts: bool = False) -> dict[str, Any]:
    """Fluid estimate of each spout's extra emissions per second from replays under `sched`'s
    failures, given each bolt's `inflow` and `capacity`: a failing bolt loses what arrives while it is
    down, a share down/(up + down) of its inflow, and, when its inflow exceeds its capacity, the queue
    that piles up while it is up, (inflow − capacity)·up per cycle; split evenly among the spouts of its
    impact table; paced replays add at most one per fresh tuple, "none" nothing. `bursts`: each failure also loses
    a whole batch in progress and one more spout gap's arrivals (a failure timed between two emissions)."""
    fm = net.failures
    zero = number(Fraction(0))
    extra = dict.fromkeys(rate, zero)
    if fm is None or fm.replay == "none":
        return extra
    gap = number(max(sched.gap.values())) if bursts and sched.gap else zero
    takes = {b.name: number(Fraction(b.take_max)) for b in net.bolts} if bursts else {}
    for name, (fraction_up, fraction_down) in sched.fail.items():
        up, down = number(fraction_up), number(fraction_down)
        reach = [s for s in rate if s in fm.impact.get(name, {})]
        got = inflow.get(name, zero)
        piled = max(zero, got - capacity[name]) * up if name in capacity else zero
        piled += takes.get(name, zero) + got * gap
        for s in reach:
            extra[s] += (got * down + piled) / (up + down) / len(reach)
    return {s: min(v, rate[s]) if fm.replay == "paced" else v for s, v in extra.items()}


def expected_growth(net: Network, target: str, sched: Schedule, optimistic: bool,
                    number: Callable[[Fraction], Any] = float, bursts: bool = False) -> Any:
    """Fluid estimate of the target's queue growth per second under `sched`.

    Each bolt passes on min(inflow, C / cycle) times its long-run output ratio (σ_hi when
    `optimistic`, else σ_lo); around cycles the flows are iterated up from zero. With failures
    the replays of what the failing bolts lose are added to the spouts' rates, round after round until they
    settle or MAX_REPLAY_ROUNDS (replays lost again are replayed again, and an overloaded failing bolt's losses,
    replayed, raise its own inflow). The estimate only orders and filters the schedules to
    simulate (a lasso found under any schedule is certified exactly), so it is computed in `number`:
    floats by default (exact fractions cost 8 of 12.5 s at 500 components), `Fraction` in the tests
    that compare the two (docs/simulation.md, "Ranking in floats"). `bursts`: each failure loses a batch and a
    spout gap's arrivals more (:func:`_replay_rates`), the estimate that orders the probes."""
    zero, one = number(Fraction(0)), number(Fraction(1))
    fresh = {s.name: one / number(sched.gap[s.name]) for s in net.spouts}
    capacity = {b.name: b.take_max * one / (number(sched.processing[b.name]) + number(sched.delay[b.name]))
                if b.timer is None else number(Fraction(1 << 62)) for b in net.bolts}  # a timer takes all (10.3)
    ratio: dict[tuple[str, str], Any] = {}
    for b in net.bolts:
        for st in b.streams:
            lo, hi = sigma_bounds(st.sigma, b.take_max, net.emission)
            ratio[(b.name, st.name)] = zero if st.silent else number(hi if optimistic else lo)
    replays = dict.fromkeys(fresh, zero)
    inflow: dict[str, Any] = {}
    # sources first when there is no cycle: one round reaches the fixpoint (any order reaches the same one)
    order = _topological(net) or net.bolts
    for _ in range(MAX_REPLAY_ROUNDS if sched.fail else 1):
        out: dict[tuple[str, str], Any] = _spout_flows(net, {s: r + replays[s] for s, r in fresh.items()}, optimistic)
        for _ in range(len(net.bolts) + 1):
            changed = False
            for b in order:
                total = sum((out.get(src, zero) for src in b.sources), zero)
                inflow[b.name] = total
                # the target of a growing lasso takes full batches back to back: it passes on its capacity
                passed = capacity[b.name] if b.name == target else min(total, capacity[b.name])
                for st in b.streams:
                    new = ratio[(b.name, st.name)] * passed
                    if out.get((b.name, st.name)) != new:
                        out[(b.name, st.name)], changed = new, True
            if not changed:
                break
        if not sched.fail:
            break
        more = _replay_rates(net, sched, fresh, inflow, capacity, number, bursts)
        if more == replays:  # the flows already carry these replays: a fixpoint
            break
        replays = more
    return inflow[target] - capacity[target]


def schedules(net: Network, target: str, cancelled: Callable[[], bool] = lambda: False,
              number: Callable[[Fraction], Any] = float, haste: Iterable[Schedule] = ()) -> Iterator[Schedule]:
    """The schedules to simulate, in order (:func:`_schedules_for` for each failure plan). With
    failures, the runs in which bolts fail come first, unless some failure-free schedule surely lets the
    target grow (then that simpler lasso is tried first, on the cone without failures). Each failure plan is played
    twice when its bolts are all off the target's upstream: as fast as allowed, then as slowly as allowed
    (their queues pile up, so each failure loses, and the spouts replay, more); every
    aligned schedule of the plans comes before their unaligned ones, which rarely repeat; the timed ones
    (:func:`timed_failures`) follow the untimed aligned ones, and the unaligned ones, untimed and timed, run
    in the order of `_natural_period`. `haste`: the haste schedules (`schedule_haste.haste_schedules`), first among
    the runs with failures (before the probes: within the first pass's few seconds on a loaded machine)."""
    plans = failure_plans(net, target)
    if not plans:
        yield from _schedules_for(net, target, None, frozenset(), cancelled, number)
        return
    # a run in which nothing fails runs on the cone without failures (`only_failing`, as the simulation plays it):
    # its schedules are aligned to its own components, not to bolts kept only because their losses are replayed
    unfailing = only_failing(net, ())
    free = list(_schedules_for(unfailing, target, None, frozenset(), cancelled, number))
    sure = any(expected_growth(unfailing, target, s, False, number) > 0 for s in free)
    if sure:
        yield from free
    yield from haste
    unaligned: list[Schedule] = []
    timed: list[Schedule] = []  # the first aligned and the unaligned schedule of each plan, timed
    aligned: list[Schedule] = []
    variants: list[tuple[dict[str, tuple[Fraction, Fraction]], frozenset[str]]] = []
    upstream = _upstream(net, target)
    for plan in plans:  # slow failing bolts only off the target's upstream: above it they would starve it
        slows: list[frozenset[str]] = [frozenset()] + ([frozenset(plan)] if not upstream & set(plan) else [])
        variants += [(plan, slow) for slow in slows]
    # every aligned schedule first briefly (its probe: an aligned run repeats within a few periods or not soon), the
    # ranked ones, the timed ones and those the ranking left out, shortest periods first; then the ranked and timed
    # ones in full, in their order before probes (build_lasso skips one whose probe ended below its bound)
    for plan, slow in variants:
        first_aligned = True
        for sched in _schedules_for(net, target, plan, slow, cancelled, number):
            if sched.period is None:
                unaligned += [sched] if sched not in unaligned else []
                continue
            aligned.append(sched)
            timed += timed_failures(sched) if first_aligned else []
            first_aligned = False
    yield from probes(net, target, variants, aligned + timed, number)
    yield from aligned
    yield from timed
    # then the unaligned ones, untimed and timed (also with each bolt of a larger plan failing alone), those
    # whose free-running components repeat soonest first: a run can close no loop before its cycles meet
    later = list(unaligned)
    for sched in unaligned:
        later += timed_failures(sched)
        if len(sched.fail) > 1:
            alone = (unaligned_schedule(net, target, {name: pair}, frozenset([name][sched.eager[name]:]))
                     for name, pair in sched.fail.items())  # a failing bolt not eager is slow in `sched`
            later += [t for one in alone if one is not None for t in timed_failures(one) if t not in later]
    yield from sorted(later, key=_natural_period)
    if not sure:
        yield from free


def probes(net: Network, target: str, variants: list[tuple[dict[str, tuple[Fraction, Fraction]], frozenset[str]]],
           ranked: list[Schedule], number: Callable[[Fraction], Any] = float) -> list[Schedule]:
    """Every aligned schedule briefly (docs/simulation.md, "Probes"), each simulated up to :func:`probe_cells`: the
    `ranked` ones (timed or not) and, at most PROBE_TRIES more, those of each failure plan and variant for periods
    m × the LCM of its failure cycles, m up to PROBE_PERIODS, with whole-flow and with fastest spout counts, each
    untimed and timed, that `ranked` does not hold. Shortest multiple m first, then those whose estimate with bursts
    (:func:`expected_growth`: a failure also loses its batch in progress and a spout gap's arrivals) lets the target
    grow, then the ranked ones first. The fluid estimate misses what a failure loses at once, which is most of
    what a bolt failing seldom loses: the aligned run of such a plan repeats within a few periods, and closes a
    lasso when the losses suffice."""
    found: list[tuple[Fraction, bool, int, Schedule]] = []

    def add(sched: Schedule, grows: bool) -> None:
        cycles = _lcm([up + down for up, down in sched.fail.values()]) if sched.fail else sched.period
        assert sched.period is not None and cycles is not None
        found.append((sched.period / cycles, not grows, len(found), sched))

    for sched in ranked:
        add(sched, expected_growth(net, target, sched, True, number, bursts=True) > 0)
    more = 0
    for m in range(1, PROBE_PERIODS + 1):
        for plan, slow in variants:
            period = m * _lcm([up + down for up, down in plan.values()])
            counts = [whole_flow_multiples(net, target), None]
            aligned = [a for a in (aligned_schedule(net, target, period, c, plan, slow) for c in counts) if a]
            for sched in [a for n, a in enumerate(aligned) if a not in aligned[:n]]:
                grows = expected_growth(net, target, sched, True, number, bursts=True) > 0
                for one in [sched] + timed_failures(sched):
                    if more < PROBE_TRIES and all(one != f[3] for f in found):
                        add(one, grows)
                        more += 1
    found.sort(key=lambda f: f[:3])
    return [replace(f[3], cells=probe_cells(net, f[3])) for f in found]


def probe_cells(net: Network, sched: Schedule) -> int:
    """A probe's bound on positions × bolts: its events (each spout's emissions, each bolt's takes and emits, each
    failure and recovery) up to its last first failure and two periods more (its first pass repeats in the second),
    at most PROBE_CELLS."""
    assert sched.period is not None
    per_second = sum((1 / g for g in sched.gap.values()), Fraction(0))
    per_second += sum(2 / (sched.processing[b] + sched.delay[b]) for b in sched.processing)
    per_second += sum(2 / (up + down) for up, down in sched.fail.values())
    start = max([up for up, _ in sched.fail.values()] + list(sched.first_fail.values()) + [Fraction(0)])
    return min(PROBE_CELLS, math.ceil((start + 2 * sched.period) * per_second) * max(1, len(net.bolts)))


def _natural_period(sched: Schedule) -> Fraction:
    """The least common multiple of an unaligned schedule's spout gaps, bolt cycles and failure cycles: the
    run's free-running components meet again no sooner (an order only, docs/simulation.md, "Timed failures")."""
    cycles = [*sched.gap.values(), *(sched.processing[b] + sched.delay[b] for b in sched.processing),
              *(up + down for up, down in sched.fail.values())]
    return _lcm([c for c in cycles if c > 0]) if cycles else Fraction(0)


TIMED_PHASES = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))  # of the shortest spout gap


def timed_failures(sched: Schedule) -> list[Schedule]:
    """`sched` with its failures timed (docs/simulation.md, "Timed failures"): each failing bolt fails first
    at up + δ instead of up, δ a share (TIMED_PHASES) of the shortest spout gap, then `up` after each
    recovery as before. A failure at an emission finds a bolt that takes at once idle (its batch done, the
    arrival its only loss); between two emissions it finds the batch in progress, and while it is down the
    emissions, and under at-once replays the backlog they carry, are lost again: the timing sets how much
    each failure loses. When the failure cycle is a multiple of the gap, every failure keeps the phase."""
    if not sched.fail or not sched.gap:
        return []
    gap = min(sched.gap.values())
    return [replace(sched, first_fail={name: up + share * gap for name, (up, _) in sched.fail.items()})
            for share in TIMED_PHASES]


def _schedules_for(net: Network, target: str, fail: dict[str, tuple[Fraction, Fraction]] | None,
                   slow: frozenset[str], cancelled: Callable[[], bool],
                   number: Callable[[Fraction], Any]) -> Iterator[Schedule]:
    """The schedules for one failure plan (None: no failure) with the bolts of `slow` at their slowest, in
    order: aligned ones whose fluid estimate lets the target grow, those whose streams carry whole tuples
    per period first, then those that grow even with σ_lo, then shorter periods; finally the unaligned
    one. With a failure plan an aligned period is a multiple of every failure cycle (up + down)."""
    idle = net.max_idle
    tb = next(b for b in net.bolts if b.name == target)
    slowest = tb.alpha * (1 + net.tolerance) + idle
    base = _lcm([up + down for up, down in fail.values()]) if fail else slowest
    multiple = whole_flow_multiples(net, target)
    ranked: list[tuple[bool, bool, int, Schedule]] = []
    best = 0
    for m in range(1, MAX_PERIODS + 1):
        if cancelled():
            return
        whole_counts = aligned_schedule(net, target, m * base, multiple, fail, slow)
        fastest = aligned_schedule(net, target, m * base, None, fail, slow)
        for sched in [whole_counts] + ([fastest] if fastest != whole_counts else []):
            if sched is None or expected_growth(net, target, sched, True, number) <= 0:
                continue
            whole = whole_flows(net, sched)
            sure = expected_growth(net, target, sched, False, number) > 0
            ranked.append((not whole, not sure, m, sched))
            best += whole and sure
        if best >= MAX_ALIGNED_TRIES:
            break
    ranked.sort(key=lambda r: r[:3])
    yield from (r[3] for r in ranked[:MAX_ALIGNED_TRIES])
    natural = unaligned_schedule(net, target, fail, slow)
    if natural is not None:
        yield natural
