"""The lasso trace file, `stormbound-trace/1`, and its compressed form `stormbound-trace/2`
(documented in docs/trace-format.md).

One entry per position 0..k+1; position k+1 repeats `loop_start`, so positions
loop_start..k repeat forever. Times are exact: a decimal or a "p/q" string.

A long lasso (a run with failures: 10^4..10^5 positions) repeats itself: a block of
positions recurs with its times shifted by a constant and its queues and replay
backlogs raised by constant increments. `stormbound-trace/2` writes such a run as one
`{"repeat": ...}` item in place of its positions, and another position as a
`{"patch": ...}` of the one before (its time and the fields that differ).
`expand_trace_data` gives back the exact `stormbound-trace/1` document, position by
position, before anything reads it (`load_trace`, the certifier, `stormbound plot`).
`trace_bytes` writes the compressed form for a trace of COMPRESS_FROM positions or more
whenever it is smaller.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_serializer

from app.core.fileio import write_atomic
from app.core.formats.limits import escape
from app.core.formats.trace_compress import COMPRESSED_FORMAT as COMPRESSED_FORMAT
from app.core.formats.trace_compress import MAX_COUNT as MAX_COUNT
from app.core.formats.trace_compress import MAX_TRACE_POSITIONS as MAX_TRACE_POSITIONS
from app.core.formats.trace_compress import TRACE_FORMAT as TRACE_FORMAT
from app.core.formats.trace_compress import TRACE_FORMATS as TRACE_FORMATS
from app.core.formats.trace_compress import ExpandError as ExpandError
from app.core.formats.trace_compress import PatchItem, RepeatItem, iter_expanded
from app.core.formats.trace_compress import compress_positions as compress_positions
from app.core.formats.trace_compress import expand_trace_data as expand_trace_data
from app.core.formats.trace_compress import is_compressed as is_compressed
from app.core.formats.trace_numbers import checked_time
from app.core.formats.trace_numbers import exact_fraction as exact_fraction
from app.core.formats.trace_numbers import format_carry as format_carry
from app.core.formats.trace_numbers import format_time as format_time
from app.core.formats.trace_numbers import parse_carry as parse_carry
from app.core.topology import Problem


class _Step(BaseModel):
    """What spout and bolt steps share: per-stream counts, present only for a component with streams."""

    model_config = ConfigDict(extra="forbid", strict=True)
    emitted_by_stream: dict[str, Annotated[int, Field(ge=0, le=MAX_COUNT)]] | None = Field(
        default=None, description="tuples emitted on each output stream (a component with declared streams)")
    buffer_by_stream: dict[str, int | str] | None = Field(
        default=None, description="each output stream's carry after this position (a component with declared "
                                  "streams)")

    @field_validator("buffer_by_stream")
    @classmethod
    def _carries(cls, value: dict[str, int | str] | None) -> dict[str, int | str] | None:
        for carry in (value or {}).values():
            if parse_carry(carry) < 0:
                raise ValueError("must not be negative")
        return value

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in _FAILURE_FIELDS:  # no failure here: left out, so traces without failures read as before
                if key in data and data[key] in (False, 0, None, {}):
                    del data[key]
            for key in ("emitted_by_stream", "buffer_by_stream"):  # unset: left out; set: written last
                value = data.pop(key, None)
                if value is not None:
                    data[key] = value
        return data

    def stream_emitted(self, stream: str) -> int:
        """Tuples emitted on `stream` ('default' for a component without declared streams: `emitted`)."""
        if self.emitted_by_stream is None:
            return getattr(self, "emitted", 0) if stream == "default" else 0
        return self.emitted_by_stream.get(stream, 0)


#: the fields of docs/model.md section 7.5, written only where something fails or is replayed
_FAILURE_FIELDS = ("backlog", "replayed", "fail", "recover", "lost", "replays")


class SpoutStep(_Step):
    """A spout at one position; with declared streams `emitted` is the sum over its streams and the
    emission itself (what its timing rule reads) is `emitted_by_stream["default"]`. With failures
    (docs/model.md section 7) `emitted` includes `replayed` replays; `backlog` is the replays waiting
    before this position's actions."""

    emit: bool
    emitted: int = Field(ge=0, le=MAX_COUNT)
    backlog: int = Field(default=0, ge=0, le=MAX_COUNT, description="replays waiting before this position's actions")
    replayed: int = Field(default=0, ge=0, le=MAX_COUNT, description="replays among the tuples emitted here")


