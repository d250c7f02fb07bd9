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
rule of section 2.3 as constraints is app/core/tcn/encode_emit.py.

Every variable lives in the `z3.Context` given to :class:`Encoding`; nothing here
keeps z3 objects beyond the encoding's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import z3

from app.core.tcn.encode_emit import emit_rule, free_carry, loop_ratio
from app.core.tcn.encode_failures import FailingBolt, Failures, may_fail_within, without_failures
from app.core.tcn.encode_regions import region_constraints
from app.core.tcn.encode_vars import BoltVars, SpoutVars, real
from app.core.tcn.network import BoltParams, Network, SpoutParams

LOOP_CLOCKS = ("equal", "region")


class Cancelled(Exception):
    """Raised while building an encoding when the search was cancelled."""


class Encoding:
    """The constraints for one bound k; `solver` holds them, `decode` turns a model into a trace."""

    _serial = 0

    def __init__(self, net: Network, k: int, ctx: z3.Context, *, threshold: int | None = None,
                 solver_options: dict[str, object] | None = None, time_unit: Fraction | None = None,
                 free_start: bool = False, steady: frozenset[str] = frozenset(),
                 loop_clocks: str = "equal", cancelled: Callable[[], bool] = lambda: False) -> None:
        if loop_clocks not in LOOP_CLOCKS:
            raise ValueError(f"loop_clocks must be one of {', '.join(LOOP_CLOCKS)}, not {loop_clocks!r}")
        if net.failures is not None and not free_start and not may_fail_within(net, k + 2):
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
        fails = None if net.failures is None else Failures(self, net.failures)
        self.failures = fails if fails is not None and fails.bolts else None
        self.in_loop = [self.bool_var(f"inloop{i}") for i in range(self.n)]
        self.loop_start = [self.bool_var(f"loop{i}") for i in range(self.n)]
        self.growing: dict[str, z3.BoolRef] = {}
        self.delta: dict[str, z3.ArithRef] = {}
        self.loop_clocks_at: dict[str, tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]] = {}
        self.add = self.solver.add  # (EncoderParts.add)
        self._encode_positions()
        if threshold is None:
            self._encode_loop()
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

    # ---- sections 2: runs ------------------------------------------------
    def _encode_positions(self) -> None:
        """Section 2 at every position, in the order measured in bench/RESULTS.md (z3's search depends on
        the order terms are made in): the times, the spouts (2.1), the bolts (2.2, 2.3), the symmetry of
        interchangeable spouts, no empty position, then the failures (section 7)."""
        add, t = self.add, self.time
        add(t[0] == 0)
        for i in range(1, self.n):
            if not i & 63 and self.cancelled():
                raise Cancelled
            add(t[i] > t[i - 1])
        for s in self.net.spouts:
            self._encode_spout(s)
        alive: list[z3.ArithRef] = []  # the last carry total made (see `_encode_bolt`)
        for b in self.net.bolts:
            self._encode_bolt(b, alive)
        self._encode_symmetry()
        self._encode_events()
        if self.failures is not None:
            self.failures.encode_positions()

    def _encode_spout(self, s: SpoutParams) -> None:
        """Section 2.1: emit at 0, then each emission n·a ± τ·a after the previous one (the fresh tuples,
        with replays: section 7.3); a declared stream applies the emit rule to the emissions."""
        add, ctx, t, fails = self.add, self.ctx, self.time, self.failures
        v = self.spouts[s.name]
        a, jitter = s.period, s.period * self.net.tolerance
        # the emission its timing reads: with replays (section 7.3) the fresh tuples only
        fresh = v.emitted if fails is None else [fails.fresh(s.name, i) for i in range(self.n)]
        for i in range(self.n):
            if self.cancelled():
                raise Cancelled
            add(fresh[i] >= 0, fresh[i] <= s.burst)
            if i == 0 and self.free_start:
                add(v.last_size[0] >= 1, v.last_size[0] <= s.burst, v.last_time[0] <= t[0],
                    t[0] - v.last_time[0] < v.last_size[0] * self.duration(ctx, a) + self.duration(ctx, jitter))
                continue
            if i == 0:
                add(v.emitted[0] >= 1, v.last_size[0] == fresh[0], v.last_time[0] == 0)
                continue
            gap = t[i] - v.last_time[i - 1]
            due = v.last_size[i - 1] * self.duration(ctx, a)
            add(z3.If(v.emits(i),
                      z3.And(gap >= due - self.duration(ctx, jitter), gap <= due + self.duration(ctx, jitter),
                             v.last_size[i] == fresh[i], v.last_time[i] == t[i]),
                      z3.And(gap < due + self.duration(ctx, jitter),
                             v.last_size[i] == v.last_size[i - 1], v.last_time[i] == v.last_time[i - 1])))
        for st in s.streams:  # a declared stream: the emit rule applied to the spout's emissions
            if st.silent:
                continue
            es, kept = v.stream_emitted[st.name], v.stream_buffer[st.name]
            for i in range(self.n):
                if i == 0 and self.free_start:
                    add(es[0] >= 0)
                    free_carry(self.add, self.net.emission, st.sigma, False, kept[0])
                    continue
                before = kept[i - 1] if i > 0 else z3.IntVal(0, ctx)
                add(z3.Implies(z3.Not(v.emits(i)), z3.And(es[i] == 0, kept[i] == before)))
                most = s.burst if fails is None else fails.emission_bound(s.name, s.burst)
                for guard, rule in emit_rule(self.net.emission, st.sigma, most, before + v.emitted[i], before,
                                             v.emitted[i], es[i], kept[i]):
                    add(z3.Implies(v.emits(i) if guard is None else z3.And(v.emits(i), guard), rule))

    def _encode_bolt(self, b: BoltParams, alive: list[z3.ArithRef]) -> None:
        """Section 2.2 and 2.3 for one bolt at every position: arrivals, TAKE and EMIT with the processing
        time (`_encode_take_emit`), each output stream's EMIT, the idle rule.

        `alive` holds the last carry total made, from one bolt to the next, until the next is made: it
        lives exactly as long as when all bolts were one loop, since z3 reuses a freed term's id and its
        search depends on the ids (the split kept every assertion and its id)."""
        add, ctx, t, idle = self.add, self.ctx, self.time, self.net.max_idle
        bv = self.bolts[b.name]
        f = None if self.failures is None else self.failures.bolt(b.name)  # its failure variables, if it may fail
        if not self.free_start:
            add(bv.queue[0] == self.net.init_queue)
        for i in range(self.n):
            if self.cancelled():
                raise Cancelled
            arrivals = [self._emitted(src, stream, i) for src, stream in b.sources]
            bv.arrivals.append(z3.Sum(arrivals) if arrivals else z3.IntVal(0, ctx))
            avail = bv.queue[i] + bv.arrivals[i]
            add(bv.queue[i] >= 0)
            if i == 0 and self.free_start:
                self._free_bolt_start(b, bv)
                continue
            was_processing = bv.processing[i - 1] if i > 0 else z3.BoolVal(False, ctx)
            was_waiting = bv.waiting(i - 1) if i > 0 else z3.BoolVal(False, ctx)
            prev_batch = bv.batch[i - 1] if i > 0 else z3.IntVal(0, ctx)
            self._encode_take_emit(b, bv, f, i, avail, was_processing, prev_batch)
            # EMIT (docs/model.md section 2): buffer += batch, emit floor(σ·buffer), keep the rest
            emit = bv.emit[i]
            for st in b.streams:  # each output stream on its own, with its own σ and carry
                e, keep = bv.stream_emitted[st.name][i], bv.stream_buffer[st.name][i]
                if st.silent:
                    add(e == 0, keep == 0)
                    continue
                # built in this order on purpose: z3's search depends on the order terms are created
                # in, and this is the order measured in bench/RESULTS.md
                before = bv.stream_buffer[st.name][i - 1] if i > 0 else z3.IntVal(0, ctx)
                total = before + prev_batch
                alive[:] = [total]
                kept = before if f is None else z3.If(f.fail[i], 0, before)  # a failure keeps no carry
                add(z3.Implies(z3.Not(emit), z3.And(e == 0, keep == kept)))
                for guard, rule in emit_rule(self.net.emission, st.sigma, b.take_max, total, before, prev_batch, e,
                                             keep):
                    add(z3.Implies(emit if guard is None else z3.And(emit, guard), rule))
            # idle rule: waiting tuples are taken within max_idle of becoming available
            waiting = bv.waiting(i)
            add(z3.Implies(z3.And(waiting, z3.Or(emit, z3.Not(was_waiting))), bv.waiting_since[i] == t[i]))
            if i > 0:
                add(z3.Implies(z3.And(waiting, z3.Not(emit), was_waiting),
                               bv.waiting_since[i] == bv.waiting_since[i - 1]))
                add(z3.Implies(was_waiting, t[i] - bv.waiting_since[i - 1] <= self.duration(ctx, idle)))
            add(z3.Implies(waiting, t[i] - bv.waiting_since[i] < self.duration(ctx, idle)))
            add(z3.Implies(z3.Not(waiting), bv.waiting_since[i] == t[i]))

    def _encode_take_emit(self, b: BoltParams, bv: BoltVars, f: FailingBolt | None, i: int, avail: z3.ArithRef,
                          was_processing: z3.BoolRef, prev_batch: z3.ArithRef) -> None:
        """Section 2.2 at position i (`avail`: queue + arrivals): TAKE only when idle (or right after its
        own EMIT), EMIT only when processing, the batch and the queue, the processing time; with failures
        (7.2) a failed bolt neither takes nor emits and loses its tuples."""
        add, ctx, t, tau = self.add, self.ctx, self.time, self.net.tolerance
        lo, hi = b.alpha * (1 - tau), b.alpha * (1 + tau)
        take, emit = bv.take[i], bv.emit[i]
        # TAKE only when idle or right after its own EMIT at this position (back-to-back: the EMIT
        # ends the old phase first), EMIT only when processing
        add(z3.Implies(take, z3.Or(z3.Not(was_processing), emit)), z3.Implies(emit, was_processing))
        if f is None:
            stays = z3.And(was_processing, z3.Not(emit))  # the phase goes on
            after = avail  # the queue after a position without a take
        else:  # section 7.2: a failed (or failing) bolt neither takes nor emits, and loses its tuples
            down = f.down(i, ctx)
            add(z3.Implies(take, z3.Not(down)), z3.Implies(emit, z3.Not(f.fail[i])))
            stays = z3.And(was_processing, z3.Not(emit), z3.Not(f.fail[i]))
            after = z3.If(down, 0, avail)
        add(bv.processing[i] == z3.Or(take, stays))
        add(z3.If(take,
                  z3.And(bv.batch[i] >= 1, bv.batch[i] <= b.take_max, bv.batch[i] <= avail,
                         z3.Or(bv.batch[i] == b.take_max, bv.batch[i] == avail),
                         bv.take_time[i] == t[i], bv.queue[i + 1] == avail - bv.batch[i]),
                  z3.And(bv.queue[i + 1] == after,
                         bv.take_time[i] == (bv.take_time[i - 1] if i > 0 else t[0]))))
        add(z3.Implies(stays, bv.batch[i] == prev_batch))
        add(z3.Implies(z3.Not(bv.processing[i]), bv.batch[i] == 0))
        if i > 0:
            busy = t[i] - bv.take_time[i - 1]
            add(z3.Implies(emit, z3.And(busy >= self.duration(ctx, lo), busy <= self.duration(ctx, hi))))
            add(z3.Implies(stays, busy < self.duration(ctx, hi)))
            if f is not None:  # a failure at or before the deadline ends the phase (section 7.2)
                add(z3.Implies(z3.And(was_processing, f.fail[i]), busy <= self.duration(ctx, hi)))
        else:
            add(z3.Not(emit))

    def _encode_symmetry(self) -> None:
        """Interchangeable spouts (same rate, burst and subscribers): any run with their roles swapped is a
        run too, so the first may be taken to emit at least as many tuples."""
        net = self.net
        subscribers = {s.name: tuple(sorted(b.name for b in net.bolts if (s.name, "default") in b.sources))
                       for s in net.spouts}
        for x, y in zip(net.spouts, net.spouts[1:], strict=False):
            if (x.period, x.burst, subscribers[x.name]) == (y.period, y.burst, subscribers[y.name]) \
                    and not x.streams and not y.streams:
                self.add(z3.Sum(self.spouts[x.name].emitted) >= z3.Sum(self.spouts[y.name].emitted))

    def _encode_events(self) -> None:
        """No empty positions: removing them loses no run."""
        net, fails = self.net, self.failures
        for i in range(1, self.n if not self.free_start else 1):
            if not i & 63 and self.cancelled():
                raise Cancelled
            events = [self.spouts[s.name].emits(i) for s in net.spouts]
            events += [x for b in net.bolts for x in (self.bolts[b.name].take[i], self.bolts[b.name].emit[i])]
            self.add(z3.Or(events if fails is None else events + fails.events(i)))

    def _free_bolt_start(self, b: BoltParams, v: BoltVars) -> None:
        """Position 0 of a loop-only encoding: any state a run could be in, no action."""
        add, ctx, t, net = self.add, self.ctx, self.time, self.net
        hi = b.alpha * (1 + net.tolerance)
        add(z3.Not(v.take[0]), z3.Not(v.emit[0]), v.emitted[0] == 0, v.queue[1] == v.queue[0] + v.arrivals[0])
        add(z3.If(v.processing[0],
                  z3.And(v.batch[0] >= 1, v.batch[0] <= b.take_max, v.take_time[0] <= t[0],
                         t[0] - v.take_time[0] < self.duration(ctx, hi)),
                  z3.And(v.batch[0] == 0, v.take_time[0] == t[0])))
        for st in b.streams:
            free_carry(self.add, self.net.emission, st.sigma, st.silent, v.stream_buffer[st.name][0])
            if st.name != "default":
                add(v.stream_emitted[st.name][0] == 0)
        add(z3.If(v.waiting(0),
                  z3.And(v.waiting_since[0] <= t[0], t[0] - v.waiting_since[0] < self.duration(ctx, net.max_idle)),
                  v.waiting_since[0] == t[0]))

    def _emitted(self, name: str, stream: str, i: int) -> z3.ArithRef:
        """Tuples component `name` emits on `stream` at position i."""
        if name in self.spouts:
            v = self.spouts[name]
            if stream == "default":
                return v.emitted[i]
            return v.stream_emitted[stream][i] if stream in v.stream_emitted else z3.IntVal(0, self.ctx)
        return self.bolts[name].stream_emitted[stream][i]

    # ---- section 3: the lasso -------------------------------------------
    def _encode_loop(self) -> None:
        """Section 3, in the order measured in bench/RESULTS.md: the loop's shape, what repeats at l and k+1
        (`_encode_repeats`), with region clocks their drifts and region constraints (`_loop_drift`), then
        the per-pass sums, fairness, fluid bounds and growth of every spout and bolt, and the failures'."""
        add, ctx, k = self.add, self.ctx, self.k
        inl, start = self.in_loop, self.loop_start
        add(z3.Not(inl[0]), inl[k], z3.Not(start[0]), z3.Not(start[k + 1]))
        if self.free_start:
            add(start[1])
        for i in range(1, k + 1):
            if not i & 63 and self.cancelled():
                raise Cancelled
            add(z3.Implies(inl[i - 1], inl[i]))
            add(start[i] == z3.And(inl[i], z3.Not(inl[i - 1])))
        loop_time = self.time_var("t_loop")
        period = self.time[k + 1] - loop_time
        region = self.loop_clocks == "region"
        fails = self.failures
        # the readable clocks at l (named once, bound at the loop start) and at k+1
        clock_at_l: dict[str, z3.ArithRef] = {}
        readable: dict[str, z3.BoolRef] = {}
        if region:
            for s in self.net.spouts:
                clock_at_l[f"s:{s.name}"] = self.time_var(f"cE[{s.name}]")
            for b in self.net.bolts:
                for kind in ("take", "wait"):
                    clock_at_l[f"{kind}:{b.name}"] = self.time_var(f"c{kind}[{b.name}]")
                    readable[f"{kind}:{b.name}"] = self.bool_var(f"r{kind}[{b.name}]")
            if fails is not None:
                fails.region_clocks(clock_at_l, readable)
        self._encode_repeats(loop_time, clock_at_l, readable)
        # drift[c]: clock at k+1 minus clock at l (0 under equality); one loop pass lasts the sum of
        # its whole intervals plus this drift, so the fluid bounds subtract it
        drift = self._loop_drift(clock_at_l, readable) if region else {}
        loop_len = self.int_var("loop_length")
        add(loop_len == z3.Sum([z3.If(inl[i], z3.IntVal(1, ctx), z3.IntVal(0, ctx)) for i in range(1, k + 1)]),
            loop_len >= 1)
        loop_out: dict[tuple[str, str], z3.ArithRef] = {}  # tuples per loop pass on each (component, stream)
        for b in self.net.bolts:
            for st in b.streams:
                suffix = "" if st.name == "default" else f"/{st.name}"
                loop_out[(b.name, st.name)] = self.int_var(f"N[{b.name}{suffix}]")
        for s in self.net.spouts:
            self._encode_loop_spout(s, loop_len, loop_out, period, drift)
        any_growing = [self._encode_loop_bolt(b, loop_len, loop_out, period, drift) for b in self.net.bolts]
        if fails is not None:
            fails.encode_loop()
        checked = [grows for b, grows in zip(self.net.bolts, any_growing, strict=True) if b.name in self.net.checked]
        add(z3.Or(checked) if checked else z3.BoolVal(False, ctx))

    def _encode_repeats(self, loop_time: z3.ArithRef, clock_at_l: dict[str, z3.ArithRef],
                        readable: dict[str, z3.BoolRef]) -> None:
        """Section 3 items 1 and 2 at each candidate loop start i: every component acts at k+1 as at i, the
        state before k+1 is the state before i, and every readable clock repeats (equal, or bound to its
        name at l for the region constraints)."""
        net, k, t = self.net, self.k, self.time
        region = self.loop_clocks == "region"
        for i in range(1, k + 1):
            if not i & 63 and self.cancelled():
                raise Cancelled
            same = [loop_time == t[i]]
            for s in net.spouts:
                v = self.spouts[s.name]
                same += [v.emitted[k + 1] == v.emitted[i], v.last_size[k] == v.last_size[i - 1]]
                for name, es in v.stream_emitted.items():
                    same += [es[k + 1] == es[i], v.stream_buffer[name][k] == v.stream_buffer[name][i - 1]]
                if region:
                    same.append(clock_at_l[f"s:{s.name}"] == t[i] - v.last_time[i - 1])
                else:
                    same.append(t[k + 1] - v.last_time[k] == t[i] - v.last_time[i - 1])
            for b in net.bolts:
                bv = self.bolts[b.name]
                same += [bv.take[k + 1] == bv.take[i], bv.emit[k + 1] == bv.emit[i],
                         bv.processing[k] == bv.processing[i - 1], bv.batch[k] == bv.batch[i - 1],
                         bv.batch[k + 1] == bv.batch[i], bv.buffer[k] == bv.buffer[i - 1],
                         bv.emitted[k + 1] == bv.emitted[i], bv.waiting(k) == bv.waiting(i - 1)]
                for st in b.streams[1:]:
                    es, kept = bv.stream_emitted[st.name], bv.stream_buffer[st.name]
                    same += [es[k + 1] == es[i], kept[k] == kept[i - 1]]
                if region:
                    same += [readable[f"take:{b.name}"] == bv.processing[i - 1],
                             readable[f"wait:{b.name}"] == bv.waiting(i - 1),
                             clock_at_l[f"take:{b.name}"] == t[i] - bv.take_time[i - 1],
                             clock_at_l[f"wait:{b.name}"] == t[i] - bv.waiting_since[i - 1]]
                else:
                    same += [z3.Implies(bv.processing[i - 1],
                                        t[k + 1] - bv.take_time[k] == t[i] - bv.take_time[i - 1]),
                             z3.Implies(bv.waiting(i - 1),
                                        t[k + 1] - bv.waiting_since[k] == t[i] - bv.waiting_since[i - 1])]
            if self.failures is not None:
                same += self.failures.loop_same(i, region)
            self.add(z3.Implies(self.loop_start[i], z3.And(same)))

    def _loop_drift(self, clock_at_l: dict[str, z3.ArithRef],
                    readable: dict[str, z3.BoolRef]) -> dict[str, z3.ArithRef]:
        """Region clocks (section 3 item 2): each clock's drift over a pass (its value at k+1 minus at l,
        0 when not readable) and the region constraints between the two."""
        net, k, t, fails = self.net, self.k, self.time, self.failures
        drift: dict[str, z3.ArithRef] = {}
        clock_at_end = {f"s:{s.name}": t[k + 1] - self.spouts[s.name].last_time[k] for s in net.spouts}
        for b in net.bolts:
            clock_at_end[f"take:{b.name}"] = t[k + 1] - self.bolts[b.name].take_time[k]
            clock_at_end[f"wait:{b.name}"] = t[k + 1] - self.bolts[b.name].waiting_since[k]
        if fails is not None:
            clock_at_end.update(fails.region_ends())
        for name, at_l in clock_at_l.items():
            change = clock_at_end[name] - at_l
            drift[name] = z3.If(readable[name], change, 0 * change) if name in readable else change
        region_constraints(self, clock_at_l, clock_at_end, readable,
                           fails.clock_limits() if fails is not None else ([], {}))
        # exposed for tests: each clock's (readable, value at l, value at k+1)
        self.loop_clocks_at = {name: (readable.get(name, z3.BoolVal(True, self.ctx)), at_l, clock_at_end[name])
                               for name, at_l in clock_at_l.items()}
        return drift

    def _encode_loop_spout(self, s: SpoutParams, loop_len: z3.ArithRef, loop_out: dict[tuple[str, str], z3.ArithRef],
                           period: z3.ArithRef, drift: dict[str, z3.ArithRef]) -> None:
        """One spout over a loop pass: fairness (it emits), its tuples and fresh tuples named, its declared
        streams' ratios, and the fluid bounds of the gaps between its emissions."""
        add, ctx, inl, fails, tau = self.add, self.ctx, self.in_loop, self.failures, self.net.tolerance
        ints, loop_positions = z3.IntVal, range(1, self.k + 1)
        v = self.spouts[s.name]
        count = z3.Sum([z3.If(z3.And(inl[i], v.emits(i)), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
        tuples = z3.Sum([z3.If(inl[i], v.emitted[i], ints(0, ctx)) for i in loop_positions])
        add(count >= 1)  # fairness
        # name the loop sums so linear reasoning can link them across components
        n_tuples = self.int_var(f"N[{s.name}]")
        if fails is None or s.name not in fails.spouts:
            add(n_tuples == tuples, n_tuples >= count, n_tuples <= count * s.burst, loop_len >= count)
            fresh = n_tuples
        else:  # with replays the timing and the burst bound read the fresh tuples (section 7.3)
            fresh = self.int_var(f"Nfresh[{s.name}]")
            add(n_tuples == tuples, fresh == z3.Sum([z3.If(inl[i], fails.fresh(s.name, i), ints(0, ctx))
                                                     for i in loop_positions]),
                fresh >= count, fresh <= count * s.burst, n_tuples >= fresh, loop_len >= count)
        loop_out[(s.name, "default")] = n_tuples
        for st in s.streams:
            out = loop_out[(s.name, st.name)] = self.int_var(f"N[{s.name}/{st.name}]")
            if st.silent:
                add(out == 0)
                continue
            es = v.stream_emitted[st.name]
            add(out == z3.Sum([z3.If(inl[i], es[i], ints(0, ctx)) for i in loop_positions]))
            loop_ratio(self.add, self.net.emission, out, st.sigma, n_tuples, count)
        # fluid bounds over one loop pass (redundant, section 7)
        gaps = _less_drift(period, drift, f"s:{s.name}")  # the sum of the gaps between its emissions
        add(gaps >= fresh * self.duration(ctx, s.period) - count * self.duration(ctx, s.period * tau))
        add(gaps <= fresh * self.duration(ctx, s.period) + count * self.duration(ctx, s.period * tau))

    def _encode_loop_bolt(self, b: BoltParams, loop_len: z3.ArithRef, loop_out: dict[tuple[str, str], z3.ArithRef],
                          period: z3.ArithRef, drift: dict[str, z3.ArithRef]) -> z3.BoolRef:
        """One bolt over a loop pass: its growth Δ (0 when steady, or when it fails in the loop), the
        per-pass balances and counting links, the fluid bounds, its streams' ratios, and a growing queue's
        full batches; gives whether it grows."""
        add, ctx, inl, k, fails = self.add, self.ctx, self.in_loop, self.k, self.failures
        ints, loop_positions, tau, idle = z3.IntVal, range(1, k + 1), self.net.tolerance, self.net.max_idle
        bv = self.bolts[b.name]
        at_start = self.int_var(f"Qloop[{b.name}]")
        for i in loop_positions:
            add(z3.Implies(self.loop_start[i], at_start == bv.queue[i]))
        delta = bv.queue[k + 1] - at_start
        self.delta[b.name] = delta
        add(delta >= 0)
        grows = self.bool_var(f"grows[{b.name}]")
        add(grows == (delta > 0))
        if b.name in self.steady:
            add(delta == 0)
        self.growing[b.name] = grows
        takes = z3.Sum([z3.If(z3.And(inl[i], bv.take[i]), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
        emits = z3.Sum([z3.If(z3.And(inl[i], bv.emit[i]), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
        taken = z3.Sum([z3.If(z3.And(inl[i], bv.take[i]), bv.batch[i], ints(0, ctx)) for i in loop_positions])
        arrived = z3.Sum([z3.If(inl[i], bv.arrivals[i], ints(0, ctx)) for i in loop_positions])
        n_takes, n_taken, n_arrived = (self.int_var(f"takes[{b.name}]"), self.int_var(f"taken[{b.name}]"),
                                       self.int_var(f"arrived[{b.name}]"))
        add(n_takes == takes, n_taken == taken, n_arrived == arrived)
        takes, taken, arrived = n_takes, n_taken, n_arrived
        # a bolt that fails in the loop does not grow (Δ = 0, section 7.4), and the per-pass balances
        # below hold only in a loop without its failure (a failure loses a taken batch and the carries)
        quiet = None if fails is None or b.name not in fails.bolts else z3.Not(fails.fails_in_loop(b.name))
        if quiet is not None:
            add(z3.Implies(z3.Not(quiet), delta == 0))

        def per_pass(*facts: z3.BoolRef) -> None:
            add(*(facts if quiet is None else [z3.Implies(quiet, fact) for fact in facts]))
        per_pass(takes == emits, delta == arrived - taken)
        # counting links (implied, but invisible to linear reasoning without them)
        # (a take may share its position with an emit: back-to-back, so only loop_len >= takes)
        add(taken >= takes, taken <= takes * b.take_max, loop_len >= takes)
        add(arrived == z3.Sum([loop_out[src] for src in b.sources]) if b.sources else arrived == 0)
        per_pass(_less_drift(period, drift, f"take:{b.name}") >= takes * self.duration(ctx, b.alpha * (1 - tau)))
        add(z3.Implies(grows, _less_drift(period, drift, f"take:{b.name}", f"wait:{b.name}")
                       <= takes * self.duration(ctx, b.alpha * (1 + tau) + idle)))
        add(z3.Implies(grows, takes >= 1))
        for st in b.streams:
            out = loop_out[(b.name, st.name)]
            if st.silent:
                add(out == 0)
                continue
            es = bv.stream_emitted[st.name]
            add(out == z3.Sum([z3.If(inl[i], es[i], ints(0, ctx)) for i in loop_positions]))
            loop_ratio(self.add, self.net.emission, out, st.sigma, taken, emits, quiet)
        # a growing queue: every take in the loop is a full batch and the queue never empties
        for i in loop_positions:
            add(z3.Implies(z3.And(grows, inl[i]),
                           z3.And(bv.queue[i] >= 1,
                                  z3.Implies(bv.take[i], bv.queue[i] + bv.arrivals[i] >= b.take_max))))
        add(z3.Implies(grows, taken == takes * b.take_max))
        return grows

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


def _less_drift(x: z3.ArithRef, drift: dict[str, z3.ArithRef], *names: str) -> z3.ArithRef:
    """x minus the drifts of these clocks (x itself under equality: the formula stays as it was)."""
    for name in names:
        if name in drift:
            x = x - drift[name]
    return x
