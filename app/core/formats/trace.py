"""The lasso trace file, `stormbound-trace/1` (documented in docs/trace-format.md).

One entry per position 0..k+1; position k+1 repeats `loop_start`, so positions
loop_start..k repeat forever. Times are exact: a decimal or a "p/q" string.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer

from app.core.fileio import write_atomic
from app.core.formats.limits import escape
from app.core.topology import Problem

TRACE_FORMAT: Literal["stormbound-trace/1"] = "stormbound-trace/1"


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


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file (a `"$schema"` key naming its schema is allowed); bad input is one
    FormatError naming the field (e.g. `positions.3.time`)."""
    from app.core.formats.jsonfile import FormatError, read_json
    from app.core.formats.schema import without_schema_key

    data = without_schema_key(read_json(path))
    try:
        return Trace.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "trace"
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        raise FormatError([Problem(escape(where), message)]) from None


def save_trace(trace: Trace, path: str | os.PathLike[str]) -> None:
    write_atomic(path, trace_bytes(trace))


def trace_bytes(trace: Trace) -> bytes:
    """A trace file's bytes (indented JSON), as `save_trace` writes them."""
    return (json.dumps(trace.model_dump(mode="json"), indent=2) + "\n").encode("utf-8")


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
