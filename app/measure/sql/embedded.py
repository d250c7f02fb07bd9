"""The in-process engine: DuckDB, with a log loaded as its `events` and `queues` tables.

A Parquet log whose columns have the expected types is read by DuckDB itself (only the
columns a query needs, in parallel, spilling to disk beyond memory); the first pass of a
check counts the bad rows (app.measure.sql.analysis.BAD_EVENT: unknown event kind,
missing t, comp, tuple or msg, a non-finite time, a negative task or queue) and, when there
is one, the log is read again by the Python readers of app.measure.logstream, whose
one-line message names the row and field.
Every other log (JSON Lines, CSV, a JSON array, Storm metrics and events logs, Parquet
of other column types) goes through those readers, batch by batch, into DuckDB as Arrow
record batches: the limits of docs/limits.md and the one-line errors of the readers hold
for every engine.

DuckDB's memory is capped by `STORMBOUND_DUCKDB_MEMORY` (a DuckDB size such as `2GB`;
default: DuckDB's own, 80 % of this machine) and it spills to a temporary folder beyond it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.measure.eventlog import TimeUnit, log_format
from app.measure.sql.dialect import Dialect

MEMORY_ENV = "STORMBOUND_DUCKDB_MEMORY"
SMALL_BATCH = 2000  # rows loaded with plain inserts rather than as Arrow
DUCKDB_INSTALL = "pip install duckdb"


class EmbeddedError(BadInput, RuntimeError):
    """The embedded engine failed (out of memory, DuckDB missing); one line, said by app.measure.engines."""


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _arrow_schemas() -> tuple[Any, Any]:
    import pyarrow as pa

    events = pa.schema([("t", pa.float64()), ("ev", pa.string()), ("comp", pa.string()), ("task", pa.int64()),
                        ("tuple", pa.string()), ("msg", pa.string()), ("anchors", pa.list_(pa.string())),
                        ("reason", pa.string())])
    queues = pa.schema([("t", pa.float64()), ("comp", pa.string()), ("task", pa.int64()), ("queue", pa.int64())])
    return events, queues


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401  # only whether it imports
    except ModuleNotFoundError:
        return False
    return True


def _read_failures() -> tuple[type[Exception], ...]:
    try:
        import duckdb
    except ModuleNotFoundError:
        return ()
    return (duckdb.Error,)  # after OutOfMemoryException, which says to raise the memory


_READ_FAILURES = _read_failures()


class Embedded:
    """One DuckDB connection holding one log as `events` and `queues` (tables or views); `run(sql)` answers rows."""

    dialect: Dialect = "duckdb"
    events = "events"
    queues = "queues"

    def __init__(self) -> None:
        try:
            import duckdb
        except ModuleNotFoundError:
            raise EmbeddedError(f"the embedded engine needs DuckDB ({DUCKDB_INSTALL}), or use --engine spark") from None
        self._spill = tempfile.mkdtemp(prefix="stormbound-duckdb-")
        self._deferred: tuple[Path, TimeUnit] | None = None  # a log DuckDB reads itself, not yet checked
        self.con = duckdb.connect(":memory:")
        self.con.execute(f"SET temp_directory = {_quote(self._spill)}")
        self.con.execute("SET preserve_insertion_order = false")
        memory = os.environ.get(MEMORY_ENV, "").strip()
        if memory:
            try:
                self.con.execute(f"SET memory_limit = {_quote(memory)}")
            except duckdb.Error:
                self.close()
                raise EmbeddedError(f"${MEMORY_ENV}: expected a size such as 2GB, got '{memory}'") from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()
        shutil.rmtree(self._spill, ignore_errors=True)

    def __enter__(self) -> Embedded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, sql: str) -> Sequence[Sequence[Any]]:
        """The rows of one query. A query counting bad rows (`_bad_n`, its last column) over a log DuckDB
        reads itself has the log read by the Python readers when it finds one: they name the row."""
        rows = self._run(sql)
        if self._deferred is not None and "_bad_n" in sql and any(r[-1] for r in rows):
            path, time_unit = self._deferred
            self._deferred = None
            self._load_rows_of(path, time_unit)  # raises EventLogError naming the row
            rows = self._run(sql)
        return rows

    def _run(self, sql: str) -> Sequence[Sequence[Any]]:
        import duckdb

        try:
            return self.con.execute(sql).fetchall()
        except duckdb.OutOfMemoryException as err:
            raise EmbeddedError(f"the embedded engine ran out of memory ({str(err).splitlines()[0][:120]}): "
                                f"raise ${MEMORY_ENV} (e.g. 8GB), or use --engine spark") from None
        except _READ_FAILURES as err:
            self._read_again(err)
            return self.con.execute(sql).fetchall()

    def _read_again(self, err: Exception) -> None:
        """DuckDB could not read a Parquet log it reads itself (damaged pages pyarrow's footer check let
        through, a value out of range): the Python readers read it instead, and name what is wrong."""
        if self._deferred is None:
            raise err
        path, time_unit = self._deferred
        self._deferred = None
        self._load_rows_of(path, time_unit)

    def materialize(self, name: str, sql: str) -> None:
        """Keep a query's rows as the table `name` (spilled to disk beyond memory)."""
        import duckdb

        try:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")
        except duckdb.OutOfMemoryException as err:
            raise EmbeddedError(f"the embedded engine ran out of memory ({str(err).splitlines()[0][:120]}): "
                                f"raise ${MEMORY_ENV} (e.g. 8GB), or use --engine spark") from None
        except _READ_FAILURES as err:
            self._read_again(err)
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}")

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS {name}")

    # ---- loading ----------------------------------------------------------------

    def load_rows(self, events: Any, queues: Any) -> None:
        """Event and queue rows (app.measure.logstream's plain tuples) as the two tables."""
        self._create()
        self._append(events, queues)

    def load_path(self, path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> None:
        """A log file or run folder as the two tables (Parquet read by DuckDB where it can)."""
        from app.measure.logstream import log_files

        p = Path(path)
        files = log_files(p)
        for f in files:
            if log_format(f) == "parquet":
                from app.measure.eventlog import check_parquet_log, parquet_error, parquet_failures

                try:
                    check_parquet_log(f)
                except ModuleNotFoundError:
                    break
                except parquet_failures() as err:
                    raise parquet_error(f, err) from None
        direct = [f for f in files if log_format(f) == "parquet" and self._parquet_columns(f) is not None]
        if len(direct) == len(files):
            try:
                self._parquet_views(files, time_unit)
            except _READ_FAILURES:  # a part DuckDB cannot bind (damaged, empty, another schema): read in Python
                self._load_rows_of(p, time_unit)
                return
            self._deferred = (p, time_unit)
            return
        self._load_rows_of(p, time_unit)

    def _load_rows_of(self, path: Path, time_unit: TimeUnit) -> None:
        from app.measure.logstream import batches

        self._create()
        for events, queues in batches(path, time_unit):
            self._append(events, queues)

    def _create(self) -> None:
        self.con.execute("DROP VIEW IF EXISTS events; DROP VIEW IF EXISTS queues; "
                         "DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS queues")
        self.con.execute("CREATE TABLE events (t DOUBLE, ev VARCHAR, comp VARCHAR, task BIGINT, tuple VARCHAR, "
                         "msg VARCHAR, anchors VARCHAR[], reason VARCHAR, seq BIGINT)")
        self._seq = 0
        self.con.execute("CREATE TABLE queues (t DOUBLE, comp VARCHAR, task BIGINT, queue BIGINT)")

    def _append(self, events: Any, queues: Any) -> None:
        events, queues = list(events), list(queues)
        if len(events) + len(queues) <= SMALL_BATCH or not _has_pyarrow():
            # a few rows: no Arrow (whose first use imports pandas); and the frozen app has no pyarrow
            if events:
                first = self._seq
                self._seq += len(events)
                self.con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                     [(*row, first + i) for i, row in enumerate(events)])
            if queues:
                self.con.executemany("INSERT INTO queues VALUES (?, ?, ?, ?)", queues)
            return
        import pyarrow as pa

        event_schema, queue_schema = _arrow_schemas()
        for rows, schema, table in ((events, event_schema, "events"), (queues, queue_schema, "queues")):
            if not rows:
                continue
            columns = list(zip(*rows, strict=True))
            arrays = [pa.array(list(col), type=field.type) for col, field in zip(columns, schema, strict=True)]
            if table == "events":  # the log order, which breaks ties in time
                arrays.append(pa.array(range(self._seq, self._seq + len(rows)), type=pa.int64()))
                self._seq += len(rows)
            batch = pa.table(arrays, names=[*schema.names, "seq"] if table == "events" else schema.names)
            self.con.register("_batch", batch)
            self.con.execute(f"INSERT INTO {table} SELECT * FROM _batch")
            self.con.unregister("_batch")

    # ---- Parquet read by DuckDB ----------------------------------------------------

    @staticmethod
    def _parquet_columns(path: Path) -> dict[str, str] | None:
        """The log columns of a Parquet file or folder when their types are the ones DuckDB can read
        as they are (numbers for t, task and queue, strings, a list of strings for anchors); else None."""
        try:
            import pyarrow as pa
            import pyarrow.types as pt

            from app.measure.eventlog import parquet_failures, parquet_schema

            if not path.is_dir() and not path.is_file():
                return None
            schema = parquet_schema(path)
        except ModuleNotFoundError:
            return None
        except parquet_failures():
            return None  # the Python reader says what is wrong with it
        def signed(ty: Any) -> bool:  # DuckDB casts to BIGINT: a uint64 over 2^63 fails there, so the Python
            return bool(pt.is_integer(ty) and not pt.is_uint64(ty))  # reader checks those values one by one

        want = {"t": pt.is_floating, "task": signed, "queue": signed,
                "ev": pt.is_string, "comp": pt.is_string, "tuple": pt.is_string, "msg": pt.is_string,
                "reason": pt.is_string,
                "anchors": lambda ty: pt.is_list(ty) and pt.is_string(ty.value_type)}
        found: dict[str, str] = {}
        for name, ok in want.items():
            if name not in schema.names:
                continue
            ty = schema.field(name).type
            if name == "t" and pt.is_integer(ty):
                found[name] = "number"
                continue
            if not ok(ty) or isinstance(ty, pa.DictionaryType):
                return None
            found[name] = "yes"
        if not ("ev" in found or "queue" in found) or not _counts_in_range(path):
            return None
        return found

    def _parquet_views(self, files: list[Path], time_unit: TimeUnit) -> None:
        """`events` and `queues` as views over the Parquet files (checked by the first pass, see `run`)."""
        divisor = "1000.0" if time_unit == "ms" else "1.0"
        event_parts, queue_parts = [], []
        parts = [(self._parquet_columns(f) or {}, part) for f in files
                 for part in (_parts(f) if f.is_dir() else [f])]
        for number, (present, part) in enumerate(parts, start=1):
            source = f"read_parquet({_quote(str(part))}, file_row_number = true)"

            def col(name: str, kind: str, present: dict[str, str] = present) -> str:
                return f"CAST({name} AS {kind})" if name in present else f"CAST(NULL AS {kind})"

            t = f"({col('t', 'DOUBLE')} / {divisor})"
            task = f"coalesce({col('task', 'BIGINT')}, 0)"
            ev = col("ev", "VARCHAR")
            anchors = col("anchors", "VARCHAR[]")
            event_parts.append(
                f"SELECT {t} AS t, {ev} AS ev, {col('comp', 'VARCHAR')} AS comp, {task} AS task, "
                f"{col('tuple', 'VARCHAR')} AS tuple, {col('msg', 'VARCHAR')} AS msg, "
                f"CASE WHEN {ev} = 'bolt_emit' THEN coalesce([a FOR a IN {anchors} IF a IS NOT NULL], []) END "
                f"AS anchors, {col('reason', 'VARCHAR')} AS reason, "
                f"CAST({number} AS BIGINT) * 4294967296 + file_row_number AS seq "
                f"FROM {source} WHERE {ev} IS NOT NULL")
            queue_parts.append(
                f"SELECT {t} AS t, {col('comp', 'VARCHAR')} AS comp, {task} AS task, {col('queue', 'BIGINT')} AS queue "
                f"FROM {source} WHERE {ev} IS NULL AND {col('queue', 'BIGINT')} IS NOT NULL")
        self.con.execute("DROP VIEW IF EXISTS events; DROP VIEW IF EXISTS queues; "
                         "DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS queues")
        self.con.execute("CREATE VIEW events AS " + " UNION ALL ".join(event_parts))
        self.con.execute("CREATE VIEW queues AS " + " UNION ALL ".join(queue_parts))