class BoltStep(_Step):
    """A bolt at one position. `queue` is before this position's actions, `buffer` after; with declared
    streams `emitted` is the sum over `emitted_by_stream` and `buffer` the default stream's carry."""

    queue: int = Field(ge=0, le=MAX_COUNT)
    arrivals: int = Field(ge=0, le=MAX_COUNT)
    take: bool
    batch: int = Field(ge=0, le=MAX_COUNT, description="tuples in the current processing phase")
    emit: bool
    emitted: int = Field(ge=0, le=MAX_COUNT)
    buffer: int | str = Field(description='carry after this position: an integer, or an exact "p/q" string '
                                          '(emission "exact")')
    phase: Literal["idle", "processing", "failed"]
    fail: bool = Field(default=False, description="a failure starts here (docs/model.md section 7)")
    recover: bool = Field(default=False, description="the bolt comes back here after a failure")
    lost: int = Field(default=0, ge=0, le=MAX_COUNT,
                      description="tuples lost here (queue, batch, arrivals at a failure; arrivals while failed)")
    replays: dict[str, Annotated[int, Field(ge=0, le=MAX_COUNT)]] | None = Field(
        default=None, description="spout tuples each spout replays for the tuples lost here")

    @field_validator("buffer")
    @classmethod
    def _carry(cls, value: int | str) -> int | str:
        if type(value) is int:  # the common case, checked without a Fraction (long traces)
            if value < 0:
                raise ValueError("must not be negative")
            return value
        carry = parse_carry(value)
        if carry < 0:
            raise ValueError("must not be negative")
        return value

    @property
    def exact_buffer(self) -> Fraction:
        return parse_carry(self.buffer)


class WorkerStep(BaseModel):
    """A worker at one position where something happens to it (docs/model.md 9.5): its death (its bolts fail
    here), its restart (they recover here), the replays its death causes (added to the spouts' backlogs at the
    first position at or after the death plus the message timeout) and their release there."""

    model_config = ConfigDict(extra="forbid", strict=True)
    death: bool = Field(default=False, description="the worker dies here")
    restart: bool = Field(default=False, description="the worker is back here")
    replays: dict[str, Annotated[int, Field(ge=0, le=MAX_COUNT)]] | None = Field(
        default=None, description="at a death: the broken trees each spout replays after the message timeout")
    released: dict[str, Annotated[int, Field(ge=0, le=MAX_COUNT)]] | None = Field(
        default=None, description="the replays of the worker's last death added to the backlogs here (its timeout)")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> Any:
        data = handler(self)
        return {k: v for k, v in data.items() if v not in (False, None, {})} if isinstance(data, dict) else data


