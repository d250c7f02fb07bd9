"""The certifier's replay (app/core/tcn/check/certify.py): every rule of docs/model.md sections 2, 4 and 7
checked position by position along a list of steps, in exact integer ticks.

`replay` walks the positions and calls one function per rule group, in the page's order: the record of a
position (section 4), the spouts (2.1, with their declared streams, 2.3, and their replays and backlog,
7.3), then the bolts (2.2 and 2.3: arrivals, queue, idle rule, EMIT and TAKE, calling the failure rules
of 7.2 at a bolt that fails or is failed). Each group's function is made once per replay by a `_..._rules`
function that binds what it reads (a long lasso runs them once per position: no attribute is looked up
per position). Like the rest of the certifier it shares no code with the encoder or the simulation.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.errors import Cancelled
from app.core.formats.trace import TracePosition, parse_carry
from app.core.tcn.check.certify_deaths import DeathState, bolt_death_problem, bolt_share, worker_rules
from app.core.tcn.check.certify_failures import Failing, FailureRules, failed_position, split_problem
from app.core.tcn.check.certify_rules import Rules
from app.core.tcn.check.certify_waits import wait_rules

Emitted = dict[tuple[str, str], int]  # what each output stream (component, stream) carries at a position
Report = Callable[[int, str, str], None]  # (position, who, problem)


@dataclass
class Step:
    """One position as the replay reads it (a copy, so unrolling can shift it)."""

    time: Fraction
    spouts: dict[str, dict[str, Any]]
    bolts: dict[str, dict[str, Any]]
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)  # section 9.5's records, where set


@dataclass
class Before:
    """What the replay knows just before a position's actions (for the loop comparison).

    Clocks are counted in ticks of 1/`unit` s (see `replay`); certify.py's `_clocks` turns them into seconds."""

    unit: int
    spout_last_size: dict[str, int]
    spout_clock: dict[str, int]
    bolt_processing: dict[str, bool]
    bolt_batch: dict[str, int]
    bolt_buffer: dict[str, Fraction | int]
    bolt_take_clock: dict[str, int | None]
    bolt_waiting_clock: dict[str, int | None]
    stream_buffer: dict[tuple[str, str], Fraction | int]  # the declared streams' carries
    # section 7.4: up/failed, the time since the last recovery (while up and below
    # min_ttf) and since the failure (while failed), in ticks
    bolt_failed: dict[str, bool] = field(default_factory=dict)
    bolt_up_clock: dict[str, int | None] = field(default_factory=dict)
    bolt_down_clock: dict[str, int | None] = field(default_factory=dict)
    # section 9.5: per dying worker, down and the replays held back; its readable clocks, in ticks
    workers: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    worker_clocks: dict[str, int | None] = field(default_factory=dict)
    state: _State | None = None  # the replay's whole state here, to resume from (see `replay`)


