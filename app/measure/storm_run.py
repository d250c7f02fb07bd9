"""A measured run of a real Storm cluster: the run folder `stormbound record` and `import metrics` write.

A *Storm run folder* (docs/storm-runs.md) holds

* `storm-run.json`: what was recorded (format `stormbound-storm-run/1`, the source, the Storm UI's
  address, the topology, the poll interval, the topology's configuration as the UI served it);
* `polls.jsonl`: one JSON line per poll of the Storm UI, in time order: `{"poll": N, "t": UNIX_S,
  "ok": true, "topology": PAGE, "components": {NAME: PAGE}, "lag": REPLY|null, "lag_error": TEXT|null}`
  (all-time counts; the topology page without its `configuration`), or a gap when the poll failed:
  `{"poll": N, "t": UNIX_S, "ok": false, "gap": "one line: what went wrong"}`;
* `queues.jsonl` (from a metrics-v2 reporter, `import metrics`): queue samples of the event-log format
  (`{"t", "comp", "task", "queue"}`, docs/event-log.md), one per executor's receive-queue population.

Lines are appended whole (one write, flushed and synced), so a recorder that is stopped or killed
leaves every finished poll readable; a last line cut short is ignored by the reader (and removed before
a recorder appends again).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from app.core.errors import StormboundError
from app.core.fileio import write_output

if TYPE_CHECKING:
    from app.core.topology import Topology

RUN_FORMAT = "stormbound-storm-run/1"
HEADER = "storm-run.json"
POLLS = "polls.jsonl"
QUEUES = "queues.jsonl"
MAX_LINE_BYTES = 50_000_000


class StormRunError(StormboundError, ValueError):
    """A Storm run folder or metrics folder that cannot be read: one line naming the file and the problem."""


class StormRunHeader(BaseModel):
    """`storm-run.json`: what a Storm run folder holds."""

    format: Literal["stormbound-storm-run/1"] = "stormbound-storm-run/1"
    source: Literal["storm-ui", "metrics"] = "storm-ui"
    url: str = ""
    topology: str = ""
    topology_id: str = ""
    every_s: float | None = None
    started: float | None = Field(default=None, description="unix time of the first poll")
    configuration: dict[str, Any] = Field(default_factory=dict, description="the topology's configuration (UI)")
    storm_version: str | None = None
    metrics_from: str | None = Field(default=None, description="the metrics folder or file imported")


class Poll(BaseModel):
    """One line of polls.jsonl: a reading of the Storm UI, or a gap."""

    poll: int
    t: float
    ok: bool
    topology: dict[str, Any] = Field(default_factory=dict)
    components: dict[str, dict[str, Any]] = Field(default_factory=dict)
    page_t: dict[str, float] = Field(default_factory=dict)  # unix time each component page was requested
    lag: Any = None
    lag_error: str | None = None
    gap: str | None = None


def components_mismatch(model: Topology, poll: Poll) -> str | None:
    """None when the model's spouts and bolts are those the poll's topology page runs, else one line naming the
    names that differ."""
    running: dict[str, set[str]] = {"spouts": set(), "bolts": set()}
    for key, id_key in (("spouts", "spoutId"), ("bolts", "boltId")):
        for row in poll.topology.get(key) or []:
            name = row.get(id_key) if isinstance(row, dict) else None
            if isinstance(name, str) and not name.startswith("__"):
                running[key].add(name)
    mine = {"spouts": {s.name for s in model.spouts}, "bolts": {b.name for b in model.bolts}}
    parts = []
    for key in ("spouts", "bolts"):
        only_doc, only_run = sorted(mine[key] - running[key]), sorted(running[key] - mine[key])
        if only_doc:
            parts.append(f"{key} only in the document: {', '.join(only_doc)}")
        if only_run:
            parts.append(f"{key} only on the cluster: {', '.join(only_run)}")
    if not parts:
        return None
    return f"the document is not the running topology ({'; '.join(parts)})"


def is_storm_run(path: str | os.PathLike[str]) -> bool:
    """A folder written by `record` or `import metrics` (it has storm-run.json)."""
    p = Path(path)
    return p.is_dir() and (p / HEADER).is_file()


def read_header(folder: str | os.PathLike[str]) -> StormRunHeader:
    path = Path(folder) / HEADER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return StormRunHeader.model_validate(data)
    except OSError as err:
        raise StormRunError(f"{path}: cannot read: {err.strerror or err}") from None
    except ValueError as err:
        first = str(err).splitlines()[0]
        raise StormRunError(f"{path}: not a Storm run header ({first})") from None


def write_header(folder: str | os.PathLike[str], header: StormRunHeader) -> None:
    """storm-run.json, written atomically (replaced as a whole)."""
    write_output(Path(folder) / HEADER, json.dumps(header.model_dump(), indent=2).encode() + b"\n", force=True)


def read_polls(folder: str | os.PathLike[str]) -> tuple[list[Poll], list[str]]:
    """Every poll of polls.jsonl in order, and notes (a last line cut short is left out and noted)."""
    path = Path(folder) / POLLS
    polls: list[Poll] = []
    notes: list[str] = []
    if not path.exists():
        return polls, notes
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        last = number == len(lines) and not complete
        try:
            polls.append(Poll.model_validate(json.loads(raw)))
        except ValueError as err:
            if last:
                notes.append(f"{POLLS} line {number}: cut short (the recorder stopped while writing it): left out")
                continue
            raise StormRunError(f"{path} line {number}: not a poll record ({str(err).splitlines()[0]})") from None
    return polls, notes


class PollWriter:
    """Appends poll lines to polls.jsonl: each line in one write, flushed and synced; a partial last line
    left by an earlier recorder is cut off first, so the file stays one complete record per line."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.path = Path(folder) / POLLS
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                with open(self.path, "r+b") as f:
                    f.truncate(data.rfind(b"\n") + 1)
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open for the recording, closed by close()

    def append(self, poll: Poll) -> None:
        line = json.dumps(poll.model_dump(exclude_defaults=False), separators=(",", ":")).encode() + b"\n"
        self._file.write(line)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> PollWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def next_poll_number(folder: str | os.PathLike[str]) -> int:
    polls, _ = read_polls(folder) if (Path(folder) / POLLS).exists() else ([], [])
    return (polls[-1].poll + 1) if polls else 1


