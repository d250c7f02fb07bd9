"""`stormbound repair` of a Flux file with many streams: CPU seconds of the whole command, as figures.

    python bench/repair_streams.py [--streams 1000,5000] [--tree CHECKOUT]

The file: one spout and 100 bolts, N streams from the spout (each its own `streamId`, spread over the bolts:
the node limit of docs/limits.md allows about 5,000); `repair --parallelism b0=3`. Each size runs in a child
process with `--tree`'s app (default: this one).
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


def flux_file(streams: int, bolts: int = 100) -> str:
    """A Flux file of one spout, `bolts` bolts and `streams` streams, each on a stream id of its own."""
    head = ("name: t\nspouts:\n  - id: s\n    className: org.S\n    parallelism: 1\n"
            "    config: {stormbound.rate: 10.0}\nbolts:\n")
    body = "".join(f"  - id: b{i}\n    className: org.B\n    parallelism: 1\n"
                   "    config: {stormbound.alpha: 0.001, stormbound.sigma: 1.0}\n" for i in range(bolts))
    links = "".join(f"  - from: s\n    to: b{i % bolts}\n    grouping: {{type: SHUFFLE, streamId: s{i}}}\n"
                    for i in range(streams))
    return head + body + "streams:\n" + links


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="1000,5000")
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in map(int, args.streams.split(",")):
            flux = Path(tmp) / f"f{n}.yaml"
            flux.write_text(flux_file(n), encoding="utf-8")
            done = subprocess.run([sys.executable, "-c", CHILD, str(flux), str(Path(tmp) / "r.yaml")],
                                  env={**os.environ, "PYTHONPATH": str(args.tree)}, cwd=args.tree,
                                  capture_output=True, text=True, timeout=3600)
            last = " ".join(done.stdout.strip().splitlines()[-1:] + done.stderr.strip().splitlines()[-1:])[:300]
            print(f"{n} streams ({flux.stat().st_size / 1e3:.0f} kB): {last}")


if __name__ == "__main__":
    main()
