"""`stormbound analyze` and `reliability` end to end, before (another checkout) and after (this one), in one run.

Generates a synthetic run folder once, with DuckDB (events.parquet and queues.parquet in a
temporary folder): `--events` events (default 5,000,000), 10 per spout tuple: spout S
emits a root, bolt A takes it, emits two anchored children and acks; bolt B takes and acks
each child (about one root in 97 fails: B fails its second child); the spout acks or
fails the root; B's queue is sampled 10 times a second. (`--log DIR` reuses a folder.)

Then runs, each as a user does (`python -m app ...` in a child process, its peak resident
memory from wait4):

* before: the checkout given by `--before` (default /work/main, the code this branch
  started from) with `--engine local` (its in-process engine);
* after: this checkout with its default engine (`auto`: the embedded engine, DuckDB);
* `--spark`: both checkouts with `--engine spark --master local[2]` (peak memory: the
  Python side only; the JVM is a child of it);
* a 10-event log with this checkout's defaults, `analyze` and `reliability`: wall time, and
  whether a java process appeared.

Prints a markdown table; `--json` for machine output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runs_pipeline import TEN_EVENTS  # bench/runs_pipeline.py: the 10-event log both benches time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVENTS_PER_ROOT = 10

GENERATE = """
COPY (
  WITH roots AS (SELECT range AS r, range / 1000.0 AS t0, 'r' || range AS root, hash(range) % 97 AS h
                 FROM range({roots}))
  SELECT e.* FROM roots, LATERAL (
    SELECT unnest([
      {{'t': t0, 'ev': 'spout_emit', 'comp': 'S', 'task': 1, 'tuple': root, 'msg': root, 'anchors': NULL,
        'reason': NULL}},
      {{'t': t0 + 0.010, 'ev': 'take', 'comp': 'A', 'task': 2, 'tuple': root, 'msg': NULL, 'anchors': NULL,
        'reason': NULL}},
      {{'t': t0 + 0.020, 'ev': 'bolt_emit', 'comp': 'A', 'task': 2, 'tuple': root || '.0', 'msg': NULL,
        'anchors': [root], 'reason': NULL}},
      {{'t': t0 + 0.020, 'ev': 'bolt_emit', 'comp': 'A', 'task': 2, 'tuple': root || '.1', 'msg': NULL,
        'anchors': [root], 'reason': NULL}},
      {{'t': t0 + 0.021, 'ev': 'bolt_ack', 'comp': 'A', 'task': 2, 'tuple': root, 'msg': NULL, 'anchors': NULL,
        'reason': NULL}},
      {{'t': t0 + 0.030 + (r % 7) * 0.001, 'ev': 'take', 'comp': 'B', 'task': 3, 'tuple': root || '.0',
        'msg': NULL, 'anchors': NULL, 'reason': NULL}},
      {{'t': t0 + 0.035 + (r % 7) * 0.001, 'ev': 'take', 'comp': 'B', 'task': 4, 'tuple': root || '.1',
        'msg': NULL, 'anchors': NULL, 'reason': NULL}},
      {{'t': t0 + 0.050, 'ev': 'bolt_ack', 'comp': 'B', 'task': 3, 'tuple': root || '.0', 'msg': NULL,
        'anchors': NULL, 'reason': NULL}},
      {{'t': t0 + 0.055, 'ev': CASE WHEN h = 0 THEN 'bolt_fail' ELSE 'bolt_ack' END, 'comp': 'B', 'task': 4,
        'tuple': root || '.1', 'msg': NULL, 'anchors': NULL, 'reason': NULL}},
      {{'t': t0 + 0.070, 'ev': CASE WHEN h = 0 THEN 'spout_fail' ELSE 'spout_ack' END, 'comp': 'S', 'task': 1,
        'tuple': NULL, 'msg': root, 'anchors': NULL, 'reason': CASE WHEN h = 0 THEN 'FAILED' END}}
    ], recursive := true)
  ) AS e
) TO '{events}' (FORMAT parquet)
"""

QUEUES = """
COPY (SELECT range / 10.0 AS t, 'B' AS comp, CAST(3 AS BIGINT) AS task, CAST(range / 100 AS BIGINT) AS queue
      FROM range({samples})) TO '{queues}' (FORMAT parquet)
