"""An independent checker for lasso traces: plain Python, exact fractions, no z3.

It shares no code with the encoder. From the topology document the trace embeds
it recomputes every constant, replays every rule of sections 2 and 3 of the
semantics position by position, checks the loop conditions at `loop_start` and
k+1 (discrete state and finite counters repeat, readable clocks are
region-equivalent with its own region test, growing queues only see full batches
and never empty, fairness), and finally unrolls the loop a few times with every
growing queue raised by its growth per pass, replaying the rules again: a lasso
whose constraints change truth value fails there. When the clocks are only
region-equivalent (not equal) the unrolled times are not a concrete run, so that
replay checks the counter rules and skips the timing rules. The unrolled steps
0..k are the trace's own, so that replay resumes before k+1 from the state the
first one recorded there (`_State`; docs/verifier.md, step 6).

With failures (docs/model.md section 7) the replay also checks when a bolt may fail, the
failure and failed positions, recovery timing, the replays of every loss (the split rule,
with its own Imp from app/core/tcn/certify_failures.py) and each spout's backlog and
replays; the loop compares up/failed and the two failure clocks, keeps a failing bolt's
growth at 0, and lets a spout's backlog grow only under "paced" replays of n per emission.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from app.core.formats.trace import ExpandError, Trace, expand_trace_data, is_compressed, parse_carry
from app.core.gc_pause import paused_gc
from app.core.tcn.certify_clocks import region_problems
from app.core.tcn.certify_failures import Failing, failed_position, split_problem
from app.core.tcn.certify_rules import Rules
from app.core.topology import parse_topology, unannotated_problems

UNROLL_PASSES = 3


@dataclass
class Certificate:
    """The certifier's answer: `ok` only when no rule is broken; `problems` name position and rule."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    growth_per_loop: dict[str, int] = field(default_factory=dict)
    loop_duration: Fraction | None = None


@dataclass
class _Step:
    """One position as the replay reads it (a copy, so unrolling can shift it)."""

    time: Fraction
    spouts: dict[str, dict[str, Any]]
    bolts: dict[str, dict[str, Any]]


@dataclass
class _Before:
    """What the replay knows just before a position's actions (for the loop comparison).

    Clocks are counted in ticks of 1/`unit` s (see `_replay`); `_clocks` turns them into seconds."""

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
    state: _State | None = None  # the replay's whole state here, to resume from (see `_replay`)


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

    def copy(self) -> _State:
        return _State(self.unit, self.previous, *(dict(getattr(self, f)) for f in (
            "last_emit", "processing", "batch", "buffer", "take_time", "waiting_since", "expected_queue",
            "stream_buffer", "failed", "up_since", "down_since", "backlog")))


def _steps(trace: Trace, cancelled: Callable[[], bool] = lambda: False) -> list[_Step]:
    steps = []
    for i, p in enumerate(trace.positions):
        if i % 32 == 0 and cancelled():
            raise _Cancelled
        # a model's fields as a read-only dict (no copy: a long trace has a step per bolt and
        # position); an exact "p/q" carry becomes a Fraction in a copy
        bolts = {n: b.__dict__ if type(b.buffer) is int else {**b.__dict__, "buffer": b.exact_buffer}
                 for n, b in p.bolts.items()}
        spouts = {n: s.__dict__ for n, s in p.spouts.items()}
        steps.append(_Step(p.exact_time, spouts, bolts))
    return steps


