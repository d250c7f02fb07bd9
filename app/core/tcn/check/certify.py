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
first one recorded there (`Before.state`; docs/verifier.md, step 6). The replay itself,
rule group by rule group, is app/core/tcn/check/certify_replay.py.

With failures (docs/model.md section 7) the replay also checks when a bolt may fail, the
failure and failed positions, recovery timing, the replays of every loss (the split rule,
with its own Imp from app/core/tcn/check/certify_failures.py) and each spout's backlog and
replays; the loop compares up/failed and the two failure clocks, keeps a failing bolt's
growth at 0, and lets a spout's backlog grow only under "paced" replays of n per emission.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.errors import Cancelled
from app.core.formats.trace import CompressedTrace, Trace
from app.core.gc_pause import paused_gc
from app.core.tcn.check.certify_clocks import region_problems
from app.core.tcn.check.certify_replay import Before, Step, replay
from app.core.tcn.check.certify_rules import Rules
from app.core.tcn.check.certify_source import Malformed, Source, source_of
from app.core.topology import parse_topology, unannotated_problems

UNROLL_PASSES = 3


@dataclass
class Certificate:
    """The certifier's answer: `ok` only when no rule is broken; `problems` name position and rule."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    growth_per_loop: dict[str, int] = field(default_factory=dict)
    loop_duration: Fraction | None = None
    # as the replay read them, for the words of a lasso with failures (app/core/tcn/failing.py) without a pass more:
    # whether some bolt fails anywhere, and per bolt failing in the loop its failures and the replays they add
    fails: bool = False
    loop_failures: dict[str, int] = field(default_factory=dict)
    loop_replays: dict[str, dict[str, int]] = field(default_factory=dict)


def _clocks(before: Before, dying: set[str] | None = None) -> dict[str, Fraction | None]:
    """The clocks before a position by name, in seconds (None: not readable there). A worker's clocks only for the
    workers in `dying` (all when None): one that never dies in the loop need not repeat them (a death is never
    forced, docs/model.md 9.5, so the run goes on with it never dying again)."""
    def sec(x: int | None) -> Fraction | None:
        return None if x is None else Fraction(x, before.unit)

    clocks: dict[str, Fraction | None] = {f"spout {n}: its clock": sec(c) for n, c in before.spout_clock.items()}
    clocks.update({f"bolt {n}: its processing clock": sec(c) for n, c in before.bolt_take_clock.items()})
    clocks.update({f"bolt {n}: its idle deadline clock": sec(c) for n, c in before.bolt_waiting_clock.items()})
    clocks.update({f"bolt {n}: its time since recovery": sec(c) for n, c in before.bolt_up_clock.items()})
    clocks.update({f"bolt {n}: its time since failure": sec(c) for n, c in before.bolt_down_clock.items()})
    clocks.update({n: sec(c) for n, c in before.worker_clocks.items()  # section 9.5
                   if dying is None or n.split(":")[0].removeprefix("worker ") in dying})
    return clocks


def _emission(sp: dict[str, Any]) -> int:
    """A spout's emission E_s at a position: fresh tuples and replays (its default stream)."""
    by_stream = sp["emitted_by_stream"]
    return int(by_stream["default"]) if by_stream else int(sp["emitted"])


def _replays(bo: dict[str, Any]) -> dict[str, int]:
    return {s: r for s, r in (bo["replays"] or {}).items() if r}


