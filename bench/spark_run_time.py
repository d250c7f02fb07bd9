"""Where the time of a measured run goes: `stormbound run` phase by phase, cold and warm.

Times `stormbound run models/getting-started.storm.json --duration D` (default 10 s), as a
user runs it (a child `python -m app run ...`), and reads the phases the run folder
records (`run.json`, `result.phases`; app/spark/run_job.py `phase_times`):

* host_start: starting the Spark host process and its session (for a JVM master, the JVM),
* worker_start: from submitting the job until the last Spark task runs our code (Spark
  schedules the tasks and starts its Python workers),
* shared_start: from then until the tasks' common start (they meet and connect),
* run: the run itself, until the last task stops,
* collect: until the driver has every record,
* write: writing the run folder,
* other: the rest of the command's wall time (Python start, imports, reading the topology,
  stopping the host).

Routes (`--routes`, default all three):

* `cold`: `stormbound run` with a classic master (`--master`, default local[2]): a new host and
  JVM each time;
* `connect`: `stormbound run --master sc://localhost:PORT` against a Spark Connect server
  (`stormbound connect-server`, started once per source tree; its own start and the first
  run, which starts the server's Python workers, are reported apart);
* `host`: one Spark host kept alive (what the GUI does), a `run` request after another
  (no command start; the first request is reported apart).

`--tree DIR` (repeatable) times another checkout of the app too (e.g. `git worktree add` or
`git archive` of a commit), interleaved with this one so that both meet the same machine
load: each repetition runs every tree back to back, each first in turn. Prints one markdown table per route
(medians over `--repeat` runs, the load average beside each), `--json` for machine output.
The machine is shared: compare trees by their ratio, not across sessions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "getting-started.storm.json"
PHASES = ("host_start", "worker_start", "shared_start", "run", "collect", "write")
COLUMNS = (*PHASES, "other", "total")


def load() -> str:
    """The 1-minute load average (the machine is shared: every figure carries it)."""
    return Path("/proc/loadavg").read_text().split()[0]


def phases_of(out: Path) -> dict[str, float]:
    return dict(json.loads((out / "run.json").read_text())["result"].get("phases", {}))


def row(phases: dict[str, float], total: float) -> dict[str, Any]:
    r: dict[str, Any] = {name: phases.get(name, 0.0) for name in PHASES}
    r["other"] = max(0.0, total - sum(r.values()))
    r["total"] = total
    r["load"] = load()
    return r


def cli_run(tree: Path, out: Path, duration: float, master: str) -> dict[str, Any]:
    """One `python -m app run` in `tree`, timed from outside."""
    argv = [sys.executable, "-m", "app", "run", str(MODEL), "--duration", f"{duration:g}", "--out", str(out),
            "--force", "--json", "--master", master]
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True, env=child_env(tree))
    total = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: run failed ({done.returncode}): {done.stderr[-2000:]}")
    return row(phases_of(out), total)


def child_env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STORMBOUND_SPARK_MASTER")}
    env["PYTHONPATH"] = str(tree)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ConnectServer:
    """`stormbound connect-server` from `tree`, in its own process group."""

    def __init__(self, tree: Path, master: str):
        self.port = free_port()
        began = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app", "connect-server", "--port", str(self.port), "--master", master],
            cwd=tree, env=child_env(tree), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{tree}: the connect server exited ({self.process.returncode})")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.25)
        self.start_s = time.perf_counter() - began
        self.url = f"sc://localhost:{self.port}"

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGINT)  # Ctrl+C: the command stops its server
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        except ProcessLookupError:
            pass


HOST_SCRIPT = """
import json, sys, time
from pathlib import Path
from app.core.formats import load_topology
from app.spark.client import SparkHost
from app.spark.run_job import RunSpec

master, model, duration, count, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
spec = json.loads(RunSpec(topology=load_topology(model), duration_s=duration).model_dump_json())
began = time.perf_counter()
host = SparkHost(master=master)
host.start()
host_start = time.perf_counter() - began
try:
    for i in range(count):
        began = time.perf_counter()
        host.request("run", spec=spec, out=f"{out}/{i}", host_start_s=host_start if i == 0 else 0.0)
        print(json.dumps({"run": i, "total": time.perf_counter() - began + (host_start if i == 0 else 0.0)}),
              flush=True)
