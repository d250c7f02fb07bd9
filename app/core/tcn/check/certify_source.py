"""A trace as the certifier reads it (app/core/tcn/check/certify.py): its header, and its positions as the replay's
steps, read afresh on each pass and never all held at once.

A `stormbound-trace/1` trace (a `Trace`, or decoded JSON) is its list of positions. A compressed trace,
`stormbound-trace/2` (a `CompressedTrace`, or decoded JSON; docs/trace-format.md), is read as the plot reads it:
its repeat items are checked and counted before anything is expanded, then each pass expands it one position at a
time (`iter_expanded`), holding only the positions a later repeat may copy (its longest period). A position
written out or patched is validated as a `TracePosition`; a repeated one is the step it copies with its time
shifted and its queues and backlogs raised, checked as that validation would check them (the time as written,
the counts within 0..MAX_COUNT). So the certificate of a compressed trace is that of every position it stands
for, and its memory is O(components x longest repeated block), not O(components x positions)
(docs/verifier.md, "Certifying a compressed lasso").
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.core.errors import BadInput
from app.core.formats.trace import BoltStep, CompressedTrace, SpoutStep, Trace, TracePosition
from app.core.formats.trace_compress import (
    MAX_COUNT,
    MAX_TRACE_POSITIONS,
    Cursor,
    ExpandError,
    Patch,
    Repeat,
    checked_repeat,
    env_limit,
    is_compressed,
    item_kind,
    iter_expanded,
    repeat_span,
    too_many_cells,
)
from app.core.formats.trace_numbers import checked_time, exact_fraction
from app.core.tcn.check.certify_replay import Step, step_of

#: most cells (positions x components) of a compressed trace the certifier replays (setting
#: STORMBOUND_MAX_CERTIFIED_CELLS): it holds only a block of them at a time, so this bounds its time, not its memory
MAX_CERTIFIED_CELLS = env_limit("STORMBOUND_MAX_CERTIFIED_CELLS", 10_000_000)


class Malformed(BadInput):
    """A trace that is no trace: `problems` name the field (`trace format: positions.7.repeat.period: ...`)."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Source:
    """What the certifier reads: the header, the positions counted, a multiple of every time's denominator, and
    `steps(first)`, a fresh pass over the positions from position `first` (0, or loop_start once a pass from 0 has
    gone by it) on (Malformed at the first that is no position)."""

    topology: dict[str, Any]
    k: int
    loop_start: int
    count: int
    denominator: int
    steps: Callable[[int], Iterator[Step]]
    compressed: bool = False  # its positions validated as they are read (a `/1` trace's are, before)


def validation_problems(err: ValidationError, prefix: tuple[Any, ...] = ()) -> list[str]:
    """A validation error as the certifier names it: `trace format: positions.3.bolts.B2.queue: ...`."""
    problems = []
    for e in err.errors()[:20]:
        where = ".".join(str(x) for x in (*prefix, *e.get("loc", ()))) or "trace"
        problems.append(f"trace format: {where}: {e.get('msg', 'invalid')}")
    return problems


def source_of(trace: Trace | CompressedTrace | Any) -> Source:
    """The certifier's reading of a trace: a `Trace`, a `CompressedTrace` or decoded JSON of either; Malformed
    when it is none."""
    if isinstance(trace, CompressedTrace):
        trace = trace.document()
    if is_compressed(trace):
        assert isinstance(trace, dict)
        return _compressed(trace)
    if not isinstance(trace, Trace):
        try:
            trace = Trace.model_validate(trace)
        except ValidationError as err:
            raise Malformed(validation_problems(err)) from None
    positions = trace.positions
    return Source(trace.topology, trace.k, trace.loop_start, len(positions),
                  math.lcm(*(p.exact_time.denominator for p in positions)),
                  lambda first: map(step_of, itertools.islice(positions, first, None)))


_POSITION = TypeAdapter(TracePosition)


