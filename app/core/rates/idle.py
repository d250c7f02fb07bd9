"""A warning when `settings.max_idle_time` is large against the α of some bolts."""

from __future__ import annotations

from fractions import Fraction

from pydantic import BaseModel

from app.core.numbers import exact
from app.core.rates.verdicts import fmt
from app.core.topology import Topology
from app.core.words import listed

# A bolt may wait up to max_idle_time before taking waiting tuples, so its smallest capacity is
# C / (α(1+τ) + max_idle). Above α/10 the idle wait costs the bolt more capacity than the default
# tolerance τ = 0.1 does (docs/model.md, "Choosing max_idle_time").
IDLE_SHARE_LIMIT = Fraction(1, 10)


class IdleWarning(BaseModel):
    """`settings.max_idle_time` is large against the α of some bolts (`check` says so on stderr and in --json)."""

    field: str = "settings.max_idle_time"
    max_idle_time: float
    threshold_s: float  # IDLE_SHARE_LIMIT × the smallest α: the largest max_idle_time that does not warn
    bolts: list[str]  # the bolts whose α/10 is below max_idle_time, fastest first
    message: str


def idle_warning(topo: Topology) -> IdleWarning | None:
    """A warning when max_idle_time exceeds α/10 of some bolt (None when it does not)."""
    idle = exact(topo.settings.max_idle_time)
    alphas = {b.name: exact(b.alpha) for b in topo.bolts if "alpha" not in b.unannotated}
    fast = sorted((a, n) for n, a in alphas.items() if idle > a * IDLE_SHARE_LIMIT)
    if not fast:
        return None
    alpha, name = fast[0]
    threshold = alpha * IDLE_SHARE_LIMIT
    tau = exact(topo.settings.tolerance)
    lost = idle / (alpha * (1 + tau) + idle)
    named = listed(f"{n} (α = {fmt(a)} s)" for a, n in fast)
    message = (f"max_idle_time = {fmt(idle)} s is more than α/10 of {named}: the model lets {name} wait that long "
               f"before each batch, which costs it {float(lost):.0%} of its smallest capacity; unless it really "
               f"idles that long, set max_idle_time to at most {fmt(threshold)} s (α/10 of the fastest bolt; "
               f"docs/model.md)")
    return IdleWarning(max_idle_time=float(idle), threshold_s=float(threshold), bolts=[n for _, n in fast],
                       message=message)
