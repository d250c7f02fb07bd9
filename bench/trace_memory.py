"""Peak memory and time of `stormbound plot` on small hostile traces and on long `/1` traces.

    PYTHONPATH=$PWD python bench/trace_memory.py [--tree DIR] [--cap-gb 6]

Cases: a 46..80 kB `stormbound-trace/2` of 200 bolts whose one repeat item stands for 199,991 positions
(refused by the cells limit now: positions x components), and `/1` traces of 2,000 and 20,000 positions of
five components, whose peak per position is what a `/1` plot costs. Each case runs `plot` in a child
process (under an address-space cap, so an old tree that blows up stops there) and prints its exit code,
peak resident memory (ru_maxrss) and wall time. `--tree` runs another checkout's `app` (the figures before).
Figures: bench/RESULTS.md, "Hostile traces".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def wide_repeat_trace(bolts: int = 200, count: int = 199_991, written: int = 2) -> dict[str, Any]:
    """One spout feeding `bolts` bolts, `written` positions and (`count`) one repeat item raising every queue."""
    topology = {"schema_version": 1, "name": "wide",
                "spouts": [{"kind": "spout", "id": "s", "name": "s", "rate": 1.0, "burst": 1}],
                "bolts": [{"kind": "bolt", "id": f"b{i}", "name": f"b{i}", "alpha": 1.0, "sigma": 1.0,
                           "parallelism": 1} for i in range(bolts)],
                "subscriptions": [{"id": f"e{i}", "source": "s", "target": f"b{i}", "grouping": "shuffle", "fields": []}
                                  for i in range(bolts)]}

    def position(t: int) -> dict[str, Any]:
        return {"time": str(t), "spouts": {"s": {"emit": True, "emitted": 1}},
                "bolts": {f"b{i}": {"queue": t, "arrivals": 1, "take": False, "batch": 0, "emit": False,
                                    "emitted": 0, "buffer": 0, "phase": "idle"} for i in range(bolts)}}

    items: list[Any] = [position(t) for t in range(written)]
    if count:
        items.append({"repeat": {"period": 1, "count": count, "time": "1",
                                 "queue": {f"b{i}": 1 for i in range(bolts)}}})
    total = written + count
    return {"format": "stormbound-trace/2", "topology": topology, "k": total - 2, "loop_start": total - 3,
            "positions": items}


def long_plain_trace(positions: int) -> dict[str, Any]:
    """A `/1` trace of `positions` positions (getting-started's lasso, its loop written out again and again)."""
    from app.core.formats.trace import load_trace

    trace = load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json")
    data = trace.model_dump(mode="json")
    loop = data["positions"][trace.loop_start:trace.k + 1]
    out = list(data["positions"][:trace.loop_start])
    shift = 0.0
    duration = float(trace.loop_duration())
    while len(out) < positions - 1:
        for p in loop:
            out.append({**p, "time": f"{float(p['time']) + shift:.6f}"})
        shift += duration
    out = out[:positions - 1]
    last = out[-(len(loop))]
    out.append({**last, "time": f"{float(last['time']) + duration:.6f}"})
    return {**data, "k": len(out) - 2, "loop_start": len(out) - 1 - len(loop), "positions": out}


def run(tree: Path, trace: Path, cap_gb: float) -> tuple[int, float, float]:
    """(exit code, peak MB, seconds) of `plot` on `trace` with `tree`'s app."""
    cap = int(cap_gb * 2**30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    code = ("import resource, sys\nfrom app.cli import main\ntry:\n    rc = main(sys.argv[1:])\n"
            "except MemoryError:\n    rc = 'MemoryError'\n"
            "print('rss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, 'rc', rc, file=sys.stderr)\n"
            "sys.exit(rc if isinstance(rc, int) else 3)\n")
    start = time.monotonic()
    command = [sys.executable, "-c", code, "plot", str(trace), "-o", str(trace.with_suffix(".png")), "--force"]
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, preexec_fn=limit, timeout=1800)
    seconds = time.monotonic() - start
    tail = [line for line in done.stderr.splitlines() if line.startswith("rss ")]
    rss = int(tail[-1].split()[1]) / 1024 if tail else float("nan")
    print(f"    {done.stderr.strip().splitlines()[0][:150] if done.stderr.strip() else ''}")
    return done.returncode, rss, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose app to run (default: this one)")
    parser.add_argument("--cap-gb", type=float, default=6.0, help="address-space cap of each run (GB)")
    parser.add_argument("--sizes", default="20000,150000", help="positions of the /1 traces of 3 components")
    parser.add_argument("--wide", default="1000", help="positions of the /1 traces of 201 components")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("/2: 200 bolts x 199,991 repeated positions", wide_repeat_trace())]
        cases += [(f"/1 of {n:,} positions (3 components)", long_plain_trace(n))
                  for n in map(int, args.sizes.split(","))]
        cases += [(f"/1 of {n:,} positions (201 components)", wide_repeat_trace(count=0, written=n))
                  for n in map(int, filter(None, args.wide.split(",")))]
        for name, doc in cases:
            path = Path(tmp) / "t.trace.json"
            path.write_text(json.dumps(doc))
            rc, mb, s = run(args.tree, path, args.cap_gb)
            per = f"; {mb * 1024 / len(doc['positions']):.2f} kB per position" if "/1" in name else ""
            print(f"{name}: {path.stat().st_size / 1e3:.0f} kB file, exit {rc}, peak {mb:.0f} MB, {s:.1f} s{per}")


if __name__ == "__main__":
    main()
