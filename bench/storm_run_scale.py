"""Cost of reading a Storm run folder: `analyze` of a recording, and `import metrics`, as they grow.

Writes, in a temporary folder, a recording of N polls 30 s apart (a three-bolt word count whose last
bolt slows down halfway, so a growth onset is searched for and found) and times `stormbound analyze`'s
core (app.measure.storm_figures.storm_run_figures) over it; N = 250 to 20,000 (a week of 30 s polls).
With `--metrics`, also writes a metrics-v2 CSV reporter folder of S samples and measures the peak
memory of `import metrics` in a child process (VmHWM). Prints a markdown table.

    python bench/storm_run_scale.py [--polls 250,1000,2000,20000] [--metrics 200000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.measure.storm_figures import storm_run_figures  # noqa: E402
from app.measure.storm_run import Poll, PollWriter, StormRunHeader, write_header  # noqa: E402

RATE = 100.0  # sentences/s
SIGMA = 5.0  # words per sentence


def pages(t: float, switch: float) -> tuple[dict, dict]:
    """The topology page and component pages of the word count at `t` s (all-time counts)."""
    spout = RATE * t
    words = spout * SIGMA
    count_exec = words if t <= switch else words * switch / t + 400.0 * (t - switch)
    count_exec = min(count_exec, words)
    bolts = [("split", "sentences", spout, words, 1.0), ("count", "split", count_exec, count_exec, 1.8),
             ("report", "count", count_exec, 0.0, 0.2)]
    topology = {"name": "wc", "id": "wc-1", "spouts": [{"spoutId": "sentences", "executors": 1, "emitted": round(spout),
                                                        "acked": round(spout), "failed": 0}],
                "bolts": [{"boltId": n, "executors": 1, "executed": round(e), "emitted": round(o),
                           "executeLatency": f"{lat:.3f}", "capacity": "0.5"} for n, _, e, o, lat in bolts]}
    components = {"sentences": {"executors": 1, "outputStats": [{"stream": "default", "emitted": round(spout),
                                                                 "acked": round(spout), "failed": 0}]}}
    for name, source, executed, out, latency in bolts:
        components[name] = {"executors": 1, "inputStats": [{"component": source, "stream": "default",
                                                            "executed": round(executed),
                                                            "executeLatency": f"{latency:.3f}"}],
                            "outputStats": [{"stream": "default", "emitted": round(out)}]}
    return topology, components


def recording(folder: Path, polls: int, every: float = 30.0) -> None:
    folder.mkdir(parents=True)
    write_header(folder, StormRunHeader(url="http://ui:8080", topology="wc", topology_id="wc-1", every_s=every,
                                        started=1.7e9))
    switch = every * polls / 2
    with PollWriter(folder) as writer:
        for i in range(polls):
            t = 3600.0 + i * every
            topology, components = pages(t, 3600.0 + switch)
            writer.append(Poll(poll=i + 1, t=1.7e9 + i * every, ok=True, topology=topology, components=components))


def metrics_folder(folder: Path, samples: int, executors: int = 10) -> None:
    folder.mkdir(parents=True)
    per = samples // executors
    for task in range(executors):
        name = f"storm.topology.wc-1.host.count.{task + 1}.6700-receive-queue.population.csv"
        rows = "".join(f"{1.7e9 + i * 10:.0f},{i % 50}\n" for i in range(per))
        (folder / name).write_text("t,value\n" + rows, encoding="utf-8")


def import_memory(source: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak resident MB of `stormbound import metrics` in a child process."""
    code = ("import sys, resource; from app.cli import main; rc = main(['-q', 'import', 'metrics', sys.argv[1], "
            "'--out', sys.argv[2]]); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(source), str(out)], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    return time.perf_counter() - start, int(done.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", default="250,500,1000,2000,20000")
    parser.add_argument("--metrics", type=int, default=0, help="samples of a metrics folder to import (0: none)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.polls.split(",")):
            folder = Path(tmp) / f"run-{n}"
            recording(folder, n)
            start = time.perf_counter()
            figures, _ = storm_run_figures(str(folder))
            took = time.perf_counter() - start
            count = next(b for b in figures.bolts if b.name == "count")
            rows.append((n, took, took / n * 1000, count.queue.verdict if count.queue else "-"))
        print("| polls | analyze core (s) | ms per poll | count's verdict |\n|---:|---:|---:|---|")
        for n, took, per, verdict in rows:
            print(f"| {n:,} | {took:.2f} | {per:.2f} | {verdict} |")
        if args.metrics:
            source = Path(tmp) / "metrics"
            metrics_folder(source, args.metrics)
            size = sum(f.stat().st_size for f in source.iterdir())
            wall, peak = import_memory(source, Path(tmp) / "imported")
            print(f"\nimport metrics: {args.metrics:,} samples, {size / 1e6:.1f} MB of CSV: {wall:.1f} s, "
                  f"peak {peak:.0f} MB resident")
            print(json.dumps({"samples": args.metrics, "csv_mb": size / 1e6, "wall_s": wall, "peak_mb": peak}))


if __name__ == "__main__":
    main()
