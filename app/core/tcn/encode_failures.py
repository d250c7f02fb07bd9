"""The failure model of docs/model.md section 7 in the z3 encoding: failing bolts, losses, replays.

`app/core/tcn/encode.py` builds this only when `Network.failures` is set, and calls it at
the few places the rules of section 2 change: a failing bolt neither takes nor emits, a
failure empties its queue, batch and carries; a replaying spout's timing reads its fresh
tuples only. Everything else about failures (the failure clocks, the losses, the split
of a loss into replays, each spout's backlog, the loop conditions of section 7.4) is
stated here.

Per failing bolt j and position i: `fail` (a failure starts at i), `recover` (it comes
back at i), `failed` (after the actions of i), `lost`, `replays[s]`, and the times of
its last recovery (`up_since`, 0 before its first failure) and of its last failure
(`fail_time`), both after the actions of i. Per replaying spout s: `fresh` (the emission
its timing rule reads), `replayed` (emitted = fresh + replayed) and `backlog` (before
the actions of i; one more entry for the state after the last position).
"""

from __future__ import annotations

from fractions import Fraction

import z3

from app.core.failures import UNBOUNDED, FailureModel
from app.core.tcn.encode_deaths import DeathRule, WorkerDeaths, replaying_spouts
from app.core.tcn.encode_vars import EncoderParts
from app.core.tcn.network import Network, only_failing


def position_step(net: Network) -> Fraction | None:
    """The most time between consecutive positions (None: no spout bounds it): every spout emits within
    C_EMIT·a + τa of its last emission and no position lies beyond that without it (docs/model.md 2.1)."""
    return min((s.burst * s.period + s.period * net.tolerance for s in net.spouts), default=None)


def may_fail_within(net: Network, positions: int) -> bool:
    """Whether some bolt can fail at one of positions 0..positions-1 of a run from time 0."""
    step = position_step(net)
    if net.failures is None:
        return False
    return step is None or any((positions - 1) * step >= ttf for ttf in net.failures.min_ttf.values())


def without_failures(net: Network) -> Network:
    """`net` for a bound in which no bolt can fail: the cone of the checked bolts without the bolts kept
    only because their losses would be replayed (docs/model.md 3, cone of influence; a lasso of it, in
    which nothing fails, extends to the whole network). Its document has failures off: its lassos are
    runs of the topology with failures on too, in which nothing happens to fail, but their loops need
    not repeat the time since recovery of a bolt that does not fail in them (docs/model.md 7.4)."""
    return only_failing(net, ())


class FailingBolt:
    def __init__(self, enc: EncoderParts, name: str, n: int, spouts: list[str]) -> None:
        self.fail = [enc.bool_var(f"fail[{name}]{i}") for i in range(n)]
        self.recover = [enc.bool_var(f"recover[{name}]{i}") for i in range(n)]
        self.failed = [enc.bool_var(f"failed[{name}]{i}") for i in range(n)]  # after the actions of i
        self.lost = [enc.int_var(f"lost[{name}]{i}") for i in range(n)]
        self.replays = {s: [enc.int_var(f"r[{name}>{s}]{i}") for i in range(n)] for s in spouts}
        self.up_since = [enc.time_var(f"tU[{name}]{i}") for i in range(n)]
        self.fail_time = [enc.time_var(f"tF[{name}]{i}") for i in range(n)]

    def was_failed(self, i: int, ctx: z3.Context) -> z3.BoolRef:
        return self.failed[i - 1] if i > 0 else z3.BoolVal(False, ctx)

    def down(self, i: int, ctx: z3.Context) -> z3.BoolRef:
        """Not acting at i: a failure starts here, or it is failed and does not recover here."""
        return z3.Or(self.fail[i], z3.And(self.was_failed(i, ctx), z3.Not(self.recover[i])))


class _ReplayingSpout:
    def __init__(self, enc: EncoderParts, name: str, n: int) -> None:
        self.fresh = [enc.int_var(f"F[{name}]{i}") for i in range(n)]
        self.replayed = [enc.int_var(f"RE[{name}]{i}") for i in range(n)]
        self.backlog = [enc.int_var(f"R[{name}]{i}") for i in range(n + 1)]  # before the actions of i


