"""The compressed trace, `stormbound-trace/2` (docs/trace-format.md): a long lasso repeats itself, so a run of
positions is written as one `{"repeat": ...}` item (a block recurring with its times shifted and its queues and
replay backlogs raised by constant increments) and another position as a `{"patch": ...}` of the one before.
`expand_trace_data` gives back the exact `stormbound-trace/1` document, position by position, before anything
reads it; `compress_positions` finds the repeats when a trace is written (app/core/formats/trace.py).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from operator import sub
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.errors import BadInput, Cancelled
from app.core.formats.limits import escape
from app.core.formats.trace_numbers import checked_time, exact_fraction, format_time

TRACE_FORMAT: Literal["stormbound-trace/1"] = "stormbound-trace/1"
COMPRESSED_FORMAT: Literal["stormbound-trace/2"] = "stormbound-trace/2"
TRACE_FORMATS = (TRACE_FORMAT, COMPRESSED_FORMAT)


def env_limit(name: str, default: int) -> int:
    """A positive whole number from the environment variable `name`, else `default`."""
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


#: Most positions a trace may have once expanded (setting: STORMBOUND_MAX_TRACE_POSITIONS): a compressed
#: file of a few kilobytes may stand for millions of positions, each read into memory (about 7 kB a position
#: of five components: 23 495 of focused-crawler cfg-4 take 167 MB); the longest lassos found are ~10^5.
MAX_TRACE_POSITIONS = env_limit("STORMBOUND_MAX_TRACE_POSITIONS", 200_000)
#: Most cells (a spout's or a bolt's step at one position: positions x components, counted as they are
#: expanded) a trace read whole may have (setting: STORMBOUND_MAX_TRACE_CELLS): what a trace costs in memory
#: is its cells (about 1.4 kB each once read), so 200 bolts in a 46 kB file of repeats reach the positions
#: limit only past 2 GB; 1,000,000 cells is the positions limit at five components.
MAX_TRACE_CELLS = env_limit("STORMBOUND_MAX_TRACE_CELLS", 1_000_000)
#: Largest count a trace holds (a queue, a batch, tuples emitted, lost, replayed, waiting) and largest
#: increment of a repeat item: 10^10 tuples, so that a plot's sums of 2 million positions of increments
#: and 50 loop passes stay exact in 64-bit integers.
MAX_COUNT = 10**10


class Repeat(BaseModel):
    """A run of `count` positions, each the position `period` places before it (in the expanded list)
    with its time plus `time` and the named bolts' queues and spouts' backlogs plus their increments."""

    model_config = ConfigDict(extra="forbid", strict=True)
    period: int = Field(ge=1, description="p: each position of the run is the one p positions before it, shifted")
    count: int = Field(ge=1, description="positions this item stands for")
    time: str = Field(description='exact time added to the position p places before (a decimal or "p/q" string)')
    queue: dict[str, Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)]] = Field(
        default_factory=dict, description="per bolt: added to the queue of the position p places before "
                                              "(bolts not named: 0)")
    backlog: dict[str, Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)]] = Field(
        default_factory=dict, description="per spout: added to the replay backlog of the position p places "
                                                "before (spouts not named: 0)")

    @field_validator("time")
    @classmethod
    def _exact(cls, value: str) -> str:
        return checked_time(value)


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
        return checked_time(value)


class PatchItem(BaseModel):
    """An item of a compressed trace's `positions` standing for one position, as a change of the previous one."""

    model_config = ConfigDict(extra="forbid", strict=True)
    patch: Patch


class RepeatItem(BaseModel):
    """An item of a compressed trace's `positions` standing for a run of positions."""

    model_config = ConfigDict(extra="forbid", strict=True)
    repeat: Repeat


class ExpandError(BadInput, ValueError):
    """A compressed trace that stands for no trace: `where` names the item (`positions.3.repeat.period`)."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where, self.message = where, message


def is_compressed(data: Any) -> bool:
    """Whether decoded JSON is a `stormbound-trace/2` document."""
    return isinstance(data, dict) and data.get("format") == COMPRESSED_FORMAT


def item_kind(item: Any) -> Literal["repeat", "patch"] | None:
    """What an item of a compressed trace's `positions` is: a repeat item, a patch item or (None) a position."""
    if isinstance(item, dict):
        if "repeat" in item:
            return "repeat"
        if "patch" in item:
            return "patch"
    return None


def invalid(where: str, err: ValidationError) -> ExpandError:
    """A validation error of the item or position at `where` as one ExpandError naming the field."""
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first.get("loc", ()))
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return ExpandError(escape(f"{where}.{loc}" if loc else where, 80), message)


