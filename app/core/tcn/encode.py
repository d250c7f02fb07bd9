"""The timed counter network as a direct SMT encoding for z3 (semantics sections 2 and 3).

Positions 0..k+1, times are z3 Reals compared with exact rational constants,
counters are Ints. For the growth property position k+1 repeats the loop start l
(1 <= l <= k) with the sound loop conditions of section 3: discrete state and
finite counters equal, every readable clock *equal* at l and k+1 (the simple
sufficient case, `loop_clocks="equal"`) or region-equivalent there
(`loop_clocks="region"`: scaled clocks, integer parts, fractional order), growing queues only see full batches and
never empty inside the loop (the region constraints: app/core/tcn/encode_regions.py). Redundant
fluid invariants per loop pass (docs/model.md section 5, end) help the solver. For the threshold
property the positions are a plain prefix. With failures (docs/model.md section 7, when
`Network.failures` is set) app/core/tcn/encode_failures.py adds the failing bolts, losses,
replays and backlogs; without them the constraints are exactly those of sections 2 and 3. The EMIT
rule of section 2.3 as constraints is app/core/tcn/encode_emit.py. Section 2 is stated by
app/core/tcn/encode_runs.py, section 3 by app/core/tcn/encode_loop.py; this module holds the
encoding's variables and constants and the threshold property.

Every variable lives in the `z3.Context` given to :class:`Encoding`; nothing here
keeps z3 objects beyond the encoding's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import z3

from app.core.errors import Cancelled
from app.core.tcn.encode_deaths import DeathRule, death_network
from app.core.tcn.encode_failures import Failures, may_fail_within, without_failures
from app.core.tcn.encode_loop import encode_loop
from app.core.tcn.encode_runs import encode_positions
from app.core.tcn.encode_vars import BoltVars, SpoutVars, real
from app.core.tcn.network import Network

__all__ = ["LOOP_CLOCKS", "Cancelled", "Encoding"]

LOOP_CLOCKS = ("equal", "region")

class Encoding:
    """The constraints for one bound k; `solver` holds them, `decode` turns a model into a trace."""

    _serial = 0

    def __init__(self, net: Network, k: int, ctx: z3.Context, *, threshold: int | None = None,
                 solver_options: dict[str, object] | None = None, time_unit: Fraction | None = None,
                 free_start: bool = False, steady: frozenset[str] = frozenset(),
                 loop_clocks: str = "equal", cancelled: Callable[[], bool] = lambda: False,
                 deaths: DeathRule | None = None) -> None:
        if loop_clocks not in LOOP_CLOCKS:
            raise ValueError(f"loop_clocks must be one of {', '.join(LOOP_CLOCKS)}, not {loop_clocks!r}")
        if deaths is not None:  # worker deaths (docs/model.md 9.5): its bolts fail on the worker's clock
            if free_start:
                raise ValueError("free_start is not available with worker deaths")
            net = death_network(net, deaths)
        elif net.failures is not None and not free_start and not may_fail_within(net, k + 2):
            net = without_failures(net)  # no bolt can fail in k+2 positions: section 2 alone, on a smaller cone
        self.net, self.k, self.ctx, self.threshold = net, k, ctx, threshold
        # loop_clocks: how readable clocks repeat at l and k+1; "equal" (simple sufficient case)
        # or "region" (region equivalence, section 3 item 2: finds more lassos)
        self.loop_clocks = loop_clocks
        # time_unit set: every time stamp is an integer multiple of it (a sound restriction
        # that only serves to find lassos faster); None: exact rational time
        self.time_unit = time_unit
        # free_start: loop only. Position 0 is an arbitrary state (not the initial one), the loop
        # is 1..k and empty positions are allowed, so every loop of at most k positions of any
        # lasso fits: UNSAT here proves that no lasso with k positions exists (a cheap filter).
        self.free_start = free_start
        # steady: bolts the rate check proves bounded; their queues cannot grow in any run, so
        # Δ = 0 for them is a sound strengthening that prunes the search
        self.steady = steady
        self.cancelled = cancelled
        self._made = 0
        self.n = k + 2  # positions 0..k+1
        Encoding._serial += 1
        self.tag = f"e{Encoding._serial}."
        self.solver = z3.Solver(ctx=ctx)
        self._constants: dict[Fraction, z3.ArithRef] = {}
        for key, value in (solver_options or {}).items():
            self.solver.set(key, value)
        self.time = [self.time_var(f"t{i}") for i in range(self.n)]
        self.spouts = {s.name: SpoutVars(self, s, self.n) for s in net.spouts}
        self.bolts = {b.name: BoltVars(self, b, self.n) for b in net.bolts}
        # the failure model (docs/model.md section 7), None when no bolt can fail: nothing changes then
        # (also None when no bolt can fail within the k+2 positions: see Failures.step)
        fails = None if net.failures is None else Failures(self, net.failures, deaths)
        self.failures = fails if fails is not None and (fails.bolts or fails.deaths is not None) else None
        self.in_loop = [self.bool_var(f"inloop{i}") for i in range(self.n)]
        self.loop_start = [self.bool_var(f"loop{i}") for i in range(self.n)]
        self.growing: dict[str, z3.BoolRef] = {}
        self.delta: dict[str, z3.ArithRef] = {}
        self.loop_clocks_at: dict[str, tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]] = {}
        self.add = self.solver.add  # (EncoderParts.add)
        encode_positions(self)
        if threshold is None:
            encode_loop(self)
        else:
            self._encode_threshold(threshold)

    def time_var(self, name: str) -> z3.ArithRef:
        return self._real_var(name) if self.time_unit is None else self.int_var(name)

    # Every encoding names its constants apart (a per-context serial number): a new bound
    # reusing the previous bound's constants in the same context was measured 3-8x slower.
    def int_var(self, name: str) -> z3.ArithRef:
        self._poll()
        return z3.Int(f"{self.tag}{name}", self.ctx)

    def _real_var(self, name: str) -> z3.ArithRef:
        self._poll()
        return z3.Real(f"{self.tag}{name}", self.ctx)

    def bool_var(self, name: str) -> z3.BoolRef:
        self._poll()
        return z3.Bool(f"{self.tag}{name}", self.ctx)

    def _poll(self) -> None:
        """Every 512 constants made, stop if cancelled: at a large k making them alone takes seconds."""
        self._made += 1
        if not self._made & 511 and self.cancelled():
            raise Cancelled

    def duration(self, ctx: z3.Context, value: Fraction | int) -> z3.ArithRef:
        """A time constant, in seconds or in time units (each made once)."""
        key = Fraction(value)
        term = self._constants.get(key)
        if term is None:
            term = self._constants[key] = self._make_constant(ctx, key)
        return term

    def _make_constant(self, ctx: z3.Context, value: Fraction) -> z3.ArithRef:
        if self.time_unit is None:
            return real(ctx, value)
        scaled = Fraction(value) / self.time_unit
        if scaled.denominator != 1:
            raise ValueError(f"time unit {self.time_unit} does not divide {value}")
        return z3.IntVal(scaled.numerator, ctx)

    def _encode_threshold(self, threshold: int) -> None:
        reach = [self.bolts[name].queue[i] >= threshold for name in self.net.checked for i in range(self.n)]
        self.add(z3.Or(reach) if reach else z3.BoolVal(False, self.ctx))

    def block(self, model: z3.ModelRef) -> None:
        """Exclude this model's discrete run (used when its trace fails certification)."""
        lits = []
        for i in range(self.n):
            for v in self.spouts.values():
                lits.append(v.emitted[i] != model.eval(v.emitted[i], model_completion=True))
            for w in self.bolts.values():
                for x in (w.take[i], w.emit[i]):
                    lits.append(x != model.eval(x, model_completion=True))
            lits.append(self.loop_start[i] != model.eval(self.loop_start[i], model_completion=True))
            if self.failures is not None:
                lits += [x != model.eval(x, model_completion=True) for x in self.failures.events(i)]
        self.add(z3.Or(lits))
