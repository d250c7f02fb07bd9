"""Section 2 of the semantics as constraints (docs/model.md): the runs of the timed counter network at
every position of an encoding, the spouts (2.1), the bolts' TAKE and EMIT (2.2, 2.3), the idle rule,
the symmetry of interchangeable spouts and no empty position, then the failures' (section 7). Called
by app/core/tcn/encode.py's `Encoding`; every term is made in the order measured in bench/RESULTS.md
(z3's search depends on it)."""

from __future__ import annotations

import z3

from app.core.errors import Cancelled
from app.core.tcn.encode_emit import emit_rule, free_carry
from app.core.tcn.encode_failures import FailingBolt
from app.core.tcn.encode_state import Encoder
from app.core.tcn.encode_vars import BoltVars
from app.core.tcn.network import BoltParams, SpoutParams


def encode_positions(enc: Encoder) -> None:
    """Section 2 at every position, in the order measured in bench/RESULTS.md (z3's search depends on
    the order terms are made in): the times, the spouts (2.1), the bolts (2.2, 2.3), the symmetry of
    interchangeable spouts, no empty position, then the failures (section 7)."""
    add, t = enc.add, enc.time
    add(t[0] == 0)
    for i in range(1, enc.n):
        if not i & 63 and enc.cancelled():
            raise Cancelled
        add(t[i] > t[i - 1])
    for s in enc.net.spouts:
        _spout(enc, s)
    alive: list[z3.ArithRef] = []  # the last carry total made (see `_bolt`)
    for b in enc.net.bolts:
        _bolt(enc, b, alive)
    _symmetry(enc)
    _events(enc)
    if enc.failures is not None:
        enc.failures.encode_positions()

def _spout(enc: Encoder, s: SpoutParams) -> None:
    """Section 2.1: emit at 0, then each emission n·a ± τ·a after the previous one (the fresh tuples,
    with replays: section 7.3); a declared stream applies the emit rule to the emissions."""
    add, ctx, t, fails = enc.add, enc.ctx, enc.time, enc.failures
    deaths = None if fails is None else fails.deaths
    v = enc.spouts[s.name]
    a, jitter = s.period, s.period * enc.net.tolerance
    # the emission its timing reads: with replays (section 7.3) the fresh tuples only
    fresh = v.emitted if fails is None else [fails.fresh(s.name, i) for i in range(enc.n)]
    for i in range(enc.n):
        if enc.cancelled():
            raise Cancelled
        add(fresh[i] >= 0, fresh[i] <= s.burst)
        if i == 0 and enc.free_start:
            add(v.last_size[0] >= 1, v.last_size[0] <= s.burst, v.last_time[0] <= t[0],
                t[0] - v.last_time[0] < v.last_size[0] * enc.duration(ctx, a) + enc.duration(ctx, jitter))
            continue
        if i == 0:
            add(v.emitted[0] >= 1, v.last_size[0] == fresh[0], v.last_time[0] == 0)
            continue
        gap = t[i] - v.last_time[i - 1]
        due = v.last_size[i - 1] * enc.duration(ctx, a)
        timed = z3.If(v.emits(i),
                      z3.And(gap >= due - enc.duration(ctx, jitter), gap <= due + enc.duration(ctx, jitter),
                             v.last_size[i] == fresh[i], v.last_time[i] == t[i]),
                      z3.And(gap < due + enc.duration(ctx, jitter),
                             v.last_size[i] == v.last_size[i - 1], v.last_time[i] == v.last_time[i - 1]))
        quiet = None if deaths is None else deaths.quiet(s.name, i)
        # docs/model.md 9.5: while a worker running its executors is down it emits nothing, timed from the restart
        add(timed if quiet is None else z3.If(quiet[0], z3.And(
            z3.Not(v.emits(i)), v.last_size[i] == z3.If(quiet[1], 1, v.last_size[i - 1]),
            v.last_time[i] == z3.If(quiet[1], t[i], v.last_time[i - 1])), timed))
    for st in s.streams:  # a declared stream: the emit rule applied to the spout's emissions
        if st.silent:
            continue
        es, kept = v.stream_emitted[st.name], v.stream_buffer[st.name]
        for i in range(enc.n):
            if i == 0 and enc.free_start:
                add(es[0] >= 0)
                free_carry(enc.add, enc.net.emission, st.sigma, False, kept[0])
                continue
            before = kept[i - 1] if i > 0 else z3.IntVal(0, ctx)
            add(z3.Implies(z3.Not(v.emits(i)), z3.And(es[i] == 0, kept[i] == before)))
            most = s.burst if fails is None else fails.emission_bound(s.name, s.burst)
            for guard, rule in emit_rule(enc.net.emission, st.sigma, most, before + v.emitted[i], before,
                                         v.emitted[i], es[i], kept[i]):
                add(z3.Implies(v.emits(i) if guard is None else z3.And(v.emits(i), guard), rule))

