"""Event logs read in batches of plain tuples, in this process, without Spark or pydantic per record.

The embedded engine (app/measure/sql/embedded.py) loads every log it does not read itself
through here, into DuckDB: JSON Lines and CSV line by line, Parquet in record batches
(pyarrow), JSON arrays and Storm metrics and events logs through the readers of
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

import functools
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.fileio import iter_lines, open_checked
from app.core.formats.limits import escape, type_name
from app.measure.eventlog import (
    ANCHOR_SEP,
    EVENT_KINDS,
    MAX_TIME,
    Event,
    EventLogError,
    QueueSample,
    TimeUnit,
    check_parquet_log,
    csv_records,
    find_run_files,
    json_value,
    log_format,
    parquet_error,
    parquet_failures,
    parquet_row_count,
    read_log,
)
from app.measure.records import NEEDS_MSG, NEEDS_TUPLE

EVENT_FIELDS = ("t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason")
QUEUE_FIELDS = ("t", "comp", "task", "queue")
BATCH_ROWS = 65_536

EventRow = tuple[Any, ...]  # (t, ev, comp, task, tuple, msg, anchors, reason)
QueueRow = tuple[Any, ...]  # (t, comp, task, queue)

_KINDS = frozenset(EVENT_KINDS)
_NEED_TUPLE = frozenset(NEEDS_TUPLE)
_NEED_MSG = frozenset(NEEDS_MSG)


def _bad(where: str, ev: Any, t: Any, comp: Any, tup: Any, msg: Any) -> EventLogError:
    if ev not in _KINDS:
        return EventLogError(f"{where}.ev", f"unknown event '{escape(str(ev))}' at t={t} "
                                            f"(expected one of {', '.join(EVENT_KINDS)})")
    missing = next(k for k, v in (("t", t), ("comp", comp), ("tuple", tup), ("msg", msg)) if v is None)
    return EventLogError(f"{where}.{missing}", f"a {ev} event at t={t} has no {missing}")


def _no_queue_field(where: str, t: Any, comp: Any) -> EventLogError:
    """A queue sample without its time or component (the model reader's QueueSample needs both)."""
    missing = "t" if t is None else "comp"
    return EventLogError(f"{where}.{missing}", f"a queue sample has no {missing}")


def _number(value: Any, where: str, field: str) -> float | None:
    """A finite number, or None when missing; NaN, infinities, booleans and other types refused."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EventLogError(f"{where}.{field}", f"must be a number, not {type_name(value)}")
    try:
        number = float(value)
    except ValueError:
        raise EventLogError(f"{where}.{field}", f"not a number: '{escape(str(value))}'") from None
    except OverflowError:
        raise EventLogError(f"{where}.{field}", "number is too large") from None
    if not math.isfinite(number):
        raise EventLogError(f"{where}.{field}", f"must be a finite number, not {escape(str(value))}")
    return number


#: the largest task number or queue length a log may give (2^53: every count a float holds exactly)
MAX_COUNT = 2**53


def checked_time(t: float, where: str) -> float:
    """A finite time `t` in seconds, refused (naming `where.t`) beyond MAX_TIME."""
    if not -MAX_TIME <= t <= MAX_TIME:
        raise EventLogError(f"{where}.t", f"{t:g} s is beyond the largest time {MAX_TIME:g} s (300,000 years)")
    return t


def checked_count(value: Any, where: str, field: str) -> int | None:
    """A whole number in 0..MAX_COUNT (a task or a queue length), or None when missing: the one rule for
    counts wherever they enter (event logs, queues.jsonl, `import metrics`)."""
    number = _number(value, where, field)
    if number is None:
        return None
    if number < 0 or number != int(number):
        raise EventLogError(f"{where}.{field}", f"must be a whole number >= 0, not {escape(str(value))}")
    if number > MAX_COUNT:
        raise EventLogError(f"{where}.{field}", f"{escape(str(value))} is over the largest count {MAX_COUNT} (2^53)")
    return int(number)


def _text(value: Any, where: str = "", field: str = "") -> str | None:
    """A string field (numbers become their text, as in the Spark loaders); objects, arrays and booleans refused."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventLogError(f"{where}.{field}", f"must be a string, not {type_name(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise EventLogError(f"{where}.{field}", f"must be a string, not {value}")
    return str(value)


def _anchors(value: Any, where: str, flat: bool) -> list[str]:
    """A bolt_emit's anchors: a list of tuple ids, or in CSV (`flat`) one `;`-joined string."""
    if value is None or value == "":
        return []
    if isinstance(value, str) and flat:
        return [a for a in value.split(ANCHOR_SEP) if a]
    if not isinstance(value, (list, tuple)):
        raise EventLogError(f"{where}.anchors", f"must be a list of tuple ids, not {type_name(value)}")
    out = []
    for i, a in enumerate(value):
        if a is None:
            continue
        if not isinstance(a, str):
            raise EventLogError(f"{where}.anchors[{i}]", f"must be a string, not {type_name(a)}")
        out.append(a)
    return out


def _row(raw: dict[str, Any], where: str, divisor: float, events: list[EventRow], queues: list[QueueRow],
         flat: bool = False) -> None:
    """Append one record (a dict with some of the COLUMNS) to events or queues, checked; `flat`: a CSV row.

    The common types (a finite float `t`, an int `task` >= 0, strings) are taken without a call.
    """
    get = raw.get
    ev, t, comp, task = get("ev"), get("t"), get("comp"), get("task")
    if type(ev) is not str or not ev:
        ev = _text(ev, where, "ev")
    if type(t) is not float or t - t != 0:  # t - t is 0.0 exactly for a finite float
        t = _number(t, where, "t")
    if type(comp) is not str or not comp:
        comp = _text(comp, where, "comp")
    if type(task) is not int or not 0 <= task <= MAX_COUNT:
        task = checked_count(task, where, "task") or 0
    if t is not None:
        if divisor != 1.0:
            t = t / divisor
        if not -MAX_TIME <= t <= MAX_TIME:
            checked_time(t, where)
    if ev is None:
        queue = checked_count(get("queue"), where, "queue")
        if queue is not None:
            if t is None or comp is None:
                raise _no_queue_field(where, t, comp)
            queues.append((t, comp, task, queue))
        return
    tup, msg = get("tuple"), get("msg")
    if type(tup) is not str or not tup:
        tup = _text(tup, where, "tuple")
    if type(msg) is not str or not msg:
        msg = _text(msg, where, "msg")
    if (ev not in _KINDS or t is None or comp is None or (tup is None and ev in _NEED_TUPLE)
            or (msg is None and ev in _NEED_MSG)):
        raise _bad(where, ev, t, comp, tup if ev in _NEED_TUPLE else "", msg if ev in _NEED_MSG else "")
    anchors = _anchors(get("anchors"), where, flat) if ev == "bolt_emit" else None
    reason = get("reason")
    events.append((t, ev, comp, task, tup, msg, anchors, reason if type(reason) is str and reason
                   else _text(reason, where, "reason")))


#: the longest line of a JSON Lines or CSV event log (one event: its anchors may be many)
MAX_LINE_BYTES = 64 * 1024 * 1024


def _lines(path: Path, skip_blank: bool = True) -> Iterator[tuple[int, str]]:
    """(line number, text) of a UTF-8 file through the read boundary (app/core/fileio.py), a bad byte or a
    line over MAX_LINE_BYTES named by line."""
    return iter_lines(path, functools.partial(EventLogError, str(path)), max_line_bytes=MAX_LINE_BYTES,
                      skip_blank=skip_blank, gunzip=False,
                      at_line=lambda number, reason: EventLogError(f"{path.name} line {number}", reason))


def _jsonl_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
    events: list[EventRow] = []
    queues: list[QueueRow] = []
    for number, line in _lines(path):
        where = f"{path.name} line {number}"
        raw = json_value(line, where)
        if not isinstance(raw, dict):
            raise EventLogError(where, f"expected an object, got {type_name(raw)}")
        _row(raw, where, divisor, events, queues)
        if len(events) + len(queues) >= rows:
            yield events, queues
            events, queues = [], []
    if events or queues:
        yield events, queues


def _csv_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
    records = csv_records((text for _, text in _lines(path, skip_blank=False)), path.name)
    if not next(records):
        raise EventLogError(path.name, "is empty (expected a header line)")
    events: list[EventRow] = []
    queues: list[QueueRow] = []
    for number, raw in records:
        _row(raw, f"{path.name} line {number}", divisor, events, queues, flat=True)
        if len(events) + len(queues) >= rows:
            yield events, queues
            events, queues = [], []
    if events or queues:
        yield events, queues


def _parquet_batches(path: Path, divisor: float, rows: int) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
    try:
        import pyarrow.dataset as ds
    except ModuleNotFoundError:
        raise EventLogError(path.name, "reading Parquet in this process needs pyarrow (pip install pyarrow), "
                                       "or use --engine spark") from None
    try:
        check_parquet_log(path)
        dataset = ds.dataset(str(path), format="parquet")
        present = set(dataset.schema.names)
        wanted = [c for c in (*EVENT_FIELDS, "queue") if c in present]
        offset = 0
        for batch in dataset.to_batches(columns=wanted, batch_size=rows):
            yield _parquet_rows(batch, wanted, f"{path.name} row", offset, divisor)
            offset += batch.num_rows
    except parquet_failures() as err:
        raise parquet_error(path, err) from None


def _parquet_rows(batch: Any, wanted: list[str], label: str, offset: int,
                  divisor: float) -> tuple[list[EventRow], list[QueueRow]]:
    """The events and queue samples of one record batch, checked like the other formats' rows."""
    cols = {name: batch.column(i).to_pylist() for i, name in enumerate(wanted)}
    size = batch.num_rows
    nothing = [None] * size

    def get(name: str) -> list[Any]:
        column: list[Any] = cols.get(name, nothing)
        return column

    events: list[EventRow] = []
    queues: list[QueueRow] = []
    ts, evs, comps, tasks = get("t"), get("ev"), get("comp"), get("task")
    tuples, msgs, anchors, reasons, qs = get("tuple"), get("msg"), get("anchors"), get("reason"), get("queue")
    for i in range(size):
        ev = evs[i]
        t = ts[i]
        if t is not None:
            if not isinstance(t, float) or not math.isfinite(t):
                t = _number(t, f"{label} {offset + i}", "t")
            t = t / divisor if divisor != 1.0 else float(t)
            if not -MAX_TIME <= t <= MAX_TIME:
                checked_time(t, f"{label} {offset + i}")
        comp = comps[i]
        task = tasks[i]
        if task is not None and not (isinstance(task, int) and 0 <= task <= MAX_COUNT):
            task = checked_count(task, f"{label} {offset + i}", "task")
        task = task or 0
        if ev is None:
            if qs[i] is not None:
                queue = qs[i] if isinstance(qs[i], int) and 0 <= qs[i] <= MAX_COUNT else \
                    checked_count(qs[i], f"{label} {offset + i}", "queue")
                if t is None or comp is None:
                    raise _no_queue_field(f"{label} {offset + i}", t, comp)
                queues.append((t, comp, task, queue))
            continue
        tup, msg = tuples[i], msgs[i]
        if (ev not in _KINDS or t is None or comp is None or (tup is None and ev in _NEED_TUPLE)
                or (msg is None and ev in _NEED_MSG)):
            raise _bad(f"{label} {offset + i}", ev, t, comp, tup if ev in _NEED_TUPLE else "",
                       msg if ev in _NEED_MSG else "")
        anc = None
        if ev == "bolt_emit":
            anc = _anchors(anchors[i], f"{label} {offset + i}", flat=False)
        events.append((t, ev, comp, task, tup, msg, anc, reasons[i]))
    return events, queues


def _model_batches(path: Path, time_unit: TimeUnit) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
    log = read_log(path, time_unit)
    yield [event_row(e) for e in log.events], [queue_row(q) for q in log.queues]


def event_row(e: Event) -> EventRow:
    """The plain tuple of an Event (anchors of a bolt_emit: [] when it has none)."""
    anchors = (list(e.anchors) if e.anchors else []) if e.ev == "bolt_emit" else None
    return (e.t, e.ev, e.comp, e.task, e.tuple, e.msg, anchors, e.reason)


def queue_row(q: QueueSample) -> QueueRow:
    return (q.t, q.comp, q.task, q.queue)


def _file_batches(path: Path, time_unit: TimeUnit, rows: int) -> Iterator[tuple[list[EventRow], list[QueueRow]]]:
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
    files = log_files(path)
    for f in files[:1] if events_only else files:
        yield from _file_batches(f, time_unit, rows)


def log_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files of a log: the file itself, or a run folder's events and (when there) queue samples."""
    p = Path(path)
    if not p.exists():
        raise EventLogError(str(p), "no such file or folder")
    if log_format(p) != "run-dir":
        return [p]
    events_path, queues_path = find_run_files(p)
    return [events_path] + ([queues_path] if queues_path is not None else [])


SNIFF_ROWS = 1000


def sniff(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> None:
    """Check the start of a local log in this process before Spark reads it, so that a bad file gets
    the message the in-process readers give (file, line, field) rather than Spark's job failure:
    the first SNIFF_ROWS rows of a JSON Lines or CSV file, the schema of Parquet."""
    p = Path(path)
    fmt = log_format(p)
    files = list(find_run_files(p)) if fmt == "run-dir" else [p]
    for f in files:
        if f is None:
            continue
        kind = log_format(f)
        if kind == "parquet":
            try:
                check_parquet_log(f)  # reading the schema is the check
            except ModuleNotFoundError:
                continue
            except parquet_failures() as err:
                raise parquet_error(f, err) from None
        elif kind in ("jsonl", "csv"):
            next(_file_batches(f, time_unit, SNIFF_ROWS), None)


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
            return parquet_row_count(p)
        except ModuleNotFoundError:
            return None
        except parquet_failures() as err:  # a damaged or empty part: one line naming it
            raise parquet_error(p, err) from None
    if fmt in ("jsonl", "csv"):
        lines = 0
        last = b"\n"
        try:
            with open_checked(p, functools.partial(EventLogError, str(p))) as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    lines += block.count(b"\n")
                    last = block[-1:]
        except OSError as err:  # unreadable (permissions): one line, as the readers say it
            raise EventLogError(str(p), f"cannot be read: {err.strerror or err}") from None
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


__all__ = ["EVENT_FIELDS", "QUEUE_FIELDS", "batches", "sniff", "count_records", "log_bytes",
           "event_row", "queue_row"]