class Failures:
    """The failure variables and constraints of one encoding (docs/model.md section 7)."""

    def __init__(self, enc: EncoderParts, params: FailureModel, deaths: DeathRule | None = None) -> None:
        self.enc, self.params = enc, params
        spouts = {s.name for s in enc.net.spouts}
        replaying = params.replay != "none"
        # consecutive positions are at most `step` apart: every spout emits within C_EMIT·a + τa of its
        # last emission, and no position lies beyond that without it (section 2.1); so t_i ≤ i·step, and
        # a bolt whose min_ttf exceeds the last position's largest time never fails in this encoding
        self.step = position_step(enc.net)
        self.sources: dict[str, dict[str, Fraction | float]] = {
            b.name: ({s: imp for s, imp in params.impact.get(b.name, {}).items() if s in spouts} if replaying else {})
            for b in enc.net.bolts if b.name in params.min_ttf and self._may_fail_by(params.min_ttf[b.name], enc.n - 1)}
        if enc.free_start and self.sources:
            raise ValueError("free_start is not available for networks whose bolts may fail")
        self.bolts = {name: FailingBolt(enc, name, enc.n, list(src)) for name, src in self.sources.items()}
        used = {s for src in self.sources.values() for s in src}
        # worker deaths (docs/model.md 9.5): their bolts are failing bolts above, without replays of their own
        dying = [] if deaths is None else replaying_spouts(enc.net, deaths)
        self.deaths = None if deaths is None else WorkerDeaths(enc, deaths, dying)
        used |= set(dying)
        self.spouts = {s.name: _ReplayingSpout(enc, s.name, enc.n) for s in enc.net.spouts if s.name in used}
        self.backlog_delta: dict[str, z3.ArithRef] = {}  # Δ_s of each replaying spout's backlog over the loop
        self._region: tuple[dict[str, z3.ArithRef], dict[str, z3.BoolRef]] = ({}, {})

    def _may_fail_by(self, min_ttf: Fraction, i: int) -> bool:
        """Whether a first failure at position i is possible (t_i ≥ min_ttf needs i·step ≥ min_ttf; with
        `free_start` position 0 is any state, possibly long after time 0, so always)."""
        return self.enc.free_start or self.step is None or i * self.step >= min_ttf

    # ---- hooks the rules of section 2 call --------------------------------
    def fresh(self, spout: str, i: int) -> z3.ArithRef:
        """The tuples of a spout's emission at i that its timing rule reads."""
        v = self.spouts.get(spout)
        return self.enc.spouts[spout].emitted[i] if v is None else v.fresh[i]

    def emission_bound(self, spout: str, burst: int) -> int:
        """The most tuples a spout emits at once, for the `"dvert"` carry table of its declared streams:
        paced replays at most double an emission; at-once replays are cut at three times the burst (a
        restriction: runs with larger at-once emissions are not searched, see docs/model.md 7.4)."""
        if spout not in self.spouts:
            return burst
        return 2 * burst if self.params.replay == "paced" else 3 * burst

    def bolt(self, name: str) -> FailingBolt | None:
        return self.bolts.get(name)

    def events(self, i: int) -> list[z3.BoolRef]:
        """What may happen at position i besides takes, emits and emissions."""
        own = [x for f in self.bolts.values() for x in (f.fail[i], f.recover[i])]
        return own if self.deaths is None else own + self.deaths.events(i)

    # ---- section 7.2 and 7.3: failures, losses, replays, backlogs --------
    def encode_positions(self) -> None:
        enc, add, ctx, t = self.enc, self.enc.add, self.enc.ctx, self.enc.time
        p = self.params
        for name, f in self.bolts.items():
            v = enc.bolts[name]
            ttf = p.min_ttf[name]
            for i in range(enc.n):
                was_failed = f.was_failed(i, ctx)
                prev_up = f.up_since[i - 1] if i > 0 else t[0]  # t[0] = 0: the clock starts at time 0
                prev_fail = f.fail_time[i - 1] if i > 0 else t[0]
                prev_batch = v.batch[i - 1] if i > 0 else z3.IntVal(0, ctx)
                add(z3.Implies(f.fail[i], z3.And(z3.Not(was_failed), t[i] - prev_up >= enc.duration(ctx, ttf))))
                if not self._may_fail_by(ttf, i):  # implied (see `step`), stated for the solver
                    add(z3.Not(f.fail[i]))
                add(f.failed[i] == z3.Or(f.fail[i], z3.And(was_failed, z3.Not(f.recover[i]))))
                if i == 0:
                    add(z3.Not(f.recover[0]))
                else:
                    down_for = t[i] - prev_fail
                    add(z3.Implies(f.recover[i], z3.And(was_failed, down_for >= enc.duration(ctx, p.min_reboot),
                                                        down_for <= enc.duration(ctx, p.max_reboot))))
                    add(z3.Implies(z3.And(was_failed, z3.Not(f.recover[i])),
                                   down_for < enc.duration(ctx, p.max_reboot)))
                add(f.up_since[i] == z3.If(f.recover[i], t[i], prev_up))
                add(f.fail_time[i] == z3.If(f.fail[i], t[i], prev_fail))
                add(f.lost[i] == z3.If(f.fail[i], v.queue[i] + v.arrivals[i] + prev_batch,
                                       z3.If(z3.And(was_failed, z3.Not(f.recover[i])), v.arrivals[i], 0)))
                self._replay_rule(name, f, i)
        if self.deaths is not None:
            links = {b: (f.fail, f.recover) for b, f in self.bolts.items()}
            self.deaths.encode_positions(links, [self._may_fail_by(self.deaths.rule.min_ttf, i) for i in range(enc.n)])
        for s, r in self.spouts.items():
            emitted = enc.spouts[s].emitted
            add(r.backlog[0] == 0)
            for i in range(enc.n):
                add(emitted[i] == r.fresh[i] + r.replayed[i])
                if p.replay == "paced":  # a replay per fresh tuple at most
                    add(r.replayed[i] == z3.If(r.backlog[i] <= r.fresh[i], r.backlog[i], r.fresh[i]))
                else:  # at once: the whole backlog goes out with the next emission
                    add(r.replayed[i] == z3.If(r.fresh[i] >= 1, r.backlog[i], 0))
                incoming = [f.replays[s][i] for f in self.bolts.values() if s in f.replays]
                incoming += self.deaths.released(s, i) if self.deaths is not None else []
                add(r.backlog[i + 1] == r.backlog[i] - r.replayed[i] + z3.Sum(incoming))

    def _replay_rule(self, name: str, f: FailingBolt, i: int) -> None:
        """Σ_s r_s ≤ lost ≤ Σ_s ⌊r_s·Imp(j, s)⌋ (docs/model.md 7.3), linear: cap_s is an integer with
        den·cap_s ≤ num·r_s, or `lost` itself when Imp is unbounded and r_s ≥ 1."""
        enc, add = self.enc, self.enc.add
        if not f.replays:
            return
        caps = []
        for s, imp in self.sources[name].items():
            r = f.replays[s][i]
            add(r >= 0)
            if imp == UNBOUNDED:
                caps.append(z3.If(r >= 1, f.lost[i], 0))
                continue
            frac = Fraction(imp)
            cap = enc.int_var(f"cap[{name}>{s}]{i}")
            add(cap >= 0, cap * frac.denominator <= r * frac.numerator)
            caps.append(cap)
        add(z3.Sum([f.replays[s][i] for s in f.replays]) <= f.lost[i], f.lost[i] <= z3.Sum(caps))

    # ---- section 7.4: the lasso -------------------------------------------
    def fails_in_loop(self, name: str) -> z3.BoolRef:
        """The bolt is failed (or fails) at some position of the loop."""
        enc, f = self.enc, self.bolts[name]
        return z3.Or([z3.And(enc.in_loop[i], f.failed[i]) for i in range(1, enc.k + 1)])

    def up_readable(self, name: str, i: int) -> z3.BoolRef:
        """The time since the last recovery is a readable clock at l = i while the bolt is up before l
        (docs/model.md 7.4; below min_ttf it must repeat, at or above it both must be)."""
        return z3.Not(self.bolts[name].was_failed(i, self.enc.ctx))

    def loop_same(self, i: int, region: bool) -> list[z3.BoolRef]:
        """What must hold at k+1 for l = i (docs/model.md 7.4): the same failure actions, losses and
        replays, the same up/failed state before them, and the failure clocks (equal, or with `region`
        bound to the clocks at l named by `region_clocks`, for the region constraints)."""
        enc, ctx, t, k = self.enc, self.enc.ctx, self.enc.time, self.enc.k
        same: list[z3.BoolRef] = []
        for name, f in self.bolts.items():
            same += [f.fail[k + 1] == f.fail[i], f.recover[k + 1] == f.recover[i], f.failed[k] == f.failed[i - 1],
                     f.lost[k + 1] == f.lost[i]]
            same += [r[k + 1] == r[i] for r in f.replays.values()]
            up_l, up_e = t[i] - f.up_since[i - 1], t[k + 1] - f.up_since[k]
            down_l, down_e = t[i] - f.fail_time[i - 1], t[k + 1] - f.fail_time[k]
            if region:
                at_l, readable = self._region
                same += [at_l[f"up:{name}"] == up_l, at_l[f"down:{name}"] == down_l,
                         readable[f"up:{name}"] == self.up_readable(name, i),
                         readable[f"down:{name}"] == f.failed[i - 1]]
                continue
            ttf = enc.duration(ctx, self.params.min_ttf[name])
            same += [z3.Implies(self.up_readable(name, i),
                                z3.Or(z3.And(up_l >= ttf, up_e >= ttf), up_l == up_e)),
                     z3.Implies(f.failed[i - 1], down_l == down_e)]
        for r in self.spouts.values():
            same.append(r.fresh[k + 1] == r.fresh[i])
        return same + (self.deaths.loop_same(i) if self.deaths is not None else [])

    def region_clocks(self, at_l: dict[str, z3.ArithRef], readable: dict[str, z3.BoolRef]) -> None:
        """Name the failure clocks at l for the region constraints (docs/model.md section 3 item 2)."""
        enc = self.enc
        mine: tuple[dict[str, z3.ArithRef], dict[str, z3.BoolRef]] = ({}, {})
        for name in self.bolts:
            for kind in ("up", "down"):
                at_l[f"{kind}:{name}"] = mine[0][f"{kind}:{name}"] = enc.time_var(f"c{kind}[{name}]")
                readable[f"{kind}:{name}"] = mine[1][f"{kind}:{name}"] = enc.bool_var(f"r{kind}[{name}]")
        self._region = mine

    def region_ends(self) -> dict[str, z3.ArithRef]:
        t, k = self.enc.time, self.enc.k
        ends: dict[str, z3.ArithRef] = {}
        for name, f in self.bolts.items():
            ends[f"up:{name}"] = t[k + 1] - f.up_since[k]
            ends[f"down:{name}"] = t[k + 1] - f.fail_time[k]
        return ends

    def clock_limits(self) -> tuple[list[Fraction], dict[str, Fraction]]:
        """The failure constants and each failure clock's largest constant."""
        p = self.params
        constants = [p.min_reboot, p.max_reboot, *(p.min_ttf[name] for name in self.bolts)]
        limits: dict[str, Fraction] = {}
        for name in self.bolts:
            limits[f"up:{name}"] = p.min_ttf[name]
            limits[f"down:{name}"] = p.max_reboot
        return constants, limits

    def encode_loop(self) -> None:
        """Backlogs across the loop: Δ_s ≥ 0; a growing paced backlog replays n at every emission of the
        loop (R ≥ n there); an at-once backlog repeats (it empties at every emission)."""
        enc, add, k = self.enc, self.enc.add, self.enc.k
        for s, r in self.spouts.items():
            at_start = enc.int_var(f"Rloop[{s}]")
            for i in range(1, k + 1):
                add(z3.Implies(enc.loop_start[i], at_start == r.backlog[i]))
            grown = self.backlog_delta[s] = r.backlog[k + 1] - at_start
            if self.params.replay == "paced":
                add(grown >= 0)
                for i in range(1, k + 1):
                    add(z3.Implies(z3.And(grown > 0, enc.in_loop[i]), r.backlog[i] >= r.fresh[i]))
            else:
                add(grown == 0)
