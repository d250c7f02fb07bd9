"""The z3 encoding with the failure model (docs/model.md section 7): what it costs, solver only.

Usage: .venv/bin/python bench/encode_failures.py [--repeats N] [--timeout S]

1. The shared topology of tests/unit/test_encode_failures.py (S at 1 tuple/s, A with α 0.9,
   C with α 0.1 failing every min_ttf = 2 s, reboot 1..2 s, paced replays): seconds to the
   lasso at k = 16 (equal and region clocks), and to UNSAT with failures off or replays "none".
2. Published configurations with failures switched on (their own min_ttf and reboot bounds):
   one encoding of the checked bolt's cone at the k of its lasso without failures, failures
   off against on, alternated in this process (the ratio is on / off; both must be sat, since
   a run without failures is a run with failures switched on).
Medians of the repeats; timings are wall-clock on a shared machine: expect noise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import z3

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.formats import load_topology  # noqa: E402
from app.core.tcn.encode import Encoding  # noqa: E402
from app.core.tcn.network import Network, build_network  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402

DVERT = ROOT / "tests" / "data" / "dvert"
PUBLISHED = [("simple-DIA-cfg-1", "B2", 24), ("simple-DIA-cfg-3", "B2", 24),
             ("focused-crawler-reduced-cfg-1", "WpDeserializer", 10),
             ("focused-crawler-reduced-cfg-2", "expander", 36)]


def shared(failures: bool = True, replay: str = "paced") -> Network:
    data: dict[str, Any] = {
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1},
                  {"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": 2}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                     "replay": replay, "failures": failures},
        "verification": {"checked": ["A"]}}
    return build_network(parse_topology(data), ["A"])


def solve(net: Network, k: int, timeout: float, **options: Any) -> tuple[float, str]:
    started = time.monotonic()
    enc = Encoding(net, k, z3.Context(), solver_options={"smt.arith.solver": 2, "timeout": int(timeout * 1000)},
                   **options)
    result = enc.solver.check()
    return time.monotonic() - started, str(result)


def median_of(repeats: int, run: Any) -> tuple[float, set[str]]:
    times, results = [], set()
    for _ in range(repeats):
        seconds, result = run()
        times.append(seconds)
        results.add(result)
    return statistics.median(times), results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per solver call")
    args = parser.parse_args()
    print("shared topology (min_ttf 2 s), k = 16")
    cases = [("failures on, equal clocks", shared(), {}), ("failures on, region clocks", shared(),
             {"loop_clocks": "region"}), ("failures off", shared(failures=False), {}),
             ("replay none", shared(replay="none"), {})]
    for label, net, options in cases:
        seconds, results = median_of(args.repeats, lambda net=net, options=options: solve(net, 16, args.timeout,
                                                                                          **options))
        print(f"  {label:28} {'/'.join(sorted(results)):8} {seconds:7.2f} s")
    if not DVERT.is_dir():
        print(f"published configurations skipped: {DVERT} is absent")
        return 0
    print("published configurations, failures off vs on (their min_ttf and reboot bounds)")
    for name, target, k in PUBLISHED:
        topo = load_topology(DVERT / f"icfem-{name}.json")
        on = topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})})
        nets = {"off": build_network(topo, [target]), "on": build_network(on, [target])}
        times: dict[str, list[float]] = {"off": [], "on": []}
        results: dict[str, set[str]] = {"off": set(), "on": set()}
        for _ in range(args.repeats):
            for side in ("off", "on"):
                seconds, result = solve(nets[side], k, args.timeout)
                times[side].append(seconds)
                results[side].add(result)
        off, on_s = statistics.median(times["off"]), statistics.median(times["on"])
        failing = sorted(nets["on"].failures.min_ttf) if nets["on"].failures else []
        print(f"  {name:30} {target:15} k={k:3} off {'/'.join(sorted(results['off']))} {off:7.2f} s  "
              f"on {'/'.join(sorted(results['on']))} {on_s:7.2f} s  ratio {on_s / off:5.2f}  failing {failing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