def _loop_checks(rules: Rules, source: Source, first: Step, last: Step, befores: list[Before | None],
                 checked: list[str], problems: list[str], cancelled: Callable[[], bool]
                 ) -> tuple[dict[str, int], dict[str, int], _Seen]:
    """Section 3: what must repeat at loop_start and k+1, fairness, growing-queue conditions. The loop's
    positions are read in one pass (`_loop_pass`)."""
    k, loop_start = source.k, source.loop_start
    b_first, b_last = befores[loop_start], befores[k + 1]
    assert b_first is not None and b_last is not None  # kept by the replay

    def bad(text: str) -> None:
        problems.append(f"loop {loop_start}..{k}: {text}")

    mode = rules.replay_mode
    backlog_growth = {name: last.spouts[name]["backlog"] - first.spouts[name]["backlog"] for name in rules.period}
    growth = {name: last.bolts[name]["queue"] - first.bolts[name]["queue"] for name in rules.alpha}
    seen = _loop_pass(rules, source, backlog_growth, growth, mode == "paced", cancelled)
    for name in rules.period:
        a_s, z_s = first.spouts[name], last.spouts[name]
        if any(a_s[key] != z_s[key] for key in a_s if key != "backlog"):
            bad(f"spout {name} acts differently at {loop_start} and {k + 1}")
        if b_first.spout_last_size.get(name) != b_last.spout_last_size.get(name):
            bad(f"spout {name}: the last emission size does not repeat")
        # 7.4: a backlog may grow; under "paced" only when every loop emission replays n, never under "at-once"
        grow = backlog_growth[name]  # as recorded (the recurrence: certify_replay.py)
        if grow < 0:
            bad(f"spout {name}: its backlog shrinks by {-grow} per pass (section 7.4)")
        elif grow > 0 and mode != "paced":
            bad(f"spout {name}: its backlog grows by {grow} per pass under settings.replay '{mode}' "
                "(a growing backlog, section 7.4)")
        elif grow > 0:
            for pos in seen.short_replays.get(name, []):
                bad(f"spout {name}: its backlog grows by {grow} per pass but position {pos} "
                    "replays fewer than its fresh tuples (a growing backlog replays n at every emission, "
                    "section 7.4)")
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
        if growth[name] < 0:
            bad(f"bolt {name}: queue shrinks by {-growth[name]} per pass, so the loop cannot repeat forever")
    for w, held in b_first.workers.items():  # section 9.5: down, the replays held back, what happens at the ends
        if b_last.workers[w] != held:
            bad(f"worker {w}: the state before the loop does not repeat (down, or the replays held back)")
        if first.workers.get(w) != last.workers.get(w):
            bad(f"worker {w} acts differently at {loop_start} and {k + 1}")
    for (name, st), carry in b_first.stream_buffer.items():
        if b_last.stream_buffer[(name, st)] != carry:
            bad(f"{name}: the carry of stream {st} does not repeat")
    for problem in region_problems(rules, _clocks(b_first, seen.dying), _clocks(b_last, seen.dying), loop_start, k + 1):
        bad(problem)
    for name in rules.period:
        if name not in seen.emitting:
            bad(f"spout {name} never emits inside the loop")
    for name in rules.alpha:
        if name in seen.busy and name not in seen.taking:
            bad(f"bolt {name} has tuples but never takes (or fails) inside the loop")
        if growth[name] > 0 and name in rules.timer:
            bad(f"bolt {name} grows by {growth[name]} per pass, but its duration window's runs take every waiting "
                "tuple, so its queue never grows in a lasso (section 10.3)")
        if growth[name] > 0 and name in seen.failing:
            bad(f"bolt {name} grows by {growth[name]} per pass but fails or loses tuples inside the loop "
                "(Δ = 0 for such a bolt, section 7.4)")
        for text in seen.growing.get(name, []):
            bad(text)
    cached = _cache_checks(rules, b_first, b_last, bad)
    if not any(growth.get(name, 0) > 0 or cached.get(name, 0) > 0 for name in checked):
        bad(f"no checked queue grows ({', '.join(checked) or 'none checked'})")
    return growth, backlog_growth, seen


def _cache_checks(rules: Rules, b_first: Before, b_last: Before, bad: Callable[[str], None]) -> dict[str, int]:
    """Section 11 at the loop: a join's caches may grow, never shrink, and a growing one never ends a loop position
    empty (its branch never sets the min, so raising it changes no arrival). Gives each join's cache growth per
    pass, summed over its branches."""
    first, last = b_first.state, b_last.state
    assert first is not None and last is not None  # recorded with the state (`replay`'s record)
    grown: dict[str, int] = {}
    for name, branches in rules.joins.items():
        for branch in branches:
            delta = last.cache[name][branch] - first.cache[name][branch]
            where = f"join {name}: the cache of its branch {branch[0]}/{branch[1]}"
            if delta < 0:
                bad(f"{where} shrinks by {-delta} per pass, so the loop cannot repeat forever (section 11)")
            elif delta > 0 and last.emptied[(name, *branch)] != first.emptied[(name, *branch)]:
                bad(f"{where} grows by {delta} per pass but ends a loop position empty (a growing cache never "
                    "sets the min, section 11)")
            grown[name] = grown.get(name, 0) + max(delta, 0)
    return grown


@dataclass
class _Seen:
    """What one pass over the loop's positions found, per spout and bolt (section 3)."""

    emitting: set[str] = field(default_factory=set)
    busy: set[str] = field(default_factory=set)  # a bolt that receives or holds tuples
    taking: set[str] = field(default_factory=set)  # a bolt that takes or fails
    failing: set[str] = field(default_factory=set)  # a bolt that fails, loses tuples or is failed
    short_replays: dict[str, list[int]] = field(default_factory=dict)  # a growing backlog's emission replaying < n
    growing: dict[str, list[str]] = field(default_factory=dict)  # a growing queue's empty or partial positions
    dying: set[str] = field(default_factory=set)  # the workers that die in the loop (section 9.5)
    fails: dict[str, int] = field(default_factory=dict)  # a bolt's failures in the loop
    replays: dict[str, dict[str, int]] = field(default_factory=dict)  # the replays its losses add, per spout