# ---- metrics v2 reporters: CSV files and Graphite plaintext --------------------------------

#: storm.worker.{topology ID}.{hostname}.{component ID}.{task ID}.{worker port}-{metric name} (Storm 2.x's
#: StormMetricRegistry; `storm.topology.` in Storm 1.2's metrics_v2 documentation); dots inside the parts are
#: written as underscores
METRIC_NAME = re.compile(r"^storm\.(?:worker|topology)\.(?P<topology>[^.]+)\.(?P<host>[^.]+)\.(?P<component>[^.]+)"
                         r"\.(?P<task>-?\d+)\.(?P<port>\d+)-(?P<name>.+)$")
#: the executor's receive-queue population: Storm 2.x's JCQueueMetrics (`receive-queue-population`), and the
#: names earlier reporters used
QUEUE_METRICS = ("receive-queue-population", "receive-queue.population", "receive_queue.population",
                 "__receive.population")
#: what else of an executor's receive queue Storm 2.x reports (storm-client JCQueueMetrics, prefix receive-queue)
RECEIVE_QUEUE = ("receive-queue-population", "receive-queue-capacity", "receive-queue-pct_full",
                 "receive-queue-arrival_rate_secs", "receive-queue-sojourn_time_ms", "receive-queue-insert_failures",
                 "receive-queue-dropped_messages", "receive-queue-overflow")
#: the task metrics read beside them (a bolt's busy fraction and latencies; a spout held back)
TASK_METRICS = ("__capacity", "__execute-latency", "__process-latency", "__complete-latency",
                "__skipped-max-spout-ms", "__skipped-backpressure-ms")
EXECUTOR_METRICS = "metrics.jsonl"  # those, one {"t", "comp", "task", "name", "value"} per line
FULL_FRACTION = 0.99  # a receive queue this full (population / capacity, or pct_full) is full


class MetricPoint(BaseModel):
    t: float
    topology: str
    host: str
    component: str
    task: int
    port: int
    name: str
    value: float


def parse_metric_name(name: str) -> dict[str, Any] | None:
    """The parts of a metrics-v2 name, None when it is not one of a topology's executor metrics."""
    m = METRIC_NAME.match(name.strip())
    if m is None:
        return None
    parts = m.groupdict()
    return {**parts, "task": int(parts["task"]), "port": int(parts["port"])}


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _csv_points(path: Path, parts: dict[str, Any]) -> Iterator[MetricPoint]:
    """One Dropwizard CsvReporter file: a header `t,value` (a gauge; `t,count` a counter, `t,count,...`
    a meter or timer: its first column after t), one row per report, t in unix seconds."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if not header or header[0].strip() != "t" or len(header) < 2:
            raise StormRunError(f"{path}: not a metrics CSV file (expected a header t,value or t,count,...)")
        column = 1
        for number, row in enumerate(rows, 2):
            if not row:
                continue
            t = _finite(row[0]) if row else None
            value = _finite(row[column]) if len(row) > column else None
            if t is None or value is None:
                raise StormRunError(f"{path} line {number}: expected a time and a number, got {','.join(row)[:60]}")
            yield MetricPoint(t=t, value=value, **parts)


def _graphite_points(path: Path) -> Iterator[MetricPoint]:
    """Graphite plaintext lines: `NAME VALUE UNIX_TIME`; names that are not a topology's executor
    metrics are skipped (a worker's or the JVM's)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3:
                raise StormRunError(f"{path} line {number}: expected 'NAME VALUE TIME' (Graphite plaintext)")
            parts = parse_metric_name(fields[0])
            value, t = _finite(fields[1]), _finite(fields[2])
            if value is None or t is None:
                raise StormRunError(f"{path} line {number}: value and time must be finite numbers")
            if parts is not None:
                yield MetricPoint(t=t, value=value, **parts)


