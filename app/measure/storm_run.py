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

import itertools
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.core.errors import BadInput
from app.core.fileio import check_regular, csv_rows, files_below, iter_lines, read_text, write_output
from app.core.formats.limits import FormatError, escape, load_json_text, on_one_line, type_name
from app.core.topology import one_line
from app.measure.eventlog import MAX_TIME
from app.measure.logstream import batches, checked_count

if TYPE_CHECKING:
    from app.core.topology import Topology

RUN_FORMAT = "stormbound-storm-run/1"
HEADER = "storm-run.json"
POLLS = "polls.jsonl"
QUEUES = "queues.jsonl"
MAX_LINE_BYTES = 50_000_000  # one poll's pages (a 3,000-bolt topology's are about 10 MB)
MAX_HEADER_BYTES = 16 * 1024 * 1024  # storm-run.json: the topology's configuration
MAX_RUN_BYTES = 4 * 1024**3  # polls.jsonl, queues.jsonl and each metrics file, read a megabyte at a time
MAX_METRICS_LINE_BYTES = 1024 * 1024  # a metrics CSV row or Graphite line


class StormRunError(BadInput, ValueError):
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


def _refused(path: Path) -> Callable[[str], StormRunError]:
    """The boundary's error for a file of a run folder: `FILE: reason` (reasons of a line say `line N: ...`)."""
    return lambda reason: StormRunError(f"{one_line(str(path))}: {reason}")


def _model_problem(err: ValidationError) -> str:
    """pydantic's first error as `field: problem` (its own text names neither the file nor the field)."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    if first.get("type") == "extra_forbidden":
        msg = "unknown field"
    return f"{escape(loc)}: {msg}" if loc else msg


def _json(text: str, where: str) -> Any:
    """One JSON text of a run folder through the bounded decoder (nesting, digits, finite numbers)."""
    try:
        return load_json_text(text, "")
    except FormatError as err:
        raise StormRunError(f"{where}: {on_one_line(err.problems[0].message)}") from None


def read_header(folder: str | os.PathLike[str]) -> StormRunHeader:
    path = Path(folder) / HEADER
    data = _json(read_text(path, _refused(path), MAX_HEADER_BYTES), one_line(str(path)))
    if not isinstance(data, dict):
        raise StormRunError(f"{one_line(str(path))}: not a Storm run header (expected an object, got "
                            f"{type_name(data)})")
    try:
        return StormRunHeader.model_validate(data)
    except ValidationError as err:
        raise StormRunError(f"{one_line(str(path))}: {_model_problem(err)}") from None


def write_header(folder: str | os.PathLike[str], header: StormRunHeader) -> None:
    """storm-run.json, written atomically (replaced as a whole)."""
    write_output(Path(folder) / HEADER, json.dumps(header.model_dump(), indent=2).encode() + b"\n", force=True)


def poll_problem(poll: Poll) -> str | None:
    """Why a successful poll's figures cannot be measurements (`field: value problem`, the Storm UI's checks of
    app/core/storm/ui/replies.py), or None; every poll is checked, when it is read from the UI and when a
    recording is read."""
    from app.core.storm.ui.replies import figures_problem

    if not poll.ok:
        return None
    return figures_problem([("topology", poll.topology),
                            *((f"components.{escape(str(k))}", v) for k, v in poll.components.items())],
                           with_executors=True)


def read_polls(folder: str | os.PathLike[str]) -> tuple[list[Poll], list[str]]:
    """Every poll of polls.jsonl in order, and notes (a last line cut short is left out and noted). A line that
    is not a poll, or a poll whose figures cannot be measurements, is a StormRunError naming the file, the
    line, the poll and the field."""
    path = Path(folder) / POLLS
    polls: list[Poll] = []
    notes: list[str] = []
    if not os.path.lexists(path):
        return polls, notes
    name = one_line(str(path))
    for number, line in iter_lines(path, _refused(path), max_line_bytes=MAX_LINE_BYTES, max_bytes=MAX_RUN_BYTES):
        where = f"{name} line {number}"
        try:
            data = _json(line, where)
            if not isinstance(data, dict):
                raise StormRunError(f"{where}: not a poll record (expected an object, got {type_name(data)})")
            try:
                poll = Poll.model_validate(data)
            except ValidationError as err:
                raise StormRunError(f"{where}: not a poll record ({_model_problem(err)})") from None
        except StormRunError:
            if not line.endswith("\n"):
                notes.append(f"{POLLS} line {number}: cut short (the recorder stopped while writing it): left out")
                continue
            raise
        problem = poll_problem(poll)
        if problem is not None:
            raise StormRunError(f"{where} (poll {poll.poll}): {problem}")
        polls.append(poll)
    return polls, notes


class PollWriter:
    """Appends poll lines to polls.jsonl: each line in one write, flushed and synced; a partial last line
    left by an earlier recorder is cut off first, so the file stays one complete record per line."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.path = Path(folder) / POLLS
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(self.path):
            size = check_regular(self.path, _refused(self.path)).st_size
            with open(self.path, "r+b") as f:  # a regular file (checked): its tail only is read
                end = size
                while end > 0:
                    start = max(0, end - (1 << 16))
                    f.seek(start)
                    block = f.read(end - start)
                    if end == size and block.endswith(b"\n"):
                        break
                    cut = block.rfind(b"\n")
                    if cut >= 0 or start == 0:
                        f.truncate(start + cut + 1)
                        break
                    end = start
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
    polls, _ = read_polls(folder)
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


