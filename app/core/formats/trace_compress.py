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
from fractions import Fraction
from operator import sub
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.errors import BadInput
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
    limit = MAX_TRACE_POSITIONS if limit is None else limit
    cells = MAX_TRACE_CELLS if cells is None else cells
    items = data.get("positions")
    if not isinstance(items, list):
        raise ExpandError("positions", "expected a list of positions and repeat items")
    out: list[Any] = []
    times: list[Fraction | None] = []  # the exact times of `out`, read when a repeat needs them
    sizes: list[int] = []  # the steps (spouts and bolts) of each position of `out`
    used = 0
    for index, item in enumerate(items):
        kind = item_kind(item)
        if kind != "repeat" and len(out) >= limit:
            raise too_many(limit)
        where = f"positions.{index}"
        if kind == "repeat":
            rep = checked_repeat(item, where, len(out), limit)
            used = _repeat(out, times, sizes, rep, where, used, cells)
            continue
        if kind is None:
            out.append(item)
        else:
            found = read_item(item, where)
            assert isinstance(found, PatchItem)
            out.append(patched_position(out, found.patch, f"{where}.patch"))
        times.append(None)
        sizes.append(steps_in(out[-1]))
        used += sizes[-1]
        if used > cells:
            raise too_many_cells(cells)
    return {**{key: value for key, value in data.items() if key != "positions"}, "format": TRACE_FORMAT,
            "positions": out}


def steps_in(position: Any) -> int:
    """The spout and bolt steps of a position as written (0 for what is no position: its validation says why)."""
    if not isinstance(position, dict):
        return 0
    return sum(len(steps) for steps in (position.get("spouts"), position.get("bolts")) if isinstance(steps, dict))


def too_many_cells(cells: int) -> ExpandError:
    return ExpandError("positions", f"more than {cells} cells once expanded (positions x components: the limit on "
                                    "what a trace read whole may hold; setting STORMBOUND_MAX_TRACE_CELLS)")


def _repeat(out: list[Any], times: list[Fraction | None], sizes: list[int], rep: Repeat, where: str, used: int,
            cells: int) -> int:
    """Append the run `rep` stands for to `out` (each position `rep.period` back, shifted); the cells used after."""
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
        sizes.append(sizes[back])
        used += sizes[back]
        if used > cells:
            raise too_many_cells(cells)
    return used


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
