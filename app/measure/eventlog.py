"""The measured-run event log: pydantic records, readers and writers (no Spark, no Qt).

One record per event (`spout_emit`, `take`, `bolt_emit`, `bolt_ack`, `bolt_fail`,
`spout_ack`, `spout_fail`) plus queue samples `{t, comp, task, queue}`, stored as
JSON Lines, CSV or Parquet; Storm's `LoggingMetricsConsumer` lines are read as well
(receive-queue population, execute counts and latencies). Every reader raises
:class:`EventLogError` with one line naming the file, the record and the field.
See docs/event-log.md for the format.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from app.core.fileio import check_regular, csv_rows, read_text
from app.core.formats.limits import escape, type_name
from app.measure.records import EVENT_KINDS as EVENT_KINDS  # re-exported: the readers' callers use them from here
from app.measure.records import Event as Event
from app.measure.records import EventLog as EventLog
from app.measure.records import EventLogError as EventLogError
from app.measure.records import MetricSample as MetricSample
from app.measure.records import QueueSample as QueueSample
from app.measure.records import json_value as json_value

TimeUnit = Literal["s", "ms"]
#: the largest time (seconds, either sign) a log may give: 10^13 s is 300,000 years, so unix times in
#: milliseconds still pass, and the engines' bins (t / bin as a 64-bit integer) cannot overflow
MAX_TIME = 1e13

# Columns of the flat (CSV / Parquet / Spark) form; a queue sample leaves `ev` empty.
COLUMNS = ("t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason", "queue")
# The same columns as Spark DDL (the Spark jobs read logs with exactly this schema).
EVENT_DDL = ("t DOUBLE, ev STRING, comp STRING, task BIGINT, tuple STRING, msg STRING, anchors ARRAY<STRING>, "
             "reason STRING")
QUEUE_DDL = "t DOUBLE, comp STRING, task BIGINT, queue BIGINT"
FLAT_DDL = EVENT_DDL + ", queue BIGINT"  # events and queue samples in one table (the run job's rows)
ANCHOR_SEP = ";"  # CSV has no lists: anchors are joined with this separator

EVENT_FILES = ("events.parquet", "events.jsonl", "events.csv")
QUEUE_FILES = ("queues.parquet", "queues.jsonl", "queues.csv")


# ---- decoding one record -------------------------------------------------


def _blank(value: Any) -> bool:
    """A missing value: null, or an empty CSV cell (a NaN is a value, and refused where a number must be finite)."""
    return value is None or (isinstance(value, str) and value.strip() == "")


def _time(value: Any, where: str, scale: float) -> float:
    """`t` as a finite number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EventLogError(f"{where}.t", f"must be a number, not {type_name(value)}")
    try:
        number = float(value) * scale
    except OverflowError:
        raise EventLogError(f"{where}.t", "number is too large") from None
    except ValueError:
        raise EventLogError(f"{where}.t", f"not a number: '{escape(str(value))}'") from None
    if not math.isfinite(number):
        raise EventLogError(f"{where}.t", f"must be a finite number, not {escape(str(value))}")
    if not -MAX_TIME <= number <= MAX_TIME:
        raise EventLogError(f"{where}.t", f"{number:g} s is beyond the largest time {MAX_TIME:g} s (300,000 years)")
    return number


def _clean(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if not _blank(v)}


def record_from_dict(raw: Any, where: str, time_unit: TimeUnit = "s", flat: bool = False) -> Event | QueueSample:
    """Decode one record: an event when it has `ev`, a queue sample when it has `queue` only.

    `flat`: a CSV row, where anchors are one `;`-joined string (elsewhere they must be a list).
    """
    if not isinstance(raw, dict):
        raise EventLogError(where, f"expected an object, got {type_name(raw)}")
    data = _clean(raw)
    scale = 0.001 if time_unit == "ms" else 1.0
    for key in ("task", "queue"):  # in the words of the streaming reader (app/measure/logstream.py)
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 2**53:
            raise EventLogError(f"{where}.{key}", f"{escape(str(value))} is over the largest count "
                                                  f"{2**53} (2^53)")
    try:
        if "ev" in data:
            if data["ev"] not in EVENT_KINDS:
                raise EventLogError(f"{where}.ev", f"unknown event '{escape(str(data['ev']))}' "
                                                   f"(expected one of {', '.join(EVENT_KINDS)})")
            data.pop("queue", None)
            if flat and isinstance(data.get("anchors"), str):
                data["anchors"] = [a for a in data["anchors"].split(ANCHOR_SEP) if a]
            if data["ev"] == "bolt_emit" and "anchors" not in data:
                data["anchors"] = []  # CSV cannot tell [] from missing: both mean unanchored
            for key in ("tuple", "msg"):
                if isinstance(data.get(key), (int, float)) and not isinstance(data.get(key), bool):
                    data[key] = str(data[key])
            if "t" in data:
                data["t"] = _time(data["t"], where, scale)
            return Event.model_validate(data)
        if "queue" in data:
            if "t" in data:
                data["t"] = _time(data["t"], where, scale)
            return QueueSample.model_validate(data)
    except EventLogError:
        raise
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        if not loc and ": " in msg:
            loc, _, msg = msg.partition(": ")
        if first.get("type") == "extra_forbidden":
            msg = "unknown field"
        raise EventLogError(f"{where}.{escape(loc)}" if loc else where, msg) from None
    raise EventLogError(where, "neither an event (no 'ev' field) nor a queue sample (no 'queue' field)")