def _loop_pass(rules: Rules, source: Source, backlog_growth: dict[str, int], growth: dict[str, int],
               paced: bool, cancelled: Callable[[], bool]) -> _Seen:
    """One pass over positions loop_start..k, in order (a compressed trace is expanded as it is read)."""
    seen = _Seen()
    growing_backlog = [n for n, g in backlog_growth.items() if g > 0] if paced else []
    growing = [n for n, g in growth.items() if g > 0]
    take_max, slide = rules.take_max, rules.slide
    loop = itertools.islice(source.steps(source.loop_start), source.k + 1 - source.loop_start)
    for pos, s in enumerate(loop, source.loop_start):
        if pos % 32 == 0 and cancelled():
            raise Cancelled
        seen.dying.update(w for w, rec in s.workers.items() if rec.get("death"))
        for name, sp in s.spouts.items():
            if sp["emitted"] > 0:
                seen.emitting.add(name)
        for name in growing_backlog:
            sp = s.spouts[name]
            if sp["emitted"] and sp["replayed"] * 2 != _emission(sp):
                seen.short_replays.setdefault(name, []).append(pos)
        for name, b in s.bolts.items():
            if b["queue"] >= slide[name] or b["arrivals"] > 0:
                seen.busy.add(name)
            if b["take"] or b["fail"]:
                seen.taking.add(name)
            if b["fail"] or b["lost"] or b["phase"] == "failed":
                seen.failing.add(name)
            if b["fail"]:
                seen.fails[name] = seen.fails.get(name, 0) + 1
            for spout, r in (b["replays"] or {}).items():
                added = seen.replays.setdefault(name, {})
                added[spout] = added.get(spout, 0) + r
        for name in growing:
            b = s.bolts[name]
            if b["queue"] < slide[name]:  # (1, or a count window's slide: section 10)
                seen.growing.setdefault(name, []).append(
                    f"bolt {name} grows but its queue is empty at position {pos}" if slide[name] == 1
                    else f"bolt {name} grows but its queue holds less than a slide at position {pos}")
            if b["take"] and b["batch"] != take_max[name]:
                seen.growing.setdefault(name, []).append(
                    f"bolt {name} grows but takes a partial batch of {b['batch']} at position {pos}")
    return seen


CANCELLED = "cancelled before the certificate was complete"


@paused_gc()  # a long lasso: app/core/gc_pause.py
def certify(trace: Trace | CompressedTrace | Any, checked: list[str] | None = None, threshold: int | None = None,
            cancelled: Callable[[], bool] | None = None) -> Certificate:
    """Replay `trace` against every rule; `ok` means it is a genuine witness of the property.

    `trace` may be a :class:`Trace`, a :class:`CompressedTrace` (read in its compressed form, never held
    expanded: `certify_source.py`) or decoded JSON of either; whatever it holds, the answer is a
    certificate (a malformed trace is rejected naming the rule and position), never an
    exception. `cancelled`, polled every few positions, abandons a long replay: the
    certificate is then not ok, with the single problem CANCELLED."""
    try:
        source = source_of(trace)
        if source.compressed:  # read in passes: a malformed position is named before any rule
            stop = cancelled or (lambda: False)
            for i, _ in enumerate(source.steps(0)):
                if i % 32 == 0 and stop():
                    raise Cancelled
        return _certify(source, checked, threshold, cancelled or (lambda: False))
    except Malformed as err:
        return Certificate(False, err.problems)
    except Cancelled:
        return Certificate(False, [CANCELLED])
    except Exception as err:  # a defect of the certifier: never mistaken for a certificate
        return Certificate(False, [f"certifier defect: {type(err).__name__}: {err}"])


