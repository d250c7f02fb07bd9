"""Section 3 of the semantics as constraints (docs/model.md): the lasso of an encoding, its loop's shape,
what repeats at l and k+1 (equal clocks, or region-equivalent ones with app/core/tcn/encode_regions.py),
the per-pass sums, fairness, fluid bounds and growth of every spout and bolt, and the failures'. Called
by app/core/tcn/encode.py's `Encoding` for the growth property; terms are made in the order measured in
bench/RESULTS.md."""

from __future__ import annotations

import z3

from app.core.errors import Cancelled
from app.core.tcn.encode_emit import loop_ratio
from app.core.tcn.encode_regions import region_constraints
from app.core.tcn.encode_state import Encoder
from app.core.tcn.network import BoltParams, SpoutParams


def encode_loop(enc: Encoder) -> None:
    """Section 3, in the order measured in bench/RESULTS.md: the loop's shape, what repeats at l and k+1
    (`_repeats`), with region clocks their drifts and region constraints (`_loop_drift`), then
    the per-pass sums, fairness, fluid bounds and growth of every spout and bolt, and the failures'."""
    add, ctx, k = enc.add, enc.ctx, enc.k
    inl, start = enc.in_loop, enc.loop_start
    add(z3.Not(inl[0]), inl[k], z3.Not(start[0]), z3.Not(start[k + 1]))
    if enc.free_start:
        add(start[1])
    for i in range(1, k + 1):
        if not i & 63 and enc.cancelled():
            raise Cancelled
        add(z3.Implies(inl[i - 1], inl[i]))
        add(start[i] == z3.And(inl[i], z3.Not(inl[i - 1])))
    loop_time = enc.time_var("t_loop")
    period = enc.time[k + 1] - loop_time
    region = enc.loop_clocks == "region"
    fails = enc.failures
    # the readable clocks at l (named once, bound at the loop start) and at k+1
    clock_at_l: dict[str, z3.ArithRef] = {}
    readable: dict[str, z3.BoolRef] = {}
    if region:
        for s in enc.net.spouts:
            clock_at_l[f"s:{s.name}"] = enc.time_var(f"cE[{s.name}]")
        for b in enc.net.bolts:
            for kind in ("take", "wait"):
                clock_at_l[f"{kind}:{b.name}"] = enc.time_var(f"c{kind}[{b.name}]")
                readable[f"{kind}:{b.name}"] = enc.bool_var(f"r{kind}[{b.name}]")
        if fails is not None:
            fails.region_clocks(clock_at_l, readable)
    _repeats(enc, loop_time, clock_at_l, readable)
    # drift[c]: clock at k+1 minus clock at l (0 under equality); one loop pass lasts the sum of
    # its whole intervals plus this drift, so the fluid bounds subtract it
    drift = _loop_drift(enc, clock_at_l, readable) if region else {}
    loop_len = enc.int_var("loop_length")
    add(loop_len == z3.Sum([z3.If(inl[i], z3.IntVal(1, ctx), z3.IntVal(0, ctx)) for i in range(1, k + 1)]),
        loop_len >= 1)
    loop_out: dict[tuple[str, str], z3.ArithRef] = {}  # tuples per loop pass on each (component, stream)
    for b in enc.net.bolts:
        for st in b.streams:
            suffix = "" if st.name == "default" else f"/{st.name}"
            loop_out[(b.name, st.name)] = enc.int_var(f"N[{b.name}{suffix}]")
    for s in enc.net.spouts:
        _loop_spout(enc, s, loop_len, loop_out, period, drift)
    any_growing = [_loop_bolt(enc, b, loop_len, loop_out, period, drift) for b in enc.net.bolts]
    if fails is not None:
        fails.encode_loop()
    checked = [grows for b, grows in zip(enc.net.bolts, any_growing, strict=True) if b.name in enc.net.checked]
    add(z3.Or(checked) if checked else z3.BoolVal(False, ctx))

