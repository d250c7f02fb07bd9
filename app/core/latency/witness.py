"""A certified run in which a tuple waits longer than the message timeout (docs/latency.md, "Against the timeout").

For a bolt the rate check does not prove bounded, the simulation of docs/simulation.md builds a lasso in
which its queue grows (`build_lasso`, the verifier's builder). Repeating the loop, the queue gains Δ > 0 per
pass, so the tuples arriving in later passes wait longer and longer; this module finds a pass and a loop
position at which the last tuple arriving waits longer than the timeout.
`app/core/tcn/check/latency_witness.check_witness` confirms it without any of this code.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from app.core.formats.trace import Trace
from app.core.tcn.network import build_network
from app.core.tcn.simulate import build_lasso
from app.core.topology import Topology

MAX_PASSES = 10**12  # passes of the loop tried before giving up
WITNESS_FORMAT = "stormbound-latency-witness/1"  # `check --witness-out`: {timeout, witnesses: [{..., trace}]}


@dataclass(frozen=True)
class LatencyWitness:
    """A lasso and, in its loop repeated `loop_pass` times, a tuple of `bolt` that waits `wait` > timeout."""

    bolt: str  # name
    trace: Trace
    loop_pass: int  # 1 = the loop as the trace has it
    position: int  # the loop position (loop_start..k) at which the tuple arrives
    tuple_number: int  # its number in the bolt's FIFO order (initial tuples first)
    arrived: Fraction  # its arrival time
    taken_pass: int
    taken_position: int
    taken: Fraction  # the time of the take that takes it
    wait: Fraction

    def to_json(self) -> dict[str, Any]:
        return {"bolt": self.bolt, "loop_pass": self.loop_pass, "position": self.position,
                "tuple": self.tuple_number, "arrived": str(self.arrived), "taken_pass": self.taken_pass,
                "taken_position": self.taken_position, "taken": str(self.taken), "wait": str(self.wait),
                "wait_s": float(self.wait)}


class _Counts:
    """Cumulative arrivals and takes of one bolt along a lasso repeated any number of times."""

    def __init__(self, trace: Trace, bolt: str):
        self.trace = trace
        self.l, self.k = trace.loop_start, trace.k
        steps = [p.bolts[bolt] for p in trace.positions[:self.k + 1]]
        self.times = [p.exact_time for p in trace.positions[:self.k + 1]]
        self.duration = trace.loop_duration()
        self.arrivals = [s.arrivals for s in steps]
        self.arrived: list[int] = []
        self.taken: list[int] = []
        total, took = steps[0].queue, 0
        for s in steps:
            total += s.arrivals
            took += s.batch if s.take else 0
            self.arrived.append(total)
            self.taken.append(took)
        before = self.l - 1
        self.arrived_pre = self.arrived[before] if before >= 0 else steps[0].queue
        self.taken_pre = self.taken[before] if before >= 0 else 0
        self.arrived_loop = self.arrived[self.k] - self.arrived_pre
        self.taken_loop = self.taken[self.k] - self.taken_pre

    def number(self, loop_pass: int, i: int) -> int:
        """The FIFO number of the last tuple arriving at loop position i of pass `loop_pass` (1, 2, ...)."""
        return self.arrived[i] + (loop_pass - 1) * self.arrived_loop

    def take_of(self, n: int) -> tuple[int, int] | None:
        """(pass, loop position) of the first take whose cumulative count reaches n (None: none in the loop)."""
        if self.taken_loop <= 0:
            return None
        extra = max(0, -(-(n - self.taken[self.k]) // self.taken_loop))  # passes beyond the first
        local = n - extra * self.taken_loop
        x = bisect_left(self.taken, local, lo=self.l, hi=self.k + 1)
        return (extra + 1, x) if x <= self.k else None

    def time(self, loop_pass: int, i: int) -> Fraction:
        return self.times[i] + (loop_pass - 1) * self.duration

    def worst(self, loop_pass: int) -> tuple[Fraction, int, int, tuple[int, int]] | None:
        """The longest wait among the last tuples arriving at the loop's positions in this pass."""
        best: tuple[Fraction, int, int, tuple[int, int]] | None = None
        for i in range(self.l, self.k + 1):
            if not self.arrivals[i]:
                continue
            n = self.number(loop_pass, i)
            take = self.take_of(n)
            if take is None:
                continue
            wait = self.time(*take) - self.time(loop_pass, i)
            if best is None or wait > best[0]:
                best = (wait, i, n, take)
        return best


def witness_from_lasso(trace: Trace, bolt: str, timeout: Fraction) -> LatencyWitness | None:
    """The first pass (by doubling, then bisection) in which a tuple of `bolt` waits longer than `timeout`."""
    counts = _Counts(trace, bolt)
    if counts.arrived_loop <= counts.taken_loop:
        return None

    def over(r: int) -> bool:
        got = counts.worst(r)
        return got is not None and got[0] > timeout

    high = 1
    while not over(high):
        high *= 2
        if high > MAX_PASSES:
            return None
    low = high // 2 + 1 if high > 1 else 1
    while low < high:
        mid = (low + high) // 2
        if over(mid):
            high = mid
        else:
            low = mid + 1
    got = counts.worst(high)
    assert got is not None
    wait, i, n, (taken_pass, x) = got
    return LatencyWitness(bolt, trace, high, i, n, counts.time(high, i), taken_pass, x,
                          counts.time(taken_pass, x), wait)


def timeout_witnesses(topo: Topology, bolts: list[str], timeout: Fraction, budget_s: float = 2.0
                      ) -> dict[str, LatencyWitness]:
    """Per bolt name of `bolts` (most promising first) a lasso in which it grows, repeated until a tuple waits longer
    than `timeout`; bolts without one are left out (no lasso within the budget, or only lassos with failures: a loss
    breaks the FIFO count). One network for all of them and one budget in all: each lasso built is tried for every
    bolt still without a witness (a bolt that grows often makes the bolts below it grow in the same lasso), and a
    bolt's own lasso is searched for only while time is left. Not certified here: the caller has
    `app/core/tcn/check/latency_witness.check_witness` confirm each."""
    deadline = time.monotonic() + budget_s
    net = build_network(topo, bolts)
    found: dict[str, LatencyWitness] = {}
    for bolt in bolts:
        if bolt in found:
            continue
        if time.monotonic() >= deadline:
            break
        trace = build_lasso(net, bolt, deadline=deadline).trace
        if trace is None or any(s.fail or s.lost or s.phase == "failed" for p in trace.positions
                                for s in p.bolts.values()):
            continue
        for other in bolts:
            if other not in found and other in trace.positions[0].bolts:
                got = witness_from_lasso(trace, other, timeout)
                if got is not None:
                    found[other] = got
    return found


def timeout_witness(topo: Topology, bolt: str, timeout: Fraction, budget_s: float = 2.0) -> LatencyWitness | None:
    """`timeout_witnesses` for one bolt (a name)."""
    return timeout_witnesses(topo, [bolt], timeout, budget_s).get(bolt)
