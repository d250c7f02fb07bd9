"""The independent checker of a latency witness (docs/latency.md, "Against the timeout").

Shares no code with the builder (app/core/latency/witness.py) nor with the rate check: it reads the lasso
as JSON-like data, has the product's certifier confirm it is a legal infinite run, then recomputes from the
positions alone, in FIFO order, when the claimed tuple arrives and when it is taken, with the loop repeated
the claimed number of times, and accepts only a wait longer than the timeout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.numbers import exact
from app.core.tcn.check.certify import certify


@dataclass
class WitnessCheck:
    ok: bool
    problems: list[str] = field(default_factory=list)
    wait: Fraction | None = None


def check_witness(trace: Any, bolt: str, loop_pass: int, position: int, timeout: Fraction) -> WitnessCheck:
    """Whether the last tuple of `bolt` arriving at loop `position` in pass `loop_pass` of `trace` waits longer
    than `timeout` before its take, in a run the certifier accepts."""
    data = trace.model_dump() if hasattr(trace, "model_dump") else trace
    cert = certify(trace, checked=[bolt])
    if not cert.ok:
        return WitnessCheck(False, ["the lasso is not a legal run: " + "; ".join(cert.problems[:3])])
    k, start = int(data["k"]), int(data["loop_start"])
    positions = data["positions"]
    if not start <= position <= k or loop_pass < 1:
        return WitnessCheck(False, [f"position {position} of pass {loop_pass} is not in the loop {start}..{k}"])
    rows = [p["bolts"].get(bolt) for p in positions[:k + 1]]
    if any(r is None for r in rows):
        return WitnessCheck(False, [f"{bolt} is not in every position"])
    if any(r.get("fail") or r.get("lost") or r.get("phase") == "failed" for r in rows):
        return WitnessCheck(False, ["the lasso loses tuples: the FIFO count does not apply"])
    times = [exact(p["time"]) for p in positions[:k + 2]]
    duration = times[k + 1] - times[start]

    def arrived_up_to(r: int, i: int) -> int:  # tuples arrived by position i of pass r, initial ones included
        before = sum(int(rows[j]["arrivals"]) for j in range(start))
        loop = [int(rows[j]["arrivals"]) for j in range(start, k + 1)]
        return int(rows[0]["queue"]) + before + (r - 1) * sum(loop) + sum(loop[:i - start + 1])

    number = arrived_up_to(loop_pass, position)
    if rows[position]["arrivals"] == 0:
        return WitnessCheck(False, [f"no tuple arrives at position {position}"])
    took = sum(rows[j]["batch"] for j in range(start) if rows[j]["take"])
    per_pass = [rows[j]["batch"] if rows[j]["take"] else 0 for j in range(start, k + 1)]
    if sum(per_pass) == 0:
        return WitnessCheck(False, [f"{bolt} takes nothing in the loop"])
    if took >= number:
        return WitnessCheck(False, ["the tuple is taken before the loop"])
    passes = max(0, (number - took - 1) // sum(per_pass))  # whole passes whose takes all come before its take
    took += passes * sum(per_pass)
    taken_at: Fraction | None = None
    for j, batch in enumerate(per_pass):
        took += batch
        if took >= number:
            taken_at = times[start + j] + passes * duration
            break
    if taken_at is None:  # (not reached: the passes were counted so that this one takes it)
        return WitnessCheck(False, ["the tuple is never taken"])
    arrived_at = times[position] + (loop_pass - 1) * duration
    wait = taken_at - arrived_at
    if wait <= timeout:
        return WitnessCheck(False, [f"the tuple waits {wait} s, not more than the timeout {timeout} s"], wait)
    return WitnessCheck(True, [], wait)
