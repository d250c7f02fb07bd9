"""Worker deaths in a simulated run (docs/model.md 9.5): which workers the simulation lets die, and their
deaths, restarts and replays position by position (app/core/tcn/simulate.py calls `Deaths` at each position).

A worker the simulation plays runs no spout executor and, of every bolt of the run, all its executors or none
(so its death fails whole bolts, section 7.2's failure position, and the run keeps one queue per bolt); the
document's `storm.assignment` says which. It dies as early as the rules let it, every `up` after it is back (at
least `storm.worker_min_ttf`, and no earlier than its last death's replays are out), and is back `min_reboot_time`
after its death. Its bolts fail and recover with it: they are in the simulation's failure plan with the worker's
durations, so their clocks are the worker's. A death's replays are the broken trees, at most the tuples in flight
at the death in its bolts and, when it runs an acker, in every bolt (`in_flight`), and at most `most` (a constant,
so that a loop can repeat once a growing queue holds that many); they join the spouts' backlogs at the death plus
the message timeout. No z3 and nothing of the certifier here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from app.core.tcn.network import Network
from app.core.topology import Topology
from app.core.workers import ACKER, WorkerModel, ackers_of, executors_of


@dataclass(frozen=True)
class DyingWorker:
    """One worker the simulation lets die: its trace name (`w<index>`), the bolts it runs (every executor), whether it
    runs an acker, and its durations in seconds: `up` from time 0 or a restart to its death, `down` its restart."""

    name: str
    bolts: tuple[str, ...]
    acker: bool
    up: Fraction
    down: Fraction


@dataclass(frozen=True)
class DeathPlan:
    """The worker deaths of one simulation: the dying workers, the message timeout T, the replay mode (`"none"`
    without acking) and the most replays one death adds."""

    workers: tuple[DyingWorker, ...]
    timeout: Fraction
    mode: str
    most: int

    def describe(self) -> str:
        return ", ".join(f"worker {w.name} dies every {w.up + w.down} s (back after {w.down} s)"
                         for w in self.workers)

    def bolt_plan(self) -> dict[str, tuple[Fraction, Fraction]]:
        """The bolts that fail with their workers, with the workers' (up, down): the simulation's failure plan."""
        return {b: (w.up, w.down) for w in self.workers for b in w.bolts}

    def durations(self) -> list[Fraction]:
        return [self.timeout, *(d for w in self.workers for d in (w.up, w.down))]


def playable_workers(topo: Topology, model: WorkerModel, bolts: list[str]) -> list[tuple[int, tuple[str, ...], bool]]:
    """The workers a simulation may let die (index, the bolts of `bolts` it runs, whether it runs every acker): with
    the document's explicit assignment only, a worker that runs no spout executor and all or none of each bolt's
    executors, and runs a bolt of `bolts` or an acker."""
    if not model.explicit:
        return []
    ids = {c.name: c.id for c in topo.components}
    counts = executors_of(topo)
    out = []
    for w in range(model.workers):
        if any(model.at_most(w, s.id, counts[s.id]) for s in topo.spouts):
            continue
        held = [b for b in bolts if model.at_most(w, ids[b], counts[ids[b]])]
        if any(not model.runs_all(w, ids[b], counts[ids[b]]) for b in held):
            continue
        if held or model.at_most(w, ACKER, 1):
            # its death breaks every tree in flight only when it runs every acker (a tree's ack-val is in one)
            out.append((w, tuple(held), model.runs_all(w, ACKER, ackers_of(topo, model.workers))))
    return out


def death_plan(net: Network, model: WorkerModel, most: int) -> DeathPlan | None:
    """The deaths a simulation of `net` (its cone, section 7's failures off) plays: every playable worker dying as
    early as it may; None when no worker may (docs/model.md 9.5)."""
    bolts = [b.name for b in net.bolts]
    dying = []
    for w, held, acker in playable_workers(net.topology, model, bolts):
        up = max(model.min_ttf, model.timeout - model.min_restart)  # its replays are out before it dies again
        dying.append(DyingWorker(f"w{w}", held, acker, up, model.min_restart))
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
    """The dying workers' state in one run on the schedule's grid of 1/`scale` s, and their actions at a position."""

    def __init__(self, plan: DeathPlan, net: Network, scale: int) -> None:
        index = {b.name: j for j, b in enumerate(net.bolts)}
        self.names = [w.name for w in plan.workers]
        self.bolts = [[index[b] for b in w.bolts] for w in plan.workers]
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

    def key(self, t: int) -> tuple[Any, ...]:
        """The hashed state before a position at time t: each worker's clock, its waiting replays and their clock."""
        out: list[Any] = []
        for w in range(len(self.names)):
            release = self.release_at[w]
            out += [(self.restart_at[w] - t) if self.down[w] else -(self.next_death[w] - t) - 1,
                    -1 if release is None else release - t, tuple(sorted(self.waiting[w].items()))]
        return tuple(out)

    def events(self) -> list[int]:
        """The times of the workers' next actions."""
        out = [self.restart_at[w] if self.down[w] else self.next_death[w] for w in range(len(self.names))]
        return out + [r for r in self.release_at if r is not None]

    def act(self, t: int, steps: list[Any], batch_before: list[int], backlog: list[int]
            ) -> dict[str, dict[str, Any]] | None:
        """The workers' actions at time t, after the bolts' (`steps`: queue before and arrivals first; their bolts
        failed or recovered by the failure plan): the replays due are added to `backlog` (after this position), a
        restart, then a death with its replays. Gives the position's worker records (None: nothing happened)."""
        records: dict[str, dict[str, Any]] = {}
        for w, name in enumerate(self.names):
            rec: dict[str, Any] = {}
            if self.release_at[w] == t:
                for s, r in self.waiting[w].items():
                    backlog[self.spouts.index(s)] += r
                rec["released"], self.waiting[w], self.release_at[w] = self.waiting[w], {}, None
            if self.down[w] and self.restart_at[w] == t:
                rec["restart"], self.down[w], self.next_death[w] = True, False, t + self.up[w]
            elif not self.down[w] and self.next_death[w] == t:
                rec["death"], self.down[w], self.restart_at[w] = True, True, t + self.down_for[w]
                replays = self._replays(w, steps, batch_before)
                if replays:
                    rec["replays"], self.waiting[w], self.release_at[w] = replays, replays, t + self.timeout
            if rec:
                records[name] = rec
        return records or None

    def _replays(self, w: int, steps: list[Any], batch_before: list[int]) -> dict[str, int]:
        """A death's replays: min(in flight, most) trees, split evenly among the spouts whose trees reach a bolt with
        tuples in flight (the first ones take the remainder)."""
        if self.mode == "none":
            return {}
        counted = range(len(steps)) if self.acker[w] else self.bolts[w]
        flight = {j: steps[j][0] + steps[j][1] + batch_before[j] for j in counted}
        total = min(sum(flight.values()), self.most)
        reach = sorted({s for j, n in flight.items() if n for s in self.reach[j]})
        if not total or not reach:
            return {}
        share, extra = divmod(total, len(reach))
        out = {self.spouts[s]: share + (m < extra) for m, s in enumerate(reach)}
        return {s: r for s, r in out.items() if r}
