"""The core verifier's cancel latency and the speed of a simulated lasso, as figures.

Usage: .venv/bin/python bench/cancel_latency.py [--repeats N]

The unit tests (tests/unit/test_tcn_search.py, tests/unit/test_tcn_simulate.py) check what a cancel
does (the search stops and says "cancelled"; it returns at all) and that the simulation builds the
lasso, not how fast: on a shared machine a wall-clock bound either fails under load or is too loose
to mean anything. The targets are measured here:

1. a cancel during the z3 search: simple-DIA-cfg-2 at k up to 20, cancelled after 1 s of solving
   (target: under 100 ms from `Search.cancel()` to the result);
2. a cancel during the simulation: the sigma-rounding topology of test_tcn_simulate.py (B at α 1.4,
   S at 1.0007 tuples/s), only its unaligned schedule, which closes no loop soon, cancelled after
   0.5 s (target: under 100 ms);
3. the 'dvert' sigma-rounding lasso (k = 32, minutes for the solver) found by `verify` through
   the simulation (target: well under a second).

Median, 90th percentile and max of the repeats; wall-clock on a shared machine: expect noise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.formats import load_topology  # noqa: E402
from app.core.tcn import search_lassos, simulate  # noqa: E402
from app.core.tcn.search import Search, SearchOptions, verify  # noqa: E402
from app.core.topology import Topology, parse_topology  # noqa: E402


def rounding_topology(emission: str, alpha_b: float = 1.05, rate: float = 1) -> Topology:
    """S (1/s) -> A (α 0.1, σ 3/4) -> B (α `alpha_b`): the topology of tests/unit/test_tcn_simulate.py."""
    return parse_topology({
        "name": "sigma-rounding", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 0.75, "parallelism": 1},
                  {"name": "B", "alpha": alpha_b, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0.01, "emission": emission},
        "verification": {"checked": ["B"]}})


def cancel_after(search: Search, wait_s: float) -> float | None:
    """Run `search` in a thread, cancel it after `wait_s`: seconds from the cancel to its result
    (None when it ended before the cancel or did not say it was cancelled)."""
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(result=search.run()))
    thread.start()
    time.sleep(wait_s)
    if not thread.is_alive():
        thread.join()
        return None
    cancelled_at = time.monotonic()
    search.cancel()
    thread.join(60)
    took = time.monotonic() - cancelled_at
    return took if "cancelled" in out["result"].message else None


def only_unaligned() -> Callable[[], None]:
    """Simulate only the unaligned schedule, without a cell bound or a simulation budget; returns the undo."""
    saved = (simulate.schedules, simulate.MAX_CELLS, search_lassos.SIMULATION_BUDGET_S,
             search_lassos.FIRST_PASS_CELLS)
    simulate.schedules = lambda net, target, cancelled: iter([simulate.unaligned_schedule(net, target)])
    simulate.MAX_CELLS, search_lassos.SIMULATION_BUDGET_S, search_lassos.FIRST_PASS_CELLS = 10**9, 60.0, 10**9

    def undo() -> None:
        (simulate.schedules, simulate.MAX_CELLS, search_lassos.SIMULATION_BUDGET_S,
         search_lassos.FIRST_PASS_CELLS) = saved
    return undo


def figures(name: str, values: list[float]) -> None:
    if not values:
        print(f"{name}: nothing measured")
        return
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    print(f"{name} over {len(values)}: median {statistics.median(values) * 1000:.0f} ms, "
          f"p90 {p90 * 1000:.0f} ms, max {max(values) * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="measures of each figure (default 5)")
    args = parser.parse_args()

    cfg2 = load_topology(ROOT / "models" / "simple-DIA-cfg-2.storm.json")
    solver = [cancel_after(Search(cfg2, SearchOptions(k=20, timeout_s=60)), 1.0) for _ in range(args.repeats)]
    figures("cancel during the z3 search", [t for t in solver if t is not None])

    undo = only_unaligned()
    try:
        slow = rounding_topology("exact", alpha_b=1.4, rate=1.0007)
        simulated = [cancel_after(Search(slow, SearchOptions(timeout_s=60)), 0.5) for _ in range(args.repeats)]
    finally:
        undo()
    figures("cancel during the simulation", [t for t in simulated if t is not None])

    lasso: list[float] = []
    for _ in range(args.repeats):
        started = time.monotonic()
        result = verify(rounding_topology("dvert"), SearchOptions(timeout_s=60))
        if result.verdict == "counterexample" and result.bolts["B"].method == "simulation":
            lasso.append(time.monotonic() - started)
    figures("'dvert' sigma-rounding lasso by simulation (verify)", lasso)
    return 0


if __name__ == "__main__":
    sys.exit(main())
