"""Running a topology on Spark with a synthetic workload: the run job (the driver side).

How the topology maps onto Spark (docs/spark-runs.md has the full story): one Spark job
(`mapInArrow` in *barrier* mode, so classic sessions and Spark Connect run it alike)
with W tasks that all start together, like the W worker processes of a Storm topology.
Every spout and bolt is a thread ("executor") inside one of these tasks, placed round-robin.
Each bolt owns a real receive queue (`queue.Queue`); a tuple for a bolt in the same task is
put on its queue directly, a tuple for a bolt in another
task travels over a TCP connection between the tasks (addresses exchanged at the driver's
`Rendezvous` on this machine, with `BarrierTaskContext.allGather` on a cluster). Everything
happens in wall-clock time: spouts sleep between bursts, bolts sleep α·(1 ± τ) per batch.
Each task records its events and queue samples and returns them as the job's result; the
driver writes the run folder.

The workload follows the model (docs/timed-counter-network.md, section 2): a spout
emits a burst of n ∈ [1, burst] tuples, then waits n/rate ± τ/rate; a bolt takes up to
`parallelism` waiting tuples at once (within max_idle_time: at once here), works
α·U(1−τ, 1+τ) seconds, then emits ⌊σ·buffer⌋ tuples (the model's buffer rule) to every
subscriber and acks its batch. Storm's acker tracks every tuple tree (XOR of edge ids),
so spouts see `spout_ack` when a tree completes and `spout_fail` (reason `TIMEOUT`) when
it takes longer than the message timeout; with `acking=False` a spout acks at emit, as
Storm does without ackers. `kills` kill bolt executors during the run (their queue, batch
and arriving tuples lost) and reliable spouts replay the failed trees' messages.
The task side lives in :mod:`app.spark.tasks` (standard
library only, shipped to Spark's Python workers); this module is the driver.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from app.core.errors import Cancelled
from app.core.topology import Topology


class Kill(BaseModel):
    """One killed task: bolt `bolt`'s executor dies `at_s` seconds after the start and is down `down_s` seconds."""

    bolt: str
    at_s: float = Field(ge=0, allow_inf_nan=False)
    down_s: float = Field(gt=0, allow_inf_nan=False)


def parse_kill(text: str) -> tuple[str, float, float | None]:
    """`BOLT@TIME[/DOWN]` (times in seconds or with a unit: 500ms, 5s, 2min) as (bolt, time, down or None);
    a ValueError says what is wrong. The bolt is checked against the topology by `plan_kills`."""
    from app.core.topology import one_line
    from app.core.units import UnitError, parse_duration

    shown = one_line(text)[:40]
    name, at, rest = text.rpartition("@")
    if not at or not name:
        raise ValueError(f"expected BOLT@TIME[/DOWN], got '{shown}'")
    when, slash, down = rest.partition("/")
    times: list[float] = []
    for what, value in (("TIME", when), ("DOWN", down)) if slash else (("TIME", when),):
        try:
            seconds = parse_duration(value)
        except (UnitError, ValueError, OverflowError) as err:
            raise ValueError(f"{shown}: {what} {one_line(str(err))}") from None
        if what == "TIME" and seconds < 0:
            raise ValueError(f"{shown}: TIME must be at least 0 (s), got {one_line(value)[:40]}")
        if what == "DOWN" and seconds <= 0:
            raise ValueError(f"{shown}: DOWN must be above 0 (s), got {one_line(value)[:40]}")
        times.append(seconds)
    return name, times[0], times[1] if slash else None


