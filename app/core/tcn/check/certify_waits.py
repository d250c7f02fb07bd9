"""The certifier's wait rules (app/core/tcn/check/certify_replay.py): how long tuples may wait at a bolt before it
takes them, by section 2.2's idle rule or a duration window's timer (docs/model.md section 10.3). Like the rest of
the certifier it shares no code with the encoder or the simulation."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from app.core.tcn.check.certify_rules import Rules


def wait_rules(rules: Rules, idle: int, ticks: Callable[[Fraction], int], sec: Callable[[int], Fraction],
               late: Callable[[int, str, str], None], state: Any) -> tuple[
        Callable[[int, str, str, int], None], Callable[[int, str, str, int, bool, bool, bool], None]]:
    """Section 2.2's idle rule, or a duration window's timer (section 10.3): (the deadline of the tuples waiting
    before a position, the clock of those left waiting after it). An idle bolt with tuples (a count window: a slide's
    worth) waits from its emit, or from the arrivals at an idle, empty bolt, at most max_idle_time; a timer's tuples
    wait while it holds any, idle or evaluating, from its last run (the take that started the evaluation they
    arrived in) or from their arrival at an idle, empty bolt, at most G."""
    waiting_since, expected_queue, processing, take_time = (
        state.waiting_since, state.expected_queue, state.processing, state.take_time)
    slide, timer = rules.slide, {name: ticks(g) for name, g in rules.timer.items()}

    def allowed(name: str) -> str:
        return (f"its timer's G = {rules.timer[name]} s (section 10.3)" if name in timer
                else f"max_idle_time {rules.idle}")

    def deadline(i: int, who: str, name: str, t: int) -> None:
        since = waiting_since[name]
        if since is not None and t - since > timer.get(name, idle):
            late(i, who, f"tuples wait {sec(t - since)} s, longer than {allowed(name)}")

    def wait(i: int, who: str, name: str, t: int, emitted: bool, was_processing: bool, was_waiting: bool) -> None:
        if name in timer:
            waiting = expected_queue[name] > 0
            if not waiting:
                waiting_since[name] = None
            elif not was_waiting:
                waiting_since[name] = take_time[name] if was_processing else t
        else:
            waiting = not processing[name] and expected_queue[name] >= slide[name]  # (a slide's worth: section 10)
            if not waiting:
                waiting_since[name] = None
            elif emitted or not was_waiting:
                waiting_since[name] = t
        since = waiting_since[name]
        if waiting and since is not None and t - since >= timer.get(name, idle):
            late(i, who, f"tuples wait until the next position beyond {allowed(name)}")

    return deadline, wait
