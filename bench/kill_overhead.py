"""Does a run without --kill get slower? The task side and `analyze`, against a baseline commit, in the same run.

* task side: one in-process StormWorker (app/spark/tasks.py, standard library only) of a busy
  topology (a spout at `--rate` tuples/s in bursts of 10, two bolts of tiny α), run for
  `--seconds`, with this tree's tasks.py and with the baseline's (`git show BASE:app/spark/tasks.py`),
  alternately `--repeats` times. Reported: events and the CPU seconds of the process per
  100,000 events (a run is paced by wall-clock time, so CPU per event is what extra work shows in).
* analyze: `analyze_path_local` (DuckDB) over one synthetic Parquet log of `--events` events
  (S -> A (2 children) -> B, as bench/runs_pipeline.py), in a child process with this tree and
  with the baseline tree (`git archive BASE app`), alternately. Reported: median wall seconds.

    .venv/bin/python bench/kill_overhead.py --base 8e6f801
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _module_from(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def task_side(tasks_module, plan: dict) -> tuple[int, float]:
    """(events + samples recorded, CPU seconds of this process) for one in-process run."""
    cpu = time.process_time()
    rows = tasks_module.StormWorker(plan, 0, time.time()).run()
    return len(rows), time.process_time() - cpu


def busy_plan(rate: float, seconds: float) -> dict:
    from app.core.topology import Topology
    from app.spark.run_job import RunSpec, plan_of

    topo = Topology.model_validate({
        "name": "busy", "spouts": [{"name": "S", "rate": rate, "burst": 10}],
        "bolts": [{"name": "A", "alpha": 0.0005, "sigma": 2.0, "parallelism": 50},
                  {"name": "B", "alpha": 0.0005, "sigma": 0.0, "parallelism": 100}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}]})
    return plan_of(RunSpec(topology=topo, duration_s=seconds, message_timeout_s=30.0), workers=1)


def write_log(path: Path, roots: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict[str, list] = {k: [] for k in ("t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason")}

    def add(t, ev, comp, task, tup=None, msg=None, anchors=None, reason=None):
        for k, v in zip(cols, (t, ev, comp, task, tup, msg, anchors, reason), strict=True):
            cols[k].append(v)

    for r in range(roots):
        t, root = r / 1000.0, f"r{r}"
        add(t, "spout_emit", "S", 1, root, root)
        add(t + 0.01, "take", "A", 2, root)
        for k in (0, 1):
            add(t + 0.02, "bolt_emit", "A", 2, f"{root}.{k}", anchors=[root])
        add(t + 0.021, "bolt_ack", "A", 2, root)
        for k in (0, 1):
            add(t + 0.03 + 0.005 * k, "take", "B", 3 + k, f"{root}.{k}")
            add(t + 0.05 + 0.005 * k, "bolt_ack", "B", 3 + k, f"{root}.{k}")
        add(t + 0.07, "spout_ack", "S", 1, msg=root)
    pq.write_table(pa.table(cols), path / "events.parquet")
    n = int(roots / 1000 * 10)
    pq.write_table(pa.table({"t": [i / 10 for i in range(n)], "comp": ["B"] * n, "task": [3] * n,
                             "queue": [i // 100 for i in range(n)]}), path / "queues.parquet")
    return len(cols["t"])


ANALYZE = ("import sys, time; sys.path.insert(0, sys.argv[1]); from app.measure.analysis import analyze_path_local; "
           "t = time.perf_counter(); a = analyze_path_local(sys.argv[2]); print(time.perf_counter() - t, a.events)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="8e6f801", help="baseline commit (default: the branch point)")
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "app"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        old = _module_from(base / "app" / "spark" / "tasks.py", "tasks_base")
        new = _module_from(ROOT / "app" / "spark" / "tasks.py", "tasks_now")
        plan = busy_plan(args.rate, args.seconds)
        per: dict[str, list[tuple[int, float]]] = {"base": [], "now": []}
        for _ in range(args.repeats):
            for label, module in (("base", old), ("now", new)):
                per[label].append(task_side(module, plan))
        print("| task side (no kill) | runs | events per run (median) | CPU s per 100k events (median) |")
        print("|---|---:|---:|---:|")
        cpu = {}
        for label, runs in per.items():
            cpu[label] = statistics.median(c / n * 1e5 for n, c in runs)
            print(f"| {label} | {len(runs)} | {statistics.median(n for n, _ in runs):,.0f} | {cpu[label]:.3f} |")
        print(f"\nratio now/base CPU per event: {cpu['now'] / cpu['base']:.3f}\n")

        log = Path(folder) / "log"
        log.mkdir()
        n = write_log(log, args.events // 10)
        walls: dict[str, list[float]] = {"base": [], "now": []}
        for _ in range(args.repeats):
            for label, tree in (("base", base), ("now", ROOT)):
                out = subprocess.run([sys.executable, "-c", ANALYZE, str(tree), str(log)], check=True,
                                     capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}).stdout
                walls[label].append(float(out.split()[0]))
        print(f"| analyze, {n:,} events (DuckDB) | runs | wall s (median) |")
        print("|---|---:|---:|")
        for label, values in walls.items():
            print(f"| {label} | {len(values)} | {statistics.median(values):.2f} |")
        ratio = statistics.median(walls["now"]) / statistics.median(walls["base"])
        print(f"\nratio now/base analyze wall: {ratio:.3f}")


if __name__ == "__main__":
    main()
