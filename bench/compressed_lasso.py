"""Certifying a long lasso in its compressed form (`stormbound-trace/2`) against certifying its expanded positions.

Usage: .venv/bin/python bench/compressed_lasso.py [--passes 0,5,50]

The lasso is the one the simulation builds for B137 of the layered topology of 200 components, seed 0
(tests/layered_topologies.py; 35 components in its cone, about 2,000 positions), kept compressed as built
(docs/simulation.md, "The lasso kept compressed"; its loop is 1,430 positions); with `--passes N` its loop
is run N more times before it closes (one repeat item more: a longer lasso, just as genuine). Each row is
measured in its own process (so the peak memory is its own): the simulation, then the certificate of the
compressed lasso (`compressed`) or of the same lasso read whole as positions, the way every trace was
certified before (`expanded`; left out beyond MAX_EXPANDED_PASSES). Prints positions, components, items,
CPU seconds of the certificate (reading included) and the peak memory of the process. CPU seconds on a
shared 2-core machine: expect noise.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = "B137"
MAX_EXPANDED_PASSES = 5  # a pass of its loop is 1,430 positions x 35 components, about 60 MB read whole


def lasso_document(passes: int) -> dict:
    """The compressed lasso of TARGET, its loop run `passes` more times before it closes."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from layered_topologies import layered_topology

    from app.core.formats.trace import CompressedTrace, trace_data
    from app.core.tcn.network import build_network
    from app.core.tcn.simulate import build_lasso

    net = build_network(layered_topology(200, 0, emission="dvert", flow_denominator=8), [TARGET])
    trace = build_lasso(net, TARGET).trace
    assert isinstance(trace, CompressedTrace), type(trace)
    data = trace_data(trace)
    if passes:
        loop = trace.k + 1 - trace.loop_start
        growth = {n: g for n, g in trace.growth_per_loop().items() if g}
        data["positions"].append({"repeat": {"period": loop, "count": passes * loop,
                                             "time": str(trace.loop_duration()), "queue": growth}})
        data.update(k=trace.k + passes * loop, loop_start=trace.loop_start + passes * loop)
    return data


def run_one(mode: str, passes: int) -> dict:
    data = lasso_document(passes)
    from app.core.formats.trace import trace_from_data
    from app.core.formats.trace_compress import expand_trace_data
    from app.core.tcn.check.certify import certify

    components = len(data["topology"]["spouts"]) + len(data["topology"]["bolts"])
    items = len(data["positions"])
    cpu = time.process_time()
    if mode == "expanded":
        data = trace_from_data(expand_trace_data(data, limit=10**7, cells=10**9))
    cert = certify(data, checked=[TARGET])
    cpu = time.process_time() - cpu
    return {"mode": mode, "passes": passes, "positions": data["k"] + 2 if isinstance(data, dict) else data.k + 2,
            "items": items, "components": components, "ok": cert.ok, "cpu_s": round(cpu, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passes", default="0,5,50", help="extra loop passes, comma-separated")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return 0
    for passes in (int(p) for p in args.passes.split(",")):
        for mode in ("compressed", "expanded"):
            if mode == "expanded" and passes > MAX_EXPANDED_PASSES:
                print(f"{passes:>4} extra passes, expanded: left out (its positions would not fit in ~2 GB)")
                continue
            done = subprocess.run([sys.executable, __file__, "--one", mode, str(passes)], capture_output=True,
                                  text=True, cwd=ROOT)
            if done.returncode != 0:
                print(f"{passes:>4} extra passes, {mode}: failed: {done.stderr.strip()[-300:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{passes:>4} extra passes, {mode:>10}: {row['positions']:>7} positions x {row['components']} "
                  f"components ({row['items']} items), certified {row['ok']}, {row['cpu_s']} CPU s, "
                  f"peak {row['peak_mb']} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
