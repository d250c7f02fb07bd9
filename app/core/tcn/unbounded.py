"""The bolts the instant rate check proves unbounded without a search, each with its checked certificate: the floods
(app/core/tcn/flood.py), then the replay storms (storm.py) and paced replay backlogs (paced.py) of the bolts no flood
answers, then the backlogs replayed at once (spill.py) of the bolts left. What `stormbound check` prints under
"Unbounded" and the app shows on the canvas and in its Verification panel before any Verify."""

from __future__ import annotations

from app.core.results import FloodCertificate, SpillCertificate, StormCertificate
from app.core.tcn.flood import FLOOD_BUDGET_S, instant_floods
from app.core.tcn.paced import instant_paced
from app.core.tcn.spill import instant_spills
from app.core.tcn.storm import instant_storms
from app.core.topology import Topology

__all__ = ["instant_unbounded"]


def instant_unbounded(topo: Topology, statuses: dict[str, str], budget_s: float = FLOOD_BUDGET_S
                      ) -> dict[str, FloodCertificate | StormCertificate | SpillCertificate]:
    """Per bolt proven unbounded from the rate check's `statuses`, its certificate: a flood first, then a storm (at
    once or paced: one replay mode per document), then a spill."""
    found: dict[str, FloodCertificate | StormCertificate | SpillCertificate] = dict(
        instant_floods(topo, statuses, budget_s))
    found.update({n: c for n, c in instant_storms(topo, statuses).items() if n not in found})
    found.update({n: c for n, c in instant_paced(topo, statuses).items() if n not in found})
    found.update({n: c for n, c in instant_spills(topo, statuses).items() if n not in found})
    return found
