"""The rate check with failures on against the same check with failures off (bench/RESULTS.md,
"Rate check under failures").

Rows: the published D-VerT configurations (tests/data/dvert, in the
repository) with their own min_ttf and reboot bounds switched on, and chains of n bolts with
every tenth bolt failing. Each row times `rate_check` (the report, the parallelism suggestion,
and with failures the arrival curves, their fixpoint and the nominal replays) in this process,
failures off first (the baseline, same run), and gives the ratio and the statuses.

    .venv/bin/python bench/rate_failures.py [--sizes 300 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.topology import Topology, parse_topology  # noqa: E402

DVERT = ROOT / "tests" / "data" / "dvert"


def chain(n: int) -> Topology:
    bolts = [{"name": f"b{i}", "alpha": 0.01, "sigma": 0.5 if i % 3 == 0 else 1, "parallelism": 2,
              **({"min_ttf": 50} if i % 10 == 0 else {})} for i in range(n)]
    subs = [{"source": "s", "target": "b0"}] + [{"source": f"b{i - 1}", "target": f"b{i}"} for i in range(1, n)]
    return parse_topology({"name": f"chain-{n}", "spouts": [{"name": "s", "rate": 10}], "bolts": bolts,
                           "subscriptions": subs,
                           "settings": {"tolerance": 0.1, "max_idle_time": 0, "min_reboot_time": 1,
                                        "max_reboot_time": 2, "emission": "dvert"}})


def switched(topo: Topology, on: bool) -> Topology:
    return topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": on})})


def timed(topo: Topology) -> tuple[float, dict[str, int]]:
    from app.core.rates import rate_check

    start = time.perf_counter()
    report = rate_check(topo)
    seconds = time.perf_counter() - start
    counts: dict[str, int] = {}
    for b in report.bolts.values():
        counts[b.status] = counts.get(b.status, 0) + 1
    return seconds, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from app.core.formats import load_topology

    cases: list[tuple[str, Topology]] = []
    if DVERT.is_dir():
        for path in sorted(DVERT.glob("*.json")):
            try:
                topo = load_topology(str(path))
            except Exception:  # noqa: BLE001 - not a configuration (the expected-outcomes table)
                continue
            if any(b.min_ttf is not None for b in topo.bolts):
                cases.append((path.stem, topo))
    cases += [(f"chain of {n} (every 10th fails)", chain(n)) for n in args.sizes]
    rows = []
    for name, topo in cases:
        off_s, off = timed(switched(topo, False))
        on_s, on = timed(switched(topo, True))
        rows.append({"case": name, "bolts": len(topo.bolts), "off_s": round(off_s, 3), "on_s": round(on_s, 3),
                     "ratio": round(on_s / off_s, 1) if off_s else None, "off": off, "on": on})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| case | bolts | failures off (s) | on (s) | ratio | statuses off | statuses on |")
        print("|---|---:|---:|---:|---:|---|---|")
        for r in rows:
            print(f"| {r['case']} | {r['bolts']} | {r['off_s']} | {r['on_s']} | {r['ratio']}x | "
                  f"{', '.join(f'{k} {v}' for k, v in sorted(r['off'].items()))} | "
                  f"{', '.join(f'{k} {v}' for k, v in sorted(r['on'].items()))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