def _certify(source: Source, checked: list[str] | None, threshold: int | None,
             cancelled: Callable[[], bool]) -> Certificate:
    problems: list[str] = []
    try:
        topo = parse_topology(source.topology)
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
    k, loop_start = source.k, source.loop_start
    if k < 1:
        return Certificate(False, [f"trace: k = {k}, at least 1 required"])
    if source.count != k + 2:
        return Certificate(False, [f"trace: {source.count} positions, expected k + 2 = {k + 2}"])
    if threshold is None and not 1 <= loop_start <= k:
        return Certificate(False, [f"trace: loop_start {loop_start} is outside 1..{k}"])
    if threshold is not None and loop_start != k + 1:
        return Certificate(False, [f"trace: a threshold witness has loop_start k + 1 = {k + 1}, not {loop_start}"])
    kept: dict[int, Step] = {}
    reached: list[bool] = []
    fails: list[bool] = []

    def watched() -> Iterator[Step]:  # keeps the loop's ends, and sees whether a checked queue reaches N
        for i, s in enumerate(source.steps(0)):
            if i in (loop_start, k + 1):
                kept[i] = s
            if threshold is not None and not reached and any(s.bolts[n]["queue"] >= threshold for n in checked):
                reached.append(True)
            if not fails and any(b["fail"] for b in s.bolts.values()):
                fails.append(True)
            yield s

    befores = replay(rules, watched(), problems, record={loop_start, k + 1}, cancelled=cancelled,
                     denominator=source.denominator)
    if len(befores) != source.count:
        return Certificate(False, problems)
    if threshold is not None:
        if not reached:
            problems.append(f"no checked queue reaches {threshold}")
        return Certificate(not problems, problems)
    growth, backlog_growth, seen = _loop_checks(rules, source, kept[loop_start], kept[k + 1], befores, checked,
                                                problems, cancelled)
    period = kept[k + 1].time - kept[loop_start].time
    if not problems:
        _unrolled(rules, source, befores, growth, backlog_growth, period, problems, cancelled)
    return Certificate(not problems, problems, _held(rules, growth, befores, loop_start, k), period, bool(fails),
                       seen.fails, {n: r for n, r in seen.replays.items() if n in seen.fails})


def _held(rules: Rules, growth: dict[str, int], befores: list[Before | None], loop_start: int,
          k: int) -> dict[str, int]:
    """What each bolt holds more per pass: its queue, and for a join its caches too (section 11)."""
    if not rules.joins:
        return growth
    first, last = befores[loop_start], befores[k + 1]
    assert first is not None and last is not None and first.state is not None and last.state is not None
    return {name: g + sum(last.state.cache[name][b] - first.state.cache[name][b] for b in rules.joins.get(name, []))
            for name, g in growth.items()}


def _unrolled(rules: Rules, source: Source, befores: list[Before | None], growth: dict[str, int],
              backlog_growth: dict[str, int], period: Fraction, problems: list[str],
              cancelled: Callable[[], bool]) -> None:
    """Unroll: the loop repeated with times shifted by its duration and queues raised by their growth.
    Clocks exactly equal: the shifted times are a concrete run, replay every rule. Clocks only
    region-equivalent: the same discrete steps are possible again in every pass (time-abstract
    bisimulation) but at other times, so replay the counter rules only. A growing backlog of replays
    (section 7.4) is raised like a queue. Each pass is read afresh from the trace, a position at a time."""
    k, loop_start = source.k, source.loop_start
    exact = _clocks(befores[loop_start]) == _clocks(befores[k + 1])  # type: ignore[arg-type]  # both kept

    grown = {n: g for n, g in growth.items() if g}
    backed = {n: g for n, g in backlog_growth.items() if g}

    def unrolled() -> Iterator[Step]:
        for p in range(1, UNROLL_PASSES + 1):
            if cancelled():
                raise Cancelled
            shift = p * period  # (a pass's raises, made once: the steps keep their components' order)
            raise_queue, raise_backlog = {n: p * g for n, g in grown.items()}, {n: p * g for n, g in backed.items()}
            for s in itertools.islice(source.steps(loop_start), k + 1 - loop_start):
                spouts, bolts = s.spouts, s.bolts
                if raise_backlog:
                    spouts = {**spouts, **{n: {**spouts[n], "backlog": spouts[n]["backlog"] + d}
                                           for n, d in raise_backlog.items()}}
                if raise_queue:
                    bolts = {**bolts, **{n: {**bolts[n], "queue": bolts[n]["queue"] + d}
                                         for n, d in raise_queue.items()}}
                yield Step(s.time + shift, spouts, bolts, s.workers)

    # positions 0..k of the unrolled run are the trace's own, replayed without a problem (timing only adds
    # problems, never changes the state): the replay resumes before k + 1 from the state recorded there
    before = befores[k + 1]
    assert before is not None and before.state is not None  # recorded: k + 1 is in `record`
    replay(rules, unrolled(), problems, label="unrolled position", timing=exact, record=set(),
           cancelled=cancelled, resume=(k + 1, before.state), denominator=source.denominator)
