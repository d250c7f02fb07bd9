"""The rate check's previous cycle handling, for bench/rate_cycles.py's before/after figures only.

Before the exact solve (app/core/rates/cycles.py, `cycle_fixpoint`), every cycle was iterated
CYCLE_ROUNDS times; `old_iteration()` brings that back for the length of a `with` block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def old_iteration() -> Iterator[None]:
    """Inside the block the rate check iterates every cycle instead of solving it."""
    from app.core.rates import flows

    saved = flows.cycle_fixpoint
    flows.cycle_fixpoint = lambda *args, **kwargs: None  # type: ignore[assignment]  # the old path
    try:
        yield
    finally:
        flows.cycle_fixpoint = saved  # type: ignore[assignment]
