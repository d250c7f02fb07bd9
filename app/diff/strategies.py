"""How the matcher matches: one strategy per kind of dependence, each one loop over the connected stream.

`all`, `none` and `same_key` (with structural or set_of_split equality) have fast
paths with a deque per key; every other combination takes the general path, a
list of unmatched items per side scanned on each arrival (the algorithm written
down directly).

Each loop keeps the counters of the :class:`Tally` in locals (CPython is much
faster with locals), loaded when it starts and stored back in `finally` together
with the item in hand, so that the matcher can name the item when the loop fails.
`Tally.load` and `Tally.store` are that shared setup and write-back; the few lines
that number an arrival stay in each loop on purpose (a shared numbering generator,
or per-side counts in a list, cost 10-50 % more per event on the `all` path).
Stored entries are (position, index in side, item); the side of a queue is kept
beside it. A per-side index costs a branch, not a list store.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from app.diff.results import Difference, StreamItem
from app.diff.streams import LEFT, RIGHT, SIDE_NAMES
from app.diff.values import freeze
from app.expr.limits import one_line

Entry = tuple[int, int, Any]  # (position in the connected stream, index in its side, item)
Events = Iterator[tuple[int, Any]]


class Tally:
    """The counters of one comparison, the first difference, and the last item a loop handled."""

    __slots__ = ("position", "counts", "matched", "unmatched", "peak", "difference", "last")

    def __init__(self) -> None:
        self.position = 0
        self.counts = [0, 0]
        self.matched = 0
        self.unmatched = 0
        self.peak = 0
        self.difference: Difference | None = None
        self.last: tuple[int, int, Any] = (LEFT, 0, None)  # side, index in side, item

    def load(self) -> tuple[int, int, int, int, int, int]:
        """(position, left count, right count, matched, unmatched, peak) for a loop's locals."""
        return self.position, self.counts[LEFT], self.counts[RIGHT], self.matched, self.unmatched, self.peak

    def store(self, position: int, n_left: int, n_right: int, matched: int, unmatched: int, peak: int,
              side: int, index: int, item: Any) -> None:
        """Write a loop's locals back (in its `finally`)."""
        self.position, self.counts[LEFT], self.counts[RIGHT] = position, n_left, n_right
        self.matched, self.unmatched, self.peak = matched, unmatched, peak
        self.last = (side, index, item)


class Strategy:
    """One way of matching: `run` feeds (side, item) pairs, `unmatched` lists what is left per side."""

    mode: ClassVar[str]

    def __init__(self, tally: Tally):
        self.tally = tally

    def run(self, events: Events) -> None:
        """Match the items until the events end or the first certain difference."""
        raise NotImplementedError

    def unmatched(self) -> tuple[list[Entry], list[Entry]]:
        """The unmatched entries of each side, in stream order."""
        raise NotImplementedError

    def fail(self, side: int, position: int, index: int, item: Any,
             other_side: int, other: tuple[Any, ...], reason: str) -> None:
        """Record the first certain difference: `item` conflicts with the stored entry `other`."""
        self.tally.difference = Difference(
            position=position,
            item=StreamItem(side=SIDE_NAMES[side], index=index, position=position, item=item),
            other=StreamItem(side=SIDE_NAMES[other_side], index=other[1], position=other[0], item=other[2]),
            reason=reason)


class AllStrategy(Strategy):
    """Every pair dependent (sequences): one queue of the side that is ahead."""

    mode = "all"

    def __init__(self, tally: Tally, canon: Callable[[Any], Any] | None):
        super().__init__(tally)
        self.canon = canon
        self.queue: deque[Entry] = deque()
        self.queue_side = LEFT

    def run(self, events: Events) -> None:
        tally, queue, queue_side, canon = self.tally, self.queue, self.queue_side, self.canon
        position, n_left, n_right, matched, unmatched, peak = tally.load()
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                if queue and queue_side != side:
                    front = queue[0]
                    if front[2] == item if canon is None else canon(front[2]) == canon(item):
                        queue.popleft()
                        matched += 1
                        unmatched -= 1
                        continue
                    self.fail(side, position, index, item, queue_side, front,
                              "the items differ, and every pair is dependent (order matters)")
                    break
                if not queue:
                    queue_side = side
                queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        finally:
            self.queue_side = queue_side
            tally.store(position, n_left, n_right, matched, unmatched, peak, side, index, item)

    def unmatched(self) -> tuple[list[Entry], list[Entry]]:
        sides: tuple[list[Entry], list[Entry]] = ([], [])
        sides[self.queue_side].extend(self.queue)
        return sides


