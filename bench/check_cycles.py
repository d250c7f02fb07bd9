"""`stormbound check` on a chain whose last bolt feeds the first back with σ = 1 (a cycle of gain 1), with
its headroom (bench/RESULTS.md, "One analysis per snapshot; cycles that amplify").

A spout feeds n bolts in a row (bench/rate_cycles.py's `chain`) and the last feeds the first with σ_back:
with σ_back = 1 the cycle amplifies (docs/boundedness.md, "Cycles that amplify"). Each row runs the CLI's
`check --json` in this process on the document written to a temporary file and prints its wall-clock and
CPU seconds, the machine's load beside them, and the statuses, headroom and grows_at it printed. Run it
with another tree's PYTHONPATH for the before figures (`--timeout` stops a run that takes too long).

    .venv/bin/python bench/check_cycles.py [--sizes 300 3000] [--sigma-back 1] [--timeout 120]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rate_cycles import chain  # noqa: E402


class _TimedOut(Exception):
    pass


def run_check(n: int, sigma_back: float, timeout_s: int) -> dict[str, object]:
    from app.cli import main

    topo = chain(n, True, sigma_back)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "chain.storm.json")
        Path(path).write_text(json.dumps(topo.model_dump(mode="json")))
        out = io.StringIO()

        def stop(*_: object) -> None:
            raise _TimedOut

        signal.signal(signal.SIGALRM, stop)
        signal.alarm(timeout_s)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                main(["check", "--json", path])
        except _TimedOut:
            return {"bolts": n, "wall_s": f"> {timeout_s}", "load": round(os.getloadavg()[0], 1)}
        finally:
            signal.alarm(0)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    data = json.loads(out.getvalue())
    room = data["headroom"]
    return {"bolts": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load": round(os.getloadavg()[0], 1),
            "statuses": sorted({b["status"] for b in data["bolts"].values()}),
            "headroom": room["headroom"] and room["headroom"]["exact"],
            "grows_at": room["grows_at"] and room["grows_at"]["exact"],
            "first_to_saturate": len(room["first_to_saturate"]),
            "no_suggestion": sum(1 for v in data["suggested_parallelism"].values() if v is None)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000])
    parser.add_argument("--sigma-back", type=float, default=1.0)
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args()
    for n in args.sizes:
        print(json.dumps(run_check(n, args.sigma_back, args.timeout)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
