"""Pausing Python's cyclic garbage collector while a long trace is built or replayed.

A lasso with failures on a published configuration has tens of thousands of positions, each
a handful of dicts and models that all stay alive until the trace is done. The collector runs
every few hundred allocations and, as the surviving objects pile up, keeps traversing them:
on cfg-4 with failures it doubled the time of simulation, trace building and certification
(bench/RESULTS.md). These objects hold no reference cycles (plain dicts, lists, pydantic
models of them), so reference counting frees them the moment they are dropped: pausing the
cyclic collector for such a stretch changes no result and frees nothing later than it would.

The GUI pauses it too while a search runs in a worker thread (app/gui/workers.py): the
collector runs in whichever thread allocates, and the GUI thread must not free a running
search's z3 objects (found in reference cycles) while the search builds terms in the same z3
context, which is not thread-safe. Those cycles are freed once the last search has ended.

The pause is process-wide (the collector is), counted (nested and concurrent pauses end when
the last one does, whichever started first) and only turns the collector back on when it was
on to begin with.

When the pause ends with more than MOVE_FROM objects allocated during it and still alive (a long
lasso kept, compressed, by the search, and what certified it), they are moved to the oldest
generation as they are (`gc.freeze` then `gc.unfreeze`: no traversal) rather than traversed by the
next young collection, which took seconds on a lasso of 10^5 positions past verify's time limit
(docs/verifier.md, "The time limit"); a full collection reaches them later, as it would once they
were promoted.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

MOVE_FROM = 200_000  # objects of the youngest generation at the end of a pause

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off (reference counting still frees)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if gc.get_count()[0] > MOVE_FROM:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