def read_item(item: Any, where: str) -> RepeatItem | PatchItem:
    """A repeat or patch item (see `item_kind`) as its model; ExpandError naming the field otherwise."""
    try:
        return (RepeatItem if item_kind(item) == "repeat" else PatchItem).model_validate(item)
    except ValidationError as err:
        raise invalid(where, err) from None


def too_many(limit: int, why: str = "the limit on a trace's positions; setting STORMBOUND_MAX_TRACE_POSITIONS"
             ) -> ExpandError:
    """The refusal of a trace standing for more than `limit` positions (`why`: which limit)."""
    return ExpandError("positions", f"more than {limit} positions once expanded ({why})")


def checked_repeat(item: Any, where: str, before: int, limit: int, why: str | None = None) -> Repeat:
    """The one reading of a repeat item, by the exact expander and by the plot's long-trace reader
    (app/core/long_trace.py) alike: its fields checked, its period reaching no further back than the
    `before` positions that precede it, its time shift not negative (times never go backwards) and
    `before` + its count within `limit` positions (`why`: which limit). ExpandError naming the field."""
    found = read_item(item, where)
    assert isinstance(found, RepeatItem)
    rep = found.repeat
    if rep.period > before:
        raise ExpandError(f"{where}.repeat.period", f"{rep.period} reaches before the first position "
                                                    f"({before} positions precede it)")
    if exact_fraction(rep.time) < 0:
        raise ExpandError(f"{where}.repeat.time", f"{escape(rep.time)} is negative: the times of its positions "
                                                  "would go backwards")
    if before + rep.count > limit:
        raise too_many(limit, *(() if why is None else (why,)))
    return rep


def expand_trace_data(data: dict[str, Any], limit: int | None = None, cells: int | None = None) -> dict[str, Any]:
    """The `stormbound-trace/1` document a decoded `stormbound-trace/2` one stands for: every repeat item
    replaced by its positions (ExpandError naming the item when it cannot be; at most `limit`,
    MAX_TRACE_POSITIONS, positions and `cells`, MAX_TRACE_CELLS, spout and bolt steps, counted as they are
    expanded). Positions are left as found for the trace's own validation."""
    items = data.get("positions")
    if not isinstance(items, list):
        raise ExpandError("positions", "expected a list of positions and repeat items")
    out = [position for position, _ in iter_expanded(items, limit, MAX_TRACE_CELLS if cells is None else cells)]
    return {**{key: value for key, value in data.items() if key != "positions"}, "format": TRACE_FORMAT,
            "positions": out}


#: where a repeated position comes from: (the index of the position it repeats, its exact time, the repeat item)
Origin = tuple[int, Fraction, Repeat]


def repeat_span(items: list[Any]) -> int:
    """The farthest back any item of a compressed trace reads: its longest repeat period (at least 1, a patch
    reading the position before it). Positions further back are never read again once passed."""
    periods = [item["repeat"].get("period") for item in items
               if item_kind(item) == "repeat" and isinstance(item["repeat"], dict)]
    return max([1, *(p for p in periods if type(p) is int)])


@dataclass
class Cursor:
    """Where `iter_expanded` stands just before a position: the item and how many of a repeat's positions are
    given, the position's number and the steps counted so far, and the positions a later item may still read."""

    index: int = 0
    offset: int = 0
    n: int = 0
    used: int = 0
    out: dict[int, Any] = field(default_factory=dict)
    times: dict[int, Fraction | None] = field(default_factory=dict)  # the exact times of `out`, once read
    sizes: dict[int, int] = field(default_factory=dict)  # the steps (spouts and bolts) of each position of `out`

    def copy(self) -> Cursor:
        return Cursor(self.index, self.offset, self.n, self.used, dict(self.out), dict(self.times), dict(self.sizes))