"""



def generate(folder: Path, events: int) -> None:
    import duckdb

    roots = events // EVENTS_PER_ROOT
    con = duckdb.connect()
    con.execute(GENERATE.format(roots=roots, events=folder / "events.parquet"))
    con.execute(QUEUES.format(samples=int(roots / 1000 * 10), queues=folder / "queues.parquet"))
    con.close()


def _load() -> float:
    return os.getloadavg()[0]


def _java_running() -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if b"java" in (proc / "cmdline").read_bytes().split(b"\0")[0]:
                    found.add(int(proc.name))
            except OSError:
                continue
    return found


def run(checkout: Path, args: list[str]) -> dict[str, Any]:
    """`python -m app ARGS` in `checkout`: wall time, peak resident memory (MB), exit code, a JVM seen."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    java_before = _java_running()
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=checkout, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    jvm = False
    while proc.poll() is None:
        jvm = jvm or bool(_java_running() - java_before)
        time.sleep(0.05)
    wall = time.perf_counter() - began
    out, err = proc.communicate()
    return {"seconds": wall, "exit": proc.returncode, "jvm": jvm, "load": _load(),
            "stderr": err.decode(errors="replace").strip().splitlines()[-1:] if err.strip() else [],
            "stdout_tail": out.decode(errors="replace")[-300:]}


def run_measured(checkout: Path, args: list[str]) -> dict[str, Any]:
    """As `run`, with the child's peak resident memory from wait4 (the child alone, not a JVM it starts)."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app", *args], cwd=checkout, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    return {"seconds": wall, "exit": os.waitstatus_to_exitcode(status), "peak_mb": usage.ru_maxrss / 1024,
            "cpu_s": usage.ru_utime + usage.ru_stime, "load": _load(), "stderr": err.splitlines()[-1:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--before", type=Path, default=Path("/work/main"), help="the checkout measured as before")
    parser.add_argument("--log", type=Path, help="a run folder written by an earlier run")
    parser.add_argument("--spark", action="store_true", help="also this checkout on Spark local[2]")
    parser.add_argument("--skip-before", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    out: dict[str, Any] = {"load_start": _load(), "events_asked": args.events}
    folder = args.log
    temporary = None
    if folder is None:
        folder = temporary = Path(tempfile.mkdtemp(prefix="stormbound-engines-"))
        began = time.perf_counter()
        generate(folder, args.events)
        out["generated_s"] = time.perf_counter() - began
    folder = folder.resolve()
    from app.measure.logstream import count_records, log_bytes

    out["records"] = count_records(folder)
    out["parquet_mb"] = log_bytes(folder) / 1e6
    reliability_opts = ["--timeout", "30", "--max-pending", "100000"]
    rows: list[dict[str, Any]] = []
    try:
        for command, extra in (("analyze", []), ("reliability", reliability_opts)):
            if not args.skip_before:
                rows.append({"command": command, "engine": "before: in-process (--engine local)",
                             **run_measured(args.before, [command, str(folder), "--engine", "local", *extra])})
            rows.append({"command": command, "engine": "after: embedded (DuckDB, default)",
                         **run_measured(ROOT, [command, str(folder), *extra])})
            if args.spark and not args.skip_before:
                rows.append({"command": command, "engine": "before: Spark local[2]",
                             **run_measured(args.before, [command, str(folder), "--engine", "spark", "--master",
                                                          "local[2]", *extra])})
            if args.spark:
                rows.append({"command": command, "engine": "after: Spark local[2]",
                             **run_measured(ROOT, [command, str(folder), "--engine", "spark", "--master", "local[2]",
                                                   *extra])})
        tiny = Path(tempfile.mkdtemp(prefix="stormbound-tiny-")) / "ten.jsonl"
        tiny.write_text("".join(json.dumps(r) + "\n" for r in TEN_EVENTS))
        for command in ("analyze", "reliability"):
            rows.append({"command": f"{command} (10 events)", "engine": "after: default", **run(ROOT, [command,
                                                                                                      str(tiny)])})
        shutil.rmtree(tiny.parent, ignore_errors=True)
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    out["rows"] = rows
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{out['records']:,} records, {out['parquet_mb']:.0f} MB of Parquet; load at start {out['load_start']:.1f}")
    print()
    print("| command | engine | wall s | peak MB | exit | load |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        peak = f"{r['peak_mb']:,.0f}" if "peak_mb" in r else ("JVM started" if r.get("jvm") else "no JVM")
        print(f"| {r['command']} | {r['engine']} | {r['seconds']:.2f} | {peak} | {r['exit']} | {r['load']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
