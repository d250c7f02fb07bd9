"""Running a topology on Spark with a synthetic workload (issue 5, item 3).

How the topology maps onto Spark (docs/spark-runs.md has the full story): one Spark job
in *barrier* mode with W tasks that all start together, like the W worker processes of
a Storm topology. Every spout and bolt is a thread ("executor") inside one of these
tasks, placed round-robin. Each bolt owns a real receive queue (`queue.Queue`); a tuple
for a bolt in the same task is put on its queue directly, a tuple for a bolt in another
task travels over a TCP connection between the tasks (addresses exchanged with
`BarrierTaskContext.allGather`). Everything happens in wall-clock time: spouts sleep
between bursts, bolts sleep α·(1 ± τ) per batch. Each task records its events and queue
samples and returns them as the job's result; the driver writes the run folder.

The workload follows the model (docs/timed-counter-network.md, section 2): a spout
emits a burst of n ∈ [1, burst] tuples, then waits n/rate ± τ/rate; a bolt takes up to
`parallelism` waiting tuples at once (within max_idle_time: at once here), works
α·U(1−τ, 1+τ) seconds, then emits ⌊σ·buffer⌋ tuples (the model's buffer rule) to every
subscriber and acks its batch. No acker runs (topology.acker.executors = 0): a spout
acks at emit, as Storm does without ackers.
"""

from __future__ import annotations

import json
import math
import os
import queue
import random
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import BaseModel, Field

from app.core.topology import Topology

Row = tuple  # (t, ev, comp, task, tuple, msg, anchors, reason, queue): eventlog.COLUMNS order


class RunSpec(BaseModel):
    """Everything a run needs; sent to the Spark tasks as JSON."""

    topology: Topology
    duration_s: float = Field(gt=0)
    seed: int = 1
    sample_interval_s: float = Field(default=0.25, gt=0)
    workers: int | None = Field(default=None, ge=1, description="Spark tasks hosting the components; None = as many as fit")


class RunResult(BaseModel):
    """What a finished run wrote, and how it was placed on Spark."""

    out_dir: str
    events: int
    queue_samples: int
    duration_s: float
    workers: int
    placement: dict[str, int]
    master: str
    wall_s: float


class RunCancelled(RuntimeError):
    """The run was cancelled before it finished; nothing was written."""


def placement(topo: Topology, workers: int) -> dict[str, int]:
    """Component name -> worker index, round-robin over spouts then bolts."""
    return {c.name: i % workers for i, c in enumerate(topo.components)}


# ---- inside one Spark task -------------------------------------------------