def iter_expanded(items: list[Any], limit: int | None = None, cells: int | None = None, start: Cursor | None = None,
                  mark: tuple[int, list[Cursor]] | None = None, read: dict[int, Patch] | None = None
                  ) -> Iterator[tuple[Any, Origin | Patch | None]]:
    """The positions a compressed trace's items stand for, one at a time and exactly as `expand_trace_data`
    lists them, each with its origin: None for a position written out, its `Patch` for a patch (the position
    before it with the fields the patch gives), else where the repeat item copies it from. Holds only the last
    `repeat_span(items)` positions (all a later item may read), so the memory is that of the longest repeated
    block, not of the trace. ExpandError naming the item when it cannot be expanded, or beyond `limit`
    (MAX_TRACE_POSITIONS) positions or `cells` (none by default) steps.

    `mark` = (m, found): a copy of the cursor just before position m is appended to `found`; `start`, such a
    cursor, goes on from there (position m first), as the whole reading would. `read`: the patch items read so far
    by their index (kept there for the next pass, which then reads none again)."""
    limit = MAX_TRACE_POSITIONS if limit is None else limit
    span = repeat_span(items)
    at = Cursor() if start is None else start.copy()
    out, times, sizes = at.out, at.times, at.sizes
    n, used = at.n, at.used
    for index in range(at.index, len(items)):
        item = items[index]
        kind = item_kind(item)
        if kind != "repeat" and n >= limit:
            raise too_many(limit)
        where = f"positions.{index}"
        if kind == "repeat":
            rep = checked_repeat(item, where, n - (at.offset if index == at.index else 0), limit)
            shift = exact_fraction(rep.time)
            for offset in range(at.offset if index == at.index else 0, rep.count):
                if mark is not None and n == mark[0]:
                    mark[1].append(Cursor(index, offset, n, used, dict(out), dict(times), dict(sizes)))
                back = n - rep.period
                position, time = _repeated(out[back], times[back], rep, shift, where, back)
                times[back] = time - shift
                out[n], times[n], sizes[n] = position, time, sizes[back]
                yield position, (back, time, rep)
                used += sizes[n]
                n += 1
                out.pop(n - span - 1, None), times.pop(n - span - 1, None), sizes.pop(n - span - 1, None)
                if cells is not None and used > cells:
                    raise too_many_cells(cells)
            continue
        if mark is not None and n == mark[0]:
            mark[1].append(Cursor(index, 0, n, used, dict(out), dict(times), dict(sizes)))
        patch: Patch | None = None
        if kind is None:
            position = item
        else:
            if read is not None and index in read:
                patch = read[index]
            else:
                found = read_item(item, where)
                assert isinstance(found, PatchItem)
                patch = found.patch
                if read is not None:
                    read[index] = patch
            position = patched_position([out[n - 1]] if n else [], patch, f"{where}.patch")
        out[n], times[n], sizes[n] = position, None, steps_in(position)
        yield position, patch
        used += sizes[n]
        n += 1
        out.pop(n - span - 1, None), times.pop(n - span - 1, None), sizes.pop(n - span - 1, None)
        if cells is not None and used > cells:
            raise too_many_cells(cells)


def steps_in(position: Any) -> int:
    """The spout and bolt steps of a position as written (0 for what is no position: its validation says why)."""
    if not isinstance(position, dict):
        return 0
    return sum(len(steps) for steps in (position.get("spouts"), position.get("bolts")) if isinstance(steps, dict))


def too_many_cells(cells: int, why: str = "the limit on what a trace read whole may hold; setting "
                                          "STORMBOUND_MAX_TRACE_CELLS") -> ExpandError:
    return ExpandError("positions", f"more than {cells} cells once expanded (positions x components: {why})")


def _repeated(source: Any, time: Fraction | None, rep: Repeat, shift: Fraction, where: str,
              back: int) -> tuple[dict[str, Any], Fraction]:
    """Position `back` (`source`, its exact time when known) as the run of `rep` copies it: shifted, raised."""
    if time is None:
        try:
            time = exact_fraction(source["time"])
        except (TypeError, KeyError, ValueError, ZeroDivisionError):
            raise ExpandError(f"{where}.repeat", f"position {back}, which it repeats, has no exact time") from None
    time += shift
    try:
        position = {**source, "time": format_time(time), "bolts": _raised(source["bolts"], rep.queue, "queue"),
                    "spouts": _raised(source["spouts"], rep.backlog, "backlog")}
    except (TypeError, KeyError) as err:
        raise ExpandError(f"{where}.repeat", f"position {back}, which it repeats, has no {err}") from None
    except ExpandError as err:
        raise ExpandError(f"{where}.repeat.{err.where}", f"{err.message} at position {back}, which it repeats"
                          ) from None
    return position, time


def patched_position(out: list[Any], patch: Patch, where: str) -> dict[str, Any]:
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


#: how many earlier positions of the same shape `compress_positions` tries as a block's start
CANDIDATES = 24
#: the largest common denominator of the times compared as integers (beyond: as fractions, slower)
MAX_SCALE_BITS = 256
#: the shortest run written as a repeat item (1: a single position as an earlier one shifted)
MIN_RUN = 1


class CompressionStopped(Cancelled):
    """`compress_runs` was stopped by its caller."""