def plan_kills(topo: Topology, items: list[tuple[str, float, float | None]], duration_s: float) -> list[Kill]:
    """Parsed kills checked against the topology and the run: a bolt, killed before the end, not down already;
    DOWN defaults to the document's `settings.min_reboot_time` when it has one, else 1 s. A ValueError starts
    with the kill it is about."""
    from app.core.topology import one_line

    default = getattr(topo.settings, "min_reboot_time", None)
    down_default = float(default) if default is not None else 1.0
    spouts = {s.name for s in topo.spouts}
    bolts = {b.name for b in topo.bolts}
    kills: list[Kill] = []
    for name, at, down in items:
        shown = one_line(name)[:40]
        if name in spouts:
            raise ValueError(f"{shown}: a spout cannot be killed (only a bolt's task)")
        if name not in bolts:
            raise ValueError(f"{shown}: no bolt named '{shown}'")
        if at >= duration_s:
            raise ValueError(f"{shown}@{at:g}: the time must be before the end of the run ({duration_s:g} s)")
        kills.append(Kill(bolt=name, at_s=at, down_s=down if down is not None else down_default))
    kills.sort(key=lambda k: (k.bolt, k.at_s))
    for a, b in zip(kills, kills[1:], strict=False):
        if a.bolt == b.bolt and b.at_s < a.at_s + a.down_s:
            raise ValueError(f"{one_line(b.bolt)[:40]}@{b.at_s:g}: the bolt is still down then "
                             f"(killed at {a.at_s:g} s for {a.down_s:g} s)")
    return kills


class RunSpec(BaseModel):
    """Everything a run needs (the driver turns it into the plain plan the Spark tasks run)."""

    topology: Topology
    duration_s: float = Field(gt=0)
    seed: int = 1
    sample_interval_s: float = Field(default=0.25, gt=0)
    workers: int | None = Field(default=None, ge=1,
                                description="Spark tasks hosting the components; None = as many as fit")
    acking: bool = Field(default=True,
                         description="track tuple trees as Storm's acker does (topology.acker.executors >= 1)")
    message_timeout_s: float = Field(default=30.0, gt=0, description="topology.message.timeout.secs")
    max_spout_pending: int | None = Field(default=None, ge=1, description="topology.max.spout.pending per spout task")
    kills: list[Kill] = Field(default_factory=list, description="bolt tasks killed during the run")
    replay: str = Field(default="paced", pattern="^(paced|at-once|none)$",
                        description="how a reliable spout replays failed messages (Storm: paced, through nextTuple)")


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
    phases: dict[str, float] = Field(default_factory=dict,
                                     description="seconds per phase of the run (phase_times; docs/spark-runs.md)")
    task_pids: list[int] = Field(default_factory=list,
                                 description="the Python worker process of each task, in task order (the same "
                                             "processes again when Spark reuses its workers for the next run)")


class RunCancelled(Cancelled, RuntimeError):
    """The run was cancelled before it finished; nothing was written."""


def windows_problem(topo: Topology) -> str | None:
    """Why a document with a windowed bolt or a join cannot run on Spark (None: it has none): the run engine plays
    every bolt as section 2's and has no window or join rule yet (docs/model.md sections 10 and 11); it never runs
    one as an ordinary bolt."""
    windowed = topo.windowed_bolts()
    joins = topo.waiting_joins()
    if joins:  # nor joins (docs/model.md section 11)
        return (f"bolts.{joins[0].name}.join: a run on Spark has no joins yet (docs/model.md section 11): it would "
                "play the join as an ordinary bolt fed by the sum of its branches; remove the join to run it")
    if not windowed:
        return None
    return (f"bolts.{windowed[0].name}.window: a run on Spark has no windowed bolts yet (docs/model.md section 10): "
            "it would play the bolt as an ordinary one; remove the window to run it")


def placement(topo: Topology, workers: int) -> dict[str, int]:
    """Component name -> worker index, round-robin over spouts then bolts."""
    return {c.name: i % workers for i, c in enumerate(topo.components)}


# ---- the driver ------------------------------------------------------------