class _Worker:
    """One Storm-like worker process: hosts some components as threads, owns their queues."""

    def __init__(self, spec: RunSpec, index: int, where: dict[str, int], start: float):
        self.spec = spec
        self.topo = spec.topology
        self.index = index
        self.where = where
        self.start = start
        self.deadline = spec.duration_s
        self.rows: list[Row] = []
        self.queues: dict[str, queue.Queue[str]] = {
            b.name: queue.Queue() for b in self.topo.bolts if where[b.name] == index}
        self.links: dict[int, tuple[socket.socket, threading.Lock]] = {}
        names = {c.id: c.name for c in self.topo.components}
        self.subscribers: dict[str, list[str]] = {c.name: [] for c in self.topo.components}
        for s in self.topo.subscriptions:
            self.subscribers[names[s.source]].append(names[s.target])
        self.task = {c.name: i + 1 for i, c in enumerate(self.topo.components)}
        self.receivers_done = threading.Event()

    def now(self) -> float:
        return time.time() - self.start

    def sleep_until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            time.sleep(delay)

    def record(self, ev: str, comp: str, tuple_id: str | None = None, msg: str | None = None,
               anchors: list[str] | None = None) -> None:
        self.rows.append((self.now(), ev, comp, self.task[comp], tuple_id, msg, anchors, None, None))

    def route(self, comp: str, tuple_id: str) -> None:
        """Deliver a tuple to every subscriber of `comp`: its local queue, or the owning worker's socket."""
        for target in self.subscribers[comp]:
            owner = self.where[target]
            if owner == self.index:
                self.queues[target].put(tuple_id)
            else:
                sock, lock = self.links[owner]
                with lock:
                    sock.sendall(f"{target}\t{tuple_id}\n".encode())

    # -- components
    def spout(self, name: str) -> None:
        s = next(x for x in self.topo.spouts if x.name == name)
        rng = random.Random(f"{self.spec.seed}/{name}")
        tau = self.topo.settings.tolerance
        period = 1.0 / s.rate
        next_t, count = 0.0, 0
        while next_t < self.deadline:
            self.sleep_until(next_t)
            n = rng.randint(1, s.burst)
            for _ in range(n):
                count += 1
                tuple_id = f"{name}-{count}"
                self.record("spout_emit", name, tuple_id, msg=tuple_id)
                self.route(name, tuple_id)
                self.record("spout_ack", name, msg=tuple_id)  # no ackers: Storm acks at emit
            next_t += n * period + rng.uniform(-tau, tau) * period

    def bolt(self, name: str) -> None:
        b = next(x for x in self.topo.bolts if x.name == name)
        rng = random.Random(f"{self.spec.seed}/{name}")
        tau = self.topo.settings.tolerance
        inbox = self.queues[name]
        buffer, count = 0, 0
        while True:
            try:
                first = inbox.get(timeout=0.05)
            except queue.Empty:
                if self.now() >= self.deadline:
                    return
                continue
            if self.now() >= self.deadline:
                return
            batch = [first]
            while len(batch) < b.parallelism:
                try:
                    batch.append(inbox.get_nowait())
                except queue.Empty:
                    break
            taken = self.now()
            for tuple_id in batch:
                self.record("take", name, tuple_id)
            self.sleep_until(taken + b.alpha * rng.uniform(1 - tau, 1 + tau))
            if b.sigma > 0:
                buffer += len(batch)
                out = math.floor(b.sigma * buffer + 1e-9)
                buffer = max(0, math.ceil(buffer - out / b.sigma - 1e-9))
                for k in range(out):
                    count += 1
                    tuple_id = f"{name}-{count}"
                    self.record("bolt_emit", name, tuple_id, anchors=[batch[k % len(batch)]])
                    self.route(name, tuple_id)
            for tuple_id in batch:
                self.record("bolt_ack", name, tuple_id)

    def sampler(self) -> None:
        t = 0.0
        while t <= self.deadline:
            self.sleep_until(t)
            stamp = self.now()
            for name, inbox in self.queues.items():
                self.rows.append((stamp, None, name, self.task[name], None, None, None, None, inbox.qsize()))
            t += self.spec.sample_interval_s

    def receive(self, conn: socket.socket) -> None:
        with conn, conn.makefile("r", encoding="utf-8") as lines:
            for line in lines:
                target, _, tuple_id = line.rstrip("\n").partition("\t")
                self.queues[target].put(tuple_id)

    def run(self, threads_started: Callable[[], None] | None = None) -> list[Row]:
        init = self.topo.settings.init_queues
        for name, inbox in self.queues.items():
            for i in range(init):
                inbox.put(f"{name}-init-{i + 1}")
        mine = [c for c in self.topo.components if self.where[c.name] == self.index]
        threads = [threading.Thread(target=self.spout if c.kind == "spout" else self.bolt, args=(c.name,),
                                    name=f"{c.kind}-{c.name}", daemon=True) for c in mine]
        threads.append(threading.Thread(target=self.sampler, name="queue-sampler", daemon=True))
        self.sleep_until(0.0)
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return self.rows


