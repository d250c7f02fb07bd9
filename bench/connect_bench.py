"""Spark Connect against a classic session, through the Spark host process (what the CLI and the app use).

Writes a synthetic event log of `--events` events once (Parquet, the generator of
bench/runs_pipeline.py), then, for a classic `local[2]` session and for a Spark Connect
server running `local[2]` on this machine (one after the other, never both at once),
times through `app.spark.client.SparkHost`:

* attach: starting the host until it is ready (JVM start for classic; for Connect the
  server is already up, its own start is reported apart),
* analyze and reliability over the Parquet log,
* a `--run-seconds` run of models/getting-started.storm.json on 2 Spark tasks: the
  overhead is the wall time beyond the run's duration.

Then the Connect upload path: the first `--upload-events` events as JSON Lines, analysed
with the server addressed as localhost (it reads the file) and as 127.0.0.2 (counts as
another machine: the host reads the log and uploads it). Prints a markdown table with
Connect / classic ratios; `--json` for machine output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from runs_pipeline import EVENTS_PER_ROOT, generate  # noqa: E402  # after the sys.path line

from app.core.formats import load_topology  # noqa: E402  # after the sys.path line
from app.measure.reliability import ReliabilityConfig  # noqa: E402  # after the sys.path line
from app.spark.client import SparkHost  # noqa: E402  # after the sys.path line
from app.spark.run_job import RunSpec  # noqa: E402  # after the sys.path line

CONFIG = ReliabilityConfig(message_timeout_s=30, max_spout_pending=100_000, ackers=1,
                           subscribers={"S": ["A"], "A": ["B"]})


def measure(master: str, folder: Path, run_seconds: float, out: Path) -> dict[str, float]:
    """attach, analyze, reliability and run times (seconds) through a host on `master`."""
    row: dict[str, float] = {}
    began = time.perf_counter()
    host = SparkHost(master=master)
    host.start()
    row["attach"] = time.perf_counter() - began
    try:
        began = time.perf_counter()
        analysis = host.request("analyze", path=str(folder))
        row["analyze"] = time.perf_counter() - began
        row["events"] = analysis["events"]
        began = time.perf_counter()
        report = host.request("reliability", path=str(folder), config=CONFIG.model_dump())
        row["reliability"] = time.perf_counter() - began
        row["violations"] = sum(report["counts"].values())
        spec = RunSpec(topology=load_topology(ROOT / "models" / "getting-started.storm.json"),
                       duration_s=run_seconds, workers=2)
        began = time.perf_counter()
        result = host.request("run", spec=json.loads(spec.model_dump_json()), out=str(out))
        row["run overhead"] = time.perf_counter() - began - run_seconds
        row["run events"] = result["events"]
    finally:
        host.close()
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--upload-events", type=int, default=100_000)
    parser.add_argument("--run-seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from app.measure.eventlog import read_log, write_log
    from app.spark.connect_server import free_port, start_connect_server, stop_connect_server, wait_until_listening
    from app.spark.session import build_session

    folder = Path(tempfile.mkdtemp(prefix="stormbound-connect-bench-"))
    out: dict[str, object] = {}
    try:
        spark = build_session("local[2]", "stormbound-bench-gen", {"spark.driver.memory": "2g"})
        began = time.perf_counter()
        generate(spark, args.events // EVENTS_PER_ROOT, folder / "log")
        small = spark.read.parquet(str(folder / "log" / "events.parquet")).orderBy("t").limit(args.upload_events)
        rows = [r.asDict() for r in small.collect()]
        spark.stop()
        from app.measure.eventlog import Event, EventLog

        write_log(folder / "small.jsonl", EventLog(events=[Event(**r) for r in rows]))
        out["generated_s"] = time.perf_counter() - began

        classic = measure("local[2]", folder / "log", args.run_seconds, folder / "run-classic")
        port = free_port()
        began = time.perf_counter()
        with open(folder / "server.log", "w") as log:
            server = start_connect_server(port, "local[2]", log=log, conf={"spark.driver.memory": "2g"})
            try:
                wait_until_listening(server, port)
                server_start = time.perf_counter() - began
                url = f"sc://localhost:{port}"
                connect = measure(url, folder / "log", args.run_seconds, folder / "run-connect")
                upload: dict[str, float] = {}
                for label, address in (("server reads the file", url),
                                       ("uploaded (127.0.0.2)", url.replace("localhost", "127.0.0.2"))):
                    with SparkHost(master=address) as host:
                        began = time.perf_counter()
                        result = host.request("analyze", path=str(folder / "small.jsonl"))
                        upload[label] = time.perf_counter() - began
                        assert result["events"] == len(rows)
            finally:
                stop_connect_server(server)
        assert len(read_log(folder / "run-connect").events) == connect["run events"]
        out.update(classic=classic, connect=connect, connect_server_start_s=server_start, upload=upload,
                   upload_events=len(rows))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    classic, connect = out["classic"], out["connect"]
    print(f"log: {int(classic['events']):,} events (Parquet), generated in {out['generated_s']:.1f} s; "
          f"Connect server start {out['connect_server_start_s']:.1f} s (not in 'attach')")
    print("| step | classic local[2] (s) | Spark Connect, local[2] server (s) | Connect / classic |")
    print("|---|---:|---:|---:|")
    for step in ("attach", "analyze", "reliability", "run overhead"):
        print(f"| {step} | {classic[step]:.2f} | {connect[step]:.2f} | {connect[step] / classic[step]:.2f} |")
    print(f"violations found: classic {int(classic['violations'])}, Connect {int(connect['violations'])}")
    files, uploaded = out["upload"]["server reads the file"], out["upload"]["uploaded (127.0.0.2)"]
    print(f"analyze {out['upload_events']:,} JSON Lines events over Connect: server reads the file {files:.2f} s, "
          f"uploaded {uploaded:.2f} s ({uploaded / files:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