def plan_of(spec: RunSpec, workers: int) -> dict[str, Any]:
    """The plain-data plan the Spark tasks run (app.spark.tasks needs no pydantic)."""
    topo = spec.topology
    names = {c.id: c.name for c in topo.components}
    # who receives each output stream: what each bolt receives is its input streams, each once (Topology.inputs,
    # the rate check's and the network's definition): a repeated subscription delivers once, a declared stream
    # only its own tuples
    subscribers: dict[str, dict[str, list[str]]] = {c.name: {} for c in topo.components}
    for target, streams in topo.inputs().items():
        for source, stream in streams:
            subscribers[names[source]].setdefault(stream, []).append(names[target])
    components = []
    for c in topo.components:
        # every output stream and its σ (a spout's: its ratio; 'default' carries a spout's emissions themselves)
        ratios = {name: float(value) for name, value in c.output_streams().items() if value is not None}
        if c.kind == "spout":
            components.append({"name": c.name, "kind": "spout", "rate": float(c.rate), "burst": int(c.burst),
                               "streams": ratios})
        else:
            components.append({"name": c.name, "kind": "bolt", "alpha": float(c.alpha), "sigma": float(c.sigma),
                               # C_TAKE: an asynchronous bolt's executors × threads (docs/model.md section 8)
                               "parallelism": int(c.take_max), "streams": ratios})
    return {"duration": spec.duration_s, "seed": spec.seed, "sample": spec.sample_interval_s,
            "tolerance": float(topo.settings.tolerance), "init_queues": int(topo.settings.init_queues),
            "emission": topo.settings.emission,
            "acking": spec.acking, "message_timeout": spec.message_timeout_s,
            "max_spout_pending": spec.max_spout_pending, "components": components, "subscribers": subscribers,
            "kills": [{"bolt": k.bolt, "at": k.at_s, "down": k.down_s} for k in spec.kills], "replay": spec.replay,
            "where": placement(topo, workers), "workers": workers}


class Rendezvous:
    """Where the tasks of a run on this machine meet, instead of `BarrierTaskContext.allGather`: Spark
    answers a barrier call at its next poll, once a second, so each exchange cost a second of the run's
    time. A socket of the driver's process on 127.0.0.1; each task sends `token, index, host, port`
    (a task of a retried stage replaces its index's earlier one); when all W tasks are there, each gets
    the list of addresses, connects to the others and says `connected`; when all have, each gets the
    common start (epoch seconds, `START_MARGIN` from then). Only for tasks on this machine
    (`tasks_meet_here`): a cluster's executors may not reach this process, and they meet with allGather
    as before."""

    START_MARGIN = 0.1  # seconds for the start to reach every task before it comes

    def __init__(self, workers: int):
        import socket

        self.workers = workers
        self.token = uuid.uuid4().hex
        self.server = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, name="run-rendezvous", daemon=True)
        self.thread.start()

    @property
    def address(self) -> list[Any]:
        return ["127.0.0.1", self.server.getsockname()[1], self.token]

    def _serve(self) -> None:
        waiting: dict[int, tuple[list[Any], Any, Any]] = {}  # task index -> its address, socket, lines
        while True:
            try:
                conn, _addr = self.server.accept()
            except OSError:  # closed: the job is over
                return
            lines = conn.makefile("rw", encoding="utf-8")
            try:
                conn.settimeout(60)
                token, index_text, host, port = lines.readline().rstrip("\n").split("\t")
                if token != self.token:
                    raise ValueError(token)
                index, address = int(index_text), [host, int(port)]
            except (OSError, ValueError):
                _hang_up(conn, lines)
                continue
            stale = waiting.pop(index, None)  # an earlier attempt's task (Spark retried the stage)
            if stale is not None:
                _hang_up(stale[1], stale[2])
            waiting[index] = (address, conn, lines)
            if len(waiting) == self.workers:
                group = [waiting[i] for i in sorted(waiting)]
                waiting = {}
                self._meet(group)

    def _meet(self, group: list[tuple[list[Any], Any, Any]]) -> None:
        """Addresses to all, then the start once every task has connected (a task that fails closes its socket:
        the attempt is given up, Spark fails or retries the stage)."""
        try:
            addresses = json.dumps([address for address, _, _ in group]) + "\n"
            for _, _, lines in group:
                lines.write(addresses)
                lines.flush()
            for _, conn, lines in group:
                conn.settimeout(None)  # connecting may take long on a loaded machine; a dead task closes it
                if lines.readline().strip() != "connected":
                    return
            start = f"{time.time() + self.START_MARGIN!r}\n"
            for _, _, lines in group:
                lines.write(start)
                lines.flush()
        except OSError:
            return
        finally:
            for _, conn, lines in group:
                _hang_up(conn, lines)

    def close(self) -> None:
        """Stop serving (shutdown wakes the thread blocked in accept; close alone does not on Linux)."""
        import socket

        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self.thread.join(5)


