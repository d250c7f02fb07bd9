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

import json
import math
import os
import re
from fractions import Fraction
from operator import sub
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer

from app.core.errors import StormboundError
from app.core.fileio import write_atomic
from app.core.formats.limits import escape
from app.core.topology import Problem

TRACE_FORMAT: Literal["stormbound-trace/1"] = "stormbound-trace/1"
COMPRESSED_FORMAT: Literal["stormbound-trace/2"] = "stormbound-trace/2"
TRACE_FORMATS = (TRACE_FORMAT, COMPRESSED_FORMAT)


def _env_positions(default: int) -> int:
    raw = os.environ.get("STORMBOUND_MAX_TRACE_POSITIONS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


#: Most positions a trace may have once expanded (setting: STORMBOUND_MAX_TRACE_POSITIONS): a compressed
#: file of a few kilobytes may stand for millions of positions, each read into memory (about 7 kB a position
#: of five components: 23 495 of focused-crawler cfg-4 take 167 MB); the longest lassos found are ~10^5.
MAX_TRACE_POSITIONS = _env_positions(200_000)


class _Step(BaseModel):
    """What spout and bolt steps share: per-stream counts, present only for a component with streams."""

    model_config = ConfigDict(extra="forbid", strict=True)
    emitted_by_stream: dict[str, Annotated[int, Field(ge=0)]] | None = Field(
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
    emitted: int = Field(ge=0)
    backlog: int = Field(default=0, ge=0, description="replays waiting before this position's actions")
    replayed: int = Field(default=0, ge=0, description="replays among the tuples emitted here")


class BoltStep(_Step):
    """A bolt at one position. `queue` is before this position's actions, `buffer` after; with declared
    streams `emitted` is the sum over `emitted_by_stream` and `buffer` the default stream's carry."""

    queue: int = Field(ge=0)
    arrivals: int = Field(ge=0)
    take: bool
    batch: int = Field(ge=0, description="tuples in the current processing phase")
    emit: bool
    emitted: int = Field(ge=0)
    buffer: int | str = Field(description='carry after this position: an integer, or an exact "p/q" string '
                                          '(emission "exact")')
    phase: Literal["idle", "processing", "failed"]
    fail: bool = Field(default=False, description="a failure starts here (docs/model.md section 7)")
    recover: bool = Field(default=False, description="the bolt comes back here after a failure")
    lost: int = Field(default=0, ge=0, description="tuples lost here (queue, batch, arrivals at a failure; "
                                                   "arrivals while failed)")
    replays: dict[str, Annotated[int, Field(ge=0)]] | None = Field(
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


class TracePosition(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    time: str = Field(description='exact time stamp: "1.25" or "5/3"')

    @field_validator("time")
    @classmethod
    def _exact(cls, value: str) -> str:
        if len(value) > 64:
            raise ValueError("a time stamp of more than 64 characters")
        try:
            exact_fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{escape(repr(value))} is not an exact time (\"1.25\" or \"5/3\")") from None
        return value
    spouts: dict[str, SpoutStep]
    bolts: dict[str, BoltStep]

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


def parse_carry(value: int | str) -> Fraction:
    """A trace's `buffer`: an integer or an exact "p/q" (or decimal) string."""
    if isinstance(value, bool):
        raise ValueError("expected an integer or a \"p/q\" string, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError("expected an integer or a \"p/q\" string")
    try:
        return exact_fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{escape(repr(value))} is not an exact number (an integer or \"p/q\")") from None


_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")
MAX_EXPONENT = 64


_PLAIN = re.compile(r"(\d+)(?:\.(\d+)|/(\d*[1-9]\d*))?")  # "12", "12.5", "5/3": what format_time writes


def exact_fraction(text: str) -> Fraction:
    """`Fraction(text)`, refusing a decimal exponent beyond ±MAX_EXPONENT (`1e9999999` would take
    tens of seconds to build). The plain forms the project writes are read from their integers
    (the same value, without `Fraction`'s general parser: a long trace has one per position)."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        whole, decimals, denominator = plain.groups()
        if decimals is not None:
            return Fraction(int(whole + decimals), 10 ** len(decimals))
        return Fraction(int(whole), int(denominator) if denominator is not None else 1)
    m = _EXPONENT.search(text)
    if m and abs(int(m.group(1)[:8])) > MAX_EXPONENT:
        raise ValueError(f"exponent over {MAX_EXPONENT}")
    return Fraction(text)


def format_carry(value: Fraction) -> int | str:
    """The inverse of :func:`parse_carry`: an integer when it is one, else "p/q"."""
    value = Fraction(value)
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def format_time(value: Fraction) -> str:
    """An exact decimal when the fraction has one, else "p/q"."""
    value = Fraction(value)
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = max(twos, fives)
    if digits == 0:
        return str(value.numerator)
    scaled = value * 10**digits
    sign = "-" if scaled < 0 else ""
    text = str(abs(scaled.numerator)).rjust(digits + 1, "0")
    return f"{sign}{text[:-digits]}.{text[-digits:]}"


class Repeat(BaseModel):
    """A run of `count` positions, each the position `period` places before it (in the expanded list)
    with its time plus `time` and the named bolts' queues and spouts' backlogs plus their increments."""

    model_config = ConfigDict(extra="forbid", strict=True)
    period: int = Field(ge=1, description="p: each position of the run is the one p positions before it, shifted")
    count: int = Field(ge=1, description="positions this item stands for")
    time: str = Field(description='exact time added to the position p places before (a decimal or "p/q" string)')
    queue: dict[str, int] = Field(default_factory=dict,
                                  description="per bolt: added to the queue of the position p places before "
                                              "(bolts not named: 0)")
    backlog: dict[str, int] = Field(default_factory=dict,
                                    description="per spout: added to the replay backlog of the position p places "
                                                "before (spouts not named: 0)")

    @field_validator("time")
    @classmethod
    def _exact(cls, value: str) -> str:
        return TracePosition._exact(value)


class Patch(BaseModel):
    """One position written as the position before it (in the expanded list) with its own time and the fields
    that differ: per spout or bolt named, each field given replaces the previous position's (null: left out)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    time: str = Field(description='this position\'s exact time (a decimal or "p/q" string)')
    spouts: dict[str, dict[str, Any]] = Field(default_factory=dict,
                                              description="per spout: the fields that differ from the previous "
                                                          "position's (null: the field is left out here)")
    bolts: dict[str, dict[str, Any]] = Field(default_factory=dict,
                                             description="per bolt: the fields that differ from the previous "
                                                         "position's (null: the field is left out here)")

    @field_validator("time")
    @classmethod
    def _exact(cls, value: str) -> str:
        return TracePosition._exact(value)


class PatchItem(BaseModel):
    """An item of a compressed trace's `positions` standing for one position, as a change of the previous one."""

    model_config = ConfigDict(extra="forbid", strict=True)
    patch: Patch


class RepeatItem(BaseModel):
    """An item of a compressed trace's `positions` standing for a run of positions."""

    model_config = ConfigDict(extra="forbid", strict=True)
    repeat: Repeat


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


class ExpandError(StormboundError, ValueError):
    """A compressed trace that stands for no trace: `where` names the item (`positions.3.repeat.period`)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where, self.message = where, message


def is_compressed(data: Any) -> bool:
    """Whether decoded JSON is a `stormbound-trace/2` document."""
    return isinstance(data, dict) and data.get("format") == COMPRESSED_FORMAT


def expand_trace_data(data: dict[str, Any], limit: int | None = None) -> dict[str, Any]:
    """The `stormbound-trace/1` document a decoded `stormbound-trace/2` one stands for: every repeat item
    replaced by its positions (ExpandError naming the item when it cannot be; at most `limit`,
    MAX_TRACE_POSITIONS, positions). Positions are left as found for the trace's own validation."""
    limit = MAX_TRACE_POSITIONS if limit is None else limit
    items = data.get("positions")
    if not isinstance(items, list):
        raise ExpandError("positions", "expected a list of positions and repeat items")
    out: list[Any] = []
    times: list[Fraction | None] = []  # the exact times of `out`, read when a repeat needs them
    too_many = ExpandError("positions", f"more than {limit} positions once expanded (the limit on a trace's "
                                        "positions; setting STORMBOUND_MAX_TRACE_POSITIONS)")
    for index, item in enumerate(items):
        kind = next((key for key in ("repeat", "patch") if isinstance(item, dict) and key in item), None)
        if kind != "repeat" and len(out) >= limit:
            raise too_many
        if kind is None:
            out.append(item)
            times.append(None)
            continue
        where = f"positions.{index}"
        try:
            found = (RepeatItem if kind == "repeat" else PatchItem).model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
            raise ExpandError(escape(f"{where}.{loc}" if loc else where, 80), message) from None
        if isinstance(found, PatchItem):
            out.append(_patched(out, found.patch, f"{where}.patch"))
            times.append(None)
            continue
        rep = found.repeat
        if rep.period > len(out):
            raise ExpandError(f"{where}.repeat.period", f"{rep.period} reaches before the first position "
                                                        f"({len(out)} positions precede it)")
        if len(out) + rep.count > limit:
            raise too_many
        _repeat(out, times, rep, where)
    return {**{key: value for key, value in data.items() if key != "positions"}, "format": TRACE_FORMAT,
            "positions": out}


def _repeat(out: list[Any], times: list[Fraction | None], rep: Repeat, where: str) -> None:
    """Append the run `rep` stands for to `out` (each position `rep.period` back, shifted)."""
    shift = exact_fraction(rep.time)
    for _ in range(rep.count):
        back = len(out) - rep.period
        source = out[back]
        if times[back] is None:
            try:
                times[back] = exact_fraction(source["time"])
            except (TypeError, KeyError, ValueError, ZeroDivisionError):
                raise ExpandError(f"{where}.repeat", f"position {back}, which it repeats, has no exact time"
                                  ) from None
        time = times[back] + shift  # type: ignore[operator]
        try:
            position = {**source, "time": format_time(time),
                        "bolts": _raised(source["bolts"], rep.queue, "queue"),
                        "spouts": _raised(source["spouts"], rep.backlog, "backlog")}
        except (TypeError, KeyError) as err:
            raise ExpandError(f"{where}.repeat", f"position {back}, which it repeats, has no {err}") from None
        except ExpandError as err:
            raise ExpandError(f"{where}.repeat.{err.where}", f"{err.message} at position {back}, which it repeats"
                              ) from None
        out.append(position)
        times.append(time)


def _patched(out: list[Any], patch: Patch, where: str) -> dict[str, Any]:
    """The position `patch` stands for: the last of `out` with the patch's time and fields."""
    if not out or not isinstance(out[-1], dict):
        raise ExpandError(where, "no position before it to change")
    source = out[-1]
    position = {**source, "time": patch.time}
    for key, changes in (("spouts", patch.spouts), ("bolts", patch.bolts)):
        if not changes:
            continue
        steps = source.get(key)
        if not isinstance(steps, dict):
            raise ExpandError(f"{where}.{key}", "the position before it has none")
        changed = dict(steps)
        for name, fields in changes.items():
            step = steps.get(name)
            if not isinstance(step, dict):
                raise ExpandError(f"{where}.{key}.{escape(name)}", f"no {key[:-1]} {escape(name)} in the "
                                                                   "position before it")
            new = {**step, **fields}
            for field_name, value in fields.items():
                if value is None:
                    del new[field_name]
            changed[name] = new
        position[key] = changed
    return position


def _raised(steps: dict[str, Any], increments: dict[str, int], key: str) -> dict[str, Any]:
    """`steps` with each named step's `key` raised by its increment (a 0 backlog left out, as written)."""
    if not increments:
        return steps
    raised = dict(steps)
    for name, add in increments.items():
        step = steps.get(name)
        if not isinstance(step, dict) or type(step.get(key, 0)) is not int:
            raise ExpandError(f"{key}.{escape(name)}", f"no {'bolt' if key == 'queue' else 'spout'} "
                                                       f"{escape(name)} with an integer {key}")
        value = step.get(key, 0) + add
        new = {**step, key: value}
        if key == "backlog" and value == 0:
            del new[key]
        raised[name] = new
    return raised


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file, `stormbound-trace/1` or its compressed form `/2` (expanded; a `"$schema"` key
    naming its schema is allowed); bad input is one FormatError naming the field (e.g.
    `positions.3.time`, `positions.7.repeat.period`)."""
    from app.core.formats.jsonfile import FormatError, read_json
    from app.core.formats.schema import without_schema_key

    data = without_schema_key(read_json(path))
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


def save_trace(trace: Trace, path: str | os.PathLike[str]) -> None:
    write_atomic(path, trace_bytes(trace, gzipped=gzip_name(path)))


def gzip_name(path: str | os.PathLike[str]) -> bool:
    """A file named `*.gz` is written gzip-compressed (every reader of JSON documents reads it back)."""
    return os.fspath(path).endswith(".gz")


#: a trace of fewer positions is always written as `stormbound-trace/1` (it reads as before, and is short)
COMPRESS_FROM = 1000


def trace_bytes(trace: Trace, compress: bool = True, gzipped: bool = False) -> bytes:
    """A trace file's bytes, as `save_trace` writes them: for a trace of COMPRESS_FROM positions or more,
    `stormbound-trace/2` (one line per position or repeat item) when that is smaller, as it is for a lasso
    that repeats itself; else `stormbound-trace/1` (indented JSON, as always). `compress=False`: always /1.
    `gzipped`: those bytes gzip-compressed (a `*.gz` file name; StormCrawler's 311,558-position lasso with
    failures: 11 MB as /2, 97 kB gzipped)."""
    if gzipped:
        import gzip

        return gzip.compress(trace_bytes(trace, compress), compresslevel=9, mtime=0)
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


#: how many earlier positions of the same shape `compress_positions` tries as a block's start
CANDIDATES = 24
#: the largest common denominator of the times compared as integers (beyond: as fractions, slower)
MAX_SCALE_BITS = 256
#: the shortest run written as a repeat item (1: a single position as an earlier one shifted)
MIN_RUN = 1


def compress_positions(positions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Positions (as `model_dump(mode="json")` gives them) with their repeating runs as repeat items and
    the others as patches of the position before; `expand_trace_data` gives back exactly `positions`.

    Greedy, left to right: at position i, each of the last CANDIDATES positions q of the same shape
    (every field but the time, the queues and the backlogs) proposes the period p = i - q and the
    shift of position i over position q; the run extends while position j is position j - p with
    that shift. The longest run (of at least MIN_RUN positions) becomes one item; a single position
    is the shortest of its repeat item, its patch of position i - 1 (the fields that differ) and itself.
    Linear in the positions for the runs of a lasso (each tries CANDIDATES periods)."""
    shapes, values, scale = _shapes(positions)
    seen: dict[int, list[int]] = {}
    items: list[dict[str, Any]] = []
    n, i = len(positions), 0
    while i < n:
        best, period, shift = 0, 0, values[i]
        for q in reversed(seen.get(shapes[i], [])[-CANDIDATES:]):
            p = i - q
            d = tuple(map(sub, values[i], values[q]))
            j = i + 1
            while j < n and shapes[j] == shapes[j - p] and tuple(map(sub, values[j], values[j - p])) == d:
                j += 1
            if j - i > best:
                best, period, shift = j - i, p, d
        run = max(1, best)
        item = {"repeat": _repeat_fields(positions[i], period, run, Fraction(shift[0]) / scale, shift[1:])} \
            if best >= MIN_RUN else positions[i]
        if run == 1 and i > 0:  # a single position: the smallest of it, its repeat and its patch
            patch = _patch_fields(positions[i - 1], positions[i])
            if patch is not None and len(json.dumps(patch)) < len(json.dumps(item)):
                item = patch
        items.append(item)
        for j in range(i, i + run):
            seen.setdefault(shapes[j], []).append(j)
        i += run
    return items


def _shapes(positions: list[dict[str, Any]]) -> tuple[list[int], list[tuple[Any, ...]], int]:
    """Per position: a number naming its shape (equal numbers: equal but for the time, the queues and the
    backlogs; a time not written as `format_time` writes it is a shape of its own) and those values as
    integers, the times in units of 1/scale (scale: the least common multiple of their denominators; with
    more than MAX_SCALE_BITS bits, scale 1 and the times as fractions)."""
    ids: dict[str, int] = {}
    shapes: list[int] = []
    times = [exact_fraction(position["time"]) for position in positions]
    scale = math.lcm(*(t.denominator for t in times)) if times else 1
    exact = scale.bit_length() > MAX_SCALE_BITS  # unrelated denominators: compare the fractions themselves
    values: list[tuple[Any, ...]] = []
    for index, (position, time) in enumerate(zip(positions, times, strict=True)):
        bolts = {name: {k: v for k, v in step.items() if k != "queue"} for name, step in position["bolts"].items()}
        spouts = {name: {k: v for k, v in step.items() if k != "backlog"} for name, step in position["spouts"].items()}
        rest = {k: v for k, v in position.items() if k not in ("time", "bolts", "spouts")}
        key = json.dumps([bolts, spouts, rest])
        shape = ids.setdefault(key, len(ids)) if format_time(time) == position["time"] else -1 - index
        shapes.append(shape)
        values.append((time if exact else time.numerator * (scale // time.denominator),
                       *(step["queue"] for step in position["bolts"].values()),
                       *(step.get("backlog", 0) for step in position["spouts"].values())))
    return shapes, values, 1 if exact else scale


def _patch_fields(before: dict[str, Any], position: dict[str, Any]) -> dict[str, Any] | None:
    """`position` as a patch item of the position before it (None when the two differ beyond their steps'
    fields: other keys, or other spouts and bolts)."""
    if set(before) != set(position) or any(before[k] != position[k] for k in position
                                           if k not in ("time", "spouts", "bolts")):
        return None
    patch: dict[str, Any] = {"time": position["time"]}
    for key in ("spouts", "bolts"):
        old, new = before[key], position[key]
        if set(old) != set(new):
            return None
        changes = {}
        for name, step in new.items():
            was = old[name]
            if step != was:
                fields = {f: v for f, v in step.items() if f not in was or was[f] != v}
                fields.update({f: None for f in was if f not in step})
                changes[name] = fields
        if changes:
            patch[key] = changes
    return {"patch": patch}


def _repeat_fields(position: dict[str, Any], period: int, count: int, time: Fraction,
                   counts: tuple[int, ...]) -> dict[str, Any]:
    """The repeat item's fields: the shift of the time and the nonzero increments, named."""
    bolts, spouts = list(position["bolts"]), list(position["spouts"])
    fields: dict[str, Any] = {"period": period, "count": count, "time": format_time(time)}
    queue = {name: d for name, d in zip(bolts, counts[:len(bolts)], strict=True) if d}
    backlog = {name: d for name, d in zip(spouts, counts[len(bolts):], strict=True) if d}
    if queue:
        fields["queue"] = queue
    if backlog:
        fields["backlog"] = backlog
    return fields


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
    for i, position in enumerate(trace.positions):
        for key, names, found in (("spouts", spouts, set(position.spouts)), ("bolts", bolts, set(position.bolts))):
            missing, extra = sorted(names - found), sorted(found - names)
            if missing:
                return [Problem(f"positions.{i}.{key}", f"{escape(missing[0])} of the topology is missing")]
            if extra:
                return [Problem(f"positions.{i}.{key}.{escape(extra[0])}", "is not in the trace's topology")]
    return []
