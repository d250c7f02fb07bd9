"""What runs inside each Spark task of a measured run (standard library only).

Spark ships this module to its Python workers (with Spark Connect as a session
artifact), so it imports nothing outside the standard library at module level: no
pydantic, no app.core. The driver (:mod:`app.spark.run_job`) turns the topology into a
plain *plan* dictionary; :func:`task_function` returns the function each barrier task
runs (through `DataFrame.mapInArrow(..., barrier=True)`), which yields Arrow record
batches of the flat event-log rows (`app.measure.eventlog.COLUMNS`).

A task is one Storm-like worker process: it hosts some spouts and bolts as threads,
owns their receive queues, and talks to the other tasks over TCP. With acking on (the
default, as Storm's `topology.acker.executors` >= 1) it also plays Storm's acker for the
spouts it hosts: every delivery of a tuple gets a random 64-bit edge id, the emitter
XORs the ids of what it sends into the root's value and the taker XORs its own edge id
back when it acks, in one message per ack as Storm does; the root is acked when its
value is zero (order-independent, so messages may arrive in any order), and fails with
reason `TIMEOUT` when it stays pending longer than the message timeout.

A killed bolt (the plan's `kills`, docs/spark-runs.md "Killing a task") dies as a Storm
executor does: at the kill its waiting queue and the batch it works on are dropped, tuples
that reach it while it is down are dropped too (each one a `bolt_lost` event, no ack), and
after the down time it starts again with an empty queue (`bolt_down`, `bolt_up`). The trees
that lost a tuple fail at the message timeout, and a reliable spout replays each failed
message through its own emission loop (a `spout_emit` with the failed `msg`, reason `REPLAY`),
as docs/model.md section 7.3 says: with each burst of n new messages, up to n replays
(`paced`) or all of them (`at-once`).
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
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

# A typed decimal is read as `Fraction(str(x))` here: app.core.numbers.exact, written out because Spark ships this
# module to its workers alone (nothing of app).
# (t, ev, comp, task, tuple, msg, anchors, reason, queue): the order of eventlog.COLUMNS
Row = tuple[Any, ...]
# A queued tuple: (tuple id, spout of its root, root message id, edge id); init tuples have no root.
Delivery = tuple[Any, ...]


def emit_tuples(sigma: Fraction, carry: Fraction, batch: int, rounded: bool) -> tuple[int, Fraction]:
    """The model's EMIT (docs/model.md section 2.3) in exact fractions: (tuples out, carry kept);
    `rounded` is the "dvert" rule (carry rounded up), else "exact". Restated here because this
    module imports only the standard library; tests compare it with app.core.emission."""
    total = carry + batch
    out = math.floor(sigma * total)
    rest = total - out / sigma
    return out, (Fraction(math.ceil(rest)) if rounded else rest)


def killable_batch_lost(generation: int, now_generation: int, taken: float, last_kill: float, last_up: float,
                        down: bool) -> bool:
    """Whether a batch taken at `taken` died with its executor: a kill since the take, or a kill since the
    generation read before the take that the executor has not come back from before the take (a batch
    taken after a restart is the new executor's)."""
    if now_generation == generation:
        return False
    if last_kill >= taken:
        return True
    return down or last_up > taken


class Acker:
    """Storm's acker for the spouts one worker hosts: per pending tree (its root tuple) the XOR of its edge ids, its
    spout, when it was emitted and its message id. A tree is acked when the XOR comes back to zero and failed once
    pending longer than the message timeout; a reliable spout then replays the failed message (`replays`)."""

    def __init__(self, worker: StormWorker, spouts: list[str]) -> None:
        self.worker = worker
        self.pending: dict[str, list[Any]] = {}  # root tuple -> [xor value, spout, emitted at, message id]
        self.lock = threading.Lock()
        self.to_replay: dict[str, list[str]] = {name: [] for name in spouts}  # failed messages, oldest first

    def register(self, root: str, spout: str, msg: str) -> None:
        """A new tree, registered before any of its deliveries can be acked."""
        with self.lock:
            self.pending[root] = [0, spout, self.worker.now(), msg]

    def complete(self, root: str, spout: str, msg: str) -> None:
        """A tree nobody subscribes to: complete at once."""
        with self.lock:
            del self.pending[root]
        self.worker.record("spout_ack", spout, msg=msg)

    def update(self, spout: str, root: str, value: int) -> None:
        """XOR `value` into the root's entry (XOR is order-free: acks may come in before the spout's own update)."""
        with self.lock:
            entry = self.pending.get(root)
            if entry is None:  # already failed by timeout: Storm drops late acks too
                return
            entry[0] ^= value
            if entry[0] == 0:
                del self.pending[root]
                self.worker.record("spout_ack", spout, msg=entry[3])

    def count(self, spout: str) -> int:
        """The trees of `spout` still pending (max.spout.pending)."""
        with self.lock:
            return sum(1 for entry in self.pending.values() if entry[1] == spout)

    def replays(self, spout: str, fresh: int, at_once: bool) -> list[str]:
        """The failed messages `spout` re-emits with `fresh` new ones: all of them (`at_once`), else one per new
        message (docs/model.md section 7.3)."""
        failed = self.to_replay[spout]
        if not failed:
            return []
        with self.lock:
            take = len(failed) if at_once else min(len(failed), fresh)
            replaying = failed[:take]
            del failed[:take]
        return replaying

    def fail_expired(self, timeout: float, replay: bool) -> None:
        """Fail the roots pending longer than the message timeout, as Storm's acker does; with `replay` each
        failed message is queued for its spout's emission loop."""
        limit = self.worker.now() - timeout
        with self.lock:
            expired = [root for root, entry in self.pending.items() if entry[2] <= limit]
            for root in expired:
                _, spout, _, msg = self.pending.pop(root)
                self.worker.record("spout_fail", spout, msg=msg, reason="TIMEOUT")
                if replay:
                    self.to_replay[spout].append(msg)


class StormWorker:
    """One Storm worker process of the run, inside one Spark task: components as threads, their queues, the acker
    (`Acker`)."""

    def __init__(self, plan: dict[str, Any], index: int, start: float):
        self.plan = plan
        self.index = index
        self.start = start
        self.deadline = float(plan["duration"])
        self.where: dict[str, int] = plan["where"]
        self.components = {c["name"]: c for c in plan["components"]}
        # component -> output stream -> the bolts that receive it (each input stream once)
        self.subscribers: dict[str, dict[str, list[str]]] = plan["subscribers"]
        self.task = {c["name"]: i + 1 for i, c in enumerate(plan["components"])}
        self.acking = bool(plan.get("acking", True))
        self.timeout = float(plan.get("message_timeout", 30.0))
        self.max_pending = plan.get("max_spout_pending")
        self.replay = str(plan.get("replay", "paced"))
        # killed bolts hosted here: down or not, a generation counted up at each kill, when the last kill and
        # restart happened, a wake-up for the executor
        self.kills = [k for k in plan.get("kills", []) if index == self.where[k["bolt"]]]
        self.killable = {k["bolt"] for k in self.kills}
        self.down = {name: False for name in self.killable}
        self.generation = {name: 0 for name in self.killable}
        self.last_kill = {name: -math.inf for name in self.killable}
        self.last_up = {name: -math.inf for name in self.killable}
        self.wake = {name: threading.Event() for name in self.killable}
        self.kill_lock = threading.Lock()
        self.rows: list[Row] = []
        self.queues: dict[str, queue.Queue[Delivery]] = {
            c["name"]: queue.Queue() for c in plan["components"]
            if c["kind"] == "bolt" and self.where[c["name"]] == index}
        self.links: dict[int, tuple[socket.socket, threading.Lock]] = {}
        self.acker = Acker(self, [c["name"] for c in plan["components"] if c["kind"] == "spout"])
        self.edges = random.Random(f"{plan['seed']}/edges/{index}")

    # -- time and records
    def now(self) -> float:
        return time.time() - self.start

    def sleep_until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            time.sleep(delay)

    def record(self, ev: str, comp: str, tuple_id: str | None = None, msg: str | None = None,
               anchors: list[str] | None = None, reason: str | None = None) -> None:
        self.rows.append((self.now(), ev, comp, self.task[comp], tuple_id, msg, anchors, reason, None))

    # -- moving tuples and acker messages
    def deliver(self, target: str, delivery: Delivery) -> None:
        """Put a tuple on a bolt's queue here; a bolt that is down loses it (no ack: its tree will time out)."""
        if target not in self.killable:
            self.queues[target].put(delivery)
            return
        with self.kill_lock:
            if self.down[target]:
                self.record("bolt_lost", target, delivery[0], msg=delivery[2], reason="DOWN")
            else:
                self.queues[target].put(delivery)

    def _send(self, owner: int, line: str) -> None:
        sock, lock = self.links[owner]
        with lock:
            sock.sendall(line.encode())

    def route(self, comp: str, tuple_id: str, spout: str | None, root: str | None, stream: str = "default") -> int:
        """Deliver a tuple of `comp`'s `stream` to every bolt that receives that stream; returns the XOR of the
        deliveries' edge ids."""
        xor = 0
        for target in self.subscribers.get(comp, {}).get(stream, []):
            edge = self.edges.getrandbits(64) | 1 if root is not None else 0
            xor ^= edge
            owner = self.where[target]
            if owner == self.index:
                self.deliver(target, (tuple_id, spout, root, edge))
            else:
                self._send(owner, f"T\t{target}\t{tuple_id}\t{spout or ''}\t{root or ''}\t{edge}\n")
        return xor

    def ack_update(self, spout: str, root: str, value: int) -> None:
        """XOR `value` into the root's acker entry, wherever the spout's worker is."""
        owner = self.where[spout]
        if owner != self.index:
            self._send(owner, f"A\t{spout}\t{root}\t{value}\n")
            return
        self.acker.update(spout, root, value)

    def receive(self, conn: socket.socket) -> None:
        with conn, conn.makefile("r", encoding="utf-8") as lines:
            for line in lines:
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "T":
                    _, target, tuple_id, spout, root, edge = parts
                    self.deliver(target, (tuple_id, spout or None, root or None, int(edge)))
                elif parts[0] == "A":
                    _, spout, root, value = parts
                    self.ack_update(spout, root, int(value))

    # -- components
    def spout(self, name: str) -> None:
        s = self.components[name]
        rng = random.Random(f"{self.plan['seed']}/{name}")
        tau = float(self.plan["tolerance"])
        period = 1.0 / float(s["rate"])
        next_t, count = 0.0, 0
        carries = {stream: Fraction(0) for stream, ratio in s.get("streams", {}).items()
                   if stream != "default" and ratio > 0}  # the declared streams that carry something
        while next_t < self.deadline:
            self.sleep_until(next_t)
            n = rng.randint(1, int(s["burst"]))
            replaying = self.acker.replays(name, n, self.replay == "at-once")  # failed messages go out first
            for replayed in [*replaying, *([None] * n)]:  # nextTuple re-emits failed messages first
                if self.acking and self.max_pending:
                    while self.acker.count(name) >= self.max_pending and self.now() < self.deadline:
                        time.sleep(0.002)
                    if self.now() >= self.deadline:
                        return
                count += 1
                tuple_id = f"{name}-{count}"
                if replayed is None:  # a new message: its id is its first tuple's
                    msg = tuple_id
                    self.record("spout_emit", name, tuple_id, msg=msg)
                else:
                    msg = replayed
                    self.record("spout_emit", name, tuple_id, msg=msg, reason="REPLAY")
                if not self.acking:
                    self.route(name, tuple_id, None, None)
                    self.spout_streams(name, carries, tuple_id, None)
                    self.record("spout_ack", name, msg=msg)  # no ackers: Storm acks at emit
                    continue
                self.acker.register(tuple_id, name, msg)
                # XOR is order-free: acks of the deliveries may come in before this update
                edges = self.route(name, tuple_id, name, tuple_id) ^ self.spout_streams(name, carries, tuple_id,
                                                                                        tuple_id)
                if edges == 0:  # nobody subscribes: the tree is complete at once
                    self.acker.complete(tuple_id, name, msg)
                else:
                    self.ack_update(name, tuple_id, edges)
            next_t += n * period + rng.uniform(-tau, tau) * period

    def spout_streams(self, name: str, carries: dict[str, Fraction], tuple_id: str, root: str | None) -> int:
        """The tuples a spout's declared streams carry for one emitted tuple (ratio r each, the emission rule on
        its own carry), routed in the same tree; returns the XOR of their deliveries' edge ids."""
        xor = 0
        for stream, carry in carries.items():
            ratio = Fraction(str(self.components[name]["streams"][stream]))
            out, carries[stream] = emit_tuples(ratio, carry, 1, self.plan.get("emission", "exact") == "dvert")
            for k in range(out):
                xor ^= self.route(name, f"{tuple_id}/{stream}/{k}", name if root else None, root, stream)
        return xor

    def lose(self, name: str, deliveries: list[Delivery], why: str) -> None:
        """Record the deliveries bolt `name` lost, each with the root tuple of its tree (none for an init tuple)."""
        for delivery in deliveries:
            self.record("bolt_lost", name, delivery[0], msg=delivery[2], reason=why)

    def killer(self, name: str, at: float, down: float) -> None:
        """Kill bolt `name` at `at` and start it again `down` seconds later (docs/spark-runs.md)."""
        self.sleep_until(at)
        if self.now() >= self.deadline:
            return
        inbox = self.queues[name]
        with self.kill_lock:
            self.down[name] = True
            self.generation[name] += 1
            self.last_kill[name] = self.now()
            self.record("bolt_down", name, reason="KILLED")
            waiting: list[Delivery] = []
            while True:
                try:
                    waiting.append(inbox.get_nowait())
                except queue.Empty:
                    break
            self.lose(name, waiting, "QUEUE")
            self.wake[name].set()  # the executor drops the batch it works on
        self.sleep_until(min(at + down, self.deadline))
        with self.kill_lock:
            self.down[name] = False
            self.last_up[name] = self.now()
            self.wake[name].clear()
            self.record("bolt_up", name)

    def bolt(self, name: str) -> None:
        b = self.components[name]
        rng = random.Random(f"{self.plan['seed']}/{name}")
        tau = float(self.plan["tolerance"])
        alpha, parallelism = float(b["alpha"]), int(b["parallelism"])
        inbox = self.queues[name]
        # every output stream that carries something, with its exact σ and its own carry
        streams = {stream: Fraction(str(value)) for stream, value in b.get("streams", {"default": b["sigma"]}).items()
                   if value > 0}
        rounded = self.plan.get("emission", "exact") == "dvert"
        killable = name in self.killable
        carries, count = {stream: Fraction(0) for stream in streams}, 0
        while True:
            generation = self.generation[name] if killable else 0  # before the take: a kill after it is seen
            try:
                first = inbox.get(timeout=0.05)
            except queue.Empty:
                if self.now() >= self.deadline:
                    return
                continue
            if self.now() >= self.deadline:
                return
            batch = [first]
            while len(batch) < parallelism:
                try:
                    batch.append(inbox.get_nowait())
                except queue.Empty:
                    break
            taken = self.now()
            for delivery in batch:
                self.record("take", name, delivery[0])
            work = taken + alpha * rng.uniform(1 - tau, 1 + tau)
            if killable:
                self.wake[name].wait(max(0.0, work - self.now()))
                with self.kill_lock:
                    killed = killable_batch_lost(generation, self.generation[name], taken, self.last_kill[name],
                                                 self.last_up[name], self.down[name])
                    if killed:  # the executor died during the batch: it is lost, and the carry with it
                        self.lose(name, batch, "BATCH")
                if killed:
                    carries = {stream: Fraction(0) for stream in streams}
                    continue
            else:
                self.sleep_until(work)
            children = [0] * len(batch)  # XOR of the edge ids anchored to each tuple of the batch
            for stream, sigma in streams.items():
                out, carries[stream] = emit_tuples(sigma, carries[stream], len(batch), rounded)
                for k in range(out):
                    count += 1
                    tuple_id = f"{name}-{count}"
                    anchor = batch[k % len(batch)]
                    self.record("bolt_emit", name, tuple_id, anchors=[anchor[0]])
                    children[k % len(batch)] ^= self.route(name, tuple_id, anchor[1], anchor[2], stream)
            for delivery, child_xor in zip(batch, children, strict=True):
                self.record("bolt_ack", name, delivery[0])
                if self.acking and delivery[2] is not None:
                    self.ack_update(delivery[1], delivery[2], delivery[3] ^ child_xor)

    def sampler(self) -> None:
        t = 0.0
        while t <= self.deadline:
            self.sleep_until(t)
            stamp = self.now()
            for name, inbox in self.queues.items():
                self.rows.append((stamp, None, name, self.task[name], None, None, None, None, inbox.qsize()))
            if self.acking:
                self.acker.fail_expired(self.timeout, self.replay != "none")
            t += float(self.plan["sample"])

    def run(self) -> list[Row]:
        init = int(self.plan["init_queues"])
        for name, inbox in self.queues.items():
            for i in range(init):
                inbox.put((f"{name}-init-{i + 1}", None, None, 0))
        mine = [c for c in self.plan["components"] if self.where[c["name"]] == self.index]
        threads = [threading.Thread(target=self.spout if c["kind"] == "spout" else self.bolt, args=(c["name"],),
                                    name=f"{c['kind']}-{c['name']}", daemon=True) for c in mine]
        threads.append(threading.Thread(target=self.sampler, name="queue-sampler", daemon=True))
        threads += [threading.Thread(target=self.killer, args=(k["bolt"], float(k["at"]), float(k["down"])),
                                     name=f"kill-{k['bolt']}", daemon=True) for k in self.kills]
        self.sleep_until(0.0)
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return self.rows


def arrow_batches(rows: list[Row], size: int = 65536) -> Iterator[Any]:
    """The rows as Arrow record batches: the Arrow form of app.measure.eventlog.FLAT_DDL (the job's schema)."""
    import pyarrow as pa

    schema = pa.schema([("t", pa.float64()), ("ev", pa.string()), ("comp", pa.string()), ("task", pa.int64()),
                        ("tuple", pa.string()), ("msg", pa.string()), ("anchors", pa.list_(pa.string())),
                        ("reason", pa.string()), ("queue", pa.int64())])
    for lo in range(0, max(len(rows), 1), size):
        chunk = rows[lo:lo + size]
        yield pa.RecordBatch.from_arrays(
            [pa.array([r[i] for r in chunk], type=field.type) for i, field in enumerate(schema)], schema=schema)


#: `ev` of the one row per task that carries its phase marks (not an event: the driver takes it out)
PHASES = "__phases__"


def phase_row(index: int, marks: dict[str, float]) -> Row:
    """The row carrying task `index`'s phase marks (epoch seconds, JSON in `msg`; its Python worker's pid)
    back to the driver."""
    return (0.0, PHASES, "", index, None, json.dumps(marks), None, None, None)


def task_function(plan_json: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The function every barrier task runs: connect to the other tasks, run the hosted components."""

    def run_partition(batches: Iterator[Any]) -> Iterator[Any]:
        entered = time.time()  # this task's Python worker is up and running our code
        from pyspark import BarrierTaskContext

        for _ in batches:  # one input row per task; its value is the partition id anyway
            pass
        ctx = BarrierTaskContext.get()
        index = ctx.partitionId()
        plan = json.loads(plan_json)
        workers = int(plan["workers"])
        meeting = plan.get("rendezvous")  # [host, port, token] of the driver's Rendezvous, or None: allGather
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        host = "127.0.0.1" if workers == 1 or meeting else own_address()
        server.bind((host, 0))
        server.listen(workers)
        port = server.getsockname()[1]
        desk = None
        if workers == 1:  # nobody to meet: start now
            peers, start = [[host, port]], time.time()
        elif meeting:  # on this machine: meet at the driver's socket (app.spark.run_job.Rendezvous)
            desk = socket.create_connection((meeting[0], int(meeting[1])), timeout=120)
            desk.settimeout(None)
            desk_lines = desk.makefile("rw", encoding="utf-8")
            desk_lines.write(f"{meeting[2]}\t{index}\t{host}\t{port}\n")
            desk_lines.flush()
            peers, start = json.loads(desk_lines.readline()), 0.0
        else:  # Spark's own exchange (answers at its next poll, once a second): the common start is its answer
            addresses = ctx.allGather(json.dumps([host, port, time.time()]))
            peers = [json.loads(a)[:2] for a in addresses]
            start = max(json.loads(a)[2] for a in addresses) + 1.0  # a second after the last task was ready
        gathered = time.time()
        worker = StormWorker(plan, index, start)
        accepted: list[socket.socket] = []

        def accept_all() -> None:
            for _ in range(workers - 1):
                conn, _addr = server.accept()
                accepted.append(conn)

        acceptor = threading.Thread(target=accept_all, daemon=True)
        acceptor.start()
        for other, (peer_host, peer_port) in enumerate(peers):
            if other != index:
                sock = socket.create_connection((peer_host, peer_port), timeout=30)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                worker.links[other] = (sock, threading.Lock())
        acceptor.join(60)
        connected = time.time()
        if desk is not None:  # every link is up here: the driver names the common start once all tasks say so
            desk_lines.write("connected\n")
            desk_lines.flush()
            start = worker.start = float(desk_lines.readline())
            desk_lines.close()
            desk.close()
        receivers = [threading.Thread(target=worker.receive, args=(c,), daemon=True) for c in accepted]
        for r in receivers:
            r.start()
        rows = worker.run()
        ended = time.time()
        # This task sends nothing more (its components have stopped; a receiver only queues tuples and acks
        # spouts hosted here): close our side of every link. A receiver ends when its peer has closed its side,
        # so once all have ended every task has stopped sending (Spark's barrier() would answer a second late).
        for sock, _lock in worker.links.values():
            sock.shutdown(socket.SHUT_WR)
        for r in receivers:
            r.join()
        server.close()
        for sock, _lock in worker.links.values():
            sock.close()
        marks = {"pid": os.getpid(), "entered": entered, "gathered": gathered, "connected": connected,
                 "start": start, "ended": ended, "returned": time.time()}
        rows.append(phase_row(index, marks))
        yield from arrow_batches(rows)

    return run_partition


def own_address() -> str:
    """This machine's address as other machines see it (falls back to loopback)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
