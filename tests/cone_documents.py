"""A topology whose failing bolt a cycle elsewhere hides from the whole topology's rate check: shared by
tests/unit/test_cones.py (check and verify decide it on its cone, app/core/tcn/cones.py) and
tests/gui/test_unbounded_view.py (the app shows what check prints)."""

from __future__ import annotations

from typing import Any


def beside_a_loop(loop: bool, relay: bool = False) -> dict[str, Any]:
    """S (1/s) feeds C (α 0.1, σ 0, fails, replay none) and A, which retries half of what it processes (a
    self-loop) when `loop`. With `relay`, S feeds C through P (α 0.01, σ 1), whose fastest pace (111 tuples/s)
    outruns C: only the replays' fixpoint bounds C then, which needs an acyclic topology or cone."""
    via = "p" if relay else "s"
    return {"schema_version": 1, "name": "cones", "spouts": [{"id": "s", "name": "S", "rate": 1, "burst": 1}],
            "bolts": [{"id": "c", "name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": 5},
                      {"id": "a", "name": "A", "alpha": 0.3, "sigma": 0.5 if loop else 0, "parallelism": 1},
                      *([{"id": "p", "name": "P", "alpha": 0.01, "sigma": 1, "parallelism": 1}] if relay else [])],
            "subscriptions": [{"source": via, "target": "c"}, {"source": "s", "target": "a"},
                              *([{"source": "s", "target": "p"}] if relay else []),
                              *([{"source": "a", "target": "a"}] if loop else [])],
            "settings": {"tolerance": 0.1, "max_idle_time": 0, "failures": True, "replay": "none",
                         "min_reboot_time": 1, "max_reboot_time": 2, "emission": "exact"}}