def read_metrics(path: str | os.PathLike[str]) -> list[MetricPoint]:
    """Every executor metric of a CSV reporter's folder (one `NAME.csv` per metric) or of Graphite
    plaintext files (a file, or the `.txt`/`.log`/`.graphite` files of a folder)."""
    root = Path(path)
    if not root.exists():
        raise StormRunError(f"{root}: no such file or folder")
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    points: list[MetricPoint] = []
    for f in files:
        if f.suffix == ".csv":
            parts = parse_metric_name(f.name[:-4])
            if parts is not None:
                points.extend(_csv_points(f, parts))
        elif f.suffix in (".txt", ".log", ".graphite", ".plain") or not root.is_dir():
            points.extend(_graphite_points(f))
    if not points:
        raise StormRunError(f"{root}: no metrics-v2 executor metrics found (files named "
                            "storm.topology.ID.HOST.COMPONENT.TASK.PORT-NAME.csv, or Graphite lines)")
    return points


def queue_samples(points: list[MetricPoint]) -> list[dict[str, Any]]:
    """The receive-queue populations as queue samples (t relative to the first point), system components
    (`__acker`, `__system`, ...) left out."""
    samples = [p for p in points if p.name in QUEUE_METRICS and not p.component.startswith("__")]
    if not samples:
        return []
    origin = min(p.t for p in samples)
    return [{"t": round(p.t - origin, 6), "comp": p.component, "task": max(0, p.task), "queue": max(0, round(p.value))}
            for p in sorted(samples, key=lambda p: (p.t, p.component, p.task))]


def _metric_kind(name: str) -> str | None:
    """The JCQueueMetrics or task metric a reported name is (a task metric may carry a stream after it)."""
    if name in RECEIVE_QUEUE:
        return name
    if name in QUEUE_METRICS:
        return "receive-queue-population"
    for kind in TASK_METRICS:
        if name == kind or name.startswith((kind + "-", kind + ".", kind + ":")):
            return kind
    return None


def executor_metric_rows(points: list[MetricPoint]) -> list[dict[str, Any]]:
    """The receive-queue and task metrics of the topology's own components as rows {t (unix s), comp, task, name,
    value}, in time order."""
    rows = []
    for p in points:
        kind = _metric_kind(p.name)
        if kind is not None and not p.component.startswith("__"):
            rows.append({"t": p.t, "comp": p.component, "task": p.task, "name": kind, "value": p.value})
    return sorted(rows, key=lambda r: (r["t"], r["comp"], r["task"], r["name"]))


class QueueState(BaseModel):
    """A component's receive queues (and a spout's backpressure) as metrics v2 last reported them."""

    population: float = 0.0
    capacity: float | None = None  # summed over its executors, as the population
    executors: int = 0
    full_executors: int = 0
    overflow: float = 0.0
    insert_failures_rising: bool = False
    dropped_rising: bool = False
    backpressure_ms_rising: bool = False  # a spout's __skipped-backpressure-ms rose
    busy: float | None = None  # __capacity, the largest of its executors

    def is_full(self) -> bool:
        return bool(self.full_executors or self.overflow > 0 or self.insert_failures_rising or self.dropped_rising)

    def full_text(self) -> str:
        what = [f"{self.full_executors} of {self.executors} receive queue{'s' if self.executors != 1 else ''} "
                "full" + ("" if self.capacity is None else f" ({self.population:.0f} of {self.capacity:.0f} tuples)")
                ] if self.full_executors else []
        what += [f"{self.overflow:.0f} tuples in the overflow"] if self.overflow > 0 else []
        what += ["insert failures rising"] if self.insert_failures_rising else []
        what += ["messages dropped"] if self.dropped_rising else []
        return ", ".join(what)