def _compressed(data: dict[str, Any]) -> Source:
    """A decoded `stormbound-trace/2` document: its header validated, its items checked and counted."""
    try:
        header = CompressedTrace.model_validate({**data, "positions": []})
    except ValidationError as err:
        raise Malformed(validation_problems(err)) from None
    items = data["positions"]
    if not isinstance(items, list):
        raise Malformed(["trace format: positions: expected a list of positions and repeat items"])
    count, denominator = 0, 1
    repeats: dict[int, tuple[Repeat, Fraction]] = {}  # each repeat item read once, with its exact time shift
    try:
        for index, item in enumerate(items):
            if item_kind(item) == "repeat":
                rep = checked_repeat(item, f"positions.{index}", count, MAX_TRACE_POSITIONS)
                count += rep.count
                repeats[index] = (rep, exact_fraction(rep.time))
                denominator = math.lcm(denominator, repeats[index][1].denominator)
                continue
            count += 1
            raw = item.get("patch", item) if isinstance(item, dict) else None
            time = raw.get("time") if isinstance(raw, dict) else None
            if isinstance(time, str):  # a time that is none is named by the position's validation, in the pass
                with contextlib.suppress(ValueError, ZeroDivisionError):
                    denominator = math.lcm(denominator, exact_fraction(time).denominator)
        components = sum(len(v) for key in ("spouts", "bolts") if isinstance(v := data["topology"].get(key), list))
        if count * max(1, components) > MAX_CERTIFIED_CELLS:
            raise too_many_cells(MAX_CERTIFIED_CELLS, "the limit on what the certifier replays; setting "
                                                      "STORMBOUND_MAX_CERTIFIED_CELLS")
    except ExpandError as err:
        raise Malformed([f"trace format: {err}"]) from None
    span = repeat_span(items)
    marks: dict[int, tuple[Cursor, dict[int, Step]]] = {}  # where a pass may start: loop_start, once passed
    patches: dict[int, Patch] = {}  # the patch items, read once
    changed: dict[int, tuple[dict[str, Any], dict[str, Any], Fraction]] = {}  # a patch's steps and time once read:
    # no larger than the patches themselves, and every later pass reads them as they are
    written: dict[int, Step] = {}  # the positions written out, by number, once validated (the items hold them)
    read: list[bool] = []  # a pass from 0 has read every position: every later pass is `_rebuilt`

    def steps(first: int) -> Iterator[Step]:
        if first and first not in marks:
            yield from itertools.islice(steps(0), first, None)
            return
        if read:
            start = (0, 0, 0, {}) if not first else (marks[first][0].index, marks[first][0].offset, first,
                                                      dict(marks[first][1]))
            yield from _rebuilt(items, span, start, repeats, patches, changed, written)
            return
        cursor, window = (None, {}) if not first else (marks[first][0], dict(marks[first][1]))
        found: list[Cursor] = []
        mark = header.loop_start if header.loop_start not in marks else -1
        expanded = iter_expanded(items, MAX_TRACE_POSITIONS, start=cursor, mark=(mark, found), read=patches)
        n = first
        while True:
            try:
                position, origin = next(expanded)
            except StopIteration:
                if not first:
                    read.append(True)
                return
            except ExpandError as err:
                raise Malformed([f"trace format: {err}"]) from None
            if n == mark and found:
                marks[n] = (found[0], dict(window))
            if origin is None or isinstance(origin, Patch) and n == 0:
                try:
                    step = step_of(_POSITION.validate_python(position))
                except ValidationError as err:
                    raise Malformed(validation_problems(err, ("positions", n))) from None
                if origin is None:
                    written[n] = step
            elif isinstance(origin, Patch):
                step = _patched(window[n - 1], position, origin, n, changed)
            else:
                try:
                    checked_time(position["time"])  # as the expander wrote it, time's exact text
                except ValueError as err:
                    raise Malformed([f"trace format: positions.{n}.time: Value error, {err}"]) from None
                step = _shifted(window[origin[0]], origin[1], origin[2].queue, origin[2].backlog, n)
            window[n] = step
            window.pop(n - span, None)
            n += 1
            yield step

    return Source(header.topology, header.k, header.loop_start, count, denominator, steps, compressed=True)