@dataclass
class _State:
    """All the replay carries from one position to the next, times in ticks of 1/`unit` s.

    A replay resumed from a copy taken before position i of one list of steps goes on exactly as
    the replay of that list would: the rules are checked position by position and the state after
    a position depends only on the state before it and the position's record (never on `timing`
    or on the problems found)."""

    unit: int
    previous: int | None  # the time of the position before
    last_emit: dict[str, tuple[int, int]]  # per spout: (time, size) of its last emission
    processing: dict[str, bool]
    batch: dict[str, int]
    buffer: dict[str, Fraction | int]  # an int whenever whole
    take_time: dict[str, int]
    waiting_since: dict[str, int | None]
    expected_queue: dict[str, int]
    stream_buffer: dict[tuple[str, str], Fraction | int]  # the declared streams' carries
    failed: dict[str, bool]
    up_since: dict[str, int]
    down_since: dict[str, int]
    backlog: dict[str, int]  # R_s before the next position's actions
    # section 11: per join and branch, the parts whose message is not complete, and how many positions so far
    # ended with that branch's cache empty (its branch set the min: a growing cache never does in a loop)
    cache: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    emptied: dict[tuple[str, str, str], int] = field(default_factory=dict)
    deaths: DeathState | None = None  # section 9.5
    workers_now: dict[str, dict[str, Any]] = field(default_factory=dict)  # this position's worker records

    def copy(self) -> _State:
        state = copy.copy(self)
        for f in ("last_emit", "processing", "batch", "buffer", "take_time", "waiting_since", "expected_queue",
                  "stream_buffer", "failed", "up_since", "down_since", "backlog"):
            setattr(state, f, dict(getattr(self, f)))
        state.cache, state.emptied = {j: dict(parts) for j, parts in self.cache.items()}, dict(self.emptied)
        state.deaths = self.deaths.copy() if self.deaths is not None else None
        return state

    @staticmethod
    def initial(rules: Rules, unit: int) -> _State:
        """The state before position 0: every bolt idle, up and empty but for its initial queue."""
        bolts = rules.alpha
        return _State(
            unit, None, {}, processing={b: False for b in bolts}, batch={b: 0 for b in bolts},
            buffer={b: 0 for b in bolts}, take_time={}, waiting_since={b: None for b in bolts},
            expected_queue={b: rules.init for b in bolts},
            stream_buffer={(c, st): 0 for c, outs in rules.streams.items() for st in outs if st != "default"},
            failed={b: False for b in bolts}, up_since={b: 0 for b in bolts}, down_since={},
            backlog={s: 0 for s in rules.period},
            cache={j: dict.fromkeys(branches, 0) for j, branches in rules.joins.items()},
            emptied={(j, *b): 0 for j, branches in rules.joins.items() for b in branches},
            deaths=DeathState.initial(rules.deaths) if rules.deaths is not None else None)


def step_of(p: TracePosition) -> Step:
    """A position as the replay reads it: a model's fields as a read-only dict (no copy: a long trace has a step
    per bolt and position); an exact "p/q" carry becomes a Fraction in a copy."""
    bolts = {n: b.__dict__ if type(b.buffer) is int else {**b.__dict__, "buffer": b.exact_buffer}
             for n, b in p.bolts.items()}
    workers = {n: w.__dict__ for n, w in p.workers.items()} if p.workers else {}
    return Step(p.exact_time, {n: s.__dict__ for n, s in p.spouts.items()}, bolts, workers)


def replay(rules: Rules, steps: Iterable[Step], problems: list[str], label: str = "position",
           timing: bool = True, record: set[int] | None = None,
           cancelled: Callable[[], bool] = lambda: False,
           resume: tuple[int, _State] | None = None, denominator: int | None = None) -> list[Before | None]:
    """Check every rule of section 2 along `steps`; return the state before each position
    (only at the positions in `record` when given, None elsewhere: a long trace's states are large).

    timing=False skips the rules that compare times (for an unrolled loop whose clocks are
    only region-equivalent: its times are not a concrete run, its counters must still be).
    Times are compared as whole ticks of 1/unit s, unit the LCM of the denominators of every
    time stamp and constant (exact, and far faster than fractions on long traces).

    `steps` is a list, or any iterable (a compressed trace's positions, expanded as they are read: never
    held whole) together with `denominator`, a multiple of the denominator of every time it gives.

    `resume` = (i, state): start at position i from `state`, the `Before.state` a replay of
    steps[:i] recorded there (the same list up to i, so the same unit); positions before i are
    neither checked again nor recorded (None in the result). A list is read from its position i on;
    an iterable given with `denominator` gives the positions from i on."""
    if denominator is None:
        assert isinstance(steps, list), "an iterable of steps comes with its times' denominator"
        denominator = math.lcm(*(s.time.denominator for s in steps))
    unit = math.lcm(*(Fraction(c).denominator for c in rules.constants()), denominator)
    if resume is None:
        start, state = 0, _State.initial(rules, unit)
    else:
        start, state = resume[0], resume[1].copy()
        if state.unit != unit:  # the same steps up to `start` give the same unit: never, unless misused
            raise ValueError(f"resumed with ticks of 1/{state.unit} s, the steps need 1/{unit} s")
        if isinstance(steps, list):
            steps = itertools.islice(steps, start, None)
    cx = _context(rules, state, problems, label, timing)
    ticks, bad, late = cx.ticks, cx.bad, cx.late
    records, spouts, bolts = _record_rules(cx), _spout_rules(cx), _bolt_rules(cx)
    dl, deaths = cx.rules.deaths, state.deaths
    workers = None if dl is None or deaths is None else worker_rules(
        dl, deaths, state.backlog, state.last_emit, ticks, cx.sec, bad, late)
    befores: list[Before | None] = [None] * start
    previous = state.previous  # rebound at each position, so written back at each record
    spout_names, bolt_names = set(rules.period), set(rules.alpha)
    for i, step in enumerate(steps, start):
        if i % 32 == 0 and cancelled():
            raise Cancelled
        t = ticks(step.time)
        if step.spouts.keys() != spout_names or step.bolts.keys() != bolt_names:
            bad(i, "trace", "the components do not match the topology")
            return befores
        if record is not None and i not in record:
            befores.append(None)
        else:
            state.previous = previous
            befores.append(_before(cx, t, keep_state=record is not None))
        emitted = records(i, step)
        if emitted is None:
            return befores
        # ---- section 2 (runs): t₀ = 0 < t₁ < t₂ < … ----
        if i == 0 and t != 0:
            late(i, "time", f"the run starts at {step.time}, not 0")
        if previous is not None and t <= previous:
            late(i, "time", f"time {step.time} does not increase (previous {cx.sec(previous)})")
        previous = t
        spouts(i, t, step, emitted)
        if workers is not None:  # section 9.5: the batches in progress before the bolts act, the records they read
            batch_before = {b: state.batch[b] if state.processing[b] else 0 for b in bolt_names}
            state.workers_now = step.workers
        elif step.workers:
            bad(i, "trace", "records worker deaths, but no worker may die in a trace of this topology (an explicit "
                "storm.assignment and storm.worker_min_ttf, docs/model.md section 9.5)")
        bolts(i, t, step, emitted)
        if workers is not None:
            workers(i, t, step.workers, step.bolts, batch_before)
    return befores


