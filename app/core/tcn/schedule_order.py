"""A target's schedules (`schedule.schedules`), generated once per verification and replayed to every simulation
of that target (docs/simulation.md, "Generated once per verification"): the first pass, a longer one, the
failure-cycle rounds and both trace passes (app/core/tcn/search_lassos.py) play the same schedules in the same
order, and each generated them again before, which on a cone of 152 bolts took longer than the simulations.

A generation polled as cancelled may have ended early or ranked from a list it cut short (`schedules` builds some
lists in full before yielding), so it is never replayed: the next call generates afresh, as every call did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from app.core.tcn.network import Network
from app.core.tcn.schedule import Schedule, schedules
from app.core.tcn.schedule_haste import haste_schedules


class _Generation:
    """One run of `schedules`: what it has yielded so far, and whether a poll of `cancelled` said stop."""

    def __init__(self, net: Network, target: str) -> None:
        self.made: list[Schedule] = []
        self.over = False  # the generator has ended
        self.spoiled = False  # a poll of `cancelled` was true: not the order an uncancelled generation gives
        self.asked: Callable[[], bool] = lambda: False  # the caller pulling now: its `cancelled`
        self.rest = schedules(net, target, self.polled, haste=haste_schedules(net, target))

    def polled(self) -> bool:
        if self.asked():
            self.spoiled = True
            return True
        return False


class ScheduleOrder:
    """`schedules(net, target, cancelled)` for each call of :meth:`played`, generated lazily once (see module
    docstring): the schedules already generated are replayed, the rest pulled from the same generator as a caller
    reaches them."""

    def __init__(self, net: Network, target: str) -> None:
        self.net, self.target = net, target
        self._current: _Generation | None = None

    def played(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[Schedule]:
        """The target's schedules in order, as `schedules(self.net, self.target, cancelled)` yields them."""
        gen = self._current
        if gen is None:
            gen = self._current = _Generation(self.net, self.target)
        i = 0
        while True:
            if i < len(gen.made):
                i += 1
                yield gen.made[i - 1]
                continue
            if gen.over:
                return
            gen.asked = cancelled
            sched = next(gen.rest, None)
            if gen.spoiled and self._current is gen:  # this caller gets what it would have; no later one does
                self._current = None
            if sched is None:
                gen.over = True
                return
            gen.made.append(sched)
