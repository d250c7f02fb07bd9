"""What one search looks for and how long it may take: the options of `app.core.tcn.search.Search`.

One frozen, checked object that the CLI's `verify`, the GUI's verification worker and
the tests build alike. It imports no z3, so the GUI thread can build it without loading
the solver. Unset bounds and the unset time limit come from the document's
verification settings when the search starts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from app.core.topology import Topology

LoopClocks = Literal["equal", "region"]


@dataclass(frozen=True)
class SearchOptions:
    """What one search looks for and how long it may take; None takes the document's verification settings."""

    k: int | None = None  # a single bound: only this k, no simulation-built lasso
    k_max: int | None = None  # deepen up to this bound (None: the document's k, else its k_max)
    timeout_s: float | None = None  # None: the document's timeout_s (which may be none)
    force_search: bool = False  # search even the bolts the rate check proves bounded
    threshold: int | None = None  # the threshold property (some queue reaches N) instead of growth
    # after a lasso, seconds to spend on the union of the checked bolts' cones looking for lassos in
    # which more checked queues grow together (None: only a short look inside its cone)
    widen_s: float | None = None
    # "equal" (readable clocks equal at loop_start and k+1) or "region" (region-equivalent there)
    loop_clocks: LoopClocks = "equal"
    # try a lasso built by simulation (docs/simulation.md) before the solver, for the growth
    # property without a single bound
    simulate: bool = True
    # the largest bound encoded (None: limits.MAX_K or $STORMBOUND_MAX_K; docs/limits.md): an encoding
    # grows linearly in k, so a huge k is refused instead of building for minutes
    max_k: int | None = None
    # for every bolt answered `unbounded`, also build a certified finite run in which its queue passes this
    # (docs/boundedness.md, "The threshold run"; None: none)
    flood_run: int | None = None

    def __post_init__(self) -> None:
        problems = [f"{name} must be at least {least}, got {value}"
                    for name, value, least in (("k", self.k, 2), ("k_max", self.k_max, 2),
                                               ("threshold", self.threshold, 1),
                                               ("max_k", self.max_k, 2), ("flood_run", self.flood_run, 1))
                    if value is not None and value < least]
        problems += [f"{name} must be positive, got {value}"
                     for name, value in (("timeout_s", self.timeout_s), ("widen_s", self.widen_s))
                     if value is not None and not value > 0]
        if self.loop_clocks not in ("equal", "region"):
            problems.append(f"loop_clocks must be 'equal' or 'region', got {self.loop_clocks!r}")
        if problems:
            raise ValueError("search options: " + "; ".join(problems))

    def with_changes(self, **changes: Any) -> SearchOptions:
        """A copy with some fields changed (checked again)."""
        return replace(self, **changes)

    def deepest(self, topo: Topology) -> int:
        """The largest bound this search tries on `topo`."""
        ver = topo.verification
        if self.k is not None:
            return self.k
        return self.k_max if self.k_max is not None else (ver.k if ver.k is not None else ver.k_max)