def _bolt(enc: Encoder, b: BoltParams, alive: list[z3.ArithRef]) -> None:
    """Section 2.2 and 2.3 for one bolt at every position: arrivals, TAKE and EMIT with the processing
    time (`_take_emit`), each output stream's EMIT, the idle rule.

    `alive` holds the last carry total made, from one bolt to the next, until the next is made: it
    lives exactly as long as when all bolts were one loop, since z3 reuses a freed term's id and its
    search depends on the ids (the split kept every assertion and its id)."""
    add, ctx, t, idle = enc.add, enc.ctx, enc.time, enc.net.max_idle
    bv = enc.bolts[b.name]
    f = None if enc.failures is None else enc.failures.bolt(b.name)  # its failure variables, if it may fail
    if not enc.free_start:
        add(bv.queue[0] == enc.net.init_queue, *(cache[0] == 0 for cache in bv.cache))
    elif bv.cache:  # an arbitrary start still has some branch's cache empty (the min takes it all)
        add(z3.Or([cache[0] == 0 for cache in bv.cache]), *(cache[0] >= 0 for cache in bv.cache))
    for i in range(enc.n):
        if enc.cancelled():
            raise Cancelled
        if b.join:
            bv.arrivals.append(_completed(enc, b, bv, i))
        else:
            arrivals = [_emitted(enc, src, stream, i) for src, stream in b.sources]
            bv.arrivals.append(z3.Sum(arrivals) if arrivals else z3.IntVal(0, ctx))
        cut = None if enc.failures is None or enc.failures.deaths is None else enc.failures.deaths.cut(b.name, i)
        avail = bv.queue[i] + bv.arrivals[i] - (cut[0] if cut is not None else 0)  # 9.5: part of a bolt
        add(bv.queue[i] >= 0)
        if i == 0 and enc.free_start:
            _free_bolt_start(enc, b, bv)
            continue
        was_processing = bv.processing[i - 1] if i > 0 else z3.BoolVal(False, ctx)
        was_waiting = bv.waiting(i - 1) if i > 0 else z3.BoolVal(False, ctx)
        prev_batch = bv.batch[i - 1] if i > 0 else z3.IntVal(0, ctx)
        _take_emit(enc, b, bv, f, i, avail, was_processing, prev_batch, None if cut is None else cut[1])
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
            for guard, rule in emit_rule(enc.net.emission, st.sigma, b.take_max if b.timer is None else None, total,
                                         before, prev_batch, e, keep):
                add(z3.Implies(emit if guard is None else z3.And(emit, guard), rule))
        # idle rule: waiting tuples are taken within max_idle of becoming available; a duration window's (section
        # 10.3) within G of its last run (the take of the evaluation they arrived in) or of their arrival while idle
        waiting = bv.waiting(i)
        if b.timer is None:
            add(z3.Implies(z3.And(waiting, z3.Or(emit, z3.Not(was_waiting))), bv.waiting_since[i] == t[i]))
        else:
            start = bv.take_time[i - 1] if i > 0 else t[0]
            add(z3.Implies(z3.And(waiting, z3.Not(was_waiting)),
                           bv.waiting_since[i] == z3.If(was_processing, start, t[i])))
        limit = enc.duration(ctx, idle if b.timer is None else b.timer)
        if i > 0:
            add(z3.Implies(z3.And(waiting, was_waiting) if b.timer is not None else
                           z3.And(waiting, z3.Not(emit), was_waiting),
                           bv.waiting_since[i] == bv.waiting_since[i - 1]))
            add(z3.Implies(was_waiting, t[i] - bv.waiting_since[i - 1] <= limit))
        add(z3.Implies(waiting, t[i] - bv.waiting_since[i] < limit))
        add(z3.Implies(z3.Not(waiting), bv.waiting_since[i] == t[i]))

def _completed(enc: Encoder, b: BoltParams, bv: BoltVars, i: int) -> z3.ArithRef:
    """Section 11 at position i: a join's arrivals are the messages all its branches delivered, the least of each
    branch's cache plus what it delivers here; each branch keeps the rest in its cache."""
    done = enc.int_var(f"C[{b.name}]{i}")
    totals = [bv.cache[m][i] + _emitted(enc, src, stream, i) for m, (src, stream) in enumerate(b.sources)]
    for m, total in enumerate(totals):
        enc.add(done <= total, bv.cache[m][i + 1] == total - done)
    enc.add(z3.Or([done == total for total in totals]))
    return done