def queue_states(rows: list[dict[str, Any]], until: float | None = None) -> dict[str, QueueState]:
    """Per component, its receive queues at their last report (at or before `until`): full when the population
    reaches FULL_FRACTION of the capacity (or pct_full does), or the overflow holds tuples, or insert failures or
    dropped messages rose between the last two reports."""
    series: dict[tuple[str, int, str], list[float]] = {}
    for r in rows:
        if until is None or r["t"] <= until:
            series.setdefault((r["comp"], r["task"], r["name"]), []).append(float(r["value"]))
    out: dict[str, QueueState] = {}
    for comp, task in sorted({(c, t) for c, t, _ in series}):
        def last(name: str, c: str = comp, t: int = task) -> float | None:
            values = series.get((c, t, name))
            return values[-1] if values else None

        def rising(name: str, c: str = comp, t: int = task) -> bool:
            values = series.get((c, t, name)) or []
            return len(values) >= 2 and values[-1] > values[-2]

        state = out.setdefault(comp, QueueState())
        population, capacity, pct = last("receive-queue-population"), last("receive-queue-capacity"), \
            last("receive-queue-pct_full")
        if population is not None or capacity is not None or pct is not None:
            state.executors += 1
            state.population += population or 0.0
            state.capacity = (state.capacity or 0.0) + capacity if capacity is not None else state.capacity
            if (population is not None and capacity and population >= FULL_FRACTION * capacity) \
                    or (pct is not None and pct >= FULL_FRACTION):
                state.full_executors += 1
        state.overflow += last("receive-queue-overflow") or 0.0
        state.insert_failures_rising |= rising("receive-queue-insert_failures")
        state.dropped_rising |= rising("receive-queue-dropped_messages")
        state.backpressure_ms_rising |= rising("__skipped-backpressure-ms")
        busy = last("__capacity")
        if busy is not None:
            state.busy = max(busy, state.busy or 0.0)
    return out


def follow_metrics(path: str | os.PathLike[str]) -> dict[str, QueueState]:
    """`watch --metrics`: the reporter's output read again, each component's queues at the last report (empty
    while the reporter has written nothing readable yet)."""
    try:
        return queue_states(executor_metric_rows(read_metrics(path)))
    except StormRunError:
        return {}


def read_executor_metrics(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """metrics.jsonl of a run folder (written by `import metrics`), [] when there is none."""
    path = Path(folder) / EXECUTOR_METRICS
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.append({"t": float(row["t"]), "comp": str(row["comp"]), "task": int(row["task"]),
                            "name": str(row["name"]), "value": float(row["value"])})
            except (ValueError, KeyError, TypeError) as err:
                raise StormRunError(f"{path} line {number}: not an executor metric ({err})") from None
    return out


def write_metrics_run(source: str | os.PathLike[str], out: str | os.PathLike[str],
                      force: bool = False) -> dict[str, Any]:
    """`import metrics`: the receive-queue populations of a metrics-v2 reporter's output as a Storm run folder."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise StormRunError(f"{folder}: exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not is_storm_run(folder):
        raise StormRunError(f"{folder}: holds other files (not a Storm recording): give a new folder")
    if (folder / QUEUES).exists() and not force:
        raise StormRunError(f"{folder / QUEUES}: exists (give --force to replace it)")
    points = read_metrics(source)
    samples = queue_samples(points)
    if not samples:
        names = sorted({p.name for p in points})[:8]
        raise StormRunError(f"{source}: no receive-queue population among the metrics ({', '.join(names)}, ...): "
                            "enable the executor's queue metrics in the reporter's filter")
    folder.mkdir(parents=True, exist_ok=True)
    data = b"".join(json.dumps(s, separators=(",", ":")).encode() + b"\n" for s in samples)
    write_output(folder / QUEUES, data, force=True)
    rows = executor_metric_rows(points)
    write_output(folder / EXECUTOR_METRICS,
                 b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in rows), force=True)
    topologies = sorted({p.topology for p in points})
    header = read_header(folder) if is_storm_run(folder) else StormRunHeader(source="metrics")
    header = header.model_copy(update={"metrics_from": str(Path(source).resolve()),
                                       "topology_id": header.topology_id or topologies[0],
                                       "started": header.started or min(p.t for p in points)})
    write_header(folder, header)
    components = sorted({s["comp"] for s in samples})
    return {"samples": len(samples), "components": components, "topologies": topologies,
            "executors": len({(s["comp"], s["task"]) for s in samples}), "output": str(folder)}


def read_queue_samples(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(folder) / QUEUES
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out.append({"t": float(row["t"]), "comp": str(row["comp"]), "task": int(row.get("task", 0)),
                            "queue": float(row["queue"])})
            except (ValueError, KeyError, TypeError) as err:
                raise StormRunError(f"{path} line {number}: not a queue sample ({err})") from None
    return out
