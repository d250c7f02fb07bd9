"""What the encoder's parts share: the per-position variables of a spout and of a bolt, and the
encoder as its parts see it (`EncoderParts`). app/core/tcn/encode.py's `Encoding` is one;
app/core/tcn/encode_failures.py and app/core/tcn/encode_regions.py read it through this protocol,
so neither imports the encoder (which imports them)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Protocol

import z3

from app.core.tcn.network import BoltParams, Network, SpoutParams


def real(ctx: z3.Context, value: Fraction | int) -> z3.ArithRef:
    """An exact rational constant."""
    value = Fraction(value)
    return z3.RealVal(f"{value.numerator}/{value.denominator}", ctx)


class EncoderParts(Protocol):
    """The encoder's state and variable makers that its parts (failures, regions) use."""

    net: Network
    ctx: z3.Context
    k: int
    n: int  # positions 0..k+1
    free_start: bool
    time_unit: Fraction | None
    time: list[z3.ArithRef]
    in_loop: list[z3.BoolRef]
    loop_start: list[z3.BoolRef]
    spouts: dict[str, SpoutVars]
    bolts: dict[str, BoltVars]

    def add(self, *facts: Any) -> None:
        """Assert constraints."""

    def int_var(self, name: str) -> z3.ArithRef:
        """A fresh integer constant of this encoding."""

    def bool_var(self, name: str) -> z3.BoolRef:
        """A fresh Boolean constant of this encoding."""

    def time_var(self, name: str) -> z3.ArithRef:
        """A fresh time: a Real, or an Int counting time units."""

    def duration(self, ctx: z3.Context, value: Fraction | int) -> z3.ArithRef:
        """A duration constant, in seconds or in time units."""


class SpoutVars:
    """A spout's variables per position."""

    def __init__(self, enc: EncoderParts, s: SpoutParams, n: int) -> None:
        self.emitted = [enc.int_var(f"E[{s.name}]{i}") for i in range(n)]
        # declared streams that carry tuples: per position the tuples on them and the carry after
        self.stream_emitted = {st.name: [enc.int_var(f"E[{s.name}/{st.name}]{i}") for i in range(n)]
                               for st in s.streams if not st.silent}
        self.stream_buffer = {st.name: [enc.int_var(f"buf[{s.name}/{st.name}]{i}") for i in range(n)]
                              for st in s.streams if not st.silent}
        self.last_size = [enc.int_var(f"n[{s.name}]{i}") for i in range(n)]  # size of the last emission, after i
        self.last_time = [enc.time_var(f"tE[{s.name}]{i}") for i in range(n)]  # its time, after i

    def emits(self, i: int) -> z3.BoolRef:
        return self.emitted[i] > 0


class BoltVars:
    """A bolt's variables per position."""

    def __init__(self, enc: EncoderParts, b: BoltParams, n: int) -> None:
        p = b.name
        self.queue = [enc.int_var(f"Q[{p}]{i}") for i in range(n + 1)]  # before actions at i; queue[n] after n-1
        self.take = [enc.bool_var(f"take[{p}]{i}") for i in range(n)]
        self.emit = [enc.bool_var(f"emit[{p}]{i}") for i in range(n)]
        self.processing = [enc.bool_var(f"proc[{p}]{i}") for i in range(n)]  # after actions at i
        self.batch = [enc.int_var(f"P[{p}]{i}") for i in range(n)]  # after actions at i (0 when idle)
        self.take_time = [enc.time_var(f"tT[{p}]{i}") for i in range(n)]
        self.waiting_since = [enc.time_var(f"tW[{p}]{i}") for i in range(n)]
        self.emitted = [enc.int_var(f"E[{p}]{i}") for i in range(n)]  # on the default stream
        self.buffer = [enc.int_var(f"buf[{p}]{i}") for i in range(n)]  # the default stream's, after actions at i
        # per output stream (the default one is `emitted` / `buffer`)
        self.stream_emitted = {st.name: [enc.int_var(f"E[{p}/{st.name}]{i}") for i in range(n)]
                               for st in b.streams[1:]}
        self.stream_buffer = {st.name: [enc.int_var(f"buf[{p}/{st.name}]{i}") for i in range(n)]
                              for st in b.streams[1:]}
        self.stream_emitted["default"], self.stream_buffer["default"] = self.emitted, self.buffer
        self.arrivals: list[z3.ArithRef] = []
        self._waiting: dict[int, z3.BoolRef] = {}
        self.slide = b.slide  # a count window's: tuples wait only from a whole slide (docs/model.md section 10)
        self.timer = b.timer  # a duration window's G: its tuples wait while it holds any, idle or not (section 10.3)
        # a join's caches (docs/model.md section 11): per branch (its index in `sources`), the parts whose message
        # is not complete, before the actions at i
        self.cache = [[enc.int_var(f"K[{p}/{m}]{i}") for i in range(n + 1)] for m in range(len(b.sources))] \
            if b.join else []

    def waiting(self, i: int) -> z3.BoolRef:
        """Idle with tuples in the queue after the actions of position i (a duration window: tuples in the queue,
        idle or not) (built once per position: building z3 terms through the Python API dominates the encoding time
        of large cones)."""
        term = self._waiting.get(i)
        if term is None and self.timer is not None:
            term = self._waiting[i] = self.queue[i + 1] > 0
        elif term is None:
            term = self._waiting[i] = z3.And(z3.Not(self.processing[i]), self.queue[i + 1] > 0 if self.slide == 1
                                             else self.queue[i + 1] >= self.slide)
        return term