def _repeats(enc: Encoder, loop_time: z3.ArithRef, clock_at_l: dict[str, z3.ArithRef],
                    readable: dict[str, z3.BoolRef]) -> None:
    """Section 3 items 1 and 2 at each candidate loop start i: every component acts at k+1 as at i, the
    state before k+1 is the state before i, and every readable clock repeats (equal, or bound to its
    name at l for the region constraints)."""
    net, k, t = enc.net, enc.k, enc.time
    region = enc.loop_clocks == "region"
    for i in range(1, k + 1):
        if not i & 63 and enc.cancelled():
            raise Cancelled
        same = [loop_time == t[i]]
        for s in net.spouts:
            v = enc.spouts[s.name]
            same += [v.emitted[k + 1] == v.emitted[i], v.last_size[k] == v.last_size[i - 1]]
            for name, es in v.stream_emitted.items():
                same += [es[k + 1] == es[i], v.stream_buffer[name][k] == v.stream_buffer[name][i - 1]]
            if region:
                same.append(clock_at_l[f"s:{s.name}"] == t[i] - v.last_time[i - 1])
            else:
                same.append(t[k + 1] - v.last_time[k] == t[i] - v.last_time[i - 1])
        for b in net.bolts:
            bv = enc.bolts[b.name]
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
        if enc.failures is not None:
            same += enc.failures.loop_same(i, region)
        enc.add(z3.Implies(enc.loop_start[i], z3.And(same)))

def _loop_drift(enc: Encoder, clock_at_l: dict[str, z3.ArithRef],
                readable: dict[str, z3.BoolRef]) -> dict[str, z3.ArithRef]:
    """Region clocks (section 3 item 2): each clock's drift over a pass (its value at k+1 minus at l,
    0 when not readable) and the region constraints between the two."""
    net, k, t, fails = enc.net, enc.k, enc.time, enc.failures
    drift: dict[str, z3.ArithRef] = {}
    clock_at_end = {f"s:{s.name}": t[k + 1] - enc.spouts[s.name].last_time[k] for s in net.spouts}
    for b in net.bolts:
        clock_at_end[f"take:{b.name}"] = t[k + 1] - enc.bolts[b.name].take_time[k]
        clock_at_end[f"wait:{b.name}"] = t[k + 1] - enc.bolts[b.name].waiting_since[k]
    if fails is not None:
        clock_at_end.update(fails.region_ends())
    for name, at_l in clock_at_l.items():
        change = clock_at_end[name] - at_l
        drift[name] = z3.If(readable[name], change, 0 * change) if name in readable else change
    region_constraints(enc, clock_at_l, clock_at_end, readable,
                       fails.clock_limits() if fails is not None else ([], {}))
    # exposed for tests: each clock's (readable, value at l, value at k+1)
    enc.loop_clocks_at = {name: (readable.get(name, z3.BoolVal(True, enc.ctx)), at_l, clock_at_end[name])
                           for name, at_l in clock_at_l.items()}
    return drift

