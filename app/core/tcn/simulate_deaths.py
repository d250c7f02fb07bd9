"""Worker deaths in a simulated run (docs/model.md 9.5): which workers the simulation lets die, and their
deaths, restarts and replays position by position (app/core/tcn/simulate.py calls `Deaths` at each position).

A worker the simulation plays is one of `chosen_workers` (the document's `storm.assignment` says what each runs). It
dies as early as the rules let it, every `up` after it is back (at least `storm.worker_min_ttf`, and no earlier than
its last death's replays are out), and is back `min_reboot_time` after its death. The bolts it runs whole fail and
recover with it: they are in the simulation's failure plan with the worker's durations, so their clocks are the
worker's. A bolt it runs part of loses its dead executors' share and takes on the executors left (`Deaths.cut`; a
death waits for a batch that does not fit on them, `Deaths.decide`); a spout it runs executors of emits nothing until
the restart, then one period after it. A death's replays are the broken trees, at most the tuples in flight at the
death where it breaks trees and its spout executors' share of their trees' (`Deaths._replays`), and at most `most`
(a constant, so that a loop can repeat once a growing queue holds that many); they join the spouts' backlogs at
the death plus the message timeout. No z3 and nothing of the certifier here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from app.core.tcn.network import Network
from app.core.topology import Topology
from app.core.workers import ACKER, WorkerModel, ackers_of, executors_of

NEVER = 1 << 62  # a time on the grid no run reaches (a spout's next emission while its worker is down)


@dataclass(frozen=True)
class DyingWorker:
    """One worker the simulation lets die: its trace name (`w<index>`), the bolts it runs whole, whether it runs every
    acker, its durations in seconds (`up` from time 0 or a restart to its death, `down` its restart), the bolts it runs
    part of and the spouts it runs executors of, each with (k, of)."""

    name: str
    bolts: tuple[str, ...]
    acker: bool
    up: Fraction
    down: Fraction
    partial: tuple[tuple[str, int, int], ...] = ()
    spouts: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class DeathPlan:
    """The worker deaths of one simulation: the dying workers, the message timeout T, the replay mode (`"none"`
    without acking) and the most replays one death adds."""

    workers: tuple[DyingWorker, ...]
    timeout: Fraction
    mode: str
    most: int

    def describe(self) -> str:
        def part(w: DyingWorker) -> str:
            runs = [f"{k} of {c}'s {n} executors" for c, k, n in (*w.partial, *w.spouts)]
            return f", running {' and '.join(runs)}" if runs else ""
        return ", ".join(f"worker {w.name} dies every {w.up + w.down} s (back after {w.down} s{part(w)})"
                         for w in self.workers)

    def bolt_plan(self) -> dict[str, tuple[Fraction, Fraction]]:
        """The bolts that fail with their workers, with the workers' (up, down): the simulation's failure plan."""
        return {b: (w.up, w.down) for w in self.workers for b in w.bolts}

    def durations(self) -> list[Fraction]:
        return [self.timeout, *(d for w in self.workers for d in (w.up, w.down))]


@dataclass(frozen=True)
class Playable:
    """A worker section 9.5 lets die in a trace: its index, the bolts (of the run) it runs whole, whether it runs
    every acker, the plain bolts it runs part of and the spouts it runs executors of, each with (k, of)."""

    index: int
    whole: tuple[str, ...]
    acker: bool
    partial: tuple[tuple[str, int, int], ...]
    spouts: tuple[tuple[str, int, int], ...]


def playable_workers(topo: Topology, model: WorkerModel, bolts: list[str]) -> list[Playable]:
    """The workers a run may let die (docs/model.md 9.5): with the document's explicit assignment only, a worker
    that runs a bolt of `bolts`, an acker or a spout executor, and of a window, a join or an asynchronous bolt all
    the executors or none."""
    if not model.explicit:
        return []
    by_name = {b.name: b for b in topo.bolts}
    counts = executors_of(topo)
    out = []
    for w in range(model.workers):
        spouts = tuple((s.name, model.at_most(w, s.id, counts[s.id]), counts[s.id]) for s in topo.spouts
                       if model.at_most(w, s.id, counts[s.id]))
        held = [b for b in bolts if model.at_most(w, by_name[b].id, counts[by_name[b].id])]
        partial = tuple((b, model.at_most(w, by_name[b].id, counts[by_name[b].id]), counts[by_name[b].id])
                        for b in held if not model.runs_all(w, by_name[b].id, counts[by_name[b].id]))
        plain = all(by_name[b].window is None and by_name[b].join is None and by_name[b].threads is None
                    for b, _, _ in partial)
        if not plain:
            continue
        if held or spouts or model.at_most(w, ACKER, 1):
            # its death breaks every tree in flight only when it runs every acker (a tree's ack-val is in one)
            whole = tuple(b for b in held if b not in {p for p, _, _ in partial})
            out.append(Playable(w, whole, model.runs_all(w, ACKER, ackers_of(topo, model.workers)), partial, spouts))
    return out


def chosen_workers(net: Network, model: WorkerModel) -> list[Playable]:
    """The playable workers a search of `net` lets die (the simulation's and the solver's): none that runs an executor
    of a checked bolt (its deaths would empty it or take its share: it could not grow), nor part of a bolt or a spout
    an earlier one runs too (one death at a time touches a shared component)."""
    out: list[Playable] = []
    shared: set[str] = set()
    for p in playable_workers(net.topology, model, [b.name for b in net.bolts]):
        mine = {c for c, _, _ in (*p.partial, *p.spouts)}
        if not mine & shared and not set(net.checked) & ({*p.whole} | {c for c, _, _ in p.partial}):
            shared |= mine
            out.append(p)
    return out


def death_plan(net: Network, model: WorkerModel, most: int) -> DeathPlan | None:
    """The deaths a simulation of `net` (its cone, section 7's failures off) plays: every chosen worker dying as early
    as it may; None when no worker may (docs/model.md 9.5)."""
    up = max(model.min_ttf, model.timeout - model.min_restart)  # its replays are out before it dies again
    dying = [DyingWorker(f"w{p.index}", p.whole, p.acker, up, model.min_restart, p.partial, p.spouts)
             for p in chosen_workers(net, model)]
    if not dying:
        return None
    mode = net.topology.settings.replay if model.replays else "none"
    return DeathPlan(tuple(dying), model.timeout, mode, most)


def reaches(net: Network) -> dict[str, set[str]]:
    """Per bolt, the spouts whose trees reach it (the simulation's and the encoding's; the certifier has its own)."""
    succ: dict[str, set[str]] = {}
    for b in net.bolts:
        for src, _ in b.sources:
            succ.setdefault(src, set()).add(b.name)
    out: dict[str, set[str]] = {b.name: set() for b in net.bolts}
    for s in net.spouts:
        seen: set[str] = set()
        todo = list(succ.get(s.name, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += succ.get(n, ())
        for n in seen & set(out):
            out[n].add(s.name)
    return out


def _reaches(net: Network) -> dict[int, list[int]]:
    """`reaches` by index: per bolt (its index), the spouts (their indices, in order) whose trees reach it."""
    by_name = reaches(net)
    return {j: [m for m, s in enumerate(net.spouts) if s.name in by_name[b.name]] for j, b in enumerate(net.bolts)}


class Deaths:
    """The dying workers' state in one run on the schedule's grid of 1/`scale` s, and their actions at a position.
    `run` is the simulation's run state (app/core/tcn/simulate.py), whose spouts' and bolts' clocks a death moves."""

    def __init__(self, plan: DeathPlan, net: Network, scale: int, run: Any) -> None:
        index = {b.name: j for j, b in enumerate(net.bolts)}
        spout_at = {s.name: m for m, s in enumerate(net.spouts)}
        self.run = run
        self.names = [w.name for w in plan.workers]
        self.bolts = [[index[b] for b in w.bolts] for w in plan.workers]
        self.partial = [[(index[b], k, p) for b, k, p in w.partial] for w in plan.workers]
        self.spout_share = [[(spout_at[s], k, e) for s, k, e in w.spouts] for w in plan.workers]
        self.cuts = frozenset(j for parts in self.partial for j, _, _ in parts)
        self.acker = [w.acker for w in plan.workers]
        self.up = [int(w.up * scale) for w in plan.workers]
        self.down_for = [int(w.down * scale) for w in plan.workers]
        self.timeout, self.mode, self.most = int(plan.timeout * scale), plan.mode, plan.most
        self.spouts = [s.name for s in net.spouts]
        self.reach = _reaches(net)
        n = len(plan.workers)
        self.next_death, self.restart_at = list(self.up), [0] * n
        self.down = [False] * n
        self.release_at: list[int | None] = [None] * n
        self.waiting: list[dict[str, int]] = [{} for _ in range(n)]
        self.share: list[dict[int, int]] = [{} for _ in range(n)]  # while down: k·X mod p per bolt run in part
        self.lost_now: dict[int, int] = {}  # what the bolts run in part lose at this position

    def key(self, t: int) -> tuple[Any, ...]:
        """The hashed state before a position at time t: each worker's clock, its waiting replays and their clock,
        its share counters."""
        out: list[Any] = []
        for w in range(len(self.names)):
            release = self.release_at[w]
            out += [(self.restart_at[w] - t) if self.down[w] else -(self.next_death[w] - t) - 1,
                    -1 if release is None else release - t, tuple(sorted(self.waiting[w].items())),
                    tuple(sorted(self.share[w].items()))]
        return tuple(out)

    def events(self) -> list[int]:
        """The times of the workers' next actions."""
        out = [self.restart_at[w] if self.down[w] else self.next_death[w] for w in range(len(self.names))]
        return out + [r for r in self.release_at if r is not None]

    def decide(self, t: int) -> list[int]:
        """Before the bolts act at time t: a death due here waits for the end of the batch in progress of a bolt it
        runs part of when that batch does not fit on the executors it leaves (its whole bolts' failures move too).
        Gives each bolt's batch in progress before the position (0 when idle)."""
        run, self.lost_now = self.run, {}
        for w in range(len(self.names)):
            if self.down[w] or self.next_death[w] != t:
                continue
            ends = [run.take_time[j] + run.proc[j] for j, k, p in self.partial[w]
                    if run.processing[j] and run.take_time[j] + run.proc[j] != t and run.batch[j] > p - k]
            if ends:
                self.next_death[w] = max(ends)
                for j in self.bolts[w]:
                    run.next_fail[j] = max(ends)
        return [b if p else 0 for b, p in zip(run.batch, run.processing, strict=True)]

    def cut(self, j: int, t: int, before: int, arrivals: int) -> tuple[int, int]:
        """A bolt run in part by dying workers at time t: what it loses (⌈k·X/p⌉ in all since the death) and the most
        it may take (its executors left)."""
        lost, cap = 0, self.run.take_max[j]
        for w, parts in enumerate(self.partial):
            for b, k, p in parts:
                if b != j:
                    continue
                if not self.down[w] and self.next_death[w] == t:
                    x, r = k * (before + arrivals), 0
                elif self.down[w] and self.restart_at[w] != t:
                    x, r = k * arrivals, self.share[w].get(j, 0)
                else:
                    continue
                lost += -(-(r + x) // p) - (r > 0)
                self.share[w][j] = (r + x) % p
                cap -= k
        self.lost_now[j] = lost
        return lost, cap

    def act(self, t: int, steps: list[Any], batch_before: list[int], backlog: list[int]
            ) -> dict[str, dict[str, Any]] | None:
        """The workers' actions at time t, after the bolts' (`steps`: queue before and arrivals first; their bolts
        failed or recovered by the failure plan): the replays due are added to `backlog` (after this position), a
        restart (its spouts emit one gap later), then a death (its spouts stop) with its replays. Gives the
        position's worker records (None: nothing happened)."""
        records: dict[str, dict[str, Any]] = {}
        run = self.run
        for w, name in enumerate(self.names):
            rec: dict[str, Any] = {}
            if self.release_at[w] == t:
                for s, r in self.waiting[w].items():
                    backlog[self.spouts.index(s)] += r
                rec["released"], self.waiting[w], self.release_at[w] = self.waiting[w], {}, None
            if self.down[w] and self.restart_at[w] == t:
                rec["restart"], self.down[w], self.next_death[w] = True, False, t + self.up[w]
                self.share[w] = {}
                for m, _, _ in self.spout_share[w]:
                    run.next_emit[m], run.last_emit[m] = t + run.gap[m], t
            elif not self.down[w] and self.next_death[w] == t:
                rec["death"], self.down[w], self.restart_at[w] = True, True, t + self.down_for[w]
                for m, _, _ in self.spout_share[w]:
                    run.next_emit[m] = NEVER
                replays = self._replays(w, steps, batch_before)
                if replays:
                    rec["replays"], self.waiting[w], self.release_at[w] = replays, replays, t + self.timeout
            if rec:
                records[name] = rec
        return records or None

    def _replays(self, w: int, steps: list[Any], batch_before: list[int]) -> dict[str, int]:
        """A death's replays: min(the rule's most, `most`) trees, one at a time to each spout in turn within its own
        most (docs/model.md 9.5: its trees' tuples in flight where the death breaks trees, and its dead executors'
        share of all its trees' tuples in flight)."""
        if self.mode == "none":
            return {}
        flight = {j: steps[j][0] + steps[j][1] + batch_before[j] for j in range(len(steps))}
        counted = dict(flight) if self.acker[w] else {j: flight[j] for j in self.bolts[w]} | {
            j: self.lost_now.get(j, 0) for j, _, _ in self.partial[w]}
        caps: dict[int, int] = {}
        total = sum(counted.values())
        shares = {s: (k, e) for s, k, e in self.spout_share[w]}
        for m in range(len(self.spouts)):
            f_s = sum(n for j, n in flight.items() if m in self.reach[j])
            k, e = shares.get(m, (0, 1))
            total += k * f_s // e
            caps[m] = min(f_s, sum(n for j, n in counted.items() if m in self.reach[j]) + k * f_s // e)
        left, out = min(total, self.most), dict.fromkeys(caps, 0)
        while left and any(caps[m] > out[m] for m in caps):
            for m in caps:
                if left and caps[m] > out[m]:
                    out[m], left = out[m] + 1, left - 1
        return {self.spouts[m]: r for m, r in out.items() if r}
