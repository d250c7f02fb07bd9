"""A stand-in Storm UI whose all-time counts move between polls as a real cluster's do (tests of `watch`, Live Mode).

Topology `wordcount-live-1` (Storm 2.6.1): spout `sentences` (a Kafka spout emitting 1000 tuples/s), bolts `split`
(α 0.1 ms, σ 1), `count` (4 executors, 8 tasks, 1000 tuples/s in) and `report` (α 0.5 ms, σ 0). Rates this high
keep a 0.05 s interval's counts meaningful (50 tuples), and an α of milliseconds the UI's three decimals.
`scenario`:

* `sawtooth`: healthy (count α 2.4 ms, capacity 0.6); the Kafka lag rises at 900 tuples/s between offset commits
  every `commit_s` and drops at each (the spout reads 1000/s, the topic grows by 900/s: the lag falls by 100/s
  over the long run), as storm-kafka-client's timer-driven commits make it: 1900 tuples/s offered if the rise
  were taken for load (count's ρ 1.14);
* `busy`: count α 3 ms (capacity 0.75), each interval between two topology-page requests with its own ±5 %
  latency (uniform, from `seed`);
* `drift`: count α 2 ms, 5 ms from the `change_after`-th poll on: it executes 800 of the 1000 tuples/s;
* `stall`: from the `change_after`-th poll on, count executes nothing; backpressure holds the spout, so no count
  moves but the spout's failed count (timeouts, 300/s); count's capacity shows 1.500;
* `full`: count α 3.4 ms (the rates say ρ 0.85: the model at the measured figures says bounded) while the UI's
  capacity shows 1.000 and its receive queues stay full (`metrics_folder` writes the metrics-v2 reporter's files
  saying so): the overload the rates alone do not show;
* `wrong`: another topology runs under the same id (spout `pages`, bolts `fetch`, `store`);
* `wide`: `bolts` bolts `b0`, `b1`, ... each reading the spout's stream (α 0.1 ms, capacity 0.1): one poll is
  `bolts` + 2 requests (Live Mode's stop against 3,000 bolts).

Counts are all-time integers, latencies with three decimals, and every page is computed at the moment it is
requested (the pages of one poll are not one snapshot). `poll_at(number, t)` builds the same poll without HTTP at
a chosen time (fast, repeatable recordings). The server stops by itself after `lifetime` seconds.
"""

from __future__ import annotations

import random
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from json_stand_in import JsonStandIn

TOPOLOGY_ID = "wordcount-live-1"
RATE = 1000.0
SPLIT_SIGMA = 1
COUNT_EXECUTORS = 4
GROWTH = RATE * SPLIT_SIGMA - COUNT_EXECUTORS * 1000.0 / 5.0  # drift: 1000 - 800 = 200 tuples/s
LAG0 = 50_000
HEAD_RATE = 900.0  # the topic grows this fast (sawtooth); the spout reads RATE
STALL_FAILED_PER_S = 300.0


