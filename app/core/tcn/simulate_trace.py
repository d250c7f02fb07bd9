"""A simulated run as a `stormbound-trace/1` trace (app/core/tcn/simulate.py builds the rows): the positions
written and validated a block at a time, a lasso (loop_start in 1..k) or a finite run (loop_start = k+1)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Hashable
from fractions import Fraction
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter

from app.core.errors import Cancelled
from app.core.formats.trace import COMPRESS_FROM, CompressedTrace, Trace, TracePosition, format_carry, format_time
from app.core.formats.trace_compress import CompressionStopped, PatchItem, RepeatItem, compress_runs
from app.core.tcn.network import Network

__all__ = ["CHECK_EVERY", "BoltStep", "FailureRow", "Resumable", "Row", "Stopped", "rows_lasso", "rows_trace"]

T = TypeVar("T")
CHECK_EVERY = 64  # positions between two looks at the wall clock (and between two validated blocks)

# one bolt's step at a position: queue before, arrivals, take, batch, emit, emitted, carry, processing after
BoltStep = tuple[int, int, bool, int, bool, int, Fraction | int, bool]
# with a failure plan, per position: backlogs before, replayed, fails, recovers, losses (lost, replays), down
FailureRow = tuple[list[int], list[int], list[bool], list[bool], dict[int, tuple[int, dict[str, int]]], list[bool]]
# per position: time, spout emissions, the bolts' steps, the declared streams' (emitted, carry), failures, the
# workers' records (docs/model.md 9.5: deaths, restarts, replays; None where nothing happens to a worker)
Row = tuple[int, list[int], list[BoltStep], dict[int, tuple[int, Fraction | int]] | None, FailureRow | None,
            dict[str, dict[str, Any]] | None]


class Stopped(Cancelled):
    """Cancelled or out of time (the simulation's own stop, caught by `build_lasso`)."""


class Resumable(Generic[T]):
    """A simulation that pauses at its deadline and goes on from there: `steps` yields when it looks at the clock
    past its deadline and is sent the next one; its return value is the outcome. Each `advance(deadline)` runs it on
    until it ends (its outcome) or pauses (Stopped "time limit reached", `done` false: advance it again later).
    `spent`: the wall seconds of all its advances; `cells`: what `steps` yielded when it paused (its size so far)."""

    def __init__(self, steps: Generator[int, float | None, T]) -> None:
        self.steps, self.started, self.done, self.spent, self.cells = steps, False, False, 0.0, 0

    def advance(self, deadline: float | None) -> T:
        began = time.monotonic()
        try:
            if not self.started:
                self.started = True
                next(self.steps)  # to its first `yield`, which takes the first deadline
            self.cells = self.steps.send(deadline)
        except StopIteration as end:
            self.done = True
            return end.value  # type: ignore[no-any-return]
        except BaseException:
            self.done = True
            raise
        finally:
            self.spent += time.monotonic() - began
        raise Stopped("time limit reached")


def rows_trace(net: Network, rows: list[Row], loop_start: int, scale: int, index: dict[tuple[str, str], int],
               cancelled: Callable[[], bool] = lambda: False) -> Trace:
    """Positions 0..k+1 of the simulated run as a `stormbound-trace/1` lasso (k+1 repeats loop_start) or, with
    loop_start = k+1, a finite run,
    validated a block of positions at a time (far cheaper than one model per step on a long
    trace, and a cancel is seen between blocks)."""
    position = _renderer(net, index, scale)
    positions: list[TracePosition] = []
    for n in range(0, len(rows), CHECK_EVERY):
        if cancelled():
            raise Stopped("cancelled")
        positions += _POSITIONS.validate_python([position(row) for row in rows[n:n + CHECK_EVERY]])
    return Trace(topology=net.document(), k=len(rows) - 2, loop_start=loop_start, positions=positions,
                 kept=list(net.kept))


def rows_lasso(net: Network, rows: list[Row], loop_start: int, scale: int, index: dict[tuple[str, str], int],
               cancelled: Callable[[], bool] = lambda: False) -> Trace | CompressedTrace:
    """The simulated lasso in its compressed form, `stormbound-trace/2` (docs/trace-format.md), when it has
    COMPRESS_FROM positions or more and repeats itself, built from the rows without drawing its positions:
    only those written out or patched are drawn (`compress_runs`); else the `/1` trace of `rows_trace`. The
    certifier reads it as it is, one position at a time (app/core/tcn/check/certify_source.py)."""
    if len(rows) < COMPRESS_FROM:
        return rows_trace(net, rows, loop_start, scale, index, cancelled)
    ids: dict[tuple[Any, ...], int] = {}
    shapes: list[Hashable] = []
    values: list[tuple[Any, ...]] = []
    n_s = len(net.spouts)
    for n, row in enumerate(rows):
        if n % 1024 == 0 and cancelled():
            raise Stopped("cancelled")
        shape, value = _shape(row, n_s)
        shapes.append(ids.setdefault(shape, len(ids)))
        values.append(value)
    del ids
    render = _renderer(net, index, scale)
    drawn: dict[int, dict[str, Any]] = {}  # the last positions drawn (a patch compares two neighbours)

    def position(i: int) -> dict[str, Any]:
        if i not in drawn:
            drawn[i] = render(rows[i])
            drawn.pop(i - 2, None)
        return drawn[i]

    try:
        items = compress_runs(shapes, values, scale, position, [b.name for b in net.bolts],
                              [s.name for s in net.spouts], cancelled)
    except CompressionStopped:
        raise Stopped("cancelled") from None
    if len(items) >= len(rows):
        return rows_trace(net, rows, loop_start, scale, index, cancelled)
    valid: list[TracePosition | RepeatItem | PatchItem] = []  # validated a block at a time, a cancel seen between
    for n in range(0, len(items), 16 * CHECK_EVERY):          # (the model takes the validated items as they are)
        if cancelled():
            raise Stopped("cancelled")
        valid += _ITEMS.validate_python(items[n:n + 16 * CHECK_EVERY])
    return CompressedTrace.model_validate({"topology": net.document(), "k": len(rows) - 2, "loop_start": loop_start,
                                           "positions": valid, "kept": list(net.kept)})


def _shape(row: Row, n_s: int) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """A row's shape (all but its time, its queues and its backlogs: docs/trace-format.md, the writer) and its
    values (time on the grid, the bolts' queues, the spouts' backlogs)."""
    t, emitted, steps, extra, failure, workers = row
    backlog: list[int] = [0] * n_s
    failed: tuple[Any, ...] = ()
    if failure is not None:
        backlog, replayed, fails, recovers, losses, down = failure
        failed = (tuple(replayed), tuple(fails), tuple(recovers), tuple(down),
                  tuple((j, lost, tuple(sorted(r.items()))) for j, (lost, r) in sorted(losses.items())))
    shape = (tuple(emitted), tuple(step[1:] for step in steps),
             None if extra is None else tuple(sorted(extra.items())), failure is not None, failed,
             None if workers is None else repr(sorted(workers.items())))
    return shape, (t, *(step[0] for step in steps), *backlog)


def _renderer(net: Network, index: dict[tuple[str, str], int], scale: int) -> Callable[[Row], dict[str, Any]]:
    """A row as its position's JSON, as `TracePosition.model_dump(mode="json")` gives it (a failure field only
    where set, the declared streams' counts last), for `TracePosition` to validate."""
    exact = net.emission == "exact"
    names = [b.name for b in net.bolts]
    spout_names = [s.name for s in net.spouts]

    texts: dict[Fraction | int, int | str] = {}  # a carry as written (a lasso's carries are few)

    def carry_text(carry: Fraction | int) -> int | str:
        if not exact:
            return int(carry)
        text = texts.get(carry)
        if text is None:
            text = texts[carry] = format_carry(Fraction(carry))
        return text

    def by_stream(comp: Any, step: dict[str, Any], extra: dict[int, tuple[int, Any]], spout: bool) -> None:
        """Record a component's declared streams (emitted_by_stream, buffer_by_stream; `emitted` their sum)."""
        counts = {"default": step["emitted"]}
        carries = {} if spout else {"default": step["buffer"]}  # a spout's default stream is its emission
        for st in comp.streams if spout else comp.streams[1:]:
            e, c = extra[index[(comp.name, st.name)]]
            counts[st.name], carries[st.name] = e, carry_text(c)
        step.update(emitted=sum(counts.values()), emitted_by_stream=counts, buffer_by_stream=carries)

    def position(row: Row) -> dict[str, Any]:
        t, spout_emitted, step, extra, failure, workers = row
        spouts = {name: {"emit": e > 0, "emitted": e} for name, e in zip(spout_names, spout_emitted, strict=True)}
        bolts: dict[str, dict[str, Any]] = {}
        for name, (queue, arrivals, take, batch, emit, emitted, carry, busy) in zip(names, step, strict=True):
            bolts[name] = {"queue": queue, "arrivals": arrivals, "take": take, "batch": batch, "emit": emit,
                           "emitted": emitted, "buffer": carry_text(carry),
                           "phase": "processing" if busy else "idle"}
        if failure is not None:  # the fields of docs/model.md 7.5
            backlog, replayed, fails, recovers, losses, down = failure
            for m, name in enumerate(spout_names):  # only what is set: absent fields are false or 0
                if backlog[m]:
                    spouts[name]["backlog"] = backlog[m]
                if replayed[m]:
                    spouts[name]["replayed"] = replayed[m]
            for j, name in enumerate(names):
                if fails[j]:
                    bolts[name]["fail"] = True
                if recovers[j]:
                    bolts[name]["recover"] = True
                if j in losses:
                    bolts[name]["lost"], replays = losses[j]
                    if replays:
                        bolts[name]["replays"] = replays
                if down[j]:
                    bolts[name]["phase"] = "failed"
        if extra is not None:
            for sp in net.spouts:
                if sp.streams:
                    by_stream(sp, spouts[sp.name], extra, spout=True)
            for b in net.bolts:
                if len(b.streams) > 1:
                    by_stream(b, bolts[b.name], extra, spout=False)
        out = {"time": format_time(Fraction(t, scale)), "spouts": spouts, "bolts": bolts}
        if workers:
            out["workers"] = workers
        return out

    return position


_POSITIONS = TypeAdapter(list[TracePosition])
_ITEMS = TypeAdapter(list[TracePosition | RepeatItem | PatchItem])
