"""Record the small example run of docs/examples/getting-started-run/ in this process, without Spark.

The run's tasks (app/spark/tasks.py) are plain Python: one StormWorker hosts every
component of models/getting-started.storm.json for DURATION seconds of real time
and the run folder is written as `stormbound run` writes it (events, queue samples,
the topology and run.json). Used for the example report `analyze --report` makes:

    python docs/examples/record_example_run.py
    python -m app analyze docs/examples/getting-started-run --report docs/examples/getting-started-report.html
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.core.fileio import write_atomic  # noqa: E402 - after the checkout is on the path
from app.core.formats import load_topology  # noqa: E402
from app.measure.eventlog import Event, QueueSample, write_records  # noqa: E402
from app.spark.run_job import RunSpec, plan_of  # noqa: E402
from app.spark.tasks import StormWorker  # noqa: E402

DURATION = 40.0
OUT = ROOT / "docs" / "examples" / "getting-started-run"


def main() -> None:
    topo = load_topology(ROOT / "models" / "getting-started.storm.json")
    spec = RunSpec(topology=topo, duration_s=DURATION, seed=1, sample_interval_s=0.25)
    rows = StormWorker(plan_of(spec, workers=1), 0, time.time()).run()
    events = sorted((Event(t=r[0], ev=r[1], comp=r[2], task=r[3], tuple=r[4], msg=r[5], anchors=r[6], reason=r[7])
                     for r in rows if r[1] is not None), key=lambda e: e.t)
    samples = sorted((QueueSample(t=r[0], comp=r[2], task=r[3], queue=r[8]) for r in rows if r[1] is None),
                     key=lambda q: q.t)
    OUT.mkdir(parents=True, exist_ok=True)
    write_records(OUT / "events.jsonl", events)
    write_records(OUT / "queues.jsonl", samples)
    write_atomic(OUT / "topology.storm.json", topo.to_json_bytes())
    meta = {"format": "stormbound-run/1", "spec": json.loads(spec.model_dump_json(exclude={"topology"})),
            "recorded_by": "docs/examples/record_example_run.py (one in-process worker, no Spark)",
            "reliability": {"topology.acker.executors": 1, "topology.message.timeout.secs": spec.message_timeout_s}}
    write_atomic(OUT / "run.json", (json.dumps(meta, indent=2) + "\n").encode())
    print(f"wrote {len(events)} events and {len(samples)} queue samples to {OUT}")


if __name__ == "__main__":
    main()
