"""Latencies of a run of tests/adversary.py, read from its positions in FIFO order; for tests only.

Shares no code with app/core/latency. Per bolt the tuples are numbered in arrival order (the Q₀ initial
ones first); the tuples arriving at one position are put in the worst order for the one followed (it comes
last). A tuple is taken by the first take whose cumulative count reaches its number, and acked at the
emit ending that phase; the tuples that emit sends are its children (the batch anchors them, docs/latency.md).
A spout tuple's tree completes at the latest ack of its descendants. A tuple lost to a failure is never acked:
its tree never completes (Storm fails it at the timeout and its replay starts anew), and is left out.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tests.adversary import Run


@dataclass
class _Bolt:
    arrived: list[int]  # per position: tuples arrived up to and including it (Q0 counted first)
    take_at: list[int]  # positions of takes
    taken: list[int]  # cumulative tuples taken after each take
    emit_at: list[int]  # positions of emits
    emitted: dict[int, int]  # emit position -> tuples it sent
    lost: set[int]  # indexes into take_at of the "takes" that are losses (a failure, arrivals while down)
    fails: list[int]  # positions of failures (the phase in process then never emits)


def _bolts(run: Run, q0: int) -> dict[str, _Bolt]:
    out: dict[str, _Bolt] = {}
    for name in run.positions[0]["bolts"]:
        b = _Bolt([], [], [], [], {}, set(), [])
        total, took = q0, 0
        for i, pos in enumerate(run.positions):
            step = pos["bolts"][name]
            total += step["arrivals"]
            b.arrived.append(total)
            if step.get("phase") == "failed":  # lost: the queue and the arrivals (FIFO: all that waits)
                took += (step["queue"] + step["arrivals"]) if step.get("fail") else step["arrivals"]
                b.lost.add(len(b.take_at))
                b.take_at.append(i)
                b.taken.append(took)
                if step.get("fail"):
                    b.fails.append(i)
                continue
            if step.get("emit"):
                b.emit_at.append(i)
                b.emitted[i] = step["emitted"]
            if step.get("take"):
                took += step["batch"]
                b.take_at.append(i)
                b.taken.append(took)
        out[name] = b
    return out


class Latencies:
    """Per-tuple sojourns and per-spout-tuple complete latencies of one run (None: not complete at its end)."""

    def __init__(self, run: Run, doc: dict[str, Any]):
        self.run = run
        self.time = [Fraction(p["time"]) for p in run.positions]
        q0 = int(doc.get("settings", {}).get("init_queues", 0))
        self.bolts = _bolts(run, q0)
        names = {c["id"]: c["name"] for c in [*doc["spouts"], *doc["bolts"]]}
        self.subscribers: dict[str, set[str]] = {}
        for s in doc["subscriptions"]:
            self.subscribers.setdefault(names[s["source"]], set()).add(names[s["target"]])
        self.sigma = {b["name"]: Fraction(str(b["sigma"])) for b in doc["bolts"]}
        self._done: dict[tuple[str, int], int | None] = {}

    def ack(self, bolt: str, position: int) -> int | None:
        """The emit position that acks the last tuple arriving at `position` (None: not within the run)."""
        b = self.bolts[bolt]
        k = bisect_left(b.taken, b.arrived[position])
        if k == len(b.taken) or k in b.lost:
            return None
        e = bisect_left(b.emit_at, b.take_at[k] + 1)
        if e == len(b.emit_at):
            return None
        f = bisect_left(b.fails, b.take_at[k] + 1)
        return None if f < len(b.fails) and b.fails[f] < b.emit_at[e] else b.emit_at[e]

    def sojourns(self, bolt: str) -> list[Fraction]:
        """The sojourn (arrival -> ack) of the last tuple of every position where tuples arrive."""
        out = []
        for i, pos in enumerate(self.run.positions):
            if pos["bolts"][bolt]["arrivals"]:
                e = self.ack(bolt, i)
                if e is not None:
                    out.append(self.time[e] - self.time[i])
        return out

    def complete(self, bolt: str, position: int) -> int | None:
        """The position at which the subtree of the last tuple arriving at `bolt` at `position` completes."""
        key = (bolt, position)
        if key not in self._done:
            e = self.ack(bolt, position)
            last: int | None = e
            if e is not None and self.bolts[bolt].emitted.get(e, 0) > 0:
                for child in self.subscribers.get(bolt, ()):
                    done = self.complete(child, e)
                    last = None if done is None or last is None else max(last, done)
            self._done[key] = last
        return self._done[key]

    def trees(self, spout: str) -> list[Fraction]:
        """The complete latency of every spout emission whose tree completes within the run."""
        out = []
        for i, pos in enumerate(self.run.positions):
            if not pos["spouts"][spout]["emit"]:
                continue
            ends = [self.complete(b, i) for b in self.subscribers.get(spout, ())]
            if ends and all(x is not None for x in ends):
                out.append(self.time[max(x for x in ends if x is not None)] - self.time[i])
        return out