class QueuePerValueStrategy(Strategy):
    """The fast paths that keep, per key or per value, one queue of the side that is ahead."""

    def __init__(self, tally: Tally):
        super().__init__(tally)
        self.slots: dict[Any, list[Any]] = {}  # key or value -> [side of the queue, deque of entries]

    def unmatched(self) -> tuple[list[Entry], list[Entry]]:
        sides: tuple[list[Entry], list[Entry]] = ([], [])
        for side, queue in self.slots.values():
            sides[side].extend(queue)
        for entries in sides:
            entries.sort(key=lambda e: e[0])
        return sides


class SameKeyStrategy(QueuePerValueStrategy):
    """Dependent iff same key: per key, one queue of the side that is ahead."""

    mode = "same_key"

    def __init__(self, tally: Tally, key_of: Callable[[Any], Any], canon: Callable[[Any], Any] | None):
        super().__init__(tally)
        self.key_of = key_of
        self.canon = canon

    def run(self, events: Events) -> None:
        tally, keys, key_of, canon = self.tally, self.slots, self.key_of, self.canon
        position, n_left, n_right, matched, unmatched, peak = tally.load()
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                key = key_of(item)
                try:
                    slot = keys.get(key)
                except TypeError:  # an unhashable key (a JSON list or object)
                    key = freeze(key)
                    slot = keys.get(key)
                if slot is None:
                    keys[key] = [side, deque(((position, index, item),))]
                else:
                    queue = slot[1]
                    if slot[0] != side and queue:
                        front = queue[0]
                        if front[2] == item if canon is None else canon(front[2]) == canon(item):
                            queue.popleft()
                            matched += 1
                            unmatched -= 1
                            continue
                        self.fail(side, position, index, item, slot[0], front,
                                  f"the items differ and have the same key {one_line(repr(key), 60)} "
                                  "(order within a key matters)")
                        break
                    slot[0] = side
                    queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        finally:
            tally.store(position, n_left, n_right, matched, unmatched, peak, side, index, item)


class NoneStrategy(QueuePerValueStrategy):
    """No pair dependent (multisets): per equal value, one queue of the side that is ahead; never fails early."""

    mode = "none"

    def __init__(self, tally: Tally, hashable: Callable[[Any], Any]):
        super().__init__(tally)
        self.hashable = hashable

    def run(self, events: Events) -> None:
        tally, bags, hashable = self.tally, self.slots, self.hashable
        position, n_left, n_right, matched, unmatched, peak = tally.load()
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                value = hashable(item)
                slot = bags.get(value)
                if slot is None:
                    bags[value] = [side, deque(((position, index, item),))]
                else:
                    queue = slot[1]
                    if slot[0] != side and queue:
                        queue.popleft()
                        matched += 1
                        unmatched -= 1
                        if not queue:
                            del bags[value]
                        continue
                    slot[0] = side
                    queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        finally:
            tally.store(position, n_left, n_right, matched, unmatched, peak, side, index, item)


class GeneralStrategy(Strategy):
    """Any dependence and equality: scan the other side's unmatched items on each arrival."""

    mode = "general"

    def __init__(self, tally: Tally, class_of: Callable[[Any], Any], dependent: Callable[[Any, Any], bool],
                 canon: Callable[[Any], Any] | None, equal: Callable[[Any, Any], bool] | None):
        super().__init__(tally)
        self.class_of, self.dependent = class_of, dependent
        self.canon, self.equal = canon, equal
        # per side: (position, index in side, item, dependence class, compared value)
        self.pending: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])

    def run(self, events: Events) -> None:
        tally, pending = self.tally, self.pending
        class_of, dep_fn = self.class_of, self.dependent
        canon, eq_fn = self.canon, self.equal
        position, n_left, n_right, matched, unmatched, peak = tally.load()
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                cls = class_of(item)
                value = item if canon is None else canon(item)
                others = pending[1 - side]
                for i, entry in enumerate(others):
                    if eq_fn(entry[2], item) if eq_fn is not None else entry[4] == value:
                        del others[i]
                        matched += 1
                        unmatched -= 1
                        break
                    if dep_fn(cls, entry[3]):
                        self.fail(side, position, index, item, 1 - side, entry,
                                  "the item is dependent on an earlier unmatched item of the other side "
                                  "that it does not equal")
                        break
                else:
                    pending[side].append((position, index, item, cls, value))
                    unmatched += 1
                    if unmatched > peak:
                        peak = unmatched
                if tally.difference is not None:
                    break
        finally:
            tally.store(position, n_left, n_right, matched, unmatched, peak, side, index, item)

    def unmatched(self) -> tuple[list[Entry], list[Entry]]:
        left, right = self.pending
        return [(e[0], e[1], e[2]) for e in left], [(e[0], e[1], e[2]) for e in right]