class TracePosition(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    time: str = Field(description='exact time stamp: "1.25" or "5/3"')

    @field_validator("time")
    @classmethod
    def _exact(cls, value: str) -> str:
        return checked_time(value)

    spouts: dict[str, SpoutStep]
    bolts: dict[str, BoltStep]
    workers: dict[str, WorkerStep] | None = Field(
        default=None, description="worker deaths, restarts and their replays here (docs/model.md 9.5); left out "
                                  "where no worker dies, restarts or releases replays")

    @model_serializer(mode="wrap")
    def _drop_workers(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not data.get("workers"):
            data.pop("workers", None)
        return data

    @property
    def exact_time(self) -> Fraction:
        return exact_fraction(self.time)


class Trace(BaseModel):
    """A lasso: positions 0..k+1, the last repeating `loop_start`."""

    model_config = ConfigDict(extra="forbid", strict=True)
    format: Literal["stormbound-trace/1"] = TRACE_FORMAT
    topology: dict[str, Any] = Field(description="the (possibly reduced) topology document the trace runs on")
    k: int
    loop_start: int
    positions: list[TracePosition]
    kept: list[str] = Field(default_factory=list, description="component names kept by the cone of influence")

    def loop_duration(self) -> Fraction:
        return self.positions[self.k + 1].exact_time - self.positions[self.loop_start].exact_time

    def growth_per_loop(self) -> dict[str, int]:
        last, start = self.positions[self.k + 1], self.positions[self.loop_start]
        return {name: last.bolts[name].queue - start.bolts[name].queue for name in start.bolts}


class CompressedTrace(BaseModel):
    """`stormbound-trace/2`: a lasso whose repeating runs are `{"repeat": ...}` items (docs/trace-format.md);
    it stands for the `stormbound-trace/1` trace `expand_trace_data` gives back."""

    model_config = ConfigDict(extra="forbid", strict=True)
    format: Literal["stormbound-trace/2"] = COMPRESSED_FORMAT
    topology: dict[str, Any] = Field(description="the (possibly reduced) topology document the trace runs on")
    k: int
    loop_start: int
    positions: list[TracePosition | RepeatItem | PatchItem] = Field(
        description="positions, runs of positions as repeat items and positions as patches of the previous one; "
                    "expanded: exactly k + 2 positions")
    kept: list[str] = Field(default_factory=list, description="component names kept by the cone of influence")
    _ends: dict[int, dict[str, Any]] = PrivateAttr(default_factory=dict)

    def document(self) -> dict[str, Any]:
        """The decoded JSON of the file, as written: a repeat's or a patch's empty fields left out."""
        data = self.model_dump(mode="json")
        for item in data["positions"]:
            for fields in (item.get("repeat"), item.get("patch")):
                for key in ("queue", "backlog", "spouts", "bolts"):
                    if fields is not None and fields.get(key) == {}:
                        del fields[key]
        return data

    def _at(self, wanted: set[int]) -> dict[int, dict[str, Any]]:
        """The positions numbered in `wanted`, as JSON, expanded one at a time up to the last of them (the loop's
        two ends kept once read)."""
        if wanted <= self._ends.keys():
            return {n: self._ends[n] for n in wanted}
        found = {n: position for n, position in enumerate(_json_positions(self, 0, max(wanted) + 1)) if n in wanted}
        if wanted == {self.loop_start, self.k + 1}:
            self._ends = found
        return found

    def loop_duration(self) -> Fraction:
        ends = self._at({self.loop_start, self.k + 1})
        return exact_fraction(ends[self.k + 1]["time"]) - exact_fraction(ends[self.loop_start]["time"])

    def growth_per_loop(self) -> dict[str, int]:
        ends = self._at({self.loop_start, self.k + 1})
        last, start = ends[self.k + 1]["bolts"], ends[self.loop_start]["bolts"]
        return {name: last[name]["queue"] - start[name]["queue"] for name in start}


#: a lasso or run as the verifier keeps it: its positions, or its compressed form when long (docs/trace-format.md)
AnyTrace = Trace | CompressedTrace


def trace_data(trace: Trace | CompressedTrace) -> dict[str, Any]:
    """A trace's decoded JSON as its file holds it (a compressed one as it is: `CompressedTrace.document`)."""
    return trace.document() if isinstance(trace, CompressedTrace) else trace.model_dump(mode="json")


def bolt_steps(trace: Trace | CompressedTrace, first: int = 0, end: int | None = None
               ) -> Iterator[dict[str, dict[str, Any]]]:
    """Per position first..end-1: each bolt's fields as written (a failure field absent where false or 0: read them
    with `.get`), one position at a time and without validating them again (a trace's positions are validated
    when it is made)."""
    if isinstance(trace, Trace):
        for p in trace.positions[first:end]:
            yield {name: b.__dict__ for name, b in p.bolts.items()}
        return
    for position in _json_positions(trace, first, end):
        yield position["bolts"]


def timed_bolt_steps(trace: Trace | CompressedTrace) -> Iterator[tuple[Fraction, dict[str, dict[str, Any]]]]:
    """Per position: its exact time and each bolt's fields as `bolt_steps` gives them, in one pass (a compressed
    trace expanded once)."""
    if isinstance(trace, Trace):
        for p in trace.positions:
            yield p.exact_time, {name: b.__dict__ for name, b in p.bolts.items()}
        return
    for position in _json_positions(trace, 0, None):
        yield exact_fraction(position["time"]), position["bolts"]


def trace_positions(trace: Trace | CompressedTrace, first: int = 0, end: int | None = None) -> Iterator[TracePosition]:
    """Positions first..end-1 (to the last by default) of a trace, compressed or not, one at a time: a compressed
    trace is expanded as it is read, never held whole."""
    if isinstance(trace, Trace):
        yield from trace.positions[first:end]
        return
    for position in _json_positions(trace, first, end):
        yield TracePosition.model_validate(position)


def _json_positions(trace: CompressedTrace, first: int, end: int | None) -> Iterator[dict[str, Any]]:
    """Positions first..end-1 of a compressed trace as JSON, expanded one at a time (what the three readers above
    share)."""
    expanded = (position for position, _ in iter_expanded(trace.document()["positions"], limit=trace.k + 2))
    yield from itertools.islice(expanded, first, end)


def expanded_trace(trace: Trace | CompressedTrace) -> Trace:
    """A trace with every position held (what a view of its positions needs): a compressed one expanded."""
    if isinstance(trace, Trace):
        return trace
    return Trace(topology=trace.topology, k=trace.k, loop_start=trace.loop_start,
                 positions=list(trace_positions(trace)), kept=trace.kept)


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file, `stormbound-trace/1` or its compressed form `/2` (expanded; a `"$schema"` key
    naming its schema is allowed); bad input is one FormatError naming the field (e.g.
    `positions.3.time`, `positions.7.repeat.period`)."""
    from app.core.formats.jsonfile import read_json
    from app.core.formats.schema import without_schema_key

    return trace_from_data(without_schema_key(read_json(path)))


def trace_from_data(data: Any) -> Trace:
    """A decoded trace document (either format) as a Trace; one FormatError naming the field otherwise."""
    from app.core.formats.jsonfile import FormatError

    if is_compressed(data):
        try:
            data = expand_trace_data(data)
        except ExpandError as err:
            raise FormatError([Problem(err.where, err.message)]) from None
    try:
        return Trace.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "trace"
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        raise FormatError([Problem(escape(where), message)]) from None


def trace_topology(data: dict[str, Any]) -> dict[str, Any]:
    """The topology document a decoded trace runs on, when the trace is whole (what `check`, `verify` and the
    app's Open read from a trace file); a broken trace is one FormatError naming the field and saying the
    file is a trace, so its topology is never announced as valid on its own."""
    from app.core.formats.jsonfile import FormatError
    from app.core.formats.schema import without_schema_key

    kind = f"{data.get('format')} trace"
    try:
        trace = trace_from_data(without_schema_key(data))
    except FormatError as err:
        first = err.problems[0]
        raise FormatError([Problem(first.path, f"{first.message} (the file is a {kind}, not a topology "
                                               "document)")]) from None
    problems = trace_problems(trace)
    if problems:
        raise FormatError([Problem(p.path, f"{p.message} (the file is a {kind}, not a topology document)")
                           for p in problems])
    return trace.topology


def save_trace(trace: Trace, path: str | os.PathLike[str]) -> None:
    write_atomic(path, trace_bytes(trace, gzipped=gzip_name(path)))


def gzip_name(path: str | os.PathLike[str]) -> bool:
    """A file named `*.gz` is written gzip-compressed (every reader of JSON documents reads it back)."""
    return os.fspath(path).endswith(".gz")


#: a trace of fewer positions is always written as `stormbound-trace/1` (it reads as before, and is short)
COMPRESS_FROM = 1000


def trace_bytes(trace: Trace | CompressedTrace, compress: bool = True, gzipped: bool = False) -> bytes:
    """A trace file's bytes, as `save_trace` writes them: for a trace of COMPRESS_FROM positions or more,
    `stormbound-trace/2` (one line per position or repeat item) when that is smaller, as it is for a lasso
    that repeats itself; else `stormbound-trace/1` (indented JSON, as always). `compress=False`: always /1.
    `gzipped`: those bytes gzip-compressed (a `*.gz` file name; StormCrawler's 311,558-position lasso with
    failures: 11 MB as /2, 97 kB gzipped). A trace kept compressed (a long simulated lasso) is written as it is,
    never expanded, unless `compress` is False."""
    if gzipped:
        import gzip

        return gzip.compress(trace_bytes(trace, compress), compresslevel=9, mtime=0)
    if isinstance(trace, CompressedTrace):
        if compress:
            return _packed_bytes(trace.document())
        trace = expanded_trace(trace)
    data = trace.model_dump(mode="json")
    if compress and len(data["positions"]) >= COMPRESS_FROM:
        items = compress_positions(data["positions"])
        if len(items) < len(data["positions"]):
            packed = _packed_bytes({**data, "format": COMPRESSED_FORMAT, "positions": items})
            # the indented file is longer than the compact one: only a close call needs it written out
            if len(packed) < len(json.dumps(data, separators=(",", ":"))):
                return packed
            plain = _json_bytes(data)
            return packed if len(packed) < len(plain) else plain
    return _json_bytes(data)


def _json_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def _packed_bytes(data: dict[str, Any]) -> bytes:
    """Indented JSON but for `positions`, written one item a line."""
    marker = "\u0000positions\u0000"
    text = json.dumps({**data, "positions": marker}, indent=2)
    lines = ",\n    ".join(json.dumps(item, separators=(", ", ": ")) for item in data["positions"])
    quoted = json.dumps(marker)
    return (text.replace(quoted, f"[\n    {lines}\n  ]" if lines else "[]", 1) + "\n").encode("utf-8")


def trace_problems(trace: Trace) -> list[Problem]:
    """What makes a decoded trace unusable beyond its fields (the certifier's structural rules): its
    embedded topology as `check` reads it, k + 2 positions, loop_start within them, and every
    position naming exactly the topology's spouts and bolts. Empty when none."""
    from app.core.topology import TopologyError, parse_topology

    try:
        topo = parse_topology(trace.topology)
    except TopologyError as err:
        return [Problem(f"topology.{p.path}" if p.path else "topology", p.message) for p in err.problems[:5]]
    except (ValueError, TypeError) as err:
        return [Problem("topology", escape(str(err)))]
    if trace.k < 1 or len(trace.positions) != trace.k + 2:
        return [Problem("positions", f"{len(trace.positions)} positions; a trace with k = {trace.k} needs k + 2 "
                                     "(and k at least 1)")]
    if not 0 <= trace.loop_start <= trace.k + 1:
        return [Problem("loop_start", f"{trace.loop_start} is outside 0..{trace.k + 1}")]
    spouts, bolts = {s.name for s in topo.spouts}, {b.name for b in topo.bolts}
    before = None
    for i, position in enumerate(trace.positions):
        problem = names_problem(f"positions.{i}", position, spouts, bolts)
        if problem is not None:
            return [problem]
        if before is not None and position.exact_time < before.exact_time:
            return [backwards(i, position.time, before.time)]
        before = position
    return []


def backwards(index: int, time: str, before: str) -> Problem:
    """Position `index` at `time`, earlier than the position before it (at `before`): a trace's times never
    go backwards."""
    return Problem(f"positions.{index}.time", f"{escape(time)} is before the time of position {index - 1} "
                                              f"({escape(before)}): a trace's times never go backwards")


def names_problem(where: str, position: TracePosition, spouts: set[str], bolts: set[str]) -> Problem | None:
    """Why a position does not name exactly the topology's spouts and bolts (None when it does)."""
    for key, names, found in (("spouts", spouts, set(position.spouts)), ("bolts", bolts, set(position.bolts))):
        missing, extra = sorted(names - found), sorted(found - names)
        if missing:
            return Problem(f"{where}.{key}", f"{escape(missing[0])} of the topology is missing")
        if extra:
            return Problem(f"{where}.{key}.{escape(extra[0])}", "is not in the trace's topology")
    return None