def _take_emit(enc: Encoder, b: BoltParams, bv: BoltVars, f: FailingBolt | None, i: int, avail: z3.ArithRef,
               was_processing: z3.BoolRef, prev_batch: z3.ArithRef, cap: z3.ArithRef | None = None) -> None:
    """Section 2.2 at position i (`avail`: queue + arrivals): TAKE only when idle (or right after its
    own EMIT), EMIT only when processing, the batch and the queue, the processing time; with failures
    (7.2) a failed bolt neither takes nor emits and loses its tuples; `cap`: the most a bolt a dead worker runs part
    of may take (docs/model.md 9.5)."""
    add, ctx, t, tau = enc.add, enc.ctx, enc.time, enc.net.tolerance
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
    most = b.take_max if cap is None else cap
    add(z3.If(take,
              z3.And(bv.batch[i] >= 1, bv.batch[i] == avail,  # a duration window's run takes all (section 10.3)
                     bv.take_time[i] == t[i], bv.queue[i + 1] == 0) if b.timer is not None else
              z3.And(bv.batch[i] >= 1, bv.batch[i] <= most, bv.batch[i] <= avail,
                     z3.Or(bv.batch[i] == most, bv.batch[i] == avail),
                     bv.take_time[i] == t[i], bv.queue[i + 1] == avail - bv.batch[i]) if b.slide == 1 else
              z3.And(bv.batch[i] >= b.slide, bv.batch[i] <= b.take_max, bv.batch[i] <= avail,
                     bv.batch[i] % b.slide == 0,  # a count window: whole slides (docs/model.md section 10)
                     z3.Or(bv.batch[i] == b.take_max, avail - bv.batch[i] < b.slide),
                     bv.take_time[i] == t[i], bv.queue[i + 1] == avail - bv.batch[i]),
              z3.And(bv.queue[i + 1] == after,
                     bv.take_time[i] == (bv.take_time[i - 1] if i > 0 else t[0]))))
    add(z3.Implies(stays, bv.batch[i] == prev_batch))
    add(z3.Implies(z3.Not(bv.processing[i]), bv.batch[i] == 0))
    if i > 0:
        busy = t[i] - bv.take_time[i - 1]
        add(z3.Implies(emit, z3.And(busy >= enc.duration(ctx, lo), busy <= enc.duration(ctx, hi))))
        add(z3.Implies(stays, busy < enc.duration(ctx, hi)))
        if f is not None:  # a failure at or before the deadline ends the phase (section 7.2)
            add(z3.Implies(z3.And(was_processing, f.fail[i]), busy <= enc.duration(ctx, hi)))
    else:
        add(z3.Not(emit))

def _symmetry(enc: Encoder) -> None:
    """Interchangeable spouts (same rate, burst and subscribers): any run with their roles swapped is a
    run too, so the first may be taken to emit at least as many tuples."""
    net = enc.net
    subscribers = {s.name: tuple(sorted(b.name for b in net.bolts if (s.name, "default") in b.sources))
                   for s in net.spouts}
    for x, y in zip(net.spouts, net.spouts[1:], strict=False):
        if (x.period, x.burst, subscribers[x.name]) == (y.period, y.burst, subscribers[y.name]) \
                and not x.streams and not y.streams:
            enc.add(z3.Sum(enc.spouts[x.name].emitted) >= z3.Sum(enc.spouts[y.name].emitted))

def _events(enc: Encoder) -> None:
    """No empty positions: removing them loses no run."""
    net, fails = enc.net, enc.failures
    for i in range(1, enc.n if not enc.free_start else 1):
        if not i & 63 and enc.cancelled():
            raise Cancelled
        events = [enc.spouts[s.name].emits(i) for s in net.spouts]
        events += [x for b in net.bolts for x in (enc.bolts[b.name].take[i], enc.bolts[b.name].emit[i])]
        enc.add(z3.Or(events if fails is None else events + fails.events(i)))

def _free_bolt_start(enc: Encoder, b: BoltParams, v: BoltVars) -> None:
    """Position 0 of a loop-only encoding: any state a run could be in, no action."""
    add, ctx, t, net = enc.add, enc.ctx, enc.time, enc.net
    hi = b.alpha * (1 + net.tolerance)
    add(z3.Not(v.take[0]), z3.Not(v.emit[0]), v.emitted[0] == 0, v.queue[1] == v.queue[0] + v.arrivals[0])
    whole = () if b.slide == 1 else (v.batch[0] % b.slide == 0,)  # a count window: whole slides (section 10)
    most = () if b.timer is not None else (v.batch[0] <= b.take_max,)  # a duration window: any batch (10.3)
    add(z3.If(v.processing[0],
              z3.And(v.batch[0] >= b.slide, *most, v.take_time[0] <= t[0],
                     t[0] - v.take_time[0] < enc.duration(ctx, hi), *whole),
              z3.And(v.batch[0] == 0, v.take_time[0] == t[0])))
    for st in b.streams:
        free_carry(enc.add, enc.net.emission, st.sigma, st.silent, v.stream_buffer[st.name][0])
        if st.name != "default":
            add(v.stream_emitted[st.name][0] == 0)
    add(z3.If(v.waiting(0),
              z3.And(v.waiting_since[0] <= t[0], t[0] - v.waiting_since[0]
                     < enc.duration(ctx, net.max_idle if b.timer is None else b.timer)),
              v.waiting_since[0] == t[0]))

def _emitted(enc: Encoder, name: str, stream: str, i: int) -> z3.ArithRef:
    """Tuples component `name` emits on `stream` at position i."""
    if name in enc.spouts:
        v = enc.spouts[name]
        if stream == "default":
            return v.emitted[i]
        return v.stream_emitted[stream][i] if stream in v.stream_emitted else z3.IntVal(0, enc.ctx)
    return enc.bolts[name].stream_emitted[stream][i]