def _loop_spout(enc: Encoder, s: SpoutParams, loop_len: z3.ArithRef, loop_out: dict[tuple[str, str], z3.ArithRef],
                       period: z3.ArithRef, drift: dict[str, z3.ArithRef]) -> None:
    """One spout over a loop pass: fairness (it emits), its tuples and fresh tuples named, its declared
    streams' ratios, and the fluid bounds of the gaps between its emissions."""
    add, ctx, inl, fails, tau = enc.add, enc.ctx, enc.in_loop, enc.failures, enc.net.tolerance
    ints, loop_positions = z3.IntVal, range(1, enc.k + 1)
    v = enc.spouts[s.name]
    count = z3.Sum([z3.If(z3.And(inl[i], v.emits(i)), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
    tuples = z3.Sum([z3.If(inl[i], v.emitted[i], ints(0, ctx)) for i in loop_positions])
    add(count >= 1)  # fairness
    # name the loop sums so linear reasoning can link them across components
    n_tuples = enc.int_var(f"N[{s.name}]")
    if fails is None or s.name not in fails.spouts:
        add(n_tuples == tuples, n_tuples >= count, n_tuples <= count * s.burst, loop_len >= count)
        fresh = n_tuples
    else:  # with replays the timing and the burst bound read the fresh tuples (section 7.3)
        fresh = enc.int_var(f"Nfresh[{s.name}]")
        add(n_tuples == tuples, fresh == z3.Sum([z3.If(inl[i], fails.fresh(s.name, i), ints(0, ctx))
                                                 for i in loop_positions]),
            fresh >= count, fresh <= count * s.burst, n_tuples >= fresh, loop_len >= count)
    loop_out[(s.name, "default")] = n_tuples
    for st in s.streams:
        out = loop_out[(s.name, st.name)] = enc.int_var(f"N[{s.name}/{st.name}]")
        if st.silent:
            add(out == 0)
            continue
        es = v.stream_emitted[st.name]
        add(out == z3.Sum([z3.If(inl[i], es[i], ints(0, ctx)) for i in loop_positions]))
        loop_ratio(enc.add, enc.net.emission, out, st.sigma, n_tuples, count)
    # fluid bounds over one loop pass (redundant, section 7)
    gaps = _less_drift(period, drift, f"s:{s.name}")  # the sum of the gaps between its emissions
    add(gaps >= fresh * enc.duration(ctx, s.period) - count * enc.duration(ctx, s.period * tau))
    if fails is None or fails.deaths is None or s.name not in fails.deaths.quiet_of:  # (9.5: a restart times it)
        add(gaps <= fresh * enc.duration(ctx, s.period) + count * enc.duration(ctx, s.period * tau))

def _loop_bolt(enc: Encoder, b: BoltParams, loop_len: z3.ArithRef, loop_out: dict[tuple[str, str], z3.ArithRef],
                      period: z3.ArithRef, drift: dict[str, z3.ArithRef]) -> z3.BoolRef:
    """One bolt over a loop pass: its growth Δ (0 when steady, or when it fails in the loop), the
    per-pass balances and counting links, the fluid bounds, its streams' ratios, and a growing queue's
    full batches; gives whether it grows."""
    add, ctx, inl, k, fails = enc.add, enc.ctx, enc.in_loop, enc.k, enc.failures
    ints, loop_positions, tau, idle = z3.IntVal, range(1, k + 1), enc.net.tolerance, enc.net.max_idle
    bv = enc.bolts[b.name]
    at_start = enc.int_var(f"Qloop[{b.name}]")
    for i in loop_positions:
        add(z3.Implies(enc.loop_start[i], at_start == bv.queue[i]))
    delta = bv.queue[k + 1] - at_start
    enc.delta[b.name] = delta
    add(delta >= 0)
    grows = enc.bool_var(f"grows[{b.name}]")
    add(grows == (delta > 0))
    if b.name in enc.steady:
        add(delta == 0)
    enc.growing[b.name] = grows
    takes = z3.Sum([z3.If(z3.And(inl[i], bv.take[i]), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
    emits = z3.Sum([z3.If(z3.And(inl[i], bv.emit[i]), ints(1, ctx), ints(0, ctx)) for i in loop_positions])
    taken = z3.Sum([z3.If(z3.And(inl[i], bv.take[i]), bv.batch[i], ints(0, ctx)) for i in loop_positions])
    arrived = z3.Sum([z3.If(inl[i], bv.arrivals[i], ints(0, ctx)) for i in loop_positions])
    n_takes, n_taken, n_arrived = (enc.int_var(f"takes[{b.name}]"), enc.int_var(f"taken[{b.name}]"),
                                   enc.int_var(f"arrived[{b.name}]"))
    add(n_takes == takes, n_taken == taken, n_arrived == arrived)
    takes, taken, arrived = n_takes, n_taken, n_arrived
    # a bolt that fails in the loop does not grow (Δ = 0, section 7.4), and the per-pass balances
    # below hold only in a loop without its failure (a failure loses a taken batch and the carries)
    quiet = None if fails is None or b.name not in fails.bolts else z3.Not(fails.fails_in_loop(b.name))
    if fails is not None and fails.deaths is not None and b.name in fails.deaths.parts:  # 9.5: part of a bolt
        quiet = z3.Not(fails.deaths.cut_in_loop(b.name))
    if quiet is not None:
        add(z3.Implies(z3.Not(quiet), delta == 0))

    def per_pass(*facts: z3.BoolRef) -> None:
        add(*(facts if quiet is None else [z3.Implies(quiet, fact) for fact in facts]))
    per_pass(takes == emits, delta == arrived - taken)
    # counting links (implied, but invisible to linear reasoning without them)
    # (a take may share its position with an emit: back-to-back, so only loop_len >= takes)
    add(taken >= takes, loop_len >= takes)
    if b.timer is None:
        add(taken <= takes * b.take_max)
    else:  # a duration window's runs take every waiting tuple: its queue never grows in a lasso (section 10.3)
        add(delta == 0)
    held = [grows]  # what the bolt holds more per pass: its queue, and a join's caches (docs/model.md section 11)
    if b.join:
        held += _loop_caches(enc, b, arrived, loop_out)
    else:
        add(arrived == z3.Sum([loop_out[src] for src in b.sources]) if b.sources else arrived == 0)
    per_pass(_less_drift(period, drift, f"take:{b.name}") >= takes * enc.duration(ctx, b.alpha * (1 - tau)))
    add(z3.Implies(grows, _less_drift(period, drift, f"take:{b.name}", f"wait:{b.name}")
                   <= takes * enc.duration(ctx, b.alpha * (1 + tau) + idle)))
    add(z3.Implies(grows, takes >= 1))
    for st in b.streams:
        out = loop_out[(b.name, st.name)]
        if st.silent:
            add(out == 0)
            continue
        es = bv.stream_emitted[st.name]
        add(out == z3.Sum([z3.If(inl[i], es[i], ints(0, ctx)) for i in loop_positions]))
        loop_ratio(enc.add, enc.net.emission, out, st.sigma, taken, emits, quiet)
    # a growing queue: every take in the loop is a full batch and the queue never empties
    for i in loop_positions:
        add(z3.Implies(z3.And(grows, inl[i]),
                       z3.And(bv.queue[i] >= b.slide,  # (1, or a count window's slide: section 10)
                              z3.Implies(bv.take[i], bv.queue[i] + bv.arrivals[i] >= b.take_max))))
    add(z3.Implies(grows, taken == takes * b.take_max))
    return z3.Or(held) if len(held) > 1 else grows


def _loop_caches(enc: Encoder, b: BoltParams, arrived: z3.ArithRef,
                 loop_out: dict[tuple[str, str], z3.ArithRef]) -> list[z3.BoolRef]:
    """Section 11 over a loop pass: each branch delivers the messages the join completes and what its cache gains,
    which never shrinks; a growing cache is non-empty after every loop position (its branch never sets the min, so
    raising it changes no arrival). Gives whether each cache grows."""
    add, inl, k, bv = enc.add, enc.in_loop, enc.k, enc.bolts[b.name]
    grown = []
    for m, src in enumerate(b.sources):
        cache = bv.cache[m]
        at_start = enc.int_var(f"Kloop[{b.name}/{m}]")
        for i in range(1, k + 1):
            add(z3.Implies(enc.loop_start[i], at_start == cache[i]))
        delta = cache[k + 1] - at_start
        add(delta >= 0, loop_out[src] == arrived + delta)
        if b.name in enc.steady:  # bounded by the rate check, its cache too (app/core/rates/joins.py)
            add(delta == 0)
        grows = enc.bool_var(f"cache-grows[{b.name}/{m}]")
        add(grows == (delta > 0))
        for i in range(1, k + 1):
            add(z3.Implies(z3.And(grows, inl[i]), cache[i + 1] >= 1))
        grown.append(grows)
    return grown


def _less_drift(x: z3.ArithRef, drift: dict[str, z3.ArithRef], *names: str) -> z3.ArithRef:
    """x minus the drifts of these clocks (x itself under equality: the formula stays as it was)."""
    for name in names:
        if name in drift:
            x = x - drift[name]
    return x