def _hang_up(conn: Any, lines: Any) -> None:
    """Close a task's socket and its file (the socket stays open while its file does)."""
    for closing in (lines, conn):
        with contextlib.suppress(OSError):
            closing.close()


def tasks_meet_here(spark: Any) -> bool:
    """Whether the run's tasks run on this machine (a local master, or a Spark Connect server here whose
    master is local), so they can reach a Rendezvous of this process."""
    from app.spark.session import connect_address, is_connect, is_local_host, master_of

    if not is_connect(spark):
        return master_of(spark).startswith("local")
    try:
        server_master = str(spark.conf.get("spark.master", ""))
        return is_local_host(connect_address(master_of(spark))[0]) and server_master.startswith("local")
    except Exception:  # noqa: BLE001 - a server that does not say: meet with allGather
        return False


#: The phases of a run in the order they happen (docs/spark-runs.md, "Where a run's time goes")
PHASE_NAMES = ("host_start", "worker_start", "shared_start", "run", "collect", "write")


def phase_times(submitted: float, marks: list[dict[str, float]], collected: float, written: float,
                host_start_s: float | None = None) -> dict[str, float]:
    """Seconds per phase from the driver's clock readings and each task's marks (epoch seconds):
    `worker_start` from submitting the job until the last task runs our code (Spark schedules the
    tasks and starts its Python workers), `shared_start` from then to the common start (the tasks
    meet and connect), `run` the run itself until the last task stops, `collect` until the driver
    has every record (the tasks close their links, make Arrow batches, Spark brings them), `write` the
    run folder;
    `host_start` (starting the Spark host and its session) when the caller measured it."""
    phases: dict[str, float] = {}
    if host_start_s is not None:
        phases["host_start"] = host_start_s
    if marks:
        entered = max(m["entered"] for m in marks)
        start = max(m["start"] for m in marks)
        ended = max(m["ended"] for m in marks)
        phases.update(worker_start=entered - submitted, shared_start=start - entered, run=ended - start,
                      collect=collected - ended)
    phases["write"] = written - collected
    return {name: round(max(0.0, value), 3) for name, value in phases.items()}


def _explain(err: BaseException, workers: int) -> BaseException:
    """Spark's refusals that the user's setup causes, as SparkUnavailable with one line saying
    what to change; other errors unchanged."""
    from app.spark.session import PYSPARK_REQUIREMENT, SparkUnavailable

    text = str(err)
    if "BARRIER_" in text or "more slots than the total number" in text or "barrier stage that requires" in text:
        return SparkUnavailable(f"Spark cannot start {workers} tasks at once (barrier mode); "
                                f"pass --workers with at most the cluster's free task slots")
    if "No module named 'pyarrow'" in text:
        return SparkUnavailable("Spark's Python workers have no pyarrow (the run's tasks return Arrow batches): "
                                f"install '{PYSPARK_REQUIREMENT}' in the Python they use "
                                "(PYSPARK_PYTHON of the cluster or Spark Connect server)")
    return err