def compress_positions(positions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Positions (as `model_dump(mode="json")` gives them) with their repeating runs as repeat items and
    the others as patches of the position before; `expand_trace_data` gives back exactly `positions`."""
    shapes, values, scale = _shapes(positions)
    names = (list(positions[0]["bolts"]), list(positions[0]["spouts"])) if positions else ([], [])
    return compress_runs(shapes, values, scale, positions.__getitem__, *names)


def compress_runs(shapes: list[Hashable], values: list[tuple[Any, ...]], scale: int,
                  position: Callable[[int], dict[str, Any]], bolts: list[str], spouts: list[str],
                  stop: Callable[[], bool] = lambda: False) -> list[dict[str, Any]]:
    """The items of a compressed trace for positions given by their shapes and values, each position drawn
    (`position(i)`, as `model_dump(mode="json")` gives it) only when it is written out or patched: a position's
    *shape* is everything but its time, its queues and its backlogs (equal shapes: equal but for those), its
    *values* are its time in units of 1/`scale` then the queues of `bolts` and the backlogs of `spouts`, in order.

    Greedy, left to right: at position i, each of the last CANDIDATES positions q of the same shape
    proposes the period p = i - q and the shift of position i over position q; the run extends while
    position j is position j - p with that shift. The longest run (of at least MIN_RUN positions) becomes
    one item; a single position is the shortest of its repeat item, its patch of position i - 1 (the fields
    that differ) and itself. Linear in the positions for the runs of a lasso (each tries CANDIDATES periods).
    `stop`, polled every 256 items: when true, CompressionStopped is raised (a caller out of time)."""
    seen: dict[Hashable, list[int]] = {}
    items: list[dict[str, Any]] = []
    n, i = len(shapes), 0
    steps = _steps(shapes, values)
    shifted: dict[Any, str] = {}  # a time shift on the grid, as written
    while i < n:
        if len(items) % 256 == 0 and stop():
            raise CompressionStopped
        best, period, shift = 0, 0, values[i]
        for q in reversed(seen.get(shapes[i], [])[-CANDIDATES:]):
            if best and (i + 1 == n or steps[i + 1] != steps[q + 1]):
                continue  # its run is this one position: no longer than the best
            p = i - q
            j = i + 1
            while j < n and steps[j] == steps[j - p]:
                j += 1
            if j - i > best:
                best, period, shift = j - i, p, tuple(map(sub, values[i], values[q]))
        run = max(1, best)
        if best >= MIN_RUN and shift[0] not in shifted:  # (a lasso's time shifts are few: each written once)
            shifted[shift[0]] = format_time(Fraction(shift[0]) / scale)
        item = {"repeat": _repeat_fields(bolts, spouts, period, run, shifted[shift[0]], shift[1:])} \
            if best >= MIN_RUN else position(i)
        if run == 1 and i > 0:  # a single position: the smallest of it, its repeat and its patch
            patch = _patch_fields(position(i - 1), position(i))
            if patch is not None and len(json.dumps(patch)) < len(json.dumps(item)):
                item = patch
        items.append(item)
        for j in range(i, i + run):
            seen.setdefault(shapes[j], []).append(j)
        i += run
    return items


def _steps(shapes: list[Hashable], values: list[tuple[Any, ...]]) -> list[int]:
    """Per position j ≥ 1, a number naming its shape and how its values differ from position j - 1's (-1 for
    position 0). A run of period p that holds at position j - 1 (position j - 1 is position j - 1 - p shifted by d)
    holds at j exactly when these numbers of j and j - p are equal: then position j is position j - p with the
    same shift d. So a run is extended one integer comparison a position."""
    ids: dict[tuple[Hashable, tuple[Any, ...]], int] = {}
    out = [-1]
    for j in range(1, len(shapes)):
        out.append(ids.setdefault((shapes[j], tuple(map(sub, values[j], values[j - 1]))), len(ids)))
    return out


def _shapes(positions: list[dict[str, Any]]) -> tuple[list[Hashable], list[tuple[Any, ...]], int]:
    """Per position: a number naming its shape (equal numbers: equal but for the time, the queues and the
    backlogs; a time not written as `format_time` writes it is a shape of its own) and those values as
    integers, the times in units of 1/scale (scale: the least common multiple of their denominators; with
    more than MAX_SCALE_BITS bits, scale 1 and the times as fractions)."""
    ids: dict[str, int] = {}
    shapes: list[Hashable] = []
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


def _repeat_fields(bolts: list[str], spouts: list[str], period: int, count: int, time: str,
                   counts: tuple[int, ...]) -> dict[str, Any]:
    """The repeat item's fields: the shift of the time (as written) and the nonzero increments, named."""
    fields: dict[str, Any] = {"period": period, "count": count, "time": time}
    queue = {name: d for name, d in zip(bolts, counts[:len(bolts)], strict=True) if d}
    backlog = {name: d for name, d in zip(spouts, counts[len(bolts):], strict=True) if d}
    if queue:
        fields["queue"] = queue
    if backlog:
        fields["backlog"] = backlog
    return fields