def _rebuilt(items: list[Any], span: int, start: tuple[int, int, int, dict[int, Step]],
             repeats: dict[int, tuple[Repeat, Fraction]], patches: dict[int, Patch],
             changed: dict[int, tuple[dict[str, Any], dict[str, Any], Fraction]], written: dict[int, Step]
             ) -> Iterator[Step]:
    """A pass over a compressed trace whose every position a first pass has read and validated, from `start` = (item
    index, offset in it, position number, the steps before it a repeat may copy): each step made from the one it
    copies as the first pass made it (a repeat's time shifted and counts raised, a patch's validated fields, a
    position written out as validated), without expanding the items' JSON again."""
    first, offset, n, window = start
    for index in range(first, len(items)):
        if index in repeats:
            rep, shift = repeats[index]
            for _ in range(offset, rep.count):
                source = window[n - rep.period]
                step = window[n] = _shifted(source, source.time + shift, rep.queue, rep.backlog, n)
                window.pop(n - span, None)
                n += 1
                yield step
        else:
            step = window[n] = written[n] if n in written else _patched(window[n - 1], None, patches[index], n,
                                                                         changed)
            window.pop(n - span, None)
            n += 1
            yield step
        offset = 0


def _patched(before: Step, position: dict[str, Any] | None, patch: Patch, n: int,
             changed: dict[int, tuple[dict[str, Any], dict[str, Any], Fraction]]) -> Step:
    """Position n, a patch of the step before it: the patch's time (checked by the patch's own model) and its
    changed spouts and bolts validated as `TracePosition` validates them, once (`changed`, by position); the others
    are the steps before, already validated as they are."""
    if n not in changed:
        assert position is not None  # (a later pass reads what the first one validated)
        changed[n] = ({name: _valid(_SPOUT, position, "spouts", name, n).__dict__ for name in patch.spouts},
                      {name: _bolt_fields(_valid(_BOLT, position, "bolts", name, n)) for name in patch.bolts},
                      exact_fraction(patch.time))
    spouts, bolts, time = changed[n]
    return Step(time, {**before.spouts, **spouts} if spouts else before.spouts,
                {**before.bolts, **bolts} if bolts else before.bolts, before.workers)  # a patch keeps the workers


def _valid(adapter: TypeAdapter[Any], position: dict[str, Any], key: str, name: str, n: int) -> Any:
    try:
        return adapter.validate_python(position[key][name])
    except ValidationError as err:
        raise Malformed(validation_problems(err, ("positions", n, key, name))) from None


def _bolt_fields(b: BoltStep) -> dict[str, Any]:
    """A bolt's fields as the replay reads them (as `step_of` gives them)."""
    return b.__dict__ if type(b.buffer) is int else {**b.__dict__, "buffer": b.exact_buffer}


_SPOUT, _BOLT = TypeAdapter(SpoutStep), TypeAdapter(BoltStep)


def _shifted(source: Step, time: Fraction, queue: dict[str, int], backlog: dict[str, int], n: int) -> Step:
    """Position n, a repeat of the step `source` at `time` with the named queues and backlogs raised (the
    expander has checked that they name bolts and spouts with whole counts), its counts checked as the validation
    of the position written out would check them (its time's text: by the caller)."""
    bolts, spouts = source.bolts, source.spouts
    if queue:
        bolts = {**bolts, **{name: {**bolts[name], "queue": _count(bolts[name]["queue"] + add, n, "bolts", name,
                                                                     "queue")} for name, add in queue.items()}}
    if backlog:
        spouts = {**spouts, **{name: {**spouts[name], "backlog": _count(spouts[name]["backlog"] + add, n, "spouts",
                                                                        name, "backlog")}
                               for name, add in backlog.items()}}
    return Step(time, spouts, bolts, source.workers)


def _count(value: int, n: int, key: str, name: str, field: str) -> int:
    if value < 0:
        raise Malformed([f"trace format: positions.{n}.{key}.{name}.{field}: Input should be greater than or "
                         "equal to 0"])
    if value > MAX_COUNT:
        raise Malformed([f"trace format: positions.{n}.{key}.{name}.{field}: Input should be less than or equal "
                         f"to {MAX_COUNT}"])
    return value