def _collect(records: Iterable[Event | QueueSample], source: str) -> EventLog:
    events: list[Event] = []
    queues: list[QueueSample] = []
    for rec in records:
        if isinstance(rec, Event):
            events.append(rec)
        else:
            queues.append(rec)
    events.sort(key=lambda e: e.t)  # stable: equal times keep file order
    queues.sort(key=lambda q: q.t)
    return EventLog(events=events, queues=queues, source=source)


# ---- readers --------------------------------------------------------------


def _open_text(path: Path) -> str:
    return read_text(path, lambda reason: EventLogError(str(path), reason))


def iter_jsonl(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> Iterator[Event | QueueSample]:
    """Records of a JSON Lines file (blank lines skipped)."""
    p = Path(path)
    for number, line in enumerate(_open_text(p).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{p.name} line {number}"
        yield record_from_dict(json_value(line, where), where, time_unit)


def iter_json(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> Iterator[Event | QueueSample]:
    """Records of a JSON array, or of an object with `events` / `trace` and `queues` arrays."""
    p = Path(path)
    text = _open_text(p)
    if not text.strip():
        raise EventLogError(p.name, "is empty")
    data = json_value(text, p.name)
    if isinstance(data, dict):
        for key in ("events", "trace", "queues"):
            if key in data and not isinstance(data[key], list):
                raise EventLogError(f"{p.name} {key}", f"must be a list of records, not {type_name(data[key])}")
        arrays = [(k, data[k]) for k in ("events", "trace", "queues") if isinstance(data.get(k), list)]
        if not arrays:
            raise EventLogError(p.name, "expected a list of records or an object with an 'events' list")
    elif isinstance(data, list):
        arrays = [("records", data)]
    else:
        raise EventLogError(p.name, f"expected a list of records, got {type_name(data)}")
    for key, items in arrays:
        for i, raw in enumerate(items):
            yield record_from_dict(raw, f"{p.name} {key}[{i}]", time_unit)


def iter_csv(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> Iterator[Event | QueueSample]:
    """Records of a CSV file with a header naming some of COLUMNS; anchors joined by ';'."""
    p = Path(path)
    rows = csv_records(_open_text(p).splitlines(keepends=True), p.name)
    fieldnames = next(rows)
    if not fieldnames:
        raise EventLogError(p.name, "is empty (expected a header line)")
    for number, row in rows:
        yield record_from_dict(row, f"{p.name} line {number}", time_unit, flat=True)


def csv_records(lines: Iterable[str], name: str) -> Iterator[Any]:
    """First the header's column names (each one of COLUMNS, each once), then (line, row) pairs, through the
    read boundary's CSV reader (app/core/fileio.py: a cell over csv's field limit, a row longer than the
    header and a column named twice are one-line EventLogErrors naming the line)."""
    rows = csv_rows(lines, lambda reason: EventLogError(name, reason),
                    at_line=lambda number, reason: EventLogError(f"{name} line {number}", reason))
    header = next(rows)
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise EventLogError(f"{name} header",
                            f"unknown column '{escape(str(unknown[0]))}' (expected some of {', '.join(COLUMNS)})")
    yield header
    yield from rows


def iter_parquet(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> Iterator[Event | QueueSample]:
    """Records of a Parquet file or folder (read with pyarrow)."""
    p = Path(path)
    if not p.exists():
        raise EventLogError(str(p), "no such file")
    import pyarrow.parquet as pq

    try:
        check_parquet_log(p)
        rows: list[dict[str, Any]] = pq.read_table(str(p)).to_pylist()
    except parquet_failures() as err:
        raise parquet_error(p, err) from None
    for i, raw in enumerate(rows):
        yield record_from_dict(raw, f"{p.name} row {i}", time_unit)


MAX_PARQUET_ENTRIES = 100_000  # files and folders below a Parquet folder


def check_parquet_path(path: Path) -> None:
    """A Parquet file that is a regular file, or a folder every entry of which (below it too) is a regular
    file or a folder: a named pipe would block pyarrow and DuckDB for ever, a link to nothing fails them
    half-way. Hidden entries (`.crc`, `_SUCCESS`), which neither reads, are not looked at."""
    import stat as st_

    if not path.is_dir():
        check_regular(path, lambda reason: EventLogError(str(path), reason))
        return
    seen = 0
    for folder, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in [*dirs, *files]:
            if name.startswith((".", "_")):
                continue
            seen += 1
            entry = Path(folder) / name
            where = f"{path.name}/{entry.relative_to(path)}"
            if seen > MAX_PARQUET_ENTRIES:
                raise EventLogError(path.name, f"holds over {MAX_PARQUET_ENTRIES} files and folders: not one log")
            try:
                mode = entry.stat().st_mode
            except FileNotFoundError:
                raise EventLogError(where, "is a link to nothing (dangling): remove it or point it at a "
                                           "Parquet file") from None
            except OSError as err:
                raise EventLogError(where, escape(err.strerror or str(err), 120)) from None
            if not (st_.S_ISREG(mode) or st_.S_ISDIR(mode)):
                kind = "a named pipe" if st_.S_ISFIFO(mode) else "a socket" if st_.S_ISSOCK(mode) else "a device"
                raise EventLogError(where, f"is {kind}, not a regular file (a Parquet folder holds files)")


def check_parquet_log(path: Path) -> Any:
    """The schema of a Parquet log (file or folder), checked: its files (check_parquet_path) and an `ev` or
    `queue` column (without either it holds no event and no queue sample); raises parquet_failures()."""
    schema = parquet_schema(path)
    if "ev" not in schema.names and "queue" not in schema.names:
        raise EventLogError(path.name, "has neither an ev nor a queue column: not an event log "
                                       f"(its columns: {escape(', '.join(schema.names), 120)}; docs/event-log.md)")
    return schema


def parquet_schema(path: Path) -> Any:
    """The Arrow schema of a Parquet file (read from its footer with pyarrow.parquet, which imports in half
    the time of pyarrow.dataset: no pandas) or folder (pyarrow.dataset); raises parquet_failures()."""
    check_parquet_path(path)
    if path.is_dir():
        import pyarrow.dataset as ds

        return ds.dataset(str(path), format="parquet").schema
    import pyarrow.parquet as pq

    return pq.read_schema(str(path))


def parquet_row_count(path: Path) -> int:
    """The rows of a Parquet file (its footer) or folder; raises parquet_failures()."""
    check_parquet_path(path)
    if path.is_dir():
        import pyarrow.dataset as ds

        return int(ds.dataset(str(path), format="parquet").count_rows())
    import pyarrow.parquet as pq

    return int(pq.read_metadata(str(path)).num_rows)


def parquet_failures() -> tuple[type[BaseException], ...]:
    """What pyarrow raises on a bad Parquet file or folder (ArrowInvalid, ArrowTypeError on mixed
    schemas, OSError on a truncated file, UnicodeDecodeError on a damaged string column)."""
    import pyarrow as pa

    return (OSError, UnicodeError, pa.ArrowException)


def parquet_error(path: Path, err: BaseException) -> EventLogError:
    """pyarrow's error on a bad Parquet file or folder as one line naming it (its first line, escaped)."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if not path.is_dir() and path.stat().st_size == 0:
        return EventLogError(path.name, "is empty (not a Parquet file)")
    return EventLogError(path.name, f"not a readable Parquet {'folder' if path.is_dir() else 'file'}: "
                                    f"{escape(text, 160)}")


# Storm's LoggingMetricsConsumer line (after log4j's own prefix):
#   1432753016    localhost:6703      2:split       __receive      {population=3, capacity=1024, ...}
_METRIC_LINE = re.compile(
    r"(?P<ts>\d{9,13})\s+(?P<host>[^\s:]+):(?P<port>\d+)\s+(?P<task>-?\d+):(?P<comp>\S+)\s+(?P<name>\S+)\s+(?P<value>.+?)\s*$"
)
_MAP_ENTRY = re.compile(r"([^=,{}\s][^=,{}]*)=([^,{}]*)")


def parse_metrics_line(line: str, where: str = "") -> list[MetricSample]:
    """The data points of one LoggingMetricsConsumer line ([] for other log lines).

    Non-numeric and non-finite values carry no measurement and are left out, except the
    `__receive` population (a queue length), which must be a whole number >= 0.
    """
    m = _METRIC_LINE.search(line)
    if not m:
        return []
    ts = float(m["ts"])
    t = ts / 1000.0 if ts > 1e11 else ts  # seconds, or milliseconds in some forks
    task_text = m["task"].lstrip("-")
    if len(task_text) > 18:
        raise EventLogError(where or "line", f"task number of {len(task_text)} digits is too large")
    base = dict(t=t, comp=m["comp"], task=max(0, int(m["task"])), worker=f"{m['host']}:{m['port']}", name=m["name"])
    value = m["value"].strip()
    out: list[MetricSample] = []
    entries = _MAP_ENTRY.findall(value) if value.startswith("{") else [("", value)]
    for key, raw in entries:
        key = key.strip()
        try:
            number = float(raw)
        except ValueError:
            number = math.nan  # non-numeric entries (e.g. host names) carry no measurement
        population = m["name"] == "__receive" and key == "population"
        if population and not (math.isfinite(number) and number >= 0 and number == int(number)):
            raise EventLogError(f"{where}.__receive.population" if where else "__receive.population",
                                    f"must be a whole number >= 0, not '{escape(raw.strip())}'")
        if math.isfinite(number):
            out.append(MetricSample(**base, key=key, value=number))
    return out


def read_storm_metrics(path: str | os.PathLike[str]) -> EventLog:
    """A `metrics.log` of Storm's LoggingMetricsConsumer: `__receive` population becomes queue samples."""
    p = Path(path)
    metrics: list[MetricSample] = []
    for number, line in enumerate(_open_text(p).split("\n"), start=1):
        metrics.extend(parse_metrics_line(line, f"{p.name} line {number}"))
    if not metrics:
        raise EventLogError(p.name, "no LoggingMetricsConsumer lines found "
                                    "(expected 'TIMESTAMP HOST:PORT TASK:COMPONENT METRIC VALUE')")
    start = min(m.t for m in metrics)
    metrics = [m.model_copy(update={"t": m.t - start}) for m in metrics]
    queues = [QueueSample(t=m.t, comp=m.comp, task=m.task, queue=int(m.value))
              for m in metrics if m.name == "__receive" and m.key == "population"]
    queues.sort(key=lambda q: q.t)
    return EventLog(queues=queues, metrics=sorted(metrics, key=lambda m: m.t), source=str(p))


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_uri(path: str | os.PathLike[str]) -> bool:
    """Whether a log is named by a URI (hdfs://, s3a://, gs://, abfss://, file://...) that Spark reads itself."""
    return bool(_URI.match(str(path)))


def log_format(path: str | os.PathLike[str]) -> str:
    """'jsonl', 'json', 'csv', 'parquet', 'storm-metrics', 'storm-events' or 'run-dir' from the name (and a peek)."""
    p = Path(path)
    name = p.name.lower()
    if p.is_dir():
        if name.endswith(".parquet") or any(p.glob("*.parquet")) and not any((p / f).exists() for f in EVENT_FILES):
            return "parquet"
        if not any((p / f).exists() for f in EVENT_FILES):
            from app.measure.storm_events import FORMAT, events_files

            if events_files(p):  # rolled events.log files, or a worker-artifacts folder
                return FORMAT
        return "run-dir"
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".parquet"):
        return "parquet"
    from app.measure.storm_events import is_rolled_name

    if is_rolled_name(name):  # events.log, events.log.3, events.log.2.gz
        return "storm-events"
    if name.endswith(".log") and "metrics" not in name:
        from app.measure.storm_events import FORMAT, looks_like_events_log

        if looks_like_events_log(p):
            return FORMAT  # Storm's event inspector (events.log)
    if name.endswith((".log", ".txt")) or "metrics" in name:
        return "storm-metrics"
    raise EventLogError(p.name,
                        "unknown log format (use .jsonl, .json, .csv, .parquet, a Storm metrics .log, or a run folder)")


def find_run_files(folder: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """The events file and the queue-sample file (if any) of a run folder."""
    d = Path(folder)
    events = next((d / f for f in EVENT_FILES if (d / f).exists()), None)
    if events is None:
        raise EventLogError(str(d), f"no event log in this folder (expected one of {', '.join(EVENT_FILES)})")
    queues = next((d / f for f in QUEUE_FILES if (d / f).exists()), None)
    for found in (events, queues):
        # a Parquet "file" may be a folder of parts; a .jsonl or .csv must be a file
        if found is not None and found.is_dir() and found.suffix != ".parquet":
            raise EventLogError(str(found), "is a folder, not a file")
    return events, queues


_ITERS = {"jsonl": iter_jsonl, "json": iter_json, "csv": iter_csv, "parquet": iter_parquet}


def read_log(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> EventLog:
    """Read any supported log (file or run folder) into an :class:`EventLog`."""
    p = Path(path)
    if not p.exists():
        raise EventLogError(str(p), "no such file or folder")
    fmt = log_format(p)
    if fmt == "storm-metrics":
        return read_storm_metrics(p)
    if fmt == "storm-events":
        from app.measure.storm_events import read_storm_events

        return read_storm_events(p)
    if fmt == "run-dir":
        events, queues = find_run_files(p)
        records = list(_ITERS[log_format(events)](events, time_unit))
        if queues is not None:
            records += list(_ITERS[log_format(queues)](queues, time_unit))
        return _collect(records, str(p))
    return _collect(_ITERS[fmt](p, time_unit), str(p))


# ---- writers --------------------------------------------------------------


def event_row(e: Event | QueueSample) -> dict[str, Any]:
    """The flat row of a record (all COLUMNS; missing values None)."""
    row = dict.fromkeys(COLUMNS)
    row.update(e.model_dump(exclude_none=True))
    return row


def _jsonl_bytes(records: Iterable[Event | QueueSample]) -> bytes:
    return "".join(json.dumps(r.model_dump(exclude_none=True), separators=(",", ":")) + "\n" for r in records).encode()


def _csv_bytes(records: Iterable[Event | QueueSample]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for r in records:
        row = event_row(r)
        if row["anchors"] is not None:
            row["anchors"] = ANCHOR_SEP.join(row["anchors"])
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buf.getvalue().encode()


def flat_rows(records: Iterable[Event | QueueSample]) -> list[tuple[Any, ...]]:
    """Events and queue samples as rows of FLAT_DDL."""
    rows: list[tuple[Any, ...]] = []
    for r in records:
        if isinstance(r, Event):
            rows.append((r.t, r.ev, r.comp, r.task, r.tuple, r.msg, r.anchors, r.reason, None))
        else:
            rows.append((r.t, None, r.comp, r.task, None, None, None, None, r.queue))
    return rows


def write_records(path: str | os.PathLike[str], records: Iterable[Event | QueueSample]) -> Path:
    """Write records as JSON Lines, CSV or Parquet, chosen by the file name; atomic for text files."""
    from app.core.fileio import write_atomic

    p = Path(path)
    fmt = log_format(p) if not p.is_dir() else "parquet"
    items = list(records)
    if fmt == "jsonl":
        write_atomic(p, _jsonl_bytes(items))
    elif fmt == "csv":
        write_atomic(p, _csv_bytes(items))
    elif fmt == "parquet":
        _write_parquet(p, flat_rows(items))
    else:
        raise EventLogError(p.name, "write logs as .jsonl, .csv or .parquet")
    return p


def _write_parquet(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """FLAT_DDL rows as one Parquet file, written beside `path` and renamed over it (a folder of parts
    left by an earlier writer is replaced)."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("t", pa.float64()), ("ev", pa.string()), ("comp", pa.string()), ("task", pa.int64()),
                        ("tuple", pa.string()), ("msg", pa.string()), ("anchors", pa.list_(pa.string())),
                        ("reason", pa.string()), ("queue", pa.int64())])
    columns: list[list[Any]] = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in schema]
    table = pa.table([pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)
    part = path.with_name(path.name + ".part")
    pq.write_table(table, str(part))
    if path.is_dir():
        shutil.rmtree(path)
    os.replace(part, path)


def write_log(folder: str | os.PathLike[str], log: EventLog, fmt: str = "jsonl") -> tuple[Path, Path]:
    """Write a log as a run folder: `events.<fmt>` and `queues.<fmt>`."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    return write_records(d / f"events.{fmt}", log.events), write_records(d / f"queues.{fmt}", log.queues)
