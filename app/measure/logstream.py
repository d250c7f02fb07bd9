"""Event logs read in batches of plain tuples, in this process, without Spark or pydantic per record.

The in-process engine (`--engine local`) and the single-process baseline of
bench/runs_pipeline.py read logs through here: JSON Lines and CSV line by line, Parquet in
record batches (pyarrow), JSON arrays and Storm metrics logs through the readers of
app.measure.eventlog. Records come back as plain tuples

* events: ``(t, ev, comp, task, tuple, msg, anchors, reason)`` (EVENT_FIELDS),
* queue samples: ``(t, comp, task, queue)`` (QUEUE_FIELDS),

with the meaning the Spark loaders (app.spark.frames) give the same file: times in
seconds (`t / 1000` for `--time-unit ms`), a missing task is 0, anchors only on
`bolt_emit` (`[]` when it has none), a row with neither `ev` nor `queue` is skipped, and
the checks of frames._check (unknown event kind, missing t, comp, tuple or msg) raise
:class:`EventLogError` with one line. Memory stays at one batch.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from app.measure.eventlog import (
    ANCHOR_SEP,
    EVENT_KINDS,
    Event,
    EventLogError,
    QueueSample,
    TimeUnit,
    find_run_files,
    log_format,
    read_log,
)

EVENT_FIELDS = ("t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason")
QUEUE_FIELDS = ("t", "comp", "task", "queue")
BATCH_ROWS = 65_536

EventRow = tuple  # (t, ev, comp, task, tuple, msg, anchors, reason)
QueueRow = tuple  # (t, comp, task, queue)

_KINDS = frozenset(EVENT_KINDS)
_NEED_TUPLE = frozenset(("spout_emit", "take", "bolt_emit", "bolt_ack", "bolt_fail"))
_NEED_MSG = frozenset(("spout_emit", "spout_ack", "spout_fail"))


def _bad(where: str, ev: Any, t: Any, comp: Any, tup: Any, msg: Any) -> EventLogError:
    if ev not in _KINDS:
        return EventLogError(f"{where}.ev", f"unknown event '{ev}' at t={t}")
    missing = next(k for k, v in (("t", t), ("comp", comp), ("tuple", tup), ("msg", msg)) if v is None)
    return EventLogError(f"{where}.{missing}", f"a {ev} event at t={t} has no {missing}")


def _number(value: Any, where: str, field: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise EventLogError(f"{where}.{field}", f"not a number: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EventLogError(f"{where}.{field}", f"not a number: {value!r}") from None
    if math.isnan(number):
        return None
    return number


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def _row(raw: dict[str, Any], where: str, divisor: float, events: list, queues: list) -> None:
    """Append one flat record (a dict with some of the COLUMNS) to events or queues, checked."""
    ev = _text(raw.get("ev"))
    t = _number(raw.get("t"), where, "t")
    comp = _text(raw.get("comp"))
    task_value = _number(raw.get("task"), where, "task")
    task = int(task_value) if task_value is not None else 0
    if t is not None and divisor != 1.0:
        t = t / divisor
    if ev is None:
        queue = _number(raw.get("queue"), where, "queue")
        if queue is not None:
            queues.append((t, comp, task, int(queue)))
        return
    tup, msg = _text(raw.get("tuple")), _text(raw.get("msg"))
    if (ev not in _KINDS or t is None or comp is None or (tup is None and ev in _NEED_TUPLE)
            or (msg is None and ev in _NEED_MSG)):
        raise _bad(where, ev, t, comp, tup if ev in _NEED_TUPLE else "", msg if ev in _NEED_MSG else "")
    anchors = None
    if ev == "bolt_emit":
        value = raw.get("anchors")
        if value is None or value == "":
            anchors = []
        elif isinstance(value, str):
            anchors = [a for a in value.split(ANCHOR_SEP) if a]
        else:
            anchors = [str(a) for a in value if a is not None]
    events.append((t, ev, comp, task, tup, msg, anchors, _text(raw.get("reason"))))


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except OSError as err:
        raise EventLogError(str(path), f"cannot be read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise EventLogError(path.name, "is not UTF-8 text") from None


def _jsonl_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list, list]]:
    events: list = []
    queues: list = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as err:
            raise EventLogError(f"{path.name} line {number}", f"not valid JSON: {err.msg}") from None
        if not isinstance(raw, dict):
            raise EventLogError(f"{path.name} line {number}", f"expected an object, got {type(raw).__name__}")
        _row(raw, f"{path.name} line {number}", divisor, events, queues)
        if len(events) + len(queues) >= rows:
            yield events, queues
            events, queues = [], []
    if events or queues:
        yield events, queues


def _csv_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list, list]]:
    try:
        handle = open(path, encoding="utf-8", newline="")  # noqa: SIM115 - closed by the `with` below
    except OSError as err:
        raise EventLogError(str(path), f"cannot be read: {err.strerror or err}") from None
    with handle:
        reader = csv.DictReader(handle)
        events: list = []
        queues: list = []
        for number, raw in enumerate(reader, start=2):
            _row(raw, f"{path.name} line {number}", divisor, events, queues)
            if len(events) + len(queues) >= rows:
                yield events, queues
                events, queues = [], []
        if events or queues:
            yield events, queues


def _parquet_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list, list]]:
    try:
        import pyarrow.dataset as ds
    except ModuleNotFoundError:
        raise EventLogError(path.name, "reading Parquet in this process needs pyarrow (pip install pyarrow), "
                                       "or use --engine spark") from None
    dataset = ds.dataset(str(path), format="parquet")
    present = set(dataset.schema.names)
    wanted = [c for c in (*EVENT_FIELDS, "queue") if c in present]
    offset = 0
    for batch in dataset.to_batches(columns=wanted, batch_size=rows):
        cols = {name: batch.column(i).to_pylist() for i, name in enumerate(wanted)}
        size = batch.num_rows
        nothing = [None] * size

        def get(name: str, cols: dict[str, list] = cols, nothing: list = nothing) -> list:
            return cols.get(name, nothing)

        events: list = []
        queues: list = []
        ts, evs, comps, tasks = get("t"), get("ev"), get("comp"), get("task")
        tuples, msgs, anchors, reasons, qs = get("tuple"), get("msg"), get("anchors"), get("reason"), get("queue")
        for i in range(size):
            ev = evs[i]
            t = ts[i]
            if t is not None:
                t = float(t) / divisor if divisor != 1.0 else float(t)
            comp = comps[i]
            task = tasks[i] or 0
            if ev is None:
                if qs[i] is not None:
                    queues.append((t, comp, int(task), int(qs[i])))
                continue
            tup, msg = tuples[i], msgs[i]
            if (ev not in _KINDS or t is None or comp is None or (tup is None and ev in _NEED_TUPLE)
                    or (msg is None and ev in _NEED_MSG)):
                raise _bad(f"{path.name} row {offset + i}", ev, t, comp, tup if ev in _NEED_TUPLE else "",
                           msg if ev in _NEED_MSG else "")
            anc = None
            if ev == "bolt_emit":
                anc = [a for a in anchors[i] if a is not None] if anchors[i] is not None else []
            events.append((t, ev, comp, int(task), tup, msg, anc, reasons[i]))
        offset += size
        yield events, queues


def _model_batches(path: Path, time_unit: TimeUnit) -> Iterator[tuple[list, list]]:
    log = read_log(path, time_unit)
    yield [event_row(e) for e in log.events], [queue_row(q) for q in log.queues]


def event_row(e: Event) -> EventRow:
    """The plain tuple of an Event (anchors of a bolt_emit: [] when it has none)."""
    anchors = (list(e.anchors) if e.anchors else []) if e.ev == "bolt_emit" else None
    return (e.t, e.ev, e.comp, e.task, e.tuple, e.msg, anchors, e.reason)


def queue_row(q: QueueSample) -> QueueRow:
    return (q.t, q.comp, q.task, q.queue)


def _file_batches(path: Path, time_unit: TimeUnit, rows: int) -> Iterator[tuple[list, list]]:
    fmt = log_format(path)
    divisor = 1000.0 if time_unit == "ms" else 1.0
    if fmt == "jsonl":
        return _jsonl_batches(path, divisor, rows)
    if fmt == "csv":
        return _csv_batches(path, divisor, rows)
    if fmt == "parquet":
        return _parquet_batches(path, divisor, rows)
    return _model_batches(path, time_unit)


def batches(path: str | os.PathLike[str], time_unit: TimeUnit = "s", rows: int = BATCH_ROWS,
            events_only: bool = False) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
    """(events, queue samples) batches of a log file or run folder, in file order."""
    p = Path(path)
    if not p.exists():
        raise EventLogError(str(p), "no such file or folder")
    fmt = log_format(p)
    if fmt == "run-dir":
        events_path, queues_path = find_run_files(p)
        yield from _file_batches(events_path, time_unit, rows)
        if queues_path is not None and not events_only:
            yield from _file_batches(queues_path, time_unit, rows)
        return
    yield from _file_batches(p, time_unit, rows)


def event_source(path: str | os.PathLike[str], time_unit: TimeUnit = "s",
                 rows: int = BATCH_ROWS) -> Callable[[], Iterable[EventRow]]:
    """A function that streams the log's events each time it is called (for checks that read twice)."""
    def stream() -> Iterator[EventRow]:
        for events, _ in batches(path, time_unit, rows, events_only=True):
            yield from events
    return stream


