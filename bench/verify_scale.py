"""The verifier on seeded layered topologies of growing size (tests/layered_topologies.py).

Usage: .venv/bin/python bench/verify_scale.py [--sizes 10,30,60,100,200] [--seeds 0] [--timeout S]
       [--emission dvert|exact] [--flow-denominator N|none] [--no-simulation] [--markdown]

Each topology is verified in its own process (so peak memory is its own) with every bolt
checked: the rate check proves most of them bounded, and the two overloaded ones deep in the
graph (rate check: `grows`) need a certified lasso. Prints per topology: components, components
kept (the union of the searched cones), each growing bolt's verdict (method, k), seconds (wall and
CPU of the verification, with the 1-minute load average at its end) and peak memory. Timings are
wall-clock on a shared 2-core machine: expect noise.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_one(size: int, seed: int, timeout: float, emission: str, denominator: int | None, simulate: bool) -> dict:
    """Generate and verify one topology in this process; the result as plain data."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from layered_topologies import layered_topology

    from app.core.rates import rate_check
    from app.core.tcn.search import SearchOptions, verify

    topo = layered_topology(size, seed, emission=emission, flow_denominator=denominator)
    growing = [n for n, b in rate_check(topo).bolts.items() if b.status == "grows"]
    started, cpu = time.monotonic(), time.process_time()
    result = verify(topo, SearchOptions(timeout_s=timeout, simulate=simulate))
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    bolts = {n: {"verdict": v.verdict, "method": v.method, "k": v.k, "certified": v.certified}
             for n, v in result.bolts.items() if n in growing or v.verdict not in ("bounded",)}
    return {"components": len(topo.components), "kept": len(result.kept), "growing": growing, "bolts": bolts,
            "all_certified": all(bolts[n]["verdict"] == "counterexample" and bolts[n]["certified"] for n in growing),
            "seconds": round(seconds, 2), "cpu_s": round(cpu, 2), "load": round(os.getloadavg()[0], 1),
            "peak_mb": round(peak_mb), "verdict": result.verdict,
            "notes": [n for n in result.notes if not n.startswith(("cone of influence", "not searched"))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,30,60,100,200", help="components per topology, comma-separated")
    parser.add_argument("--seeds", default="0", help="generator seeds, comma-separated")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per topology")
    parser.add_argument("--emission", choices=("dvert", "exact"), default="dvert")
    parser.add_argument("--flow-denominator", default="8", dest="denominator",
                        help="σ products times this are whole numbers ('none': any σ; see tests/layered_topologies.py)")
    parser.add_argument("--no-simulation", action="store_true", help="the solver only (no simulated lassos)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--one", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        size, seed, timeout, emission, denominator, simulate = args.one
        print(json.dumps(run_one(int(size), int(seed), float(timeout), emission,
                                 None if denominator == "none" else int(denominator), simulate == "1")))
        return 0
    rows = []
    for size in (int(x) for x in args.sizes.split(",")):
        for seed in (int(x) for x in args.seeds.split(",")):
            proc = subprocess.run([sys.executable, __file__, "--one", str(size), str(seed), str(args.timeout),
                                   args.emission, args.denominator, "0" if args.no_simulation else "1"],
                                  capture_output=True, text=True, cwd=ROOT)
            if proc.returncode != 0:
                print(f"{size}/{seed}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                continue
            row = {"size": size, "seed": seed, **json.loads(proc.stdout)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)

    def verdicts(row: dict) -> str:
        return "; ".join(f"{n}: {row['bolts'][n]['verdict']} ({row['bolts'][n]['method']}, k = {row['bolts'][n]['k']})"
                         for n in row["growing"])

    if args.markdown:
        print("| components | seed | kept | growing bolts: verdict (method, k) | all certified | seconds | CPU s | "
              "load | peak MB |")
        print("|---:|---:|---:|---|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['components']} | {r['seed']} | {r['kept']} | {verdicts(r)} | {r['all_certified']} | "
                  f"{r['seconds']} | {r['cpu_s']} | {r['load']} | {r['peak_mb']} |")
    else:
        for r in rows:
            print(f"{r['components']:4} seed {r['seed']}: kept {r['kept']:3} | {verdicts(r)} | "
                  f"{r['seconds']:.2f} s ({r['cpu_s']:.2f} CPU s, load {r['load']}) {r['peak_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