class LiveStormUI(JsonStandIn):
    """`with LiveStormUI("busy", seed=3) as ui: ui.url`, or `LiveStormUI("busy").poll_at(1, 0.0)` without a server."""

    def __init__(self, scenario: str, *, seed: int = 0, change_after: int = 6, commit_s: float = 0.3,
                 noise: float = 0.05, lifetime: float = 60.0, uptime: float = 2.0, bolts: int = 3000):
        super().__init__(lifetime)
        self.scenario = scenario
        self.bolts = bolts
        self._wide = [f"b{i}" for i in range(bolts)] if scenario == "wide" else []
        self.rng = random.Random(seed)
        self.change_after = change_after
        self.commit_s = commit_s
        self.noise = noise
        self.uptime = uptime
        self.origin = time.monotonic() - uptime
        self.polls = 0
        self.change: float | None = None  # uptime (s) when the drift or the stall started
        # count's busy time and executed count, integrated piecewise (each interval its own latency noise)
        self.mark = 0.0
        self.busy_ms = 0.0
        self.executed = 0.0
        self.factor = 1.0
        self.lock = threading.Lock()

    # ---- the topology at a moment ----------------------------------------------------------

    def _count_alpha_ms(self, t: float) -> float:
        changed = self.change is not None and t >= self.change
        if self.scenario == "busy":
            return 3.0 * self.factor
        if self.scenario == "drift" and changed:
            return 5.0
        if self.scenario == "full":
            return 3.4
        return 2.4 if self.scenario == "sawtooth" else 2.0

    def _count_rate(self, t: float) -> float:
        if self.scenario == "stall" and self.change is not None and t >= self.change:
            return 0.0
        return min(RATE * SPLIT_SIGMA, COUNT_EXECUTORS * 1000.0 / self._count_alpha_ms(t))

    def _advance(self, t: float) -> tuple[float, float]:
        """count's (executed, busy ms) at t, t at or after the last mark."""
        dt = max(0.0, t - self.mark)
        rate = self._count_rate(t)
        return self.executed + rate * dt, self.busy_ms + rate * dt * self._count_alpha_ms(t)

    def _spout_time(self, t: float) -> float:
        """Seconds the spout has emitted for (it stops when a stall holds it by backpressure)."""
        if self.scenario == "stall" and self.change is not None:
            return min(t, self.change)
        return t

    def counts(self, t: float) -> dict[str, Any]:
        spout = RATE * self._spout_time(t)
        executed, busy = self._advance(t)
        return {"spout": round(spout), "split_out": round(spout * SPLIT_SIGMA), "count_exec": round(executed),
                "count_latency": busy / executed if executed else 0.0}

    def capacity(self, t: float) -> str:
        if self.scenario == "stall" and self.change is not None:
            return "1.500"
        if self.scenario == "full":
            return "1.000"
        return f"{min(1.0, self._count_rate(t) * self._count_alpha_ms(t) / 1000 / COUNT_EXECUTORS):.3f}"

    def failed(self, t: float) -> int:
        if self.scenario == "stall" and self.change is not None:
            return 9000 + round(STALL_FAILED_PER_S * max(0.0, t - self.change))
        return 0

    def lag(self, t: float) -> int:
        if self.scenario != "sawtooth":
            return LAG0
        committed = RATE * self.commit_s * int(t // self.commit_s)
        return round(LAG0 + HEAD_RATE * t - committed)

    def names(self) -> tuple[str, list[str]]:
        if self.scenario == "wrong":
            return "pages", ["fetch", "store"]
        if self.scenario == "wide":
            return "sentences", self._wide
        return "sentences", ["split", "count", "report"]

    def topology_page(self, t: float) -> dict[str, Any]:
        """The topology page at t; a new interval starts (busy: its own latency noise; drift, stall: the change)."""
        self.polls += 1
        executed, busy = self._advance(t)
        self.mark, self.executed, self.busy_ms = t, executed, busy
        if self.scenario == "busy":
            self.factor = 1.0 + self.rng.uniform(-self.noise, self.noise)
        if self.polls == self.change_after and self.change is None and self.scenario in ("drift", "stall"):
            self.change = t
        c = self.counts(t)
        spout_name, bolt_names = self.names()
        bolt = {"executors": 1, "tasks": 1, "failed": 0, "lastError": ""}
        rows = [{**bolt, "boltId": bolt_names[0], "executed": c["spout"], "emitted": c["split_out"],
                 "executeLatency": "0.100", "capacity": "0.100"},
                {**bolt, "boltId": bolt_names[1], "executed": c["count_exec"], "emitted": c["count_exec"],
                 "executeLatency": f"{c['count_latency']:.3f}", "capacity": self.capacity(t),
                 "executors": COUNT_EXECUTORS, "tasks": 2 * COUNT_EXECUTORS}]
        if len(bolt_names) > 2:
            rows.append({**bolt, "boltId": bolt_names[2], "executed": c["count_exec"], "emitted": 0,
                         "executeLatency": "0.500", "capacity": "0.500"})
        if self.scenario == "wide":
            rows = [{**bolt, "boltId": name, "executed": c["spout"], "emitted": 0, "executeLatency": "0.100",
                     "capacity": "0.100"} for name in bolt_names]
        return {"name": "wordcount-live", "id": TOPOLOGY_ID, "status": "ACTIVE", "uptimeSeconds": int(t),
                "stormVersion": "2.6.1", "workersTotal": 1, "window": ":all-time", "msgTimeout": 30,
                "spouts": [{"spoutId": spout_name, "executors": 1, "tasks": 1, "emitted": c["spout"],
                            "transferred": c["spout"], "acked": c["spout"], "failed": self.failed(t),
                            "completeLatency": "12.400"}],
                "bolts": rows,
                "configuration": {"topology.workers": 1, "topology.acker.executors": 1,
                                  "topology.max.spout.pending": None, "topology.message.timeout.secs": 30}}

    def component_page(self, name: str, t: float) -> dict[str, Any] | None:
        c = self.counts(t)
        spout_name, bolt_names = self.names()
        metrics = {"stream": "__metrics", "emitted": 20, "transferred": 20, "acked": 0, "failed": 0}
        if name == spout_name:
            return {"id": name, "componentType": "spout", "executors": 1, "tasks": 1,
                    "outputStats": [metrics, {"stream": "default", "emitted": c["spout"], "transferred": c["spout"],
                                              "acked": c["spout"], "failed": self.failed(t),
                                              "completeLatency": "12.400"}]}
        inputs = {bolt_names[0]: (spout_name, c["spout"], 0.1, c["split_out"], 1),
                  bolt_names[1]: (bolt_names[0], c["count_exec"], c["count_latency"], c["count_exec"],
                                  COUNT_EXECUTORS)}
        if len(bolt_names) > 2:
            inputs[bolt_names[2]] = (bolt_names[1], c["count_exec"], 0.5, 0, 1)
        if self.scenario == "wide":  # every bolt alike (not a table of 3,000 per request)
            inputs = {name: (spout_name, c["spout"], 0.1, 0, 1)} if name[1:].isdigit() and \
                int(name[1:]) < self.bolts and name == f"b{int(name[1:])}" else {}
        if name not in inputs:
            return None
        source, executed, latency, emitted, executors = inputs[name]
        return {"id": name, "componentType": "bolt", "executors": executors, "tasks": 2 * executors,
                "inputStats": [{"component": source, "stream": "default", "executed": executed,
                                "executeLatency": f"{latency:.3f}", "acked": executed, "failed": 0}],
                "outputStats": [metrics, {"stream": "default", "emitted": emitted, "transferred": emitted}]}

    def lag_page(self, t: float) -> dict[str, Any]:
        spout_name, _ = self.names()
        lag = self.lag(t)
        return {spout_name: {"spoutId": spout_name, "spoutType": "KAFKA", "spoutLagResult": {
            "topic": {"0": {"consumerCommittedOffset": 1, "logHeadOffset": 1 + lag, "lag": lag}}}}}

    # ---- without a server: a poll at a chosen moment -------------------------------------------

    def poll_at(self, number: int, t: float, skew: float = 0.002) -> Any:
        """The Poll `record` and `watch` would read at uptime t, each component page `skew` s after the last."""
        from app.measure.storm_run import Poll

        page = self.topology_page(t)
        page.pop("configuration")
        spout_name, bolt_names = self.names()
        components, page_t = {}, {}
        for k, name in enumerate([spout_name, *bolt_names], 1):
            components[name] = self.component_page(name, t + k * skew)
            page_t[name] = 1_800_000_000.0 + t + k * skew
        return Poll(poll=number, t=1_800_000_000.0 + t, ok=True, topology=page, components=components,
                    page_t=page_t, lag=self.lag_page(t + 5 * skew))

    # ---- serving ------------------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.origin

    def reply(self, path: str) -> tuple[int, Any]:
        base = f"/api/v1/topology/{TOPOLOGY_ID}"
        with self.lock:
            t = self.now()
            if path == "/api/v1/topology/summary":
                return 200, {"topologies": [{"id": TOPOLOGY_ID, "name": "wordcount-live", "status": "ACTIVE",
                                             "stormVersion": "2.6.1"}]}
            if path == base:
                return 200, self.topology_page(t)
            if path == f"{base}/lag":
                return 200, self.lag_page(t)
            if path.startswith(f"{base}/component/"):
                page = self.component_page(urllib.parse.unquote(path.rsplit("/", 1)[1]), t)
                if page is not None:
                    return 200, page
        return 500, {"error": "Internal Server Error", "errorMessage": f"NotAliveException: {path}"}


def metrics_folder(folder: Path, start: float, reports: int = 5, every: float = 10.0, full: bool = True) -> Path:
    """A CsvStormReporter folder in Storm 2.x's naming (storm.worker.TOPOLOGY.HOST.COMPONENT.TASK.PORT-NAME.csv):
    count's two executors' JCQueueMetrics (population 1024 of a capacity of 1024 when `full`, else 10; pct_full;
    overflow; insert_failures rising when full), split's (population 3), and the spout's __skipped-backpressure-ms."""
    folder.mkdir(parents=True, exist_ok=True)

    def write(component: str, task: int, name: str, values: list[float]) -> None:
        path = folder / f"storm.worker.{TOPOLOGY_ID}.host1.{component}.{task}.6700-{name}.csv"
        rows = [f"{start + k * every:.0f},{v:g}" for k, v in enumerate(values)]
        path.write_text("t,value\n" + "\n".join(rows) + "\n")

    for task in (3, 4):
        population = 1024.0 if full else 10.0
        write("count", task, "receive-queue-population", [population] * reports)
        write("count", task, "receive-queue-capacity", [1024.0] * reports)
        write("count", task, "receive-queue-pct_full", [population / 1024.0] * reports)
        write("count", task, "receive-queue-overflow", [(40.0 * k if full else 0.0) for k in range(reports)])
        write("count", task, "receive-queue-insert_failures", [(7.0 * k if full else 0.0) for k in range(reports)])
        write("count", task, "receive-queue-arrival_rate_secs", [250.0] * reports)
        write("count", task, "receive-queue-sojourn_time_ms", [4096.0 if full else 20.0] * reports)
        write("count", task, "__capacity", [1.0 if full else 0.5] * reports)
    write("split", 2, "receive-queue-population", [3.0] * reports)
    write("split", 2, "receive-queue-capacity", [1024.0] * reports)
    write("sentences", 1, "__skipped-backpressure-ms", [(500.0 * k if full else 0.0) for k in range(reports)])
    write("__acker", 5, "receive-queue-population", [0.0] * reports)
    return folder
