"""A simulated run as a `stormbound-trace/1` trace (app/core/tcn/simulate.py builds the rows): the positions
written and validated a block at a time, a lasso (loop_start in 1..k) or a finite run (loop_start = k+1)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from pydantic import TypeAdapter

from app.core.errors import Cancelled
from app.core.formats.trace import Trace, TracePosition, format_carry, format_time
from app.core.tcn.network import Network

__all__ = ["CHECK_EVERY", "BoltStep", "FailureRow", "Row", "Stopped", "rows_trace"]

CHECK_EVERY = 64  # positions between two looks at the wall clock (and between two validated blocks)

# one bolt's step at a position: queue before, arrivals, take, batch, emit, emitted, carry, processing after
BoltStep = tuple[int, int, bool, int, bool, int, Fraction | int, bool]
# with a failure plan, per position: backlogs before, replayed, fails, recovers, losses (lost, replays), down
FailureRow = tuple[list[int], list[int], list[bool], list[bool], dict[int, tuple[int, dict[str, int]]], list[bool]]
# per position: time, spout emissions, the bolts' steps, the declared streams' (emitted, carry), failures
Row = tuple[int, list[int], list[BoltStep], dict[int, tuple[int, Fraction | int]] | None, FailureRow | None]


class Stopped(Cancelled):
    """Cancelled or out of time (the simulation's own stop, caught by `build_lasso`)."""


def rows_trace(net: Network, rows: list[Row], loop_start: int, scale: int, index: dict[tuple[str, str], int],
           cancelled: Callable[[], bool] = lambda: False) -> Trace:
    """Positions 0..k+1 of the simulated run as a `stormbound-trace/1` lasso (k+1 repeats loop_start) or, with
    loop_start = k+1, a finite run,
    validated a block of positions at a time (far cheaper than one model per step on a long
    trace, and a cancel is seen between blocks)."""
    exact = net.emission == "exact"
    names = [b.name for b in net.bolts]
    spout_names = [s.name for s in net.spouts]
    positions: list[TracePosition] = []
    block: list[dict[str, Any]] = []
    def carry_text(carry: Fraction | int) -> int | str:
        return format_carry(Fraction(carry)) if exact else int(carry)

    def by_stream(comp: Any, step: dict[str, Any], extra: dict[int, tuple[int, Any]], spout: bool) -> None:
        """Record a component's declared streams (emitted_by_stream, buffer_by_stream; `emitted` their sum)."""
        counts = {"default": step["emitted"]}
        carries = {} if spout else {"default": step["buffer"]}  # a spout's default stream is its emission
        for st in comp.streams if spout else comp.streams[1:]:
            e, c = extra[index[(comp.name, st.name)]]
            counts[st.name], carries[st.name] = e, carry_text(c)
        step.update(emitted=sum(counts.values()), emitted_by_stream=counts, buffer_by_stream=carries)

    for n, (t, spout_emitted, step, extra, failure) in enumerate(rows, start=1):
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
        block.append({"time": format_time(Fraction(t, scale)), "spouts": spouts, "bolts": bolts})
        if len(block) == CHECK_EVERY or n == len(rows):
            if cancelled():
                raise Stopped("cancelled")
            positions += _POSITIONS.validate_python(block)
            block = []
    return Trace(topology=net.document(), k=len(rows) - 2, loop_start=loop_start, positions=positions,
                 kept=list(net.kept))


_POSITIONS = TypeAdapter(list[TracePosition])