def parse_metric_name(name: str) -> dict[str, Any] | None:
    """The parts of a metrics-v2 name, None when it is not one of a topology's executor metrics."""
    m = METRIC_NAME.match(name.strip())
    if m is None:
        return None
    parts = m.groupdict()
    if len(parts["task"].lstrip("-")) > 18 or len(parts["port"]) > 18:
        return None
    return {**parts, "task": int(parts["task"]), "port": int(parts["port"])}


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) <= MAX_TIME else None


class MetricsScan:
    """What a metrics-v2 reporter's output holds, read a line at a time: the receive-queue populations as
    compact (t, component, task, population) tuples (about 150 bytes each), and of every other metric only
    its name, topology and the earliest time."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, str, int, int]] = []
        # (t, component, task, kind, value) of the other RECEIVE_QUEUE and task metrics (the populations: samples)
        self.rows: list[tuple[float, str, int, str, float]] = []
        self.names: set[str] = set()
        self.topologies: set[str] = set()
        self.first_t: float | None = None

    def add(self, t: float, value: str | float, parts: dict[str, Any], where: str) -> None:
        self.first_t = t if self.first_t is None else min(self.first_t, t)
        self.topologies.add(parts["topology"])
        name, component = parts["name"], parts["component"]
        if name in QUEUE_METRICS and not component.startswith("__"):
            population = checked_count(value, where, name)  # the event-log rule: whole, >= 0, at most 2^53
            if population is None:
                raise StormRunError(f"{where}.{name}: no population")
            self.samples.append((t, sys.intern(component), max(0, parts["task"]), population))  # also a row (all_rows)
        else:
            number = _finite(str(value))
            if number is None:
                raise StormRunError(f"{where}: {escape(name)}: expected a finite number, not {escape(str(value))}")
            if len(self.names) < 1000:
                self.names.add(name)
            kind = _metric_kind(name)
            if kind is not None and not component.startswith("__"):
                self.rows.append((t, sys.intern(component), parts["task"], kind, number))


def _csv_points(path: Path, parts: dict[str, Any], scan: MetricsScan) -> None:
    """One Dropwizard CsvReporter file: a header `t,value` (a gauge; `t,count` a counter, `t,count,...`
    a meter or timer: its first column after t), one row per report, t in unix seconds."""
    name = one_line(str(path))
    lines = (text for _, text in iter_lines(path, _refused(path), max_line_bytes=MAX_METRICS_LINE_BYTES,
                                            max_bytes=MAX_RUN_BYTES, skip_blank=False))
    rows = csv_rows(lines, _refused(path), at_line=lambda n, reason: StormRunError(f"{name} line {n}: {reason}"))
    header = next(rows)
    if not header or header[0].strip() != "t" or len(header) < 2:
        raise StormRunError(f"{name}: not a metrics CSV file (expected a header t,value or t,count,...)")
    column = header[1]
    for number, row in rows:
        t, value = _finite(row.get("t", "")), row.get(column)
        if t is None or not value:
            raise StormRunError(f"{name} line {number}: expected a time and a number, got "
                                f"{escape(','.join(row.values()))}")
        scan.add(t, value, parts, f"{name} line {number}")


def _graphite_points(path: Path, scan: MetricsScan) -> None:
    """Graphite plaintext lines: `NAME VALUE UNIX_TIME`; names that are not a topology's executor
    metrics are skipped (a worker's or the JVM's)."""
    name = one_line(str(path))
    for number, line in iter_lines(path, _refused(path), max_line_bytes=MAX_METRICS_LINE_BYTES,
                                   max_bytes=MAX_RUN_BYTES):
        fields = line.split()
        if len(fields) != 3:
            raise StormRunError(f"{name} line {number}: expected 'NAME VALUE TIME' (Graphite plaintext)")
        parts = parse_metric_name(fields[0])
        t = _finite(fields[2])
        if t is None:
            raise StormRunError(f"{name} line {number}: the time must be a finite number within {MAX_TIME:g} s, "
                                f"not {escape(fields[2])}")
        if parts is not None:
            scan.add(t, fields[1], parts, f"{name} line {number}")


def read_metrics(path: str | os.PathLike[str]) -> MetricsScan:
    """Every executor metric of a CSV reporter's folder (one `NAME.csv` per metric) or of Graphite
    plaintext files (a file, or the `.txt`/`.log`/`.graphite` files of a folder), a line at a time."""
    root = Path(path)
    if not os.path.lexists(root):
        raise StormRunError(f"{one_line(str(root))}: no such file or folder")
    files = files_below(root, _refused(root)) if root.is_dir() else [root]
    scan = MetricsScan()
    for f in files:
        if f.suffix == ".csv":
            parts = parse_metric_name(f.name[:-4])
            if parts is not None:
                _csv_points(f, parts, scan)
        elif f.suffix in (".txt", ".log", ".graphite", ".plain") or not root.is_dir():
            _graphite_points(f, scan)
    if scan.first_t is None:
        raise StormRunError(f"{one_line(str(root))}: no metrics-v2 executor metrics found (files named "
                            "storm.worker.ID.HOST.COMPONENT.TASK.PORT-NAME.csv, or Graphite lines)")
    return scan


def queues_jsonl(scan: MetricsScan) -> Iterator[bytes]:
    """The receive-queue populations as queues.jsonl (t relative to the first one, in time order; system
    components such as `__acker` were left out when read), in chunks of lines: never whole in memory."""
    samples = scan.samples
    samples.sort()  # in place: no second list
    origin = samples[0][0] if samples else 0.0
    lines = (f'{{"t":{round(t - origin, 6)!r},"comp":{json.dumps(comp)},"task":{task},"queue":{queue}}}\n'
             for t, comp, task, queue in samples)
    return _chunks(lines)


def _chunks(lines: Iterator[str], size: int = 10_000) -> Iterator[bytes]:
    """`lines` encoded, `size` lines a chunk."""
    while True:
        chunk = "".join(itertools.islice(lines, size))
        if not chunk:
            return
        yield chunk.encode()


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


def all_rows(scan: MetricsScan) -> Iterator[tuple[float, str, int, str, float]]:
    """Every (t, component, task, kind, value) of the scan in order: the populations (kept once, as samples)
    merged with the other metrics' rows, both sorted in place."""
    import heapq

    scan.samples.sort()
    scan.rows.sort()
    populations = ((t, comp, task, "receive-queue-population", float(q)) for t, comp, task, q in scan.samples)
    return heapq.merge(populations, scan.rows)