def _replay(rules: Rules, steps: list[_Step], problems: list[str], label: str = "position",
            timing: bool = True, record: set[int] | None = None,
            cancelled: Callable[[], bool] = lambda: False,
            resume: tuple[int, _State] | None = None) -> list[_Before | None]:
    """Check every rule of section 2 along `steps`; return the state before each position
    (only at the positions in `record` when given, None elsewhere: a long trace's states are large).

    timing=False skips the rules that compare times (for an unrolled loop whose clocks are
    only region-equivalent: its times are not a concrete run, its counters must still be).
    Times are compared as whole ticks of 1/unit s, unit the LCM of the denominators of every
    time stamp and constant (exact, and far faster than fractions on long traces).

    `resume` = (i, state): start at position i from `state`, the `_Before.state` a replay of
    steps[:i] recorded there (the same list up to i, so the same unit); positions before i are
    neither checked again nor recorded (None in the result)."""
    unit = math.lcm(*(Fraction(c).denominator for c in rules.constants()), *(s.time.denominator for s in steps))

    def ticks(x: Fraction) -> int:
        return x.numerator * (unit // x.denominator)

    def sec(x: int) -> Fraction:
        return Fraction(x, unit)

    idle = ticks(rules.idle)
    period = {n: ticks(a) for n, a in rules.period.items()}
    jitter = {n: ticks(a * rules.tau) for n, a in rules.period.items()}
    window = {n: (ticks(a * (1 - rules.tau)), ticks(a * (1 + rules.tau))) for n, a in rules.alpha.items()}
    if resume is None:
        start, state = 0, _State(
            unit, None, {}, processing={b: False for b in rules.alpha}, batch={b: 0 for b in rules.alpha},
            buffer={b: 0 for b in rules.alpha}, take_time={}, waiting_since={b: None for b in rules.alpha},
            expected_queue={b: rules.init for b in rules.alpha},
            stream_buffer={(c, st): 0 for c, outs in rules.streams.items() for st in outs if st != "default"},
            failed={b: False for b in rules.alpha}, up_since={b: 0 for b in rules.alpha}, down_since={},
            backlog={s: 0 for s in rules.period})
    else:
        start, state = resume[0], resume[1].copy()
        if state.unit != unit:  # the same steps up to `start` give the same unit: never, unless misused
            raise ValueError(f"resumed with ticks of 1/{state.unit} s, the steps need 1/{unit} s")
    befores: list[_Before | None] = [None] * start
    # the state's parts by name (mutated in place; `previous` is rebound, so written back at each record)
    previous, last_emit, processing, batch = state.previous, state.last_emit, state.processing, state.batch
    buffer, take_time, waiting_since = state.buffer, state.take_time, state.waiting_since
    expected_queue, stream_buffer = state.expected_queue, state.stream_buffer
    failed, up_since, down_since, backlog = state.failed, state.up_since, state.down_since, state.backlog
    spout_names, bolt_names = set(rules.period), set(rules.alpha)
    with_streams = {name for name, declared in rules.declared.items() if declared}
    default_key = {name: (name, "default") for name in rules.declared}  # made once, not per position
    # section 7: which bolts may fail (min_ttf in ticks), the reboot bounds
    fl = rules.fail
    ttf = {b: ticks(v) for b, v in fl.min_ttf.items()} if fl else {}
    reboot = (ticks(fl.min_reboot), ticks(fl.max_reboot)) if fl else (0, 0)

    def bad(i: int, who: str, text: str) -> None:
        problems.append(f"{label} {i}: {who}: {text}")

    def late(i: int, who: str, text: str) -> None:
        if timing:
            bad(i, who, text)

    for i in range(start, len(steps)):
        step = steps[i]
        if i % 32 == 0 and cancelled():
            raise _Cancelled
        t = ticks(step.time)
        if step.spouts.keys() != spout_names or step.bolts.keys() != bolt_names:
            bad(i, "trace", "the components do not match the topology")
            return befores
        if record is not None and i not in record:
            befores.append(None)
        else:
            state.previous = previous
            befores.append(_Before(
                unit=unit,
                spout_last_size={s: last_emit[s][1] for s in last_emit},
                spout_clock={s: t - last_emit[s][0] for s in last_emit},
                bolt_processing=dict(processing), bolt_batch=dict(batch), bolt_buffer=dict(buffer),
                bolt_take_clock={b: (t - take_time[b]) if processing[b] else None for b in processing},
                bolt_waiting_clock={b: (t - w) if w is not None else None for b, w in waiting_since.items()},
                stream_buffer=dict(stream_buffer),
                bolt_failed=dict(failed),
                bolt_up_clock={b: (t - up_since[b]) if b in ttf and not failed[b] and t - up_since[b] < ttf[b]
                               else None for b in rules.alpha},
                bolt_down_clock={b: (t - down_since[b]) if failed[b] else None for b in rules.alpha},
                state=state.copy() if record is not None else None))
        # ---- section 4 (traces): the record of position i, per output stream ----
        # what each output stream carries at i (emitted_by_stream for a component with streams)
        emitted: dict[tuple[str, str], int] = {default_key[name]: sx["emitted"] for name, sx in step.spouts.items()}
        emitted.update({default_key[name]: bx["emitted"] for name, bx in step.bolts.items()})
        for name, sx in itertools.chain(step.spouts.items(), step.bolts.items()):
            by_stream = sx["emitted_by_stream"]
            if name not in with_streams:
                if by_stream is not None or sx["buffer_by_stream"] is not None:
                    bad(i, name, "records per-stream counts but declares no stream")
                continue
            listed = {"default", *rules.streams[name]}
            if by_stream is None or set(by_stream) != listed or set(sx["buffer_by_stream"] or {}) != (
                    listed - {"default"} if name in spout_names else listed):
                bad(i, name, f"emitted_by_stream / buffer_by_stream must list its streams "
                    f"({', '.join(sorted(listed))})")
                return befores
            emitted.update(((name, st), n) for st, n in by_stream.items())
            if sx["emitted"] != sum(by_stream.values()):
                bad(i, name, f"emitted {sx['emitted']} is not the sum of emitted_by_stream")
        # ---- section 2 (runs): t₀ = 0 < t₁ < t₂ < … ----
        if i == 0 and t != 0:
            late(i, "time", f"the run starts at {step.time}, not 0")
        if previous is not None and t <= previous:
            late(i, "time", f"time {step.time} does not increase (previous {steps[i - 1].time})")
        previous = t
        # ---- section 2.1 (spouts): emit at 0, then each emission n·a ± τ·a after the previous one;
        # a declared stream applies the emit rule of 2.3 to the emissions, with its own carry ----
        for name, sp in step.spouts.items():
            n = emitted[default_key[name]]  # the emission itself; declared streams follow it below
            for st, (_, silent) in rules.streams[name].items():
                carry = parse_carry(sp["buffer_by_stream"][st])
                if n > 0:
                    out, keep = rules.emit_fast(name, stream_buffer[(name, st)] + n, st)
                else:
                    out, keep = 0, stream_buffer[(name, st)]
                if emitted[(name, st)] != out or carry != keep:
                    bad(i, f"spout {name}", f"stream {st}: emits {emitted[(name, st)]} keeping {carry}, but the "
                        f"rule gives {out} keeping {keep}" + (" (nobody receives it)" if silent else ""))
                stream_buffer[(name, st)] = keep
            # 7.3: the backlog recurrence and the replays among the emitted tuples; the timing of 2.1
            # reads the fresh tuples n − replayed
            replayed = sp["replayed"]
            if fl is None:
                if replayed or sp["backlog"]:
                    bad(i, f"spout {name}", f"records backlog {sp['backlog']} and replayed {replayed}, but the "
                        "topology has no failure model (failures off, or no bolt with min_ttf): nothing is ever "
                        "replayed (section 7.1)")
                want = 0
            else:
                if sp["backlog"] != backlog[name]:
                    bad(i, f"spout {name}", f"backlog {sp['backlog']} but the replays so far leave "
                        f"{backlog[name]} (backlog recurrence, section 7.3)")
                fresh = n - replayed
                if fresh < 0:
                    bad(i, f"spout {name}", f"replays {replayed} among {n} emitted tuples")
                mode, held = fl.mode, backlog[name]
                want = 0 if fresh <= 0 else min(held, fresh) if mode == "paced" else held if mode == "at-once" else 0
                if replayed != want:
                    bad(i, f"spout {name}", f"replays {replayed} tuples, but settings.replay '{mode}' with backlog "
                        f"{held} and {max(fresh, 0)} fresh tuples gives {want} (replays per mode, section 7.3)")
                backlog[name] = held - want  # the bolts below add the replays their losses cause
            n = max(n - replayed, 0)  # the fresh tuples: what the timing and the burst are about
            if sp["emit"] != (n > 0):
                bad(i, f"spout {name}", f"emit is {sp['emit']} but {n} fresh tuples emitted")
            if n > rules.burst[name]:
                bad(i, f"spout {name}", f"emits {n} tuples, more than its burst {rules.burst[name]}")
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
        # ---- section 2.2 (bolts), in the page's order: arrivals (each input stream once), the queue,
        # the idle rule's deadline, EMIT (2.3) then TAKE at one position (back-to-back), phase and batch ----
        for name, bo in step.bolts.items():
            who = f"bolt {name}"
            arrivals = sum(map(emitted.__getitem__, rules.sources[name]))  # each input stream once
            if bo["arrivals"] != arrivals:
                bad(i, who, f"arrivals {bo['arrivals']} but its sources emit {arrivals}")
            queue = bo["queue"]
            if queue != expected_queue[name]:
                bad(i, who, f"queue {queue} but the previous position leaves {expected_queue[name]} "
                    "(queue arithmetic)")
            was_processing = processing[name]
            since = waiting_since[name]
            was_waiting = since is not None
            if since is not None and t - since > idle:
                late(i, who, f"tuples wait {sec(t - since)} s, longer than max_idle_time {rules.idle}")
            lo, hi = window[name]
            taken = 0
            # ---- section 7.2: failures; 7.3: the replays a loss causes ----
            lost, gave = bo["lost"], bo["replays"] or {}
            if name not in ttf and (bo["fail"] or bo["recover"] or bo["phase"] == "failed" or lost
                                    or any(gave.values())):
                why = ("the topology has no failure model (failures off, or no bolt with min_ttf)" if fl is None
                       else f"{name} has no min_ttf")
                bad(i, who, f"records a failure (fail, recover, lost, replays or phase 'failed') but {why}: it "
                    "never fails (section 7.1)")
            if fl is not None and name in ttf:
                down = failed[name]
                if bo["fail"] or (down and not bo["recover"]):
                    failed_position(Failing(i, name, bo, down, t, queue, batch[name],
                                            take_time[name] if was_processing else None, hi, ttf[name],
                                            up_since[name], reboot, down_since),
                                    fl, bad, late, sec)
                    for st in rules.streams[name]:
                        if st != "default":
                            stream_buffer[(name, st)] = 0
                    failed[name], processing[name], batch[name], buffer[name] = True, False, 0, 0
                    expected_queue[name], waiting_since[name] = 0, None
                    problem = split_problem(lost, gave, fl.impact.get(name, {}), fl.mode)
                    if problem:
                        bad(i, who, f"loses {lost} and replays {dict(gave)}: {problem} (replay split rule, "
                            "section 7.3)")
                    for s, r in gave.items():
                        if s in backlog:
                            backlog[s] += r
                    continue
                if bo["recover"]:
                    if not down:
                        bad(i, who, "recovers but is not failed (section 7.2)")
                    else:
                        gone = t - down_since[name]
                        if not reboot[0] <= gone <= reboot[1]:
                            late(i, who, f"recovers {sec(gone)} s after its failure, outside [min_reboot_time, "
                                 f"max_reboot_time] = [{fl.min_reboot}, {fl.max_reboot}] (recovery timing, "
                                 "section 7.2)")
                        failed[name], up_since[name] = False, t
                if lost or any(gave.values()):
                    bad(i, who, f"loses {lost} tuples and replays {dict(gave)} while up: only a failure loses "
                        "tuples (section 7.2)")
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
                out, keep = rules.emit_fast(name, total)
                if emitted[(name, "default")] != out or bo["buffer"] != keep:
                    bad(i, who, f"emits {emitted[(name, 'default')]} keeping {bo['buffer']}, but a buffer of {total} "
                        f"gives {out} keeping {keep} (emission '{rules.emission}')")
                for st in rules.streams[name]:  # every other output stream on its own, with its own carry
                    if st != "default":
                        out, kept = rules.emit_fast(name, stream_buffer[(name, st)] + batch[name], st)
                        carry = parse_carry(bo["buffer_by_stream"][st])
                        if emitted[(name, st)] != out or carry != kept:
                            bad(i, who, f"stream {st}: emits {emitted[(name, st)]} keeping {carry}, but a buffer of "
                                f"{stream_buffer[(name, st)] + batch[name]} gives {out} keeping {kept}")
                        stream_buffer[(name, st)] = kept
                if rules.declared[name] and parse_carry(bo["buffer_by_stream"]["default"]) != bo["buffer"]:
                    bad(i, who, "buffer_by_stream.default is not its buffer")
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
                    for st in rules.streams[name]:
                        if st != "default" and parse_carry(bo["buffer_by_stream"][st]) != stream_buffer[(name, st)]:
                            bad(i, who, f"stream {st}: its buffer changes without an emit")
            # 2.2 TAKE: P = min(C_TAKE, Q + A) > 0, only when idle (or right after its own EMIT)
            if bo["take"]:
                if processing[name]:
                    bad(i, who, "takes while processing")
                want = min(rules.take_max[name], queue + bo["arrivals"])
                if want <= 0:
                    bad(i, who, "takes with nothing to take")
                if bo["batch"] != want:
                    bad(i, who, f"takes {bo['batch']} tuples but min(parallelism, queue + arrivals) = {want}")
                taken = bo["batch"]
                processing[name], batch[name], take_time[name] = True, bo["batch"], t
            want_phase = "processing" if processing[name] else "idle"
            if bo["phase"] != want_phase:
                bad(i, who, f"phase {bo['phase']} but the rules give {want_phase}")
            if bo["batch"] != batch[name]:
                bad(i, who, f"batch {bo['batch']} but the current phase holds {batch[name]}")
            # 2.2 queue: Q(i+1) = Q(i) + A(i) − P; then the idle rule's clock for the tuples left waiting
            expected_queue[name] = queue + bo["arrivals"] - taken
            if expected_queue[name] < 0:
                bad(i, who, "queue becomes negative")
            waiting = not processing[name] and expected_queue[name] > 0
            if not waiting:
                waiting_since[name] = None
            elif bo["emit"] or not was_waiting:
                waiting_since[name] = t
            since = waiting_since[name]
            if waiting and since is not None and t - since >= idle:
                late(i, who, f"tuples wait until the next position beyond max_idle_time {rules.idle}")
    return befores


def _clocks(before: _Before) -> dict[str, Fraction | None]:
    """The clocks before a position by name, in seconds (None: not readable there)."""
    def sec(x: int | None) -> Fraction | None:
        return None if x is None else Fraction(x, before.unit)

    clocks: dict[str, Fraction | None] = {f"spout {n}: its clock": sec(c) for n, c in before.spout_clock.items()}
    clocks.update({f"bolt {n}: its processing clock": sec(c) for n, c in before.bolt_take_clock.items()})
    clocks.update({f"bolt {n}: its idle deadline clock": sec(c) for n, c in before.bolt_waiting_clock.items()})
    clocks.update({f"bolt {n}: its time since recovery": sec(c) for n, c in before.bolt_up_clock.items()})
    clocks.update({f"bolt {n}: its time since failure": sec(c) for n, c in before.bolt_down_clock.items()})
    return clocks


def _emission(sp: dict[str, Any]) -> int:
    """A spout's emission E_s at a position: fresh tuples and replays (its default stream)."""
    by_stream = sp["emitted_by_stream"]
    return int(by_stream["default"]) if by_stream else int(sp["emitted"])


def _replays(bo: dict[str, Any]) -> dict[str, int]:
    return {s: r for s, r in (bo["replays"] or {}).items() if r}


def _loop_checks(rules: Rules, trace: Trace, steps: list[_Step], befores: list[_Before | None],
                 checked: list[str], problems: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Section 3: what must repeat at loop_start and k+1, fairness, growing-queue conditions."""
    k, loop_start = trace.k, trace.loop_start
    first, last = steps[loop_start], steps[k + 1]
    b_first, b_last = befores[loop_start], befores[k + 1]
    assert b_first is not None and b_last is not None  # kept by the replay

    def bad(text: str) -> None:
        problems.append(f"loop {loop_start}..{k}: {text}")

    backlog_growth: dict[str, int] = {}
    for name in rules.period:
        a_s, z_s = first.spouts[name], last.spouts[name]
        if any(a_s[key] != z_s[key] for key in a_s if key != "backlog"):
            bad(f"spout {name} acts differently at {loop_start} and {k + 1}")
        if b_first.spout_last_size.get(name) != b_last.spout_last_size.get(name):
            bad(f"spout {name}: the last emission size does not repeat")
        # 7.4: a backlog may grow; under "paced" only when every loop emission replays n, never under "at-once"
        grow = backlog_growth[name] = z_s["backlog"] - a_s["backlog"]  # as recorded (the recurrence: _replay)
        mode = rules.fail.mode if rules.fail else "none"
        if grow < 0:
            bad(f"spout {name}: its backlog shrinks by {-grow} per pass (section 7.4)")
        elif grow > 0 and mode != "paced":
            bad(f"spout {name}: its backlog grows by {grow} per pass under settings.replay '{mode}' "
                "(a growing backlog, section 7.4)")
        elif grow > 0:
            for offset, s in enumerate(steps[loop_start:k + 1]):
                sp = s.spouts[name]
                if sp["emitted"] and sp["replayed"] * 2 != _emission(sp):
                    bad(f"spout {name}: its backlog grows by {grow} per pass but position {loop_start + offset} "
                        "replays fewer than its fresh tuples (a growing backlog replays n at every emission, "
                        "section 7.4)")
    growth: dict[str, int] = {}
    for name in rules.alpha:
        a, z = first.bolts[name], last.bolts[name]
        for key in ("arrivals", "take", "batch", "emit", "emitted", "buffer", "phase", "emitted_by_stream",
                    "buffer_by_stream", "fail", "recover", "lost"):
            if a[key] != z[key]:
                bad(f"bolt {name}: {key} differs at {loop_start} and {k + 1}")
        if _replays(a) != _replays(z):
            bad(f"bolt {name}: replays differ at {loop_start} and {k + 1}")
        for key in ("bolt_processing", "bolt_batch", "bolt_buffer", "bolt_failed"):
            if getattr(b_first, key)[name] != getattr(b_last, key)[name]:
                bad(f"bolt {name}: the state before the loop does not repeat ({key.removeprefix('bolt_')})")
        growth[name] = z["queue"] - a["queue"]
        if growth[name] < 0:
            bad(f"bolt {name}: queue shrinks by {-growth[name]} per pass, so the loop cannot repeat forever")
    for (name, st), carry in b_first.stream_buffer.items():
        if b_last.stream_buffer[(name, st)] != carry:
            bad(f"{name}: the carry of stream {st} does not repeat")
    for problem in region_problems(rules, _clocks(b_first), _clocks(b_last), loop_start, k + 1):
        bad(problem)
    loop = steps[loop_start:k + 1]
    for name in rules.period:
        if not any(s.spouts[name]["emitted"] > 0 for s in loop):
            bad(f"spout {name} never emits inside the loop")
    for name in rules.alpha:
        busy = any(s.bolts[name]["queue"] > 0 or s.bolts[name]["arrivals"] > 0 for s in loop)
        if busy and not any(s.bolts[name]["take"] or s.bolts[name]["fail"] for s in loop):
            bad(f"bolt {name} has tuples but never takes (or fails) inside the loop")
        if growth.get(name, 0) > 0 and any(s.bolts[name]["fail"] or s.bolts[name]["lost"]
                                           or s.bolts[name]["phase"] == "failed" for s in loop):
            bad(f"bolt {name} grows by {growth[name]} per pass but fails or loses tuples inside the loop "
                "(Δ = 0 for such a bolt, section 7.4)")
        if growth.get(name, 0) > 0:
            for offset, s in enumerate(loop):
                pos = loop_start + offset
                if s.bolts[name]["queue"] < 1:
                    bad(f"bolt {name} grows but its queue is empty at position {pos}")
                if s.bolts[name]["take"] and s.bolts[name]["batch"] != rules.take_max[name]:
                    bad(f"bolt {name} grows but takes a partial batch of {s.bolts[name]['batch']} at position {pos}")
    if not any(growth.get(name, 0) > 0 for name in checked):
        bad(f"no checked queue grows ({', '.join(checked) or 'none checked'})")
    return growth, backlog_growth


def _validated(trace: Any) -> tuple[Trace | None, list[str]]:
    """A `Trace` from a model or decoded JSON; malformed input gives problems naming the field."""
    if isinstance(trace, Trace):
        return trace, []
    if is_compressed(trace):  # stormbound-trace/2: replayed as the exact positions it stands for
        try:
            trace = expand_trace_data(trace)
        except ExpandError as err:
            return None, [f"trace format: {err}"]
    try:
        return Trace.model_validate(trace), []
    except ValidationError as err:
        problems = []
        for e in err.errors()[:20]:
            where = ".".join(str(x) for x in e.get("loc", ())) or "trace"
            problems.append(f"trace format: {where}: {e.get('msg', 'invalid')}")
        return None, problems


CANCELLED = "cancelled before the certificate was complete"


class _Cancelled(Exception):
    pass


@paused_gc()  # a long lasso: app/core/gc_pause.py
def certify(trace: Trace | Any, checked: list[str] | None = None, threshold: int | None = None,
            cancelled: Callable[[], bool] | None = None) -> Certificate:
    """Replay `trace` against every rule; `ok` means it is a genuine witness of the property.

    `trace` may be a :class:`Trace` or decoded JSON; whatever it holds, the answer is a
    certificate (a malformed trace is rejected naming the rule and position), never an
    exception. `cancelled`, polled every few positions, abandons a long replay: the
    certificate is then not ok, with the single problem CANCELLED."""
    valid, problems = _validated(trace)
    if valid is None:
        return Certificate(False, problems)
    try:
        return _certify(valid, checked, threshold, cancelled or (lambda: False))
    except _Cancelled:
        return Certificate(False, [CANCELLED])
    except Exception as err:  # a defect of the certifier: never mistaken for a certificate
        return Certificate(False, [f"certifier defect: {type(err).__name__}: {err}"])


def _certify(trace: Trace, checked: list[str] | None, threshold: int | None,
             cancelled: Callable[[], bool]) -> Certificate:
    problems: list[str] = []
    try:
        topo = parse_topology(trace.topology)
    except Exception as err:  # the embedded document itself is broken
        return Certificate(False, [f"topology: {err}"])
    if unannotated_problems(topo):
        return Certificate(False, [f"topology: {p}" for p in unannotated_problems(topo)])
    rules = Rules(topo)
    if checked is None:
        checked = [b.name for b in topo.checked_bolts()]
    unknown = [n for n in checked if n not in rules.alpha]
    if unknown:
        return Certificate(False, [f"trace: checked bolt {', '.join(unknown)} is not in the trace's topology"])
    k, loop_start = trace.k, trace.loop_start
    if k < 1:
        return Certificate(False, [f"trace: k = {k}, at least 1 required"])
    if len(trace.positions) != k + 2:
        return Certificate(False, [f"trace: {len(trace.positions)} positions, expected k + 2 = {k + 2}"])
    if threshold is None and not 1 <= loop_start <= k:
        return Certificate(False, [f"trace: loop_start {loop_start} is outside 1..{k}"])
    if threshold is not None and loop_start != k + 1:
        return Certificate(False, [f"trace: a threshold witness has loop_start k + 1 = {k + 1}, not {loop_start}"])
    steps = _steps(trace, cancelled)
    befores = _replay(rules, steps, problems, record={loop_start, k + 1}, cancelled=cancelled)
    if len(befores) != len(steps):
        return Certificate(False, problems)
    if threshold is not None:
        if not any(s.bolts[n]["queue"] >= threshold for s in steps for n in checked):
            problems.append(f"no checked queue reaches {threshold}")
        return Certificate(not problems, problems)
    growth, backlog_growth = _loop_checks(rules, trace, steps, befores, checked, problems)
    period = steps[k + 1].time - steps[loop_start].time
    if not problems:
        # unroll: the loop repeated with times shifted by its duration and queues raised by their growth.
        # Clocks exactly equal: the shifted times are a concrete run, replay every rule. Clocks only
        # region-equivalent: the same discrete steps are possible again in every pass (time-abstract
        # bisimulation) but at other times, so replay the counter rules only. A growing backlog of replays
        # (section 7.4) is raised like a queue.
        exact = _clocks(befores[loop_start]) == _clocks(befores[k + 1])  # type: ignore[arg-type]  # both kept
        unrolled = steps[:k + 1]
        for p in range(1, UNROLL_PASSES + 1):
            if cancelled():
                raise _Cancelled
            for s in steps[loop_start:k + 1]:
                unrolled.append(_Step(s.time + p * period,
                                      {n: {**sp, "backlog": sp["backlog"] + p * backlog_growth[n]}
                                       if backlog_growth[n] else sp for n, sp in s.spouts.items()},
                                      {n: {**b, "queue": b["queue"] + p * growth[n]} if growth[n] else b
                                       for n, b in s.bolts.items()}))
        # positions 0..k of `unrolled` are the trace's own, replayed above without a problem (timing only
        # adds problems, never changes the state): the replay resumes before k + 1 from the state recorded there
        before = befores[k + 1]
        assert before is not None and before.state is not None  # recorded: k + 1 is in `record`
        _replay(rules, unrolled, problems, label="unrolled position", timing=exact, record=set(),
                cancelled=cancelled, resume=(k + 1, before.state))
    return Certificate(not problems, problems, growth, period)
