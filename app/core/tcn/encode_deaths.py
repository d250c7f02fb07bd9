"""Worker deaths in the z3 encoding (docs/model.md 9.5), the rule the simulation (app/core/tcn/simulate_deaths.py)
and the certifier (app/core/tcn/check/certify_deaths.py) play, stated as constraints.

The workers are those the simulation plays too (`chosen_workers`). The bolts they run whole are failing bolts of
app/core/tcn/encode_failures.py with the worker's `storm.worker_min_ttf` and reboot bounds and no replays of their
own (`death_network`): this module links their `fail`/`recover` to the worker's `death`/`restart`, so they fail and
recover with it on its clock. Per worker w and position i (after the actions of i): `death`, `restart`, `down`, the
time of its last restart (`up_since`, time 0 at first) and of its last death (`died`), the trees its death breaks
per spout (`replays`, at a death only), whether they are held back (`hold`, with `waiting` per spout) and their
`release` at the first position at or after the death plus the message timeout T, where they join the spouts'
backlogs (section 7.3's backlog rule, which app/core/tcn/encode_failures.py states). A bolt a worker runs part of
loses its dead executors' share while the worker is dead and takes at most p − k then (`cut`, which
app/core/tcn/encode_runs.py's take rule reads); a spout it runs executors of emits nothing while it is down and is
timed from the restart (`quiet`). No z3 object leaves the encoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import z3

from app.core.failures import FailureModel
from app.core.tcn.encode_vars import EncoderParts
from app.core.tcn.network import Network
from app.core.tcn.simulate_deaths import chosen_workers, reaches
from app.core.workers import WorkerModel


@dataclass(frozen=True)
class DeathRule:
    """The worker deaths one encoding plays: per worker its trace name (`w<index>`), the bolts it runs and whether
    it runs every acker; the time between a restart (or time 0) and a death, the reboot bounds, T, and the replay
    mode (`"none"` without acking)."""

    workers: tuple[tuple[str, tuple[str, ...], bool], ...]
    min_ttf: Fraction
    min_reboot: Fraction
    max_reboot: Fraction
    timeout: Fraction
    mode: str
    partial: dict[str, tuple[tuple[str, int, int], ...]] = field(default_factory=dict)  # per worker: (bolt, k, p)
    spouts: dict[str, tuple[tuple[str, int, int], ...]] = field(default_factory=dict)  # per worker: (spout, k, e)

    def describe(self) -> str:
        return ", ".join(f"worker {name}" for name, _, _ in self.workers)


def death_rule(net: Network, model: WorkerModel) -> DeathRule | None:
    """The deaths an encoding of `net` (its cone, section 7's failures off) plays; None when no worker may die in a
    trace of it (docs/model.md 9.5)."""
    playable = chosen_workers(net, model)
    if not playable or net.failures is not None:
        return None
    mode = net.topology.settings.replay if model.replays else "none"
    return DeathRule(tuple((f"w{p.index}", p.whole, p.acker) for p in playable), model.min_ttf,
                     model.min_restart, model.max_restart, model.timeout, mode,
                     {f"w{p.index}": p.partial for p in playable if p.partial},
                     {f"w{p.index}": p.spouts for p in playable if p.spouts})


def death_network(net: Network, rule: DeathRule) -> Network:
    """`net` with its dying workers' bolts as failing bolts on the worker's clock, without replays of their own (their
    worker's death holds them): the failure model the encoder reads. The document is unchanged (failures off)."""
    bolts = {b for _, held, _ in rule.workers for b in held}
    model = FailureModel(dict.fromkeys(bolts, rule.min_ttf), rule.min_reboot, rule.max_reboot, rule.mode, {})
    return Network(net.topology, net.spouts, net.bolts, net.checked, net.tolerance, net.max_idle, net.init_queue,
                   net.emission, list(net.kept), list(net.dropped), model)


def replaying_spouts(net: Network, rule: DeathRule) -> list[str]:
    """The spouts whose trees a death may break (none without acking)."""
    if rule.mode == "none":
        return []
    reach = reaches(net)
    counted = {b for name, held, acker in rule.workers
               for b in (reach if acker else (*held, *(j for j, _, _ in rule.partial.get(name, ()))))}
    own = {s for parts in rule.spouts.values() for s, _, _ in parts}
    return [s.name for s in net.spouts if s.name in own or any(s.name in reach[b] for b in counted)]


class _Worker:
    def __init__(self, enc: EncoderParts, name: str, n: int, spouts: list[str]) -> None:
        self.death = [enc.bool_var(f"death[{name}]{i}") for i in range(n)]
        self.restart = [enc.bool_var(f"restart[{name}]{i}") for i in range(n)]
        self.down = [enc.bool_var(f"down[{name}]{i}") for i in range(n)]  # after the actions of i
        self.up_since = [enc.time_var(f"tWU[{name}]{i}") for i in range(n)]
        self.died = [enc.time_var(f"tWD[{name}]{i}") for i in range(n)]
        self.hold = [enc.bool_var(f"hold[{name}]{i}") for i in range(n)]  # replays held back after i
        self.release = [enc.bool_var(f"release[{name}]{i}") for i in range(n)]
        self.replays = {s: [enc.int_var(f"rw[{name}>{s}]{i}") for i in range(n)] for s in spouts}
        self.waiting = {s: [enc.int_var(f"ww[{name}>{s}]{i}") for i in range(n)] for s in spouts}


class WorkerDeaths:
    """The worker variables and constraints of one encoding (docs/model.md 9.5); `Failures` holds it and calls it."""

    def __init__(self, enc: EncoderParts, rule: DeathRule, spouts: list[str]) -> None:
        self.enc, self.rule, self.spouts = enc, rule, spouts
        self.reach = reaches(enc.net)
        self.workers = {name: _Worker(enc, name, enc.n, spouts) for name, _, _ in rule.workers}
        # a bolt a worker runs part of (one worker at most: `chosen_workers`): its worker, k, p, and per position
        # what it loses and its share counter k·X mod p after the position
        self.parts = {b: (w, k, p, [enc.int_var(f"lostW[{b}]{i}") for i in range(enc.n)],
                          [enc.int_var(f"shareW[{b}]{i}") for i in range(enc.n)])
                      for w, parts in rule.partial.items() for b, k, p in parts}
        self.quiet_of = {sp: w for w, parts in rule.spouts.items() for sp, _, _ in parts}

    def _out(self, w: _Worker, i: int) -> z3.BoolRef:
        """The worker is dead at position i: it dies here, or was down and does not restart here."""
        was = w.down[i - 1] if i > 0 else z3.BoolVal(False, self.enc.ctx)
        return z3.Or(w.death[i], z3.And(was, z3.Not(w.restart[i])))

    def cut(self, bolt: str, i: int) -> tuple[z3.ArithRef, z3.ArithRef] | None:
        """A bolt a dying worker runs part of, at position i: what it loses and the most it may take (None: no such
        bolt)."""
        if bolt not in self.parts:
            return None
        w, k, p, lost, _ = self.parts[bolt]
        return lost[i], z3.If(self._out(self.workers[w], i), p - k, p)

    def quiet(self, spout: str, i: int) -> tuple[z3.BoolRef, z3.BoolRef] | None:
        """A spout a dying worker runs executors of, at position i > 0: whether it is down before i (the spout emits
        nothing), and whether it restarts at i (the spout's timing restarts there); None for another spout."""
        if spout not in self.quiet_of or i == 0:
            return None
        w = self.workers[self.quiet_of[spout]]
        return w.down[i - 1], w.restart[i]

    def cut_in_loop(self, bolt: str) -> z3.BoolRef:
        """The bolt loses tuples (its worker is dead) at some position of the loop."""
        w, enc = self.workers[self.parts[bolt][0]], self.enc
        return z3.Or([z3.And(enc.in_loop[i], self._out(w, i)) for i in range(1, enc.k + 1)])

    def _partial(self, i: int) -> None:
        """Section 9.5's part of a bolt at position i: ⌈k·X/p⌉ lost since the death (X what reached it since), kept as
        the counter k·X mod p, and a death only when its batch in progress fits on the executors left (or ends here)."""
        enc, add, ctx = self.enc, self.enc.add, self.enc.ctx
        zero = z3.IntVal(0, ctx)
        for b, (name, k, p, lost, share) in self.parts.items():
            w, v = self.workers[name], enc.bolts[b]
            out = self._out(w, i)
            before = z3.If(w.death[i], zero, share[i - 1]) if i > 0 else zero
            x = z3.If(w.death[i], k * (v.queue[i] + v.arrivals[i]), z3.If(out, k * v.arrivals[i], zero))
            q, r = enc.int_var(f"qW[{b}]{i}"), enc.int_var(f"rW[{b}]{i}")
            add(before + x == p * q + r, r >= 0, r < p, q >= 0)
            add(lost[i] == z3.If(out, q + z3.If(r > 0, 1, 0) - z3.If(before > 0, 1, 0), zero))
            add(share[i] == z3.If(out, r, zero))
            if i > 0:
                add(z3.Implies(z3.And(w.death[i], v.processing[i - 1], z3.Not(v.emit[i])), v.batch[i - 1] <= p - k))

    def events(self, i: int) -> list[z3.BoolRef]:
        return [x for w in self.workers.values() for x in (w.death[i], w.restart[i])]

    def released(self, spout: str, i: int) -> list[z3.ArithRef]:
        """What the workers' releases at i add to the spout's backlog (after i)."""
        zero = z3.IntVal(0, self.enc.ctx)
        return [z3.If(w.release[i], w.waiting[spout][i - 1], zero) for w in self.workers.values()
                if spout in w.waiting and i > 0]

    def encode_positions(self, bolts: dict[str, tuple[list[z3.BoolRef], list[z3.BoolRef]]], may_die: list[bool]
                         ) -> None:
        """Section 9.5 at every position; `bolts`: each failing bolt's `fail` and `recover` per position;
        `may_die[i]`: whether a death at i is possible at all (its bolts are failing bolts of the encoding only
        then)."""
        enc, add, ctx, t, r = self.enc, self.enc.add, self.enc.ctx, self.enc.time, self.rule
        false, zero = z3.BoolVal(False, ctx), z3.IntVal(0, ctx)
        ttf, reboot = enc.duration(ctx, r.min_ttf), (enc.duration(ctx, r.min_reboot), enc.duration(ctx, r.max_reboot))
        timeout = enc.duration(ctx, r.timeout)
        for name, held, acker in r.workers:
            w = self.workers[name]
            for i in range(enc.n):
                if name == r.workers[0][0]:  # (once per position)
                    self._partial(i)
                down, hold = (w.down[i - 1], w.hold[i - 1]) if i > 0 else (false, false)
                up, died = (w.up_since[i - 1], w.died[i - 1]) if i > 0 else (t[0], t[0])
                add(w.release[i] == z3.And(hold, t[i] - died >= timeout))
                if i == 0:
                    add(z3.Not(w.restart[0]))
                else:
                    add(z3.Implies(w.restart[i], z3.And(down, t[i] - died >= reboot[0], t[i] - died <= reboot[1])))
                    add(z3.Implies(z3.And(down, z3.Not(w.restart[i])), t[i] - died < reboot[1]))
                add(z3.Implies(w.death[i], z3.And(z3.Not(down), t[i] - up >= ttf,
                                                  z3.Not(z3.And(hold, z3.Not(w.release[i]))))))
                if not may_die[i]:
                    add(z3.Not(w.death[i]))
                add(w.down[i] == z3.Or(w.death[i], z3.And(down, z3.Not(w.restart[i]))))
                add(w.up_since[i] == z3.If(w.restart[i], t[i], up), w.died[i] == z3.If(w.death[i], t[i], died))
                for b in held:  # (a bolt that cannot fail by the last position is no failing bolt: nor may w die)
                    if b in bolts:
                        add(bolts[b][0][i] == w.death[i], bolts[b][1][i] == w.restart[i])
                self._replays(w, name, acker, held, i)
                gave = z3.Sum([w.replays[s][i] for s in self.spouts]) if self.spouts else zero
                add(w.hold[i] == z3.If(w.death[i], gave > 0, z3.And(hold, z3.Not(w.release[i]))))
                for s in self.spouts:
                    before = w.waiting[s][i - 1] if i > 0 else zero
                    add(w.waiting[s][i] == z3.If(w.death[i], w.replays[s][i], z3.If(w.release[i], 0, before)))

    def _replays(self, w: _Worker, name: str, acker: bool, held: tuple[str, ...], i: int) -> None:
        """A death's replays (docs/model.md 9.5): spout s replays at most min(F_s, c_s + ⌊k_s·F_s/e_s⌋), F_s the
        tuples in flight at the death (queue, arrivals, batch in progress) in every bolt its trees reach, c_s those in
        the counted bolts its trees reach (every bolt when the worker runs every acker, else its whole bolts, and what
        a bolt it runs part of loses here), k_s of its e_s executors in the worker; all together at most c plus the
        shares; none without a death."""
        enc, add, ctx = self.enc, self.enc.add, self.enc.ctx
        zero = z3.IntVal(0, ctx)

        def flight(b: str) -> z3.ArithRef:
            v = enc.bolts[b]
            return v.queue[i] + v.arrivals[i] + (v.batch[i - 1] if i > 0 else zero)
        counted = {b: flight(b) for b in self.reach} if acker else {b: flight(b) for b in held} | {
            b: self.parts[b][3][i] for b, _, _ in self.rule.partial.get(name, ())}
        own = {sp: (k, e) for sp, k, e in self.rule.spouts.get(name, ())}
        shares = []
        for s in self.spouts:
            rs = w.replays[s][i]
            f_s = z3.Sum([flight(b) for b in self.reach if s in self.reach[b]] or [zero])
            mine = z3.Sum([n for b, n in counted.items() if s in self.reach[b]] or [zero])
            add(rs >= 0, z3.Implies(z3.Not(w.death[i]), rs == 0), rs <= f_s)
            if s in own:
                k, e = own[s]
                share = enc.int_var(f"shW[{name}>{s}]{i}")
                add(share >= 0, e * share <= k * f_s)
                shares.append(share)
                mine = mine + share
            add(rs <= mine)
        if self.spouts:
            add(z3.Sum([w.replays[s][i] for s in self.spouts]) <= z3.Sum([*counted.values(), *shares] or [zero]))

    def loop_same(self, i: int) -> list[z3.BoolRef]:
        """What must hold at k+1 for l = i: the same actions and replays, the same state before them (down, the
        replays held back) and equal clocks where readable (since the restart below worker_min_ttf, since the death
        while down or holding replays back)."""
        enc, ctx, t, k = self.enc, self.enc.ctx, self.enc.time, self.enc.k
        ttf = enc.duration(ctx, self.rule.min_ttf)
        same: list[z3.BoolRef] = []
        for w in self.workers.values():
            same += [w.death[k + 1] == w.death[i], w.restart[k + 1] == w.restart[i],
                     w.release[k + 1] == w.release[i], w.down[k] == w.down[i - 1], w.hold[k] == w.hold[i - 1]]
            for s in self.spouts:
                same += [w.replays[s][k + 1] == w.replays[s][i], w.waiting[s][k] == w.waiting[s][i - 1]]
            up_l, up_e = t[i] - w.up_since[i - 1], t[k + 1] - w.up_since[k]
            same += [z3.Implies(z3.Not(w.down[i - 1]), z3.Or(z3.And(up_l >= ttf, up_e >= ttf), up_l == up_e)),
                     z3.Implies(z3.Or(w.down[i - 1], w.hold[i - 1]),
                                t[i] - w.died[i - 1] == t[k + 1] - w.died[k])]
        for _, _, _, lost, share in self.parts.values():
            same += [lost[k + 1] == lost[i], share[k] == share[i - 1]]
        return same

    def partial_lost(self, bolt: str, i: int, num: Callable[[z3.ArithRef], Fraction]) -> int:
        """What a bolt a dying worker runs part of loses at position i (0 for another bolt), for the trace."""
        return int(num(self.parts[bolt][3][i])) if bolt in self.parts else 0

    def records(self, i: int, num: Callable[[z3.ArithRef], Fraction], flag: Callable[[z3.BoolRef], bool]
                ) -> dict[str, dict[str, Any]]:
        """The trace's worker records at position i (docs/trace-format.md)."""
        out: dict[str, dict[str, Any]] = {}
        for name, w in self.workers.items():
            death, restart, release = flag(w.death[i]), flag(w.restart[i]), flag(w.release[i])
            if not (death or restart or release):
                continue
            rec: dict[str, Any] = {"death": death, "restart": restart}
            replays = {s: int(num(w.replays[s][i])) for s in self.spouts if death and num(w.replays[s][i]) > 0}
            released = {s: int(num(w.waiting[s][i - 1])) for s in self.spouts
                        if release and i > 0 and num(w.waiting[s][i - 1]) > 0}
            rec["replays"], rec["released"] = replays or None, released or None
            out[name] = rec
        return out
