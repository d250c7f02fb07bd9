"""Changes of pace inside one simulated run (app/core/tcn/simulate.py): a threshold run's switches, made once, and a
bolt that hastes while a failing bolt is down, back and forth (docs/simulation.md, "Haste"). Both change a bolt's
durations only at its EMIT or while it is idle with an empty queue, so no clock then reads the old durations and
the run stays legal. No z3 here; nothing in this module is shared with the certifier."""

from __future__ import annotations

import math
from typing import Any

from app.core.tcn.schedule import Schedule
from app.core.tcn.simulate_deaths import NEVER

__all__ = ["Hasting", "Switcher"]


def _free(run: Any, j: int, emits: list[bool]) -> bool:
    """Whether bolt `j` may take new durations now: up, and at its EMIT or idle with an empty queue."""
    return not run.down[j] and (emits[j] or (not run.processing[j] and run.queue[j] == 0
                                             and run.waiting_since[j] is None))


class Switcher:
    """The switches of `sched` not made yet (`pending`, in order, by bolt index, durations on the grid). Called
    at a position after the EMITs, it paces the hasting bolts (`haste`) and, at or after `sched.switch_at`, makes
    each bolt's next switch when it is due (`schedule.Switch`)."""

    def __init__(self, run: Any, sched: Schedule) -> None:  # (a bolt `only_failing` dropped has no switch)
        self.run = run
        self.at = 0 if sched.switch_at is None else math.ceil(sched.switch_at * run.scale)
        index = {name: j for j, name in enumerate(run.bolt_names)}
        self.pending = [] if sched.switch_at is None else [
            (index[w.bolt], int(w.processing * run.scale), int(w.delay * run.scale), w.eager,
             None if w.after is None else index[w.after]) for w in sched.switches if w.bolt in index]
        self.haste = Hasting(run, sched)

    def done(self, j: int) -> bool:
        """Whether bolt `j` has made all its switches."""
        return all(p[0] != j for p in self.pending)

    def __call__(self, t: int, fails: list[bool], recovers: list[bool], emits: list[bool]) -> None:
        self.haste(t, fails, recovers, emits)
        if not self.pending or t < self.at:
            return
        run, seen = self.run, set()
        for entry in list(self.pending):
            j, proc, delay, eager, after = entry
            if j in seen:
                continue
            seen.add(j)
            if after is not None and (not self.done(after) or run.queue[after] > 0):
                continue
            if _free(run, j, emits):
                run.proc[j], run.delay[j], run.eager[j] = proc, delay, eager
                self.pending.remove(entry)
                if j in run.plan:  # it never fails again (a failure is never forced, docs/model.md 7.2)
                    run.next_fail[j] = NEVER


class Hasting:
    """The bolts of `sched.haste` (`schedule.Haste`): called at every position after the EMITs, a hasting bolt
    takes its hasty durations (eager) while its watched bolt fails or is down at this position, and its schedule's
    own otherwise, each change at its first moment free to change (`_free`), until the threshold run's switches
    (`sched.switch_at`), which then set the paces. `key()`: the pace each is in, part of the hashed state (the
    clocks alone do not tell which duration a batch in progress ends by)."""

    def __init__(self, run: Any, sched: Schedule) -> None:
        index = {name: j for j, name in enumerate(run.bolt_names)}
        self.run = run
        self.at = None if sched.switch_at is None else math.ceil(sched.switch_at * run.scale)
        self.bolts = [(index[b], index[h.watch], (int(h.processing * run.scale), int(h.delay * run.scale), True))
                      for b, h in sched.haste.items() if b in index and h.watch in index]
        self.own = {j: (run.proc[j], run.delay[j], run.eager[j]) for j, _, _ in self.bolts}
        self.fast = {j: False for j, _, _ in self.bolts}

    def key(self) -> tuple[bool, ...]:
        return tuple(self.fast[j] for j, _, _ in self.bolts)

    def __call__(self, t: int, fails: list[bool], recovers: list[bool], emits: list[bool]) -> None:
        run = self.run
        if self.at is not None and t >= self.at:
            return
        for j, k, hasty in self.bolts:
            want = fails[k] or (run.down[k] and not recovers[k])
            if want != self.fast[j] and _free(run, j, emits):
                run.proc[j], run.delay[j], run.eager[j] = hasty if want else self.own[j]
                self.fast[j] = want