def count_records(path: str | os.PathLike[str]) -> int | None:
    """Records (events and queue samples) in a log without reading it all: Parquet metadata, or the
    lines of a JSON Lines / CSV file; None for other formats."""
    p = Path(path)
    fmt = log_format(p)
    if fmt == "run-dir":
        events_path, queues_path = find_run_files(p)
        counts = [count_records(f) for f in (events_path, queues_path) if f is not None]
        return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)
    if fmt == "parquet":
        try:
            import pyarrow.dataset as ds
        except ModuleNotFoundError:
            return None
        return int(ds.dataset(str(p), format="parquet").count_rows())
    if fmt in ("jsonl", "csv"):
        lines = 0
        last = b"\n"
        with open(p, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                lines += block.count(b"\n")
                last = block[-1:]
        lines += last != b"\n"
        return lines - (1 if fmt == "csv" else 0)
    return None


def log_bytes(path: str | os.PathLike[str]) -> int:
    """Bytes on disk of a log file, Parquet folder or run folder (its event and queue files)."""
    p = Path(path)
    if p.is_file():
        return p.stat().st_size
    if log_format(p) == "run-dir":
        events_path, queues_path = find_run_files(p)
        return sum(log_bytes(f) for f in (events_path, queues_path) if f is not None)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


__all__ = ["EVENT_FIELDS", "QUEUE_FIELDS", "batches", "event_source", "count_records", "log_bytes",
           "event_row", "queue_row"]