def _task_main(spec_json: str, where: dict[str, int], workers: int) -> Callable[[Iterator[Any]], Iterator[Row]]:
    """The function each barrier task runs: connect to the other tasks, run the hosted components."""

    def run_partition(_: Iterator[Any]) -> Iterator[Row]:
        from pyspark import BarrierTaskContext

        ctx = BarrierTaskContext.get()
        index = ctx.partitionId()
        spec = RunSpec.model_validate_json(spec_json)
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        host = "127.0.0.1" if workers == 1 else _own_address()
        server.bind((host, 0))
        server.listen(workers)
        addresses = ctx.allGather(json.dumps([host, server.getsockname()[1], time.time()]))
        peers = [json.loads(a) for a in addresses]
        start = max(p[2] for p in peers) + 1.0  # a shared start, a second after the last task is ready
        worker = _Worker(spec, index, where, start)
        accepted: list[socket.socket] = []

        def accept_all() -> None:
            for _ in range(workers - 1):
                conn, _addr = server.accept()
                accepted.append(conn)

        acceptor = threading.Thread(target=accept_all, daemon=True)
        acceptor.start()
        for other, (peer_host, peer_port, _) in enumerate(peers):
            if other != index:
                sock = socket.create_connection((peer_host, peer_port), timeout=30)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                worker.links[other] = (sock, threading.Lock())
        acceptor.join(60)
        receivers = [threading.Thread(target=worker.receive, args=(c,), daemon=True) for c in accepted]
        for r in receivers:
            r.start()
        rows = worker.run()
        ctx.barrier()  # every task has stopped sending
        for sock, _lock in worker.links.values():
            sock.shutdown(socket.SHUT_WR)
        for r in receivers:
            r.join(10)
        server.close()
        for sock, _lock in worker.links.values():
            sock.close()
        yield from rows

    return run_partition


def _own_address() -> str:
    """This machine's address as other machines see it (falls back to loopback)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"


# ---- the driver ------------------------------------------------------------


def run_on_spark(spark, spec: RunSpec, out_dir: str | os.PathLike[str], fmt: str = "jsonl",
                 progress: Callable[[float, str], None] | None = None,
                 cancel: threading.Event | None = None) -> RunResult:
    """Run the topology as one barrier job, then write events, queues, topology and run.json to `out_dir`."""
    from app.core.fileio import write_atomic
    from app.runs.eventlog import Event, QueueSample, write_records

    sc = spark.sparkContext
    slots = max(1, int(sc.defaultParallelism))
    n_components = len(spec.topology.components)
    workers = min(spec.workers or slots, slots, n_components)
    where = placement(spec.topology, workers)
    job = _task_main(spec.model_dump_json(), where, workers)
    group = f"stormbound-run-{uuid.uuid4().hex[:8]}"
    outcome: dict[str, Any] = {}

    def submit() -> None:
        sc.setJobGroup(group, f"stormbound run {spec.topology.name} for {spec.duration_s:g} s", interruptOnCancel=True)
        try:
            outcome["rows"] = sc.parallelize(range(workers), workers).barrier().mapPartitions(job).collect()
        except BaseException as err:  # noqa: BLE001 - reported to the caller below
            outcome["error"] = err

    began = time.time()
    runner = threading.Thread(target=submit, name="spark-run", daemon=True)
    runner.start()
    while runner.is_alive():
        runner.join(0.25)
        if cancel is not None and cancel.is_set():
            sc.cancelJobGroup(group)
            runner.join(30)
            raise RunCancelled("run cancelled")
        if progress is not None:
            elapsed = time.time() - began
            progress(min(0.99, elapsed / (spec.duration_s + 3.0)), f"running {elapsed:.0f}/{spec.duration_s:g} s")
    if "error" in outcome:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("run cancelled")
        raise outcome["error"]
    rows = outcome["rows"]
    events = [Event(t=r[0], ev=r[1], comp=r[2], task=r[3], tuple=r[4], msg=r[5], anchors=r[6])
              for r in rows if r[1] is not None]
    samples = [QueueSample(t=r[0], comp=r[2], task=r[3], queue=r[8]) for r in rows if r[1] is None]
    events.sort(key=lambda e: e.t)
    samples.sort(key=lambda q: q.t)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_records(out / f"events.{fmt}", events)
    write_records(out / f"queues.{fmt}", samples)
    write_atomic(out / "topology.storm.json", spec.topology.to_json_bytes())
    result = RunResult(out_dir=str(out), events=len(events), queue_samples=len(samples), duration_s=spec.duration_s,
                       workers=workers, placement=where, master=sc.master, wall_s=time.time() - began)
    meta = {"format": "stormbound-run/1", "spec": json.loads(spec.model_dump_json(exclude={"topology"})),
            "result": result.model_dump(), "reliability": {"topology.acker.executors": 0,
                                                          "topology.message.timeout.secs": 30}}
    write_atomic(out / "run.json", (json.dumps(meta, indent=2) + "\n").encode())
    if progress is not None:
        progress(1.0, f"wrote {len(events)} events to {out}")
    return result
