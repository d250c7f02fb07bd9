"""The Spark host process: `python -m app.spark.host --master URL`, JSON lines on stdin/stdout.

Started by :class:`app.spark.client.SparkHost` with a Python that has pyspark (the
frozen app has none). It first answers `{"type": "ready", ...}` or
`{"type": "error", "message": ...}` (Java or pyspark missing), then serves requests
`{"id": N, "op": "run" | "analyze" | "reliability" | "diff" | "cancel" | "ping" | "shutdown", ...}`
with any number of `{"id": N, "type": "progress", "fraction": f, "message": s}` lines
and one `{"id": N, "type": "result", "result": {...}}` or `{"id": N, "type": "error",
"message": s, "kind": "input" | "cancelled" | "internal"}`. Requests run concurrently;
`cancel` stops a running `run`. Spark's own output goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from app.spark.session import DEFAULT_MASTER, SparkUnavailable, build_session, session_info


class _Host:
    def __init__(self, out: TextIO, master: str):
        self.out = out
        self.master = master
        self.lock = threading.Lock()
        self.cancels: dict[Any, threading.Event] = {}
        self.spark: Any = None  # the SparkSession, once built

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            self.out.write(json.dumps(message) + "\n")
            self.out.flush()

    # -- operations
    def op_ping(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        return session_info(self.spark)

    def op_run(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        from app.spark.run_job import RunSpec, run_on_spark

        spec = RunSpec.model_validate(req["spec"])
        cancel = self.cancels.setdefault(req["id"], threading.Event())
        return run_on_spark(self.spark, spec, req["out"], fmt=req.get("format", "jsonl"),
                            progress=progress, cancel=cancel, host_start_s=req.get("host_start_s")).model_dump()

    def op_analyze(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        from app.spark.analysis_job import analyze
        from app.spark.frames import load_frames

        progress(0.1, "reading the log")
        events, queues = load_frames(self.spark, req["path"], req.get("time_unit", "s"))
        progress(0.3, "analysing")
        result = analyze(self.spark, events, queues, bin_s=req.get("bin_s", 1.0),
                         growth_floor=req.get("growth_floor", 0.05), source=str(req["path"]))
        from app.measure.eventlog import log_format, read_storm_metrics

        if log_format(req["path"]) == "storm-metrics":  # rates and latencies come from the metrics
            from app.measure.analysis import apply_storm_metrics

            result = apply_storm_metrics(result, read_storm_metrics(req["path"]).metrics)
            result.notes.append("Storm metrics log: counts and latencies per reporting bucket, no per-tuple events: "
                                "σ and burst sizes cannot be measured from it")
        elif log_format(req["path"]) == "storm-events":  # emits only: say what cannot be measured
            from app.measure.storm_events import apply_storm_events, read_storm_events

            result = apply_storm_events(result, read_storm_events(req["path"]))
        return result.model_dump()

    def op_reliability(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        from app.measure.eventlog import EventLogError, log_format
        from app.measure.reliability import ReliabilityConfig, undecidable
        from app.spark.frames import load_frames
        from app.spark.reliability_job import check_reliability

        if log_format(req["path"]) in ("storm-metrics", "storm-events"):
            raise EventLogError(str(req["path"]), "a Storm metrics log or events.log has no takes or acks; "
                                                  "the reliability check needs a run's event log")
        progress(0.1, "reading the log")
        events, _ = load_frames(self.spark, req["path"], req.get("time_unit", "s"))
        progress(0.3, "checking")
        config = ReliabilityConfig.model_validate(req.get("config", {}))
        report = check_reliability(self.spark, events, config, limit=req.get("limit", 200))
        report.cannot_decide = undecidable(req["path"])  # as the embedded engine says: the CLI and the app alike
        return report.model_dump()

    def op_diff(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        """DiffStream under same_key dependence as a Spark job (for an app that has no pyspark itself),
        under the reader limits the client sent (`limits`: its `--limit` values; else the defaults)."""
        from app.core.topology import Problem, TopologyError
        from app.diff import DiffError
        from app.spark.diff_job import spark_same_key_diff

        limits = {str(name): int(value) for name, value in (req.get("limits") or {}).items()}
        progress(0.1, "matching per key")
        try:
            result = spark_same_key_diff(self.spark, req["left"], req["right"], req["dependence"],
                                         req.get("equality"), req.get("order", "alternate"), limits=limits)
        except DiffError as err:  # the user's input (a spec, an item over a limit): one line, kind "input"
            raise TopologyError([Problem("", str(err))]) from None
        return result.model_dump(mode="json")

    def op_cancel(self, req: dict[str, Any], progress: Callable[[float, str], None]) -> dict[str, Any]:
        self.cancels.setdefault(req["target"], threading.Event()).set()
        return {"cancelled": req["target"]}

    def serve(self, req: dict[str, Any]) -> None:
        from app.core.topology import TopologyError
        from app.spark.run_job import RunCancelled

        ident = req.get("id")

        def progress(fraction: float, message: str) -> None:
            self.send({"id": ident, "type": "progress", "fraction": fraction, "message": message})

        handler = getattr(self, f"op_{req.get('op')}", None)
        try:
            if handler is None:
                raise ValueError(f"unknown operation '{req.get('op')}'")
            self.send({"id": ident, "type": "result", "result": handler(req, progress)})
        except (TopologyError, SparkUnavailable) as err:  # the user's input or setup: exit 2 in the CLI
            self.send({"id": ident, "type": "error", "kind": "input", "message": str(err)})
        except RunCancelled as err:
            self.send({"id": ident, "type": "error", "kind": "cancelled", "message": str(err)})
        except Exception as err:  # noqa: BLE001 - every failure becomes one line for the app
            first = (str(err).strip().splitlines() or [""])[0][:300]
            self.send({"id": ident, "type": "error", "kind": "internal", "message": f"{type(err).__name__}: {first}"})
        finally:
            self.cancels.pop(ident, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.spark.host")
    parser.add_argument("--master", default=os.environ.get("STORMBOUND_SPARK_MASTER", DEFAULT_MASTER))
    args = parser.parse_args(argv)
    # keep the real stdout for the protocol; anything else (the JVM, print) goes to stderr
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    host = _Host(protocol, args.master)
    try:
        host.spark = build_session(args.master, "stormbound")
        info = session_info(host.spark)  # the first request a Connect server really answers
    except SparkUnavailable as err:
        host.send({"type": "error", "message": str(err)})
        return 2
    except Exception as err:  # noqa: BLE001 - e.g. an unreachable master, a Connect server refusing the session
        first = (str(err).strip().splitlines() or [""])[0][:300]
        host.send({"type": "error", "message": f"Spark did not start with master {args.master}: {first}"})
        return 2
    host.send({"type": "ready", **info, "python": sys.executable})
    threads: list[threading.Thread] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError:
            host.send({"type": "error", "kind": "input", "message": "request is not valid JSON"})
            continue
        if req.get("op") == "shutdown":
            break
        if req.get("op") == "cancel":
            host.serve(req)
            continue
        th = threading.Thread(target=host.serve, args=(req,), daemon=True)
        th.start()
        threads.append(th)
    for th in threads:
        th.join(5)
    host.spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
