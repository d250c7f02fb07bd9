"""The last flood pass runs within the time limit's overtime (docs/verifier.md, "The time limit"): a bolt whose
answer and whose source's lasso were both found before the limit gets its flood proof though another bolt's search
used the rest of the limit (random #83 of `bench/verdict_sweep.py`, seed 46; tests/unit/test_early_floods.py has
the pass before the search that now answers it first)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.tcn import search as search_module
from app.core.tcn.search import Search, SearchOptions, verify
from app.core.topology import parse_topology

# S → B1 (fails every 200 s at the soonest, replays at once; grows: a 45-position lasso) → B3, which B1 drains into
# at 4.949 tuples/s against the 4.71 B3 takes at its slowest; the linear program says no lasso grows B3
R83: dict[str, Any] = {
    "schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
    "bolts": [{"name": "B1", "alpha": 0.449, "sigma": 2.0, "parallelism": 1, "min_ttf": 200.0},
              {"name": "B3", "alpha": 0.386, "sigma": 0.5, "parallelism": 2}],
    "settings": {"tolerance": 0.1, "max_idle_time": 0, "emission": "exact", "failures": True,
                 "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"},
    "subscriptions": [{"source": "S", "target": "B1"}, {"source": "B1", "target": "B3"}]}


def test_the_last_flood_pass_runs_in_the_overtime(monkeypatch: pytest.MonkeyPatch) -> None:
    # B1's growth is proven by rates, so B3's flood now answers before the search (docs/verifier.md, step 2a); without
    # that pass, as for a source whose only evidence is a lasso, B3 waits for the last flood pass
    monkeypatch.setattr(Search, "_early_floods", lambda self, run: None)
    late: list[bool] = []  # the limit is "reached" from the solver's phase on, as when another bolt's search used it
    monkeypatch.setattr(search_module, "deepening_phase", lambda search, run: late.append(True))
    own = Search.stop_reason
    monkeypatch.setattr(Search, "stop_reason",
                        lambda self, elapsed: "time limit reached" if late else own(self, elapsed))
    result = verify(parse_topology(R83), SearchOptions(timeout_s=60))
    assert late and result.bolts["B1"].verdict == "counterexample"
    b3 = result.bolts["B3"]
    assert b3.verdict == "unbounded" and b3.method == "flood proof", b3.message
    assert "no lasso of any length makes B3's queue grow" in (b3.message or "")  # the linear program's, before
