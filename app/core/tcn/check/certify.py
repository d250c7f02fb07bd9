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

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from app.core.errors import Cancelled
from app.core.formats.trace import ExpandError, Trace, expand_trace_data, is_compressed
from app.core.gc_pause import paused_gc
from app.core.tcn.check.certify_clocks import region_problems
from app.core.tcn.check.certify_replay import Before, Step, replay, steps_of
from app.core.tcn.check.certify_rules import Rules
from app.core.topology import parse_topology, unannotated_problems

UNROLL_PASSES = 3


@dataclass
class Certificate:
    """The certifier's answer: `ok` only when no rule is broken; `problems` name position and rule."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    growth_per_loop: dict[str, int] = field(default_factory=dict)
    loop_duration: Fraction | None = None


def _clocks(before: Before) -> dict[str, Fraction | None]:
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


def _loop_checks(rules: Rules, trace: Trace, steps: list[Step], befores: list[Before | None],
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
        grow = backlog_growth[name] = z_s["backlog"] - a_s["backlog"]  # as recorded (the recurrence: certify_replay.py)
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
        busy = any(s.bolts[name]["queue"] >= rules.slide[name] or s.bolts[name]["arrivals"] > 0 for s in loop)
        if busy and not any(s.bolts[name]["take"] or s.bolts[name]["fail"] for s in loop):
            bad(f"bolt {name} has tuples but never takes (or fails) inside the loop")
        if growth.get(name, 0) > 0 and any(s.bolts[name]["fail"] or s.bolts[name]["lost"]
                                           or s.bolts[name]["phase"] == "failed" for s in loop):
            bad(f"bolt {name} grows by {growth[name]} per pass but fails or loses tuples inside the loop "
                "(Δ = 0 for such a bolt, section 7.4)")
        if growth.get(name, 0) > 0:
            for offset, s in enumerate(loop):
                pos = loop_start + offset
                if s.bolts[name]["queue"] < rules.slide[name]:  # (1, or a count window's slide: section 10)
                    bad(f"bolt {name} grows but its queue is empty at position {pos}" if rules.slide[name] == 1
                        else f"bolt {name} grows but its queue holds less than a slide at position {pos}")
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
    except Cancelled:
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
    duration = [b.name for b in topo.bolts if b.window is not None and b.window.kind == "duration"]
    if duration:  # the model has count windows only (docs/model.md section 10)
        return Certificate(False, [f"topology: {', '.join(duration)} has a duration window, which the certifier has "
                                   "no rule for (docs/model.md section 10)"])
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
    steps = steps_of(trace, cancelled)
    befores = replay(rules, steps, problems, record={loop_start, k + 1}, cancelled=cancelled)
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
                raise Cancelled
            for s in steps[loop_start:k + 1]:
                unrolled.append(Step(s.time + p * period,
                                     {n: {**sp, "backlog": sp["backlog"] + p * backlog_growth[n]}
                                      if backlog_growth[n] else sp for n, sp in s.spouts.items()},
                                     {n: {**b, "queue": b["queue"] + p * growth[n]} if growth[n] else b
                                      for n, b in s.bolts.items()}))
        # positions 0..k of `unrolled` are the trace's own, replayed above without a problem (timing only
        # adds problems, never changes the state): the replay resumes before k + 1 from the state recorded there
        before = befores[k + 1]
        assert before is not None and before.state is not None  # recorded: k + 1 is in `record`
        replay(rules, unrolled, problems, label="unrolled position", timing=exact, record=set(),
               cancelled=cancelled, resume=(k + 1, before.state))
    return Certificate(not problems, problems, growth, period)