def run_on_spark(spark: Any, spec: RunSpec, out_dir: str | os.PathLike[str], fmt: str = "jsonl",
                 progress: Callable[[float, str], None] | None = None,
                 cancel: threading.Event | None = None, host_start_s: float | None = None) -> RunResult:
    """Run the topology as one barrier job, then write events, queues, topology and run.json to `out_dir`.

    The job is `spark.range(W).mapInArrow(task, barrier=True)`: DataFrame operations only,
    so the same code runs on a classic session and over Spark Connect. Cancel interrupts
    the job through its tag. `run.json` records the time of each phase (`result.phases`, see
    :func:`phase_times`; `host_start_s` is the caller's measure of starting the host).
    """
    from app.core.fileio import write_atomic
    from app.measure.eventlog import FLAT_DDL, Event, QueueSample, write_records
    from app.spark.session import master_of, task_slots
    from app.spark.tasks import PHASES, task_function

    slots = task_slots(spark)
    n_components = len(spec.topology.components)
    workers = min(spec.workers or slots, slots, n_components)
    plan = plan_of(spec, workers)
    rendezvous = Rendezvous(workers) if workers > 1 and tasks_meet_here(spark) else None
    plan["rendezvous"] = rendezvous.address if rendezvous is not None else None
    job = task_function(json.dumps(plan))
    tag = f"stormbound-run-{uuid.uuid4().hex[:8]}"
    outcome: dict[str, Any] = {}

    def submit() -> None:
        spark.addTag(tag)  # tags belong to the thread that starts the job
        try:
            outcome["submitted"] = time.time()
            frame = spark.range(0, workers, 1, workers).mapInArrow(job, FLAT_DDL, barrier=True)
            outcome["table"] = frame.toArrow()
            outcome["collected"] = time.time()
        except BaseException as err:  # noqa: BLE001 - reported to the caller below
            outcome["error"] = err
        finally:
            spark.removeTag(tag)

    began = time.time()
    runner = threading.Thread(target=submit, name="spark-run", daemon=True)
    runner.start()
    try:
        while runner.is_alive():
            runner.join(0.25)
            if cancel is not None and cancel.is_set():
                spark.interruptTag(tag)
                runner.join(30)
                raise RunCancelled("run cancelled")
            if progress is not None:
                elapsed = time.time() - began
                progress(min(0.99, elapsed / (spec.duration_s + 3.0)), f"running {elapsed:.0f}/{spec.duration_s:g} s")
    finally:
        if rendezvous is not None:
            rendezvous.close()
    if "error" in outcome:
        if cancel is not None and cancel.is_set():
            raise RunCancelled("run cancelled")
        raise _explain(outcome["error"], workers)
    rows = outcome["table"].to_pylist()
    marks = [{**json.loads(r["msg"]), "index": r["task"]} for r in rows if r["ev"] == PHASES]
    events = [Event(t=r["t"], ev=r["ev"], comp=r["comp"], task=r["task"], tuple=r["tuple"], msg=r["msg"],
                    anchors=r["anchors"], reason=r["reason"]) for r in rows if r["ev"] not in (None, PHASES)]
    samples = [QueueSample(t=r["t"], comp=r["comp"], task=r["task"], queue=r["queue"]) for r in rows if r["ev"] is None]
    events.sort(key=lambda e: e.t)
    samples.sort(key=lambda q: q.t)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_records(out / f"events.{fmt}", events)
    write_records(out / f"queues.{fmt}", samples)
    write_atomic(out / "topology.storm.json", spec.topology.to_json_bytes())
    phases = phase_times(outcome["submitted"], marks, outcome["collected"], time.time(), host_start_s)
    result = RunResult(out_dir=str(out), events=len(events), queue_samples=len(samples), duration_s=spec.duration_s,
                       workers=workers, placement=plan["where"], master=master_of(spark), wall_s=time.time() - began,
                       phases=phases, task_pids=[int(m["pid"]) for m in sorted(marks, key=lambda m: m["index"])])
    reliability: dict[str, Any] = {"topology.acker.executors": 1 if spec.acking else 0,
                                   "topology.message.timeout.secs": spec.message_timeout_s}
    if spec.max_spout_pending is not None:
        reliability["topology.max.spout.pending"] = spec.max_spout_pending
    meta = {"format": "stormbound-run/1", "spec": json.loads(spec.model_dump_json(exclude={"topology"})),
            "result": result.model_dump(), "reliability": reliability}
    write_atomic(out / "run.json", (json.dumps(meta, indent=2) + "\n").encode())
    if progress is not None:
        progress(1.0, f"wrote {len(events)} events to {out}")
    return result