def _counts_in_range(path: Path) -> bool:
    """The task and queue columns hold whole numbers in 0..2^53 by their Parquet statistics (the footer, no
    data read); False sends the log to the Python readers, which name the row (docs/limits.md). Parts
    without statistics are taken as they are."""
    import pyarrow.parquet as pq

    from app.measure.eventlog import parquet_failures

    for part in (_parts(path) if path.is_dir() else [path])[:10_000]:
        try:
            meta = pq.ParquetFile(str(part)).metadata
        except parquet_failures():
            return False
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            for index in range(row_group.num_columns):
                column = row_group.column(index)
                stats = column.statistics
                if column.path_in_schema in ("task", "queue") and stats is not None and stats.has_min_max \
                        and (stats.min < 0 or stats.max > 2**53):
                    return False
    return True


def _parts(folder: Path) -> list[Path]:
    """The Parquet files of a folder as pyarrow reads them: files (not folders named *.parquet), hidden
    ones (`_SUCCESS`, `.crc`, `_temporary/`) left out."""
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file()
                  and not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts))


@contextlib.contextmanager
def embedded_log(path: str | os.PathLike[str], time_unit: TimeUnit = "s") -> Iterator[Embedded]:
    """An embedded engine holding the log at `path` (closed after)."""
    engine = Embedded()
    try:
        engine.load_path(path, time_unit)
        yield engine
    finally:
        engine.close()
