"""`stormbound repair` of a Flux file with many streams: CPU seconds of the whole command, as figures.

    python bench/repair_streams.py [--streams 1000,5000] [--tree CHECKOUT]

The file (tests/unit/test_hostile_traces.py's `flux_text`): one spout and N bolts, each reading the spout's
stream; `repair --parallelism b0=3`. Each size runs in a child process with `--tree`'s app (default: this one).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = ("import sys, time\nfrom app.cli import main\nt = time.process_time()\n"
         "rc = main(['-q', 'repair', sys.argv[1], '--parallelism', 'b0=3', '-o', sys.argv[2], '--force'])\n"
         "print(f'rc {rc} cpu {time.process_time() - t:.1f}')\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="1000,5000")
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    from tests.unit.test_hostile_traces import flux_text

    with tempfile.TemporaryDirectory() as tmp:
        for n in map(int, args.streams.split(",")):
            flux = Path(tmp) / f"f{n}.yaml"
            flux.write_text(flux_text([f"b{i}" for i in range(n)]), encoding="utf-8")
            done = subprocess.run([sys.executable, "-c", CHILD, str(flux), str(Path(tmp) / "r.yaml")],
                                  env={**os.environ, "PYTHONPATH": str(args.tree)}, cwd=args.tree,
                                  capture_output=True, text=True, timeout=3600)
            last = (done.stdout.strip().splitlines() or [done.stderr.strip()[-200:]])[-1]
            print(f"{n} streams ({flux.stat().st_size / 1e3:.0f} kB): {last}")


if __name__ == "__main__":
    main()