finally:
    host.close()
"""


def host_runs(tree: Path, folder: Path, duration: float, master: str, count: int) -> list[dict[str, Any]]:
    """`count` run requests to one Spark host started from `tree` (the GUI's route)."""
    done = subprocess.run([sys.executable, "-c", HOST_SCRIPT, master, str(MODEL), f"{duration:g}", str(count),
                           str(folder)], cwd=tree, capture_output=True, text=True, env=child_env(tree))
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: host runs failed: {done.stderr[-2000:]}")
    rows = []
    for line in done.stdout.splitlines():
        item = json.loads(line)
        rows.append(row(phases_of(folder / str(item["run"])), item["total"]))
    return rows


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {c: statistics.median(r[c] for r in rows) for c in COLUMNS}
    out["load"] = "/".join(r["load"] for r in rows)
    out["n"] = len(rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of each run (default 10)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per route and tree (default 3; the median)")
    parser.add_argument("--master", default="local[2]", help="classic master of the cold and host routes")
    parser.add_argument("--routes", default="cold,connect,host", help="comma-separated: cold, connect, host")
    parser.add_argument("--tree", action="append", type=Path, default=[],
                        help="another checkout to time too, interleaved with this one (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = [ROOT, *[t.resolve() for t in args.tree]]
    routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    folder = Path(tempfile.mkdtemp(prefix="stormbound-run-time-"))
    results: dict[str, dict[str, Any]] = {}
    try:
        if "cold" in routes:
            cold: dict[Path, list[dict[str, Any]]] = {t: [] for t in trees}
            for i in range(args.repeat):
                for t in trees if i % 2 == 0 else trees[::-1]:  # each tree first in turn: no order bias
                    cold[t].append(cli_run(t, folder / f"cold-{i}", args.duration, args.master))
            results["cold"] = {str(t): {"runs": rs, "median": median_row(rs)} for t, rs in cold.items()}
        if "connect" in routes:  # one server per tree, in turn (two JVMs at once would load the machine)
            connect: dict[str, Any] = {}
            for t in trees:
                server = ConnectServer(t, args.master)
                try:
                    first = cli_run(t, folder / "connect-first", args.duration, server.url)
                    rs = [cli_run(t, folder / f"connect-{i}", args.duration, server.url) for i in range(args.repeat)]
                finally:
                    server.stop()
                connect[str(t)] = {"server_start_s": server.start_s, "first": first, "runs": rs,
                                   "median": median_row(rs)}
            results["connect"] = connect
        if "host" in routes:
            hosts: dict[str, Any] = {}
            for t in trees:
                rs = host_runs(t, folder / f"host-{len(hosts)}", args.duration, args.master, args.repeat + 1)
                hosts[str(t)] = {"first": rs[0], "runs": rs[1:], "median": median_row(rs[1:])}
            results["host"] = hosts
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    if args.json:
        print(json.dumps({"duration_s": args.duration, "repeat": args.repeat, "routes": results}, indent=2))
        return 0
    print(f"`stormbound run` of {MODEL.name}, --duration {args.duration:g}, medians of {args.repeat} (seconds)")
    for route, per_tree in results.items():
        print(f"\n**{route}**\n")
        print("| tree | " + " | ".join(COLUMNS) + " | load (1 min) |")
        print("|---|" + "---:|" * len(COLUMNS) + "---|")
        for tree, data in per_tree.items():
            m = data["median"]
            print(f"| {Path(tree).name} | " + " | ".join(f"{m[c]:.2f}" for c in COLUMNS) + f" | {m['load']} |")
            if "first" in data:
                f = data["first"]
                extra = f" (server start {data['server_start_s']:.1f} s)" if "server_start_s" in data else ""
                print(f"| {Path(tree).name}, first run{extra} | " + " | ".join(f"{f[c]:.2f}" for c in COLUMNS)
                      + f" | {f['load']} |")
        if len(trees) > 1:
            base = per_tree[str(trees[-1])]["median"]["total"]
            for tree in trees[:-1]:
                ratio = per_tree[str(tree)]["median"]["total"] / base
                print(f"\ntotal {Path(tree).name} / {trees[-1].name}: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
