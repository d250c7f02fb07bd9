"""`verify` and `check` on a chain of N bolts in which only the last one grows (every walk must be iterative).

Usage: .venv/bin/python bench/chain_verify.py [--sizes 1200,5000] [--timeout S] [--write DIR]

S (1 tuple/s) → B1 → … → BN, every bolt α 0.5, σ 1, one tuple per batch, the last one α 2 (it grows);
tolerance 0.1, max_idle 0. Prints per size the exit code, the last bolt's verdict and method, and the
seconds of `verify` and `check` (wall-clock on a shared 2-core machine: noisy). `--write DIR` only writes
the documents (chain-N.storm.json).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def chain(n: int) -> dict:
    """The document: a spout and a chain of n bolts, only the last one slower than its inflow."""
    bolts = [{"name": f"B{i}", "alpha": 2 if i == n else 0.5, "sigma": 1, "parallelism": 1} for i in range(1, n + 1)]
    subs = [{"source": "S", "target": "B1"}] + [{"source": f"B{i}", "target": f"B{i + 1}"} for i in range(1, n)]
    return {"schema_version": 1, "name": f"chain-{n}", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
            "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": 0.1, "max_idle_time": 0, "init_queues": 0, "emission": "exact"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1200,5000")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for n in sizes:
            (args.write / f"chain-{n}.storm.json").write_text(json.dumps(chain(n)))
        return
    tmp = Path(tempfile.mkdtemp(prefix="chains-"))
    for n in sizes:
        path = tmp / f"chain-{n}.storm.json"
        path.write_text(json.dumps(chain(n)))
        row = [f"{n} bolts"]
        for command in (["verify", "--json", "--timeout", str(args.timeout)], ["check", "--json"]):
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "app", command[0], str(path), *command[1:]],
                                  capture_output=True, text=True, cwd=ROOT, check=False)
            seconds = time.monotonic() - started
            detail = ""
            if command[0] == "verify" and done.returncode in (0, 1, 4):
                bolt = json.loads(done.stdout)["bolts"][f"B{n}"]
                detail = f" B{n}: {bolt['verdict']} ({bolt.get('method')})"
            elif done.returncode not in (0, 1, 4):
                detail = " " + (done.stderr.strip().splitlines() or ["?"])[-1][:120]
            row.append(f"{command[0]}: exit {done.returncode}{detail}, {seconds:.1f} s")
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
