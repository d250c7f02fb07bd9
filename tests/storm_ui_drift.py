"""A stand-in Storm UI on 127.0.0.1 whose word count drifts into overload (tests of record, analyze, watch).

Topology `wordcount-drift-1` (Storm 2.6.1): spout `sentences` (100 tuples/s), bolts `split` (1 executor,
α 1 ms, σ 5), `count` (1 executor, α 1 ms, σ 1: capacity 0.5) and `report` (α 0.5 ms, σ 0). After the
`overload_after`-th poll (a poll = one request of the topology page), count's execute latency becomes
2.5 ms: it executes 400 tuples/s of the 500 it receives, so its queue grows by GROWTH = 100 tuples/s.

Counts are all-time, as Storm's UI serves them: integers, latencies with three decimals, computed at
the time the poll's topology page was requested (the component pages of that poll show the same
moment: one snapshot, so that `analyze`'s figures over a short recording are exact; tests/storm_ui_live.py
serves each page at its own moment, as Storm does). `stop()` and `start()` drop and restore the listening
socket on the same port (the counts go on); `hold()` keeps every request waiting (`held` counts them) until
`release()`, as a UI that stops answering; the server shuts itself down after `lifetime` seconds.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Any

from json_stand_in import JsonStandIn

TOPOLOGY_ID = "wordcount-drift-1"
SPOUT_RATE = 100.0
SPLIT_ALPHA_MS, SPLIT_SIGMA = 1.0, 5
COUNT_ALPHA_MS, COUNT_ALPHA_OVERLOAD_MS = 1.0, 2.5
REPORT_ALPHA_MS = 0.5
GROWTH = SPOUT_RATE * SPLIT_SIGMA - 1000.0 / COUNT_ALPHA_OVERLOAD_MS  # 500 - 400 = 100 tuples/s
UPTIME_BEFORE = 2.0  # seconds the topology ran before the stand-in started
LAG = 5000


class DriftingStormUI(JsonStandIn):
    """`with DriftingStormUI(overload_after=6) as ui: ui.url`."""

    def __init__(self, overload_after: int = 6, lifetime: float = 60.0):
        super().__init__(lifetime)
        self.overload_after = overload_after
        self.polls = 0
        self.started = time.monotonic() - UPTIME_BEFORE
        self.switch: float | None = None  # seconds of uptime when count slowed down
        self.snapshot = 0.0
        self.lock = threading.Lock()
        self.answering = threading.Event()  # cleared by hold(): requests wait until release()
        self.answering.set()
        self.held = 0  # requests that have waited (or wait) at hold()

    # ---- the topology at a moment ----------------------------------------------------------

    def counts(self, t: float) -> dict[str, Any]:
        before = t if self.switch is None else min(t, self.switch)
        after = 0.0 if self.switch is None else max(0.0, t - self.switch)
        spout = SPOUT_RATE * t
        split_out = spout * SPLIT_SIGMA
        count_exec = split_out * before / t + 1000.0 / COUNT_ALPHA_OVERLOAD_MS * after if t > 0 else 0.0
        count_exec = min(count_exec, split_out)
        busy = (SPOUT_RATE * SPLIT_SIGMA * before * COUNT_ALPHA_MS
                + 1000.0 / COUNT_ALPHA_OVERLOAD_MS * after * COUNT_ALPHA_OVERLOAD_MS)
        count_latency = busy / count_exec if count_exec else 0.0
        recent = COUNT_ALPHA_OVERLOAD_MS if self.switch is not None else COUNT_ALPHA_MS
        return {"sentences": round(spout), "split_exec": round(spout), "split_out": round(split_out),
                "count_exec": round(count_exec), "count_latency": count_latency,
                "count_capacity": min(1.0, (400.0 if self.switch is not None else 500.0) * recent / 1000.0),
                "report_exec": round(count_exec)}

    def topology_page(self, t: float) -> dict[str, Any]:
        c = self.counts(t)
        bolt = {"executors": 1, "tasks": 1, "failed": 0, "lastError": ""}
        return {
            "name": "wordcount-drift", "id": TOPOLOGY_ID, "status": "ACTIVE", "uptimeSeconds": int(t),
            "stormVersion": "2.6.1", "workersTotal": 1, "window": ":all-time", "msgTimeout": 30,
            "spouts": [{"spoutId": "sentences", "executors": 1, "tasks": 1, "emitted": c["sentences"],
                        "transferred": c["sentences"], "acked": c["sentences"], "failed": 0,
                        "completeLatency": "12.500"}],
            "bolts": [
                {**bolt, "boltId": "split", "executed": c["split_exec"], "emitted": c["split_out"],
                 "executeLatency": f"{SPLIT_ALPHA_MS:.3f}", "capacity": f"{SPOUT_RATE * SPLIT_ALPHA_MS / 1000:.3f}"},
                {**bolt, "boltId": "count", "executed": c["count_exec"], "emitted": c["count_exec"],
                 "executeLatency": f"{c['count_latency']:.3f}", "capacity": f"{c['count_capacity']:.3f}"},
                {**bolt, "boltId": "report", "executed": c["report_exec"], "emitted": 0,
                 "executeLatency": f"{REPORT_ALPHA_MS:.3f}", "capacity": "0.200"}],
            "configuration": {"topology.workers": 1, "topology.acker.executors": 1,
                              "topology.max.spout.pending": None, "topology.message.timeout.secs": 30},
        }

    def component_page(self, name: str, t: float) -> dict[str, Any] | None:
        c = self.counts(t)
        metrics = {"stream": "__metrics", "emitted": 20, "transferred": 20, "acked": 0, "failed": 0}
        if name == "sentences":
            return {"id": name, "componentType": "spout", "executors": 1, "tasks": 1,
                    "outputStats": [metrics, {"stream": "default", "emitted": c["sentences"],
                                              "transferred": c["sentences"], "acked": c["sentences"], "failed": 0,
                                              "completeLatency": "12.500"}]}
        inputs = {"split": ("sentences", c["split_exec"], SPLIT_ALPHA_MS, c["split_out"]),
                  "count": ("split", c["count_exec"], c["count_latency"], c["count_exec"]),
                  "report": ("count", c["report_exec"], REPORT_ALPHA_MS, 0)}
        if name not in inputs:
            return None
        source, executed, latency, emitted = inputs[name]
        return {"id": name, "componentType": "bolt", "executors": 1, "tasks": 1,
                "inputStats": [{"component": source, "stream": "default", "executed": executed,
                                "executeLatency": f"{latency:.3f}", "acked": executed, "failed": 0}],
                "outputStats": [metrics, {"stream": "default", "emitted": emitted, "transferred": emitted}]}

    # ---- serving ------------------------------------------------------------------------

    def reply(self, path: str) -> tuple[int, Any]:
        base = f"/api/v1/topology/{TOPOLOGY_ID}"
        with self.lock:
            if path == "/api/v1/topology/summary":
                return 200, {"topologies": [{"id": TOPOLOGY_ID, "name": "wordcount-drift", "status": "ACTIVE",
                                             "stormVersion": "2.6.1"}]}
            if path == base:
                self.polls += 1
                self.snapshot = time.monotonic() - self.started
                if self.polls == self.overload_after and self.switch is None:
                    self.switch = self.snapshot
                return 200, self.topology_page(self.snapshot)
            if path == f"{base}/lag":
                return 200, {"sentences": {"spoutId": "sentences", "spoutType": "KAFKA", "spoutLagResult": {
                    "sentences-topic": {"0": {"consumerCommittedOffset": 1, "logHeadOffset": 1 + LAG, "lag": LAG}}}}}
            if path.startswith(f"{base}/component/"):
                page = self.component_page(urllib.parse.unquote(path.rsplit("/", 1)[1]), self.snapshot)
                if page is not None:
                    return 200, page
        return 500, {"error": "Internal Server Error", "errorMessage": f"NotAliveException: {path}"}

    def hold(self) -> None:
        """Stop answering: each request waits (counted in `held`) until release(), or the server's lifetime."""
        self.answering.clear()

    def release(self) -> None:
        self.answering.set()

    def before_reply(self) -> None:
        if not self.answering.is_set():
            with self.lock:
                self.held += 1
            self.answering.wait(self.lifetime)

    def __exit__(self, *exc: object) -> None:
        self.release()
        super().__exit__(*exc)