def executor_metric_rows(scan: MetricsScan) -> list[dict[str, Any]]:
    """The receive-queue and task metrics of the topology's own components as rows {t (unix s), comp, task, name,
    value}, in time order."""
    return [{"t": t, "comp": comp, "task": task, "name": kind, "value": value}
            for t, comp, task, kind, value in all_rows(scan)]


def metrics_jsonl(scan: MetricsScan) -> Iterator[bytes]:
    """metrics.jsonl: `executor_metric_rows`, one JSON object a line, in chunks of lines from the compact rows
    (no dict per row, never whole in memory)."""
    return _chunks(f'{{"t":{t!r},"comp":{json.dumps(comp)},"task":{task},"name":{json.dumps(kind)},'
                   f'"value":{value!r}}}\n' for t, comp, task, kind, value in all_rows(scan))


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
    if not os.path.lexists(path):
        return []
    out = []
    name = one_line(str(path))
    for number, line in iter_lines(path, _refused(path), max_line_bytes=MAX_METRICS_LINE_BYTES,
                                   max_bytes=MAX_RUN_BYTES):
        row = _json(line, f"{name} line {number}")  # the bounded decoder: nesting, digits, finite numbers
        try:
            value, t = float(row["value"]), float(row["t"])
            if not (math.isfinite(value) and abs(t) <= MAX_TIME):
                raise ValueError("not a finite number, or a time beyond 1e13 s")
            out.append({"t": t, "comp": str(row["comp"]), "task": int(row["task"]), "name": str(row["name"]),
                        "value": value})
        except (ValueError, KeyError, TypeError, OverflowError) as err:
            raise StormRunError(f"{name} line {number}: not an executor metric ({escape(str(err))})") from None
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
    scan = read_metrics(source)
    samples = scan.samples
    if not samples:
        names = [escape(n) for n in sorted(scan.names)[:8]]
        raise StormRunError(f"{one_line(str(source))}: no receive-queue population among the metrics "
                            f"({', '.join(names)}, ...): "
                            "enable the executor's queue metrics in the reporter's filter")
    folder.mkdir(parents=True, exist_ok=True)
    write_output(folder / QUEUES, queues_jsonl(scan), force=True)
    write_output(folder / EXECUTOR_METRICS, metrics_jsonl(scan), force=True)
    topologies = sorted(scan.topologies)
    header = read_header(folder) if is_storm_run(folder) else StormRunHeader(source="metrics")
    header = header.model_copy(update={"metrics_from": str(Path(source).resolve()),
                                       "topology_id": header.topology_id or topologies[0],
                                       "started": header.started or scan.first_t})
    write_header(folder, header)
    components = sorted({s[1] for s in samples})
    return {"samples": len(samples), "components": components, "topologies": topologies,
            "executors": len({(s[1], s[2]) for s in samples}), "output": str(folder)}


def read_queue_samples(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The queue samples of a run folder's queues.jsonl, read and checked as every event log's queue samples
    are (app/measure/logstream.py: `t` finite, `task` and `queue` whole numbers from 0 to 2^53)."""
    path = Path(folder) / QUEUES
    if not os.path.lexists(path):
        return []
    out = []
    for events, queues in batches(path):
        if events:
            raise StormRunError(f"{one_line(str(path))}: holds events ({events[0][1]} at t={events[0][0]:g}): a run "
                                "folder's queues.jsonl holds queue samples only")
        out += [{"t": t, "comp": comp, "task": task, "queue": queue} for t, comp, task, queue in queues]
    return out