@dataclass(frozen=True)
class _Context:
    """What the rule groups of one replay read: the rules, the state they update in place, the constants
    in ticks of 1/`unit` s, and where problems go (`late`: a rule that compares times, skipped without
    timing)."""

    rules: Rules
    state: _State
    unit: int
    idle: int
    period: dict[str, int]
    jitter: dict[str, int]
    window: dict[str, tuple[int, int]]  # α(1 − τ), α(1 + τ)
    ttf: dict[str, int]  # section 7: the bolts that may fail, min_ttf
    reboot: tuple[int, int]
    with_streams: set[str]  # the components with declared streams
    ticks: Callable[[Fraction], int]
    sec: Callable[[int], Fraction]
    bad: Report
    late: Report


def _context(rules: Rules, state: _State, problems: list[str], label: str, timing: bool) -> _Context:
    unit = state.unit

    def ticks(x: Fraction) -> int:
        return x.numerator * (unit // x.denominator)

    def sec(x: int) -> Fraction:
        return Fraction(x, unit)

    def bad(i: int, who: str, text: str) -> None:
        problems.append(f"{label} {i}: {who}: {text}")

    def late(i: int, who: str, text: str) -> None:
        if timing:
            bad(i, who, text)

    fl = rules.fail
    return _Context(
        rules, state, unit, ticks(rules.idle), {n: ticks(a) for n, a in rules.period.items()},
        {n: ticks(a * rules.tau) for n, a in rules.period.items()},
        {n: (ticks(a * (1 - rules.tau)), ticks(a * (1 + rules.tau))) for n, a in rules.alpha.items()},
        {b: ticks(v) for b, v in fl.min_ttf.items()} if fl else {},
        (ticks(fl.min_reboot), ticks(fl.max_reboot)) if fl else (0, 0),
        {name for name, declared in rules.declared.items() if declared}, ticks, sec, bad, late)


def _before(cx: _Context, t: int, keep_state: bool) -> Before:
    """The state before the position at time t, its clocks counted up to t (with a copy of the whole
    state to resume from when `keep_state`)."""
    state, ttf, alpha = cx.state, cx.ttf, cx.rules.alpha
    last_emit, processing, take_time, failed = state.last_emit, state.processing, state.take_time, state.failed
    up_since, down_since = state.up_since, state.down_since
    return Before(
        unit=cx.unit,
        spout_last_size={s: last_emit[s][1] for s in last_emit},
        spout_clock={s: t - last_emit[s][0] for s in last_emit},
        bolt_processing=dict(processing), bolt_batch=dict(state.batch), bolt_buffer=dict(state.buffer),
        bolt_take_clock={b: (t - take_time[b]) if processing[b] else None for b in processing},
        bolt_waiting_clock={b: (t - w) if w is not None else None for b, w in state.waiting_since.items()},
        stream_buffer=dict(state.stream_buffer),
        bolt_failed=dict(failed),
        bolt_up_clock={b: (t - up_since[b]) if b in ttf and not failed[b] and t - up_since[b] < ttf[b]
                       else None for b in alpha},
        bolt_down_clock={b: (t - down_since[b]) if failed[b] else None for b in alpha},
        workers=state.deaths.discrete() if state.deaths is not None else {},
        worker_clocks=state.deaths.clocks(t, cx.rules.deaths, cx.ticks) if state.deaths is not None
        and cx.rules.deaths is not None else {},
        state=state.copy() if keep_state else None)


def _record_rules(cx: _Context) -> Callable[[int, Step], Emitted | None]:
    """Section 4 (traces): what each output stream carries at a position (emitted_by_stream for a component
    with streams); None when a component's streams are not listed (the replay stops there)."""
    bad, streams, with_streams, spout_names = cx.bad, cx.rules.streams, cx.with_streams, set(cx.rules.period)
    default_key = {name: (name, "default") for name in cx.rules.declared}  # made once, not per position

    def records(i: int, step: Step) -> Emitted | None:
        emitted: Emitted = {default_key[name]: sx["emitted"] for name, sx in step.spouts.items()}
        emitted.update({default_key[name]: bx["emitted"] for name, bx in step.bolts.items()})
        for name, sx in itertools.chain(step.spouts.items(), step.bolts.items()):
            by_stream = sx["emitted_by_stream"]
            if name not in with_streams:
                if by_stream is not None or sx["buffer_by_stream"] is not None:
                    bad(i, name, "records per-stream counts but declares no stream")
                continue
            listed = {"default", *streams[name]}
            if by_stream is None or set(by_stream) != listed or set(sx["buffer_by_stream"] or {}) != (
                    listed - {"default"} if name in spout_names else listed):
                bad(i, name, f"emitted_by_stream / buffer_by_stream must list its streams "
                    f"({', '.join(sorted(listed))})")
                return None
            emitted.update(((name, st), n) for st, n in by_stream.items())
            if sx["emitted"] != sum(by_stream.values()):
                bad(i, name, f"emitted {sx['emitted']} is not the sum of emitted_by_stream")
        return emitted

    return records


def _spout_rules(cx: _Context) -> Callable[[int, int, Step, Emitted], None]:
    """Section 2.1 (spouts): emit at 0, then each emission n·a ± τ·a after the previous one, n the fresh
    tuples (n − replayed: the replays and the backlog are section 7.3's, `_replay_rules`); a declared stream
    applies the emit rule of 2.3 to the emissions, with its own carry."""
    bad, late, sec, rules, with_streams = cx.bad, cx.late, cx.sec, cx.rules, cx.with_streams
    burst, period, jitter, last_emit = rules.burst, cx.period, cx.jitter, cx.state.last_emit
    stream_buffer, replays, dl, deaths = cx.state.stream_buffer, _replay_rules(cx), cx.rules.deaths, cx.state.deaths
    default_key = {name: (name, "default") for name in rules.period}  # made once, not per position

    def spouts(i: int, t: int, step: Step, emitted: Emitted) -> None:
        for name, sp in step.spouts.items():
            n = emitted[default_key[name]]  # the emission itself; declared streams follow it below
            if name in with_streams:
                for st, (_, silent) in rules.streams[name].items():
                    carry = parse_carry(sp["buffer_by_stream"][st])
                    if n > 0:
                        out, keep = rules.emit_fast(name, stream_buffer[(name, st)] + n, st)
                    else:
                        out, keep = 0, stream_buffer[(name, st)]
                    if emitted[(name, st)] != out or carry != keep:
                        bad(i, f"spout {name}", f"stream {st}: emits {emitted[(name, st)]} keeping {carry}, but "
                            f"the rule gives {out} keeping {keep}" + (" (nobody receives it)" if silent else ""))
                    stream_buffer[(name, st)] = keep
            n = replays(i, name, sp, n)  # the fresh tuples: what the timing and the burst are about
            if deaths is not None and dl is not None and deaths.quiet(dl, name):  # section 9.5: its worker is down
                if emitted[default_key[name]] or sp["emit"]:
                    bad(i, f"spout {name}", "emits while a worker running its executors is down (section 9.5)")
                continue
            if sp["emit"] != (n > 0):
                bad(i, f"spout {name}", f"emit is {sp['emit']} but {n} fresh tuples emitted")
            if n > burst[name]:
                bad(i, f"spout {name}", f"emits {n} tuples, more than its burst {burst[name]}")
            if i == 0:
                if n == 0:
                    bad(i, f"spout {name}", "does not emit at position 0 (every spout emits at time 0)")
            elif name not in last_emit:
                pass  # already reported at position 0; no emission to measure gaps from
            else:
                when, size = last_emit[name]
                a, slack = period[name], jitter[name]
                gap = t - when
                if n > 0 and gap < size * a - slack:
                    late(i, f"spout {name}", f"emits too early: {sec(gap)} s after its last emission of {size}, "
                         f"at least {sec(size * a - slack)} s required")
                if n > 0 and gap > size * a + slack:
                    late(i, f"spout {name}", f"emits too late: {sec(gap)} s after its last emission, "
                         f"at most {sec(size * a + slack)} s allowed")
                if n == 0 and gap >= size * a + slack:
                    late(i, f"spout {name}", f"misses its emission deadline ({sec(gap)} s since the last emission)")
            if n > 0:
                last_emit[name] = (t, n)

    return spouts


def _replay_rules(cx: _Context) -> Callable[[int, str, dict[str, Any], int], int]:
    """Section 7.3 at a spout emitting n tuples: the backlog recurrence and the replays per mode among them;
    gives the fresh tuples n − replayed (the bolts' failures add the replays their losses cause)."""
    bad, fl, backlog, mode = cx.bad, cx.rules.fail, cx.state.backlog, cx.rules.replay_mode

    def replays(i: int, name: str, sp: dict[str, Any], n: int) -> int:
        replayed: int = sp["replayed"]
        if fl is None and cx.rules.deaths is None:
            if replayed or sp["backlog"]:
                bad(i, f"spout {name}", f"records backlog {sp['backlog']} and replayed {replayed}, but the "
                    "topology has no failure model (failures off, or no bolt with min_ttf): nothing is ever "
                    "replayed (section 7.1)")
        else:
            if sp["backlog"] != backlog[name]:
                bad(i, f"spout {name}", f"backlog {sp['backlog']} but the replays so far leave "
                    f"{backlog[name]} (backlog recurrence, section 7.3)")
            fresh = n - replayed
            if fresh < 0:
                bad(i, f"spout {name}", f"replays {replayed} among {n} emitted tuples")
            held = backlog[name]
            want = 0 if fresh <= 0 else min(held, fresh) if mode == "paced" else held if mode == "at-once" else 0
            if replayed != want:
                bad(i, f"spout {name}", f"replays {replayed} tuples, but settings.replay '{mode}' with backlog "
                    f"{held} and {max(fresh, 0)} fresh tuples gives {want} (replays per mode, section 7.3)")
            backlog[name] = held - want  # the bolts below add the replays their losses cause
        return max(n - replayed, 0)

    return replays


def _bolt_rules(cx: _Context) -> Callable[[int, int, Step, Emitted], None]:
    """Section 2.2 (bolts), in the page's order: arrivals (each input stream once), the queue, the idle
    rule's deadline, a failure (section 7.2, `_failure_rules`), EMIT (2.3) then TAKE at one position
    (back-to-back), phase and batch."""
    bad, late, sec, rules, window, with_streams = cx.bad, cx.late, cx.sec, cx.rules, cx.window, cx.with_streams
    state, failure, (emit_streams, kept_streams) = cx.state, _failure_rules(cx), _bolt_stream_rules(cx)
    processing, batch, buffer, take_time = state.processing, state.batch, state.buffer, state.take_time
    waiting_since, expected_queue, failed = state.waiting_since, state.expected_queue, state.failed
    take_max, emit_fast, timer = rules.take_max, rules.emit_fast, rules.timer
    slide, arrivals_rule = rules.slide, _arrival_rules(cx)
    deadline, wait = wait_rules(rules, cx.idle, cx.ticks, cx.sec, cx.late, state)
    dying = rules.deaths.bolt_worker if rules.deaths is not None else {}  # section 9.5: checked at every position
    share = None if rules.deaths is None or state.deaths is None else bolt_share(rules.deaths, state.deaths, bad)
    partial = {b for r in rules.deaths.workers.values() for b in r.partial} if rules.deaths is not None else set()
    label = {name: f"bolt {name}" for name in rules.alpha}  # made once, not per position and bolt

    def bolts(i: int, t: int, step: Step, emitted: Emitted) -> None:
        for name, bo in step.bolts.items():
            who = label[name]
            arrivals_rule(i, name, bo, emitted)
            queue = bo["queue"]
            if queue != expected_queue[name]:
                bad(i, who, f"queue {queue} but the previous position leaves {expected_queue[name]} "
                    "(queue arithmetic)")
            was_processing, was_waiting = processing[name], waiting_since[name] is not None
            deadline(i, who, name, t)
            lo, hi = window[name]
            taken = 0
            lost, cap = share(i, name, bo, state.workers_now, was_processing, batch[name], take_max[name]) \
                if share is not None and name in partial else (0, take_max[name])  # section 9.5: part of a bolt
            if name not in partial and (bo["fail"] or bo["recover"] or bo["lost"] or bo["replays"] or failed[name]
                                        or name in dying or bo["phase"] == "failed") and failure(
                    i, t, name, bo, queue, was_processing, hi):
                continue  # a failure position: nothing else happens there
            # 2.2 processing time and 2.3 EMIT first: it ends the phase; a TAKE at the same position
            # (back-to-back) starts the next
            if bo["emit"]:
                if not was_processing:
                    bad(i, who, "emits while idle")
                else:
                    busy = t - take_time[name]
                    if not lo <= busy <= hi:
                        late(i, who, f"processing took {sec(busy)} s, outside [{sec(lo)}, {sec(hi)}]")
                total = buffer[name] + batch[name]
                out, keep = emit_fast(name, total)
                if emitted[(name, "default")] != out or bo["buffer"] != keep:
                    bad(i, who, f"emits {emitted[(name, 'default')]} keeping {bo['buffer']}, but a buffer of {total} "
                        f"gives {out} keeping {keep} (emission '{rules.emission}')")
                if name in with_streams:
                    emit_streams(i, name, bo, emitted)
                processing[name], batch[name], buffer[name] = False, 0, keep
            else:
                if was_processing and t - take_time[name] >= hi:
                    late(i, who, f"still processing {sec(t - take_time[name])} s after its take (at most {sec(hi)})")
                if bo["emitted"] != 0:
                    where = " at a take" if bo["take"] else ""
                    bad(i, who, f"emits {bo['emitted']} tuples{where} without an emit (tuples leave a bolt only "
                        "at an emit)")
                if bo["buffer"] != buffer[name]:
                    bad(i, who, f"buffer changes from {buffer[name]} to {bo['buffer']} without an emit")
                if name in with_streams:
                    kept_streams(i, name, bo)
            # 2.2 TAKE: P = min(C_TAKE, Q + A) > 0, only when idle (or right after its own EMIT); a count window
            # (section 10) takes whole slides: P = min(C_TAKE, S·⌊(Q + A)/S⌋) ≥ S; a duration window's run (10.3)
            # takes every waiting tuple: P = Q + A
            if bo["take"]:
                if processing[name]:
                    bad(i, who, "takes while processing")
                avail, per = queue + bo["arrivals"] - lost, slide[name]
                want = avail if name in timer else min(cap, avail - avail % per)
                if want <= 0:
                    bad(i, who, "takes with nothing to take" if per == 1 else
                        f"takes with {avail} tuples, less than its window's slide of {per}")
                if bo["batch"] != want:
                    bad(i, who, f"takes {bo['batch']} tuples but its timer's run takes all it holds, {want}"
                        if name in timer else
                        f"takes {bo['batch']} tuples but min(parallelism, queue + arrivals) = {want}"
                        if per == 1 else f"takes {bo['batch']} tuples but whole slides of {per} give {want}")
                taken = bo["batch"]
                processing[name], batch[name], take_time[name] = True, bo["batch"], t
            want_phase = "processing" if processing[name] else "idle"
            if bo["phase"] != want_phase:
                bad(i, who, f"phase {bo['phase']} but the rules give {want_phase}")
            if bo["batch"] != batch[name]:
                bad(i, who, f"batch {bo['batch']} but the current phase holds {batch[name]}")
            # 2.2 queue: Q(i+1) = Q(i) + A(i) − P; then the idle rule's clock for the tuples left waiting
            expected_queue[name] = queue + bo["arrivals"] - lost - taken
            if expected_queue[name] < 0:
                bad(i, who, "queue becomes negative")
            wait(i, who, name, t, bo["emit"], was_processing, was_waiting)

    return bolts


def _arrival_rules(cx: _Context) -> Callable[[int, str, dict[str, Any], Emitted], None]:
    """Section 2.2's arrivals: what a bolt's input streams emit, each once; a join's (section 11), the messages all
    its branches have delivered, the rest of each branch's parts kept in its cache (and a cache that ends a position
    empty counted: a growing cache never does in a loop, certify.py)."""
    bad, sources, joins, cache, emptied = cx.bad, cx.rules.sources, cx.rules.joins, cx.state.cache, cx.state.emptied

    def arrivals(i: int, name: str, bo: dict[str, Any], emitted: Emitted) -> None:
        if name not in joins:
            came = sum(map(emitted.__getitem__, sources[name]))  # each input stream once
            if bo["arrivals"] != came:
                bad(i, f"bolt {name}", f"arrivals {bo['arrivals']} but its sources emit {came}")
            return
        parts = cache[name]
        totals = {b: parts[b] + emitted[b] for b in joins[name]}
        done = min(totals.values())
        for b, total in totals.items():
            parts[b] = total - done
            if total == done:
                emptied[(name, *b)] += 1
        if bo["arrivals"] != done:
            bad(i, f"bolt {name}", f"arrivals {bo['arrivals']} but its branches complete {done} messages (a join "
                "receives what every branch has delivered, section 11)")

    return arrivals


def _bolt_stream_rules(cx: _Context) -> tuple[Callable[[int, str, dict[str, Any], Emitted], None],
                                              Callable[[int, str, dict[str, Any]], None]]:
    """Section 2.3 on a bolt's declared streams: at its EMIT every other output stream on its own, with its
    own carry; without an EMIT every carry kept."""
    bad, rules, stream_buffer, batch = cx.bad, cx.rules, cx.state.stream_buffer, cx.state.batch

    def emit_streams(i: int, name: str, bo: dict[str, Any], emitted: Emitted) -> None:
        for st in rules.streams[name]:
            if st != "default":
                out, kept = rules.emit_fast(name, stream_buffer[(name, st)] + batch[name], st)
                carry = parse_carry(bo["buffer_by_stream"][st])
                if emitted[(name, st)] != out or carry != kept:
                    bad(i, f"bolt {name}", f"stream {st}: emits {emitted[(name, st)]} keeping {carry}, but a "
                        f"buffer of {stream_buffer[(name, st)] + batch[name]} gives {out} keeping {kept}")
                stream_buffer[(name, st)] = kept
        if parse_carry(bo["buffer_by_stream"]["default"]) != bo["buffer"]:
            bad(i, f"bolt {name}", "buffer_by_stream.default is not its buffer")

    def kept_streams(i: int, name: str, bo: dict[str, Any]) -> None:
        for st in rules.streams[name]:
            if st != "default" and parse_carry(bo["buffer_by_stream"][st]) != stream_buffer[(name, st)]:
                bad(i, f"bolt {name}", f"stream {st}: its buffer changes without an emit")

    return emit_streams, kept_streams


def _failure_rules(cx: _Context) -> Callable[[int, int, str, dict[str, Any], int, bool, int], bool]:
    """Section 7.2 at a bolt that records a failure field or is failed: when it may fail, the failure and
    failed positions, recovery timing, only a failure loses tuples; 7.3: the split rule of the replays a
    loss causes, added to the spouts' backlogs. The function says True at a failure position (the bolt
    neither takes nor emits there)."""
    bad, late, sec, rules, fl, ttf, reboot, state = (
        cx.bad, cx.late, cx.sec, cx.rules, cx.rules.fail, cx.ttf, cx.reboot, cx.state)
    failed, up_since, down_since, backlog = state.failed, state.up_since, state.down_since, state.backlog
    dl = rules.deaths  # section 9.5: a dying worker's bolts fail and recover with it, on its clock
    dying = dl.bolt_worker if dl is not None else {}
    with_worker = None if dl is None else FailureRules(
        dict.fromkeys(dying, Fraction(0)), dl.min_reboot, dl.max_reboot, dl.mode, {})
    worker_reboot = (cx.ticks(dl.min_reboot), cx.ticks(dl.max_reboot)) if dl is not None else (0, 0)

    def failure(i: int, t: int, name: str, bo: dict[str, Any], queue: int, was_processing: bool, hi: int) -> bool:
        who, lost, gave = f"bolt {name}", bo["lost"], bo["replays"] or {}
        rule, min_ttf, bounds = fl, ttf.get(name, 0), reboot
        if name in dying and with_worker is not None:
            problem = bolt_death_problem(name, dying[name], bo, state.workers_now.get(dying[name]))
            if problem:
                bad(i, who, problem)
            rule, bounds = with_worker, worker_reboot
        elif name not in ttf and (bo["fail"] or bo["recover"] or bo["phase"] == "failed" or lost
                                  or any(gave.values())):
            why = ("the topology has no failure model (failures off, or no bolt with min_ttf)" if fl is None
                   else f"{name} has no min_ttf")
            bad(i, who, f"records a failure (fail, recover, lost, replays or phase 'failed') but {why}: it "
                "never fails (section 7.1)")
        if rule is None or (name not in ttf and name not in dying):
            return False
        down = failed[name]
        if bo["fail"] or (down and not bo["recover"]):
            failed_position(Failing(i, name, bo, down, t, queue, state.batch[name],
                                    state.take_time[name] if was_processing else None, hi, min_ttf,
                                    up_since[name], bounds, down_since), rule, bad, late, sec)
            for st in rules.streams[name]:
                if st != "default":
                    state.stream_buffer[(name, st)] = 0
            failed[name], state.processing[name], state.batch[name], state.buffer[name] = True, False, 0, 0
            state.expected_queue[name], state.waiting_since[name] = 0, None
            problem = split_problem(lost, gave, rule.impact.get(name, {}), rule.mode) if name not in dying else None
            if problem:
                bad(i, who, f"loses {lost} and replays {dict(gave)}: {problem} (replay split rule, section 7.3)")
            for s, r in gave.items():
                if s in backlog:
                    backlog[s] += r
            return True
        if bo["recover"]:
            if not down:
                bad(i, who, "recovers but is not failed (section 7.2)")
            else:
                gone = t - down_since[name]
                if not bounds[0] <= gone <= bounds[1]:
                    late(i, who, f"recovers {sec(gone)} s after its failure, outside [min_reboot_time, "
                         f"max_reboot_time] = [{rule.min_reboot}, {rule.max_reboot}] (recovery timing, section 7.2)")
                failed[name], up_since[name] = False, t
        if lost or any(gave.values()):
            bad(i, who, f"loses {lost} tuples and replays {dict(gave)} while up: only a failure loses "
                "tuples (section 7.2)")
        return False

    return failure
