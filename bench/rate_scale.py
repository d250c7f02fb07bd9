"""`stormbound check`'s work on large topologies (bench/RESULTS.md, "Rate check at scale").

Times what `check` computes (the rate check with its suggestion, and the headroom in Storm's terms) on
a spout feeding a chain of n bolts, with one back edge (a cycle through all of them) or not, and with one
failing bolt in the middle (failures on) or not. The baseline is the acyclic chain without failures of
the same size, measured in the same run: the ratio says what the cycle and the failure model cost.

    .venv/bin/python bench/rate_scale.py [--sizes 3000 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rate_cycles import chain  # noqa: E402

from app.core.topology import Topology  # noqa: E402


def variant(n: int, cycle: bool, failing: bool) -> Topology:
    topo = chain(n, cycle)
    if not failing:
        return topo
    bolts = [b.model_copy(update={"min_ttf": 100.0}) if i == n // 2 else b for i, b in enumerate(topo.bolts)]
    settings = topo.settings.model_copy(update={"failures": True, "min_reboot_time": 1.0, "max_reboot_time": 2.0})
    return topo.model_copy(update={"bolts": bolts, "settings": settings})


def check_work(topo: Topology) -> tuple[float, list[str]]:
    """Seconds for the rate check and the headroom, and the statuses found."""
    from app.core.headroom import headroom
    from app.core.rates import RateAnalysis

    start = time.perf_counter()
    rates = RateAnalysis(topo)
    report = rates.report()
    headroom(topo, rates)
    return time.perf_counter() - start, sorted({b.status for b in report.bolts.values()})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 10000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        base, _ = check_work(variant(n, False, False))
        for cycle in (False, True):
            for failing in (False, True):
                seconds, statuses = check_work(variant(n, cycle, failing)) if (cycle or failing) else (base, [])
                rows.append({"bolts": n, "cycle": cycle, "failing_bolt": failing, "seconds": round(seconds, 2),
                             "ratio_to_chain": round(seconds / base, 2), "statuses": statuses})
                if not args.json:
                    print(rows[-1], flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
