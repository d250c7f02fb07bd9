"""`check` of a topology with 20,000 declared streams: CPU and wall of the whole command, and of its latency part
(bench/RESULTS.md, "Latency bounds").

The document is built as tests/unit/test_hostile_inputs_4.py builds it: models/getting-started.storm.json with
20,000 declared spout streams of ratio 1, each subscribed by `split`. Both bolts grow, so `check` looks for timeout
witnesses (docs/latency.md, "Against the timeout"); the figures say what that search costs.

    .venv/bin/python bench/latency_streams.py [--streams 20000] [--runs 3]
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

ROOT = Path(__file__).resolve().parent.parent


def document(n: int) -> dict[str, object]:
    data = json.loads((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"))
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(n)]
    data["spouts"][0]["stream_ratio"] = {f"s{i}": 1.0 for i in range(n)}
    data["subscriptions"] += [{"source": "sentences", "target": "split", "stream": f"s{i}"} for i in range(n)]
    return data


def timed(args: list[str]) -> tuple[float, float, int]:
    """(CPU s, wall s, exit code) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "streams.storm.json"
        path.write_text(json.dumps(document(args.streams)), encoding="utf-8")
        latency = ("import sys, time; from app.cli.inputs import read_topology; "
                   "from app.core.latency.report import latency_report; t = read_topology(sys.argv[1]); "
                   "c = time.process_time(); w = time.perf_counter(); latency_report(t); "
                   "print(time.process_time() - c, time.perf_counter() - w)")
        print("run | check CPU (s) | check wall (s) | latency_report CPU (s) | its wall (s) | load average (1 min)")
        for k in range(args.runs):
            cpu, wall, code = timed([sys.executable, "-m", "app", "check", str(path)])
            out = subprocess.run([sys.executable, "-c", latency, str(path)], cwd=ROOT, capture_output=True,
                                 text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.split()
            print(f"{k + 1} | {cpu:.2f} | {wall:.2f} | {float(out[0]):.2f} | {float(out[1]):.2f} | "
                  f"{os.getloadavg()[0]:.1f}  (exit {code})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
